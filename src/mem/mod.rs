//! Target memory access for instruction following.
//!
//! Accessors map an address range in a memory space to bytes: a binary
//! file (whole, or regions at file offsets), a buffer, or a client
//! callback (optionally told the trace ID). The [`MemMapper`] holds them,
//! refuses overlapping ranges in the same memory space, and serves reads;
//! files are read into memory once, so a read is a bounds-checked copy.
#![forbid(unsafe_code)]

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use crate::abi::*;
use crate::common::MemAccess;

pub mod elf;

/// A client read function: (address, memory space, trace ID, buffer) ->
/// bytes read.
pub type ReadFn = Box<dyn FnMut(ocsd_vaddr_t, ocsd_mem_space_acc_t, u8, &mut [u8]) -> usize + Send>;

pub enum Source {
    /// File contents (shared between accessors of one file).
    File { path: String, data: Arc<Vec<u8>>, offset: usize },
    /// A copy of a client buffer.
    Buffer { data: Vec<u8> },
    /// A client callback.
    Callback { read: ReadFn },
}

pub struct Accessor {
    pub start: ocsd_vaddr_t,
    /// Inclusive end address.
    pub end: ocsd_vaddr_t,
    pub space: ocsd_mem_space_acc_t,
    pub source: Source,
}

impl Accessor {
    fn covers(&self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t) -> bool {
        addr >= self.start && addr <= self.end && (self.space & space) != 0
    }

    fn overlaps(&self, other: &Accessor) -> bool {
        self.start <= other.end && other.start <= self.end && (self.space & other.space) != 0
    }

    fn read(&mut self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8, buf: &mut [u8]) -> usize {
        let avail = (self.end - addr).saturating_add(1);
        let n = (buf.len() as u64).min(avail) as usize;
        let rel = (addr - self.start) as usize;
        match &mut self.source {
            Source::File { data, offset, .. } => copy_from(data, offset.saturating_add(rel), &mut buf[..n]),
            Source::Buffer { data } => copy_from(data, rel, &mut buf[..n]),
            Source::Callback { read } => read(addr, space, trace_id, &mut buf[..n]),
        }
    }

    /// `FileAcc; Range::0x400000:4053e3; Mem Space::Any` (+ file name line).
    pub fn describe(&self, out: &mut String) {
        let kind = match self.source {
            Source::File { .. } => "FileAcc",
            Source::Buffer { .. } => "BuffAcc",
            Source::Callback { .. } => "CB  Acc",
        };
        let _ = write!(out, "{}; Range::0x{:x}:{:x}; Mem Space::", kind, self.start, self.end);
        crate::printers::gen_elem::write_mem_space_str(self.space, out);
        if let Source::File { path, .. } = &self.source {
            let _ = write!(out, "\nFilename={}", path);
        }
    }
}

fn copy_from(data: &[u8], at: usize, dst: &mut [u8]) -> usize {
    if at >= data.len() {
        return 0;
    }
    let n = dst.len().min(data.len() - at);
    dst[..n].copy_from_slice(&data[at..at + n]);
    n
}

/// The set of accessors of a decode tree.
pub struct MemMapper {
    accessors: Vec<Accessor>,
    last_hit: usize,
    /// Identifies the current mapping (unique in the process); renewed on
    /// every change. See [`MemAccess::contents_id`].
    contents_id: u64,
    /// Whether a client callback accessor is mapped (contents may change).
    has_callbacks: bool,
}

fn next_contents_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Default for MemMapper {
    fn default() -> Self {
        MemMapper { accessors: Vec::new(), last_hit: 0, contents_id: next_contents_id(), has_callbacks: false }
    }
}

impl MemMapper {
    pub fn new() -> Self {
        Self::default()
    }

    /// After any change of the accessors.
    fn changed(&mut self) {
        self.last_hit = 0;
        self.contents_id = next_contents_id();
        self.has_callbacks = self.accessors.iter().any(|a| matches!(a.source, Source::Callback { .. }));
    }

    pub fn is_empty(&self) -> bool {
        self.accessors.is_empty()
    }

    /// Add an accessor; `OCSD_ERR_MEM_ACC_OVERLAP` if its range overlaps
    /// one already mapped in an intersecting memory space.
    pub fn add(&mut self, acc: Accessor) -> Result<(), ocsd_err_t> {
        if acc.end < acc.start {
            return Err(OCSD_ERR_MEM_ACC_RANGE_INVALID);
        }
        if self.accessors.iter().any(|a| a.overlaps(&acc)) {
            return Err(OCSD_ERR_MEM_ACC_OVERLAP);
        }
        self.accessors.push(acc);
        self.changed();
        Ok(())
    }

    /// Remove the accessor starting at `start` in memory space `space`.
    pub fn remove(&mut self, start: ocsd_vaddr_t, space: ocsd_mem_space_acc_t) -> Result<(), ocsd_err_t> {
        match self.accessors.iter().position(|a| a.start == start && a.space == space) {
            Some(i) => {
                self.accessors.remove(i);
                self.changed();
                Ok(())
            }
            None => Err(OCSD_ERR_INVALID_PARAM_VAL),
        }
    }

