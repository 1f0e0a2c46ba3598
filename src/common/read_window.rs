//! Instruction reads of one size served from the view of the memory run
//! the first of them got ([`MemAccess::read_run`]), for the decoders that
//! read memory one instruction at a time (PTM, ETMv3): the memory is asked
//! once per run of reads instead of once per instruction, and told of the
//! reads served from a cache page's view ([`MemAccess::run_uses`]) before
//! anything else uses it, so that what it counts (a cache's use of its
//! pages) is what the reads one by one would have left (a view that is no
//! cache page's has no uses to count).
//!
//! Views of cache pages are kept by page: when a read leaves the view for
//! a page the window had a view of, the memory finds the page as it would
//! ([`MemAccess::read_known_word`], [`MemAccess::read_run_known`]) and the
//! window goes back to that view instead of being given a new one.
#![forbid(unsafe_code)]

use super::{CachePage, MemAccess, MemRun, MemView};
use crate::abi::*;

/// Views kept by cache page (index modulo this): OpenCSD's default number
/// of cache pages. The ETMv4 window keeps as many.
pub(crate) const KEPT: usize = crate::mem::cache::DEFAULT_PAGES;

/// The place in a window's kept views of a view that is not a cache
/// page's (after those of pages).
pub(crate) const OWN: usize = KEPT;

/// A window's current view when it has none.
pub(crate) const NO_VIEW: usize = usize::MAX;

/// A view a window had: its bytes from `base`, `len` of them, under
/// `token` (`view` None: none).
#[derive(Debug, Default)]
pub(crate) struct Kept {
    pub(crate) base: ocsd_vaddr_t,
    pub(crate) len: u64,
    pub(crate) token: u64,
    pub(crate) view: Option<MemView>,
}

impl Kept {
    /// Whether the view holds the `n` bytes at `addr`.
    #[inline]
    pub(crate) fn holds(&self, addr: ocsd_vaddr_t, n: u64) -> bool {
        let off = addr.wrapping_sub(self.base);
        self.view.is_some() && off < self.len && self.len - off >= n
    }
}

/// The views a window keeps, shared by the PTM/ETMv3 [`ReadWindow`] and
/// the ETMv4/ETE decoder's window: those of cache pages by page index
/// modulo [`KEPT`], each with its page's [`CachePage::serial`] (what the
/// memory is shown, [`KeptViews::serials`], to tell whether it serves a
/// read from a page the window has a view of), then at [`OWN`] the last
/// view that was no cache page's.
#[derive(Debug, Default)]
pub(crate) struct KeptViews {
    views: [Kept; KEPT + 1],
    /// The serial of each kept page view (0: none).
    serials: [u64; KEPT],
}

impl KeptViews {
    /// Where the view of cache page `p` is kept.
    #[inline(always)]
    pub(crate) fn slot(p: CachePage) -> usize {
        p.index as usize % KEPT
    }

    /// The view kept at `k` ([`OWN`] or a page's slot).
    #[inline(always)]
    pub(crate) fn get(&self, k: usize) -> Option<&Kept> {
        self.views.get(k)
    }

    /// The serials of the pages kept, by slot.
    #[inline(always)]
    pub(crate) fn serials(&self) -> &[u64] {
        &self.serials
    }

    /// Keep `view`, the view of the memory run that got the read at
    /// `addr`, under `token`: `before` bytes of it before `addr` (never
    /// below address 0), none past the top of memory; at its cache page's
    /// slot (with the page's serial), or at [`OWN`] when it is no cache
    /// page's. Returns the slot.
    #[inline]
    pub(crate) fn keep_run(&mut self, addr: ocsd_vaddr_t, token: u64, view: MemView, before: usize, page: Option<CachePage>) -> usize {
        let before = before.min(view.len).min(usize::try_from(addr).unwrap_or(usize::MAX));
        let base = addr - before as u64;
        let len = (view.len as u64).min((u64::MAX - base).saturating_add(1));
        let k = match page {
            Some(p) => {
                let k = Self::slot(p);
                self.serials[k] = p.serial;
                k
            }
            None => OWN,
        };
        self.views[k] = Kept { base, len, token, view: Some(view) };
        k
    }

    /// Forget which pages the views were of: the memory then serves no
    /// read from them. (The views stay, as the bytes of their tokens.)
    #[inline]
    pub(crate) fn forget_pages(&mut self) {
        self.serials = [0; KEPT];
    }

