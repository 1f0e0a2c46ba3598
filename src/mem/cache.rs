//! The memory access cache of OpenCSD 1.8.0's mapper (`TrcMemAccCache`),
//! reproduced page for page.
//!
//! A read of up to a page's size is served from a cached page holding all
//! of the requested bytes for the same trace ID, searched from the most
//! recently used page on; otherwise the least recently used page (an
//! unused one first) is loaded from the accessor at the requested address,
//! one page long. A read the loaded page cannot cover in full returns no
//! bytes. Pages carry the trace ID they were read for and nothing else:
//! the memory space is checked only by the accessor lookup before the
//! cache. Pages of one trace ID are dropped when its decoder sees a
//! context change or the lookup moves to another accessor; all are dropped
//! when an accessor is removed.
//!
//! Following the same rules means a client's read callback is called with
//! the same addresses and sizes, in the same order, as OpenCSD calls it.
//!
//! Pages over files and buffers copy nothing: they name the accessor whose
//! (unchanging) bytes they stand for. Pages over client callbacks hold the
//! bytes the callback gave.

/// OpenCSD's defaults and limits (`trc_mem_acc_cache.h`).
pub const DEFAULT_PAGE_SIZE: usize = 2048;
pub const DEFAULT_PAGES: usize = 16;
pub const PAGE_SIZE_MIN: usize = 64;
pub const PAGE_SIZE_MAX: usize = 16384;
pub const PAGES_MIN: usize = 4;
pub const PAGES_MAX: usize = 256;

/// Environment variables OpenCSD reads when a decode tree creates its
/// memory mapper.
pub const ENV_CACHE_OFF: &str = "OPENCSD_MEMACC_CACHE_OFF";
pub const ENV_PAGE_SIZE: &str = "OPENCSD_MEMACC_CACHE_PAGE_SIZE";
pub const ENV_PAGE_NUM: &str = "OPENCSD_MEMACC_CACHE_PAGE_NUM";

use std::sync::Arc;

const NO_TRACE_ID: u8 = crate::abi::OCSD_BAD_CS_SRC_ID;

/// Where a page's bytes are.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum PageData {
    /// In the page's own buffer (read from a callback).
    Owned,
    /// The bytes of the accessor at this index (a file or buffer).
    Static(usize),
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Page {
    pub st_addr: u64,
    pub valid_len: usize,
    pub trace_id: u8,
    pub use_seq: u32,
    /// Names the bytes the page stands for (see [`crate::common::MemRun`]).
    pub token: u64,
    /// Names this load of the page ([`crate::common::CachePage`]).
    pub serial: u64,
    pub data: PageData,
}

impl Page {
    const CLEAR: Page = Page { st_addr: 0, valid_len: 0, trace_id: NO_TRACE_ID, use_seq: 0, token: 0, serial: 0, data: PageData::Owned };

    #[inline]
    pub fn holds(&self, addr: u64, len: usize, trace_id: u8) -> bool {
        // st_addr + valid_len >= addr + len, without overflow (a page holds
        // at most PAGE_SIZE_MAX bytes, so d < valid_len keeps d + len small;
        // and never past the top of memory, so an address below st_addr
        // gives d >= valid_len)
        let d = addr.wrapping_sub(self.st_addr);
        d < self.valid_len as u64 && d + len as u64 <= self.valid_len as u64 && self.trace_id == trace_id
    }

    /// End (exclusive) of the page's bytes.
    #[inline]
    pub fn end(&self) -> u128 {
        self.st_addr as u128 + self.valid_len as u128
    }
}

/// Page size and count, within OpenCSD's limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheSizes {
    pub page_size: usize,
    pub num_pages: usize,
}

impl Default for CacheSizes {
    fn default() -> Self {
        CacheSizes { page_size: DEFAULT_PAGE_SIZE, num_pages: DEFAULT_PAGES }
    }
}

impl CacheSizes {
    /// Sizes clamped to the limits (OpenCSD's `setCacheSizes` without
    /// `err_on_limit`).
    pub fn clamped(page_size: usize, num_pages: usize) -> Self {
        CacheSizes { page_size: page_size.clamp(PAGE_SIZE_MIN, PAGE_SIZE_MAX), num_pages: num_pages.clamp(PAGES_MIN, PAGES_MAX) }
    }

