//! Text of a generic trace element, as OpenCSD 1.8.0 writes it
//! (`OcsdTraceElement::toString`, used by `ocsd_gen_elem_str` and by the
//! element printer of `trc_pkt_lister`).
//!
//! The text is `NAME(details)` where `NAME` is the element type's enumerator
//! name and `details` depend on the type; an element with a cycle count gets
//! ` [CC=n]; ` before the closing parenthesis. An element type outside the
//! known range prints `OCSD_GEN_TRC_ELEM??: index out of range.` instead.
//!
//! Where OpenCSD indexes a name table with an unchecked value (ISA, trace-on
//! reason, marker type), an out-of-range value prints `Unk` for the ISA and
//! nothing for the others rather than reading past the table.

use std::os::raw::c_int;

use crate::abi::gen_elem::*;
use crate::abi::*;

/// Element type names, indexed by `ocsd_gen_trc_elem_t`.
const ELEM_NAMES: [&str; 20] = [
    "OCSD_GEN_TRC_ELEM_UNKNOWN",
    "OCSD_GEN_TRC_ELEM_NO_SYNC",
    "OCSD_GEN_TRC_ELEM_TRACE_ON",
    "OCSD_GEN_TRC_ELEM_EO_TRACE",
    "OCSD_GEN_TRC_ELEM_PE_CONTEXT",
    "OCSD_GEN_TRC_ELEM_INSTR_RANGE",
    "OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH",
    "OCSD_GEN_TRC_ELEM_ADDR_NACC",
    "OCSD_GEN_TRC_ELEM_ADDR_UNKNOWN",
    "OCSD_GEN_TRC_ELEM_EXCEPTION",
    "OCSD_GEN_TRC_ELEM_EXCEPTION_RET",
    "OCSD_GEN_TRC_ELEM_TIMESTAMP",
    "OCSD_GEN_TRC_ELEM_CYCLE_COUNT",
    "OCSD_GEN_TRC_ELEM_EVENT",
    "OCSD_GEN_TRC_ELEM_SWTRACE",
    "OCSD_GEN_TRC_ELEM_SYNC_MARKER",
    "OCSD_GEN_TRC_ELEM_MEMTRANS",
    "OCSD_GEN_TRC_ELEM_INSTRUMENTATION",
    "OCSD_GEN_TRC_ELEM_ITMTRACE",
    "OCSD_GEN_TRC_ELEM_CUSTOM",
];

/// Last instruction type (`ocsd_instr_type`); the short names carry their
/// own padding.
const INSTR_TYPE_NAMES: [&str; 7] = [
    "--- ", "BR  ", "iBR ", "ISB ", "DSB.DMB", "WFI.WFE", "TSTART",
];

/// Last instruction sub-type (`ocsd_instr_subtype`). Index 0 (none) is
/// never printed.
const INSTR_SUBTYPE_NAMES: [&str; 5] = ["--- ", "b+link ", "A64:ret ", "A64:eret ", "V7:impl ret"];

const TRACE_ON_REASONS: [&str; 3] = ["begin or filter", "overflow", "debug restart"];

const ISA_NAMES: [&str; 7] = ["A32", "T32", "A64", "TEE", "Jaz", "Cst", "Unk"];

/// `) (ISA=<name>) N ` and `... E ` for each ISA name: the middle of an
/// instruction range's text.
macro_rules! isa_exec {
    ($($isa:literal),*) => {
        [$([concat!(") (ISA=", $isa, ") N "), concat!(") (ISA=", $isa, ") E ")]),*]
    };
}
const ISA_EXEC: [[&str; 2]; 7] = isa_exec!("A32", "T32", "A64", "TEE", "Jaz", "Cst", "Unk");

/// `unsync_info_t` names, for NO_SYNC and EO_TRACE elements.
const UNSYNC_REASONS: [&str; 8] = [
    "undefined",
    "init-decoder",
    "reset-decoder",
    "overflow",
    "discard",
    "bad-packet",
    "bad-program-image",
    "end-of-trace",
];

