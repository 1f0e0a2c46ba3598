//! Folded parallel decode: each segment's output folded where it is
//! decoded instead of kept for the calling thread.
//!
//! [`decode`](super::decode) keeps every segment's output until the
//! calling thread gives it out in serial order: the output is written,
//! held and read again, and one thread gives out all of it. A client that
//! only folds the elements (counts, profiles, coverage), and whose
//! reduction does not depend on the order of the folded pieces, needs
//! none of that: each segment's decode folds its own output, on its own
//! thread, and the calling thread reduces what the segments folded.
//!
//! The elements folded are exactly those of the serial decode, each once:
//! a segment's output is folded in pieces cut at the chunk boundaries
//! where a stitch can happen (where the previous segment's decoder may
//! meet this one's state, counted from the segment's first chunk; where
//! this one's may meet the next segment's, counted from its end; the
//! stream's end), and only the pieces between the chunk where the segment
//! takes over and the chunk where the next one does are reduced. The
//! boundaries of a stitch are found as [`decode`](super::decode) finds
//! them (a probe beside the segment's decoder past its end).
//!
//! The recording and the decode overlap: the calling thread records the
//! trace a part at a time ([`PART`] bytes, a quarter of that for the
//! first), and a segment is decoded as soon as the next one's start is
//! known, its decoder waiting for the parts not yet recorded. While it
//! records, one thread fewer decodes segments ([`Gate`]): the recording
//! keeps a core, and so the next segments come soon. Once it is done, the
//! calling thread decodes the streams found in one segment on that core
//! before the pool takes every thread. Frames of one trace ID are read
//! from the trace, not copied into the parts.
#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;
use std::sync::{Arc, Condvar, Mutex};

use super::{etmv4_sync_points, next_check, walk_segment, ChunkSource, Ctx, IdStream, ParallelOptions, Recording, Runner, SegmentOutput, SharedMem, Spare, Summary, CHECK_EVERY, DECODES};
use crate::abi::*;
use crate::dcd_tree::DecodeTree;

/// An output that a folded decode cuts into pieces.
pub trait FoldOutput: SegmentOutput {
    /// End the piece being written: what is written next goes into a new
    /// one.
    fn cut(&mut self);
}

/// What a folded decode gives: segment outputs, each with the range of
/// its pieces that belong to the serial output, stream by stream (trace
/// ID slots in order), each stream's in the order of its elements.
pub struct Folded<O> {
    pub outs: Vec<(O, Range<usize>)>,
    pub summary: Summary,
}

/// Trace bytes recorded at a time (a multiple of any feed block size the
/// callers use, so that the deformatter is fed the blocks a serial decode
/// is fed).
const PART: usize = 64 * 1024;

/// A part of the recording: the chunks of each stream that `PART` bytes
/// of trace gave.
struct Part {
    rec: Recording,
    /// Per stream, the number of its chunks in earlier parts.
    first: Vec<usize>,
}

/// The parts recorded so far, shared with the segments' decoders.
struct Live {
    state: Mutex<LiveState>,
    more: Condvar,
}

#[derive(Default)]
struct LiveState {
    parts: Vec<Arc<Part>>,
    /// All recorded (or the recording given up).
    done: bool,
    /// The recording was given up: the decode is serial.
    failed: bool,
}

impl Live {
    /// The part that holds chunk `c` of stream `si`, and the chunk's place
    /// in it, waiting for it to be recorded; None when the stream ends
    /// before it.
    fn chunk(&self, si: usize, c: usize) -> Option<(Arc<Part>, usize)> {
        let mut st = self.state.lock().ok()?;
        loop {
            // (the last part whose chunks of the stream start at or before c)
            if let Some(p) = st.parts.iter().rev().find(|p| p.first[si] <= c) {
                let local = c - p.first[si];
                if local < p.rec.streams[si].n_chunks() {
                    return Some((p.clone(), local));
                }
            }
            if st.done {
                return None;
            }
            st = self.more.wait(st).ok()?;
        }
    }

    fn publish(&self, part: Part) {
        if let Ok(mut st) = self.state.lock() {
            st.parts.push(Arc::new(part));
        }
        self.more.notify_all();
    }

    fn finish(&self, failed: bool) {
        if let Ok(mut st) = self.state.lock() {
            st.done = true;
            st.failed |= failed;
        }
        self.more.notify_all();
    }
}

/// How many segments decode at once: one thread fewer than the pool's
/// while the calling thread records, so that the recording, which finds
/// where the next segments start, always has a core (on 2 cores, 2
/// decoding threads beside it left it waiting for a time slice while a
/// thread ran out of segments); all the threads once it is done.
struct Gate {
    state: Mutex<(usize, usize)>,
    free: Condvar,
}

