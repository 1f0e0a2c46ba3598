//! Trace source configuration from register values: the one place where
//! ID / control register values (TRCIDRn, TRCCONFIGR, ETMCR, STMTCSR, ...)
//! and a core's architecture and profile become a protocol's decoder
//! configuration.
//!
//! The snapshot reader ([`crate::snapshot`]), the Rust API ([`crate::api`])
//! and the `ocsd` command all build their configurations here. This module
//! depends on the protocol modules' configuration types; nothing it uses
//! depends back on it or on the snapshot reader.
#![forbid(unsafe_code)]

use std::any::Any;
use std::fmt;
use std::str::FromStr;

use crate::abi::*;
use crate::dcd_tree::TraceIdDecoder;
use crate::ete::ocsd_ete_cfg;
use crate::etmv3::ocsd_etmv3_cfg;
use crate::etmv4::ocsd_etmv4_cfg;
use crate::itm::ocsd_itm_cfg;
use crate::stm::ocsd_stm_cfg;

/// A set of named register values (a snapshot device, a config file, a
/// map built in code). Names are matched case-insensitively.
pub trait RegisterSource {
    fn reg(&self, name: &str) -> Option<u32>;
}

impl RegisterSource for [(String, u32)] {
    fn reg(&self, name: &str) -> Option<u32> {
        self.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| *v)
    }
}

impl RegisterSource for Vec<(String, u32)> {
    fn reg(&self, name: &str) -> Option<u32> {
        self.as_slice().reg(name)
    }
}

impl RegisterSource for [(&str, u32)] {
    fn reg(&self, name: &str) -> Option<u32> {
        self.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| *v)
    }
}

impl<const N: usize> RegisterSource for [(&str, u32); N] {
    fn reg(&self, name: &str) -> Option<u32> {
        self.as_slice().reg(name)
    }
}

impl RegisterSource for std::collections::BTreeMap<String, u32> {
    fn reg(&self, name: &str) -> Option<u32> {
        self.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| *v)
    }
}

/// A trace protocol with a built-in decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// ETMv4 instruction trace (`ETMV4I`).
    EtmV4,
    /// Embedded Trace Extension (`ETE`).
    Ete,
    /// ETMv3 (`ETMV3`).
    EtmV3,
    /// Program Flow Trace (`PTM`).
    Ptm,
    /// System Trace Macrocell (`STM`).
    Stm,
    /// Instrumentation Trace Macrocell (`ITM`).
    Itm,
}

impl Protocol {
    /// All protocols, in OpenCSD's decoder registration order.
    pub const ALL: [Protocol; 6] = [Protocol::EtmV3, Protocol::EtmV4, Protocol::Ptm, Protocol::Stm, Protocol::Ete, Protocol::Itm];

    /// The protocol of a snapshot device type (`ETM4`, `ETE`, `ETM3.5`,
    /// `PTM1.1`, `PFT1.0`, `STM`, `ITM`).
    pub fn from_device_type(dev_type: &str) -> Option<Protocol> {
        let base = dev_type.split('.').next().unwrap_or("");
        if base.starts_with("ETM3") {
            return Some(Protocol::EtmV3);
        }
        if base.starts_with("PTM") || base.starts_with("PFT") {
            return Some(Protocol::Ptm);
        }
        match base {
            "ETM4" => Some(Protocol::EtmV4),
            "ETE" => Some(Protocol::Ete),
            "STM" => Some(Protocol::Stm),
            "ITM" => Some(Protocol::Itm),
            _ => None,
        }
    }

