//! Cross-check of the instruction decoder against OpenCSD 1.8.0's own
//! decode logs in `../shared/conformance` (skipped when that folder is
//! absent; `$OCSD_SHARED` overrides its location).
//!
//! Every `OCSD_GEN_TRC_ELEM_INSTR_RANGE` line of an expected log is
//! re-walked through the snapshot's memory images with this decoder: the
//! instruction count, the last instruction's size, type, sub-type and
//! condition flag must match, every earlier instruction must be a
//! non-waypoint (except in ranges ended by a source address packet or an
//! exception), and
//! a taken direct branch followed directly by another
//! range (no address packet in between) must land where that range
//! starts, in its ISA.

use super::*;
use std::collections::HashMap;
use std::path::Path;

use crate::test_shared::shared_dir;

struct Mem {
    regions: Vec<(u64, Vec<u8>)>,
}

impl Mem {
    fn load(dir: &Path) -> Mem {
        let mut regions = Vec::new();
        let mut inis: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "ini"))
            .collect();
        inis.sort();
        for ini in inis {
            let text = std::fs::read_to_string(&ini).unwrap_or_default();
            let mut sect: HashMap<String, String> = HashMap::new();
            let mut flush = |sect: &mut HashMap<String, String>| {
                if let (Some(f), Some(a)) = (sect.get("file"), sect.get("address")) {
                    let addr = parse_num(a);
                    let off = sect.get("offset").map_or(0, |o| parse_num(o)) as usize;
                    if let Ok(data) = std::fs::read(dir.join(f)) {
                        let end = sect.get("length").map_or(data.len(), |l| {
                            (off + parse_num(l) as usize).min(data.len())
                        });
                        if off < end {
                            regions.push((addr, data[off..end].to_vec()));
                        }
                    }
                }
                sect.clear();
            };
            for line in text.lines() {
                let line = line.trim();
                if line.starts_with('[') {
                    flush(&mut sect);
                } else if let Some((k, v)) = line.split_once('=') {
                    sect.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
                }
            }
            flush(&mut sect);
        }
        Mem { regions }
    }

    /// Little-endian read of up to 4 bytes at `addr` (fewer at the end of
    /// a region, zero-extended); None when unmapped.
    fn read32(&self, addr: u64) -> Option<u32> {
        for (base, data) in &self.regions {
            if addr >= *base && addr - base < data.len() as u64 {
                let o = (addr - base) as usize;
                let mut v = 0u32;
                for (k, b) in data[o..].iter().take(4).enumerate() {
                    v |= (*b as u32) << (8 * k);
                }
                return Some(v);
            }
        }
        None
    }
}

fn parse_num(s: &str) -> u64 {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).unwrap_or(0),
        None => s.parse().unwrap_or(0),
    }
}

#[derive(Debug, Clone)]
struct Range {
    line: usize,
    id: String,
    start: u64,
    end: u64,
    num: u32,
    last_sz: u8,
    isa: ocsd_isa,
    exec: bool,
    ty: ocsd_instr_type,
    sub: ocsd_instr_subtype,
    cond: bool,
    src_addr: bool,
}

fn after<'a>(s: &'a str, pat: &str) -> Option<&'a str> {
    s.find(pat).map(|i| &s[i + pat.len()..])
}