const MEM_TRANS_NAMES: [&str; 4] = ["Init", "Start", "Commit", "Fail"];

const SYNC_MARKER_NAMES: [&str; 1] = ["Timestamp marker"];

/// The entry of `table` for a C enum value, if the value is in range.
fn name_of(table: &[&'static str], value: c_int) -> Option<&'static str> {
    usize::try_from(value)
        .ok()
        .and_then(|i| table.get(i).copied())
}

/// The name OpenCSD gives an element type (`OCSD_GEN_TRC_ELEM_...`), or
/// `None` for a value outside the enumeration.
pub fn elem_type_name(elem_type: ocsd_gen_trc_elem_t) -> Option<&'static str> {
    name_of(&ELEM_NAMES, elem_type)
}

/// The short ISA name printed in element text (`A64`, `T32`, ...).
pub fn isa_name(isa: ocsd_isa) -> &'static str {
    name_of(&ISA_NAMES, isa).unwrap_or("Unk")
}

/// Append the text of a memory space (`ocsd_mem_space_acc_t`) as OpenCSD's
/// `TrcMemAccessorBase::getMemAccSpaceString` writes it: a name for each
/// single space or named group, otherwise each space present followed by a
/// comma (nothing at all for an empty set).
pub fn write_mem_space_str<T: TextOut>(mem_space: ocsd_mem_space_acc_t, out: &mut T) {
    let named = match mem_space {
        OCSD_MEM_SPACE_EL1S => Some("EL1S"),
        OCSD_MEM_SPACE_EL1N => Some("EL1N"),
        OCSD_MEM_SPACE_EL2 => Some("EL2N"),
        OCSD_MEM_SPACE_EL3 => Some("EL3"),
        OCSD_MEM_SPACE_EL2S => Some("EL2S"),
        OCSD_MEM_SPACE_EL1R => Some("EL1R"),
        OCSD_MEM_SPACE_EL2R => Some("EL2R"),
        OCSD_MEM_SPACE_ROOT => Some("Root"),
        OCSD_MEM_SPACE_S => Some("Any S"),
        OCSD_MEM_SPACE_N => Some("Any NS"),
        OCSD_MEM_SPACE_R => Some("Any R"),
        OCSD_MEM_SPACE_ANY => Some("Any"),
        _ => None,
    };
    if let Some(name) = named {
        out.put_str(name);
        return;
    }
    const PARTS: [(ocsd_mem_space_acc_t, &str); 8] = [
        (OCSD_MEM_SPACE_EL1S, "EL1S,"),
        (OCSD_MEM_SPACE_EL1N, "EL1N,"),
        (OCSD_MEM_SPACE_EL2, "EL2N,"),
        (OCSD_MEM_SPACE_EL3, "EL3,"),
        (OCSD_MEM_SPACE_EL2S, "EL2S,"),
        (OCSD_MEM_SPACE_EL1R, "EL1R,"),
        (OCSD_MEM_SPACE_EL2R, "EL2R,"),
        (OCSD_MEM_SPACE_ROOT, "Root,"),
    ];
    for (bit, text) in PARTS {
        if mem_space & bit != 0 {
            out.put_str(text);
        }
    }
}

pub use super::num::{push_dec, push_hex};
use super::line::{LineBuf, Padded, Room};
use super::num::TextOut;

