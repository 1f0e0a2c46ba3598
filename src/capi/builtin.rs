//! Per-protocol tables of the C API: where a `void *` from the client is
//! turned into the protocol's Rust type.
//!
//! Two matches, one arm per built-in protocol (each protocol exposes its C
//! structs in `crate::<protocol>::types`):
//!
//! - [`builtin_cfg_from_ptr`]: decoder name -> copy of the C configuration
//!   struct (`ocsd_etmv4_cfg`, `ocsd_stm_cfg`, ...) boxed as `dyn Any`, for
//!   `crate::dcd_tree::registry::create_builtin`. Add one arm per name:
//!   `OCSD_BUILTIN_DCD_ETMV4I => cfg_copy::<crate::etmv4::types::ocsd_etmv4_cfg>(cfg)`.
//! - [`builtin_pkt_str`]: protocol ID -> packet text of the C packet struct
//!   (`TracePacket::write_str`), for `ocsd_pkt_str`. Add one arm per
//!   protocol: `OCSD_PROTOCOL_ETMV4I | OCSD_PROTOCOL_ETE => pkt_text::<crate::etmv4::types::ocsd_etmv4_i_pkt>(pkt, out)`.
//!
//! A built-in name or protocol without an arm (ETMv4 data trace, which has
//! no decoder) answers `OCSD_ERR_NO_PROTOCOL`.

use std::any::Any;
use std::os::raw::c_void;

use crate::abi::*;
use crate::common::TracePacket;
use crate::dcd_tree::registry::protocol_for_name;

/// A copy of the C configuration struct `T` at `cfg`, boxed for
/// `create_builtin`.
///
/// # Safety
/// `cfg` must be non-NULL and point to a valid `T`.
#[allow(dead_code)]
unsafe fn cfg_copy<T: Copy + 'static>(cfg: *const c_void) -> Result<Box<dyn Any>, ocsd_err_t> {
    // SAFETY: per the contract; read unaligned as the client's struct may
    // sit anywhere.
    Ok(Box::new(unsafe { std::ptr::read_unaligned(cfg as *const T) }))
}

/// The configuration of built-in decoder `name` from the client's pointer.
///
/// Errors: `OCSD_ERR_DCDREG_NAME_UNKNOWN` (not a built-in name),
/// `OCSD_ERR_INVALID_PARAM_VAL` (NULL `cfg`), `OCSD_ERR_NO_PROTOCOL` (the
/// protocol's config type is not in the library yet).
///
/// # Safety
/// A non-NULL `cfg` must point to the C configuration struct of `name`'s
/// protocol.
pub unsafe fn builtin_cfg_from_ptr(name: &str, cfg: *const c_void) -> Result<Box<dyn Any>, ocsd_err_t> {
    if protocol_for_name(name).is_none() {
        return Err(OCSD_ERR_DCDREG_NAME_UNKNOWN);
    }
    if cfg.is_null() {
        return Err(OCSD_ERR_INVALID_PARAM_VAL);
    }
    #[allow(clippy::match_single_binding)]
    match name {
        OCSD_BUILTIN_DCD_ETMV4I => {
            // SAFETY: non-NULL (checked above); the caller's contract says it points to this protocol's C struct.
            unsafe { cfg_copy::<crate::etmv4::types::ocsd_etmv4_cfg>(cfg) }
        }
        OCSD_BUILTIN_DCD_ETE => {
            // SAFETY: non-NULL (checked above); the caller's contract says it points to this protocol's C struct.
            unsafe { cfg_copy::<crate::ete::types::ocsd_ete_cfg>(cfg) }
        }
        OCSD_BUILTIN_DCD_ETMV3 => {
            // SAFETY: non-NULL (checked above); the caller's contract says it points to this protocol's C struct.
            unsafe { cfg_copy::<crate::etmv3::types::ocsd_etmv3_cfg>(cfg) }
        }
        OCSD_BUILTIN_DCD_PTM => {
            // SAFETY: non-NULL (checked above); the caller's contract says it points to this protocol's C struct.
            unsafe { cfg_copy::<crate::ptm::types::ocsd_ptm_cfg>(cfg) }
        }
        OCSD_BUILTIN_DCD_STM => {
            // SAFETY: non-NULL (checked above); the caller's contract says it points to this protocol's C struct.
            unsafe { cfg_copy::<crate::stm::types::ocsd_stm_cfg>(cfg) }
        }
        OCSD_BUILTIN_DCD_ITM => {
            // SAFETY: non-NULL (checked above); the caller's contract says it points to this protocol's C struct.
            unsafe { cfg_copy::<crate::itm::types::ocsd_itm_cfg>(cfg) }
        }
        _ => Err(OCSD_ERR_NO_PROTOCOL),
    }
}

