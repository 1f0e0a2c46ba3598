//! Generic trace elements as typed Rust values.
//!
//! Every decoder outputs OpenCSD's generic element
//! (`ocsd_generic_trace_elem`, a C struct with a union payload); an
//! [`Element`] is the same information with one enum variant per element
//! type. [`Element::opencsd_text`] gives OpenCSD's text for it, and with
//! the `serde` serializer it becomes one JSON object with stable field
//! names (addresses as `"0x..."` strings).

#![allow(non_upper_case_globals)] // OpenCSD's C constant names in patterns

use serde::{Serialize, Serializer};

use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::printers::gen_elem::{ElemLineWriter, IdxText};

mod packed;
pub(crate) use packed::{ElementQueue, PackedElements};
pub use crate::printers::line::LineBuf;
pub use crate::printers::num::TextOut;

/// `0x...` (lower case, no leading zeros), formatted without allocating.
fn hex<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
    let mut buf = [0u8; 18];
    let digits = (64 - v.leading_zeros()).div_ceil(4).max(1) as usize;
    buf[0] = b'0';
    buf[1] = b'x';
    for i in 0..digits {
        let nib = (v >> (4 * (digits - 1 - i))) & 0xf;
        buf[2 + i] = b"0123456789abcdef"[nib as usize];
    }
    s.serialize_str(std::str::from_utf8(&buf[..2 + digits]).unwrap_or("0x?"))
}

fn hex_opt<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => hex(v, s),
        None => s.serialize_none(),
    }
}

/// Instruction set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Isa {
    /// A32 (Arm)
    A32,
    /// T32 (Thumb-2)
    T32,
    /// A64
    A64,
    /// ThumbEE
    Tee,
    Jazelle,
    Custom,
    Unknown,
}

impl Isa {
    pub fn from_raw(isa: ocsd_isa) -> Isa {
        match isa {
            ocsd_isa_arm => Isa::A32,
            ocsd_isa_thumb2 => Isa::T32,
            ocsd_isa_aarch64 => Isa::A64,
            ocsd_isa_tee => Isa::Tee,
            ocsd_isa_jazelle => Isa::Jazelle,
            ocsd_isa_custom => Isa::Custom,
            _ => Isa::Unknown,
        }
    }
}

/// The kind of the last instruction of a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstrType {
    Other,
    /// Direct branch.
    Branch,
    IndirectBranch,
    Isb,
    DsbDmb,
    WfiWfe,
    Tstart,
}

impl InstrType {
    pub fn from_raw(t: ocsd_instr_type) -> InstrType {
        match t {
            OCSD_INSTR_BR => InstrType::Branch,
            OCSD_INSTR_BR_INDIRECT => InstrType::IndirectBranch,
            OCSD_INSTR_ISB => InstrType::Isb,
            OCSD_INSTR_DSB_DMB => InstrType::DsbDmb,
            OCSD_INSTR_WFI_WFE => InstrType::WfiWfe,
            OCSD_INSTR_TSTART => InstrType::Tstart,
            _ => InstrType::Other,
        }
    }
}

/// Sub-kind of the last instruction of a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstrSubtype {
    None,
    /// Branch with link (a call).
    BranchLink,
    /// A64 `RET`.
    Return,
    /// A64 `ERET`.
    ExceptionReturn,
    /// A32/T32 instruction that acts as a return (e.g. `POP {pc}`, `BX lr`).
    ImpliedReturn,
}

impl InstrSubtype {
    pub fn from_raw(t: ocsd_instr_subtype) -> InstrSubtype {
        match t {
            OCSD_S_INSTR_BR_LINK => InstrSubtype::BranchLink,
            OCSD_S_INSTR_V8_RET => InstrSubtype::Return,
            OCSD_S_INSTR_V8_ERET => InstrSubtype::ExceptionReturn,
            OCSD_S_INSTR_V7_IMPLIED_RET => InstrSubtype::ImpliedReturn,
            _ => InstrSubtype::None,
        }
    }
}

/// Security state of the PE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Security {
    Secure,
    NonSecure,
    Root,
    Realm,
}

