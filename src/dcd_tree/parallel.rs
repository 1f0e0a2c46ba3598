//! Parallel decode: the elements of a serial decode, in the same order with
//! the same indexes, decoded on several threads.
//!
//! # How
//!
//! 1. **Record.** The trace is run through the tree's frame deformatter
//!    exactly as a serial decode would run it (same blocks), but each trace
//!    ID's data is kept instead of decoded: per ID, the chunks the
//!    deformatter hands over, each numbered with its place in the serial
//!    sequence of hand-overs. Everything a decoder outputs (elements, log
//!    lines, packet lines) is output during one hand-over, so that number
//!    places it in the serial output.
//! 2. **Split.** Each ID is a separate stream. An ETMv4 / ETE stream is
//!    cut into segments of about equal bytes (a quarter of a thread's
//!    share, at most [`ParallelOptions::max_segment`]), each starting at
//!    the first synchronisation point (an A-sync packet followed by a trace
//!    info packet, found by [`etmv4_sync_points`]) after its target.
//!    Protocols without a splitter (ETMv3, PTM, STM, ITM) are one segment
//!    per ID.
//! 3. **Decode.** Segments are started on a thread pool in the order the
//!    output needs them, at most [`ParallelOptions::lookahead`] beyond one
//!    per thread and one per split stream being given out (a stream decoded
//!    whole starts when the output reaches it, outside that count), so the
//!    output waiting in memory is bounded whatever the trace's size. Each is decoded by a
//!    decode stack in the state of a new one (built by the caller's
//!    factory, exactly as the serial one) from its first chunk; the output
//!    length after each chunk is noted. At its end a probe (another such
//!    stack, whose elements go nowhere) starts on the next segment's first
//!    chunk, as that segment's own stack does, and both run on until their
//!    states are equal at a chunk boundary (see
//!    [`TraceIdDecoder::same_state`]): from there the next segment's
//!    decoder decodes the same bytes from the same state as the serial
//!    one, so its output is the serial output. Should the states never meet, the segment runs on
//!    to the end of the stream: slower, never different.
//!
//!    Nothing is built afresh per segment where it can be kept: each
//!    worker thread keeps the tree and stack of its last segment (and of
//!    its last probe) of each trace ID and renews them for its next one
//!    (ETMv4 / ETE stacks without packet observers: the processor and
//!    decoder are put in the state of new ones, see `renew_stack`), and
//!    with them their memory mapper's cache and the decoder's
//!    decoded-block cache, which change how fast, not what, they decode.
//!    Other stacks are built by the factory for each segment, and still
//!    get the thread's memory mapper and the block cache of the thread's
//!    last decoder of that trace ID. Outputs given out are emptied and
//!    used again by later segments.
//! 4. **Stitch.** On the calling thread, the chunk outputs are given out
//!    in serial hand-over order, then each ID's end-of-trace output in ID
//!    order, as the tree gives end of trace to its IDs. A segment hands its
//!    output over in parts while it decodes (when the output type can be
//!    cut, [`SegmentOutput::split_front`]): the output of chunks before the
//!    segment's end is its own, so the segment being given out streams to
//!    `emit` instead of waiting in memory for its end; past its end, the
//!    segment's result (where it met the next one) decides.
//!
//! Anything that the serial decode would answer differently (a client
//! that waits, a fatal error, a data-less operation from the deformatter,
//! a deformatter error message, memory read through callbacks) makes
//! [`decode`] return [`Outcome::Fallback`]: the caller decodes serially
//! instead. Memory from files and buffers is shared between threads; each
//! thread has its own memory access cache. Memory read through client
//! callbacks is never decoded in parallel: a callback must see its reads in
//! serial order, and no read may happen while earlier elements still wait
//! for the client.
#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::rc::Rc;

use super::{DecodeTree, Discard, Interfaces, Stack, StackEnv, TraceIdDecoder};
use crate::etmv4::decoder::reuse::DecoderCaches;
use crate::etmv4::{EtmV4IPktDecoder, EtmV4IPktProc};
use crate::abi::*;
use crate::common::{ErrorLog, GenElemSink, OcsdError};
use crate::deformatter::{single_id_frame_at, DeformatterOut};

mod fold;
pub use fold::{decode_folded, FoldOutput, Folded};

/// How to split the work.
#[derive(Clone, Copy, Debug)]
pub struct ParallelOptions {
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Fewest bytes of one trace ID's data in a segment: streams shorter
    /// than two segments are decoded whole.
    pub min_segment: usize,
    /// Most bytes of one trace ID's data in a segment (where sync points
    /// allow): the output of a segment is held until it is given out, so
    /// this bounds the memory used.
    pub max_segment: usize,
    /// Segments decoded ahead of the output, beyond one per thread: the
    /// output of at most `threads + lookahead` segments waits in memory,
    /// besides the segment being given out of each trace ID.
    pub lookahead: usize,
    /// Output (in [`SegmentOutput::len`] units) a segment's decoder hands
    /// to the calling thread at a time, when its output can be cut
    /// ([`SegmentOutput::split_front`]): the output of the segment being
    /// given out goes out while it is decoded instead of waiting in memory
    /// for the segment's end. 0: whole segments only.
    pub piece: usize,
}

impl ParallelOptions {
    /// `threads` threads; segments of a quarter of a thread's share of a
    /// trace ID's data, within 4 KiB and 8 KiB (a stitch costs a few
    /// hundred bytes decoded again, twice, and a few state comparisons;
    /// the decode of 8 KiB of instruction trace can give a few MB of
    /// output, held in memory until its turn: 16 KiB segments, with twice
    /// the memory in flight, touched more fresh pages than the stitches
    /// they save cost), and one segment ahead beyond one per thread.
    pub fn new(threads: usize) -> Self {
        let threads = threads.max(1);
        ParallelOptions { threads, min_segment: 4 * 1024, max_segment: 8 * 1024, lookahead: 1, piece: 1024 * 1024 }
    }

    /// For [`decode_folded`] (`Decoder::decode_parallel_fold`), where no
    /// output waits in memory: `threads` threads, segments of a quarter of
    /// a thread's share of a trace ID's data at most, from 4 KiB to 64 KiB
    /// (fewer stitches than [`ParallelOptions::new`]'s 8 KiB at most: on
    /// bugfix-exact-match's 1 MiB, 2 threads took 33 ms with either
    /// 16 KiB or 64 KiB, 34 ms with 8 KiB), shorter at the start and
    /// towards the end of the trace (see `decode_folded`).
    pub fn folding(threads: usize) -> Self {
        ParallelOptions { max_segment: 64 * 1024, ..Self::new(threads) }
    }

    /// Segments of about `segment` bytes and a short look-ahead, to
    /// exercise many stitches and the bounded window (tests).
    pub fn stress(threads: usize, segment: usize) -> Self {
        let segment = segment.max(1);
        ParallelOptions { threads: threads.max(1), min_segment: segment, max_segment: segment, lookahead: 1, piece: 16 * 1024 }
    }

    /// Bytes per segment for a stream of `len` bytes.
    fn segment_bytes(&self, len: usize) -> usize {
        let share = len / self.threads.saturating_mul(4).max(1);
        share.min(self.max_segment).max(self.min_segment).max(1)
    }
}

/// Data hand-overs from the deformatter to a trace ID (chunks) that
/// follow one pattern: each of `len` bytes, the bytes of each following
/// those of the one before in [`IdStream::data`], and its trace index
/// `step` after the one before. Frames of one trace ID are one run (15
/// bytes every 16), where a record per hand-over took 16 bytes for every
/// 16 bytes of trace. (What follows the bytes, which few protocols need,
/// is kept beside, in [`IdStream::tail_ends`].)
#[derive(Clone, Copy, Debug)]
struct Run {
    /// The number of the first chunk in the stream.
    first: u32,
    /// The first chunk's trace index.
    index: ocsd_trc_index_t,
    /// Where the first chunk's bytes start in [`IdStream::data`].
    start: u32,
    len: u32,
    step: u32,
    /// Each chunk's bytes are those of the trace's frame at its trace
    /// index (a frame of one ID), not kept in [`IdStream::data`] once
    /// the part is published (see [`IdStream::detach_framed`]).
    framed: bool,
}

/// A chunk's bytes: kept in the recording, or unpacked from the trace.
enum ChunkBytes<'a> {
    Kept(&'a [u8]),
    Frame([u8; 15]),
}

impl Run {
    /// Chunk `i` of the run: its trace index and its bytes' place.
    fn chunk(&self, i: usize) -> (ocsd_trc_index_t, std::ops::Range<usize>) {
        // (i is below the run's length, whose bytes' end fits in 32 bits)
        let index = self.index.wrapping_add((i as u32).wrapping_mul(self.step));
        let start = self.start as usize + i * self.len as usize;
        (index, start..start + self.len as usize)
    }
}

/// One decoder slot's recorded data.
struct IdStream {
    slot: u8,
    data: Vec<u8>,
    tails: Vec<u8>,
    /// Streams that keep tails: where each chunk's tail ends in `tails`
    /// (it starts where the one before ends); empty for the others.
    tail_ends: Vec<u32>,
    runs: Vec<Run>,
    /// Chunks in the runs.
    chunks: usize,
    /// The trace index and data offset of the last run's next chunk.
    run_next: (ocsd_trc_index_t, u32),
    /// Keep what follows each chunk in the deformatter's memory (protocols
    /// whose packet processors show those bytes).
    keep_tail: bool,
    /// The protocol compares decoder states (within-ID splitting).
    splittable: bool,
    protocol: ocsd_trace_protocol_t,
}

impl IdStream {
    /// A stream with no data for `slot`; one whose protocol does not
    /// compare decoder states (it is not split) keeps tails.
    fn new(slot: u8, splittable: bool, protocol: ocsd_trace_protocol_t) -> Self {
        IdStream {
            slot,
            data: Vec::new(),
            tails: Vec::new(),
            tail_ends: Vec::new(),
            runs: Vec::new(),
            chunks: 0,
            run_next: (0, 0),
            keep_tail: !splittable,
            splittable,
            protocol,
        }
    }

