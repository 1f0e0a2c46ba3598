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

/// A log file already there, longer or shorter than the log, is written
/// over and cut where the log ends: it ends up holding exactly the bytes a
/// new file gets, after a decode, parallel or not, and after a run that
/// stops on an error. A run killed by SIGTERM leaves a beginning of the
/// log and nothing of the old file.
#[test]
fn an_old_log_file_ends_up_as_a_new_one() {
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
        let want = std::fs::read(&file).unwrap();
        assert!(!want.is_empty());
        // longer (a whole old log and more after it), then shorter; not
        // line-shaped, so that no old byte can pass for log text
        for old_len in [want.len() + (1 << 20) + 3, want.len() / 2, 1] {
            std::fs::write(&file, vec![0xffu8; old_len]).unwrap();
            assert!(lister(&conf, snap, args, &file).output().unwrap().status.success());
            let got = std::fs::read(&file).unwrap();
            assert!(got == want, "{snap} {args:?} over an old file of {old_len} bytes: {} bytes, want the {} of a new file", got.len(), want.len());
        }
    }

    // killed while writing (or done before the signal: then the whole log)
    let snap = "snapshots/bugfix-exact-match";
    let _ = std::fs::remove_file(&file);
    assert!(lister(&conf, snap, &["-decode"], &file).output().unwrap().status.success());
    let want = std::fs::read(&file).unwrap();
    let old_len = 48 << 20;
    assert!(want.len() > old_len);
    std::fs::write(&file, vec![0xffu8; old_len]).unwrap();
    let mut child = lister(&conf, snap, &["-decode"], &file).stdout(std::process::Stdio::null()).spawn().unwrap();
    // the first block written: the lister has the file open (and the
    // handler in place)
    let t0 = std::time::Instant::now();
    let first = || {
        let mut b = [0u8; 1];
        std::fs::File::open(&file).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b)).map(|_| b[0])
    };
    while first().map(|b| b == 0xff).unwrap_or(true) && t0.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // (the child keeps its pid until waited for)
    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    let st = child.wait().unwrap();
    let got = std::fs::read(&file).unwrap();
    assert!(got.len() <= want.len() && got[..] == want[..got.len()], "killed ({st}): {} bytes, not a beginning of the log", got.len());
    let _ = std::fs::remove_dir_all(&dir);
}
