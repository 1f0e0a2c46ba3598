//! C ABI mirror of OpenCSD 1.8.0's `opencsd/stm/trc_pkt_types_stm.h`:
//! the STM (STPv2) packet and the STM hardware configuration.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use std::os::raw::c_int;

/// STM packet types (`ocsd_stm_pkt_type`).
pub type ocsd_stm_pkt_type = c_int;
// markers for unknown packets / state
pub const STM_PKT_NOTSYNC: ocsd_stm_pkt_type = 0;
pub const STM_PKT_INCOMPLETE_EOT: ocsd_stm_pkt_type = 1;
pub const STM_PKT_NO_ERR_TYPE: ocsd_stm_pkt_type = 2;
// markers for valid packets
pub const STM_PKT_ASYNC: ocsd_stm_pkt_type = 3;
pub const STM_PKT_VERSION: ocsd_stm_pkt_type = 4;
pub const STM_PKT_FREQ: ocsd_stm_pkt_type = 5;
pub const STM_PKT_NULL: ocsd_stm_pkt_type = 6;
pub const STM_PKT_TRIG: ocsd_stm_pkt_type = 7;
pub const STM_PKT_GERR: ocsd_stm_pkt_type = 8;
pub const STM_PKT_MERR: ocsd_stm_pkt_type = 9;
pub const STM_PKT_M8: ocsd_stm_pkt_type = 10;
pub const STM_PKT_C8: ocsd_stm_pkt_type = 11;
pub const STM_PKT_C16: ocsd_stm_pkt_type = 12;
pub const STM_PKT_FLAG: ocsd_stm_pkt_type = 13;
pub const STM_PKT_D4: ocsd_stm_pkt_type = 14;
pub const STM_PKT_D8: ocsd_stm_pkt_type = 15;
pub const STM_PKT_D16: ocsd_stm_pkt_type = 16;
pub const STM_PKT_D32: ocsd_stm_pkt_type = 17;
pub const STM_PKT_D64: ocsd_stm_pkt_type = 18;
// packet errors
pub const STM_PKT_BAD_SEQUENCE: ocsd_stm_pkt_type = 19;
pub const STM_PKT_RESERVED: ocsd_stm_pkt_type = 20;

/// Timestamp encoding (`ocsd_stm_ts_type`).
pub type ocsd_stm_ts_type = c_int;
pub const STM_TS_UNKNOWN: ocsd_stm_ts_type = 0;
pub const STM_TS_NATBINARY: ocsd_stm_ts_type = 1;
pub const STM_TS_GREY: ocsd_stm_ts_type = 2;

/// Hardware event trace feature (`hw_event_feat_t`).
pub type hw_event_feat_t = c_int;
pub const HwEvent_Unknown_Disabled: hw_event_feat_t = 0;
pub const HwEvent_Enabled: hw_event_feat_t = 1;
pub const HwEvent_UseRegisters: hw_event_feat_t = 2;

/// The data payload of an STM packet (an anonymous union in C).
///
/// cbindgen:ignore
#[repr(C)]
#[derive(Clone, Copy)]
pub union ocsd_stm_payload {
    pub D8: u8,
    pub D16: u16,
    pub D32: u32,
    pub D64: u64,
}

impl Default for ocsd_stm_payload {
    fn default() -> Self {
        ocsd_stm_payload { D64: 0 }
    }
}

impl std::fmt::Debug for ocsd_stm_payload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "0x{:016x}", self.d64())
    }
}

impl ocsd_stm_payload {
    // Reads of the union: every member is an unsigned integer that starts
    // at offset 0, so every bit pattern of the 8 bytes is a valid value of
    // each member.
    pub fn d8(&self) -> u8 {
        // SAFETY: all members are integer POD at offset 0; any bits are a valid u8.
        unsafe { self.D8 }
    }
    pub fn d16(&self) -> u16 {
        // SAFETY: all members are integer POD at offset 0; any bits are a valid u16.
        unsafe { self.D16 }
    }
    pub fn d32(&self) -> u32 {
        // SAFETY: all members are integer POD at offset 0; any bits are a valid u32.
        unsafe { self.D32 }
    }
    pub fn d64(&self) -> u64 {
        // SAFETY: all members are integer POD at offset 0; any bits are a valid u64.
        unsafe { self.D64 }
    }
}