    /// OpenCSD's built-in decoder name (`ETMV4I`, `ETE`, ...).
    pub fn decoder_name(self) -> &'static str {
        match self {
            Protocol::EtmV4 => OCSD_BUILTIN_DCD_ETMV4I,
            Protocol::Ete => OCSD_BUILTIN_DCD_ETE,
            Protocol::EtmV3 => OCSD_BUILTIN_DCD_ETMV3,
            Protocol::Ptm => OCSD_BUILTIN_DCD_PTM,
            Protocol::Stm => OCSD_BUILTIN_DCD_STM,
            Protocol::Itm => OCSD_BUILTIN_DCD_ITM,
        }
    }

    /// The name accepted by [`Protocol::from_str`] (`etmv4`, `ete`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Protocol::EtmV4 => "etmv4",
            Protocol::Ete => "ete",
            Protocol::EtmV3 => "etmv3",
            Protocol::Ptm => "ptm",
            Protocol::Stm => "stm",
            Protocol::Itm => "itm",
        }
    }

    /// The registers this protocol's configuration reads: (name, required,
    /// default when absent), in the order OpenCSD's snapshot reader reads them.
    pub fn registers(self) -> &'static [(&'static str, bool, u32)] {
        match self {
            Protocol::EtmV4 => &[
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
            Protocol::Ete => &[
                ("TRCCONFIGR", true, 0),
                ("TRCTRACEIDR", true, 0),
                ("TRCIDR0", true, 0),
                ("TRCIDR1", false, 0x4100FFF3),
                ("TRCIDR2", true, 0),
                ("TRCIDR8", false, 0),
                ("TRCDEVARCH", true, 0),
            ],
            Protocol::EtmV3 | Protocol::Ptm => {
                &[("ETMIDR", true, 0), ("ETMCR", true, 0), ("ETMCCER", true, 0), ("ETMTRACEIDR", true, 0)]
            }
            Protocol::Stm => &[("STMTCSR", true, 0)],
            Protocol::Itm => &[("ITMTCR", true, 0)],
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Protocol {
    type Err = ConfigError;
    /// `etmv4` (`etm4`, `etmv4i`), `ete`, `etmv3` (`etm3`), `ptm` (`pft`),
    /// `stm`, `itm`; case-insensitive.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "etmv4" | "etm4" | "etmv4i" => Protocol::EtmV4,
            "ete" => Protocol::Ete,
            "etmv3" | "etm3" => Protocol::EtmV3,
            "ptm" | "pft" => Protocol::Ptm,
            "stm" => Protocol::Stm,
            "itm" => Protocol::Itm,
            _ => return Err(ConfigError::UnknownProtocol(s.to_string())),
        })
    }
}

/// Why a configuration could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("unknown protocol `{0}` (expected one of etmv4, ete, etmv3, ptm, stm, itm)")]
    UnknownProtocol(String),
    #[error("unknown core or architecture `{0}` (e.g. Cortex-A53, ARMv8-A, ARMv8.3-A, ARMv7-M, ARM-AA64)")]
    UnknownCore(String),
    #[error("missing register(s) {}", .0.join(", "))]
    MissingRegisters(Vec<String>),
    #[error("trace ID 0x{0:x} is not a valid CoreSight trace ID (0x01..0x6f)")]
    InvalidTraceId(u8),
    #[error("{0}")]
    Invalid(String),
}

/// A protocol's decoder configuration: the C configuration struct that
/// OpenCSD's decoders take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolConfig {
    EtmV4(ocsd_etmv4_cfg),
    Ete(ocsd_ete_cfg),
    EtmV3(ocsd_etmv3_cfg),
    Ptm(ocsd_etmv3_cfg),
    Stm(ocsd_stm_cfg),
    Itm(ocsd_itm_cfg),
}

impl ProtocolConfig {
    pub fn protocol(&self) -> Protocol {
        match self {
            ProtocolConfig::EtmV4(_) => Protocol::EtmV4,
            ProtocolConfig::Ete(_) => Protocol::Ete,
            ProtocolConfig::EtmV3(_) => Protocol::EtmV3,
            ProtocolConfig::Ptm(_) => Protocol::Ptm,
            ProtocolConfig::Stm(_) => Protocol::Stm,
            ProtocolConfig::Itm(_) => Protocol::Itm,
        }
    }

