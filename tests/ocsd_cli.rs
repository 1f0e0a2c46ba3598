//! The `ocsd` command as a user runs it: the built binary, on the shared
//! reference data (`$OCSD_SHARED` or `../shared`) and on small files made
//! here. Tests that need the shared data say so loudly when it is absent.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::*;


fn shared_or_skip() -> Option<PathBuf> {
    let s = shared_dir();
    if s.is_none() {
        eprintln!("\n*** SKIPPED: OpenCSD reference data not found (set OCSD_SHARED or place it at ../shared) ***\n");
    }
    s
}

use common::ocsd;

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 output")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// The element lines of `trc_pkt_lister -decode_only` (its log also holds
/// error messages, which end without a newline before the next line).
fn lister_elements(snap: &Path) -> String {
    lister_elements_with(snap, &[])
}

/// As [`lister_elements`], with more lister options.
fn lister_elements_with(snap: &Path, more: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_trc_pkt_lister"))
        .args(["-ss_dir", snap.to_str().unwrap(), "-decode_only", "-logstdout", "-no_time_print"])
        .args(more)
        .output()
        .expect("run trc_pkt_lister");
    let text = String::from_utf8_lossy(&o.stdout);
    let mut out = String::new();
    for l in text.lines() {
        if let Some(p) = l.find("Idx:") {
            out.push_str(&l[p..]);
            out.push('\n');
        }
    }
    out
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ocsd-cli-{}-{}", std::process::id(), name));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn snapshot_text_equals_trc_pkt_lister_elements() {
    let Some(shared) = shared_or_skip() else { return };
    // ETMv4 (formatted, several IDs), ETMv3 + PTM + ITM, ETE single source, STM, ETMv4 M-profile
    for snap in [
        "snapshots/juno_r1_1",
        "snapshots/TC2",
        "snapshots-ete/002-ack_test_scr",
        "snapshots/stm_only",
        "snapshots/armv8_1m_branches",
        "snapshots/test-file-mem-offsets",
    ] {
        let dir = shared.join("conformance").join(snap);
        let want = lister_elements(&dir);
        let o = ocsd(&["decode", "--snapshot", dir.to_str().unwrap()]);
        assert!(o.status.success(), "{snap}: {}", stderr(&o));
        let got = stdout(&o);
        assert!(want.lines().count() > 10, "{snap}: lister printed too little");
        assert_eq!(got, want, "{snap}");
    }
}

/// A DSTREAM probe's capture (a55-test-tpiu: TPIU frames, an 8-byte footer
/// after every 504 bytes): with --dstream, from the snapshot, on two
/// threads, and as raw trace with `format = "dstream"`, the elements of
/// `trc_pkt_lister -dstream_format`; without, the decode stops at the
/// first footer and the error says what may be missing.
#[test]
fn dstream_capture_decodes_as_the_lister_with_dstream_format() {
    let Some(shared) = shared_or_skip() else { return };
    let s = shared.join("conformance/snapshots/a55-test-tpiu");
    let dir = s.to_str().unwrap();
    let want = lister_elements_with(&s, &["-dstream_format"]);
    assert!(want.lines().count() > 20 && want.contains("OCSD_GEN_TRC_ELEM_PE_CONTEXT"), "{want}");
    for extra in [&[][..], &["--jobs", "2"][..], &["--format", "text", "--verbose"][..]] {
        let mut args = vec!["decode", "--snapshot", dir, "--dstream"];
        args.extend(extra);
        let o = ocsd(&args);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        assert_eq!(stdout(&o), want, "{extra:?}");
    }
    let o = ocsd(&["decode", "--snapshot", dir]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("dstream_coresight") && stderr(&o).contains("--dstream drops its block footers"), "{}", stderr(&o));
    // the same trace file and registers without the snapshot
    let d = tmp("dstream");
    let cfg = d.join("a55.toml");
    std::fs::write(
        &cfg,
        "format = \"dstream\"\n[[source]]\nprotocol = \"etmv4\"\ncore = \"Cortex-A55\"\n[source.registers]\n\
         TRCCONFIGR = 0x1\nTRCTRACEIDR = 0x1\nTRCIDR0 = 0x08000CA1\nTRCIDR1 = 0x4200F410\nTRCIDR2 = 0x20001088\n",
    )
    .unwrap();
    let trace = s.join("DSTREAM_0.bin");
    let o = ocsd(&["decode", "--trace", trace.to_str().unwrap(), "--config", cfg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), want);
    let _ = std::fs::remove_dir_all(&d);
}