    /// The number of chunks.
    fn n_chunks(&self) -> usize {
        self.chunks
    }

    /// The run that holds chunk `k`, by its place in [`IdStream::runs`].
    fn run_of(&self, k: usize) -> Option<usize> {
        if k >= self.chunks {
            return None;
        }
        self.runs.partition_point(|r| r.first as usize <= k).checked_sub(1)
    }

    /// The chunks in run `r`.
    fn run_len(&self, r: usize) -> usize {
        let end = self.runs.get(r + 1).map_or(self.chunks, |n| n.first as usize);
        self.runs.get(r).map_or(0, |x| end.saturating_sub(x.first as usize))
    }

    /// Chunk `k`, in run `r`.
    fn run_chunk<'s>(&'s self, r: &Run, k: usize, trace: &[u8]) -> Option<(ocsd_trc_index_t, ChunkBytes<'s>, &'s [u8])> {
        let (index, bytes) = r.chunk(k.checked_sub(r.first as usize)?);
        let data = if r.framed {
            ChunkBytes::Frame(single_id_frame_at(trace, index as usize)?)
        } else {
            ChunkBytes::Kept(self.data.get(bytes)?)
        };
        let tail = match self.tail_ends.get(k) {
            Some(&end) => {
                let start = if k == 0 { 0 } else { *self.tail_ends.get(k - 1)? };
                self.tails.get(start as usize..end as usize)?
            }
            None => &[],
        };
        Some((index, data, tail))
    }

    /// Give chunks `from..to` in order (fewer past the end) to `f` (trace
    /// index, bytes, tail), while it returns true; returns how many it
    /// took. `trace` holds the frames of framed runs.
    fn for_chunks(&self, from: usize, to: usize, trace: &[u8], mut f: impl FnMut(ocsd_trc_index_t, &[u8], &[u8]) -> bool) -> usize {
        let to = to.min(self.chunks);
        let Some(mut ri) = self.run_of(from) else { return 0 };
        let mut k = from;
        while k < to {
            let Some(r) = self.runs.get(ri) else { break };
            let end = (r.first as usize + self.run_len(ri)).min(to);
            if r.framed && self.tail_ends.is_empty() {
                // (frame after frame of the trace)
                let (mut index, _) = r.chunk(k - r.first as usize);
                while k < end {
                    match single_id_frame_at(trace, index as usize) {
                        Some(d) if f(index, &d, &[]) => {}
                        _ => return k - from,
                    }
                    index = index.wrapping_add(r.step);
                    k += 1;
                }
                ri += 1;
                continue;
            }
            while k < end {
                let Some((index, data, tail)) = self.run_chunk(r, k, trace) else { return k - from };
                let ok = match data {
                    ChunkBytes::Kept(d) => f(index, d, tail),
                    ChunkBytes::Frame(d) => f(index, &d, tail),
                };
                if !ok {
                    return k - from;
                }
                k += 1;
            }
            ri += 1;
        }
        k - from
    }

    /// Keep only the bytes of chunks not in framed runs (they are read
    /// from the trace); returns the data as it was, emptied, to record
    /// the next part in. [`IdStream::chunk_at_byte`] no longer applies.
    fn detach_framed(&mut self) -> Vec<u8> {
        let mut old = std::mem::take(&mut self.data);
        if self.runs.iter().any(|r| !r.framed) {
            let mut kept = Vec::new();
            for ri in 0..self.runs.len() {
                let n = self.run_len(ri);
                let r = &mut self.runs[ri];
                if r.framed {
                    continue;
                }
                let from = r.start as usize;
                let to = from + n * r.len as usize;
                // (offsets fit: the kept bytes are fewer than the data's)
                r.start = kept.len() as u32;
                kept.extend_from_slice(old.get(from..to).unwrap_or(&[]));
            }
            self.data = kept;
        }
        old.clear();
        old
    }

    /// The last chunk whose bytes start at or before data byte `off`.
    fn chunk_at_byte(&self, off: usize) -> usize {
        let Some(ri) = self.runs.partition_point(|r| r.start as usize <= off).checked_sub(1) else { return 0 };
        let r = &self.runs[ri];
        let n = self.run_len(ri).max(1);
        let i = (off - r.start as usize).checked_div(r.len as usize).unwrap_or(n - 1).min(n - 1);
        r.first as usize + i
    }

    /// Count a chunk of `len` bytes at trace index `index`, its bytes just
    /// added at the end of the data (at `start`); false when the stream
    /// has as many chunks as can be counted.
    fn push_chunk(&mut self, index: ocsd_trc_index_t, start: u32, len: u32, framed: bool) -> bool {
        let Ok(k) = u32::try_from(self.chunks) else { return false };
        if let Some(r) = self.runs.last_mut() {
            // (the next chunk of the last run starts where its bytes end)
            if len == r.len && start == self.run_next.1 && framed == r.framed {
                if k - r.first == 1 {
                    r.step = index.wrapping_sub(r.index);
                    self.run_next.0 = index;
                }
                if index == self.run_next.0 {
                    self.run_next = (index.wrapping_add(r.step), start.wrapping_add(len));
                    self.chunks += 1;
                    return true;
                }
            }
        }
        self.runs.push(Run { first: k, index, start, len, step: 0, framed });
        // (the second chunk of a run sets its step)
        self.run_next = (index, start.wrapping_add(len));
        self.chunks += 1;
        true
    }
}

/// The trace as the serial decode would hand it to each trace ID.
pub struct Recording {
    streams: Vec<IdStream>,
    by_slot: [Option<usize>; 128],
    /// The stream of each hand-over, in serial order (when kept).
    order: Vec<u8>,
    keep_order: bool,
    /// Chunks that are a frame of the trace are read from it at decode
    /// (see [`Run::framed`]).
    by_reference: bool,
    /// Why the recording cannot be decoded in parallel.
    bail: Option<&'static str>,
}

impl Recording {
    /// Why this recording must be decoded serially, if it must.
    pub fn unsupported(&self) -> Option<&'static str> {
        self.bail
    }

    /// Make room for the recording of `bytes` bytes of trace (up to
    /// 64 MiB; past that, growing costs little beside the decode): each
    /// trace ID's data, and one hand-over per 16 bytes (a frame) in the
    /// serial order, could be all of it. Room not written to is never
    /// touched: it costs address space, not memory. Room that cannot be
    /// had is not taken. (Growing as the data comes copied each vector
    /// again at every doubling: 4.0 ms -> 3.5 ms to record
    /// bugfix-exact-match's 1 MiB.)
    pub fn reserve(&mut self, bytes: usize) {
        self.reserve_for(bytes, |_| true);
    }

    /// [`Self::reserve`] for the streams `active` names only (the others
    /// grow as their data comes). Each vector reserved costs a page or two
    /// besides the room used (the allocator's header after it): recorded
    /// a part at a time, the streams with no data in the last part need
    /// none.
    pub(crate) fn reserve_for(&mut self, bytes: usize, active: impl Fn(usize) -> bool) {
        let bytes = bytes.min(64 << 20);
        let frames = bytes / 16 + 1;
        for (i, s) in self.streams.iter_mut().enumerate() {
            if active(i) {
                let _ = s.data.try_reserve(bytes);
            }
        }
        if self.keep_order {
            let _ = self.order.try_reserve(frames);
        }
    }

    /// Keep no serial order of the hand-overs (see [`Recording::order`]):
    /// a decode that does not merge the streams' outputs needs none.
    pub(crate) fn drop_order(&mut self) {
        self.keep_order = false;
        self.order = Vec::new();
    }

    /// Chunks that are a frame of the trace recorded with
    /// [`DecodeTree::record_range`] are read from the trace at decode
    /// (which must then be given the same trace) instead of copied.
    pub(crate) fn frames_by_reference(&mut self) {
        self.by_reference = true;
    }

    /// A recording of the same streams with no data.
    fn shape(&self) -> Recording {
        let streams = self
            .streams
            .iter()
            .map(|s| IdStream::new(s.slot, s.splittable, s.protocol))
            .collect();
        Recording { streams, by_slot: self.by_slot, order: Vec::new(), keep_order: self.keep_order, by_reference: self.by_reference, bail: None }
    }

    /// Bytes recorded for each trace ID slot.
    pub fn bytes_per_slot(&self) -> Vec<(u8, usize)> {
        self.streams.iter().map(|s| (s.slot, s.data.len())).collect()
    }

    #[inline(always)]
    fn push(&mut self, slot: u8, index: ocsd_trc_index_t, data: &[u8], tail: &[u8], framed: bool) {
        let Some(si) = self.by_slot[slot as usize] else { return };
        let s = &mut self.streams[si];
        let tail = if s.keep_tail { tail } else { &[] };
        // (offsets kept in 32 bits: a trace ID's data beyond 4 GiB is
        // decoded serially)
        let fits = |have: usize, more: usize| u32::try_from(have.saturating_add(more)).is_ok();
        if !fits(s.data.len(), data.len()) || !fits(s.tails.len(), tail.len()) || !fits(s.chunks, 1) {
            self.bail.get_or_insert("a trace ID's data too large to record");
            return;
        }
        // (each value below is at most an end that fits)
        let (start, len) = (s.data.len() as u32, data.len() as u32);
        s.data.extend_from_slice(data);
        if s.keep_tail {
            s.tails.extend_from_slice(tail);
            s.tail_ends.push(s.tails.len() as u32);
        }
        s.push_chunk(index, start, len, framed);
        if self.keep_order {
            self.order.push(si as u8);
        }
    }

    /// For each (stream, chunk) of `wanted`, its place in the serial order
    /// of hand-overs (usize::MAX: none, or no order kept).
    fn places(&self, wanted: &[(usize, usize)]) -> Vec<usize> {
        let mut out = vec![usize::MAX; wanted.len()];
        let mut by: Vec<usize> = (0..wanted.len()).collect();
        by.sort_by_key(|&i| std::cmp::Reverse(wanted[i]));
        // per stream, the wanted chunks still to be found, the nearest last
        let mut todo: Vec<Vec<usize>> = vec![Vec::new(); self.streams.len()];
        for i in by {
            if let Some(t) = todo.get_mut(wanted[i].0) {
                t.push(i);
            }
        }
        let mut seen = vec![0usize; self.streams.len()];
        for (p, &si) in self.order.iter().enumerate() {
            let si = si as usize;
            let (Some(t), Some(n)) = (todo.get_mut(si), seen.get_mut(si)) else { continue };
            while let Some(&i) = t.last() {
                if wanted[i].1 != *n {
                    break;
                }
                out[i] = p;
                t.pop();
            }
            *n += 1;
        }
        out
    }
}