    /// The settings OpenCSD takes from its environment variables: caching
    /// on with the default sizes unless told otherwise.
    pub fn from_env() -> Option<Self> {
        if std::env::var_os(ENV_CACHE_OFF).is_some() {
            return None;
        }
        let num = |name: &str, default: usize| match std::env::var(name).ok().map(|v| strtol(&v)) {
            Some(v) if v > 0 => v as usize,
            _ => default,
        };
        Some(Self::clamped(num(ENV_PAGE_SIZE, DEFAULT_PAGE_SIZE), num(ENV_PAGE_NUM, DEFAULT_PAGES)))
    }
}

/// C's `strtol(s, NULL, 0)` for the values OpenCSD reads (decimal, 0x
/// hexadecimal, 0 octal); 0 when nothing converts.
fn strtol(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (16, h)
    } else if s.len() > 1 && s.starts_with('0') {
        (8, &s[1..])
    } else {
        (10, s)
    };
    let mut v: i64 = 0;
    for c in digits.chars() {
        match c.to_digit(radix) {
            Some(d) => v = v.saturating_mul(radix as i64).saturating_add(d as i64),
            None => break,
        }
    }
    if neg {
        -v
    } else {
        v
    }
}

/// The page cache.
pub(crate) struct MemCache {
    pub sizes: CacheSizes,
    pub pages: Vec<Page>,
    /// Page buffers for owned pages (made on first use; shared with the
    /// views handed out, so a page still viewed is loaded into a new one).
    bufs: Vec<Option<Arc<Vec<u8>>>>,
    /// Buffers replaced while still viewed, reused once let go (decoders
    /// hold at most one view each, so these stay few).
    spare: Vec<Arc<Vec<u8>>>,
    /// Most recently used page (`m_mru_idx`).
    pub mru: usize,
    /// Allocation and use sequence (`m_mru_sequence`).
    seq: u32,
    /// Search index (up to 64 pages; empty: none): per slot, a bit for
    /// each page whose bytes touch an address bucket (addresses shifted
    /// right by `shift`) hashed to that slot. A page holding a read's
    /// first byte is in the slot of that byte's bucket.
    index: Vec<u64>,
    /// The buckets each page is in the index for (first, last).
    spans: Vec<Option<(u64, u64)>>,
    shift: u32,
}

/// Slots of the page search index.
const INDEX_SLOTS: usize = 1024;

#[inline]
fn index_slot(bucket: u64) -> usize {
    ((bucket ^ (bucket >> 10) ^ (bucket >> 20)) as usize) & (INDEX_SLOTS - 1)
}

impl MemCache {
    pub fn new(sizes: CacheSizes) -> Self {
        let mut c = MemCache {
            sizes,
            pages: Vec::new(),
            bufs: Vec::new(),
            spare: Vec::new(),
            mru: 0,
            seq: 1,
            index: Vec::new(),
            spans: Vec::new(),
            shift: 0,
        };
        c.resize(sizes);
        c
    }

    /// New sizes: pages are made afresh (the use sequence carries on).
    pub fn resize(&mut self, sizes: CacheSizes) {
        self.sizes = sizes;
        self.pages = vec![Page::CLEAR; sizes.num_pages];
        self.bufs = vec![None; sizes.num_pages];
        self.spare.clear();
        if self.mru >= sizes.num_pages {
            self.mru = 0;
        }
        self.index = if sizes.num_pages <= 64 { vec![0; INDEX_SLOTS] } else { Vec::new() };
        self.spans = vec![None; sizes.num_pages];
        // buckets no larger than a page: a page touches a few of them
        self.shift = usize::BITS - 1 - sizes.page_size.max(1).leading_zeros();
    }

    pub fn invalidate_all(&mut self) {
        self.pages.iter_mut().for_each(|p| *p = Page::CLEAR);
        self.mru = 0;
        self.index.iter_mut().for_each(|m| *m = 0);
        self.spans.iter_mut().for_each(|s| *s = None);
    }

