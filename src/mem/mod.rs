//! Target memory access for instruction following.
//!
//! Accessors map an address range in a memory space to bytes: a binary
//! file (whole, or regions at file offsets), a buffer, or a client
//! callback (optionally told the trace ID). The [`MemMapper`] holds them,
//! refuses overlapping ranges in the same memory space, and serves reads
//! through OpenCSD's memory access cache ([`cache`]): the same lookups,
//! the same pages, the same callback calls. Files are read into memory
//! when first used ([`file`](mod@file)), so a read from a file is a bounds-checked
//! copy.
#![forbid(unsafe_code)]

pub mod cache;
pub mod file;
pub mod ocsd_files;

use std::fmt::Write as _;
use std::sync::Arc;

use crate::abi::*;
use crate::common::{CachePage, MemAccess, MemContext, MemRun, MemView, ViewData};
use cache::{CacheSizes, MemCache, PageData};
pub use file::FileBytes;

/// The memory space of program reads at exception level `el` (0 to 3) in
/// security state `security_level`: what the instruction-following decoders
/// (OpenCSD's `getCurrMemSpace`) and the Tarmac writer read code from.
#[allow(non_upper_case_globals)]
pub fn mem_space_for_el(security_level: ocsd_sec_level, el: ocsd_ex_level) -> ocsd_mem_space_acc_t {
    let el = el & 3;
    match security_level {
        ocsd_sec_root => OCSD_MEM_SPACE_ROOT,
        ocsd_sec_realm => match el {
            0 | 1 => OCSD_MEM_SPACE_EL1R,
            2 => OCSD_MEM_SPACE_EL2R,
            _ => OCSD_MEM_SPACE_ROOT,
        },
        ocsd_sec_nonsecure => match el {
            0 | 1 => OCSD_MEM_SPACE_EL1N,
            2 => OCSD_MEM_SPACE_EL2,
            _ => OCSD_MEM_SPACE_EL3,
        },
        _ => match el {
            0 | 1 => OCSD_MEM_SPACE_EL1S,
            2 => OCSD_MEM_SPACE_EL2S,
            _ => OCSD_MEM_SPACE_EL3,
        },
    }
}

pub mod elf;

/// A client read function: (address, memory space, trace ID, buffer) ->
/// bytes read.
pub type ReadFn = Box<dyn FnMut(ocsd_vaddr_t, ocsd_mem_space_acc_t, u8, &mut [u8]) -> usize + Send>;

/// A client read function that also says, when it has no bytes at the
/// address, the range `[start, end]` (inclusive) around it where it has
/// none: (bytes read, hole). See [`Source::CallbackHoles`].
pub type ReadHoleFn = Box<dyn FnMut(ocsd_vaddr_t, ocsd_mem_space_acc_t, u8, &mut [u8]) -> (usize, Option<(ocsd_vaddr_t, ocsd_vaddr_t)>) + Send>;

pub enum Source {
    /// File contents, read on demand (shared between accessors of one
    /// file).
    File { path: String, data: FileBytes, offset: usize },
    /// A copy of a client buffer.
    Buffer { data: Arc<Vec<u8>> },
    /// A client callback.
    Callback { read: ReadFn },
    /// A callback that opts in to the mapper remembering its holes: when
    /// it reads nothing and names the range around the address where it
    /// has no bytes, uncached reads by the same trace ID in the same
    /// memory space inside that range get nothing without a call, while
    /// `stamp` keeps the value it had before that read (the client changes
    /// it when its answers may change). The C API's callbacks never opt in.
    CallbackHoles { read: ReadHoleFn, stamp: Arc<std::sync::atomic::AtomicU64> },
}

/// A file mapped as memory ([`MemMapper::file_images`]): what a client
/// needs to serve the same bytes from a callback.
#[derive(Clone)]
pub struct FileImage {
    pub start: ocsd_vaddr_t,
    /// Inclusive end address.
    pub end: ocsd_vaddr_t,
    pub space: ocsd_mem_space_acc_t,
    pub data: FileBytes,
    /// Where in `data` the byte at `start` is.
    pub offset: usize,
}

impl FileImage {
    /// The bytes from `addr` (as many as `buf` holds and the image has)
    /// as the file accessor reads them: how many; 0 outside the image or
    /// when the file cannot be read.
    pub fn read(&self, addr: ocsd_vaddr_t, buf: &mut [u8]) -> usize {
        if addr < self.start || addr > self.end {
            return 0;
        }
        let rel = self.offset.saturating_add((addr - self.start) as usize);
        let n = buf.len().min(usize::try_from(self.end - addr).unwrap_or(usize::MAX).saturating_add(1));
        self.data.read_at(rel, &mut buf[..n]).unwrap_or(0)
    }
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

    /// How many bytes a static accessor (file, buffer) has from `addr`
    /// (inside the range) to the end of its range or data: None for
    /// callbacks.
    #[inline]
    fn static_avail(&self, addr: ocsd_vaddr_t) -> Option<usize> {
        let rel = (addr - self.start) as usize;
        let in_range = ((self.end - addr) as u128 + 1).min(usize::MAX as u128) as usize;
        let len = match &self.source {
            Source::File { data, offset, .. } => data.len().saturating_sub(offset.saturating_add(rel)),
            Source::Buffer { data } => data.len().saturating_sub(rel),
            Source::Callback { .. } | Source::CallbackHoles { .. } => return None,
        };
        Some(len.min(in_range))
    }

    /// Copy a static accessor's bytes at `addr` (inside the range, at
    /// most [`Accessor::static_avail`] of them). A file's bytes are read
    /// from it on first use: `OCSD_ERR_FILE_ERROR` when that fails.
    #[inline]
    fn static_copy(&self, addr: ocsd_vaddr_t, out: &mut [u8]) -> Result<(), ocsd_err_t> {
        let rel = (addr - self.start) as usize;
        match &self.source {
            Source::File { data, offset, .. } => data.copy(offset + rel, out),
            Source::Buffer { data } => {
                out.copy_from_slice(&data[rel..rel + out.len()]);
                Ok(())
            }
            Source::Callback { .. } | Source::CallbackHoles { .. } => Ok(()),
        }
    }

    /// A view of a static accessor's bytes `[addr - before, addr + after)`
    /// (inside the range, at most [`Accessor::static_avail`] from `addr`):
    /// None for callbacks. Nothing is read until the view's reader asks.
    #[inline]
    fn static_view(&self, addr: ocsd_vaddr_t, before: usize, after: usize) -> Option<MemView> {
        let rel = (addr - self.start) as usize;
        match &self.source {
            Source::File { data, offset, .. } => Some(data.view(offset + rel, before, after)),
            Source::Buffer { data } => Some(MemView { data: ViewData::Whole(data.clone()), off: rel - before, len: before + after }),
            Source::Callback { .. } | Source::CallbackHoles { .. } => None,
        }
    }

    /// A read straight from the accessor: the bytes it has at `addr`, or
    /// for a callback what it answered. A callback is asked for the whole
    /// read, also where it runs past the end of its range (OpenCSD's
    /// callback accessor passes the request on as it is: a cache page from
    /// `addr`, or the decoder's read), and its bytes are taken.
    fn read(&mut self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8, buf: &mut [u8]) -> Result<usize, ocsd_err_t> {
        let avail = (self.end - addr).saturating_add(1);
        let n = (buf.len() as u64).min(avail) as usize;
        let rel = (addr - self.start) as usize;
        match &mut self.source {
            Source::File { data, offset, .. } => data.read_at(offset.saturating_add(rel), &mut buf[..n]),
            Source::Buffer { data } => Ok(copy_from(data, rel, &mut buf[..n])),
            Source::Callback { read } => Ok(read(addr, space, trace_id, buf)),
            Source::CallbackHoles { read, .. } => Ok(read(addr, space, trace_id, &mut buf[..n]).0),
        }
    }

    /// [`Accessor::read`] of a callback with holes: the bytes read, and
    /// the hole it names (with the stamp before the call) when it read
    /// nothing.
    fn read_hole(&mut self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8, buf: &mut [u8]) -> Result<(usize, Option<Hole>), ocsd_err_t> {
        let avail = (self.end - addr).saturating_add(1);
        let n = (buf.len() as u64).min(avail) as usize;
        match &mut self.source {
            Source::CallbackHoles { read, stamp } => {
                let st = stamp.load(std::sync::atomic::Ordering::Acquire);
                let (got, hole) = read(addr, space, trace_id, &mut buf[..n]);
                let hole = match hole {
                    Some((start, end)) if got == 0 && start <= addr && addr <= end => {
                        Some(Hole { acc: 0, trace_id, space, start: start.max(self.start), end: end.min(self.end), stamp: st })
                    }
                    _ => None,
                };
                Ok((got, hole))
            }
            _ => self.read(addr, space, trace_id, buf).map(|n| (n, None)),
        }
    }

    /// `FileAcc; Range::0x400000:4053e3; Mem Space::Any` (+ file name line).
    pub fn describe(&self, out: &mut String) {
        let l = Listed::of(self, 0);
        write_range(out, l.kind.name(), self.start, self.end, self.space);
        if let ListedKind::File { path, .. } = l.kind {
            let _ = write!(out, "\nFilename={}", path);
        }
    }
}

/// An accessor on a mapper's list as OpenCSD's `logMappedRanges` shows
/// it: its range, memory space and kind, and the group (one accessor of
/// OpenCSD's) it belongs to.
pub(crate) struct Listed<'a> {
    pub start: ocsd_vaddr_t,
    pub end: ocsd_vaddr_t,
    pub space: ocsd_mem_space_acc_t,
    pub group: u64,
    pub kind: ListedKind<&'a str>,
}

/// What kind of accessor a [`Listed`] is; `P`, the file's path (borrowed,
/// or owned where an accessor list keeps it).
pub(crate) enum ListedKind<P> {
    /// A range of a file, read from `offset` in it.
    File { path: P, offset: usize },
    Buffer,
    Callback,
}

