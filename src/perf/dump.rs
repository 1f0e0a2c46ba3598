//! The packet dump of `perf report -D`: each block of trace through a
//! packet-printing decode tree set up as perf sets it up.
//!
//! perf (`cs-etm.c`, `cs-etm-decoder.c`) creates, per AUX queue, a decode
//! tree with one packet processor per trace unit of the metadata, the
//! library's packet printers, and the default error logger at error
//! severity writing through a string callback; every line goes out as
//! `\t<line>`. Each block is fed with OCSD_OP_DATA at index
//! `block offset + bytes used` (a fatal response ends the block), then the
//! tree is reset with printing suppressed; no end-of-trace is sent.
//!
//! Which blocks, and whether they are frame formatted:
//! - when the file's AUXTRACE index is in perf's layout, perf splits each
//!   AUXTRACE block at the AUX records that cover it, and takes the format
//!   from each AUX record's `CORESIGHT_FORMAT_RAW` flag;
//! - otherwise (simpleperf's files: its index has no count word, so perf
//!   cannot read it) each AUXTRACE record is one block, assumed formatted.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Write;
use std::os::raw::c_void;
use std::rc::Rc;

use crate::abi::*;
use crate::common::{ErrorLog, OcsdError, TracePacket};
use crate::dcd_tree::{DecodeTree, PacketObserver};

use super::cs_meta::CsMeta;
use super::file::{AuxtraceRecord, PerfData};
use super::PerfError;

/// How blocks are cut from the AUXTRACE records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockMode {
    /// As perf would: [`BlockMode::ByAux`] when the AUXTRACE index is in
    /// perf's layout, else [`BlockMode::Whole`].
    Auto,
    /// Whole AUXTRACE records, frame formatted.
    Whole,
    /// AUXTRACE records split at AUX records, format from their flags.
    ByAux,
}

/// A block of trace to decode.
#[derive(Debug, Clone)]
pub struct Block {
    /// The AUXTRACE record it comes from.
    pub rec: AuxtraceRecord,
    /// Stream offset of the block (the first byte's trace index).
    pub offset: u64,
    /// Byte range inside the record's data.
    pub start: usize,
    pub len: usize,
    pub formatted: bool,
    /// CPU of the AUX record (ByAux), else the AUXTRACE record's.
    pub cpu: i32,
    /// The AUX record's flags (ByAux).
    pub aux_flags: u64,
}

/// Cut the file's trace into blocks.
pub fn blocks(pd: &PerfData, mode: BlockMode) -> Vec<Block> {
    let by_aux = match mode {
        BlockMode::Auto => pd.perf_auxtrace_index,
        BlockMode::Whole => false,
        BlockMode::ByAux => true,
    };
    let mut out = Vec::new();
    for rec in &pd.auxtrace {
        if !by_aux {
            out.push(Block {
                rec: rec.clone(),
                offset: rec.offset,
                start: 0,
                len: rec.size as usize,
                formatted: true,
                cpu: rec.cpu,
                aux_flags: 0,
            });
            continue;
        }
        // The AUX records of this queue whose data lies in this record.
        for aux in &pd.aux {
            if aux.aux_size == 0 {
                continue;
            }
            let same_queue = match aux.common.cpu {
                Some(c) if rec.cpu >= 0 && rec.cpu as u32 != u32::MAX => c == rec.cpu as u32,
                _ => aux.common.tid.is_none_or(|t| t == rec.tid),
            };
            if !same_queue {
                continue;
            }
            let (a0, a1) = (aux.aux_offset, aux.aux_offset.saturating_add(aux.aux_size));
            if a0 >= rec.offset && a1 <= rec.offset + rec.size {
                out.push(Block {
                    rec: rec.clone(),
                    offset: a0,
                    start: (a0 - rec.offset) as usize,
                    len: aux.aux_size as usize,
                    formatted: !aux.raw_format(),
                    cpu: aux.common.cpu.map_or(rec.cpu, |c| c as i32),
                    aux_flags: aux.flags,
                });
            }
        }
    }
    out
}

type Out = Rc<RefCell<Vec<u8>>>;

/// perf's packet printer callback: `\t<text>`, newline added if missing.
fn emit(out: &Out, enabled: &Rc<RefCell<bool>>, text: &str) {
    if !*enabled.borrow() || text.is_empty() {
        return;
    }
    let mut o = out.borrow_mut();
    o.push(b'\t');
    o.extend_from_slice(text.as_bytes());
    if !text.ends_with('\n') {
        o.push(b'\n');
    }
}

