//! Full decode of a recording: instruction ranges and branch samples per
//! thread, with the binaries' code read through [`Spaces`].
//!
//! Branch samples follow perf's `cs-etm.c` (`--itrace=b`): a discontinuity
//! (NO_SYNC, TRACE_ON, EO_TRACE) after an instruction range gives
//! `last instruction => 0`; the first range after a discontinuity gives
//! `0 => range start`; a range ending in a taken branch (or followed by an
//! exception or exception return) gives `its last instruction => next range
//! start`. Queues are decoded one after the other (perf's timeless order),
//! each block after a decoder reset; with timestamps in the trace, in
//! timestamp order (see [`decode`]).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::error::NullLog;
use crate::common::GenElemSink;
use crate::dcd_tree::DecodeTree;
use crate::mem::{Accessor, Source};

use super::cs_meta::{CsMeta, TraceUnit};
use super::dump::{blocks, Block, BlockMode};
use super::file::PerfData;
use super::spaces::Spaces;
use super::PerfError;

/// A branch sample (`from` 0: trace started; `to` 0: trace stopped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchSample {
    pub from: u64,
    pub to: u64,
    pub tid: i32,
    pub cpu: i32,
}

/// An executed instruction range (`end` is the address of its last
/// instruction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeSample {
    pub start: u64,
    pub last: u64,
    pub n_instr: u32,
    pub tid: i32,
    pub isa: ocsd_isa,
    /// The range ends with a branch that was taken (direct or indirect).
    pub taken: bool,
    /// The last instruction is a direct branch.
    pub direct: bool,
    /// The direct branch's target when known; None: read from memory by
    /// the sink that needs it ([`direct_branch_target`]).
    pub branch_addr: Option<u64>,
    /// Size of the last instruction in bytes.
    pub last_size: u8,
    /// The last instruction is a call (branch with link) / a return.
    pub is_call: bool,
    pub is_return: bool,
    /// Trace ID of the source.
    pub id: u8,
}

/// What the decode delivers.
pub trait SampleSink {
    fn branch(&mut self, _b: &BranchSample) {}
    fn range(&mut self, _r: &RangeSample, _spaces: &mut Spaces) {}
    /// A TRACE_ON element of source `id` (a discontinuity in its trace).
    fn trace_on(&mut self, _id: u8, _spaces: &mut Spaces) {}
    /// Whether the sink takes every decoded element ([`SampleSink::element`])
    /// and the start of each block ([`SampleSink::block_start`]). Asked
    /// once per decode tree; such a decode is serial and timeless.
    fn wants_elements(&self) -> bool {
        false
    }
    /// A block of trace starts, decoded from a reset decoder.
    fn block_start(&mut self, _b: &Block) {}
    /// Every element as the decoder gives it: trace index, trace ID.
    fn element(&mut self, _index: ocsd_trc_index_t, _id: u8, _e: &ocsd_generic_trace_elem) {}
}

/// The target of the direct branch that ends range `r` (its last
/// instruction read from `spaces` and decoded); 0 when it cannot be read
/// or decoded.
pub fn direct_branch_target(spaces: &mut Spaces, r: &RangeSample) -> u64 {
    if let Some(a) = r.branch_addr {
        return a;
    }
    let mut op = [0u8; 4];
    let n = spaces.read(r.tid, r.last, &mut op[..(r.last_size as usize).clamp(2, 4)]);
    if n < 2 {
        return 0;
    }
    let mut info = ocsd_instr_info {
        pe_type: ocsd_arch_profile_t { arch: ARCH_AA64, profile: profile_CortexA },
        isa: r.isa,
        instr_addr: r.last,
        opcode: u32::from_le_bytes(op),
        ..Default::default()
    };
    if crate::instr::decode_instruction(&mut info) == OCSD_OK {
        info.branch_addr
    } else {
        0
    }
}

/// A sink that may be absent: the samples go to it when it is there.
impl<S: SampleSink> SampleSink for Option<S> {
    fn branch(&mut self, b: &BranchSample) {
        if let Some(s) = self {
            s.branch(b);
        }
    }
    fn range(&mut self, r: &RangeSample, spaces: &mut Spaces) {
        if let Some(s) = self {
            s.range(r, spaces);
        }
    }
    fn trace_on(&mut self, id: u8, spaces: &mut Spaces) {
        if let Some(s) = self {
            s.trace_on(id, spaces);
        }
    }
}

