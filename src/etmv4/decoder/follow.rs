//! Instruction following for the ETMv4 / ETE decoder: the memory window
//! instructions are read through ([`MemWindow`]), the decoded-block cache
//! ([`BlockCache`]) and the walk to the next waypoint.

use super::*;
use crate::common::MemRun;
// the page views the window keeps (the PTM/ETMv3 read window's kind), and
// no view
use crate::common::read_window::{KeptViews, NO_VIEW};
#[cfg(test)]
use crate::common::read_window::{Kept, OWN};

/// A view of program memory, renewed on demand. OpenCSD reads each
/// instruction with a 4-byte read through its memory access cache; the
/// window holds the bytes the memory vouches for after such a read
/// ([`crate::common::MemRun`]: to the end of the cache page), so later
/// instruction reads inside it get the bytes OpenCSD's would, and are
/// reported to the memory as uses of the same cache page before the
/// decoder lets go of the window.
pub(super) struct MemWindow {
    base: ocsd_vaddr_t,
    len: usize,
    space: ocsd_mem_space_acc_t,
    /// [`crate::common::MemRun::token`] of the window's bytes.
    token: u64,
    /// Where the window's view is in `views` (a cache page's at its
    /// [`KeptViews::slot`], another at `OWN`; [`NO_VIEW`]: none): going
    /// back to a kept page's view copies nothing.
    cur: usize,
    /// The cache page of the view, if it is one.
    page: Option<CachePage>,
    /// Reads served from the window, not yet reported.
    uses: u32,
    /// A read made by [`MemWindow::prime`] and not yet taken.
    primed: Option<(ocsd_vaddr_t, ocsd_mem_space_acc_t, Fetch)>,
    /// The memory's [`MemAccess::epoch`] when the view was taken.
    epoch: Option<u64>,
    /// The views of cache pages the window had: when the memory serves a
    /// read from one of them ([`MemAccess::read_run_known`]), the window
    /// goes back to its view instead of being given a new one. Then the
    /// last view that was not a cache page's.
    views: KeptViews,
}

/// The decode state a replay of atoms keeps in locals
/// ([`EtmV4IPktDecoder::commit_replayed_atoms`]).
pub(super) struct ReplayRun {
    /// The window's bytes: from `base`, `len` of them, under `token`.
    base: ocsd_vaddr_t,
    len: u64,
    token: u64,
    aa64_chk: bool,
    isa: ocsd_isa,
    context: ocsd_pe_context,
    /// The next block's address, the last direct branch's target.
    addr: ocsd_vaddr_t,
    branch_addr: ocsd_vaddr_t,
    /// Reads in the window not yet counted.
    uses: u32,
    /// The last block replayed, and whether its atom was E.
    last: Option<(Block, bool)>,
    /// Which taken indirect branches the replay leaves to the caller.
    indirect: IndirectRule,
}

/// Which blocks ending in an indirect branch its atom says is taken a
/// replay of atoms leaves to the atom by atom path: ETE's ERET (which also
/// gives an exception return element). The others end the replay as
/// `atom_range_found` leaves them: an address needed, from the trace or,
/// while the return stack is active, popped at the next atom.
#[derive(Clone, Copy)]
pub(super) struct IndirectRule {
    ete: bool,
}

impl IndirectRule {
    /// Whether the block, its atom `executed`, is left to the caller.
    #[inline(always)]
    fn refuses(self, b: &Block, executed: bool) -> bool {
        executed && self.ete && b.type_ as ocsd_instr_type == OCSD_INSTR_BR_INDIRECT && b.sub_type as ocsd_instr_subtype == OCSD_S_INSTR_V8_ERET
    }
}

/// One instruction fetch: the opcode word (zero-filled) and the bytes
/// available (0..=4).
#[derive(Clone, Copy)]
pub(super) struct Fetch {
    pub(super) opcode: u32,
    pub(super) avail: usize,
}

impl MemWindow {
    pub(super) fn new() -> Self {
        MemWindow {
            base: 0,
            len: 0,
            space: OCSD_MEM_SPACE_NONE,
            token: 0,
            cur: NO_VIEW,
            page: None,
            uses: 0,
            primed: None,
            epoch: None,
            views: KeptViews::default(),
        }
    }

    /// Report the reads served from the window and let go of it and of
    /// the views kept: before anything else may use the memory.
    pub(super) fn release(&mut self, mem: &mut dyn MemAccess) {
        if self.uses > 0 {
            mem.run_uses(self.uses);
            self.uses = 0;
        }
        self.len = 0;
        self.cur = NO_VIEW;
        self.page = None;
        self.primed = None;
        // the views stay as the bytes of their tokens (see
        // `kept_equal`), no longer of pages the memory serves from
        self.views.forget_pages();
    }

    /// Whether a kept view of bytes under `token` holds `bytes` at `addr`.
    pub(super) fn kept_equal(&self, token: u64, addr: ocsd_vaddr_t, bytes: &[u8]) -> bool {
        self.views.holds_bytes(token, addr, bytes)
    }

    /// Nothing to report to the memory ([`MemWindow::report`] would do
    /// nothing).
    #[inline]
    pub(super) fn idle(&self) -> bool {
        self.uses == 0 && self.primed.is_none()
    }

    /// Take the read primed at `addr` in `space` if it got less than an
    /// A64 instruction (as [`MemWindow::fetch`] would take it); false:
    /// nothing done.
    #[inline]
    pub(super) fn take_primed_short(&mut self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t) -> bool {
        match self.primed {
            Some((a, sp, f)) if a == addr && sp == space && f.avail < 4 => {
                self.primed = None;
                true
            }
            _ => false,
        }
    }

    /// The window on kept view `k`, page `p`'s, if it holds the read at
    /// `addr` (else left without a view); the view's token either way.
    #[inline(always)]
    fn go_to(&mut self, k: usize, p: CachePage, addr: ocsd_vaddr_t) -> u64 {
        let Some(kept) = self.views.get(k) else { return 0 };
        if kept.holds(addr, 4) {
            self.base = kept.base;
            self.len = kept.len as usize;
            self.cur = k;
            self.page = Some(p);
        }
        kept.token
    }

    /// No current view any more (those of cache pages stay kept).
    #[inline]
    pub(super) fn stash(&mut self) {
        self.page = None;
        self.len = 0;
        self.cur = NO_VIEW;
    }

    /// The window's view.
    #[inline(always)]
    fn view(&self) -> Option<&MemView> {
        self.views.get(self.cur)?.view.as_ref()
    }

    /// Report the reads served from the window (at the end of a decoder
    /// call: other decoders may use the memory next).
    pub(super) fn report(&mut self, mem: &mut dyn MemAccess) {
        if self.uses > 0 {
            mem.run_uses(self.uses);
            self.uses = 0;
        }
        self.primed = None;
    }

    /// [`MemWindow::report`] then [`MemWindow::check`], the memory asked
    /// once.
    #[inline]
    pub(super) fn report_and_check(&mut self, mem: &mut dyn MemAccess) {
        if self.len == 0 {
            // (no view to check)
            return self.report(mem);
        }
        self.primed = None;
        let epoch = mem.uses_then_epoch(std::mem::take(&mut self.uses));
        self.keep_view_at(epoch);
    }

