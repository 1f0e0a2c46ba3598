//! [`EtmV3Config`]: interpretation of the ETMv3 registers in an
//! `ocsd_etmv3_cfg` (OpenCSD's `EtmV3Config` class).

use super::types::ocsd_etmv3_cfg;
use crate::abi::*;


/// Trace mode described by ETMCR (OpenCSD's `EtmV3Config::EtmTraceMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EtmTraceMode {
    InstrOnly = 0,
    IDataVal = 1,
    IDataAddr = 2,
    IDataValAddr = 3,
    DataOnlyVal = 4,
    DataOnlyAddr = 5,
    DataOnlyValAddr = 6,
}

/// Interprets the ETMv3 register values in an `ocsd_etmv3_cfg`
/// (OpenCSD's `EtmV3Config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EtmV3Config {
    pub regs: ocsd_etmv3_cfg,
}

impl Default for EtmV3Config {
    /// ETMv3.4, v7-A, instruction trace only (OpenCSD's defaults).
    fn default() -> Self {
        EtmV3Config {
            regs: ocsd_etmv3_cfg {
                reg_idr: 0x4100_F240,
                reg_ctrl: 0,
                reg_ccer: 0,
                reg_trc_id: 0,
                arch_ver: ARCH_V7,
                core_prof: profile_CortexA,
            },
        }
    }
}

impl EtmV3Config {
    pub const CTRL_DATAVAL: u32 = 0x4;
    pub const CTRL_DATAADDR: u32 = 0x8;
    pub const CTRL_CYCLEACC: u32 = 0x1000;
    pub const CTRL_DATAONLY: u32 = 0x10_0000;
    pub const CTRL_TS_ENA: u32 = 1 << 28;
    pub const CTRL_VMID_ENA: u32 = 1 << 30;
    pub const CCER_HAS_TS: u32 = 1 << 22;
    pub const CCER_VIRTEXT: u32 = 1 << 26;
    pub const CCER_TS64BIT: u32 = 1 << 29;
    pub const IDR_ALTBRANCH: u32 = 0x10_0000;

    pub fn new(regs: &ocsd_etmv3_cfg) -> Self {
        EtmV3Config { regs: *regs }
    }

    /// Why OpenCSD's ETMv3 decoder refuses this configuration, in its
    /// words: any trace mode but instruction only (it decodes no data
    /// trace). Refused, its decoder answers every operation with
    /// `OCSD_ERR_NOT_INIT`.
    pub fn decode_refusal(&self) -> Option<&'static str> {
        (self.trace_mode() != EtmTraceMode::InstrOnly).then_some("ETMv3 trace decoder : data trace decode not yet supported")
    }

    pub fn trace_mode(&self) -> EtmTraceMode {
        let mode = self.is_data_val_trace() as u32
            + 2 * self.is_data_addr_trace() as u32
            + if self.is_instr_trace() { 0 } else { 3 };
        match mode {
            0 => EtmTraceMode::InstrOnly,
            1 => EtmTraceMode::IDataVal,
            2 => EtmTraceMode::IDataAddr,
            3 => EtmTraceMode::IDataValAddr,
            4 => EtmTraceMode::DataOnlyVal,
            5 => EtmTraceMode::DataOnlyAddr,
            _ => EtmTraceMode::DataOnlyValAddr,
        }
    }
    pub fn is_instr_trace(&self) -> bool {
        self.regs.reg_ctrl & Self::CTRL_DATAONLY == 0
    }
    pub fn is_data_val_trace(&self) -> bool {
        self.regs.reg_ctrl & Self::CTRL_DATAVAL != 0
    }
    pub fn is_data_addr_trace(&self) -> bool {
        self.regs.reg_ctrl & Self::CTRL_DATAADDR != 0
    }
    pub fn is_data_trace(&self) -> bool {
        self.regs.reg_ctrl & (Self::CTRL_DATAADDR | Self::CTRL_DATAVAL) != 0
    }
    pub fn is_cycle_acc(&self) -> bool {
        self.regs.reg_ctrl & Self::CTRL_CYCLEACC != 0
    }
    /// X in ETMv3.X.
    pub fn minor_rev(&self) -> u32 {
        (self.regs.reg_idr & 0xF0) >> 4
    }
    pub fn is_v7m_arch(&self) -> bool {
        self.regs.arch_ver == ARCH_V7 && self.regs.core_prof == profile_CortexM
    }
    pub fn is_alt_branch(&self) -> bool {
        self.regs.reg_idr & Self::IDR_ALTBRANCH != 0 && self.minor_rev() >= 4
    }
    /// Context ID bytes traced: 0, 1, 2 or 4.
    pub fn ctxt_id_bytes(&self) -> usize {
        [0, 1, 2, 4][((self.regs.reg_ctrl >> 14) & 0x3) as usize]
    }
    pub fn has_virt_ext(&self) -> bool {
        self.regs.reg_ccer & Self::CCER_VIRTEXT != 0
    }
    pub fn is_vmid_trace(&self) -> bool {
        self.regs.reg_ctrl & Self::CTRL_VMID_ENA != 0
    }
    pub fn has_ts(&self) -> bool {
        self.regs.reg_ccer & Self::CCER_HAS_TS != 0
    }
    pub fn is_ts_enabled(&self) -> bool {
        self.regs.reg_ctrl & Self::CTRL_TS_ENA != 0
    }
    pub fn ts_pkt_64(&self) -> bool {
        self.regs.reg_ccer & Self::CCER_TS64BIT != 0
    }
    pub fn trace_id(&self) -> u8 {
        (self.regs.reg_trc_id & 0x7F) as u8
    }
    pub fn arch_version(&self) -> ocsd_arch_version_t {
        self.regs.arch_ver
    }
    pub fn core_profile(&self) -> ocsd_core_profile_t {
        self.regs.core_prof
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_interpretation() {
        // TC2 ETM3.5
        let cfg = EtmV3Config::new(&ocsd_etmv3_cfg {
            reg_idr: 0x410C_F250,
            reg_ctrl: 0x1000_1860,
            reg_ccer: 0x3440_08F2,
            reg_trc_id: 0x10,
            arch_ver: ARCH_V7,
            core_prof: profile_CortexA,
        });
        assert!(cfg.is_cycle_acc());
        assert_eq!(cfg.minor_rev(), 5);
        assert!(cfg.ts_pkt_64());
        assert!(cfg.is_instr_trace());
        assert!(!cfg.is_data_trace());
        assert_eq!(cfg.ctxt_id_bytes(), 0);
        assert_eq!(cfg.trace_id(), 0x10);
        assert_eq!(cfg.trace_mode(), EtmTraceMode::InstrOnly);
        assert!(!cfg.is_alt_branch());
    }
}
