//! Compare the decoded instruction stream with a reference execution
//! trace.
//!
//! Trace is filtered and interrupted, so the decoded stream is cut into
//! *segments* at each discontinuity ([`is_discontinuity`]: no sync, trace
//! on, exception, memory not accessible, end of trace...). Each segment
//! must appear in the reference as consecutive instructions (same
//! address and instruction set, the same opcode when memory gave one, and
//! for the last instruction of each range the same outcome: executed, or
//! condition failed as its `N` atom says),
//! and the segments in decode order. Segments are placed greedily at
//! their earliest possible position, which finds a placement whenever
//! one exists.
//!
//! Each trace ID is compared with every CPU of the reference (models tag
//! lines `cpu0`, `cpu1`...); a trace ID matches when one CPU's
//! instructions hold all its segments. Memory use: the reference
//! instructions (32 bytes each) and the instructions of the current
//! decoded segment; the rest of the decoded stream is not kept.

use std::fmt;

use super::disasm::Isa;
use super::instrs::{for_each_instr, is_discontinuity, Instr};
use super::reader::{RefInstr, Reference};
use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::{MemAccess, MemContext};

/// The first decoded instruction that could not be matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// Segment number (1-based) of the decoded instruction.
    pub segment: u64,
    /// Decoded instruction number within the trace ID (1-based).
    pub instr_no: u64,
    /// Position within its segment (0-based).
    pub in_segment: u64,
    /// Trace index (byte offset in the trace) of the element holding it.
    pub trace_index: u64,
    pub addr: u64,
    pub isa: Isa,
    /// Opcode read from memory (`None`: not readable).
    pub opcode: Option<u32>,
    /// Whether the decode says it executed (`false`: condition failed).
    pub executed: bool,
    /// Where the segment was placed in the reference: the reference
    /// instruction found instead (`None`: the segment's first instruction
    /// occurs nowhere after the previous segment, or the reference ended).
    pub reference: Option<RefInstr>,
    /// Reference line after which the segment was looked for (the last
    /// line of the previous segment's match; 0 at the start).
    pub after_line: u64,
}

/// Outcome for one trace ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdReport {
    pub trace_id: u8,
    /// The reference CPU tag compared with (the matching one, or the one
    /// that matched furthest).
    pub cpu: String,
    /// Instructions matched (all decoded instructions when there is no
    /// divergence).
    pub instructions: u64,
    /// Segments fully matched.
    pub segments: u64,
    pub divergence: Option<Divergence>,
}

/// Outcome of a comparison.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompareReport {
    /// One entry per trace ID that gave instructions, by trace ID.
    pub ids: Vec<IdReport>,
}

impl CompareReport {
    /// Every trace ID matched, and there was at least one instruction.
    pub fn matches(&self) -> bool {
        !self.ids.is_empty() && self.ids.iter().all(|r| r.divergence.is_none())
    }

    pub fn instructions(&self) -> u64 {
        self.ids.iter().map(|r| r.instructions).sum()
    }

    pub fn segments(&self) -> u64 {
        self.ids.iter().map(|r| r.segments).sum()
    }
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "decoded instruction {} (segment {}, instruction {} of the segment, trace index {}) at {:#x} ({:?}",
            self.instr_no,
            self.segment,
            self.in_segment + 1,
            self.trace_index,
            self.addr,
            self.isa
        )?;
        if let Some(op) = self.opcode {
            write!(f, ", opcode {:08x}", op)?;
        }
        if !self.executed {
            write!(f, ", condition failed")?;
        }
        write!(f, ")")?;
        match (&self.reference, self.in_segment) {
            (Some(r), _) => write!(
                f,
                " differs from reference line {}: {:#x} ({:?}, opcode {:0w$x}{})",
                r.line,
                r.addr,
                r.isa,
                r.opcode,
                if r.executed { "" } else { ", condition failed" },
                w = r.opcode_digits as usize
            ),
            (None, 0) => write!(f, " not found in the reference after line {}", self.after_line),
            (None, _) => write!(f, ": the reference ends (segment placed after line {})", self.after_line),
        }
    }
}

