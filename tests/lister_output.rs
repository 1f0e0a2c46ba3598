//! The lister writes the same log to every output it is given: the log
//! file (written by its writer thread, in blocks), standard output and
//! standard error, alone or together, decoding serially or in parallel
//! (where a segment's log blocks go to the writer as they are), with the
//! library's error messages in their place among the decode lines.

mod common;

use std::path::Path;
use std::process::Command;

/// The log from the line after the command line on (the command lines
/// differ by the options).
fn body(log: &[u8]) -> Vec<u8> {
    const MARK: &[u8] = b"Trace Packet Lister : reading snapshot";
    match log.windows(MARK.len()).position(|w| w == MARK) {
        Some(p) => log[p..].to_vec(),
        None => panic!("no log: {}", String::from_utf8_lossy(log)),
    }
}

/// What one run wrote: (file, stdout, stderr), each empty when not asked
/// for.
fn run(conf: &Path, snap: &str, args: &[&str], outs: &[&str], file: &Path) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let _ = std::fs::remove_file(file);
    let o = Command::new(env!("CARGO_BIN_EXE_trc_pkt_lister"))
        .current_dir(conf)
        .arg("-ss_dir")
        .arg(snap)
        .args(args)
        .arg("-no_time_print")
        .args(outs)
        // (-logfilename also asks for the file)
        .args(if outs.contains(&"-logfile") { vec!["-logfilename".as_ref(), file.as_os_str()] } else { vec![] })
        .output()
        .unwrap();
    assert!(o.status.success(), "lister failed on {snap} {args:?} {outs:?}");
    (std::fs::read(file).unwrap_or_default(), o.stdout, o.stderr)
}

#[test]
fn every_output_gets_the_same_log_serial_and_parallel() {
    let Some(shared) = common::shared_or_skip() else { return };
    let conf = shared.join("conformance");
    let dir = std::env::temp_dir().join(format!("lister_output_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("out.ppl");
    // a log of several MB (many blocks, segments of several blocks), and
    // corrupted traces whose decoders log errors among their lines, one
    // ending in a fatal error (where the parallel decode gives up and the
    // serial decode writes the rest)
    for snap in ["snapshots/juno_r1_1", "snapshots-corrupt/juno_r1_1-c1002", "snapshots-corrupt/juno_r1_1-c1000"] {
        let (want, _, _) = run(&conf, snap, &["-decode"], &["-logfile"], &file);
        let want = body(&want);
        assert!(want.len() > 1 << 20, "{snap}: log of {} bytes: too short to fill several blocks", want.len());
        for args in [&["-decode"][..], &["-decode", "-parallel", "2"], &["-decode", "-parallel", "2", "-parallel_min_seg", "256"]] {
            let combos: [(&[&str], [bool; 3]); 6] = [
                (&["-logfile"], [true, false, false]),
                (&["-logstdout"], [false, true, false]),
                (&["-logstderr"], [false, false, true]),
                (&["-logfile", "-logstdout"], [true, true, false]),
                (&["-logfile", "-logstderr"], [true, false, true]),
                (&["-logstdout", "-logstderr", "-logfile"], [true, true, true]),
            ];
            for (outs, used) in combos {
                let (f, o, e) = run(&conf, snap, args, outs, &file);
                for (k, (got, name)) in [(f, "file"), (o, "stdout"), (e, "stderr")].into_iter().enumerate() {
                    if used[k] {
                        assert!(body(&got) == want, "{snap} {args:?} {outs:?}: the {name} log differs from the serial log file");
                    } else {
                        assert!(got.is_empty(), "{snap} {args:?} {outs:?}: {name} written to");
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Run the lister on `snap` with `args`, its log to `file` alone (the same
/// name each time: the log echoes its command line).
fn lister(conf: &Path, snap: &str, args: &[&str], file: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_trc_pkt_lister"));
    c.current_dir(conf).arg("-ss_dir").arg(snap).args(args).arg("-no_time_print").arg("-logfilename").arg(file);
    c
}

/// A log file already there is appended to, as OpenCSD's lister does (its
/// message logger opens the file with `std::fstream::app`): the file ends up
/// holding what it held, then exactly the bytes a new file gets - after a
/// decode, parallel or not, after a run that stops on an error, and when
/// there is no snapshot to read.
#[test]
fn a_log_file_already_there_is_appended_to() {
    let Some(shared) = common::shared_or_skip() else { return };
    let conf = shared.join("conformance");
    let dir = std::env::temp_dir().join(format!("lister_output_old_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("old.ppl");
    let runs: [(&str, &[&str]); 4] = [
        ("snapshots/juno_r1_1", &["-decode"]),
        ("snapshots/juno_r1_1", &["-decode", "-parallel", "2", "-parallel_min_seg", "256"]),
        ("snapshots-corrupt/juno_r1_1-c1000", &["-decode"]),
        // no snapshot: a log of a few lines
        ("snapshots/no-such-snapshot", &["-decode"]),
    ];
    for (snap, args) in runs {
        let _ = std::fs::remove_file(&file);
        assert!(lister(&conf, snap, args, &file).output().unwrap().status.success());
        let new = std::fs::read(&file).unwrap();
        assert!(!new.is_empty());
        // not line-shaped, and of a length that ends in mid block
        for old_len in [1usize, (1 << 17) + 3] {
            let old = vec![0xffu8; old_len];
            std::fs::write(&file, &old).unwrap();
            assert!(lister(&conf, snap, args, &file).output().unwrap().status.success());
            let got = std::fs::read(&file).unwrap();
            let mut want = old.clone();
            want.extend_from_slice(&new);
            assert!(got == want, "{snap} {args:?} after an old file of {old_len} bytes: {} bytes, want {}", got.len(), want.len());
        }
        // run twice: two logs
        assert!(lister(&conf, snap, args, &file).output().unwrap().status.success());
        let got = std::fs::read(&file).unwrap();
        assert_eq!(got.len(), (1 << 17) + 3 + 2 * new.len(), "{snap} {args:?}: a second run does not append its log");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
