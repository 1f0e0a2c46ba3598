//! Checks the packet processor and packet text against OpenCSD 1.8.0's
//! logs in `../shared/conformance` (or `$OCSD_SHARED/conformance`): each
//! snapshot's trace buffer is run through the processor (formatted buffers
//! through a minimal frame demultiplexer here) and the packet lines are
//! compared with the expected log's packet lines.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::common::{ErrorLog, OcsdError, PacketOut, PacketProcessor, TracePacket};
use crate::ete::ocsd_ete_cfg;

pub(crate) use crate::test_shared::shared_dir;

/// Minimal ini reader: section -> list of (key, value), keys keep order.
fn read_ini(path: &Path) -> HashMap<String, Vec<(String, String)>> {
    let mut m: HashMap<String, Vec<(String, String)>> = HashMap::new();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut sect = String::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with(';') || l.starts_with('#') || l.is_empty() {
            continue;
        }
        if l.starts_with('[') && l.ends_with(']') {
            sect = l[1..l.len() - 1].trim().to_string();
            continue;
        }
        if let Some((k, v)) = l.split_once('=') {
            m.entry(sect.clone()).or_default().push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    m
}

fn get<'a>(ini: &'a HashMap<String, Vec<(String, String)>>, sect: &str, key: &str) -> Option<&'a str> {
    ini.get(sect)?.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

fn parse_num(s: &str) -> u32 {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u32::from_str_radix(h, 16).unwrap_or(0)
    } else {
        s.parse().unwrap_or(0)
    }
}

struct Source {
    _name: String,
    is_ete: bool,
    cfg: EtmV4Config,
}

/// The trace sources of a buffer, with their configurations.
fn sources_for_buffer(snap: &Path, buffer_name: &str) -> (PathBuf, String, Vec<Source>) {
    let snapshot = read_ini(&snap.join("snapshot.ini"));
    let trace_file = get(&snapshot, "trace", "metadata").unwrap_or("trace.ini").to_string();
    let trace = read_ini(&snap.join(trace_file));
    let mut file = PathBuf::new();
    let mut format = String::new();
    for (_, b) in trace.get("trace_buffers").and_then(|v| v.first()).map(|(_, v)| v.clone()).into_iter().flat_map(|v| {
        v.split(',').map(|s| (0, s.trim().to_string())).filter(|(_, s)| !s.is_empty()).collect::<Vec<_>>()
    }) {
        if get(&trace, &b, "name") == Some(buffer_name) {
            file = snap.join(get(&trace, &b, "file").unwrap_or(""));
            format = get(&trace, &b, "format").unwrap_or("").to_string();
        }
    }
    let src_names: Vec<String> = trace
        .get("source_buffers")
        .map(|v| v.iter().filter(|(_, b)| b == buffer_name).map(|(s, _)| s.clone()).collect())
        .unwrap_or_default();
    // device name -> ini
    let mut sources = Vec::new();
    for (_, dev_file) in snapshot.get("device_list").cloned().unwrap_or_default() {
        let dev = read_ini(&snap.join(&dev_file));
        let name = get(&dev, "device", "name").unwrap_or("").to_string();
        if !src_names.contains(&name) {
            continue;
        }
        let typ = get(&dev, "device", "type").unwrap_or("").to_string();
        let mut regs: HashMap<String, u32> = HashMap::new();
        for (k, v) in dev.get("regs").cloned().unwrap_or_default() {
            let k = k.split('(').next().unwrap_or("").trim().to_uppercase();
            regs.insert(k, parse_num(&v));
        }
        let r = |n: &str| regs.get(n).copied().unwrap_or(0);
        let is_ete = typ == "ETE";
        let cfg = if is_ete {
            EtmV4Config::from_ete(&ocsd_ete_cfg {
                reg_idr0: r("TRCIDR0"),
                reg_idr1: r("TRCIDR1"),
                reg_idr2: r("TRCIDR2"),
                reg_idr8: r("TRCIDR8"),
                reg_devarch: r("TRCDEVARCH"),
                reg_configr: r("TRCCONFIGR"),
                reg_traceidr: r("TRCTRACEIDR"),
                arch_ver: ARCH_AA64,
                core_prof: profile_CortexA,
            })
        } else {
            EtmV4Config::new(&ocsd_etmv4_cfg {
                reg_idr0: r("TRCIDR0"),
                reg_idr1: r("TRCIDR1"),
                reg_idr2: r("TRCIDR2"),
                reg_idr8: r("TRCIDR8"),
                reg_idr9: r("TRCIDR9"),
                reg_idr10: r("TRCIDR10"),
                reg_idr11: r("TRCIDR11"),
                reg_idr12: r("TRCIDR12"),
                reg_idr13: r("TRCIDR13"),
                reg_configr: r("TRCCONFIGR"),
                reg_traceidr: r("TRCTRACEIDR"),
                arch_ver: ARCH_V8,
                core_prof: profile_CortexA,
            })
        };
        if typ == "ETE" || typ.starts_with("ETM4") {
            sources.push(Source { _name: name, is_ete, cfg });
        }
    }
    (file, format, sources)
}