impl<P: AsRef<str>> ListedKind<P> {
    fn name(&self) -> &'static str {
        match self {
            ListedKind::File { .. } => "FileAcc",
            ListedKind::Buffer => "BuffAcc",
            ListedKind::Callback => "CB  Acc",
        }
    }

    /// The same kind, its path borrowed.
    pub fn borrowed(&self) -> ListedKind<&str> {
        match self {
            ListedKind::File { path, offset } => ListedKind::File { path: path.as_ref(), offset: *offset },
            ListedKind::Buffer => ListedKind::Buffer,
            ListedKind::Callback => ListedKind::Callback,
        }
    }

    /// The same kind, its path owned.
    pub fn owned(&self) -> ListedKind<String> {
        match self.borrowed() {
            ListedKind::File { path, offset } => ListedKind::File { path: path.to_string(), offset },
            ListedKind::Buffer => ListedKind::Buffer,
            ListedKind::Callback => ListedKind::Callback,
        }
    }
}

impl<'a> Listed<'a> {
    pub fn of(a: &'a Accessor, group: u64) -> Self {
        let kind = match &a.source {
            Source::File { path, offset, .. } => ListedKind::File { path: path.as_str(), offset: *offset },
            Source::Buffer { .. } => ListedKind::Buffer,
            Source::Callback { .. } | Source::CallbackHoles { .. } => ListedKind::Callback,
        };
        Listed { start: a.start, end: a.end, space: a.space, group, kind }
    }
}

/// `KIND; Range::0xSTART:END; Mem Space::SPACE`.
fn write_range(out: &mut String, kind: &str, start: ocsd_vaddr_t, end: ocsd_vaddr_t, space: ocsd_mem_space_acc_t) {
    let _ = write!(out, "{}; Range::0x{:02x}:{:x}; Mem Space::", kind, start, end);
    crate::printers::gen_elem::write_mem_space_str(space, out);
}

/// One description per accessor of a list, as OpenCSD's
/// `logMappedRanges` gives them.
///
/// OpenCSD keeps one file accessor per file: the regions mapped from one
/// file are listed together, at the place of the file's first mapping,
/// with the file name once after them. The base range (file offset 0)
/// comes first, with the accessor's memory space; then the regions at
/// other offsets, in the order they were added, each with the memory
/// space a file region is created with (any), which is what OpenCSD
/// prints for them whatever space was asked for.
pub(crate) fn describe_listed(list: &[Listed]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, a) in list.iter().enumerate() {
        let ListedKind::File { path, .. } = a.kind else {
            let mut s = String::new();
            write_range(&mut s, a.kind.name(), a.start, a.end, a.space);
            out.push(s);
            continue;
        };
        if list[..i].iter().any(|m| m.group == a.group) {
            continue; // listed with the file's first mapping
        }
        let group: Vec<&Listed> = list[i..].iter().filter(|m| m.group == a.group).collect();
        let is_base = |b: &&&Listed| matches!(b.kind, ListedKind::File { offset: 0, .. });
        let mut s = String::new();
        for r in group.iter().filter(is_base).take(1) {
            write_range(&mut s, "FileAcc", r.start, r.end, r.space);
            s.push('\n');
        }
        for r in group.iter().filter(|b| !is_base(b)) {
            write_range(&mut s, "FileAcc", r.start, r.end, OCSD_MEM_SPACE_ANY);
            s.push('\n');
        }
        let _ = write!(s, "Filename={}", path);
        out.push(s);
    }
    out
}

fn copy_from(data: &[u8], at: usize, dst: &mut [u8]) -> usize {
    if at >= data.len() {
        return 0;
    }
    let n = dst.len().min(data.len() - at);
    dst[..n].copy_from_slice(&data[at..at + n]);
    n
}

/// Which execution contexts an accessor serves: all (the C API's
/// accessors, [`ContextFilter::ANY`]), or only those with this context ID
/// and/or VMID (a process image, a guest's image). Set with
/// [`MemMapper::add_for_context`]; the decoders tell the mapper their
/// context with [`MemAccess::update_context`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ContextFilter {
    pub context_id: Option<u32>,
    pub vmid: Option<u32>,
}

impl ContextFilter {
    pub const ANY: ContextFilter = ContextFilter { context_id: None, vmid: None };

    pub fn is_any(&self) -> bool {
        self.context_id.is_none() && self.vmid.is_none()
    }

    /// Whether a source in context `ctx` may read from the accessor: each
    /// field the filter sets must be known and equal.
    #[inline]
    pub fn matches(&self, ctx: &MemContext) -> bool {
        self.context_id.is_none_or(|id| ctx.context_id == Some(id)) && self.vmid.is_none_or(|v| ctx.vmid == Some(v))
    }

    /// Whether no context matches both filters.
    pub fn disjoint(&self, other: &ContextFilter) -> bool {
        let differ = |a: Option<u32>, b: Option<u32>| matches!((a, b), (Some(x), Some(y)) if x != y);
        differ(self.context_id, other.context_id) || differ(self.vmid, other.vmid)
    }
}

/// Identity of an accessor beyond its place in the list.
#[derive(Clone, Copy, Debug)]
struct AccMeta {
    /// Unique in the process: names a static accessor's bytes.
    uid: u64,
    /// Accessors that are one accessor in OpenCSD (the regions of one
    /// file) share a group: moving between them is no change of accessor.
    group: u64,
    /// The contexts it serves.
    filter: ContextFilter,
}

/// A range where a callback with holes said it has no bytes: for reads
/// by `trace_id` in `space`, while the accessor's stamp stays `stamp`.
#[derive(Clone, Copy, Debug)]
struct Hole {
    /// The accessor's index.
    acc: usize,
    trace_id: u8,
    space: ocsd_mem_space_acc_t,
    start: ocsd_vaddr_t,
    end: ocsd_vaddr_t,
    stamp: u64,
}

/// The last holes callbacks with holes named (a read may alternate
/// between a few: a mapping without its binary, the gap next to it).
#[derive(Default)]
struct Holes {
    list: [Option<Hole>; 4],
    /// The entry a new hole replaces.
    next: usize,
}

impl Holes {
    /// Whether a read by `trace_id` at `addr` in `space` through accessor
    /// `acc`, whose stamp is `stamp`, is in a hole.
    #[inline]
    fn holds(&self, acc: usize, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8, stamp: u64) -> bool {
        self.list.iter().flatten().any(|h| {
            h.acc == acc && h.trace_id == trace_id && h.space == space && h.stamp == stamp && addr >= h.start && addr <= h.end
        })
    }

    /// Keep `h`: joined to a hole it touches (same accessor, trace ID,
    /// space and stamp), else in place of the oldest entry.
    fn add(&mut self, h: Hole) {
        for e in self.list.iter_mut().flatten() {
            let same = e.acc == h.acc && e.trace_id == h.trace_id && e.space == h.space && e.stamp == h.stamp;
            if same && e.start <= h.end.saturating_add(1) && h.start <= e.end.saturating_add(1) {
                e.start = e.start.min(h.start);
                e.end = e.end.max(h.end);
                return;
            }
        }
        self.list[self.next] = Some(h);
        self.next = (self.next + 1) % self.list.len();
    }
}

/// The set of accessors of a decode tree, and OpenCSD's memory access
/// cache in front of them.
pub struct MemMapper {
    accessors: Vec<Accessor>,
    meta: Vec<AccMeta>,
    /// The accessor of the last lookup (`m_acc_curr`).
    curr: Option<usize>,
    /// None: caching off.
    cache: Option<MemCache>,
    /// Sizes to use when caching is switched on again.
    sizes: CacheSizes,
    /// See [`MemAccess::epoch`].
    epoch: u64,
    /// Only files and buffers are mapped, no two of them overlapping: what
    /// a read returns cannot depend on the cache's pages (see
    /// [`MemMapper::serve`]), so none are kept.
    static_only: bool,
    /// Some accessor serves selected contexts only.
    any_filtered: bool,
    /// The context of each trace ID's decoder ([`MemAccess::update_context`]).
    contexts: Vec<MemContext>,
    /// Per trace ID, the token of the callback pages it loads (0: take a
    /// new one at the next load). See [`MemMapper::new_callback_bytes`].
    cb_tokens: Vec<u64>,
    /// (epoch, address, trace ID) of the last [`MemAccess::read_known_word`]
    /// whose page search found no page: while the epoch stays, the same
    /// search in [`MemAccess::read_run_known`] would find none either.
    searched_miss: Option<(u64, ocsd_vaddr_t, u8)>,
    /// The last holes callbacks with holes named (uncached reads only;
    /// dropped when the accessors change).
    holes: Holes,
    /// The serials of the pages loaded.
    serials: UidBlock,
    /// Changes queued from client callbacks, applied at the next read.
    queue: Option<Arc<ocsd_files::MapQueue>>,
    /// Where the mapper's warnings go (OpenCSD's mapper logs a client
    /// callback's bad read length at warning level before the decoder
    /// reports the failed read); None: nowhere.
    warn: Option<WarnFn>,
}

/// A warning of the mapper: (error code, message).
pub type WarnFn = Arc<dyn Fn(ocsd_err_t, &str) + Send + Sync>;

