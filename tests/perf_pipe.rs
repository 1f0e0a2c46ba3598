//! Pipe-mode perf.data (`perf record -o -`): a 16-byte header, then the
//! attributes and feature sections as records, then the events. `ocsd perf`
//! reads it from a file or from standard input (`ocsd perf -`) and decodes
//! it as perf does: each AUXTRACE record a block of frame-formatted trace
//! (pipe mode has no AUXTRACE index), the same as `--blocks whole` on the
//! file the stream was made from.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::perfpipe::{pipe_auxtrace_offsets, to_pipe};
use common::perfz::{as_original, auxtrace_offsets, compress_like_perf};

use common::ocsd;

/// `ocsd perf - ARGS` with `input` on standard input.
fn ocsd_stdin(input: &[u8], args: &[&str]) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ocsd"))
        .args(["perf", "-"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ocsd");
    let mut stdin = c.stdin.take().unwrap();
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = c.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

#[test]
fn pipe_streams_decode_as_the_recordings() {
    let Some(shared) = common::shared_or_skip() else { return };
    let dir = common::scratch_dir("ocsd-perf-pipe");
    let mut compared = 0;
    for (p, bytes) in common::shared_perfile2(&shared) {
        let Some(pipe) = to_pipe(&bytes) else { continue };
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let f = dir.join(&name);
        std::fs::write(&f, &pipe).unwrap();
        let (from, to) = (pipe_auxtrace_offsets(&pipe), auxtrace_offsets(&bytes));
        assert_eq!(from.len(), to.len(), "{name}: AUXTRACE records");
        let (fp, pp) = (p.to_str().unwrap(), f.to_str().unwrap());
        // perf's way for a stream: every AUXTRACE record a block
        for (file_args, pipe_args) in [
            (vec![fp, "--blocks", "whole"], vec![pp]),
            (vec![fp, "--blocks", "aux"], vec![pp, "--blocks", "aux"]),
            (vec![fp, "--blocks", "whole", "--dump"], vec![pp, "--dump"]),
            (vec![fp, "--blocks", "whole", "--format", "json"], vec![pp, "--format", "json"]),
        ] {
            let want = ocsd(&[&["perf"][..], &file_args].concat());
            let got = ocsd(&[&["perf"][..], &pipe_args].concat());
            assert_eq!(got.status.code(), want.status.code(), "{name} {pipe_args:?}: {}", String::from_utf8_lossy(&got.stderr));
            assert!(
                as_original(&got.stdout, &from, &to) == String::from_utf8_lossy(&want.stdout),
                "{name} {pipe_args:?}: output differs from the recording's"
            );
        }
        // the same stream on standard input
        let from_file = ocsd(&["perf", pp]);
        let from_stdin = ocsd_stdin(&pipe, &[]);
        assert_eq!(from_stdin.status.code(), from_file.status.code(), "{name}: {}", String::from_utf8_lossy(&from_stdin.stderr));
        assert!(from_stdin.stdout == from_file.stdout, "{name}: standard input decodes differently");
        // and compressed (perf record -z -o -)
        let z = compress_pipe(&pipe);
        let zf = dir.join(format!("z-{name}"));
        std::fs::write(&zf, &z).unwrap();
        let got = ocsd(&["perf", zf.to_str().unwrap()]);
        let want = ocsd(&["perf", fp, "--blocks", "whole"]);
        assert_eq!(got.status.code(), want.status.code(), "{name} compressed: {}", String::from_utf8_lossy(&got.stderr));
        assert!(
            as_original(&got.stdout, &pipe_auxtrace_offsets(&z), &to) == String::from_utf8_lossy(&want.stdout),
            "{name}: the compressed stream decodes differently"
        );
        compared += 1;
    }
    if std::env::var_os("KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(compared >= 3, "only {compared} recordings compared");
}

/// The pipe stream with its events compressed as `perf record -z` writes
/// them (the header records stay as they are).
fn compress_pipe(pipe: &[u8]) -> Vec<u8> {
    use common::perfz::{rd16, rd32};
    // the events start at the first record that is not an attribute or
    // feature record
    let mut at = 16;
    while at + 8 <= pipe.len() && matches!(rd32(pipe, at), 64 | 80) {
        at += rd16(pipe, at + 6) as usize;
    }
    // compress_like_perf takes a file: give it one whose data section is
    // the events, then put the pipe header records back in front
    let events = &pipe[at..];
    let mut file = vec![0u8; 104];
    file[..8].copy_from_slice(b"PERFILE2");
    file[8..16].copy_from_slice(&104u64.to_le_bytes());
    file[40..48].copy_from_slice(&104u64.to_le_bytes());
    file[48..56].copy_from_slice(&(events.len() as u64).to_le_bytes());
    file.extend_from_slice(events);
    let z = compress_like_perf(&file, 100);
    let (data_off, data_size) = (common::perfz::rd64(&z, 40) as usize, common::perfz::rd64(&z, 48) as usize);
    let mut out = pipe[..at].to_vec();
    out.extend_from_slice(&z[data_off..data_off + data_size]);
    out
}

/// A pipe-mode stream Debian's perf writes on this machine (a software
/// event: no trace, but the header records and kernel records as on any
/// machine): its MMAP and COMM records are read where `perf report -D`
/// lists them (perf counts a stream's offsets from after its 16-byte
/// header).
#[test]
fn a_real_pipe_stream_is_read_as_perf_reads_it() {
    for compress in [false, true] {
        let mut args = vec!["record", "-q", "-o", "-", "-e", "cpu-clock"];
        if compress {
            args.push("-z");
        }
        let rec = Command::new("perf").args(&args).args(["--", "ls", "/"]).stderr(Stdio::null()).output();
        let Ok(rec) = rec else {
            eprintln!("SKIPPED: perf record -o - did not run here");
            return;
        };
        if !rec.status.success() || rec.stdout.len() < 16 {
            eprintln!("SKIPPED: perf record -o - did not run here");
            return;
        }
        let f = std::env::temp_dir().join(format!("ocsd-perf-pipe-real-{}-{compress}.data", std::process::id()));
        std::fs::write(&f, &rec.stdout).unwrap();
        let dump = Command::new("perf").args(["report", "-D", "-i"]).arg(&f).output().unwrap();
        let _ = std::fs::remove_file(&f);
        let dump = String::from_utf8_lossy(&dump.stdout);
        let pd = opencsd_c_api::perf::PerfData::from_bytes(rec.stdout.clone()).unwrap();
        assert!(pd.pipe);
        let want = common::perfz::mmap_comm_listed(&dump, 16);
        assert!(want.len() > 2, "{dump}");
        let got = common::perfz::mmap_comm_read(&pd);
        assert_eq!(got, want, "compressed: {compress}");
        // no trace in it: named, exit status 2
        let out = ocsd_stdin(&rec.stdout, &[]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("ocsd perf: standard input: no AUX trace data") && err.lines().count() == 1, "{err}");
    }
}

/// A stream cut anywhere, or with a record's size damaged: a one-line
/// error, exit status 2, never a panic.
#[test]
fn damaged_pipe_streams_are_errors() {
    let Some(shared) = common::shared_or_skip() else { return };
    let bytes = std::fs::read(shared.join("perf/etm_test_loop.perf.data")).unwrap();
    let pipe = to_pipe(&bytes).unwrap();
    let mut cases: Vec<Vec<u8>> = Vec::new();
    for cut in [16, 20, 100, pipe.len() / 3, pipe.len() / 2, pipe.len() - 3] {
        cases.push(pipe[..cut].to_vec());
    }
    // the first attribute record's size: zero
    let mut z = pipe.clone();
    z[22..24].copy_from_slice(&0u16.to_le_bytes());
    cases.push(z);
    // an event description feature record claiming 2^32-1 events, its first
    // attribute too short to read (the crate would size a vector for them
    // all before reading one)
    let mut body = 12u64.to_le_bytes().to_vec();
    body.extend_from_slice(&u32::MAX.to_le_bytes());
    body.extend_from_slice(&136u32.to_le_bytes());
    body.extend_from_slice(&[0u8; 136]);
    let mut rec = 80u32.to_le_bytes().to_vec();
    rec.extend_from_slice(&0u16.to_le_bytes());
    rec.extend_from_slice(&((8 + body.len()) as u16).to_le_bytes());
    rec.extend_from_slice(&body);
    let mut evil = pipe[..16].to_vec();
    evil.extend_from_slice(&rec);
    evil.extend_from_slice(&pipe[16..]);
    cases.push(evil);
    for (i, c) in cases.iter().enumerate() {
        let out = ocsd_stdin(c, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "case {i}: {err}");
        assert_eq!(err.lines().count(), 1, "case {i}: {err}");
    }
}
