//! C ABI mirror of OpenCSD 1.8.0's `opencsd/etmv4/trc_pkt_types_etmv4.h`:
//! ETMv4 / ETE packet types, the instruction and data trace packet structs
//! and the ETMv4 configuration registers.
//!
//! Layouts are checked against `../shared/abi/opencsd-1.8.0-struct-layout.txt`
//! by the tests at the bottom of this file. Named sub-structs of the packet
//! (`ts`, `exception_info`, `cond_instr`, ...) are named `#[repr(C)]` types
//! here (`ocsd_etmv4_i_pkt_ts`, ...); groups of C bit-fields are one `u32`
//! word with generated accessors and a `cbindgen-c:` doc line giving the C
//! declaration the header generator writes in its place.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use crate::abi::*;
use std::os::raw::c_int;

// ---------------------------------------------------------------------------
// I stream packet types (`ocsd_etmv4_i_pkt_type`)
pub type ocsd_etmv4_i_pkt_type = c_int;
// state of decode markers
pub const ETM4_PKT_I_NOTSYNC: ocsd_etmv4_i_pkt_type = 0x200;
pub const ETM4_PKT_I_INCOMPLETE_EOT: ocsd_etmv4_i_pkt_type = 0x201;
pub const ETM4_PKT_I_NO_ERR_TYPE: ocsd_etmv4_i_pkt_type = 0x202;
// markers for unknown / bad packets
pub const ETM4_PKT_I_BAD_SEQUENCE: ocsd_etmv4_i_pkt_type = 0x300;
pub const ETM4_PKT_I_BAD_TRACEMODE: ocsd_etmv4_i_pkt_type = 0x301;
pub const ETM4_PKT_I_RESERVED: ocsd_etmv4_i_pkt_type = 0x302;
pub const ETM4_PKT_I_RESERVED_CFG: ocsd_etmv4_i_pkt_type = 0x303;
// I stream packet types
pub const ETM4_PKT_I_EXTENSION: ocsd_etmv4_i_pkt_type = 0x00;
pub const ETM4_PKT_I_TRACE_INFO: ocsd_etmv4_i_pkt_type = 0x01;
pub const ETM4_PKT_I_TIMESTAMP: ocsd_etmv4_i_pkt_type = 0x02;
pub const ETM4_PKT_I_TRACE_ON: ocsd_etmv4_i_pkt_type = 0x04;
pub const ETM4_PKT_I_FUNC_RET: ocsd_etmv4_i_pkt_type = 0x05;
pub const ETM4_PKT_I_EXCEPT: ocsd_etmv4_i_pkt_type = 0x06;
pub const ETM4_PKT_I_EXCEPT_RTN: ocsd_etmv4_i_pkt_type = 0x07;
pub const ETE_PKT_I_ITE: ocsd_etmv4_i_pkt_type = 0x09;
pub const ETE_PKT_I_TRANS_ST: ocsd_etmv4_i_pkt_type = 0x0A;
pub const ETE_PKT_I_TRANS_COMMIT: ocsd_etmv4_i_pkt_type = 0x0B;
pub const ETM4_PKT_I_CCNT_F2: ocsd_etmv4_i_pkt_type = 0x0C;
pub const ETM4_PKT_I_CCNT_F1: ocsd_etmv4_i_pkt_type = 0x0E;
pub const ETM4_PKT_I_CCNT_F3: ocsd_etmv4_i_pkt_type = 0x10;
pub const ETM4_PKT_I_NUM_DS_MKR: ocsd_etmv4_i_pkt_type = 0x20;
pub const ETM4_PKT_I_UNNUM_DS_MKR: ocsd_etmv4_i_pkt_type = 0x28;
pub const ETM4_PKT_I_COMMIT: ocsd_etmv4_i_pkt_type = 0x2D;
pub const ETM4_PKT_I_CANCEL_F1: ocsd_etmv4_i_pkt_type = 0x2E;
pub const ETM4_PKT_I_CANCEL_F1_MISPRED: ocsd_etmv4_i_pkt_type = 0x2F;
pub const ETM4_PKT_I_MISPREDICT: ocsd_etmv4_i_pkt_type = 0x30;
pub const ETM4_PKT_I_CANCEL_F2: ocsd_etmv4_i_pkt_type = 0x34;
pub const ETM4_PKT_I_CANCEL_F3: ocsd_etmv4_i_pkt_type = 0x38;
pub const ETM4_PKT_I_COND_I_F2: ocsd_etmv4_i_pkt_type = 0x40;
pub const ETM4_PKT_I_COND_FLUSH: ocsd_etmv4_i_pkt_type = 0x43;
pub const ETM4_PKT_I_COND_RES_F4: ocsd_etmv4_i_pkt_type = 0x44;
pub const ETM4_PKT_I_COND_RES_F2: ocsd_etmv4_i_pkt_type = 0x48;
pub const ETM4_PKT_I_COND_RES_F3: ocsd_etmv4_i_pkt_type = 0x50;
pub const ETM4_PKT_I_COND_RES_F1: ocsd_etmv4_i_pkt_type = 0x68;
pub const ETM4_PKT_I_COND_I_F1: ocsd_etmv4_i_pkt_type = 0x6C;
pub const ETM4_PKT_I_COND_I_F3: ocsd_etmv4_i_pkt_type = 0x6D;
pub const ETM4_PKT_I_IGNORE: ocsd_etmv4_i_pkt_type = 0x70;
pub const ETM4_PKT_I_EVENT: ocsd_etmv4_i_pkt_type = 0x71;
pub const ETM4_PKT_I_CTXT: ocsd_etmv4_i_pkt_type = 0x80;
pub const ETM4_PKT_I_ADDR_CTXT_L_32IS0: ocsd_etmv4_i_pkt_type = 0x82;
pub const ETM4_PKT_I_ADDR_CTXT_L_32IS1: ocsd_etmv4_i_pkt_type = 0x83;
pub const ETM4_PKT_I_ADDR_CTXT_L_64IS0: ocsd_etmv4_i_pkt_type = 0x85;
pub const ETM4_PKT_I_ADDR_CTXT_L_64IS1: ocsd_etmv4_i_pkt_type = 0x86;
pub const ETE_PKT_I_TS_MARKER: ocsd_etmv4_i_pkt_type = 0x88;
pub const ETM4_PKT_I_ADDR_MATCH: ocsd_etmv4_i_pkt_type = 0x90;
pub const ETM4_PKT_I_ADDR_S_IS0: ocsd_etmv4_i_pkt_type = 0x95;
pub const ETM4_PKT_I_ADDR_S_IS1: ocsd_etmv4_i_pkt_type = 0x96;
pub const ETM4_PKT_I_ADDR_L_32IS0: ocsd_etmv4_i_pkt_type = 0x9A;
pub const ETM4_PKT_I_ADDR_L_32IS1: ocsd_etmv4_i_pkt_type = 0x9B;
pub const ETM4_PKT_I_ADDR_L_64IS0: ocsd_etmv4_i_pkt_type = 0x9D;
pub const ETM4_PKT_I_ADDR_L_64IS1: ocsd_etmv4_i_pkt_type = 0x9E;
pub const ETM4_PKT_I_Q: ocsd_etmv4_i_pkt_type = 0xA0;
pub const ETE_PKT_I_SRC_ADDR_MATCH: ocsd_etmv4_i_pkt_type = 0xB0;
pub const ETE_PKT_I_SRC_ADDR_S_IS0: ocsd_etmv4_i_pkt_type = 0xB4;
pub const ETE_PKT_I_SRC_ADDR_S_IS1: ocsd_etmv4_i_pkt_type = 0xB5;
pub const ETE_PKT_I_SRC_ADDR_L_32IS0: ocsd_etmv4_i_pkt_type = 0xB6;
pub const ETE_PKT_I_SRC_ADDR_L_32IS1: ocsd_etmv4_i_pkt_type = 0xB7;
pub const ETE_PKT_I_SRC_ADDR_L_64IS0: ocsd_etmv4_i_pkt_type = 0xB8;
pub const ETE_PKT_I_SRC_ADDR_L_64IS1: ocsd_etmv4_i_pkt_type = 0xB9;
pub const ETM4_PKT_I_ATOM_F6: ocsd_etmv4_i_pkt_type = 0xC0;
pub const ETM4_PKT_I_ATOM_F5: ocsd_etmv4_i_pkt_type = 0xD5;
pub const ETM4_PKT_I_ATOM_F2: ocsd_etmv4_i_pkt_type = 0xD8;
pub const ETM4_PKT_I_ATOM_F4: ocsd_etmv4_i_pkt_type = 0xDC;
pub const ETM4_PKT_I_ATOM_F1: ocsd_etmv4_i_pkt_type = 0xF6;
pub const ETM4_PKT_I_ATOM_F3: ocsd_etmv4_i_pkt_type = 0xF8;
// extension packets - follow 0x00 header
pub const ETM4_PKT_I_ASYNC: ocsd_etmv4_i_pkt_type = 0x100;
pub const ETM4_PKT_I_DISCARD: ocsd_etmv4_i_pkt_type = 0x103;
pub const ETM4_PKT_I_OVERFLOW: ocsd_etmv4_i_pkt_type = 0x105;
// ETE extended types (base type is the exception packet)
pub const ETE_PKT_I_PE_RESET: ocsd_etmv4_i_pkt_type = 0x400;
pub const ETE_PKT_I_TRANS_FAIL: ocsd_etmv4_i_pkt_type = 0x401;

