//! Robustness: no input may crash, hang or confuse the library.
//!
//! Deterministic (fixed seeds) and bounded in time so that CI runs it on
//! every `cargo test`; see `tests/robust_harness/mod.rs` for what each
//! scenario checks. For a long randomized run:
//!
//!     OCSD_FUZZ_ITERS=100000 cargo test --release --test robustness -- long_random --nocapture
//!
//! (`OCSD_FUZZ_SEED` picks another starting seed.) The same scenarios are
//! cargo-fuzz targets in `fuzz/`.

mod robust_harness;

use std::path::PathBuf;
use std::time::Instant;

use opencsd_c_api::abi::*;
use opencsd_c_api::common::error::NullLog;
use opencsd_c_api::dcd_tree::{registry, DecodeTree};
use robust_harness::*;

mod common;
use common::*;

/// Scale work down in debug builds (overflow checks make them slower).
fn scaled(n: usize) -> usize {
    if cfg!(debug_assertions) {
        (n / 4).max(1)
    } else {
        n
    }
}

fn report(name: &str, failures: &[String], started: Instant, scenarios: usize) {
    eprintln!("{}: {} scenarios in {:.1}s, {} failures", name, scenarios, started.elapsed().as_secs_f64(), failures.len());
    if !failures.is_empty() {
        for f in failures.iter().take(500) {
            eprintln!("---\n{}", f);
        }
        panic!("{}: {} robustness failures (first: {})", name, failures.len(), failures[0].lines().next().unwrap_or(""));
    }
}

#[test]
fn random_bytes_every_protocol() {
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut n = 0;
    for (pi, spec) in PROTOCOLS.iter().enumerate() {
        for full in [false, true] {
            if let Err(why) = proto_available(spec, full) {
                eprintln!("SKIPPED: {} {}: {}", spec.dev_type, if full { "full decode" } else { "packet processing" }, why);
                continue;
            }
            for i in 0..scaled(150) {
                let seed = 0x5EED_0000 + (pi as u64) * 0x1000 + (full as u64) * 0x800 + i as u64;
                n += 1;
                if let Err(e) = random_scenario(seed, pi, full, None, 4096) {
                    failures.push(e);
                }
            }
            for (fi, flags) in deformatter_flag_sets().into_iter().enumerate() {
                for i in 0..scaled(12) {
                    let seed = 0xF0F0_0000 + (pi as u64) * 0x1000 + (full as u64) * 0x800 + (fi as u64) * 0x10 + i as u64;
                    n += 1;
                    if let Err(e) = random_scenario(seed, pi, full, Some(flags), 4096) {
                        failures.push(e);
                    }
                }
            }
        }
    }
    report("random_bytes_every_protocol", &failures, started, n);
}

#[test]
fn real_trace_mutated() {
    let Some(shared) = shared_or_skip() else { return };
    let started = Instant::now();
    let dirs = snapshot_dirs(&shared);
    assert!(!dirs.is_empty(), "no snapshots under {}", shared.display());
    // a donor for splices: another snapshot's trace
    let donor = std::fs::read(shared.join("conformance/snapshots/juno_r1_1/cstrace.bin")).unwrap_or_default();
    let mut failures = Vec::new();
    let mut n = 0;
    for (di, dir) in dirs.iter().enumerate() {
        for i in 0..scaled(30) {
            let seed = 0xC0DE_0000 + (di as u64) * 0x100 + i as u64;
            n += 1;
            if let Err(e) = snapshot_scenario(seed, dir, 16 * 1024, &donor) {
                failures.push(e);
            }
        }
    }
    report("real_trace_mutated", &failures, started, n);
}

fn tmp_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ocsd-robust-{}-{}", std::process::id(), name))
}

