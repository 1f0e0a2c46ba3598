//! C ABI mirror of OpenCSD 1.8.0's `opencsd/c_api/ocsd_c_api_custom.h`:
//! the interface between the library and a custom (external) decoder
//! written in C.
//!
//! The client registers a factory ([`ocsd_extern_dcd_fact_t`]) by name; when
//! a decoder of that name is created on a tree the library calls
//! `createDecoder` with its callbacks ([`ocsd_extern_dcd_cb_fns`]) and the
//! decoder fills in an instance ([`ocsd_extern_dcd_inst_t`]) with its own
//! call-in functions.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use std::os::raw::{c_char, c_int, c_uchar, c_void};

use crate::abi::gen_elem::ocsd_generic_trace_elem;
use crate::abi::*;

// ---------------------------------------------------------------------------
// Decoder call-in functions

/// Raw trace data input to the decoder (mandatory).
pub type fnTraceDataIn = Option<
    unsafe extern "C" fn(
        decoder_handle: *const c_void,
        op: ocsd_datapath_op_t,
        index: ocsd_trc_index_t,
        dataBlockSize: u32,
        pDataBlock: *const u8,
        numBytesProcessed: *mut u32,
    ) -> ocsd_datapath_resp_t,
>;

/// Tell the decoder which packet callbacks the library uses
/// ([`OCSD_CUST_DCD_PKT_CB_USE_MON`] / [`OCSD_CUST_DCD_PKT_CB_USE_SINK`]).
pub type fnUpdatePktMonFlags = Option<unsafe extern "C" fn(decoder_handle: *const c_void, flags: c_int)>;

/// The packet monitor callback (`fnPktMonCB`) is in use in the library.
pub const OCSD_CUST_DCD_PKT_CB_USE_MON: c_int = 0x1;
/// The packet sink callback (`fnPktDataSinkCB`) is in use in the library.
pub const OCSD_CUST_DCD_PKT_CB_USE_SINK: c_int = 0x2;

/// A decoder instance, filled in by the factory's `createDecoder`.
///
/// cbindgen:c-tag=_ocsd_extern_dcd_inst
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ocsd_extern_dcd_inst_t {
    /// Raw trace data input function (mandatory).
    pub fn_data_in: fnTraceDataIn,
    /// Packet callback usage update function (mandatory).
    pub fn_update_pkt_mon: fnUpdatePktMonFlags,
    /// Instance handle, passed back to the call-in functions.
    pub decoder_handle: *mut c_void,
    /// Type name of the decoder (used in logging).
    pub p_decoder_name: *mut c_char,
    /// CoreSight trace ID of the instance.
    pub cs_id: u8,
}

impl Default for ocsd_extern_dcd_inst_t {
    fn default() -> Self {
        ocsd_extern_dcd_inst_t {
            fn_data_in: None,
            fn_update_pkt_mon: None,
            decoder_handle: std::ptr::null_mut(),
            p_decoder_name: std::ptr::null_mut(),
            cs_id: 0,
        }
    }
}

// ---------------------------------------------------------------------------
// Library callbacks

/// Generic element output.
pub type fnGenElemOpCB = Option<
    unsafe extern "C" fn(
        lib_context: *const c_void,
        index_sop: ocsd_trc_index_t,
        trc_chan_id: u8,
        elem: *const ocsd_generic_trace_elem,
    ) -> ocsd_datapath_resp_t,
>;

/// Error logging.
pub type fnLogErrorCB = Option<
    unsafe extern "C" fn(
        lib_context: *const c_void,
        filter_level: ocsd_err_severity_t,
        code: ocsd_err_t,
        idx: ocsd_trc_index_t,
        chan_id: u8,
        pMsg: *const c_char,
    ),
>;

/// Message logging.
pub type fnLogMsgCB =
    Option<unsafe extern "C" fn(lib_context: *const c_void, filter_level: ocsd_err_severity_t, msg: *const c_char)>;

/// Arm instruction decode.
pub type fnDecodeArmInstCB =
    Option<unsafe extern "C" fn(lib_context: *const c_void, instr_info: *mut ocsd_instr_info) -> ocsd_err_t>;

