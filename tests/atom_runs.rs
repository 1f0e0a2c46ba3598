//! ETMv4 / ETE atom packets reach the decoder two ways: one by one as
//! packets, or, when nothing watches packets, in runs straight from their
//! header bytes (`PacketOut::atom_run`, `PacketDecoder::atom_packets`).
//! On corrupted copies of the conformance snapshots (bytes flipped,
//! replaced, inserted or deleted by the robustness harness's
//! `corrupt_sparsely`, with fixed seeds) the lister's elements and
//! messages must be the same both ways: with `-decode` (a packet printer
//! attached, every packet alone) and with `-decode_only`.
//!
//! Atoms are mostly taken by replaying decoded blocks from the decoder's
//! block cache. With `OPENCSD_INSTR_RANGE_LIMIT` set (here far beyond any
//! range) the decoder walks every instruction instead: the same snapshots,
//! whole and corrupted, with the return stack as configured and forced on,
//! must give the same lines both ways.
//! Needs `$OCSD_SHARED` or `../shared`; skipped loudly without.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
mod robust_harness;
use common::*;
use robust_harness::{corrupt_sparsely, Rng};

/// Snapshots of ETMv4 and ETE trace, and the seeds each is corrupted with.
const CASES: &[(&str, u64)] = &[
    ("snapshots/bugfix-exact-match", 3),
    ("snapshots/juno_r1_1", 2),
    ("snapshots/a57_single_step", 6),
    ("snapshots/armv8_1m_branches", 6),
    ("snapshots/init-short-addr", 6),
    ("snapshots/juno-uname-001", 6),
    ("snapshots/test-file-mem-offsets", 4),
    ("snapshots-ete/001-ack_test", 6),
    ("snapshots-ete/ete_ip", 6),
    ("snapshots-ete/ete_mem", 6),
    ("snapshots-ete/ete_spec_1", 6),
];

/// A copy of snapshot `src` in `dst` with its trace buffers corrupted
/// (seed 0: not corrupted).
fn corrupted_copy(src: &Path, dst: &Path, seed: u64) {
    let _ = fs::remove_dir_all(dst);
    copy_tree(src, dst);
    if seed == 0 {
        return;
    }
    let trace_ini = fs::read_to_string(dst.join("trace.ini")).unwrap();
    for line in trace_ini.lines() {
        let Some((k, v)) = line.split_once('=') else { continue };
        if k.trim().eq_ignore_ascii_case("file") {
            let p = dst.join(v.trim());
            let mut data = fs::read(&p).unwrap();
            corrupt_sparsely(&mut data, &mut Rng::new(seed));
            fs::write(&p, data).unwrap();
        }
    }
}

/// The lister's element and message lines for the snapshot in `dir`
/// (packet lines, and the header naming the printers, left out).
fn elements_and_messages(dir: &Path, decode_only: bool) -> Vec<String> {
    lister_lines(dir, decode_only, false)
}

/// [`elements_and_messages`], the decoder walking every instruction when
/// `walk` (no block replayed).
fn lister_lines(dir: &Path, decode_only: bool, walk: bool) -> Vec<String> {
    let log = dir.with_extension(match (decode_only, walk) {
        (false, false) => "a.ppl",
        (true, false) => "b.ppl",
        (_, true) => "w.ppl",
    });
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_trc_pkt_lister"));
    if walk {
        cmd.env("OPENCSD_INSTR_RANGE_LIMIT", "2147483647");
    } else {
        cmd.env_remove("OPENCSD_INSTR_RANGE_LIMIT");
    }
    cmd.arg("-ss_dir").arg(dir).arg("-decode");
    if decode_only {
        cmd.arg("-decode_only");
    }
    cmd.args(["-no_time_print", "-logfile", "-logfilename"]).arg(&log);
    let out = cmd.output().unwrap();
    assert!(out.status.success() || out.status.code().is_some(), "lister crashed on {}", dir.display());
    let text = String::from_utf8_lossy(&fs::read(&log).unwrap()).into_owned();
    let _ = fs::remove_file(&log);
    let mut lines = Vec::new();
    for line in text.lines() {
        // a message without a newline runs into the line after it: split
        // before each line's start
        let mut parts = Vec::new();
        let mut start = 0;
        for (i, _) in line.match_indices("Idx:") {
            if i > start {
                parts.push(&line[start..i]);
                start = i;
            }
        }
        parts.push(&line[start..]);
        for p in parts {
            let p = p.split("Trace Packet Lister").next().unwrap_or("");
            let is_packet = p.starts_with("Idx:") && !p.contains("OCSD_GEN_TRC_ELEM");
            if !is_packet && (p.contains("OCSD_GEN_TRC_ELEM") || p.contains("ERR") || p.contains("WARN")) {
                lines.push(p.to_string());
            }
        }
    }
    lines
}