// ---------------------------------------------------------------------------
/// The bit-fields of a trace info value (`etmv4_trace_info_t::bits`).
/// cbindgen:ignore
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct etmv4_trace_info_bits {
    /// cbindgen-c: struct { uint32_t cc_enabled:1; uint32_t cond_enabled:3; uint32_t p0_load:1; uint32_t p0_store:1; uint32_t in_trans_state:1; uint32_t pad:9; uint32_t initial_t_info:1; uint32_t spec_field_present:1; };
    pub word: u32,
}

/// Trace info value (`etmv4_trace_info_t`): the whole value `val`, or its
/// fields through `bits`. Use the accessor methods from Rust.
#[repr(C)]
#[derive(Clone, Copy)]
pub union etmv4_trace_info_t {
    pub val: u32,
    /// cbindgen-c: struct { uint32_t cc_enabled:1; uint32_t cond_enabled:3; uint32_t p0_load:1; uint32_t p0_store:1; uint32_t in_trans_state:1; uint32_t pad:9; uint32_t initial_t_info:1; uint32_t spec_field_present:1; } bits;
    pub bits: etmv4_trace_info_bits,
}

impl Default for etmv4_trace_info_t {
    fn default() -> Self {
        etmv4_trace_info_t { val: 0 }
    }
}