impl Gate {
    fn new(threads: usize) -> Self {
        Gate { state: Mutex::new((0, threads.saturating_sub(1).max(1))), free: Condvar::new() }
    }

    /// Wait for a place among the segments decoding.
    fn enter(&self) {
        let Ok(mut st) = self.state.lock() else { return };
        while st.0 >= st.1 {
            match self.free.wait(st) {
                Ok(g) => st = g,
                Err(_) => return,
            }
        }
        st.0 += 1;
    }

    fn leave(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.0 = st.0.saturating_sub(1);
        }
        self.free.notify_one();
    }

    /// `threads` segments at once from now on.
    fn widen(&self, threads: usize) {
        if let Ok(mut st) = self.state.lock() {
            st.1 = threads.max(1);
        }
        self.free.notify_all();
    }
}

/// One stream's chunks as a segment's decoder reads them: the part it is
/// in kept at hand.
struct Reader<'a> {
    live: &'a Live,
    /// The trace recorded (framed runs are read from it).
    trace: &'a [u8],
    stream: usize,
    part: Option<Arc<Part>>,
    /// The part's chunks of the stream: [lo, hi).
    lo: usize,
    hi: usize,
}

impl ChunkSource for Reader<'_> {
    /// Chunk `c` (waiting for it to be recorded); None: past the stream's
    /// end.
    fn at(&mut self, c: usize) -> Option<(&IdStream, usize, &[u8])> {
        if !(self.lo <= c && c < self.hi && self.part.is_some()) {
            let (p, local) = self.live.chunk(self.stream, c)?;
            self.lo = c - local;
            self.hi = self.lo + p.rec.streams[self.stream].n_chunks();
            self.part = Some(p);
        }
        let s = &self.part.as_ref()?.rec.streams[self.stream];
        let k = c - self.lo;
        (k < s.n_chunks()).then_some((s, k, self.trace))
    }
}

/// Segment sizes for a folded decode: guided, as loops are scheduled
/// over threads. The k-th segment of a stream (from 0) is at most
/// `min << k` bytes, so that the first ones are found, and every thread
/// busy, after a few KiB of trace; and at most an equal share for each of
/// twice the threads of the stream's bytes still to come, so that the
/// last segments are short and the threads end close together.
#[derive(Clone, Copy)]
struct Sizing {
    min: usize,
    max: usize,
    threads: usize,
}

impl Sizing {
    /// Bytes from the start of segment `k` to the target of the next cut,
    /// with `left` bytes of the stream expected from that start on.
    fn next(&self, k: usize, left: usize) -> usize {
        let grown = if k < 32 { self.min.saturating_mul(1 << k) } else { self.max };
        let share = left / (2 * self.threads).max(1);
        grown.min(share).min(self.max).max(self.min).max(1)
    }
}

/// A segment of one stream: chunks from `first` up to `end` (the next
/// segment's first chunk; usize::MAX for a stream's last segment).
#[derive(Clone, Copy)]
struct FoldPlan {
    stream: usize,
    first: usize,
    end: usize,
}

/// What a segment's folded decode left.
struct FoldResult<O> {
    out: O,
    /// The chunk where each piece starts.
    cuts: Vec<usize>,
    /// The chunk boundary where its state met the next segment's (None:
    /// ran to the end and through end of trace).
    meet: Option<usize>,
    /// The first chunk whose output is not the decoder's normal output;
    /// usize::MAX if none.
    stopped_at: usize,
}

/// Per stream, the segment results, in order (None: not decoded).
type Results<O> = Mutex<Vec<Vec<Option<FoldResult<O>>>>>;