/// The deformatter's output while recording.
struct RecordOut<'a> {
    rec: &'a mut Recording,
    /// The block of trace being recorded and its trace index, when its
    /// frames may be read from the trace at decode.
    block: Option<(&'a [u8], ocsd_trc_index_t)>,
    tree_ids: [bool; 128],
    dfmt_log: Option<&'a mut (dyn ErrorLog + 'static)>,
    capture: Capture,
}

/// Deformatter messages while recording when the tree has no separate
/// deformatter logger: they would go to the tree's log ahead of the
/// decoders' messages, so the recording is given up.
struct Capture(bool);
impl ErrorLog for Capture {
    fn log_error(&mut self, _: &str, _: &OcsdError) {
        self.0 = true;
    }
    fn log_message(&mut self, _: &str, _: ocsd_err_severity_t, _: &str) {
        self.0 = true;
    }
}

impl DeformatterOut for RecordOut<'_> {
    fn id_attached(&self, id: u8) -> bool {
        self.tree_ids.get(id as usize).copied().unwrap_or(false)
    }
    fn id_data(&mut self, id: u8, index: ocsd_trc_index_t, data: &[u8], tail: &[u8]) -> (ocsd_datapath_resp_t, usize) {
        if data.is_empty() {
            // the stack answers this with a fatal error: serial only
            self.rec.bail.get_or_insert("empty data block");
        }
        // (a chunk whose bytes are those of the frame at its index)
        let framed = match (self.block, <&[u8; 15]>::try_from(data)) {
            (Some((b, base)), Ok(data)) => single_id_frame_at(b, index.wrapping_sub(base) as usize).is_some_and(|d| d == *data),
            _ => false,
        };
        self.rec.push(id, index, data, tail, framed);
        (OCSD_RESP_CONT, data.len())
    }
    /// (the frame is the block's at `index`: read from the trace at
    /// decode when the block's frames are)
    #[inline]
    fn id_frame(&mut self, id: u8, index: ocsd_trc_index_t, data: &[u8; 15], tail: &[u8]) -> (ocsd_datapath_resp_t, usize) {
        debug_assert!(self.block.is_none_or(|(b, base)| single_id_frame_at(b, index.wrapping_sub(base) as usize) == Some(*data)));
        self.rec.push(id, index, data, tail, self.block.is_some());
        (OCSD_RESP_CONT, data.len())
    }
    fn id_op_all(&mut self, _op: ocsd_datapath_op_t, _index: ocsd_trc_index_t) -> ocsd_datapath_resp_t {
        self.rec.bail.get_or_insert("data-less operation during the trace");
        OCSD_RESP_CONT
    }
    fn raw_frame(&mut self, _: ocsd_datapath_op_t, _: ocsd_trc_index_t, _: ocsd_rawframe_elem_t, _: &[u8], _: u8) {}
    fn has_raw_monitor(&self) -> bool {
        false
    }
    fn logger(&mut self) -> &mut dyn ErrorLog {
        match self.dfmt_log.as_deref_mut() {
            Some(l) => l,
            None => &mut self.capture,
        }
    }
}

impl DecodeTree {
    /// Start recording this tree's input for [`decode`]: feed the trace
    /// with [`DecodeTree::record_data`] as it would be fed to
    /// [`DecodeTree::data_in_with_tail`]. The tree's decoders see nothing.
    pub fn start_recording(&mut self) -> Recording {
        let mut rec = Recording { streams: Vec::new(), by_slot: [None; 128], order: Vec::new(), keep_order: true, by_reference: false, bail: None };
        if self.raw_monitor.is_some() {
            rec.bail = Some("raw frame output");
        }
        if !self.mapper.can_share_static() {
            rec.bail = Some("memory read through a callback");
        }
        let filter = self.id_filter;
        for (slot, s) in self.stacks.iter().enumerate() {
            let Some(stack) = s.as_deref() else { continue };
            if self.deformatter.is_some() && !filter.is_none_or(|f| f[slot]) {
                continue;
            }
            // (a stack compares its state with others' if it can with its own)
            let splittable = stack.same_state(stack);
            rec.by_slot[slot] = Some(rec.streams.len());
            rec.streams.push(IdStream::new(slot as u8, splittable, stack.protocol()));
        }
        rec
    }

    /// Record `trace` from offset `from` to its end, in blocks of `feed`
    /// bytes (as a serial decode would be fed), until the recording cannot
    /// go on; returns the offset reached.
    pub fn record_range(&mut self, rec: &mut Recording, trace: &[u8], from: usize, feed: usize) -> usize {
        let mut index = from;
        while index < trace.len() && rec.unsupported().is_none() {
            let end = trace.len().min(index + feed.max(1));
            // (frames are found in the trace by their trace index: its
            // offset there, up to 4 GiB)
            let by_reference = rec.by_reference && u32::try_from(end).is_ok();
            let (_, used) = self.record_block(rec, index as ocsd_trc_index_t, &trace[index..end], &[], by_reference);
            if used == 0 {
                break;
            }
            index += used;
        }
        index
    }

    /// Record one block of trace (see [`DecodeTree::start_recording`]).
    pub fn record_data(&mut self, rec: &mut Recording, index: ocsd_trc_index_t, data: &[u8], tail: &[u8]) -> (ocsd_datapath_resp_t, usize) {
        self.record_block(rec, index, data, tail, false)
    }

    /// [`DecodeTree::record_data`]; `by_reference`: the frames of the block
    /// are read from it at decode (see [`Recording::frames_by_reference`]).
    fn record_block(&mut self, rec: &mut Recording, index: ocsd_trc_index_t, data: &[u8], tail: &[u8], by_reference: bool) -> (ocsd_datapath_resp_t, usize) {
        if data.is_empty() {
            rec.bail.get_or_insert("empty data block");
            return (OCSD_RESP_CONT, 0);
        }
        let mut tree_ids = [false; 128];
        for (i, t) in tree_ids.iter_mut().enumerate() {
            *t = rec.by_slot[i].is_some();
        }
        match self.deformatter.as_mut() {
            Some(d) => {
                let block = by_reference.then_some((data, index));
                let mut out = RecordOut { rec, block, tree_ids, dfmt_log: self.dfmt_logger.as_deref_mut(), capture: Capture(false) };
                let r = d.data_in(OCSD_OP_DATA, index, data, &mut out);
                if out.capture.0 {
                    out.rec.bail.get_or_insert("deformatter message");
                }
                if !resp_is_cont(r.0) || r.1 != data.len() {
                    out.rec.bail.get_or_insert("deformatter stopped");
                }
                r
            }
            None => {
                if rec.by_slot[0].is_none() {
                    rec.bail.get_or_insert("no decoder");
                }
                rec.push(0, index, data, tail, false);
                (OCSD_RESP_CONT, data.len())
            }
        }
    }
}

/// Offsets in one ETMv4 / ETE trace ID's byte stream where an alignment
/// synchronisation packet (11 zero bytes, then 0x80) starts that is
/// followed by a trace info packet (header 0x01): points where a decoder
/// started unsynchronised takes up the trace.
pub fn etmv4_sync_points(data: &[u8]) -> Vec<usize> {
    const ZEROS: usize = 11;
    let mut out = Vec::new();
    // Any run of 11 zero bytes holds one of the bytes looked at, which are
    // 11 apart from the byte after the previous run: the trace is scanned
    // a byte in 11 (this runs on one thread before the decode starts).
    let mut i = 0usize;
    while i < data.len() {
        if data[i] != 0 {
            i += ZEROS;
            continue;
        }
        let mut start = i;
        while start > 0 && data[start - 1] == 0 {
            start -= 1;
        }
        let mut end = i;
        while end < data.len() && data[end] == 0 {
            end += 1;
        }
        if end - start >= ZEROS && data.get(end) == Some(&0x80) && data.get(end + 1) == Some(&0x01) {
            out.push(end - ZEROS);
        }
        i = end + 1;
    }
    out
}

/// Output a segment's decode writes to (through the sinks and loggers of
/// the tree its factory made): its length is needed to cut it at chunk
/// boundaries.
pub trait SegmentOutput: Default + Send {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Empty it for another segment, keeping its allocations: [`decode`]
    /// hands outputs already given out to later segments (in place of the
    /// one the factory made), so that a decode does not allocate and
    /// touch fresh memory for every segment.
    fn recycle(&mut self);
    /// What it can hold without growing, in the units of
    /// [`SegmentOutput::len`]: outputs grown much larger than the average
    /// segment's are not used again, so that a few large segments do not
    /// leave every output large.
    fn capacity(&self) -> usize;
    /// Move the finished front of the output into a new output when it
    /// holds at least `min` units beyond the last part moved: the new one
    /// holds the text from where the last part ended up to the returned
    /// offset, at the same offsets (a range of it is given to `emit` as a
    /// range of the whole); this one keeps the rest, its length unchanged.
    /// None (the default): the output is given out whole.
    fn split_front(&mut self, _min: usize) -> Option<(Self, usize)> {
        None
    }
}

impl SegmentOutput for String {
    fn len(&self) -> usize {
        String::len(self)
    }
    fn recycle(&mut self) {
        self.clear();
    }
    fn capacity(&self) -> usize {
        String::capacity(self)
    }
}

impl<T: Send> SegmentOutput for Vec<T> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn recycle(&mut self) {
        self.clear();
    }
    fn capacity(&self) -> usize {
        Vec::capacity(self)
    }
}