impl PartialEq for etmv4_trace_info_t {
    fn eq(&self, other: &Self) -> bool {
        self.val() == other.val()
    }
}
impl Eq for etmv4_trace_info_t {}

impl std::fmt::Debug for etmv4_trace_info_t {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "etmv4_trace_info_t({:#x})", self.val())
    }
}

macro_rules! trace_info_fields {
    ($( $get:ident / $set:ident : $shift:expr, $width:expr ; )*) => {
        impl etmv4_trace_info_t {
            $(
                #[inline]
                pub fn $get(&self) -> u32 {
                    (self.val() >> $shift) & ((1u32 << $width) - 1)
                }
                #[inline]
                pub fn $set(&mut self, v: u32) {
                    let mask: u32 = ((1u32 << $width) - 1) << $shift;
                    self.set_val((self.val() & !mask) | ((v << $shift) & mask));
                }
            )*
        }
    };
}

impl etmv4_trace_info_t {
    /// The whole value.
    #[inline]
    pub fn val(&self) -> u32 {
        // SAFETY: both members are a plain u32 word; any bit pattern is valid.
        unsafe { self.val }
    }
    #[inline]
    pub fn set_val(&mut self, v: u32) {
        self.val = v;
    }
}

trace_info_fields! {
    cc_enabled / set_cc_enabled: 0, 1;
    cond_enabled / set_cond_enabled: 1, 3;
    p0_load / set_p0_load: 4, 1;
    p0_store / set_p0_store: 5, 1;
    in_trans_state / set_in_trans_state: 6, 1;
    pad / set_pad: 7, 9;
    initial_t_info / set_initial_t_info: 16, 1;
    spec_field_present / set_spec_field_present: 17, 1;
}

/// PE context in a packet (`etmv4_context_t`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct etmv4_context_t {
    /// cbindgen-c: struct { uint32_t EL:2; uint32_t SF:1; uint32_t NS:1; uint32_t updated:1; uint32_t updated_c:1; uint32_t updated_v:1; uint32_t NSE:1; };
    pub flags: u32,
    pub ctxtID: u32,
    pub VMID: u32,
}
crate::bitfields!(etmv4_context_t, flags: {
    EL / set_EL: 0, 2;
    SF / set_SF: 2, 1;
    NS / set_NS: 3, 1;
    updated / set_updated: 4, 1;
    updated_c / set_updated_c: 5, 1;
    updated_v / set_updated_v: 6, 1;
    NSE / set_NSE: 7, 1;
});

