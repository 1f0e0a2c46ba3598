//! PTM (Program Flow Trace, PFT 1.0 / 1.1): packet types, packet processor,
//! packet text and packet decoder.
//!
//! - [`types`]: the C ABI packet structure, `ocsd_ptm_cfg` (the ETMv3
//!   configuration structure) and [`PtmConfig`] (register interpretation);
//! - [`pkt_proc`]: [`PtmPktProc`], bytes to packets;
//! - [`packet`]: packet field updates and OpenCSD's packet text;
//! - [`decoder`]: [`PtmDecoder`], packets to generic trace elements;
//! - [`ret_stack`]: the return address stack.

pub mod types;
pub mod packet;
pub mod pkt_proc;
pub mod ret_stack;
pub mod decoder;

pub use types::*;
pub use pkt_proc::PtmPktProc;
pub use decoder::PtmDecoder;