/// Record `trace` with `tree` (a tree of its own, as
/// [`DecodeTree::record_range`] records it, in blocks of `feed` bytes) and
/// decode it on `opts.threads` threads, each segment's output written to
/// an `O` that `make` builds (as for [`decode`](super::decode)) and cut
/// into pieces ([`FoldOutput::cut`]); with the trace bytes taken. None
/// when the folded pieces cannot be the serial output (see
/// [`Outcome::Fallback`](super::Outcome)): the caller decodes serially.
pub fn decode_folded<O, F>(tree: &mut DecodeTree, trace: &[u8], feed: usize, mem: &crate::mem::MemMapper, opts: &ParallelOptions, make: F) -> Option<(Folded<O>, usize)>
where
    O: FoldOutput + 'static,
    F: Fn(u8) -> Option<(DecodeTree, Rc<RefCell<O>>)> + Sync,
{
    let part_bytes = PART.div_ceil(feed.max(1)) * feed.max(1);
    // the first part, before any thread starts: the streams, and whether
    // the trace can be decoded so
    let mut rec = tree.start_recording();
    // (the streams' outputs are not merged: no serial order needed; the
    // trace stays at hand for the decode)
    rec.drop_order();
    rec.frames_by_reference();
    rec.reserve(part_bytes.min(trace.len()));
    // (a short first part: the first segments can start sooner)
    let first_part = (part_bytes / 4).div_ceil(feed.max(1)) * feed.max(1);
    let mut index = tree.record_range(&mut rec, &trace[..trace.len().min(first_part)], 0, feed);
    if rec.bail.is_some() {
        return None;
    }
    let shared = mem.share_static()?;
    let threads = opts.threads.max(1);
    let streams = rec.streams.len();
    let mem = &SharedMem::new(shared, threads, streams);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().ok()?;
    let spare = Spare { outs: Mutex::new(Vec::new()), keep: 0, seen: Mutex::new((0, 0)) };
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let decode = DECODES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // (every part has the same streams: the first names them)
    let slots = rec.shape();
    let cx = Ctx { rec: &slots, plans: &[], mem, spare: &spare, make: &make, cancel: &cancel, decode, piece: 0 };
    let live = Live { state: Mutex::new(LiveState::default()), more: Condvar::new() };
    let gate = Gate::new(threads);
    let results: Results<O> = Mutex::new((0..streams).map(|_| Vec::new()).collect());
    // segments are cut at the first sync point past a target: the first
    // ones short, so that every thread starts soon, growing to the
    // segment size, and shorter again towards the stream's expected end,
    // so that the threads finish together (see `next_target`)
    let seg_bytes = opts.segment_bytes(trace.len());
    let split: Vec<bool> = slots.streams.iter().map(|s| s.splittable && matches!(s.protocol, OCSD_PROTOCOL_ETMV4I | OCSD_PROTOCOL_ETE)).collect();
    let mut starts: Vec<Vec<usize>> = vec![vec![0]; streams];
    let sizing = Sizing { min: opts.min_segment.min(seg_bytes), max: seg_bytes, threads };
    let mut next_target = vec![sizing.min; streams];
    let mut bytes_before = vec![0usize; streams];
    let mut chunks_before = vec![0usize; streams];
    let failed = pool.in_place_scope(|sc| {
        let (cx, live, results, cancel, gate) = (&cx, &live, &results, &cancel, &gate);
        // (segment k of its stream)
        let run = move |p: FoldPlan, k: usize| {
            let r = fold_segment(cx, live, trace, p);
            if r.is_none() {
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            if let Ok(mut res) = results.lock() {
                let v = &mut res[p.stream];
                if v.len() <= k {
                    v.resize_with(k + 1, || None);
                }
                v[k] = r;
            }
        };
        let spawn = |p: FoldPlan, k: usize, gated: bool| {
            sc.spawn(move |_| {
                if gated {
                    gate.enter();
                }
                run(p, k);
                if gated {
                    gate.leave();
                }
            });
        };
        // streams decoded whole start at once, and wait for their data
        for si in (0..streams).filter(|&si| !split[si]) {
            spawn(FoldPlan { stream: si, first: 0, end: usize::MAX }, 0, false);
        }
        let failed = loop {
            // cut the new part's data at sync points: each start known
            // lets the segment before it go
            for si in (0..streams).filter(|&si| split[si]) {
                let s = &rec.streams[si];
                for off in etmv4_sync_points(&s.data) {
                    let at = bytes_before[si] + off;
                    if at < next_target[si] {
                        continue;
                    }
                    let local = s.chunk_at_byte(off);
                    let c = chunks_before[si] + local;
                    let st = &mut starts[si];
                    if c > *st.last().unwrap_or(&0) {
                        let k = st.len() - 1;
                        spawn(FoldPlan { stream: si, first: st[k], end: c }, k, true);
                        st.push(c);
                    }
                    // the stream's bytes expected in the whole trace, at
                    // the rate of its bytes so far
                    let seen = bytes_before[si] + s.data.len();
                    let expected = (seen as u128 * trace.len() as u128 / index.max(1) as u128) as usize;
                    next_target[si] = at + sizing.next(st.len() - 1, expected.saturating_sub(at));
                }
            }
            let firsts = chunks_before.clone();
            let active: Vec<bool> = rec.streams.iter().map(|s| !s.data.is_empty()).collect();
            for si in 0..streams {
                bytes_before[si] += rec.streams[si].data.len();
                chunks_before[si] += rec.streams[si].n_chunks();
            }
            // (the bytes of framed runs are read from the trace: the data
            // they were scanned in records the next part)
            let scratch: Vec<Vec<u8>> = rec.streams.iter_mut().map(|s| s.detach_framed()).collect();
            live.publish(Part { rec, first: firsts });
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                break true;
            }
            if index >= trace.len() {
                break false;
            }
            // (the streams of the first part: what start_recording found
            // then does not change during the decode)
            rec = slots.shape();
            for (s, d) in rec.streams.iter_mut().zip(scratch) {
                s.data = d;
            }
            let to = trace.len().min(index + part_bytes);
            // (room for the streams that had data in the last part)
            rec.reserve_for(to - index, |si| active[si]);
            let reached = tree.record_range(&mut rec, &trace[..to], index, feed);
            if rec.bail.is_some() || reached == index {
                break true;
            }
            index = reached;
        };
        if failed {
            gate.widen(threads);
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            live.finish(true);
        } else {
            live.finish(false);
            // each split stream's last segment: to the pool, behind the
            // stream's other segments
            for si in (0..streams).filter(|&si| split[si] && starts[si].len() > 1) {
                let k = starts[si].len() - 1;
                spawn(FoldPlan { stream: si, first: starts[si][k], end: usize::MAX }, k, true);
            }
            // the streams found in one segment, decoded here, where the
            // recording kept a core (spawned, they would wait behind the
            // segments queued and end the decode with a thread idle)
            for si in (0..streams).filter(|&si| split[si] && starts[si].len() == 1) {
                run(FoldPlan { stream: si, first: 0, end: usize::MAX }, 0);
            }
            gate.widen(threads);
            super::drop_kits::<O>(decode);
        }
        failed
    });
    // (the stacks the pool's threads kept go with the threads, which end
    // as the pool is dropped: nothing waits for them)
    if failed || live.state.lock().ok()?.failed {
        return None;
    }
    let results = results.into_inner().ok()?;
    let mut summary = Summary::default();
    let mut outs = Vec::new();
    for (si, mut segs) in results.into_iter().enumerate() {
        summary.segments += segs.len();
        let mut cur = 0;
        let mut start = 0;
        loop {
            let r = segs.get_mut(cur)?.take()?;
            let stop = r.meet.map_or(usize::MAX, |c| c.max(start));
            if r.stopped_at < stop {
                return None;
            }
            // the pieces from the chunk where this segment took over up to
            // the one where the next takes over: both must be cuts
            let a = r.cuts.iter().position(|&c| c == start)?;
            let b = if stop == usize::MAX { r.cuts.len() } else { r.cuts.iter().position(|&c| c == stop)? };
            summary.largest_output = summary.largest_output.max(r.out.len());
            outs.push((r.out, a..b));
            match r.meet {
                Some(c) => {
                    summary.stitches += 1;
                    summary.overlap_chunks += 2 * c.saturating_sub(starts[si].get(cur + 1).copied().unwrap_or(c));
                    start = stop;
                    cur += 1;
                }
                None => break,
            }
        }
    }
    Some((Folded { outs, summary }, index))
}

