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

/// Says loudly that the reference data is absent; `None` then. The shared
/// data otherwise.
pub fn shared_or_skip() -> Option<PathBuf> {
    let s = shared_dir();
    if s.is_none() {
        eprintln!("{SKIPPED}");
    }
    s
}

/// An element sink that only counts, never asking the decoders to wait.
pub struct Counter(pub std::rc::Rc<std::cell::Cell<u64>>);

impl opencsd_c_api::common::GenElemSink for Counter {
    fn trace_elem_in(
        &mut self,
        _: opencsd_c_api::abi::ocsd_trc_index_t,
        _: u8,
        _: &ocsd_generic_trace_elem,
    ) -> opencsd_c_api::abi::ocsd_datapath_resp_t {
        self.0.set(self.0.get() + 1);
        opencsd_c_api::abi::OCSD_RESP_CONT
    }
}

/// A global allocator that counts allocations and reallocations, for
/// tests that check the hot path allocates nothing. A test crate installs
/// it with `#[global_allocator] static GLOBAL: Counting = Counting;` and
/// reads [`allocations`] around the part it watches.
pub struct Counting;

static ALLOCS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Allocations (and reallocations) counted so far by [`Counting`].
pub fn allocations() -> u64 {
    ALLOCS.load(std::sync::atomic::Ordering::Relaxed)
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counter is an atomic and allocates nothing.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}