impl fmt::Display for CompareReport {
    /// `N instructions in M segments match` when everything matches (one
    /// line per trace ID, prefixed `ID 0xNN (cpuN): `, when several);
    /// otherwise the divergences.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ids.is_empty() {
            return write!(f, "no instructions decoded: nothing to compare");
        }
        let many = self.ids.len() > 1;
        for (n, r) in self.ids.iter().enumerate() {
            if n > 0 {
                writeln!(f)?;
            }
            if many {
                write!(f, "ID {:#x} ({}): ", r.trace_id, if r.cpu.is_empty() { "untagged" } else { &r.cpu })?;
            }
            match &r.divergence {
                None => write!(f, "{} instructions in {} segments match", r.instructions, r.segments)?,
                Some(d) => write!(
                    f,
                    "divergence after {} matching instructions in {} segments: {}",
                    r.instructions, r.segments, d
                )?,
            }
        }
        Ok(())
    }
}

/// Matching state of one trace ID against one reference CPU.
#[derive(Debug, Clone)]
struct StreamMatch {
    /// Next reference position a segment may start at.
    cursor: usize,
    /// Start of the current segment's placement.
    cand: usize,
    /// Instructions of the current segment matched at `cand`.
    k: usize,
    instructions: u64,
    segments: u64,
    divergence: Option<Divergence>,
}

/// Whether reference instruction `r` is decoded instruction `d`: same
/// address and instruction set, same opcode when memory gave one, and for
/// the last instruction of a range (the only one whose execution the
/// trace tells: its atom) the same outcome, taken or condition failed.
fn same(r: &RefInstr, d: &Instr) -> bool {
    r.addr == d.addr && r.isa == d.isa && (!d.readable || r.opcode == d.opcode()) && (!d.last || r.executed == d.executed)
}

impl StreamMatch {
    fn new() -> Self {
        StreamMatch { cursor: 0, cand: 0, k: 0, instructions: 0, segments: 0, divergence: None }
    }

    /// Take decoded instruction `d`, the last of `seg` (the current
    /// segment's instructions so far); `first`: it starts a segment.
    fn instr(&mut self, refs: &[RefInstr], seg: &[Instr], first: bool, pos: &Pos) {
        let d = seg.last().expect("the segment holds d");
        if self.divergence.is_some() {
            return;
        }
        if first {
            self.k = 0;
            match refs[self.cursor.min(refs.len())..].iter().position(|r| same(r, d)) {
                Some(p) => {
                    self.cand = self.cursor + p;
                    self.k = 1;
                }
                None => self.diverge(refs, d, pos, None),
            }
            return;
        }
        if refs.get(self.cand + self.k).is_some_and(|r| same(r, d)) {
            self.k += 1;
            return;
        }
        // Move the placement: a later start where the segment so far
        // (`seg`, which ends with `d`) fits.
        let k = self.k;
        let cand = self.cand;
        let mut p = cand + 1;
        while p + k < refs.len() {
            if (0..=k).all(|j| same(&refs[p + j], &seg[j])) {
                self.cand = p;
                self.k += 1;
                return;
            }
            p += 1;
        }
        let found = refs.get(cand + k).copied();
        self.diverge(refs, d, pos, found);
    }

    fn diverge(&mut self, refs: &[RefInstr], d: &Instr, pos: &Pos, found: Option<RefInstr>) {
        // the line the comparison got to: the end of the previous
        // segment's match, or the last line of this segment's placement
        let upto = if pos.in_segment == 0 { self.cursor } else { self.cand + self.k };
        let after_line = if upto == 0 { 0 } else { refs.get(upto - 1).map_or(0, |r| r.line) };
        self.divergence = Some(Divergence {
            segment: pos.segment,
            instr_no: pos.instr_no,
            in_segment: pos.in_segment,
            trace_index: pos.trace_index,
            addr: d.addr,
            isa: d.isa,
            opcode: d.readable.then(|| d.opcode()),
            executed: d.executed,
            reference: found,
            after_line,
        });
    }

    /// The current segment ends.
    fn end_segment(&mut self, had_instrs: bool) {
        if self.divergence.is_some() || !had_instrs {
            return;
        }
        self.cursor = self.cand + self.k;
        self.instructions += self.k as u64;
        self.segments += 1;
        self.k = 0;
    }
}

/// Position of a decoded instruction, for reports.
struct Pos {
    segment: u64,
    instr_no: u64,
    in_segment: u64,
    trace_index: u64,
}

