//! Interpretation of the ETMv4 / ETE configuration registers (OpenCSD's
//! `EtmV4Config` and `ETEConfig`): which features the trace source has and
//! which are enabled, as the packet processor and decoder need them.

use super::types::*;
use crate::abi::*;
use crate::ete::types::ocsd_ete_cfg;

/// Conditional trace type (TRCIDR0.CONDTYPE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CondType {
    PassFail,
    HasAspr,
}

/// Q element support (TRCIDR0.QSUPP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QSuppType {
    None,
    ICountOnly,
    NoICountOnly,
    Full,
}

/// Load / store P0 element tracing (TRCCONFIGR.INSTP0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lsp0Type {
    None,
    L,
    S,
    Ls,
}

/// Conditional instruction tracing enabled (TRCCONFIGR.COND).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CondITrace {
    Disabled,
    Load,
    Store,
    LoadStore,
    All,
}

/// ETMv4 (or ETE, converted) configuration with its derived values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EtmV4Config {
    regs: ocsd_etmv4_cfg,
    maj_ver: u8,
    min_ver: u8,
    /// The ETE registers when built from an ETE configuration.
    ete: Option<ocsd_ete_cfg>,
}

impl Default for EtmV4Config {
    /// OpenCSD's default ETMv4 configuration.
    fn default() -> Self {
        EtmV4Config::new(&ocsd_etmv4_cfg {
            reg_idr0: 0x28000EA1,
            reg_idr1: 0x4100F403,
            reg_idr2: 0x00000488,
            reg_idr8: 0,
            reg_idr9: 0,
            reg_idr10: 0,
            reg_idr11: 0,
            reg_idr12: 0,
            reg_idr13: 0,
            reg_configr: 0xC1,
            reg_traceidr: 0,
            arch_ver: ARCH_V7,
            core_prof: profile_CortexA,
        })
    }
}

impl EtmV4Config {
    /// From ETMv4 registers: the version comes from TRCIDR1.
    pub fn new(regs: &ocsd_etmv4_cfg) -> Self {
        EtmV4Config {
            regs: *regs,
            maj_ver: ((regs.reg_idr1 >> 8) & 0xF) as u8,
            min_ver: ((regs.reg_idr1 >> 4) & 0xF) as u8,
            ete: None,
        }
    }

    /// From ETE registers, as OpenCSD's `ETEConfig`: the common registers
    /// carry over (TRCIDR9-13 read as 0) and the version comes from
    /// TRCDEVARCH (REVISION and ARCHVER fields).
    pub fn from_ete(ete: &ocsd_ete_cfg) -> Self {
        let regs = ocsd_etmv4_cfg {
            reg_idr0: ete.reg_idr0,
            reg_idr1: ete.reg_idr1,
            reg_idr2: ete.reg_idr2,
            reg_idr8: ete.reg_idr8,
            reg_idr9: 0,
            reg_idr10: 0,
            reg_idr11: 0,
            reg_idr12: 0,
            reg_idr13: 0,
            reg_configr: ete.reg_configr,
            reg_traceidr: ete.reg_traceidr,
            arch_ver: ete.arch_ver,
            core_prof: ete.core_prof,
        };
        EtmV4Config {
            regs,
            maj_ver: ((ete.reg_devarch & 0xF000) >> 12) as u8,
            min_ver: ((ete.reg_devarch & 0xF_0000) >> 16) as u8,
            ete: Some(*ete),
        }
    }

    /// OpenCSD's default ETE configuration.
    pub fn default_ete() -> Self {
        Self::from_ete(&ocsd_ete_cfg {
            reg_idr0: 0x28000EA1,
            reg_idr1: 0x4100FFF3,
            reg_idr2: 0x00000488,
            reg_idr8: 0,
            reg_devarch: 0x47705A13,
            reg_configr: 0xC1,
            reg_traceidr: 0,
            arch_ver: ARCH_AA64,
            core_prof: profile_CortexA,
        })
    }

