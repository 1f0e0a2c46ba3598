//! `perf record -z`: the kernel records of a recording compressed with
//! zstd into PERF_RECORD_COMPRESSED / _COMPRESSED2 records, one stream
//! across them, as perf writes them (each batch of ring-buffer records
//! compressed and flushed, its output cut into records). `ocsd perf` must
//! print the same for each shared recording and its compressed copy.

mod common;

use std::process::Command;

use common::perfz::{as_original, auxtrace_offsets, compress_like_perf, rd16, rd32, rd64};

use common::ocsd;

#[test]
fn compressed_recordings_decode_as_the_originals() {
    let Some(shared) = common::shared_or_skip() else { return };
    let dir = common::scratch_dir("ocsd-perf-z");
    let mut compared = 0;
    for (p, bytes) in common::shared_perfile2(&shared) {
        let orig = ocsd(&["perf", p.to_str().unwrap()]);
        let orig_dump = ocsd(&["perf", p.to_str().unwrap(), "--dump"]);
        // a small cut: records split between compressed records
        for cut in [100, 60000] {
            let z = dir.join(format!("{}-{}", cut, p.file_name().unwrap().to_string_lossy()));
            let zbytes = compress_like_perf(&bytes, cut);
            std::fs::write(&z, &zbytes).unwrap();
            let (from, to) = (auxtrace_offsets(&zbytes), auxtrace_offsets(&bytes));
            let got = ocsd(&["perf", z.to_str().unwrap()]);
            assert_eq!(got.status.code(), orig.status.code(), "{}: {}", z.display(), String::from_utf8_lossy(&got.stderr));
            assert!(as_original(&got.stdout, &from, &to) == String::from_utf8_lossy(&orig.stdout), "{}: decoded output differs", z.display());
            let dump = ocsd(&["perf", z.to_str().unwrap(), "--dump"]);
            assert!(as_original(&dump.stdout, &from, &to) == String::from_utf8_lossy(&orig_dump.stdout), "{}: --dump output differs", z.display());
            compared += 1;
        }
    }
    if std::env::var_os("KEEP").is_none() { let _ = std::fs::remove_dir_all(&dir); }
    assert!(compared >= 4, "only {} recordings compared", compared);
}

#[test]
fn a_damaged_compressed_record_is_named() {
    let Some(shared) = common::shared_or_skip() else { return };
    let p = shared.join("perf/etm_test_loop.perf.data");
    let mut z = compress_like_perf(&std::fs::read(&p).unwrap(), 60000);
    // the first compressed record's stream: garbage
    let data_off = rd64(&z, 40) as usize;
    let mut at = data_off;
    while rd32(&z, at) != 81 && rd32(&z, at) != 83 {
        let t = rd32(&z, at);
        at += rd16(&z, at + 6) as usize + if t == 71 { rd64(&z, at + 8) as usize } else { 0 };
    }
    for b in &mut z[at + 16..at + 48] {
        *b = 0xa5;
    }
    let f = std::env::temp_dir().join(format!("ocsd-perf-z-bad-{}.data", std::process::id()));
    std::fs::write(&f, &z).unwrap();
    let out = ocsd(&["perf", f.to_str().unwrap()]);
    let _ = std::fs::remove_file(&f);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("PERF_RECORD_COMPRESSED") && err.contains(&format!("{:#x}", at)) && err.lines().count() == 1, "{err}");
}

/// The traced program found through the MMAP records (compressed here):
/// the same instruction ranges as from the original.
#[test]
fn compressed_mmaps_find_the_traced_program() {
    let Some(shared) = common::shared_or_skip() else { return };
    let rec = shared.join("perf/etm_test_loop.perf.data");
    let dir = std::env::temp_dir().join(format!("ocsd-perf-z-symfs-{}", std::process::id()));
    common::write_etm_test_loop(&dir);
    let bytes = std::fs::read(&rec).unwrap();
    let zbytes = compress_like_perf(&bytes, 100);
    let z = dir.join("z.data");
    std::fs::write(&z, &zbytes).unwrap();
    let symfs = dir.to_str().unwrap();
    let orig = ocsd(&["perf", rec.to_str().unwrap(), "--symfs", symfs]);
    let got = ocsd(&["perf", z.to_str().unwrap(), "--symfs", symfs]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(orig.status.success() && got.status.success(), "{}", String::from_utf8_lossy(&got.stderr));
    let ranges = String::from_utf8_lossy(&orig.stdout).matches("INSTR_RANGE").count();
    assert!(ranges > 0, "no instruction ranges decoded");
    let (from, to) = (auxtrace_offsets(&zbytes), auxtrace_offsets(&bytes));
    assert!(as_original(&got.stdout, &from, &to) == String::from_utf8_lossy(&orig.stdout));
}

/// A recording Debian's perf writes with `-z` (a software event on this
/// machine: no trace, but kernel records compressed as on any machine):
/// the records inside are read, at the compressed record's offset, as
/// `perf report -D` lists them.
#[test]
fn a_real_compressed_recording_is_read_as_perf_reads_it() {
    let f = std::env::temp_dir().join(format!("ocsd-perf-z-real-{}.data", std::process::id()));
    let rec = Command::new("perf").args(["record", "-q", "-z", "-e", "cpu-clock", "-o"]).arg(&f).args(["--", "ls", "/"]).output();
    if !rec.is_ok_and(|o| o.status.success()) || !f.exists() {
        eprintln!("SKIPPED: perf record -z did not run here");
        return;
    }
    let dump = Command::new("perf").args(["report", "-D", "-i"]).arg(&f).output().unwrap();
    let dump = String::from_utf8_lossy(&dump.stdout);
    let bytes = std::fs::read(&f).unwrap();
    let pd = opencsd_c_api::perf::PerfData::open(&f).unwrap();
    let _ = std::fs::remove_file(&f);
    let (data_off, data_size) = (rd64(&bytes, 40) as usize, rd64(&bytes, 48) as usize);
    let mut at = data_off;
    let mut compressed = 0;
    while at < data_off + data_size {
        compressed += usize::from(rd32(&bytes, at) == 81 || rd32(&bytes, at) == 83);
        at += rd16(&bytes, at + 6) as usize;
    }
    assert!(compressed > 0, "no compressed record written");
    // (offset, MMAP / COMM) as perf lists them, and as read here
    let want = common::perfz::mmap_comm_listed(&dump, 0);
    assert!(want.len() > 2, "{dump}");
    let got = common::perfz::mmap_comm_read(&pd);
    assert_eq!(got, want);
}
