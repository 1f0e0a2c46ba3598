//! `ocsd perf ...` is parsed with only the perf subcommand built (a
//! start-up saving): its help, version and usage errors must be those of
//! the full command line, which `ocsd help perf` and `ocsd decode ...` go
//! through.

use std::process::{Command, Output};

fn ocsd(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ocsd")).args(args).output().expect("run ocsd")
}

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
