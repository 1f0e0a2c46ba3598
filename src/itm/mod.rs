//! ITM (Instrumentation Trace Macrocell): packet types, packet processor,
//! packet text and packet decoder, as OpenCSD 1.8.0's.
//!
//! - [`types`]: the C ABI mirror (`ocsd_itm_pkt`, `ocsd_itm_cfg`, enums);
//! - [`config`]: [`ItmConfig`], the configuration helper (trace ID and
//!   local timestamp prescaler from the control register);
//! - [`pkt_proc`]: [`ItmPktProc`], bytes to packets;
//! - [`printer`]: packet text (`TracePacket` for `ocsd_itm_pkt`);
//! - [`decoder`]: [`ItmDecoder`], packets to `OCSD_GEN_TRC_ELEM_ITMTRACE`.

pub mod types;
pub mod config;
pub mod pkt_proc;
pub mod printer;
pub mod decoder;

pub use config::ItmConfig;
pub use decoder::ItmDecoder;
pub use pkt_proc::ItmPktProc;
pub use types::*;

use crate::abi::*;
use crate::dcd_tree::stack::{Stack, TraceIdDecoder};

/// The ITM decode stack for trace ID TCR`[22:16]`: the packet processor,
/// plus the packet decoder when `full`.
pub fn create(cfg: &ocsd_itm_cfg, full: bool) -> Result<Box<dyn TraceIdDecoder>, ocsd_err_t> {
    let c = ItmConfig::new(cfg);
    let dec = full.then(|| ItmDecoder::with_config(c));
    Ok(Box::new(Stack::new(OCSD_BUILTIN_DCD_ITM, OCSD_PROTOCOL_ITM, c.trace_id(), ItmPktProc::with_config(c), dec)))
}

#[cfg(test)]
mod tests;
