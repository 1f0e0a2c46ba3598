//! The address spaces of the traced processes, from the MMAP / MMAP2 /
//! COMM / FORK / ITRACE_START records, and the binaries behind them, found
//! as perf finds them: `--symfs DIR` + path, the path itself, then perf's
//! build-id cache (`~/.debug/.build-id/xx/yyyy…/elf`). The kernel
//! (`[kernel.kallsyms]`) is looked for as perf looks for its vmlinux:
//! `--vmlinux FILE` alone when given; else the build-id cache, then perf's
//! vmlinux path list (`vmlinux`, `/boot/vmlinux`, `/boot/vmlinux-RELEASE`,
//! `/usr/lib/debug/boot/vmlinux-RELEASE`, ...; RELEASE from the recording's
//! `os release`), each under `--symfs` when given and only with a matching
//! build ID. A `kallsyms` in the build-id cache has symbols but no code:
//! kernel trace is then not followed. One warning when no vmlinux is found.
//!
//! Decoding uses the state at the end of the recording (what perf's
//! timeless decode sees).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use goblin::elf::Elf;

use rustc_hash::FxHashMap;
use super::file::{BuildId, PathTable, PerfData, Sideband, SimpleperfFile};

/// Maps keyed by pid / tid, looked up on every memory read that misses the
/// last mapping.
type IdMap<V> = FxHashMap<i32, V>;

/// A file mapping.
#[derive(Debug, Clone, Copy)]
pub struct Map {
    pub start: u64,
    /// Exclusive end.
    pub end: u64,
    pub pgoff: u64,
    /// Index into [`Spaces::binaries`].
    pub bin: usize,
}

/// A binary the trace may run through.
#[derive(Debug, Clone)]
pub struct Binary {
    pub path: String,
    pub build_id: Option<Vec<u8>>,
    /// Contents, once looked up (None inside: not found).
    pub data: Option<Option<Arc<Vec<u8>>>>,
    pub found_at: Option<PathBuf>,
    /// PT_LOAD segments (file offset, vaddr, file size) and the first
    /// one's vaddr (AutoFDO's base).
    pub loads: Vec<(u64, u64, u64)>,
    /// The kernel image: its mapping is by address (vmlinux's virtual
    /// addresses, moved by `reloc`), not by file offset.
    pub kernel: bool,
    /// Kernel: the reference symbol of the MMAP record (`_stext` of
    /// `[kernel.kallsyms]_stext`) and its run-time address (the record's
    /// page offset; 0 when the recording hid it).
    pub ref_sym: Option<(String, u64)>,
    /// Kernel: run-time address minus vmlinux address (KASLR), from the
    /// reference symbol.
    pub reloc: u64,
    /// Kernel: vmlinux's `.text` (address, file offset). perf maps the
    /// kernel from there on (`dso__process_kernel_symbol`): an address
    /// at or above `.text` reads the file at the same distance from the
    /// section's offset, up to the end of the file.
    pub text: Option<(u64, u64)>,
    /// The lowest executable PT_LOAD segment (vaddr, file offset) of the
    /// ELF file found; simpleperf's FEAT_FILE2 entry wins over it.
    pub exec_min: Option<(u64, u64)>,
    pub simpleperf: Option<SimpleperfFile>,
    /// A kernel module (a kernel-space mapping other than the kernel).
    pub module: bool,
}

impl Binary {
    /// A user-space binary known by its path (and build ID), not looked
    /// up yet.
    pub fn new(path: &str, build_id: Option<Vec<u8>>) -> Binary {
        Binary {
            path: path.to_string(),
            build_id,
            data: None,
            found_at: None,
            loads: Vec::new(),
            kernel: false,
            ref_sym: None,
            reloc: 0,
            text: None,
            exec_min: None,
            simpleperf: None,
            module: false,
        }
    }
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
    /// The ELF (link-time) address of run-time address `addr` in mapping
    /// `m` of this binary (simpleperf's `ToVaddrInFile`).
    pub fn vaddr_in_file(&self, m: &Map, addr: u64) -> u64 {
        if self.kernel {
            addr.wrapping_sub(self.reloc)
        } else {
            self.vaddr_of_offset(m.pgoff).wrapping_add(addr - m.start)
        }
    }
    /// The file offset holding run-time address `addr` of mapping `m`, and
    /// how many bytes from there belong to the same mapping / segment.
    pub fn file_offset(&self, m: &Map, addr: u64) -> Option<(u64, u64)> {
        if self.kernel {
            let v = addr.wrapping_sub(self.reloc);
            if let Some((ta, to)) = self.text {
                return (v >= ta).then(|| (v - ta + to, u64::MAX));
            }
            self.loads.iter().find(|&&(_, pv, sz)| v >= pv && v - pv < sz).map(|&(o, pv, sz)| (o + (v - pv), sz - (v - pv)))
        } else {
            Some((addr - m.start + m.pgoff, m.end - addr))
        }
    }
    /// simpleperf's `IpToVaddrInFile` for run-time address `addr` in
    /// mapping `m`:
    /// - ELF file: `addr - start + pgoff`, moved from the file offset of
    ///   the lowest executable segment to its address (from the
    ///   recording's FEAT_FILE2 entry, else the ELF file; without either,
    ///   `addr - start`);
    /// - kernel: `addr - start + .text address` when the map has a start
    ///   and vmlinux a `.text`, else `addr`;
    /// - kernel module: `addr - start - memory offset + min vaddr` (both
    ///   from FEAT_FILE2, else 0).
    pub fn simpleperf_vaddr(&self, m: &Map, addr: u64) -> u64 {
        use super::file::SimpleperfDso as D;
        if self.kernel {
            return match self.text {
                Some((ta, _)) if m.start != 0 => addr.wrapping_sub(m.start).wrapping_add(ta),
                _ => addr,
            };
        }
        match self.simpleperf {
            Some(f) if f.kind == D::KernelModule => addr.wrapping_sub(m.start).wrapping_sub(f.offset_of_min_vaddr).wrapping_add(f.min_vaddr),
            _ if self.module => addr.wrapping_sub(m.start),
            Some(f) if f.kind == D::Elf => {
                addr.wrapping_sub(m.start).wrapping_add(m.pgoff).wrapping_sub(f.offset_of_min_vaddr).wrapping_add(f.min_vaddr)
            }
            _ => match self.exec_min {
                Some((v, o)) => addr.wrapping_sub(m.start).wrapping_add(m.pgoff).wrapping_sub(o).wrapping_add(v),
                None => addr.wrapping_sub(m.start),
            },
        }
    }
    pub fn build_id_hex(&self) -> String {
        self.build_id.as_ref().map(|b| b.iter().map(|x| format!("{:02x}", x)).collect()).unwrap_or_default()
    }
}