/// The element lines of `trc_pkt_lister`,
/// `Idx:<index>; ID:<trace ID>; <element text>\n`, written from pieces
/// built once: the text after the index up to an instruction range's start
/// address (for the current trace ID), and an instruction range's text
/// after its instruction count in two table pieces. The same bytes as
/// [`write_elem`] between the line's prefix and its end.
///
/// Instruction ranges repeat (loops, hot code): the text of each range
/// line after its index is also kept in a direct-mapped table, keyed by
/// everything the text depends on, and copied whole when the same range
/// comes again. The `Idx:<index>` part is kept for the last index (the
/// elements of one packet share it).
pub struct ElemLineWriter {
    /// The trace ID the prefixes are for.
    chan: Option<u8>,
    /// `; ID:<chan>; `
    id: Padded<16>,
    /// `; ID:<chan>; OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x`
    range: Padded<64>,
    /// `) last_sz(<sz>) (ISA=<isa>) <E|N> ` by [`range_tail1`].
    tail1: Vec<Padded<32>>,
    /// `<type><subtype>< <cond>>` by [`range_tail2`].
    tail2: Vec<Padded<32>>,
    /// Range line texts after the index, by [`RangeKey::slot`].
    lines: Vec<CachedLine>,
}

/// Number of range line texts kept (a power of two): 2048 of 216 bytes;
/// on bugfix-exact-match 89% of the range lines are found (83% with 1024).
const LINE_CACHE: usize = 2048;

/// Longest range line text kept (after the index; with 64-bit addresses
/// and no cycle count a line's text is at most 137 bytes).
const LINE_TEXT: usize = 160;

/// Everything the text of an instruction range line depends on, after
/// its index.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
struct RangeKey {
    st: u64,
    en: u64,
    num: u32,
    /// The element's flag bits the text shows: executed, last instruction
    /// size, cycle count present, conditional.
    flags: u32,
    /// Cycle count, 0 when the element has none.
    cc: u32,
    isa: ocsd_isa,
    ty: ocsd_instr_type,
    sub: ocsd_instr_subtype,
    chan: u8,
}

/// Flag bits of an instruction range element that its text shows:
/// `last_instr_exec`, `last_instr_sz`, `has_cc`, `last_instr_cond`.
const RANGE_TEXT_FLAGS: u32 = 0x1 | 0xE | 0x10 | 0x400;

impl RangeKey {
    #[inline(always)]
    fn of(chan: u8, elem: &ocsd_generic_trace_elem) -> Self {
        let flags = elem.flag_bits & RANGE_TEXT_FLAGS;
        RangeKey {
            st: elem.st_addr,
            en: elem.en_addr,
            num: elem.num_instr_range(),
            flags,
            cc: if flags & 0x10 != 0 { elem.cycle_count } else { 0 },
            isa: elem.isa,
            ty: elem.last_i_type,
            sub: elem.last_i_subtype,
            chan,
        }
    }

    /// The table slot: by start address and whether the last instruction
    /// executed (a conditional branch at a loop's end goes both ways).
    /// Instructions are 4 bytes apart (A64, A32) or 2 (T32): the start
    /// address over 4 and over 2 combined keep neighbours of either apart
    /// (`x ^ (x << 1)` loses no bits).
    #[inline(always)]
    fn slot(&self) -> usize {
        let h = (self.st >> 2) ^ (self.st >> 1);
        ((h as usize) << 1 | (self.flags & 1) as usize) & (LINE_CACHE - 1)
    }
}

/// A range line's text, in two pieces copied whole (no `memcpy` call).
#[derive(Clone, Copy)]
struct CachedLine {
    key: RangeKey,
    /// 0: empty.
    len: usize,
    head: [u8; LINE_HEAD],
    tail: [u8; LINE_TEXT - LINE_HEAD],
}

/// Bytes of a kept line text in its first piece (most lines fit).
const LINE_HEAD: usize = 112;

/// `Idx:<index>` of the last index asked for: the lister's lines start
/// with it, and the elements of one packet follow the packet's line.
#[derive(Clone, Copy)]
pub struct IdxText {
    index: Option<ocsd_trc_index_t>,
    text: Padded<32>,
}

impl Default for IdxText {
    fn default() -> Self {
        IdxText { index: None, text: Padded::new("") }
    }
}

impl IdxText {
    /// `Idx:<index>`
    #[inline(always)]
    pub fn get(&mut self, index: ocsd_trc_index_t) -> &Padded<32> {
        if self.index != Some(index) {
            self.set(index);
        }
        &self.text
    }

