//! `ocsd perf --dump` against `perf report -D`: for every recording in
//! `../shared/perf` (or `$OCSD_SHARED/perf`), the packet lines of perf's dump
//! (the lines after each `. ... CoreSight <name> Trace data` header) must
//! equal ours. perf is run here (Debian's linux-perf, installed by .ci/run);
//! recordings without trace must fail with an error naming what is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use opencsd_c_api::perf::dump::{dump, BlockMode, TextStyle};
use opencsd_c_api::perf::{PerfData, PerfError};

mod common;
use common::*;


/// The packet lines of `perf report -D`.
fn perf_packet_lines(file: &Path) -> Vec<String> {
    let out = Command::new("perf")
        .args(["report", "-D", "-i"])
        .arg(file)
        .env("PAGER", "cat")
        .output()
        .expect("running perf (Debian package linux-perf; .ci/run installs it)");
    let text = String::from_utf8_lossy(&out.stdout);
    packet_lines(&text)
}

fn packet_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_block = false;
    for l in text.lines() {
        if l.starts_with(". ... CoreSight ") && l.contains(" Trace data: size ") {
            in_block = true;
        } else if in_block && l.starts_with('\t') {
            lines.push(l.to_string());
        } else {
            in_block = false;
        }
    }
    lines
}

#[test]
fn dump_matches_perf_report_d() {
    let Some(shared) = shared_or_skip() else { return };
    let mut files: Vec<PathBuf> = std::fs::read_dir(shared.join("perf"))
        .expect("../shared/perf")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".perf.data"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no recordings in ../shared/perf");
    let mut compared = 0;
    for f in &files {
        let want = perf_packet_lines(f);
        let pd = PerfData::open(f).unwrap_or_else(|e| panic!("{}: {}", f.display(), e));
        let meta = pd.cs_meta().unwrap_or_else(|e| panic!("{}: {}", f.display(), e));
        if let Err(e) = pd.require_trace() {
            assert!(matches!(e, PerfError::NoTrace(_)), "{}: {}", f.display(), e);
            assert!(want.is_empty(), "{}: perf dumps packets, we found no trace", f.display());
            eprintln!("{}: no trace ({}), perf dumps none either", f.display(), e);
            continue;
        }
        let mut out = Vec::new();
        dump(&pd, &meta, BlockMode::Auto, TextStyle::V1_3, &mut out).unwrap();
        let got = packet_lines(&String::from_utf8(out).unwrap());
        if got != want {
            let first = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
            panic!(
                "{}: {} lines ours, {} perf's; first difference at line {}:\n ours: {:?}\nperf: {:?}",
                f.display(),
                got.len(),
                want.len(),
                first + 1,
                got.get(first),
                want.get(first)
            );
        }
        eprintln!("{}: {} packet lines equal perf's", f.display(), got.len());
        compared += got.len();
    }
    assert!(compared > 0, "no packet lines compared");
}

#[test]
fn bad_input_errors_name_record_and_offset() {
    let Some(shared) = shared_dir() else { return };
    let bytes = std::fs::read(shared.join("perf/etm_test_loop.perf.data")).unwrap();
    // cut inside the AUXTRACE record's trace data
    let e = PerfData::from_bytes(bytes[..0x26a8 + 0x40].to_vec()).err().expect("truncated file must fail");
    let s = e.to_string();
    assert!(s.contains("PERF_RECORD_AUXTRACE") && s.contains("0x26a8") && s.contains("truncated"), "{}", s);
    // cut inside a record header
    let e = PerfData::from_bytes(bytes[..0x13a].to_vec()).err().unwrap().to_string();
    assert!(e.contains("0x138") && e.contains("truncated"), "{}", e);
    // unknown AUXTRACE type: patch the AUXTRACE_INFO type word (record at 0x408)
    let mut b = bytes.clone();
    b[0x408 + 8] = 9;
    let pd = PerfData::from_bytes(b).unwrap();
    let e = pd.cs_meta().unwrap_err().to_string();
    assert!(e.contains("PERF_RECORD_AUXTRACE_INFO") && e.contains("0x408") && e.contains("unknown AUXTRACE type 9"), "{}", e);
    // unsupported metadata: first CPU's magic
    let mut b = bytes.clone();
    b[0x408 + 16 + 24] = 0x60;
    let e = PerfData::from_bytes(b).unwrap().cs_meta().unwrap_err().to_string();
    assert!(e.contains("unsupported trace version"), "{}", e);
    // every prefix of the file: an error or a result, never a panic
    for n in (0..bytes.len()).step_by(7) {
        if let Ok(pd) = PerfData::from_bytes(bytes[..n].to_vec()) {
            if let Ok(m) = pd.cs_meta() {
                let _ = dump(&pd, &m, BlockMode::ByAux, TextStyle::V1_8, &mut Vec::new());
            }
        }
    }
}
