//! ETE (Embedded Trace Extension): configuration types. ETE trace is
//! processed and decoded by the ETMv4 packet processor and decoder
//! ([`crate::etmv4`]), configured through [`crate::etmv4::EtmV4Config::from_ete`].
#![forbid(unsafe_code)]

pub mod types;

pub use types::*;
