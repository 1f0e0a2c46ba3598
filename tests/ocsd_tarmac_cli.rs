//! `ocsd decode --format tarmac` and `ocsd compare` on the shared snapshot
//! `snapshots-ete/002-ack_test_scr` and the model's `test_TARMAC`. Needs
//! `$OCSD_SHARED` or `../shared`; skipped loudly without it.


mod common;
use common::*;

use common::ocsd;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn compare_matches_the_models_trace() {
    let Some(snap) = ack_test_scr() else { return };
    let s = snap.to_str().unwrap();
    let reference = snap.join("test_TARMAC");
    let o = ocsd(&["compare", "--snapshot", s, "--reference", reference.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "5146 instructions in 8 segments match\n");
}

#[test]
fn compare_reports_the_first_divergence() {
    let Some(snap) = ack_test_scr() else { return };
    let model = std::fs::read_to_string(snap.join("test_TARMAC")).unwrap();
    let cut: String = model.lines().take(30000).map(|l| format!("{l}\n")).collect();
    let path = std::env::temp_dir().join(format!("ocsd-cut-tarmac-{}", std::process::id()));
    std::fs::write(&path, cut).unwrap();
    let o = ocsd(&["compare", "--snapshot", snap.to_str().unwrap(), "--reference", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.starts_with("divergence after "), "{}", out);
    assert!(out.contains("the reference ends (segment placed after line 30000)"), "{}", out);
}

#[test]
fn compare_bad_input_exits_2_with_one_line() {
    let Some(snap) = ack_test_scr() else { return };
    let s = snap.to_str().unwrap();
    for reference in [snap.join("no-such-file"), snap.join("snapshot.ini")] {
        let o = ocsd(&["compare", "--snapshot", s, "--reference", reference.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2));
        let err = text(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{}", err);
        assert!(err.starts_with("ocsd compare: error: ") && err.contains(reference.to_str().unwrap()), "{}", err);
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn decode_writes_tarmac_with_and_without_disassembly() {
    let Some(snap) = ack_test_scr() else { return };
    let s = snap.to_str().unwrap();
    let o = ocsd(&["decode", "--snapshot", s, "--format", "tarmac"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let instrs: Vec<&str> = out.lines().filter(|l| l.contains(" IT (") || l.contains(" IS (")).collect();
    assert_eq!(instrs.len(), 5146);
    assert_eq!(instrs[0], "1 clk IT (1) 000a10c8 d65f03c0 O EL1h_n : ret");
    assert!(out.contains("28 clk IT (28) 010000b0 97c26bf8 O EL0t_n : bl 0x9b090\n28 clk R X30 00000000010000B4\n"), "{}", &out[..2000]);
    let o = ocsd(&["decode", "--snapshot", s, "--format", "tarmac", "--no-disasm"]);
    let bare = text(&o.stdout);
    assert_eq!(bare.lines().count(), out.lines().count());
    assert!(bare.starts_with("1 clk IT (1) 000a10c8 d65f03c0 O EL1h_n :\n"));
    // the written trace is itself a reference the decode matches
    let path = std::env::temp_dir().join(format!("ocsd-own-tarmac-{}", std::process::id()));
    std::fs::write(&path, &out).unwrap();
    let o = ocsd(&["compare", "--snapshot", s, "--reference", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(text(&o.stdout), "5146 instructions in 8 segments match\n");
}
