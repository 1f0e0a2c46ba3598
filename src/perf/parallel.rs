//! The timeless decode of [`super::decode`] with its AUX blocks decoded on
//! several threads, giving exactly the samples and warnings of the serial
//! decode.
//!
//! Every block is decoded after a decoder reset, so a block's elements
//! depend on nothing decoded before it but the thread each trace source
//! was last seen in (its memory is read from that thread's process). The
//! blocks, in the serial order (queue after queue, each queue's blocks in
//! file order), are taken in windows of a bounded number of trace bytes:
//!
//! 1. **Decode.** The window's blocks are decoded on scoped threads (the
//!    calling thread one of them), the largest blocks first, each
//!    by a fresh decode tree built as the serial decode builds its queue's
//!    tree, assuming the threads known at the start of the window. Each
//!    keeps the elements the sample logic uses (ranges, discontinuities,
//!    exceptions, contexts), notes the trace sources whose assumed thread
//!    it read memory with (before a context of its own set it), and the
//!    binaries it looked up first, in order.
//! 2. **Replay.** On the calling thread, block after block: a block that
//!    read memory with an assumed thread other than the one the serial
//!    decode would have by then is decoded again, with the right threads;
//!    its binaries join the address spaces (their warnings in the serial
//!    order); its elements go through the serial decode's sample logic
//!    (one per queue, as the serial decode has one tree per queue) into
//!    the sink.
//!
//! Binaries are looked up once (a lookup shared by the threads) and are
//! read by the threads without locks; the sink sees nothing until the
//! replay, which is serial.
#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use rustc_hash::FxHashMap;

use crate::abi::gen_elem::ocsd_generic_trace_elem;
use crate::abi::*;
use crate::common::GenElemSink;

use super::cs_meta::CsMeta;
use super::decode::{tree_for, Elem, QueueRun, SampleSink, Samples, Shared};
use super::dump::Block;
use super::file::PerfData;
use super::spaces::{LookedUp, Map, Spaces};
use super::PerfError;

/// Trace bytes decoded ahead of the replay: the elements of a window wait
/// in memory (a few dozen bytes per element, at most about one element
/// per trace byte).
const WINDOW_BYTES: usize = 1 << 20;

/// What every block's decode needs.
pub struct Setup<'a> {
    pub pd: &'a PerfData,
    pub meta: &'a CsMeta,
    pub cpu_of_id: [i32; 128],
    pub pid_in_vmid: bool,
}

/// The address spaces as the worker threads read them.
struct Pool {
    spaces: Spaces,
    /// Binaries looked up during the window (not yet in `spaces`).
    looked_up: Mutex<FxHashMap<usize, Arc<LookedUp>>>,
}

/// A block's decode state shared by its memory callback and element sink.
struct Local {
    pool: Arc<Pool>,
    tid: [i32; 128],
    /// Sources whose thread a context of the block set.
    set: u128,
    /// Sources whose assumed thread a memory read used (one whose result
    /// depends on the thread).
    used_start: u128,
    last: Option<(i32, Map)>,
    /// Binaries the block looked up, in the order it first read them.
    looked_up: Vec<(usize, Arc<LookedUp>)>,
}

impl Local {
    fn read(&mut self, id: u8, addr: u64, buf: &mut [u8]) -> usize {
        let i = (id & 0x7f) as usize;
        // (a read that finds the same whatever the thread, e.g. of kernel
        // code, does not depend on the thread assumed)
        if self.set & (1u128 << i) == 0 && !self.pool.spaces.thread_free(addr) {
            self.used_start |= 1u128 << i;
        }
        let tid = self.tid[i];
        let spaces = &self.pool.spaces;
        let m = match self.last {
            Some((t, m)) if t == tid && addr >= m.start && addr < m.end => m,
            _ => {
                let Some(m) = spaces.find_map(tid, addr).copied() else { return 0 };
                self.last = Some((tid, m));
                m
            }
        };
        let b = &spaces.binaries[m.bin];
        if b.data.is_some() {
            return b.copy_out(&m, addr, buf);
        }
        if let Some((_, l)) = self.looked_up.iter().find(|(k, _)| *k == m.bin) {
            return l.0.copy_out(&m, addr, buf);
        }
        let l = match self.pool.looked_up.lock() {
            Ok(mut c) => c.entry(m.bin).or_insert_with(|| Arc::new(spaces.look_up(m.bin))).clone(),
            Err(_) => return 0,
        };
        let n = l.0.copy_out(&m, addr, buf);
        self.looked_up.push((m.bin, l));
        n
    }

    /// The range around `addr` where thread `tid` reads nothing (see
    /// [`Spaces::hole_at`]), binaries this block looked up counted as
    /// looked up.
    fn hole_at(&self, tid: i32, addr: u64) -> Option<(u64, u64)> {
        let spaces = &self.pool.spaces;
        spaces.hole_at_with(tid, addr, |b| match spaces.binaries.get(b).map(|x| &x.data) {
            Some(Some(d)) => d.is_none(),
            // looked up by this block (not in `spaces` yet): not found?
            Some(None) => self.looked_up.iter().any(|(k, l)| *k == b && matches!(l.0.data, Some(None))),
            None => false,
        })
    }
}