/// Collects packet lines as the lister prints them.
struct Lines {
    id: u8,
    with_raw: bool,
    lines: Vec<String>,
    pending_err: String,
    /// The processor's errors are in the log: it is the top component
    /// (packets listed without -decode); with a decoder above it OpenCSD
    /// attaches no logger to it.
    logs: bool,
}

impl ErrorLog for Lines {
    fn log_error(&mut self, component: &str, err: &OcsdError) {
        if self.logs {
            self.pending_err = format!("{} : {}", component, err.details());
        }
    }
    fn log_message(&mut self, _: &str, _: ocsd_err_severity_t, _: &str) {}
}

impl Lines {
    fn push(&mut self, idx: u32, pkt: &ocsd_etmv4_i_pkt, raw: &[u8]) {
        let mut s = std::mem::take(&mut self.pending_err);
        s.push_str(&format!("Idx:{}; ID:{:x};", idx, self.id));
        if self.with_raw {
            s.push_str(" [");
            for b in raw {
                s.push_str(&format!("0x{:02x} ", b));
            }
            s.push_str("];");
        }
        s.push('\t');
        pkt.write_str(&mut s);
        self.lines.push(s);
    }
}

impl PacketOut<ocsd_etmv4_i_pkt> for Lines {
    fn packet(&mut self, idx: u32, pkt: &ocsd_etmv4_i_pkt, raw: &[u8]) -> ocsd_datapath_resp_t {
        self.push(idx, pkt, raw);
        OCSD_RESP_CONT
    }
    fn raw_only(&mut self, idx: u32, pkt: &ocsd_etmv4_i_pkt, raw: &[u8]) {
        if self.with_raw {
            self.push(idx, pkt, raw);
        }
    }
    fn logger(&mut self) -> &mut dyn ErrorLog {
        self
    }
}

/// Expected log text (gunzipped with the system's zcat).
fn expected_log(shared: &Path, case: &str) -> Option<String> {
    let p = shared.join("conformance/expected").join(format!("{}.ppl.gz", case));
    let out = std::process::Command::new("zcat").arg(&p).output().ok()?;
    String::from_utf8(out.stdout).ok()
}

fn is_pkt_line(l: &str) -> bool {
    (l.starts_with("Idx:") || l.starts_with("PKTP_ETMV4I")) && l.contains("\tI_")
}

/// Per-ID demultiplexer for CoreSight formatted frames (16-byte frames, no
/// synchronisation packets): calls `f(id, index, run)` for each run of
/// bytes of one ID in a frame.
fn demux_frames(data: &[u8], mut f: impl FnMut(u8, u32, &[u8])) {
    let mut cur_id: u8 = 0;
    let mut run: Vec<u8> = Vec::new();
    let mut run_idx = 0u32;
    for (fi, frame) in data.chunks_exact(16).enumerate() {
        let base = (fi * 16) as u32;
        let flags = frame[15];
        let mut emit = |id: u8, run: &mut Vec<u8>, run_idx: u32| {
            if !run.is_empty() {
                f(id, run_idx, run);
                run.clear();
            }
        };
        let mut delayed_id: Option<u8> = None;
        for i in 0..8 {
            let b = frame[2 * i];
            let flag = (flags >> i) & 1;
            if b & 1 == 1 {
                // ID change
                let new_id = b >> 1;
                if flag == 1 && i < 7 {
                    // new ID applies after the next byte
                    delayed_id = Some(new_id);
                } else {
                    emit(cur_id, &mut run, run_idx);
                    cur_id = new_id;
                }
            } else {
                if run.is_empty() {
                    run_idx = base + 2 * i as u32;
                }
                run.push(b | flag);
            }
            if i < 7 {
                let b2 = frame[2 * i + 1];
                if run.is_empty() {
                    run_idx = base + 2 * i as u32;
                }
                run.push(b2);
                if let Some(id) = delayed_id.take() {
                    emit(cur_id, &mut run, run_idx);
                    cur_id = id;
                }
            }
        }
        emit(cur_id, &mut run, run_idx);
    }
}

