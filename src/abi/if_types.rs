//! C ABI mirror of OpenCSD 1.8.0's `opencsd/ocsd_if_types.h`: the common
//! interface types (errors, data path, architecture, memory access,
//! protocols, decode statistics).
//!
//! The header generator (`tools/gen-headers`) writes this file's items to
//! `include/opencsd/ocsd_if_types.h`.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use std::os::raw::{c_int, c_uint, c_void};

// ---------------------------------------------------------------------------
// Trace index
pub type ocsd_trc_index_t = u32;
pub const OCSD_BAD_TRC_INDEX: ocsd_trc_index_t = 0xFFFF_FFFF;
pub const OCSD_TRC_IDX_STR: &str = "u";

pub const OCSD_BAD_CS_SRC_ID: u8 = 0xFF;

/// `OCSD_IS_VALID_CS_SRC_ID`: trace IDs 0x01 to 0x6F carry trace.
#[inline]
pub fn is_valid_cs_src_id(id: u8) -> bool {
    id > 0 && id < 0x70
}
/// `OCSD_IS_RESERVED_CS_SRC_ID`
#[inline]
pub fn is_reserved_cs_src_id(id: u8) -> bool {
    id == 0 || id >= 0x70
}

// ---------------------------------------------------------------------------
// Errors
pub type ocsd_err_t = c_int;
pub const OCSD_OK: ocsd_err_t = 0;
pub const OCSD_ERR_FAIL: ocsd_err_t = 1;
pub const OCSD_ERR_MEM: ocsd_err_t = 2;
pub const OCSD_ERR_NOT_INIT: ocsd_err_t = 3;
pub const OCSD_ERR_INVALID_ID: ocsd_err_t = 4;
pub const OCSD_ERR_BAD_HANDLE: ocsd_err_t = 5;
pub const OCSD_ERR_INVALID_PARAM_VAL: ocsd_err_t = 6;
pub const OCSD_ERR_INVALID_PARAM_TYPE: ocsd_err_t = 7;
pub const OCSD_ERR_FILE_ERROR: ocsd_err_t = 8;
pub const OCSD_ERR_NO_PROTOCOL: ocsd_err_t = 9;
pub const OCSD_ERR_ATTACH_TOO_MANY: ocsd_err_t = 10;
pub const OCSD_ERR_ATTACH_INVALID_PARAM: ocsd_err_t = 11;
pub const OCSD_ERR_ATTACH_COMP_NOT_FOUND: ocsd_err_t = 12;
pub const OCSD_ERR_RDR_FILE_NOT_FOUND: ocsd_err_t = 13;
pub const OCSD_ERR_RDR_INVALID_INIT: ocsd_err_t = 14;
pub const OCSD_ERR_RDR_NO_DECODER: ocsd_err_t = 15;
pub const OCSD_ERR_DATA_DECODE_FATAL: ocsd_err_t = 16;
pub const OCSD_ERR_DFMTR_NOTCONTTRACE: ocsd_err_t = 17;
pub const OCSD_ERR_DFMTR_BAD_FHSYNC: ocsd_err_t = 18;
pub const OCSD_ERR_BAD_PACKET_SEQ: ocsd_err_t = 19;
pub const OCSD_ERR_INVALID_PCKT_HDR: ocsd_err_t = 20;
pub const OCSD_ERR_PKT_INTERP_FAIL: ocsd_err_t = 21;
pub const OCSD_ERR_UNSUPPORTED_ISA: ocsd_err_t = 22;
pub const OCSD_ERR_HW_CFG_UNSUPP: ocsd_err_t = 23;
pub const OCSD_ERR_UNSUPP_DECODE_PKT: ocsd_err_t = 24;
pub const OCSD_ERR_BAD_DECODE_PKT: ocsd_err_t = 25;
pub const OCSD_ERR_COMMIT_PKT_OVERRUN: ocsd_err_t = 26;
pub const OCSD_ERR_MEM_NACC: ocsd_err_t = 27;
pub const OCSD_ERR_RET_STACK_OVERFLOW: ocsd_err_t = 28;
pub const OCSD_ERR_DCDT_NO_FORMATTER: ocsd_err_t = 29;
pub const OCSD_ERR_MEM_ACC_OVERLAP: ocsd_err_t = 30;
pub const OCSD_ERR_MEM_ACC_FILE_NOT_FOUND: ocsd_err_t = 31;
pub const OCSD_ERR_MEM_ACC_FILE_DIFF_RANGE: ocsd_err_t = 32;
pub const OCSD_ERR_MEM_ACC_RANGE_INVALID: ocsd_err_t = 33;
pub const OCSD_ERR_MEM_ACC_BAD_LEN: ocsd_err_t = 34;
pub const OCSD_ERR_TEST_SNAPSHOT_PARSE: ocsd_err_t = 35;
pub const OCSD_ERR_TEST_SNAPSHOT_PARSE_INFO: ocsd_err_t = 36;
pub const OCSD_ERR_TEST_SNAPSHOT_READ: ocsd_err_t = 37;
pub const OCSD_ERR_TEST_SS_TO_DECODER: ocsd_err_t = 38;
pub const OCSD_ERR_DCDREG_NAME_REPEAT: ocsd_err_t = 39;
pub const OCSD_ERR_DCDREG_NAME_UNKNOWN: ocsd_err_t = 40;
pub const OCSD_ERR_DCDREG_TYPE_UNKNOWN: ocsd_err_t = 41;
pub const OCSD_ERR_DCDREG_TOOMANY: ocsd_err_t = 42;
pub const OCSD_ERR_DCD_INTERFACE_UNUSED: ocsd_err_t = 43;
pub const OCSD_ERR_INVALID_OPCODE: ocsd_err_t = 44;
pub const OCSD_ERR_I_RANGE_LIMIT_OVERRUN: ocsd_err_t = 45;
pub const OCSD_ERR_BAD_DECODE_IMAGE: ocsd_err_t = 46;
pub const OCSD_ERR_LAST: ocsd_err_t = 47;