    /// At the start of a decoder call: keep the view only if nothing has
    /// used or changed the memory since it was taken (a page view is kept,
    /// to go back to if the memory still serves from that page).
    pub(super) fn check(&mut self, mem: &dyn MemAccess) {
        if self.len > 0 {
            self.keep_view_at(mem.epoch());
        }
    }

    /// Keep the view only if the memory's epoch is still `epoch`, the one
    /// it was taken at.
    #[inline]
    fn keep_view_at(&mut self, epoch: Option<u64>) {
        if self.epoch.is_none() || epoch != self.epoch {
            self.stash();
        }
    }

    /// `n` bytes of the view from `off` in one piece (the view holds
    /// them): None when its storage has them in two pieces (a file's
    /// chunks) or cannot read them.
    #[inline]
    pub(super) fn slice_at(&self, off: usize, n: usize) -> Option<&[u8]> {
        self.view()?.slice(off, n).ok().flatten()
    }

    /// Whether the window holds `n` bytes at `addr` for reads in `space`.
    #[inline]
    pub(super) fn holds(&self, addr: ocsd_vaddr_t, n: u64, space: ocsd_mem_space_acc_t) -> bool {
        self.len > 0 && space == self.space && addr >= self.base && (addr - self.base).saturating_add(n) <= self.len as u64
    }

    /// `n` reads, the first at `addr`, served from the window.
    #[inline]
    pub(super) fn take_reads(&mut self, addr: ocsd_vaddr_t, n: u32) {
        if n == 0 {
            return;
        }
        match self.primed {
            Some((a, _, _)) if a == addr => {
                self.primed = None;
                self.uses += n - 1;
            }
            _ => self.uses += n,
        }
    }

    /// Make sure the read at `addr` is made or can be served from the
    /// window, without taking it: the next [`MemWindow::fetch`] at `addr`
    /// (or [`MemWindow::take_reads`]) takes it.
    #[inline]
    pub(super) fn prime(&mut self, mem: &mut dyn MemAccess, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8) -> Result<(), ocsd_err_t> {
        if self.holds(addr, 4, space) || matches!(self.primed, Some((a, sp, _)) if a == addr && sp == space) {
            return Ok(());
        }
        let f = self.refill(mem, addr, space, trace_id)?;
        self.primed = Some((addr, space, f));
        Ok(())
    }

    /// [`MemWindow::prime`] when the read is served from a cache page the
    /// window kept a view of ([`MemWindow::switch_known`]: no callback, no
    /// error): true, the window on that page with the read primed; false:
    /// nothing done.
    #[inline]
    pub(super) fn prime_known(&mut self, mem: &mut dyn MemAccess, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8) -> bool {
        if self.primed.is_some() || addr > u64::MAX - 3 {
            return false;
        }
        match self.switch_known(mem, addr, space, trace_id) {
            Some(f) => {
                self.primed = Some((addr, space, f));
                true
            }
            None => false,
        }
    }

    /// The read at `addr` when the memory serves it from a cache page the
    /// window kept a view of ([`MemAccess::read_known_word`]): the window
    /// goes back to that view, as [`MemWindow::refill`] would after the
    /// same read made through [`MemAccess::read_run_known`]. None: nothing
    /// done.
    #[inline]
    fn switch_known(&mut self, mem: &mut dyn MemAccess, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8) -> Option<Fetch> {
        let (p, w, epoch) = mem.read_known_word(addr, space, trace_id, self.uses, self.views.serials())?;
        self.uses = 0;
        self.primed = None;
        self.stash();
        self.base = addr;
        self.space = space;
        self.epoch = epoch;
        // a known page's view was kept with the page's token
        self.token = self.go_to(KeptViews::slot(p), p, addr);
        Some(Fetch { opcode: u32::from_le_bytes(w), avail: 4 })
    }

    pub(super) fn refill(&mut self, mem: &mut dyn MemAccess, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8) -> Result<Fetch, ocsd_err_t> {
        if addr <= u64::MAX - 3 {
            if let Some(f) = self.switch_known(mem, addr, space, trace_id) {
                return Ok(f);
            }
        }
        self.primed = None;
        let uses = std::mem::take(&mut self.uses);
        self.stash();
        if mem.hole_known(addr, space, trace_id) {
            // a read of no bytes, as `read_run_known` would have made it
            // (no pages cached: the uses are not counted)
            self.base = addr;
            self.space = space;
            self.token = 0;
            self.epoch = mem.epoch();
            return Ok(Fetch { opcode: 0, avail: 0 });
        }
        // never wrapping past the top of memory
        let room = (u64::MAX - addr).saturating_add(1).min(4) as usize;
        let mut b = [0u8; 4];
        // (the run taken apart field by field where the memory left it:
        // moved whole, it is read back in wide moves that wait for the
        // memory's narrow stores)
        let MemRun { got, token, view, before, page } = mem.read_run_known(addr, space, trace_id, room, &mut b[..room], uses, self.views.serials())?;
        let got = got.min(room);
        // the bytes not got read as zeros
        let opcode = u32::from_le_bytes(b) & u32::MAX.checked_shr(32 - 8 * got as u32).unwrap_or(0);
        self.base = addr;
        self.space = space;
        self.token = token;
        self.epoch = mem.epoch();
        if got == 4 {
            match (view, page) {
                (Some(v), page) => {
                    let k = self.views.keep_run(addr, token, v, before, page);
                    if let Some(kept) = self.views.get(k) {
                        self.base = kept.base;
                        self.len = kept.len as usize;
                    }
                    self.cur = k;
                    self.page = page;
                }
                // a page viewed before: back to its view if it holds the read
                (None, Some(p)) => {
                    self.go_to(KeptViews::slot(p), p, addr);
                }
                (None, None) => {}
            }
        }
        Ok(Fetch { opcode, avail: got })
    }

    #[inline]
    pub(super) fn fetch(&mut self, mem: &mut dyn MemAccess, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8) -> Result<Fetch, ocsd_err_t> {
        if let Some((a, sp, f)) = self.primed {
            if a == addr && sp == space {
                self.primed = None;
                return Ok(f);
            }
        }
        if self.holds(addr, 4, space) {
            if let Some(v) = self.view() {
                let opcode = v.word((addr - self.base) as usize)?;
                self.uses += 1;
                return Ok(Fetch { opcode, avail: 4 });
            }
        }
        self.refill(mem, addr, space, trace_id)
    }