/// Both sinks get every sample, the first first.
impl<A: SampleSink, B: SampleSink> SampleSink for (A, B) {
    fn branch(&mut self, b: &BranchSample) {
        self.0.branch(b);
        self.1.branch(b);
    }
    fn range(&mut self, r: &RangeSample, spaces: &mut Spaces) {
        self.0.range(r, spaces);
        self.1.range(r, spaces);
    }
    fn trace_on(&mut self, id: u8, spaces: &mut Spaces) {
        self.0.trace_on(id, spaces);
        self.1.trace_on(id, spaces);
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Pkt {
    Empty,
    Discontinuity,
    Range { start: u64, last: u64, taken: bool },
}

/// Shared by the memory callback and the element sink.
pub struct Shared {
    pub spaces: Spaces,
    /// Current thread per trace ID (-1: unknown).
    pub tid: [i32; 128],
}

/// What the sample logic takes from a generic element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Elem {
    /// NO_SYNC, TRACE_ON (`on`) or EO_TRACE: a discontinuity.
    Gap { on: bool },
    Range { start: u64, end: u64, last_sz: u8, i_type: ocsd_instr_type, i_subtype: ocsd_instr_subtype, exec: bool, n_instr: u32, isa: ocsd_isa },
    /// An exception or an exception return.
    Exception,
    /// A PE context: the thread it names, if any.
    Context(Option<i32>),
}

impl Elem {
    /// The element as the sample logic sees it (None: ignored; timestamps
    /// are handled by the timestamped decode itself).
    pub(super) fn of(e: &ocsd_generic_trace_elem, pid_in_vmid: bool) -> Option<Elem> {
        Some(match e.elem_type {
            OCSD_GEN_TRC_ELEM_NO_SYNC | OCSD_GEN_TRC_ELEM_EO_TRACE => Elem::Gap { on: false },
            OCSD_GEN_TRC_ELEM_TRACE_ON => Elem::Gap { on: true },
            OCSD_GEN_TRC_ELEM_INSTR_RANGE => Elem::Range {
                start: e.st_addr,
                end: e.en_addr,
                last_sz: e.last_instr_sz() as u8,
                i_type: e.last_i_type,
                i_subtype: e.last_i_subtype,
                exec: e.last_instr_exec() != 0,
                n_instr: e.num_instr_range(),
                isa: e.isa,
            },
            OCSD_GEN_TRC_ELEM_EXCEPTION | OCSD_GEN_TRC_ELEM_EXCEPTION_RET => Elem::Exception,
            OCSD_GEN_TRC_ELEM_PE_CONTEXT => {
                let c = &e.context;
                Elem::Context(if pid_in_vmid {
                    (c.vmid_valid() != 0).then_some(c.vmid as i32)
                } else {
                    (c.ctxt_id_valid() != 0).then_some(c.context_id as i32)
                })
            }
            _ => return None,
        })
    }
}

/// perf's sample logic for the elements of one queue: branch samples from
/// the ranges and discontinuities of each trace source, ranges with the
/// direct branch's target, the thread of each source from its contexts.
pub(super) struct Samples {
    prev: [Pkt; 128],
    cpu_of_id: [i32; 128],
}

impl Samples {
    pub(super) fn new(cpu_of_id: [i32; 128]) -> Self {
        Samples { prev: [Pkt::Empty; 128], cpu_of_id }
    }