    pub fn invalidate_id(&mut self, trace_id: u8) {
        for i in 0..self.pages.len() {
            if self.pages[i].trace_id == trace_id {
                self.unindex(i);
                self.pages[i] = Page::CLEAR;
            }
        }
    }

    /// Page `i` leaves the search index (before it changes).
    #[inline]
    pub fn unindex(&mut self, i: usize) {
        if let Some((lo, hi)) = self.spans[i].take() {
            for b in lo..=hi {
                if let Some(m) = self.index.get_mut(index_slot(b)) {
                    *m &= !(1u64 << i);
                }
            }
        }
    }

    /// Page `i` enters the search index as it is now (after it changed).
    #[inline]
    pub fn reindex(&mut self, i: usize) {
        self.unindex(i);
        let p = &self.pages[i];
        if self.index.is_empty() || p.valid_len == 0 {
            return;
        }
        let lo = p.st_addr >> self.shift;
        let hi = (p.st_addr + (p.valid_len as u64 - 1)) >> self.shift;
        for b in lo..=hi {
            self.index[index_slot(b)] |= 1u64 << i;
        }
        self.spans[i] = Some((lo, hi));
    }

    /// Search for a page holding `len` bytes at `addr` for `trace_id`,
    /// from the most recently used page on (`blockInCache`). On a hit the
    /// page becomes the most recently used one; on a miss `mru` is back
    /// where it started.
    ///
    /// The pages that may hold the read are those of the index slot of
    /// `addr`'s bucket: taken in the search's order (from `mru` on, round
    /// to the first page), the first that holds it is the page the search
    /// finds.
    #[inline(always)]
    pub fn find(&mut self, addr: u64, len: usize, trace_id: u8) -> bool {
        if self.index.is_empty() {
            return self.find_scan(addr, len, trace_id);
        }
        let start = if self.mru < self.pages.len() { self.mru } else { 0 };
        // page k at bit (k - start) mod 64: pages from `start` on first,
        // then those before it, each in page order
        let mut m = self.index[index_slot(addr >> self.shift)].rotate_right(start as u32);
        while m != 0 {
            let k = (m.trailing_zeros() as usize + start) & 63;
            if self.pages[k].holds(addr, len, trace_id) {
                self.mru = k;
                return true;
            }
            m &= m - 1;
        }
        false
    }

    /// [`MemCache::find`] page by page.
    #[inline]
    pub fn find_scan(&mut self, addr: u64, len: usize, trace_id: u8) -> bool {
        let start = self.mru.min(self.pages.len());
        for (k, p) in self.pages[start..].iter().enumerate() {
            if p.holds(addr, len, trace_id) {
                self.mru = start + k;
                return true;
            }
        }
        for (k, p) in self.pages[..start].iter().enumerate() {
            if p.holds(addr, len, trace_id) {
                self.mru = k;
                return true;
            }
        }
        false
    }

    /// Whether the most recently used page holds the bytes.
    #[inline]
    pub fn mru_holds(&self, addr: u64, len: usize, trace_id: u8) -> bool {
        self.pages[self.mru].holds(addr, len, trace_id)
    }

    /// The page to load next: an unused one, else the least recently used
    /// (`findNewPage`). Becomes the most recently used page.
    pub fn take_new_page(&mut self) -> usize {
        let n = self.pages.len();
        let mut cur = self.mru + 1;
        if cur >= n {
            cur = 0;
        }
        let mut oldest_idx = self.mru;
        let mut oldest_seq = 0u32;
        while cur != self.mru {
            let s = self.pages[cur].use_seq;
            if s == 0 {
                self.mru = cur;
                return cur;
            }
            if oldest_seq == 0 || oldest_seq > s {
                oldest_seq = s;
                oldest_idx = cur;
            }
            cur += 1;
            if cur >= n {
                cur = 0;
            }
        }
        self.mru = oldest_idx;
        oldest_idx
    }

