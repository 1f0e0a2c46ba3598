//! AutoFDO profiles in the text format simpleperf's `inject` writes (and
//! `create_llvm_prof` / `llvm-profgen` read).
//!
//! Counting follows simpleperf's instruction-range parser, per trace
//! source:
//! - each instruction range whose start address lies in a mapping of the
//!   current thread (or the kernel) is held back until the next range of
//!   the same source, a TRACE_ON element, a range outside every mapping,
//!   or the end of the trace;
//! - a range counts once in `start-end` (start and last instruction, as
//!   addresses in the binary of its start address), and, when its last
//!   instruction is a taken branch, once in `end->to`;
//! - `to` is 0 for an indirect branch; for a taken direct branch it is the
//!   start of the next range of the source when one follows (in that
//!   range's binary), else the branch instruction's target;
//! - exceptions and other elements do not cut ranges apart.
//!
//! Output, per binary sorted by path: the number of ranges, `start-end:count`
//! lines, `0` (no address counts from ETM trace), the number of branches,
//! `from->to:count` lines, then `// build_id: 0x…` (the build ID of the
//! recording's build-id table, zero padded to 20 bytes) and `// path`, and
//! an empty line. Addresses are simpleperf's `vaddr in file` less the
//! binary's first PT_LOAD address; ranges starting or ending below it are
//! left out, branches from below it too, and a branch to below it goes
//! to 0. With more than one binary the file starts with simpleperf's
//! "Please split this file" comment.

use std::collections::HashMap;
use std::io::Write;

use super::decode::{RangeSample, SampleSink};
use super::spaces::Spaces;

/// Keys of (address, address) pairs: a multiplicative hash is enough (the
/// keys are addresses from the trace; a hostile recording can only make
/// lookups slower).
type PairMap = HashMap<(u64, u64), u64, std::hash::BuildHasherDefault<PairHasher>>;

#[derive(Default)]
pub struct PairHasher(u64);

impl std::hash::Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(26) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[derive(Default)]
pub struct BinaryCounts {
    pub ranges: PairMap,
    pub branches: PairMap,
}

/// A range held back until the next event of its source.
#[derive(Clone, Copy)]
struct Pending {
    bin: usize,
    start: u64,
    end: u64,
    taken: bool,
    to: u64,
    /// A taken direct branch: `to` becomes the next range's start.
    fix_to: bool,
}

/// Collects simpleperf's counts per binary (index into `Spaces::binaries`).
pub struct AutoFdo {
    pub per_binary: HashMap<usize, BinaryCounts>,
    pending: Vec<Option<Pending>>,
}

impl Default for AutoFdo {
    fn default() -> Self {
        AutoFdo { per_binary: HashMap::new(), pending: vec![None; 256] }
    }
}

impl AutoFdo {
    fn flush(&mut self, id: u8) {
        if let Some(p) = self.pending[id as usize].take() {
            let b = self.per_binary.entry(p.bin).or_default();
            let n = b.ranges.entry((p.start, p.end)).or_default();
            *n = n.saturating_add(1);
            if p.taken {
                let n = b.branches.entry((p.end, p.to)).or_default();
                *n = n.saturating_add(1);
            }
        }
    }

    /// Count the ranges still held back (end of the trace).
    pub fn finish(&mut self) {
        for id in 0..=255u8 {
            self.flush(id);
        }
    }
}

impl SampleSink for AutoFdo {
    fn range(&mut self, r: &RangeSample, spaces: &mut Spaces) {
        let Some(m) = spaces.find_map(r.tid, r.start) else {
            self.flush(r.id);
            return;
        };
        let bin = &spaces.binaries[m.bin];
        let start = bin.simpleperf_vaddr(m, r.start);
        if let Some(p) = &mut self.pending[r.id as usize] {
            if p.fix_to {
                p.to = start;
            }
        }
        self.flush(r.id);
        let direct_taken = r.taken && r.direct;
        self.pending[r.id as usize] = Some(Pending {
            bin: m.bin,
            start,
            end: bin.simpleperf_vaddr(m, r.last),
            taken: r.taken,
            to: if direct_taken { bin.simpleperf_vaddr(m, r.branch_addr) } else { 0 },
            fix_to: direct_taken,
        });
    }

    fn trace_on(&mut self, id: u8) {
        self.flush(id);
    }
}

impl AutoFdo {
    /// Write the profile (after [`AutoFdo::finish`]).
    pub fn write(&self, spaces: &Spaces, w: &mut dyn Write) -> std::io::Result<()> {
        let mut keys: Vec<usize> = self.per_binary.keys().copied().collect();
        keys.sort_by(|a, b| spaces.binaries[*a].path.cmp(&spaces.binaries[*b].path).then(a.cmp(b)));
        if keys.len() > 1 {
            writeln!(w, "// Please split this file. AutoFDO only accepts profile for one binary.")?;
        }
        for k in keys {
            let bin = &spaces.binaries[k];
            let c = &self.per_binary[&k];
            let base = bin.first_load_vaddr();
            let mut ranges: Vec<((u64, u64), u64)> =
                c.ranges.iter().filter(|((s, e), _)| *s >= base && *e >= base).map(|((s, e), n)| ((s - base, e - base), *n)).collect();
            ranges.sort_unstable();
            writeln!(w, "{}", ranges.len())?;
            for ((s, e), n) in &ranges {
                writeln!(w, "{:x}-{:x}:{}", s, e, n)?;
            }
            writeln!(w, "0")?;
            // `to` below the base becomes 0: pairs may then repeat, each
            // printed as simpleperf prints them
            let mut branches: Vec<((u64, u64), u64)> = c
                .branches
                .iter()
                .filter(|((f, _), _)| *f >= base)
                .map(|((f, t), n)| ((f - base, if *t >= base { t - base } else { 0 }), *n))
                .collect();
            branches.sort_unstable();
            writeln!(w, "{}", branches.len())?;
            for ((f, t), n) in &branches {
                writeln!(w, "{:x}->{:x}:{}", f, t, n)?;
            }
            let mut id = [0u8; 20];
            if let Some(b) = &bin.build_id {
                for (d, s) in id.iter_mut().zip(b) {
                    *d = *s;
                }
            }
            let hex: String = id.iter().map(|x| format!("{:02x}", x)).collect();
            writeln!(w, "// build_id: 0x{}", hex)?;
            writeln!(w, "// {}\n", bin.path)?;
        }
        Ok(())
    }
}