    /// OpenCSD's built-in decoder name.
    pub fn decoder_name(&self) -> &'static str {
        self.protocol().decoder_name()
    }

    /// The configuration struct, as the decoder registry takes it.
    pub fn as_any(&self) -> &dyn Any {
        match self {
            ProtocolConfig::EtmV4(c) => c,
            ProtocolConfig::Ete(c) => c,
            ProtocolConfig::EtmV3(c) | ProtocolConfig::Ptm(c) => c,
            ProtocolConfig::Stm(c) => c,
            ProtocolConfig::Itm(c) => c,
        }
    }

    /// The CoreSight trace ID the source writes under.
    pub fn trace_id(&self) -> u8 {
        match self {
            ProtocolConfig::EtmV4(c) => crate::etmv4::EtmV4Config::new(c).trace_id(),
            ProtocolConfig::Ete(c) => crate::etmv4::EtmV4Config::from_ete(c).trace_id(),
            ProtocolConfig::EtmV3(c) | ProtocolConfig::Ptm(c) => crate::etmv3::EtmV3Config::new(c).trace_id(),
            ProtocolConfig::Stm(c) => crate::stm::StmConfig::new(c).trace_id(),
            ProtocolConfig::Itm(c) => crate::itm::ItmConfig::new(c).trace_id(),
        }
    }

    /// Create the decode stack (`OCSD_CREATE_FLG_*` in `create_flags`).
    pub fn create_decoder(&self, create_flags: u32) -> Result<Box<dyn TraceIdDecoder>, ocsd_err_t> {
        crate::dcd_tree::registry::create_builtin(self.decoder_name(), self.as_any(), create_flags)
    }

    /// Build the configuration of `protocol` from register values and the
    /// core's architecture / profile. `missing` is told, in register order,
    /// of each register that is absent: with `Some(default)` when a default
    /// is used, `None` when it is required (the result is then an error).
    pub fn from_registers<R: RegisterSource + ?Sized>(
        protocol: Protocol,
        regs: &R,
        ap: ocsd_arch_profile_t,
        missing: &mut dyn FnMut(&str, Option<u32>),
    ) -> Result<ProtocolConfig, ConfigError> {
        let list = protocol.registers();
        let mut vals = [0u32; 11];
        let mut absent = Vec::new();
        for (i, (name, required, default)) in list.iter().enumerate() {
            vals[i] = match regs.reg(name) {
                Some(v) => v,
                None if *required => {
                    missing(name, None);
                    absent.push(name.to_string());
                    0
                }
                None => {
                    missing(name, Some(*default));
                    *default
                }
            };
        }
        if !absent.is_empty() {
            return Err(ConfigError::MissingRegisters(absent));
        }
        Ok(match protocol {
            Protocol::EtmV4 => {
                let [configr, traceidr, idr0, idr1, idr2, idr8, idr9, idr10, idr11, idr12, idr13] = vals;
                ProtocolConfig::EtmV4(ocsd_etmv4_cfg {
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
                })
            }
            Protocol::Ete => {
                let [configr, traceidr, idr0, idr1, idr2, idr8, devarch, ..] = vals;
                ProtocolConfig::Ete(ocsd_ete_cfg {
                    reg_idr0: idr0,
                    reg_idr1: idr1,
                    reg_idr2: idr2,
                    reg_idr8: idr8,
                    reg_devarch: devarch,
                    reg_configr: configr,
                    reg_traceidr: traceidr,
                    arch_ver: ap.arch,
                    core_prof: ap.profile,
                })
            }
            Protocol::EtmV3 | Protocol::Ptm => {
                let [idr, ctrl, ccer, trc_id, ..] = vals;
                let cfg = ocsd_etmv3_cfg { reg_idr: idr, reg_ctrl: ctrl, reg_ccer: ccer, reg_trc_id: trc_id, arch_ver: ap.arch, core_prof: ap.profile };
                if protocol == Protocol::Ptm {
                    ProtocolConfig::Ptm(cfg)
                } else {
                    ProtocolConfig::EtmV3(cfg)
                }
            }
            Protocol::Stm => ProtocolConfig::Stm(ocsd_stm_cfg { reg_tcsr: vals[0], ..Default::default() }),
            Protocol::Itm => ProtocolConfig::Itm(ocsd_itm_cfg { reg_tcr: vals[0] }),
        })
    }

    /// Checks beyond what the snapshot reader does, for configurations given
    /// by users: a usable trace ID for a formatted source, and a known
    /// architecture for the instruction trace protocols.
    pub fn validate(&self, formatted: bool) -> Result<(), ConfigError> {
        let id = self.trace_id();
        if formatted && !is_valid_cs_src_id(id) {
            return Err(ConfigError::InvalidTraceId(id));
        }
        let ap = match self {
            ProtocolConfig::EtmV4(c) => Some((c.arch_ver, c.core_prof)),
            ProtocolConfig::Ete(c) => Some((c.arch_ver, c.core_prof)),
            ProtocolConfig::EtmV3(c) | ProtocolConfig::Ptm(c) => Some((c.arch_ver, c.core_prof)),
            _ => None,
        };
        if let Some((arch, profile)) = ap {
            if arch == ARCH_UNKNOWN || profile == profile_Unknown {
                return Err(ConfigError::Invalid("the core's architecture and profile are needed for instruction trace".into()));
            }
        }
        // what OpenCSD's decoders refuse (they decode instruction trace only)
        let refusal = match self {
            ProtocolConfig::EtmV4(c) => crate::etmv4::EtmV4Config::new(c).decode_refusal(),
            ProtocolConfig::Ete(c) => crate::etmv4::EtmV4Config::from_ete(c).decode_refusal(),
            ProtocolConfig::EtmV3(c) => crate::etmv3::EtmV3Config::new(c).decode_refusal(),
            _ => None,
        };
        if let Some(why) = refusal {
            return Err(ConfigError::Invalid(why.to_string()));
        }
        if let ProtocolConfig::EtmV4(c) = self {
            // TRCIDR1.ARCHMAJOR is 4 for ETMv4 (0b0100 at bits [11:8])
            if (c.reg_idr1 >> 8) & 0xf != 4 {
                return Err(ConfigError::Invalid(format!("TRCIDR1 0x{:08x} is not an ETMv4 ID register (TRCARCHMAJ != 4)", c.reg_idr1)));
            }
        }
        Ok(())
    }
}