/// Reader control handle.
pub type ocsd_hndl_rdr_t = c_uint;
/// Error logger connection handle.
pub type ocsd_hndl_err_log_t = c_uint;
/// The invalid handle value.
pub const OCSD_INVALID_HANDLE: c_uint = 0xFFFF_FFFF;

pub type ocsd_err_severity_t = c_int;
pub const OCSD_ERR_SEV_NONE: ocsd_err_severity_t = 0;
pub const OCSD_ERR_SEV_ERROR: ocsd_err_severity_t = 1;
pub const OCSD_ERR_SEV_WARN: ocsd_err_severity_t = 2;
pub const OCSD_ERR_SEV_INFO: ocsd_err_severity_t = 3;

// ---------------------------------------------------------------------------
// Data path
pub type ocsd_datapath_op_t = c_int;
pub const OCSD_OP_DATA: ocsd_datapath_op_t = 0;
pub const OCSD_OP_EOT: ocsd_datapath_op_t = 1;
pub const OCSD_OP_FLUSH: ocsd_datapath_op_t = 2;
pub const OCSD_OP_RESET: ocsd_datapath_op_t = 3;

pub type ocsd_datapath_resp_t = c_int;
pub const OCSD_RESP_CONT: ocsd_datapath_resp_t = 0;
pub const OCSD_RESP_WARN_CONT: ocsd_datapath_resp_t = 1;
pub const OCSD_RESP_ERR_CONT: ocsd_datapath_resp_t = 2;
pub const OCSD_RESP_WAIT: ocsd_datapath_resp_t = 3;
pub const OCSD_RESP_WARN_WAIT: ocsd_datapath_resp_t = 4;
pub const OCSD_RESP_ERR_WAIT: ocsd_datapath_resp_t = 5;
pub const OCSD_RESP_FATAL_NOT_INIT: ocsd_datapath_resp_t = 6;
pub const OCSD_RESP_FATAL_INVALID_OP: ocsd_datapath_resp_t = 7;
pub const OCSD_RESP_FATAL_INVALID_PARAM: ocsd_datapath_resp_t = 8;
pub const OCSD_RESP_FATAL_INVALID_DATA: ocsd_datapath_resp_t = 9;
pub const OCSD_RESP_FATAL_SYS_ERR: ocsd_datapath_resp_t = 10;

