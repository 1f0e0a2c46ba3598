//! Instruction reads of one size served from the view of the memory run
//! the first of them got ([`MemAccess::read_run`]), for the decoders that
//! read memory one instruction at a time (PTM, ETMv3): the memory is asked
//! once per run of reads instead of once per instruction, and told of the
//! reads served from the view ([`MemAccess::run_uses`]) before anything
//! else uses it, so that what it counts (a cache's use of its pages) is
//! what the reads one by one would have left.
#![forbid(unsafe_code)]

use super::{MemAccess, MemView};
use crate::abi::*;

/// The view of the last run of `WORD`-byte reads, while the memory still
/// vouches for it.
#[derive(Debug, Default)]
pub struct ReadWindow {
    view: Option<MemView>,
    /// The address of the view's first byte, and its length.
    base: ocsd_vaddr_t,
    len: u64,
    space: ocsd_mem_space_acc_t,
    trace_id: u8,
    /// The run's token ([`crate::common::MemRun::token`]; 0: no promise).
    token: u64,
    /// The memory's epoch when the view was taken.
    epoch: Option<u64>,
    /// Reads served from the view not yet reported.
    uses: u32,
}

/// The size of the reads a [`ReadWindow`] serves (the decoders read 4
/// bytes at every instruction, whatever its size).
const WORD: usize = 4;

impl ReadWindow {
    /// At the start of a run of reads (a walk): keep the view only if the
    /// memory has not been used or changed since it was taken (by another
    /// decoder, or by the client in a callback).
    #[inline]
    pub fn check(&mut self, mem: &dyn MemAccess) {
        if self.view.is_some() && (self.epoch.is_none() || mem.epoch() != self.epoch) {
            self.view = None;
        }
    }

    /// Tell the memory of the reads served from the view; done before any
    /// other access to the memory (the end of a walk, a read outside the
    /// view).
    #[inline]
    pub fn report(&mut self, mem: &mut dyn MemAccess) {
        if self.uses > 0 {
            mem.run_uses(self.uses);
            self.uses = 0;
        }
    }

    /// The token of the view (0: none, or no promise): a view with the
    /// same nonzero token had the same bytes at the same addresses.
    #[inline]
    pub fn token(&self) -> u64 {
        if self.view.is_some() {
            self.token
        } else {
            0
        }
    }

    /// Whether the reads of the bytes `[addr, addr + n)` by `trace_id` in
    /// `space` would all be served from the view.
    #[inline]
    pub fn covers(&self, addr: ocsd_vaddr_t, n: u64, space: ocsd_mem_space_acc_t, trace_id: u8) -> bool {
        let off = addr.wrapping_sub(self.base);
        self.view.is_some() && space == self.space && trace_id == self.trace_id && off < self.len && self.len - off >= n
    }

    /// `n` reads served from the view without being made one by one (the
    /// caller checked [`ReadWindow::covers`]).
    #[inline]
    pub fn add_uses(&mut self, n: u32) {
        self.uses = self.uses.saturating_add(n);
    }

    /// Read the 4 bytes at `addr` into `out`, as [`MemAccess::read`] would:
    /// the bytes got (4, or fewer where the memory is not accessible).
    #[inline]
    pub fn read4(
        &mut self,
        mem: &mut dyn MemAccess,
        addr: ocsd_vaddr_t,
        space: ocsd_mem_space_acc_t,
        trace_id: u8,
        out: &mut [u8; WORD],
    ) -> Result<usize, ocsd_err_t> {
        if self.covers(addr, WORD as u64, space, trace_id) {
            let off = addr.wrapping_sub(self.base) as usize;
            // (a chunk of a file that cannot be read: asked of the memory,
            // which reports it as it does)
            if let Some(Ok(w)) = self.view.as_ref().map(|v| v.word(off)) {
                *out = w.to_le_bytes();
                self.uses += 1;
                return Ok(WORD);
            }
        }
        self.read_new(mem, addr, space, trace_id, out)
    }

