//! Keeps the conformance cases this project claims passing.
//!
//! The claimed cases are listed in `tests/conformance-claimed.txt` (one case
//! name of `../shared/conformance/cases.tsv` per line) and, for the
//! corrupted-trace cases of `cases-corrupt.tsv`, in
//! `tests/conformance-claimed-corrupt.txt`. Each is run with
//! the `trc_pkt_lister` built by this test run and must match OpenCSD
//! 1.8.0's log exactly. The shared reference data is looked up at
//! `$OCSD_SHARED` or `../shared`; when it is absent the test says so loudly.

use std::path::Path;
use std::process::Command;

mod common;
use common::*;

/// Run the cases named in `claimed_file` (from the shared `cases_file`)
/// and require each to match OpenCSD's log.
fn run_claimed(claimed_file: &str, cases_file: &str) {
    let Some(shared) = shared_or_skip() else { return };
    let claimed_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(claimed_file);
    let claimed: Vec<String> = std::fs::read_to_string(&claimed_path)
        .unwrap_or_else(|_| panic!("tests/{claimed_file}"))
        .lines()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    let all = std::fs::read_to_string(shared.join("conformance").join(cases_file)).unwrap_or_else(|_| panic!("{cases_file}"));
    let mut rows = String::new();
    let mut found = 0;
    for line in all.lines() {
        let name = line.split('\t').next().unwrap_or("");
        if claimed.iter().any(|c| c == name) {
            rows.push_str(line);
            rows.push('\n');
            found += 1;
        }
    }
    assert_eq!(found, claimed.len(), "a claimed case is missing from {cases_file}");
    if claimed.is_empty() {
        eprintln!("no conformance cases claimed yet");
        return;
    }
    let tmp = std::env::temp_dir().join(format!("ocsd-claimed-{}-{}", std::process::id(), cases_file));
    std::fs::write(&tmp, rows).unwrap();
    let out = Command::new("python3")
        .arg(shared.join("conformance/run"))
        .arg("--lister")
        .arg(env!("CARGO_BIN_EXE_trc_pkt_lister"))
        .arg("--cases")
        .arg(&tmp)
        .arg("--timeout")
        .arg("600")
        .output()
        .expect("run conformance runner");
    let _ = std::fs::remove_file(&tmp);
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{}", text);
    assert!(out.status.success(), "claimed conformance cases failed:\n{}", text);
}

#[test]
fn claimed_conformance_cases_pass() {
    run_claimed("conformance-claimed.txt", "cases.tsv");
}

/// The corrupted-trace cases (error reports, resynchronisation, fatal
/// errors) claimed so far.
#[test]
fn claimed_corrupt_conformance_cases_pass() {
    run_claimed("conformance-claimed-corrupt.txt", "cases-corrupt.tsv");
}

