//! CoreSight metadata of the AUXTRACE_INFO record (`PERF_AUXTRACE_CS_ETM`):
//! a global header, then per CPU the trace unit's saved registers.
//!
//! Layout (perf's `cs-etm.h`): header words `version`, `pmu_type << 32 |
//! nr_cpu`, `snapshot`; then per CPU `magic`, `cpu`, in version 1
//! `nr_trc_params`, then the registers. Version 0 blocks have no parameter
//! count and a fixed register list.

use crate::abi::*;
use crate::ete::ocsd_ete_cfg;
use crate::etmv3::ocsd_etmv3_cfg;
use crate::etmv4::ocsd_etmv4_cfg;

use super::PerfError;

/// AUXTRACE_INFO type of CoreSight ETM / ETE trace.
pub const PERF_AUXTRACE_CS_ETM: u32 = 3;

pub const MAGIC_ETMV3: u64 = 0x3030_3030_3030_3030;
pub const MAGIC_ETMV4: u64 = 0x4040_4040_4040_4040;
pub const MAGIC_ETE: u64 = 0x5050_5050_5050_5050;

/// `TRCCONFIGR` bits perf looks at.
pub const TRCCONFIGR_CID: u32 = 1 << 6;
pub const TRCCONFIGR_VMID: u32 = 1 << 7;
pub const TRCCONFIGR_TS: u32 = 1 << 11;
pub const TRCCONFIGR_VMIDOPT: u32 = 1 << 15;

/// The trace unit of one CPU.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceUnit {
    Etmv3 { etmcr: u32, traceidr: u32, ccer: u32, idr: u32, ptm: bool },
    Etmv4 { configr: u32, traceidr: u32, idr0: u32, idr1: u32, idr2: u32, idr8: u32, authstatus: u32 },
    Ete { configr: u32, traceidr: u32, idr0: u32, idr1: u32, idr2: u32, idr8: u32, authstatus: u32, devarch: u32 },
}

#[derive(Debug, Clone, PartialEq)]
pub struct CpuMeta {
    pub cpu: u32,
    pub unit: TraceUnit,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CsMeta {
    pub version: u64,
    pub pmu_type: u32,
    pub snapshot: bool,
    pub cpus: Vec<CpuMeta>,
}

impl TraceUnit {
    /// The trace ID (CoreSight source ID) the unit's trace carries.
    pub fn trace_id(&self) -> u8 {
        let r = match self {
            TraceUnit::Etmv3 { traceidr, .. } => *traceidr,
            TraceUnit::Etmv4 { traceidr, .. } | TraceUnit::Ete { traceidr, .. } => *traceidr,
        };
        (r & 0x7f) as u8
    }

    /// OpenCSD's decoder name for the unit.
    pub fn decoder_name(&self) -> &'static str {
        match self {
            TraceUnit::Etmv3 { ptm: false, .. } => OCSD_BUILTIN_DCD_ETMV3,
            TraceUnit::Etmv3 { ptm: true, .. } => OCSD_BUILTIN_DCD_PTM,
            TraceUnit::Etmv4 { .. } => OCSD_BUILTIN_DCD_ETMV4I,
            TraceUnit::Ete { .. } => OCSD_BUILTIN_DCD_ETE,
        }
    }

    /// Context IDs traced (the PID in CONTEXTIDR).
    pub fn traces_context_id(&self) -> bool {
        match self {
            TraceUnit::Etmv3 { etmcr, .. } => etmcr & (0x3 << 14) != 0,
            TraceUnit::Etmv4 { configr, .. } | TraceUnit::Ete { configr, .. } => configr & TRCCONFIGR_CID != 0,
        }
    }

    /// VMID traced in place of the context ID (kernel at EL2: CONTEXTIDR_EL2).
    pub fn pid_in_vmid(&self) -> bool {
        match self {
            TraceUnit::Etmv3 { .. } => false,
            TraceUnit::Etmv4 { configr, .. } | TraceUnit::Ete { configr, .. } => {
                configr & TRCCONFIGR_VMID != 0 && configr & TRCCONFIGR_VMIDOPT != 0
            }
        }
    }

    pub fn timestamps(&self) -> bool {
        match self {
            TraceUnit::Etmv3 { etmcr, .. } => etmcr & (1 << 28) != 0,
            TraceUnit::Etmv4 { configr, .. } | TraceUnit::Ete { configr, .. } => configr & TRCCONFIGR_TS != 0,
        }
    }