/// A segment of one stream: chunks from `first` up to `end` (the next
/// segment's first chunk), decoded on past `end` until stitched.
#[derive(Clone, Copy, Debug)]
struct SegPlan {
    stream: usize,
    first: usize,
    end: usize,
    /// The stream's next segment (its plan index).
    next: Option<usize>,
}

/// What a segment's decode left.
struct SegResult<O> {
    out: O,
    /// Output length after each chunk from the segment's first, at
    /// `[k]` the end of chunk first+k-1 (`[0]` = before any); those not
    /// handed over with parts of the output ([`Msg::Part`]).
    marks: Vec<usize>,
    /// Chunk boundary and segment where the states met (None: ran to the
    /// end and through end of trace).
    meet: Option<(usize, usize)>,
    /// The first chunk whose output is not the decoder's normal output (it
    /// stopped there: a fatal or waiting response); usize::MAX if none.
    stopped_at: usize,
    /// Output length after end of trace (when run to the end).
    eot_mark: Option<usize>,
}

/// The memory of the tree, files and buffers only, and what each worker
/// thread keeps from segment to segment: its memory mapper (the same bytes
/// with a cache of its own) and, per stream, the caches of its last
/// segment's decoder and of its last probe's (see
/// [`crate::etmv4::decoder::reuse`]), so that segments do not start cold.
struct SharedMem {
    base: std::sync::Mutex<crate::mem::MemMapper>,
    per_thread: Vec<std::sync::Mutex<Kept>>,
    streams: usize,
}

/// What one worker thread keeps between segments.
#[derive(Default)]
struct Kept {
    mapper: Option<crate::mem::MemMapper>,
    /// Per stream: [segment decoder's caches, probe's caches].
    caches: Vec<[Option<DecoderCaches>; 2]>,
}

impl SharedMem {
    fn new(base: crate::mem::MemMapper, threads: usize, streams: usize) -> Self {
        SharedMem { base: std::sync::Mutex::new(base), per_thread: (0..threads).map(|_| Default::default()).collect(), streams }
    }

    fn kept(&self) -> Option<std::sync::MutexGuard<'_, Kept>> {
        let mut k = rayon::current_thread_index().and_then(|t| self.per_thread.get(t))?.lock().ok()?;
        if k.caches.len() < self.streams {
            k.caches.resize_with(self.streams, Default::default);
        }
        Some(k)
    }

    fn take(&self) -> Option<crate::mem::MemMapper> {
        match self.kept().and_then(|mut k| k.mapper.take()) {
            Some(m) => Some(m),
            None => self.base.lock().ok()?.share_static(),
        }
    }

    fn give_back(&self, m: crate::mem::MemMapper) {
        if let Some(mut k) = self.kept() {
            k.mapper = Some(m);
        }
    }

    /// The decoder caches this thread kept for `stream` (`probe`: a
    /// probe's).
    fn take_caches(&self, stream: usize, probe: bool) -> Option<DecoderCaches> {
        self.kept()?.caches.get_mut(stream)?[probe as usize].take()
    }

    fn keep_caches(&self, stream: usize, probe: bool, c: DecoderCaches) {
        if let Some(slot) = self.kept().as_deref_mut().and_then(|k| k.caches.get_mut(stream)) {
            slot[probe as usize] = Some(c);
        }
    }
}

/// The ETMv4 / ETE decoder of a stack, if it is one.
fn etm_decoder(st: &mut dyn TraceIdDecoder) -> Option<&mut EtmV4IPktDecoder> {
    st.as_any_mut().downcast_mut::<Stack<EtmV4IPktProc, EtmV4IPktDecoder>>()?.decoder_mut()
}

/// Put a stack in the state of a new one of its configuration, keeping its
/// decoder's caches. False when it cannot be (not an ETMv4 / ETE stack, or
/// packet observers attached): a new stack is then built for the next
/// segment.
fn renew_stack(st: &mut dyn TraceIdDecoder) -> bool {
    match st.as_any_mut().downcast_mut::<Stack<EtmV4IPktProc, EtmV4IPktDecoder>>() {
        Some(s) => s.renew(EtmV4IPktProc::renew, EtmV4IPktDecoder::renew),
        None => false,
    }
}

/// A decode tree and its stack for one stream, kept by a worker thread for
/// its next segment (or probe) of that stream, once renewed.
struct Kit<O> {
    decode: usize,
    stream: usize,
    probe: bool,
    tree: DecodeTree,
    stack: Box<dyn TraceIdDecoder>,
    out: Rc<RefCell<O>>,
}

thread_local! {
    /// The kits this worker thread keeps ([`Kit`]s of any output type).
    static KITS: RefCell<Vec<Box<dyn std::any::Any>>> = const { RefCell::new(Vec::new()) };
}

/// Numbers the calls of [`decode`], so that a thread never uses a kit of
/// another call.
static DECODES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn take_kit<O: 'static>(decode: usize, stream: usize, probe: bool) -> Option<Kit<O>> {
    KITS.with(|k| {
        let mut k = k.borrow_mut();
        let i = k.iter().position(|b| b.downcast_ref::<Kit<O>>().is_some_and(|x| x.decode == decode && x.stream == stream && x.probe == probe))?;
        k.swap_remove(i).downcast::<Kit<O>>().ok().map(|b| *b)
    })
}

fn keep_kit<O: 'static>(kit: Kit<O>) {
    KITS.with(|k| {
        let mut k = k.borrow_mut();
        // kits of earlier decodes are no longer needed
        k.retain(|b| b.downcast_ref::<Kit<O>>().is_none_or(|x| x.decode == kit.decode));
        k.push(Box::new(kit));
    });
}

/// Outputs already given out, for later segments to write to: at most
/// `keep`, none much larger than the average segment's output.
struct Spare<O> {
    outs: std::sync::Mutex<Vec<O>>,
    keep: usize,
    /// Sum and count of the lengths of the segment outputs given out.
    seen: std::sync::Mutex<(usize, usize)>,
}

impl<O: SegmentOutput> Spare<O> {
    /// Keep `o`, emptied at once: what it held is free for other outputs
    /// (see [`SegmentOutput::recycle`]) while it waits.
    fn put(&self, mut o: O) {
        o.recycle();
        let Ok((sum, n)) = self.seen.lock().map(|g| *g) else { return };
        if n > 0 && o.capacity() > 4 * (sum / n) + 4096 {
            return;
        }
        if let Ok(mut v) = self.outs.lock() {
            if v.len() < self.keep {
                v.push(o);
            }
        }
    }
    /// A segment's output once given out.
    fn put_given(&self, o: O) {
        if let Ok(mut g) = self.seen.lock() {
            g.0 += o.len();
            g.1 += 1;
        }
        self.put(o);
    }
    fn take(&self) -> Option<O> {
        self.outs.lock().ok()?.pop()
    }
}

/// A decode stack in the state of a new one, on a worker thread, with the
/// tree that holds its sink, logger and memory.
struct Runner<O> {
    tree: DecodeTree,
    stack: Box<dyn TraceIdDecoder>,
    out: Rc<RefCell<O>>,
    /// A probe's elements are not needed: they go to no sink (the sinks
    /// of a parallel decode take every element at once, so the decoder
    /// goes through the same states).
    discard_elems: bool,
    stream: usize,
}

/// Drops the kits a decode left on the threads that ran its segments.
fn drop_kits<O: 'static>(decode: usize) {
    KITS.with(|k| k.borrow_mut().retain(|b| b.downcast_ref::<Kit<O>>().is_none_or(|x| x.decode != decode)));
}

/// Builds a tree for a segment of the stream in the given slot (the
/// segment uses that slot's stack only: the others need not be built).
type Factory<'a, O> = &'a (dyn Fn(u8) -> Option<(DecodeTree, Rc<RefCell<O>>)> + Sync);

/// What the segment jobs share.
struct Ctx<'a, O> {
    rec: &'a Recording,
    plans: &'a [SegPlan],
    mem: &'a SharedMem,
    spare: &'a Spare<O>,
    make: Factory<'a, O>,
    cancel: &'a std::sync::atomic::AtomicBool,
    /// This call's number (see [`DECODES`]).
    decode: usize,
    /// See [`ParallelOptions::piece`].
    piece: usize,
}

