//! `ocsd perf ...` is parsed with only the perf subcommand built (a
//! start-up saving): its help, version and usage errors must be those of
//! the full command line, which `ocsd help perf` and `ocsd decode ...` go
//! through.


use common::ocsd;

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("utf-8 output")
}

#[test]
fn perf_help_is_the_full_command_lines() {
    let short = ocsd(&["perf", "--help"]);
    let full = ocsd(&["help", "perf"]);
    assert!(short.status.success() && full.status.success());
    let help = text(&short.stdout);
    assert_eq!(help, text(&full.stdout));
    assert!(help.starts_with("Decode the CoreSight trace of a perf.data recording"), "{}", help);
    assert!(help.contains("Usage: ocsd perf [OPTIONS] <FILE>"), "{}", help);
    for opt in ["--symfs <DIR>", "--autofdo <OUT>", "--flamegraph <OUT.svg>", "--threads <N>", "-V, --version"] {
        assert!(help.contains(opt), "{} missing from:\n{}", opt, help);
    }
}

#[test]
fn perf_version_and_usage_errors() {
    let v = ocsd(&["perf", "--version"]);
    assert!(v.status.success());
    assert_eq!(text(&v.stdout), format!("ocsd-perf {}\n", env!("CARGO_PKG_VERSION")));
    // as clap reports a usage error on any subcommand: exit status 2,
    // the subcommand's usage line
    let e = ocsd(&["perf"]);
    assert_eq!(e.status.code(), Some(2));
    let msg = text(&e.stderr);
    assert!(msg.contains("the following required arguments were not provided") && msg.contains("Usage: ocsd perf <FILE>"), "{}", msg);
    let e = ocsd(&["perf", "x.data", "--no-such-option"]);
    assert_eq!(e.status.code(), Some(2));
    assert!(text(&e.stderr).contains("unexpected argument '--no-such-option'"), "{}", text(&e.stderr));
    // the other subcommands still parse through the full command line
    let d = ocsd(&["decode", "--help"]);
    assert!(d.status.success() && text(&d.stdout).contains("Usage: ocsd decode"));
}

mod common;

/// Without another output, `ocsd perf FILE` prints every decoded element,
/// block by block: a `#` line naming each AUX block, then its elements as
/// `trc_pkt_lister -decode_only` prints them; `--format json` gives the
/// same elements as JSON lines (a `block` object before each block's), and
/// `-o` writes them to a file. With the traced binary found (a synthetic
/// stand-in under `--symfs`), the instruction ranges are those the branch
/// samples of `--branches` come from.
#[test]
fn perf_prints_the_decoded_elements_by_default() {
    let Some(shared) = common::shared_or_skip() else { return };
    let rec = shared.join("perf/etm_test_loop.perf.data");
    let symfs = std::env::temp_dir().join(format!("ocsd-perf-cli-{}", std::process::id()));
    common::write_etm_test_loop(&symfs);
    let rec_s = rec.to_str().unwrap();
    let symfs_s = symfs.to_str().unwrap();

    let t = ocsd(&["perf", rec_s, "--symfs", symfs_s]);
    assert!(t.status.success(), "{}", text(&t.stderr));
    let lines: Vec<String> = text(&t.stdout).lines().map(str::to_string).collect();
    let blocks: Vec<&String> = lines.iter().filter(|l| l.starts_with("# CPU ")).collect();
    assert!(!blocks.is_empty() && lines[0].starts_with("# CPU "), "{:?}", &lines[..lines.len().min(3)]);
    assert!(lines.iter().all(|l| l.starts_with("# CPU ") || (l.starts_with("Idx:") && l.contains("; OCSD_GEN_TRC_ELEM_"))), "{}", text(&t.stdout));
    let ranges: Vec<u64> = lines
        .iter()
        .filter_map(|l| l.split("exec range=0x").nth(1))
        .map(|r| u64::from_str_radix(r.split(':').next().unwrap(), 16).unwrap())
        .collect();
    assert!(!ranges.is_empty(), "no instruction range with the binary found:\n{}", text(&t.stdout));

    // JSON: the same blocks and elements, in the same order
    let out = symfs.join("elements.json");
    let j = ocsd(&["perf", rec_s, "--symfs", symfs_s, "--format", "json", "-o", out.to_str().unwrap()]);
    assert!(j.status.success() && j.stdout.is_empty(), "{}", text(&j.stderr));
    let json = std::fs::read_to_string(&out).unwrap();
    let objs: Vec<serde_json::Value> = json.lines().map(|l| serde_json::from_str(l).expect("a JSON object a line")).collect();
    assert_eq!(objs.len(), lines.len());
    for (o, l) in objs.iter().zip(&lines) {
        if l.starts_with("# CPU ") {
            let b = &o["block"];
            assert!(l.starts_with(&format!("# CPU {}, queue {}: {} bytes", b["cpu"], b["queue"], b["bytes"])), "{} / {}", l, o);
        } else {
            assert!(l.starts_with(&format!("Idx:{}; ID:{:x}; ", o["index"], o["trace_id"].as_u64().unwrap())), "{} / {}", l, o);
        }
    }

    // every branch sample's target after a range is the start of a range
    // the elements show (0: trace stopped)
    let b = ocsd(&["perf", rec_s, "--symfs", symfs_s, "--branches"]);
    assert!(b.status.success());
    let targets: Vec<u64> = text(&b.stdout)
        .lines()
        .filter_map(|l| l.split("=>").nth(1))
        .map(|t| u64::from_str_radix(t.trim(), 16).unwrap())
        .filter(|&t| t != 0)
        .collect();
    assert!(!targets.is_empty());
    assert!(targets.iter().all(|t| ranges.contains(t)), "{:x?} not all in {:x?}", targets, ranges);
    // --branches alone prints no elements
    assert!(!text(&b.stdout).contains("OCSD_GEN_TRC_ELEM_"));
    let _ = std::fs::remove_dir_all(&symfs);

    // unformatted trace cut as perf cuts it (as formatted): no element, and
    // a warning saying what to try; cut at the AUX records, its elements
    let ete = shared.join("perf/ete_unformatted.perf.data");
    let u = ocsd(&["perf", ete.to_str().unwrap()]);
    assert!(u.status.success());
    assert!(!text(&u.stdout).contains("OCSD_GEN_TRC_ELEM_"), "{}", text(&u.stdout));
    assert!(text(&u.stderr).contains("decoded to no element") && text(&u.stderr).contains("--blocks aux"), "{}", text(&u.stderr));
    let a = ocsd(&["perf", ete.to_str().unwrap(), "--blocks", "aux"]);
    assert!(a.status.success() && text(&a.stdout).contains("OCSD_GEN_TRC_ELEM_TRACE_ON"), "{}", text(&a.stdout));
    assert!(!text(&a.stderr).contains("decoded to no element"), "{}", text(&a.stderr));

    // an output file that cannot be made: one line, exit status 2
    let e = ocsd(&["perf", rec_s, "-o", "/nonexistent-dir/x.txt"]);
    assert_eq!(e.status.code(), Some(2));
    assert_eq!(text(&e.stderr).lines().filter(|l| l.starts_with("ocsd perf:")).count(), 1, "{}", text(&e.stderr));
}
