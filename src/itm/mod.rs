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

#[cfg(test)]
mod tests;