    /// A decoder for the unit, configured as perf configures it.
    pub fn create_decoder(&self, full: bool) -> Result<Box<dyn crate::dcd_tree::TraceIdDecoder>, ocsd_err_t> {
        use crate::dcd_tree::registry::create_builtin;
        let flags = if full { OCSD_CREATE_FLG_FULL_DECODER } else { OCSD_CREATE_FLG_PACKET_PROC };
        match *self {
            TraceUnit::Etmv3 { etmcr, traceidr, ccer, idr, .. } => {
                let cfg = ocsd_etmv3_cfg {
                    reg_idr: idr,
                    reg_ctrl: etmcr,
                    reg_ccer: ccer,
                    reg_trc_id: traceidr,
                    arch_ver: ARCH_V7,
                    core_prof: profile_CortexA,
                };
                create_builtin(self.decoder_name(), &cfg, flags)
            }
            TraceUnit::Etmv4 { configr, traceidr, idr0, idr1, idr2, idr8, .. } => {
                let cfg = ocsd_etmv4_cfg {
                    reg_idr0: idr0,
                    reg_idr1: idr1,
                    reg_idr2: idr2,
                    reg_idr8: idr8,
                    reg_idr9: 0,
                    reg_idr10: 0,
                    reg_idr11: 0,
                    reg_idr12: 0,
                    reg_idr13: 0,
                    reg_configr: configr,
                    reg_traceidr: traceidr,
                    // TRCIDR1.TRCARCHMIN >= 4: v8.3 or later A64 features
                    arch_ver: if (idr1 >> 4) & 0xf >= 4 { ARCH_AA64 } else { ARCH_V8 },
                    core_prof: profile_CortexA,
                };
                create_builtin(self.decoder_name(), &cfg, flags)
            }
            TraceUnit::Ete { configr, traceidr, idr0, idr1, idr2, idr8, devarch, .. } => {
                let cfg = ocsd_ete_cfg {
                    reg_idr0: idr0,
                    reg_idr1: idr1,
                    reg_idr2: idr2,
                    reg_idr8: idr8,
                    reg_configr: configr,
                    reg_traceidr: traceidr,
                    reg_devarch: devarch,
                    arch_ver: ARCH_AA64,
                    core_prof: profile_CortexA,
                };
                create_builtin(self.decoder_name(), &cfg, flags)
            }
        }
    }
}

impl CsMeta {
    /// Parse the private words of an AUXTRACE_INFO record of type `typ`
    /// found at file offset `offset`.
    pub fn parse(offset: u64, typ: u32, words: &[u64]) -> Result<CsMeta, PerfError> {
        let err = |msg: String| PerfError::Format { what: "PERF_RECORD_AUXTRACE_INFO".into(), offset, msg };
        if typ != PERF_AUXTRACE_CS_ETM {
            let name = match typ {
                1 => " (Intel PT)",
                2 => " (Intel BTS)",
                4 => " (Arm SPE)",
                5 => " (S390 CPUMSF)",
                6 => " (HiSilicon PTT)",
                _ => "",
            };
            return Err(err(format!("unknown AUXTRACE type {}{}: only CoreSight ETM/ETE trace (type 3) is decoded", typ, name)));
        }
        if words.len() < 3 {
            return Err(err(format!("CoreSight header needs 3 words, record has {}", words.len())));
        }
        let version = words[0];
        if version > 1 {
            return Err(err(format!("unsupported CoreSight metadata header version {} (versions 0 and 1 are read)", version)));
        }
        let pmu_type = (words[1] >> 32) as u32;
        let nr_cpu = (words[1] & 0xffff_ffff) as usize;
        let snapshot = words[2] != 0;
        let mut at = 3usize;
        let mut cpus = Vec::with_capacity(nr_cpu.min(4096));
        for n in 0..nr_cpu {
            let w = |i: usize| words.get(at + i).copied();
            let (Some(magic), Some(cpu)) = (w(0), w(1)) else {
                return Err(err(format!("metadata for CPU block {} of {} is missing (record ends)", n, nr_cpu)));
            };
            let (nr_params, base) = if version == 0 {
                let nr = match magic {
                    MAGIC_ETMV3 => 4,
                    MAGIC_ETMV4 => 7,
                    _ => return Err(err(format!("CPU block {}: unsupported trace version (magic {:#018x})", n, magic))),
                };
                (nr, at + 2)
            } else {
                let Some(nr) = w(2) else { return Err(err(format!("CPU block {}: parameter count missing", n))) };
                (nr as usize, at + 3)
            };
            let p = |i: usize| -> Result<u32, PerfError> {
                if i >= nr_params {
                    return Err(err(format!("CPU {}: {} trace parameters, too few for the trace unit", cpu, nr_params)));
                }
                words.get(base + i).map(|v| *v as u32).ok_or_else(|| err(format!("CPU {}: parameters past the end of the record", cpu)))
            };
            let unit = match magic {
                MAGIC_ETMV3 => {
                    let idr = p(3)?;
                    TraceUnit::Etmv3 { etmcr: p(0)?, traceidr: p(1)?, ccer: p(2)?, idr, ptm: idr & 0xf00 == 0x300 }
                }
                MAGIC_ETMV4 => TraceUnit::Etmv4 {
                    configr: p(0)?,
                    traceidr: p(1)?,
                    idr0: p(2)?,
                    idr1: p(3)?,
                    idr2: p(4)?,
                    idr8: p(5)?,
                    authstatus: p(6)?,
                },
                MAGIC_ETE => TraceUnit::Ete {
                    configr: p(0)?,
                    traceidr: p(1)?,
                    idr0: p(2)?,
                    idr1: p(3)?,
                    idr2: p(4)?,
                    idr8: p(5)?,
                    authstatus: p(6)?,
                    devarch: p(7)?,
                },
                _ => return Err(err(format!("CPU block {}: unsupported trace version (magic {:#018x})", n, magic))),
            };
            if base + nr_params > words.len() {
                return Err(err(format!("CPU {}: parameters past the end of the record", cpu)));
            }
            cpus.push(CpuMeta { cpu: cpu as u32, unit });
            at = base + nr_params;
        }
        Ok(CsMeta { version, pmu_type, snapshot, cpus })
    }

