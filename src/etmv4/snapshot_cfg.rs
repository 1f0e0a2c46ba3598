//! ETMv4 / ETE configurations from snapshot device registers, as OpenCSD's
//! snapshot-to-decode-tree conversion builds them.

use std::any::Any;

use super::types::ocsd_etmv4_cfg;
use crate::abi::*;
use crate::common::ErrorLog;
use crate::ete::ocsd_ete_cfg;
use crate::snapshot::to_tree::reg_or;
use crate::snapshot::Device;

/// Read (name, required, default) registers, logging every missing one.
fn regs<const N: usize>(dev: &Device, list: [(&str, bool, u32); N], log: &mut dyn ErrorLog) -> Option<[u32; N]> {
    let mut vals = [0u32; N];
    let mut ok = true;
    for (i, (name, required, default)) in list.iter().enumerate() {
        match reg_or(dev, name, *required, *default, log) {
            Some(v) => vals[i] = v,
            None => ok = false,
        }
    }
    ok.then_some(vals)
}

/// `ETM4` devices: an `ETMV4I` decoder with an `ocsd_etmv4_cfg`.
pub fn etm4_config(dev: &Device, ap: ocsd_arch_profile_t, log: &mut dyn ErrorLog) -> Option<(String, Box<dyn Any>)> {
    let [configr, traceidr, idr0, idr1, idr2, idr8, idr9, idr10, idr11, idr12, idr13] = regs(
        dev,
        [
            ("TRCCONFIGR", true, 0),
            ("TRCTRACEIDR", true, 0),
            ("TRCIDR0", true, 0),
            ("TRCIDR1", false, 0x4100F403),
            ("TRCIDR2", true, 0),
            ("TRCIDR8", false, 0),
            ("TRCIDR9", false, 0),
            ("TRCIDR10", false, 0),
            ("TRCIDR11", false, 0),
            ("TRCIDR12", false, 0),
            ("TRCIDR13", false, 0),
        ],
        log,
    )?;
    let cfg = ocsd_etmv4_cfg {
        reg_idr0: idr0,
        reg_idr1: idr1,
        reg_idr2: idr2,
        reg_idr8: idr8,
        reg_idr9: idr9,
        reg_idr10: idr10,
        reg_idr11: idr11,
        reg_idr12: idr12,
        reg_idr13: idr13,
        reg_configr: configr,
        reg_traceidr: traceidr,
        arch_ver: ap.arch,
        core_prof: ap.profile,
    };
    Some((OCSD_BUILTIN_DCD_ETMV4I.to_string(), Box::new(cfg)))
}

/// `ETE` devices: an `ETE` decoder with an `ocsd_ete_cfg`.
pub fn ete_config(dev: &Device, ap: ocsd_arch_profile_t, log: &mut dyn ErrorLog) -> Option<(String, Box<dyn Any>)> {
    let [configr, traceidr, idr0, idr1, idr2, idr8, devarch] = regs(
        dev,
        [
            ("TRCCONFIGR", true, 0),
            ("TRCTRACEIDR", true, 0),
            ("TRCIDR0", true, 0),
            ("TRCIDR1", false, 0x4100FFF3),
            ("TRCIDR2", true, 0),
            ("TRCIDR8", false, 0),
            ("TRCDEVARCH", true, 0),
        ],
        log,
    )?;
    let cfg = ocsd_ete_cfg {
        reg_idr0: idr0,
        reg_idr1: idr1,
        reg_idr2: idr2,
        reg_idr8: idr8,
        reg_devarch: devarch,
        reg_configr: configr,
        reg_traceidr: traceidr,
        arch_ver: ap.arch,
        core_prof: ap.profile,
    };
    Some((OCSD_BUILTIN_DCD_ETE.to_string(), Box::new(cfg)))
}