/// A broadcast address value (`etmv4_addr_val_t`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct etmv4_addr_val_t {
    pub val: ocsd_vaddr_t,
    pub isa: u8,
}

/// `ocsd_etmv4_i_pkt::ts`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_etmv4_i_pkt_ts {
    pub timestamp: u64,
    pub bits_changed: u8,
}

/// `ocsd_etmv4_i_pkt::exception_info`
/// cbindgen:ignore
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_etmv4_i_pkt_exception_info {
    /// cbindgen-c: struct { uint32_t exceptionType:10; uint32_t addr_interp:2; uint32_t m_fault_pending:1; uint32_t m_type:1; };
    pub bits: u32,
}
crate::bitfields!(ocsd_etmv4_i_pkt_exception_info, bits: {
    exceptionType / set_exceptionType: 0, 10;
    addr_interp / set_addr_interp: 10, 2;
    m_fault_pending / set_m_fault_pending: 12, 1;
    m_type / set_m_type: 13, 1;
});

/// `ocsd_etmv4_i_pkt::cond_instr`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_etmv4_i_pkt_cond_instr {
    pub cond_c_key: u32,
    pub num_c_elem: u8,
    /// cbindgen-c: struct { uint32_t cond_key_set:1; uint32_t f3_final_elem:1; uint32_t f2_cond_incr:1; };
    pub bits: u32,
}
crate::bitfields!(ocsd_etmv4_i_pkt_cond_instr, bits: {
    cond_key_set / set_cond_key_set: 0, 1;
    f3_final_elem / set_f3_final_elem: 1, 1;
    f2_cond_incr / set_f2_cond_incr: 2, 1;
});

/// `ocsd_etmv4_i_pkt::cond_result`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_etmv4_i_pkt_cond_result {
    pub cond_r_key_0: u32,
    pub cond_r_key_1: u32,
    /// cbindgen-c: struct { uint32_t res_0:4; uint32_t res_1:4; uint32_t ci_0:1; uint32_t ci_1:1; uint32_t key_res_0_set:1; uint32_t key_res_1_set:1; uint32_t f2_key_incr:2; uint32_t f2f4_token:2; uint32_t f3_tokens:12; };
    pub bits: u32,
}
crate::bitfields!(ocsd_etmv4_i_pkt_cond_result, bits: {
    res_0 / set_res_0: 0, 4;
    res_1 / set_res_1: 4, 4;
    ci_0 / set_ci_0: 8, 1;
    ci_1 / set_ci_1: 9, 1;
    key_res_0_set / set_key_res_0_set: 10, 1;
    key_res_1_set / set_key_res_1_set: 11, 1;
    f2_key_incr / set_f2_key_incr: 12, 2;
    f2f4_token / set_f2f4_token: 14, 2;
    f3_tokens / set_f3_tokens: 16, 12;
});

/// `ocsd_etmv4_i_pkt::Q_pkt`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_etmv4_i_pkt_q {
    pub q_count: u32,
    /// cbindgen-c: struct { uint32_t addr_present:1; uint32_t addr_match:1; uint32_t count_present:1; uint32_t q_type:4; };
    pub bits: u32,
}
crate::bitfields!(ocsd_etmv4_i_pkt_q, bits: {
    addr_present / set_addr_present: 0, 1;
    addr_match / set_addr_match: 1, 1;
    count_present / set_count_present: 2, 1;
    q_type / set_q_type: 3, 4;
});

/// `ocsd_etmv4_i_pkt::ite_pkt` (ETE instrumentation packet payload)
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_etmv4_i_pkt_ite {
    pub el: u8,
    pub value: u64,
}