/// The process-wide sequence of accessor uids, tokens and page serials
/// (from 1: 0 names nothing).
static NEXT_UID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_uid() -> u64 {
    NEXT_UID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Numbers of the sequence of [`next_uid`] taken a block at a time, for the
/// page serials: a page load then costs no atomic operation (a locked
/// add was a good part of a load's time, with 50,000 loads and more in a
/// trace).
#[derive(Default)]
struct UidBlock {
    next: u64,
    end: u64,
}

impl UidBlock {
    const SIZE: u64 = 4096;

    #[inline]
    fn take(&mut self) -> u64 {
        if self.next == self.end {
            self.next = NEXT_UID.fetch_add(Self::SIZE, std::sync::atomic::Ordering::Relaxed);
            self.end = self.next + Self::SIZE;
        }
        self.next += 1;
        self.next - 1
    }
}

impl Default for MemMapper {
    /// A mapper with OpenCSD's default caching, adjusted by its
    /// environment variables (`OPENCSD_MEMACC_CACHE_OFF`, `_PAGE_SIZE`,
    /// `_PAGE_NUM`) as OpenCSD adjusts it when a tree creates its mapper.
    fn default() -> Self {
        Self::with_cache(CacheSizes::from_env())
    }
}

/// Where a read is served from.
enum Serve {
    /// Page `i` of the cache.
    Page(usize),
    /// Straight from accessor `i` (caching off, or a read larger than a page).
    Direct(usize),
}

impl MemMapper {
    pub fn new() -> Self {
        Self::default()
    }

    /// A mapper caching with `sizes`, or not caching (None).
    pub fn with_cache(sizes: Option<CacheSizes>) -> Self {
        MemMapper {
            accessors: Vec::new(),
            meta: Vec::new(),
            curr: None,
            cache: sizes.map(MemCache::new),
            sizes: sizes.unwrap_or_default(),
            epoch: 0,
            static_only: true,
            any_filtered: false,
            contexts: vec![MemContext::default(); 256],
            cb_tokens: vec![0; 256],
            searched_miss: None,
            holes: Holes::default(),
            serials: UidBlock::default(),
            queue: None,
            warn: None,
        }
    }

    /// Changes from a client's callback wait (the fast paths give way to
    /// [`MemMapper::serve`], which makes them).
    #[inline]
    fn queued(&self) -> bool {
        self.queue.as_ref().is_some_and(|q| q.pending())
    }

    /// The epoch as the decoders see it: it also moves when a change is
    /// queued from a callback, so that they drop their views at once.
    #[inline]
    fn seen_epoch(&self) -> u64 {
        self.epoch.wrapping_add(self.queue.as_ref().map_or(0, |q| q.generation()))
    }

    /// Send the mapper's warnings to `f`.
    pub fn set_warn(&mut self, f: Option<WarnFn>) {
        self.warn = f;
    }

    fn warn(&self, err: ocsd_err_t, msg: &str) {
        if let Some(w) = &self.warn {
            w(err, msg);
        }
    }

    /// `ocsd_dt_set_mem_acc_cacheing`: switch caching on with these sizes
    /// (pages made afresh unless the sizes are those in use), or off.
    /// Sizes outside OpenCSD's limits are refused.
    pub fn set_caching(&mut self, enable: bool, page_size: usize, num_pages: usize) -> Result<(), &'static str> {
        self.epoch += 1;
        self.new_callback_bytes_all();
        if !enable {
            self.cache = None;
            return Ok(());
        }
        Self::check_caching(page_size, num_pages)?;
        let sizes = CacheSizes { page_size, num_pages };
        match &mut self.cache {
            Some(c) if c.sizes == sizes => {}
            Some(c) => c.resize(sizes),
            None => self.cache = Some(MemCache::new(sizes)),
        }
        self.sizes = sizes;
        Ok(())
    }

    /// Cache sizes OpenCSD takes (`setCacheSizes` with its limits
    /// checked), or its message.
    pub fn check_caching(page_size: usize, num_pages: usize) -> Result<(), &'static str> {
        if page_size > cache::PAGE_SIZE_MAX {
            return Err("MemAcc Caching: page size too large");
        }
        if page_size < cache::PAGE_SIZE_MIN {
            return Err("MemAcc Caching: page size too small");
        }
        if num_pages > cache::PAGES_MAX {
            return Err("MemAcc Caching: number of pages too large");
        }
        if num_pages < cache::PAGES_MIN {
            return Err("MemAcc Caching: number of pages too small");
        }
        Ok(())
    }

    /// Whether [`MemMapper::share_static`] would give a mapper (without
    /// building one).
    pub fn can_share_static(&self) -> bool {
        !self.any_filtered && self.accessors.iter().all(|a| matches!(a.source, Source::File { .. } | Source::Buffer { .. }))
    }

    /// A mapper of the same files and buffers (their bytes shared, not
    /// copied) with the same cache sizes and a cache of its own, for a
    /// parallel decode thread. None when a callback is mapped (a client's
    /// callback must see its reads in the order of a serial decode) or
    /// memory is selected by execution context.
    pub fn share_static(&self) -> Option<MemMapper> {
        // memory selected by the decoders' execution context: the context
        // a segment's decoder starts in is not the serial decoder's there
        if self.any_filtered {
            return None;
        }
        let mut accessors = Vec::with_capacity(self.accessors.len());
        for a in &self.accessors {
            let source = match &a.source {
                Source::File { path, data, offset } => Source::File { path: path.clone(), data: data.clone(), offset: *offset },
                Source::Buffer { data } => Source::Buffer { data: data.clone() },
                Source::Callback { .. } | Source::CallbackHoles { .. } => return None,
            };
            accessors.push(Accessor { start: a.start, end: a.end, space: a.space, source });
        }
        Some(MemMapper {
            accessors,
            meta: self.meta.clone(),
            curr: None,
            cache: self.cache.as_ref().map(|c| MemCache::new(c.sizes)),
            sizes: self.sizes,
            epoch: 0,
            static_only: self.static_only,
            any_filtered: false,
            contexts: self.contexts.iter().map(|_| MemContext::default()).collect(),
            cb_tokens: vec![0; 256],
            searched_miss: None,
            holes: Holes::default(),
            serials: UidBlock::default(),
            queue: None,
            warn: self.warn.clone(),
        })
    }

    /// The cache sizes in use (None: caching off).
    pub fn cache_sizes(&self) -> Option<CacheSizes> {
        self.cache.as_ref().map(|c| c.sizes)
    }

    /// After any change of the accessors.
    fn mapping_changed(&mut self) {
        self.holes = Holes::default();
        let any_cb = self.accessors.iter().any(|a| matches!(a.source, Source::Callback { .. } | Source::CallbackHoles { .. }));
        // accessors for disjoint contexts never answer the same read
        let overlap = self.accessors.iter().enumerate().any(|(i, a)| {
            self.accessors[i + 1..]
                .iter()
                .zip(&self.meta[i + 1..])
                .any(|(b, mb)| a.start <= b.end && b.start <= a.end && !self.meta[i].filter.disjoint(&mb.filter))
        });
        self.static_only = !any_cb && !overlap;
        self.any_filtered = self.meta.iter().any(|m| !m.filter.is_any());
    }

    /// From now on the callbacks may answer `trace_id`'s reads with other
    /// bytes than before: the pages it loads next get a new token.
    ///
    /// A callback page's token names the bytes the callbacks give while
    /// nothing happens after which OpenCSD would not reuse them either: a
    /// page reloaded later gets the same token as long as the trace ID's
    /// pages were not dropped (a context change, a move to another
    /// accessor, caching switched or resized, accessors added or removed)
    /// and its client was shown no new context (perf answers from the
    /// process image of the last `PE_CONTEXT` element it saw). So
    /// instruction walks decoded from one page are replayed from a page
    /// loaded again, as from file memory.
    fn new_callback_bytes(&mut self, trace_id: u8) {
        self.cb_tokens[trace_id as usize] = 0;
    }

    fn new_callback_bytes_all(&mut self) {
        self.cb_tokens.iter_mut().for_each(|t| *t = 0);
    }

    /// Whether accessor `j` answers a read at `addr` in `space` by the
    /// source `trace_id` (in its current context).
    #[inline]
    fn fits(&self, j: usize, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8) -> bool {
        self.accessors[j].covers(addr, space) && (!self.any_filtered || self.meta[j].filter.matches(&self.contexts[trace_id as usize]))
    }

    /// The context the mapper has for `trace_id`'s decoder.
    pub fn context(&self, trace_id: u8) -> MemContext {
        self.contexts[trace_id as usize]
    }

    fn invalidate_all(&mut self) {
        self.holes = Holes::default();
        self.new_callback_bytes_all();
        if let Some(c) = &mut self.cache {
            c.invalidate_all();
        }
    }

    pub fn is_empty(&self) -> bool {
        self.accessors.is_empty()
    }

    /// Add an accessor; `OCSD_ERR_MEM_ACC_OVERLAP` if its range overlaps
    /// one already mapped in an intersecting memory space.
    pub fn add(&mut self, acc: Accessor) -> Result<(), ocsd_err_t> {
        self.add_for_context(acc, ContextFilter::ANY)
    }

    /// Add an accessor that serves only sources in the contexts `filter`
    /// selects (a process image for its context ID, kernel or hypervisor
    /// images by memory space). Accessors whose contexts are disjoint may
    /// map the same addresses; otherwise as [`MemMapper::add`].
    pub fn add_for_context(&mut self, acc: Accessor, filter: ContextFilter) -> Result<(), ocsd_err_t> {
        self.epoch += 1;
        if acc.end < acc.start {
            return Err(OCSD_ERR_MEM_ACC_RANGE_INVALID);
        }
        if self.accessors.iter().zip(&self.meta).any(|(a, m)| a.overlaps(&acc) && !m.filter.disjoint(&filter)) {
            return Err(OCSD_ERR_MEM_ACC_OVERLAP);
        }
        // the regions of one file are one accessor, as in OpenCSD
        let same_file = match &acc.source {
            Source::File { path, .. } => self
                .accessors
                .iter()
                .zip(&self.meta)
                .find(|(a, _)| matches!(&a.source, Source::File { path: p, .. } if p == path))
                .map(|(_, m)| m.group),
            _ => None,
        };
        self.push_group(same_file.unwrap_or_else(next_uid), vec![acc], filter);
        Ok(())
    }

    /// Remove the accessor starting at `start` in memory space `space`.
    pub fn remove(&mut self, start: ocsd_vaddr_t, space: ocsd_mem_space_acc_t) -> Result<(), ocsd_err_t> {
        self.epoch += 1;
        match self.accessors.iter().position(|a| a.start == start && a.space == space) {
            Some(i) => {
                self.accessors.remove(i);
                self.meta.remove(i);
                self.curr = None;
                self.invalidate_all();
                self.mapping_changed();
                Ok(())
            }
            None => Err(OCSD_ERR_INVALID_PARAM_VAL),
        }
    }

    pub fn clear(&mut self) {
        self.epoch += 1;
        self.accessors.clear();
        self.meta.clear();
        self.curr = None;
        self.invalidate_all();
        self.mapping_changed();
    }

    /// The accessor for a read (OpenCSD's `readFromCurrent`, else
    /// `findAccessor`): moving to another accessor drops the trace ID's
    /// cached pages.
    #[inline]
    fn lookup(&mut self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8) -> Option<usize> {
        if let Some(c) = self.curr {
            if self.fits(c, addr, space, trace_id) {
                return Some(c);
            }
            let g = self.meta[c].group;
            if let Some(j) = (0..self.accessors.len()).find(|&j| self.meta[j].group == g && self.fits(j, addr, space, trace_id)) {
                self.curr = Some(j);
                return Some(j);
            }
        }
        let j = (0..self.accessors.len()).find(|&j| self.fits(j, addr, space, trace_id))?;
        self.curr = Some(j);
        if let (Some(c), false) = (&mut self.cache, self.static_only) {
            c.invalidate_id(trace_id);
            self.cb_tokens[trace_id as usize] = 0;
        }
        Some(j)
    }

    /// Load a page at `addr` from accessor `acc` (a cache miss). Returns
    /// the page's index.
    fn load_page(&mut self, acc: usize, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8) -> Result<usize, ocsd_err_t> {
        let uid = self.meta[acc].uid;
        let Some(c) = self.cache.as_mut() else { return Err(OCSD_ERR_NOT_INIT) };
        let ps = c.sizes.page_size;
        let i = c.take_new_page();
        let a = &mut self.accessors[acc];
        let (n, data, token) = match a.static_avail(addr) {
            Some(avail) => (avail.min(ps), PageData::Static(acc), uid),
            None => {
                let n = a.read(addr, space, trace_id, c.page_buf(i))?;
                let t = &mut self.cb_tokens[trace_id as usize];
                if *t == 0 {
                    *t = next_uid();
                }
                (n, PageData::Owned, *t)
            }
        };
        c.unindex(i);
        let p = &mut c.pages[i];
        if n > ps {
            p.valid_len = 0;
            self.warn(OCSD_ERR_MEM_ACC_BAD_LEN, "Mem Acc: Cache access error");
            return Err(OCSD_ERR_MEM_ACC_BAD_LEN);
        }
        p.valid_len = n;
        if n > 0 {
            p.st_addr = addr;
            p.trace_id = trace_id;
            p.data = data;
            p.token = token;
            p.serial = self.serials.take();
            c.reindex(i);
            c.use_mru(1);
        }
        Ok(i)
    }

    /// One read of `req` bytes as OpenCSD's `ReadTargetMemory` makes it:
    /// where it is served from, and the bytes it gets (0 or `req`, or for
    /// direct reads what the accessor gave).
    ///
    /// While only files and buffers are mapped, none overlapping, a cached
    /// read gets the accessor's bytes when they reach to the end of the
    /// request and nothing otherwise, whatever pages the cache holds (a
    /// page is loaded from the read's address, and one holding the request
    /// holds the accessor's bytes): such reads are served straight from
    /// the accessor, with the same result.
    #[inline]
    fn serve(&mut self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8, req: usize, out: &mut [u8]) -> Result<Option<(Serve, usize)>, ocsd_err_t> {
        self.apply_queued();
        self.epoch += 1;
        let Some(acc) = self.lookup(addr, space, trace_id) else { return Ok(None) };
        let cached = matches!(&self.cache, Some(c) if req <= c.sizes.page_size);
        if self.static_only {
            let a = &self.accessors[acc];
            let avail = a.static_avail(addr).unwrap_or(0);
            let got = if !cached { req.min(avail) } else if avail >= req { req } else { 0 };
            a.static_copy(addr, &mut out[..got])?;
            return Ok(Some((Serve::Direct(acc), got)));
        }
        if !cached {
            let got = if matches!(self.accessors[acc].source, Source::CallbackHoles { .. }) {
                if self.in_kept_hole(acc, addr, space, trace_id) {
                    return Ok(Some((Serve::Direct(acc), 0)));
                }
                let (got, hole) = self.accessors[acc].read_hole(addr, space, trace_id, &mut out[..req])?;
                if let Some(mut h) = hole {
                    h.acc = acc;
                    self.holes.add(h);
                }
                got
            } else {
                self.accessors[acc].read(addr, space, trace_id, &mut out[..req])?
            };
            if got > req {
                self.warn(OCSD_ERR_MEM_ACC_BAD_LEN, "Mem acc: bad return length");
                return Err(OCSD_ERR_MEM_ACC_BAD_LEN);
            }
            return Ok(Some((Serve::Direct(acc), got)));
        }
        let c = self.cache.as_mut().expect("cached");
        let hit = c.find(addr, req, trace_id).then_some(c.mru);
        self.serve_page(acc, addr, space, trace_id, req, hit).map(Some)
    }

    /// Whether accessor `acc` is a callback with holes and a read by
    /// `trace_id` at `addr` in `space` falls in a hole it named, under its
    /// current stamp.
    #[inline]
    fn in_kept_hole(&self, acc: usize, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8) -> bool {
        let Source::CallbackHoles { stamp, .. } = &self.accessors[acc].source else { return false };
        let st = stamp.load(std::sync::atomic::Ordering::Acquire);
        self.holes.holds(acc, addr, space, trace_id, st)
    }

    /// The rest of a cached read of `req` bytes through accessor `acc`
    /// after the page search: a use of page `hit`, or (None) a page loaded.
    #[inline]
    fn serve_page(&mut self, acc: usize, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8, req: usize, hit: Option<usize>) -> Result<(Serve, usize), ocsd_err_t> {
        if let Some(i) = hit {
            self.cache.as_mut().expect("cached").use_mru(1);
            return Ok((Serve::Page(i), req));
        }
        let i = self.load_page(acc, addr, space, trace_id)?;
        let c = self.cache.as_ref().expect("cached");
        if !c.mru_holds(addr, req, trace_id) {
            return Ok((Serve::Page(i), 0));
        }
        Ok((Serve::Page(i), req))
    }

    /// The run of a read of `req` bytes at `addr` served as `serve` says
    /// with `got` bytes (see [`MemAccess::read_run`]).
    fn run_of(&mut self, serve: Serve, got: usize, addr: ocsd_vaddr_t, req: usize, out: &mut [u8]) -> Result<MemRun, ocsd_err_t> {
        let bare = MemRun { got, token: 0, view: None, before: 0, page: None };
        if got < req {
            return Ok(bare);
        }
        // the current accessor answers the reads that follow while they
        // stay inside its range
        let acc = self.curr.expect("a read was served");
        let acc_end = self.accessors[acc].end as u128 + 1;
        match serve {
            Serve::Direct(a) => {
                // every read of a callback is a call; files and buffers
                // give their bytes
                let a_ref = &self.accessors[a];
                let after = a_ref.static_avail(addr).unwrap_or(0);
                Ok(match a_ref.static_view(addr, 0, after) {
                    Some(view) => MemRun { got, token: self.meta[a].uid, view: Some(view), before: 0, page: None },
                    None => bare,
                })
            }
            Serve::Page(i) => {
                self.copy_page(i, addr, &mut out[..req])?;
                let c = self.cache.as_ref().expect("cached");
                let p = &c.pages[i];
                let len = (p.end().min(acc_end).saturating_sub(addr as u128)).min(usize::MAX as u128) as usize;
                if len < req {
                    return Ok(bare);
                }
                // the page also serves the reads before `addr` that stay in
                // the current accessor: the view starts there
                let before = (addr - p.st_addr.max(self.accessors[acc].start)) as usize;
                let view = match p.data {
                    PageData::Owned => {
                        let off = (addr - p.st_addr) as usize - before;
                        MemView { data: ViewData::Whole(c.owned(i).clone()), off, len: len + before }
                    }
                    PageData::Static(a) => match self.accessors[a].static_view(addr, before, len) {
                        Some(v) => v,
                        None => return Ok(bare),
                    },
                };
                Ok(MemRun { got, token: p.token, view: Some(view), before, page: Some(CachePage { index: i as u32, serial: p.serial }) })
            }
        }
    }

    /// Copy page `i`'s bytes `[addr, addr + out.len())` (all inside it).
    fn copy_page(&self, i: usize, addr: ocsd_vaddr_t, out: &mut [u8]) -> Result<(), ocsd_err_t> {
        let c = self.cache.as_ref().expect("cached");
        let p = &c.pages[i];
        match p.data {
            PageData::Owned => {
                let off = (addr - p.st_addr) as usize;
                out.copy_from_slice(&c.owned(i)[off..off + out.len()]);
                Ok(())
            }
            // a static page holds its accessor's bytes
            PageData::Static(a) => self.accessors[a].static_copy(addr, out),
        }
    }

    /// One description per accessor as OpenCSD lists them (its
    /// `logMappedRanges`, through `describe_listed`).
    pub fn describe_each(&self) -> Vec<String> {
        let listed: Vec<Listed> = self.accessors.iter().zip(&self.meta).map(|(a, m)| Listed::of(a, m.group)).collect();
        describe_listed(&listed)
    }

    pub fn accessors(&self) -> &[Accessor] {
        &self.accessors
    }

    /// The files mapped, in the order they were added.
    pub fn file_images(&self) -> Vec<FileImage> {
        self.accessors
            .iter()
            .filter_map(|a| match &a.source {
                Source::File { data, offset, .. } => Some(FileImage { start: a.start, end: a.end, space: a.space, data: data.clone(), offset: *offset }),
                _ => None,
            })
            .collect()
    }
}

