//! STM configuration helper (OpenCSD's `STMConfig`, `trc_cmp_cfg_stm.h`).

use super::types::*;

/// The programmed and hardware-configured state of an STM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StmConfig {
    cfg: ocsd_stm_cfg,
    hw_trace_en: bool,
}

impl Default for StmConfig {
    /// OpenCSD's defaults: trace ID 0, 256 masters, 65536 channels,
    /// hardware event trace absent.
    fn default() -> Self {
        StmConfig {
            cfg: ocsd_stm_cfg {
                reg_tcsr: 0,
                reg_feat3r: 0x10000,
                reg_devid: 0xFF,
                reg_feat1r: 0,
                reg_hwev_mast: 0,
                hw_event: HwEvent_Unknown_Disabled,
            },
            hw_trace_en: false,
        }
    }
}

impl StmConfig {
    /// A configuration from the C structure.
    pub fn new(cfg: &ocsd_stm_cfg) -> Self {
        let mut c = StmConfig { cfg: *cfg, hw_trace_en: false };
        c.set_hw_trace_feat(cfg.hw_event);
        c
    }

    /// The C structure.
    pub fn regs(&self) -> &ocsd_stm_cfg {
        &self.cfg
    }

    /// CoreSight trace ID: STMTCSR bits `[22:16]`.
    pub fn trace_id(&self) -> u8 {
        ((self.cfg.reg_tcsr >> 16) & 0x7F) as u8
    }

    pub fn set_trace_id(&mut self, id: u8) {
        const MASK: u32 = 0x007F_0000;
        self.cfg.reg_tcsr = (self.cfg.reg_tcsr & !MASK) | ((u32::from(id) << 16) & MASK);
    }

    /// Set how hardware event trace is decided: enabled, disabled, or read
    /// from the registers (STMFEAT1R.HWTEN support and STMTCSR.HWTEN).
    pub fn set_hw_trace_feat(&mut self, feat: hw_event_feat_t) {
        self.cfg.hw_event = feat;
        self.hw_trace_en = if feat == HwEvent_UseRegisters {
            (self.cfg.reg_feat1r & 0xC0000) == 0x80000 && (self.cfg.reg_tcsr & 0x8) == 0x8
        } else {
            feat == HwEvent_Enabled
        };
    }

    pub fn max_master_idx(&self) -> u8 {
        (self.cfg.reg_devid & 0xFF) as u8
    }

    pub fn max_channel_idx(&self) -> u16 {
        self.cfg.reg_feat3r.wrapping_sub(1) as u16
    }

    pub fn hw_trace_master_idx(&self) -> u16 {
        (self.cfg.reg_hwev_mast & 0xFFFF) as u16
    }

    pub fn hw_trace_en(&self) -> bool {
        self.hw_trace_en
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_id_and_hw_events() {
        let regs = ocsd_stm_cfg { reg_tcsr: 0x00A0_0007, ..Default::default() };
        let c = StmConfig::new(&regs);
        assert_eq!(c.trace_id(), 0x20);
        assert!(!c.hw_trace_en());
        let regs = ocsd_stm_cfg {
            reg_tcsr: 0x0010_000F,
            reg_feat1r: 0x80000,
            hw_event: HwEvent_UseRegisters,
            ..Default::default()
        };
        let mut c = StmConfig::new(&regs);
        assert_eq!(c.trace_id(), 0x10);
        assert!(c.hw_trace_en());
        c.set_trace_id(0x7F);
        assert_eq!(c.regs().reg_tcsr, 0x007F_000F);
        let d = StmConfig::default();
        assert_eq!(d.max_master_idx(), 0xFF);
        assert_eq!(d.max_channel_idx(), 0xFFFF);
    }
}
