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

use std::io::Write;

use super::counts::Counts;
use super::decode::{direct_branch_target, RangeSample, SampleSink};
use rustc_hash::FxHashMap;
use super::spaces::{Map, Spaces};

/// Counts per (address, address) pair.
type PairMap = FxHashMap<(u64, u64), u64>;

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
    /// A taken direct branch whose `to` is not known yet: the next
    /// range's start, or, when no range follows, the branch's target
    /// (read from memory when the range is counted).
    fix_to: bool,
    /// The range, and the mapping of its start (for the target).
    range: RangeSample,
    map: Map,
}

/// Collects simpleperf's counts per binary (index into `Spaces::binaries`).
pub struct AutoFdo {
    /// The counts, once [`AutoFdo::finish`] has put them there.
    pub per_binary: FxHashMap<usize, BinaryCounts>,
    /// (binary, start, end) and (binary, from, to): counted while decoding.
    ranges: Counts<(usize, u64, u64)>,
    branches: Counts<(usize, u64, u64)>,
    pending: Vec<Option<Pending>>,
    /// The last range's thread and mapping, with the addresses for which
    /// that thread finds the same mapping (the mappings do not change
    /// during a decode).
    last_map: Option<(i32, Map, u64, u64)>,
}

impl Default for AutoFdo {
    fn default() -> Self {
        AutoFdo { per_binary: FxHashMap::default(), ranges: Counts::default(), branches: Counts::default(), pending: vec![None; 256], last_map: None }
    }
}

impl AutoFdo {
    fn flush(&mut self, id: u8, spaces: &mut Spaces) {
        if let Some(mut p) = self.pending[id as usize].take() {
            if p.fix_to {
                // no range follows: the branch's own target
                let target = direct_branch_target(spaces, &p.range);
                p.to = spaces.binaries[p.map.bin].simpleperf_vaddr(&p.map, target);
            }
            self.ranges.add((p.bin, p.start, p.end), 1);
            if p.taken {
                self.branches.add((p.bin, p.end, p.to), 1);
            }
        }
    }

    /// Count the ranges still held back (end of the trace), and put the
    /// counts in `per_binary`.
    pub fn finish(&mut self, spaces: &mut Spaces) {
        for id in 0..=255u8 {
            self.flush(id, spaces);
        }
        let add = |m: &mut PairMap, k: (u64, u64), n: u64| {
            let c = m.entry(k).or_default();
            *c = c.saturating_add(n);
        };
        for ((bin, s, e), n) in std::mem::take(&mut self.ranges).into_map() {
            add(&mut self.per_binary.entry(bin).or_default().ranges, (s, e), n);
        }
        for ((bin, f, t), n) in std::mem::take(&mut self.branches).into_map() {
            add(&mut self.per_binary.entry(bin).or_default().branches, (f, t), n);
        }
    }
}

impl SampleSink for AutoFdo {
    fn range(&mut self, r: &RangeSample, spaces: &mut Spaces) {
        let m = match self.last_map {
            Some((tid, m, lo, hi)) if tid == r.tid && lo <= r.start && r.start <= hi => m,
            _ => {
                let Some((m, lo, hi)) = spaces.find_map_span(r.tid, r.start) else {
                    self.flush(r.id, spaces);
                    return;
                };
                self.last_map = Some((r.tid, m, lo, hi));
                m
            }
        };
        let start = spaces.binaries[m.bin].simpleperf_vaddr(&m, r.start);
        if let Some(p) = &mut self.pending[r.id as usize] {
            if p.fix_to {
                p.to = start;
                p.fix_to = false;
            }
        }
        self.flush(r.id, spaces);
        let bin = &spaces.binaries[m.bin];
        self.pending[r.id as usize] = Some(Pending {
            bin: m.bin,
            start,
            end: bin.simpleperf_vaddr(&m, r.last),
            taken: r.taken,
            to: 0,
            fix_to: r.taken && r.direct,
            range: *r,
            map: m,
        });
    }