    /// Whether a kept page view of bytes under `token` holds `bytes` at
    /// `addr`.
    pub(crate) fn holds_bytes(&self, token: u64, addr: ocsd_vaddr_t, bytes: &[u8]) -> bool {
        self.views[..KEPT].iter().any(|k| {
            k.token == token
                && k.holds(addr, bytes.len() as u64)
                && matches!(&k.view, Some(v) if matches!(v.slice((addr - k.base) as usize, bytes.len()), Ok(Some(b)) if b == bytes))
        })
    }

    /// Keep `kept` at `k` (tests).
    #[cfg(test)]
    pub(crate) fn set(&mut self, k: usize, kept: Kept) {
        self.views[k] = kept;
    }
}

/// The view of the last run of `WORD`-byte reads, while the memory still
/// vouches for it, and the views of the cache pages it had before.
#[derive(Debug)]
pub struct ReadWindow {
    /// Where the view is in `views` ([`NO_VIEW`]: none).
    cur: usize,
    /// The view's first byte's address and its length (a copy of its
    /// entry's, for the reads it serves).
    base: ocsd_vaddr_t,
    len: u64,
    space: ocsd_mem_space_acc_t,
    trace_id: u8,
    /// The memory's epoch when the view was taken.
    epoch: Option<u64>,
    /// Reads served from the view not yet reported.
    uses: u32,
    /// Whether `uses` are to be told to the memory: they were served from
    /// a cache page's view, and order the cache's pages. A view that is no
    /// page's (files and buffers read straight from their accessor, memory
    /// read without a cache) has no uses to tell.
    count_uses: bool,
    /// The views kept: of cache pages, and the last that was no page's.
    views: KeptViews,
}

impl Default for ReadWindow {
    fn default() -> Self {
        ReadWindow {
            cur: NO_VIEW,
            base: 0,
            len: 0,
            space: OCSD_MEM_SPACE_NONE,
            trace_id: 0,
            epoch: None,
            uses: 0,
            count_uses: false,
            views: KeptViews::default(),
        }
    }
}

/// The size of the reads a [`ReadWindow`] serves (the decoders read 4
/// bytes at every instruction, whatever its size).
const WORD: usize = 4;

impl ReadWindow {
    /// At the start of a run of reads (a walk): keep the view only if the
    /// memory has not been used or changed since it was taken (by another
    /// decoder, or by the client in a callback). Views of cache pages stay
    /// kept, to go back to if the memory still serves from those pages.
    #[inline]
    pub fn check(&mut self, mem: &dyn MemAccess) {
        if self.cur != NO_VIEW && (self.epoch.is_none() || mem.epoch() != self.epoch) {
            self.cur = NO_VIEW;
        }
    }

    /// Tell the memory of the reads served from the view; done before any
    /// other access to the memory (the end of a walk, a read outside the
    /// view).
    #[inline]
    pub fn report(&mut self, mem: &mut dyn MemAccess) {
        if self.uses > 0 && self.count_uses {
            mem.run_uses(self.uses);
        }
        self.uses = 0;
    }

    /// The token of the view (0: none, or no promise): a view with the
    /// same nonzero token had the same bytes at the same addresses.
    #[inline]
    pub fn token(&self) -> u64 {
        match self.views.get(self.cur) {
            Some(k) => k.token,
            None => 0,
        }
    }