impl<O: SegmentOutput + 'static> Runner<O> {
    /// A stack for `stream` in the state of a new one: the one this thread
    /// kept from its last segment (or probe) of the stream, renewed, or a
    /// fresh one, writing to a recycled output if any. A probe's elements
    /// go nowhere: it writes little, to the output its tree came with.
    fn new(cx: &Ctx<'_, O>, stream: usize, probe: bool) -> Option<Self> {
        if let Some(Kit { tree, stack, out, .. }) = take_kit::<O>(cx.decode, stream, probe) {
            // (a probe writes little: it must not take a spare output, which
            // would be dropped with it)
            match if probe { None } else { cx.spare.take() } {
                Some(mut o) => {
                    o.recycle();
                    *out.borrow_mut() = o;
                }
                None => out.borrow_mut().recycle(),
            }
            return Some(Runner { tree, stack, out, discard_elems: probe, stream });
        }
        let slot = cx.rec.streams[stream].slot;
        let (mut tree, out) = (cx.make)(slot)?;
        let mut stack = tree.stacks.get_mut(slot as usize)?.take()?;
        tree.mapper = cx.mem.take()?;
        if let Some(d) = etm_decoder(stack.as_mut()) {
            if let Some(c) = cx.mem.take_caches(stream, probe) {
                d.adopt_caches(c);
            }
        }
        if !probe {
            if let Some(mut o) = cx.spare.take() {
                o.recycle();
                *out.borrow_mut() = o;
            }
        }
        Some(Runner { tree, stack, out, discard_elems: probe, stream })
    }

    fn env_call<R>(&mut self, f: impl FnOnce(&mut dyn TraceIdDecoder, &mut StackEnv) -> R) -> R {
        let attached = Interfaces {
            elem_out: !self.tree.interfaces_required || self.tree.elem_sink.is_some(),
            mem: !self.tree.interfaces_required || self.tree.mem_attached,
        };
        let mut discard = Discard;
        let sink: &mut dyn GenElemSink = match self.tree.elem_sink.as_deref_mut() {
            Some(s) if !self.discard_elems => s,
            _ => &mut discard,
        };
        let mut env = StackEnv { elem_sink: Some(sink), mem: &mut self.tree.mapper, log: self.tree.logger.as_mut(), attached };
        f(self.stack.as_mut(), &mut env)
    }

    /// Feed chunk `k` of `s`; false when the stack did not take it all
    /// with CONT.
    fn feed(&mut self, s: &IdStream, k: usize, trace: &[u8]) -> bool {
        self.feed_run(s, k, k + 1, trace) == 1
    }

    /// Feed chunks `from..to` of `s` while the stack takes each whole with
    /// CONT; returns how many it took so.
    fn feed_run(&mut self, s: &IdStream, from: usize, to: usize, trace: &[u8]) -> usize {
        self.env_call(|st, env| {
            s.for_chunks(from, to, trace, |index, data, tail| {
                let (r, used) = st.data_in_tail(index, data, tail, env);
                resp_is_cont(r) && used == data.len()
            })
        })
    }

    fn eot(&mut self) {
        // the serial tree ignores a fatal answer to end of trace; the
        // sinks of a parallel decode never wait
        self.env_call(|st, env| st.data_in(OCSD_OP_EOT, 0, &[], env));
    }

    fn len(&self) -> usize {
        self.out.borrow().len()
    }

    /// Whether `q`'s stack is in this one's state (see
    /// [`TraceIdDecoder::same_state`]).
    fn same_state(&self, q: &Runner<O>) -> bool {
        self.stack.same_state(q.stack.as_ref())
    }

    /// The output. The stack, renewed, and its tree stay with the thread
    /// for its next segment (or probe) of the stream; a stack that cannot
    /// be renewed gives its memory mapper and decoder caches to the thread
    /// instead.
    fn finish(self, cx: &Ctx<'_, O>) -> O {
        let Runner { mut tree, mut stack, out, discard_elems, stream } = self;
        let o = std::mem::take(&mut *out.borrow_mut());
        if renew_stack(stack.as_mut()) {
            keep_kit(Kit { decode: cx.decode, stream, probe: discard_elems, tree, stack, out });
            return o;
        }
        if let Some(d) = etm_decoder(stack.as_mut()) {
            cx.mem.keep_caches(stream, discard_elems, d.take_caches());
        }
        drop(stack);
        cx.mem.give_back(std::mem::take(&mut tree.mapper));
        o
    }
}

/// What [`decode`] did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Summary {
    /// Segments decoded.
    pub segments: usize,
    /// Stitches made (where a segment's output took over from another's).
    pub stitches: usize,
    /// Chunks decoded twice more (past a segment's end until the states
    /// met, by the segment and by the probe that found the next segment's
    /// states there; the next segment decodes them too, but as part of its
    /// own work): the cost of stitching.
    pub overlap_chunks: usize,
    /// Most segments decoded or waiting to be given out at one time.
    pub most_in_flight: usize,
    /// The largest output of one segment ([`SegmentOutput::len`]).
    pub largest_output: usize,
}

/// How [`decode`] ended.
#[derive(Clone, Copy, Debug)]
pub enum Outcome {
    /// All the serial output was given to `emit`.
    Done(Summary),
    /// Parallel decode cannot give the serial output (see the module
    /// documentation): what was given to `emit` so far is the start of the
    /// serial output, and the caller decodes serially for the rest (e.g.
    /// decoding again and skipping what was emitted).
    Fallback,
}

/// Decode `rec` on `opts.threads` threads, giving the serial output to
/// `emit` in order, piece by piece, as soon as it is known (on the calling
/// thread, while the decode goes on).
///
/// `make` builds, on a worker thread, a decode tree configured as the
/// serial one (decoders, operation flags, element sink, logger, packet
/// printers), whose sinks write to the output it returns; its memory is
/// replaced by a share of `mem`'s files and buffers, and its output may be
/// replaced by an emptied one ([`SegmentOutput::recycle`]) before the
/// decode starts. Each piece given to `emit` is a range of one such output.
/// A tree it built may decode several segments of one trace ID in turn,
/// its decode stack renewed in between and its output taken and replaced:
/// its element sink and loggers must keep nothing from one segment to the
/// next that changes what they write.
pub fn decode<O, F, E>(rec: &Recording, mem: &crate::mem::MemMapper, opts: &ParallelOptions, make: F, mut emit: E) -> Outcome
where
    O: SegmentOutput + 'static,
    F: Fn(u8) -> Option<(DecodeTree, Rc<RefCell<O>>)> + Sync,
    E: FnMut(&mut O, std::ops::Range<usize>),
{
    if rec.bail.is_some() {
        return Outcome::Fallback;
    }
    let Some(shared) = mem.share_static() else { return Outcome::Fallback };
    let threads = opts.threads.max(1);
    let mem = &SharedMem::new(shared, threads, rec.streams.len());
    let plans = plan_segments(rec, opts);
    // segments start in the order the output needs them
    let mut start_order: Vec<usize> = (0..plans.len()).collect();
    let firsts: Vec<(usize, usize)> = plans.iter().map(|p| (p.stream, p.first)).collect();
    let places = rec.places(&firsts);
    start_order.sort_by_key(|&i| places[i]);
    let Ok(pool) = rayon::ThreadPoolBuilder::new().num_threads(threads).build() else { return Outcome::Fallback };
    let cancel = std::sync::atomic::AtomicBool::new(false);
    // Segments of streams cut in several count against the limit: one per
    // such stream (the one being given out), one per thread, and the
    // look-ahead. A stream decoded whole is started once, when the output
    // reaches it, and does not count (it would hold a place to the end).
    let mut segs_of = vec![0usize; rec.streams.len()];
    for p in &plans {
        segs_of[p.stream] += 1;
    }
    let counts: Vec<bool> = plans.iter().map(|p| segs_of[p.stream] > 1).collect();
    let limit = segs_of.iter().filter(|&&n| n > 1).count() + threads + opts.lookahead;
    let spare = Spare { outs: std::sync::Mutex::new(Vec::new()), keep: limit + threads, seen: std::sync::Mutex::new((0, 0)) };
    let decode = DECODES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let cx = Ctx { rec, plans: &plans, mem, spare: &spare, make: &make, cancel: &cancel, decode, piece: opts.piece };
    let (tx, rx) = std::sync::mpsc::channel::<Msg<O>>();
    let out = pool.in_place_scope_fifo(|sc| {
        let cx = &cx;
        let mut starter = Starter {
            order: &start_order,
            next: 0,
            started: vec![false; plans.len()],
            counts: &counts,
            in_flight: 0,
            most: 0,
            // each stream's current segment, and the look-ahead
            limit,
            start: &mut |i: usize| {
                let tx = tx.clone();
                sc.spawn_fifo(move |_| {
                    let res = run_segment(cx, i, &tx);
                    let _ = tx.send(Msg::Done { seg: i, res });
                });
            },
        };
        starter.top_up();
        let out = stitch(rec, &plans, &rx, &mut starter, &spare, &mut emit);
        if out.is_none() {
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        out
    });
    // the kept stacks go before the decode returns
    pool.broadcast(|_| drop_kits::<O>(decode));
    match out {
        Some(summary) => Outcome::Done(summary),
        None => Outcome::Fallback,
    }
}

/// Starts segment jobs in output order, keeping at most `limit` started
/// and not yet given out, unless the output needs a later one.
struct Starter<'a> {
    order: &'a [usize],
    next: usize,
    started: Vec<bool>,
    /// Which segments count against the limit.
    counts: &'a [bool],
    in_flight: usize,
    most: usize,
    limit: usize,
    start: &'a mut dyn FnMut(usize),
}

impl Starter<'_> {
    fn start_next(&mut self) -> bool {
        let Some(&i) = self.order.get(self.next) else { return false };
        self.next += 1;
        self.started[i] = true;
        self.in_flight += self.counts[i] as usize;
        self.most = self.most.max(self.in_flight);
        (self.start)(i);
        true
    }

    fn top_up(&mut self) {
        while self.in_flight < self.limit && self.start_next() {}
    }

    /// Segment `i` is needed now: start it (and those before it).
    fn ensure(&mut self, i: usize) {
        while !self.started[i] && self.start_next() {}
    }

    /// Segment `i`'s output was given out.
    fn done(&mut self, i: usize) {
        self.in_flight = self.in_flight.saturating_sub(self.counts[i] as usize);
        self.top_up();
    }
}

fn plan_segments(rec: &Recording, opts: &ParallelOptions) -> Vec<SegPlan> {
    let mut plans = Vec::new();
    for (si, s) in rec.streams.iter().enumerate() {
        let n = s.n_chunks();
        let whole = SegPlan { stream: si, first: 0, end: n, next: None };
        let want = s.data.len() / opts.segment_bytes(s.data.len());
        if !s.splittable || want < 2 || !matches!(s.protocol, OCSD_PROTOCOL_ETMV4I | OCSD_PROTOCOL_ETE) {
            plans.push(whole);
            continue;
        }
        let syncs = etmv4_sync_points(&s.data);
        let mut starts: Vec<usize> = vec![0];
        let mut ci = 0usize;
        let mut next_sync = 0usize;
        for k in 1..want {
            let target = s.data.len() * k / want;
            while next_sync < syncs.len() && syncs[next_sync] < target {
                next_sync += 1;
            }
            let Some(&off) = syncs.get(next_sync) else { break };
            // the chunk holding the sync's first byte
            ci = ci.max(s.chunk_at_byte(off));
            if ci > *starts.last().unwrap() {
                starts.push(ci);
            }
        }
        let base = plans.len();
        for (k, &first) in starts.iter().enumerate() {
            let end = starts.get(k + 1).copied().unwrap_or(n);
            let next = (k + 1 < starts.len()).then_some(base + k + 1);
            plans.push(SegPlan { stream: si, first, end, next });
        }
    }
    plans
}