    /// Walk A64 instructions that cannot be waypoints ([`a64_is_plain`])
    /// straight from the window, from `instr.instr_addr`: at most `max`
    /// of them, stopping before an opcode that needs a full decode (or
    /// fails the bad-opcode check), at the end of the window, or after the
    /// instruction whose next address is `to_addr`. Leaves `instr` as
    /// [`decode_instruction_ex`] would after the last one walked. Returns
    /// (instructions walked, `to_addr` reached).
    #[inline]
    pub(super) fn walk_a64_plain(&mut self, instr: &mut ocsd_instr_info, space: ocsd_mem_space_acc_t, to_addr: Option<ocsd_vaddr_t>, aa64_chk: bool, max: u32) -> (u32, bool) {
        if self.len == 0 || space != self.space || instr.instr_addr < self.base {
            return (0, false);
        }
        let start = instr.instr_addr - self.base;
        if start >= self.len as u64 {
            return (0, false);
        }
        let off = start as usize;
        let mut limit = ((self.len - off) / 4).min(max as usize);
        // the walk ends after the instruction whose next address is to_addr
        let mut stop_at = usize::MAX;
        if let Some(a) = to_addr {
            let d = a.wrapping_sub(instr.instr_addr);
            if d != 0 && d % 4 == 0 && d / 4 <= limit as u64 {
                stop_at = (d / 4) as usize;
                limit = stop_at;
            }
        }
        let mut n = 0usize;
        let mut last = 0u32;
        if let Some(v) = self.view() {
            // a piece of the view at a time (a file's view is in chunks);
            // a word across two pieces, or a piece that cannot be read,
            // ends the walk: the full decode reads it
            'pieces: while n < limit {
                let Ok(run) = v.run(off + 4 * n) else { break };
                let words = (run.len() / 4).min(limit - n);
                if words == 0 {
                    break;
                }
                for w in run[..4 * words].chunks_exact(4) {
                    let op = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                    if !a64_is_plain(op) || (aa64_chk && aa64_opcode_is_invalid(op)) {
                        break 'pieces;
                    }
                    n += 1;
                    last = op;
                }
            }
        }
        let found = n == stop_at;
        let addr = instr.instr_addr.wrapping_add(4 * n as u64);
        let n = n as u32;
        self.take_reads(instr.instr_addr, n);
        if n > 0 {
            instr.instr_addr = addr;
            instr.opcode = last;
            instr.instr_size = 4;
            instr.type_ = OCSD_INSTR_OTHER;
            instr.sub_type = OCSD_S_INSTR_NONE;
            instr.next_isa = instr.isa;
            instr.is_link = 0;
            instr.is_conditional = 0;
            instr.thumb_it_conditions = 0;
        }
        (n, found)
    }
}

/// Entries of the decoded-block cache (two-way set associative) when
/// first used, and at most: it doubles while blocks are decoded more than
/// half as often as it has entries, so a trace ID with little trace keeps
/// a small one and one with much code a large one (at most 256 KiB, and
/// 512 KiB of instruction words where callback memory makes them).
pub(super) const BLOCK_CACHE_MIN: usize = 512;
pub(super) const BLOCK_CACHE_MAX: usize = 8192;

/// One decoded block: the A64 instructions from `start` up to and
/// including the first waypoint, as an instruction walk without a target
/// address finds them (`traceInstrToWP`), and the decode state that walk
/// leaves behind. 32 bytes: the address after the waypoint is `start + 4
/// * num_instr`, a direct branch's target an offset from the waypoint.
#[derive(Clone, Copy, Default)]
pub(super) struct Block {
    start: ocsd_vaddr_t,
    /// [`crate::common::MemRun::token`] of the bytes it was decoded from
    /// (0: no block).
    token: u64,
    /// The waypoint's opcode.
    opcode: u32,
    /// Branch target minus the waypoint's address (direct branches).
    branch_off: i32,
    num_instr: u16,
    type_: u8,
    sub_type: u8,
    /// [`Block::AA64_CHK`], [`Block::LINK`], [`Block::COND`],
    /// [`Block::WORDS`].
    flags: u8,
}

impl Block {
    const AA64_CHK: u8 = 1;
    const LINK: u8 = 2;
    const COND: u8 = 4;
    /// Its instruction words are in [`BlockCache::words`] (blocks cached
    /// before the words were made have none there: zeros, which must not
    /// be taken for the block's bytes).
    const WORDS: u8 = 8;

    #[inline(always)]
    fn next_addr(&self) -> ocsd_vaddr_t {
        self.start.wrapping_add(4 * self.num_instr as u64)
    }

    #[inline(always)]
    fn aa64_chk(&self) -> bool {
        self.flags & Block::AA64_CHK != 0
    }

    /// Whether the block, whatever bytes it was cached under, is replayed
    /// at `addr` as [`BlockCache::replayable`] takes it: it starts there,
    /// with the same bad-opcode check, whole within `room` bytes, and is
    /// not a taken indirect branch `rule` refuses.
    #[inline(always)]
    fn replays_at(&self, addr: ocsd_vaddr_t, aa64_chk: bool, room: u64, executed: bool, rule: IndirectRule) -> bool {
        let n = u64::from(self.num_instr);
        self.start == addr && self.aa64_chk() == aa64_chk && n != 0 && 4 * n <= room && !rule.refuses(self, executed)
    }
}

/// Decoded-block cache: an A64 instruction walk depends only on its start
/// address and the bytes it reads (A64 carries no IT-block state, and the
/// decoder's configuration is fixed), so a walk from an address seen
/// before is replayed instead of decoded again when its first read finds
/// the same bytes (the same memory token, or bytes found equal to those of
/// a view the window kept under the block's token) with the whole block
/// inside the bytes that read vouches for: every read of the walk would
/// then have been served, and served the same bytes, by the same cache
/// page.
pub(super) struct BlockCache {
    /// The entries, two to a set (a cache line), entry `i` the way
    /// `i % 2` of set `i / 2`.
    sets: Vec<BlockSet>,
    /// The instruction words of each entry's block, for blocks of up to
    /// [`BLOCK_WORDS`] instructions: made once a block was found under
    /// another token than its own (callback memory read again after a
    /// context), so file memory, whose tokens never change, goes without.
    words: Vec<[u8; 4 * BLOCK_WORDS]>,
    /// Blocks decoded since the size last changed.
    puts: usize,
    /// Sets less one (0 with none): the set count less one, kept beside
    /// it because the hot lookup then costs fewer instructions (derived
    /// from `sets.len()` instead: 0.4% to 0.5% more on bugfix-exact-match).
    set_mask: usize,
}

/// Two entries: the block put last first.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct BlockSet {
    ways: [Block; 2],
}

/// Longest block whose instruction words are kept ([`BlockCache::words`]).
pub(super) const BLOCK_WORDS: usize = 16;

impl BlockCache {
    pub(super) fn new() -> Self {
        BlockCache { sets: Vec::new(), words: Vec::new(), puts: 0, set_mask: 0 }
    }

    /// The set where a block at `addr` may be (sets are a power of two;
    /// none yet: 0, which the lookups then do not find).
    #[inline(always)]
    fn set(&self, addr: ocsd_vaddr_t) -> usize {
        ((addr >> 2) ^ (addr >> 14)) as usize & self.set_mask
    }

    /// Entries in all.
    #[inline]
    fn len(&self) -> usize {
        2 * self.sets.len()
    }

    #[inline(always)]
    fn entry_mut(&mut self, i: usize) -> Option<&mut Block> {
        Self::entry_in(&mut self.sets, i)
    }

    /// Entry `i` of `sets` (borrowing the sets alone, beside the words).
    #[inline(always)]
    fn entry_in(sets: &mut [BlockSet], i: usize) -> Option<&mut Block> {
        sets.get_mut(i / 2).map(|s| &mut s.ways[i % 2])
    }