    /// A read outside the view: made by the memory, its view kept.
    #[inline(never)]
    fn read_new(
        &mut self,
        mem: &mut dyn MemAccess,
        addr: ocsd_vaddr_t,
        space: ocsd_mem_space_acc_t,
        trace_id: u8,
        out: &mut [u8; WORD],
    ) -> Result<usize, ocsd_err_t> {
        self.report(mem);
        self.view = None;
        let run = mem.read_run(addr, space, trace_id, WORD, out)?;
        if run.got == WORD {
            if let Some(v) = run.view {
                self.base = addr.wrapping_sub(run.before as u64);
                // never past the top of memory (as the ETMv4 window: reads
                // wrapped to address 0 are not the view's)
                self.len = (v.len as u64).min((u64::MAX - self.base).saturating_add(1));
                self.space = space;
                self.trace_id = trace_id;
                self.token = run.token;
                self.epoch = mem.epoch();
                self.view = Some(v);
            }
        }
        Ok(run.got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::ViewData;
    use std::sync::Arc;

    /// Memory of `bytes` at `base` that gives a view with each read and
    /// counts the reads it makes and those reported.
    struct ViewMem {
        base: u64,
        bytes: Arc<Vec<u8>>,
        reads: u32,
        used: u32,
        epoch: u64,
    }

    impl MemAccess for ViewMem {
        fn read(&mut self, addr: ocsd_vaddr_t, _: ocsd_mem_space_acc_t, _: u8, out: &mut [u8]) -> Result<usize, ocsd_err_t> {
            self.reads += 1;
            self.epoch += 1;
            let off = addr.wrapping_sub(self.base) as usize;
            let n = self.bytes.len().saturating_sub(off).min(out.len());
            out[..n].copy_from_slice(&self.bytes[off..off + n]);
            Ok(n)
        }

        fn read_run(
            &mut self,
            addr: ocsd_vaddr_t,
            space: ocsd_mem_space_acc_t,
            trace_id: u8,
            req: usize,
            out: &mut [u8],
        ) -> Result<crate::common::MemRun, ocsd_err_t> {
            let got = self.read(addr, space, trace_id, &mut out[..req])?;
            let off = addr.wrapping_sub(self.base) as usize;
            let view = (got == req).then(|| MemView { data: ViewData::Whole(self.bytes.clone()), off, len: self.bytes.len() - off });
            Ok(crate::common::MemRun { got, token: 1, view, before: 0, page: None })
        }

        fn run_uses(&mut self, n: u32) {
            self.used += n;
        }

        fn epoch(&self) -> Option<u64> {
            Some(self.epoch)
        }
    }

    fn mem() -> ViewMem {
        ViewMem { base: 0x1000, bytes: Arc::new((0u8..16).collect()), reads: 0, used: 0, epoch: 0 }
    }

    #[test]
    fn reads_inside_the_view_are_served_from_it_and_reported() {
        let mut m = mem();
        let mut w = ReadWindow::default();
        let mut b = [0u8; 4];
        assert_eq!(w.read4(&mut m, 0x1000, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(4));
        assert_eq!(b, [0, 1, 2, 3]);
        assert_eq!(w.read4(&mut m, 0x1006, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(4));
        assert_eq!(b, [6, 7, 8, 9]);
        assert_eq!(w.read4(&mut m, 0x100c, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(4));
        assert_eq!((m.reads, m.used), (1, 0));
        w.report(&mut m);
        assert_eq!((m.reads, m.used), (1, 2));
        // past the view's end: asked of the memory, which has 2 bytes
        assert_eq!(w.read4(&mut m, 0x100e, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(2));
        assert_eq!(m.reads, 2);
    }

    #[test]
    fn a_view_never_serves_reads_past_the_top_of_memory() {
        let mut m = mem();
        m.base = u64::MAX - 7;
        let mut w = ReadWindow::default();
        let mut b = [0u8; 4];
        assert_eq!(w.read4(&mut m, u64::MAX - 7, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(4));
        assert_eq!(w.read4(&mut m, u64::MAX - 3, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(4));
        assert_eq!(m.reads, 1);
        // address 0 is not the view's byte 8, whatever the view holds
        assert!(!w.covers(0, 4, OCSD_MEM_SPACE_ANY, 1));
        w.read4(&mut m, 0, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap();
        assert_eq!(m.reads, 2);
    }

    #[test]
    fn a_view_is_dropped_when_the_memory_was_used_since() {
        let mut m = mem();
        let mut w = ReadWindow::default();
        let mut b = [0u8; 4];
        w.read4(&mut m, 0x1000, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap();
        w.check(&m);
        w.read4(&mut m, 0x1004, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap();
        assert_eq!(m.reads, 1);
        w.report(&mut m);
        // another reader
        m.read(0x1000, OCSD_MEM_SPACE_ANY, 2, &mut b).unwrap();
        w.check(&m);
        w.read4(&mut m, 0x1008, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap();
        assert_eq!(m.reads, 3);
        // another trace ID or memory space is not served from the view
        w.read4(&mut m, 0x1008, OCSD_MEM_SPACE_ANY, 2, &mut b).unwrap();
        w.read4(&mut m, 0x1008, OCSD_MEM_SPACE_N, 2, &mut b).unwrap();
        assert_eq!(m.reads, 5);
    }
}