/// Keeps the elements of a block, following its contexts.
struct Recorder {
    local: Arc<Mutex<Local>>,
    /// Changed with a source's thread (see [`tree_for`]).
    stamp: Arc<AtomicU64>,
    elems: Rc<RefCell<Vec<(u8, Elem)>>>,
    pid_in_vmid: bool,
}

impl GenElemSink for Recorder {
    fn trace_elem_in(&mut self, _idx: ocsd_trc_index_t, id: u8, e: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        let Some(el) = Elem::of(e, self.pid_in_vmid) else { return OCSD_RESP_CONT };
        let i = id & 0x7f;
        if let Elem::Context(Some(t)) = el {
            match self.local.lock() {
                Ok(mut l) => {
                    if l.tid[i as usize] != t {
                        self.stamp.fetch_add(1, Ordering::Release);
                    }
                    l.tid[i as usize] = t;
                    l.set |= 1u128 << i;
                }
                Err(_) => return OCSD_RESP_FATAL_SYS_ERR,
            }
        }
        self.elems.borrow_mut().push((i, el));
        OCSD_RESP_CONT
    }
}

/// One block's decode.
struct BlockOut {
    elems: Vec<(u8, Elem)>,
    warnings: Vec<String>,
    /// The threads assumed, and the sources whose assumed thread was used.
    start_tid: [i32; 128],
    used_start: u128,
    looked_up: Vec<(usize, Arc<LookedUp>)>,
}

impl BlockOut {
    /// Whether the block read memory as the serial decode would with
    /// these threads at its start.
    fn valid_with(&self, tid: &[i32; 128]) -> bool {
        (0..128).all(|i| self.used_start & (1u128 << i) == 0 || self.start_tid[i] == tid[i])
    }
}

/// Decode block `blk` of the queue whose first block is `first`, each
/// source's thread `tid` at its start. `tree_warnings`: keep the warnings
/// of building the tree (the queue's first block).
fn decode_block(s: &Setup, pool: &Arc<Pool>, first: &Block, blk: &Block, tid: [i32; 128], tree_warnings: bool) -> Result<BlockOut, PerfError> {
    let local = Arc::new(Mutex::new(Local { pool: pool.clone(), tid, set: 0, used_start: 0, last: None, looked_up: Vec::new() }));
    let elems = Rc::new(RefCell::new(Vec::new()));
    let l = local.clone();
    let read = Box::new(move |addr: ocsd_vaddr_t, _space: ocsd_mem_space_acc_t, id: u8, buf: &mut [u8]| -> (usize, Option<(u64, u64)>) {
        match l.lock() {
            Ok(mut l) => {
                let n = l.read(id, addr, buf);
                if n > 0 {
                    return (n, None);
                }
                let tid = l.tid[(id & 0x7f) as usize];
                (0, l.hole_at(tid, addr))
            }
            Err(_) => (0, None),
        }
    });
    let stamp = Arc::new(AtomicU64::new(0));
    let sink = Box::new(Recorder { local: local.clone(), elems: elems.clone(), pid_in_vmid: s.pid_in_vmid, stamp: stamp.clone() });
    let mut warnings = Vec::new();
    let tree = tree_for(first, super::decode::trace_ids(s.pd, &[blk]), s.meta, read, stamp, sink, &mut warnings)?;
    if !tree_warnings {
        warnings.clear();
    }
    let mut run = QueueRun::new(tree, vec![blk], None);
    // no clock: the sink never waits, the block runs to its end
    while run.run(s.pd, &mut warnings) {}
    drop(run);
    let elems = std::mem::take(&mut *elems.borrow_mut());
    let l = local.lock().map_err(|_| PerfError::Decode("internal lock poisoned".into()))?;
    Ok(BlockOut { elems, warnings, start_tid: tid, used_start: l.used_start, looked_up: l.looked_up.clone() })
}

/// Decode block `blk` with the spaces of `sh` (moved into a pool for the
/// decode and back).
fn decode_block_now(s: &Setup, sh: &mut Shared, first: &Block, blk: &Block, tree_warnings: bool) -> Result<BlockOut, PerfError> {
    let spaces = std::mem::replace(&mut sh.spaces, Spaces::from_parts(Vec::new(), Vec::new()));
    let pool = Arc::new(Pool { spaces, looked_up: Mutex::new(FxHashMap::default()) });
    let out = decode_block(s, &pool, first, blk, sh.tid, tree_warnings);
    sh.spaces = unpool(pool)?;
    out
}

fn unpool(pool: Arc<Pool>) -> Result<Spaces, PerfError> {
    Arc::try_unwrap(pool).map(|p| p.spaces).map_err(|_| PerfError::Decode("memory callbacks still held".into()))
}