    /// Whether the reads of the bytes `[addr, addr + n)` by `trace_id` in
    /// `space` would all be served from the view.
    #[inline]
    pub fn covers(&self, addr: ocsd_vaddr_t, n: u64, space: ocsd_mem_space_acc_t, trace_id: u8) -> bool {
        let off = addr.wrapping_sub(self.base);
        self.cur != NO_VIEW && space == self.space && trace_id == self.trace_id && off < self.len && self.len - off >= n
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
            if let Some(Ok(w)) = self.views.get(self.cur).and_then(|k| k.view.as_ref()).map(|v| v.word(off)) {
                *out = w.to_le_bytes();
                self.uses += 1;
                return Ok(WORD);
            }
        }
        self.read_new(mem, addr, space, trace_id, out)
    }

    /// The window on kept view `k` (whose view holds the read at `addr`)
    /// for reads by `trace_id` in `space`, taken at `epoch`; without a
    /// view if it does not.
    #[inline]
    fn go_to(&mut self, k: usize, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8, epoch: Option<u64>) {
        self.cur = NO_VIEW;
        if let Some(v) = self.views.get(k).filter(|v| v.holds(addr, WORD as u64)) {
            (self.cur, self.base, self.len) = (k, v.base, v.len);
            (self.space, self.trace_id, self.epoch) = (space, trace_id, epoch);
            self.count_uses = k < OWN;
        }
    }

    /// A read outside the view: made by the memory (the reads served from
    /// the view reported first); the window then on the view of the page
    /// the memory served it from, kept or new.
    #[inline(never)]
    fn read_new(
        &mut self,
        mem: &mut dyn MemAccess,
        addr: ocsd_vaddr_t,
        space: ocsd_mem_space_acc_t,
        trace_id: u8,
        out: &mut [u8; WORD],
    ) -> Result<usize, ocsd_err_t> {
        if !self.count_uses {
            self.uses = 0;
        }
        if addr <= u64::MAX - (WORD as u64 - 1) {
            if let Some((page, word, epoch)) = mem.read_known_word(addr, space, trace_id, self.uses, self.views.serials()) {
                self.uses = 0;
                *out = word;
                self.go_to(KeptViews::slot(page), addr, space, trace_id, epoch);
                return Ok(WORD);
            }
        }
        let uses = std::mem::take(&mut self.uses);
        self.cur = NO_VIEW;
        // (the run taken apart where the memory left it: moved whole, it is
        // read back in wide moves that wait for the memory's narrow stores)
        let MemRun { got, token, view, before, page } = mem.read_run_known(addr, space, trace_id, WORD, out, uses, self.views.serials())?;
        if got == WORD {
            let epoch = mem.epoch();
            match (view, page) {
                (Some(v), page) => {
                    let k = self.views.keep_run(addr, token, v, before, page);
                    self.go_to(k, addr, space, trace_id, epoch);
                }
                // a page the window kept a view of
                (None, Some(p)) => self.go_to(KeptViews::slot(p), addr, space, trace_id, epoch),
                (None, None) => {}
            }
        }
        Ok(got)
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
        /// The cache page its runs come from (None: none).
        page: Option<CachePage>,
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
            Ok(crate::common::MemRun { got, token: 1, view, before: 0, page: self.page })
        }

        fn run_uses(&mut self, n: u32) {
            self.used += n;
        }

        fn epoch(&self) -> Option<u64> {
            Some(self.epoch)
        }
    }

    /// A cache page's bytes.
    fn mem() -> ViewMem {
        ViewMem { base: 0x1000, bytes: Arc::new((0u8..16).collect()), reads: 0, used: 0, epoch: 0, page: Some(CachePage { index: 3, serial: 9 }) }
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
    fn reads_from_a_view_of_no_cache_page_are_not_told() {
        // (files read straight from their accessor, memory without a cache:
        // no page's order of use to keep)
        let mut m = ViewMem { page: None, ..mem() };
        let mut w = ReadWindow::default();
        let mut b = [0u8; 4];
        for a in [0x1000, 0x1004, 0x1008] {
            assert_eq!(w.read4(&mut m, a, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(4));
        }
        w.report(&mut m);
        assert_eq!((m.reads, m.used), (1, 0));
        // nor with the next run
        w.read4(&mut m, 0x100c, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap();
        w.read4(&mut m, 0x100e, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap();
        assert_eq!((m.reads, m.used), (2, 0));
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

    /// Two cache pages of 16 bytes (index 0 at 0x1000, index 1 at
    /// 0x2000), as a cache serves them: a read of a page the caller names
    /// in `known` gives no view, only the page; counts the calls.
    struct Pages {
        runs: u32,
        known_words: u32,
        uses: Vec<u32>,
        epoch: u64,
        bytes: Arc<Vec<u8>>,
    }

    impl Pages {
        fn page(addr: u64) -> Option<(u32, u64)> {
            match addr {
                0x1000..=0x100c => Some((0, 0x1000)),
                0x2000..=0x200c => Some((1, 0x2000)),
                _ => None,
            }
        }
    }

    impl MemAccess for Pages {
        fn read(&mut self, _: ocsd_vaddr_t, _: ocsd_mem_space_acc_t, _: u8, _: &mut [u8]) -> Result<usize, ocsd_err_t> {
            unreachable!("reads go through read_run_known")
        }

        fn read_run_known(
            &mut self,
            addr: ocsd_vaddr_t,
            _: ocsd_mem_space_acc_t,
            _: u8,
            req: usize,
            out: &mut [u8],
            uses: u32,
            known: &[u64],
        ) -> Result<crate::common::MemRun, ocsd_err_t> {
            self.runs += 1;
            self.uses.push(uses);
            self.epoch += 1;
            let Some((index, base)) = Self::page(addr) else { return Ok(crate::common::MemRun::default()) };
            let off = (addr - base) as usize;
            out[..req].copy_from_slice(&self.bytes[off..off + req]);
            let page = CachePage { index, serial: 100 + u64::from(index) };
            let view = (known[index as usize % known.len()] != page.serial).then(|| MemView { data: ViewData::Whole(self.bytes.clone()), off, len: 16 - off });
            Ok(crate::common::MemRun { got: req, token: 7, view, before: 0, page: Some(page) })
        }

        fn read_known_word(&mut self, addr: ocsd_vaddr_t, _: ocsd_mem_space_acc_t, _: u8, uses: u32, known: &[u64]) -> Option<(CachePage, [u8; 4], Option<u64>)> {
            let (index, base) = Self::page(addr)?;
            let page = CachePage { index, serial: 100 + u64::from(index) };
            if known[index as usize % known.len()] != page.serial {
                return None;
            }
            self.known_words += 1;
            self.uses.push(uses);
            self.epoch += 1;
            let off = (addr - base) as usize;
            let mut w = [0u8; 4];
            w.copy_from_slice(&self.bytes[off..off + 4]);
            Some((page, w, Some(self.epoch)))
        }

        fn epoch(&self) -> Option<u64> {
            Some(self.epoch)
        }
    }

    #[test]
    fn a_page_viewed_before_is_gone_back_to_without_a_new_view() {
        let mut m = Pages { runs: 0, known_words: 0, uses: vec![], epoch: 0, bytes: Arc::new((0u8..16).collect()) };
        let mut w = ReadWindow::default();
        let mut b = [0u8; 4];
        let sp = OCSD_MEM_SPACE_ANY;
        // page 0 then page 1: each run gives a view
        assert_eq!(w.read4(&mut m, 0x1000, sp, 1, &mut b), Ok(4));
        assert_eq!(w.read4(&mut m, 0x1004, sp, 1, &mut b), Ok(4));
        assert_eq!(w.read4(&mut m, 0x2008, sp, 1, &mut b), Ok(4));
        assert_eq!(b, [8, 9, 10, 11]);
        assert_eq!(w.read4(&mut m, 0x200c, sp, 1, &mut b), Ok(4));
        assert_eq!((m.runs, m.known_words), (2, 0));
        assert_eq!(w.token(), 7);
        // back to page 0: the memory finds the page the window knows (the
        // read in page 1 told with it), then page 0's kept view serves
        assert_eq!(w.read4(&mut m, 0x1008, sp, 1, &mut b), Ok(4));
        assert_eq!(b, [8, 9, 10, 11]);
        assert_eq!(w.read4(&mut m, 0x100c, sp, 1, &mut b), Ok(4));
        assert_eq!(b, [12, 13, 14, 15]);
        assert_eq!((m.runs, m.known_words), (2, 1));
        assert!(w.covers(0x1000, 16, sp, 1));
        // each move told the memory of the reads served from the view left
        assert_eq!(m.uses, [0, 1, 1]);
        // the walk ends (its reads told), the memory is used by another: the
        // view is dropped, the page's is gone back to through the memory
        w.report(&mut m);
        m.epoch += 1;
        w.check(&m);
        assert!(!w.covers(0x1000, 4, sp, 1));
        assert_eq!(w.read4(&mut m, 0x1000, sp, 1, &mut b), Ok(4));
        assert_eq!((m.runs, m.known_words), (2, 2));
        assert!(w.covers(0x1000, 16, sp, 1));
        // outside both pages: a run, which finds nothing
        assert_eq!(w.read4(&mut m, 0x3000, sp, 1, &mut b), Ok(0));
        assert_eq!((m.runs, m.known_words), (3, 2));
        assert_eq!(m.uses, [0, 1, 1, 0, 0]);
        assert!(!w.covers(0x1000, 4, sp, 1));
    }
}
