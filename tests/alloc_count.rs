//! Steady-state decode allocates nothing per packet, element or
//! instruction: a counting global allocator watches full decodes of
//! reference snapshots (tree creation, which reads the memory dumps, is
//! not counted). Needs `$OCSD_SHARED` or `../shared`; skipped loudly
//! without it.

use std::cell::Cell;
use std::path::Path;
use std::rc::Rc;

use opencsd_c_api::abi::*;
use opencsd_c_api::common::error::NullLog;
use opencsd_c_api::mem::{FileBytes, Source};
use opencsd_c_api::snapshot::{to_tree, Snapshot};

mod common;
use common::*;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// (elements, allocations during the decode) for a full decode of the
/// snapshot's first buffer, fed in `chunk`-byte blocks.
fn decode_counting(dir: &Path, chunk: usize) -> (u64, u64) {
    let snap = Snapshot::read(dir.to_str().unwrap()).expect("snapshot");
    let buffer = snap.buffer_names().into_iter().next().expect("buffer");
    let data = std::fs::read(snap.path_of(&snap.buffer(&buffer).unwrap().file)).expect("trace file");
    let mut tree = to_tree::create_tree(&snap, &buffer, false, 0, Box::new(NullLog)).expect("tree").tree;
    let count = Rc::new(Cell::new(0));
    tree.set_elem_sink(Some(Box::new(Counter(count.clone()))));

    let before = allocations();
    let mut pos = 0;
    while pos < data.len() {
        let end = (pos + chunk).min(data.len());
        let (resp, used) = tree.data_in(OCSD_OP_DATA, pos as ocsd_trc_index_t, &data[pos..end]);
        assert!(!resp_is_fatal(resp));
        pos += used;
    }
    tree.data_in(OCSD_OP_EOT, 0, &[]);
    let allocs = allocations() - before;
    // memory image files are read in chunks the first time the decode
    // needs them (one allocation each),
    // bounded by the images' size, not the trace's
    let mut files: Vec<&FileBytes> = Vec::new();
    for a in tree.mapper.accessors() {
        if let Source::File { data, .. } = &a.source {
            if !files.iter().any(|f| f.same_bytes(data)) {
                files.push(data);
            }
        }
    }
    let chunk_allocs: u64 = files.iter().map(|f| f.chunks_loaded() as u64).sum();
    (count.get(), allocs - chunk_allocs)
}

#[test]
fn decode_allocates_nothing_per_element() {
    let Some(shared) = shared_or_skip() else {
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