/// Where page `i`'s serial is in the `known` serials of
/// [`MemAccess::read_known_word`] and [`MemAccess::read_run_known`]: at `i`
/// modulo their number (a power of two, as the decoders keep them: a mask,
/// not a division).
#[inline(always)]
fn known_slot(i: usize, n: usize) -> usize {
    if n.is_power_of_two() {
        i & (n - 1)
    } else {
        i % n
    }
}

impl MemAccess for MemMapper {
    fn read(&mut self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8, buf: &mut [u8]) -> Result<usize, ocsd_err_t> {
        if buf.is_empty() {
            return Ok(0);
        }
        let req = buf.len();
        match self.serve(addr, space, trace_id, req, buf)? {
            Some((Serve::Page(i), n)) if n > 0 => {
                self.copy_page(i, addr, &mut buf[..n])?;
                Ok(n)
            }
            Some((_, n)) => Ok(n),
            None => Ok(0),
        }
    }

    fn read_run(&mut self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8, req: usize, out: &mut [u8]) -> Result<MemRun, ocsd_err_t> {
        let req = req.min(out.len());
        if req == 0 {
            return Ok(MemRun::default());
        }
        let Some((serve, got)) = self.serve(addr, space, trace_id, req, out)? else { return Ok(MemRun::default()) };
        self.run_of(serve, got, addr, req, out)
    }