    /// Element `e` of trace source `id` (0..128): samples to `out`, the
    /// source's thread in `sh.tid`.
    pub(super) fn elem(&mut self, id: usize, e: Elem, sh: &mut Shared, out: &mut dyn SampleSink) {
        let branch = |from: u64, to: u64, out: &mut dyn SampleSink, sh: &Shared| {
            out.branch(&BranchSample { from, to, tid: sh.tid[id], cpu: self.cpu_of_id[id] });
        };
        match e {
            Elem::Gap { on } => {
                if let Pkt::Range { last, .. } = self.prev[id] {
                    branch(last, 0, out, sh);
                }
                self.prev[id] = Pkt::Discontinuity;
                if on {
                    out.trace_on(id as u8, &mut sh.spaces);
                }
            }
            Elem::Range { start, end, last_sz, i_type, i_subtype, exec, n_instr, isa } => {
                let sz = last_sz as u64;
                let last = end.wrapping_sub(sz);
                let is_br = i_type == OCSD_INSTR_BR || i_type == OCSD_INSTR_BR_INDIRECT;
                let taken = is_br && exec;
                match self.prev[id] {
                    Pkt::Discontinuity => branch(0, start, out, sh),
                    Pkt::Range { last: pl, taken: true, .. } => branch(pl, start, out, sh),
                    _ => {}
                }
                self.prev[id] = Pkt::Range { start, last, taken };
                // the range (a direct branch's target is read by the sink
                // that needs it)
                let r = RangeSample {
                    start,
                    last,
                    n_instr,
                    tid: sh.tid[id],
                    isa,
                    taken,
                    direct: i_type == OCSD_INSTR_BR,
                    branch_addr: None,
                    last_size: last_sz,
                    is_call: i_subtype == OCSD_S_INSTR_BR_LINK,
                    is_return: i_subtype == OCSD_S_INSTR_V8_RET || i_subtype == OCSD_S_INSTR_V7_IMPLIED_RET,
                    id: id as u8,
                };
                out.range(&r, &mut sh.spaces);
            }
            Elem::Exception => {
                if let Pkt::Range { start, last, .. } = self.prev[id] {
                    self.prev[id] = Pkt::Range { start, last, taken: true };
                }
            }
            Elem::Context(Some(t)) => sh.tid[id] = t,
            Elem::Context(None) => {}
        }
    }
}

struct ElemSink {
    shared: Arc<Mutex<Shared>>,
    out: Rc<RefCell<dyn SampleSink>>,
    /// `out` takes every element ([`SampleSink::wants_elements`]).
    elements: bool,
    samples: Samples,
    pid_in_vmid: bool,
    /// Timestamped decode: where a timestamp element ends the segment.
    clock: Option<Rc<RefCell<Segment>>>,
    /// Changed with a source's thread: the memory holes the mapper keeps
    /// (found with the threads before) no longer hold.
    stamp: Arc<AtomicU64>,
}

impl GenElemSink for ElemSink {
    fn trace_elem_in(&mut self, idx: ocsd_trc_index_t, id: u8, e: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        let i = (id & 0x7f) as usize;
        if self.elements {
            self.out.borrow_mut().element(idx, id, e);
        }
        if let Some(c) = &self.clock {
            let mut c = c.borrow_mut();
            if c.cleared {
                // perf never saw the dropped packets
                c.cleared = false;
                self.samples.prev = [Pkt::Empty; 128];
            }
            if e.elem_type == OCSD_GEN_TRC_ELEM_TIMESTAMP {
                c.ended_by = Some(e.timestamp);
                c.timed = true;
                return OCSD_RESP_WAIT;
            }
        }
        let Some(el) = Elem::of(e, self.pid_in_vmid) else { return OCSD_RESP_CONT };
        {
            let mut shared = match self.shared.lock() {
                Ok(s) => s,
                Err(_) => return OCSD_RESP_FATAL_SYS_ERR,
            };
            if matches!(el, Elem::Context(Some(t)) if shared.tid[i] != t) {
                self.stamp.fetch_add(1, Ordering::Release);
            }
            self.samples.elem(i, el, &mut shared, &mut *self.out.borrow_mut());
        }
        if !matches!(el, Elem::Exception | Elem::Context(_)) {
            // one of perf's packets (a range or a discontinuity)
            if let Some(c) = &self.clock {
                c.borrow_mut().packet();
            }
        }
        OCSD_RESP_CONT
    }
}

/// Samples of one queue since its last timestamp (timestamped decode).
#[derive(Default)]
pub(super) struct Segment {
    samples: Vec<Sample>,
    /// Instructions in the ranges of `samples`.
    instrs: u64,
    /// The timestamp that ended the segment (the sink then answers WAIT).
    ended_by: Option<u64>,
    /// A timestamp has been seen in this queue: samples are kept from the
    /// decode pass that found it on.
    timed: bool,
    /// perf's packets (ranges and discontinuities) in the current pass.
    pass_packets: u32,
    /// Samples were dropped: the element sink forgets its previous ranges.
    cleared: bool,
}

/// perf's packet buffer per trace source holds this many packets less one;
/// a full buffer ends a decode pass.
const PERF_PACKET_BUFFER: u32 = 1024;

impl Segment {
    /// One of perf's packets was buffered: a full buffer ends the pass.
    fn packet(&mut self) {
        if !self.timed {
            self.pass_packets += 1;
            if self.pass_packets >= PERF_PACKET_BUFFER - 1 {
                self.drop_pass();
            }
        }
    }