    /// The ETMv4 register view.
    pub fn regs(&self) -> &ocsd_etmv4_cfg {
        &self.regs
    }
    /// The ETE registers, when built from an ETE configuration.
    pub fn ete_regs(&self) -> Option<&ocsd_ete_cfg> {
        self.ete.as_ref()
    }
    pub fn is_ete(&self) -> bool {
        self.ete.is_some()
    }

    pub fn core_profile(&self) -> ocsd_core_profile_t {
        self.regs.core_prof
    }
    pub fn arch_version(&self) -> ocsd_arch_version_t {
        self.regs.arch_ver
    }

    // --- TRCIDR0
    pub fn ls_as_instr_p0(&self) -> bool {
        self.regs.reg_idr0 & 0x6 == 0x6
    }
    pub fn has_data_trace(&self) -> bool {
        self.regs.reg_idr0 & 0x18 == 0x18
    }
    pub fn has_branch_broadcast(&self) -> bool {
        self.regs.reg_idr0 & 0x20 != 0
    }
    pub fn has_cond_trace(&self) -> bool {
        self.regs.reg_idr0 & 0x40 != 0
    }
    pub fn has_cycle_count_i(&self) -> bool {
        self.regs.reg_idr0 & 0x80 != 0
    }
    pub fn has_ret_stack(&self) -> bool {
        self.regs.reg_idr0 & 0x200 != 0
    }
    pub fn num_events(&self) -> u8 {
        (((self.regs.reg_idr0 >> 10) & 0x3) + 1) as u8
    }
    pub fn cond_type(&self) -> CondType {
        if self.regs.reg_idr0 & 0x3000 == 0x1000 {
            CondType::HasAspr
        } else {
            CondType::PassFail
        }
    }
    pub fn q_supp_type(&self) -> QSuppType {
        match (self.regs.reg_idr0 >> 15) & 0x3 {
            0 => QSuppType::None,
            1 => QSuppType::ICountOnly,
            2 => QSuppType::NoICountOnly,
            _ => QSuppType::Full,
        }
    }
    pub fn has_q_elem(&self) -> bool {
        self.q_supp_type() != QSuppType::None
    }
    pub fn has_q_filter(&self) -> bool {
        self.regs.reg_idr0 & 0x4000 != 0 && self.has_q_elem()
    }
    pub fn has_trc_excp_data(&self) -> bool {
        self.regs.reg_idr0 & 0x20000 != 0
    }
    /// Timestamp size in bits (TRCIDR0.TSSIZE): 48, 64 or 0.
    pub fn time_stamp_size(&self) -> u32 {
        match (self.regs.reg_idr0 >> 24) & 0x1F {
            0x6 => 48,
            0x8 => 64,
            _ => 0,
        }
    }
    /// TRCIDR0.COMMOPT == 1 (and cycle counting implemented): cycle count
    /// packets carry no commit field.
    pub fn commit_opt1(&self) -> bool {
        self.regs.reg_idr0 & 0x2000_0000 != 0 && self.has_cycle_count_i()
    }
    pub fn comm_trans_p0(&self) -> bool {
        self.regs.reg_idr0 & 0x4000_0000 == 0
    }

    // --- version (TRCIDR1, or TRCDEVARCH for ETE)
    pub fn maj_version(&self) -> u8 {
        self.maj_ver
    }
    pub fn min_version(&self) -> u8 {
        self.min_ver
    }
    /// 0xMm: major in the high nibble, minor in the low one.
    pub fn full_version(&self) -> u8 {
        ((self.maj_ver & 0xF) << 4) | (self.min_ver & 0xF)
    }