/// Architecture and profile for a core name (OpenCSD 1.8.0's core map,
/// plus the `ARMvM[.m]-P` and `ARM-AA64[-P]` patterns); `ARCH_UNKNOWN` when
/// unknown. Names later releases added (Cortex-A78, Cortex-M7, Cortex-M85)
/// are unknown here, as to 1.8.0's snapshot reader: a snapshot naming one
/// gets its "Unrecognized Core name" error; `ARMv8-M` and the like name
/// any core.
pub fn arch_profile(core: &str) -> ocsd_arch_profile_t {
    let (arch, profile) = match core {
        "Cortex-A73" | "Cortex-A72" | "Cortex-A57" | "Cortex-A53" | "Cortex-A35" | "Cortex-A32" => {
            (ARCH_V8, profile_CortexA)
        }
        "Cortex-A77" | "Cortex-A76" | "Cortex-A75" | "Cortex-A65" | "Cortex-A55" => (ARCH_V8r3, profile_CortexA),
        "Cortex-A17" | "Cortex-A15" | "Cortex-A12" | "Cortex-A9" | "Cortex-A8" | "Cortex-A7" | "Cortex-A5" => {
            (ARCH_V7, profile_CortexA)
        }
        "Cortex-R52" => (ARCH_V8, profile_CortexR),
        "Cortex-R8" | "Cortex-R7" | "Cortex-R5" | "Cortex-R4" => (ARCH_V7, profile_CortexR),
        "Cortex-M33" | "Cortex-M55" | "Cortex-M23" => (ARCH_V8, profile_CortexM),
        "Cortex-M0" | "Cortex-M0+" | "Cortex-M3" | "Cortex-M4" => (ARCH_V7, profile_CortexM),
        _ => return pattern_arch_profile(core),
    };
    ocsd_arch_profile_t { arch, profile }
}