    /// While the accessor lookup stays on the current accessor (no side
    /// effect), the read is `MemMapper::serve`'s steps for a cached read
    /// without the lookup: the page search, then a use of the page found
    /// or a page loaded; a page found that `known` names gives its bytes
    /// and no view.
    fn read_run_known(&mut self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8, req: usize, out: &mut [u8], uses: u32, known: &[u64]) -> Result<MemRun, ocsd_err_t> {
        let req = req.min(out.len());
        let Some(c) = &mut self.cache else { return self.read_run(addr, space, trace_id, req, out) };
        c.use_mru(uses);
        if self.static_only || req == 0 || req > c.sizes.page_size || known.is_empty() || self.queued() {
            return self.read_run(addr, space, trace_id, req, out);
        }
        let acc = match self.curr {
            Some(a) if self.fits(a, addr, space, trace_id) => a,
            _ => return self.read_run(addr, space, trace_id, req, out),
        };
        let searched_miss = req == 4 && self.searched_miss == Some((self.epoch, addr, trace_id));
        self.epoch += 1;
        let c = self.cache.as_mut().expect("cached");
        let hit = if searched_miss { None } else { c.find(addr, req, trace_id).then_some(c.mru) };
        if let Some(i) = hit {
            let serial = c.pages[i].serial;
            if known[known_slot(i, known.len())] == serial {
                c.use_mru(1);
                let token = c.pages[i].token;
                self.copy_page(i, addr, &mut out[..req])?;
                return Ok(MemRun { got: req, token, view: None, before: 0, page: Some(CachePage { index: i as u32, serial }) });
            }
        }
        let (serve, got) = self.serve_page(acc, addr, space, trace_id, req, hit)?;
        self.run_of(serve, got, addr, req, out)
    }

    /// [`MemAccess::read_run_known`]'s read of a known page, without its
    /// run: while the lookup stays on the current accessor, the page
    /// search finds a page `known` names; the uses, then the read's use of
    /// that page, are counted as there.
    #[inline]
    fn read_known_word(&mut self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8, uses: u32, known: &[u64]) -> Option<(CachePage, [u8; 4], Option<u64>)> {
        if self.cache.is_none() || self.static_only || known.is_empty() || self.queued() {
            return None;
        }
        match self.curr {
            Some(a) if self.fits(a, addr, space, trace_id) => {}
            _ => return None,
        }
        let c = self.cache.as_mut()?;
        let old = c.mru;
        // a miss leaves `mru` where it was
        if !c.find(addr, 4, trace_id) {
            self.searched_miss = Some((self.epoch, addr, trace_id));
            return None;
        }
        let i = c.mru;
        let p = &c.pages[i];
        let serial = p.serial;
        if known[known_slot(i, known.len())] != serial {
            c.mru = old;
            return None;
        }
        let off = (addr - p.st_addr) as usize;
        let mut word = [0u8; 4];
        let ok = match p.data {
            PageData::Owned => match c.owned(i).get(off..off + 4) {
                Some(w) => {
                    word.copy_from_slice(w);
                    true
                }
                None => false,
            },
            // (a file that fails is read again, and fails, as a run)
            PageData::Static(a) => off + 4 <= p.valid_len && self.accessors[a].static_copy(addr, &mut word).is_ok(),
        };
        if !ok {
            c.mru = old;
            return None;
        }
        // the uses were of the page current before the search
        c.mru = old;
        c.use_mru(uses);
        c.mru = i;
        c.use_mru(1);
        self.epoch += 1;
        Some((CachePage { index: i as u32, serial }, word, Some(self.seen_epoch())))
    }

    /// As `MemMapper::serve` takes an uncached read in a hole a callback
    /// named: the epoch moves, the lookup stays on the current accessor.
    #[inline]
    fn hole_known(&mut self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8) -> bool {
        if self.cache.is_some() || addr > u64::MAX - 3 || self.queued() {
            return false;
        }
        let Some(acc) = self.curr else { return false };
        if !self.fits(acc, addr, space, trace_id) || !self.in_kept_hole(acc, addr, space, trace_id) {
            return false;
        }
        self.epoch += 1;
        true
    }

    fn run_uses(&mut self, n: u32) {
        if let Some(c) = &mut self.cache {
            c.use_mru(n);
        }
    }

    fn epoch(&self) -> Option<u64> {
        Some(self.seen_epoch())
    }

    fn context_shown(&mut self, trace_id: u8) {
        self.new_callback_bytes(trace_id);
    }

    fn invalidate_cache(&mut self, trace_id: u8) {
        self.epoch += 1;
        self.new_callback_bytes(trace_id);
        if let Some(c) = &mut self.cache {
            c.invalidate_id(trace_id);
        }
    }

    /// Only when images for selected contexts are mapped does a change of
    /// context drop the trace ID's cached pages (and the decoders' views,
    /// through the epoch): without them, as with the C API, nothing
    /// changes.
    fn update_context(&mut self, trace_id: u8, ctx: MemContext) {
        self.new_callback_bytes(trace_id);
        if self.contexts[trace_id as usize].merge(ctx) && self.any_filtered {
            self.epoch += 1;
            if let Some(c) = &mut self.cache {
                c.invalidate_id(trace_id);
            }
        }
    }