/// A range of executed instructions: `start` up to (not including) `end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct InstrRange {
    #[serde(serialize_with = "hex")]
    pub start: u64,
    /// The address after the last instruction.
    #[serde(serialize_with = "hex")]
    pub end: u64,
    pub isa: Isa,
    pub instr_count: u32,
    /// The last instruction: its kind, and whether it was executed (a
    /// conditional branch not taken is not).
    pub last_instr_type: InstrType,
    pub last_instr_subtype: InstrSubtype,
    pub last_instr_executed: bool,
    pub last_instr_size: u8,
    pub last_instr_conditional: bool,
}

impl InstrRange {
    /// Address of the last instruction of the range.
    pub fn last_instr_addr(&self) -> u64 {
        self.end.wrapping_sub(self.last_instr_size as u64)
    }
}

/// The PE's context: instruction set, exception level, security state,
/// AArch64 or AArch32, VMID and context ID when traced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PeContext {
    pub isa: Isa,
    pub exception_level: Option<u8>,
    pub security: Security,
    pub aarch64: bool,
    pub vmid: Option<u32>,
    pub context_id: Option<u32>,
}

impl PeContext {
    fn from_raw(elem: &ocsd_generic_trace_elem) -> PeContext {
        let c = &elem.context;
        PeContext {
            isa: Isa::from_raw(elem.isa),
            exception_level: (c.el_valid() != 0 && c.exception_level >= 0).then_some(c.exception_level as u8),
            security: match c.security_level {
                ocsd_sec_secure => Security::Secure,
                ocsd_sec_root => Security::Root,
                ocsd_sec_realm => Security::Realm,
                _ => Security::NonSecure,
            },
            aarch64: c.bits64() != 0,
            vmid: (c.vmid_valid() != 0).then_some(c.vmid),
            context_id: (c.ctxt_id_valid() != 0).then_some(c.context_id),
        }
    }
}

/// Why decode is not synchronised, or why trace ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UnsyncReason {
    Unknown,
    InitDecoder,
    ResetDecoder,
    Overflow,
    Discard,
    BadPacket,
    BadImage,
    EndOfTrace,
}

impl UnsyncReason {
    fn from_raw(v: unsync_info_t) -> UnsyncReason {
        match v {
            UNSYNC_INIT_DECODER => UnsyncReason::InitDecoder,
            UNSYNC_RESET_DECODER => UnsyncReason::ResetDecoder,
            UNSYNC_OVERFLOW => UnsyncReason::Overflow,
            UNSYNC_DISCARD => UnsyncReason::Discard,
            UNSYNC_BAD_PACKET => UnsyncReason::BadPacket,
            UNSYNC_BAD_IMAGE => UnsyncReason::BadImage,
            UNSYNC_EOT => UnsyncReason::EndOfTrace,
            _ => UnsyncReason::Unknown,
        }
    }
}

/// Why trace (re)started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceOnReason {
    /// Start of trace or trace filtering.
    Normal,
    Overflow,
    DebugRestart,
}

/// Software trace (STM) message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SwTrace {
    pub master: Option<u16>,
    pub channel: Option<u16>,
    /// Payload size in bits (0: none).
    pub payload_bits: u8,
    pub payload: Option<u64>,
    pub marker: bool,
    pub trigger: bool,
    pub timestamp: Option<u64>,
    pub frequency: bool,
    pub master_error: bool,
    pub global_error: bool,
}

/// ITM software / hardware source message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ItmTrace {
    /// OpenCSD's `swt_itm_type`: 0 SWIT, 1 DWT, 2..6 timestamps.
    pub packet_type: i32,
    pub source_id: u8,
    pub payload_size: u8,
    pub value: u32,
    pub overflow: bool,
}

