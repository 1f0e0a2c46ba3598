//! C ABI mirror of `opencsd/trc_gen_elem_types.h`: the generic trace element
//! that every decoder delivers to the client.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use super::*;
use std::os::raw::{c_int, c_void};

pub type ocsd_gen_trc_elem_t = c_int;
pub const OCSD_GEN_TRC_ELEM_UNKNOWN: ocsd_gen_trc_elem_t = 0;
pub const OCSD_GEN_TRC_ELEM_NO_SYNC: ocsd_gen_trc_elem_t = 1;
pub const OCSD_GEN_TRC_ELEM_TRACE_ON: ocsd_gen_trc_elem_t = 2;
pub const OCSD_GEN_TRC_ELEM_EO_TRACE: ocsd_gen_trc_elem_t = 3;
pub const OCSD_GEN_TRC_ELEM_PE_CONTEXT: ocsd_gen_trc_elem_t = 4;
pub const OCSD_GEN_TRC_ELEM_INSTR_RANGE: ocsd_gen_trc_elem_t = 5;
pub const OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH: ocsd_gen_trc_elem_t = 6;
pub const OCSD_GEN_TRC_ELEM_ADDR_NACC: ocsd_gen_trc_elem_t = 7;
pub const OCSD_GEN_TRC_ELEM_ADDR_UNKNOWN: ocsd_gen_trc_elem_t = 8;
pub const OCSD_GEN_TRC_ELEM_EXCEPTION: ocsd_gen_trc_elem_t = 9;
pub const OCSD_GEN_TRC_ELEM_EXCEPTION_RET: ocsd_gen_trc_elem_t = 10;
pub const OCSD_GEN_TRC_ELEM_TIMESTAMP: ocsd_gen_trc_elem_t = 11;
pub const OCSD_GEN_TRC_ELEM_CYCLE_COUNT: ocsd_gen_trc_elem_t = 12;
pub const OCSD_GEN_TRC_ELEM_EVENT: ocsd_gen_trc_elem_t = 13;
pub const OCSD_GEN_TRC_ELEM_SWTRACE: ocsd_gen_trc_elem_t = 14;
pub const OCSD_GEN_TRC_ELEM_SYNC_MARKER: ocsd_gen_trc_elem_t = 15;
pub const OCSD_GEN_TRC_ELEM_MEMTRANS: ocsd_gen_trc_elem_t = 16;
pub const OCSD_GEN_TRC_ELEM_INSTRUMENTATION: ocsd_gen_trc_elem_t = 17;
pub const OCSD_GEN_TRC_ELEM_ITMTRACE: ocsd_gen_trc_elem_t = 18;
pub const OCSD_GEN_TRC_ELEM_CUSTOM: ocsd_gen_trc_elem_t = 19;

pub type trace_on_reason_t = c_int;
pub const TRACE_ON_NORMAL: trace_on_reason_t = 0;
pub const TRACE_ON_OVERFLOW: trace_on_reason_t = 1;
pub const TRACE_ON_EX_DEBUG: trace_on_reason_t = 2;

pub type unsync_info_t = c_int;
pub const UNSYNC_UNKNOWN: unsync_info_t = 0;
pub const UNSYNC_INIT_DECODER: unsync_info_t = 1;
pub const UNSYNC_RESET_DECODER: unsync_info_t = 2;
pub const UNSYNC_OVERFLOW: unsync_info_t = 3;
pub const UNSYNC_DISCARD: unsync_info_t = 4;
pub const UNSYNC_BAD_PACKET: unsync_info_t = 5;
pub const UNSYNC_BAD_IMAGE: unsync_info_t = 6;
pub const UNSYNC_EOT: unsync_info_t = 7;

pub type trace_sync_marker_t = c_int;
pub const ELEM_MARKER_TS: trace_sync_marker_t = 0;

/// cbindgen:c-tag=_memtrans_t
pub type trace_memtrans_t = c_int;
pub const OCSD_MEM_TRANS_TRACE_INIT: trace_memtrans_t = 0;
pub const OCSD_MEM_TRANS_START: trace_memtrans_t = 1;
pub const OCSD_MEM_TRANS_COMMIT: trace_memtrans_t = 2;
pub const OCSD_MEM_TRANS_FAIL: trace_memtrans_t = 3;

pub type swt_itm_type = c_int;
pub const SWIT_PAYLOAD: swt_itm_type = 0;
pub const DWT_PAYLOAD: swt_itm_type = 1;
pub const TS_SYNC: swt_itm_type = 2;
pub const TS_DELAY: swt_itm_type = 3;
pub const TS_PKT_DELAY: swt_itm_type = 4;
pub const TS_PKT_TS_DELAY: swt_itm_type = 5;
pub const TS_GLOBAL: swt_itm_type = 6;

