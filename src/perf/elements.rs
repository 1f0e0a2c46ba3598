//! Every decoded element of a recording as text, block by block: the
//! element lines `trc_pkt_lister` prints, or one JSON object per element
//! (`ocsd perf`'s output when no other is asked for).
//!
//! The queues are decoded one after the other, each block from a reset
//! decoder (perf's timeless order, nothing dropped). Before each block's
//! elements comes a line naming it: in text a `#` line, in JSON an object
//! with a `block` member:
//!
//! ```text
//! # CPU 7, queue 7: 384 bytes of trace from index 0x0, frame formatted (PERF_RECORD_AUXTRACE at file offset 0x26a8)
//! Idx:0; ID:1e; OCSD_GEN_TRC_ELEM_NO_SYNC( [init-decoder])
//! ```
//! ```text
//! {"block":{"cpu":7,"queue":7,"index":"0x0","bytes":384,"formatted":true,"file_offset":"0x26a8"}}
//! {"index":0,"trace_id":30,"type":"no_sync",...}
//! ```
#![forbid(unsafe_code)]

use std::io::Write;

use crate::abi::gen_elem::ocsd_generic_trace_elem;
use crate::abi::*;
use crate::api::{Element, ListerLines, TextFormat};
use crate::printers::line::LineBuf;

use super::decode::SampleSink;
use super::dump::Block;

/// Text written to the output at a time (whole lines).
const CHUNK: usize = 1 << 16;

/// A [`SampleSink`] writing every element to `W` in a [`TextFormat`].
pub struct ElementText<W: Write> {
    format: TextFormat,
    lines: ListerLines,
    buf: LineBuf,
    w: W,
    err: Option<std::io::Error>,
    /// Elements and blocks written.
    pub elements: u64,
    pub blocks: u64,
    /// Blocks that gave no element (counted when the next one starts, and
    /// by [`ElementText::finish`]).
    pub empty_blocks: u64,
    /// Elements when the current block started; None: no block open.
    block_first: Option<u64>,
}

impl<W: Write> ElementText<W> {
    pub fn new(format: TextFormat, w: W) -> Self {
        ElementText {
            format,
            lines: ListerLines::new(),
            buf: LineBuf::with_capacity(CHUNK + (1 << 12)),
            w,
            err: None,
            elements: 0,
            blocks: 0,
            empty_blocks: 0,
            block_first: None,
        }
    }

    /// The current block (if any) ends.
    fn end_block(&mut self) {
        if self.block_first.take() == Some(self.elements) {
            self.empty_blocks += 1;
        }
    }

    /// Write what is left; the first write error, if any.
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.end_block();
        self.write_out();
        if let Some(e) = self.err.take() {
            return Err(e);
        }
        self.w.flush()
    }

    fn write_out(&mut self) {
        if self.err.is_none() && !self.buf.is_empty() {
            if let Err(e) = self.w.write_all(self.buf.as_bytes()) {
                self.err = Some(e);
            }
        }
        self.buf.clear();
    }
}

impl<W: Write> SampleSink for ElementText<W> {
    fn wants_elements(&self) -> bool {
        true
    }

    fn block_start(&mut self, b: &Block) {
        self.end_block();
        self.block_first = Some(self.elements);
        self.blocks += 1;
        let line = match self.format {
            TextFormat::Lister => format!(
                "# CPU {}, queue {}: {} bytes of trace from index {:#x}, {} (PERF_RECORD_AUXTRACE at file offset {:#x})\n",
                b.cpu,
                b.rec.idx,
                b.len,
                b.offset,
                if b.formatted { "frame formatted" } else { "unformatted" },
                b.rec.file_offset
            ),
            TextFormat::Json => format!(
                "{{\"block\":{{\"cpu\":{},\"queue\":{},\"index\":\"{:#x}\",\"bytes\":{},\"formatted\":{},\"file_offset\":\"{:#x}\"}}}}\n",
                b.cpu, b.rec.idx, b.offset, b.len, b.formatted, b.rec.file_offset
            ),
        };
        self.buf.put_bytes(line.as_bytes());
    }

    fn element(&mut self, index: ocsd_trc_index_t, id: u8, e: &ocsd_generic_trace_elem) {
        if self.err.is_some() {
            return;
        }
        self.elements += 1;
        match self.format {
            TextFormat::Lister => self.lines.write_raw(index, id, e, &mut self.buf),
            TextFormat::Json => {
                Element::from_raw(u64::from(index), id, e).write_json(&mut self.buf);
                self.buf.put_byte(b'\n');
            }
        }
        if self.buf.len() >= CHUNK {
            self.write_out();
        }
    }
}