/// Everything before the first trace line (snapshot reading, source
/// selection, printer set-up, mapped memory) must match OpenCSD for every
/// case, decoded or not.
#[test]
fn every_case_matches_up_to_the_first_trace_line() {
    let Some(shared) = shared_or_skip() else { return };
    let conf = shared.join("conformance");
    let keep = std::env::temp_dir().join(format!("ocsd-headers-{}", std::process::id()));
    let status = Command::new("python3")
        .arg(conf.join("run"))
        .arg("--lister")
        .arg(env!("CARGO_BIN_EXE_trc_pkt_lister"))
        .arg("--keep")
        .arg(&keep)
        .arg("--diff")
        .arg("0")
        .arg("--timeout")
        .arg("600")
        .output()
        .expect("run conformance runner");
    let _ = status;
    let body = |text: &str| -> Vec<String> {
        let lines: Vec<String> = text.split('\n').map(|l| l.trim_end().to_string()).collect();
        match lines.iter().position(|l| l.starts_with("Test Command Line:-")) {
            Some(i) => lines[i + 2..].to_vec(),
            None => lines,
        }
    };
    let is_trace = |l: &str| {
        l.starts_with("Idx:") || l.starts_with("Frame Data") || l.starts_with("####") || (l.starts_with("ID:") && l.contains('\t'))
    };
    let mut failures = Vec::new();
    let cases = std::fs::read_to_string(conf.join("cases.tsv")).unwrap();
    for line in cases.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let name = line.split('\t').next().unwrap();
        let exp = Command::new("gzip").arg("-dc").arg(conf.join(format!("expected/{name}.ppl.gz"))).output().unwrap();
        let exp = body(&String::from_utf8_lossy(&exp.stdout));
        let got = std::fs::read(keep.join(format!("{name}.ppl"))).unwrap_or_default();
        let got = body(&String::from_utf8_lossy(&got));
        let head: Vec<&String> = exp.iter().take_while(|l| !is_trace(l)).collect();
        for (i, e) in head.iter().enumerate() {
            if got.get(i) != Some(*e) {
                failures.push(format!("{name} line {}: expected {:?}, got {:?}", i + 1, e, got.get(i)));
                break;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&keep);
    assert!(failures.is_empty(), "log headers differ from OpenCSD's:\n{}", failures.join("\n"));
}

/// Without a packet monitor (`-decode_only`) the decoders take shortcuts
/// the packet printing turns off (atom packets passed over while nothing
/// can come of them): the elements must still be exactly those of
/// OpenCSD's `-decode` log, for every `-decode` case, plain or corrupted.
/// One known exception: OpenCSD's PTM decoder numbers its first
/// unsynchronised element differently when no monitor is attached (its
/// index bookkeeping depends on `hasRawMon`), which this library follows.
#[test]
fn decode_only_elements_equal_the_decode_logs() {
    const MONITOR_DEPENDENT: [&str; 1] = ["Snowball-c1001"];
    let Some(shared) = shared_or_skip() else { return };
    let conf = shared.join("conformance");
    let elems = |text: &str| -> Vec<String> {
        text.lines().filter(|l| l.contains("OCSD_GEN_TRC_ELEM")).map(|l| l[l.find("Idx:").unwrap_or(0)..].to_string()).collect()
    };
    let mut failures = Vec::new();
    let mut checked = 0;
    for cases in ["cases.tsv", "cases-corrupt.tsv"] {
        let all = std::fs::read_to_string(conf.join(cases)).unwrap();
        for line in all.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let f: Vec<&str> = line.split('\t').collect();
            let (name, snap, env, args) = (f[0], f[1], f[2], f[3]);
            let args: Vec<&str> = args.split_whitespace().collect();
            if !args.contains(&"-decode") || MONITOR_DEPENDENT.contains(&name) {
                continue;
            }
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_trc_pkt_lister"));
            cmd.arg("-ss_dir").arg(conf.join(snap));
            cmd.args(args.iter().map(|a| if *a == "-decode" { "-decode_only" } else { a }));
            cmd.args(["-no_time_print", "-logstdout"]);
            if env != "-" {
                for kv in env.split_whitespace() {
                    if let Some((k, v)) = kv.split_once('=') {
                        cmd.env(k, v);
                    }
                }
            }
            let got = cmd.output().expect("run trc_pkt_lister");
            let exp = Command::new("gzip").arg("-dc").arg(conf.join(format!("expected/{name}.ppl.gz"))).output().unwrap();
            let (got, exp) = (elems(&String::from_utf8_lossy(&got.stdout)), elems(&String::from_utf8_lossy(&exp.stdout)));
            checked += 1;
            if got != exp {
                let i = got.iter().zip(&exp).position(|(a, b)| a != b).unwrap_or(got.len().min(exp.len()));
                failures.push(format!("{name}: element {} of {}/{}: got {:?}, expected {:?}", i, got.len(), exp.len(), got.get(i), exp.get(i)));
            }
        }
    }
    assert!(checked > 90, "only {checked} cases checked");
    assert!(failures.is_empty(), "-decode_only elements differ from the -decode logs:\n{}", failures.join("\n"));
}