    /// The metadata of the unit whose trace carries `trace_id`.
    pub fn by_trace_id(&self, trace_id: u8) -> Option<&CpuMeta> {
        self.cpus.iter().find(|c| c.unit.trace_id() == trace_id)
    }

    pub fn by_cpu(&self, cpu: u32) -> Option<&CpuMeta> {
        self.cpus.iter().find(|c| c.cpu == cpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn etmv4_block(cpu: u64, id: u64) -> Vec<u64> {
        vec![MAGIC_ETMV4, cpu, 7, 0x40, id, 0x28000ea1, 0x4100f422, 0x20001088, 0, 0x8c]
    }

    #[test]
    fn parses_v1_etmv4() {
        let mut w = vec![1, (8u64 << 32) | 2, 0];
        w.extend(etmv4_block(0, 0x10));
        w.extend(etmv4_block(1, 0x12));
        let m = CsMeta::parse(0x408, 3, &w).unwrap();
        assert_eq!(m.cpus.len(), 2);
        assert_eq!(m.pmu_type, 8);
        assert_eq!(m.cpus[1].unit.trace_id(), 0x12);
        assert!(m.cpus[0].unit.traces_context_id());
        assert!(!m.cpus[0].unit.timestamps());
        assert_eq!(m.by_trace_id(0x12).unwrap().cpu, 1);
    }

    #[test]
    fn parses_v0_and_ete() {
        let w = vec![0, 1, 0, MAGIC_ETMV4, 3, 0x840, 0x16, 1, 2, 3, 4, 5];
        let m = CsMeta::parse(0, 3, &w).unwrap();
        assert_eq!(m.cpus[0].cpu, 3);
        assert!(m.cpus[0].unit.timestamps());
        let w = vec![1, 1, 0, MAGIC_ETE, 0, 8, 0x8080, 0x10, 0x288006a1, 0x4100fff0, 0xc0001088, 0, 0xcc, 0x47715a13];
        let m = CsMeta::parse(0, 3, &w).unwrap();
        assert!(matches!(m.cpus[0].unit, TraceUnit::Ete { devarch: 0x47715a13, .. }));
    }

    #[test]
    fn errors_name_the_problem() {
        let e = CsMeta::parse(0x408, 4, &[1, 1, 0]).unwrap_err().to_string();
        assert!(e.contains("unknown AUXTRACE type 4") && e.contains("0x408"), "{}", e);
        let e = CsMeta::parse(0x408, 3, &[2, 1, 0]).unwrap_err().to_string();
        assert!(e.contains("version 2"), "{}", e);
        let e = CsMeta::parse(0x408, 3, &[1, 1, 0, 0x6060606060606060, 0, 1, 0]).unwrap_err().to_string();
        assert!(e.contains("unsupported trace version"), "{}", e);
        let e = CsMeta::parse(0x408, 3, &[1, 2, 0, MAGIC_ETMV4, 0, 7, 1, 2, 3]).unwrap_err().to_string();
        assert!(e.contains("too few") || e.contains("past the end"), "{}", e);
        assert!(CsMeta::parse(0, 3, &[1, 3, 0]).is_err());
    }
}