    /// Read straight from the accessor that serves context `ctx` (no
    /// cache, the decoders' state untouched); the usual read when no
    /// accessor is selected by context.
    fn read_in_context(&mut self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, trace_id: u8, ctx: &MemContext, buf: &mut [u8]) -> Result<usize, ocsd_err_t> {
        self.apply_queued();
        if !self.any_filtered {
            return self.read(addr, space, trace_id, buf);
        }
        if buf.is_empty() {
            return Ok(0);
        }
        let Some(j) = (0..self.accessors.len()).find(|&j| self.accessors[j].covers(addr, space) && self.meta[j].filter.matches(ctx)) else {
            return Ok(0);
        };
        self.epoch += 1;
        let got = self.accessors[j].read(addr, space, trace_id, buf)?;
        if got > buf.len() {
            return Err(OCSD_ERR_MEM_ACC_BAD_LEN);
        }
        Ok(got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_serials_are_unique_and_never_zero() {
        let (mut a, mut b) = (UidBlock::default(), UidBlock::default());
        let mut seen = std::collections::HashSet::new();
        // (more than a block each, taken in turn with other uids)
        for _ in 0..2 * UidBlock::SIZE {
            assert!(seen.insert(a.take()));
            assert!(seen.insert(b.take()));
            assert!(seen.insert(next_uid()));
        }
        assert!(!seen.contains(&0));
    }

    fn buf_acc(start: u64, data: Vec<u8>, space: ocsd_mem_space_acc_t) -> Accessor {
        Accessor { start, end: start + data.len() as u64 - 1, space, source: Source::Buffer { data: Arc::new(data) } }
    }

    fn cached() -> MemMapper {
        MemMapper::with_cache(Some(CacheSizes::default()))
    }

    #[test]
    #[allow(non_upper_case_globals)]
    fn mem_spaces_by_security_state_and_el() {
        let want = |sl, el| match (sl, el) {
            (ocsd_sec_root, _) => OCSD_MEM_SPACE_ROOT,
            (ocsd_sec_realm, 0 | 1) => OCSD_MEM_SPACE_EL1R,
            (ocsd_sec_realm, 2) => OCSD_MEM_SPACE_EL2R,
            (ocsd_sec_realm, _) => OCSD_MEM_SPACE_ROOT,
            (ocsd_sec_nonsecure, 0 | 1) => OCSD_MEM_SPACE_EL1N,
            (ocsd_sec_nonsecure, 2) => OCSD_MEM_SPACE_EL2,
            (ocsd_sec_nonsecure, _) => OCSD_MEM_SPACE_EL3,
            (_, 0 | 1) => OCSD_MEM_SPACE_EL1S,
            (_, 2) => OCSD_MEM_SPACE_EL2S,
            _ => OCSD_MEM_SPACE_EL3,
        };
        for sl in -1..6 {
            for el in 0..8 {
                assert_eq!(mem_space_for_el(sl, el), want(sl, el & 3), "{sl} {el}");
            }
        }
    }

    #[test]
    fn reads_within_and_across_end() {
        for (mut m, across_end) in [(cached(), 0), (MemMapper::with_cache(None), 2)] {
            m.add(buf_acc(0x1000, vec![1, 2, 3, 4, 5, 6], OCSD_MEM_SPACE_ANY)).unwrap();
            let mut b = [0u8; 4];
            assert_eq!(m.read(0x1000, OCSD_MEM_SPACE_EL1N, 0, &mut b), Ok(4));
            assert_eq!(b, [1, 2, 3, 4]);
            // through the cache a read the page cannot hold in full gets nothing
            assert_eq!(m.read(0x1004, OCSD_MEM_SPACE_EL1N, 0, &mut b), Ok(across_end));
            assert_eq!(m.read(0x2000, OCSD_MEM_SPACE_EL1N, 0, &mut b), Ok(0));
            assert_eq!(m.read(u64::MAX, OCSD_MEM_SPACE_EL1N, 0, &mut b), Ok(0));
        }
    }

    use std::sync::{Arc as StdArc, Mutex};

    /// A callback over the whole address space answering from one of two
    /// "process images" (byte = address + image), logging its calls.
    fn perf_like(m: &mut MemMapper) -> (StdArc<Mutex<Vec<(u64, usize, u8)>>>, StdArc<Mutex<u8>>) {
        let calls = StdArc::new(Mutex::new(Vec::new()));
        let image = StdArc::new(Mutex::new(0u8));
        let (c, i) = (calls.clone(), image.clone());
        m.add(Accessor {
            start: 0,
            end: u64::MAX,
            space: OCSD_MEM_SPACE_ANY,
            source: Source::Callback {
                read: Box::new(move |a, _, id, b| {
                    c.lock().unwrap().push((a, b.len(), id));
                    let img = *i.lock().unwrap();
                    for (k, x) in b.iter_mut().enumerate() {
                        *x = (a as u8).wrapping_add(k as u8).wrapping_add(img);
                    }
                    b.len()
                }),
            },
        })
        .unwrap();
        (calls, image)
    }

    #[test]
    fn callback_pages_as_opencsd_loads_them() {
        let mut m = cached();
        let (calls, image) = perf_like(&mut m);
        let mut b = [0u8; 4];
        let sp = OCSD_MEM_SPACE_EL1N;
        assert_eq!(m.read(0x1000, sp, 0x10, &mut b), Ok(4));
        // the rest of the 2 KiB page is served without calls
        for a in (0x1004..0x1800).step_by(4) {
            assert_eq!(m.read(a, sp, 0x10, &mut b), Ok(4));
        }
        // a read straddling the page end loads a page at its own address
        assert_eq!(m.read(0x17fe, sp, 0x10, &mut b), Ok(4));
        // another trace ID has its own pages
        assert_eq!(m.read(0x1000, sp, 0x11, &mut b), Ok(4));
        assert_eq!(*calls.lock().unwrap(), vec![(0x1000, 2048, 0x10), (0x17fe, 2048, 0x10), (0x1000, 2048, 0x11)]);

        // a new process image: cached pages still answer, as in OpenCSD,
        // until the trace ID's decoder sees a context change
        *image.lock().unwrap() = 0x80;
        m.read(0x1000, sp, 0x10, &mut b).unwrap();
        assert_eq!(b[0], 0x00);
        m.invalidate_cache(0x10);
        m.read(0x1000, sp, 0x10, &mut b).unwrap();
        assert_eq!(b[0], 0x80);
        m.read(0x1000, sp, 0x11, &mut b).unwrap();
        assert_eq!(b[0], 0x00); // ID 0x11's pages were kept
        assert_eq!(calls.lock().unwrap().len(), 4);
    }

    /// A callback image of `len` bytes at 0x1000, every byte `fill`,
    /// counting its calls.
    fn fill_cb(fill: u8, calls: StdArc<Mutex<u32>>) -> Accessor {
        Accessor {
            start: 0x1000,
            end: 0x1fff,
            space: OCSD_MEM_SPACE_ANY,
            source: Source::Callback {
                read: Box::new(move |_, _, _, b| {
                    *calls.lock().unwrap() += 1;
                    b.fill(fill);
                    b.len()
                }),
            },
        }
    }

    #[test]
    fn can_share_static_says_what_share_static_gives() {
        let both = |m: &MemMapper| (m.can_share_static(), m.share_static().is_some());
        let mut m = cached();
        assert_eq!(both(&m), (true, true));
        m.add(buf_acc(0x4000, vec![1; 16], OCSD_MEM_SPACE_ANY)).unwrap();
        assert_eq!(both(&m), (true, true));
        m.add(fill_cb(0, StdArc::new(Mutex::new(0)))).unwrap();
        assert_eq!(both(&m), (false, false));
        let mut m = cached();
        let filter = ContextFilter { context_id: Some(3), vmid: None };
        m.add_for_context(buf_acc(0x4000, vec![1; 16], OCSD_MEM_SPACE_ANY), filter).unwrap();
        assert_eq!(both(&m), (false, false));
    }

    #[test]
    fn images_per_context_never_serve_another_contexts_bytes() {
        let cf = |id| ContextFilter { context_id: Some(id), vmid: None };
        let ctx = |id| MemContext { context_id: Some(id), vmid: None };
        for caching in [true, false] {
            let mut m = if caching { cached() } else { MemMapper::with_cache(None) };
            let calls = StdArc::new(Mutex::new(0));
            m.add_for_context(fill_cb(0xaa, calls.clone()), cf(1)).unwrap();
            m.add_for_context(fill_cb(0xbb, calls.clone()), cf(2)).unwrap();
            // the same context twice overlaps; any context overlaps every one
            assert_eq!(m.add_for_context(buf_acc(0x1800, vec![0; 4], OCSD_MEM_SPACE_ANY), cf(2)), Err(OCSD_ERR_MEM_ACC_OVERLAP));
            assert_eq!(m.add(buf_acc(0x1800, vec![0; 4], OCSD_MEM_SPACE_ANY)), Err(OCSD_ERR_MEM_ACC_OVERLAP));
            let mut b = [0u8; 4];
            // no context given yet: neither image
            assert_eq!(m.read(0x1000, OCSD_MEM_SPACE_EL1N, 0x10, &mut b), Ok(0));
            // two trace IDs in different contexts, reading in turn
            m.update_context(0x10, ctx(1));
            m.update_context(0x11, ctx(2));
            for _ in 0..3 {
                assert_eq!(m.read(0x1000, OCSD_MEM_SPACE_EL1N, 0x10, &mut b), Ok(4));
                assert_eq!(b, [0xaa; 4]);
                assert_eq!(m.read(0x1004, OCSD_MEM_SPACE_EL1N, 0x11, &mut b), Ok(4));
                assert_eq!(b, [0xbb; 4]);
            }
            // a context change: the ID's cached page of the old image is not served
            m.update_context(0x10, ctx(2));
            assert_eq!(m.read(0x1008, OCSD_MEM_SPACE_EL1N, 0x10, &mut b), Ok(4));
            assert_eq!(b, [0xbb; 4]);
            // an update without a context ID keeps it
            m.update_context(0x10, MemContext::default());
            assert_eq!(m.context(0x10), ctx(2));
            let before = *calls.lock().unwrap();
            assert_eq!(m.read(0x100c, OCSD_MEM_SPACE_EL1N, 0x10, &mut b), Ok(4));
            assert_eq!(b, [0xbb; 4]);
            // served from the page the last read loaded, when caching
            assert_eq!(*calls.lock().unwrap() - before, if caching { 0 } else { 1 });
            // an explicit context, the decoder's left alone
            assert_eq!(m.read_in_context(0x1000, OCSD_MEM_SPACE_EL1N, 0x10, &ctx(1), &mut b), Ok(4));
            assert_eq!(b, [0xaa; 4]);
            assert_eq!(m.read_in_context(0x1000, OCSD_MEM_SPACE_EL1N, 0x10, &ctx(3), &mut b), Ok(0));
            assert_eq!(m.context(0x10).context_id, Some(2));
            m.update_context(0x10, MemContext { context_id: None, vmid: Some(4) });
            assert_eq!(m.context(0x10), MemContext { context_id: Some(2), vmid: Some(4) });
        }
    }

    #[test]
    fn context_updates_change_nothing_without_images_per_context() {
        // as with the C API: the cache keeps its pages across context changes
        let mut m = cached();
        let (calls, _) = perf_like(&mut m);
        let mut b = [0u8; 4];
        m.read(0x1000, OCSD_MEM_SPACE_EL1N, 1, &mut b).unwrap();
        let e = m.epoch;
        m.update_context(1, MemContext { context_id: Some(9), vmid: None });
        assert_eq!(m.epoch, e);
        m.read(0x1004, OCSD_MEM_SPACE_EL1N, 1, &mut b).unwrap();
        assert_eq!(calls.lock().unwrap().len(), 1);
    }

    #[test]
    fn least_recently_used_page_is_replaced() {
        let mut m = MemMapper::with_cache(Some(CacheSizes { page_size: 64, num_pages: 4 }));
        let (calls, _) = perf_like(&mut m);
        let mut b = [0u8; 4];
        for a in [0x000u64, 0x100, 0x200, 0x300] {
            m.read(a, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap();
        }
        m.read(0x000, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap(); // hit: 0x100 is now the oldest
        m.read(0x400, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap(); // replaces 0x100
        m.read(0x000, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap(); // still cached
        m.read(0x100, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap(); // loaded again
        let addrs: Vec<u64> = calls.lock().unwrap().iter().map(|c| c.0).collect();
        assert_eq!(addrs, vec![0x000, 0x100, 0x200, 0x300, 0x400, 0x100]);
    }

    #[test]
    fn caching_sized_and_switched_off() {
        let mut m = cached();
        let (calls, _) = perf_like(&mut m);
        let mut b = [0u8; 4];
        assert_eq!(m.set_caching(true, 32, 16), Err("MemAcc Caching: page size too small"));
        assert_eq!(m.set_caching(true, 20000, 16), Err("MemAcc Caching: page size too large"));
        assert_eq!(m.set_caching(true, 1024, 3), Err("MemAcc Caching: number of pages too small"));
        assert_eq!(m.set_caching(true, 1024, 257), Err("MemAcc Caching: number of pages too large"));
        m.set_caching(true, 1024, 8).unwrap();
        assert_eq!(m.cache_sizes(), Some(CacheSizes { page_size: 1024, num_pages: 8 }));
        m.read(0x1000, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap();
        m.read(0x1004, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap();
        m.set_caching(false, 0, 0).unwrap();
        m.read(0x1000, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap();
        m.read(0x1004, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap();
        // larger than a page: read directly
        m.set_caching(true, 64, 4).unwrap();
        let mut big = [0u8; 100];
        m.read(0x2000, OCSD_MEM_SPACE_ANY, 1, &mut big).unwrap();
        let got: Vec<(u64, usize)> = calls.lock().unwrap().iter().map(|c| (c.0, c.1)).collect();
        assert_eq!(got, vec![(0x1000, 1024), (0x1000, 4), (0x1004, 4), (0x2000, 100)]);
    }

    /// A callback over part of the address space is asked for whole pages
    /// (or whole direct reads) also at the end of its range, and a read
    /// that runs past its end gets the bytes it gave, as OpenCSD's callback
    /// accessor does.
    #[test]
    fn callback_requests_are_not_cut_at_the_range_end() {
        for cached_map in [true, false] {
            let mut m = if cached_map { cached() } else { MemMapper::with_cache(None) };
            let calls = Arc::new(std::sync::Mutex::new(Vec::new()));
            let c2 = calls.clone();
            m.add(Accessor {
                start: 0x1000,
                end: 0x10ff,
                space: OCSD_MEM_SPACE_ANY,
                source: Source::Callback {
                    read: Box::new(move |a, _, _, b| {
                        c2.lock().unwrap().push((a, b.len()));
                        b.iter_mut().enumerate().for_each(|(i, x)| *x = (a as usize + i) as u8);
                        b.len()
                    }),
                },
            })
            .unwrap();
            let mut b = [0u8; 4];
            assert_eq!(m.read(0x10fe, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(4));
            assert_eq!(b, [0xfe, 0xff, 0x00, 0x01]);
            let want = if cached_map { cache::DEFAULT_PAGE_SIZE } else { 4 };
            assert_eq!(*calls.lock().unwrap(), vec![(0x10fe, want)]);
            // past the range: no accessor, no call
            assert_eq!(m.read(0x1100, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(0));
            assert_eq!(calls.lock().unwrap().len(), 1);
        }
    }

    #[test]
    fn moving_to_another_accessor_drops_the_ids_pages() {
        let mut m = cached();
        let (calls, _) = perf_like(&mut m);
        // the callback now covers the low half only; a buffer sits above it
        m.clear();
        let c2 = calls.clone();
        m.add(Accessor {
            start: 0,
            end: 0xffff,
            space: OCSD_MEM_SPACE_ANY,
            source: Source::Callback { read: Box::new(move |a, _, _, b| { c2.lock().unwrap().push((a, b.len(), 0)); b.len() }) },
        })
        .unwrap();
        m.add(buf_acc(0x10000, vec![7; 64], OCSD_MEM_SPACE_ANY)).unwrap();
        let mut b = [0u8; 4];
        m.read(0x100, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap();
        m.read(0x100, OCSD_MEM_SPACE_ANY, 2, &mut b).unwrap();
        m.read(0x10000, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap(); // ID 1 moves: its pages go
        assert_eq!(b, [7; 4]);
        m.read(0x100, OCSD_MEM_SPACE_ANY, 1, &mut b).unwrap(); // moves back: loads again
        m.read(0x100, OCSD_MEM_SPACE_ANY, 2, &mut b).unwrap(); // ID 2 kept its page: the moves were ID 1's
        let n = calls.lock().unwrap().len();
        assert_eq!(n, 3);
    }

    #[test]
    fn runs_and_tokens() {
        let mut m = cached();
        m.add(buf_acc(0x1000, (0..=255).collect(), OCSD_MEM_SPACE_ANY)).unwrap();
        let mut out = [0u8; 4];
        let r1 = m.read_run(0x1010, OCSD_MEM_SPACE_ANY, 1, 4, &mut out).unwrap();
        assert_eq!(out, [0x10, 0x11, 0x12, 0x13]);
        let v = r1.view.clone().unwrap();
        assert_eq!((r1.got, v.len), (4, 0xf0));
        assert_eq!(v.run(0).unwrap()[..5], [0x10, 0x11, 0x12, 0x13, 0x14]);
        let r2 = m.read_run(0x10f0, OCSD_MEM_SPACE_ANY, 1, 4, &mut out).unwrap();
        assert_eq!(r2.view.unwrap().len, 16); // to the end of the buffer
        assert_eq!(r1.token, r2.token); // a buffer's bytes never change
        // callback pages: the view ends with the page
        let mut m = MemMapper::with_cache(Some(CacheSizes { page_size: 64, num_pages: 4 }));
        perf_like(&mut m);
        let a = m.read_run(0x1000, OCSD_MEM_SPACE_ANY, 1, 4, &mut out).unwrap();
        let b = m.read_run(0x1010, OCSD_MEM_SPACE_ANY, 1, 4, &mut out).unwrap();
        assert_eq!(a.token, b.token);
        // the view is the whole page: it starts `before` bytes before the read
        assert_eq!((b.before, b.view.as_ref().unwrap().len), (0x10, 0x40));
        assert_eq!(b.view.as_ref().unwrap().run(0).unwrap()[..0x11], (0..=0x10u8).collect::<Vec<_>>()[..]);
        assert_eq!(a.before, 0);
        // a page loaded again while nothing could change the callback's
        // answers has the token it had; another trace ID's pages have their own
        for p in 1..=4u64 {
            m.read_run(0x1000 + 0x100 * p, OCSD_MEM_SPACE_ANY, 1, 4, &mut out).unwrap();
        }
        let again = m.read_run(0x1000, OCSD_MEM_SPACE_ANY, 1, 4, &mut out).unwrap();
        assert_eq!(again.token, a.token);
        let other = m.read_run(0x1000, OCSD_MEM_SPACE_ANY, 2, 4, &mut out).unwrap();
        assert_ne!(other.token, a.token);
        // once the client was shown a new context, pages loaded next have a
        // new token; cached pages keep theirs
        m.context_shown(1);
        let kept = m.read_run(0x1004, OCSD_MEM_SPACE_ANY, 1, 4, &mut out).unwrap();
        assert_eq!(kept.token, a.token);
        let fresh = m.read_run(0x3000, OCSD_MEM_SPACE_ANY, 1, 4, &mut out).unwrap();
        assert_ne!(fresh.token, a.token);
        assert_eq!(m.read_run(0x2000, OCSD_MEM_SPACE_ANY, 2, 4, &mut out).unwrap().token, other.token);
        m.invalidate_cache(1);
        let c = m.read_run(0x1010, OCSD_MEM_SPACE_ANY, 1, 4, &mut out).unwrap();
        assert_ne!(a.token, c.token);
        assert_ne!(fresh.token, c.token);
        // a page still viewed is loaded into a new buffer: the view keeps its bytes
        drop(c);
        // uncached callbacks vouch for nothing past the read
        m.set_caching(false, 0, 0).unwrap();
        let d = m.read_run(0x1010, OCSD_MEM_SPACE_ANY, 1, 4, &mut out).unwrap();
        assert_eq!((d.got, d.token), (4, 0));
        assert!(d.view.is_none());
    }

    #[test]
    fn reads_from_known_pages_are_reads_from_them() {
        // A reads through runs, told which pages it holds views of; B
        // makes every read: the callbacks must see the same calls, the LRU
        // the same uses
        let sizes = Some(CacheSizes { page_size: 64, num_pages: 4 });
        let (mut a, mut b) = (MemMapper::with_cache(sizes), MemMapper::with_cache(sizes));
        let (calls_a, _) = perf_like(&mut a);
        let (calls_b, _) = perf_like(&mut b);
        let sp = OCSD_MEM_SPACE_EL1N;
        let mut out = [0u8; 4];
        let reads = |m: &mut MemMapper, id: u8, at: u64, n: u64| {
            let mut o = [0u8; 4];
            for k in 0..n {
                m.read(at + 4 * k, sp, id, &mut o).unwrap();
            }
        };
        let mut known = [0u64; 4];
        let note = |k: &mut [u64; 4], r: &MemRun| {
            assert!(r.view.is_some(), "a new page view");
            let p = r.page.expect("a cache page");
            k[p.index as usize % 4] = p.serial;
        };
        let r1 = a.read_run_known(0x1000, sp, 1, 4, &mut out, 0, &known).unwrap();
        note(&mut known, &r1);
        reads(&mut b, 1, 0x1000, 4);
        // 3 more reads of the first page, then a second page
        let r2 = a.read_run_known(0x2000, sp, 1, 4, &mut out, 3, &known).unwrap();
        note(&mut known, &r2);
        reads(&mut b, 1, 0x2000, 3);
        // back to the first page: named, no new view, its bytes given
        out = [0; 4];
        let back = a.read_run_known(0x1008, sp, 1, 4, &mut out, 2, &known).unwrap();
        assert!(back.view.is_none());
        assert_eq!(back.page, r1.page);
        assert_eq!((back.got, back.token, out), (4, r1.token, [8, 9, 10, 11]));
        reads(&mut b, 1, 0x1008, 1);
        // three more pages: the one at 0x2000 is now the oldest and goes
        for at in [0x3000, 0x4000, 0x5000] {
            let r = a.read_run_known(at, sp, 1, 4, &mut out, 0, &known).unwrap();
            note(&mut known, &r);
            reads(&mut b, 1, at, 1);
        }
        let r = a.read_run_known(0x2004, sp, 1, 4, &mut out, 0, &known).unwrap();
        note(&mut known, &r);
        reads(&mut b, 1, 0x2004, 1);
        // another trace ID has its own pages; a read the page cannot hold
        // in full loads one
        let r = a.read_run_known(0x1008, sp, 2, 4, &mut out, 0, &known).unwrap();
        assert!(r.view.is_some());
        reads(&mut b, 2, 0x1008, 1);
        let r = a.read_run_known(0x103e, sp, 1, 4, &mut out, 0, &known).unwrap();
        note(&mut known, &r);
        reads(&mut b, 1, 0x103e, 1);
        // without a known list: a plain run
        let r = a.read_run_known(0x1040, sp, 1, 4, &mut out, 1, &[]).unwrap();
        assert!(r.view.is_some());
        reads(&mut b, 1, 0x103e, 1);
        reads(&mut b, 1, 0x1040, 1);
        assert_eq!(calls_a.lock().unwrap().len(), calls_b.lock().unwrap().len());
        // plain reads after them find the same pages
        for at in [0x1000u64, 0x1030, 0x3000, 0x5000, 0x6000, 0x2000, 0x4000] {
            a.read(at, sp, 1, &mut out).unwrap();
            reads(&mut b, 1, at, 1);
        }
        assert_eq!(*calls_a.lock().unwrap(), *calls_b.lock().unwrap());
    }

    /// Reads made as the decoders' memory window makes them (a known
    /// page's read through `read_known_word`, others through
    /// `read_run_known`, uses of the current page reported with the next
    /// read) call the callbacks and leave the cache as plain reads do.
    #[test]
    fn known_word_reads_are_plain_reads() {
        let mut rnd = crate::common::xorshift64(0x9e37_79b9_7f4a_7c15);
        let sp = OCSD_MEM_SPACE_EL1N;
        for sizes in [CacheSizes { page_size: 64, num_pages: 4 }, CacheSizes { page_size: 128, num_pages: 7 }] {
            let (mut a, mut b) = (MemMapper::with_cache(Some(sizes)), MemMapper::with_cache(Some(sizes)));
            let (calls_a, _) = perf_like(&mut a);
            let (calls_b, _) = perf_like(&mut b);
            let mut known = vec![0u64; 4];
            let (mut known_hits, mut last) = (0, None);
            for step in 0..5000 {
                let id = 1 + (rnd() % 2) as u8;
                let at = 0x1000 + 2 * (rnd() % 400);
                let uses = if last.is_some() { (rnd() % 3) as u32 } else { 0 };
                if step % 500 == 499 {
                    a.invalidate_cache(id);
                    b.invalidate_cache(id);
                    last = None;
                    continue;
                }
                // the uses: reads again at the last read's address
                if let Some((l_at, l_id)) = last {
                    for _ in 0..uses {
                        b.read(l_at, sp, l_id, &mut [0u8; 4]).unwrap();
                    }
                }
                let uses = if last.is_some() { uses } else { 0 };
                let mut want = [0u8; 4];
                let n = b.read(at, sp, id, &mut want).unwrap();
                let got = match a.read_known_word(at, sp, id, uses, &known) {
                    Some((p, w, epoch)) => {
                        known_hits += 1;
                        assert_eq!(epoch, a.epoch());
                        assert_eq!(known[p.index as usize % known.len()], p.serial);
                        w
                    }
                    None => {
                        let mut o = [0u8; 4];
                        let r = a.read_run_known(at, sp, id, 4, &mut o, uses, &known).unwrap();
                        if let (Some(p), Some(_)) = (r.page, &r.view) {
                            let k = p.index as usize % known.len();
                            known[k] = p.serial;
                        }
                        assert_eq!(r.got, n, "step {step}");
                        o
                    }
                };
                assert_eq!(got, want, "step {step}");
                last = (n == 4).then_some((at, id));
                let (ca, cb) = (a.cache.as_ref().unwrap(), b.cache.as_ref().unwrap());
                assert_eq!(ca.mru, cb.mru, "step {step}");
                for (pa, pb) in ca.pages.iter().zip(&cb.pages) {
                    assert_eq!((pa.st_addr, pa.valid_len, pa.trace_id, pa.use_seq), (pb.st_addr, pb.valid_len, pb.trace_id, pb.use_seq), "step {step}");
                }
            }
            assert_eq!(*calls_a.lock().unwrap(), *calls_b.lock().unwrap());
            assert!(known_hits > 500, "{known_hits} reads of known pages");
        }
    }

    #[test]
    fn holes_a_callback_names_are_read_without_calls_while_its_stamp_stays() {
        use std::sync::atomic::{AtomicU64, Ordering};
        let calls = StdArc::new(Mutex::new(Vec::new()));
        let stamp = Arc::new(AtomicU64::new(0));
        let c = calls.clone();
        // bytes (0xAB) at [0x1000, 0x2000); holes [0, 0xfff] and [0x2000, 0xffff]
        let read: ReadHoleFn = Box::new(move |addr, _, id, b: &mut [u8]| {
            c.lock().unwrap().push((addr, id));
            if (0x1000..0x2000).contains(&addr) {
                let n = b.len().min((0x2000 - addr) as usize);
                b[..n].fill(0xAB);
                (n, None)
            } else if addr < 0x1000 {
                (0, Some((0, 0xfff)))
            } else {
                (0, Some((0x2000, u64::MAX)))
            }
        });
        let mut m = MemMapper::with_cache(None);
        m.add(Accessor { start: 0, end: 0xffff, space: OCSD_MEM_SPACE_ANY, source: Source::CallbackHoles { read, stamp: stamp.clone() } }).unwrap();
        let mut b = [0u8; 4];
        let n_calls = |c: &StdArc<Mutex<Vec<(u64, u8)>>>| c.lock().unwrap().len();
        assert_eq!(m.read(0x10, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(0));
        assert_eq!(m.read(0x3000, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(0));
        assert_eq!(n_calls(&calls), 2);
        // both holes kept: no calls for reads inside them
        assert_eq!(m.read(0x800, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(0));
        assert_eq!(m.read(0xfff0, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(0));
        assert_eq!(n_calls(&calls), 2);
        // the decoder's shortcut for a read in a kept hole: the same
        // effects (the epoch moves), nothing outside one
        let e = m.epoch();
        assert!(m.hole_known(0x900, OCSD_MEM_SPACE_ANY, 1));
        assert_ne!(m.epoch(), e);
        assert!(!m.hole_known(0x1000, OCSD_MEM_SPACE_ANY, 1));
        assert!(!m.hole_known(0x900, OCSD_MEM_SPACE_ANY, 2));
        assert_eq!(n_calls(&calls), 2);
        // bytes are always asked for
        assert_eq!(m.read(0x1000, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(4));
        assert_eq!(b, [0xAB; 4]);
        assert_eq!(n_calls(&calls), 3);
        // another trace ID, another memory space: asked
        assert_eq!(m.read(0x800, OCSD_MEM_SPACE_ANY, 2, &mut b), Ok(0));
        assert_eq!(m.read(0x800, OCSD_MEM_SPACE_EL1N, 1, &mut b), Ok(0));
        assert_eq!(n_calls(&calls), 5);
        // the stamp changed: the holes no longer hold
        stamp.fetch_add(1, Ordering::Relaxed);
        assert!(!m.hole_known(0x800, OCSD_MEM_SPACE_ANY, 1));
        assert_eq!(m.read(0x800, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(0));
        assert_eq!(n_calls(&calls), 6);
        assert_eq!(m.read(0x804, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(0));
        assert_eq!(n_calls(&calls), 6);
        // a change of the accessors drops them
        m.add(buf_acc(0x20000, vec![1, 2, 3, 4], OCSD_MEM_SPACE_ANY)).unwrap();
        assert_eq!(m.read(0x808, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(0));
        assert_eq!(n_calls(&calls), 7);
        // cached reads call as OpenCSD does (a page load per miss)
        let mut m2 = cached();
        let c2 = StdArc::new(Mutex::new(0u32));
        let c = c2.clone();
        let read: ReadHoleFn = Box::new(move |_, _, _, _| {
            *c.lock().unwrap() += 1;
            (0, Some((0, u64::MAX)))
        });
        m2.add(Accessor { start: 0, end: 0xffff, space: OCSD_MEM_SPACE_ANY, source: Source::CallbackHoles { read, stamp } }).unwrap();
        assert_eq!(m2.read(0x10, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(0));
        assert_eq!(m2.read(0x10, OCSD_MEM_SPACE_ANY, 1, &mut b), Ok(0));
        assert_eq!(*c2.lock().unwrap(), 2);
    }

    #[test]
    fn callback_answering_too_much_is_an_error() {
        let mut m = cached();
        m.add(Accessor { start: 0, end: 0xffff, space: OCSD_MEM_SPACE_ANY, source: Source::Callback { read: Box::new(|_, _, _, b| b.len() + 1) } })
            .unwrap();
        let warned = Arc::new(std::sync::Mutex::new(Vec::new()));
        let w2 = warned.clone();
        m.set_warn(Some(Arc::new(move |e, msg: &str| w2.lock().unwrap().push((e, msg.to_string())))));
        let mut b = [0u8; 4];
        assert_eq!(m.read(0x100, OCSD_MEM_SPACE_ANY, 1, &mut b), Err(OCSD_ERR_MEM_ACC_BAD_LEN));
        m.set_caching(false, 0, 0).unwrap();
        assert_eq!(m.read(0x100, OCSD_MEM_SPACE_ANY, 1, &mut b), Err(OCSD_ERR_MEM_ACC_BAD_LEN));
        // each warned as OpenCSD's mapper does, by the path the read took
        let want = [(OCSD_ERR_MEM_ACC_BAD_LEN, "Mem Acc: Cache access error".to_string()), (OCSD_ERR_MEM_ACC_BAD_LEN, "Mem acc: bad return length".to_string())];
        assert_eq!(*warned.lock().unwrap(), want);
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
            source: Source::File { path: "m.bin".into(), data: data.clone().into(), offset },
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
