//! Profiles for a person: executed instructions per function (symbols from
//! the ELF symbol tables), folded call stacks for a flame graph (calls and
//! returns seen in the trace), and line coverage as an lcov tracefile
//! (lines from the DWARF line tables).

use std::collections::{BTreeMap, HashMap};

use rustc_hash::FxHashMap;
use std::io::Write;

use crate::abi::gen_elem::ocsd_generic_trace_elem;
use crate::abi::*;

use super::counts::Counts;
use super::decode::{RangeSample, SampleSink};
use super::spaces::Spaces;

/// Samples of decoded elements, without a recording: the elements of
/// each trace source taken as perf takes them (ranges, the threads their
/// contexts name), in address spaces made from the decoder's memory
/// images ([`Spaces::from_files`]), given to `sink` (a [`Profile`], an
/// [`super::autofdo::AutoFdo`]).
pub struct ElementSamples<S: SampleSink> {
    samples: super::decode::Samples,
    shared: super::decode::Shared,
    pub sink: S,
}

impl<S: SampleSink> ElementSamples<S> {
    pub fn new(spaces: Spaces, sink: S) -> ElementSamples<S> {
        ElementSamples { samples: super::decode::Samples::new([-1; 128]), shared: super::decode::Shared { spaces, tid: [-1; 128] }, sink }
    }

    /// An element of trace source `id`.
    pub fn element(&mut self, id: u8, e: &ocsd_generic_trace_elem) {
        if let Some(el) = super::decode::Elem::of(e, false) {
            self.samples.elem((id & 0x7f) as usize, el, &mut self.shared, &mut self.sink);
        }
    }

    /// The sink and the address spaces (for writing what it collected).
    pub fn parts(&mut self) -> (&mut S, &mut Spaces) {
        (&mut self.sink, &mut self.shared.spaces)
    }
}

/// The function symbols of one binary: (ELF address, size, name), sorted.
#[derive(Default)]
pub struct Symbols {
    funcs: Vec<(u64, u64, String)>,
}

impl Symbols {
    pub fn from_elf(bytes: &[u8]) -> Symbols {
        let mut funcs = Vec::new();
        if let Ok(elf) = goblin::elf::Elf::parse(bytes) {
            for (syms, strs) in [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)] {
                for s in syms.iter() {
                    if s.st_type() == goblin::elf::sym::STT_FUNC && s.st_value != 0 {
                        if let Some(n) = strs.get_at(s.st_name) {
                            funcs.push((s.st_value & !1, s.st_size, n.to_string()));
                        }
                    }
                }
            }
        }
        funcs.sort();
        funcs.dedup_by(|a, b| a.0 == b.0);
        Symbols { funcs }
    }

    /// The function holding ELF address `v`.
    pub fn lookup(&self, v: u64) -> Option<&str> {
        let i = self.funcs.partition_point(|f| f.0 <= v);
        if i == 0 {
            return None;
        }
        let (start, size, name) = &self.funcs[i - 1];
        // a zero-sized symbol covers up to the next one
        if *size == 0 || v < start + size {
            Some(name)
        } else {
            None
        }
    }
}

#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub struct FuncStats {
    pub instructions: u64,
    pub ranges: u64,
    pub binary: String,
}

/// Where a range starts: its function (a name id) and, when a binary
/// holds it, the binary and the ELF address.
#[derive(Clone, Copy)]
struct Place {
    func: u32,
    loc: Option<(usize, u64)>,
}

/// A frame of the folded stacks' tree: a name (the command at the root,
/// else a function) under its parent, and the instructions run with
/// exactly that stack.
struct Node {
    parent: u32,
    name: u32,
    count: u64,
}

/// The parent of a root node (a command name).
const NO_NODE: u32 = u32::MAX;

/// Deepest stack kept: the outermost frames go beyond it.
const MAX_FRAMES: usize = 256;

/// A thread's call stack as the trace shows it.
struct Thread {
    /// The node of its command name.
    root: u32,
    /// The node of the whole stack (root and frames).
    node: u32,
    /// Function name ids, outermost first.
    frames: Vec<u32>,
    /// The last range ended with a taken call.
    pending_call: bool,
}

