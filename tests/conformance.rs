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