fn pattern_arch_profile(core: &str) -> ocsd_arch_profile_t {
    let unknown = ocsd_arch_profile_t { arch: ARCH_UNKNOWN, profile: profile_Unknown };
    let b = core.as_bytes();
    if let Some(rest) = core.strip_prefix("ARMv") {
        let rb = rest.as_bytes();
        let Some(maj) = rb.first().and_then(|c| (*c as char).to_digit(10)) else { return unknown };
        let mut idx = 1;
        let mut minor = 0;
        if rb.get(1) == Some(&b'.') {
            minor = rb.get(2).and_then(|c| (*c as char).to_digit(10)).unwrap_or(0);
            idx = 3;
        } else if rest.contains('.') {
            return unknown;
        }
        let arch = match maj {
            7 => ARCH_V7,
            8 if minor < 3 => ARCH_V8,
            8 if minor == 3 => ARCH_V8r3,
            m if m >= 8 => ARCH_AA64,
            _ => return unknown,
        };
        if rb.get(idx) != Some(&b'-') {
            return unknown;
        }
        let profile = match rb.get(idx + 1) {
            Some(b'A') => profile_CortexA,
            Some(b'R') => profile_CortexR,
            Some(b'M') => profile_CortexM,
            _ => return unknown,
        };
        return ocsd_arch_profile_t { arch, profile };
    }
    if core.starts_with("ARM-") && (core.get(4..8) == Some("aa64") || core.get(4..8) == Some("AA64")) {
        let profile = if b.get(8) == Some(&b'-') {
            match b.get(9) {
                Some(b'R') => profile_CortexR,
                Some(b'M') => profile_CortexM,
                _ => profile_CortexA,
            }
        } else {
            profile_CortexA
        };
        return ocsd_arch_profile_t { arch: ARCH_AA64, profile };
    }
    unknown
}

