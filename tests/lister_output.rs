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