/// Collects the per-function table, the folded stacks and the executed
/// addresses (for lcov). A range costs a few hash look-ups and allocates
/// nothing once its start address, function and stack were seen: names
/// are interned, the stacks are nodes of a tree (a stack's count sits on
/// its innermost frame's node), the executed addresses are kept as ranges
/// and spread over addresses when the lcov file is written.
#[derive(Default)]
pub struct Profile {
    symbols: FxHashMap<usize, Symbols>,
    /// (thread, range start) -> its place (the address spaces do not
    /// change during a decode).
    places: FxHashMap<(i32, u64), Place>,
    /// Interned names (functions and command names) and their ids.
    names: Vec<String>,
    name_ids: FxHashMap<String, u32>,
    /// Per function name id (None: a name that is not a function's).
    funcs: Vec<Option<FuncStats>>,
    nodes: Vec<Node>,
    /// (parent node or NO_NODE, name id) -> node.
    children: FxHashMap<(u32, u32), u32>,
    threads: FxHashMap<i32, Thread>,
    /// (binary, ELF address of the first instruction, bytes to the last
    /// instruction, instruction step) -> executions.
    executed: Counts<(usize, u64, u64, u64)>,
}

/// The node for `name` under `parent`, made if new.
fn child(nodes: &mut Vec<Node>, children: &mut FxHashMap<(u32, u32), u32>, parent: u32, name: u32) -> u32 {
    *children.entry((parent, name)).or_insert_with(|| {
        nodes.push(Node { parent, name, count: 0 });
        (nodes.len() - 1) as u32
    })
}

impl Profile {
    fn intern(&mut self, name: String) -> u32 {
        if let Some(&id) = self.name_ids.get(&name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.clone());
        self.name_ids.insert(name, id);
        id
    }

    /// The function and ELF place of `addr` for thread `tid`.
    fn place(&mut self, spaces: &mut Spaces, tid: i32, addr: u64) -> Place {
        let Some(m) = spaces.find_map(tid, addr).cloned() else {
            return Place { func: self.intern(format!("[unknown] {:#x}", addr)), loc: None };
        };
        let Some(data) = spaces.load(m.bin) else {
            let name = format!("[{}]", spaces.binaries[m.bin].path);
            return Place { func: self.intern(name), loc: None };
        };
        let bin = &spaces.binaries[m.bin];
        let v = bin.vaddr_in_file(&m, addr);
        let syms = self.symbols.entry(m.bin).or_insert_with(|| Symbols::from_elf(&data));
        let base = bin.path.rsplit('/').next().unwrap_or(&bin.path);
        // no symbol: the binary's name, as perf shows [unknown] code
        let name = match syms.lookup(v) {
            Some(n) => n.to_string(),
            None => format!("[{}]", base),
        };
        Place { func: self.intern(name), loc: Some((m.bin, v)) }
    }

    /// The instructions and ranges of each function, by name.
    pub fn functions(&self) -> HashMap<String, FuncStats> {
        self.func_stats().map(|(name, f)| (name.clone(), f.clone())).collect()
    }

    /// Folded stacks (`comm;f1;f2`, outermost first) and the instructions
    /// run with each.
    pub fn folded(&self) -> BTreeMap<String, u64> {
        let mut out: BTreeMap<String, u64> = BTreeMap::new();
        let mut path = Vec::new();
        for n in &self.nodes {
            if n.count == 0 {
                continue;
            }
            path.clear();
            let mut cur = n;
            loop {
                path.push(cur.name);
                if cur.parent == NO_NODE {
                    break;
                }
                cur = &self.nodes[cur.parent as usize];
            }
            let key = path.iter().rev().map(|id| self.names[*id as usize].as_str()).collect::<Vec<_>>().join(";");
            *out.entry(key).or_default() += n.count;
        }
        out
    }

    /// Each function's name and counts.
    fn func_stats(&self) -> impl Iterator<Item = (&String, &FuncStats)> {
        self.funcs.iter().enumerate().filter_map(|(id, f)| Some((&self.names[id], f.as_ref()?)))
    }