/// Event type (`trace_event_t::ev_type` holds one of `EVENT_*`).
///
/// cbindgen:c-tag=_event_t
pub type event_t = c_int;
pub const EVENT_UNKNOWN: u16 = 0;
pub const EVENT_TRIGGER: u16 = 1;
pub const EVENT_NUMBERED: u16 = 2;

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct trace_event_t {
    pub ev_type: u16,
    pub ev_number: u16,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct trace_marker_payload_t {
    pub type_: trace_sync_marker_t,
    pub value: u32,
}

/// cbindgen:c-tag=_sw_ite_t
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct trace_sw_ite_t {
    pub el: u8,
    pub value: u64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct swt_itm_info {
    pub pkt_type: swt_itm_type,
    pub payload_src_id: u8,
    pub payload_size: u8,
    pub value: u32,
    pub overflow: u8,
}

/// The element-type-specific payload (an anonymous union in C).
///
/// cbindgen:ignore
#[repr(C)]
#[derive(Clone, Copy)]
pub union ocsd_gen_elem_payload {
    pub exception_number: u32,
    pub trace_event: trace_event_t,
    pub trace_on_reason: trace_on_reason_t,
    pub sw_trace_info: ocsd_swt_info_t,
    pub num_instr_range: u32,
    pub unsync_eot_info: unsync_info_t,
    pub sync_marker: trace_marker_payload_t,
    pub mem_trans: trace_memtrans_t,
    pub sw_ite: trace_sw_ite_t,
    pub swt_itm: swt_itm_info,
    pub raw: [u64; 2],
}

impl Default for ocsd_gen_elem_payload {
    fn default() -> Self {
        ocsd_gen_elem_payload { raw: [0; 2] }
    }
}

impl ocsd_gen_elem_payload {
    /// The union's bytes, as two words: to compare payloads whatever member
    /// was written.
    pub fn words(&self) -> [u64; 2] {
        // SAFETY: every member is plain old data made of integers and the
        // union is written whole before a member is set (`Default`, then a
        // member; the members with padding bytes field by field, which
        // leaves the padding zero), so all 16 bytes are initialised
        // integers.
        unsafe { self.raw }
    }
}

/// The generic trace element (`ocsd_generic_trace_elem`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ocsd_generic_trace_elem {
    pub elem_type: ocsd_gen_trc_elem_t,
    pub isa: ocsd_isa,
    pub st_addr: ocsd_vaddr_t,
    pub en_addr: ocsd_vaddr_t,
    pub context: ocsd_pe_context,
    pub timestamp: u64,
    pub cycle_count: u32,
    pub last_i_type: ocsd_instr_type,
    pub last_i_subtype: ocsd_instr_subtype,
    /// cbindgen-c: union { struct { uint32_t last_instr_exec:1; uint32_t last_instr_sz:3; uint32_t has_cc:1; uint32_t cpu_freq_change:1; uint32_t excep_ret_addr:1; uint32_t excep_data_marker:1; uint32_t extended_data:1; uint32_t has_ts:1; uint32_t last_instr_cond:1; uint32_t excep_ret_addr_br_tgt:1; uint32_t excep_M_tail_chain:1; }; uint32_t flag_bits; };
    pub flag_bits: u32,
    /// cbindgen-c: union { uint32_t exception_number; trace_event_t trace_event; trace_on_reason_t trace_on_reason; ocsd_swt_info_t sw_trace_info; uint32_t num_instr_range; unsync_info_t unsync_eot_info; trace_marker_payload_t sync_marker; trace_memtrans_t mem_trans; trace_sw_ite_t sw_ite; swt_itm_info swt_itm; };
    pub payload: ocsd_gen_elem_payload,
    pub ptr_extended_data: *const c_void,
}

crate::bitfields!(ocsd_generic_trace_elem, flag_bits: {
    last_instr_exec / set_last_instr_exec: 0, 1;
    last_instr_sz / set_last_instr_sz: 1, 3;
    has_cc / set_has_cc: 4, 1;
    cpu_freq_change / set_cpu_freq_change: 5, 1;
    excep_ret_addr / set_excep_ret_addr: 6, 1;
    excep_data_marker / set_excep_data_marker: 7, 1;
    extended_data / set_extended_data: 8, 1;
    has_ts / set_has_ts: 9, 1;
    last_instr_cond / set_last_instr_cond: 10, 1;
    excep_ret_addr_br_tgt / set_excep_ret_addr_br_tgt: 11, 1;
    excep_M_tail_chain / set_excep_M_tail_chain: 12, 1;
});

impl Default for ocsd_generic_trace_elem {
    fn default() -> Self {
        ocsd_generic_trace_elem {
            elem_type: OCSD_GEN_TRC_ELEM_UNKNOWN,
            isa: ocsd_isa_unknown,
            st_addr: 0,
            en_addr: 0,
            context: ocsd_pe_context::default(),
            timestamp: 0,
            cycle_count: 0,
            last_i_type: OCSD_INSTR_OTHER,
            last_i_subtype: OCSD_S_INSTR_NONE,
            flag_bits: 0,
            payload: ocsd_gen_elem_payload::default(),
            ptr_extended_data: std::ptr::null(),
        }
    }
}

impl std::fmt::Debug for ocsd_generic_trace_elem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ocsd_generic_trace_elem")
            .field("elem_type", &self.elem_type)
            .field("isa", &self.isa)
            .field("st_addr", &self.st_addr)
            .field("en_addr", &self.en_addr)
            .field("flag_bits", &self.flag_bits)
            .finish()
    }
}

