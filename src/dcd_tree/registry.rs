//! Built-in decoders by registered name (`ETMV4I`, `STM`, ...).
//!
//! Each protocol module provides `create(cfg, create_flags)` returning its
//! decode stack; this table maps OpenCSD's decoder names and protocol IDs
//! to them. The configuration arrives as `&dyn Any` holding the protocol's
//! C config struct (`ocsd_etmv4_cfg`, ...).

use std::any::Any;

use super::TraceIdDecoder;
use crate::abi::*;

/// Names of the built-in decoders OpenCSD 1.8.0 registers ("ETMV4D", the
/// ETMv4 data trace decoder its headers name, is not one of them: creating
/// it fails with `OCSD_ERR_DCDREG_NAME_UNKNOWN`, and a custom decoder may
/// take the name).
pub const BUILTIN_NAMES: [(&str, ocsd_trace_protocol_t); 6] = [
    (OCSD_BUILTIN_DCD_ETMV3, OCSD_PROTOCOL_ETMV3),
    (OCSD_BUILTIN_DCD_ETMV4I, OCSD_PROTOCOL_ETMV4I),
    (OCSD_BUILTIN_DCD_PTM, OCSD_PROTOCOL_PTM),
    (OCSD_BUILTIN_DCD_STM, OCSD_PROTOCOL_STM),
    (OCSD_BUILTIN_DCD_ETE, OCSD_PROTOCOL_ETE),
    (OCSD_BUILTIN_DCD_ITM, OCSD_PROTOCOL_ITM),
];

pub fn protocol_for_name(name: &str) -> Option<ocsd_trace_protocol_t> {
    BUILTIN_NAMES.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

/// Create the decode stack of built-in decoder `name`.
///
/// `create_flags`: `OCSD_CREATE_FLG_PACKET_PROC` and/or
/// `OCSD_CREATE_FLG_FULL_DECODER`. Errors: `OCSD_ERR_DCDREG_NAME_UNKNOWN`
/// for an unknown name, `OCSD_ERR_INVALID_PARAM_TYPE` when `cfg` is not the
/// protocol's config type, `OCSD_ERR_INVALID_PARAM_VAL` for bad flags.
pub fn create_builtin(name: &str, cfg: &dyn Any, create_flags: u32) -> Result<Box<dyn TraceIdDecoder>, ocsd_err_t> {
    if protocol_for_name(name).is_none() {
        return Err(OCSD_ERR_DCDREG_NAME_UNKNOWN);
    }
    if create_flags & (OCSD_CREATE_FLG_PACKET_PROC | OCSD_CREATE_FLG_FULL_DECODER) == 0 {
        return Err(OCSD_ERR_INVALID_PARAM_VAL);
    }
    let full = create_flags & OCSD_CREATE_FLG_FULL_DECODER != 0;
    match name {
        // one arm per built-in protocol with a decoder (ETMv4 data trace has none)
        OCSD_BUILTIN_DCD_ETMV4I => Ok(crate::etmv4::create_etmv4i(downcast(cfg)?, full)),
        OCSD_BUILTIN_DCD_ETE => Ok(crate::etmv4::create_ete(downcast(cfg)?, full)),
        OCSD_BUILTIN_DCD_ETMV3 => crate::etmv3::create(downcast(cfg)?, full),
        OCSD_BUILTIN_DCD_PTM => crate::ptm::create(downcast(cfg)?, full),
        OCSD_BUILTIN_DCD_STM => crate::stm::create(downcast(cfg)?, full),
        OCSD_BUILTIN_DCD_ITM => crate::itm::create(downcast(cfg)?, full),
        _ => Err(OCSD_ERR_NO_PROTOCOL),
    }
}

/// The config of type `T` inside `cfg`, or `OCSD_ERR_INVALID_PARAM_TYPE`.
pub fn downcast<T: 'static>(cfg: &dyn Any) -> Result<&T, ocsd_err_t> {
    cfg.downcast_ref::<T>().ok_or(OCSD_ERR_INVALID_PARAM_TYPE)
}