    /// The entry holding a block that starts at `addr` (whatever bytes it
    /// was cached under).
    #[inline(always)]
    pub(super) fn way(&self, addr: ocsd_vaddr_t) -> Option<usize> {
        let k = self.set(addr);
        let e = &self.sets.get(k)?.ways;
        if e[0].start == addr && e[0].token != 0 {
            Some(2 * k)
        } else if e[1].start == addr && e[1].token != 0 {
            Some(2 * k + 1)
        } else {
            None
        }
    }

    /// The block in entry `i`.
    #[inline(always)]
    pub(super) fn entry(&self, i: usize) -> Option<&Block> {
        self.sets.get(i / 2).map(|s| &s.ways[i % 2])
    }

    /// The block at `start` if its bytes are those of the window's view at
    /// `start` (offset `off` in the view, token `token`), the whole block
    /// inside the view.
    #[inline]
    pub(super) fn get(&mut self, start: ocsd_vaddr_t, token: u64, aa64_chk: bool, off: usize, window: &MemWindow) -> Option<&Block> {
        let i = self.way(start)?;
        let entries = self.len();
        let b = Self::entry_in(&mut self.sets, i)?;
        if !(b.aa64_chk() == aa64_chk && token != 0) {
            return None;
        }
        let n = b.num_instr as usize;
        if 4 * n > window.len.saturating_sub(off) {
            return None;
        }
        if b.token != token {
            // other bytes, or the same bytes read again: compare with the
            // block's words, or the bytes of a view kept under its token
            let bytes = window.slice_at(off, 4 * n)?;
            let same = match Self::kept_words(&self.words, i, b, bytes) {
                Some(same) => same,
                None => window.kept_equal(b.token, start, bytes),
            };
            if !same {
                if self.words.is_empty() {
                    self.words = vec![[0; 4 * BLOCK_WORDS]; entries];
                }
                return None;
            }
            b.token = token;
        }
        Some(b)
    }

    /// Whether `bytes` are the instruction words kept for block `b` in
    /// entry `i` of `words`; None when its words are not kept.
    #[inline]
    fn kept_words(words: &[[u8; 4 * BLOCK_WORDS]], i: usize, b: &Block, bytes: &[u8]) -> Option<bool> {
        let n = b.num_instr as usize;
        let w = words.get(i).filter(|_| n <= BLOCK_WORDS && b.flags & Block::WORDS != 0)?;
        Some(w.get(..4 * n) == Some(bytes))
    }

    /// The block at `addr` for [`EtmV4IPktDecoder::commit_replayed_atoms`]:
    /// cached under `token` (the same bytes) with the same bad-opcode
    /// check, within the `room` bytes the view has from `addr`, and not
    /// a taken indirect branch `rule` refuses.
    #[inline(always)]
    pub(super) fn replayable(&self, addr: ocsd_vaddr_t, token: u64, aa64_chk: bool, room: u64, executed: bool, rule: IndirectRule) -> Option<Block> {
        let e = &self.sets.get(self.set(addr))?.ways;
        // (the way put last first: the common case)
        let b = if e[0].start == addr { &e[0] } else { &e[1] };
        (b.token == token && b.replays_at(addr, aa64_chk, room, executed, rule)).then_some(*b)
    }

    /// What [`BlockCache::replayable`] refused, taken if it is the block
    /// at `addr` cached under other bytes (callback memory read again
    /// since, e.g. after a context the client was shown) whose words are
    /// the window's bytes at `addr`: it takes `token` and is returned, as
    /// [`BlockCache::get`] takes it on the walk's path.
    #[cold]
    #[inline(never)]
    pub(super) fn retag(&mut self, addr: ocsd_vaddr_t, token: u64, aa64_chk: bool, room: u64, executed: bool, rule: IndirectRule, window: &MemWindow) -> Option<Block> {
        let i = self.way(addr)?;
        let b = Self::entry_in(&mut self.sets, i)?;
        if b.token == token || b.token == 0 || token == 0 || !b.replays_at(addr, aa64_chk, room, executed, rule) || addr < window.base {
            return None;
        }
        let bytes = window.slice_at((addr - window.base) as usize, 4 * b.num_instr as usize)?;
        if Self::kept_words(&self.words, i, b, bytes) != Some(true) {
            return None;
        }
        b.token = token;
        Some(*b)
    }

    /// Keep the block just walked (its bytes: None when the view does not
    /// have them in one piece).
    pub(super) fn put(&mut self, start: ocsd_vaddr_t, token: u64, aa64_chk: bool, num_instr: u32, instr: &ocsd_instr_info, bytes: Option<&[u8]>) {
        let wp = instr.instr_addr.wrapping_sub(4);
        let branch_off = if instr.type_ == OCSD_INSTR_BR { instr.branch_addr.wrapping_sub(wp) as i64 } else { 0 };
        // what a compact entry cannot hold is not cached (never for A64)
        let (Ok(num_instr), Ok(type_), Ok(sub_type), Ok(branch_off)) =
            (u16::try_from(num_instr), u8::try_from(instr.type_), u8::try_from(instr.sub_type), i32::try_from(branch_off))
        else {
            return;
        };
        if instr.is_link > 1 || instr.is_conditional > 1 || start.wrapping_add(4 * num_instr as u64) != instr.instr_addr || token == 0 {
            return;
        }
        self.puts += 1;
        if self.sets.is_empty() || (self.puts > self.len() / 2 && self.len() < BLOCK_CACHE_MAX) {
            self.grow();
        }
        let mut flags = if aa64_chk { Block::AA64_CHK } else { 0 } | (instr.is_link * Block::LINK) | (instr.is_conditional * Block::COND);
        let words = match bytes {
            _ if self.words.is_empty() || num_instr as usize > BLOCK_WORDS => None,
            Some(b) if b.len() <= 4 * BLOCK_WORDS => Some(b),
            // a block whose words cannot be kept is not kept
            _ => return,
        };
        let i = self.place(start);
        if let (Some(w), Some(bytes)) = (self.words.get_mut(i), words) {
            w[..bytes.len()].copy_from_slice(bytes);
            flags |= Block::WORDS;
        }
        if let Some(e) = self.entry_mut(i) {
            *e = Block { start, token, opcode: instr.opcode, branch_off, num_instr, type_, sub_type, flags };
        }
    }

    /// The entry a block at `start` is put in: the one already holding a
    /// block there, else the first way of its set, the block there moved
    /// to the second (with its words), whose block is dropped.
    #[inline]
    fn place(&mut self, start: ocsd_vaddr_t) -> usize {
        if let Some(i) = self.way(start) {
            return i;
        }
        let k = self.set(start);
        if let Some(e) = self.sets.get_mut(k) {
            e.ways[1] = e.ways[0];
        }
        if let Some(w) = self.words.get_mut(2 * k..2 * k + 2) {
            w[1] = w[0];
        }
        2 * k
    }