/// Whose packet text to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextStyle {
    /// OpenCSD 1.8.0's text (this library's printers).
    V1_8,
    /// OpenCSD 1.3.x's text, which Debian's perf prints: the same except
    /// that the first trace info packet after a reset is not annotated
    /// (`; INIT SPEC DEPTH=n; Decoder Sync point TINFO` came with 1.4).
    V1_3,
}

/// The library's packet printer, as `ocsd_dt_set_pkt_protocol_printer`
/// (sink, no raw bytes) sets it up.
struct Printer {
    out: Out,
    on: Rc<RefCell<bool>>,
    id: u8,
    text: String,
    style: TextStyle,
}

/// Remove the initial trace info annotation OpenCSD 1.3 does not print.
fn strip_initial_tinfo(text: &mut String) {
    const SYNC: &str = "; Decoder Sync point TINFO";
    if !text.contains("I_TRACE_INFO") {
        return;
    }
    if let Some(p) = text.find(SYNC) {
        text.replace_range(p..p + SYNC.len(), "");
        if let Some(q) = text.find("; INIT SPEC DEPTH=") {
            let end = text[q + 2..].find(';').map_or(text.trim_end().len(), |e| q + 2 + e);
            text.replace_range(q..end, "");
        }
    }
}

impl PacketObserver for Printer {
    fn packet(&mut self, op: ocsd_datapath_op_t, index_sop: ocsd_trc_index_t, pkt: Option<&dyn TracePacket>, _: *const c_void, _: &[u8]) -> ocsd_datapath_resp_t {
        use std::fmt::Write as _;
        self.text.clear();
        match op {
            OCSD_OP_DATA => {
                let _ = write!(self.text, "Idx:{}; ID:{:x};\t", index_sop, self.id);
                if let Some(p) = pkt {
                    p.write_str(&mut self.text);
                }
                if self.style == TextStyle::V1_3 {
                    strip_initial_tinfo(&mut self.text);
                }
                self.text.push('\n');
            }
            OCSD_OP_EOT => {
                let _ = writeln!(self.text, "ID:{:x}\tEND OF TRACE DATA", self.id);
            }
            OCSD_OP_FLUSH => {
                let _ = writeln!(self.text, "ID:{:x}\tFLUSH operation on trace decode path", self.id);
            }
            OCSD_OP_RESET => {
                let _ = writeln!(self.text, "ID:{:x}\tRESET operation on trace decode path", self.id);
            }
            _ => {}
        }
        emit(&self.out, &self.on, &self.text);
        OCSD_RESP_CONT
    }
}

/// The default error logger at error severity, through perf's callback.
struct Logger {
    out: Out,
    on: Rc<RefCell<bool>>,
}

impl ErrorLog for Logger {
    fn log_error(&mut self, component: &str, err: &OcsdError) {
        if err.sev <= OCSD_ERR_SEV_ERROR {
            emit(&self.out, &self.on, &format!("{} : {}", component, err.error_string()));
        }
    }
    fn log_message(&mut self, component: &str, sev: ocsd_err_severity_t, msg: &str) {
        if sev <= OCSD_ERR_SEV_ERROR {
            emit(&self.out, &self.on, &format!("{} : {}", component, msg));
        }
    }
    fn verbosity(&self) -> ocsd_err_severity_t {
        OCSD_ERR_SEV_ERROR
    }
}

struct QueueDecoder {
    tree: DecodeTree,
    name: &'static str,
}

/// perf's dump decoder for a queue: every unit of the metadata for
/// formatted trace, the block's CPU's unit alone for unformatted trace.
fn new_queue_decoder(meta: &CsMeta, blk: &Block, out: &Out, on: &Rc<RefCell<bool>>, style: TextStyle) -> Result<QueueDecoder, PerfError> {
    let logger = Box::new(Logger { out: out.clone(), on: on.clone() });
    let (src, flags) = if blk.formatted {
        (OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_RESET_ON_4X_FSYNC)
    } else {
        (OCSD_TRC_SRC_SINGLE, OCSD_DFRMTR_RESET_ON_4X_FSYNC)
    };
    let mut tree = DecodeTree::new(src, flags, logger).map_err(|e| PerfError::Decode(format!("decode tree: error {}", e)))?;
    let units: Vec<_> = if blk.formatted {
        meta.cpus.iter().collect()
    } else {
        meta.by_cpu(blk.cpu as u32).into_iter().collect()
    };
    if units.is_empty() {
        return Err(PerfError::Format {
            what: "PERF_RECORD_AUXTRACE".into(),
            offset: blk.rec.file_offset,
            msg: format!("no trace unit metadata for CPU {}", blk.cpu),
        });
    }
    let mut name = "";
    for u in units {
        let mut dec = u.unit.create_decoder(false).map_err(|e| PerfError::Decode(format!("CPU {}: decoder: error {}", u.cpu, e)))?;
        let id = u.unit.trace_id();
        dec.set_sink(Some(Box::new(Printer { out: out.clone(), on: on.clone(), id, text: String::new(), style })));
        name = u.unit.decoder_name();
        if let Err(e) = tree.add_decoder(dec) {
            return Err(PerfError::Format {
                what: "PERF_RECORD_AUXTRACE_INFO".into(),
                offset: 0,
                msg: format!("CPU {}: trace ID {:#x} cannot be decoded (error {})", u.cpu, id, e),
            });
        }
    }
    Ok(QueueDecoder { tree, name })
}

