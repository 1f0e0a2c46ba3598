//! C ABI mirror of OpenCSD 1.8.0's `opencsd/ptm/trc_pkt_types_ptm.h`, plus
//! [`PtmConfig`], the register interpreter for `ocsd_ptm_cfg` (OpenCSD's
//! `PtmConfig` class).
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use std::os::raw::c_int;

use crate::abi::*;

pub type ocsd_ptm_pkt_type = c_int;
pub const PTM_PKT_NOTSYNC: ocsd_ptm_pkt_type = 0;
pub const PTM_PKT_INCOMPLETE_EOT: ocsd_ptm_pkt_type = 1;
pub const PTM_PKT_NOERROR: ocsd_ptm_pkt_type = 2;
pub const PTM_PKT_BRANCH_ADDRESS: ocsd_ptm_pkt_type = 3;
pub const PTM_PKT_A_SYNC: ocsd_ptm_pkt_type = 4;
pub const PTM_PKT_I_SYNC: ocsd_ptm_pkt_type = 5;
pub const PTM_PKT_TRIGGER: ocsd_ptm_pkt_type = 6;
pub const PTM_PKT_WPOINT_UPDATE: ocsd_ptm_pkt_type = 7;
pub const PTM_PKT_IGNORE: ocsd_ptm_pkt_type = 8;
pub const PTM_PKT_CONTEXT_ID: ocsd_ptm_pkt_type = 9;
pub const PTM_PKT_VMID: ocsd_ptm_pkt_type = 10;
pub const PTM_PKT_ATOM: ocsd_ptm_pkt_type = 11;
pub const PTM_PKT_TIMESTAMP: ocsd_ptm_pkt_type = 12;
pub const PTM_PKT_EXCEPTION_RET: ocsd_ptm_pkt_type = 13;
pub const PTM_PKT_BRANCH_OR_BYPASS_EOT: ocsd_ptm_pkt_type = 14;
pub const PTM_PKT_TPIU_PAD_EOB: ocsd_ptm_pkt_type = 15;
pub const PTM_PKT_BAD_SEQUENCE: ocsd_ptm_pkt_type = 16;
pub const PTM_PKT_RESERVED: ocsd_ptm_pkt_type = 17;

/// Context state carried between packets (`ptm_context_t`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ptm_context_t {
    /// cbindgen-c: struct { uint32_t curr_alt_isa:1; uint32_t curr_NS:1; uint32_t curr_Hyp:1; uint32_t updated:1; uint32_t updated_c:1; uint32_t updated_v:1; };
    pub flags: u32,
    pub ctxtID: u32,
    pub VMID: u8,
}
crate::bitfields!(ptm_context_t, flags: {
    curr_alt_isa / set_curr_alt_isa: 0, 1;
    curr_NS / set_curr_NS: 1, 1;
    curr_Hyp / set_curr_Hyp: 2, 1;
    updated / set_updated: 3, 1;
    updated_c / set_updated_c: 4, 1;
    updated_v / set_updated_v: 5, 1;
});

/// The named `bits` member of `ocsd_ptm_excep`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_ptm_excep_bits {
    /// cbindgen-c: uint32_t present:1;
    pub word: u32,
}
crate::bitfields!(ocsd_ptm_excep_bits, word: {
    present / set_present: 0, 1;
});

/// Exception information in a branch packet (`ocsd_ptm_excep`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_ptm_excep {
    pub type_: ocsd_armv7_exception,
    pub number: u16,
    pub bits: ocsd_ptm_excep_bits,
}

/// A PTM packet (`ocsd_ptm_pkt`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_ptm_pkt {
    pub type_: ocsd_ptm_pkt_type,
    pub curr_isa: ocsd_isa,
    pub prev_isa: ocsd_isa,
    pub addr: ocsd_pkt_vaddr,
    pub context: ptm_context_t,
    pub atom: ocsd_pkt_atom,
    pub i_sync_reason: ocsd_iSync_reason,
    pub cycle_count: u32,
    pub cc_valid: u8,
    pub timestamp: u64,
    pub ts_update_bits: u8,
    pub exception: ocsd_ptm_excep,
    pub err_type: ocsd_ptm_pkt_type,
}

