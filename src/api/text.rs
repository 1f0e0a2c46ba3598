//! [`Decoder::decode_text`]: decode straight to text (the lister's lines or
//! JSON lines), written from the decoders' elements as they come, with no
//! [`Element`] queue in between.

use std::cell::RefCell;
use std::io::Read;
use std::rc::Rc;

use super::{Decoder, Element, Error, ListerLines, QueueSink, State};
use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::GenElemSink;
use crate::printers::line::LineBuf;

/// The text [`Decoder::decode_text`] writes, one line per element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    /// `trc_pkt_lister`'s lines ([`Element::write_lister_line`]).
    Lister,
    /// One JSON object per line ([`Element::write_json`]).
    Json,
}

/// Element types counted one by one (OpenCSD's are 0..=19); the others
/// share the last counter.
pub const TEXT_COUNT_TYPES: usize = 32;

/// What [`Decoder::decode_text`] decoded.
#[derive(Debug)]
pub struct TextSummary {
    /// Trace bytes processed.
    pub bytes: u64,
    pub elements: u64,
    /// Elements by OpenCSD element type ([`Element::raw_type`]; types
    /// outside `0..TEXT_COUNT_TYPES - 1` in the last entry).
    pub by_type: [u64; TEXT_COUNT_TYPES],
    /// Instructions of the instruction ranges (with and without a path).
    pub instructions: u64,
    /// Whether any element but NO_SYNC and EO_TRACE came.
    pub synced: bool,
    /// The error that ended decode early (the text before it is complete).
    pub error: Option<Error>,
}

impl TextSummary {
    pub(super) fn new() -> Self {
        TextSummary { bytes: 0, elements: 0, by_type: [0; TEXT_COUNT_TYPES], instructions: 0, synced: false, error: None }
    }

    #[inline(always)]
    fn count(&mut self, e: &ocsd_generic_trace_elem) {
        self.count_kind(e.elem_type, counted_instructions(e));
    }

    /// One element of type `t` with `instructions` counted
    /// ([`counted_instructions`]).
    #[inline(always)]
    pub(super) fn count_kind(&mut self, t: ocsd_gen_trc_elem_t, instructions: u32) {
        self.elements += 1;
        self.by_type[usize::try_from(t).map_or(TEXT_COUNT_TYPES - 1, |t| t.min(TEXT_COUNT_TYPES - 1))] += 1;
        self.instructions += instructions as u64;
        if t != OCSD_GEN_TRC_ELEM_NO_SYNC && t != OCSD_GEN_TRC_ELEM_EO_TRACE {
            self.synced = true;
        }
    }
}

/// The instructions an element adds to [`TextSummary::instructions`].
#[inline(always)]
pub(super) fn counted_instructions(e: &ocsd_generic_trace_elem) -> u32 {
    let t = e.elem_type;
    if t == OCSD_GEN_TRC_ELEM_INSTR_RANGE || t == OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH {
        e.num_instr_range()
    } else {
        0
    }
}

/// Write element `elem`'s line in `format` to `buf`.
#[inline(always)]
pub(super) fn write_line(format: TextFormat, lines: &mut ListerLines, index: ocsd_trc_index_t, id: u8, elem: &ocsd_generic_trace_elem, buf: &mut LineBuf) {
    match format {
        // the element's extended data is valid while it is delivered
        TextFormat::Lister => lines.write_raw(index, id, elem, buf),
        TextFormat::Json => {
            Element::from_raw(index as u64, id, elem).write_json(buf);
            buf.put_byte(b'\n');
        }
    }
}

struct TextState {
    format: TextFormat,
    lines: ListerLines,
    buf: LineBuf,
    summary: TextSummary,
    /// Elements still to pass over (written and counted before).
    skip: u64,
}

impl TextState {
    #[inline(always)]
    fn element(&mut self, index: ocsd_trc_index_t, id: u8, elem: &ocsd_generic_trace_elem) {
        if self.skip > 0 {
            self.skip -= 1;
            return;
        }
        self.summary.count(elem);
        write_line(self.format, &mut self.lines, index, id, elem, &mut self.buf);
    }
}

struct TextSink(Rc<RefCell<TextState>>);

impl GenElemSink for TextSink {
    fn trace_elem_in(&mut self, index: ocsd_trc_index_t, id: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        self.0.borrow_mut().element(index, id, elem);
        OCSD_RESP_CONT
    }

    fn trace_elems_in(&mut self, elems: &[(ocsd_trc_index_t, ocsd_generic_trace_elem)], id: u8) -> (usize, ocsd_datapath_resp_t) {
        let s = &mut *self.0.borrow_mut();
        for (index, e) in elems {
            s.element(*index, id, e);
        }
        (elems.len(), OCSD_RESP_CONT)
    }
}

impl Decoder {
    /// Decode `trace` to the end as one trace session (as
    /// [`Decoder::decode`]), writing one line of text per element in
    /// `format`: the text of [`Element::write_lister_line`] or
    /// [`Element::write_json`] and a newline. The text goes to `out` in
    /// pieces of about `chunk` bytes (whole lines, the last piece shorter);
    /// when `out` returns false, decode stops there. The summary gives the
    /// counts and any error that stopped decode. Faster than taking the
    /// elements from [`Decoder::decode`]: each line is written from the
    /// decoder's element as it comes.
    pub fn decode_text<R: Read>(&mut self, trace: R, format: TextFormat, chunk: usize, out: impl FnMut(&[u8]) -> bool) -> TextSummary {
        self.decode_text_from(trace, format, chunk, out, 0, TextSummary::new())
    }

    /// [`Decoder::decode_text`], passing over the first `skip` elements
    /// (already written and counted in `summary`).
    pub(super) fn decode_text_from<R: Read>(
        &mut self,
        trace: R,
        format: TextFormat,
        chunk: usize,
        mut out: impl FnMut(&[u8]) -> bool,
        skip: u64,
        summary: TextSummary,
    ) -> TextSummary {
        let chunk = chunk.max(1);
        let state = Rc::new(RefCell::new(TextState {
            format,
            lines: ListerLines::new(),
            buf: LineBuf::with_capacity(chunk + (1 << 16)),
            summary,
            skip,
        }));
        self.tree.set_elem_sink(Some(Box::new(TextSink(state.clone()))));
        let mut it = self.decode(trace);
        let mut go = true;
        while go && it.state != State::Done {
            it.step();
            let s = &mut *state.borrow_mut();
            if s.buf.len() >= chunk {
                go = out(s.buf.as_bytes());
                s.buf.clear();
            }
        }
        let bytes = it.bytes();
        let error = it.error.take();
        drop(it);
        self.tree.set_elem_sink(Some(Box::new(QueueSink(self.queue.clone()))));
        let s = &mut *state.borrow_mut();
        if go && !s.buf.is_empty() {
            out(s.buf.as_bytes());
        }
        let mut summary = std::mem::replace(&mut s.summary, TextSummary::new());
        summary.bytes = bytes;
        summary.error = error;
        summary
    }
}