pub struct Spaces {
    by_pid: IdMap<Vec<Map>>,
    /// The lowest start and highest end of the processes' mappings
    /// (`by_pid`; start > end: none): outside it, what a read finds does
    /// not depend on the thread.
    per_process: (u64, u64),
    kernel: Vec<Map>,
    tid_to_pid: IdMap<i32>,
    pub binaries: Vec<Binary>,
    symfs: Option<PathBuf>,
    /// `--vmlinux FILE`: the kernel image to use (only that one).
    vmlinux: Option<PathBuf>,
    /// The recording's kernel release (for perf's vmlinux path list).
    os_release: Option<String>,
    pub warnings: Vec<String>,
    /// First ITRACE_START thread per CPU (context when the trace has none).
    pub itrace_tid: HashMap<u32, i32>,
    /// Last command name per thread (COMM records).
    comm: FxHashMap<i32, String>,
    /// The last read's thread and mapping (reads come in runs).
    last: Option<(i32, Map)>,
    /// simpleperf's `--symdir`: folders searched recursively for ELF
    /// files by build ID (indexed on first use).
    symdirs: Vec<PathBuf>,
    symdir_index: std::sync::OnceLock<Vec<([u8; 20], PathBuf)>>,
    /// The recording's build IDs and simpleperf file table by path, for
    /// the binaries looked up (none for spaces built by hand).
    build_ids: Option<Arc<PathTable<BuildId>>>,
    simpleperf_files: Option<Arc<PathTable<SimpleperfFile>>>,
}

/// A binary as looked up by [`Spaces::look_up`]: its contents and what
/// was taken from its ELF file (`data` set), and the warnings the look-up
/// gave (absent, build ID not matching).
pub type LookedUp = (Binary, Vec<String>);

impl Spaces {
    pub fn new(pd: &PerfData, symfs: Option<&Path>) -> Spaces {
        Self::with_vmlinux(pd, symfs, None)
    }

    fn empty(symfs: Option<&Path>, vmlinux: Option<&Path>) -> Spaces {
        Spaces {
            by_pid: IdMap::default(),
            per_process: (u64::MAX, 0),
            kernel: Vec::new(),
            tid_to_pid: IdMap::default(),
            binaries: Vec::new(),
            symfs: symfs.map(|p| p.to_path_buf()),
            vmlinux: vmlinux.map(|p| p.to_path_buf()),
            os_release: None,
            warnings: Vec::new(),
            itrace_tid: HashMap::new(),
            comm: FxHashMap::default(),
            last: None,
            symdirs: Vec::new(),
            symdir_index: std::sync::OnceLock::new(),
            build_ids: None,
            simpleperf_files: None,
        }
    }

    /// Address spaces built by hand (tests, other front ends): the
    /// binaries, and mappings per process (pid -1: the kernel's), each
    /// inserted as an MMAP record would be. Binaries without contents are
    /// taken as looked up and not found.
    pub fn from_parts(binaries: Vec<Binary>, maps: Vec<(i32, Map)>) -> Spaces {
        let mut s = Spaces::empty(None, None);
        s.binaries = binaries;
        for b in &mut s.binaries {
            if b.data.is_none() {
                b.data = Some(None);
            }
        }
        for (pid, m) in maps {
            let list = if pid == -1 { &mut s.kernel } else { s.by_pid.entry(pid).or_default() };
            insert_map(list, m);
        }
        s.per_process = envelope(&s.by_pid);
        s
    }

    /// The address space of a decode without a recording: the files the
    /// decoder maps as memory (ELF files and memory dumps), for every
    /// thread, each by its own name (an ELF file's link-time addresses
    /// from its PT_LOAD segments; a dump's are its file offsets).
    pub fn from_files(files: &[crate::api::MappedFile]) -> Spaces {
        let mut binaries = Vec::new();
        let mut maps = Vec::new();
        for f in files {
            let mut b = Binary::new(&f.name, None);
            // (a file that cannot be read whole: as one not found)
            let data = f.data().ok();
            if let (true, Some(data)) = (f.elf, &data) {
                if let Ok(elf) = Elf::parse(data) {
                    b.loads = loads_of(&elf);
                    b.exec_min = Some(min_exec_of(&elf));
                    b.build_id = build_id_of(&elf, data);
                }
            }
            b.data = Some(data);
            let bin = binaries.len();
            binaries.push(b);
            for &(start, end, pgoff) in &f.maps {
                maps.push((-1, Map { start, end, pgoff, bin }));
            }
        }
        Spaces::from_parts(binaries, maps)
    }