/// PTM hardware configuration: in OpenCSD 1.8.0 the same structure as the
/// ETMv3 one (`ocsd_ptm_cfg` is a typedef of `ocsd_etmv3_cfg`).
pub type ocsd_ptm_cfg = crate::etmv3::types::ocsd_etmv3_cfg;

/// Interprets the PTM register values in an `ocsd_ptm_cfg` (OpenCSD's
/// `PtmConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtmConfig {
    pub regs: ocsd_ptm_cfg,
}

impl Default for PtmConfig {
    /// PTM 1.1, v7-A (OpenCSD's defaults).
    fn default() -> Self {
        PtmConfig {
            regs: ocsd_ptm_cfg {
                reg_idr: 0x4100_F310,
                reg_ctrl: 0,
                reg_ccer: 0,
                reg_trc_id: 0,
                arch_ver: ARCH_V7,
                core_prof: profile_CortexA,
            },
        }
    }
}

impl PtmConfig {
    pub const CTRL_BRANCH_BCAST: u32 = 1 << 8;
    pub const CTRL_CYCLEACC: u32 = 1 << 12;
    pub const CTRL_TS_ENA: u32 = 1 << 28;
    pub const CTRL_RETSTACK_ENA: u32 = 1 << 29;
    pub const CTRL_VMID_ENA: u32 = 1 << 30;
    pub const CCER_TS_IMPL: u32 = 1 << 22;
    pub const CCER_RESTACK_IMPL: u32 = 1 << 23;
    pub const CCER_DMSB_WPT: u32 = 1 << 24;
    pub const CCER_TS_DMSB: u32 = 1 << 25;
    pub const CCER_VIRTEXT: u32 = 1 << 26;
    pub const CCER_TS_ENC_NAT: u32 = 1 << 28;
    pub const CCER_TS_64BIT: u32 = 1 << 29;

