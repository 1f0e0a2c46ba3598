//! Reader for the CoreSight trace snapshot format (`snapshot.ini`, device
//! `.ini` files, `trace.ini`), as used by `trc_pkt_lister`.
#![forbid(unsafe_code)]

pub mod ini;
pub mod plan;
pub mod to_tree;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ini::Ini;

/// A memory dump of a core device (`[dumpN]`).
#[derive(Debug, Clone, Default)]
pub struct DumpDef {
    pub path: String,
    pub address: u64,
    pub length: usize,
    pub offset: usize,
    pub space: String,
}

/// One device `.ini` file.
#[derive(Debug, Clone, Default)]
pub struct Device {
    pub name: String,
    pub class: String,
    pub type_name: String,
    /// Register name (text before any `(`) to value text, in file order.
    pub regs: Vec<(String, String)>,
    pub dumps: Vec<DumpDef>,
}

impl Device {
    /// A register by name (case-insensitive, ignoring `(...)` suffixes).
    pub fn reg(&self, name: &str) -> Option<u32> {
        self.regs.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| parse_c_ulong(v) as u32)
    }
}

impl crate::config::RegisterSource for Device {
    fn reg(&self, name: &str) -> Option<u32> {
        Device::reg(self, name)
    }
}

/// A trace buffer (`[bufferN]` in trace.ini).
#[derive(Debug, Clone, Default)]
pub struct BufferInfo {
    pub name: String,
    pub file: String,
    pub format: String,
}

#[derive(Debug, Default)]
pub struct Snapshot {
    /// The directory as given, with a trailing separator.
    pub dir: String,
    pub devices: Vec<Device>,
    pub buffers: Vec<BufferInfo>,
    /// source name -> buffer name
    pub source_buffers: BTreeMap<String, String>,
    /// (core name, source name), in file order (a core may have several
    /// sources, e.g. one per trace session)
    pub core_sources: Vec<(String, String)>,
}

/// `strtoul(s, 0, 0)`: decimal, 0x-hex or 0-octal prefix, stops at the
/// first invalid character, 0 when there is none.
pub fn parse_c_ulong(s: &str) -> u64 {
    let s = s.trim();
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    let mut v: u64 = 0;
    for c in digits.chars() {
        match c.to_digit(radix) {
            Some(d) => v = v.wrapping_mul(radix as u64).wrapping_add(d as u64),
            None => break,
        }
    }
    v
}

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("snapshot file {0} not found")]
    NotFound(String),
    #[error("{0}")]
    Parse(String),
}

impl Snapshot {
    /// Read the snapshot in `dir`.
    pub fn read(dir: &str) -> Result<Snapshot, SnapshotError> {
        let mut d = dir.to_string();
        if !d.ends_with('/') {
            d.push('/');
        }
        let base = PathBuf::from(&d);
        let ss_path = base.join("snapshot.ini");
        let ss = Ini::load(&ss_path).map_err(|_| SnapshotError::NotFound(ss_path.display().to_string()))?;
        let mut snap = Snapshot { dir: d.clone(), ..Default::default() };

        for (_, file) in ss.section("device_list").map(|s| s.entries.clone()).unwrap_or_default() {
            let p = base.join(&file);
            let dev_ini = Ini::load(&p).map_err(|_| SnapshotError::NotFound(p.display().to_string()))?;
            snap.devices.push(parse_device(&dev_ini));
        }

        if let Some(meta) = ss.get("trace", "metadata") {
            let p = base.join(meta);
            let tr = Ini::load(&p).map_err(|_| SnapshotError::NotFound(p.display().to_string()))?;
            if let Some(list) = tr.get("trace_buffers", "buffers") {
                // the buffers listed, in the order their sections appear
                let listed: Vec<&str> = list.split(',').map(str::trim).filter(|b| !b.is_empty()).collect();
                for sec in tr.sections.iter().filter(|s| listed.iter().any(|b| b.eq_ignore_ascii_case(&s.name))) {
                    snap.buffers.push(BufferInfo {
                        name: sec.get("name").unwrap_or_default().to_string(),
                        file: sec.get("file").unwrap_or_default().to_string(),
                        format: sec.get("format").unwrap_or_default().to_string(),
                    });
                }
            }
            if let Some(sec) = tr.section("source_buffers") {
                for (k, v) in &sec.entries {
                    snap.source_buffers.insert(k.clone(), v.clone());
                }
            }
            if let Some(sec) = tr.section("core_trace_sources") {
                snap.core_sources.extend(sec.entries.iter().cloned());
            }
        }
        Ok(snap)
    }

    /// Names of the trace buffers, in trace.ini order.
    pub fn buffer_names(&self) -> Vec<String> {
        self.buffers.iter().map(|b| b.name.clone()).collect()
    }

    pub fn device(&self, name: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.name == name)
    }

    pub fn buffer(&self, name: &str) -> Option<&BufferInfo> {
        self.buffers.iter().find(|b| b.name == name)
    }

    /// The sources feeding buffer `name`, each with its core (empty for
    /// sources such as STM and ITM that have none), by source name.
    pub fn sources_of(&self, buffer: &str) -> Vec<(String, String)> {
        self.source_buffers
            .iter()
            .filter(|(_, b)| b.as_str() == buffer)
            .map(|(src, _)| {
                let core = self.core_sources.iter().find(|(_, s)| s == src).map(|(c, _)| c.clone()).unwrap_or_default();
                (src.clone(), core)
            })
            .collect()
    }

    pub fn path_of(&self, file: &str) -> String {
        format!("{}{}", self.dir, file)
    }
}

fn parse_device(ini: &Ini) -> Device {
    let mut dev = Device::default();
    if let Some(s) = ini.section("device") {
        dev.name = s.get("name").unwrap_or_default().to_string();
        dev.class = s.get("class").unwrap_or_default().to_string();
        dev.type_name = s.get("type").unwrap_or_default().to_string();
    }
    if let Some(s) = ini.section("regs") {
        for (k, v) in &s.entries {
            let name = k.split('(').next().unwrap_or("").trim().to_string();
            dev.regs.push((name, v.clone()));
        }
    }
    for sec in &ini.sections {
        // compare bytes: a name such as `dumé` has no char boundary at 4
        if sec.name.len() >= 4 && sec.name.as_bytes()[..4].eq_ignore_ascii_case(b"dump") {
            dev.dumps.push(DumpDef {
                path: sec.get("file").unwrap_or_default().to_string(),
                address: sec.get("address").map(parse_c_ulong).unwrap_or(0),
                length: sec.get("length").map(parse_c_ulong).unwrap_or(0) as usize,
                offset: sec.get("offset").map(parse_c_ulong).unwrap_or(0) as usize,
                space: sec.get("space").unwrap_or_default().to_string(),
            });
        }
    }
    dev
}

pub use crate::config::arch_profile;

/// Whether `dir/snapshot.ini` exists.
pub fn snapshot_found(dir: &str) -> bool {
    Path::new(dir).join("snapshot.ini").is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtoul_like_c() {
        assert_eq!(parse_c_ulong("0x28000EA1"), 0x28000EA1);
        assert_eq!(parse_c_ulong("16"), 16);
        assert_eq!(parse_c_ulong("010"), 8);
        assert_eq!(parse_c_ulong("0x"), 0);
        assert_eq!(parse_c_ulong("zz"), 0);
    }
}
