//! The address spaces of the traced processes, from the MMAP / MMAP2 /
//! COMM / FORK / ITRACE_START records, and the binaries behind them, found
//! as perf finds them: `--symfs DIR` + path, the path itself, then perf's
//! build-id cache (`~/.debug/.build-id/xx/yyyy…/elf`).
//!
//! Decoding uses the state at the end of the recording (what perf's
//! timeless decode sees).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::file::{PerfData, Sideband};

/// A file mapping.
#[derive(Debug, Clone)]
pub struct Map {
    pub start: u64,
    /// Exclusive end.
    pub end: u64,
    pub pgoff: u64,
    /// Index into [`Spaces::binaries`].
    pub bin: usize,
}

/// A binary the trace may run through.
#[derive(Debug)]
pub struct Binary {
    pub path: String,
    pub build_id: Option<Vec<u8>>,
    /// Contents, once looked up (None inside: not found).
    pub data: Option<Option<Arc<Vec<u8>>>>,
    pub found_at: Option<PathBuf>,
    /// PT_LOAD segments (file offset, vaddr, file size) and the first
    /// one's vaddr (AutoFDO's base).
    pub loads: Vec<(u64, u64, u64)>,
}

impl Binary {
    /// simpleperf's "vaddr in file" of file offset `off`.
    pub fn vaddr_of_offset(&self, off: u64) -> u64 {
        for &(o, v, sz) in &self.loads {
            if off >= o && off < o + sz.max(1) {
                return off - o + v;
            }
        }
        // no segment (or not an ELF): the offset itself
        off
    }
    pub fn first_load_vaddr(&self) -> u64 {
        self.loads.first().map_or(0, |l| l.1)
    }
    pub fn build_id_hex(&self) -> String {
        self.build_id.as_ref().map(|b| b.iter().map(|x| format!("{:02x}", x)).collect()).unwrap_or_default()
    }
}

pub struct Spaces {
    by_pid: HashMap<i32, Vec<Map>>,
    kernel: Vec<Map>,
    tid_to_pid: HashMap<i32, i32>,
    pub binaries: Vec<Binary>,
    symfs: Option<PathBuf>,
    pub warnings: Vec<String>,
    /// First ITRACE_START thread per CPU (context when the trace has none).
    pub itrace_tid: HashMap<u32, i32>,
    /// Last command name per thread (COMM records).
    comm: HashMap<i32, String>,
    /// The last read's thread and mapping (reads come in runs).
    last: Option<(i32, Map)>,
}

impl Spaces {
    pub fn new(pd: &PerfData, symfs: Option<&Path>) -> Spaces {
        let mut s = Spaces {
            by_pid: HashMap::new(),
            kernel: Vec::new(),
            tid_to_pid: HashMap::new(),
            binaries: Vec::new(),
            symfs: symfs.map(|p| p.to_path_buf()),
            warnings: Vec::new(),
            itrace_tid: HashMap::new(),
            comm: HashMap::new(),
            last: None,
        };
        let mut bin_index: HashMap<String, usize> = HashMap::new();
        for r in &pd.sideband {
            match &r.event {
                Sideband::Mmap(m) => {
                    if m.len == 0 || !m.exec {
                        continue;
                    }
                    let bin = *bin_index.entry(m.path.clone()).or_insert_with(|| {
                        let build_id = m.build_id.clone().or_else(|| pd.build_ids.get(&m.path).cloned());
                        s.binaries.push(Binary { path: m.path.clone(), build_id, data: None, found_at: None, loads: Vec::new() });
                        s.binaries.len() - 1
                    });
                    let map = Map { start: m.start, end: m.start.saturating_add(m.len), pgoff: m.pgoff, bin };
                    let list = if m.pid == -1 || (m.kernel && m.pid <= 0) { &mut s.kernel } else { s.by_pid.entry(m.pid).or_default() };
                    // a new mapping replaces what it overlaps
                    list.retain(|o| o.end <= map.start || o.start >= map.end);
                    let at = list.partition_point(|o| o.start < map.start);
                    list.insert(at, map);
                    if m.pid > 0 {
                        s.tid_to_pid.insert(m.tid, m.pid);
                    }
                }
                Sideband::Comm { pid, tid, name, .. } => {
                    s.tid_to_pid.insert(*tid, *pid);
                    s.comm.insert(*tid, name.clone());
                }
                Sideband::Fork { pid, tid, .. } => {
                    s.tid_to_pid.insert(*tid, *pid);
                }
                Sideband::ItraceStart { pid, tid } => {
                    s.tid_to_pid.insert(*tid, *pid);
                    if let Some(cpu) = r.common.cpu {
                        s.itrace_tid.entry(cpu).or_insert(*tid);
                    }
                }
                _ => {}
            }
        }
        s
    }

    /// The thread's command name (its process's, else `tid N`).
    pub fn comm_of(&self, tid: i32) -> String {
        self.comm
            .get(&tid)
            .or_else(|| self.comm.get(&self.pid_of(tid)))
            .cloned()
            .unwrap_or_else(|| if tid < 0 { "[unknown]".into() } else { format!("tid {}", tid) })
    }

    pub fn pid_of(&self, tid: i32) -> i32 {
        self.tid_to_pid.get(&tid).copied().unwrap_or(tid)
    }

