//! Tarmac output and comparison with a reference execution trace, on the
//! shared snapshot `snapshots-ete/002-ack_test_scr`, whose folder holds the
//! model's own Tarmac trace of the traced run (`test_TARMAC`).
//!
//! The shared reference data is looked up at `$OCSD_SHARED` or
//! `../shared`; when it is absent the tests say so loudly.

use std::collections::HashSet;
use std::path::Path;

use opencsd_c_api::tarmac::{CompareReport, Comparer, Reference, TarmacConfig, TarmacWriter};

mod common;
use common::*;

fn compare(snap: &Path, reference: &Reference) -> CompareReport {
    let mut cmp = Comparer::new(reference);
    decode_each(snap, |idx, id, elem, mem| cmp.element(idx, id, elem, mem));
    cmp.finish()
}

fn tarmac_of(snap: &Path, disasm: bool) -> String {
    let mut w = TarmacWriter::new(Vec::new(), TarmacConfig { disasm });
    decode_each(snap, |_, id, elem, mem| w.element(id, elem, mem).unwrap());
    String::from_utf8(w.finish().unwrap()).unwrap()
}

#[test]
fn decode_matches_the_models_tarmac() {
    let Some(snap) = ack_test_scr() else { return };
    let reference = Reference::from_file(&snap.join("test_TARMAC")).unwrap();
    let report = compare(&snap, &reference);
    assert_eq!(report.to_string(), "5146 instructions in 8 segments match", "{:?}", report);
    assert!(report.matches());
    assert_eq!(report.ids.len(), 1);
    assert_eq!(report.ids[0].trace_id, 2);
    assert_eq!(report.ids[0].cpu, "cpu0");
}

/// (address, opcode, mode) of each instruction line; the link-register
/// values written. `cpu`: keep only lines of that CPU tag.
fn lines_of(text: &str, cpu: Option<&str>) -> (HashSet<(u64, String, String)>, Vec<(u64, u64)>) {
    let mut instrs = HashSet::new();
    let mut links = Vec::new();
    let mut last_addr = 0;
    for l in text.lines() {
        let mut t: Vec<&str> = l.split_whitespace().collect();
        if t.len() < 3 || t[1] != "clk" {
            continue;
        }
        if t[2].starts_with("cpu") {
            if Some(t[2]) != cpu {
                continue;
            }
            t.remove(2);
        }
        match t[2] {
            "IT" | "IS" => {
                let addr = u64::from_str_radix(t[4].split(':').next().unwrap(), 16).unwrap();
                last_addr = addr;
                instrs.insert((addr, t[5].to_lowercase(), t[7].to_string()));
            }
            "R" if t[3] == "X30" => links.push((last_addr, u64::from_str_radix(t[4], 16).unwrap())),
            _ => {}
        }
    }
    (instrs, links)
}

#[test]
fn tarmac_lines_agree_with_the_models() {
    let Some(snap) = ack_test_scr() else { return };
    let model = std::fs::read_to_string(snap.join("test_TARMAC")).unwrap();
    let ours = tarmac_of(&snap, true);
    let (model_instrs, model_links) = lines_of(&model, Some("cpu0"));
    let (our_instrs, our_links) = lines_of(&ours, None);
    assert_eq!(ours.lines().filter(|l| l.contains(" IT (") || l.contains(" IS (")).count(), 5146);
    // every instruction we write (address, opcode, mode and security
    // state) is one the model executed
    let strays: Vec<_> = our_instrs.difference(&model_instrs).collect();
    assert!(strays.is_empty(), "{} lines not in the model's trace, e.g. {:?}", strays.len(), &strays[..strays.len().min(5)]);
    // the link register writes: after a BL, the address after it, as the
    // model writes them
    assert!(!our_links.is_empty());
    let model_links: HashSet<_> = model_links.into_iter().collect();
    for (addr, lr) in &our_links {
        assert_eq!(*lr, addr + 4);
        assert!(model_links.contains(&(*addr, *lr)), "X30 {:#x} after {:#x} not in the model's trace", lr, addr);
    }
    // the same without disassembly: only the text after ':' goes
    let bare = tarmac_of(&snap, false);
    assert_eq!(bare.lines().count(), ours.lines().count());
    assert!(bare.lines().filter(|l| !l.contains(" R X30 ") && !l.contains(" E ")).all(|l| l.ends_with(" :")));
    // exceptions: each E line is one the model took (the model names the
    // SVC/HVC/SMC itself, we give the preferred return address after it)
    let model_exc: HashSet<u64> = model
        .lines()
        .filter_map(|l| l.split_once(" cpu0 E "))
        .filter(|(_, rest)| rest.contains("CoreEvent_") && !rest.contains("ModeChange"))
        .map(|(_, rest)| u64::from_str_radix(rest.split([':', ' ']).next().unwrap(), 16).unwrap())
        .collect();
    let ours_exc: Vec<(u64, String)> = ours
        .lines()
        .filter_map(|l| l.split_once(" clk E "))
        .map(|(_, rest)| {
            let t: Vec<&str> = rest.split(' ').collect();
            (u64::from_str_radix(t[0], 16).unwrap(), t[2].to_string())
        })
        .collect();
    assert_eq!(ours_exc.len(), 7);
    for (pc, name) in &ours_exc {
        assert_eq!(name, "CoreEvent_CALL");
        assert!(model_exc.contains(&(pc - 4)), "exception returning to {pc:#x} not in the model's trace");
    }
}

#[test]
fn our_tarmac_reads_back_and_matches_the_decode() {
    let Some(snap) = ack_test_scr() else { return };
    let ours = tarmac_of(&snap, true);
    let reference = Reference::read(ours.as_bytes(), "ours").unwrap();
    assert_eq!(compare(&snap, &reference).to_string(), "5146 instructions in 8 segments match");
}

#[test]
fn a_reference_missing_an_instruction_diverges_there() {
    let Some(snap) = ack_test_scr() else { return };
    let model = std::fs::read_to_string(snap.join("test_TARMAC")).unwrap();
    // the address of the 2000th decoded instruction
    let ours = tarmac_of(&snap, false);
    let line = ours.lines().filter(|l| l.contains(" IT (") || l.contains(" IS (")).nth(1999).unwrap();
    let addr = line.split_whitespace().nth(4).unwrap().to_string();
    // drop every execution of it from the model's trace
    let cut: String = model
        .lines()
        .filter(|l| l.split_whitespace().nth(5).is_none_or(|a| a.split(':').next() != Some(addr.as_str())))
        .map(|l| format!("{}\n", l))
        .collect();
    assert!(cut.len() < model.len());
    let reference = Reference::read(cut.as_bytes(), "cut").unwrap();
    let report = compare(&snap, &reference);
    assert!(!report.matches());
    let d = report.ids[0].divergence.as_ref().unwrap();
    assert_eq!(d.addr, u64::from_str_radix(&addr, 16).unwrap(), "{}", report);
    assert!(d.instr_no <= 2000, "{}", report);
    assert!(report.to_string().starts_with("divergence after "), "{}", report);
}