impl ocsd_generic_trace_elem {
    /// A fresh element of the given type (as `ocsd_gen_elem_init` makes it).
    pub fn new(elem_type: ocsd_gen_trc_elem_t) -> Self {
        ocsd_generic_trace_elem { elem_type, ..Default::default() }
    }

    /// OpenCSD's `OcsdTraceElement::setType`: the type, with the
    /// per-element flags, the payload's first word (`exception_number`, so
    /// also the instruction count, trace-on reason and unsync reason it
    /// shares bytes with) and extended data cleared; other fields keep
    /// their values, as decoders reuse one element.
    pub fn set_type(&mut self, t: ocsd_gen_trc_elem_t) {
        self.elem_type = t;
        self.flag_bits = 0;
        self.payload.exception_number = 0;
        self.ptr_extended_data = std::ptr::null();
    }

    /// OpenCSD's `OcsdTraceElement::init`: addresses invalid, ISA unknown,
    /// counts, timestamp and context validity cleared, no last instruction.
    pub fn init(&mut self) {
        self.st_addr = u64::MAX;
        self.en_addr = u64::MAX;
        self.isa = ocsd_isa_unknown;
        self.cycle_count = 0;
        self.timestamp = 0;
        self.context.set_ctxt_id_valid(0);
        self.context.set_vmid_valid(0);
        self.context.set_el_valid(0);
        self.last_i_type = OCSD_INSTR_OTHER;
        self.last_i_subtype = OCSD_S_INSTR_NONE;
        self.set_type(self.elem_type);
    }