    /// Double the table (or make the first): the blocks cached move to
    /// their sets in the new one (with their words; of two, the one put
    /// last stays first), so that a trace ID whose code outgrows the table
    /// does not decode again every block it had.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let n = (2 * self.len()).clamp(BLOCK_CACHE_MIN, BLOCK_CACHE_MAX);
        let old = std::mem::replace(&mut self.sets, vec![BlockSet::default(); n / 2]);
        self.set_mask = n / 2 - 1;
        let old_words = std::mem::take(&mut self.words);
        if !old_words.is_empty() {
            self.words = vec![[0; 4 * BLOCK_WORDS]; n];
        }
        // second ways first: the first ways, put later, go in front
        for way in [1, 0] {
            for (k, b) in old.iter().map(|s| &s.ways[way]).enumerate().filter(|(_, b)| b.token != 0) {
                let i = 2 * k + way;
                let j = self.place(b.start);
                if let Some(e) = self.entry_mut(j) {
                    *e = *b;
                }
                if let (Some(w), Some(from)) = (self.words.get_mut(j), old_words.get(i)) {
                    *w = *from;
                }
            }
        }
        self.puts = 0;
    }

    /// Leave `instr` as the walk did: the waypoint's decode (an A64
    /// decode writes these fields; `branch_addr` only for direct branches).
    #[inline(always)]
    pub(super) fn replay(b: &Block, instr: &mut ocsd_instr_info) {
        let next = b.next_addr();
        instr.instr_addr = next;
        instr.opcode = b.opcode;
        instr.instr_size = 4;
        instr.type_ = b.type_ as ocsd_instr_type;
        instr.sub_type = b.sub_type as ocsd_instr_subtype;
        if instr.type_ == OCSD_INSTR_BR {
            instr.branch_addr = next.wrapping_sub(4).wrapping_add(b.branch_off as i64 as u64);
        }
        instr.next_isa = instr.isa;
        instr.is_link = (b.flags & Block::LINK != 0) as u8;
        instr.is_conditional = (b.flags & Block::COND != 0) as u8;
        instr.thumb_it_conditions = 0;
    }
}

impl EtmV4IPktDecoder {
    // ------------------------------------------------------------------
    // instruction following

    /// Decode the instruction at `instr.instr_addr`: Ok(true) when decoded
    /// (address advanced), Ok(false) when memory is not accessible.
    #[inline]
    pub(super) fn decode_next(&mut self, mem: &mut dyn MemAccess, space: ocsd_mem_space_acc_t, aa64_chk: bool) -> Result<bool, ocsd_err_t> {
        let f = self.mem.fetch(mem, self.instr.instr_addr, space, self.trace_id)?;
        if f.avail < 4 {
            // a 16-bit T32 instruction at the very end of a mapped region
            if !(f.avail >= 2 && self.instr.isa == ocsd_isa_thumb2 && (f.opcode & 0xF800) < 0xE800) {
                return Ok(false);
            }
        }
        self.instr.opcode = f.opcode;
        let err = decode_instruction_ex(&mut self.instr, aa64_chk);
        if err != OCSD_OK {
            return Err(err);
        }
        self.instr.instr_addr = self.instr.instr_addr.wrapping_add(self.instr.instr_size as u64);
        Ok(true)
    }

    /// Walk instructions from the current address to the next waypoint
    /// (any branch-like instruction), or, with `to_addr`, until the next
    /// instruction address is `to_addr` (`traceInstrToWP`). Without
    /// `to_addr`, the caller has tried [`Self::replay_block`] and
    /// [`Self::replay_block_primed`] first (A64: the block is not cached).
    pub(super) fn trace_to_wp(&mut self, ctx: &mut DecodeCtx, to_addr: Option<ocsd_vaddr_t>) -> (InstrRange, WpRes, ocsd_err_t) {
        let mut r = InstrRange { st_addr: self.instr.instr_addr, en_addr: self.instr.instr_addr, num_instr: 0 };
        let space = self.curr_mem_space();
        let aa64_chk = self.aa64_opcode_chk();
        let mut res = WpRes::NotFound;
        let mut err = OCSD_OK;
        let a64 = self.instr.isa == ocsd_isa_aarch64;
        // walks to the next waypoint are replayed from the block cache
        let mut cache_token = 0u64;
        let cached = a64 && to_addr.is_none() && self.range_limit == 0;
        if cached {
            // (the caller tried `replay_block` and `replay_block_primed`
            // with this state: the block is not cached) the walk's first
            // read, as OpenCSD makes it (primed already)
            if let Err(e) = self.mem.prime(ctx.mem, r.st_addr, space, self.trace_id) {
                return (r, res, e);
            }
            if self.mem.holds(r.st_addr, 4, space) {
                cache_token = self.mem.token;
            }
        }
        while res == WpRes::NotFound {
            if a64 {
                // the common case: runs of plain A64 instructions
                let max = if self.range_limit != 0 { self.range_limit.saturating_sub(r.num_instr) } else { u32::MAX };
                let (n, found) = self.mem.walk_a64_plain(&mut self.instr, space, to_addr, aa64_chk, max);
                r.num_instr += n;
                if found {
                    res = WpRes::Found;
                    break;
                }
            }
            match self.decode_next(ctx.mem, space, aa64_chk) {
                Err(e) => {
                    err = e;
                    break;
                }
                Ok(false) => res = WpRes::Nacc,
                Ok(true) => {
                    r.num_instr += 1;
                    if self.range_limit != 0 && r.num_instr > self.range_limit {
                        err = OCSD_ERR_I_RANGE_LIMIT_OVERRUN;
                        ctx.log.log_error(
                            &self.name,
                            &OcsdError::with_msg(OCSD_ERR_SEV_ERROR, err, "Decode Instruction Range Limit Overrun"),
                        );
                        break;
                    }
                    match to_addr {
                        Some(a) => {
                            if self.instr.instr_addr == a {
                                res = WpRes::Found;
                            }
                        }
                        None => {
                            if self.instr.type_ != OCSD_INSTR_OTHER {
                                res = WpRes::Found;
                            }
                        }
                    }
                }
            }
        }
        r.en_addr = self.instr.instr_addr;
        // the block is kept if all its reads came from the first read's bytes
        if cached && cache_token != 0 && res == WpRes::Found && err == OCSD_OK && self.mem.token == cache_token && self.mem.holds(r.st_addr, 4 * r.num_instr as u64, space) {
            let off = (r.st_addr - self.mem.base) as usize;
            self.blocks.put(r.st_addr, cache_token, aa64_chk, r.num_instr, &self.instr, self.mem.slice_at(off, 4 * r.num_instr as usize));
        }
        (r, res, err)
    }

