//! What several integration tests share: finding the reference data, the
//! snapshot with a model's Tarmac trace, and decoding it through the Rust API.
#![allow(dead_code)] // each test crate uses part of this

use std::path::{Path, PathBuf};

use opencsd_c_api::abi::gen_elem::ocsd_generic_trace_elem;
use opencsd_c_api::api::Decoder;
use opencsd_c_api::common::MemAccess;

/// The shared reference data: `$OCSD_SHARED`, else `../shared`, if it holds
/// the conformance runner.
pub fn shared_dir() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("OCSD_SHARED") {
        let p = PathBuf::from(p);
        if p.join("conformance/run").is_file() {
            return Some(p);
        }
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    p.join("conformance/run").is_file().then_some(p)
}

pub const SKIPPED: &str = "\n*** SKIPPED: OpenCSD reference data not found (set OCSD_SHARED or place it at ../shared) ***\n";

/// `snapshots-ete/002-ack_test_scr` (its folder holds the model's
/// `test_TARMAC`), or `None` after saying loudly that the data is absent.
pub fn ack_test_scr() -> Option<PathBuf> {
    match shared_dir() {
        Some(s) => Some(s.join("conformance/snapshots-ete/002-ack_test_scr")),
        None => {
            eprintln!("{SKIPPED}");
            None
        }
    }
}

/// Decode the snapshot with the Rust API, handing each element (as the C
/// element) and the decoder's memory to `f`.
pub fn decode_each(snap: &Path, mut f: impl FnMut(u64, u8, &ocsd_generic_trace_elem, &mut dyn MemAccess)) {
    let s = Decoder::from_snapshot(snap, None).unwrap();
    let mut dec = s.decoder;
    let file = std::fs::File::open(&s.trace_file).unwrap();
    let mut it = dec.decode(std::io::BufReader::new(file));
    while let Some(e) = it.next() {
        let raw = e.raw();
        f(e.index, e.trace_id, &raw, it.decoder().memory());
    }
    assert!(it.error().is_none());
}