    // --- TRCIDR2
    pub fn ia_size_max(&self) -> u32 {
        if self.regs.reg_idr2 & 0x1F == 0x8 {
            64
        } else {
            32
        }
    }
    pub fn cid_size(&self) -> u32 {
        if (self.regs.reg_idr2 >> 5) & 0x1F == 0x4 {
            32
        } else {
            0
        }
    }
    pub fn vmid_size(&self) -> u32 {
        match (self.regs.reg_idr2 >> 10) & 0x1F {
            1 => 8,
            // 16 and 32 bit VMIDs from ETMv4.1 (and in ETE)
            2 if self.full_version() > 0x40 => 16,
            4 if self.full_version() > 0x40 => 32,
            _ => 0,
        }
    }
    pub fn da_size(&self) -> u32 {
        match (self.regs.reg_idr2 >> 15) & 0x1F {
            0 => 0,
            0x8 => 64,
            _ => 32,
        }
    }
    pub fn dv_size(&self) -> u32 {
        match (self.regs.reg_idr2 >> 20) & 0x1F {
            0 => 0,
            0x8 => 64,
            _ => 32,
        }
    }
    /// Cycle counter size in bits.
    pub fn cc_size(&self) -> u32 {
        ((self.regs.reg_idr2 >> 25) & 0xF) + 12
    }
    pub fn vmid_opt(&self) -> bool {
        self.regs.reg_idr2 & 0x2000_0000 != 0 && self.min_version() > 0
    }
    pub fn wfi_wfe_branch(&self) -> bool {
        self.regs.reg_idr2 & 0x8000_0000 != 0 && self.full_version() >= 0x43
    }

    // --- TRCIDR8-13
    pub fn max_spec_depth(&self) -> u32 {
        self.regs.reg_idr8
    }
    pub fn p0_key_max(&self) -> u32 {
        if self.regs.reg_idr9 == 0 {
            1
        } else {
            self.regs.reg_idr9
        }
    }
    pub fn p1_key_max(&self) -> u32 {
        self.regs.reg_idr10
    }
    pub fn p1_spcl_key_max(&self) -> u32 {
        self.regs.reg_idr11
    }
    pub fn cond_key_max(&self) -> u32 {
        self.regs.reg_idr12
    }
    pub fn cond_spec_key_max(&self) -> u32 {
        self.regs.reg_idr13
    }
    pub fn cond_key_max_incr(&self) -> u32 {
        self.regs.reg_idr12.wrapping_sub(self.regs.reg_idr13)
    }

    /// CoreSight trace ID of the source (TRCTRACEIDR).
    pub fn trace_id(&self) -> u8 {
        (self.regs.reg_traceidr & 0x7F) as u8
    }