/// Chunk boundaries between state comparisons past a segment's end at
/// first: every one (a comparison costs a few field compares, a chunk
/// decoded past the end two decodes; on bugfix-exact-match's 117
/// stitches, 782 chunks decoded twice more against 1,106 with a check
/// every 4). The gap grows with the distance from the end: states that
/// have not met within a few chunks seldom meet soon after.
const CHECK_EVERY: usize = 1;

/// The chunk boundary after `c` at which a segment that ended at chunk
/// `end` compares its state with the next segment's (the first at
/// `end + CHECK_EVERY`).
fn next_check(end: usize, c: usize) -> usize {
    c + CHECK_EVERY.max((c - end) / 2)
}

/// What a segment job tells the calling thread.
enum Msg<O> {
    /// Output of segment `seg` cut off while it is decoded (see
    /// [`SegmentOutput::split_front`]): its text ends at `end`; `marks`
    /// continue the segment's marks (output length after each chunk).
    Part { seg: usize, marks: Vec<usize>, out: O, end: usize },
    /// Segment `seg` ended (None: it could not be decoded).
    Done { seg: usize, res: Option<SegResult<O>> },
}

/// Decode segment `i` ([`walk_segment`]: from its first chunk, a probe
/// beside it past its end until their states meet), noting the output's
/// length after each chunk. Output is handed over in parts (`tx`) as it
/// grows, the rest with the result.
fn run_segment<O: SegmentOutput + 'static>(cx: &Ctx<'_, O>, i: usize, tx: &std::sync::mpsc::Sender<Msg<O>>) -> Option<SegResult<O>> {
    let p = cx.plans[i];
    let mut src = &cx.rec.streams[p.stream];
    let mut r = Runner::new(cx, p.stream, false)?;
    let mut marks = Vec::with_capacity(p.end - p.first + 1);
    marks.push(r.len());
    // where the output not yet handed over starts
    let mut part_from = r.len();
    let walked = walk_segment(cx, &mut r, &mut src, p.first, p.next.map(|_| p.end), |r, c, _, _| {
        if c == p.first {
            return Some(c + 1);
        }
        // the output length after each chunk, handed over in parts
        let len = r.len();
        marks.push(len);
        if cx.piece > 0 && len - part_from >= cx.piece {
            let cut = r.out.borrow_mut().split_front(cx.piece);
            if let Some((out, end)) = cut {
                part_from = end;
                let m = std::mem::replace(&mut marks, Vec::with_capacity(64));
                return tx.send(Msg::Part { seg: i, marks: m, out, end }).is_ok().then_some(c + 1);
            }
        }
        Some(c + 1)
    })?;
    let meet = walked.meet.zip(p.next);
    let eot_mark = walked.eot().then(|| r.len());
    Some(SegResult { out: r.finish(cx), marks, meet, stopped_at: walked.stopped_at, eot_mark })
}

/// Where a segment's decoder reads its stream's chunks.
trait ChunkSource {
    /// Chunk `c` of the stream: the recording that holds it, its place
    /// there and the trace its framed runs were recorded from (None: past
    /// the stream's end).
    fn at(&mut self, c: usize) -> Option<(&IdStream, usize, &[u8])>;
}

impl ChunkSource for &IdStream {
    fn at(&mut self, c: usize) -> Option<(&IdStream, usize, &[u8])> {
        (c < self.n_chunks()).then_some((*self, c, &[]))
    }
}

/// How [`walk_segment`] ended.
struct Walked {
    /// The chunk boundary where the decoder's state met the probe's.
    meet: Option<usize>,
    /// The first chunk the decoder did not take normally (usize::MAX:
    /// none).
    stopped_at: usize,
}

impl Walked {
    /// Whether the decoder ran to the stream's end and was given end of
    /// trace (neither met nor stopped).
    fn eot(&self) -> bool {
        self.meet.is_none() && self.stopped_at == usize::MAX
    }
}

/// Decode a segment with `r` from chunk `first` on; from chunk `end` (when
/// a segment follows, starting there) a probe beside it (a stack in the
/// state of a new one, as the next segment's decoder starts) until their
/// states are equal at a chunk boundary, from where the next segment's
/// output is the serial one. At chunk boundary `c` (`first` too), before
/// the states are compared there, `at` is told the boundary, the next
/// boundary where they are compared, and whether the stream ends there;
/// it returns the next boundary where it must be told again (`c + 1` for
/// each one; the stream's end and the boundaries from `end` on are told
/// whatever it returns), or None to give up. Between the boundaries told,
/// the chunks go to the decoder in one call. None: given up or cancelled.
///
/// States are compared at every boundary just past the end, then further
/// apart (see [`CHECK_EVERY`]; each boundary checked is a place where a
/// folded decode's output is cut): once equal they stay equal, as both
/// stacks decode the same bytes from the same state, so a later check
/// finds the meeting a little later, never wrongly. (A fresh decoder needs
/// at least a packet after the sync point before it can be in the serial
/// decoder's state: the first check is not at the end itself.)
fn walk_segment<O: SegmentOutput + 'static>(
    cx: &Ctx<'_, O>,
    r: &mut Runner<O>,
    src: &mut impl ChunkSource,
    first: usize,
    end: Option<usize>,
    mut at: impl FnMut(&mut Runner<O>, usize, usize, bool) -> Option<usize>,
) -> Option<Walked> {
    let mut walked = Walked { meet: None, stopped_at: usize::MAX };
    let mut probe: Option<Runner<O>> = None;
    let mut check_at = end.map_or(usize::MAX, |e| e + CHECK_EVERY);
    let mut c = first;
    loop {
        let chunk = src.at(c);
        let at_end = chunk.is_none();
        let call_at = at(r, c, check_at, at_end)?;
        if probe.is_none() && Some(c) != end {
            // no probe yet: the chunks up to the next boundary `at` or the
            // probe must see, within this recording, go in one call
            let Some((s, k, trace)) = chunk else { break };
            if cx.cancel.load(std::sync::atomic::Ordering::Relaxed) {
                return None;
            }
            let to = call_at.min(end.unwrap_or(usize::MAX)).max(c + 1);
            let n = (to - c).min(s.n_chunks() - k);
            let fed = r.feed_run(s, k, k + n, trace);
            if fed < n {
                walked.stopped_at = c + fed;
                break;
            }
            c += n;
            continue;
        }
        if Some(c) == end {
            probe = Some(Runner::new(cx, r.stream, true)?);
        }
        if let (Some(q), Some(e)) = (probe.as_ref(), end) {
            if c == check_at || at_end {
                if r.same_state(q) {
                    walked.meet = Some(c);
                    break;
                }
                check_at = next_check(e, c);
            }
        }
        let Some((s, k, trace)) = chunk else { break };
        if c.is_multiple_of(256) && cx.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        if !r.feed(s, k, trace) {
            walked.stopped_at = c;
            break;
        }
        if let Some(q) = probe.as_mut() {
            if !q.feed(s, k, trace) {
                // the next segment stops here too: no meeting
                if let Some(q) = probe.take() {
                    q.finish(cx);
                }
            }
        }
        c += 1;
    }
    if let Some(q) = probe.take() {
        q.finish(cx);
    }
    if walked.eot() {
        r.eot();
    }
    Some(walked)
}

/// A segment's output as the calling thread has it.
struct SegState<O> {
    /// Output length after each chunk from the segment's first (see
    /// [`SegResult::marks`]), as far as received.
    marks: Vec<usize>,
    /// Parts of the output received and not yet all given out: (part,
    /// where its text starts, where it ends); the last part of an ended
    /// segment ends at `usize::MAX`.
    parts: std::collections::VecDeque<(O, usize, usize)>,
    /// Where the text received ends.
    received: usize,
    /// None while the segment runs; then its end (None: it failed).
    end: Option<Option<SegEnd>>,
}

/// How a segment ended (see [`SegResult`]).
#[derive(Clone, Copy)]
struct SegEnd {
    meet: Option<(usize, usize)>,
    stopped_at: usize,
    eot_mark: Option<usize>,
}

impl<O> Default for SegState<O> {
    fn default() -> Self {
        SegState { marks: Vec::new(), parts: std::collections::VecDeque::new(), received: 0, end: None }
    }
}

impl<O: SegmentOutput> SegState<O> {
    fn take(&mut self, msg: Msg<O>) {
        match msg {
            Msg::Part { marks, out, end, .. } => {
                self.marks.extend_from_slice(&marks);
                self.parts.push_back((out, self.received, end));
                self.received = end;
            }
            Msg::Done { res: None, .. } => self.end = Some(None),
            Msg::Done { res: Some(r), .. } => {
                self.marks.extend_from_slice(&r.marks);
                self.parts.push_back((r.out, self.received, usize::MAX));
                self.received = usize::MAX;
                self.end = Some(Some(SegEnd { meet: r.meet, stopped_at: r.stopped_at, eot_mark: r.eot_mark }));
            }
        }
    }

    /// Give text `r` to `emit`, part by part; parts wholly given out go.
    fn emit<E: FnMut(&mut O, std::ops::Range<usize>)>(&mut self, r: std::ops::Range<usize>, emit: &mut E) {
        for (o, start, end) in self.parts.iter_mut() {
            let (a, b) = (r.start.max(*start), r.end.min(*end));
            if a < b {
                emit(o, a..b);
            }
        }
        // the text is given out in order: parts before `r.end` are done
        while self.parts.front().is_some_and(|p| p.2 <= r.end) {
            self.parts.pop_front();
        }
    }
}