    fn set(&mut self, index: ocsd_trc_index_t) {
        self.index = Some(index);
        let mut r = Room::new(&mut self.text.bytes);
        r.put_chunk(b"Idx:", 4);
        r.dec(index as u64);
        self.text.len = r.len();
    }
}

/// ISA index of an element: the name table's, `Unk` when out of range.
#[inline(always)]
fn isa_index(isa: ocsd_isa) -> usize {
    usize::try_from(isa).ok().filter(|&i| i < ISA_NAMES.len()).unwrap_or(ISA_NAMES.len() - 1)
}

/// Index into [`ElemLineWriter::tail1`]: last instruction size (3 bits),
/// ISA (7 names), executed.
#[inline(always)]
fn range_tail1(elem: &ocsd_generic_trace_elem) -> usize {
    (elem.last_instr_sz() as usize & 7) * 14 + isa_index(elem.isa) * 2 + (elem.last_instr_exec() == 1) as usize
}

const TAIL2_TYPES: usize = INSTR_TYPE_NAMES.len() + 1;
const TAIL2_SUBTYPES: usize = INSTR_SUBTYPE_NAMES.len();

/// Index into [`ElemLineWriter::tail2`]: last instruction type (7 names,
/// then one for none), sub-type (0: none printed), conditional.
#[inline(always)]
fn range_tail2(elem: &ocsd_generic_trace_elem) -> usize {
    let t = usize::try_from(elem.last_i_type).ok().filter(|&i| i < INSTR_TYPE_NAMES.len()).unwrap_or(INSTR_TYPE_NAMES.len());
    let s = usize::try_from(elem.last_i_subtype).ok().filter(|&i| i < INSTR_SUBTYPE_NAMES.len()).unwrap_or(0);
    (t * TAIL2_SUBTYPES + s) * 2 + elem.last_instr_cond() as usize
}

impl Default for ElemLineWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl ElemLineWriter {
    pub fn new() -> Self {
        let mut tail1 = Vec::with_capacity(8 * ISA_NAMES.len() * 2);
        for sz in 0..8u8 {
            for isa in ISA_NAMES {
                for ex in ["N", "E"] {
                    tail1.push(Padded::new_owned(&format!(") last_sz({sz}) (ISA={isa}) {ex} ")));
                }
            }
        }
        let mut tail2 = Vec::with_capacity(TAIL2_TYPES * TAIL2_SUBTYPES * 2);
        for t in 0..TAIL2_TYPES {
            for s in 0..TAIL2_SUBTYPES {
                for c in [false, true] {
                    let mut text = String::new();
                    text.push_str(INSTR_TYPE_NAMES.get(t).copied().unwrap_or(""));
                    if s != 0 {
                        text.push_str(INSTR_SUBTYPE_NAMES[s]);
                    }
                    if c {
                        text.push_str(" <cond>");
                    }
                    tail2.push(Padded::new_owned(&text));
                }
            }
        }
        ElemLineWriter {
            chan: None,
            id: Padded::new(""),
            range: Padded::new(""),
            tail1,
            tail2,
            // made with the first line: a writer that writes none (a
            // parallel decode's probe) never fills nor touches it
            lines: Vec::new(),
        }
    }

    #[cold]
    fn set_chan(&mut self, chan: u8) {
        if self.lines.is_empty() {
            self.lines = vec![CachedLine { key: RangeKey::default(), len: 0, head: [0; LINE_HEAD], tail: [0; LINE_TEXT - LINE_HEAD] }; LINE_CACHE];
        }
        self.chan = Some(chan);
        self.id = Padded::new_owned(&format!("; ID:{chan:x}; "));
        self.range = Padded::join(&self.id, &Padded::<48>::new("OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x"));
    }