fn parse_range(line_no: usize, line: &str) -> Option<Range> {
    let id = after(line, "ID:")?.split(';').next()?.to_string();
    let r = after(line, "INSTR_RANGE(exec range=0x")?;
    let (st, r) = r.split_once(":[0x")?;
    let (en, r) = r.split_once("] num_i(")?;
    let (num, r) = r.split_once(") last_sz(")?;
    let (sz, r) = r.split_once(") (ISA=")?;
    let (isa, r) = r.split_once(") ")?;
    let isa = match isa {
        "A32" => ocsd_isa_arm,
        "T32" => ocsd_isa_thumb2,
        "A64" => ocsd_isa_aarch64,
        _ => return None,
    };
    let exec = r.starts_with('E');
    let rest = &r[2..];
    let ty = [
        ("BR ", OCSD_INSTR_BR),
        ("iBR", OCSD_INSTR_BR_INDIRECT),
        ("ISB", OCSD_INSTR_ISB),
        ("DSB.DMB", OCSD_INSTR_DSB_DMB),
        ("WFI.WFE", OCSD_INSTR_WFI_WFE),
        ("TSTART", OCSD_INSTR_TSTART),
        ("---", OCSD_INSTR_OTHER),
    ]
    .iter()
    .find(|(p, _)| rest.starts_with(p))?
    .1;
    let sub = if rest.contains("b+link") {
        OCSD_S_INSTR_BR_LINK
    } else if rest.contains("A64:ret") {
        OCSD_S_INSTR_V8_RET
    } else if rest.contains("A64:eret") {
        OCSD_S_INSTR_V8_ERET
    } else if rest.contains("V7:impl ret") {
        OCSD_S_INSTR_V7_IMPLIED_RET
    } else {
        OCSD_S_INSTR_NONE
    };
    Some(Range {
        line: line_no,
        id,
        start: u64::from_str_radix(st, 16).ok()?,
        end: u64::from_str_radix(en, 16).ok()?,
        num: num.parse().ok()?,
        last_sz: sz.parse().ok()?,
        isa,
        exec,
        ty,
        sub,
        cond: rest.contains("<cond>"),
        src_addr: false,
    })
}

struct Settings {
    arch: ocsd_arch_version_t,
    wfi_wfe: bool,
    dsb_dmb: bool,
}

/// Checks one case; returns (ranges checked, list of mismatch messages).
fn check_case(snap: &Path, log: &str, set: &Settings, max_ranges: usize) -> (usize, Vec<String>) {
    let mem = Mem::load(snap);
    let mut errors = Vec::new();
    // Per-ID element sequence: Some(range) or None for anything that breaks
    // the "next range starts at the branch target" chain (other elements,
    // and address packets of any ID).
    let mut elems: HashMap<String, Vec<Option<Range>>> = HashMap::new();
    // Ranges that follow a source-address packet end at that address and
    // may hold not-taken waypoints (`src_addr` also marks ranges that end at
    // an exception return address).
    let mut after_src_addr = false;
    let mut n_ranges = 0;
    for (n, line) in log.lines().enumerate() {
        if n_ranges >= max_ranges {
            break;
        }
        if !line.contains("OCSD_GEN_TRC_ELEM_") {
            if line.starts_with("Idx:") {
                after_src_addr = line.contains("Source Address");
                if line.contains("Address") {
                    for seq in elems.values_mut() {
                        seq.push(None);
                    }
                }
            }
            continue;
        }
        let id = after(line, "ID:")
            .and_then(|r| r.split(';').next())
            .unwrap_or("")
            .to_string();
        let r = if line.contains("OCSD_GEN_TRC_ELEM_INSTR_RANGE(") {
            n_ranges += 1;
            let r = parse_range(n + 1, line);
            if r.is_none() {
                errors.push(format!("line {}: unparsed range: {line}", n + 1));
                continue;
            }
            r.map(|r| Range {
                src_addr: after_src_addr,
                ..r
            })
        } else {
            // A range that runs up to an exception's preferred return address
            // is walked without stopping at waypoints.
            if line.contains("OCSD_GEN_TRC_ELEM_EXCEPTION(") {
                if let Some(Some(prev)) = elems.get_mut(&id).and_then(|s| s.last_mut()) {
                    prev.src_addr = true;
                }
            }
            None
        };
        elems.entry(id).or_default().push(r);
    }

    let mut checked = 0;
    for seq in elems.values() {
        for (k, r) in seq.iter().enumerate() {
            let Some(r) = r else { continue };
            checked += 1;
            let mut info = ocsd_instr_info {
                pe_type: ocsd_arch_profile_t {
                    arch: set.arch,
                    profile: profile_CortexA,
                },
                isa: r.isa,
                dsb_dmb_waypoints: set.dsb_dmb as u8,
                wfi_wfe_branch: set.wfi_wfe as u8,
                ..Default::default()
            };
            let mut addr = r.start;
            let mut count = 0;
            let mut bad = None;
            while addr < r.end {
                let Some(op) = mem.read32(addr) else {
                    bad = Some(format!("unmapped {addr:#x}"));
                    break;
                };
                info.instr_addr = addr;
                info.opcode = op;
                info.isa = r.isa;
                decode_instruction(&mut info);
                count += 1;
                addr = addr.wrapping_add(info.instr_size as u64);
                if addr < r.end && info.type_ != OCSD_INSTR_OTHER && !r.src_addr {
                    bad = Some(format!(
                        "waypoint type {} inside range at {:#x} (op {:#010x})",
                        info.type_, info.instr_addr, info.opcode
                    ));
                    break;
                }
            }
            if bad.is_none() {
                let got = (
                    count,
                    info.instr_size,
                    info.type_,
                    info.sub_type,
                    info.is_conditional != 0,
                );
                let want = (r.num, r.last_sz, r.ty, r.sub, r.cond);
                if got != want || addr != r.end {
                    bad = Some(format!(
                        "last {:#x} op {:#010x}: got (n, sz, type, sub, cond) {got:?}, want {want:?}",
                        info.instr_addr, info.opcode
                    ));
                } else if r.exec && r.ty == OCSD_INSTR_BR {
                    if let Some(Some(next)) = seq.get(k + 1) {
                        if (next.start, next.isa) != (info.branch_addr, info.next_isa) {
                            bad = Some(format!(
                                "branch at {:#x} op {:#010x} to {:#x} isa {}, next range {:#x} isa {}",
                                info.instr_addr,
                                info.opcode,
                                info.branch_addr,
                                info.next_isa,
                                next.start,
                                next.isa
                            ));
                        }
                    }
                }
            }
            if let Some(b) = bad {
                errors.push(format!("line {} (ID {}): {b}", r.line, r.id));
            }
        }
    }
    (checked, errors)
}