/// A small valid snapshot, built from scratch (no shared data needed).
fn synthetic_snapshot() -> Vec<(String, Vec<u8>)> {
    let mut rng = Rng::new(42);
    let trace = format_frames(&[(0x10, random_trace(&mut rng, 2000)), (0x13, random_trace(&mut rng, 500))], &mut rng, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    vec![
        ("snapshot.ini".into(), b"[snapshot]\nversion=1.0\n\n[device_list]\ndevice0=cpu_0.ini\ndevice1=etm_0.ini\ndevice2=ptm_0.ini\n\n[trace]\nmetadata=trace.ini\n".to_vec()),
        ("cpu_0.ini".into(), b"[device]\nname=cpu_0\nclass=core\ntype=Cortex-A53\n\n[regs]\nPC=0\n\n[dump]\nfile=mem.bin\naddress=0x1000\nlength=0x100\n".to_vec()),
        ("etm_0.ini".into(), b"[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n\n[regs]\nTRCCONFIGR(0x004)=0xC1\nTRCTRACEIDR(0x010)=0x10\nTRCIDR0=0x28000EA1\nTRCIDR1=0x4100F403\nTRCIDR2=0x488\n".to_vec()),
        ("ptm_0.ini".into(), b"[device]\nname=PTM_0\nclass=trace_source\ntype=PTM1.1\n\n[regs]\nETMCR=0x10001000\nETMIDR=0x411CF312\nETMCCER=0x34C01AC2\nETMTRACEIDR=0x13\n".to_vec()),
        ("trace.ini".into(), b"[trace_buffers]\nbuffers=buffer0\n\n[buffer0]\nname=ETB_0\nfile=trace.bin\nformat=coresight\n\n[source_buffers]\nETM_0=ETB_0\nPTM_0=ETB_0\n\n[core_trace_sources]\ncpu_0=ETM_0\n".to_vec()),
        ("trace.bin".into(), trace),
        ("mem.bin".into(), rng.bytes(256)),
    ]
}

#[test]
fn malformed_snapshot_files() {
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut n = 0;
    let tmp = tmp_dir("ini");

    // hand-written cases
    let good = synthetic_snapshot();
    let replace = |name: &str, data: &[u8]| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = good.iter().filter(|(n, _)| n != name).cloned().collect();
        v.push((name.to_string(), data.to_vec()));
        v
    };
    let without = |name: &str| -> Vec<(String, Vec<u8>)> { good.iter().filter(|(n, _)| n != name).cloned().collect() };
    let mut cases: Vec<(&str, Vec<(String, Vec<u8>)>)> = vec![
        ("valid", good.clone()),
        ("no snapshot.ini", without("snapshot.ini")),
        ("missing device file", without("etm_0.ini")),
        ("missing trace.ini", without("trace.ini")),
        ("missing trace buffer", without("trace.bin")),
        ("missing memory dump", without("mem.bin")),
        ("empty snapshot.ini", replace("snapshot.ini", b"")),
        ("binary snapshot.ini", replace("snapshot.ini", &[0xFF, 0xFE, 0x00, b'[', 0x80, b']', b'\n', b'=', 0xC3])),
        ("no sections", replace("snapshot.ini", b"device0=cpu_0.ini\nmetadata=trace.ini\n")),
        ("unterminated section", replace("trace.ini", b"[trace_buffers\nbuffers=buffer0\n[buffer0\nname=ETB_0\n")),
        ("buffer list garbage", replace("trace.ini", b"[trace_buffers]\nbuffers=,,,buffer9,\n[buffer9]\n")),
        ("source without device", replace("trace.ini", b"[trace_buffers]\nbuffers=b\n[b]\nname=B\nfile=trace.bin\nformat=coresight\n[source_buffers]\nNOPE=B\n[core_trace_sources]\ncpu_9=NOPE\n")),
        ("core missing", replace("trace.ini", b"[trace_buffers]\nbuffers=b\n[b]\nname=B\nfile=trace.bin\nformat=coresight\n[source_buffers]\nETM_0=B\n[core_trace_sources]\ncpu_9=ETM_0\n")),
        ("single source", replace("trace.ini", b"[trace_buffers]\nbuffers=b\n[b]\nname=B\nfile=trace.bin\nformat=source_data\n[source_buffers]\nETM_0=B\nPTM_0=B\n[core_trace_sources]\ncpu_0=ETM_0\n")),
        ("dstream format", replace("trace.ini", b"[trace_buffers]\nbuffers=b\n[b]\nname=B\nfile=trace.bin\nformat=dstream_coresight\n[source_buffers]\nETM_0=B\n[core_trace_sources]\ncpu_0=ETM_0\n")),
        ("unknown format", replace("trace.ini", b"[trace_buffers]\nbuffers=b\n[b]\nname=B\nfile=trace.bin\nformat=weird\n[source_buffers]\nETM_0=B\n")),
        ("buffer file is a directory", replace("trace.ini", b"[trace_buffers]\nbuffers=b\n[b]\nname=B\nfile=.\nformat=coresight\n[source_buffers]\nETM_0=B\n")),
        ("huge dump numbers", replace("cpu_0.ini", b"[device]\nname=cpu_0\nclass=core\ntype=Cortex-A53\n[dump]\nfile=mem.bin\naddress=0xFFFFFFFFFFFFFFFFFFFF\nlength=99999999999999999999999\noffset=0xFFFFFFFFFFFFFFFF\n[dump2]\nfile=mem.bin\naddress=0xFFFFFFFFFFFFFFF0\nlength=0x100\n[dump3]\nfile=mem.bin\naddress=0\nlength=0\noffset=0x100\n")),
        ("dump section names", replace("cpu_0.ini", "[device]\nname=cpu_0\ntype=Cortex-A53\n[dum\u{e9}]\nfile=mem.bin\n[d\u{fc}mp]\n[\u{e9}\u{e9}\u{e9}]\n[dump]\nfile=\naddress=0x10\n[DUMP99]\nfile=/nonexistent\n".as_bytes())),
        ("garbage registers", replace("etm_0.ini", b"[device]\nname=ETM_0\ntype=ETM4\n[regs]\nTRCCONFIGR=0xZZ\nTRCTRACEIDR=99999999999999999999\nTRCIDR0=-1\nTRCIDR2=\n(=)\n=\n")),
        ("missing registers", replace("etm_0.ini", b"[device]\nname=ETM_0\ntype=ETM4\n[regs]\n")),
        ("unknown device type", replace("etm_0.ini", b"[device]\nname=ETM_0\ntype=ETM9000\n")),
        ("unknown core", replace("cpu_0.ini", b"[device]\nname=cpu_0\ntype=Banana\n")),
        ("trace id out of range", replace("etm_0.ini", b"[device]\nname=ETM_0\ntype=ETM4\n[regs]\nTRCCONFIGR=0xC1\nTRCTRACEIDR=0x7F\nTRCIDR0=0x28000EA1\nTRCIDR2=0x488\n")),
        ("device list loops", replace("snapshot.ini", b"[device_list]\nd0=snapshot.ini\nd1=cpu_0.ini\nd2=cpu_0.ini\n[trace]\nmetadata=trace.ini\n")),
        ("path escapes", replace("snapshot.ini", b"[device_list]\nd0=../../../../../../etc/hostname\n[trace]\nmetadata=/dev/null\n")),
        ("long lines", replace("snapshot.ini", format!("[{}]\n{}={}\n", "s".repeat(70_000), "k".repeat(70_000), "v".repeat(70_000)).as_bytes())),
    ];
    cases.push(("crlf", good.iter().map(|(n, d)| (n.clone(), if n.ends_with(".ini") { String::from_utf8_lossy(d).replace('\n', "\r\n").into_bytes() } else { d.clone() })).collect()));
    for (i, (name, files)) in cases.iter().enumerate() {
        n += 1;
        if let Err(e) = snapshot_files_scenario(&tmp.join(format!("case{}", i)), files, 1 << 20) {
            failures.push(format!("[{}] {}", name, e));
        }
    }
    // a directory that does not exist, and an empty one
    n += 2;
    if let Err(e) = snapshot_files_scenario(&tmp.join("empty"), &[], 0) {
        failures.push(e);
    }
    assert!(opencsd_c_api::snapshot::Snapshot::read(tmp.join("does/not/exist").to_str().unwrap()).is_err());

    // mutated copies of the synthetic snapshot and, when present, of the
    // real ones
    let mut rng = Rng::new(0x1417);
    for i in 0..scaled(60) {
        let files: Vec<(String, Vec<u8>)> = good
            .iter()
            .map(|(n, d)| if n.ends_with(".ini") { (n.clone(), mutate_ini(&String::from_utf8_lossy(d), &mut rng).into_bytes()) } else { (n.clone(), d.clone()) })
            .collect();
        n += 1;
        if let Err(e) = snapshot_files_scenario(&tmp.join(format!("synth{}", i)), &files, 1 << 20) {
            failures.push(e);
        }
    }
    match shared_dir() {
        None => eprintln!("\n*** SKIPPED: mutated real snapshot ini files: reference snapshots not found (set OCSD_SHARED or place them at ../shared) ***\n"),
        Some(shared) => {
            for (di, dir) in snapshot_dirs(&shared).iter().enumerate() {
                for i in 0..scaled(3) {
                    n += 1;
                    if let Err(e) = mutated_snapshot_files(0xD00D + (di * 16 + i) as u64, dir, &tmp.join(format!("real{}_{}", di, i))) {
                        failures.push(e);
                    }
                }
            }
        }
    }
    // raw bytes as ini text
    for i in 0..scaled(200) {
        let mut r = Rng::new(i as u64);
        let len = r.below(600);
        let mut bytes = r.bytes(len);
        // sprinkle ini syntax
        for _ in 0..r.below(40) {
            if bytes.is_empty() {
                break;
            }
            let at = r.below(bytes.len());
            bytes[at] = *r.pick(b"[]=\n;#(x0123456789ABCDEFdumpregsdevice_tp");
        }
        n += 1;
        if let Err(e) = ini_bytes_scenario(&bytes) {
            failures.push(e);
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    report("malformed_snapshot_files", &failures, started, n);
}

/// Bad parameters get error codes, not panics.
#[test]
fn bad_parameters_are_errors() {
    // deformatter flags
    for flags in [0u32, 0x40, 0xFFFF_FFFF, OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_HAS_FSYNCS, OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_HAS_HSYNCS, OCSD_DFRMTR_PACKED_RAW_OUT] {
        match DecodeTree::new(OCSD_TRC_SRC_FRAME_FORMATTED, flags, Box::new(NullLog)) {
            Err(e) => assert_eq!(e, OCSD_ERR_INVALID_PARAM_VAL, "flags {:#x}", flags),
            Ok(_) => assert!(flags & OCSD_DFRMTR_VALID_MASK != 0 && flags & !OCSD_DFRMTR_VALID_MASK == 0, "flags {:#x} accepted", flags),
        }
    }
    // an unknown source type is a single source, as OpenCSD 1.8.0 takes it
    let mut other = DecodeTree::new(7, 0, Box::new(NullLog)).expect("a single-source tree");
    assert_eq!(other.src_type(), OCSD_TRC_SRC_SINGLE);
    assert_eq!(other.configure_deformatter(OCSD_DFRMTR_FRAME_MEM_ALIGN), OCSD_ERR_DCDT_NO_FORMATTER);
    let mut single = DecodeTree::new(OCSD_TRC_SRC_SINGLE, 0, Box::new(NullLog)).unwrap();
    assert_eq!(single.configure_deformatter(OCSD_DFRMTR_FRAME_MEM_ALIGN), OCSD_ERR_DCDT_NO_FORMATTER);
    let (r, used) = single.data_in(OCSD_OP_DATA, 0, &[0; 16]);
    assert_eq!((r, used), (OCSD_RESP_FATAL_NOT_INIT, 0));
    for op in [OCSD_OP_EOT, OCSD_OP_FLUSH, OCSD_OP_RESET] {
        let (r, used) = single.data_in(op, 0, &[]);
        assert!(used == 0, "op {} consumed {}", op, used);
        let _ = r;
    }
    assert_ne!(single.remove_decoder(0), OCSD_OK);
    assert_ne!(single.remove_decoder(200), OCSD_OK);
    assert!(single.decoder_for_cs_id(0xFF).is_none());
    assert!(single.decoder_mut(0xFF).is_none());
    single.set_id_filter(Some(&[0, 127, 128, 255]));

    // registry: unknown names, wrong config types, bad flags
    let cfg = 5u32;
    assert_eq!(registry::create_builtin("NOPE", &cfg, OCSD_CREATE_FLG_FULL_DECODER).err(), Some(OCSD_ERR_DCDREG_NAME_UNKNOWN));
    for (name, _) in registry::BUILTIN_NAMES {
        let e = registry::create_builtin(name, &cfg, OCSD_CREATE_FLG_FULL_DECODER).err();
        assert!(matches!(e, Some(OCSD_ERR_INVALID_PARAM_TYPE) | Some(OCSD_ERR_NO_PROTOCOL)), "{}: {:?}", name, e);
        let e = registry::create_builtin(name, &cfg, 0).err();
        assert_eq!(e, Some(OCSD_ERR_INVALID_PARAM_VAL), "{} with no create flags", name);
    }

    // decoders on bad trace IDs, twice on the same ID
    let mut rng = Rng::new(3);
    for spec in PROTOCOLS {
        if proto_available(spec, false).is_err() {
            eprintln!("SKIPPED: {}: no decoder yet", spec.dev_type);
            continue;
        }
        let mut tree = DecodeTree::new(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN, Box::new(NullLog)).unwrap();
        // reserved IDs are taken, as by OpenCSD 1.8.0's tree, and cannot
        // be removed
        for id in [0u8, 0x70, 0x7F] {
            let (dev, core) = random_device(spec, id, &mut rng, false);
            let d = make_decoder(&dev, &core, false, &mut NullLog).expect("decoder");
            assert_eq!(tree.add_decoder(d), Ok(id), "{} on reserved ID {:#x}", spec.dev_type, id);
            assert_eq!(tree.remove_decoder(id), OCSD_ERR_INVALID_ID, "{} on reserved ID {:#x}", spec.dev_type, id);
        }
        let (dev, core) = random_device(spec, 0x22, &mut rng, false);
        assert!(tree.add_decoder(make_decoder(&dev, &core, false, &mut NullLog).unwrap()).is_ok());
        assert_eq!(tree.add_decoder(make_decoder(&dev, &core, true, &mut NullLog).unwrap()).err(), Some(OCSD_ERR_ATTACH_TOO_MANY));
        // a full decoder takes no packet sink
        let mut t2 = DecodeTree::new(OCSD_TRC_SRC_SINGLE, 0, Box::new(NullLog)).unwrap();
        t2.add_decoder(make_decoder(&dev, &core, true, &mut NullLog).unwrap()).unwrap();
        let id = t2.element_ids()[0];
        assert_ne!(t2.decoder_mut(id).unwrap().set_sink(None), OCSD_OK);
        // invalid operations
        let (r, _) = t2.data_in(99, 0, &[1]);
        assert!(resp_is_fatal(r));
        let (r, _) = t2.data_in(OCSD_OP_DATA, 0, &[]);
        assert!(resp_is_fatal(r));
    }
}

/// `OCSD_FUZZ_ITERS=N` (default: a handful): N random scenarios, mixing
/// random trace and mutated snapshots, from `OCSD_FUZZ_SEED`.
#[test]
fn long_random() {
    let iters: usize = std::env::var("OCSD_FUZZ_ITERS").ok().and_then(|s| s.parse().ok()).unwrap_or(scaled(400));
    let seed0: u64 = std::env::var("OCSD_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0xA11CE);
    let started = Instant::now();
    let shared = shared_dir();
    let dirs = shared.as_ref().map(|s| snapshot_dirs(s)).unwrap_or_default();
    let donor = shared.as_ref().and_then(|s| std::fs::read(s.join("conformance/snapshots/juno_r1_1/cstrace.bin")).ok()).unwrap_or_default();
    let avail: Vec<(usize, bool)> = PROTOCOLS
        .iter()
        .enumerate()
        .flat_map(|(i, p)| [(i, false), (i, true)].into_iter().filter(move |&(_, f)| proto_available(p, f).is_ok()))
        .collect();
    let flag_sets = deformatter_flag_sets();
    let mut failures = Vec::new();
    let tmp = tmp_dir("long");
    for it in 0..iters {
        let seed = seed0.wrapping_add(it as u64).wrapping_mul(0x9E37_79B9);
        let mut rng = Rng::new(seed);
        let r = match rng.below(8) {
            0..=2 if !avail.is_empty() => {
                let (pi, full) = *rng.pick(&avail);
                let len = rng.range(1, 16384);
                random_scenario(seed, pi, full, None, len)
            }
            3..=4 if !avail.is_empty() => {
                let (pi, full) = *rng.pick(&avail);
                let f = *rng.pick(&flag_sets);
                let len = rng.range(1, 16384);
                random_scenario(seed, pi, full, Some(f), len)
            }
            5 if !dirs.is_empty() => mutated_snapshot_files(seed, &dirs[rng.below(dirs.len())], &tmp),
            6 => {
                let len = rng.below(2000);
                ini_bytes_scenario(&rng.bytes(len))
            }
            _ if !dirs.is_empty() => {
                let dir = dirs[rng.below(dirs.len())].clone();
                let max = rng.range(16, 64 * 1024);
                snapshot_scenario(seed, &dir, max, &donor)
            }
            _ => Ok(()),
        };
        if let Err(e) = r {
            eprintln!("FAIL (iteration {}, seed {}): {}", it, seed, e.lines().next().unwrap_or(""));
            failures.push(e);
            if failures.len() >= 20 {
                break;
            }
        }
        if iters > 100 && it % 1000 == 999 {
            eprintln!("long_random: {} iterations, {} failures, {:.0}s", it + 1, failures.len(), started.elapsed().as_secs_f64());
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    report("long_random", &failures, started, iters);
}

/// Re-run one failing scenario: `OCSD_ROBUST_ONE="random SEED PROTO_INDEX FULL(0/1) DFMT_FLAGS(-1: single) LEN"`
/// or `"snapshot SEED DIR MAX_LEN"` (add `OCSD_ROBUST_VERBOSE=1` to see every data path call and
/// packet, `OCSD_ROBUST_WIDE=1` for 200 lines before a difference instead of 3).
#[test]
fn one_scenario() {
    let Ok(spec) = std::env::var("OCSD_ROBUST_ONE") else { return };
    let w: Vec<&str> = spec.split_whitespace().collect();
    let num = |s: &str| -> u64 { if let Some(h) = s.strip_prefix("0x") { u64::from_str_radix(h, 16).unwrap() } else { s.parse().unwrap() } };
    let r = match w[0] {
        "random" => {
            let flags: i64 = w[4].parse().unwrap();
            random_scenario(num(w[1]), num(w[2]) as usize, w[3] == "1", if flags < 0 { None } else { Some(flags as u32) }, num(w[5]) as usize)
        }
        "snapshot" => {
            let donor = shared_dir().and_then(|s| std::fs::read(s.join("conformance/snapshots/juno_r1_1/cstrace.bin")).ok()).unwrap_or_default();
            snapshot_scenario(num(w[1]), std::path::Path::new(w[2]), num(w[3]) as usize, &donor)
        }
        _ => panic!("unknown scenario kind"),
    };
    if let Err(e) = r {
        panic!("{}", e);
    }
}

/// An error logger and element sink that format everything they get (as
/// the lister does), so the printers see corrupted input too.
struct Formatting {
    text: String,
    count: u64,
}

#[derive(Clone)]
struct SharedFormatting(std::rc::Rc<std::cell::RefCell<Formatting>>);

impl opencsd_c_api::common::ErrorLog for SharedFormatting {
    fn log_error(&mut self, component: &str, err: &opencsd_c_api::common::OcsdError) {
        let mut f = self.0.borrow_mut();
        f.text.clear();
        let s = format!("{} : {}", component, err.error_string());
        f.text.push_str(&s);
        f.count += 1;
    }
    fn log_message(&mut self, component: &str, _: ocsd_err_severity_t, msg: &str) {
        let mut f = self.0.borrow_mut();
        f.text.clear();
        f.text.push_str(component);
        f.text.push_str(msg);
    }
}

impl opencsd_c_api::common::GenElemSink for SharedFormatting {
    fn trace_elem_in(&mut self, _: ocsd_trc_index_t, _: u8, elem: &opencsd_c_api::abi::gen_elem::ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        let mut f = self.0.borrow_mut();
        f.text.clear();
        opencsd_c_api::printers::gen_elem::write_elem_str(elem, &mut f.text);
        f.count += 1;
        OCSD_RESP_CONT
    }
}

/// Decode a whole corrupted buffer as the lister does (1024-byte blocks,
/// stop on a fatal response, end of trace otherwise). Errors: a panic.
fn decode_corrupted(seed: u64, dir: &std::path::Path) -> Result<u64, String> {
    use opencsd_c_api::snapshot::{to_tree, Snapshot};
    let mut rng = Rng::new(seed);
    let dir_s = dir.to_string_lossy().to_string();
    let Ok(snap) = Snapshot::read(&dir_s) else { return Ok(0) };
    let Some(buf) = snap.buffers.first().cloned() else { return Ok(0) };
    let Ok(mut data) = std::fs::read(snap.path_of(&buf.file)) else { return Ok(0) };
    // large buffers: a window, so that the run stays short
    if data.len() > 96 * 1024 {
        let start = rng.below(data.len() - 96 * 1024) & !15;
        data = data[start..start + 96 * 1024].to_vec();
    }
    corrupt_sparsely(&mut data, &mut rng);
    let full = !rng.chance(1, 4);
    let label = format!("corrupted {} seed={:#x} full={} len={}", dir_s, seed, full, data.len());
    no_panic(&label, || {
        let f = SharedFormatting(std::rc::Rc::new(std::cell::RefCell::new(Formatting { text: String::new(), count: 0 })));
        let Some(built) = to_tree::create_tree(&snap, &buf.name, !full, 0, Box::new(f.clone())) else { return Ok(0) };
        let mut tree = built.tree;
        tree.set_elem_sink(Some(Box::new(f.clone())));
        let mut index = 0u32;
        let mut resp = OCSD_RESP_CONT;
        'blocks: for block in data.chunks(1024) {
            let mut done = 0;
            while done < block.len() {
                let (r, used) = tree.data_in(OCSD_OP_DATA, index, &block[done..]);
                if used > block.len() - done {
                    return Err(format!("{label}: used {used} of {} bytes", block.len() - done));
                }
                done += used;
                index = index.wrapping_add(used as u32);
                resp = r;
                if resp_is_fatal(r) {
                    break 'blocks;
                }
                if used == 0 && resp_is_cont(r) {
                    return Err(format!("{label}: no progress at index {index}"));
                }
            }
        }
        if !resp_is_fatal(resp) {
            tree.data_in(OCSD_OP_EOT, 0, &[]);
        }
        let n = f.0.borrow().count;
        Ok(n)
    })
}

/// Many seeded corruptions (flips, insertions, deletions) of every shared
/// snapshot's trace, decoded end to end: no panic, no hang, every block
/// accounted for. Each scenario runs on a watchdog thread.
#[test]
fn corrupted_snapshots_decode_safely() {
    let Some(shared) = shared_or_skip() else { return };
    let started = Instant::now();
    let dirs: Vec<PathBuf> = snapshot_dirs(&shared).into_iter().filter(|d| !d.to_string_lossy().contains("snapshots-corrupt")).collect();
    assert!(!dirs.is_empty(), "no snapshots under {}", shared.display());
    let per_dir = scaled(40);
    let (tx, rx) = std::sync::mpsc::channel();
    let worker_dirs = dirs.clone();
    std::thread::spawn(move || {
        for (di, dir) in worker_dirs.iter().enumerate() {
            for i in 0..per_dir {
                let seed = 0xBAD_0000 + (di as u64) * 0x100 + i as u64;
                let t = Instant::now();
                let r = decode_corrupted(seed, dir);
                if tx.send((r, t.elapsed())).is_err() {
                    return;
                }
            }
        }
    });
    let mut failures = Vec::new();
    let mut n = 0;
    let mut elems = 0u64;
    for _ in 0..dirs.len() * per_dir {
        // a scenario that takes this long is hung
        match rx.recv_timeout(std::time::Duration::from_secs(60)) {
            Ok((Ok(c), took)) => {
                elems += c;
                if took.as_secs() > 20 {
                    failures.push(format!("scenario {n} took {:?}", took));
                }
            }
            Ok((Err(e), _)) => failures.push(e),
            Err(_) => {
                failures.push(format!("scenario {n} did not finish within 60 s (hang?)"));
                break;
            }
        }
        n += 1;
    }
    eprintln!("corrupted_snapshots_decode_safely: {} elements/errors formatted", elems);
    report("corrupted_snapshots_decode_safely", &failures, started, n);
}

/// `v` written little-endian over the bytes of `d` from `at` (those past
/// its end left out).
fn put_u64(d: &mut [u8], at: usize, v: u64) {
    for (x, b) in d.iter_mut().skip(at).zip(v.to_le_bytes()) {
        *x = b;
    }
}

/// One seeded corruption of a perf.data recording: mostly bytes changed in
/// place (flipped bits, fields overwritten with 0, all ones or a random
/// value), so that the records stay where they were and the reader gets
/// past the header into the AUX trace and the decode; sometimes bytes cut
/// out, inserted, repeated or the file cut short.
fn mutate_perf_data(rng: &mut Rng, data: &[u8]) -> Vec<u8> {
    let mut d = data.to_vec();
    let in_place = rng.chance(7, 10);
    for _ in 0..rng.range(1, 8) {
        if d.is_empty() {
            break;
        }
        let i = rng.below(d.len());
        match if in_place { rng.below(3) } else { rng.below(7) } {
            0 => d[i] ^= 1 << rng.below(8),
            1 => {
                let any = rng.u8();
                d[i] = *rng.pick(&[0u8, 0xff, 0x7f, 0x80, any]);
            }
            2 => {
                let rest = (d.len() - i) as u64;
                let (any, small) = (rng.next_u64(), rng.next_u64() & 0xffff);
                let v = *rng.pick(&[0, u64::MAX, 1 << 63, any, small, rest, 0x7fff_ffff]);
                put_u64(&mut d, i, v);
            }
            3 => {
                let end = (i + rng.range(1, 64)).min(d.len());
                d.drain(i..end);
            }
            4 => {
                let n = rng.range(1, 64);
                let ins = rng.bytes(n);
                d.splice(i..i, ins);
            }
            5 => d.truncate(i),
            _ => {
                let j = rng.below(d.len());
                let piece = d[j..(j + rng.range(1, 256)).min(d.len())].to_vec();
                d.splice(i..i, piece);
            }
        }
    }
    d
}

/// Run `ocsd` with `args`, killed after `limit`: (exit status, stdout,
/// stderr), None for a run that had to be killed.
fn run_ocsd_with_limit(args: &[&std::ffi::OsStr], limit: std::time::Duration) -> Option<(Option<i32>, Vec<u8>, String)> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_ocsd")).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start ocsd");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut o = Vec::new();
        let _ = out.read_to_end(&mut o);
        o
    });
    let err_reader = std::thread::spawn(move || {
        let mut e = Vec::new();
        let _ = err.read_to_end(&mut e);
        e
    });
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for ocsd") {
            break Some(s);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    let o = reader.join().unwrap_or_default();
    let e = err_reader.join().unwrap_or_default();
    status.map(|s| (s.code(), o, String::from_utf8_lossy(&e).into_owned()))
}