    /// As [`Spaces::new`], with perf's `--vmlinux FILE`.
    pub fn with_vmlinux(pd: &PerfData, symfs: Option<&Path>, vmlinux: Option<&Path>) -> Spaces {
        let mut s = Spaces::empty(symfs, vmlinux);
        s.os_release = pd.os_release.clone();
        s.build_ids = Some(pd.build_ids.clone());
        s.simpleperf_files = Some(pd.simpleperf_files.clone());
        // at most a binary per mapping: sized once (see `PerfData::from_bytes`)
        s.binaries.reserve(pd.sideband.len());
        let mut bin_index: FxHashMap<&str, usize> = FxHashMap::with_capacity_and_hasher(pd.sideband.len(), Default::default());
        // each list's mappings in record order, laid out at the end
        let mut kernel = Vec::new();
        let mut by_pid: IdMap<Vec<Map>> = IdMap::default();
        for r in &pd.sideband {
            match &r.event {
                Sideband::Mmap(m) => {
                    if m.len == 0 || !m.exec {
                        continue;
                    }
                    let bin = match bin_index.get(m.path.as_str()) {
                        Some(b) => *b,
                        None => {
                            // the kernel's MMAP is named after its reference
                            // symbol: `[kernel.kallsyms]_stext`
                            let kernel = m.path.starts_with(KERNEL_NAME);
                            let key = if kernel { KERNEL_NAME } else { m.path.as_str() };
                            // the recording's build-ID and simpleperf tables
                            // are consulted when the binary is looked up
                            // (`look_up`: most are never read)
                            let ref_sym = m.path.strip_prefix(KERNEL_NAME).filter(|n| kernel && !n.is_empty()).map(|n| (n.to_string(), m.pgoff));
                            let mut b = Binary::new(key, m.build_id.clone());
                            b.kernel = kernel;
                            b.ref_sym = ref_sym;
                            b.module = !kernel && m.kernel;
                            s.binaries.push(b);
                            bin_index.insert(&m.path, s.binaries.len() - 1);
                            s.binaries.len() - 1
                        }
                    };
                    let map = Map { start: m.start, end: m.start.saturating_add(m.len), pgoff: m.pgoff, bin };
                    if m.pid == -1 || (m.kernel && m.pid <= 0) {
                        kernel.push(map);
                    } else {
                        by_pid.entry(m.pid).or_default().push(map);
                    }
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
        s.kernel = maps_in_order(kernel);
        s.by_pid = by_pid.into_iter().map(|(pid, v)| (pid, maps_in_order(v))).collect();
        s.per_process = envelope(&s.by_pid);
        s
    }

    /// Whether what a read at `addr` finds (its bytes, or the hole of
    /// [`Spaces::hole_at_with`] around it) is the same whatever the
    /// thread: no process has a mapping at or around it (kernel addresses
    /// always, as no process maps there).
    pub fn thread_free(&self, addr: u64) -> bool {
        let (lo, hi) = self.per_process;
        lo > hi || addr < lo || addr >= hi
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

    /// [`Spaces::find_map`], with the addresses `lo..=hi` around `addr`
    /// for which it gives the same mapping (a kernel mapping's, cut by the
    /// gap between the process's mappings around `addr`).
    pub fn find_map_span(&self, tid: i32, addr: u64) -> Option<(Map, u64, u64)> {
        let place = |v: &[Map]| place_in(v, addr);
        let own = self.by_pid.get(&self.pid_of(tid)).map_or(&[][..], |v| v.as_slice());
        let (glo, ghi) = match place(own) {
            Ok(m) => return Some((m, m.start, m.end - 1)),
            Err(g) => g,
        };
        let m = place(&self.kernel).ok()?;
        Some((m, m.start.max(glo), (m.end - 1).min(ghi)))
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

    /// simpleperf's `--symdir DIR`: look for binaries in these folders
    /// (recursively) by build ID, before the other places.
    pub fn set_symdirs(&mut self, dirs: &[PathBuf]) {
        self.symdirs = dirs.to_vec();
        self.symdir_index = std::sync::OnceLock::new();
    }

    /// The ELF files under the `--symdir` folders, by (20-byte padded)
    /// build ID.
    fn symdir_lookup(&self, id: &[u8]) -> Option<PathBuf> {
        if self.symdirs.is_empty() {
            return None;
        }
        let index = self.symdir_index.get_or_init(|| {
            let mut out = Vec::new();
            for d in &self.symdirs {
                index_build_ids(d, 0, &mut out);
            }
            out
        });
        let want = pad_build_id(id);
        index.iter().find(|(b, _)| *b == want).map(|(_, p)| p.clone())
    }

    /// Where binary `b` may be, in perf's order, then simpleperf's extra
    /// places (`--symfs` + the file name alone, `/usr/lib/debug` + path).
    fn candidates(&self, b: &Binary) -> Vec<PathBuf> {
        let mut cands: Vec<PathBuf> = Vec::new();
        let under_symfs = |p: &str| match &self.symfs {
            Some(fs) => fs.join(p.trim_start_matches('/')),
            None => PathBuf::from(p),
        };
        let hex = b.build_id.as_ref().map(|id| hex_of(id));
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let cache = |cands: &mut Vec<PathBuf>| {
            if let (Some(hex), Some(home)) = (&hex, &home) {
                let trimmed = hex.trim_end_matches("00000000");
                for h in [hex.as_str(), trimmed] {
                    if h.len() > 2 {
                        cands.push(home.join(".debug/.build-id").join(&h[..2]).join(&h[2..]).join("elf"));
                    }
                }
            }
        };
        if b.kernel {
            if let Some(v) = &self.vmlinux {
                // perf uses --vmlinux alone
                cands.push(v.clone());
                return cands;
            }
            cache(&mut cands);
            if let (Some(hex), Some(home)) = (&hex, &home) {
                let dir = home.join(".debug").join(KERNEL_NAME);
                for h in [hex.as_str(), hex.trim_end_matches("00000000")] {
                    cands.push(dir.join(h).join("vmlinux"));
                    cands.push(dir.join(h).join("elf"));
                }
            }
            let mut list = vec!["vmlinux".to_string(), "/boot/vmlinux".to_string()];
            if let Some(r) = &self.os_release {
                list.push(format!("/boot/vmlinux-{}", r));
                list.push(format!("/usr/lib/debug/boot/vmlinux-{}", r));
                list.push(format!("/lib/modules/{}/build/vmlinux", r));
                list.push(format!("/usr/lib/debug/lib/modules/{}/vmlinux", r));
                list.push(format!("/usr/lib/debug/boot/vmlinux-{}.debug", r));
            }
            for p in list {
                cands.push(if p.starts_with('/') { under_symfs(&p) } else { PathBuf::from(p) });
            }
        } else {
            cands.push(under_symfs(&b.path));
            if let (Some(fs), Some(name)) = (&self.symfs, Path::new(&b.path).file_name()) {
                cands.push(fs.join(name));
            }
            cache(&mut cands);
            if b.path.starts_with('/') {
                cands.push(PathBuf::from(format!("/usr/lib/debug{}", b.path)));
            }
        }
        let mut seen = std::collections::HashSet::new();
        cands.retain(|c| seen.insert(c.clone()));
        cands
    }

    /// The contents of binary `bin`, looked up once (a warning when absent).
    pub fn load(&mut self, bin: usize) -> Option<Arc<Vec<u8>>> {
        let b = self.binaries.get(bin)?;
        if let Some(d) = &b.data {
            return d.clone();
        }
        let found = self.look_up(bin);
        self.set_looked_up(bin, found);
        self.binaries[bin].data.clone().flatten()
    }

    /// Take the result of [`Spaces::look_up`] for binary `bin` (unless it
    /// was loaded meanwhile): its contents, and its warnings after those
    /// given so far.
    pub fn set_looked_up(&mut self, bin: usize, (b, warnings): LookedUp) {
        if self.binaries[bin].data.is_none() {
            self.binaries[bin] = b;
            self.warnings.extend(warnings);
        }
    }

    /// Look binary `bin` up where perf and simpleperf would find it,
    /// without changing anything: the binary with its contents (`data`
    /// set: `Some(None)` when not found) and the warnings to give.
    pub fn look_up(&self, bin: usize) -> LookedUp {
        let mut b = self.binaries[bin].clone();
        // an MMAP2 record's build ID, else the recording's table's
        if b.build_id.is_none() {
            b.build_id = self.build_ids.as_ref().and_then(|t| t.get(&b.path)).map(|id| id.as_slice().to_vec());
        }
        if b.simpleperf.is_none() {
            b.simpleperf = self.simpleperf_files.as_ref().and_then(|t| t.get(&b.path)).copied();
        }
        let mut warnings = Vec::new();
        let mut cands = self.candidates(&b);
        if let Some(id) = &b.build_id {
            if let Some(p) = self.symdir_lookup(id) {
                cands.insert(0, p);
            }
        }
        let mut tried = Vec::new();
        let mut found = None;
        for c in cands {
            tried.push(c.display().to_string());
            if let Ok(bytes) = std::fs::read(&c) {
                {
                    // parsed once for all that is taken from it
                    let elf = goblin::elf::Elf::parse(&bytes).ok();
                    if let (Some(want), Some(have)) = (&b.build_id, elf.as_ref().and_then(|e| build_id_of(e, &bytes))) {
                        if !build_ids_match(want, &have) {
                            warnings.push(format!(
                                "warning: {}: build ID {} does not match the recording's {}; not used",
                                c.display(),
                                hex_of(&have),
                                hex_of(want)
                            ));
                            continue;
                        }
                    }
                    b.loads = elf.as_ref().map(loads_of).unwrap_or_default();
                    b.exec_min = elf.as_ref().map(min_exec_of);
                    if b.kernel {
                        b.text = elf.as_ref().and_then(|e| section_of(e, ".text"));
                        // KASLR: the MMAP record's address of the reference
                        // symbol against vmlinux's (none recorded: as linked)
                        if let Some((name, run)) = &b.ref_sym {
                            if *run != 0 {
                                if let Some(link) = elf.as_ref().and_then(|e| symbol_of(e, name)) {
                                    b.reloc = run.wrapping_sub(link);
                                }
                            }
                        }
                    }
                }
                b.found_at = Some(c);
                found = Some(Arc::new(bytes));
                break;
            }
        }
        if found.is_none() {
            if b.kernel {
                let kallsyms = b
                    .build_id
                    .as_ref()
                    .and_then(|id| std::env::var_os("HOME").map(|h| Path::new(&h).join(".debug").join(KERNEL_NAME).join(hex_of(id)).join("kallsyms")))
                    .filter(|p| p.is_file());
                warnings.push(format!(
                    "warning: {}{}: no vmlinux found (looked at {}){}; kernel code is not decoded (give one with --vmlinux FILE)",
                    KERNEL_NAME,
                    b.build_id.as_ref().map(|id| format!(" (build ID {})", hex_of(id))).unwrap_or_default(),
                    tried.join(", "),
                    kallsyms.map(|k| format!("; {} has symbols but no code", k.display())).unwrap_or_default()
                ));
            } else {
                warnings.push(format!(
                    "warning: {}{}: binary not found (looked at {}); its code is not decoded",
                    b.path,
                    b.build_id.as_ref().map(|id| format!(" (build ID {})", hex_of(id))).unwrap_or_default(),
                    tried.join(", ")
                ));
            }
        }
        b.data = Some(found);
        (b, warnings)
    }

    /// As [`Spaces::read`]; when nothing is read because no mapping of
    /// the thread's process or the kernel holds `addr`, or the binary of
    /// the one that does was not found, also the range `[start, end]`
    /// around `addr` that reads nothing for this thread (while the
    /// mappings stay as they are: they do not change during a decode).
    pub fn read_or_hole(&mut self, tid: i32, addr: u64, buf: &mut [u8]) -> (usize, Option<(u64, u64)>) {
        let n = self.read(tid, addr, buf);
        if n > 0 {
            return (n, None);
        }
        (0, self.hole_at(tid, addr))
    }

    /// The range around `addr` where thread `tid` reads nothing, when
    /// `addr` is in one (see [`Spaces::read_or_hole`]): the gap between
    /// its process's mappings, cut by the kernel's mappings (or the extent
    /// of a mapping whose binary was looked up and not found).
    pub fn hole_at(&self, tid: i32, addr: u64) -> Option<(u64, u64)> {
        self.hole_at_with(tid, addr, |b| matches!(self.binaries.get(b).map(|b| &b.data), Some(Some(None))))
    }

    /// [`Spaces::hole_at`], with `missing` telling whether binary `bin`
    /// (an index into [`Spaces::binaries`]) was looked up and not found.
    pub fn hole_at_with(&self, tid: i32, addr: u64, missing: impl Fn(usize) -> bool) -> Option<(u64, u64)> {
        let place = |v: &[Map]| place_in(v, addr);
        let missing = |m: &Map| missing(m.bin);
        let empty: &[Map] = &[];
        let own = self.by_pid.get(&self.pid_of(tid)).map_or(empty, |v| v.as_slice());
        let gap = match place(own) {
            Ok(m) => return missing(&m).then(|| (m.start, m.end - 1)),
            Err(g) => g,
        };
        let (lo, hi) = match place(&self.kernel) {
            Ok(m) if missing(&m) => (m.start, m.end - 1),
            Ok(_) => return None,
            Err(g) => g,
        };
        let (mut lo, mut hi) = (lo.max(gap.0), hi.min(gap.1));
        // a hole outside every process's mappings is kept outside them,
        // so that it holds for every thread (see `thread_free`)
        let (plo, phi) = self.per_process;
        if plo <= phi && self.thread_free(addr) {
            if addr >= phi {
                lo = lo.max(phi);
            } else {
                hi = hi.min(plo.saturating_sub(1));
            }
        }
        (lo <= addr && addr <= hi).then_some((lo, hi))
    }

    /// Read target memory of thread `tid` at `addr`: bytes read.
    pub fn read(&mut self, tid: i32, addr: u64, buf: &mut [u8]) -> usize {
        let m = match self.last {
            Some((t, m)) if t == tid && addr >= m.start && addr < m.end => m,
            _ => {
                let Some(m) = self.find_map(tid, addr).copied() else { return 0 };
                self.last = Some((tid, m));
                m
            }
        };
        if self.binaries[m.bin].data.is_none() {
            self.load(m.bin);
        }
        self.binaries[m.bin].copy_out(&m, addr, buf)
    }
}

impl Binary {
    /// Copy the bytes of run-time address `addr` of mapping `m` of this
    /// (looked up) binary into `buf`: bytes copied.
    pub fn copy_out(&self, m: &Map, addr: u64, buf: &mut [u8]) -> usize {
        let Some(Some(data)) = &self.data else { return 0 };
        let Some((off, avail)) = self.file_offset(m, addr) else { return 0 };
        if off >= data.len() as u64 {
            return 0;
        }
        let off = off as usize;
        let n = ((buf.len() as u64).min(avail) as usize).min(data.len() - off);
        buf[..n].copy_from_slice(&data[off..off + n]);
        n
    }
}

/// The lowest start and highest end of the mappings of `by_pid`
/// (`(u64::MAX, 0)`: none).
fn envelope(by_pid: &IdMap<Vec<Map>>) -> (u64, u64) {
    by_pid.values().flatten().fold((u64::MAX, 0), |(lo, hi), m| (lo.min(m.start), hi.max(m.end)))
}

/// The mapping of the sorted, non-overlapping list `v` that holds `addr`
/// (Ok), or the gap between mappings around it, `lo..=hi` (Err).
fn place_in(v: &[Map], addr: u64) -> Result<Map, (u64, u64)> {
    let i = v.partition_point(|m| m.start <= addr);
    if i > 0 && addr < v[i - 1].end {
        return Ok(v[i - 1]);
    }
    let lo = if i > 0 { v[i - 1].end } else { 0 };
    let hi = if i < v.len() { v[i].start - 1 } else { u64::MAX };
    Err((lo, hi))
}

/// The list [`insert_map`] makes of `maps` inserted one after the other
/// into an empty list: when no two overlap, they are only sorted (stable,
/// by start), which takes a sort instead of a shift of the list per map.
pub fn maps_in_order(maps: Vec<Map>) -> Vec<Map> {
    let mut sorted = maps.clone();
    sorted.sort_by_key(|m| m.start);
    if sorted.windows(2).all(|w| w[0].end <= w[1].start) {
        return sorted;
    }
    let mut list = Vec::with_capacity(maps.len());
    for m in maps {
        insert_map(&mut list, m);
    }
    list
}

/// Insert `map` into a sorted list of non-overlapping mappings: what it
/// overlaps is cut away, the parts of an overlapped mapping outside it
/// stay (with their file offsets moved), as perf and simpleperf do.
pub fn insert_map(list: &mut Vec<Map>, map: Map) {
    let at = list.partition_point(|o| o.end <= map.start);
    let mut n = 0;
    while at + n < list.len() && list[at + n].start < map.end {
        n += 1;
    }
    if n == 0 {
        list.insert(at, map);
        return;
    }
    // what stays of the first and last overlapped, around `map`
    let mut keep = [map; 3];
    let mut k = 0;
    let first = &list[at];
    if first.start < map.start {
        keep[k] = Map { end: map.start, ..*first };
        k += 1;
    }
    keep[k] = map;
    k += 1;
    let last = &list[at + n - 1];
    if last.end > map.end {
        keep[k] = Map { start: map.end, end: last.end, pgoff: last.pgoff + (map.end - last.start), bin: last.bin };
        k += 1;
    }
    list.splice(at..at + n, keep[..k].iter().copied());
}

/// The kernel's name in perf's records.
pub const KERNEL_NAME: &str = "[kernel.kallsyms]";

/// The address of symbol `name` in an ELF file's symbol tables.
fn symbol_of(elf: &Elf, name: &str) -> Option<u64> {
    for (syms, strs) in [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)] {
        for sym in syms.iter() {
            if strs.get_at(sym.st_name) == Some(name) {
                return Some(sym.st_value);
            }
        }
    }
    None
}

/// (address, file offset) of section `name` of an ELF file.
fn section_of(elf: &Elf, name: &str) -> Option<(u64, u64)> {
    elf.section_headers
        .iter()
        .find(|sh| elf.shdr_strtab.get_at(sh.sh_name) == Some(name) && sh.sh_type != goblin::elf::section_header::SHT_NOBITS)
        .map(|sh| (sh.sh_addr, sh.sh_offset))
}

/// A build ID as simpleperf keeps it: 20 bytes, zero padded.
fn pad_build_id(id: &[u8]) -> [u8; 20] {
    let mut p = [0u8; 20];
    for (d, s) in p.iter_mut().zip(id) {
        *d = *s;
    }
    p
}

/// Add the ELF files under `dir` (recursively, not following links to
/// folders) with their build IDs to `out`.
fn index_build_ids(dir: &Path, depth: usize, out: &mut Vec<([u8; 20], PathBuf)>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let Ok(ft) = e.file_type() else { continue };
        let p = e.path();
        if ft.is_dir() {
            if depth < 32 {
                index_build_ids(&p, depth + 1, out);
            }
        } else if let Ok(bytes) = std::fs::read(&p) {
            if bytes.starts_with(b"\x7fELF") {
                if let Some(id) = elf_build_id(&bytes) {
                    out.push((pad_build_id(&id), p));
                }
            }
        }
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
    build_id_of(&Elf::parse(bytes).ok()?, bytes)
}

/// The GNU build ID note of `elf`, parsed from `bytes`: from the note
/// segments, else the note sections.
fn build_id_of(elf: &Elf, bytes: &[u8]) -> Option<Vec<u8>> {
    // (a note that does not parse ends the walk: goblin's note iterators
    // give the same error again and again, never moving past it)
    fn gnu_build_id<'a>(notes: impl Iterator<Item = goblin::error::Result<goblin::elf::note::Note<'a>>>) -> Option<Vec<u8>> {
        notes.map_while(Result::ok).find(|n| n.n_type == goblin::elf::note::NT_GNU_BUILD_ID && n.name == "GNU").map(|n| n.desc.to_vec())
    }
    elf.iter_note_headers(bytes).and_then(gnu_build_id).or_else(|| elf.iter_note_sections(bytes, None).and_then(gnu_build_id))
}

/// The executable PT_LOAD segment with the lowest address: (vaddr, file
/// offset); none: address 0 at offset 0 (simpleperf's choice).
fn min_exec_of(elf: &Elf) -> (u64, u64) {
    elf.program_headers
        .iter()
        .filter(|p| p.p_type == goblin::elf::program_header::PT_LOAD && p.p_flags & goblin::elf::program_header::PF_X != 0)
        .min_by_key(|p| p.p_vaddr)
        .map_or((0, 0), |p| (p.p_vaddr, p.p_offset))
}

/// PT_LOAD segments: (file offset, vaddr, file size).
fn loads_of(elf: &Elf) -> Vec<(u64, u64, u64)> {
    elf.program_headers
        .iter()
        .filter(|p| p.p_type == goblin::elf::program_header::PT_LOAD)
        .map(|p| (p.p_offset, p.p_vaddr, p.p_filesz))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::file::SimpleperfDso;

    /// An AArch64 ELF64 executable with one PT_NOTE segment holding `note`.
    fn elf_with_note(note: &[u8]) -> Vec<u8> {
        let mut e = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        e.extend(2u16.to_le_bytes()); // ET_EXEC
        e.extend(183u16.to_le_bytes()); // EM_AARCH64
        e.extend(1u32.to_le_bytes());
        e.extend(0x40_0000u64.to_le_bytes()); // entry
        e.extend(64u64.to_le_bytes()); // program headers
        e.extend(0u64.to_le_bytes()); // no section headers
        e.extend(0u32.to_le_bytes());
        for h in [64u16, 56, 1, 64, 0, 0] {
            e.extend(h.to_le_bytes());
        }
        e.extend(4u32.to_le_bytes()); // PT_NOTE
        e.extend(4u32.to_le_bytes());
        for v in [120u64, 0, 0, note.len() as u64, note.len() as u64, 4] {
            e.extend(v.to_le_bytes());
        }
        e.extend_from_slice(note);
        e
    }

    fn note(namesz: u32, descsz: u32, type_: u32, name: &[u8], desc: &[u8]) -> Vec<u8> {
        let mut n = Vec::new();
        for v in [namesz, descsz, type_] {
            n.extend(v.to_le_bytes());
        }
        n.extend_from_slice(name);
        n.extend_from_slice(desc);
        n
    }

    #[test]
    fn build_ids_from_notes_and_notes_that_do_not_parse() {
        let id = [0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4];
        let good = elf_with_note(&note(4, 8, goblin::elf::note::NT_GNU_BUILD_ID, b"GNU\0", &id));
        assert_eq!(elf_build_id(&good), Some(id.to_vec()));
        // a name running past the segment: goblin's iterator repeats its
        // error for ever; the walk stops there (on a thread, so that a
        // regression fails instead of hanging)
        let bad = elf_with_note(&note(0x7fff_ffff, 8, goblin::elf::note::NT_GNU_BUILD_ID, b"GNU\0", &id));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(elf_build_id(&bad));
        });
        let got = rx.recv_timeout(std::time::Duration::from_secs(20)).expect("the build ID search of a bad note ends");
        assert_eq!(got, None);
    }

    fn m(start: u64, end: u64, pgoff: u64, bin: usize) -> Map {
        Map { start, end, pgoff, bin }
    }

    #[test]
    fn holes_are_gaps_and_mappings_without_their_binary() {
        let found = Binary { data: Some(Some(Arc::new(vec![0x11; 0x3000]))), ..Binary::new("/bin/found", None) };
        let missing = Binary::new("/bin/missing", None);
        let kernel = Binary::new(KERNEL_NAME, None);
        let mut s = Spaces::from_parts(
            vec![found, missing, kernel],
            vec![(7, m(0x1000, 0x4000, 0, 0)), (7, m(0x8000, 0x9000, 0, 1)), (-1, m(0xf000, 0x20000, 0, 2)), (-1, m(0x30000, 0x31000, 0, 0))],
        );
        let mut b = [0u8; 4];
        // bytes: no hole
        assert_eq!(s.read_or_hole(7, 0x1000, &mut b), (4, None));
        // a gap of the process, cut by the kernel's mappings around it
        assert_eq!(s.read_or_hole(7, 0x5000, &mut b), (0, Some((0x4000, 0x7fff))));
        assert_eq!(s.read_or_hole(7, 0x500, &mut b), (0, Some((0, 0xfff))));
        // a mapping whose binary is missing
        assert_eq!(s.read_or_hole(7, 0x8800, &mut b), (0, Some((0x8000, 0x8fff))));
        // the kernel's mapping without vmlinux, cut by the process's gap
        assert_eq!(s.read_or_hole(7, 0x10000, &mut b), (0, Some((0xf000, 0x1ffff))));
        assert_eq!(s.read_or_hole(7, 0x9800, &mut b), (0, Some((0x9000, 0xefff))));
        // past everything
        assert_eq!(s.read_or_hole(7, 0x40000, &mut b), (0, Some((0x31000, u64::MAX))));
        // another process: only the kernel's mappings
        assert_eq!(s.read_or_hole(9, 0x5000, &mut b), (0, Some((0, 0xefff))));
        // outside every process's mappings (0x1000..0x9000) the hole is
        // the same for every thread: kept outside them
        assert!(s.thread_free(0x500) && s.thread_free(0x9000) && s.thread_free(0x10000));
        assert!(!s.thread_free(0x1000) && !s.thread_free(0x5000) && !s.thread_free(0x8fff));
        assert_eq!(s.read_or_hole(9, 0x500, &mut b), (0, Some((0, 0xfff))));
        assert_eq!(s.read_or_hole(9, 0x9800, &mut b), (0, Some((0x9000, 0xefff))));
        assert_eq!(s.read_or_hole(7, 0x9800, &mut b), (0, Some((0x9000, 0xefff))));
        // a kernel mapping whose binary has bytes, read past its data: no hole
        assert_eq!(s.read_or_hole(9, 0x30000, &mut b), (4, None));
        // no hole is made of a mapping whose binary has bytes
        assert_eq!(s.hole_at(7, 0x3f00), None);
    }

    #[test]
    fn a_new_mapping_cuts_what_it_overlaps() {
        let mut list = vec![m(0x1000, 0x4000, 0, 0), m(0x5000, 0x6000, 0, 1)];
        insert_map(&mut list, m(0x2000, 0x3000, 0x1000, 2));
        insert_map(&mut list, m(0x3800, 0x5800, 0, 3));
        let got: Vec<_> = list.iter().map(|x| (x.start, x.end, x.pgoff, x.bin)).collect();
        assert_eq!(
            got,
            vec![(0x1000, 0x2000, 0, 0), (0x2000, 0x3000, 0x1000, 2), (0x3000, 0x3800, 0x2000, 0), (0x3800, 0x5800, 0, 3), (0x5800, 0x6000, 0x800, 1)]
        );
    }

    #[test]
    fn mappings_laid_out_at_once_as_inserted_one_by_one() {
        // pseudo-random mappings, some overlapping, some empty, some equal
        let mut rng = crate::common::xorshift64(0x9e37_79b9_7f4a_7c15u64);
        let mut next = |n: u64| rng() % n;
        for round in 0..300 {
            let spread = if round % 3 == 0 { 0x100 } else { 0x10_0000 };
            let maps: Vec<Map> = (0..(1 + next(40)))
                .map(|i| {
                    let start = next(spread) * 0x10;
                    m(start, start + next(0x40) * 0x10, next(0x1000), i as usize)
                })
                .collect();
            let mut one_by_one = Vec::new();
            for &mp in &maps {
                insert_map(&mut one_by_one, mp);
            }
            let key = |l: &[Map]| l.iter().map(|x| (x.start, x.end, x.pgoff, x.bin)).collect::<Vec<_>>();
            assert_eq!(key(&maps_in_order(maps.clone())), key(&one_by_one), "round {}", round);
        }
    }

    /// Every address of the span `find_map_span` gives finds that mapping
    /// (and the addresses just outside it another, or none).
    #[test]
    fn a_mapping_span_finds_the_same_mapping() {
        let mut rng = crate::common::xorshift64(0x2545_f491_4f6c_dd1du64);
        let mut next = |n: u64| rng() % n;
        for _ in 0..200 {
            let mut maps = Vec::new();
            for i in 0..(1 + next(12)) {
                let start = next(0x100) * 0x100;
                let pid = if next(2) == 0 { 7 } else { -1 };
                maps.push((pid, m(start, start + (1 + next(0x20)) * 0x40, 0, i as usize)));
            }
            let s = Spaces::from_parts(Vec::new(), maps);
            for _ in 0..50 {
                let (tid, addr) = (if next(3) == 0 { 9 } else { 7 }, next(0x10000));
                let found = s.find_map(tid, addr).copied();
                let span = s.find_map_span(tid, addr);
                assert_eq!(found.map(|f| f.start), span.map(|s| s.0.start), "{tid} {addr:#x}");
                let Some((mp, lo, hi)) = span else { continue };
                assert!(lo <= addr && addr <= hi);
                for a in [lo, hi, lo + (hi - lo) / 2, addr] {
                    assert_eq!(s.find_map(tid, a).map(|f| (f.start, f.bin)), Some((mp.start, mp.bin)), "{tid} {a:#x}");
                }
                for a in [lo.wrapping_sub(1), hi.wrapping_add(1)] {
                    if a != u64::MAX && (a < lo || a > hi) {
                        assert_ne!(s.find_map(tid, a).map(|f| (f.start, f.bin)), Some((mp.start, mp.bin)), "{tid} {a:#x}");
                    }
                }
            }
        }
    }

    #[test]
    fn simpleperf_vaddr_in_file() {
        let map = m(0x7000_0000, 0x7000_2000, 0x3000, 0);
        let mut b = Binary::new("/lib/x.so", None);
        // no ELF file: offset in the mapping
        assert_eq!(b.simpleperf_vaddr(&map, 0x7000_0010), 0x10);
        // lowest executable segment at 0x5000, file offset 0x2000
        b.exec_min = Some((0x5000, 0x2000));
        assert_eq!(b.simpleperf_vaddr(&map, 0x7000_0010), 0x3000 - 0x2000 + 0x5000 + 0x10);
        // the recording's FEAT_FILE2 entry wins
        b.simpleperf = Some(SimpleperfFile { kind: SimpleperfDso::Elf, min_vaddr: 0x9000, offset_of_min_vaddr: 0x3000 });
        assert_eq!(b.simpleperf_vaddr(&map, 0x7000_0010), 0x9010);
        // kernel module: offset in its memory less FEAT_FILE2's offset
        let mut k = Binary::new("/m.ko", None);
        k.module = true;
        assert_eq!(k.simpleperf_vaddr(&map, 0x7000_0010), 0x10);
        k.simpleperf = Some(SimpleperfFile { kind: SimpleperfDso::KernelModule, min_vaddr: 0x100, offset_of_min_vaddr: 0x8 });
        assert_eq!(k.simpleperf_vaddr(&map, 0x7000_0010), 0x108);
        // kernel: from .text when known and the map has a start
        let mut kern = Binary::new(KERNEL_NAME, None);
        kern.kernel = true;
        assert_eq!(kern.simpleperf_vaddr(&map, 0x7000_0010), 0x7000_0010);
        kern.text = Some((0xffff_8000_1000_0000, 0x10000));
        assert_eq!(kern.simpleperf_vaddr(&map, 0x7000_0010), 0xffff_8000_1000_0010);
        assert_eq!(kern.simpleperf_vaddr(&m(0, 1, 0, 0), 0x7000_0010), 0x7000_0010);
    }

    #[test]
    fn binaries_are_found_by_file_name_under_symfs_and_by_build_id_under_symdir() {
        let dir = std::env::temp_dir().join(format!("ocsd-spaces-{}", std::process::id()));
        let sub = dir.join("deep/er");
        std::fs::create_dir_all(&sub).unwrap();
        // an ELF file with a build ID note: the test program itself
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let Some(id) = elf_build_id(&exe) else { return };
        std::fs::write(sub.join("renamed"), &exe).unwrap();
        std::fs::write(dir.join("prog"), &exe).unwrap();
        let b = Binary::new("/data/app/prog", Some(id.clone()));
        // --symfs DIR: DIR/data/app/prog is missing, DIR/prog is there
        let mut s = Spaces::from_parts(vec![b], vec![]);
        s.binaries[0].data = None;
        s.symfs = Some(dir.clone());
        assert!(s.load(0).is_some());
        assert_eq!(s.binaries[0].found_at.as_deref(), Some(dir.join("prog").as_path()));
        // --symdir DIR: found by build ID under another name
        let mut s = Spaces::from_parts(vec![Binary::new("/elsewhere/x", Some(id))], vec![]);
        s.binaries[0].data = None;
        s.set_symdirs(std::slice::from_ref(&dir));
        assert!(s.load(0).is_some());
        // the first in name order: deep/er/renamed
        assert_eq!(s.binaries[0].found_at.as_deref(), Some(sub.join("renamed").as_path()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