    fn trace_on(&mut self, id: u8, spaces: &mut Spaces) {
        self.flush(id, spaces);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::ocsd_isa_aarch64;
    use crate::perf::spaces::{Binary, Map};

    const RUN: u64 = 0x5800_0000;

    /// `/bin/b` (build ID 12 34) and `/bin/a` (none), both ELF files with
    /// a read-only first segment at 0 and code at 0x1000 (file offset
    /// 0x1000), mapped into process 10 at RUN and RUN + 0x10000.
    fn spaces() -> Spaces {
        let mk = |path: &str, id: Option<Vec<u8>>| {
            let mut b = Binary::new(path, id);
            b.loads = vec![(0, 0, 0x1000), (0x1000, 0x1000, 0x1000)];
            b.exec_min = Some((0x1000, 0x1000));
            b
        };
        let map = |start: u64, bin: usize| Map { start, end: start + 0x1000, pgoff: 0x1000, bin };
        Spaces::from_parts(vec![mk("/bin/b", Some(vec![0x12, 0x34])), mk("/bin/a", None)], vec![(10, map(RUN + 0x1000, 0)), (10, map(RUN + 0x11000, 1))])
    }

    fn range(start: u64, last: u64, taken: bool, direct: bool, to: u64) -> RangeSample {
        RangeSample {
            start: RUN + start,
            last: RUN + last,
            n_instr: ((last - start) / 4 + 1) as u32,
            tid: 10,
            isa: ocsd_isa_aarch64,
            taken,
            direct,
            branch_addr: Some(RUN + to),
            last_size: 4,
            is_call: false,
            is_return: false,
            id: 0x10,
        }
    }

    fn profile(events: &[Result<RangeSample, u8>]) -> String {
        let mut s = spaces();
        let mut a = AutoFdo::default();
        for e in events {
            match e {
                Ok(r) => a.range(r, &mut s),
                Err(id) => a.trace_on(*id, &mut s),
            }
        }
        a.finish(&mut s);
        let mut out = Vec::new();
        a.write(&s, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    const B_TAIL: &str = "// build_id: 0x1234000000000000000000000000000000000000\n// /bin/b\n\n";

    #[test]
    fn a_taken_direct_branch_goes_to_the_next_range_of_its_source() {
        // the branch's target says 0x1100, but the next range (after an
        // exception, say) starts at 0x1200: simpleperf counts 0x1200
        let out = profile(&[Ok(range(0x1000, 0x1004, true, true, 0x1100)), Ok(range(0x1200, 0x1208, false, false, 0))]);
        assert_eq!(out, format!("2\n1000-1004:1\n1200-1208:1\n0\n1\n1004->1200:1\n{}", B_TAIL));
    }

    /// A target not given with the range is read from the binary and
    /// decoded, when no range of the source follows to give it.
    #[test]
    fn an_unknown_target_is_read_from_memory_when_no_range_follows() {
        let mut s = spaces();
        let mut code = vec![0u8; 0x2000];
        // b .+0x100 at 0x1004, b .-0x8 at 0x1204
        code[0x1004..0x1008].copy_from_slice(&0x1400_0040u32.to_le_bytes());
        code[0x1204..0x1208].copy_from_slice(&0x17ff_fffeu32.to_le_bytes());
        s.binaries[0].data = Some(Some(std::sync::Arc::new(code)));
        let unknown = |r: RangeSample| RangeSample { branch_addr: None, ..r };
        let mut a = AutoFdo::default();
        a.range(&unknown(range(0x1000, 0x1004, true, true, 0)), &mut s);
        a.trace_on(0x10, &mut s);
        // followed by a range: that range's start, not the branch target
        a.range(&unknown(range(0x1200, 0x1204, true, true, 0)), &mut s);
        a.range(&range(0x1300, 0x1308, false, false, 0), &mut s);
        // the end of the trace
        a.range(&unknown(range(0x1200, 0x1204, true, true, 0)), &mut s);
        a.finish(&mut s);
        let mut out = Vec::new();
        a.write(&s, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(out, format!("3\n1000-1004:1\n1200-1204:2\n1300-1308:1\n0\n3\n1004->1104:1\n1204->11fc:1\n1204->1300:1\n{}", B_TAIL));
    }

    #[test]
    fn trace_on_and_the_end_keep_the_branch_target() {
        let out = profile(&[
            Ok(range(0x1000, 0x1004, true, true, 0x1100)),
            Err(0x10),
            Ok(range(0x1200, 0x1208, true, true, 0x1300)),
        ]);
        assert_eq!(out, format!("2\n1000-1004:1\n1200-1208:1\n0\n2\n1004->1100:1\n1208->1300:1\n{}", B_TAIL));
    }

    #[test]
    fn an_unmapped_range_is_dropped_and_cuts_the_chain() {
        let unmapped = RangeSample { start: 0x10, last: 0x20, ..range(0, 0, false, false, 0) };
        let out = profile(&[Ok(range(0x1000, 0x1004, true, true, 0x1100)), Ok(unmapped), Ok(range(0x1200, 0x1200, false, false, 0))]);
        assert_eq!(out, format!("2\n1000-1004:1\n1200-1200:1\n0\n1\n1004->1100:1\n{}", B_TAIL));
    }

    #[test]
    fn indirect_branches_go_to_zero_not_taken_ones_count_only_the_range() {
        let out = profile(&[
            Ok(range(0x1000, 0x1004, true, false, 0)),
            Ok(range(0x1010, 0x1014, false, true, 0x1000)),
            Ok(range(0x1010, 0x1014, false, true, 0x1000)),
            Ok(range(0x1018, 0x1018, true, false, 0)),
        ]);
        assert_eq!(out, format!("3\n1000-1004:1\n1010-1014:2\n1018-1018:1\n0\n2\n1004->0:1\n1018->0:1\n{}", B_TAIL));
    }

    #[test]
    fn sources_do_not_fix_each_other_and_binaries_sort_by_path() {
        let other = |r: RangeSample| RangeSample { id: 0x11, ..r };
        let out = profile(&[
            Ok(range(0x1000, 0x1004, true, true, 0x1100)),
            Ok(other(range(0x11000, 0x11008, true, true, 0x11100))),
            Ok(range(0x1100, 0x1104, false, false, 0)),
        ]);
        assert_eq!(
            out,
            format!(
                "// Please split this file. AutoFDO only accepts profile for one binary.\n\
                 1\n1000-1008:1\n0\n1\n1008->1100:1\n// build_id: 0x0000000000000000000000000000000000000000\n// /bin/a\n\n\
                 2\n1000-1004:1\n1100-1104:1\n0\n1\n1004->1100:1\n{}",
                B_TAIL
            )
        );
    }

    #[test]
    fn addresses_below_the_first_segment_are_left_out_or_go_to_zero() {
        // first PT_LOAD at 0x800: addresses are taken relative to it; a
        // branch into the first page goes to 0, and two such branches
        // from one place stay two lines, as simpleperf prints them
        let mut s = spaces();
        s.binaries[0].loads[0] = (0x800, 0x800, 0x800);
        let mut a = AutoFdo::default();
        for r in [range(0x1000, 0x1004, true, true, 0x400), range(0x1000, 0x1004, true, true, 0x600)] {
            a.range(&r, &mut s);
            a.trace_on(0x10, &mut s);
        }
        a.finish(&mut s);
        a.per_binary.get_mut(&0).unwrap().ranges.insert((0x700, 0x900), 1);
        let mut out = Vec::new();
        a.write(&s, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), format!("1\n800-804:2\n0\n2\n804->0:1\n804->0:1\n{}", B_TAIL));
    }
}
