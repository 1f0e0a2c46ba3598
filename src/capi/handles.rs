//! Live decode trees by handle.
//!
//! A `dcd_tree_handle_t` is a number (1, 2, ...) never reused in the
//! process, so a destroyed or made-up handle is recognised and refused
//! instead of being dereferenced. The registry only maps numbers to trees;
//! it is not locked while a tree works, so callbacks from a tree may call
//! the library (as with OpenCSD, one tree must not be used from two threads
//! at once).
//!
//! Each tree has a [`HandleCtl`], kept beside it in the registry, that
//! marks the tree busy while a C API call works on it. A call on the same
//! tree from inside one of its callbacks (element, memory, packet, string
//! output) never gets at the tree itself: it is refused, except for the
//! changes that are safe to make later - a new element output (applied
//! before the next element), memory map changes (decided at once on the
//! accessor list kept here, carried out at the mapper's next read, as
//! OpenCSD's mapper sees them), decoder removal and tree destruction
//! (applied when the running call returns).

use std::os::raw::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::abi::*;
use crate::common::{LiveDemux, LiveStats};
use crate::dcd_tree::DecodeTree;
use crate::mem::ocsd_files::{AccList, MapQueue};

/// A decode tree plus what the C API keeps alongside it.
pub struct TreeHandle {
    pub id: usize,
    pub tree: DecodeTree,
    /// What calls from the tree's callbacks may also reach.
    pub ctl: Arc<HandleCtl>,
    /// A raw frame printer is attached (the deformatter takes one).
    pub has_raw_printer: bool,
}

impl TreeHandle {
    pub fn new(id: usize, mut tree: DecodeTree, ctl: Arc<HandleCtl>) -> Self {
        // changes to the memory map asked for from callbacks wait there
        tree.mapper.set_queue(Some(ctl.map_queue.clone()));
        // file accessor objects are process-wide, as OpenCSD's: the changes
        // other trees make to the files this one lists come through its
        // queue too
        ctl.mem().list = AccList::process_wide(Arc::downgrade(&ctl.map_queue));
        {
            let mut st = ctl.stats();
            st.src_type = tree.src_type();
            st.demux = tree.live_demux_stats();
        }
        TreeHandle { id, tree, ctl, has_raw_printer: false }
    }

    /// Give the control block the statistics blocks of the tree's
    /// decoders as they are now (after decoders are made or removed).
    pub fn sync_stats(&mut self) {
        let now = self.tree.live_stats();
        let mut st = self.ctl.stats();
        let st = &mut *st;
        let mut slots: Vec<Option<(LiveStats, bool)>> = (0..128).map(|_| None).collect();
        for (i, ls) in now {
            if let Some(x) = slots.get_mut(i) {
                *x = Some(ls);
            }
        }
        // blocks of removed decoders stay allocated with the tree: the
        // client may still hold pointers to them
        for (old, _) in std::mem::take(&mut st.slots).into_iter().flatten() {
            if !slots.iter().flatten().any(|(n, _)| n.same_block(&old)) && !st.retired.iter().any(|r| r.same_block(&old)) {
                st.retired.push(old);
            }
        }
        st.slots = slots;
    }
}

/// A new generic element output asked for from inside a callback.
#[derive(Clone, Copy)]
pub enum SinkReq {
    /// `ocsd_dt_set_gen_elem_outfn`.
    Callback(super::adapters::CElemSink),
    /// `ocsd_dt_set_gen_elem_printer` (printing enabled or not).
    Printer(bool),
}

/// Changes to a busy tree, asked for from inside its callbacks.
#[derive(Default)]
pub struct Pending {
    pub sink: Option<SinkReq>,
    pub remove_ids: Vec<u8>,
}

/// The tree's memory map as OpenCSD's API sees it.
#[derive(Default)]
pub struct MemCtl {
    /// OpenCSD creates its memory accessor mapper on the first
    /// `ocsd_dt_add_*_mem_acc` call; removal, logging and cache setup
    /// before that answer `OCSD_ERR_NOT_INIT` / do nothing.
    pub has_mapper: bool,
    /// OpenCSD's accessor list: the decisions on each change.
    pub list: AccList,
}

