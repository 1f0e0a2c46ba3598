//! Tarmac output and comparison with a reference execution trace, on the
//! shared snapshot `snapshots-ete/002-ack_test_scr`, whose folder holds the
//! model's own Tarmac trace of the traced run (`test_TARMAC`).
//!
//! The shared reference data is looked up at `$OCSD_SHARED` or
//! `../shared`; when it is absent the tests say so loudly.

use std::path::{Path, PathBuf};

use opencsd_c_api::tarmac::{decode_snapshot, CompareReport, Comparer, Reference, TarmacConfig, TarmacWriter};

fn shared_dir() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("OCSD_SHARED") {
        let p = PathBuf::from(p);
        if p.join("conformance/run").is_file() {
            return Some(p);
        }
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    p.join("conformance/run").is_file().then_some(p)
}

fn ack_test_scr() -> Option<PathBuf> {
    match shared_dir() {
        Some(s) => Some(s.join("conformance/snapshots-ete/002-ack_test_scr")),
        None => {
            eprintln!("\n*** SKIPPED: OpenCSD reference data not found (set OCSD_SHARED or place it at ../shared) ***\n");
            None
        }
    }
}

fn compare(snap: &Path, reference: &Reference) -> CompareReport {
    let mut cmp = Comparer::new(reference);
    decode_snapshot(snap.to_str().unwrap(), None, |idx, id, elem, mem| cmp.element(idx, id, elem, mem)).unwrap();
    cmp.finish()
}

fn tarmac_of(snap: &Path, disasm: bool) -> String {
    let mut w = TarmacWriter::new(Vec::new(), TarmacConfig { disasm });
    decode_snapshot(snap.to_str().unwrap(), None, |_, id, elem, mem| w.element(id, elem, mem).unwrap()).unwrap();
    String::from_utf8(w.finish().unwrap()).unwrap()
}

#[test]
fn decode_matches_the_models_tarmac() {
    let Some(snap) = ack_test_scr() else { return };
    let reference = Reference::from_file(&snap.join("test_TARMAC")).unwrap();
    let report = compare(&snap, &reference);
    assert_eq!(report.to_string(), "5146 instructions in 8 segments match", "{:?}", report);
    assert!(report.matches());
    assert_eq!(report.ids.len(), 1);
    assert_eq!(report.ids[0].trace_id, 2);
    assert_eq!(report.ids[0].cpu, "cpu0");
}

#[test]
#[ignore]
fn show_tarmac() {
    let Some(snap) = ack_test_scr() else { return };
    let t = tarmac_of(&snap, true);
    std::fs::write("/tmp/tarmac_002.txt", &t).unwrap();
}
