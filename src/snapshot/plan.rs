//! What [`super::to_tree::create_tree`] builds, as text: the decode plan
//! the C benchmark client (`c-tests/bench/decode_snapshot.c`) reads to
//! build the same tree through the C API, so that the snapshot-to-tree
//! mapping exists once (`trc_pkt_lister -print_plan` writes it).
//!
//! One record a line, fields separated by single spaces; paths come last
//! on their line (they may hold spaces):
//!
//! ```text
//! buffer FORMAT PATH              FORMAT: coresight | dstream_coresight | source_data
//! decoder NAME SOURCE FIELD=VALUE ...
//!                                 NAME: the built-in decoder name; FIELD: a member of
//!                                 its config struct, VALUE a C integer (hex)
//! mem ADDRESS OFFSET LENGTH SPACE PATH
//!                                 hex; LENGTH 0: the file from OFFSET on;
//!                                 SPACE: the ocsd_mem_space_acc_t value
//! ```
#![forbid(unsafe_code)]

use std::any::Any;
use std::fmt::Write as _;

use crate::ete::types::ocsd_ete_cfg;
use crate::etmv3::types::ocsd_etmv3_cfg;
use crate::etmv4::types::ocsd_etmv4_cfg;
use crate::itm::types::ocsd_itm_cfg;
use crate::ptm::types::ocsd_ptm_cfg;
use crate::stm::types::ocsd_stm_cfg;

/// The plan of one decode tree.
#[derive(Debug, Default, Clone)]
pub struct TreePlan {
    pub format: String,
    pub buffer: String,
    /// One line per decoder created: `decoder NAME SOURCE FIELD=VALUE ...`.
    pub decoders: Vec<String>,
    /// One line per memory region mapped: `mem ...`.
    pub mems: Vec<String>,
    /// Set by the caller: map none of the snapshot's memory dumps (the
    /// caller gives the tree its memory, e.g. parallel decode's shared
    /// mapper), so that no dump file is read.
    pub skip_memory: bool,
}

impl TreePlan {
    /// Record a decoder created from `cfg` (a protocol config struct).
    pub fn add_decoder(&mut self, name: &str, source: &str, cfg: &dyn Any) {
        let mut s = format!("decoder {} {}", name, source);
        config_fields(cfg, &mut s);
        self.decoders.push(s);
    }

    /// Record a file region mapped (`length` 0: to the end of the file).
    pub fn add_mem(&mut self, address: u64, offset: usize, length: usize, space: u32, path: &str) {
        self.mems.push(format!("mem {:x} {:x} {:x} {:x} {}", address, offset, length, space, path));
    }

    pub fn text(&self) -> String {
        let mut s = format!("buffer {} {}\n", self.format, self.buffer);
        for l in self.decoders.iter().chain(&self.mems) {
            s.push_str(l);
            s.push('\n');
        }
        s
    }
}

/// `[(name, value)]` of the named members of a config struct, each as `u32`.
macro_rules! named_fields {
    ($c:expr; $($field:ident),+) => {
        &[$((stringify!($field), $c.$field as u32)),+]
    };
}

/// ` FIELD=VALUE` for each member of a config struct.
fn config_fields(cfg: &dyn Any, s: &mut String) {
    let fields: &[(&str, u32)] = if let Some(c) = cfg.downcast_ref::<ocsd_etmv4_cfg>() {
        named_fields!(c; reg_idr0, reg_idr1, reg_idr2, reg_idr8, reg_idr9, reg_idr10, reg_idr11, reg_idr12,
            reg_idr13, reg_configr, reg_traceidr, arch_ver, core_prof)
    } else if let Some(c) = cfg.downcast_ref::<ocsd_ete_cfg>() {
        named_fields!(c; reg_idr0, reg_idr1, reg_idr2, reg_idr8, reg_devarch, reg_configr, reg_traceidr,
            arch_ver, core_prof)
    } else if let Some(c) = cfg.downcast_ref::<ocsd_etmv3_cfg>() {
        named_fields!(c; reg_idr, reg_ctrl, reg_ccer, reg_trc_id, arch_ver, core_prof)
    } else if let Some(c) = cfg.downcast_ref::<ocsd_ptm_cfg>() {
        named_fields!(c; reg_idr, reg_ctrl, reg_ccer, reg_trc_id, arch_ver, core_prof)
    } else if let Some(c) = cfg.downcast_ref::<ocsd_stm_cfg>() {
        named_fields!(c; reg_tcsr, reg_feat3r, reg_devid, reg_feat1r, reg_hwev_mast, hw_event)
    } else if let Some(c) = cfg.downcast_ref::<ocsd_itm_cfg>() {
        named_fields!(c; reg_tcr)
    } else {
        &[]
    };
    for (name, v) in fields {
        let _ = write!(s, " {}=0x{:x}", name, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_text() {
        let mut p = TreePlan { format: "coresight".into(), buffer: "/x/trace.bin".into(), ..Default::default() };
        p.add_decoder("ITM", "ITM_0", &ocsd_itm_cfg { reg_tcr: 0x10000 });
        p.add_mem(0x8000, 0x10, 0, 0xf, "/x/mem a.bin");
        assert_eq!(p.text(), "buffer coresight /x/trace.bin\ndecoder ITM ITM_0 reg_tcr=0x10000\nmem 8000 10 0 f /x/mem a.bin\n");
    }
}