    /// Append the line of element `elem` from trace ID `chan`, which
    /// starts at trace index `index` (its text kept in `idx`, which the
    /// lister's packet lines share).
    #[inline]
    pub fn write_line(&mut self, out: &mut LineBuf, idx: &mut IdxText, index: ocsd_trc_index_t, chan: u8, elem: &ocsd_generic_trace_elem) {
        if self.chan != Some(chan) {
            self.set_chan(chan);
        }
        let idx_text = idx.get(index);
        if elem.elem_type == OCSD_GEN_TRC_ELEM_INSTR_RANGE {
            // at most 24 + 222 bytes with every piece's padding
            let mut r = out.room::<256>();
            r.put_padded(idx_text);
            let key = RangeKey::of(chan, elem);
            let line = &mut self.lines[key.slot()];
            if line.len != 0 && line.key == key {
                r.put_chunk(&line.head, line.len);
                if line.len > LINE_HEAD {
                    r.put_chunk(&line.tail, line.len - LINE_HEAD);
                }
            } else {
                let start = r.len();
                r.put_padded(&self.range);
                r.hex(elem.st_addr, 0, false);
                r.put_chunk(b":[0x", 4);
                r.hex(elem.en_addr, 0, false);
                r.put_chunk(b"] num_i(", 8);
                r.dec(key.num as u64);
                r.put_padded(&self.tail1[range_tail1(elem)]);
                r.put_padded(&self.tail2[range_tail2(elem)]);
                if key.flags & 0x10 != 0 {
                    r.put_chunk(b" [CC=", 5);
                    r.dec(key.cc as u64);
                    r.put_chunk(b"]; ", 3);
                }
                r.put_chunk(b")\n", 2);
                // the room holds the 160 bytes from `start` (at most 24)
                let len = r.len() - start;
                if let (true, Some(head), Some(tail)) = (len <= LINE_TEXT, r.window::<LINE_HEAD>(start), r.window::<{ LINE_TEXT - LINE_HEAD }>(start + LINE_HEAD)) {
                    line.head = *head;
                    line.tail = *tail;
                    line.len = len;
                    line.key = key;
                }
            }
            let done = r.done();
            if out.commit(done) {
                return;
            }
        }
        out.put_padded(idx_text);
        out.put_padded(&self.id);
        write_elem(elem, out);
        out.put_byte(b'\n');
    }
}

/// Append the text of `elem` to `out`, exactly as OpenCSD 1.8.0's
/// `OcsdTraceElement::toString` produces it (no trailing newline).
///
/// For a SWTRACE element with a data payload the payload is read through
/// `ptr_extended_data`, which must then point to the payload bytes (as the
/// STM decoder provides them); a null pointer prints no payload.
pub fn write_elem_str(elem: &ocsd_generic_trace_elem, out: &mut String) {
    write_elem(elem, out)
}