    /// The next most common case (the window does not hold the block, e.g.
    /// after a branch into another cache page): the walk's first read, as
    /// [`Self::trace_to_wp`] makes it, then the block cached at the address
    /// under that read's bytes, replayed. Ok(None): no such block, the
    /// read stays primed for the walk; Err: the read failed, as the walk
    /// would have reported it. Only for an A64 walk without a target
    /// address or range limit (when `trace_to_wp` caches).
    #[inline]
    pub(super) fn replay_block_primed(&mut self, mem: &mut dyn MemAccess, space: ocsd_mem_space_acc_t, aa64_chk: bool) -> Result<Option<InstrRange>, ocsd_err_t> {
        let st = self.instr.instr_addr;
        self.mem.prime(mem, st, space, self.trace_id)?;
        if !self.mem.holds(st, 4, space) {
            return Ok(None);
        }
        let off = (st - self.mem.base) as usize;
        let Some(b) = self.blocks.get(st, self.mem.token, aa64_chk, off, &self.mem) else { return Ok(None) };
        let n = b.num_instr as u32;
        BlockCache::replay(b, &mut self.instr);
        self.mem.take_reads(st, n);
        Ok(Some(InstrRange { st_addr: st, en_addr: self.instr.instr_addr, num_instr: n }))
    }

    /// Atoms to commit whose blocks are cached and inside the window, in a
    /// run: each as `commit_atom_run` takes it through `process_atom`
    /// ([`Self::replay_block`] then `atom_range_found`), with the decode
    /// state kept in locals and written back once. Taken only where that
    /// path has nothing else to do: A64, no range limit, no N-atom or
    /// range-continuity checks, an address and context to follow from, no
    /// return stack pop pending. Stops before the first atom that path
    /// would take otherwise (a block not replayed here, a taken indirect
    /// branch [`IndirectRule`] refuses), which the caller then takes, and
    /// after a taken indirect branch it replays (the decoder then needs
    /// an address, or the return stack's pop is pending).
    ///
    /// A block in another cache page the window kept a view of is reached
    /// as the walk would reach it: its first read primed
    /// ([`MemWindow::prime_known`]), the window moved to that page, then
    /// replayed if cached under that page's bytes (else the caller finds
    /// the read primed).
    #[inline(always)]
    pub(super) fn commit_replayed_atoms(&mut self, a: &mut ocsd_pkt_atom, root_index: ocsd_trc_index_t, space: ocsd_mem_space_acc_t, mem: &mut dyn MemAccess) {
        let Some(mut run) = self.replay_start(space) else { return };
        // (the atoms and the commit count in locals, written back after)
        let (mut num, mut bits, mut commit) = (a.num, a.En_bits, self.res.commit);
        self.replay_atoms(&mut run, &mut num, &mut bits, &mut commit, root_index, space, mem);
        (a.num, a.En_bits, self.res.commit) = (num, bits, commit);
        self.replay_end(&mut run);
    }

    /// Whether atoms can be replayed here ([`Self::commit_replayed_atoms`]'s
    /// conditions), and the state the replay keeps in locals.
    #[inline(always)]
    fn replay_start(&self, space: ocsd_mem_space_acc_t) -> Option<ReplayRun> {
        const CHECKS: u32 = OCSD_OPFLG_CHK_RANGE_CONTINUE | OCSD_OPFLG_N_UNCOND_DIR_BR_CHK | OCSD_OPFLG_STRICT_N_UNCOND_BR_CHK;
        if self.need_ctxt
            || self.need_addr
            || self.ret_stack.pop_pending()
            || self.instr.isa != ocsd_isa_aarch64
            || self.range_limit != 0
            || self.op_flags & CHECKS != 0
        {
            return None;
        }
        let w = &self.mem;
        if w.primed.is_some() || w.token == 0 || w.space != space {
            return None;
        }
        Some(ReplayRun {
            base: w.base,
            len: w.len as u64,
            token: w.token,
            aa64_chk: self.aa64_chk,
            isa: self.instr.isa,
            // every element made here copies the context of the one before it
            context: self.out.last().context,
            addr: self.instr.instr_addr,
            branch_addr: self.instr.branch_addr,
            uses: 0,
            last: None,
            indirect: IndirectRule { ete: self.is_ete },
        })
    }

    /// Replay the atoms `num` / `bits` while `commit` counts commits due,
    /// each to its range element; stops before the first atom whose
    /// block is not replayed here.
    #[inline(always)]
    fn replay_atoms(
        &mut self,
        run: &mut ReplayRun,
        num: &mut u8,
        bits: &mut u32,
        commit: &mut i32,
        root_index: ocsd_trc_index_t,
        space: ocsd_mem_space_acc_t,
        mem: &mut dyn MemAccess,
    ) {
        let aa64_chk = run.aa64_chk;
        while *commit > 0 && *num > 0 {
            let executed = *bits & 1 != 0;
            // (an address below the window wraps to an offset past it)
            let addr = run.addr;
            let off = addr.wrapping_sub(run.base);
            let b = if off < run.len {
                let b = match self.blocks.replayable(addr, run.token, aa64_chk, run.len - off, executed, run.indirect) {
                    Some(b) => b,
                    None => match self.blocks.retag(addr, run.token, aa64_chk, run.len - off, executed, run.indirect, &self.mem) {
                        Some(b) => b,
                        None => break,
                    },
                };
                run.uses += u32::from(b.num_instr);
                b
            } else {
                // another page (the reads so far reported first)
                self.mem.uses += std::mem::take(&mut run.uses);
                let Some(b) = self.replay_in_kept_page(mem, addr, space, aa64_chk, executed, run.indirect) else { break };
                let w = &self.mem;
                (run.base, run.len, run.token) = (w.base, w.len as u64, w.token);
                // its first read, primed, is taken
                run.uses = u32::from(b.num_instr) - 1;
                b
            };
            let n = u64::from(b.num_instr);
            let type_ = b.type_ as ocsd_instr_type;
            *num -= 1;
            *bits >>= 1;
            *commit -= 1;
            let next = b.next_addr();
            let range = InstrRange { st_addr: addr, en_addr: next, num_instr: n as u32 };
            let flags = range_flags(executed, 4, b.flags & Block::COND != 0);
            self.out.push_range_with(root_index, &range, run.isa, type_, b.sub_type as ocsd_instr_subtype, flags, run.context);
            run.addr = next;
            run.last = Some((b, executed));
            if type_ == OCSD_INSTR_BR {
                let target = next.wrapping_sub(4).wrapping_add(b.branch_off as i64 as u64);
                run.branch_addr = target;
                // the atom's direction chosen without a branch: it is the
                // traced program's, which the host's predictor often misses
                // (2% faster on bugfix-exact-match than `if executed`)
                let taken = u64::from(executed).wrapping_neg();
                run.addr = (target & taken) | (next & !taken);
                if executed & (b.flags & Block::LINK != 0) {
                    self.push_ret(next, run.isa);
                }
            } else if executed && type_ == OCSD_INSTR_BR_INDIRECT {
                // as `atom_range_found` takes it: the next address is the
                // trace's, or the return stack's at the next atom (its pop
                // pending); the atoms after it are the caller's
                self.need_addr = true;
                if b.flags & Block::LINK != 0 {
                    self.push_ret(next, run.isa);
                }
                self.ret_stack.set_pop_pending();
                break;
            }
        }
    }

    /// Write back the decode state of a replay: as the last block's replay
    /// and range left it (the address after its branch, the last direct
    /// branch's target), the reads counted.
    #[inline(always)]
    fn replay_end(&mut self, run: &mut ReplayRun) {
        if let Some((b, executed)) = run.last.take() {
            BlockCache::replay(&b, &mut self.instr);
            self.instr.instr_addr = run.addr;
            self.instr.branch_addr = run.branch_addr;
            self.next_range_check = if executed { None } else { Some(b.next_addr()) };
        }
        self.mem.uses += std::mem::take(&mut run.uses);
    }