    pub fn clear(&mut self) {
        self.accessors.clear();
        self.changed();
    }

    /// One description per accessor as OpenCSD lists them (its
    /// `logMappedRanges`).
    ///
    /// OpenCSD keeps one file accessor per file: the regions mapped from
    /// one file are listed together, at the place of the file's first
    /// mapping, with the file name once after them. The base range (file
    /// offset 0) comes first, with the accessor's memory space; then the
    /// regions at other offsets, in the order they were added, each with
    /// the memory space a file region is created with (any), which is what
    /// OpenCSD prints for them whatever space was asked for.
    pub fn describe_each(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, a) in self.accessors.iter().enumerate() {
            let path = match &a.source {
                Source::File { path, .. } => path,
                _ => {
                    let mut s = String::new();
                    a.describe(&mut s);
                    out.push(s);
                    continue;
                }
            };
            let same_file = |b: &&Accessor| matches!(&b.source, Source::File { path: p, .. } if p == path);
            if self.accessors[..i].iter().any(|b| same_file(&b)) {
                continue; // listed with the file's first mapping
            }
            let group: Vec<&Accessor> = self.accessors[i..].iter().filter(same_file).collect();
            let is_base = |b: &&&Accessor| matches!(b.source, Source::File { offset: 0, .. });
            let mut s = String::new();
            for r in group.iter().filter(is_base).take(1) {
                let _ = write!(s, "FileAcc; Range::0x{:x}:{:x}; Mem Space::", r.start, r.end);
                crate::printers::gen_elem::write_mem_space_str(r.space, &mut s);
                s.push('\n');
            }
            for r in group.iter().filter(|b| !is_base(b)) {
                let _ = write!(s, "FileAcc; Range::0x{:x}:{:x}; Mem Space::", r.start, r.end);
                crate::printers::gen_elem::write_mem_space_str(OCSD_MEM_SPACE_ANY, &mut s);
                s.push('\n');
            }
            let _ = write!(s, "Filename={}", path);
            out.push(s);
        }
        out
    }

    pub fn accessors(&self) -> &[Accessor] {
        &self.accessors
    }

    /// A file accessor for `path` mapped at `address`: the whole file, or
    /// `size` bytes from `offset` when given.
    pub fn file_accessor(
        path: &str,
        address: ocsd_vaddr_t,
        offset: usize,
        size: Option<usize>,
        space: ocsd_mem_space_acc_t,
    ) -> Result<Accessor, ocsd_err_t> {
        let meta = std::fs::metadata(Path::new(path)).map_err(|_| OCSD_ERR_MEM_ACC_FILE_NOT_FOUND)?;
        if !meta.is_file() {
            // a device, FIFO or directory has no size to map (reading
            // /dev/zero to its end would never finish)
            return Err(OCSD_ERR_MEM_ACC_RANGE_INVALID);
        }
        let data = std::fs::read(Path::new(path)).map_err(|_| OCSD_ERR_MEM_ACC_FILE_NOT_FOUND)?;
        if offset >= data.len() {
            return Err(OCSD_ERR_MEM_ACC_RANGE_INVALID);
        }
        // a whole file is mapped up to an even size, as OpenCSD does
        let len = size.unwrap_or((data.len() - offset) & !1).min(data.len() - offset);
        if len == 0 {
            return Err(OCSD_ERR_MEM_ACC_RANGE_INVALID);
        }
        Ok(Accessor {
            start: address,
            end: address.wrapping_add(len as u64 - 1),
            space,
            source: Source::File { path: path.to_string(), data: Arc::new(data), offset },
        })
    }
}

impl MemAccess for MemMapper {
    fn read(&mut self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8, buf: &mut [u8]) -> Result<usize, ocsd_err_t> {
        if buf.is_empty() {
            return Ok(0);
        }
        let idx = match self.accessors.get(self.last_hit) {
            Some(a) if a.covers(addr, space) => self.last_hit,
            _ => match self.accessors.iter().position(|a| a.covers(addr, space)) {
                Some(i) => {
                    self.last_hit = i;
                    i
                }
                None => return Ok(0),
            },
        };
        let want = buf.len();
        let n = self.accessors[idx].read(addr, space, trace_id, buf);
        if n > want {
            return Err(OCSD_ERR_MEM_ACC_BAD_LEN);
        }
        Ok(n)
    }