/// As [`write_elem_str`], to any text buffer (the lister writes its log
/// lines as bytes).
#[inline]
pub fn write_elem<T: TextOut>(elem: &ocsd_generic_trace_elem, out: &mut T) {
    if elem.elem_type == OCSD_GEN_TRC_ELEM_INSTR_RANGE {
        // the most common element: its name in one constant piece
        out.put_str("OCSD_GEN_TRC_ELEM_INSTR_RANGE(");
    } else {
        let Some(name) = elem_type_name(elem.elem_type) else {
            out.put_str("OCSD_GEN_TRC_ELEM??: index out of range.");
            return;
        };
        out.put_str(name);
        out.put_str("(");
    }
    match elem.elem_type {
        OCSD_GEN_TRC_ELEM_INSTR_RANGE => write_instr_range(elem, out),
        OCSD_GEN_TRC_ELEM_ADDR_NACC => {
            // The payload word holds the memory space that could not be read.
            let space = elem.exception_number();
            out.put_str(" 0x");
            out.put_hex(elem.st_addr, 0);
            out.put_str("; Memspace [0x");
            out.put_hex(space as u64, 0);
            out.put_char(':');
            write_mem_space_str(space as ocsd_mem_space_acc_t, out);
            out.put_str("] ");
        }
        OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH => {
            // "first 0x{st:x}:[next 0x{en:x}] num_i({n}) "
            write_range_span(elem, "first 0x", ":[next 0x", out);
            out.put_str(") ");
        }
        OCSD_GEN_TRC_ELEM_EXCEPTION => {
            if elem.excep_ret_addr() == 1 {
                out.put_str("pref ret addr:0x");
                out.put_hex(elem.en_addr, 0);
                if elem.excep_ret_addr_br_tgt() != 0 {
                    out.put_str(" [addr also prev br tgt]");
                }
                out.put_str("; ");
            }
            out.put_str("excep num (0x");
            out.put_hex(elem.exception_number() as u64, 2);
            out.put_str(") ");
        }
        OCSD_GEN_TRC_ELEM_PE_CONTEXT => write_pe_context(elem, out),
        OCSD_GEN_TRC_ELEM_TRACE_ON => {
            if let Some(reason) = name_of(&TRACE_ON_REASONS, elem.trace_on_reason()) {
                out.put_fmt(format_args!(" [{reason}]"));
            }
        }
        OCSD_GEN_TRC_ELEM_TIMESTAMP => write_ts(elem.timestamp, out),
        OCSD_GEN_TRC_ELEM_SWTRACE => write_sw_trace(elem, out),
        OCSD_GEN_TRC_ELEM_ITMTRACE => write_itm_trace(elem, out),
        OCSD_GEN_TRC_ELEM_EVENT => {
            let ev = elem.trace_event();
            match ev.ev_type {
                EVENT_TRIGGER => out.put_str(" Trigger; "),
                EVENT_NUMBERED => {
                    out.put_fmt(format_args!(" Numbered:{}; ", ev.ev_number));
                }
                _ => {}
            }
        }
        OCSD_GEN_TRC_ELEM_EO_TRACE | OCSD_GEN_TRC_ELEM_NO_SYNC => {
            if let Some(reason) = name_of(&UNSYNC_REASONS, elem.unsync_eot_info()) {
                out.put_fmt(format_args!(" [{reason}]"));
            }
        }
        OCSD_GEN_TRC_ELEM_SYNC_MARKER => {
            let marker = elem.sync_marker();
            if let Some(kind) = name_of(&SYNC_MARKER_NAMES, marker.type_) {
                out.put_fmt(format_args!(" [{kind}(0x{:08x})]", marker.value));
            }
        }
        OCSD_GEN_TRC_ELEM_MEMTRANS => {
            if let Some(kind) = name_of(&MEM_TRANS_NAMES, elem.mem_trans()) {
                out.put_str(kind);
            }
        }
        OCSD_GEN_TRC_ELEM_INSTRUMENTATION => {
            let ite = elem.sw_ite();
            out.put_fmt(format_args!("EL{}; 0x{:016x}", ite.el, ite.value));
        }
        // UNKNOWN, ADDR_UNKNOWN, EXCEPTION_RET, CYCLE_COUNT, CUSTOM: no details.
        _ => {}
    }
    if elem.has_cc() != 0 {
        out.put_str(" [CC=");
        out.put_dec(elem.cycle_count as u64);
        out.put_str("]; ");
    }
    out.put_char(')');
}

fn write_ts<T: TextOut>(timestamp: u64, out: &mut T) {
    out.put_str(" [ TS=0x");
    out.put_hex(timestamp, 12);
    out.put_str("]; ");
}

/// "{start}{st:x}{mid}{en:x}] num_i({n}" of an instruction range element.
#[inline(always)]
fn write_range_span<T: TextOut>(elem: &ocsd_generic_trace_elem, start: &str, mid: &str, out: &mut T) {
    out.put_str(start);
    out.put_hex(elem.st_addr, 0);
    out.put_str(mid);
    out.put_hex(elem.en_addr, 0);
    out.put_str("] num_i(");
    out.put_dec(elem.num_instr_range() as u64);
}

