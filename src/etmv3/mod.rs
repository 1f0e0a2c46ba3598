//! ETMv3 (ETM architecture v3.0 to v3.5): packet types, packet processor,
//! packet text and packet decoder.
//!
//! - [`types`]: the C ABI packet and configuration structures, and
//!   [`EtmV3Config`] (register interpretation);
//! - [`pkt_proc`]: [`EtmV3PktProc`], bytes to packets;
//! - [`packet`]: packet field updates and OpenCSD's packet text;
//! - [`decoder`]: [`EtmV3Decoder`], packets to generic trace elements.
#![forbid(unsafe_code)]

pub mod types;
pub mod config;
pub mod packet;
pub mod pkt_proc;
pub mod code_follower;
pub mod decoder;

pub use types::*;
pub use config::*;
pub use pkt_proc::EtmV3PktProc;
pub use decoder::EtmV3Decoder;

use std::fmt::Write;

/// OpenCSD's `trcPrintableElem::getValStr` (hex form): `0x` then `?` for
/// each hex digit not covered by `valid_bits`, the value, the valid range
/// when not all bits are valid, and the bits updated by this packet.
pub(crate) fn write_val_str(out: &mut String, total_bits: u32, valid_bits: u32, value: u64, update_bits: u32) {
    let num_hex = total_bits.div_ceil(4);
    let valid_chars = valid_bits.div_ceil(4);
    out.push_str("0x");
    for _ in 0..num_hex.saturating_sub(valid_chars) {
        out.push('?');
    }
    let w = valid_chars as usize;
    if valid_bits > 32 {
        let _ = write!(out, "{:0w$X}", value, w = w);
    } else {
        let _ = write!(out, "{:0w$X}", value as u32, w = w);
    }
    if valid_bits < total_bits {
        let _ = write!(out, " ({}:0)", valid_bits as i64 - 1);
    }
    if update_bits != 0 {
        let mask = if update_bits >= 64 { !0u64 } else { (1u64 << update_bits) - 1 };
        let _ = write!(out, " ~[0x{:X}]", value & mask);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn val_str_like_opencsd() {
        let mut s = String::new();
        write_val_str(&mut s, 32, 32, 0xC035_BEB6, 28);
        assert_eq!(s, "0xC035BEB6 ~[0x35BEB6]");
        s.clear();
        write_val_str(&mut s, 32, 13, 0x137E, 13);
        assert_eq!(s, "0x????137E (12:0) ~[0x137E]");
        s.clear();
        write_val_str(&mut s, 64, 64, 0x58_E90B_B867, 42);
        assert_eq!(s, "0x00000058E90BB867 ~[0x58E90BB867]");
    }
}

/// The ETMv3 decode stack for trace ID `cfg.reg_trc_id`: the packet
/// processor, plus the packet decoder when `full`.
pub fn create(cfg: &ocsd_etmv3_cfg, full: bool) -> Result<Box<dyn crate::dcd_tree::TraceIdDecoder>, crate::abi::ocsd_err_t> {
    let id = EtmV3Config::new(cfg).trace_id();
    let dec = if full { Some(EtmV3Decoder::new(cfg)) } else { None };
    Ok(Box::new(crate::dcd_tree::stack::Stack::new(
        crate::abi::OCSD_BUILTIN_DCD_ETMV3,
        crate::abi::OCSD_PROTOCOL_ETMV3,
        id,
        EtmV3PktProc::new(cfg),
        dec,
    )))
}

#[cfg(test)]
mod proto_tests;