    /// A decode pass ended (the buffer filled, or the block's data ran
    /// out): before the queue's first timestamp, perf discards what the
    /// pass decoded (`cs_etm__queue_first_cs_timestamp`: packets without
    /// a timestamp cannot be placed in time).
    fn drop_pass(&mut self) {
        if !self.timed {
            self.samples.clear();
            self.pass_packets = 0;
            self.cleared = true;
        }
    }
}

enum Sample {
    Branch(BranchSample),
    Range(RangeSample),
    TraceOn(u8),
}

/// Collects a queue's samples for the timestamp-ordered merge.
struct SegmentSink(Rc<RefCell<Segment>>);

impl SampleSink for SegmentSink {
    fn branch(&mut self, b: &BranchSample) {
        self.0.borrow_mut().samples.push(Sample::Branch(*b));
    }
    fn range(&mut self, r: &RangeSample, _spaces: &mut Spaces) {
        let mut s = self.0.borrow_mut();
        s.instrs += r.n_instr as u64;
        s.samples.push(Sample::Range(*r));
    }
    fn trace_on(&mut self, id: u8, _spaces: &mut Spaces) {
        self.0.borrow_mut().samples.push(Sample::TraceOn(id));
    }
}

/// A decode tree for one AUX queue, the memory callback reading through
/// `shared`, elements to `out` (and, for a timestamped decode, each
/// timestamp element to `clock`, answered with WAIT).
fn make_tree(
    pd: &PerfData,
    blocks: &[&Block],
    meta: &CsMeta,
    shared: &Arc<Mutex<Shared>>,
    out: Rc<RefCell<dyn SampleSink>>,
    clock: Option<Rc<RefCell<Segment>>>,
    cpu_of_id: [i32; 128],
    pid_in_vmid: bool,
    warnings: &mut Vec<String>,
) -> Result<DecodeTree, PerfError> {
    let sh = shared.clone();
    let read = Box::new(move |addr: ocsd_vaddr_t, _space: ocsd_mem_space_acc_t, id: u8, buf: &mut [u8]| -> (usize, Option<(u64, u64)>) {
        match sh.lock() {
            Ok(mut s) => {
                let t = s.tid[(id & 0x7f) as usize];
                s.spaces.read_or_hole(t, addr, buf)
            }
            Err(_) => (0, None),
        }
    });
    let stamp = Arc::new(AtomicU64::new(0));
    let elements = out.borrow().wants_elements();
    let sink = Box::new(ElemSink { shared: shared.clone(), out, elements, samples: Samples::new(cpu_of_id), pid_in_vmid, clock, stamp: stamp.clone() });
    let ids = trace_ids(pd, blocks);
    tree_for(blocks[0], ids, meta, read, stamp, sink, warnings)
}

/// The trace IDs that formatted trace `blocks` may carry data for (bit
/// `id`): the ID bytes of their frames. A frame's ID bytes are its even
/// bytes with bit 0 set; frames start 16-byte aligned in a block (perf's
/// memory-aligned AUX data), and FSYNC words skipped between them are 4
/// bytes, so every even byte of a block with bit 0 set is taken (a
/// superset: ID 0x7F of sync words is one too).
pub(super) fn trace_ids(pd: &PerfData, blocks: &[&Block]) -> u128 {
    let mut ids = 0u128;
    for b in blocks {
        let data = &pd.aux_data(&b.rec)[b.start..b.start + b.len];
        let mut take = |pairs: &[u8]| {
            for &x in pairs.iter().step_by(2) {
                if x & 1 != 0 {
                    ids |= 1u128 << (x >> 1);
                }
            }
        };
        // ID bytes are few: 8 bytes at a time, looked at only when one of
        // their even bytes has bit 0 set
        let words = data.chunks_exact(8);
        let tail = words.remainder();
        for w in words {
            let v = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            if v & 0x0001_0001_0001_0001 != 0 {
                take(w);
            }
        }
        take(tail);
    }
    ids
}

/// A decode tree for the queue whose first block is `blk`: a decoder per
/// CPU whose trace ID is in `ids` (formatted trace; see [`trace_ids`]) or
/// for the block's CPU, memory through `read` (its holes kept by the
/// mapper while `stamp` stays), elements to `sink`.
pub(super) fn tree_for(
    blk: &Block,
    ids: u128,
    meta: &CsMeta,
    read: crate::mem::ReadHoleFn,
    stamp: Arc<AtomicU64>,
    sink: Box<dyn GenElemSink>,
    warnings: &mut Vec<String>,
) -> Result<DecodeTree, PerfError> {
    let (src, flags) = if blk.formatted {
        (OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_RESET_ON_4X_FSYNC)
    } else {
        (OCSD_TRC_SRC_SINGLE, 0)
    };
    let mut tree = DecodeTree::new(src, flags, Box::new(NullLog)).map_err(|e| PerfError::Decode(format!("decode tree: error {}", e)))?;
    let units: Vec<_> = if blk.formatted { meta.cpus.iter().collect() } else { meta.by_cpu(blk.cpu as u32).into_iter().collect() };
    // Formatted trace: a decoder only for the trace IDs in the data (a
    // decoder stack is sizeable, and most CPUs of a recording may have no
    // trace in a queue). A unit left out is refused as the tree would
    // refuse it (an ID already taken), with the same warning; only ETMv4 /
    // ETE units are left out (their decoders are always created: no error
    // is lost).
    let mut taken = 0u128;
    for u in units {
        let id = u.unit.trace_id();
        let skip = blk.formatted && ids & (1u128 << id) == 0 && matches!(u.unit, TraceUnit::Etmv4 { .. } | TraceUnit::Ete { .. });
        if skip {
            let refused = (taken & (1u128 << id) != 0).then_some(OCSD_ERR_ATTACH_TOO_MANY);
            taken |= 1u128 << id;
            if let Some(e) = refused {
                warnings.push(format!("warning: CPU {}: trace ID {:#x} not decoded (error {})", u.cpu, id, e));
            }
            continue;
        }
        let dec = u.unit.create_decoder(true).map_err(|e| PerfError::Decode(format!("CPU {}: decoder: error {}", u.cpu, e)))?;
        match tree.add_decoder(dec) {
            Ok(cs) => taken |= 1u128 << (cs & 0x7f),
            Err(e) => warnings.push(format!("warning: CPU {}: trace ID {:#x} not decoded (error {})", u.cpu, u.unit.trace_id(), e)),
        }
    }
    // Code comes from files already in memory: a read is a copy, so the
    // mapper's page cache for callbacks would only add copies (and could
    // answer from another thread's image after a switch).
    let _ = tree.mapper.set_caching(false, 0, 0);
    let acc = Accessor { start: 0, end: u64::MAX, space: OCSD_MEM_SPACE_ANY, source: Source::CallbackHoles { read, stamp } };
    tree.mapper.add(acc).map_err(|e| PerfError::Decode(format!("memory accessor: error {}", e)))?;
    tree.set_elem_sink(Some(sink));
    Ok(tree)
}

/// Where a queue's decode stopped.
pub(super) struct QueueRun<'a> {
    pub(super) tree: DecodeTree,
    pub(super) blocks: Vec<&'a Block>,
    /// Current block and bytes of it used.
    bi: usize,
    used: usize,
    started: bool,
    /// The decoder answered WAIT: FLUSH before more data.
    flush: bool,
    /// Timestamped decode: the queue's samples (a block's end ends a
    /// decode pass).
    seg: Option<Rc<RefCell<Segment>>>,
    /// Told of each block's start ([`SampleSink::block_start`]).
    notify: Option<Rc<RefCell<dyn SampleSink>>>,
}