/// `OCSD_DATA_RESP_IS_CONT(x)`
#[inline]
pub fn resp_is_cont(r: ocsd_datapath_resp_t) -> bool {
    r < OCSD_RESP_WAIT
}
/// `OCSD_DATA_RESP_IS_WAIT(x)`
#[inline]
pub fn resp_is_wait(r: ocsd_datapath_resp_t) -> bool {
    (OCSD_RESP_WAIT..OCSD_RESP_FATAL_NOT_INIT).contains(&r)
}
/// `OCSD_DATA_RESP_IS_FATAL(x)`
#[inline]
pub fn resp_is_fatal(r: ocsd_datapath_resp_t) -> bool {
    r >= OCSD_RESP_FATAL_NOT_INIT
}

// ---------------------------------------------------------------------------
// Frame deformatter
/// cbindgen:c-tag=_rcdtl_rawframe_elem_t
pub type ocsd_rawframe_elem_t = c_int;
pub const OCSD_FRM_NONE: ocsd_rawframe_elem_t = 0;
pub const OCSD_FRM_PACKED: ocsd_rawframe_elem_t = 1;
pub const OCSD_FRM_HSYNC: ocsd_rawframe_elem_t = 2;
pub const OCSD_FRM_FSYNC: ocsd_rawframe_elem_t = 3;
pub const OCSD_FRM_ID_DATA: ocsd_rawframe_elem_t = 4;

pub const OCSD_DFRMTR_HAS_FSYNCS: u32 = 0x01;
pub const OCSD_DFRMTR_HAS_HSYNCS: u32 = 0x02;
pub const OCSD_DFRMTR_FRAME_MEM_ALIGN: u32 = 0x04;
pub const OCSD_DFRMTR_PACKED_RAW_OUT: u32 = 0x08;
pub const OCSD_DFRMTR_UNPACKED_RAW_OUT: u32 = 0x10;
pub const OCSD_DFRMTR_RESET_ON_4X_FSYNC: u32 = 0x20;
pub const OCSD_DFRMTR_VALID_MASK: u32 = 0x3F;
pub const OCSD_DFRMTR_FRAME_SIZE: u32 = 0x10;

/// Component name prefixes (for component instance names in logs).
pub const OCSD_CMPNAME_PREFIX_SOURCE_READER: &str = "SRDR";
pub const OCSD_CMPNAME_PREFIX_FRAMEDEFORMATTER: &str = "DFMT";
pub const OCSD_CMPNAME_PREFIX_PKTPROC: &str = "PKTP";
pub const OCSD_CMPNAME_PREFIX_PKTDEC: &str = "PDEC";

pub type ocsd_dcd_tree_src_t = c_int;
pub const OCSD_TRC_SRC_FRAME_FORMATTED: ocsd_dcd_tree_src_t = 0;
pub const OCSD_TRC_SRC_SINGLE: ocsd_dcd_tree_src_t = 1;

// ---------------------------------------------------------------------------
// Architecture
/// cbindgen:c-tag=_ocsd_arch_version
pub type ocsd_arch_version_t = c_int;
pub const ARCH_UNKNOWN: ocsd_arch_version_t = 0x0000;
pub const ARCH_CUSTOM: ocsd_arch_version_t = 0x0001;
pub const ARCH_V7: ocsd_arch_version_t = 0x0700;
pub const ARCH_V8: ocsd_arch_version_t = 0x0800;
pub const ARCH_V8r3: ocsd_arch_version_t = 0x0803;
pub const ARCH_AA64: ocsd_arch_version_t = 0x0864;
pub const ARCH_V8_max: ocsd_arch_version_t = ARCH_AA64;

