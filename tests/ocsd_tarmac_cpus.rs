//! `ocsd decode --format tarmac` on a snapshot with several cores
//! (`snapshots/juno_r1_1`: ETM_N traces core cpu_N with trace ID 0x10 + N):
//! each line carries its core's tag, numbered from the snapshot's core
//! names, and the Tarmac reads back as one stream per core.

use std::collections::BTreeMap;
use std::process::Command;

use opencsd_c_api::tarmac::Reference;

mod common;
use common::*;

fn ocsd(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_ocsd")).args(args).output().expect("run ocsd");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn several_cores_are_tagged_by_core_name() {
    let Some(shared) = shared_or_skip() else { return };
    let snap = shared.join("conformance/snapshots/juno_r1_1");
    let snap = snap.to_str().unwrap();
    // instructions per trace ID, from the element text
    let mut by_id: BTreeMap<u32, u64> = BTreeMap::new();
    for l in ocsd(&["decode", "--snapshot", snap]).lines().filter(|l| l.contains("OCSD_GEN_TRC_ELEM_INSTR_RANGE(")) {
        let id = u32::from_str_radix(l.split("ID:").nth(1).unwrap().split(';').next().unwrap(), 16).unwrap();
        let n: u64 = l.split("num_i(").nth(1).unwrap().split(')').next().unwrap().parse().unwrap();
        *by_id.entry(id).or_default() += n;
    }
    assert!(by_id.len() > 1, "{by_id:?}");
    let tarmac = ocsd(&["decode", "--snapshot", snap, "--format", "tarmac", "--no-disasm"]);
    // every line is tagged; trace ID 0x10 + N is core cpu_N
    let mut by_cpu: BTreeMap<u32, u64> = BTreeMap::new();
    let mut last_index: BTreeMap<u32, u64> = BTreeMap::new();
    for l in tarmac.lines() {
        let t: Vec<&str> = l.split(' ').collect();
        let cpu: u32 = t[2].strip_prefix("cpu").unwrap_or_else(|| panic!("untagged: {l}")).parse().unwrap();
        if t[3] == "IT" || t[3] == "IS" {
            *by_cpu.entry(cpu).or_default() += 1;
            // the index in parentheses counts the core's own instructions
            let idx: u64 = t[4].trim_matches(|c| c == '(' || c == ')').parse().unwrap();
            let prev = last_index.insert(cpu, idx).unwrap_or(0);
            assert_eq!(idx, prev + 1, "{l}");
        }
    }
    let want: BTreeMap<u32, u64> = by_id.iter().map(|(id, n)| (id - 0x10, *n)).collect();
    assert_eq!(by_cpu, want);
    // read back as a reference: one stream per core
    let r = Reference::read(tarmac.as_bytes(), "ours").unwrap();
    let mut got: Vec<(String, usize)> = r.cpus.iter().map(|(c, i)| (c.clone(), i.len())).collect();
    got.sort();
    let mut want: Vec<(String, usize)> = by_cpu.iter().map(|(c, n)| (format!("cpu{c}"), *n as usize)).collect();
    want.sort();
    assert_eq!(got, want);

    // one core: no tags, as before
    let one = shared.join("conformance/snapshots-ete/002-ack_test_scr");
    let t = ocsd(&["decode", "--snapshot", one.to_str().unwrap(), "--format", "tarmac", "--no-disasm"]);
    assert!(t.lines().all(|l| !l.contains(" cpu")), "{}", t.lines().next().unwrap_or(""));
}
