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

#[cfg(test)]
pub(crate) mod testutil;
#[cfg(test)]
mod tests;