/// One kind of generic trace element, with its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ElementKind {
    /// Decoder not synchronised (start of trace, after an error).
    NoSync { reason: UnsyncReason },
    TraceOn { reason: TraceOnReason },
    EndOfTrace { reason: UnsyncReason },
    PeContext(PeContext),
    InstrRange(InstrRange),
    /// Instructions executed on a path that the decoder could not follow
    /// (no memory image): `instr_count` instructions from `start`, then `next`.
    InstrRangeNoPath {
        #[serde(serialize_with = "hex")]
        start: u64,
        #[serde(serialize_with = "hex")]
        next: u64,
        instr_count: u32,
    },
    /// Memory at `address` could not be read: the image does not cover it.
    AddrNotAccessible {
        #[serde(serialize_with = "hex")]
        address: u64,
        mem_space: u32,
    },
    AddrUnknown,
    Exception {
        number: u32,
        /// Preferred return address, when traced.
        #[serde(serialize_with = "hex_opt")]
        return_address: Option<u64>,
        return_address_is_branch_target: bool,
        m_tail_chain: bool,
    },
    ExceptionReturn,
    Timestamp { timestamp: u64, cpu_freq_change: bool },
    CycleCount,
    Event { trigger: bool, number: Option<u16> },
    SwTrace(SwTrace),
    SyncMarker { marker_type: i32, value: u32 },
    /// Transactional memory: 0 init, 1 start, 2 commit, 3 fail.
    MemTrans { trans: i32 },
    /// ETE instrumentation (ITE) packet.
    Instrumentation { el: u8, value: u64 },
    ItmTrace(ItmTrace),
    Custom,
    Unknown { raw_type: i32 },
}

/// A decoded generic trace element.
#[derive(Clone, Copy, Serialize)]
pub struct Element {
    /// Trace index (byte offset in the trace data) of the packet that
    /// produced the element.
    pub index: u64,
    /// CoreSight trace ID of the source.
    pub trace_id: u8,
    #[serde(flatten)]
    pub kind: ElementKind,
    /// Cycle count attached to the element, when traced.
    pub cycle_count: Option<u32>,
    #[serde(skip)]
    raw: RawCopy,
    #[serde(skip)]
    ext: Option<([u8; 8], usize)>,
}

/// The C element's fields but its extended-data pointer (so that an
/// [`Element`] is `Send` and `Sync`).
#[derive(Clone, Copy)]
struct RawCopy {
    elem_type: ocsd_gen_trc_elem_t,
    isa: ocsd_isa,
    st_addr: u64,
    en_addr: u64,
    context: ocsd_pe_context,
    timestamp: u64,
    cycle_count: u32,
    last_i_type: ocsd_instr_type,
    last_i_subtype: ocsd_instr_subtype,
    flag_bits: u32,
    payload: ocsd_gen_elem_payload,
}

impl RawCopy {
    fn of(e: &ocsd_generic_trace_elem) -> RawCopy {
        RawCopy {
            elem_type: e.elem_type,
            isa: e.isa,
            st_addr: e.st_addr,
            en_addr: e.en_addr,
            context: e.context,
            timestamp: e.timestamp,
            cycle_count: e.cycle_count,
            last_i_type: e.last_i_type,
            last_i_subtype: e.last_i_subtype,
            flag_bits: e.flag_bits,
            payload: e.payload,
        }
    }

    fn elem(&self) -> ocsd_generic_trace_elem {
        ocsd_generic_trace_elem {
            elem_type: self.elem_type,
            isa: self.isa,
            st_addr: self.st_addr,
            en_addr: self.en_addr,
            context: self.context,
            timestamp: self.timestamp,
            cycle_count: self.cycle_count,
            last_i_type: self.last_i_type,
            last_i_subtype: self.last_i_subtype,
            flag_bits: self.flag_bits,
            payload: self.payload,
            ptr_extended_data: std::ptr::null(),
        }
    }
}

impl std::fmt::Debug for Element {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Element").field("index", &self.index).field("trace_id", &self.trace_id).field("kind", &self.kind).field("cycle_count", &self.cycle_count).finish()
    }
}

impl PartialEq for Element {
    fn eq(&self, o: &Element) -> bool {
        self.index == o.index && self.trace_id == o.trace_id && self.kind == o.kind && self.cycle_count == o.cycle_count
    }
}