/// Run `work` on each item of `items` on `threads` threads (the calling
/// thread one of them), the largest items (by `size`) first so that the
/// threads end close together; the results in the order of `items` (None:
/// not run, which a worker's panic going on through the scope prevents).
fn decode_window<T: Sync, R: Send>(items: &[T], threads: usize, work: impl Fn(&T) -> R + Sync, size: impl Fn(&T) -> usize) -> Vec<Option<R>> {
    let mut by_size: Vec<usize> = (0..items.len()).collect();
    by_size.sort_by_key(|&i| std::cmp::Reverse(size(&items[i])));
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let run = || loop {
        let k = next.fetch_add(1, Ordering::Relaxed);
        let Some(&i) = by_size.get(k) else { break };
        let r = work(&items[i]);
        if let Ok(mut slot) = slots[i].lock() {
            *slot = Some(r);
        }
    };
    std::thread::scope(|sc| {
        for _ in 1..threads.min(items.len()) {
            sc.spawn(run);
        }
        run();
    });
    slots.into_iter().map(|m| m.into_inner().ok().flatten()).collect()
}

/// The timeless decode of `queues` (each a queue's blocks, in the serial
/// order) on `threads` threads, samples to `out`; the address spaces
/// returned with the warnings, as the serial decode returns them.
pub fn decode(s: &Setup, queues: &[Vec<&Block>], mut sh: Shared, out: &mut dyn SampleSink, threads: usize) -> Result<(Spaces, Vec<String>), PerfError> {
    let threads = threads.max(1);
    // (queue, block) in the serial order
    let order: Vec<(usize, usize)> = queues.iter().enumerate().flat_map(|(q, bs)| (0..bs.len()).map(move |b| (q, b))).collect();
    let mut warnings = Vec::new();
    let mut samples: Option<(usize, Samples)> = None;
    let mut at = 0;
    while at < order.len() {
        let mut end = at;
        let mut bytes = 0;
        while end < order.len() && (end == at || bytes < WINDOW_BYTES) {
            let (q, b) = order[end];
            bytes += queues[q][b].len;
            end += 1;
        }
        let window = &order[at..end];
        // 1. decode, assuming the threads known now
        let spaces = std::mem::replace(&mut sh.spaces, Spaces::from_parts(Vec::new(), Vec::new()));
        let pool = Arc::new(Pool { spaces, looked_up: Mutex::new(FxHashMap::default()) });
        let tid0 = sh.tid;
        let outs = decode_window(window, threads, |&(q, b)| decode_block(s, &pool, queues[q][0], queues[q][b], tid0, b == 0), |&(q, b)| queues[q][b].len);
        sh.spaces = unpool(pool)?;
        // 2. replay in the serial order
        for (&(q, b), o) in window.iter().zip(outs) {
            let mut o = o.ok_or_else(|| PerfError::Decode("a block was not decoded".into()))??;
            if !o.valid_with(&sh.tid) {
                o = decode_block_now(s, &mut sh, queues[q][0], queues[q][b], b == 0)?;
            }
            for (bin, l) in o.looked_up {
                sh.spaces.set_looked_up(bin, (*l).clone());
            }
            warnings.extend(o.warnings);
            let smp = match &mut samples {
                Some((sq, smp)) if *sq == q => smp,
                _ => &mut samples.insert((q, Samples::new(s.cpu_of_id))).1,
            };
            for (id, e) in o.elems {
                smp.elem(id as usize, e, &mut sh, out);
            }
        }
        at = end;
    }
    warnings.append(&mut sh.spaces.warnings);
    Ok((sh.spaces, warnings))
}

#[cfg(test)]
mod tests {
    use super::{decode_window, BlockOut};

    #[test]
    fn window_results_come_back_in_item_order_whatever_the_threads() {
        let items: Vec<usize> = vec![3, 50, 7, 50, 1, 20];
        for threads in [1, 2, 3, 8] {
            let ran = std::sync::Mutex::new(Vec::new());
            let out = decode_window(&items, threads, |&n| {
                ran.lock().unwrap().push(n);
                n * 10
            }, |&n| n);
            assert_eq!(out, items.iter().map(|&n| Some(n * 10)).collect::<Vec<_>>());
            let ran = ran.into_inner().unwrap();
            assert_eq!(ran.len(), items.len());
            if threads == 1 {
                // one thread: largest first, ties in item order
                assert_eq!(ran, vec![50, 50, 20, 7, 3, 1]);
            }
        }
        assert!(decode_window(&[] as &[usize], 2, |&n| n, |&n| n).is_empty());
    }

    #[test]
    fn a_block_is_decoded_again_only_when_a_thread_it_read_with_was_wrong() {
        let mut start = [-1i32; 128];
        start[0x10] = 7;
        start[0x12] = 9;
        let o = BlockOut { elems: Vec::new(), warnings: Vec::new(), start_tid: start, used_start: 1u128 << 0x10, looked_up: Vec::new() };
        let mut now = start;
        assert!(o.valid_with(&now));
        // a source it did not read memory for may differ
        now[0x12] = 3;
        assert!(o.valid_with(&now));
        // one it read with may not
        now[0x10] = 8;
        assert!(!o.valid_with(&now));
    }
}