    fn contents_id(&self) -> Option<u64> {
        (!self.has_callbacks).then_some(self.contents_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf_acc(start: u64, data: Vec<u8>, space: ocsd_mem_space_acc_t) -> Accessor {
        Accessor { start, end: start + data.len() as u64 - 1, space, source: Source::Buffer { data } }
    }

    #[test]
    fn reads_within_and_across_end() {
        let mut m = MemMapper::new();
        m.add(buf_acc(0x1000, vec![1, 2, 3, 4, 5, 6], OCSD_MEM_SPACE_ANY)).unwrap();
        let mut b = [0u8; 4];
        assert_eq!(m.read(0x1000, OCSD_MEM_SPACE_EL1N, 0, &mut b), Ok(4));
        assert_eq!(b, [1, 2, 3, 4]);
        assert_eq!(m.read(0x1004, OCSD_MEM_SPACE_EL1N, 0, &mut b), Ok(2));
        assert_eq!(m.read(0x2000, OCSD_MEM_SPACE_EL1N, 0, &mut b), Ok(0));
        assert_eq!(m.read(u64::MAX, OCSD_MEM_SPACE_EL1N, 0, &mut b), Ok(0));
    }

    #[test]
    fn overlap_rules_follow_memory_spaces() {
        let mut m = MemMapper::new();
        m.add(buf_acc(0x1000, vec![0; 16], OCSD_MEM_SPACE_EL1N)).unwrap();
        assert_eq!(m.add(buf_acc(0x1008, vec![0; 16], OCSD_MEM_SPACE_N)).err(), Some(OCSD_ERR_MEM_ACC_OVERLAP));
        m.add(buf_acc(0x1008, vec![9; 16], OCSD_MEM_SPACE_EL1S)).unwrap();
        let mut b = [0u8; 1];
        m.read(0x1008, OCSD_MEM_SPACE_EL1S, 0, &mut b).unwrap();
        assert_eq!(b[0], 9);
        m.remove(0x1008, OCSD_MEM_SPACE_EL1S).unwrap();
        assert_eq!(m.remove(0x1008, OCSD_MEM_SPACE_EL1S), Err(OCSD_ERR_INVALID_PARAM_VAL));
    }

    #[test]
    fn contents_id_changes_with_the_mapping() {
        let mut m = MemMapper::new();
        let other = MemMapper::new();
        let id0 = m.contents_id().unwrap();
        assert_ne!(Some(id0), other.contents_id());
        m.add(buf_acc(0x1000, vec![0; 16], OCSD_MEM_SPACE_ANY)).unwrap();
        let id1 = m.contents_id().unwrap();
        assert_ne!(id0, id1);
        let mut b = [0u8; 4];
        m.read(0x1000, OCSD_MEM_SPACE_ANY, 0, &mut b).unwrap();
        assert_eq!(m.contents_id(), Some(id1)); // reads change nothing
        m.add(Accessor { start: 0x2000, end: 0x2fff, space: OCSD_MEM_SPACE_ANY, source: Source::Callback { read: Box::new(|_, _, _, b| b.len()) } })
            .unwrap();
        assert_eq!(m.contents_id(), None); // callbacks may return anything
        m.remove(0x2000, OCSD_MEM_SPACE_ANY).unwrap();
        let id2 = m.contents_id().unwrap();
        assert!(id2 != id1 && id2 != id0);
        m.clear();
        assert!(m.contents_id().unwrap() != id2);
    }

    #[test]
    fn callback_and_describe() {
        let mut m = MemMapper::new();
        m.add(Accessor {
            start: 0x400000,
            end: 0x4053e3,
            space: OCSD_MEM_SPACE_ANY,
            source: Source::Callback { read: Box::new(|a, _, id, b| { b.fill((a as u8).wrapping_add(id)); b.len() }) },
        })
        .unwrap();
        let mut b = [0u8; 2];
        assert_eq!(m.read(0x400001, OCSD_MEM_SPACE_ANY, 3, &mut b), Ok(2));
        assert_eq!(b, [4, 4]);
        let mut s = String::new();
        m.accessors()[0].describe(&mut s);
        assert_eq!(s, "CB  Acc; Range::0x400000:4053e3; Mem Space::Any");
    }

    #[test]
    fn file_regions_listed_as_one_accessor() {
        let data = Arc::new(vec![0u8; 0x1000]);
        let f = |start: u64, len: u64, offset: usize, space| Accessor {
            start,
            end: start + len - 1,
            space,
            source: Source::File { path: "m.bin".into(), data: data.clone(), offset },
        };
        let mut m = MemMapper::new();
        m.add(f(0x200000, 0x20, 0x10, OCSD_MEM_SPACE_EL1N)).unwrap();
        m.add(buf_acc(0x8000, vec![0; 64], OCSD_MEM_SPACE_N)).unwrap();
        m.add(f(0x100000, 0x100, 0, OCSD_MEM_SPACE_S)).unwrap();
        m.add(f(0x300000, 0x40, 0x400, OCSD_MEM_SPACE_EL1N)).unwrap();
        let d = m.describe_each();
        assert_eq!(d.len(), 2);
        assert_eq!(
            d[0],
            "FileAcc; Range::0x100000:1000ff; Mem Space::Any S\n\
             FileAcc; Range::0x200000:20001f; Mem Space::Any\n\
             FileAcc; Range::0x300000:30003f; Mem Space::Any\n\
             Filename=m.bin"
        );
        assert_eq!(d[1], "BuffAcc; Range::0x8000:803f; Mem Space::Any NS");
    }
}
