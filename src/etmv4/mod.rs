//! ETMv4 and ETE instruction trace: packet types (C ABI), configuration,
//! packet processor and packet text.

pub mod types;
pub mod config;
pub mod pkt_str;
pub mod pkt_proc;

pub use config::EtmV4Config;
pub use pkt_proc::EtmV4IPktProc;
pub use types::*;

#[cfg(test)]
mod conformance_tests;
#[cfg(test)]
mod pkt_proc_tests;