/// cbindgen:c-tag=_ocsd_core_profile
pub type ocsd_core_profile_t = c_int;
pub const profile_Unknown: ocsd_core_profile_t = 0;
pub const profile_CortexM: ocsd_core_profile_t = 1;
pub const profile_CortexR: ocsd_core_profile_t = 2;
pub const profile_CortexA: ocsd_core_profile_t = 3;
pub const profile_Custom: ocsd_core_profile_t = 4;

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_arch_profile_t {
    pub arch: ocsd_arch_version_t,
    pub profile: ocsd_core_profile_t,
}

pub type ocsd_vaddr_t = u64;
pub const OCSD_MAX_VA_BITSIZE: u32 = 64;
pub const OCSD_VA_MASK: u64 = !0u64;

pub type ocsd_isa = c_int;
pub const ocsd_isa_arm: ocsd_isa = 0;
pub const ocsd_isa_thumb2: ocsd_isa = 1;
pub const ocsd_isa_aarch64: ocsd_isa = 2;
pub const ocsd_isa_tee: ocsd_isa = 3;
pub const ocsd_isa_jazelle: ocsd_isa = 4;
pub const ocsd_isa_custom: ocsd_isa = 5;
pub const ocsd_isa_unknown: ocsd_isa = 6;

pub type ocsd_sec_level = c_int;
pub const ocsd_sec_secure: ocsd_sec_level = 0;
pub const ocsd_sec_nonsecure: ocsd_sec_level = 1;
pub const ocsd_sec_root: ocsd_sec_level = 2;
pub const ocsd_sec_realm: ocsd_sec_level = 3;

pub type ocsd_ex_level = c_int;
pub const ocsd_EL_unknown: ocsd_ex_level = -1;
pub const ocsd_EL0: ocsd_ex_level = 0;
pub const ocsd_EL1: ocsd_ex_level = 1;
pub const ocsd_EL2: ocsd_ex_level = 2;
pub const ocsd_EL3: ocsd_ex_level = 3;

pub type ocsd_instr_type = c_int;
pub const OCSD_INSTR_OTHER: ocsd_instr_type = 0;
pub const OCSD_INSTR_BR: ocsd_instr_type = 1;
pub const OCSD_INSTR_BR_INDIRECT: ocsd_instr_type = 2;
pub const OCSD_INSTR_ISB: ocsd_instr_type = 3;
pub const OCSD_INSTR_DSB_DMB: ocsd_instr_type = 4;
pub const OCSD_INSTR_WFI_WFE: ocsd_instr_type = 5;
pub const OCSD_INSTR_TSTART: ocsd_instr_type = 6;

pub type ocsd_instr_subtype = c_int;
pub const OCSD_S_INSTR_NONE: ocsd_instr_subtype = 0;
pub const OCSD_S_INSTR_BR_LINK: ocsd_instr_subtype = 1;
pub const OCSD_S_INSTR_V8_RET: ocsd_instr_subtype = 2;
pub const OCSD_S_INSTR_V8_ERET: ocsd_instr_subtype = 3;
pub const OCSD_S_INSTR_V7_IMPLIED_RET: ocsd_instr_subtype = 4;

/// Instruction decode request / result (`ocsd_instr_info`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_instr_info {
    pub pe_type: ocsd_arch_profile_t,
    pub isa: ocsd_isa,
    pub instr_addr: ocsd_vaddr_t,
    pub opcode: u32,
    pub dsb_dmb_waypoints: u8,
    pub wfi_wfe_branch: u8,
    pub track_it_block: u8,
    pub type_: ocsd_instr_type,
    pub branch_addr: ocsd_vaddr_t,
    pub next_isa: ocsd_isa,
    pub instr_size: u8,
    pub is_conditional: u8,
    pub is_link: u8,
    pub thumb_it_conditions: u8,
    pub sub_type: ocsd_instr_subtype,
}