    /// The mapping holding `addr` for thread `tid` (its process's, then the
    /// kernel's).
    pub fn find_map(&self, tid: i32, addr: u64) -> Option<&Map> {
        let find = |v: &'_ Vec<Map>| -> Option<usize> {
            let i = v.partition_point(|m| m.start <= addr);
            (i > 0 && addr < v[i - 1].end).then(|| i - 1)
        };
        if let Some(v) = self.by_pid.get(&self.pid_of(tid)) {
            if let Some(i) = find(v) {
                return Some(&v[i]);
            }
        }
        find(&self.kernel).map(|i| &self.kernel[i])
    }

    /// The contents of binary `bin`, looked up once (a warning when absent).
    pub fn load(&mut self, bin: usize) -> Option<Arc<Vec<u8>>> {
        let b = self.binaries.get_mut(bin)?;
        if let Some(d) = &b.data {
            return d.clone();
        }
        let mut tried = Vec::new();
        let mut cands: Vec<PathBuf> = Vec::new();
        let rel = b.path.trim_start_matches('/');
        if let Some(fs) = &self.symfs {
            cands.push(fs.join(rel));
        } else {
            cands.push(PathBuf::from(&b.path));
        }
        if let Some(id) = &b.build_id {
            let hex: String = id.iter().map(|x| format!("{:02x}", x)).collect();
            let trimmed = hex.trim_end_matches("00000000");
            if let Some(home) = std::env::var_os("HOME") {
                for h in [hex.as_str(), trimmed] {
                    if h.len() > 2 {
                        cands.push(Path::new(&home).join(".debug/.build-id").join(&h[..2]).join(&h[2..]).join("elf"));
                    }
                }
            }
        }
        cands.dedup();
        let mut found = None;
        for c in cands {
            tried.push(c.display().to_string());
            if let Ok(bytes) = std::fs::read(&c) {
                if let Some(want) = &b.build_id {
                    if let Some(have) = elf_build_id(&bytes) {
                        if !build_ids_match(want, &have) {
                            self.warnings.push(format!(
                                "warning: {}: build ID {} does not match the recording's {}; not used",
                                c.display(),
                                hex_of(&have),
                                hex_of(want)
                            ));
                            continue;
                        }
                    }
                }
                b.loads = elf_loads(&bytes);
                b.found_at = Some(c);
                found = Some(Arc::new(bytes));
                break;
            }
        }
        if found.is_none() {
            self.warnings.push(format!(
                "warning: {}{}: binary not found (looked at {}); its code is not decoded",
                b.path,
                b.build_id.as_ref().map(|id| format!(" (build ID {})", hex_of(id))).unwrap_or_default(),
                tried.join(", ")
            ));
        }
        b.data = Some(found.clone());
        found
    }

    /// Read target memory of thread `tid` at `addr`: bytes read.
    pub fn read(&mut self, tid: i32, addr: u64, buf: &mut [u8]) -> usize {
        let m = match &self.last {
            Some((t, m)) if *t == tid && addr >= m.start && addr < m.end => m.clone(),
            _ => {
                let Some(m) = self.find_map(tid, addr).cloned() else { return 0 };
                self.last = Some((tid, m.clone()));
                m
            }
        };
        let Some(data) = self.load(m.bin) else { return 0 };
        let n = (buf.len() as u64).min(m.end - addr) as usize;
        let off = addr - m.start + m.pgoff;
        if off >= data.len() as u64 {
            return 0;
        }
        let off = off as usize;
        let n = n.min(data.len() - off);
        buf[..n].copy_from_slice(&data[off..off + n]);
        n
    }
}

fn hex_of(b: &[u8]) -> String {
    b.iter().map(|x| format!("{:02x}", x)).collect()
}

/// simpleperf pads build IDs to 20 bytes with zeros.
fn build_ids_match(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().max(b.len());
    (0..n).all(|i| a.get(i).copied().unwrap_or(0) == b.get(i).copied().unwrap_or(0))
}

/// The GNU build ID note of an ELF file.
pub fn elf_build_id(bytes: &[u8]) -> Option<Vec<u8>> {
    let elf = goblin::elf::Elf::parse(bytes).ok()?;
    if let Some(notes) = elf.iter_note_headers(bytes) {
        for n in notes.flatten() {
            if n.n_type == goblin::elf::note::NT_GNU_BUILD_ID && n.name == "GNU" {
                return Some(n.desc.to_vec());
            }
        }
    }
    if let Some(notes) = elf.iter_note_sections(bytes, None) {
        for n in notes.flatten() {
            if n.n_type == goblin::elf::note::NT_GNU_BUILD_ID && n.name == "GNU" {
                return Some(n.desc.to_vec());
            }
        }
    }
    None
}

/// PT_LOAD segments: (file offset, vaddr, file size).
pub fn elf_loads(bytes: &[u8]) -> Vec<(u64, u64, u64)> {
    match goblin::elf::Elf::parse_header(bytes) {
        Ok(_) => {}
        Err(_) => return Vec::new(),
    }
    let Ok(elf) = goblin::elf::Elf::parse(bytes) else { return Vec::new() };
    elf.program_headers
        .iter()
        .filter(|p| p.p_type == goblin::elf::program_header::PT_LOAD)
        .map(|p| (p.p_offset, p.p_vaddr, p.p_filesz))
        .collect()
}