/// Seeded corruptions of every shared perf.data recording given to
/// `ocsd perf` as a user gives a bad file, with each of its outputs: it
/// decodes what it can (exit status 0) or stops with one line on standard
/// error and exit status 2, never a panic, a signal or a hang; and where
/// it decodes, two decode threads print what one prints.
#[test]
fn perf_recordings_mutated() {
    let Some(shared) = shared_or_skip() else { return };
    let started = Instant::now();
    let mut recordings: Vec<PathBuf> = std::fs::read_dir(shared.join("perf"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.to_string_lossy().ends_with(".perf.data")).collect())
        .unwrap_or_default();
    recordings.sort();
    assert!(!recordings.is_empty(), "no perf.data recordings under {}", shared.join("perf").display());
    let tmp = tmp_dir("perf_mutated");
    std::fs::create_dir_all(&tmp).expect("temporary folder");
    let input = tmp.join("in.perf.data");
    let out_file = tmp.join("out");
    let modes: [&[&str]; 9] = [
        &[],
        &["--dump"],
        &["--dump", "--dump-text", "1.8"],
        &["--branches"],
        &["--functions"],
        &["--blocks", "whole"],
        &["--blocks", "aux"],
        &["--autofdo"],
        &["--folded"],
    ];
    let per_recording = scaled(250);
    let (mut failures, mut decoded, mut refused) = (Vec::new(), 0, 0);
    for (ri, rec) in recordings.iter().enumerate() {
        let data = std::fs::read(rec).expect("read recording");
        for i in 0..per_recording {
            let seed = 0x9E2F_0000 + (ri as u64) * 0x1000 + i as u64;
            let mut rng = Rng::new(seed);
            let d = mutate_perf_data(&mut rng, &data);
            std::fs::write(&input, &d).expect("write mutated recording");
            let mode = modes[rng.below(modes.len())];
            let mut args: Vec<&std::ffi::OsStr> = vec!["perf".as_ref()];
            args.extend(mode.iter().map(|s| std::ffi::OsStr::new(*s)));
            if matches!(mode.last(), Some(&"--autofdo") | Some(&"--folded")) {
                args.push(out_file.as_os_str());
            }
            args.push(input.as_os_str());
            let what = format!("{} mutated (seed {:#x}), ocsd {}", rec.display(), seed, mode.join(" "));
            let Some((code, stdout, stderr)) = run_ocsd_with_limit(&args, std::time::Duration::from_secs(60)) else {
                failures.push(format!("{what}: no end within 60 s"));
                continue;
            };
            match code {
                Some(0) => decoded += 1,
                Some(2) if stderr.lines().count() == 1 && stderr.starts_with("ocsd perf: ") => refused += 1,
                _ => {
                    failures.push(format!("{what}: exit status {:?}, standard error:\n{}", code, stderr));
                    continue;
                }
            }
            if mode.is_empty() && code == Some(0) && rng.chance(1, 3) {
                let threads = |n: &'static str| {
                    let mut a: Vec<&std::ffi::OsStr> = vec!["perf".as_ref(), "--threads".as_ref(), n.as_ref()];
                    a.push(input.as_os_str());
                    run_ocsd_with_limit(&a, std::time::Duration::from_secs(60))
                };
                let (one, two) = (threads("1"), threads("2"));
                if one.as_ref().map(|r| (r.0, &r.1)) != two.as_ref().map(|r| (r.0, &r.1)) || one.as_ref().map(|r| &r.1) != Some(&stdout) {
                    failures.push(format!("{what}: --threads 1, --threads 2 and the default print different things"));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    eprintln!("perf_recordings_mutated: {decoded} decoded, {refused} refused with one line");
    assert!(decoded > 0 && refused > 0, "the mutations should give both decodable and refused recordings");
    report("perf_recordings_mutated", &failures, started, recordings.len() * per_recording);
}

/// Seeded corruptions of the ELF files of test-file-mem-offsets (mostly in
/// the ELF header and the program and section header tables), each given
/// with the snapshot's raw trace to `ocsd decode --elf` with one of its
/// outputs (elements, Tarmac, functions, lcov, AutoFDO, which read the
/// segments, symbols, notes and DWARF): exit 0, or 2 with a message,
/// never a panic, a signal or a hang.
#[test]
fn elf_files_mutated() {
    let Some(shared) = shared_or_skip() else { return };
    let started = Instant::now();
    let s = shared.join("conformance/snapshots/test-file-mem-offsets");
    let tmp = tmp_dir("elf_mutated");
    std::fs::create_dir_all(&tmp).expect("temporary folder");
    let cfg = tmp.join("etm.toml");
    std::fs::write(
        &cfg,
        "format = \"formatted\"\n[[source]]\nprotocol = \"etmv4\"\ncore = \"Cortex-A53\"\n[source.registers]\n\
         TRCCONFIGR = 0\nTRCTRACEIDR = 0x16\nTRCIDR0 = 0x28000EA1\nTRCIDR1 = 0x4100F400\nTRCIDR2 = 0x00000488\n",
    )
    .expect("write configuration");
    let trace = s.join("trace.bin");
    let elfs = [("uname.bin", ""), ("vdso.bin", "@0x7f8e5ba000"), ("ld-2.21.bin", "@0x7f8e58f000")];
    let input = tmp.join("x.elf");
    let out = tmp.join("out");
    let outputs: [&[&str]; 5] = [&[], &["--format", "tarmac"], &["--functions"], &["--lcov"], &["--autofdo"]];
    let per_file = scaled(200);
    let (mut failures, mut decoded, mut refused) = (Vec::new(), 0, 0);
    for (fi, (name, at)) in elfs.iter().enumerate() {
        let data = std::fs::read(s.join(name)).expect("read ELF");
        let u64_at = |o: usize| u64::from_le_bytes(data[o..o + 8].try_into().unwrap()) as usize;
        let (phoff, shoff) = (u64_at(0x20), u64_at(0x28));
        for i in 0..per_file {
            let seed = 0xE1F_0000 + (fi as u64) * 0x1000 + i as u64;
            let mut rng = Rng::new(seed);
            let mut d = data.clone();
            for _ in 0..rng.range(1, 6) {
                let at = match rng.below(4) {
                    0 => rng.below(64),
                    1 => phoff + rng.below(56 * 10),
                    2 => shoff + rng.below(64 * 30),
                    _ => rng.below(d.len()),
                }
                .min(d.len() - 1);
                match rng.below(4) {
                    0 => d[at] ^= 1 << rng.below(8),
                    1 => {
                        let any = rng.u8();
                        d[at] = *rng.pick(&[0, 0xff, 0x7f, 0x80, any]);
                    }
                    2 => {
                        let (any, len) = (rng.next_u64(), d.len() as u64);
                        let v = *rng.pick(&[0, u64::MAX, 1 << 63, any, any & 0xffff_ffff, len, len - 8]);
                        put_u64(&mut d, at, v);
                    }
                    _ => d.truncate(at.max(1)),
                }
            }
            std::fs::write(&input, &d).expect("write mutated ELF");
            let mode = outputs[rng.below(outputs.len())];
            let elf_arg = format!("{}{}", input.display(), at);
            let mut args: Vec<&std::ffi::OsStr> = ["decode", "--trace"].iter().map(std::ffi::OsStr::new).collect();
            args.extend([trace.as_os_str(), "--config".as_ref(), cfg.as_os_str(), "--elf".as_ref(), elf_arg.as_ref(), "-o".as_ref(), out.as_os_str()]);
            args.extend(mode.iter().map(std::ffi::OsStr::new));
            if matches!(mode, [_] if mode[0] == "--lcov" || mode[0] == "--autofdo") {
                args.push(out.as_os_str());
            }
            let what = format!("{name} mutated (seed {seed:#x}), ocsd decode {}", mode.join(" "));
            match run_ocsd_with_limit(&args, std::time::Duration::from_secs(60)) {
                None => failures.push(format!("{what}: no end within 60 s")),
                Some((Some(0), _, _)) => decoded += 1,
                Some((Some(2), _, e)) if e.contains("ocsd decode: ") && !e.contains("panicked") => refused += 1,
                Some((code, _, e)) => failures.push(format!("{what}: exit status {code:?}, standard error:\n{e}")),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    eprintln!("elf_files_mutated: {decoded} decoded, {refused} refused");
    assert!(decoded > 0 && refused > 0, "the mutations should give both usable and refused ELF files");
    report("elf_files_mutated", &failures, started, elfs.len() * per_file);
}