impl<'a> QueueRun<'a> {
    pub(super) fn new(tree: DecodeTree, blocks: Vec<&'a Block>, seg: Option<Rc<RefCell<Segment>>>) -> Self {
        QueueRun { tree, blocks, bi: 0, used: 0, started: false, flush: false, seg, notify: None }
    }

    /// Decode on until the sink answers WAIT (true) or the queue's data
    /// ends (false).
    pub(super) fn run(&mut self, pd: &PerfData, warnings: &mut Vec<String>) -> bool {
        loop {
            if self.flush {
                let (resp, _) = self.tree.data_in(OCSD_OP_FLUSH, 0, &[]);
                if resp == OCSD_RESP_WAIT || resp == OCSD_RESP_WARN_WAIT || resp == OCSD_RESP_ERR_WAIT {
                    return true;
                }
                self.flush = false;
            }
            let Some(blk) = self.blocks.get(self.bi).copied() else {
                // the last pass ends with the data
                if let Some(seg) = &self.seg {
                    seg.borrow_mut().drop_pass();
                }
                return false;
            };
            if !self.started {
                if let Some(seg) = &self.seg {
                    seg.borrow_mut().drop_pass();
                }
                let _ = self.tree.data_in(OCSD_OP_RESET, 0, &[]);
                self.started = true;
                self.used = 0;
                if let Some(n) = &self.notify {
                    n.borrow_mut().block_start(blk);
                }
            }
            let data = &pd.aux_data(&blk.rec)[blk.start..blk.start + blk.len];
            if self.used >= data.len() {
                self.bi += 1;
                self.started = false;
                continue;
            }
            let (resp, n) = self.tree.data_in(OCSD_OP_DATA, (blk.offset + self.used as u64) as ocsd_trc_index_t, &data[self.used..]);
            self.used += n;
            if resp >= OCSD_RESP_FATAL_NOT_INIT {
                warnings.push(format!(
                    "warning: PERF_RECORD_AUXTRACE at {:#x}: decode stopped at trace index {} (response {})",
                    blk.rec.file_offset,
                    blk.offset + self.used as u64,
                    resp
                ));
                self.bi += 1;
                self.started = false;
                continue;
            }
            if resp >= OCSD_RESP_WAIT {
                self.flush = true;
                if resp == OCSD_RESP_WAIT || resp == OCSD_RESP_WARN_WAIT || resp == OCSD_RESP_ERR_WAIT {
                    return true;
                }
            } else if n == 0 {
                // no progress without a wait: give up on this block
                self.bi += 1;
                self.started = false;
            }
        }
    }
}