/// Traced memory access.
pub type fnMemAccessCB = Option<
    unsafe extern "C" fn(
        lib_context: *const c_void,
        address: ocsd_vaddr_t,
        cs_trace_id: u8,
        mem_space: ocsd_mem_space_acc_t,
        num_bytes: *mut u32,
        p_buffer: *mut u8,
    ) -> ocsd_err_t,
>;

/// Packet monitor output.
pub type fnPktMonCB = Option<
    unsafe extern "C" fn(
        lib_context: *const c_void,
        op: ocsd_datapath_op_t,
        index_sop: ocsd_trc_index_t,
        pkt: *const c_void,
        size: u32,
        p_data: *const u8,
    ),
>;

/// Packet sink output (packet processing only mode).
pub type fnPktDataSinkCB = Option<
    unsafe extern "C" fn(
        lib_context: *const c_void,
        op: ocsd_datapath_op_t,
        index_sop: ocsd_trc_index_t,
        pkt: *const c_void,
    ) -> ocsd_datapath_resp_t,
>;

/// The library callbacks handed to `createDecoder`; the decoder keeps a copy.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ocsd_extern_dcd_cb_fns {
    pub fn_gen_elem_out: fnGenElemOpCB,
    pub fn_log_error: fnLogErrorCB,
    pub fn_log_msg: fnLogMsgCB,
    pub fn_arm_instruction_decode: fnDecodeArmInstCB,
    pub fn_memory_access: fnMemAccessCB,
    pub fn_packet_mon: fnPktMonCB,
    pub fn_packet_data_sink: fnPktDataSinkCB,
    /// Which packet callbacks are in use (`OCSD_CUST_DCD_PKT_CB_USE_*`).
    pub packetCBFlags: c_int,
    /// Library context: the first argument of every callback.
    pub lib_context: *const c_void,
}

// ---------------------------------------------------------------------------
// Decoder factory

/// Create a decoder instance.
pub type fnCreateCustomDecoder = Option<
    unsafe extern "C" fn(
        create_flags: c_int,
        decoder_cfg: *const c_void,
        p_lib_callbacks: *const ocsd_extern_dcd_cb_fns,
        p_decoder_inst: *mut ocsd_extern_dcd_inst_t,
    ) -> ocsd_err_t,
>;

/// Destroy a decoder instance.
pub type fnDestroyCustomDecoder = Option<unsafe extern "C" fn(decoder_handle: *const c_void) -> ocsd_err_t>;

/// Extract the CoreSight trace ID from a configuration structure.
pub type fnGetCSIDFromConfig =
    Option<unsafe extern "C" fn(decoder_cfg: *const c_void, p_csid: *mut c_uchar) -> ocsd_err_t>;

/// Convert a protocol packet to text.
pub type fnPacketToString =
    Option<unsafe extern "C" fn(trc_pkt: *const c_void, buffer: *mut c_char, buflen: c_int) -> ocsd_err_t>;

/// A custom decoder factory, registered by name.
///
/// cbindgen:c-tag=_ocsd_extern_dcd_fact
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ocsd_extern_dcd_fact_t {
    pub createDecoder: fnCreateCustomDecoder,
    pub destroyDecoder: fnDestroyCustomDecoder,
    pub csidFromConfig: fnGetCSIDFromConfig,
    pub pktToString: fnPacketToString,
    /// Protocol ID assigned during registration.
    pub protocol_id: ocsd_trace_protocol_t,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_opencsd() {
        assert_eq!(size_of::<ocsd_extern_dcd_inst_t>(), 40);
        assert_eq!(offset_of!(ocsd_extern_dcd_inst_t, decoder_handle), 16);
        assert_eq!(offset_of!(ocsd_extern_dcd_inst_t, p_decoder_name), 24);
        assert_eq!(offset_of!(ocsd_extern_dcd_inst_t, cs_id), 32);
        assert_eq!(size_of::<ocsd_extern_dcd_cb_fns>(), 72);
        assert_eq!(offset_of!(ocsd_extern_dcd_cb_fns, packetCBFlags), 56);
        assert_eq!(offset_of!(ocsd_extern_dcd_cb_fns, lib_context), 64);
        assert_eq!(size_of::<ocsd_extern_dcd_fact_t>(), 40);
        assert_eq!(offset_of!(ocsd_extern_dcd_fact_t, pktToString), 24);
        assert_eq!(offset_of!(ocsd_extern_dcd_fact_t, protocol_id), 32);
    }
}
