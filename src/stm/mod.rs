//! STM (System Trace Macrocell, STPv2 protocol): packet types, packet
//! processor, packet text and packet decoder, as OpenCSD 1.8.0's.
//!
//! - [`types`]: the C ABI mirror (`ocsd_stm_pkt`, `ocsd_stm_cfg`, enums);
//! - [`config`]: [`StmConfig`], the configuration helper (trace ID from
//!   STMTCSR, hardware event trace);
//! - [`pkt_proc`]: [`StmPktProc`], bytes to packets;
//! - [`printer`]: packet text (`TracePacket` for `ocsd_stm_pkt`);
//! - [`decoder`]: [`StmDecoder`], packets to `OCSD_GEN_TRC_ELEM_SWTRACE`.

pub mod types;
pub mod config;
pub mod pkt_proc;
pub mod printer;
pub mod decoder;

pub use config::StmConfig;
pub use decoder::StmDecoder;
pub use pkt_proc::StmPktProc;
pub use types::*;

use crate::abi::*;
use crate::dcd_tree::stack::{Stack, TraceIdDecoder};

/// The STM decode stack for trace ID STMTCSR`[22:16]`: the packet processor,
/// plus the packet decoder when `full`.
pub fn create(cfg: &ocsd_stm_cfg, full: bool) -> Result<Box<dyn TraceIdDecoder>, ocsd_err_t> {
    let c = StmConfig::new(cfg);
    let dec = full.then(|| StmDecoder::with_config(c));
    Ok(Box::new(Stack::new(OCSD_BUILTIN_DCD_STM, OCSD_PROTOCOL_STM, c.trace_id(), StmPktProc::with_config(c), dec)))
}

#[cfg(test)]
pub(crate) mod testutil;
#[cfg(test)]
mod tests;