    /// Per binary: executed ELF address -> times (per range execution).
    pub fn executed(&self) -> HashMap<usize, HashMap<u64, u64>> {
        let mut out: HashMap<usize, HashMap<u64, u64>> = HashMap::new();
        // (a range may come in two parts: the addresses add up)
        for (&(bin, v, len, step), n) in self.executed.parts() {
            let e = out.entry(bin).or_default();
            let mut a = 0;
            while a <= len {
                *e.entry(v.wrapping_add(a)).or_default() += n;
                a += step;
            }
        }
        out
    }
}

impl SampleSink for Profile {
    fn range(&mut self, r: &RangeSample, spaces: &mut Spaces) {
        let place = match self.places.get(&(r.tid, r.start)) {
            Some(p) => *p,
            None => {
                let p = self.place(spaces, r.tid, r.start);
                self.places.insert((r.tid, r.start), p);
                p
            }
        };
        let func = place.func;
        if self.funcs.len() <= func as usize {
            self.funcs.resize(func as usize + 1, None);
        }
        let f = self.funcs[func as usize].get_or_insert_with(|| FuncStats {
            binary: place.loc.map(|(b, _)| spaces.binaries[b].path.clone()).unwrap_or_default(),
            ..Default::default()
        });
        f.instructions += r.n_instr as u64;
        f.ranges += 1;
        // stack: the range runs in the top frame
        let th = match self.threads.get_mut(&r.tid) {
            Some(t) => t,
            None => {
                let comm = self.intern(spaces.comm_of(r.tid));
                let root = child(&mut self.nodes, &mut self.children, NO_NODE, comm);
                self.threads.entry(r.tid).or_insert(Thread { root, node: root, frames: Vec::new(), pending_call: false })
            }
        };
        let (nodes, children) = (&mut self.nodes, &mut self.children);
        let called = std::mem::take(&mut th.pending_call);
        match th.frames.last_mut() {
            Some(top) if !called => {
                if *top != func {
                    *top = func;
                    th.node = child(nodes, children, nodes[th.node as usize].parent, func);
                }
            }
            _ => {
                th.frames.push(func);
                th.node = child(nodes, children, th.node, func);
            }
        }
        if th.frames.len() > MAX_FRAMES {
            th.frames.drain(..th.frames.len() - MAX_FRAMES);
            th.node = th.root;
            for &f in &th.frames {
                th.node = child(nodes, children, th.node, f);
            }
        }
        nodes[th.node as usize].count += r.n_instr as u64;
        if r.taken && r.is_call {
            th.pending_call = true;
        } else if r.taken && r.is_return && th.frames.len() > 1 {
            th.frames.pop();
            th.node = nodes[th.node as usize].parent;
        }
        // executed instruction addresses (A64 / A32: 4 bytes; T32: 2-byte steps)
        if let Some((bin, v)) = place.loc {
            let step = if r.isa == ocsd_isa_thumb2 { 2 } else { 4 };
            let len = r.last.saturating_sub(r.start);
            if len <= 1 << 20 {
                self.executed.add((bin, v, len, step), 1);
            }
        }
    }
}

impl Profile {
    /// The per-function table, most instructions first.
    pub fn write_functions(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let mut v: Vec<(&String, &FuncStats)> = self.func_stats().collect();
        v.sort_by(|a, b| b.1.instructions.cmp(&a.1.instructions).then(a.0.cmp(b.0)));
        let total: u64 = v.iter().map(|x| x.1.instructions).sum();
        writeln!(w, "{:>12} {:>7} {:>9}  {:<40} binary", "instructions", "%", "ranges", "function")?;
        for (name, s) in v {
            let pct = if total > 0 { 100.0 * s.instructions as f64 / total as f64 } else { 0.0 };
            writeln!(w, "{:>12} {:>6.2}% {:>9}  {:<40} {}", s.instructions, pct, s.ranges, name, s.binary)?;
        }
        Ok(())
    }

    /// Folded stacks, one `stack count` line each, sorted.
    pub fn folded_lines(&self) -> Vec<String> {
        self.folded().into_iter().filter(|(_, n)| *n > 0).map(|(k, n)| format!("{} {}", k, n)).collect()
    }