/// Give the serial output to `emit` as the segments' output arrives.
/// None: it cannot be given (see [`Outcome::Fallback`]).
fn stitch<O: SegmentOutput, E: FnMut(&mut O, std::ops::Range<usize>)>(
    rec: &Recording,
    plans: &[SegPlan],
    rx: &std::sync::mpsc::Receiver<Msg<O>>,
    starter: &mut Starter<'_>,
    spare: &Spare<O>,
    emit: &mut E,
) -> Option<Summary> {
    let mut segs: Vec<SegState<O>> = (0..plans.len()).map(|_| SegState::default()).collect();
    // one more message from the segment jobs
    let recv = |segs: &mut Vec<SegState<O>>| -> Option<()> {
        let m = rx.recv().ok()?;
        let seg = match &m {
            Msg::Part { seg, .. } | Msg::Done { seg, .. } => *seg,
        };
        segs.get_mut(seg)?.take(m);
        Some(())
    };
    // the end of segment `i`, waiting for it (None: it failed)
    let wait_end = |i: usize, segs: &mut Vec<SegState<O>>, starter: &mut Starter<'_>| -> Option<SegEnd> {
        starter.ensure(i);
        while segs[i].end.is_none() {
            recv(segs)?;
        }
        segs[i].end?
    };
    // each stream's chain: the segment whose output is the serial output
    let mut chain: Vec<usize> = Vec::with_capacity(rec.streams.len());
    for si in 0..rec.streams.len() {
        chain.push(plans.iter().position(|p| p.stream == si)?);
    }
    let mut summary = Summary { segments: plans.len(), ..Default::default() };
    // adjacent pieces of one output go out as one
    let mut pending: Option<(usize, std::ops::Range<usize>)> = None;
    fn out_pending<O: SegmentOutput, E: FnMut(&mut O, std::ops::Range<usize>)>(
        segs: &mut [SegState<O>],
        pending: &mut Option<(usize, std::ops::Range<usize>)>,
        emit: &mut E,
    ) {
        if let Some((ps, pr)) = pending.take() {
            segs[ps].emit(pr, emit);
        }
    }
    fn put<O: SegmentOutput, E: FnMut(&mut O, std::ops::Range<usize>)>(
        seg: usize,
        a: usize,
        b: usize,
        segs: &mut [SegState<O>],
        pending: &mut Option<(usize, std::ops::Range<usize>)>,
        emit: &mut E,
    ) {
        if a == b {
            return;
        }
        match pending.as_mut() {
            Some((ps, pr)) if *ps == seg && pr.end == a => pr.end = b,
            _ => {
                out_pending(segs, pending, emit);
                *pending = Some((seg, a..b));
            }
        }
        // parts of the output wholly pending go out now: the segment's
        // output goes out while it is decoded
        if let Some((ps, pr)) = pending.as_mut() {
            let st = &mut segs[*ps];
            if st.parts.front().is_some_and(|p| p.2 <= pr.end) {
                let cut = st.parts.iter().take_while(|p| p.2 <= pr.end).last().map_or(pr.start, |p| p.2);
                if cut > pr.start {
                    st.emit(pr.start..cut, emit);
                    pr.start = cut;
                }
            }
        }
    }
    let mut next_chunk = vec![0usize; rec.streams.len()];
    for &si in &rec.order {
        let si = si as usize;
        let ci = next_chunk[si];
        next_chunk[si] += 1;
        loop {
            let cur = chain[si];
            let first = plans[cur].first;
            let k = ci - first;
            // A chunk before the segment's end is the segment's own: its
            // output goes out as soon as it has arrived. Past the end, the
            // segment's end tells which segment's output it is.
            if ci < plans[cur].end {
                starter.ensure(cur);
                loop {
                    let st = &segs[cur];
                    if st.end.is_some() || (st.marks.len() > k + 1 && st.marks[k + 1] <= st.received) {
                        break;
                    }
                    recv(&mut segs)?;
                }
            }
            let end = match segs[cur].end {
                Some(e) => Some(e?),
                None if ci < plans[cur].end => None,
                None => Some(wait_end(cur, &mut segs, starter)?),
            };
            match end.and_then(|e| e.meet) {
                Some((c, t)) if ci >= c => {
                    // the next segment takes over here: this one's output
                    // is no longer needed once what is pending went out
                    summary.stitches += 1;
                    summary.overlap_chunks += 2 * (c - plans[cur].end);
                    out_pending(&mut segs, &mut pending, emit);
                    for k in cur..t {
                        let st = std::mem::take(&mut segs[k]);
                        summary.largest_output = summary.largest_output.max(st.marks.last().copied().unwrap_or(0));
                        for (o, _, e) in st.parts {
                            if e == usize::MAX {
                                spare.put_given(o);
                            }
                        }
                        starter.done(k);
                    }
                    chain[si] = t;
                }
                _ => {
                    if end.is_some_and(|e| e.stopped_at <= ci) {
                        return None;
                    }
                    let m = &segs[cur].marks;
                    let (a, b) = (m[k], m[k + 1]);
                    put(cur, a, b, &mut segs, &mut pending, emit);
                    break;
                }
            }
        }
    }
    // end of trace, in ID order
    for si in 0..rec.streams.len() {
        let cur = chain[si];
        let e = wait_end(cur, &mut segs, starter)?;
        let n = rec.streams[si].n_chunks();
        let end = e.eot_mark?;
        let a = segs[cur].marks[n - plans[cur].first];
        put(cur, a, end, &mut segs, &mut pending, emit);
    }
    out_pending(&mut segs, &mut pending, emit);
    summary.most_in_flight = starter.most;
    Some(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_points_need_async_then_trace_info() {
        let mut d = vec![0x04, 0x05];
        let a = d.len();
        d.extend_from_slice(&[0; 11]);
        d.extend_from_slice(&[0x80, 0x01, 0x00]);
        // A-sync without trace info after it
        d.extend_from_slice(&[0; 11]);
        d.extend_from_slice(&[0x80, 0x02]);
        // ten zeros only
        d.extend_from_slice(&[0; 10]);
        d.extend_from_slice(&[0x80, 0x01]);
        // more zeros than needed: the packet is the last 11 and the 0x80
        let b = d.len() + 3;
        d.extend_from_slice(&[0; 14]);
        d.extend_from_slice(&[0x80, 0x01]);
        assert_eq!(etmv4_sync_points(&d), vec![a, b]);
    }

    /// The byte-by-byte definition.
    fn sync_points_slow(data: &[u8]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut zeros = 0usize;
        for (i, &b) in data.iter().enumerate() {
            if b == 0 {
                zeros += 1;
                continue;
            }
            if b == 0x80 && zeros >= 11 && data.get(i + 1) == Some(&0x01) {
                out.push(i - 11);
            }
            zeros = 0;
        }
        out
    }

    #[test]
    fn sync_point_scan_finds_what_a_byte_by_byte_scan_finds() {
        // runs of zeros of every length from 0 to 30 at every alignment,
        // each followed by 0x80 0x01, or by 0x80 0x02, or by other bytes
        let mut rnd = crate::common::xorshift64(0x1234_5678);
        for round in 0..400 {
            let mut d = Vec::new();
            for _ in 0..(round % 7) {
                d.push(1 + (rnd() % 255) as u8);
            }
            while d.len() < 600 {
                let run = (rnd() % 31) as usize;
                d.extend(std::iter::repeat_n(0, run));
                match rnd() % 4 {
                    0 | 1 => d.extend_from_slice(&[0x80, 0x01]),
                    2 => d.extend_from_slice(&[0x80, 0x02]),
                    _ => d.push(1 + (rnd() % 255) as u8),
                }
            }
            if round % 3 == 0 {
                // ending inside a run or right after its 0x80
                d.extend(std::iter::repeat_n(0, 12));
                if round % 2 == 0 {
                    d.push(0x80);
                }
            }
            assert_eq!(etmv4_sync_points(&d), sync_points_slow(&d), "round {round}");
        }
    }

    /// Elements and messages of a stack, as text.
    #[derive(Default)]
    struct Seen(Vec<String>);
    impl GenElemSink for Seen {
        fn trace_elem_in(&mut self, index: ocsd_trc_index_t, id: u8, elem: &crate::abi::gen_elem::ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
            self.0.push(format!("{index} {id} {elem:?}"));
            OCSD_RESP_CONT
        }
    }
    impl ErrorLog for Seen {
        fn log_error(&mut self, c: &str, e: &OcsdError) {
            self.0.push(format!("{c} {e:?}"));
        }
        fn log_message(&mut self, c: &str, _: ocsd_err_severity_t, m: &str) {
            self.0.push(format!("{c} {m}"));
        }
    }

    /// Feed `data` in 16-byte chunks from `index`; what the stack output.
    fn feed(st: &mut dyn TraceIdDecoder, index: ocsd_trc_index_t, data: &[u8]) -> Vec<String> {
        let (mut sink, mut log, mut mem) = (Seen::default(), Seen::default(), crate::mem::MemMapper::new());
        for (k, c) in data.chunks(16).enumerate() {
            let mut env = StackEnv { elem_sink: Some(&mut sink), mem: &mut mem, log: &mut log, attached: Interfaces::ALL };
            st.data_in(OCSD_OP_DATA, index + 16 * k as ocsd_trc_index_t, c, &mut env);
        }
        sink.0.extend(log.0);
        sink.0
    }

    /// Trace for an ETMv4 decoder: A-sync and trace info, then bytes of a
    /// pseudo-random generator (every kind of packet, errors included).
    fn noise(seed: u32, n: usize) -> Vec<u8> {
        let mut rnd = crate::common::xorshift32(seed);
        let mut d = vec![0u8; 11];
        d.extend_from_slice(&[0x80, 0x01, 0x00]);
        for _ in 0..n {
            let x = rnd();
            // mostly atoms and addresses, as real trace
            d.push(match x % 4 {
                0 => 0xF7,
                1 => 0x9A,
                _ => (x >> 8) as u8,
            });
        }
        d
    }

    /// A renewed ETMv4 stack is in a new stack's state, and gives the same
    /// output from the same trace after.
    #[test]
    fn renewed_etmv4_stack_decodes_as_a_new_one() {
        let make = || crate::etmv4::create(OCSD_BUILTIN_DCD_ETMV4I, OCSD_PROTOCOL_ETMV4I, crate::etmv4::EtmV4Config::default(), true);
        for seed in 1..20u32 {
            let mut used = make();
            let first = feed(used.as_mut(), 0, &noise(seed, 3000));
            assert!(!first.is_empty());
            let mut fresh = make();
            assert!(fresh.same_state(make().as_ref()));
            assert!(!used.same_state(fresh.as_ref()), "seed {seed}: the trace left no state to renew");
            assert!(renew_stack(used.as_mut()));
            assert!(used.same_state(fresh.as_ref()) && fresh.same_state(used.as_ref()), "seed {seed}");
            let more = noise(seed ^ 0x5555, 3000);
            assert_eq!(feed(used.as_mut(), 5000, &more), feed(fresh.as_mut(), 5000, &more), "seed {seed}");
            assert!(used.same_state(fresh.as_ref()), "seed {seed}");
        }
    }

    /// A stack with a packet observer is not renewed (the observer may
    /// keep state): a new one is built instead.
    #[test]
    fn stack_with_packet_monitor_is_not_renewed() {
        struct Mon;
        impl crate::dcd_tree::PacketObserver for Mon {
            fn packet(&mut self, _: ocsd_datapath_op_t, _: ocsd_trc_index_t, _: Option<&dyn crate::common::TracePacket>, _: *const std::os::raw::c_void, _: &[u8]) -> ocsd_datapath_resp_t {
                OCSD_RESP_CONT
            }
        }
        let mut st = crate::etmv4::create(OCSD_BUILTIN_DCD_ETMV4I, OCSD_PROTOCOL_ETMV4I, crate::etmv4::EtmV4Config::default(), true);
        assert!(renew_stack(st.as_mut()));
        st.set_monitor(Some(Box::new(Mon)));
        assert!(!renew_stack(st.as_mut()));
    }

    /// A recording of two trace IDs from hand-overs (slot, index, bytes).
    fn recorded(handovers: &[(u8, u32, Vec<u8>)], keep_order: bool) -> Recording {
        let mut rec = Recording { streams: Vec::new(), by_slot: [None; 128], order: Vec::new(), keep_order, by_reference: false, bail: None };
        for slot in [0x10u8, 0x12] {
            rec.by_slot[slot as usize] = Some(rec.streams.len());
            rec.streams.push(IdStream::new(slot, true, OCSD_PROTOCOL_ETMV4I));
        }
        for (slot, index, bytes) in handovers {
            rec.push(*slot, *index, bytes, &[], false);
        }
        rec
    }

    /// Chunks `from..to` of `s` (framed runs read from `trace`).
    fn chunks(s: &IdStream, from: usize, to: usize, trace: &[u8]) -> Vec<(u32, Vec<u8>)> {
        let mut v = Vec::new();
        let n = s.for_chunks(from, to, trace, |i, d, t| {
            assert!(t.is_empty());
            v.push((i, d.to_vec()));
            true
        });
        assert_eq!(n, v.len());
        v
    }

    /// Hand-overs as a deformatter gives them: mostly whole frames of one
    /// ID (15 bytes every 16), some frames shared by both IDs, and a few
    /// blocks of other sizes and places.
    fn handovers(seed: u64, n: usize) -> Vec<(u8, u32, Vec<u8>)> {
        let mut rnd = crate::common::xorshift64(seed);
        let mut out = Vec::new();
        let mut index = 0u32;
        for _ in 0..n {
            let r = rnd();
            let bytes = |len: usize, r: u64| (0..len).map(|i| (r >> (i % 8)) as u8 ^ i as u8).collect::<Vec<u8>>();
            match r % 8 {
                0 => {
                    // a frame shared: the first ID's bytes, then the other's
                    let a = 1 + (r >> 8) as usize % 13;
                    out.push((0x10, index, bytes(a, r)));
                    out.push((0x12, index + a as u32 + 1, bytes(14 - a, r >> 3)));
                    index += 16;
                }
                1 => {
                    // a block of another size, somewhere later
                    let len = 1 + (r >> 8) as usize % 40;
                    index += (r >> 16) as u32 % 100;
                    out.push((0x10 + 2 * (r >> 30 & 1) as u8, index, bytes(len, r)));
                    index += len as u32;
                }
                _ => {
                    out.push((if r % 8 == 7 { 0x10 } else { 0x12 }, index, bytes(15, r)));
                    index += 16;
                }
            }
        }
        out
    }

    /// Each chunk of a recording is the hand-over it records, in the same
    /// order; the chunk found for a data byte is the last that starts at
    /// or before it; the serial place of a chunk is its hand-over's.
    #[test]
    fn runs_give_back_each_handover() {
        for seed in 1..40u64 {
            let hs = handovers(seed, 300 + seed as usize * 7);
            let rec = recorded(&hs, true);
            assert!(rec.bail.is_none());
            let mut wanted = Vec::new();
            for (si, s) in rec.streams.iter().enumerate() {
                let mine: Vec<(usize, &(u8, u32, Vec<u8>))> = hs.iter().enumerate().filter(|(_, h)| h.0 == s.slot).collect();
                assert_eq!(s.n_chunks(), mine.len(), "seed {seed}");
                assert!(s.runs.len() <= mine.len());
                let got = chunks(s, 0, usize::MAX, &[]);
                let want: Vec<(u32, Vec<u8>)> = mine.iter().map(|(_, h)| (h.1, h.2.clone())).collect();
                assert_eq!(got, want, "seed {seed}");
                // from any chunk to any other
                for from in (0..mine.len()).step_by(7) {
                    let to = (from + 13).min(mine.len());
                    let part = chunks(s, from, to, &[]);
                    assert_eq!(part, want[from..to], "seed {seed} chunks {from}..{to}");
                }
                assert!(chunks(s, mine.len(), mine.len() + 5, &[]).is_empty());
                // the chunk holding each data byte
                let mut starts = Vec::new();
                let mut at = 0usize;
                for (_, h) in &mine {
                    starts.push(at);
                    at += h.2.len();
                }
                for off in 0..at {
                    let slow = starts.partition_point(|&st| st <= off) - 1;
                    assert_eq!(s.chunk_at_byte(off), slow, "seed {seed} byte {off}");
                }
                for (k, (p, _)) in mine.iter().enumerate().step_by(5) {
                    wanted.push(((si, k), *p));
                }
            }
            let asked: Vec<(usize, usize)> = wanted.iter().map(|w| w.0).chain([(0, usize::MAX - 1)]).collect();
            let mut want: Vec<usize> = wanted.iter().map(|w| w.1).collect();
            want.push(usize::MAX);
            assert_eq!(rec.places(&asked), want, "seed {seed}");
            // without the order, the same chunks
            let unordered = recorded(&hs, false);
            assert!(unordered.order.is_empty());
            for (a, b) in rec.streams.iter().zip(&unordered.streams) {
                assert_eq!(chunks(a, 0, usize::MAX, &[]), chunks(b, 0, usize::MAX, &[]));
            }
        }
    }

    /// Chunks recorded as frames of the trace give the bytes the frames
    /// unpack to, as copied chunks do; only the others' bytes are kept
    /// once detached; a trace without the frames gives none of them.
    #[test]
    fn framed_chunks_are_read_from_the_trace() {
        let mut rnd = crate::common::xorshift64(77);
        let mut trace = Vec::new();
        let mut hs = Vec::new();
        for k in 0..2000u32 {
            let mut f = [0u8; 16];
            for b in f.iter_mut() {
                *b = rnd() as u8;
            }
            let framed = k % 9 != 4;
            for i in (0..16).step_by(2) {
                f[i] &= if framed || i != 6 { !1 } else { 0xff };
            }
            if !framed {
                f[6] |= 1;
            }
            let data: Vec<u8> = match crate::deformatter::single_id_frame(&f) {
                Some(d) => d.to_vec(),
                None => f[..7].to_vec(),
            };
            hs.push((0x12u8, 16 * k, data, framed));
            trace.extend_from_slice(&f);
        }
        let record = |by_ref: bool| {
            let mut rec = recorded(&[], true);
            for (slot, index, data, framed) in &hs {
                rec.push(*slot, *index, data, &[], by_ref && *framed);
            }
            rec
        };
        let copied = record(false);
        let mut framed = record(true);
        let all = chunks(&copied.streams[1], 0, usize::MAX, &[]);
        assert_eq!(all.len(), 2000);
        assert_eq!(chunks(&framed.streams[1], 0, usize::MAX, &trace), all);
        let scratch = framed.streams[1].detach_framed();
        assert!(scratch.is_empty() && scratch.capacity() > 0);
        let kept: usize = hs.iter().filter(|h| !h.3).map(|h| h.2.len()).sum();
        assert_eq!(framed.streams[1].data.len(), kept);
        assert_eq!(chunks(&framed.streams[1], 0, usize::MAX, &trace), all);
        for from in (0..2000).step_by(37) {
            assert_eq!(chunks(&framed.streams[1], from, from + 50, &trace), all[from..(from + 50).min(2000)]);
        }
        // without the trace, the framed chunks cannot be given
        assert_eq!(framed.streams[1].for_chunks(0, usize::MAX, &trace[..16 * 100], |_, _, _| true), 100);
    }

    /// Frames of one ID, one after the other, are one run, whatever the
    /// other ID's frames between them.
    #[test]
    fn frames_of_one_id_are_one_run() {
        let mut hs: Vec<(u8, u32, Vec<u8>)> = (0..1000u32).map(|k| (0x12, 100 + 16 * k, vec![k as u8; 15])).collect();
        let rec = recorded(&hs, true);
        assert_eq!((rec.streams[1].runs.len(), rec.streams[1].n_chunks()), (1, 1000));
        // another ID's frame between two: a new run from there
        hs.insert(500, (0x10, 100 + 16 * 500, vec![1; 15]));
        for h in &mut hs[501..] {
            h.1 += 16;
        }
        let rec = recorded(&hs, true);
        assert_eq!((rec.streams[1].runs.len(), rec.streams[1].n_chunks()), (2, 1000));
        assert_eq!(rec.order.len(), 1001);
    }

    #[test]
    fn sync_point_at_the_very_end_needs_its_trace_info_byte() {
        let mut d = vec![0u8; 11];
        d.push(0x80);
        assert!(etmv4_sync_points(&d).is_empty());
        d.push(0x01);
        assert_eq!(etmv4_sync_points(&d), vec![0]);
        assert!(etmv4_sync_points(&[]).is_empty());
    }
}