/// `ocsd_etmv4_i_pkt::pkt_valid` (a union of `val` and `bits`).
/// cbindgen:ignore
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_etmv4_i_pkt_valid {
    /// cbindgen-c: union { uint32_t val; struct { uint32_t context_valid:1; uint32_t ts_valid:1; uint32_t spec_depth_valid:1; uint32_t p0_key_valid:1; uint32_t cond_c_key_valid:1; uint32_t cond_r_key_valid:1; uint32_t trace_info_valid:1; uint32_t cc_thresh_valid:1; uint32_t cc_valid:1; uint32_t commit_elem_valid:1; uint32_t cancel_elem_valid:1; } bits; };
    pub val: u32,
}
crate::bitfields!(ocsd_etmv4_i_pkt_valid, val: {
    context_valid / set_context_valid: 0, 1;
    ts_valid / set_ts_valid: 1, 1;
    spec_depth_valid / set_spec_depth_valid: 2, 1;
    p0_key_valid / set_p0_key_valid: 3, 1;
    cond_c_key_valid / set_cond_c_key_valid: 4, 1;
    cond_r_key_valid / set_cond_r_key_valid: 5, 1;
    trace_info_valid / set_trace_info_valid: 6, 1;
    cc_thresh_valid / set_cc_thresh_valid: 7, 1;
    cc_valid / set_cc_valid: 8, 1;
    commit_elem_valid / set_commit_elem_valid: 9, 1;
    cancel_elem_valid / set_cancel_elem_valid: 10, 1;
});

/// ETMv4 / ETE instruction trace packet (`ocsd_etmv4_i_pkt`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ocsd_etmv4_i_pkt {
    /// Packet type (C name `type`).
    pub type_: ocsd_etmv4_i_pkt_type,
    // intra-packet data - valid across packets
    pub v_addr: ocsd_pkt_vaddr,
    pub v_addr_ISA: u8,
    pub context: etmv4_context_t,
    pub ts: ocsd_etmv4_i_pkt_ts,
    pub cc_threshold: u32,
    // single packet data
    pub atom: ocsd_pkt_atom,
    pub cycle_count: u32,
    pub curr_spec_depth: u32,
    pub p0_key: u32,
    pub commit_elements: u32,
    pub cancel_elements: u32,
    pub trace_info: etmv4_trace_info_t,
    /// cbindgen-c: struct { uint32_t exceptionType:10; uint32_t addr_interp:2; uint32_t m_fault_pending:1; uint32_t m_type:1; } exception_info;
    pub exception_info: ocsd_etmv4_i_pkt_exception_info,
    pub addr_exact_match_idx: u8,
    pub dsm_val: u8,
    pub event_val: u8,
    pub cond_instr: ocsd_etmv4_i_pkt_cond_instr,
    pub cond_result: ocsd_etmv4_i_pkt_cond_result,
    pub Q_pkt: ocsd_etmv4_i_pkt_q,
    pub ite_pkt: ocsd_etmv4_i_pkt_ite,
    /// cbindgen-c: union { uint32_t val; struct { uint32_t context_valid:1; uint32_t ts_valid:1; uint32_t spec_depth_valid:1; uint32_t p0_key_valid:1; uint32_t cond_c_key_valid:1; uint32_t cond_r_key_valid:1; uint32_t trace_info_valid:1; uint32_t cc_thresh_valid:1; uint32_t cc_valid:1; uint32_t commit_elem_valid:1; uint32_t cancel_elem_valid:1; } bits; } pkt_valid;
    pub pkt_valid: ocsd_etmv4_i_pkt_valid,
    pub err_type: ocsd_etmv4_i_pkt_type,
    pub err_hdr_val: u8,
    pub protocol_version: u8,
}

impl Default for ocsd_etmv4_i_pkt {
    fn default() -> Self {
        ocsd_etmv4_i_pkt {
            type_: ETM4_PKT_I_NOTSYNC,
            v_addr: ocsd_pkt_vaddr::default(),
            v_addr_ISA: 0,
            context: etmv4_context_t::default(),
            ts: ocsd_etmv4_i_pkt_ts::default(),
            cc_threshold: 0,
            atom: ocsd_pkt_atom::default(),
            cycle_count: 0,
            curr_spec_depth: 0,
            p0_key: 0,
            commit_elements: 0,
            cancel_elements: 0,
            trace_info: etmv4_trace_info_t::default(),
            exception_info: ocsd_etmv4_i_pkt_exception_info::default(),
            addr_exact_match_idx: 0,
            dsm_val: 0,
            event_val: 0,
            cond_instr: ocsd_etmv4_i_pkt_cond_instr::default(),
            cond_result: ocsd_etmv4_i_pkt_cond_result::default(),
            Q_pkt: ocsd_etmv4_i_pkt_q::default(),
            ite_pkt: ocsd_etmv4_i_pkt_ite::default(),
            pkt_valid: ocsd_etmv4_i_pkt_valid::default(),
            err_type: ETM4_PKT_I_NO_ERR_TYPE,
            err_hdr_val: 0,
            protocol_version: 0x42,
        }
    }
}