/// The snapshots of [`CASES`] in `shared`: name, directory and seeds.
fn cases(shared: &Path) -> Vec<(&'static str, PathBuf, u64)> {
    CASES
        .iter()
        .map(|&(case, seeds)| {
            let src = shared.join("conformance").join(case);
            assert!(src.is_dir(), "{} missing", src.display());
            (case.rsplit('/').next().unwrap(), src, seeds)
        })
        .collect()
}

#[test]
fn atom_runs_decode_corrupted_trace_as_packets_one_by_one() {
    let Some(shared) = shared_or_skip() else { return };
    let work: PathBuf = std::env::temp_dir().join(format!("ocsd-atom-runs-{}", std::process::id()));
    let mut decodes = 0;
    let mut elements = 0;
    for (name, src, seeds) in cases(&shared) {
        for seed in 1..=seeds {
            let dir = work.join(format!("{name}.{seed}"));
            corrupted_copy(&src, &dir, seed);
            let one_by_one = elements_and_messages(&dir, false);
            let runs = elements_and_messages(&dir, true);
            if one_by_one != runs {
                let at = one_by_one.iter().zip(&runs).position(|(a, b)| a != b).unwrap_or(one_by_one.len().min(runs.len()));
                panic!(
                    "{name} seed {seed}: line {at}: with packets one by one {:?}, in runs {:?}",
                    one_by_one.get(at),
                    runs.get(at)
                );
            }
            decodes += 1;
            elements += runs.len();
            fs::remove_dir_all(&dir).unwrap();
        }
    }
    let _ = fs::remove_dir_all(&work);
    eprintln!("{decodes} corrupted decodes, {elements} element and message lines the same both ways");
    assert!(elements > 1_000_000, "{elements}");
}

/// Set the return stack bit (RS, bit 12) of TRCCONFIGR in the snapshot's
/// device files: the decoders then pop the return stack for atoms after a
/// taken indirect branch where the trace gives no address.
fn force_return_stack(dir: &Path) -> usize {
    let mut set = 0;
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "ini") {
            continue;
        }
        let text = fs::read_to_string(&p).unwrap();
        let mut out = String::new();
        for line in text.lines() {
            let forced = line.trim_start().to_ascii_uppercase().starts_with("TRCCONFIGR")
                && line.split_once('=').is_some_and(|(_, v)| {
                    let v = v.trim();
                    let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
                        Some(h) => u64::from_str_radix(h, 16),
                        None => v.parse(),
                    };
                    parsed.is_ok_and(|n| {
                        out.push_str(&format!("{}=0x{:x}\n", line.split_once('=').unwrap().0, n | 0x1000));
                        true
                    })
                });
            if forced {
                set += 1;
            } else {
                out.push_str(line);
                out.push('\n');
            }
        }
        fs::write(&p, out).unwrap();
    }
    set
}

#[test]
fn replayed_blocks_decode_as_the_instruction_walk() {
    let Some(shared) = shared_or_skip() else { return };
    let work: PathBuf = std::env::temp_dir().join(format!("ocsd-replay-walk-{}", std::process::id()));
    let mut decodes = 0;
    let mut elements = 0;
    let mut forced = 0;
    for (name, src, _) in cases(&shared) {
        // seed 0: the trace as recorded
        for seed in 0..=1 {
            for rs in [false, true] {
                let dir = work.join(format!("{name}.{seed}.{rs}"));
                corrupted_copy(&src, &dir, seed);
                if rs {
                    forced += force_return_stack(&dir);
                }
                let replayed = lister_lines(&dir, true, false);
                let walked = lister_lines(&dir, true, true);
                if replayed != walked {
                    let at = replayed.iter().zip(&walked).position(|(a, b)| a != b).unwrap_or(replayed.len().min(walked.len()));
                    panic!("{name} seed {seed} return stack forced {rs}: line {at}: replayed {:?}, walked {:?}", replayed.get(at), walked.get(at));
                }
                decodes += 1;
                elements += replayed.len();
                fs::remove_dir_all(&dir).unwrap();
            }
        }
    }
    let _ = fs::remove_dir_all(&work);
    eprintln!("{decodes} decodes ({forced} trace units forced to a return stack), {elements} element and message lines the same replayed and walked");
    assert!(forced >= CASES.len() * 2, "{forced}");
    assert!(elements > 1_000_000, "{elements}");
}

/// A plain copy of the directory tree `src` at `dst`.
fn copy_tree(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for e in fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dst.join(e.file_name()));
        } else {
            fs::copy(e.path(), dst.join(e.file_name())).unwrap();
        }
    }
}
