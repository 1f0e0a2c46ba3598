//! C ABI mirror of OpenCSD 1.8.0's `opencsd/itm/trc_pkt_types_itm.h`: the
//! ITM packet and the ITM hardware configuration.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use std::os::raw::c_int;

/// ITM packet types (`ocsd_itm_pkt_type`).
pub type ocsd_itm_pkt_type = c_int;
// markers for unknown packets / state
pub const ITM_PKT_NOTSYNC: ocsd_itm_pkt_type = 0;
pub const ITM_PKT_INCOMPLETE_EOT: ocsd_itm_pkt_type = 1;
pub const ITM_PKT_NO_ERR_TYPE: ocsd_itm_pkt_type = 2;
// valid packet types
pub const ITM_PKT_ASYNC: ocsd_itm_pkt_type = 3;
pub const ITM_PKT_OVERFLOW: ocsd_itm_pkt_type = 4;
pub const ITM_PKT_SWIT: ocsd_itm_pkt_type = 5;
pub const ITM_PKT_DWT: ocsd_itm_pkt_type = 6;
pub const ITM_PKT_TS_LOCAL: ocsd_itm_pkt_type = 7;
pub const ITM_PKT_TS_GLOBAL_1: ocsd_itm_pkt_type = 8;
pub const ITM_PKT_TS_GLOBAL_2: ocsd_itm_pkt_type = 9;
pub const ITM_PKT_EXTENSION: ocsd_itm_pkt_type = 10;
// packet errors
pub const ITM_PKT_BAD_SEQUENCE: ocsd_itm_pkt_type = 11;
pub const ITM_PKT_RESERVED: ocsd_itm_pkt_type = 12;

/// An ITM packet (`ocsd_itm_pkt`).
// (the field docs go into the C headers as they are: bit ranges in
// brackets, which rustdoc would take for links)
#[allow(rustdoc::broken_intra_doc_links)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_itm_pkt {
    /// Packet type (`type` in C).
    pub type_: ocsd_itm_pkt_type,
    /// SWIT: stimulus port [4:0]; DWT: discriminator [4:0]; local TS: TC
    /// bits [1:0]; GTS1: clock wrap [1] / frequency change [0]; extension:
    /// source SW(0)/HW(1) [7] and payload bit length N [4:0].
    pub src_id: u8,
    /// Payload value.
    pub value: u32,
    /// Size of the value in bytes (5: 38-bit GTS2 value, top bits in
    /// `val_ext`).
    pub val_sz: u8,
    /// Bits [39:32] of a GTS2 value.
    pub val_ext: u8,
    /// Original type of a bad or incomplete packet.
    pub err_type: ocsd_itm_pkt_type,
}

/// ITM hardware configuration (`ocsd_itm_cfg`).
// (the field docs go into the C headers as they are: bit ranges in
// brackets, which rustdoc would take for links)
#[allow(rustdoc::broken_intra_doc_links)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_itm_cfg {
    /// ITM control register (TCR): trace ID [22:16], TS prescaler [9:8],
    /// SWOENA [4].
    pub reg_tcr: u32,
}

/// DWT event counter flags (`ocsd_itm_dwt_ecntr`).
pub type ocsd_itm_dwt_ecntr = c_int;
pub const ITM_DWT_ECNTR_CPI: ocsd_itm_dwt_ecntr = 0x01;
pub const ITM_DWT_ECNTR_EXC: ocsd_itm_dwt_ecntr = 0x02;
pub const ITM_DWT_ECNTR_SLP: ocsd_itm_dwt_ecntr = 0x04;
pub const ITM_DWT_ECNTR_LSU: ocsd_itm_dwt_ecntr = 0x08;
pub const ITM_DWT_ECNTR_FLD: ocsd_itm_dwt_ecntr = 0x10;
pub const ITM_DWT_ECNTR_CYC: ocsd_itm_dwt_ecntr = 0x20;

impl ocsd_itm_pkt {
    /// OpenCSD's `ItmTrcPacket::initPacket`.
    pub fn init(&mut self) {
        *self = ocsd_itm_pkt { type_: ITM_PKT_RESERVED, err_type: ITM_PKT_NO_ERR_TYPE, ..Default::default() };
    }

    /// Set a 1 to 4 byte value (other sizes count as 4), masked to its size.
    pub fn set_value(&mut self, val: u32, size_bytes: u8) {
        self.val_sz = if (1..=4).contains(&size_bytes) { size_bytes } else { 4 };
        let mask = if self.val_sz == 4 { u32::MAX } else { (1u32 << (8 * u32::from(self.val_sz))) - 1 };
        self.value = val & mask;
    }

    /// Set a 5 byte (GTS2 38-bit) value.
    pub fn set_ext_value(&mut self, val: u64) {
        self.value = val as u32;
        self.val_ext = (val >> 32) as u8;
        self.val_sz = 5;
    }

    /// The value, with `val_ext` on top for 5 byte values.
    pub fn ext_value(&self) -> u64 {
        if self.val_sz < 5 {
            u64::from(self.value)
        } else {
            u64::from(self.value) | (u64::from(self.val_ext) << 32)
        }
    }

    pub fn update_err_type(&mut self, ty: ocsd_itm_pkt_type) {
        self.err_type = self.type_;
        self.type_ = ty;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_opencsd() {
        assert_eq!(size_of::<ocsd_itm_pkt>(), 20);
        assert_eq!(offset_of!(ocsd_itm_pkt, type_), 0);
        assert_eq!(offset_of!(ocsd_itm_pkt, src_id), 4);
        assert_eq!(offset_of!(ocsd_itm_pkt, value), 8);
        assert_eq!(offset_of!(ocsd_itm_pkt, val_sz), 12);
        assert_eq!(offset_of!(ocsd_itm_pkt, val_ext), 13);
        assert_eq!(offset_of!(ocsd_itm_pkt, err_type), 16);
        assert_eq!(size_of::<ocsd_itm_cfg>(), 4);
    }

    #[test]
    fn values() {
        let mut p = ocsd_itm_pkt::default();
        p.set_value(0x1234_5678, 2);
        assert_eq!((p.value, p.val_sz), (0x5678, 2));
        p.set_value(0x1234_5678, 0);
        assert_eq!((p.value, p.val_sz), (0x1234_5678, 4));
        p.set_ext_value(0x12_3456_789A);
        assert_eq!(p.ext_value(), 0x12_3456_789A);
    }
}