// ---------------------------------------------------------------------------
// D stream packet types (`ocsd_etmv4_d_pkt_type`)
pub type ocsd_etmv4_d_pkt_type = c_int;
pub const ETM4_PKT_D_NOTSYNC: ocsd_etmv4_d_pkt_type = 0x200;
pub const ETM4_PKT_D_BAD_SEQUENCE: ocsd_etmv4_d_pkt_type = 0x201;
pub const ETM4_PKT_D_BAD_TRACEMODE: ocsd_etmv4_d_pkt_type = 0x202;
pub const ETM4_PKT_D_RESERVED: ocsd_etmv4_d_pkt_type = 0x203;
pub const ETM4_PKT_D_INCOMPLETE_EOT: ocsd_etmv4_d_pkt_type = 0x204;
pub const ETM4_PKT_D_NO_HEADER: ocsd_etmv4_d_pkt_type = 0x205;
pub const ETM4_PKT_D_NO_ERR_TYPE: ocsd_etmv4_d_pkt_type = 0x206;
pub const ETM4_PKT_DNUM_DS_MKR: ocsd_etmv4_d_pkt_type = 0x111;
pub const ETM4_PKT_D_EXTENSION: ocsd_etmv4_d_pkt_type = 0x00;
pub const ETM4_PKT_DUNNUM_DS_MKR: ocsd_etmv4_d_pkt_type = 0x01;
pub const ETM4_PKT_DEVENT: ocsd_etmv4_d_pkt_type = 0x04;
pub const ETM4_PKT_DTIMESTAMP: ocsd_etmv4_d_pkt_type = 0x02;
pub const ETM4_PKT_DADDR_P1_F1: ocsd_etmv4_d_pkt_type = 0x70;
pub const ETM4_PKT_DADDR_P1_F2: ocsd_etmv4_d_pkt_type = 0x80;
pub const ETM4_PKT_DADDR_P1_F3: ocsd_etmv4_d_pkt_type = 0x14;
pub const ETM4_PKT_DADDR_P1_F4: ocsd_etmv4_d_pkt_type = 0x60;
pub const ETM4_PKT_DADDR_P1_F5: ocsd_etmv4_d_pkt_type = 0xF8;
pub const ETM4_PKT_DADDR_P1_F6: ocsd_etmv4_d_pkt_type = 0xF6;
pub const ETM4_PKT_DADDR_P1_F7: ocsd_etmv4_d_pkt_type = 0xF5;
pub const ETM4_PKT_DVAL_P2_F1: ocsd_etmv4_d_pkt_type = 0x20;
pub const ETM4_PKT_DVAL_P2_F2: ocsd_etmv4_d_pkt_type = 0x30;
pub const ETM4_PKT_DVAL_P2_F3: ocsd_etmv4_d_pkt_type = 0x40;
pub const ETM4_PKT_DVAL_P2_F4: ocsd_etmv4_d_pkt_type = 0x10;
pub const ETM4_PKT_DVAL_P2_F5: ocsd_etmv4_d_pkt_type = 0x18;
pub const ETM4_PKT_DVAL_P2_F6: ocsd_etmv4_d_pkt_type = 0x38;
pub const ETM4_PKT_DSUPPRESSION: ocsd_etmv4_d_pkt_type = 0x03;
pub const ETM4_PKT_DTRACE_INFO: ocsd_etmv4_d_pkt_type = 0x101;
pub const ETM4_PKT_D_ASYNC: ocsd_etmv4_d_pkt_type = 0x100;
pub const ETM4_PKT_D_DISCARD: ocsd_etmv4_d_pkt_type = 0x103;
pub const ETM4_PKT_D_OVERFLOW: ocsd_etmv4_d_pkt_type = 0x105;

/// ETMv4 data trace packet (`ocsd_etmv4_d_pkt`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_etmv4_d_pkt {
    /// Packet type (C name `type`).
    pub type_: ocsd_etmv4_d_pkt_type,
    pub d_addr: ocsd_pkt_vaddr,
    pub pkt_val: u64,
    pub err_type: ocsd_etmv4_d_pkt_type,
}

