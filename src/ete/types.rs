//! C ABI mirror of OpenCSD 1.8.0's `opencsd/ete/trc_pkt_types_ete.h`: the
//! ETE hardware configuration, and the ETE / ETMv4 decoder constants.
//!
//! ETE packets are ETMv4 instruction trace packets: their types
//! (`ETE_PKT_I_*`) are in [`crate::etmv4::types`].
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use crate::abi::*;

/// Major version number of the ETE architecture (TRCDEVARCH.REVISION base).
pub const ETE_ARCH_VERSION: u32 = 0x5;

/// Decoder flag: split source address output ranges at N atoms.
pub const ETE_OPFLG_PKTDEC_SRCADDR_N_ATOMS: u32 = 0x0001_0000;
/// Decoder flag: check AArch64 opcodes for validity (bad opcode => error).
pub const ETM4_OPFLG_PKTDEC_AA64_OPCODE_CHK: u32 = 0x0002_0000;
/// All ETE / ETMv4 specific decoder flags.
pub const ETE_ETM4_OPFLG_MASK: u32 = ETE_OPFLG_PKTDEC_SRCADDR_N_ATOMS | ETM4_OPFLG_PKTDEC_AA64_OPCODE_CHK;

/// ETE hardware configuration (`ocsd_ete_cfg`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_ete_cfg {
    pub reg_idr0: u32,
    pub reg_idr1: u32,
    pub reg_idr2: u32,
    pub reg_idr8: u32,
    pub reg_devarch: u32,
    pub reg_configr: u32,
    pub reg_traceidr: u32,
    pub arch_ver: ocsd_arch_version_t,
    pub core_prof: ocsd_core_profile_t,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layout_and_constants_match_opencsd() {
        assert_eq!(size_of::<ocsd_ete_cfg>(), 36);
        assert_eq!(offset_of!(ocsd_ete_cfg, reg_devarch), 16);
        assert_eq!(offset_of!(ocsd_ete_cfg, reg_traceidr), 24);
        assert_eq!(offset_of!(ocsd_ete_cfg, core_prof), 32);
        assert_eq!(ETE_ARCH_VERSION, 5);
        assert_eq!(ETE_OPFLG_PKTDEC_SRCADDR_N_ATOMS, 65536);
        assert_eq!(ETM4_OPFLG_PKTDEC_AA64_OPCODE_CHK, 131072);
        assert_eq!(ETE_ETM4_OPFLG_MASK, 196608);
    }
}