/// Runs one case; returns (matched lines, expected lines, first mismatch).
fn run_case(shared: &Path, case: &str, snap_rel: &str, args: &str) -> Option<(usize, usize, String)> {
    let exp = expected_log(shared, case)?;
    let logs = !args.split_whitespace().any(|a| a == "-decode" || a == "-decode_only");
    if !exp.contains("Protocol printer ETMV4I") && !exp.contains("Protocol printer ETE") {
        return None;
    }
    let buffer = exp.lines().find_map(|l| l.strip_prefix("Using ")?.strip_suffix(" as trace source"))?.to_string();
    let snap = shared.join("conformance").join(snap_rel);
    let (file, format, sources) = sources_for_buffer(&snap, &buffer);
    let mut data = std::fs::read(&file).ok()?;
    // -multi_session: every buffer in turn, resetting the processor between
    let sessions: Vec<String> = exp
        .lines()
        .filter_map(|l| l.split("Source name = ").nth(1)?.strip_suffix('.').map(|s| s.to_string()))
        .collect();
    let mut later_sessions: Vec<Vec<u8>> = Vec::new();
    if !sessions.is_empty() {
        for (i, name) in sessions.iter().enumerate() {
            let (f, _, _) = sources_for_buffer(&snap, name);
            let d = std::fs::read(&f).ok()?;
            if i == 0 {
                data = d;
            } else {
                later_sessions.push(d);
            }
        }
    }
    // decoder errors are logged without a newline before the next line
    let exp_lines: Vec<&str> = exp
        .lines()
        .map(|l| if l.starts_with("DCD_") { l.find("Idx:").map(|p| &l[p..]).unwrap_or(l) } else { l })
        .filter(|l| is_pkt_line(l))
        .collect();
    let with_raw = exp_lines.iter().any(|l| l.contains("; [0x"));

    let mut got: Vec<String> = Vec::new();
    if format == "source_data" {
        let src = sources.first()?;
        // the lister prints the ID it found in the first packet line
        let id = exp_lines
            .first()
            .and_then(|l| l.split("ID:").nth(1))
            .and_then(|s| u8::from_str_radix(s.split(';').next()?, 16).ok())
            .unwrap_or(0);
        let mut lines = Lines { id, with_raw, lines: Vec::new(), pending_err: String::new(), logs };
        let mut proc = EtmV4IPktProc::new(id as i32, src.cfg);
        let (_, n) = proc.process_data(0, &data, &mut lines);
        assert_eq!(n, data.len());
        proc.eot(&mut lines);
        for d in &later_sessions {
            proc.reset(0);
            let (_, n) = proc.process_data(0, d, &mut lines);
            assert_eq!(n, d.len());
            proc.eot(&mut lines);
        }
        let _ = src.is_ete;
        got = lines.lines;
    } else if format == "coresight" {
        let mut procs: HashMap<u8, (EtmV4IPktProc, Lines)> = HashMap::new();
        for s in &sources {
            let id = s.cfg.trace_id();
            procs.insert(id, (EtmV4IPktProc::new(id as i32, s.cfg), Lines { id, with_raw, lines: Vec::new(), pending_err: String::new(), logs }));
        }
        demux_frames(&data, |id, idx, run| {
            if let Some((p, l)) = procs.get_mut(&id) {
                p.process_data(idx, run, l);
                got.append(&mut l.lines);
            }
        });
        for (_, (p, l)) in procs.iter_mut() {
            p.eot(l);
            got.append(&mut l.lines);
        }
    } else {
        return None;
    }

    // The frame demultiplexer here is not OpenCSD's: it may number trace
    // indexes differently, so formatted cases compare lines without them.
    let strip = |l: &str| -> String {
        if format == "coresight" {
            let mut s = l.to_string();
            if let Some(p) = s.find("Idx:") {
                if let Some(e) = s[p..].find(';') {
                    s.replace_range(p..p + e + 1, "");
                }
            }
            if let Some(p) = s.find("TrcIdx=") {
                if let Some(e) = s[p..].find(';') {
                    s.replace_range(p..p + e + 1, "");
                }
            }
            s
        } else {
            l.to_string()
        }
    };
    let mut matched = 0;
    let mut first_diff = String::new();
    for (i, e) in exp_lines.iter().enumerate() {
        match got.get(i) {
            Some(g) if strip(g) == strip(e) => matched += 1,
            g => {
                if first_diff.is_empty() {
                    first_diff = format!("line {}:\n  exp: {}\n  got: {}", i, e, g.map(|s| s.as_str()).unwrap_or("<none>"));
                }
            }
        }
    }
    if got.len() > exp_lines.len() && first_diff.is_empty() {
        first_diff = format!("extra output: {}", got[exp_lines.len()]);
    }
    Some((matched, exp_lines.len(), first_diff))
}

fn cases(shared: &Path) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(shared.join("conformance/cases.tsv")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            if f.len() < 4 {
                return None;
            }
            Some((f[0].to_string(), f[1].to_string(), f[3].to_string()))
        })
        .collect()
}

#[test]
fn packet_lines_match_opencsd_logs() {
    let Some(shared) = shared_dir("etmv4 packet lines") else { return };
    let mut failures = Vec::new();
    let mut total = (0, 0);
    for (name, snap, args) in cases(&shared) {
        if args.contains("dstream") {
            continue; // DSTREAM framing: checked through the lister
        }
        let Some((m, n, diff)) = run_case(&shared, &name, &snap, &args) else { continue };
        if n == 0 {
            continue;
        }
        total.0 += m;
        total.1 += n;
        eprintln!("{:40} {}/{}", name, m, n);
        if m != n || !diff.is_empty() {
            failures.push(format!("{}: {}/{} {}", name, m, n, diff));
        }
    }
    eprintln!("total {}/{}", total.0, total.1);
    assert!(failures.is_empty(), "packet mismatches:\n{}", failures.join("\n"));
}