    /// The flame graph SVG of the folded stacks.
    pub fn write_flamegraph(&self, title: &str, w: &mut dyn Write) -> Result<(), String> {
        let lines = self.folded_lines();
        if lines.is_empty() {
            return Err("no instructions were decoded".into());
        }
        let mut opts = inferno::flamegraph::Options::default();
        opts.title = title.to_string();
        opts.count_name = "instructions".to_string();
        inferno::flamegraph::from_lines(&mut opts, lines.iter().map(|s| s.as_str()), w).map_err(|e| e.to_string())
    }

    /// Line coverage as an lcov tracefile (`genhtml` input): for each
    /// source file of the binaries' DWARF line tables that executed code
    /// maps to, `DA:line,count` per line (count: executions of the line's
    /// instructions, the most executed one).
    pub fn write_lcov(&self, spaces: &mut Spaces, w: &mut dyn Write) -> std::io::Result<usize> {
        let mut files: BTreeMap<String, BTreeMap<u32, u64>> = BTreeMap::new();
        for (bin, addrs) in &self.executed() {
            let Some(data) = spaces.load(*bin) else { continue };
            let Some(lines) = line_table(&data) else { continue };
            for (addr, n) in addrs {
                if let Some((file, line)) = lines.lookup(*addr) {
                    let e = files.entry(file.to_string()).or_default().entry(line).or_default();
                    *e = (*e).max(*n);
                }
            }
        }
        writeln!(w, "TN:")?;
        for (file, lines) in &files {
            writeln!(w, "SF:{}", file)?;
            for (l, n) in lines {
                writeln!(w, "DA:{},{}", l, n)?;
            }
            writeln!(w, "LF:{}", lines.len())?;
            writeln!(w, "LH:{}", lines.values().filter(|n| **n > 0).count())?;
            writeln!(w, "end_of_record")?;
        }
        Ok(files.len())
    }
}

/// An address -> (file, line) table from DWARF `.debug_line`.
pub struct LineTable {
    rows: Vec<(u64, u32, u32)>, // address, file index, line
    files: Vec<String>,
}

impl LineTable {
    pub fn lookup(&self, addr: u64) -> Option<(&str, u32)> {
        let i = self.rows.partition_point(|r| r.0 <= addr);
        if i == 0 {
            return None;
        }
        let (_, f, l) = self.rows[i - 1];
        if l == 0 {
            return None;
        }
        Some((self.files.get(f as usize)?.as_str(), l))
    }
}

