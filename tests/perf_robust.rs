//! No perf.data input may crash `ocsd perf`: every shared recording, its
//! copy compressed as `perf record -z` writes it and its copy as a
//! pipe-mode stream (`perf record -o -`), damaged at random
//! (bytes changed, runs copied over, the file cut short), is read without
//! a panic, and the command exits 0 or 2 with a one-line error.

mod common;
mod robust_harness;

use std::process::Command;

use robust_harness::Rng;

/// `bytes` damaged: a few changed bytes, a run copied from elsewhere, or
/// the end cut off (beyond the 104-byte header most of the time, so that
/// the records are what is read).
fn damage(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut v = bytes.to_vec();
    match rng.below(4) {
        0 => {
            for _ in 0..1 + rng.below(8) {
                let i = 104 + rng.below(v.len() - 104);
                v[i] = rng.u8();
            }
        }
        1 => {
            let n = 1 + rng.below(64);
            let (from, to) = (rng.below(v.len() - n), 104 + rng.below(v.len() - n - 104));
            let run = v[from..from + n].to_vec();
            v[to..to + n].copy_from_slice(&run);
        }
        2 => v.truncate(rng.below(v.len())),
        _ => {
            // a record size field (every 8th byte pair from the data's start)
            let at = 104 + 2 * rng.below((v.len() - 104) / 2);
            v[at] = rng.u8();
            v[at + 1] = rng.u8();
        }
    }
    v
}

#[test]
fn damaged_recordings_are_reported_not_crashing() {
    let Some(shared) = common::shared_or_skip() else { return };
    let dir = std::env::temp_dir().join(format!("ocsd-perf-robust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut runs = 0;
    for p in common::shared_recordings(&shared) {
        let plain = std::fs::read(&p).unwrap();
        // and the same compressed as `perf record -z` writes it, and as a
        // pipe-mode stream
        let z = common::perfz::compress_like_perf(&plain, 200);
        let pipe = common::perfpipe::to_pipe(&plain).unwrap_or_else(|| plain.clone());
        let variants = [&plain, &z, &pipe];
        for k in 0..600 {
            let v = damage(variants[k % 3], &mut rng);
            // the reader, in the library: an error or a recording, no panic
            let read = std::panic::catch_unwind(|| {
                if let Ok(pd) = opencsd_c_api::perf::PerfData::from_bytes(v.clone()) {
                    let _ = pd.cs_meta();
                }
            });
            assert!(read.is_ok(), "{}: damage {} panics the reader", p.display(), k);
            // the whole command on some of them
            if k % 8 == 0 {
                let f = dir.join("damaged.data");
                std::fs::write(&f, &v).unwrap();
                for args in [&[][..], &["--dump"][..]] {
                    let out = Command::new(env!("CARGO_BIN_EXE_ocsd")).arg("perf").arg(&f).args(args).output().unwrap();
                    let code = out.status.code();
                    let err = String::from_utf8_lossy(&out.stderr);
                    assert!(code == Some(0) || code == Some(2), "{}: damage {} {:?}: exit {:?}\n{}", p.display(), k, args, code, err);
                    if code == Some(2) {
                        assert_eq!(err.lines().filter(|l| !l.starts_with("warning")).count(), 1, "{}: damage {}: {}", p.display(), k, err);
                    }
                    runs += 1;
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(runs > 0);
}

/// A pipe-mode stream (`perf record -o -`: the magic, then a 16-byte
/// header size) with a broken first record, or with no records: the record
/// (or the missing attributes) named where the stream breaks, in one line,
/// exit status 2.
#[test]
fn a_broken_pipe_mode_stream_is_named() {
    let f = std::env::temp_dir().join(format!("ocsd-perf-pipe-{}.data", std::process::id()));
    for (tail, want) in [(&[0u8; 64][..], "record size 0 is smaller than its header"), (&[][..], "no perf event attributes")] {
        let mut v = b"PERFILE2".to_vec();
        v.extend_from_slice(&16u64.to_le_bytes());
        v.extend_from_slice(tail);
        std::fs::write(&f, &v).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_ocsd")).arg("perf").arg(&f).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2));
        assert!(err.contains("at file offset 0x10") && err.contains(want) && err.lines().count() == 1, "{err}");
    }
    let _ = std::fs::remove_file(&f);
}

/// A directory is named for what it is: perf's directory format (`perf
/// record --threads`: a `data` file and `data.N` files) or any other; a
/// missing file names the file once.
#[test]
fn a_directory_or_a_missing_file_is_named_once() {
    let d = std::env::temp_dir().join(format!("ocsd-perf-dir-{}.data", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let run = |p: &std::path::Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_ocsd")).arg("perf").arg(p).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(err.matches(&*p.display().to_string()).count(), 1, "{err}");
        err
    };
    assert!(run(&d).contains("a directory"));
    std::fs::write(d.join("data"), b"PERFILE2").unwrap();
    assert!(run(&d).contains("perf record --threads"));
    let _ = std::fs::remove_dir_all(&d);
    assert!(run(&d).contains("No such file"));
}

/// An attribute whose `size` field is between two versions of the struct
/// (simpleperf's attribute section): the perf.data crate reads the
/// attribute's fields up to the last whole version, so it reads the ids
/// section's place from the wrong bytes, and would size a buffer from
/// them. The damage is found first: a one-line error, exit status 2.
#[test]
fn an_attribute_size_between_versions_is_an_error() {
    let Some(shared) = common::shared_or_skip() else { return };
    let mut v = std::fs::read(shared.join("perf/missing_aux.perf.data")).unwrap();
    let attrs = u64::from_le_bytes(v[24..32].try_into().unwrap()) as usize;
    v[attrs + 4..attrs + 8].copy_from_slice(&110u32.to_le_bytes());
    assert!(std::panic::catch_unwind(|| opencsd_c_api::perf::PerfData::from_bytes(v.clone()).is_err()).unwrap_or(false));
    let f = std::env::temp_dir().join(format!("ocsd-perf-attr110-{}.data", std::process::id()));
    std::fs::write(&f, &v).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ocsd")).arg("perf").arg(&f).output().unwrap();
    let _ = std::fs::remove_file(&f);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("attribute ids") && err.lines().count() == 1, "{err}");
}