/// Append the text of the packet `T` at `pkt`.
///
/// # Safety
/// `pkt` must be non-NULL and point to a valid `T`.
#[allow(dead_code)]
unsafe fn pkt_text<T: TracePacket>(pkt: *const c_void, out: &mut String) -> ocsd_err_t {
    // SAFETY: per the contract.
    unsafe { &*(pkt as *const T) }.write_str(out);
    OCSD_OK
}

/// Text of a built-in protocol's packet: `None` if `protocol` is not a
/// built-in protocol (custom protocols are the factory's business).
///
/// # Safety
/// `pkt` must be non-NULL and point to the C packet struct of `protocol`.
pub unsafe fn builtin_pkt_str(protocol: ocsd_trace_protocol_t, pkt: *const c_void, out: &mut String) -> Option<ocsd_err_t> {
    let _ = (pkt, &out);
    #[allow(clippy::match_single_binding)]
    match protocol {
        OCSD_PROTOCOL_ETMV4I | OCSD_PROTOCOL_ETE => {
            // SAFETY: non-NULL (checked above); the caller's contract says it points to this protocol's C struct.
            Some(unsafe { pkt_text::<crate::etmv4::types::ocsd_etmv4_i_pkt>(pkt, out) })
        }
        OCSD_PROTOCOL_ETMV3 => {
            // SAFETY: non-NULL (checked above); the caller's contract says it points to this protocol's C struct.
            Some(unsafe { pkt_text::<crate::etmv3::types::ocsd_etmv3_pkt>(pkt, out) })
        }
        OCSD_PROTOCOL_PTM => {
            // SAFETY: non-NULL (checked above); the caller's contract says it points to this protocol's C struct.
            Some(unsafe { pkt_text::<crate::ptm::types::ocsd_ptm_pkt>(pkt, out) })
        }
        OCSD_PROTOCOL_STM => {
            // SAFETY: non-NULL (checked above); the caller's contract says it points to this protocol's C struct.
            Some(unsafe { pkt_text::<crate::stm::types::ocsd_stm_pkt>(pkt, out) })
        }
        OCSD_PROTOCOL_ITM => {
            // SAFETY: non-NULL (checked above); the caller's contract says it points to this protocol's C struct.
            Some(unsafe { pkt_text::<crate::itm::types::ocsd_itm_pkt>(pkt, out) })
        }
        _ => None,
    }
}

/// Protocols whose packets OpenCSD's C API passes to packet callbacks and
/// printers (`ocsd_create_pkt_sink_cb` / `PktPrinterFact`); ETMv4 data
/// trace has none.
pub fn has_packet_callbacks(protocol: ocsd_trace_protocol_t) -> bool {
    matches!(
        protocol,
        OCSD_PROTOCOL_ETMV4I | OCSD_PROTOCOL_ETE | OCSD_PROTOCOL_ETMV3 | OCSD_PROTOCOL_PTM | OCSD_PROTOCOL_STM | OCSD_PROTOCOL_ITM
    )
}