/// PE context (`ocsd_pe_context`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_pe_context {
    pub security_level: ocsd_sec_level,
    pub exception_level: ocsd_ex_level,
    pub context_id: u32,
    pub vmid: u32,
    /// cbindgen-c: struct { uint32_t bits64:1; uint32_t ctxt_id_valid:1; uint32_t vmid_valid:1; uint32_t el_valid:1; };
    pub flags: u32,
}
crate::bitfields!(ocsd_pe_context, flags: {
    bits64 / set_bits64: 0, 1;
    ctxt_id_valid / set_ctxt_id_valid: 1, 1;
    vmid_valid / set_vmid_valid: 2, 1;
    el_valid / set_el_valid: 3, 1;
});

// ---------------------------------------------------------------------------
// Memory access
pub type ocsd_mem_space_acc_t = c_int;
pub const OCSD_MEM_SPACE_NONE: ocsd_mem_space_acc_t = 0x0;
pub const OCSD_MEM_SPACE_EL1S: ocsd_mem_space_acc_t = 0x1;
pub const OCSD_MEM_SPACE_EL1N: ocsd_mem_space_acc_t = 0x2;
pub const OCSD_MEM_SPACE_EL2: ocsd_mem_space_acc_t = 0x4;
pub const OCSD_MEM_SPACE_EL3: ocsd_mem_space_acc_t = 0x8;
pub const OCSD_MEM_SPACE_EL2S: ocsd_mem_space_acc_t = 0x10;
pub const OCSD_MEM_SPACE_EL1R: ocsd_mem_space_acc_t = 0x20;
pub const OCSD_MEM_SPACE_EL2R: ocsd_mem_space_acc_t = 0x40;
pub const OCSD_MEM_SPACE_ROOT: ocsd_mem_space_acc_t = 0x80;
pub const OCSD_MEM_SPACE_S: ocsd_mem_space_acc_t = 0x19;
pub const OCSD_MEM_SPACE_N: ocsd_mem_space_acc_t = 0x6;
pub const OCSD_MEM_SPACE_R: ocsd_mem_space_acc_t = 0x60;
pub const OCSD_MEM_SPACE_ANY: ocsd_mem_space_acc_t = 0xFF;

/// Memory access callback: read up to `reqBytes` bytes at `address` in
/// `mem_space` into `byteBuffer`; returns the number of bytes read (0 if the
/// address is not covered).
pub type Fn_MemAcc_CB = Option<
    unsafe extern "C" fn(
        p_context: *const c_void,
        address: ocsd_vaddr_t,
        mem_space: ocsd_mem_space_acc_t,
        reqBytes: u32,
        byteBuffer: *mut u8,
    ) -> u32,
>;

/// Memory access callback that is also given the trace ID of the source
/// whose decoder asks.
pub type Fn_MemAccID_CB = Option<
    unsafe extern "C" fn(
        p_context: *const c_void,
        address: ocsd_vaddr_t,
        mem_space: ocsd_mem_space_acc_t,
        trcID: u8,
        reqBytes: u32,
        byteBuffer: *mut u8,
    ) -> u32,
>;

/// A region of a binary file mapped into memory (`ocsd_file_mem_region_t`).
///
/// cbindgen:c-tag=_ocsd_file_mem_region
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ocsd_file_mem_region_t {
    pub file_offset: usize,
    pub start_address: ocsd_vaddr_t,
    pub region_size: usize,
}