    /// Atom packets (`bytes`, the first at `index`) taken one after the
    /// other as `atom_packets` takes each through `commit_direct_atoms`
    /// and `packet_end`, while every atom replays a cached block: the
    /// replay state stays in locals from one packet to the next. Called
    /// with the decoder between packets, nothing stacked but an address,
    /// no speculation.
    /// A packet whose atoms stop replaying part-way goes on through
    /// `commit_atom_run`'s atom by atom path from where the replay
    /// stopped, and ends the run. Returns the bytes taken (at least one),
    /// the answer, and whether `atom_packets` is to stop there.
    pub(super) fn replay_atom_packets(&mut self, index: ocsd_trc_index_t, bytes: &[u8], ctx: &mut DecodeCtx) -> (usize, ocsd_datapath_resp_t, bool) {
        // the address stacked before the first packet, if any, is
        // committed first (as commit_direct_atoms takes it)
        if let Some(P0Elem { kind: P0Kind::Addr, data: P0Data::Addr(a), .. }) = self.stack.pop_back() {
            self.commit_addr(a);
        }
        let space = self.curr_mem_space();
        let mut run = self.replay_start(space);
        let mut taken = 0usize;
        for &byte in bytes {
            let Some(h) = ATOM_HEADERS[byte as usize] else { break };
            let idx = index.wrapping_add(taken as u32);
            taken += 1;
            let n = i32::from(h.num);
            let (mut num, mut bits, mut commit) = (h.num, h.bits, n);
            if let Some(r) = run.as_mut() {
                self.replay_atoms(r, &mut num, &mut bits, &mut commit, idx, space, ctx.mem);
            }
            if num == 0 {
                // the whole packet replayed: its elements to the client,
                // then the reads reported, as the packet's end does
                self.index_curr_pkt = idx;
                let sent = ctx.send_and_gate(&self.out.pending, self.trace_id);
                self.out.reset();
                self.context_sent(ctx.mem);
                if !sent {
                    if let Some(r) = run.as_mut() {
                        self.replay_end(r);
                    }
                    // as commit_direct_atoms leaves it, suspended in
                    // ResolveElem, then atom_packets
                    self.curr_spec_depth = 0;
                    self.res.commit = 0;
                    self.state = State::ResolveElem;
                    let resp = self.atom_packet_rest(h.type_, ocsd_pkt_atom { En_bits: h.bits, num: h.num }, ctx.client_resp(), ctx);
                    return (taken, resp, true);
                }
                if let Some(r) = run.as_mut() {
                    self.mem.uses += std::mem::take(&mut r.uses);
                }
                // (the client may have changed the memory in its callback)
                self.mem.report_and_check(ctx.mem);
                if let Some(r) = run.as_mut() {
                    let w = &self.mem;
                    // (after a taken indirect branch the next atom's
                    // address is the trace's or the return stack's)
                    if w.len == 0 || w.token != r.token || self.need_addr {
                        self.replay_end(r);
                        return (taken, OCSD_RESP_CONT, false);
                    }
                }
                continue;
            }
            if let Some(r) = run.as_mut() {
                self.replay_end(r);
            }
            let (resp, stop) = self.atom_packet_steps(h.type_, ocsd_pkt_atom { En_bits: h.bits, num: h.num }, ocsd_pkt_atom { En_bits: bits, num }, commit, idx, space, ctx);
            return (taken, resp, stop);
        }
        if let Some(r) = run.as_mut() {
            self.replay_end(r);
        }
        (taken, OCSD_RESP_CONT, false)
    }

    /// The rest of an atom packet (`whole`, at `idx`) whose replay stopped
    /// part-way (`left` of its atoms, `commit` of them to commit), atom by
    /// atom as `commit_atom_run` goes on after its replay, then as
    /// `packet_in` ends the packet. Returns the answer and whether
    /// `atom_packets` is to stop there.
    #[inline(never)]
    fn atom_packet_steps(
        &mut self,
        type_: ocsd_etmv4_i_pkt_type,
        whole: ocsd_pkt_atom,
        left: ocsd_pkt_atom,
        commit: i32,
        idx: ocsd_trc_index_t,
        space: ocsd_mem_space_acc_t,
        ctx: &mut DecodeCtx,
    ) -> (ocsd_datapath_resp_t, bool) {
        let n = i32::from(whole.num);
        self.index_curr_pkt = idx;
        self.curr_spec_depth = n;
        self.res.commit = commit;
        self.state = State::ResolveElem;
        let mut a = left;
        let mut err = OCSD_OK;
        self.commit_atom_steps(&mut a, idx, space, ctx, &mut err);
        let resp = self.direct_atoms_end(type_, n, a, err, ctx);
        if self.state != State::DecodePkts || !resp_is_cont(resp) || ctx.gate_closed() {
            return (self.atom_packet_rest(type_, whole, resp, ctx), true);
        }
        self.packet_end(ctx);
        (resp, !ctx.out.is_empty())
    }

    /// For [`Self::commit_replayed_atoms`]: the block at `addr`, outside
    /// the window, reached as the walk would reach it: its first read
    /// primed from a cache page the window kept a view of
    /// ([`MemWindow::prime_known`], the window then on that page), then the
    /// block cached under that page's bytes, whole in the view, and not a
    /// taken indirect branch `rule` refuses: the read taken, the block
    /// returned. None: not replayed here, the read (if made) left primed
    /// for the caller.
    #[inline(never)]
    fn replay_in_kept_page(&mut self, mem: &mut dyn MemAccess, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, aa64_chk: bool, executed: bool, rule: IndirectRule) -> Option<Block> {
        if !self.mem.prime_known(mem, addr, space, self.trace_id) {
            return None;
        }
        let w = &self.mem;
        let off = addr.wrapping_sub(w.base);
        if off >= w.len as u64 || w.space != space || w.token == 0 {
            return None;
        }
        let room = w.len as u64 - off;
        let b = match self.blocks.replayable(addr, w.token, aa64_chk, room, executed, rule) {
            Some(b) => b,
            None => self.blocks.retag(addr, w.token, aa64_chk, room, executed, rule, w)?,
        };
        self.mem.primed = None;
        Some(b)
    }

