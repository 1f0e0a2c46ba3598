//! PTM (Program Flow Trace, PFT 1.0 / 1.1): packet types, packet processor,
//! packet text and packet decoder.
//!
//! - [`types`]: the C ABI packet structure, `ocsd_ptm_cfg` (the ETMv3
//!   configuration structure) and [`PtmConfig`] (register interpretation);
//! - [`pkt_proc`]: [`PtmPktProc`], bytes to packets;
//! - [`packet`]: packet field updates and OpenCSD's packet text;
//! - [`decoder`]: [`PtmDecoder`], packets to generic trace elements;
//! - [`ret_stack`]: the return address stack;
//! - `walks`: the decoder's cache of instruction walks.
#![forbid(unsafe_code)]

pub mod types;
pub mod config;
pub mod packet;
pub mod pkt_proc;
pub mod ret_stack;
pub mod decoder;
mod walks;

pub use types::*;
pub use config::*;
pub use pkt_proc::PtmPktProc;
pub use decoder::PtmDecoder;

/// The PTM decode stack for trace ID `cfg.reg_trc_id`: the packet
/// processor, plus the packet decoder when `full`.
pub fn create(cfg: &ocsd_ptm_cfg, full: bool) -> Result<Box<dyn crate::dcd_tree::TraceIdDecoder>, crate::abi::ocsd_err_t> {
    let id = PtmConfig::new(cfg).trace_id();
    let dec = if full { Some(PtmDecoder::new(cfg)) } else { None };
    Ok(Box::new(crate::dcd_tree::stack::Stack::new(
        crate::abi::OCSD_BUILTIN_DCD_PTM,
        crate::abi::OCSD_PROTOCOL_PTM,
        id,
        PtmPktProc::new(cfg),
        dec,
    )))
}

