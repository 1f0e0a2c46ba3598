//! ETMv4 and ETE instruction trace: packet types (C ABI), configuration,
//! packet processor, packet text and packet decoder.
//!
//! ETE trace uses the same processor and decoder, configured from an
//! `ocsd_ete_cfg` converted to an ETMv4 configuration
//! ([`EtmV4Config::from_ete`]).

pub mod types;
pub mod config;
pub mod pkt_str;
pub mod pkt_proc;
pub mod decoder;
pub mod p0_stack;

pub use config::EtmV4Config;
pub use decoder::EtmV4IPktDecoder;
pub use pkt_proc::EtmV4IPktProc;
pub use types::*;

use crate::abi::*;
use crate::dcd_tree::{Stack, TraceIdDecoder};
use crate::ete::ocsd_ete_cfg;

/// The decode stack for one ETMv4 / ETE source: packet processor, and the
/// decoder when `full`. Components are numbered by the trace ID.
pub fn create(name: &'static str, protocol: ocsd_trace_protocol_t, cfg: EtmV4Config, full: bool) -> Box<dyn TraceIdDecoder> {
    let id = cfg.trace_id();
    let proc_ = EtmV4IPktProc::new(id as i32, cfg);
    let dec = full.then(|| EtmV4IPktDecoder::new(id as i32, cfg));
    Box::new(Stack::new(name, protocol, id, proc_, dec))
}

/// `ETMV4I` decoder from an `ocsd_etmv4_cfg`.
pub fn create_etmv4i(cfg: &ocsd_etmv4_cfg, full: bool) -> Box<dyn TraceIdDecoder> {
    create(OCSD_BUILTIN_DCD_ETMV4I, OCSD_PROTOCOL_ETMV4I, EtmV4Config::new(cfg), full)
}

/// `ETE` decoder from an `ocsd_ete_cfg`.
pub fn create_ete(cfg: &ocsd_ete_cfg, full: bool) -> Box<dyn TraceIdDecoder> {
    create(OCSD_BUILTIN_DCD_ETE, OCSD_PROTOCOL_ETE, EtmV4Config::from_ete(cfg), full)
}

#[cfg(test)]
mod conformance_tests;
#[cfg(test)]
mod pkt_proc_tests;
#[cfg(test)]
mod decoder_tests;