/// Read the DWARF line tables of an ELF file (sections through goblin,
/// parsing through gimli).
pub fn line_table(bytes: &[u8]) -> Option<LineTable> {
    use addr2line::gimli;
    let elf = goblin::elf::Elf::parse(bytes).ok()?;
    let endian = if elf.little_endian { gimli::RunTimeEndian::Little } else { gimli::RunTimeEndian::Big };
    let section = |name: &str| -> &[u8] {
        for sh in &elf.section_headers {
            if elf.shdr_strtab.get_at(sh.sh_name) == Some(name) && sh.sh_type != goblin::elf::section_header::SHT_NOBITS {
                let (o, s) = (sh.sh_offset as usize, sh.sh_size as usize);
                if let Some(d) = bytes.get(o..o.saturating_add(s)) {
                    return d;
                }
            }
        }
        &[]
    };
    let load = |id: gimli::SectionId| -> Result<gimli::EndianSlice<'_, gimli::RunTimeEndian>, gimli::Error> {
        Ok(gimli::EndianSlice::new(section(id.name()), endian))
    };
    let dwarf = gimli::Dwarf::load(load).ok()?;
    let mut rows = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let mut file_ids: HashMap<String, u32> = HashMap::new();
    let mut units = dwarf.units();
    while let Ok(Some(header)) = units.next() {
        let Ok(unit) = dwarf.unit(header) else { continue };
        let Some(program) = unit.line_program.clone() else { continue };
        let mut iter = program.rows();
        while let Ok(Some((hdr, row))) = iter.next_row() {
            let mut name = String::new();
            if let Some(file) = row.file(hdr) {
                if let Some(dir) = file.directory(hdr) {
                    if let Ok(d) = dwarf.attr_string(&unit, dir) {
                        name.push_str(&d.to_string_lossy());
                    }
                }
                if let Ok(n) = dwarf.attr_string(&unit, file.path_name()) {
                    let n = n.to_string_lossy();
                    if n.starts_with('/') || name.is_empty() {
                        name = n.into_owned();
                    } else {
                        name.push('/');
                        name.push_str(&n);
                    }
                }
            }
            let id = *file_ids.entry(name.clone()).or_insert_with(|| {
                files.push(name);
                (files.len() - 1) as u32
            });
            let line = if row.end_sequence() { 0 } else { row.line().map_or(0, |l| l.get() as u32) };
            rows.push((row.address(), id, line));
        }
    }
    if rows.is_empty() {
        return None;
    }
    rows.sort_by_key(|r| r.0);
    Some(LineTable { rows, files })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn a_function_with_a_known_line() -> u64 {
        std::hint::black_box(42)
    }

    #[test]
    fn symbols_and_lines_of_an_elf() {
        // this test program's own ELF: its symbols and DWARF line tables
        let exe = std::env::current_exe().unwrap();
        let bytes = std::fs::read(&exe).unwrap();
        let syms = Symbols::from_elf(&bytes);
        let (addr, _, name) = syms.funcs.iter().find(|f| f.2.contains("a_function_with_a_known_line")).expect("symbol").clone();
        assert_eq!(syms.lookup(addr), Some(name.as_str()));
        assert!(a_function_with_a_known_line() == 42);
        let size = syms.funcs.iter().find(|f| f.0 == addr).map_or(4, |f| f.1.max(4));
        if let Some(lines) = line_table(&bytes) {
            // some instruction of the function is on a line of this file
            let hit = (addr..addr + size).step_by(1).filter_map(|a| lines.lookup(a)).find(|(f, _)| f.ends_with("profile.rs"));
            let (_, line) = hit.expect("a line of profile.rs in the function");
            assert!(line > 250, "{}", line);
        }
    }

    /// A range of `n` A64 instructions from `start` for thread `tid`.
    fn range(tid: i32, start: u64, n: u32, taken: bool, is_call: bool, is_return: bool) -> RangeSample {
        RangeSample {
            start,
            last: start + 4 * (n as u64 - 1),
            n_instr: n,
            tid,
            isa: ocsd_isa_aarch64,
            taken,
            direct: false,
            branch_addr: None,
            last_size: 4,
            is_call,
            is_return,
            id: 0x10,
        }
    }

    #[test]
    fn folded_stacks_follow_calls_and_returns() {
        let mut spaces = Spaces::from_parts(Vec::new(), Vec::new());
        let mut p = Profile::default();
        // main calls f, f returns, main goes on
        for r in [range(-1, 0x1000, 3, true, true, false), range(-1, 0x2000, 2, true, false, true), range(-1, 0x1010, 2, false, false, false)] {
            p.range(&r, &mut spaces);
        }
        assert_eq!(
            p.folded_lines(),
            ["[unknown];[unknown] 0x1000 3", "[unknown];[unknown] 0x1000;[unknown] 0x2000 2", "[unknown];[unknown] 0x1010 2"]
        );
        let mut svg = Vec::new();
        p.write_flamegraph("t", &mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert!(svg.starts_with("<?xml") && svg.contains("0x2000") && svg.contains("</svg>"));
    }

    /// The profile as first written (a string per frame and stack, an
    /// entry per executed address), to check the interned one against.
    #[derive(Default)]
    struct Reference {
        functions: HashMap<String, FuncStats>,
        folded: HashMap<String, u64>,
        stacks: HashMap<i32, Vec<String>>,
        executed: HashMap<usize, HashMap<u64, u64>>,
        pending_call: HashMap<i32, bool>,
        symbols: HashMap<usize, Symbols>,
    }

    impl Reference {
        fn range(&mut self, r: &RangeSample, spaces: &mut Spaces) {
            let (func, loc) = match spaces.find_map(r.tid, r.start).cloned() {
                None => (format!("[unknown] {:#x}", r.start), None),
                Some(m) => match spaces.load(m.bin) {
                    None => (format!("[{}]", spaces.binaries[m.bin].path), None),
                    Some(data) => {
                        let bin = &spaces.binaries[m.bin];
                        let v = bin.vaddr_in_file(&m, r.start);
                        let syms = self.symbols.entry(m.bin).or_insert_with(|| Symbols::from_elf(&data));
                        let base = bin.path.rsplit('/').next().unwrap_or(&bin.path);
                        (syms.lookup(v).map(|n| n.to_string()).unwrap_or_else(|| format!("[{}]", base)), Some((m.bin, v)))
                    }
                },
            };
            let binary = loc.map(|(b, _)| spaces.binaries[b].path.clone()).unwrap_or_default();
            let f = self.functions.entry(func.clone()).or_insert_with(|| FuncStats { binary, ..Default::default() });
            f.instructions += r.n_instr as u64;
            f.ranges += 1;
            let stack = self.stacks.entry(r.tid).or_default();
            let called = self.pending_call.remove(&r.tid).unwrap_or(false);
            if called || stack.is_empty() {
                stack.push(func.clone());
            } else if let Some(top) = stack.last_mut() {
                if *top != func {
                    *top = func.clone();
                }
            }
            if stack.len() > 256 {
                stack.drain(..stack.len() - 256);
            }
            let mut key = spaces.comm_of(r.tid);
            for s in stack.iter() {
                key.push(';');
                key.push_str(s);
            }
            *self.folded.entry(key).or_default() += r.n_instr as u64;
            if r.taken && r.is_call {
                self.pending_call.insert(r.tid, true);
            } else if r.taken && r.is_return && stack.len() > 1 {
                stack.pop();
            }
            if let Some((bin, v)) = loc {
                let len = r.last.saturating_sub(r.start);
                let e = self.executed.entry(bin).or_default();
                let mut a = 0;
                while a <= len {
                    *e.entry(v + a).or_default() += 1;
                    a += 4;
                }
            }
        }
    }

    /// Random ranges over this test program's own functions (and
    /// addresses no binary maps), on three threads, with calls, returns
    /// and recursion deeper than the stacks keep: the same table, stacks
    /// and executed addresses as the reference.
    #[test]
    fn profile_matches_the_reference() {
        let exe = std::env::current_exe().unwrap();
        let bytes = std::sync::Arc::new(std::fs::read(&exe).unwrap());
        let syms = Symbols::from_elf(&bytes);
        let funcs: Vec<u64> = syms.funcs.iter().map(|f| f.0).filter(|a| a % 4 == 0).take(2000).collect();
        assert!(funcs.len() > 100);
        let size = bytes.len() as u64;
        let base = 0x40_0000u64;
        let mut b = super::super::spaces::Binary::new(exe.to_str().unwrap(), None);
        b.loads = vec![(0, 0, u64::MAX / 2)];
        b.data = Some(Some(bytes.clone()));
        let map = super::super::spaces::Map { start: base, end: base + size, pgoff: 0, bin: 0 };
        let mut spaces = Spaces::from_parts(vec![b], vec![(-1, map)]);
        let mut rng = crate::common::xorshift64(0x5e_ed0f_9a11);
        let (mut p, mut q) = (Profile::default(), Reference::default());
        for i in 0..60_000u32 {
            let x = rng();
            let tid = [-1, 7, 12][(x % 3) as usize];
            let start = if x.is_multiple_of(97) { 0x10_0000 + (x >> 20) % 64 * 4 } else { base + funcs[((x >> 8) % funcs.len() as u64) as usize] + (x >> 40) % 8 * 4 };
            // a burst of calls: recursion past the stack limit
            let deep = (20_000..20_700).contains(&i);
            let (taken, call, ret) = if deep { (true, true, false) } else { (x >> 50 & 1 == 1, x >> 51 & 3 == 0, x >> 53 & 3 == 0) };
            let r = range(tid, start, 1 + (x >> 56) as u32 % 12, taken, call, ret);
            p.range(&r, &mut spaces);
            q.range(&r, &mut spaces);
        }
        assert_eq!(p.functions(), q.functions);
        let folded: BTreeMap<String, u64> = q.folded.into_iter().collect();
        assert_eq!(p.folded(), folded);
        assert!(p.folded().keys().any(|k| k.matches(';').count() == 256), "the stack limit was reached");
        assert_eq!(p.executed(), q.executed);
    }
}