/// The order in which timestamped segments are delivered: by estimated
/// start time (the timestamp ending the segment less its instructions, as
/// perf estimates when the first range of a timestamp began), ties in
/// queue order, each queue's segments in their own order. `next` yields a
/// queue's next segment key (`None`: the queue is done); `emit` delivers
/// the queue's pending segment.
pub(crate) fn merge_by_time(queues: usize, mut next: impl FnMut(usize) -> Option<u64>, mut emit: impl FnMut(usize)) {
    use std::cmp::Reverse;
    let mut heap = std::collections::BinaryHeap::new();
    for q in 0..queues {
        if let Some(k) = next(q) {
            heap.push(Reverse((k, q)));
        }
    }
    while let Some(Reverse((_, q))) = heap.pop() {
        emit(q);
        if let Some(k) = next(q) {
            heap.push(Reverse((k, q)));
        }
    }
}

/// Decode every block of the recording into `out`. `spaces` gives the
/// code; it is returned with the warnings (missing binaries, decode
/// errors).
///
/// Without timestamps in the trace (the cs_etm event's `ETM_OPT_TS` off)
/// the queues are decoded one after the other in queue order, as perf's
/// timeless decode does. With them, each queue is decoded up to its next
/// timestamp and the queues' pieces are delivered in timestamp order (as
/// perf's `cs_etm__process_timestamped_queues` orders its queues by the
/// timestamps in the trace); samples before a queue's first timestamp
/// come first (perf drops them), samples after its last one keep that
/// timestamp.
///
/// On `threads` threads (0: one per core, or serially when the blocks
/// but the largest hold less than 64 KB of trace; 1: serially) where the
/// decode is timeless, with exactly the samples and warnings of the
/// serial decode (see [`super::parallel`]).
pub fn decode(
    pd: &PerfData,
    meta: &CsMeta,
    mode: BlockMode,
    spaces: Spaces,
    out: Rc<RefCell<dyn SampleSink>>,
    threads: usize,
) -> Result<(Spaces, Vec<String>), PerfError> {
    decode_ordered(pd, meta, mode, spaces, out, pd.timestamped(), threads)
}