/// An STM packet (`ocsd_stm_pkt`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ocsd_stm_pkt {
    /// Packet type (`type` in C).
    pub type_: ocsd_stm_pkt_type,
    /// Current master.
    pub master: u8,
    /// Current channel.
    pub channel: u16,
    /// Current timestamp value.
    pub timestamp: u64,
    /// Number of bits of the timestamp updated by this packet.
    pub pkt_ts_bits: u8,
    /// The packet carries a timestamp.
    pub pkt_has_ts: u8,
    /// Timestamp encoding.
    pub ts_type: ocsd_stm_ts_type,
    /// The packet is a marker packet.
    pub pkt_has_marker: u8,
    /// Payload (`D8` / `D16` / `D32` / `D64`).
    /// cbindgen-c: union { uint8_t D8; uint16_t D16; uint32_t D32; uint64_t D64; } payload;
    pub payload: ocsd_stm_payload,
    /// Original type of a bad or incomplete packet.
    pub err_type: ocsd_stm_pkt_type,
}

/// STM hardware configuration (`ocsd_stm_cfg`).
// (the field docs go into the C headers as they are: bit ranges in
// brackets, which rustdoc would take for links)
#[allow(rustdoc::broken_intra_doc_links)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_stm_cfg {
    /// STMTCSR: trace ID in bits [22:16], HWTEN in bit 3.
    pub reg_tcsr: u32,
    /// STMFEAT3R: number of channels.
    pub reg_feat3r: u32,
    /// STMDEVID: number of masters.
    pub reg_devid: u32,
    /// STMFEAT1R: hardware event trace support.
    pub reg_feat1r: u32,
    /// STMHEMASTR: hardware event master number.
    pub reg_hwev_mast: u32,
    /// How to decide whether hardware event trace is on.
    pub hw_event: hw_event_feat_t,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_opencsd() {
        assert_eq!(size_of::<ocsd_stm_pkt>(), 48);
        assert_eq!(offset_of!(ocsd_stm_pkt, type_), 0);
        assert_eq!(offset_of!(ocsd_stm_pkt, master), 4);
        assert_eq!(offset_of!(ocsd_stm_pkt, channel), 6);
        assert_eq!(offset_of!(ocsd_stm_pkt, timestamp), 8);
        assert_eq!(offset_of!(ocsd_stm_pkt, pkt_ts_bits), 16);
        assert_eq!(offset_of!(ocsd_stm_pkt, pkt_has_ts), 17);
        assert_eq!(offset_of!(ocsd_stm_pkt, ts_type), 20);
        assert_eq!(offset_of!(ocsd_stm_pkt, pkt_has_marker), 24);
        assert_eq!(offset_of!(ocsd_stm_pkt, payload), 32);
        assert_eq!(offset_of!(ocsd_stm_pkt, err_type), 40);
        assert_eq!(size_of::<ocsd_stm_payload>(), 8);
        assert_eq!(size_of::<ocsd_stm_cfg>(), 24);
        assert_eq!(offset_of!(ocsd_stm_cfg, reg_feat3r), 4);
        assert_eq!(offset_of!(ocsd_stm_cfg, reg_devid), 8);
        assert_eq!(offset_of!(ocsd_stm_cfg, reg_feat1r), 12);
        assert_eq!(offset_of!(ocsd_stm_cfg, reg_hwev_mast), 16);
        assert_eq!(offset_of!(ocsd_stm_cfg, hw_event), 20);
    }

    #[test]
    fn payload_union_partial_writes() {
        let mut p = ocsd_stm_payload { D64: 0x1122_3344_5566_7788 };
        p.D8 = 0xAB;
        assert_eq!(p.d8(), 0xAB);
        assert_eq!(p.d64(), 0x1122_3344_5566_77AB);
        p.D16 = 0x1234;
        assert_eq!(p.d32(), 0x5566_1234);
    }
}