/// The statistics blocks of a tree's decoders, which
/// `ocsd_dt_get_decode_stats` hands out, also from inside callbacks.
#[derive(Default)]
pub struct StatsCtl {
    pub src_type: ocsd_dcd_tree_src_t,
    /// By decoder slot (see `DecodeTree::slot_of`); empty: none.
    /// (the block, whether the processor keeps statistics)
    pub slots: Vec<Option<(LiveStats, bool)>>,
    /// Blocks of decoders removed since: kept until the tree goes.
    pub retired: Vec<LiveStats>,
    /// The frame deformatter's demux statistics (formatted trees).
    pub demux: Option<LiveDemux>,
}

impl StatsCtl {
    /// The statistics block answering for trace ID `cs_id` (as OpenCSD's
    /// tree looks it up: slot 0 for an ID not valid on a formatted tree,
    /// 0x80 and above included).
    pub fn for_cs_id(&self, cs_id: u8) -> Option<&(LiveStats, bool)> {
        let slot = DecodeTree::slot_of(self.src_type, cs_id);
        self.slots.get(slot)?.as_ref()
    }
}

/// Per-tree state that re-entrant calls may touch (never the tree itself).
#[derive(Default)]
pub struct HandleCtl {
    /// The memory map's accessor list (decisions are made here, the
    /// mapper carries them out).
    pub mem: Mutex<MemCtl>,
    /// Memory map changes from callbacks, for the mapper's next read.
    pub map_queue: Arc<MapQueue>,
    /// A C API call is working on the tree.
    pub busy: AtomicBool,
    /// Destroyed while busy: the running call drops the tree on return.
    pub destroyed: AtomicBool,
    /// `pending.sink` holds a new element output.
    pub sink_pending: AtomicBool,
    pub pending: Mutex<Pending>,
    /// The decoders' statistics blocks.
    pub stats: Mutex<StatsCtl>,
}

impl HandleCtl {
    pub fn mem(&self) -> std::sync::MutexGuard<'_, MemCtl> {
        self.mem.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn stats(&self) -> std::sync::MutexGuard<'_, StatsCtl> {
        self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Take a new element output asked for from a callback, if any (one
    /// relaxed load when there is none).
    #[inline]
    pub fn take_sink(&self) -> Option<SinkReq> {
        if !self.sink_pending.load(Ordering::Acquire) {
            return None;
        }
        self.sink_pending.store(false, Ordering::Release);
        self.pending().sink.take()
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
static TREES: Mutex<Vec<(usize, TreePtr, Arc<HandleCtl>)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

fn registry() -> std::sync::MutexGuard<'static, Vec<(usize, TreePtr, Arc<HandleCtl>)>> {
    TREES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Register a new tree; returns its handle value.
pub fn insert(make: impl FnOnce(usize, Arc<HandleCtl>) -> Box<TreeHandle>) -> *mut c_void {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let ctl = Arc::new(HandleCtl::default());
    let ptr = Box::into_raw(make(id, ctl.clone()));
    registry().push((id, TreePtr(ptr), ctl));
    id as *mut c_void
}

/// The tree of a live handle.
pub fn lookup(handle: *mut c_void) -> Option<TreePtr> {
    lookup_ctl(handle).map(|(p, _)| p)
}

/// The tree of a live handle and its control block.
pub fn lookup_ctl(handle: *mut c_void) -> Option<(TreePtr, Arc<HandleCtl>)> {
    registry().iter().find(|(id, _, _)| *id == handle as usize).map(|(_, p, c)| (*p, c.clone()))
}

/// Unregister a handle; the caller owns (and drops) the tree, unless it is
/// busy (see [`HandleCtl::destroyed`]).
pub fn remove(handle: *mut c_void) -> Option<(TreePtr, Arc<HandleCtl>)> {
    let mut r = registry();
    let i = r.iter().position(|(id, _, _)| *id == handle as usize)?;
    let (_, p, c) = r.swap_remove(i);
    Some((p, c))
}

/// Number of live trees (tests).
pub fn live_count() -> usize {
    registry().len()
}
