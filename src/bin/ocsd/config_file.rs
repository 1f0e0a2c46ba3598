//! The trace configuration file of `ocsd decode --trace FILE --config FILE`:
//!
//! ```toml
//! format = "formatted"          # formatted (default) | single | tpiu | tpiu-hsync | dstream
//!
//! [[source]]
//! protocol = "etmv4"            # etmv4 | ete | etmv3 | ptm | stm | itm
//! core = "Cortex-A53"           # core or architecture (ARMv8-A, ARMv7-M, ...)
//! trace_id = 0x10               # optional: sets TRCTRACEIDR / ETMTRACEIDR / the TCSR ID field
//! [source.registers]
//! TRCIDR0 = 0x28000EA1
//! TRCIDR1 = 0x4100F403
//! TRCIDR2 = 0x00000488
//! TRCCONFIGR = 0x000000C1
//! TRCTRACEIDR = 0x10
//!
//! [[memory]]                    # optional; also --elf / --dump
//! file = "firmware.elf"         # an ELF, or a raw dump (then `address` is needed)
//! address = 0x80000000
//! space = "EL1N"
//!
//! [[memory]]                    # a process image: read only while the trace
//! file = "app.elf"              # gives this context ID (and/or VMID)
//! context_id = 1234
//! vmid = 3
//! ```
//!
//! Relative file names are relative to the configuration file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use opencsd_c_api::api::{config_from_registers, AddressSpace, Protocol, ProtocolConfig, TraceFormat};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format: Option<String>,
    #[serde(rename = "source", default)]
    sources: Vec<SourceEntry>,
    #[serde(rename = "memory", default)]
    memory: Vec<MemEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceEntry {
    protocol: String,
    core: Option<String>,
    trace_id: Option<Num>,
    #[serde(default)]
    registers: BTreeMap<String, Num>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MemEntry {
    file: String,
    address: Option<Num>,
    space: Option<String>,
    context_id: Option<Num>,
    vmid: Option<Num>,
}

/// A number as a TOML integer (`0x10`, `16`) or a string (`"0x10"`).
#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum Num {
    Int(i64),
    Str(String),
}

impl Num {
    fn value(&self, what: &str) -> Result<u64, String> {
        match self {
            Num::Int(v) if *v >= 0 => Ok(*v as u64),
            Num::Int(v) => Err(format!("{what}: negative value {v}")),
            Num::Str(s) => parse_num(s).ok_or_else(|| format!("{what}: `{s}` is not a number")),
        }
    }
}

/// `0x` hex or decimal.
pub fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim().replace('_', "");
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// A memory image named in the configuration file.
pub struct MemorySpec {
    pub file: PathBuf,
    pub address: Option<u64>,
    pub space: AddressSpace,
    pub context_id: Option<u32>,
    pub vmid: Option<u32>,
}

pub struct TraceConfig {
    pub format: TraceFormat,
    /// `format = "dstream"`: TPIU frames captured by a DSTREAM probe, an
    /// 8-byte footer after every 504 bytes (dropped before decoding).
    pub dstream: bool,
    pub sources: Vec<ProtocolConfig>,
    pub memory: Vec<MemorySpec>,
}

/// Read and check the configuration file (errors are one line, without the
/// file name).
pub fn read(path: &Path) -> Result<TraceConfig, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    parse(&text, path.parent().unwrap_or(Path::new(".")))
}

pub fn parse(text: &str, base: &Path) -> Result<TraceConfig, String> {
    let f: File = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| text[..s.start.min(text.len())].lines().count().max(1));
        let msg = e.message().replace('\n', " ");
        match line {
            Some(l) => format!("line {l}: {msg}"),
            None => msg,
        }
    })?;
    let (format, dstream) = match f.format.as_deref().unwrap_or("formatted").to_ascii_lowercase().as_str() {
        "formatted" | "frames" | "etb" | "etr" => (TraceFormat::Formatted { fsyncs: false, hsyncs: false }, false),
        "single" | "source" | "raw" => (TraceFormat::SingleSource, false),
        "tpiu" => (TraceFormat::Formatted { fsyncs: true, hsyncs: false }, false),
        "tpiu-hsync" => (TraceFormat::Formatted { fsyncs: true, hsyncs: true }, false),
        "dstream" => (TraceFormat::Formatted { fsyncs: true, hsyncs: false }, true),
        other => return Err(format!("format `{other}`: expected formatted, single, tpiu, tpiu-hsync or dstream")),
    };
    if f.sources.is_empty() {
        return Err("no [[source]] section: say which protocol and registers the trace source has".into());
    }
    let mut sources = Vec::new();
    for (i, s) in f.sources.iter().enumerate() {
        let protocol: Protocol = s.protocol.parse().map_err(|e| format!("source {}: {e}", i + 1))?;
        let known = protocol.registers();
        let mut regs: Vec<(String, u32)> = Vec::new();
        for (name, v) in &s.registers {
            let Some((canon, _, _)) = known.iter().find(|(n, _, _)| n.eq_ignore_ascii_case(name)) else {
                let names: Vec<&str> = known.iter().map(|r| r.0).collect();
                return Err(format!("source {}: register `{name}` is not used by {protocol} (registers: {})", i + 1, names.join(", ")));
            };
            let v = v.value(name)?;
            let v = u32::try_from(v).map_err(|_| format!("source {}: {name} = 0x{v:x} does not fit 32 bits", i + 1))?;
            regs.push((canon.to_string(), v));
        }
        if let Some(id) = &s.trace_id {
            let id = id.value("trace_id")?;
            if id == 0 || id >= 0x70 {
                return Err(format!("source {}: trace_id 0x{id:x} is not a valid CoreSight trace ID (0x01..0x6f)", i + 1));
            }
            set_trace_id(protocol, &mut regs, id as u32);
        }
        let core = s.core.clone().unwrap_or_default();
        if core.is_empty() && !matches!(protocol, Protocol::Stm | Protocol::Itm) {
            return Err(format!("source {}: `core` is needed for {protocol} (e.g. core = \"Cortex-A53\" or \"ARMv8-A\")", i + 1));
        }
        let cfg = config_from_registers(protocol, &core, &regs).map_err(|e| format!("source {}: {e}", i + 1))?;
        sources.push(cfg);
    }
    let mut memory = Vec::new();
    for m in &f.memory {
        let space = match &m.space {
            Some(s) => s.parse::<AddressSpace>().map_err(|e| e.to_string())?,
            None => AddressSpace::ANY,
        };
        let address = m.address.as_ref().map(|a| a.value("address")).transpose()?;
        let id32 = |n: &Option<Num>, what: &str| -> Result<Option<u32>, String> {
            n.as_ref()
                .map(|v| v.value(what).and_then(|v| u32::try_from(v).map_err(|_| format!("memory {}: {what} = 0x{v:x} does not fit 32 bits", m.file))))
                .transpose()
        };
        let context_id = id32(&m.context_id, "context_id")?;
        let vmid = id32(&m.vmid, "vmid")?;
        memory.push(MemorySpec { file: base.join(&m.file), address, space, context_id, vmid });
    }
    Ok(TraceConfig { format, dstream, sources, memory })
}