impl InstrRange {
    #[inline(always)]
    fn from_raw(e: &ocsd_generic_trace_elem) -> InstrRange {
        InstrRange {
            start: e.st_addr,
            end: e.en_addr,
            isa: Isa::from_raw(e.isa),
            instr_count: e.num_instr_range(),
            last_instr_type: InstrType::from_raw(e.last_i_type),
            last_instr_subtype: InstrSubtype::from_raw(e.last_i_subtype),
            last_instr_executed: e.last_instr_exec() != 0,
            last_instr_size: e.last_instr_sz() as u8,
            last_instr_conditional: e.last_instr_cond() != 0,
        }
    }
}

impl Element {
    /// The typed element for a C element being delivered (its extended
    /// data, if any, is copied).
    #[inline]
    pub fn from_raw(index: u64, trace_id: u8, e: &ocsd_generic_trace_elem) -> Element {
        if e.elem_type == OCSD_GEN_TRC_ELEM_INSTR_RANGE {
            // most elements: made in one piece, without the general match
            // (a range carries no extended data)
            return Element {
                index,
                trace_id,
                kind: ElementKind::InstrRange(InstrRange::from_raw(e)),
                cycle_count: (e.has_cc() != 0).then_some(e.cycle_count),
                raw: RawCopy::of(e),
                ext: None,
            };
        }
        Self::from_raw_other(index, trace_id, e)
    }

