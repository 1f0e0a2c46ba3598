//! Live decode trees by handle.
//!
//! A `dcd_tree_handle_t` is a number (1, 2, ...) never reused in the
//! process, so a destroyed or made-up handle is recognised and refused
//! instead of being dereferenced. The registry only maps numbers to trees;
//! it is not locked while a tree works, so callbacks from a tree may call
//! the library (as with OpenCSD, one tree must not be used from two threads
//! at once).

use std::os::raw::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::abi::*;
use crate::dcd_tree::DecodeTree;

/// A decode tree plus what the C API keeps alongside it.
pub struct TreeHandle {
    pub id: usize,
    pub tree: DecodeTree,
    /// OpenCSD creates its memory accessor mapper on the first
    /// `ocsd_dt_add_*_mem_acc` call; removal, logging and cache setup
    /// before that answer `OCSD_ERR_NOT_INIT` / do nothing.
    pub has_mapper: bool,
    /// A raw frame printer is attached (the deformatter takes one).
    pub has_raw_printer: bool,
    /// Statistics blocks handed out by `ocsd_dt_get_decode_stats`, one per
    /// trace ID, at addresses stable for the tree's life.
    pub stats: Box<[ocsd_decode_stats_t; 128]>,
}

impl TreeHandle {
    pub fn new(id: usize, tree: DecodeTree) -> Self {
        TreeHandle { id, tree, has_mapper: false, has_raw_printer: false, stats: Box::new([ocsd_decode_stats_t::default(); 128]) }
    }
}

/// A tree's address, movable between threads in the registry.
#[derive(Clone, Copy)]
pub struct TreePtr(pub *mut TreeHandle);
// SAFETY: the registry only stores and hands out the pointer; the tree
// behind it is used by one thread at a time (the API's contract).
unsafe impl Send for TreePtr {}

/// (handle number, tree) of the live trees; a plain vector (few trees, and
/// no hash table internals for leak checkers to misread at exit).
static TREES: Mutex<Vec<(usize, TreePtr)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

fn registry() -> std::sync::MutexGuard<'static, Vec<(usize, TreePtr)>> {
    TREES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Register a new tree; returns its handle value.
pub fn insert(make: impl FnOnce(usize) -> Box<TreeHandle>) -> *mut c_void {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let ptr = Box::into_raw(make(id));
    registry().push((id, TreePtr(ptr)));
    id as *mut c_void
}

/// The tree of a live handle.
pub fn lookup(handle: *mut c_void) -> Option<TreePtr> {
    registry().iter().find(|(id, _)| *id == handle as usize).map(|(_, p)| *p)
}

/// Unregister a handle; the caller owns (and drops) the tree.
pub fn remove(handle: *mut c_void) -> Option<TreePtr> {
    let mut r = registry();
    let i = r.iter().position(|(id, _)| *id == handle as usize)?;
    Some(r.swap_remove(i).1)
}

/// Number of live trees (tests).
pub fn live_count() -> usize {
    registry().len()
}