// ---------------------------------------------------------------------------
// Protocols
pub type ocsd_trace_protocol_t = c_int;
pub const OCSD_PROTOCOL_UNKNOWN: ocsd_trace_protocol_t = 0;
pub const OCSD_PROTOCOL_ETMV3: ocsd_trace_protocol_t = 1;
pub const OCSD_PROTOCOL_ETMV4I: ocsd_trace_protocol_t = 2;
pub const OCSD_PROTOCOL_ETMV4D: ocsd_trace_protocol_t = 3;
pub const OCSD_PROTOCOL_PTM: ocsd_trace_protocol_t = 4;
pub const OCSD_PROTOCOL_STM: ocsd_trace_protocol_t = 5;
pub const OCSD_PROTOCOL_ETE: ocsd_trace_protocol_t = 6;
pub const OCSD_PROTOCOL_ITM: ocsd_trace_protocol_t = 7;
pub const OCSD_PROTOCOL_BUILTIN_END: ocsd_trace_protocol_t = 8;
pub const OCSD_PROTOCOL_CUSTOM_0: ocsd_trace_protocol_t = 100;
pub const OCSD_PROTOCOL_CUSTOM_1: ocsd_trace_protocol_t = 101;
pub const OCSD_PROTOCOL_CUSTOM_2: ocsd_trace_protocol_t = 102;
pub const OCSD_PROTOCOL_CUSTOM_3: ocsd_trace_protocol_t = 103;
pub const OCSD_PROTOCOL_CUSTOM_4: ocsd_trace_protocol_t = 104;
pub const OCSD_PROTOCOL_CUSTOM_5: ocsd_trace_protocol_t = 105;
pub const OCSD_PROTOCOL_CUSTOM_6: ocsd_trace_protocol_t = 106;
pub const OCSD_PROTOCOL_CUSTOM_7: ocsd_trace_protocol_t = 107;
pub const OCSD_PROTOCOL_CUSTOM_8: ocsd_trace_protocol_t = 108;
pub const OCSD_PROTOCOL_CUSTOM_9: ocsd_trace_protocol_t = 109;
pub const OCSD_PROTOCOL_END: ocsd_trace_protocol_t = 110;

// ---------------------------------------------------------------------------
// Software trace info (`ocsd_swt_info_t`)
/// Software trace packet information: master, channel and payload flags.
///
/// cbindgen:c-tag=_ocsd_swt_info
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_swt_info_t {
    pub swt_master_id: u16,
    pub swt_channel_id: u16,
    /// cbindgen-c: union { struct { uint32_t swt_payload_pkt_bitsize:8; uint32_t swt_payload_num_packets:8; uint32_t swt_marker_packet:1; uint32_t swt_has_timestamp:1; uint32_t swt_marker_first:1; uint32_t swt_master_err:1; uint32_t swt_global_err:1; uint32_t swt_trigger_event:1; uint32_t swt_frequency:1; uint32_t swt_id_valid:1; }; uint32_t swt_flag_bits; };
    pub swt_flag_bits: u32,
}
crate::bitfields!(ocsd_swt_info_t, swt_flag_bits: {
    swt_payload_pkt_bitsize / set_swt_payload_pkt_bitsize: 0, 8;
    swt_payload_num_packets / set_swt_payload_num_packets: 8, 8;
    swt_marker_packet / set_swt_marker_packet: 16, 1;
    swt_has_timestamp / set_swt_has_timestamp: 17, 1;
    swt_marker_first / set_swt_marker_first: 18, 1;
    swt_master_err / set_swt_master_err: 19, 1;
    swt_global_err / set_swt_global_err: 20, 1;
    swt_trigger_event / set_swt_trigger_event: 21, 1;
    swt_frequency / set_swt_frequency: 22, 1;
    swt_id_valid / set_swt_id_valid: 23, 1;
});

/// Mask of the `swt_id_valid` flag in `swt_flag_bits`.
pub const SWT_ID_VALID_MASK: u32 = 0x1 << 23;