    /// [`Element::from_raw`] for the kinds other than instruction ranges.
    #[inline(never)]
    fn from_raw_other(index: u64, trace_id: u8, e: &ocsd_generic_trace_elem) -> Element {
        // written in place: the kind goes into the element as made, not
        // built aside and copied in
        let mut out = Element {
            index,
            trace_id,
            kind: ElementKind::Custom,
            cycle_count: (e.has_cc() != 0).then_some(e.cycle_count),
            raw: RawCopy::of(e),
            ext: crate::printers::gen_elem::sw_payload_bytes(e),
        };
        let ext = out.ext;
        out.kind = match e.elem_type {
            OCSD_GEN_TRC_ELEM_NO_SYNC => ElementKind::NoSync { reason: UnsyncReason::from_raw(e.unsync_eot_info()) },
            OCSD_GEN_TRC_ELEM_TRACE_ON => ElementKind::TraceOn {
                reason: match e.trace_on_reason() {
                    TRACE_ON_OVERFLOW => TraceOnReason::Overflow,
                    TRACE_ON_EX_DEBUG => TraceOnReason::DebugRestart,
                    _ => TraceOnReason::Normal,
                },
            },
            OCSD_GEN_TRC_ELEM_EO_TRACE => ElementKind::EndOfTrace { reason: UnsyncReason::from_raw(e.unsync_eot_info()) },
            OCSD_GEN_TRC_ELEM_PE_CONTEXT => ElementKind::PeContext(PeContext::from_raw(e)),
            OCSD_GEN_TRC_ELEM_INSTR_RANGE => ElementKind::InstrRange(InstrRange::from_raw(e)),
            OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH => {
                ElementKind::InstrRangeNoPath { start: e.st_addr, next: e.en_addr, instr_count: e.num_instr_range() }
            }
            OCSD_GEN_TRC_ELEM_ADDR_NACC => ElementKind::AddrNotAccessible { address: e.st_addr, mem_space: e.exception_number() },
            OCSD_GEN_TRC_ELEM_ADDR_UNKNOWN => ElementKind::AddrUnknown,
            OCSD_GEN_TRC_ELEM_EXCEPTION => ElementKind::Exception {
                number: e.exception_number(),
                return_address: (e.excep_ret_addr() != 0).then_some(e.en_addr),
                return_address_is_branch_target: e.excep_ret_addr_br_tgt() != 0,
                m_tail_chain: e.excep_M_tail_chain() != 0,
            },
            OCSD_GEN_TRC_ELEM_EXCEPTION_RET => ElementKind::ExceptionReturn,
            OCSD_GEN_TRC_ELEM_TIMESTAMP => ElementKind::Timestamp { timestamp: e.timestamp, cpu_freq_change: e.cpu_freq_change() != 0 },
            OCSD_GEN_TRC_ELEM_CYCLE_COUNT => ElementKind::CycleCount,
            OCSD_GEN_TRC_ELEM_EVENT => {
                let ev = e.trace_event();
                ElementKind::Event { trigger: ev.ev_type == EVENT_TRIGGER, number: (ev.ev_type == EVENT_NUMBERED).then_some(ev.ev_number) }
            }
            OCSD_GEN_TRC_ELEM_SWTRACE => {
                let i = e.sw_trace_info();
                let bits = i.swt_payload_pkt_bitsize() as u8;
                let payload = ext.map(|(b, n)| {
                    let mut v = [0u8; 8];
                    v[..n].copy_from_slice(&b[..n]);
                    let v = u64::from_ne_bytes(v);
                    if bits == 4 {
                        v & 0xf
                    } else {
                        v
                    }
                });
                let id_valid = i.swt_id_valid() != 0;
                ElementKind::SwTrace(SwTrace {
                    master: id_valid.then_some(i.swt_master_id),
                    channel: id_valid.then_some(i.swt_channel_id),
                    payload_bits: bits,
                    payload,
                    marker: i.swt_marker_packet() != 0,
                    trigger: i.swt_trigger_event() != 0,
                    timestamp: (i.swt_has_timestamp() != 0).then_some(e.timestamp),
                    frequency: i.swt_frequency() != 0,
                    master_error: i.swt_master_err() != 0,
                    global_error: i.swt_global_err() != 0,
                })
            }
            OCSD_GEN_TRC_ELEM_SYNC_MARKER => {
                let m = e.sync_marker();
                ElementKind::SyncMarker { marker_type: m.type_, value: m.value }
            }
            OCSD_GEN_TRC_ELEM_MEMTRANS => ElementKind::MemTrans { trans: e.mem_trans() },
            OCSD_GEN_TRC_ELEM_INSTRUMENTATION => {
                let ite = e.sw_ite();
                ElementKind::Instrumentation { el: ite.el, value: ite.value }
            }
            OCSD_GEN_TRC_ELEM_ITMTRACE => {
                let t = e.swt_itm();
                ElementKind::ItmTrace(ItmTrace {
                    packet_type: t.pkt_type,
                    source_id: t.payload_src_id,
                    payload_size: t.payload_size,
                    value: t.value,
                    overflow: t.overflow != 0,
                })
            }
            OCSD_GEN_TRC_ELEM_CUSTOM => ElementKind::Custom,
            t => ElementKind::Unknown { raw_type: t },
        };
        out
    }

    /// A copy of the C element this was made from (its extended-data
    /// pointer null).
    pub fn raw(&self) -> ocsd_generic_trace_elem {
        self.raw.elem()
    }

    /// OpenCSD's text for the element, e.g.
    /// `OCSD_GEN_TRC_ELEM_TRACE_ON( [begin or filter])`.
    pub fn opencsd_text(&self) -> String {
        let mut s = String::new();
        self.write_opencsd_text(&mut s);
        s
    }

    /// Append OpenCSD's text for the element to `out`.
    pub fn write_opencsd_text(&self, out: &mut String) {
        // the printer reads the payload through the pointer: it points at
        // the copy held here, alive for this call
        crate::printers::gen_elem::write_elem_str(&self.with_ext(), out);
    }

    /// The line `trc_pkt_lister` prints for the element:
    /// `Idx:<index>; ID:<trace id hex>; <element text>` (no newline).
    pub fn write_lister_line(&self, out: &mut String) {
        out.push_str("Idx:");
        crate::printers::num::push_dec(out, self.index);
        out.push_str("; ID:");
        crate::printers::num::push_hex(out, self.trace_id as u64, 0);
        out.push_str("; ");
        crate::printers::gen_elem::write_elem(&self.with_ext(), out);
    }