fn write_instr_range<T: TextOut>(elem: &ocsd_generic_trace_elem, out: &mut T) {
    // "exec range=0x{st:x}:[0x{en:x}] num_i({n}) last_sz({sz}) (ISA={isa}) {E|N} "
    write_range_span(elem, "exec range=0x", ":[0x", out);
    out.put_str(") last_sz(");
    out.put_dec(elem.last_instr_sz() as u64);
    // ") (ISA=<isa>) <E|N> " in one piece
    let isa = usize::try_from(elem.isa).ok().filter(|&i| i < ISA_NAMES.len()).unwrap_or(ISA_NAMES.len() - 1);
    out.put_str(ISA_EXEC[isa][(elem.last_instr_exec() == 1) as usize]);
    if let Some(ty) = name_of(&INSTR_TYPE_NAMES, elem.last_i_type) {
        out.put_str(ty);
    }
    if elem.last_i_subtype != OCSD_S_INSTR_NONE {
        if let Some(sub) = name_of(&INSTR_SUBTYPE_NAMES, elem.last_i_subtype) {
            out.put_str(sub);
        }
    }
    if elem.last_instr_cond() != 0 {
        out.put_str(" <cond>");
    }
}

// The security-level constants keep OpenCSD's lower-case C names.
#[allow(non_upper_case_globals)]
fn write_pe_context<T: TextOut>(elem: &ocsd_generic_trace_elem, out: &mut T) {
    let ctx = &elem.context;
    out.put_str("(ISA=");
    out.put_str(isa_name(elem.isa));
    out.put_str(") ");
    if ctx.exception_level > ocsd_EL_unknown && ctx.el_valid() != 0 {
        out.put_str("EL");
        out.put_dec(ctx.exception_level as i64 as u64);
    }
    out.put_str(match ctx.security_level {
        ocsd_sec_secure => "S; ",
        ocsd_sec_nonsecure => "N; ",
        ocsd_sec_root => "Root; ",
        ocsd_sec_realm => "Realm; ",
        _ => "",
    });
    out.put_str(if ctx.bits64() != 0 {
        "64-bit; "
    } else {
        "32-bit; "
    });
    if ctx.vmid_valid() != 0 {
        out.put_str("VMID=0x");
        out.put_hex(ctx.vmid as u64, 0);
        out.put_str("; ");
    }
    if ctx.ctxt_id_valid() != 0 {
        out.put_str("CTXTID=0x");
        out.put_hex(ctx.context_id as u64, 0);
        out.put_str("; ");
    }
}

/// The bytes of a software-trace element's payload behind
/// `ptr_extended_data` (as many as its `swt_payload_pkt_bitsize` says: 1,
/// 2, 4 or 8), copied out: `None` for other elements, a null pointer or an
/// unsupported size. Call only while the element is being delivered.
pub fn sw_payload_bytes(elem: &ocsd_generic_trace_elem) -> Option<([u8; 8], usize)> {
    if elem.elem_type != OCSD_GEN_TRC_ELEM_SWTRACE {
        return None;
    }
    let nbytes = match elem.sw_trace_info().swt_payload_pkt_bitsize() {
        4 | 8 => 1,
        16 => 2,
        32 => 4,
        64 => 8,
        _ => return None,
    };
    let ptr = elem.ptr_extended_data as *const u8;
    if ptr.is_null() {
        return None;
    }
    let mut buf = [0u8; 8];
    // SAFETY: the element says (swt_payload_pkt_bitsize) that it carries a
    // payload of `nbytes` (1, 2, 4 or 8) bytes; by OpenCSD's element contract
    // `ptr_extended_data` then points to at least that many readable bytes,
    // valid while the element is. The pointer is non-null (checked above) and
    // the byte-wise copy needs no alignment.
    unsafe { std::ptr::copy_nonoverlapping(ptr, buf.as_mut_ptr(), nbytes) };
    Some((buf, nbytes))
}

