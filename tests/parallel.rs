//! Parallel decode (`trc_pkt_lister -parallel N`) writes exactly the serial
//! log on every conformance case (cases.tsv and cases-corrupt.tsv), with
//! segments forced small so that the trace is cut and stitched at every
//! synchronisation point, on two threads and on one.

mod common;

use std::path::Path;
use std::process::Command;

/// The log from the line after the command line on (the command lines
/// differ by the parallel options).
fn body(log: &[u8]) -> &[u8] {
    const MARK: &[u8] = b"Trace Packet Lister : reading snapshot";
    match log.windows(MARK.len()).position(|w| w == MARK) {
        Some(p) => &log[p..],
        None => log,
    }
}

struct Case {
    name: String,
    snap: String,
    env: Vec<(String, String)>,
    args: Vec<String>,
}

fn load_cases(path: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 4, "bad case line {line}");
        let env = if f[2] == "-" {
            vec![]
        } else {
            f[2].split_whitespace().map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())).unwrap()).collect()
        };
        let args = if f[3] == "-" { vec![] } else { f[3].split_whitespace().map(String::from).collect() };
        out.push(Case { name: f[0].into(), snap: f[1].into(), env, args });
    }
    out
}

/// Run the lister on a case with `extra` options; the log and the parallel
/// decode report (stderr).
fn run(conf: &Path, c: &Case, extra: &[&str], out: &Path) -> (Vec<u8>, String) {
    let _ = std::fs::remove_file(out);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_trc_pkt_lister"));
    cmd.current_dir(conf).arg("-ss_dir").arg(&c.snap).args(&c.args).args(extra);
    cmd.arg("-no_time_print").arg("-logfilename").arg(out);
    cmd.env("OCSD_PARALLEL_REPORT", "1");
    for (k, v) in &c.env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}: lister failed: {}", c.name, String::from_utf8_lossy(&o.stderr));
    (std::fs::read(out).unwrap_or_default(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Stitches reported by a parallel run (0: it decoded serially).
fn stitches(report: &str) -> usize {
    report
        .lines()
        .find_map(|l| l.strip_prefix("trc_pkt_lister: parallel decode: "))
        .and_then(|l| l.split(", ").nth(1))
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn parallel_decode_matches_serial_on_every_conformance_case() {
    let Some(shared) = common::shared_or_skip() else { return };
    let conf = shared.join("conformance");
    let tmp = std::env::temp_dir().join(format!("ocsd-parallel-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut failures = Vec::new();
    let (mut cases_run, mut parallel_runs, mut total_stitches) = (0, 0, 0);
    for list in ["cases.tsv", "cases-corrupt.tsv"] {
        for c in load_cases(&conf.join(list)) {
            cases_run += 1;
            let (serial, _) = run(&conf, &c, &[], &tmp.join("serial.ppl"));
            assert!(!serial.is_empty(), "{}: no serial log", c.name);
            for extra in [&["-parallel", "2", "-parallel_min_seg", "64"][..], &["-parallel", "1", "-parallel_min_seg", "64"][..]] {
                let (par, report) = run(&conf, &c, extra, &tmp.join("parallel.ppl"));
                if report.contains("parallel decode:") {
                    parallel_runs += 1;
                }
                total_stitches += stitches(&report);
                if body(&par) != body(&serial) {
                    failures.push(format!("{} {}", c.name, extra.join(" ")));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    eprintln!("{cases_run} cases; {parallel_runs} runs decoded in parallel with {total_stitches} stitches");
    assert!(failures.is_empty(), "parallel log differs from the serial log: {failures:?}");
    // the cases must really have been cut and stitched, or this test
    // would compare the serial decode with itself
    assert!(parallel_runs >= 100, "only {parallel_runs} runs decoded in parallel");
    assert!(total_stitches >= 500, "only {total_stitches} stitches");
}

/// An element's identity: its index, trace ID and every field of its C
/// element, hashed.
fn elem_hash(e: &opencsd_c_api::api::Element) -> u64 {
    let r = e.raw();
    let c = r.context;
    let [p0, p1] = r.payload.words();
    let fields = [
        e.index,
        e.trace_id as u64,
        r.elem_type as u64,
        r.isa as u64,
        r.st_addr,
        r.en_addr,
        (c.security_level as u64) << 32 | c.exception_level as u64,
        (c.context_id as u64) << 32 | c.vmid as u64,
        c.flags as u64,
        r.timestamp,
        (r.cycle_count as u64) << 32 | r.flag_bits as u64,
        (r.last_i_type as u64) << 32 | r.last_i_subtype as u64,
        p0,
        p1,
    ];
    fields.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &f| (h ^ f).wrapping_mul(0x100_0000_01b3).rotate_left(29))
}

/// What a fold keeps, per trace ID: the element count, and a polynomial
/// hash of the sequence of the elements' hashes (`H = H * B + h`), which
/// two runs of consecutive elements combine into: `H(ab) = H(a) * B^n(b) +
/// H(b)`.
type PerId = std::collections::BTreeMap<u8, (u64, u64)>;
const B: u64 = 0x100_0000_01b3;

fn fold_elem(acc: &mut PerId, e: &opencsd_c_api::api::Element) {
    let v = acc.entry(e.trace_id).or_insert((0, 0));
    v.0 += 1;
    v.1 = v.1.wrapping_mul(B).wrapping_add(elem_hash(e));
}

fn pow_b(mut n: u64) -> u64 {
    let (mut r, mut b) = (1u64, B);
    while n > 0 {
        if n & 1 == 1 {
            r = r.wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
        n >>= 1;
    }
    r
}

/// `b`'s elements after `a`'s, trace ID by trace ID.
fn reduce_per_id(mut a: PerId, b: PerId) -> PerId {
    for (id, (nb, hb)) in b {
        let v = a.entry(id).or_insert((0, 0));
        v.0 += nb;
        v.1 = v.1.wrapping_mul(pow_b(nb)).wrapping_add(hb);
    }
    a
}

/// `Decoder::decode_parallel_fold` folds each element of `decode_each`
/// exactly once, and `reduce` gets the folded values in the order of each
/// trace ID's elements (per trace ID, the same count and the same hash of
/// the sequence of element hashes), and logs the same messages, on the snapshot of every
/// conformance case (cases.tsv and cases-corrupt.tsv), with segments
/// forced small (many stitches) on two threads and one, and with the
/// default folding segments.
#[test]
fn api_decode_parallel_fold_folds_each_element_once_on_every_conformance_case() {
    use opencsd_c_api::api::{Decoder, ParallelOptions};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let Some(shared) = common::shared_or_skip() else { return };
    let conf = shared.join("conformance");
    let mut snaps: Vec<String> = Vec::new();
    for list in ["cases.tsv", "cases-corrupt.tsv"] {
        for c in load_cases(&conf.join(list)) {
            if !snaps.contains(&c.snap) {
                snaps.push(c.snap);
            }
        }
    }
    let (mut checked, mut folded_in_pieces) = (0, 0);
    for snap in &snaps {
        let dir = conf.join(snap);
        let Ok(s) = Decoder::from_snapshot(&dir, None) else { continue };
        let Ok(trace) = std::fs::read(&s.trace_file) else { continue };
        let mut dec = s.decoder;
        let mut serial = PerId::new();
        let r_serial = dec.decode_each(&trace[..], |e| fold_elem(&mut serial, e));
        let mut msgs_serial = dec.take_messages();
        msgs_serial.sort();
        for opts in [ParallelOptions::stress(2, 64), ParallelOptions::stress(1, 64), ParallelOptions::folding(2)] {
            let mut dec = Decoder::from_snapshot(&dir, None).unwrap().decoder;
            // values made: one per piece of output folded
            let made = Arc::new(AtomicUsize::new(0));
            let m = made.clone();
            let r = dec.decode_parallel_fold(
                &trace,
                &opts,
                move || {
                    m.fetch_add(1, Ordering::Relaxed);
                    PerId::new()
                },
                fold_elem,
                reduce_per_id,
            );
            assert_eq!(r.is_ok(), r_serial.is_ok(), "{snap}");
            if let (Ok((got, bytes)), Ok(serial_bytes)) = (&r, &r_serial) {
                let count = |m: &PerId| m.values().map(|v| v.0).sum::<u64>();
                assert_eq!(count(got), count(&serial), "{snap} {opts:?}: elements folded");
                assert_eq!(*got, serial, "{snap} {opts:?}: the elements folded, or their order per trace ID, differ");
                assert_eq!(bytes, serial_bytes, "{snap}");
            }
            let mut msgs = dec.take_messages();
            msgs.sort();
            assert_eq!(msgs, msgs_serial, "{snap} {opts:?}: messages");
            if made.load(Ordering::Relaxed) > 2 {
                folded_in_pieces += 1;
            }
            checked += 1;
        }
    }
    eprintln!("{checked} folded decodes of {} snapshots; {folded_in_pieces} folded in pieces", snaps.len());
    // the decodes must really have been cut and folded in pieces, or this
    // test would compare the serial decode with itself
    assert!(checked >= 100, "only {checked} decodes checked");
    assert!(folded_in_pieces >= 60, "only {folded_in_pieces} decodes folded in pieces");
}

/// The snapshots the Rust API tests decode (one or more of each protocol,
/// and a corrupted one) that are there, with their folders.
fn api_snapshots(shared: &Path) -> Vec<(&'static str, std::path::PathBuf)> {
    [
        "snapshots/juno_r1_1",
        "snapshots/a57_single_step",
        "snapshots/TC2",
        "snapshots/stm_only",
        "snapshots-ete/001-ack_test",
        "snapshots-ete/002-ack_test_scr",
        "snapshots-corrupt/juno-uname-001-c1000",
    ]
    .into_iter()
    .map(|s| (s, shared.join("conformance").join(s)))
    .filter(|(_, d)| d.join("snapshot.ini").is_file())
    .collect()
}

/// All of an element: its lister line, JSON, and the C element's fields.
fn whole(e: &opencsd_c_api::api::Element) -> String {
    let mut l = String::new();
    e.write_lister_line(&mut l);
    e.write_json(&mut l);
    let r = e.raw();
    let ctx = r.context;
    l += &format!(
        " {} {} {:x} {:x} {} {} {} {} {} {} {} {} {} {} {:x} {:x?}",
        r.elem_type,
        r.isa,
        r.st_addr,
        r.en_addr,
        ctx.security_level,
        ctx.exception_level,
        ctx.context_id,
        ctx.vmid,
        ctx.flags,
        r.timestamp,
        r.cycle_count,
        r.last_i_type,
        r.last_i_subtype,
        e.cycle_count.is_some(),
        r.flag_bits,
        r.payload.words()
    );
    l
}

/// The Rust API: `Decoder::decode_parallel` and
/// `Decoder::decode_parallel_each` give the elements (and the messages) of
/// `Decoder::decode`, on snapshots of each protocol (the corrupted one
/// logs messages among its elements).
#[test]
fn api_decode_parallel_matches_decode() {
    use opencsd_c_api::api::{Decoder, ParallelOptions};
    let Some(shared) = common::shared_or_skip() else { return };
    let mut checked = 0;
    let mut with_messages = 0;
    for (snap, dir) in api_snapshots(&shared) {
        let s = Decoder::from_snapshot(&dir, None).unwrap();
        let trace = std::fs::read(&s.trace_file).unwrap();
        let mut dec = s.decoder;
        let mut serial = Vec::new();
        let r_serial = dec.decode_each(&trace[..], |e| {
            let mut l = String::new();
            e.write_lister_line(&mut l);
            serial.push(l);
        });
        let msgs_serial = dec.take_messages();
        let mut dec = Decoder::from_snapshot(&dir, None).unwrap().decoder;
        let mut serial_whole = Vec::new();
        dec.decode_each(&trace[..], |e| serial_whole.push(whole(e))).ok();
        // the iterator's elements wait in a queue, decode_each's go
        // straight to the callback: the same elements, each whole
        let mut dec = Decoder::from_snapshot(&dir, None).unwrap().decoder;
        let iterated: Vec<String> = dec.decode(&trace[..]).map(|e| whole(&e)).collect();
        assert!(iterated == serial_whole, "{snap}: the iterator's elements differ from decode_each's");
        assert_eq!(dec.take_messages(), msgs_serial, "{snap}: the iterator's messages");
        for opts in [ParallelOptions::stress(2, 64), ParallelOptions::stress(1, 64), ParallelOptions::new(2)] {
            let s = Decoder::from_snapshot(&dir, None).unwrap();
            let mut dec = s.decoder;
            let mut par = Vec::new();
            let r_par = dec.decode_parallel(
                &trace,
                &opts,
                |e, text| {
                    e.write_lister_line(text);
                    e.index
                },
                |_, text| par.push(text.to_string()),
            );
            assert_eq!(r_par.is_ok(), r_serial.is_ok(), "{snap}");
            assert_eq!(par.len(), serial.len(), "{snap}: element count");
            assert!(par == serial, "{snap}: elements differ");
            assert_eq!(dec.take_messages(), msgs_serial, "{snap}: messages");
            // decode_parallel_each: the elements kept packed while they
            // wait, made again as they are given (each whole: its text,
            // typed fields and C element)
            let mut dec = Decoder::from_snapshot(&dir, None).unwrap().decoder;
            let mut each = Vec::new();
            let r_each = dec.decode_parallel_each(&trace, &opts, |e| each.push(whole(e)));
            assert_eq!(r_each.is_ok(), r_serial.is_ok(), "{snap}");
            assert!(each == serial_whole, "{snap}: decode_parallel_each's elements differ");
            assert_eq!(dec.take_messages(), msgs_serial, "{snap}: decode_parallel_each's messages");
            checked += 1;
        }
        if !msgs_serial.is_empty() {
            with_messages += 1;
        }
    }
    assert!(checked >= 12, "only {checked} decodes checked");
    assert!(with_messages >= 1, "no decode logged a message");
}

/// `Decoder::decode_text_parallel` writes the text and summary of
/// `Decoder::decode_text` (lister lines and JSON), and the same messages,
/// with many stitches and with the default segments.
#[test]
fn api_decode_text_parallel_matches_decode_text() {
    use opencsd_c_api::api::{Decoder, ParallelOptions, TextFormat};
    let Some(shared) = common::shared_or_skip() else { return };
    let mut checked = 0;
    let mut parallel_elements = 0;
    for (snap, dir) in api_snapshots(&shared) {
        for format in [TextFormat::Lister, TextFormat::Json] {
            let s = Decoder::from_snapshot(&dir, None).unwrap();
            let trace = std::fs::read(&s.trace_file).unwrap();
            let mut dec = s.decoder;
            let mut serial = Vec::new();
            let rs = dec.decode_text(&trace[..], format, 4096, |t| {
                serial.extend_from_slice(t);
                true
            });
            let msgs_serial = dec.take_messages();
            for opts in [ParallelOptions::stress(2, 64), ParallelOptions::new(2)] {
                let mut dec = Decoder::from_snapshot(&dir, None).unwrap().decoder;
                let mut par = Vec::new();
                let rp = dec.decode_text_parallel(&trace, &opts, format, 4096, |t| {
                    par.extend_from_slice(t);
                    true
                });
                assert!(par == serial, "{snap} {format:?}: text differs");
                assert_eq!(rp.elements, rs.elements, "{snap}: element count");
                assert_eq!(rp.by_type, rs.by_type, "{snap}: counts by type");
                assert_eq!(rp.instructions, rs.instructions, "{snap}: instructions");
                assert_eq!(rp.synced, rs.synced, "{snap}: synced");
                assert_eq!(rp.bytes, rs.bytes, "{snap}: bytes");
                assert_eq!(rp.error.is_some(), rs.error.is_some(), "{snap}: error");
                assert_eq!(dec.take_messages(), msgs_serial, "{snap}: messages");
                parallel_elements += rp.elements;
                checked += 1;
            }
        }
    }
    assert!(checked >= 12, "only {checked} decodes checked");
    assert!(parallel_elements > 0);
}