/// test-file-mem-offsets' ETM registers, as a user would copy them from
/// the device (the snapshot has them in device_9.ini).
const ETM_TOML: &str = "\
# ETMv4 on a Cortex-A53, in a CoreSight formatted ETB dump
format = \"formatted\"

[[source]]
protocol = \"etmv4\"
core = \"Cortex-A53\"
[source.registers]
TRCCONFIGR  = 0x00000000
TRCTRACEIDR = 0x00000016
TRCIDR0     = 0x28000EA1
TRCIDR1     = 0x4100F400
TRCIDR2     = 0x00000488
";

#[test]
fn raw_trace_config_and_elfs_decode_as_the_snapshot() {
    let Some(shared) = shared_or_skip() else { return };
    let s = shared.join("conformance/snapshots/test-file-mem-offsets");
    let d = tmp("elf");
    let mut args = vec!["decode".to_string()];
    args.extend(file_mem_offsets_raw(&s, &d));
    let o = ocsd(&args.iter().map(|a| a.as_str()).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let want = lister_elements(&s);
    assert_eq!(stdout(&o), want);
    assert!(want.contains("OCSD_GEN_TRC_ELEM_INSTR_RANGE"));
}

/// test-file-mem-offsets as raw trace (snapshot folder `s`): the
/// arguments naming the trace, its configuration (written into `d`) and
/// the four ELF files at the addresses the snapshot maps them.
fn file_mem_offsets_raw(s: &Path, d: &Path) -> Vec<String> {
    let cfg = d.join("etm.toml");
    std::fs::write(&cfg, ETM_TOML).unwrap();
    let p = |f: &str| s.join(f).to_str().unwrap().to_string();
    vec![
        "--trace".to_string(),
        p("trace.bin"),
        "--config".into(),
        cfg.to_str().unwrap().into(),
        "--elf".into(),
        p("uname.bin"),
        "--elf".into(),
        format!("{}@0x7f8e446000", p("libc-2.21.bin")),
        "--elf".into(),
        format!("{}@0x7f8e58f000", p("ld-2.21.bin")),
        "--elf".into(),
        format!("{}@0x7f8e5ba000", p("vdso.bin")),
    ]
}

/// 002-ack_test_scr as a raw ETE byte stream: (config file, arguments
/// naming the trace and the memory dumps).
fn ack_test_scr_raw(s: &Path, d: &Path) -> Vec<String> {
    let cfg = d.join("ete.toml");
    std::fs::write(
        &cfg,
        "format = \"single\"\n[[source]]\nprotocol = \"ete\"\ncore = \"Cortex-A53\"\n[source.registers]\n\
         TRCCONFIGR=0x1\nTRCTRACEIDR=0x2\nTRCDEVARCH=0x47705a13\nTRCIDR0=0x8000aa1\nTRCIDR1=0x4100fff0\nTRCIDR2=0xc0001088\nTRCIDR8=0x0\n",
    )
    .unwrap();
    let mut args: Vec<String> = ["--trace", s.join("session1.bin").to_str().unwrap(), "--config", cfg.to_str().unwrap()]
        .iter()
        .map(|a| a.to_string())
        .collect();
    for (f, a) in [
        ("OTHERS_exec", 0x10000),
        ("code_9_0_exec", 0x1000000),
        ("VAL_NON_DET_CODE_exec", 0x90000),
        ("code_a_1_exec", 0x1000090),
        ("code_b_0_exec", 0x10000ac),
        ("checkpoint_c_0_exec", 0x2f00000),
    ] {
        args.push("--dump".into());
        args.push(format!("{}@0x{a:x}", s.join("bindir").join(f).display()));
    }
    args
}

fn run_with(cmd: &str, args: &[String], more: &[&str]) -> Output {
    let mut argv: Vec<&str> = vec![cmd];
    argv.extend(args.iter().map(String::as_str));
    argv.extend_from_slice(more);
    ocsd(&argv)
}

#[test]
fn raw_single_source_trace_with_dumps_decodes_as_the_snapshot() {
    let Some(shared) = shared_or_skip() else { return };
    let s = shared.join("conformance/snapshots-ete/002-ack_test_scr");
    let args = ack_test_scr_raw(&s, &tmp("ete"));
    let o = run_with("decode", &args, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), lister_elements(&s));
}