/// OpenCSD's memory space names in snapshot dump sections (`EL1N`, `S`,
/// `EL2`, ...); anything else is `ANY`.
pub fn mem_space_from_str(s: &str) -> ocsd_mem_space_acc_t {
    match s {
        "EL1S" | "SP" => OCSD_MEM_SPACE_EL1S,
        "EL1N" | "P" | "NP" => OCSD_MEM_SPACE_EL1N,
        "EL1R" => OCSD_MEM_SPACE_EL1R,
        "EL2S" => OCSD_MEM_SPACE_EL2S,
        "EL2" | "EL2N" | "H" => OCSD_MEM_SPACE_EL2,
        "EL2R" => OCSD_MEM_SPACE_EL2R,
        "EL3" => OCSD_MEM_SPACE_EL3,
        "ROOT" => OCSD_MEM_SPACE_ROOT,
        "S" => OCSD_MEM_SPACE_S,
        "N" => OCSD_MEM_SPACE_N,
        "R" => OCSD_MEM_SPACE_R,
        _ => OCSD_MEM_SPACE_ANY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_names() {
        assert_eq!(arch_profile("Cortex-A53").arch, ARCH_V8);
        assert_eq!(arch_profile("ARM-AA64").arch, ARCH_AA64);
        assert_eq!(arch_profile("ARMv8.3-A").arch, ARCH_V8r3);
        assert_eq!(arch_profile("ARMv7-M").profile, profile_CortexM);
        assert_eq!(arch_profile("Banana").arch, ARCH_UNKNOWN);
        // 1.8.0's map: Cortex-M55 is v8 (not v8.3); no Cortex-A78, M7, M85
        assert_eq!((arch_profile("Cortex-M55").arch, arch_profile("Cortex-M55").profile), (ARCH_V8, profile_CortexM));
        for later in ["Cortex-A78", "Cortex-M7", "Cortex-M85"] {
            assert_eq!(arch_profile(later).arch, ARCH_UNKNOWN, "{later}");
        }
        assert_eq!(arch_profile("ARMv").arch, ARCH_UNKNOWN);
    }

    #[test]
    fn device_types_and_names() {
        assert_eq!(Protocol::from_device_type("ETM3.5"), Some(Protocol::EtmV3));
        assert_eq!(Protocol::from_device_type("PFT1.0"), Some(Protocol::Ptm));
        assert_eq!(Protocol::from_device_type("ETM4"), Some(Protocol::EtmV4));
        assert_eq!(Protocol::from_device_type("CTI"), None);
        assert_eq!("ETE".parse::<Protocol>(), Ok(Protocol::Ete));
        assert!(matches!("etm9".parse::<Protocol>(), Err(ConfigError::UnknownProtocol(_))));
    }

    #[test]
    fn registers_with_defaults_and_missing() {
        let ap = arch_profile("Cortex-A57");
        let regs = [("TRCCONFIGR", 0xC1u32), ("TRCTRACEIDR", 0x10), ("TRCIDR0", 0x28000EA1), ("TRCIDR2", 0x20001088)];
        let mut notes = Vec::new();
        let cfg = ProtocolConfig::from_registers(Protocol::EtmV4, &regs, ap, &mut |n, d| notes.push((n.to_string(), d))).unwrap();
        assert_eq!(cfg.trace_id(), 0x10);
        assert_eq!(cfg.decoder_name(), "ETMV4I");
        assert_eq!(notes[0], ("TRCIDR1".to_string(), Some(0x4100F403)));
        assert_eq!(notes.len(), 7);
        cfg.validate(true).unwrap();

        let regs = [("TRCCONFIGR", 0xC1u32)];
        let err = ProtocolConfig::from_registers(Protocol::EtmV4, &regs, ap, &mut |_, _| {}).unwrap_err();
        assert_eq!(err, ConfigError::MissingRegisters(vec!["TRCTRACEIDR".into(), "TRCIDR0".into(), "TRCIDR2".into()]));

        let regs = [("STMTCSR", 0x0000_0003u32)]; // trace ID 0
        let cfg = ProtocolConfig::from_registers(Protocol::Stm, &regs, ap, &mut |_, _| {}).unwrap();
        assert_eq!(cfg.validate(true), Err(ConfigError::InvalidTraceId(0)));
        assert!(cfg.validate(false).is_ok());

        // what OpenCSD's decoders refuse is a configuration error here
        let regs = [("TRCCONFIGR", 0x6u32), ("TRCTRACEIDR", 0x10), ("TRCIDR0", 0x28000EA1), ("TRCIDR2", 0x20001088)];
        let cfg = ProtocolConfig::from_registers(Protocol::EtmV4, &regs, ap, &mut |_, _| {}).unwrap();
        assert_eq!(cfg.validate(true), Err(ConfigError::Invalid("ETMv4 instruction decode : LSP0 elements not supported.".into())));
        let v7 = arch_profile("Cortex-A15");
        let regs = [("ETMCR", 0x0000_000Cu32), ("ETMTRACEIDR", 0x11), ("ETMIDR", 0x4114F250), ("ETMCCER", 0)];
        let cfg = ProtocolConfig::from_registers(Protocol::EtmV3, &regs, v7, &mut |_, _| {}).unwrap();
        assert!(matches!(cfg.validate(true), Err(ConfigError::Invalid(m)) if m.contains("data trace")));
    }
}
