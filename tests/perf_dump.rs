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
    // sizes and counts the perf.data crate sizes its buffers from, damaged
    // (each made it ask for terabytes and end the process): an error
    // naming the section
    let le64 = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let table = (le64(&bytes, 40) + le64(&bytes, 48)) as usize;
    for (at, what) in [(table + 8, "feature section"), (table, "feature section"), (32, "attribute section"), (64, "event types section")] {
        let mut b = bytes.clone();
        b[at..at + 8].copy_from_slice(&0x7fff_0000_0000_0000u64.to_le_bytes());
        let e = PerfData::from_bytes(b).err().unwrap_or_else(|| panic!("size at {at:#x}: no error")).to_string();
        assert!(e.contains(what) && e.contains("past the end of the file"), "{}", e);
    }
    // an MMAP2 record whose build ID is said to be longer than 20 bytes
    // (the crate asserts on it)
    let (data, data_end) = (le64(&bytes, 40) as usize, (le64(&bytes, 40) + le64(&bytes, 48)) as usize);
    let mut at = data;
    let mut mmap2 = None;
    while at + 8 <= data_end {
        let size = u16::from_le_bytes([bytes[at + 6], bytes[at + 7]]) as usize;
        if u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) == 10 {
            mmap2 = Some(at);
            break;
        }
        at += size.max(8);
    }
    let at = mmap2.expect("an MMAP2 record");
    let mut b = bytes.clone();
    b[at + 5] |= 0x40; // PERF_RECORD_MISC_MMAP_BUILD_ID
    b[at + 8 + 32] = 21;
    let e = PerfData::from_bytes(b).err().expect("long build ID must fail").to_string();
    assert!(e.contains("PERF_RECORD_MMAP2") && e.contains(&format!("{at:#x}")) && e.contains("build ID"), "{}", e);
    // an attribute size of 0 with attributes to read
    let mut b = bytes.clone();
    b[16..24].copy_from_slice(&0u64.to_le_bytes());
    let _ = PerfData::from_bytes(b).map(|_| ()).map_err(|e| e.to_string());
    // random damage to the header and the feature sections' table: an
    // error or a result, never an end of the process
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..2000 {
        let mut b = bytes.clone();
        for _ in 0..4 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = if seed & 1 == 0 { (seed >> 8) as usize % 104 } else { table + (seed >> 8) as usize % (b.len() - table) };
            b[at] = (seed >> 40) as u8;
        }
        let _ = PerfData::from_bytes(b);
    }
    // every prefix of the file: an error or a result, never a panic
    for n in (0..bytes.len()).step_by(7) {
        if let Ok(pd) = PerfData::from_bytes(bytes[..n].to_vec()) {
            if let Ok(m) = pd.cs_meta() {
                let _ = dump(&pd, &m, BlockMode::ByAux, TextStyle::V1_8, &mut Vec::new());
            }
        }
    }
}