/// Decode segment `p` from its first chunk, its output cut at the chunk
/// boundaries where a stitch can happen; past its end, a probe runs beside
/// it (as [`super::walk_segment`] runs it) until their states are
/// equal at a boundary.
fn fold_segment<O: FoldOutput + 'static>(cx: &Ctx<'_, O>, live: &Live, trace: &[u8], p: FoldPlan) -> Option<FoldResult<O>> {
    let mut chunks = Reader { live, trace, stream: p.stream, part: None, lo: 0, hi: 0 };
    let mut r = Runner::new(cx, p.stream, false)?;
    let mut cuts = vec![p.first];
    // where the previous segment's decoder may meet this one's state (and
    // where this one's may meet the next's, told by the walk): pieces end
    // there
    let mut taken_at = p.first + CHECK_EVERY;
    let next = (p.end != usize::MAX).then_some(p.end);
    let walked = walk_segment(cx, &mut r, &mut chunks, p.first, next, |r, c, check_at, at_end| {
        if c > p.first && (c == taken_at || c == check_at || at_end) {
            r.out.borrow_mut().cut();
            cuts.push(c);
        }
        if c == taken_at {
            taken_at = next_check(p.first, c);
        }
        Some(taken_at.min(check_at))
    })?;
    Some(FoldResult { out: r.finish(cx), cuts, meet: walked.meet, stopped_at: walked.stopped_at })
}