    /// OpenCSD's element type (`OCSD_GEN_TRC_ELEM_*`).
    pub fn raw_type(&self) -> ocsd_gen_trc_elem_t {
        self.raw.elem_type
    }

    /// The name OpenCSD gives element type `t`
    /// (`OCSD_GEN_TRC_ELEM_INSTR_RANGE`, ...; `OCSD_GEN_TRC_ELEM_UNKNOWN`
    /// outside the enumeration).
    pub fn type_name_of(t: ocsd_gen_trc_elem_t) -> &'static str {
        crate::printers::gen_elem::elem_type_name(t).unwrap_or("OCSD_GEN_TRC_ELEM_UNKNOWN")
    }

    /// The element's type name as OpenCSD spells it
    /// (`OCSD_GEN_TRC_ELEM_INSTR_RANGE`, ...).
    pub fn type_name(&self) -> &'static str {
        crate::printers::gen_elem::elem_type_name(self.raw.elem_type).unwrap_or("OCSD_GEN_TRC_ELEM_UNKNOWN")
    }
}

impl Isa {
    /// The name in JSON (as serialized).
    pub fn json_name(self) -> &'static str {
        match self {
            Isa::A32 => "a32",
            Isa::T32 => "t32",
            Isa::A64 => "a64",
            Isa::Tee => "tee",
            Isa::Jazelle => "jazelle",
            Isa::Custom => "custom",
            Isa::Unknown => "unknown",
        }
    }
}

impl InstrType {
    fn json_name(self) -> &'static str {
        match self {
            InstrType::Other => "other",
            InstrType::Branch => "branch",
            InstrType::IndirectBranch => "indirect_branch",
            InstrType::Isb => "isb",
            InstrType::DsbDmb => "dsb_dmb",
            InstrType::WfiWfe => "wfi_wfe",
            InstrType::Tstart => "tstart",
        }
    }
}

impl InstrSubtype {
    fn json_name(self) -> &'static str {
        match self {
            InstrSubtype::None => "none",
            InstrSubtype::BranchLink => "branch_link",
            InstrSubtype::Return => "return",
            InstrSubtype::ExceptionReturn => "exception_return",
            InstrSubtype::ImpliedReturn => "implied_return",
        }
    }
}

impl Security {
    fn json_name(self) -> &'static str {
        match self {
            Security::Secure => "secure",
            Security::NonSecure => "non_secure",
            Security::Root => "root",
            Security::Realm => "realm",
        }
    }
}

impl UnsyncReason {
    fn json_name(self) -> &'static str {
        match self {
            UnsyncReason::Unknown => "unknown",
            UnsyncReason::InitDecoder => "init_decoder",
            UnsyncReason::ResetDecoder => "reset_decoder",
            UnsyncReason::Overflow => "overflow",
            UnsyncReason::Discard => "discard",
            UnsyncReason::BadPacket => "bad_packet",
            UnsyncReason::BadImage => "bad_image",
            UnsyncReason::EndOfTrace => "end_of_trace",
        }
    }
}

impl TraceOnReason {
    fn json_name(self) -> &'static str {
        match self {
            TraceOnReason::Normal => "normal",
            TraceOnReason::Overflow => "overflow",
            TraceOnReason::DebugRestart => "debug_restart",
        }
    }
}

/// JSON values written straight to a text buffer: the text `serde_json`
/// gives for the same values (compact, fields in declaration order).
struct Json<'a, T: TextOut>(&'a mut T);