    // Safe accessors to the payload union: every member is plain old data
    // made of integers, so any bit pattern is a valid value of each.
    pub fn exception_number(&self) -> u32 {
        // SAFETY: all union members are integer POD; reading any is defined.
        unsafe { self.payload.exception_number }
    }
    pub fn set_exception_number(&mut self, v: u32) {
        self.payload = ocsd_gen_elem_payload::default();
        self.payload.exception_number = v;
    }
    pub fn trace_event(&self) -> trace_event_t {
        // SAFETY: all union members are integer POD; reading any is defined.
        unsafe { self.payload.trace_event }
    }
    pub fn set_trace_event(&mut self, v: trace_event_t) {
        self.payload = ocsd_gen_elem_payload::default();
        self.payload.trace_event = v;
    }
    pub fn trace_on_reason(&self) -> trace_on_reason_t {
        // SAFETY: all union members are integer POD; reading any is defined.
        unsafe { self.payload.trace_on_reason }
    }
    pub fn set_trace_on_reason(&mut self, v: trace_on_reason_t) {
        self.payload = ocsd_gen_elem_payload::default();
        self.payload.trace_on_reason = v;
    }
    pub fn sw_trace_info(&self) -> ocsd_swt_info_t {
        // SAFETY: all union members are integer POD; reading any is defined.
        unsafe { self.payload.sw_trace_info }
    }
    pub fn set_sw_trace_info(&mut self, v: ocsd_swt_info_t) {
        self.payload = ocsd_gen_elem_payload::default();
        self.payload.sw_trace_info = v;
    }
    pub fn num_instr_range(&self) -> u32 {
        // SAFETY: all union members are integer POD; reading any is defined.
        unsafe { self.payload.num_instr_range }
    }
    pub fn set_num_instr_range(&mut self, v: u32) {
        self.payload = ocsd_gen_elem_payload::default();
        self.payload.num_instr_range = v;
    }
    pub fn unsync_eot_info(&self) -> unsync_info_t {
        // SAFETY: all union members are integer POD; reading any is defined.
        unsafe { self.payload.unsync_eot_info }
    }
    pub fn set_unsync_eot_info(&mut self, v: unsync_info_t) {
        self.payload = ocsd_gen_elem_payload::default();
        self.payload.unsync_eot_info = v;
    }
    pub fn sync_marker(&self) -> trace_marker_payload_t {
        // SAFETY: all union members are integer POD; reading any is defined.
        unsafe { self.payload.sync_marker }
    }
    pub fn set_sync_marker(&mut self, v: trace_marker_payload_t) {
        self.payload = ocsd_gen_elem_payload::default();
        self.payload.sync_marker = v;
    }
    pub fn mem_trans(&self) -> trace_memtrans_t {
        // SAFETY: all union members are integer POD; reading any is defined.
        unsafe { self.payload.mem_trans }
    }
    pub fn set_mem_trans(&mut self, v: trace_memtrans_t) {
        self.payload = ocsd_gen_elem_payload::default();
        self.payload.mem_trans = v;
    }
    pub fn sw_ite(&self) -> trace_sw_ite_t {
        // SAFETY: all union members are integer POD; reading any is defined.
        unsafe { self.payload.sw_ite }
    }
    pub fn set_sw_ite(&mut self, v: trace_sw_ite_t) {
        // field by field: a whole struct written into the union would leave
        // its padding bytes (after `el`) undefined, and `words` reads them
        self.payload = ocsd_gen_elem_payload::default();
        self.payload.sw_ite.el = v.el;
        self.payload.sw_ite.value = v.value;
    }
    pub fn swt_itm(&self) -> swt_itm_info {
        // SAFETY: all union members are integer POD; reading any is defined.
        unsafe { self.payload.swt_itm }
    }
    pub fn set_swt_itm(&mut self, v: swt_itm_info) {
        // field by field, the padding bytes left zero (see `set_sw_ite`)
        self.payload = ocsd_gen_elem_payload::default();
        self.payload.swt_itm.pkt_type = v.pkt_type;
        self.payload.swt_itm.payload_src_id = v.payload_src_id;
        self.payload.swt_itm.payload_size = v.payload_size;
        self.payload.swt_itm.value = v.value;
        self.payload.swt_itm.overflow = v.overflow;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The payload members with padding bytes (`trace_sw_ite_t`,
    /// `swt_itm_info`) are set with their padding zero, whatever the
    /// payload held: the payload's words (compared, hashed and packed as
    /// the element's identity) are defined by the member's fields alone.
    #[test]
    fn payload_padding_is_zero_after_a_set() {
        let mut e = ocsd_generic_trace_elem::default();
        e.payload.raw = [u64::MAX; 2];
        e.set_swt_itm(swt_itm_info { pkt_type: TS_SYNC, payload_src_id: 3, payload_size: 1, value: 0xbb, overflow: 1 });
        assert_eq!(e.payload.words(), [2 | 3 << 32 | 1 << 40, 0xbb | 1 << 32]);
        e.payload.raw = [u64::MAX; 2];
        e.set_sw_ite(trace_sw_ite_t { el: 2, value: 0x1234 });
        assert_eq!(e.payload.words(), [2, 0x1234]);
    }

    #[test]
    fn layout_matches_opencsd() {
        assert_eq!(size_of::<ocsd_generic_trace_elem>(), 96);
        assert_eq!(offset_of!(ocsd_generic_trace_elem, context), 24);
        assert_eq!(offset_of!(ocsd_generic_trace_elem, timestamp), 48);
        assert_eq!(offset_of!(ocsd_generic_trace_elem, last_i_subtype), 64);
        assert_eq!(offset_of!(ocsd_generic_trace_elem, flag_bits), 68);
        assert_eq!(offset_of!(ocsd_generic_trace_elem, payload), 72);
        assert_eq!(offset_of!(ocsd_generic_trace_elem, ptr_extended_data), 88);
        assert_eq!(size_of::<trace_sw_ite_t>(), 16);
        assert_eq!(size_of::<swt_itm_info>(), 16);
    }

    /// `setType` clears the flags, the payload's first word and the
    /// extended data pointer, and keeps the rest (OpenCSD 1.3.3's inlined
    /// setType stores zero over flag_bits and the word after it): a
    /// reused element's stale instruction count does not survive it.
    #[test]
    fn set_type_clears_flags_and_first_payload_word() {
        let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_INSTR_RANGE);
        e.st_addr = 0x1000;
        e.en_addr = 0x1004;
        e.flag_bits = 0x1f;
        e.set_sync_marker(trace_marker_payload_t { type_: ELEM_MARKER_TS, value: 0x1234 });
        e.ptr_extended_data = &e as *const _ as *const std::ffi::c_void;
        e.set_type(OCSD_GEN_TRC_ELEM_CYCLE_COUNT);
        assert_eq!((e.elem_type, e.flag_bits, e.num_instr_range()), (OCSD_GEN_TRC_ELEM_CYCLE_COUNT, 0, 0));
        assert!(e.ptr_extended_data.is_null());
        assert_eq!((e.st_addr, e.en_addr), (0x1000, 0x1004));
        assert_eq!(e.sync_marker().value, 0x1234);
    }
}