/// Write the dump of every block to `w`. Returns the number of blocks.
pub fn dump(pd: &PerfData, meta: &CsMeta, mode: BlockMode, style: TextStyle, w: &mut dyn Write) -> Result<usize, PerfError> {
    let out: Out = Rc::new(RefCell::new(Vec::with_capacity(1 << 16)));
    let on = Rc::new(RefCell::new(true));
    let mut queues: BTreeMap<u32, QueueDecoder> = BTreeMap::new();
    let blocks = blocks(pd, mode);
    let io = |e: std::io::Error| PerfError::Io(e.to_string());
    for blk in &blocks {
        let q = match queues.get_mut(&blk.rec.idx) {
            Some(q) => q,
            None => {
                let q = new_queue_decoder(meta, blk, &out, &on, style)?;
                queues.entry(blk.rec.idx).or_insert(q)
            }
        };
        let r = &blk.rec;
        writeln!(
            w,
            "\n{} [0x30]: PERF_RECORD_AUXTRACE size: {}  offset: {}  ref: {}  idx: {}  tid: {}  cpu: {}",
            c_hex(r.file_offset),
            c_hex(r.size),
            c_hex(r.offset),
            c_hex(r.reference),
            r.idx,
            r.tid,
            r.cpu
        )
        .map_err(io)?;
        writeln!(w, "\n. ... CoreSight {} Trace data: size {} bytes", q.name, c_hex(blk.len as u64)).map_err(io)?;
        let data = &pd.aux_data(r)[blk.start..blk.start + blk.len];
        let mut used = 0usize;
        while used < data.len() {
            let (resp, n) = q.tree.data_in(OCSD_OP_DATA, (blk.offset + used as u64) as ocsd_trc_index_t, &data[used..]);
            used += n;
            if ocsd_data_resp_is_fatal(resp) || n == 0 {
                break;
            }
            if ocsd_data_resp_is_wait(resp) {
                // packet printers never wait; flush to be safe
                let _ = q.tree.data_in(OCSD_OP_FLUSH, 0, &[]);
            }
        }
        *on.borrow_mut() = false;
        let _ = q.tree.data_in(OCSD_OP_RESET, 0, &[]);
        *on.borrow_mut() = true;
        w.write_all(&out.borrow()).map_err(io)?;
        out.borrow_mut().clear();
    }
    Ok(blocks.len())
}

/// C's `%#x`: `0` for zero, `0x..` otherwise.
fn c_hex(v: u64) -> String {
    if v == 0 {
        "0".into()
    } else {
        format!("{:#x}", v)
    }
}

fn ocsd_data_resp_is_fatal(r: ocsd_datapath_resp_t) -> bool {
    r >= OCSD_RESP_FATAL_NOT_INIT
}
fn ocsd_data_resp_is_wait(r: ocsd_datapath_resp_t) -> bool {
    (OCSD_RESP_WAIT..OCSD_RESP_FATAL_NOT_INIT).contains(&r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_only_the_initial_annotation() {
        let mut t = String::from("Idx:12; ID:1e;\tI_TRACE_INFO : Trace Info.; INFO=0x0 { CC.0 }; Decoder Sync point TINFO");
        strip_initial_tinfo(&mut t);
        assert_eq!(t, "Idx:12; ID:1e;\tI_TRACE_INFO : Trace Info.; INFO=0x0 { CC.0 }");
        let mut t = String::from("I_TRACE_INFO : Trace Info.; INFO=0x41 { CC.1, TSTATE.1 }; CC_THRESHOLD=0x16; INIT SPEC DEPTH=3; Decoder Sync point TINFO");
        strip_initial_tinfo(&mut t);
        assert_eq!(t, "I_TRACE_INFO : Trace Info.; INFO=0x41 { CC.1, TSTATE.1 }; CC_THRESHOLD=0x16");
        let mut t = String::from("I_ATOM_F1 : Atom format 1.; E");
        strip_initial_tinfo(&mut t);
        assert_eq!(t, "I_ATOM_F1 : Atom format 1.; E");
    }
}
