//! ITM configuration helper (OpenCSD's `ITMConfig`, `trc_cmp_cfg_itm.h`).

use super::types::ocsd_itm_cfg;

/// The programmed state of an ITM.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ItmConfig {
    cfg: ocsd_itm_cfg,
}

impl ItmConfig {
    pub fn new(cfg: &ocsd_itm_cfg) -> Self {
        ItmConfig { cfg: *cfg }
    }

    /// The C structure.
    pub fn regs(&self) -> &ocsd_itm_cfg {
        &self.cfg
    }

    /// CoreSight trace ID: TCR bits `[22:16]`.
    pub fn trace_id(&self) -> u8 {
        ((self.cfg.reg_tcr >> 16) & 0x7F) as u8
    }

    pub fn set_trace_id(&mut self, id: u8) {
        const MASK: u32 = 0x007F_0000;
        self.cfg.reg_tcr = (self.cfg.reg_tcr & !MASK) | ((u32::from(id) << 16) & MASK);
    }

    /// Local timestamp prescaler: 1, 4, 16 or 64 from TCR bits `[9:8]` when
    /// the TPIU clock is in use (SWOENA, bit 4), else 1.
    pub fn ts_prescale(&self) -> u32 {
        if self.cfg.reg_tcr & 0x10 != 0 {
            1 << (2 * ((self.cfg.reg_tcr >> 8) & 0x3))
        } else {
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers() {
        let c = ItmConfig::new(&ocsd_itm_cfg { reg_tcr: 0x0020_0006 });
        assert_eq!(c.trace_id(), 0x20);
        assert_eq!(c.ts_prescale(), 1);
        let mut c = ItmConfig::new(&ocsd_itm_cfg { reg_tcr: 0x0000_0310 });
        assert_eq!(c.ts_prescale(), 64);
        c.set_trace_id(0x13);
        assert_eq!(c.regs().reg_tcr, 0x0013_0310);
        assert_eq!(ItmConfig::new(&ocsd_itm_cfg { reg_tcr: 0x0000_0200 }).ts_prescale(), 1);
        assert_eq!(ItmConfig::new(&ocsd_itm_cfg { reg_tcr: 0x0000_0110 }).ts_prescale(), 4);
    }
}