impl<T: TextOut> Json<'_, T> {
    /// `,"<name>":` (`key` is the whole piece, e.g. `,"start":`)
    #[inline(always)]
    fn key(&mut self, key: &str) -> &mut Self {
        self.0.put_str(key);
        self
    }
    #[inline(always)]
    fn u(&mut self, v: u64) {
        self.0.put_dec(v);
    }
    #[inline(always)]
    fn i(&mut self, v: i64) {
        if v < 0 {
            self.0.put_str("-");
        }
        self.0.put_dec(v.unsigned_abs());
    }
    #[inline(always)]
    fn b(&mut self, v: bool) {
        self.0.put_str(if v { "true" } else { "false" });
    }
    /// A name (no character of it needs escaping).
    #[inline(always)]
    fn name(&mut self, s: &str) {
        self.0.put_str("\"");
        self.0.put_str(s);
        self.0.put_str("\"");
    }
    /// `"0x..."`
    #[inline(always)]
    fn hex(&mut self, v: u64) {
        self.0.put_str("\"0x");
        self.0.put_hex(v, 0);
        self.0.put_str("\"");
    }
    #[inline(always)]
    fn null(&mut self) {
        self.0.put_str("null");
    }
    #[inline(always)]
    fn opt_u(&mut self, v: Option<u64>) {
        match v {
            Some(v) => self.u(v),
            None => self.null(),
        }
    }
}

impl Element {
    /// Append the element as one JSON object (no newline): the same text
    /// as `serde_json::to_string(&element)`, written without `serde`'s
    /// machinery and without allocating (the buffer aside).
    pub fn write_json<T: TextOut>(&self, out: &mut T) {
        let mut j = Json(out);
        j.key("{\"index\":").u(self.index);
        j.key(",\"trace_id\":").u(self.trace_id as u64);
        j.key(",\"type\":");
        match self.kind {
            ElementKind::NoSync { reason } => {
                j.name("no_sync");
                j.key(",\"reason\":").name(reason.json_name());
            }
            ElementKind::TraceOn { reason } => {
                j.name("trace_on");
                j.key(",\"reason\":").name(reason.json_name());
            }
            ElementKind::EndOfTrace { reason } => {
                j.name("end_of_trace");
                j.key(",\"reason\":").name(reason.json_name());
            }
            ElementKind::PeContext(c) => {
                j.name("pe_context");
                j.key(",\"isa\":").name(c.isa.json_name());
                j.key(",\"exception_level\":").opt_u(c.exception_level.map(u64::from));
                j.key(",\"security\":").name(c.security.json_name());
                j.key(",\"aarch64\":").b(c.aarch64);
                j.key(",\"vmid\":").opt_u(c.vmid.map(u64::from));
                j.key(",\"context_id\":").opt_u(c.context_id.map(u64::from));
            }
            ElementKind::InstrRange(r) => {
                j.name("instr_range");
                j.key(",\"start\":").hex(r.start);
                j.key(",\"end\":").hex(r.end);
                j.key(",\"isa\":").name(r.isa.json_name());
                j.key(",\"instr_count\":").u(r.instr_count as u64);
                j.key(",\"last_instr_type\":").name(r.last_instr_type.json_name());
                j.key(",\"last_instr_subtype\":").name(r.last_instr_subtype.json_name());
                j.key(",\"last_instr_executed\":").b(r.last_instr_executed);
                j.key(",\"last_instr_size\":").u(r.last_instr_size as u64);
                j.key(",\"last_instr_conditional\":").b(r.last_instr_conditional);
            }
            ElementKind::InstrRangeNoPath { start, next, instr_count } => {
                j.name("instr_range_no_path");
                j.key(",\"start\":").hex(start);
                j.key(",\"next\":").hex(next);
                j.key(",\"instr_count\":").u(instr_count as u64);
            }
            ElementKind::AddrNotAccessible { address, mem_space } => {
                j.name("addr_not_accessible");
                j.key(",\"address\":").hex(address);
                j.key(",\"mem_space\":").u(mem_space as u64);
            }
            ElementKind::AddrUnknown => j.name("addr_unknown"),
            ElementKind::Exception { number, return_address, return_address_is_branch_target, m_tail_chain } => {
                j.name("exception");
                j.key(",\"number\":").u(number as u64);
                j.key(",\"return_address\":");
                match return_address {
                    Some(a) => j.hex(a),
                    None => j.null(),
                }
                j.key(",\"return_address_is_branch_target\":").b(return_address_is_branch_target);
                j.key(",\"m_tail_chain\":").b(m_tail_chain);
            }
            ElementKind::ExceptionReturn => j.name("exception_return"),
            ElementKind::Timestamp { timestamp, cpu_freq_change } => {
                j.name("timestamp");
                j.key(",\"timestamp\":").u(timestamp);
                j.key(",\"cpu_freq_change\":").b(cpu_freq_change);
            }
            ElementKind::CycleCount => j.name("cycle_count"),
            ElementKind::Event { trigger, number } => {
                j.name("event");
                j.key(",\"trigger\":").b(trigger);
                j.key(",\"number\":").opt_u(number.map(u64::from));
            }
            ElementKind::SwTrace(s) => {
                j.name("sw_trace");
                j.key(",\"master\":").opt_u(s.master.map(u64::from));
                j.key(",\"channel\":").opt_u(s.channel.map(u64::from));
                j.key(",\"payload_bits\":").u(s.payload_bits as u64);
                j.key(",\"payload\":").opt_u(s.payload);
                j.key(",\"marker\":").b(s.marker);
                j.key(",\"trigger\":").b(s.trigger);
                j.key(",\"timestamp\":").opt_u(s.timestamp);
                j.key(",\"frequency\":").b(s.frequency);
                j.key(",\"master_error\":").b(s.master_error);
                j.key(",\"global_error\":").b(s.global_error);
            }
            ElementKind::SyncMarker { marker_type, value } => {
                j.name("sync_marker");
                j.key(",\"marker_type\":").i(marker_type as i64);
                j.key(",\"value\":").u(value as u64);
            }
            ElementKind::MemTrans { trans } => {
                j.name("mem_trans");
                j.key(",\"trans\":").i(trans as i64);
            }
            ElementKind::Instrumentation { el, value } => {
                j.name("instrumentation");
                j.key(",\"el\":").u(el as u64);
                j.key(",\"value\":").u(value);
            }
            ElementKind::ItmTrace(t) => {
                j.name("itm_trace");
                j.key(",\"packet_type\":").i(t.packet_type as i64);
                j.key(",\"source_id\":").u(t.source_id as u64);
                j.key(",\"payload_size\":").u(t.payload_size as u64);
                j.key(",\"value\":").u(t.value as u64);
                j.key(",\"overflow\":").b(t.overflow);
            }
            ElementKind::Custom => j.name("custom"),
            ElementKind::Unknown { raw_type } => {
                j.name("unknown");
                j.key(",\"raw_type\":").i(raw_type as i64);
            }
        }
        j.key(",\"cycle_count\":").opt_u(self.cycle_count.map(u64::from));
        j.0.put_str("}");
    }