// ---------------------------------------------------------------------------
/// ETMv4 hardware configuration (`ocsd_etmv4_cfg`): the ID and control
/// registers the decoder needs.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_etmv4_cfg {
    pub reg_idr0: u32,
    pub reg_idr1: u32,
    pub reg_idr2: u32,
    pub reg_idr8: u32,
    pub reg_idr9: u32,
    pub reg_idr10: u32,
    pub reg_idr11: u32,
    pub reg_idr12: u32,
    pub reg_idr13: u32,
    pub reg_configr: u32,
    pub reg_traceidr: u32,
    pub arch_ver: ocsd_arch_version_t,
    pub core_prof: ocsd_core_profile_t,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_opencsd() {
        assert_eq!(size_of::<etmv4_trace_info_t>(), 4);
        assert_eq!(size_of::<etmv4_context_t>(), 12);
        assert_eq!(offset_of!(etmv4_context_t, ctxtID), 4);
        assert_eq!(offset_of!(etmv4_context_t, VMID), 8);
        assert_eq!(size_of::<etmv4_addr_val_t>(), 16);

        assert_eq!(size_of::<ocsd_etmv4_i_pkt>(), 176);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, type_), 0);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, v_addr), 8);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, v_addr_ISA), 32);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, context), 36);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, ts), 48);
        assert_eq!(size_of::<ocsd_etmv4_i_pkt_ts>(), 16);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, cc_threshold), 64);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, atom), 68);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, cycle_count), 76);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, curr_spec_depth), 80);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, p0_key), 84);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, commit_elements), 88);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, cancel_elements), 92);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, trace_info), 96);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, exception_info), 100);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, addr_exact_match_idx), 104);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, dsm_val), 105);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, event_val), 106);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, cond_instr), 108);
        assert_eq!(size_of::<ocsd_etmv4_i_pkt_cond_instr>(), 12);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt_cond_instr, num_c_elem), 4);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt_cond_instr, bits), 8);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, cond_result), 120);
        assert_eq!(size_of::<ocsd_etmv4_i_pkt_cond_result>(), 12);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, Q_pkt), 132);
        assert_eq!(size_of::<ocsd_etmv4_i_pkt_q>(), 8);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, ite_pkt), 144);
        assert_eq!(size_of::<ocsd_etmv4_i_pkt_ite>(), 16);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt_ite, value), 8);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, pkt_valid), 160);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, err_type), 164);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, err_hdr_val), 168);
        assert_eq!(offset_of!(ocsd_etmv4_i_pkt, protocol_version), 169);

        assert_eq!(size_of::<ocsd_etmv4_d_pkt>(), 48);
        assert_eq!(offset_of!(ocsd_etmv4_d_pkt, d_addr), 8);
        assert_eq!(offset_of!(ocsd_etmv4_d_pkt, pkt_val), 32);
        assert_eq!(offset_of!(ocsd_etmv4_d_pkt, err_type), 40);

        assert_eq!(size_of::<ocsd_etmv4_cfg>(), 52);
        assert_eq!(offset_of!(ocsd_etmv4_cfg, reg_configr), 36);
        assert_eq!(offset_of!(ocsd_etmv4_cfg, reg_traceidr), 40);
        assert_eq!(offset_of!(ocsd_etmv4_cfg, arch_ver), 44);
        assert_eq!(offset_of!(ocsd_etmv4_cfg, core_prof), 48);
    }

    #[test]
    fn bitfield_positions() {
        let mut ti = etmv4_trace_info_t::default();
        ti.set_initial_t_info(1);
        ti.set_spec_field_present(1);
        ti.set_in_trans_state(1);
        assert_eq!(ti.val(), (1 << 16) | (1 << 17) | (1 << 6));
        let mut c = etmv4_context_t::default();
        c.set_NSE(1);
        c.set_EL(3);
        assert_eq!(c.flags, 0x83);
        let mut v = ocsd_etmv4_i_pkt_valid::default();
        v.set_cancel_elem_valid(1);
        assert_eq!(v.val, 1 << 10);
        let mut r = ocsd_etmv4_i_pkt_cond_result::default();
        r.set_f3_tokens(0xFFF);
        assert_eq!(r.bits, 0x0FFF_0000);
        let mut q = ocsd_etmv4_i_pkt_q::default();
        q.set_q_type(0xF);
        assert_eq!(q.bits, 0x78);
        let mut e = ocsd_etmv4_i_pkt_exception_info::default();
        e.set_m_type(1);
        assert_eq!(e.bits, 1 << 13);
    }
}