    pub fn new(regs: &ocsd_ptm_cfg) -> Self {
        PtmConfig { regs: *regs }
    }
    pub fn ena_branch_bcast(&self) -> bool {
        self.regs.reg_ctrl & Self::CTRL_BRANCH_BCAST != 0
    }
    pub fn ena_cycle_acc(&self) -> bool {
        self.regs.reg_ctrl & Self::CTRL_CYCLEACC != 0
    }
    pub fn ena_ret_stack(&self) -> bool {
        self.regs.reg_ctrl & Self::CTRL_RETSTACK_ENA != 0
    }
    pub fn has_ret_stack(&self) -> bool {
        self.regs.reg_ccer & Self::CCER_RESTACK_IMPL != 0
    }
    /// X in PTM 1.X.
    pub fn minor_rev(&self) -> u32 {
        (self.regs.reg_idr & 0xF0) >> 4
    }
    pub fn has_ts(&self) -> bool {
        self.regs.reg_ccer & Self::CCER_TS_IMPL != 0
    }
    pub fn ena_ts(&self) -> bool {
        self.regs.reg_ctrl & Self::CTRL_TS_ENA != 0
    }
    pub fn ts_pkt_64(&self) -> bool {
        self.minor_rev() != 0 && self.regs.reg_ccer & Self::CCER_TS_64BIT != 0
    }
    /// Timestamps are natural binary (otherwise Gray coded).
    pub fn ts_bin_enc(&self) -> bool {
        self.minor_rev() != 0 && self.regs.reg_ccer & Self::CCER_TS_ENC_NAT != 0
    }
    /// Context ID bytes traced: 0, 1, 2 or 4.
    pub fn ctxt_id_bytes(&self) -> usize {
        [0, 1, 2, 4][((self.regs.reg_ctrl >> 14) & 0x3) as usize]
    }
    pub fn has_virt_ext(&self) -> bool {
        self.regs.reg_ccer & Self::CCER_VIRTEXT != 0
    }
    pub fn ena_vmid(&self) -> bool {
        self.regs.reg_ctrl & Self::CTRL_VMID_ENA != 0
    }
    pub fn dmsb_gen_ts(&self) -> bool {
        self.regs.reg_ccer & Self::CCER_TS_DMSB != 0
    }
    pub fn dmsb_way_pt(&self) -> bool {
        self.regs.reg_ccer & Self::CCER_DMSB_WPT != 0
    }
    pub fn trace_id(&self) -> u8 {
        (self.regs.reg_trc_id & 0x7F) as u8
    }
    pub fn core_profile(&self) -> ocsd_core_profile_t {
        self.regs.core_prof
    }
    pub fn arch_version(&self) -> ocsd_arch_version_t {
        self.regs.arch_ver
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_opencsd() {
        assert_eq!(size_of::<ptm_context_t>(), 12);
        assert_eq!(offset_of!(ptm_context_t, ctxtID), 4);
        assert_eq!(offset_of!(ptm_context_t, VMID), 8);
        assert_eq!(size_of::<ocsd_ptm_excep>(), 12);
        assert_eq!(offset_of!(ocsd_ptm_excep, number), 4);
        assert_eq!(offset_of!(ocsd_ptm_excep, bits), 8);
        assert_eq!(size_of::<ocsd_ptm_pkt>(), 104);
        assert_eq!(offset_of!(ocsd_ptm_pkt, curr_isa), 4);
        assert_eq!(offset_of!(ocsd_ptm_pkt, prev_isa), 8);
        assert_eq!(offset_of!(ocsd_ptm_pkt, addr), 16);
        assert_eq!(offset_of!(ocsd_ptm_pkt, context), 40);
        assert_eq!(offset_of!(ocsd_ptm_pkt, atom), 52);
        assert_eq!(offset_of!(ocsd_ptm_pkt, i_sync_reason), 60);
        assert_eq!(offset_of!(ocsd_ptm_pkt, cycle_count), 64);
        assert_eq!(offset_of!(ocsd_ptm_pkt, cc_valid), 68);
        assert_eq!(offset_of!(ocsd_ptm_pkt, timestamp), 72);
        assert_eq!(offset_of!(ocsd_ptm_pkt, ts_update_bits), 80);
        assert_eq!(offset_of!(ocsd_ptm_pkt, exception), 84);
        assert_eq!(offset_of!(ocsd_ptm_pkt, err_type), 96);
        assert_eq!(size_of::<ocsd_ptm_cfg>(), 24);
    }

    #[test]
    fn config_interpretation() {
        // TC2 PTM 1.1
        let c = PtmConfig::new(&ocsd_ptm_cfg {
            reg_idr: 0x411C_F312,
            reg_ctrl: 0x1000_1000,
            reg_ccer: 0x34C0_1AC2,
            reg_trc_id: 0x13,
            arch_ver: ARCH_V7,
            core_prof: profile_CortexA,
        });
        assert_eq!(c.minor_rev(), 1);
        assert!(c.ena_cycle_acc());
        assert!(c.ts_pkt_64());
        assert!(c.ts_bin_enc());
        assert!(c.has_ret_stack());
        assert!(!c.ena_ret_stack());
        assert!(c.dmsb_way_pt() == (0x34C0_1AC2 & (1 << 24) != 0));
        // Snowball PTM 1.0: Gray-coded 48-bit timestamps
        let s = PtmConfig::new(&ocsd_ptm_cfg { reg_idr: 0x411C_F301, reg_ccer: 0x8EA, ..c.regs });
        assert!(!s.ts_pkt_64());
        assert!(!s.ts_bin_enc());
    }
}