struct IdState {
    ctx: Option<ocsd_pe_context>,
    /// Context ID and VMID as the elements gave them (memory images may
    /// be mapped per context).
    mem_ctx: MemContext,
    /// Segments started (the current one included).
    segment: u64,
    instr_no: u64,
    /// Instructions in the current segment.
    in_segment: u64,
    /// The current segment's instructions (storage reused between
    /// segments), to move a placement.
    seg: Vec<Instr>,
    streams: Vec<StreamMatch>,
}

/// Compares decoded elements with a reference trace, as they come.
///
/// ```no_run
/// # use opencsd_c_api::tarmac::{Comparer, Reference};
/// let reference = Reference::from_file("test_TARMAC".as_ref()).unwrap();
/// let mut cmp = Comparer::new(&reference);
/// // for each decoded element: cmp.element(index, trace_id, &elem, &mut memory);
/// let report = cmp.finish();
/// println!("{}", report); // "5146 instructions in 8 segments match"
/// ```
pub struct Comparer<'r> {
    refs: &'r Reference,
    ids: Vec<Option<IdState>>,
}

impl<'r> Comparer<'r> {
    pub fn new(refs: &'r Reference) -> Self {
        Comparer { refs, ids: (0..256).map(|_| None).collect() }
    }

    /// Take one decoded element (trace index `index`, trace ID
    /// `trace_id`); `mem` is the target memory of the decode.
    pub fn element(&mut self, index: u64, trace_id: u8, elem: &ocsd_generic_trace_elem, mem: &mut dyn MemAccess) {
        let ncpus = self.refs.cpus.len();
        let st = self.ids[trace_id as usize].get_or_insert_with(|| IdState {
            ctx: None,
            mem_ctx: MemContext::default(),
            segment: 0,
            instr_no: 0,
            in_segment: 0,
            seg: Vec::with_capacity(1024),
            streams: vec![StreamMatch::new(); ncpus],
        });
        match elem.elem_type {
            OCSD_GEN_TRC_ELEM_PE_CONTEXT => {
                st.ctx = Some(elem.context);
                st.mem_ctx.merge(MemContext::from_pe_context(&elem.context));
            }
            OCSD_GEN_TRC_ELEM_INSTR_RANGE => {
                let ctx = st.ctx.unwrap_or(elem.context);
                let refs = self.refs;
                let complete = for_each_instr(elem, &ctx, &st.mem_ctx, trace_id, mem, |d| {
                    let first = st.in_segment == 0;
                    if first {
                        st.segment += 1;
                    }
                    st.instr_no += 1;
                    let pos = Pos { segment: st.segment, instr_no: st.instr_no, in_segment: st.in_segment, trace_index: index };
                    if first {
                        st.seg.clear();
                    }
                    st.seg.push(*d);
                    for (s, (_, cpu_refs)) in st.streams.iter_mut().zip(refs.cpus.iter()) {
                        s.instr(cpu_refs, &st.seg, first, &pos);
                    }
                    st.in_segment += 1;
                });
                if !complete {
                    // the rest of the range is unknown: a break
                    Self::end_segment(st);
                }
            }
            t if is_discontinuity(t) => Self::end_segment(st),
            _ => {}
        }
    }

    fn end_segment(st: &mut IdState) {
        let had = st.in_segment > 0;
        st.seg.clear();
        for s in st.streams.iter_mut() {
            s.end_segment(had);
        }
        st.in_segment = 0;
    }

    /// End of the decode: the report.
    pub fn finish(mut self) -> CompareReport {
        let mut report = CompareReport::default();
        for (id, st) in self.ids.iter_mut().enumerate() {
            let Some(st) = st.as_mut() else { continue };
            Self::end_segment(st);
            if st.instr_no == 0 {
                continue;
            }
            // a CPU holding every segment; else the one matched furthest
            let best = st
                .streams
                .iter()
                .enumerate()
                .max_by_key(|(n, s)| (s.divergence.is_none(), s.instructions + s.divergence.as_ref().map_or(0, |d| d.in_segment), std::cmp::Reverse(*n)))
                .map(|(n, _)| n);
            let Some(b) = best else { continue };
            let s = &st.streams[b];
            report.ids.push(IdReport {
                trace_id: id as u8,
                cpu: self.refs.cpus[b].0.clone(),
                instructions: s.instructions,
                segments: s.segments,
                divergence: s.divergence.clone(),
            });
        }
        report
    }
}
