//! Steady-state decode allocates nothing per packet, element or
//! instruction: a counting global allocator watches full decodes of
//! reference snapshots (tree creation, which reads the memory dumps, is
//! not counted). Needs `$OCSD_SHARED` or `../shared`; skipped loudly
//! without it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use opencsd_c_api::abi::gen_elem::ocsd_generic_trace_elem;
use opencsd_c_api::abi::*;
use opencsd_c_api::common::error::NullLog;
use opencsd_c_api::common::GenElemSink;
use opencsd_c_api::snapshot::{to_tree, Snapshot};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn shared_dir() -> Option<PathBuf> {
    let p = match std::env::var_os("OCSD_SHARED") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    };
    p.join("conformance/snapshots").is_dir().then_some(p)
}

struct Counter(Rc<Cell<u64>>);

impl GenElemSink for Counter {
    fn trace_elem_in(&mut self, _: ocsd_trc_index_t, _: u8, _: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        self.0.set(self.0.get() + 1);
        OCSD_RESP_CONT
    }
}

/// (elements, allocations during the decode) for a full decode of the
/// snapshot's first buffer, fed in `chunk`-byte blocks.
fn decode_counting(dir: &PathBuf, chunk: usize) -> (u64, u64) {
    let snap = Snapshot::read(dir.to_str().unwrap()).expect("snapshot");
    let buffer = snap.buffer_names().into_iter().next().expect("buffer");
    let data = std::fs::read(snap.path_of(&snap.buffer(&buffer).unwrap().file)).expect("trace file");
    let mut tree = to_tree::create_tree(&snap, &buffer, false, 0, Box::new(NullLog)).expect("tree").tree;
    let count = Rc::new(Cell::new(0));
    tree.set_elem_sink(Some(Box::new(Counter(count.clone()))));

    let before = ALLOCS.load(Ordering::Relaxed);
    let mut pos = 0;
    while pos < data.len() {
        let end = (pos + chunk).min(data.len());
        let (resp, used) = tree.data_in(OCSD_OP_DATA, pos as ocsd_trc_index_t, &data[pos..end]);
        assert!(!resp_is_fatal(resp));
        pos += used;
    }
    tree.data_in(OCSD_OP_EOT, 0, &[]);
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    (count.get(), allocs)
}

#[test]
fn decode_allocates_nothing_per_element() {
    let Some(shared) = shared_dir() else {
        eprintln!("\n*** SKIPPED: OpenCSD reference data not found (set OCSD_SHARED or place it at ../shared) ***\n");
        return;
    };
    for name in ["juno_r1_1", "bugfix-exact-match"] {
        let (elems, allocs) = decode_counting(&shared.join("conformance/snapshots").join(name), 4096);
        eprintln!("{}: {} elements, {} allocations while decoding", name, elems, allocs);
        assert!(elems > 10_000, "{}: only {} elements", name, elems);
        // start-up growth of reused buffers only: nothing that scales with
        // the trace
        assert!(allocs < 200, "{}: {} allocations for {} elements", name, allocs, elems);
    }
}