#[test]
fn compare_with_the_models_tarmac() {
    let Some(shared) = shared_or_skip() else { return };
    let s = shared.join("conformance/snapshots-ete/002-ack_test_scr");
    let reference = s.join("test_TARMAC");
    let r = reference.to_str().unwrap();
    // from the snapshot, and from the raw trace + registers + dumps
    let o = ocsd(&["compare", "--snapshot", s.to_str().unwrap(), "--reference", r]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "5146 instructions in 8 segments match\n");
    let args = ack_test_scr_raw(&s, &tmp("cmp"));
    let o = run_with("compare", &args, &["--reference", r]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "5146 instructions in 8 segments match\n");
    // another run's trace does not match: exit 1 and the first divergence
    let other = shared.join("conformance/snapshots/juno_r1_1");
    let o = ocsd(&["compare", "--snapshot", other.to_str().unwrap(), "--reference", r]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("divergence after"), "{}", stdout(&o));
    // a reference that is not one: exit 2, one line
    let o = ocsd(&["compare", "--snapshot", s.to_str().unwrap(), "--reference", s.join("session1.bin").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).trim_end().lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn tarmac_output() {
    let Some(shared) = shared_or_skip() else { return };
    let s = shared.join("conformance/snapshots-ete/002-ack_test_scr");
    let o = ocsd(&["decode", "--snapshot", s.to_str().unwrap(), "--format", "tarmac"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    // executed (IT) and condition-failed (IS) instruction lines
    let it: Vec<&str> = t.lines().filter(|l| l.contains(" IT (") || l.contains(" IS (")).collect();
    assert_eq!(it.len(), 5146);
    assert!(t.lines().filter(|l| l.contains(" IT (")).count() > 4000);
    assert!(it[0].starts_with("1 clk IT (1) 000a10c8 d65f03c0 O EL1h_n : ret"), "{}", it[0]);
    // after each executed branch with link: the link register write
    let lr: Vec<&str> = t.lines().filter(|l| l.contains(" R X30 ")).collect();
    assert!(!lr.is_empty());
    let o = ocsd(&["decode", "--snapshot", s.to_str().unwrap(), "--format", "tarmac", "--no-disasm"]);
    let t2 = stdout(&o);
    assert!(t2.lines().filter(|l| l.contains(" IT (") || l.contains(" IS (")).all(|l| l.ends_with(':')));
    assert_eq!(t2.lines().count(), t.lines().count());
}

#[test]
fn json_lines_parse_and_match_the_text() {
    let Some(shared) = shared_or_skip() else { return };
    let dir = shared.join("conformance/snapshots/juno_r1_1");
    let text = stdout(&ocsd(&["decode", "--snapshot", dir.to_str().unwrap()]));
    let d = tmp("json");
    let out = d.join("out.jsonl");
    let o = ocsd(&["decode", "--snapshot", dir.to_str().unwrap(), "--format", "json", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let json = std::fs::read_to_string(&out).unwrap();
    assert_eq!(json.lines().count(), text.lines().count());
    let mut ranges = 0;
    for (j, t) in json.lines().zip(text.lines()) {
        let v: serde_json::Value = serde_json::from_str(j).expect("valid JSON");
        let idx = v["index"].as_u64().unwrap();
        let id = v["trace_id"].as_u64().unwrap();
        assert!(t.starts_with(&format!("Idx:{idx}; ID:{id:x}; ")), "{j} / {t}");
        let ty = v["type"].as_str().unwrap();
        if ty == "instr_range" {
            ranges += 1;
            let start = u64::from_str_radix(v["start"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
            assert!(t.contains(&format!("exec range=0x{start:x}:")), "{t}");
            assert!(v["instr_count"].as_u64().unwrap() > 0);
        }
    }
    assert!(ranges > 100);
}

#[test]
fn stats_summary_on_stderr() {
    let Some(shared) = shared_or_skip() else { return };
    let dir = shared.join("conformance/snapshots/juno_r1_1");
    let o = ocsd(&["decode", "--snapshot", dir.to_str().unwrap(), "--stats"]);
    assert!(o.status.success());
    let e = stderr(&o);
    for k in ["trace bytes:", "packets:", "elements:", "INSTR_RANGE", "instructions:", "errors:", "MB/s"] {
        assert!(e.contains(k), "{k} missing in {e}");
    }
    let n: u64 = e.lines().find(|l| l.starts_with("elements:")).unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_eq!(n as usize, stdout(&o).lines().count());
}

/// Bad input: exit status 2 and one line on stderr naming the file.
fn bad(args: &[&str], want: &[&str]) {
    let o = ocsd(args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
    for w in want {
        assert!(e.contains(w), "{args:?}: `{w}` not in {e}");
    }
}

/// Trace that stops the decoder (an ITM stream whose zeros end in no
/// ASYNC): exit status 2 whatever is made of the elements, with the
/// output written up to there.
#[test]
fn a_decode_stopped_by_bad_trace_exits_2_in_every_output() {
    let d = tmp("stopped");
    std::fs::write(d.join("itm.toml"), "format = \"single\"\n[[source]]\nprotocol = \"itm\"\n[source.registers]\nITMTCR = 0x00010001\n").unwrap();
    std::fs::write(d.join("itm.bin"), [0, 0, 0, 0, 0, 0x80, 0x01, 0x00, 0, 0, 0x84, 0x30, 0x1e, 0x0f]).unwrap();
    let (t, c, out) = (d.join("itm.bin"), d.join("itm.toml"), d.join("out"));
    let base = ["decode", "--trace", t.to_str().unwrap(), "--config", c.to_str().unwrap()];
    let outputs: [&[&str]; 6] = [&[], &["--format", "json"], &["--jobs", "2"], &["--functions"], &["--folded", out.to_str().unwrap()], &["--autofdo", out.to_str().unwrap()]];
    for extra in outputs {
        let o = ocsd(&[&base[..], extra].concat());
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("decode stopped at trace byte 11"), "{extra:?}: {}", stderr(&o));
        if extra.is_empty() {
            assert!(stdout(&o).contains("ITM_SWIT (ch: 0x0; Data: 0x00)"), "{}", stdout(&o));
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_inputs_exit_2_with_one_line() {
    let d = tmp("bad");
    let p = |f: &str| d.join(f).to_str().unwrap().to_string();
    std::fs::write(d.join("good.toml"), ETM_TOML).unwrap();
    std::fs::write(d.join("noise.bin"), (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect::<Vec<u8>>()).unwrap();
    std::fs::write(d.join("zeros.bin"), vec![0u8; 4096]).unwrap();
    std::fs::write(d.join("proto.toml"), "[[source]]\nprotocol = \"etm9\"\n").unwrap();
    std::fs::write(d.join("regs.toml"), "[[source]]\nprotocol = \"etmv4\"\ncore = \"Cortex-A53\"\n[source.registers]\nTRCIDR0 = 0x28000EA1\n").unwrap();
    std::fs::write(d.join("id.toml"), ETM_TOML.replace("0x00000016", "0x0000007f")).unwrap();
    std::fs::write(d.join("notelf.bin"), b"just some bytes, not an ELF file").unwrap();
    let mut elf = vec![0x7f, b'E', b'L', b'F', 2, 1, 1];
    elf.resize(40, 0);
    std::fs::write(d.join("short.elf"), &elf).unwrap();

    bad(&["decode", "--trace", &p("missing.bin"), "--config", &p("good.toml")], &["missing.bin"]);
    bad(&["decode", "--trace", &p("noise.bin"), "--config", &p("missing.toml")], &["missing.toml"]);
    bad(&["decode", "--trace", &p("noise.bin"), "--config", &p("proto.toml")], &["proto.toml", "etm9"]);
    bad(&["decode", "--trace", &p("noise.bin"), "--config", &p("regs.toml")], &["regs.toml", "TRCIDR2"]);
    bad(&["decode", "--trace", &p("noise.bin"), "--config", &p("id.toml")], &["id.toml", "0x7f"]);
    bad(&["decode", "--trace", &p("zeros.bin"), "--config", &p("good.toml")], &["zeros.bin", "no trace synchronisation"]);
    // noise: no synchronisation, or (as in OpenCSD) a fatal data path error
    // when a garbage frame hands the source an empty block
    bad(&["decode", "--trace", &p("noise.bin"), "--config", &p("good.toml")], &["noise.bin"]);
    bad(&["decode", "--trace", &p("noise.bin"), "--config", &p("good.toml"), "--elf", &p("notelf.bin")], &["notelf.bin", "not an ELF"]);
    bad(&["decode", "--trace", &p("noise.bin"), "--config", &p("good.toml"), "--elf", &p("short.elf")], &["short.elf"]);
    bad(&["decode", "--trace", &p("noise.bin"), "--config", &p("good.toml"), "--dump", &p("notelf.bin")], &["FILE@ADDR"]);
    bad(&["decode", "--snapshot", &p("nowhere")], &["nowhere"]);
    bad(&["decode", "--snapshot", d.to_str().unwrap()], &["snapshot.ini"]);
    // usage errors (clap) also exit 2
    assert_eq!(ocsd(&["decode"]).status.code(), Some(2));
    assert_eq!(ocsd(&["decode", "--snapshot", "x", "--format", "xml"]).status.code(), Some(2));
    assert_eq!(ocsd(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn help_and_version() {
    let o = ocsd(&["--help"]);
    assert!(o.status.success());
    let h = stdout(&o);
    for c in ["decode", "compare", "perf"] {
        assert!(h.contains(c), "{h}");
    }
    let o = ocsd(&["decode", "--help"]);
    for opt in ["--snapshot", "--trace", "--config", "--elf", "--dump", "--format", "--output", "--stats"] {
        assert!(stdout(&o).contains(opt), "{opt}");
    }
    assert!(stdout(&ocsd(&["--version"])).starts_with("ocsd "));
}

/// Executed instructions in the `num_i(N)` of the INSTR_RANGE lines of a
/// text decode.
fn range_instructions(text: &str) -> u64 {
    text.lines()
        .filter(|l| l.contains("OCSD_GEN_TRC_ELEM_INSTR_RANGE"))
        .filter_map(|l| l.split("num_i(").nth(1)?.split(')').next()?.parse::<u64>().ok())
        .sum()
}

/// The instruction column of `--functions` (after its heading).
fn function_instructions(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((f.get(3)?.to_string(), f.first()?.parse().ok()?))
        })
        .collect()
}

/// Profiles without a recording: `ocsd decode` with `--functions`,
/// `--folded`, `--flamegraph` and `--lcov`, from raw trace with ELF files
/// (symbols) and from snapshots (memory dumps, counted by file): every
/// instruction of the decode is counted once, in the table and in the
/// folded stacks.
#[test]
fn profiles_from_elf_files_and_snapshots() {
    let Some(shared) = shared_or_skip() else { return };
    let s = shared.join("conformance/snapshots/test-file-mem-offsets");
    let d = tmp("profiles");
    let input = file_mem_offsets_raw(&s, &d);
    let args = |extra: &[&str]| -> Vec<String> {
        let mut v = vec!["decode".to_string()];
        v.extend(input.iter().cloned());
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let run = |a: Vec<String>| Command::new(env!("CARGO_BIN_EXE_ocsd")).args(&a).output().unwrap();
    let text = run(args(&[]));
    assert!(text.status.success(), "{}", stderr(&text));
    let total = range_instructions(&stdout(&text));
    assert!(total > 1000, "{total}");
    let (folded, svg, info) = (d.join("f.folded"), d.join("f.svg"), d.join("f.info"));
    let o = run(args(&["--functions", "--folded", folded.to_str().unwrap(), "--flamegraph", svg.to_str().unwrap(), "--lcov", info.to_str().unwrap()]));
    assert!(o.status.success(), "{}", stderr(&o));
    let funcs = function_instructions(&stdout(&o));
    assert_eq!(funcs.iter().map(|f| f.1).sum::<u64>(), total, "the table counts every instruction once");
    // the dynamic loader's own symbols name its functions
    assert!(funcs.iter().any(|f| f.0 == "malloc"), "{funcs:?}");
    let folded_total: u64 = std::fs::read_to_string(&folded).unwrap().lines().filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok()).sum();
    assert_eq!(folded_total, total, "the folded stacks count every instruction once");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    assert!(std::fs::read_to_string(&info).unwrap().starts_with("TN:"));
    // AutoFDO (the same decode): every range counted once, per ELF file
    let afdo = d.join("f.afdo");
    let o = run(args(&["--autofdo", afdo.to_str().unwrap(), "--functions"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let ranges: u64 = stdout(&o).lines().skip(1).filter_map(|l| l.split_whitespace().nth(2)?.parse::<u64>().ok()).sum();
    let text = std::fs::read_to_string(&afdo).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with("// Please split"));
    let mut counted = 0u64;
    let mut binaries = 0;
    while let Some(n) = lines.next() {
        if n.is_empty() {
            continue;
        }
        let n: usize = n.parse().unwrap_or_else(|_| panic!("range count, got {n:?}"));
        for _ in 0..n {
            let l = lines.next().unwrap();
            assert!(l.contains('-') && l.contains(':'), "{l}");
            counted += l.rsplit(':').next().unwrap().parse::<u64>().unwrap();
        }
        assert_eq!(lines.next(), Some("0"));
        let b: usize = lines.next().unwrap().parse().unwrap();
        for _ in 0..b {
            assert!(lines.next().unwrap().contains("->"));
        }
        assert!(lines.next().unwrap().starts_with("// build_id: 0x"));
        assert!(lines.next().unwrap().starts_with("// "));
        binaries += 1;
    }
    assert!(binaries >= 1);
    assert_eq!(counted, ranges, "AutoFDO counts every range once");

    // a snapshot: its memory dumps by file name
    let snap = shared.join("conformance/snapshots/juno_r1_1");
    let t = ocsd(&["decode", "--snapshot", snap.to_str().unwrap()]);
    let total = range_instructions(&stdout(&t));
    let o = ocsd(&["decode", "--snapshot", snap.to_str().unwrap(), "--functions"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let funcs = function_instructions(&stdout(&o));
    assert_eq!(funcs.iter().map(|f| f.1).sum::<u64>(), total);
    assert!(funcs.iter().any(|f| f.0 == "[kernel_dump.bin]"), "{funcs:?}");

    // on two threads (the samples taken from the elements in the serial
    // order): the same files, byte for byte, from raw trace with ELF files
    // and from a snapshot whose trace ID is split into segments
    let big = shared.join("conformance/snapshots/bugfix-exact-match");
    let snap_args = |extra: &[&str]| -> Vec<String> {
        let mut v = vec!["decode".to_string(), "--snapshot".to_string(), big.to_str().unwrap().to_string()];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    for (name, make) in [("raw trace and ELF files", &args as &dyn Fn(&[&str]) -> Vec<String>), ("bugfix-exact-match", &snap_args)] {
        let mut got = Vec::new();
        for jobs in ["0", "2"] {
            let o = run(make(&["--jobs", jobs, "--functions", "--folded", folded.to_str().unwrap(), "--lcov", info.to_str().unwrap(), "--autofdo", afdo.to_str().unwrap()]));
            assert!(o.status.success(), "{name}, --jobs {jobs}: {}", stderr(&o));
            let files: Vec<String> = [&folded, &info, &afdo].iter().map(|p| std::fs::read_to_string(p).unwrap()).collect();
            got.push((stdout(&o), files));
        }
        assert!(got[0].0.lines().count() >= 2 && got[0].1[0].lines().count() > 3 && got[0].1[2].contains("->"), "{name}: {}", got[0].0);
        assert!(got[0] == got[1], "{name}: the profiles on two threads differ from the serial ones");
    }

    // nothing to draw: one line, exit status 2
    let stm = shared.join("conformance/snapshots/stm_only");
    let o = ocsd(&["decode", "--snapshot", stm.to_str().unwrap(), "--flamegraph", svg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
}

/// Without an input, the usage error names both ways to give one
/// (a snapshot, or a trace file with its configuration), exit status 2.
#[test]
fn usage_error_without_input_names_both_inputs() {
    for cmd in [&["decode"][..], &["compare", "--reference", "x"][..]] {
        let o = ocsd(cmd);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}");
        let e = stderr(&o);
        assert!(e.contains("<--snapshot <DIR>|--trace <FILE>>"), "{cmd:?}: {e}");
    }
    // a trace without its configuration, or both inputs: usage errors too
    let o = ocsd(&["decode", "--trace", "t.bin"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--config <FILE>"), "{}", stderr(&o));
    let o = ocsd(&["decode", "--snapshot", "d", "--trace", "t.bin", "--config", "c.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
}