    /// The C element with its extended data pointer set to the copy held
    /// here (valid while `self` is borrowed).
    fn with_ext(&self) -> ocsd_generic_trace_elem {
        let mut e = self.raw.elem();
        if let Some((bytes, _)) = &self.ext {
            e.ptr_extended_data = bytes.as_ptr() as *const std::os::raw::c_void;
        }
        e
    }
}

/// The lines `trc_pkt_lister` prints for elements
/// (`Idx:<index>; ID:<id>; <text>`), appended to a byte buffer with the
/// lister's own line writer: pieces built once, numbers written as fixed
/// size chunks, instruction range texts kept for ranges that come again.
/// Reuse one for a stream of elements.
pub struct ListerLines {
    w: ElemLineWriter,
    idx: IdxText,
}

impl Default for ListerLines {
    fn default() -> Self {
        Self::new()
    }
}

impl ListerLines {
    pub fn new() -> Self {
        ListerLines { w: ElemLineWriter::new(), idx: IdxText::default() }
    }

    /// Append the element's line and a newline to `out`.
    #[inline]
    pub fn write(&mut self, e: &Element, out: &mut LineBuf) {
        let raw = e.with_ext();
        self.write_raw(e.index as ocsd_trc_index_t, e.trace_id, &raw, out);
    }

    /// The line of a C element being delivered.
    #[inline(always)]
    pub(crate) fn write_raw(&mut self, index: ocsd_trc_index_t, id: u8, e: &ocsd_generic_trace_elem, out: &mut LineBuf) {
        self.w.write_line(out, &mut self.idx, index, id, e);
    }
}