    /// The owned buffer of page `i` (page size bytes), to load it.
    pub fn page_buf(&mut self, i: usize) -> &mut [u8] {
        let ps = self.sizes.page_size;
        let b = &mut self.bufs[i];
        if b.as_mut().and_then(Arc::get_mut).is_none() {
            if let Some(old) = b.take() {
                self.spare.push(old);
            }
            *b = Some(match self.spare.iter().position(|x| Arc::strong_count(x) == 1 && x.len() == ps) {
                Some(k) => self.spare.swap_remove(k),
                None => Arc::new(vec![0; ps]),
            });
        }
        Arc::get_mut(b.as_mut().expect("made above")).expect("not shared")
    }

    /// Page `i`'s own buffer.
    #[inline]
    pub fn owned(&self, i: usize) -> &Arc<Vec<u8>> {
        self.bufs[i].as_ref().expect("an owned page has its buffer")
    }

    /// `n` uses of the most recently used page (`incSequence`, n times).
    #[inline(always)]
    pub fn use_mru(&mut self, n: u32) {
        if n == 0 {
            return;
        }
        match self.seq.checked_add(n) {
            Some(next) if next != 0 => {
                self.pages[self.mru].use_seq = next - 1;
                self.seq = next;
            }
            _ => self.use_mru_wrapping(n),
        }
    }

    #[cold]
    #[inline(never)]
    fn use_mru_wrapping(&mut self, n: u32) {
        for _ in 0..n {
            self.use_mru_once();
        }
    }

    fn use_mru_once(&mut self) {
        self.pages[self.mru].use_seq = self.seq;
        self.seq = self.seq.wrapping_add(1);
        if self.seq == 0 {
            // wrapped: number the pages in use afresh, the current one newest
            self.seq = 1;
            for p in self.pages.iter_mut().filter(|p| p.use_seq != 0) {
                p.use_seq = self.seq;
                self.seq += 1;
            }
            self.pages[self.mru].use_seq = self.seq;
            self.seq += 1;
        }
    }