    /// The common case of [`Self::trace_to_wp`] without a target address:
    /// the block at the current address is cached under the token of the
    /// window's bytes, the whole block inside the window, and no read is
    /// primed. Replays it (its reads are the window's) and returns its
    /// range; None: take the full path.
    #[inline(always)]
    pub(super) fn replay_block(&mut self, space: ocsd_mem_space_acc_t, aa64_chk: bool) -> Option<InstrRange> {
        let st = self.instr.instr_addr;
        let w = &mut self.mem;
        if w.primed.is_some() || w.token == 0 || w.space != space || st < w.base {
            return None;
        }
        let avail = (w.len as u64).checked_sub(st - w.base)?;
        let b = self.blocks.entry(self.blocks.way(st)?)?;
        if !(b.token == w.token && b.aa64_chk() == aa64_chk) {
            return None;
        }
        let n = b.num_instr as u32;
        // a block holds at least its waypoint: avail >= 4 too
        if n == 0 || 4 * n as u64 > avail {
            return None;
        }
        BlockCache::replay(b, &mut self.instr);
        w.uses += n;
        Some(InstrRange { st_addr: st, en_addr: self.instr.instr_addr, num_instr: n })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_entries_are_compact() {
        assert_eq!(std::mem::size_of::<Block>(), 32);
    }

    /// The waypoint of a block of `n` instructions from `start`: a
    /// direct branch.
    fn waypoint(start: ocsd_vaddr_t, n: u32) -> ocsd_instr_info {
        let next = start + 4 * n as u64;
        ocsd_instr_info { instr_addr: next, opcode: 0x1400_0010, type_: OCSD_INSTR_BR, branch_addr: next - 4 + 0x40, ..Default::default() }
    }

    /// A window over `bytes` at `base`, read under `token`.
    fn window(base: ocsd_vaddr_t, bytes: Vec<u8>, token: u64) -> MemWindow {
        let mut w = MemWindow::new();
        let len = bytes.len();
        let view = MemView { data: crate::common::ViewData::Whole(std::sync::Arc::new(bytes)), off: 0, len };
        w.views.set(OWN, Kept { base, len: len as u64, token, view: Some(view) });
        (w.base, w.len, w.token, w.cur) = (base, len, token, OWN);
        w
    }

    #[test]
    fn growing_the_block_cache_keeps_its_blocks() {
        let mut c = BlockCache::new();
        let (first, token) = (0x40_0000u64, 7u64);
        c.put(first, token, false, 3, &waypoint(first, 3), None);
        assert_eq!(c.len(), BLOCK_CACHE_MIN);
        // enough blocks elsewhere to double the table twice, none in the
        // first one's set at any size
        let set = |a: u64, n: usize| ((a >> 2) ^ (a >> 14)) as usize & (n / 2 - 1);
        let mut addr = 0x80_0000u64;
        while c.len() < 4 * BLOCK_CACHE_MIN {
            addr += 4;
            if [1, 2, 4].iter().any(|k| set(addr, k * BLOCK_CACHE_MIN) == set(first, k * BLOCK_CACHE_MIN)) {
                continue;
            }
            c.put(addr, token, false, 1, &waypoint(addr, 1), None);
        }
        let b = c.replayable(first, token, false, 64, true, IndirectRule { ete: false }).expect("block kept");
        assert_eq!((b.start, b.next_addr()), (first, first + 12));
    }

    #[test]
    fn a_set_keeps_the_two_blocks_put_last() {
        let mut c = BlockCache::new();
        let (token, rule) = (7u64, IndirectRule { ete: false });
        c.put(0x1000, token, false, 1, &waypoint(0x1000, 1), None);
        // three more blocks of the first one's set
        let n = c.len() as u64 / 2;
        let same_set: Vec<u64> = (1..).map(|k| 0x1000 + 4 * n * k).filter(|&a| c.set(a) == c.set(0x1000)).take(3).collect();
        c.put(same_set[0], token, false, 2, &waypoint(same_set[0], 2), None);
        let found = |c: &BlockCache, a: u64| c.replayable(a, token, false, 64, true, rule).map(|b| b.num_instr);
        assert_eq!((found(&c, 0x1000), found(&c, same_set[0])), (Some(1), Some(2)));
        // a block put again stays where it is: both are still kept
        c.put(0x1000, token, false, 1, &waypoint(0x1000, 1), None);
        assert_eq!((found(&c, 0x1000), found(&c, same_set[0])), (Some(1), Some(2)));
        // a third drops the one in the second way (put first: a block put
        // again does not move)
        c.put(same_set[1], token, false, 3, &waypoint(same_set[1], 3), None);
        assert_eq!((found(&c, same_set[0]), found(&c, same_set[1])), (Some(2), Some(3)));
        assert_eq!(found(&c, 0x1000), None);
        assert_eq!(c.way(same_set[1]), Some(2 * c.set(0x1000)));
    }

    #[test]
    fn blocks_cached_before_their_words_are_not_taken_for_zeros() {
        let mut c = BlockCache::new();
        let start = 0x1000u64;
        let code: Vec<u8> = [0xd503_201fu32, 0xd503_201f, 0x1400_0010].iter().flat_map(|w| w.to_le_bytes()).collect();
        c.put(start, 1, false, 3, &waypoint(start, 3), Some(&code));
        // other bytes under another token: not the block; the words are
        // made from now on
        let w = window(start, vec![0xff; 16], 2);
        assert!(c.get(start, 2, false, 0, &w).is_none());
        assert!(!c.words.is_empty());
        // zeros under a third token are not the block's bytes either,
        // though its words (never written) are zeros
        let w = window(start, vec![0; 16], 3);
        assert!(c.get(start, 3, false, 0, &w).is_none());
        // a block cached with its words is found again under a new token
        // when its bytes are the same
        c.put(start, 4, false, 3, &waypoint(start, 3), Some(&code));
        let mut same = code.clone();
        same.extend_from_slice(&[0; 4]);
        let w = window(start, same, 5);
        assert_eq!(c.get(start, 5, false, 0, &w).map(|b| b.num_instr), Some(3));
    }

    #[test]
    fn a_replay_takes_a_block_read_again_only_with_its_bytes() {
        let mut c = BlockCache::new();
        let start = 0x2000u64;
        let code: Vec<u8> = [0xd503_201fu32, 0xd503_201f, 0x1400_0010].iter().flat_map(|w| w.to_le_bytes()).collect();
        let rule = IndirectRule { ete: false };
        c.put(start, 1, false, 3, &waypoint(start, 3), Some(&code));
        // (the words are kept once a block was missed under another token)
        assert!(c.get(start, 2, false, 0, &window(start, vec![0xff; 16], 2)).is_none());
        c.put(start, 3, false, 3, &waypoint(start, 3), Some(&code));
        // other bytes under a new token: not replayed, the block keeps its token
        let other = window(start, vec![0xff; 16], 4);
        assert!(c.replayable(start, 4, false, 16, true, rule).is_none());
        assert!(c.retag(start, 4, false, 16, true, rule, &other).is_none());
        assert_eq!(c.entry(c.way(start).expect("kept")).map(|b| b.token), Some(3));
        // not the whole block in the room left: not replayed
        let same = window(start, code.clone(), 5);
        assert!(c.retag(start, 5, false, 8, true, rule, &same).is_none());
        // the same bytes under a new token: replayed, and cached under it
        let b = c.retag(start, 5, false, 12, true, rule, &same).expect("same bytes");
        assert_eq!((b.num_instr, b.token), (3, 5));
        assert_eq!(c.replayable(start, 5, false, 12, true, rule).map(|b| b.num_instr), Some(3));
        // another address, or the bad-opcode check differing: never
        assert!(c.retag(start + 4, 6, false, 12, true, rule, &same).is_none());
        assert!(c.retag(start, 6, true, 12, true, rule, &same).is_none());
    }
}
