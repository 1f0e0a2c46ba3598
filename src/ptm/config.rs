//! [`PtmConfig`]: interpretation of the PTM registers in an `ocsd_ptm_cfg`
//! (OpenCSD's `PtmConfig` class).

use super::types::ocsd_ptm_cfg;
use crate::abi::*;

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
