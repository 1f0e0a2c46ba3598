//! C ABI mirror of OpenCSD 1.8.0's `opencsd/c_api/ocsd_c_api_types.h`: the
//! decode tree handle, the client callback function types and the logger
//! output flags.
//!
//! Callback types are `Option<unsafe extern "C" fn(...)>`: the same size and
//! calling convention as the C function pointer, with NULL as `None`.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use std::os::raw::{c_char, c_int, c_void};

use crate::abi::gen_elem::ocsd_generic_trace_elem;
use crate::abi::*;

/// Handle to a decode tree (opaque to the client).
pub type dcd_tree_handle_t = *mut c_void;

/// The handle value of no decode tree (`ocsd_create_dcd_tree` failed).
pub const C_API_INVALID_TREE_HANDLE: dcd_tree_handle_t = std::ptr::null_mut();

/// Logger output printer - no output.
pub const C_API_MSGLOGOUT_FLG_NONE: c_int = 0x0;
/// Logger output printer - output to file.
pub const C_API_MSGLOGOUT_FLG_FILE: c_int = 0x1;
/// Logger output printer - output to stderr.
pub const C_API_MSGLOGOUT_FLG_STDERR: c_int = 0x2;
/// Logger output printer - output to stdout.
pub const C_API_MSGLOGOUT_FLG_STDOUT: c_int = 0x4;
/// Logger output printer - mask of valid flags.
pub const C_API_MSGLOGOUT_MASK: c_int = 0x7;

/// Generic trace element output callback (all protocols).
pub type FnTraceElemIn = Option<
    unsafe extern "C" fn(
        p_context: *const c_void,
        index_sop: ocsd_trc_index_t,
        trc_chan_id: u8,
        elem: *const ocsd_generic_trace_elem,
    ) -> ocsd_datapath_resp_t,
>;

/// Packet processor packet output sink callback (generic declaration: the
/// packet is the protocol's C packet struct).
pub type FnDefPktDataIn = Option<
    unsafe extern "C" fn(
        p_context: *const c_void,
        op: ocsd_datapath_op_t,
        index_sop: ocsd_trc_index_t,
        p_packet_in: *const c_void,
    ) -> ocsd_datapath_resp_t,
>;

/// Packet processor packet monitor callback: the packet and its raw bytes.
pub type FnDefPktDataMon = Option<
    unsafe extern "C" fn(
        p_context: *const c_void,
        op: ocsd_datapath_op_t,
        index_sop: ocsd_trc_index_t,
        p_packet_in: *const c_void,
        size: u32,
        p_data: *const u8,
    ),
>;

/// Library default logger output: lets the client print each
/// zero-terminated output string.
pub type FnDefLoggerPrintStrCB =
    Option<unsafe extern "C" fn(p_context: *const c_void, psz_msg_str: *const c_char, str_len: c_int)>;

// `Fn_MemAcc_CB` and `Fn_MemAccID_CB` are declared in `ocsd_if_types.h`
// (crate::abi).
pub use crate::abi::{Fn_MemAccID_CB, Fn_MemAcc_CB};

/// Where `ocsd_dt_attach_packet_callback` attaches its callback.
pub type ocsd_c_api_cb_types = c_int;
/// The packet processor's main packet output (callback is `FnDefPktDataIn`);
/// only when no packet decoder is attached.
pub const OCSD_C_API_CB_PKT_SINK: ocsd_c_api_cb_types = 0;
/// The packet processor's packet monitor output (callback is `FnDefPktDataMon`).
pub const OCSD_C_API_CB_PKT_MON: ocsd_c_api_cb_types = 1;

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    #[test]
    fn callback_types_are_pointer_sized() {
        assert_eq!(size_of::<FnTraceElemIn>(), size_of::<*const c_void>());
        assert_eq!(size_of::<FnDefPktDataMon>(), size_of::<*const c_void>());
        assert_eq!(size_of::<Fn_MemAccID_CB>(), size_of::<*const c_void>());
        assert_eq!(size_of::<ocsd_c_api_cb_types>(), 4);
    }
}