// ---------------------------------------------------------------------------
// Packet processor / decoder operation flags
pub const OCSD_OPFLG_PKTPROC_NOFWD_BAD_PKTS: u32 = 0x0000_0010;
pub const OCSD_OPFLG_PKTPROC_NOMON_BAD_PKTS: u32 = 0x0000_0020;
pub const OCSD_OPFLG_PKTPROC_ERR_BAD_PKTS: u32 = 0x0000_0040;
pub const OCSD_OPFLG_PKTPROC_UNSYNC_ON_BAD_PKTS: u32 = 0x0000_0080;
pub const OCSD_OPFLG_PKTPROC_COMMON: u32 = OCSD_OPFLG_PKTPROC_NOFWD_BAD_PKTS
    | OCSD_OPFLG_PKTPROC_NOMON_BAD_PKTS
    | OCSD_OPFLG_PKTPROC_ERR_BAD_PKTS
    | OCSD_OPFLG_PKTPROC_UNSYNC_ON_BAD_PKTS;
pub const OCSD_OPFLG_COMP_MODE_MASK: u32 = 0xFFFF_0000;
pub const OCSD_OPFLG_PKTDEC_ERROR_BAD_PKTS: u32 = 0x0000_0100;
pub const OCSD_OPFLG_PKTDEC_HALT_BAD_PKTS: u32 = 0x0000_0200;
pub const OCSD_OPFLG_N_UNCOND_DIR_BR_CHK: u32 = 0x0000_0400;
pub const OCSD_OPFLG_STRICT_N_UNCOND_BR_CHK: u32 = 0x0000_0800;
pub const OCSD_OPFLG_CHK_RANGE_CONTINUE: u32 = 0x0000_1000;
pub const OCSD_OPFLG_N_UNCOND_CHK_NO_THUMB: u32 = 0x0000_2000;
pub const OCSD_OPFLG_PKTDEC_COMMON: u32 = OCSD_OPFLG_PKTDEC_ERROR_BAD_PKTS
    | OCSD_OPFLG_PKTDEC_HALT_BAD_PKTS
    | OCSD_OPFLG_N_UNCOND_DIR_BR_CHK
    | OCSD_OPFLG_STRICT_N_UNCOND_BR_CHK
    | OCSD_OPFLG_CHK_RANGE_CONTINUE
    | OCSD_OPFLG_N_UNCOND_CHK_NO_THUMB;

pub const OCSD_CREATE_FLG_PACKET_PROC: u32 = 0x01;
pub const OCSD_CREATE_FLG_FULL_DECODER: u32 = 0x02;
pub const OCSD_CREATE_FLG_INST_ID: u32 = 0x04;

pub const OCSD_BUILTIN_DCD_STM: &str = "STM";
pub const OCSD_BUILTIN_DCD_ETMV3: &str = "ETMV3";
pub const OCSD_BUILTIN_DCD_ETMV4I: &str = "ETMV4I";
pub const OCSD_BUILTIN_DCD_ETMV4D: &str = "ETMV4D";
pub const OCSD_BUILTIN_DCD_PTM: &str = "PTM";
pub const OCSD_BUILTIN_DCD_ETE: &str = "ETE";
pub const OCSD_BUILTIN_DCD_ITM: &str = "ITM";

// ---------------------------------------------------------------------------
// Decode statistics
/// Frame demultiplexer statistics.
///
/// cbindgen:c-tag=_ocsd_demux_stats
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ocsd_demux_stats_t {
    pub valid_id_bytes: u64,
    pub no_id_bytes: u64,
    pub reserved_id_bytes: u64,
    pub unknown_id_bytes: u64,
    pub frame_bytes: u64,
}

/// Decode statistics for one trace source.
///
/// cbindgen:c-tag=_ocsd_decode_stats
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ocsd_decode_stats_t {
    pub version: u32,
    pub revision: u16,
    pub channel_total: u64,
    pub channel_unsynced: u64,
    pub bad_header_errs: u32,
    pub bad_sequence_errs: u32,
    pub demux: ocsd_demux_stats_t,
}
pub const OCSD_STATS_REVISION: u16 = 0x1;