    // --- TRCCONFIGR
    pub fn enabled_lsp0_trace(&self) -> bool {
        self.regs.reg_configr & 0x6 != 0
    }
    pub fn lsp0_type(&self) -> Lsp0Type {
        match (self.regs.reg_configr & 0x6) >> 1 {
            0 => Lsp0Type::None,
            1 => Lsp0Type::L,
            2 => Lsp0Type::S,
            _ => Lsp0Type::Ls,
        }
    }
    pub fn enabled_dv_trace(&self) -> bool {
        self.has_data_trace() && self.enabled_lsp0_trace() && self.regs.reg_configr & (1 << 17) != 0
    }
    pub fn enabled_da_trace(&self) -> bool {
        self.has_data_trace() && self.enabled_lsp0_trace() && self.regs.reg_configr & (1 << 16) != 0
    }
    pub fn enabled_data_trace(&self) -> bool {
        self.enabled_da_trace() || self.enabled_dv_trace()
    }
    pub fn enabled_br_broad(&self) -> bool {
        self.regs.reg_configr & (1 << 3) != 0
    }
    pub fn enabled_cci(&self) -> bool {
        self.regs.reg_configr & (1 << 4) != 0
    }
    pub fn enabled_cid(&self) -> bool {
        self.regs.reg_configr & (1 << 6) != 0
    }
    pub fn enabled_vmid(&self) -> bool {
        self.regs.reg_configr & (1 << 7) != 0
    }
    pub fn enabled_cond_i_trace(&self) -> CondITrace {
        match (self.regs.reg_configr >> 8) & 0x7 {
            1 => CondITrace::Load,
            2 => CondITrace::Store,
            3 => CondITrace::LoadStore,
            7 => CondITrace::All,
            _ => CondITrace::Disabled,
        }
    }
    /// Why OpenCSD's ETMv4 / ETE decoder refuses this configuration, in
    /// its words: data trace, LSP0 elements or conditional non-branch
    /// trace enabled, none of which it decodes. Refused, its decoder
    /// answers every operation with `OCSD_ERR_NOT_INIT`.
    pub fn decode_refusal(&self) -> Option<&'static str> {
        if self.enabled_data_trace() {
            Some("ETMv4 instruction decode : Data trace elements not supported")
        } else if self.enabled_lsp0_trace() {
            Some("ETMv4 instruction decode : LSP0 elements not supported.")
        } else if self.enabled_cond_i_trace() != CondITrace::Disabled {
            Some("ETMv4 instruction decode : Trace on conditional non-branch elements not supported.")
        } else {
            None
        }
    }
    pub fn enabled_ts(&self) -> bool {
        self.regs.reg_configr & (1 << 11) != 0
    }
    pub fn enabled_ret_stack(&self) -> bool {
        self.regs.reg_configr & (1 << 12) != 0
    }
    pub fn enabled_qe(&self) -> bool {
        self.regs.reg_configr & (0x3 << 13) != 0
    }
}

impl From<&ocsd_etmv4_cfg> for EtmV4Config {
    fn from(c: &ocsd_etmv4_cfg) -> Self {
        EtmV4Config::new(c)
    }
}

impl From<&ocsd_ete_cfg> for EtmV4Config {
    fn from(c: &ocsd_ete_cfg) -> Self {
        EtmV4Config::from_ete(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn juno_etmv4_config() {
        let c = EtmV4Config::new(&ocsd_etmv4_cfg {
            reg_idr0: 0x28000EA1,
            reg_idr1: 0x4100F403,
            reg_idr2: 0x00000488,
            reg_configr: 0xC1,
            reg_traceidr: 0x10,
            arch_ver: ARCH_V8,
            core_prof: profile_CortexA,
            ..Default::default()
        });
        assert_eq!(c.full_version(), 0x40);
        assert_eq!(c.trace_id(), 0x10);
        assert_eq!(c.cid_size(), 32);
        assert_eq!(c.vmid_size(), 8);
        assert_eq!(c.ia_size_max(), 64);
        assert_eq!(c.cc_size(), 12);
        assert_eq!(c.time_stamp_size(), 64);
        assert!(c.has_ret_stack());
        assert!(c.has_cycle_count_i());
        assert!(!c.has_cond_trace());
        assert!(c.commit_opt1());
        assert!(c.enabled_cid() && c.enabled_vmid());
        assert!(!c.has_q_elem());
        assert!(!c.is_ete());
    }

    #[test]
    fn ete_config_version_from_devarch() {
        let c = EtmV4Config::from_ete(&ocsd_ete_cfg {
            reg_idr0: 0x28c1cea1,
            reg_idr1: 0x4100fff0,
            reg_idr2: 0xc0001088,
            reg_idr8: 0,
            reg_devarch: 0x47735a13,
            reg_configr: 0x8001,
            reg_traceidr: 0x2,
            arch_ver: ARCH_AA64,
            core_prof: profile_CortexA,
        });
        assert_eq!(c.maj_version(), 5);
        assert_eq!(c.min_version(), 3);
        assert_eq!(c.full_version(), 0x53);
        assert!(c.is_ete());
        assert!(c.commit_opt1());
        assert_eq!(c.vmid_size(), 32);
        assert_eq!(c.regs().reg_idr9, 0);
        assert_eq!(EtmV4Config::default_ete().full_version(), 0x50);
    }
}
