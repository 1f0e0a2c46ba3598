//! Profiles for a person: executed instructions per function (symbols from
//! the ELF symbol tables), folded call stacks for a flame graph (calls and
//! returns seen in the trace), and line coverage as an lcov tracefile
//! (lines from the DWARF line tables).

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use crate::abi::gen_elem::ocsd_generic_trace_elem;
use crate::abi::*;

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

#[derive(Default, Clone)]
pub struct FuncStats {
    pub instructions: u64,
    pub ranges: u64,
    pub binary: String,
}

/// Collects the per-function table, the folded stacks and the executed
/// addresses (for lcov).
#[derive(Default)]
pub struct Profile {
    symbols: HashMap<usize, Symbols>,
    pub functions: HashMap<String, FuncStats>,
    /// Folded stack ("comm;f1;f2") -> instructions.
    pub folded: HashMap<String, u64>,
    stacks: HashMap<i32, Vec<String>>,
    /// Per binary: executed ELF address -> times (per range execution).
    pub executed: HashMap<usize, HashMap<u64, u64>>,
    pending_call: HashMap<i32, bool>,
}

impl Profile {
    fn func_name(&mut self, spaces: &mut Spaces, tid: i32, addr: u64) -> (String, Option<(usize, u64)>) {
        let Some(m) = spaces.find_map(tid, addr).cloned() else { return (format!("[unknown] {:#x}", addr), None) };
        let Some(data) = spaces.load(m.bin) else { return (format!("[{}]", spaces.binaries[m.bin].path), None) };
        let bin = &spaces.binaries[m.bin];
        let v = bin.vaddr_in_file(&m, addr);
        let syms = self.symbols.entry(m.bin).or_insert_with(|| Symbols::from_elf(&data));
        let base = bin.path.rsplit('/').next().unwrap_or(&bin.path);
        // no symbol: the binary's name, as perf shows [unknown] code
        let name = match syms.lookup(v) {
            Some(n) => n.to_string(),
            None => format!("[{}]", base),
        };
        (name, Some((m.bin, v)))
    }
}

impl SampleSink for Profile {
    fn range(&mut self, r: &RangeSample, spaces: &mut Spaces) {
        let (func, loc) = self.func_name(spaces, r.tid, r.start);
        let binary = loc.map(|(b, _)| spaces.binaries[b].path.clone()).unwrap_or_default();
        let f = self.functions.entry(func.clone()).or_insert_with(|| FuncStats { binary, ..Default::default() });
        f.instructions += r.n_instr as u64;
        f.ranges += 1;
        // stack: the range runs in the top frame
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
        let comm = spaces.comm_of(r.tid);
        let mut key = String::with_capacity(64);
        key.push_str(&comm);
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
        // executed instruction addresses (A64 / A32: 4 bytes; T32: 2-byte steps)
        if let Some((bin, v)) = loc {
            let step = if r.isa == ocsd_isa_thumb2 { 2 } else { 4 };
            let len = r.last.saturating_sub(r.start);
            if len <= 1 << 20 {
                let e = self.executed.entry(bin).or_default();
                let mut a = 0;
                while a <= len {
                    *e.entry(v + a).or_default() += 1;
                    a += step;
                }
            }
        }
    }
}

impl Profile {
    /// The per-function table, most instructions first.
    pub fn write_functions(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let mut v: Vec<(&String, &FuncStats)> = self.functions.iter().collect();
        v.sort_by(|a, b| b.1.instructions.cmp(&a.1.instructions).then(a.0.cmp(b.0)));
        let total: u64 = v.iter().map(|x| x.1.instructions).sum();
        writeln!(w, "{:>12} {:>7} {:>9}  {:<40} {}", "instructions", "%", "ranges", "function", "binary")?;
        for (name, s) in v {
            let pct = if total > 0 { 100.0 * s.instructions as f64 / total as f64 } else { 0.0 };
            writeln!(w, "{:>12} {:>6.2}% {:>9}  {:<40} {}", s.instructions, pct, s.ranges, name, s.binary)?;
        }
        Ok(())
    }

    /// Folded stacks, one `stack count` line each, sorted.
    pub fn folded_lines(&self) -> Vec<String> {
        let sorted: BTreeMap<&String, &u64> = self.folded.iter().collect();
        sorted.into_iter().filter(|(_, n)| **n > 0).map(|(k, n)| format!("{} {}", k, n)).collect()
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
        for (bin, addrs) in &self.executed {
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

    #[test]
    fn folded_stacks_follow_calls_and_returns() {
        let mut p = Profile::default();
        p.folded.insert("prog;main;f".into(), 3);
        p.folded.insert("prog;main".into(), 5);
        assert_eq!(p.folded_lines(), vec!["prog;main 5".to_string(), "prog;main;f 3".to_string()]);
        let mut svg = Vec::new();
        p.write_flamegraph("t", &mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert!(svg.starts_with("<?xml") && svg.contains("main") && svg.contains("</svg>"));
    }
}