/// The start of a gzipped log, up to `max_ranges` instruction range lines.
fn read_log_head(gz: &Path, max_ranges: usize) -> Option<String> {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut child = Command::new("zcat")
        .arg(gz)
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let mut log = String::new();
    let mut n = 0;
    for line in BufReader::new(child.stdout.take()?).lines() {
        let Ok(line) = line else { break };
        if line.contains("OCSD_GEN_TRC_ELEM_INSTR_RANGE(") {
            n += 1;
            if n > max_ranges {
                break;
            }
        }
        log.push_str(&line);
        log.push('\n');
    }
    let _ = child.kill();
    let _ = child.wait();
    Some(log)
}

#[test]
fn ranges_match_opencsd_logs() {
    let Some(shared) = shared_dir("instruction ranges against OpenCSD's logs") else { return };
    let conf = shared.join("conformance");
    let cases = std::fs::read_to_string(conf.join("cases.tsv")).unwrap();
    // The first ranges of each log by default (bugfix-exact-match alone has
    // 1.7 million); OCSD_INSTR_CHECK_ALL=1 checks every range.
    let max_ranges = if std::env::var_os("OCSD_INSTR_CHECK_ALL").is_some() {
        usize::MAX
    } else {
        20_000
    };
    let mut total = 0;
    let mut failures = Vec::new();
    for line in cases.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 4 || !f[3].contains("-decode") {
            continue;
        }
        let (name, snap) = (f[0], conf.join(f[1]));
        let gz = conf.join(format!("expected/{name}.ppl.gz"));
        let Some(log) = read_log_head(&gz, max_ranges) else {
            eprintln!("zcat unavailable: skipping");
            return;
        };
        if !log.contains("INSTR_RANGE") {
            continue;
        }
        let cpu_aa64 = std::fs::read_dir(&snap)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .any(|t| t.contains("type=ARM-AA64") || t.contains("type=ETE"));
        let set = Settings {
            arch: if cpu_aa64 { ARCH_AA64 } else { ARCH_V8 },
            wfi_wfe: log.contains("WFI.WFE"),
            dsb_dmb: log.contains("DSB.DMB"),
        };
        let (n, errs) = check_case(&snap, &log, &set, max_ranges);
        eprintln!("{name}: {n} ranges, {} mismatches", errs.len());
        for e in errs.iter().take(8) {
            eprintln!("    {e}");
        }
        total += n;
        if !errs.is_empty() {
            failures.push(name.to_string());
        }
    }
    eprintln!("{total} ranges checked");
    assert!(failures.is_empty(), "mismatches in {failures:?}");
}
