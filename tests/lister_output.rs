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

/// Memory dumps map as OpenCSD 1.8.0's snapshot reader maps them: a file's
/// later dumps add regions to its one accessor; a second offset-0 range of
/// the file, or a region past its end, is refused with an error in the log
/// and the decode goes on with the rest. The print plan lists the file's
/// ranges as mapped.
#[test]
fn later_dumps_of_a_file_are_its_regions() {
    let Some((src, dir, snap)) = snapshot_copy("juno_r1_1", "dumps") else { return };
    let cpu0 = snap.join("cpu_0.ini");
    let mut ini = std::fs::read_to_string(&cpu0).unwrap();
    ini.push_str(concat!(
        "\n[dump2]\nfile=kernel_dump.bin\naddress=0xFFFFFFC100000000\nlength=0x1000\n",
        "\n[dump3]\nfile=kernel_dump.bin\naddress=0xFFFFFFC200000000\noffset=0x1000\nlength=0x100\n",
        "\n[dump4]\nfile=kernel_dump.bin\naddress=0xFFFFFFC300000000\noffset=0x4F000\nlength=0x2000\n",
    ));
    std::fs::write(&cpu0, ini).unwrap();
    let plan = dir.join("plan");
    let log = |s: &Path, extra: &[&str]| String::from_utf8(body(decode_log(s, &dir.join("out.ppl"), extra).as_bytes())).unwrap();
    let plain = log(&src, &[]);
    let got = log(&snap, &[]);
    log(&snap, &["-print_plan", plan.to_str().unwrap()]);
    let path = format!("{}/kernel_dump.bin", snap.display());
    let refused = |e: &str| format!("ss2_dcdtree : {e}; Failed to create memory accessor for file {path}.");
    let diff_range = refused("0x0006 (OCSD_ERR_INVALID_PARAM_VAL) [Invalid value parameter passed to component.]");
    assert_eq!(got.matches(&diff_range).count(), 2, "{}", &got[..2000.min(got.len())]);
    // the same decode (the mapped-range listing before it names the region)
    let decode = |s: &str| s[s.find("Idx:").expect("a decode")..].to_string();
    assert!(decode(&got.replace(&diff_range, "")) == decode(&plain), "the decode differs");
    assert!(got.contains(&format!("FileAcc; Range::0xffffffc000081000:ffffffc0000d0fff; Mem Space::Any\nFileAcc; Range::0xffffffc200000000:ffffffc2000000ff; Mem Space::Any\nFilename={path}")));
    let plan = std::fs::read_to_string(&plan).unwrap();
    let mems: Vec<&str> = plan.lines().filter(|l| l.starts_with("mem ")).collect();
    assert_eq!(mems, vec![format!("mem ffffffc000081000 0 50000 ff {path}"), format!("mem ffffffc200000000 1000 100 ff {path}")]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The log of a `-decode` of snapshot `snap` (with `extra` options)
/// written to `file` (made afresh: a log file is appended to).
fn decode_log(snap: &Path, file: &Path, extra: &[&str]) -> String {
    let _ = std::fs::remove_file(file);
    let o = Command::new(env!("CARGO_BIN_EXE_trc_pkt_lister"))
        .arg("-ss_dir")
        .arg(snap)
        .args(["-decode", "-no_time_print", "-logfilename"])
        .arg(file)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "lister failed on {}", snap.display());
    std::fs::read_to_string(file).unwrap()
}

/// (the shared snapshot `name`, a fresh folder, a copy of the snapshot in
/// it to edit); None (said) without the shared data.
fn snapshot_copy(name: &str, tag: &str) -> Option<(std::path::PathBuf, std::path::PathBuf, std::path::PathBuf)> {
    let shared = common::shared_or_skip()?;
    let src = shared.join("conformance/snapshots").join(name);
    let dir = std::env::temp_dir().join(format!("lister_output_{}_{}", tag, std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let snap = dir.join(name);
    copy_snapshot(&src, &snap);
    Some((src, dir, snap))
}

/// A copy of snapshot `src` (its files, not its folders) at `dst`.
fn copy_snapshot(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            let to = dst.join(e.file_name());
            std::fs::copy(e.path(), &to).unwrap();
            let mut perm = std::fs::metadata(&to).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perm.set_readonly(false);
            std::fs::set_permissions(&to, perm).unwrap();
        }
    }
}

/// As OpenCSD's snapshot reader: a trace source with a core must be a PE
/// source (ETMv3, PTM, ETMv4, ETE) and one without a core STM or ITM; any
/// other is not created, with an error in the log, and the others decode.
#[test]
fn sources_must_match_their_core_association() {
    let Some((_, dir, snap)) = snapshot_copy("TC2", "assoc") else { return };
    // PTM_1 loses its core, which goes to ITM_0
    let ini = std::fs::read_to_string(snap.join("trace.ini")).unwrap().replace("cpu_4=PTM_1", "cpu_4=ITM_0");
    std::fs::write(snap.join("trace.ini"), ini).unwrap();
    let log = decode_log(&snap, &dir.join("out.ppl"), &[]);
    let err = "ss2_dcdtree : 0x0026 (OCSD_ERR_TEST_SS_TO_DECODER) [test snapshot to decode tree conversion error]; ";
    assert!(log.contains(&format!("{err}Failed to create decoder for source ITM_0.\n")), "{}", &log[..3000.min(log.len())]);
    assert!(log.contains(&format!("{err}Failed to create decoder for none core source PTM_1.\n")));
    // the ETMs and PTM_0 still decode
    assert!(log.contains("Trace Packet Lister : Protocol printer PTM on Trace ID 0x13"), "{}", &log[..3000.min(log.len())]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-stats`: the decode statistics of each trace ID whose packet processor
/// keeps them (ETMv4 / ETE, as OpenCSD's: the bytes given to it, those
/// dropped before synchronisation, bad headers), "unavailable" for the
/// others (PTM, ETMv3, STM: OpenCSD's answer OCSD_ERR_NOT_INIT), then the
/// frame demultiplexer's counts, which add up to the trace's bytes.
#[test]
fn stats_as_opencsd_keeps_them() {
    let Some(shared) = common::shared_or_skip() else { return };
    let conf = shared.join("conformance");
    let dir = std::env::temp_dir().join(format!("lister_stats_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("out.ppl");
    let stats = |snap: &str| {
        let (_, out, _) = run(&conf, snap, &["-decode", "-stats"], &["-logstdout"], &file);
        let out = String::from_utf8(out).unwrap();
        let at = out.find("Reading packet decoder statistics").unwrap_or_else(|| panic!("{snap}: no statistics"));
        out[at..].to_string()
    };
    let etm4 = stats("snapshots/juno_r1_1");
    assert!(etm4.contains("Decode stats ID 0x10\nTotal Bytes: "), "{etm4}");
    assert!(!etm4.contains("unavailable"), "{etm4}");
    // a bad header counted (a header reserved in the configuration)
    let infra = stats("snapshots-ete/infrastructure");
    assert!(infra.contains("Bad Header Errors: 1;"), "{infra}");
    let ptm = stats("snapshots/tc2-ptm-rstk-t32");
    assert!(ptm.contains("Decode stats unavailable on Trace ID 0x"), "{ptm}");
    assert!(!ptm.contains("Total Bytes"), "{ptm}");
    // the demux counts add up to the trace buffer's size
    let total: u64 = etm4
        .lines()
        .find_map(|l| l.strip_prefix("Total bytes processed by frame demux: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap();
    let size = std::fs::metadata(conf.join("snapshots/juno_r1_1/cstrace.bin")).unwrap().len();
    assert_eq!(total, size);
    let _ = std::fs::remove_dir_all(&dir);
}
