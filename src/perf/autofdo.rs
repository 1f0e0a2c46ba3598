//! AutoFDO profiles in the text format simpleperf's `inject` writes (and
//! `create_llvm_prof` / `llvm-profgen` read).
//!
//! Per binary, sorted by path: the number of ranges, `start-end:count`
//! lines (start and last instruction of each executed range), `0` (no
//! address counts from ETM trace), the number of branches, `from->to:count`
//! lines (taken direct branches to their target, indirect ones to 0), then
//! `// build_id: 0x…` (20 bytes, zero padded) and `// path`. Addresses are
//! simpleperf's: the address in the binary's ELF address space minus its
//! first PT_LOAD segment's address. With more than one binary the file
//! starts with simpleperf's "Please split this file" comment.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use super::decode::{RangeSample, SampleSink};
use super::spaces::{Map, Spaces};

#[derive(Default)]
pub struct BinaryCounts {
    pub ranges: HashMap<(u64, u64), u64>,
    pub branches: HashMap<(u64, u64), u64>,
}

/// Collects simpleperf's counts per binary (index into `Spaces::binaries`).
#[derive(Default)]
pub struct AutoFdo {
    pub per_binary: HashMap<usize, BinaryCounts>,
}

/// simpleperf's `ToVaddrInFile`: the ELF address of `addr` inside `m`, 0
/// outside it.
fn to_vaddr(spaces: &Spaces, m: &Map, addr: u64) -> u64 {
    if addr < m.start || addr >= m.end {
        return 0;
    }
    spaces.binaries[m.bin].vaddr_in_file(m, addr)
}

impl SampleSink for AutoFdo {
    fn range(&mut self, r: &RangeSample, spaces: &mut Spaces) {
        let Some(m) = spaces.find_map(r.tid, r.start).cloned() else { return };
        let start = to_vaddr(spaces, &m, r.start);
        let end = to_vaddr(spaces, &m, r.last);
        let b = self.per_binary.entry(m.bin).or_default();
        *b.ranges.entry((start, end)).or_default() += 1;
        if r.taken {
            let to = if r.direct { to_vaddr(spaces, &m, r.branch_addr) } else { 0 };
            *b.branches.entry((end, to)).or_default() += 1;
        }
    }
}

impl AutoFdo {
    pub fn write(&self, spaces: &Spaces, w: &mut dyn Write) -> std::io::Result<()> {
        let mut keys: Vec<usize> = self.per_binary.keys().copied().collect();
        keys.sort_by(|a, b| spaces.binaries[*a].path.cmp(&spaces.binaries[*b].path));
        if keys.len() > 1 {
            writeln!(w, "// Please split this file. AutoFDO only accepts profile for one binary.")?;
        }
        for k in keys {
            let bin = &spaces.binaries[k];
            let c = &self.per_binary[&k];
            let base = bin.first_load_vaddr();
            let ranges: BTreeMap<(u64, u64), u64> = c
                .ranges
                .iter()
                .filter(|((s, e), _)| *s >= base && *e >= base)
                .map(|((s, e), n)| ((s - base, e - base), *n))
                .collect();
            writeln!(w, "{}", ranges.len())?;
            for ((s, e), n) in &ranges {
                writeln!(w, "{:x}-{:x}:{}", s, e, n)?;
            }
            writeln!(w, "0")?;
            let mut branches: BTreeMap<(u64, u64), u64> = BTreeMap::new();
            for ((f, t), n) in &c.branches {
                if *f >= base {
                    let t = if *t >= base { t - base } else { 0 };
                    *branches.entry((f - base, t)).or_default() += n;
                }
            }
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