    #[cfg(test)]
    pub fn set_seq(&mut self, s: u32) {
        self.seq = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtol_like_c() {
        assert_eq!(strtol("1024"), 1024);
        assert_eq!(strtol("0x800"), 2048);
        assert_eq!(strtol("010"), 8);
        assert_eq!(strtol("  12abc"), 12);
        assert_eq!(strtol("abc"), 0);
        assert_eq!(strtol("-5"), -5);
    }

    #[test]
    fn new_pages_unused_first_then_least_recently_used() {
        let mut c = MemCache::new(CacheSizes { page_size: 64, num_pages: 4 });
        // unused pages are taken from mru + 1 on
        let mut order = Vec::new();
        for a in 0..4u64 {
            let i = c.take_new_page();
            c.pages[i] = Page { st_addr: a * 0x100, valid_len: 64, trace_id: 1, ..Page::CLEAR };
            c.reindex(i);
            c.use_mru(1);
            order.push(i);
        }
        assert_eq!(order, vec![1, 2, 3, 0]);
        // use page 1 again: page 2 is now the oldest
        assert!(c.find(0x0, 4, 1));
        assert_eq!(c.mru, 1);
        c.use_mru(1);
        assert_eq!(c.take_new_page(), 2);
    }

    #[test]
    fn search_needs_trace_id_and_whole_block() {
        let mut c = MemCache::new(CacheSizes { page_size: 64, num_pages: 4 });
        c.pages[2] = Page { st_addr: 0x1000, valid_len: 64, trace_id: 5, ..Page::CLEAR };
        c.reindex(2);
        assert!(c.find(0x1000, 4, 5));
        assert_eq!(c.mru, 2);
        assert!(c.find(0x103c, 4, 5));
        assert!(!c.find(0x103e, 4, 5));
        assert_eq!(c.mru, 2); // back where it started
        assert!(!c.find(0x1000, 4, 6));
        c.invalidate_id(5);
        assert!(!c.find(0x1000, 4, 5));
    }

    /// The indexed search finds the page the page-by-page search finds,
    /// through loads (overlapping pages, other trace IDs, pages at the
    /// top of memory, empty loads) and invalidations.
    #[test]
    fn indexed_search_finds_what_the_scan_finds() {
        let mut rnd = crate::common::xorshift64(0x2545_f491_4f6c_dd1d);
        for (page_size, num_pages) in [(64, 4), (100, 7), (2048, 16), (16384, 64), (64, 65)] {
            let (mut hits, mut misses) = (0, 0);
            let mut c = MemCache::new(CacheSizes { page_size, num_pages });
            let mut scan = MemCache::new(CacheSizes { page_size, num_pages });
            let top = u64::MAX - 3 * page_size as u64;
            let region = |r: u64| if r.is_multiple_of(8) { top + r % (3 * page_size as u64) } else { 0x8000 + r % (8 * page_size as u64) };
            for step in 0..20_000 {
                let r = rnd();
                match r % 16 {
                    0 => {
                        let id = (rnd() % 3) as u8;
                        c.invalidate_id(id);
                        scan.invalidate_id(id);
                    }
                    1 if step % 97 == 0 => {
                        c.invalidate_all();
                        scan.invalidate_all();
                    }
                    2..=5 => {
                        // a load at any address, as a miss makes it
                        let addr = region(rnd());
                        let room = (u64::MAX - addr).saturating_add(1).min(page_size as u64) as usize;
                        let len = if r.is_multiple_of(29) { 0 } else { room - (rnd() as usize % room.min(16)) };
                        let id = (rnd() % 3) as u8;
                        let i = c.take_new_page();
                        assert_eq!(i, scan.take_new_page());
                        for m in [&mut c, &mut scan] {
                            m.unindex(i);
                            m.pages[i] = Page { st_addr: addr, valid_len: len, trace_id: id, ..Page::CLEAR };
                            m.reindex(i);
                            m.use_mru(1);
                        }
                    }
                    _ => {
                        let addr = region(rnd());
                        let len = [1, 2, 4, 8][(rnd() % 4) as usize];
                        let id = (rnd() % 3) as u8;
                        if r.is_multiple_of(5) {
                            c.mru = (rnd() as usize) % num_pages;
                            scan.mru = c.mru;
                        }
                        let found = c.find(addr, len, id);
                        assert_eq!(found, scan.find_scan(addr, len, id), "{page_size}/{num_pages} step {step}");
                        assert_eq!(c.mru, scan.mru, "{page_size}/{num_pages} step {step}");
                        if found {
                            hits += 1;
                            c.use_mru(1);
                            scan.use_mru(1);
                        } else {
                            misses += 1;
                        }
                    }
                }
            }
            assert!(hits > 1000 && misses > 1000, "{page_size}/{num_pages}: {hits} hits, {misses} misses");
        }
    }

    #[test]
    fn sequence_wrap_renumbers_in_page_order() {
        let mut c = MemCache::new(CacheSizes { page_size: 64, num_pages: 4 });
        for i in 0..4 {
            c.pages[i] = Page { st_addr: i as u64 * 0x100, valid_len: 64, trace_id: 1, use_seq: 7, ..Page::CLEAR };
        }
        c.mru = 3;
        c.set_seq(u32::MAX - 1);
        c.use_mru(1); // seq MAX-1 to page 3, seq = MAX
        c.mru = 0;
        c.use_mru(1); // page 0 gets MAX, seq wraps: renumber 1..4, then page 0 newest
        assert_eq!(c.pages.iter().map(|p| p.use_seq).collect::<Vec<_>>(), vec![5, 2, 3, 4]);
        // many uses at once equal one at a time
        let mut a = MemCache::new(CacheSizes { page_size: 64, num_pages: 4 });
        let mut b = MemCache::new(CacheSizes { page_size: 64, num_pages: 4 });
        for c in [&mut a, &mut b] {
            for i in 0..4 {
                c.pages[i] = Page { st_addr: i as u64 * 0x100, valid_len: 64, trace_id: 1, use_seq: 9, ..Page::CLEAR };
            }
            c.set_seq(u32::MAX - 3);
            c.mru = 1;
        }
        a.use_mru(10);
        for _ in 0..10 {
            b.use_mru(1);
        }
        assert_eq!(a.pages.iter().map(|p| p.use_seq).collect::<Vec<_>>(), b.pages.iter().map(|p| p.use_seq).collect::<Vec<_>>());
        assert_eq!(a.seq, b.seq);
    }
}