/// As [`decode`], always queue after queue whatever the recording's
/// timestamps (simpleperf's `inject` decodes the trace as it comes and
/// drops nothing).
pub fn decode_timeless(
    pd: &PerfData,
    meta: &CsMeta,
    mode: BlockMode,
    spaces: Spaces,
    out: Rc<RefCell<dyn SampleSink>>,
    threads: usize,
) -> Result<(Spaces, Vec<String>), PerfError> {
    decode_ordered(pd, meta, mode, spaces, out, false, threads)
}

/// With threads left to the decode (0), the decode is serial when the
/// blocks but the largest (what other threads could take) hold less trace
/// than this. Measured on kernel.perf.data (39 KB in blocks of 16, 16 and
/// 6 KB, about 25 us of decode per KB): two threads took 0.4 ms longer
/// than one, the thread's start (on a virtual machine, waking an idle
/// CPU), a decode tree per block and the replay costing about 0.85 ms;
/// break-even is near 35 KB of trace for the other threads.
const AUTO_PARALLEL_MIN_SPARE: usize = 64 << 10;

fn decode_ordered(
    pd: &PerfData,
    meta: &CsMeta,
    mode: BlockMode,
    spaces: Spaces,
    out: Rc<RefCell<dyn SampleSink>>,
    by_time: bool,
    threads: usize,
) -> Result<(Spaces, Vec<String>), PerfError> {
    let mut tid = [-1i32; 128];
    let mut cpu_of_id = [-1i32; 128];
    for c in &meta.cpus {
        let id = c.unit.trace_id() as usize;
        cpu_of_id[id] = c.cpu as i32;
        if let Some(t) = spaces.itrace_tid.get(&c.cpu) {
            tid[id] = *t;
        }
    }
    let pid_in_vmid = meta.cpus.first().is_some_and(|c| c.unit.pid_in_vmid());

    // queues in index order, blocks in file order
    let mut all = blocks(pd, mode);
    all.sort_by_key(|b| b.rec.idx);
    let mut queues: Vec<Vec<&Block>> = Vec::new();
    for b in &all {
        match queues.last_mut() {
            Some(q) if q[0].rec.idx == b.rec.idx => q.push(b),
            _ => queues.push(vec![b]),
        }
    }
    // one per core, unless there is too little trace for threads to pay
    // (a thread, a decode tree per block and a replay cost more than
    // decoding a few KB serially): the largest block is one thread's
    // whatever the count
    let total: usize = all.iter().map(|b| b.len).sum();
    let largest = all.iter().map(|b| b.len).max().unwrap_or(0);
    // (every element, in queue order)
    let elements = out.borrow().wants_elements();
    let by_time = by_time && !elements;
    let threads = match threads {
        _ if elements => 1,
        0 if total - largest < AUTO_PARALLEL_MIN_SPARE => 1,
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    if !by_time && threads > 1 && all.len() > 1 {
        let setup = super::parallel::Setup { pd, meta, cpu_of_id, pid_in_vmid };
        return super::parallel::decode(&setup, &queues, Shared { spaces, tid }, &mut *out.borrow_mut(), threads);
    }
    let shared = Arc::new(Mutex::new(Shared { spaces, tid }));
    let mut warnings = Vec::new();
    if !by_time {
        for q in &queues {
            let tree = make_tree(pd, q, meta, &shared, out.clone(), None, cpu_of_id, pid_in_vmid, &mut warnings)?;
            let mut run = QueueRun::new(tree, q.clone(), None);
            if elements {
                run.notify = Some(out.clone());
            }
            // no clock: the sink never waits, the queue runs to its end
            while run.run(pd, &mut warnings) {}
        }
    } else {
        let mut runs = Vec::new();
        let mut segs = Vec::new();
        for q in &queues {
            let seg = Rc::new(RefCell::new(Segment::default()));
            let sink = Rc::new(RefCell::new(SegmentSink(seg.clone())));
            let tree = make_tree(pd, q, meta, &shared, sink, Some(seg.clone()), cpu_of_id, pid_in_vmid, &mut warnings)?;
            runs.push((QueueRun::new(tree, q.clone(), Some(seg.clone())), false, 0u64));
            segs.push(seg);
        }
        let pending: Vec<Vec<Sample>> = (0..runs.len()).map(|_| Vec::new()).collect();
        let next = |q: usize, runs: &mut Vec<(QueueRun, bool, u64)>, pending: &mut Vec<Vec<Sample>>, warnings: &mut Vec<String>| -> Option<u64> {
            let (run, done, last_ts) = &mut runs[q];
            if *done {
                return None;
            }
            let waited = run.run(pd, warnings);
            let mut seg = segs[q].borrow_mut();
            let key = match seg.ended_by.take() {
                Some(ts) if waited => {
                    *last_ts = ts;
                    ts.saturating_sub(seg.instrs)
                }
                _ => {
                    *done = true;
                    *last_ts
                }
            };
            seg.instrs = 0;
            pending[q] = std::mem::take(&mut seg.samples);
            Some(key)
        };
        let runs_cell = RefCell::new(runs);
        let pending_cell = RefCell::new(pending);
        let warn_cell = RefCell::new(std::mem::take(&mut warnings));
        merge_by_time(
            segs.len(),
            |q| next(q, &mut runs_cell.borrow_mut(), &mut pending_cell.borrow_mut(), &mut warn_cell.borrow_mut()),
            |q| {
                let samples = std::mem::take(&mut pending_cell.borrow_mut()[q]);
                for s in samples {
                    match s {
                        Sample::Branch(b) => out.borrow_mut().branch(&b),
                        Sample::TraceOn(id) => {
                            if let Ok(mut sh) = shared.lock() {
                                out.borrow_mut().trace_on(id, &mut sh.spaces);
                            }
                        }
                        Sample::Range(r) => {
                            if let Ok(mut sh) = shared.lock() {
                                out.borrow_mut().range(&r, &mut sh.spaces);
                            }
                        }
                    }
                }
            },
        );
        warnings = warn_cell.into_inner();
        drop(runs_cell);
    }
    let shared = Arc::try_unwrap(shared).map_err(|_| PerfError::Decode("memory callbacks still held".into()))?;
    let mut s = shared.into_inner().map_err(|_| PerfError::Decode("internal lock poisoned".into()))?;
    warnings.append(&mut s.spaces.warnings);
    Ok((s.spaces, warnings))
}

#[cfg(test)]
mod tests {
    use super::{merge_by_time, BranchSample, Sample, Segment, PERF_PACKET_BUFFER};

    fn branch(n: u64) -> Sample {
        Sample::Branch(BranchSample { from: n, to: 0, tid: 1, cpu: 0 })
    }

    fn froms(s: &Segment) -> Vec<u64> {
        s.samples.iter().map(|x| if let Sample::Branch(b) = x { b.from } else { 0 }).collect()
    }

    #[test]
    fn before_the_first_timestamp_each_decode_pass_is_dropped() {
        let mut s = Segment::default();
        // a full packet buffer (1023 packets) ends a pass: its samples go,
        // the last packet's included
        for n in 0..PERF_PACKET_BUFFER as u64 - 1 {
            s.samples.push(branch(n));
            s.packet();
        }
        assert!(s.samples.is_empty() && s.cleared);
        // so does the end of a block
        s.samples.push(branch(7));
        s.packet();
        s.drop_pass();
        assert!(s.samples.is_empty());
        // the pass that finds the first timestamp keeps what it decoded
        s.samples.push(branch(8));
        s.packet();
        s.timed = true;
        s.samples.push(branch(9));
        for _ in 0..2 * PERF_PACKET_BUFFER {
            s.packet();
        }
        s.drop_pass();
        assert_eq!(froms(&s), vec![8, 9]);
    }

    #[test]
    fn segments_merge_in_time_order_ties_by_queue() {
        // per queue, the keys of its segments in decode order
        let keys: Vec<Vec<u64>> = vec![vec![10, 40, 41], vec![5, 40, 100], vec![], vec![0]];
        let mut at = vec![0usize; keys.len()];
        let mut order = Vec::new();
        let last_key = std::cell::RefCell::new(vec![None; keys.len()]);
        merge_by_time(
            keys.len(),
            |q| {
                let k = keys[q].get(at[q]).copied();
                last_key.borrow_mut()[q] = k;
                at[q] += 1;
                k
            },
            |q| order.push((q, last_key.borrow()[q].unwrap())),
        );
        assert_eq!(order, vec![(3, 0), (1, 5), (0, 10), (0, 40), (1, 40), (0, 41), (1, 100)]);
    }
}