/// The `nbytes`-byte STM payload behind `ptr_extended_data` as a
/// native-endian unsigned value (as OpenCSD does by casting the pointer).
/// `None` when the pointer is null.
fn sw_payload_value(elem: &ocsd_generic_trace_elem, nbytes: usize) -> Option<u64> {
    let (buf, n) = sw_payload_bytes(elem)?;
    debug_assert_eq!(n, nbytes);
    Some(match nbytes {
        1 => u64::from(buf[0]),
        2 => u64::from(u16::from_ne_bytes([buf[0], buf[1]])),
        4 => u64::from(u32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]])),
        _ => u64::from_ne_bytes(buf),
    })
}

fn write_sw_trace<T: TextOut>(elem: &ocsd_generic_trace_elem, out: &mut T) {
    let info = elem.sw_trace_info();
    if info.swt_global_err() != 0 {
        out.put_str("{Global Error.}");
        return;
    }
    if info.swt_id_valid() != 0 {
        out.put_fmt(format_args!(" (Ma:0x{:02x}; Ch:0x{:02x}) ",
            info.swt_master_id, info.swt_channel_id
        ));
    } else {
        out.put_str("(Ma:0x??; Ch:0x??) ");
    }

    let bits = info.swt_payload_pkt_bitsize();
    if bits > 0 {
        // (payload bytes, hex digits printed)
        let shape = match bits {
            4 => Some((1, 1)),
            8 => Some((1, 2)),
            16 => Some((2, 4)),
            32 => Some((4, 8)),
            64 => Some((8, 16)),
            _ => None,
        };
        match shape {
            Some((nbytes, digits)) => {
                if let Some(mut value) = sw_payload_value(elem, nbytes) {
                    if bits == 4 {
                        value &= 0xF;
                    }
                    out.put_fmt(format_args!("0x{value:0digits$x}; "));
                }
            }
            None => out.put_str("0x{Data Error : unsupported bit width.}; "),
        }
    }
    if info.swt_marker_packet() != 0 {
        out.put_str("+Mrk ");
    }
    if info.swt_trigger_event() != 0 {
        out.put_str("Trig ");
    }
    if info.swt_has_timestamp() != 0 {
        write_ts(elem.timestamp, out);
    }
    if info.swt_frequency() != 0 {
        out.put_str("Freq");
    }
    if info.swt_master_err() != 0 {
        out.put_str("{Master Error.}");
    }
}

fn write_itm_trace<T: TextOut>(elem: &ocsd_generic_trace_elem, out: &mut T) {
    let itm = elem.swt_itm();
    if itm.overflow != 0 {
        out.put_str("ITM_OVERFLOW; ");
    }
    let digits = usize::from(itm.payload_size) * 2;
    let local_ts_kind = match itm.pkt_type {
        SWIT_PAYLOAD => {
            out.put_fmt(format_args!("ITM_SWIT (ch: 0x{:x}; Data: 0x{:0digits$x}) ",
                itm.payload_src_id, itm.value
            ));
            None
        }
        DWT_PAYLOAD => {
            out.put_fmt(format_args!("ITM_DWT (desc: 0x{:x}; Data: 0x{:0digits$x}) ",
                itm.payload_src_id, itm.value
            ));
            None
        }
        TS_GLOBAL => {
            out.put_fmt(format_args!("ITM_TS_GLOBAL ( TS: 0x{:016x}) ", elem.timestamp));
            None
        }
        TS_SYNC => Some("TS Sync"),
        TS_DELAY => Some("TS Delay"),
        TS_PKT_DELAY => Some("Packet Delay"),
        TS_PKT_TS_DELAY => Some("TS and Packet Delay"),
        _ => None,
    };
    if let Some(kind) = local_ts_kind {
        out.put_fmt(format_args!("ITM_TS_LOCAL ( TS delta: 0x{:08x}, {{ {kind}}}; TS cumulative: 0x{:016x}) ",
            itm.value, elem.timestamp
        ));
    }
}