fn set_trace_id(protocol: Protocol, regs: &mut Vec<(String, u32)>, id: u32) {
    let (name, shift_mask) = match protocol {
        Protocol::EtmV4 | Protocol::Ete => ("TRCTRACEIDR", None),
        Protocol::EtmV3 | Protocol::Ptm => ("ETMTRACEIDR", None),
        Protocol::Stm => ("STMTCSR", Some(16)),
        Protocol::Itm => ("ITMTCR", Some(16)),
    };
    let pos = regs.iter().position(|(n, _)| n == name);
    let old = pos.map(|p| regs[p].1).unwrap_or(0);
    let v = match shift_mask {
        None => id,
        Some(sh) => (old & !(0x7f << sh)) | (id << sh),
    };
    match pos {
        Some(p) => regs[p].1 = v,
        None => regs.push((name.to_string(), v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sources_and_memory() {
        let c = parse(
            "format = \"single\"\n[[source]]\nprotocol = \"ETMv4\"\ncore = \"Cortex-A53\"\ntrace_id = 0x12\n[source.registers]\nTRCIDR0 = 0x28000EA1\ntrcidr2 = \"0x488\"\nTRCCONFIGR = 0xC1\n[[memory]]\nfile = \"a.bin\"\naddress = 0x1000\nspace = \"el1n\"\n",
            Path::new("/x"),
        )
        .unwrap();
        assert_eq!(c.format, TraceFormat::SingleSource);
        assert_eq!(c.sources[0].trace_id(), 0x12);
        assert_eq!(c.memory[0].file, PathBuf::from("/x/a.bin"));
        assert_eq!(c.memory[0].space, AddressSpace::EL1N);
        assert_eq!((c.memory[0].context_id, c.memory[0].vmid), (None, None));
        let c = parse(
            "[[source]]\nprotocol = \"stm\"\ntrace_id = 0x20\n[[memory]]\nfile = \"p.elf\"\ncontext_id = 0x4d2\nvmid = \"3\"\n",
            Path::new("/x"),
        )
        .unwrap();
        assert_eq!((c.memory[0].context_id, c.memory[0].vmid), (Some(1234), Some(3)));
        let e = parse("[[source]]\nprotocol = \"stm\"\ntrace_id = 0x20\n[[memory]]\nfile = \"p.elf\"\ncontext_id = 0x100000000\n", Path::new("/x")).err().unwrap();
        assert!(e.contains("32 bits"), "{e}");
    }

    #[test]
    fn errors_are_one_line() {
        for (text, want) in [
            ("[[source]]\nprotocol = \"etm9\"\n", "unknown protocol"),
            ("[[source]]\nprotocol = \"etmv4\"\ncore = \"Cortex-A53\"\n", "missing register"),
            ("[[source]]\nprotocol = \"etmv4\"\ncore = \"Cortex-A53\"\n[source.registers]\nTRCIDR7 = 1\n", "TRCIDR7"),
            ("[[source]]\nprotocol = \"etmv4\"\ncore = \"Banana\"\n[source.registers]\nTRCIDR0 = 1\nTRCIDR2 = 1\nTRCCONFIGR=1\nTRCTRACEIDR=1\n", "Banana"),
            ("[[source]]\nprotocol = \"stm\"\ntrace_id = 0x70\n", "0x70"),
            ("format = \"zigzag\"\n[[source]]\nprotocol = \"stm\"\n", "zigzag"),
            ("this is not toml", "line 1"),
            ("", "no [[source]]"),
        ] {
            let e = parse(text, Path::new(".")).err().unwrap();
            assert!(e.contains(want), "{e} (wanted {want})");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
