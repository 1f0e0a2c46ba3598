//! OpenCSD's file accessor objects, as its C API and snapshot reader use
//! them.
//!
//! OpenCSD 1.8.0 keeps one accessor object per file path. It is made by
//! the first `ocsd_dt_add_binfile_mem_acc` / `_region_mem_acc` of the path
//! (or the snapshot reader's first dump of the file) and answers from its
//! base range (file offset 0) and from regions at other file offsets. Its
//! rules decide which calls succeed and which ranges get mapped:
//!
//! - a later add of the same path must start at the start of one of the
//!   object's ranges (`OCSD_ERR_MEM_ACC_FILE_DIFF_RANGE` otherwise), and
//!   then works on the same object: its further regions and its memory
//!   space are applied to it even when the add then fails;
//! - a range is added to the object only when neither its first nor its
//!   last address is in a range it has, and only one range may start at
//!   offset 0; adding a region stretches the base range up to the first
//!   region's file offset;
//! - the object outlives its removal from the mapper (the tree keeps it):
//!   a later add of the path finds it, with its ranges.
//!
//! [`OcsdFile`] is that object's state. [`AccList`] holds OpenCSD's
//! accessor list of one tree and decides each change by those rules, as
//! [`MapOp`]s that a [`MemMapper`] carries out. The objects live in a
//! registry ([`OcsdFiles`]): the C API's trees share the process-wide one,
//! as OpenCSD's do (a file mapped by one tree is found by the others, at
//! the same place only, and a change one tree makes to it reaches every
//! tree mapping it); the snapshot reader's tree has its own.

use std::collections::HashMap;
use std::path::Path;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use once_cell::sync::Lazy;

use super::{describe_listed, next_uid, AccMeta, Accessor, ContextFilter, FileBytes, Listed, ListedKind, MemMapper, Source};
use crate::abi::*;

/// One range: first and last address (inclusive) and the file offset of
/// the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileRange {
    pub start: ocsd_vaddr_t,
    pub end: ocsd_vaddr_t,
    pub offset: usize,
}

impl FileRange {
    fn holds(&self, addr: ocsd_vaddr_t) -> bool {
        self.start <= addr && addr <= self.end
    }
}

/// A range as OpenCSD's `validateRange` takes it: halfword aligned, more
/// than one byte, start before end.
pub fn range_valid(start: ocsd_vaddr_t, end: ocsd_vaddr_t) -> bool {
    start & 1 == 0 && end.wrapping_add(1) & 1 == 0 && start != end && start <= end
}

/// The state of one of OpenCSD's file accessor objects.
pub struct OcsdFile {
    path: String,
    data: FileBytes,
    /// The file's size rounded down to an even number of bytes.
    size: usize,
    base: Option<FileRange>,
    regions: Vec<FileRange>,
    space: ocsd_mem_space_acc_t,
    /// Adds that hold the object (successful ones, and one while an add
    /// runs), in every tree of the registry.
    refs: u32,
}

impl OcsdFile {
    /// A new object for `path` with its first range (`initAccessor`): the
    /// whole file for offset 0 and size 0. `OCSD_ERR_NOT_INIT` when the
    /// file cannot be read or the range is not taken.
    fn open(path: &str, start: ocsd_vaddr_t, offset: usize, size: usize) -> Result<OcsdFile, ocsd_err_t> {
        let data = FileBytes::open(Path::new(path)).map_err(|_| OCSD_ERR_NOT_INIT)?;
        let file_size = data.len() & !1;
        let mut f = OcsdFile { path: path.to_string(), data, size: file_size, base: None, regions: Vec::new(), space: OCSD_MEM_SPACE_ANY, refs: 0 };
        let ok = if offset == 0 && size == 0 {
            f.add_offset_range(start, file_size, 0)
        } else {
            offset.checked_add(size).is_some_and(|e| e <= file_size) && f.add_offset_range(start, size, offset)
        };
        if ok {
            Ok(f)
        } else {
            Err(OCSD_ERR_NOT_INIT)
        }
    }

    /// `addrInRange`: in the base range or a region.
    pub fn in_range(&self, addr: ocsd_vaddr_t) -> bool {
        self.base.is_some_and(|b| b.holds(addr)) || self.regions.iter().any(|r| r.holds(addr))
    }

    /// `addrStartOfRange`: the start of the base range, or of the first
    /// region holding `addr`.
    fn start_of_range(&self, addr: ocsd_vaddr_t) -> bool {
        self.base.is_some_and(|b| b.start == addr) || self.regions.iter().find(|r| r.holds(addr)).is_some_and(|r| r.start == addr)
    }

    /// `AddOffsetRange`: whether the range was taken.
    fn add_offset_range(&mut self, start: ocsd_vaddr_t, size: usize, offset: usize) -> bool {
        if self.size == 0 {
            return false;
        }
        let end = start.wrapping_add(size as u64).wrapping_sub(1);
        if self.in_range(start) || self.in_range(end) {
            return false;
        }
        if offset == 0 {
            if self.base.is_some() {
                return false;
            }
            self.base = Some(FileRange { start, end, offset: 0 });
            return true;
        }
        if offset.checked_add(size).is_none_or(|e| e > self.size) {
            return false;
        }
        self.regions.push(FileRange { start, end, offset });
        // the base range reaches up to the first region's offset
        if let (Some(b), Some(first)) = (&mut self.base, self.regions.first()) {
            let reach = b.start.wrapping_add(first.offset as u64).wrapping_sub(1);
            if reach > b.end {
                b.end = reach;
            }
        }
        true
    }

    /// `validateRange` of every range.
    fn valid(&self) -> bool {
        self.base.iter().chain(&self.regions).all(|r| range_valid(r.start, r.end))
    }

    /// The range OpenCSD's overlap test takes for the object when it is
    /// added (its base range; 0 to 0 without one).
    pub fn probe(&self) -> (ocsd_vaddr_t, ocsd_vaddr_t) {
        self.base.map_or((0, 0), |b| (b.start, b.end))
    }

    pub fn space(&self) -> ocsd_mem_space_acc_t {
        self.space
    }

    /// The ranges: the base range first, then the regions in the order
    /// they were added.
    pub fn ranges(&self) -> impl Iterator<Item = &FileRange> {
        self.base.iter().chain(&self.regions)
    }

    /// The mapper's accessors for the object: one per range, all in its
    /// memory space. The base range reads the file from offset 0 (its
    /// stretched end may run past the file: no bytes there).
    pub fn accessors(&self) -> Vec<Accessor> {
        self.ranges()
            .map(|r| Accessor { start: r.start, end: r.end, space: self.space, source: Source::File { path: self.path.clone(), data: self.data.clone(), offset: r.offset } })
            .collect()
    }
}

/// A file accessor object in a registry, with the lists it is on.
struct Entry {
    file: OcsdFile,
    /// Moves whenever the object's ranges or memory space change.
    version: u64,
    listings: Vec<Listing>,
}

/// One owner's ([`OcsdFiles`]) listings of an object: the mapper groups
/// that are the file, and where that owner's mapper takes changes made
/// by other owners.
struct Listing {
    owner: u64,
    queue: Option<Weak<MapQueue>>,
    groups: Vec<u64>,
}

/// File accessor objects by path.
#[derive(Default)]
struct Registry {
    map: FileMap,
}

/// Entries by their file's path: a plain vector (few files; and no hash
/// table internals in the process-wide registry for leak checkers to take
/// for a lost block at exit).
#[derive(Default)]
struct FileMap(Vec<Entry>);

impl FileMap {
    fn get(&self, path: &str) -> Option<&Entry> {
        self.0.iter().find(|e| e.file.path == path)
    }
    fn get_mut(&mut self, path: &str) -> Option<&mut Entry> {
        self.0.iter_mut().find(|e| e.file.path == path)
    }
    fn contains_key(&self, path: &str) -> bool {
        self.get(path).is_some()
    }
    fn insert(&mut self, e: Entry) {
        self.0.push(e);
    }
    fn remove(&mut self, path: &str) {
        self.0.retain(|e| e.file.path != path);
        if self.0.is_empty() {
            self.0 = Vec::new();
        }
    }
    fn values(&self) -> impl Iterator<Item = &Entry> {
        self.0.iter()
    }
    fn values_mut(&mut self) -> impl Iterator<Item = &mut Entry> {
        self.0.iter_mut()
    }
}

/// OpenCSD's process-wide registry of file accessor objects (the C API's).
static PROCESS_FILES: Lazy<Arc<Mutex<Registry>>> = Lazy::new(Default::default);

/// One owner's (one tree's) use of a registry of file accessor objects:
/// the objects it holds (OpenCSD's tree destroys its accessors, releasing
/// them, when it is destroyed) and the versions of them its list has seen.
pub struct OcsdFiles {
    reg: Arc<Mutex<Registry>>,
    owner: u64,
    /// Where this owner's mapper takes the changes other owners make to
    /// the objects it lists.
    queue: Option<Weak<MapQueue>>,
    /// Successful adds, by path.
    holds: HashMap<String, u32>,
    /// The version of each object listed here when its list entries were
    /// last brought up to date.
    seen: HashMap<String, u64>,
}

impl Default for OcsdFiles {
    /// A registry of its own.
    fn default() -> Self {
        Self::new(Arc::default(), None)
    }
}

impl Drop for OcsdFiles {
    fn drop(&mut self) {
        let mut reg = lock(&self.reg);
        for (path, n) in self.holds.drain() {
            let Some(e) = reg.map.get_mut(&path) else { continue };
            e.file.refs = e.file.refs.saturating_sub(n);
            e.listings.retain(|l| l.owner != self.owner);
            if e.file.refs == 0 {
                reg.map.remove(&path);
            }
        }
    }
}

/// What [`OcsdFiles::create`] did.
pub enum Created {
    /// A new object.
    New,
    /// The path's existing object (its regions and space possibly changed).
    Existing,
}

/// The object of `e` changed (by owner `owner`): its new version, and its
/// new ranges for the mappers of the other owners listing it. (The
/// owner's own list entries and mapper are brought up to date by its
/// [`AccList`].)
fn changed_by(owner: u64, e: &mut Entry) {
    e.version += 1;
    for l in e.listings.iter().filter(|l| l.owner != owner) {
        let Some(q) = l.queue.as_ref().and_then(Weak::upgrade) else { continue };
        for &g in &l.groups {
            q.push(MapOp::Replace { group: g, accs: e.file.accessors() });
        }
    }
}

fn lock(reg: &Mutex<Registry>) -> MutexGuard<'_, Registry> {
    reg.lock().unwrap_or_else(|e| e.into_inner())
}

impl OcsdFiles {
    /// A use of the process-wide registry, the changes of other owners to
    /// the objects listed here going to `queue`.
    pub fn process_wide(queue: Weak<MapQueue>) -> Self {
        Self::new(PROCESS_FILES.clone(), Some(queue))
    }

    fn new(reg: Arc<Mutex<Registry>>, queue: Option<Weak<MapQueue>>) -> Self {
        OcsdFiles { reg, owner: next_uid(), queue, holds: HashMap::new(), seen: HashMap::new() }
    }

    pub fn exists(&self, path: &str) -> bool {
        lock(&self.reg).map.contains_key(path)
    }

    /// `f` on the path's object, if there is one.
    pub fn with<R>(&self, path: &str, f: impl FnOnce(&OcsdFile) -> R) -> Option<R> {
        lock(&self.reg).map.get(path).map(|e| f(&e.file))
    }

    /// `CreateFileAccessor` with the first region, then `AddOffsetRange`
    /// of the others (failures ignored) and `setMemSpace`, as OpenCSD's
    /// `addBinFileRegionMemAcc` does before adding the object to the
    /// mapper. The object is held (one more ref) until [`OcsdFiles::release`]
    /// or, once the add is counted as held (it succeeded), until this owner
    /// goes.
    pub fn create(&mut self, path: &str, regions: &[ocsd_file_mem_region_t], space: ocsd_mem_space_acc_t) -> Result<Created, ocsd_err_t> {
        let Some(first) = regions.first() else { return Err(OCSD_ERR_INVALID_PARAM_VAL) };
        let mut reg = lock(&self.reg);
        let created = match reg.map.get(path) {
            Some(e) => {
                if !e.file.start_of_range(first.start_address) {
                    return Err(OCSD_ERR_MEM_ACC_FILE_DIFF_RANGE);
                }
                Created::Existing
            }
            None => {
                let file = OcsdFile::open(path, first.start_address, first.file_offset, first.region_size)?;
                reg.map.insert(Entry { file, version: 0, listings: Vec::new() });
                Created::New
            }
        };
        let e = reg.map.get_mut(path).expect("just found or made");
        let before = (e.file.base, e.file.regions.len(), e.file.space);
        e.file.refs += 1;
        for r in &regions[1..] {
            e.file.add_offset_range(r.start_address, r.region_size, r.file_offset);
        }
        e.file.space = space;
        if (e.file.base, e.file.regions.len(), e.file.space) != before {
            changed_by(self.owner, e);
        }
        Ok(created)
    }

    /// Drop the hold of a failed add (`DestroyAccessor`): the object goes
    /// when nothing holds it.
    pub fn release(&mut self, path: &str) {
        let mut reg = lock(&self.reg);
        if let Some(e) = reg.map.get_mut(path) {
            e.file.refs = e.file.refs.saturating_sub(1);
            if e.file.refs == 0 {
                reg.map.remove(path);
            }
        }
    }

    /// The add that made or found the path's object succeeded: its hold
    /// lasts as long as this owner.
    fn hold(&mut self, path: &str) {
        *self.holds.entry(path.to_string()).or_default() += 1;
    }

    /// `updateBinFileRegionMemAcc` (the snapshot reader's further dumps of
    /// a file): each region not starting a range must be taken, else
    /// `OCSD_ERR_INVALID_PARAM_VAL` (the regions before it stay). Whether
    /// any range changed is returned with the result.
    pub fn update(&mut self, path: &str, regions: &[ocsd_file_mem_region_t]) -> (bool, Result<(), ocsd_err_t>) {
        let mut reg = lock(&self.reg);
        let Some(e) = reg.map.get_mut(path) else { return (false, Err(OCSD_ERR_INVALID_PARAM_VAL)) };
        let mut changed = false;
        let mut res = Ok(());
        for r in regions {
            if !e.file.start_of_range(r.start_address) {
                if !e.file.add_offset_range(r.start_address, r.region_size, r.file_offset) {
                    res = Err(OCSD_ERR_INVALID_PARAM_VAL);
                    break;
                }
                changed = true;
            }
        }
        if changed {
            changed_by(self.owner, e);
        }
        (changed, res)
    }

    /// List group `g` as the path's object on this owner's list.
    fn add_listing(&mut self, path: &str, g: u64) {
        let mut reg = lock(&self.reg);
        let Some(e) = reg.map.get_mut(path) else { return };
        match e.listings.iter_mut().find(|l| l.owner == self.owner) {
            Some(l) => l.groups.push(g),
            None => e.listings.push(Listing { owner: self.owner, queue: self.queue.clone(), groups: vec![g] }),
        }
        self.seen.insert(path.to_string(), e.version);
    }

    /// Group `g` is off this owner's list.
    fn forget_group(&mut self, g: u64) {
        let mut reg = lock(&self.reg);
        for e in reg.map.values_mut() {
            for l in e.listings.iter_mut().filter(|l| l.owner == self.owner) {
                l.groups.retain(|&x| x != g);
            }
        }
    }

    /// This owner's groups that are the path's object, and its version.
    fn listed(&self, path: &str) -> Option<(Vec<u64>, u64)> {
        let reg = lock(&self.reg);
        let e = reg.map.get(path)?;
        let groups = e.listings.iter().find(|l| l.owner == self.owner).map(|l| l.groups.clone()).unwrap_or_default();
        Some((groups, e.version))
    }

    /// The paths listed here whose objects another owner changed since
    /// this list last saw them.
    fn changed_elsewhere(&self) -> Vec<String> {
        let reg = lock(&self.reg);
        self.seen.iter().filter(|(p, &v)| reg.map.get(p).is_some_and(|e| e.version != v)).map(|(p, _)| p.clone()).collect()
    }

    /// The path, memory space and ranges of the object group `g` is.
    fn of_group(&self, g: u64) -> Option<(String, ocsd_mem_space_acc_t, Vec<FileRange>)> {
        let reg = lock(&self.reg);
        let found = reg.map.values().find(|e| e.listings.iter().any(|l| l.owner == self.owner && l.groups.contains(&g)));
        found.map(|e| (e.file.path.clone(), e.file.space, e.file.ranges().copied().collect()))
    }
}

/// A change to a mapper's accessors, as [`AccList`] decides it.
pub enum MapOp {
    /// List `accs` as one accessor (group `group`) after the others.
    Push { group: u64, accs: Vec<Accessor> },
    /// Group `group` takes `accs` as its ranges, in its place.
    Replace { group: u64, accs: Vec<Accessor> },
    /// Take group `group` off the list.
    Remove { group: u64 },
    /// Caching on with these sizes (checked), or off.
    Caching { enable: bool, page_size: usize, num_pages: usize },
}

/// Changes to a mapper asked for while it is at work (from a client's
/// callback: OpenCSD lets a client change the memory map there), applied
/// at the mapper's next read.
#[derive(Default)]
pub struct MapQueue {
    pending: AtomicBool,
    /// Changes queued so far: part of the mapper's epoch, so that the
    /// decoders drop their views of memory as soon as one is queued.
    generation: AtomicU64,
    ops: Mutex<Vec<MapOp>>,
}

impl MapQueue {
    pub fn push(&self, op: MapOp) {
        self.ops.lock().unwrap_or_else(|e| e.into_inner()).push(op);
        self.generation.fetch_add(1, Ordering::Relaxed);
        self.pending.store(true, Ordering::Release);
    }

    #[inline]
    pub fn pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    fn take(&self) -> Vec<MapOp> {
        let mut ops = self.ops.lock().unwrap_or_else(|e| e.into_inner());
        self.pending.store(false, Ordering::Release);
        std::mem::take(&mut *ops)
    }
}

/// One listed range: first and last address, memory space, group, and
/// what it reads (for [`AccList::describe_each`]).
struct ListEntry {
    start: ocsd_vaddr_t,
    end: ocsd_vaddr_t,
    space: ocsd_mem_space_acc_t,
    group: u64,
    kind: ListedKind<String>,
}

/// The list entries of accessors `accs` listed as group `group`.
fn entries_of(group: u64, accs: &[Accessor]) -> impl Iterator<Item = ListEntry> + '_ {
    accs.iter().map(move |a| ListEntry { start: a.start, end: a.end, space: a.space, group, kind: Listed::of(a, group).kind.owned() })
}

/// OpenCSD's accessor list as its C API and snapshot reader change it: the
/// decisions (which call succeeds, with which error, what gets mapped), as
/// [`MapOp`]s for a [`MemMapper`] to carry out. It is kept apart from the
/// mapper so that a client's callback may change the map while the mapper
/// is at work. (The Rust API's [`MemMapper::add`] keeps its stricter
/// overlap rule.)
#[derive(Default)]
pub struct AccList {
    files: OcsdFiles,
    entries: Vec<ListEntry>,
}

impl AccList {
    /// A list whose file accessor objects are the process-wide ones the C
    /// API's trees share (see [`OcsdFiles::process_wide`]); the changes
    /// other trees make to files listed here go to `queue`, for this
    /// list's mapper.
    pub fn process_wide(queue: Weak<MapQueue>) -> Self {
        AccList { files: OcsdFiles::process_wide(queue), entries: Vec::new() }
    }

    /// Whether a file accessor object exists for `path`
    /// (`isExistingFileAccessor`).
    pub fn file_exists(&self, path: &str) -> bool {
        self.files.exists(path)
    }

    /// Bring the entries of files another tree changed up to date (that
    /// tree sent the changes to this list's mapper).
    fn sync(&mut self) {
        for path in self.files.changed_elsewhere() {
            let _ = self.refresh_file(&path);
        }
    }

    /// `addBinFileRegionMemAcc` (and `addBinFileMemAcc`: one region of
    /// offset 0 and size 0): make or find the path's object, apply the
    /// regions and space, then list it as OpenCSD's mapper does
    /// ([`AccList::add_listed`]'s rules). The changes for the mapper come
    /// with the result, also when the add fails (a found object's new
    /// ranges and space stand).
    pub fn add_file_regions(&mut self, path: &str, regions: &[ocsd_file_mem_region_t], space: ocsd_mem_space_acc_t) -> (Vec<MapOp>, Result<(), ocsd_err_t>) {
        self.sync();
        let mut ops = Vec::new();
        match self.files.create(path, regions, space) {
            Err(e) => return (ops, Err(e)),
            Ok(Created::Existing) => ops = self.refresh_file(path),
            Ok(Created::New) => {}
        }
        let (valid, (start, end), space, accs) = self.files.with(path, |f| (f.valid(), f.probe(), f.space(), f.accessors())).expect("held by create");
        let res = if valid { self.overlap(start, end, space) } else { Err(OCSD_ERR_MEM_ACC_RANGE_INVALID) };
        match res {
            Ok(()) => {
                let group = next_uid();
                self.list(group, &accs);
                self.files.hold(path);
                self.files.add_listing(path, group);
                ops.push(MapOp::Push { group, accs });
                (ops, Ok(()))
            }
            Err(e) => {
                self.files.release(path);
                (ops, Err(e))
            }
        }
    }

    /// `updateBinFileRegionMemAcc`: more regions for the path's existing
    /// object (`OCSD_ERR_INVALID_PARAM_VAL` without one, or at the first
    /// region it refuses; the regions before it stay).
    pub fn update_file_regions(&mut self, path: &str, regions: &[ocsd_file_mem_region_t]) -> (Vec<MapOp>, Result<(), ocsd_err_t>) {
        self.sync();
        let (changed, res) = self.files.update(path, regions);
        let ops = if changed { self.refresh_file(path) } else { Vec::new() };
        (ops, res)
    }

    /// List a buffer or callback accessor as OpenCSD's mapper does:
    /// refused (`OCSD_ERR_MEM_ACC_OVERLAP`) only when a listed accessor in
    /// a memory space sharing a bit with its own holds its first or last
    /// address. (One that encloses a listed range is taken; reads go to
    /// the first listed accessor holding the address.)
    pub fn add_listed(&mut self, acc: Accessor) -> Result<MapOp, ocsd_err_t> {
        self.sync();
        if !range_valid(acc.start, acc.end) {
            return Err(OCSD_ERR_MEM_ACC_RANGE_INVALID);
        }
        self.overlap(acc.start, acc.end, acc.space)?;
        let group = next_uid();
        self.list(group, std::slice::from_ref(&acc));
        Ok(MapOp::Push { group, accs: vec![acc] })
    }

    /// `RemoveAccessorByAddress`: take the first listed accessor holding
    /// `addr` in a memory space sharing a bit with `space` off the list (a
    /// file with all its ranges; its object stays for later adds).
    pub fn remove_listed(&mut self, addr: ocsd_vaddr_t, space: ocsd_mem_space_acc_t) -> Result<MapOp, ocsd_err_t> {
        self.sync();
        let Some(e) = self.entries.iter().find(|e| e.start <= addr && addr <= e.end && e.space & space != 0) else {
            return Err(OCSD_ERR_INVALID_PARAM_VAL);
        };
        let group = e.group;
        self.entries.retain(|e| e.group != group);
        self.files.forget_group(group);
        Ok(MapOp::Remove { group })
    }

    /// The file accessor objects on the list, in its order: (path, memory
    /// space, ranges), once per listing.
    pub fn listed_files(&self) -> Vec<(String, ocsd_mem_space_acc_t, Vec<FileRange>)> {
        let mut seen: Vec<u64> = Vec::new();
        let mut out = Vec::new();
        for e in &self.entries {
            if seen.contains(&e.group) {
                continue;
            }
            seen.push(e.group);
            if let Some(f) = self.files.of_group(e.group) {
                out.push(f);
            }
        }
        out
    }

    /// One description per listed accessor, as OpenCSD's
    /// `logMappedRanges` gives them (the same as the mapper's
    /// [`MemMapper::describe_each`], which carries out this list).
    pub fn describe_each(&mut self) -> Vec<String> {
        self.sync();
        let listed: Vec<Listed> =
            self.entries.iter().map(|e| Listed { start: e.start, end: e.end, space: e.space, group: e.group, kind: e.kind.borrowed() }).collect();
        describe_listed(&listed)
    }

    /// OpenCSD's overlap test of a new accessor whose range is
    /// `[start, end]` in `space` against the listed ones.
    fn overlap(&self, start: ocsd_vaddr_t, end: ocsd_vaddr_t, space: ocsd_mem_space_acc_t) -> Result<(), ocsd_err_t> {
        let holds = |e: &ListEntry, x: ocsd_vaddr_t| e.start <= x && x <= e.end;
        if self.entries.iter().any(|e| (holds(e, start) || holds(e, end)) && e.space & space != 0) {
            return Err(OCSD_ERR_MEM_ACC_OVERLAP);
        }
        Ok(())
    }

    fn list(&mut self, group: u64, accs: &[Accessor]) {
        self.entries.extend(entries_of(group, accs));
    }

    /// The path's object changed: its list entries take its new ranges
    /// and space, in their places; the changes for the mapper.
    fn refresh_file(&mut self, path: &str) -> Vec<MapOp> {
        let Some((groups, version)) = self.files.listed(path) else { return Vec::new() };
        self.files.seen.insert(path.to_string(), version);
        let mut ops = Vec::new();
        for g in groups {
            let Some(pos) = self.entries.iter().position(|e| e.group == g) else { continue };
            let Some(accs) = self.files.with(path, OcsdFile::accessors) else { continue };
            self.entries.retain(|e| e.group != g);
            let new: Vec<ListEntry> = entries_of(g, &accs).collect();
            self.entries.splice(pos..pos, new);
            ops.push(MapOp::Replace { group: g, accs });
        }
        ops
    }
}

impl MemMapper {
    /// Carry out a change [`AccList`] decided.
    pub fn apply(&mut self, op: MapOp) {
        match op {
            MapOp::Push { group, accs } => self.push_group(group, accs, ContextFilter::ANY),
            MapOp::Replace { group, accs } => self.replace_group(group, accs),
            MapOp::Remove { group } => self.remove_group(group),
            MapOp::Caching { enable, page_size, num_pages } => {
                // (checked when decided)
                let _ = self.set_caching(enable, page_size, num_pages);
            }
        }
    }

    /// Carry out the changes queued from callbacks, if any.
    #[inline]
    pub fn apply_queued(&mut self) {
        let ops = match &self.queue {
            Some(q) if q.pending() => q.take(),
            _ => return,
        };
        for op in ops {
            self.apply(op);
        }
    }

    /// Take changes queued in `q` (from a client's callbacks) at the next
    /// read.
    pub fn set_queue(&mut self, q: Option<Arc<MapQueue>>) {
        self.queue = q;
    }

    /// List `accs` as one accessor (group `g`, serving the contexts
    /// `filter` selects) after the others.
    pub(super) fn push_group(&mut self, g: u64, accs: Vec<Accessor>, filter: ContextFilter) {
        self.epoch += 1;
        for a in accs {
            self.accessors.push(a);
            self.meta.push(AccMeta { uid: next_uid(), group: g, filter });
        }
        self.new_callback_bytes_all();
        self.mapping_changed();
    }

    /// Drop the accessors of group `g` from the list (nothing else).
    fn drop_group(&mut self, g: u64) {
        let keep: Vec<bool> = self.meta.iter().map(|m| m.group != g).collect();
        let mut k = keep.iter();
        self.accessors.retain(|_| *k.next().expect("one per accessor"));
        let mut k = keep.iter();
        self.meta.retain(|_| *k.next().expect("one per accessor"));
    }

    /// Take group `g` off the list (OpenCSD drops its cached pages and its
    /// current accessor).
    fn remove_group(&mut self, g: u64) {
        self.drop_group(g);
        self.epoch += 1;
        self.curr = None;
        self.invalidate_all();
        self.mapping_changed();
    }

    /// Group `g` takes `accs` as its ranges, in its place.
    fn replace_group(&mut self, g: u64, accs: Vec<Accessor>) {
        let Some(pos) = self.meta.iter().position(|m| m.group == g) else { return };
        let curr = self.curr.map(|c| (self.meta[c].group, self.meta[c].uid));
        self.drop_group(g);
        let n = accs.len();
        self.accessors.splice(pos..pos, accs);
        self.meta.splice(pos..pos, (0..n).map(|_| AccMeta { uid: next_uid(), group: g, filter: ContextFilter::ANY }));
        self.curr = curr.and_then(|(cg, uid)| if cg == g { (n > 0).then_some(pos) } else { self.meta.iter().position(|m| m.uid == uid) });
        self.epoch += 1;
        self.invalidate_all();
        self.new_callback_bytes_all();
        self.mapping_changed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `len` bytes in the temporary directory, removed when
    /// dropped.
    struct TempFile(String);

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn file_of(len: usize) -> (TempFile, String) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!("ocsd-files-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        std::fs::write(&p, vec![0x5a; len]).unwrap();
        let p = p.to_string_lossy().into_owned();
        (TempFile(p.clone()), p)
    }

    fn region(start: u64, offset: usize, size: usize) -> ocsd_file_mem_region_t {
        ocsd_file_mem_region_t { file_offset: offset, start_address: start, region_size: size }
    }

    fn ranges(f: &OcsdFiles, p: &str) -> Vec<(u64, u64, usize)> {
        f.with(p, |f| f.ranges().map(|r| (r.start, r.end, r.offset)).collect()).unwrap()
    }

    #[test]
    fn whole_file_is_its_even_size() {
        let (_t, p) = file_of(0x101);
        let mut f = OcsdFiles::default();
        assert!(matches!(f.create(&p, &[region(0x1000, 0, 0)], OCSD_MEM_SPACE_ANY), Ok(Created::New)));
        assert_eq!(ranges(&f, &p), vec![(0x1000, 0x10ff, 0)]);
        assert!(f.with(&p, OcsdFile::valid).unwrap());
    }

    #[test]
    fn missing_file_or_region_past_the_end_is_not_init() {
        let mut f = OcsdFiles::default();
        assert_eq!(f.create("/nonexistent/ocsd/file", &[region(0, 0, 0)], 0).err(), Some(OCSD_ERR_NOT_INIT));
        let (_t, p) = file_of(0x100);
        assert_eq!(f.create(&p, &[region(0x1000, 0x80, 0x81)], 0).err(), Some(OCSD_ERR_NOT_INIT));
        assert!(!f.exists(&p));
        let (_e, empty) = file_of(1);
        assert_eq!(f.create(&empty, &[region(0x1000, 0, 0)], 0).err(), Some(OCSD_ERR_NOT_INIT));
    }

    #[test]
    fn same_path_elsewhere_is_diff_range_and_same_start_reuses() {
        let (_t, p) = file_of(0x100);
        let mut f = OcsdFiles::default();
        f.create(&p, &[region(0x1000, 0, 0)], OCSD_MEM_SPACE_EL1N).ok().unwrap();
        assert_eq!(f.create(&p, &[region(0x4000, 0, 0)], OCSD_MEM_SPACE_ANY).err(), Some(OCSD_ERR_MEM_ACC_FILE_DIFF_RANGE));
        // the same start finds the object; its further regions and space are applied
        assert!(matches!(f.create(&p, &[region(0x1000, 0, 0), region(0x8000, 0x20, 0x10)], OCSD_MEM_SPACE_EL2), Ok(Created::Existing)));
        assert_eq!(ranges(&f, &p), vec![(0x1000, 0x10ff, 0), (0x8000, 0x800f, 0x20)]);
        assert_eq!(f.with(&p, OcsdFile::space).unwrap(), OCSD_MEM_SPACE_EL2);
        // released once: still held by the first add
        f.release(&p);
        assert!(f.exists(&p));
        f.release(&p);
        assert!(!f.exists(&p));
    }

    #[test]
    fn regions_stretch_the_base_and_refuse_overlaps() {
        let (_t, p) = file_of(0x10000);
        let mut f = OcsdFiles::default();
        f.create(&p, &[region(0x1000, 0, 0x100)], 0).ok().unwrap();
        // a region at offset 0x800: the base reaches up to it
        assert_eq!(f.update(&p, &[region(0x9000, 0x800, 0x100)]), (true, Ok(())));
        assert_eq!(ranges(&f, &p), vec![(0x1000, 0x17ff, 0), (0x9000, 0x90ff, 0x800)]);
        // starts inside the (stretched) base: refused
        assert_eq!(f.update(&p, &[region(0x1700, 0x900, 0x10)]), (false, Err(OCSD_ERR_INVALID_PARAM_VAL)));
        // a second offset-0 range elsewhere: refused
        assert_eq!(f.update(&p, &[region(0x20000, 0, 0x10)]), (false, Err(OCSD_ERR_INVALID_PARAM_VAL)));
        // a range that starts one: nothing to do
        assert_eq!(f.update(&p, &[region(0x9000, 0x800, 0x100)]), (false, Ok(())));
        // one enclosing a range (neither end inside it) is taken
        assert_eq!(f.update(&p, &[region(0x8f00, 0x1000, 0x400)]), (true, Ok(())));
        assert_eq!(f.with(&p, OcsdFile::probe).unwrap(), (0x1000, 0x17ff));
    }

    #[test]
    fn a_region_without_size_is_an_invalid_range() {
        let (_t, p) = file_of(0x100);
        let mut f = OcsdFiles::default();
        f.create(&p, &[region(0x1000, 0x10, 0)], 0).ok().unwrap();
        assert_eq!(ranges(&f, &p), vec![(0x1000, 0xfff, 0x10)]);
        assert!(!f.with(&p, OcsdFile::valid).unwrap());
        assert_eq!(f.with(&p, OcsdFile::probe).unwrap(), (0, 0));
    }

    fn buffer(start: u64, len: usize, byte: u8, space: ocsd_mem_space_acc_t) -> Accessor {
        Accessor { start, end: start + len as u64 - 1, space, source: Source::Buffer { data: std::sync::Arc::new(vec![byte; len]) } }
    }

    /// Two trees' lists on one registry (as the C API's trees share the
    /// process-wide one): a file is found at its place only, a change one
    /// makes reaches the other's list and mapper, and the object goes with
    /// the last tree holding it.
    #[test]
    fn lists_on_one_registry_share_their_files() {
        let (_t, p) = file_of(0x2000);
        let reg: Arc<Mutex<Registry>> = Arc::default();
        let (qa, qb) = (Arc::new(MapQueue::default()), Arc::new(MapQueue::default()));
        let list = |q: &Arc<MapQueue>| AccList { files: OcsdFiles::new(reg.clone(), Some(Arc::downgrade(q))), entries: Vec::new() };
        let (mut a, mut b) = (list(&qa), list(&qb));
        assert_eq!(a.add_file_regions(&p, &[region(0x1000, 0, 0)], OCSD_MEM_SPACE_ANY).1, Ok(()));
        assert_eq!(b.add_file_regions(&p, &[region(0x8000, 0, 0)], OCSD_MEM_SPACE_ANY).1, Err(OCSD_ERR_MEM_ACC_FILE_DIFF_RANGE));
        assert_eq!(a.add_listed(buffer(0x9080, 0x10, 0, OCSD_MEM_SPACE_ANY)).map(|_| ()), Ok(()));
        assert_eq!(a.remove_listed(0x9080, OCSD_MEM_SPACE_ANY).map(|_| ()), Ok(()));
        // b adds a region to the object: a's mapper is told, a's list has it
        let regions = [region(0x1000, 0, 0x100), region(0x9000, 0x1000, 0x100)];
        let (ops, r) = b.add_file_regions(&p, &regions, OCSD_MEM_SPACE_ANY);
        assert_eq!((r, ops.len()), (Ok(()), 1));
        assert!(qa.pending() && !qb.pending());
        assert!(matches!(qa.take().as_slice(), [MapOp::Replace { accs, .. }] if accs.len() == 2 && accs[1].start == 0x9000));
        assert_eq!(a.add_listed(buffer(0x9080, 0x10, 0, OCSD_MEM_SPACE_ANY)).err(), Some(OCSD_ERR_MEM_ACC_OVERLAP));
        assert_eq!(a.listed_files()[0].2.len(), 2);
        drop(a);
        assert!(lock(&reg).map.contains_key(&p));
        drop(b);
        assert!(!lock(&reg).map.contains_key(&p));
    }

    /// A mapper run by an accessor list, as the C API runs a tree's.
    #[derive(Default)]
    struct Map {
        list: AccList,
        m: MemMapper,
    }

    impl Map {
        fn run(&mut self, (ops, r): (Vec<MapOp>, Result<(), ocsd_err_t>)) -> Result<(), ocsd_err_t> {
            for op in ops {
                self.m.apply(op);
            }
            r
        }
        fn add_listed(&mut self, acc: Accessor) -> Result<(), ocsd_err_t> {
            let r = self.list.add_listed(acc).map(|op| (vec![op], Ok(()))).unwrap_or_else(|e| (Vec::new(), Err(e)));
            self.run(r)
        }
        fn add_file_regions(&mut self, path: &str, regions: &[ocsd_file_mem_region_t], space: ocsd_mem_space_acc_t) -> Result<(), ocsd_err_t> {
            let r = self.list.add_file_regions(path, regions, space);
            self.run(r)
        }
        fn remove_listed(&mut self, addr: u64, space: ocsd_mem_space_acc_t) -> Result<(), ocsd_err_t> {
            let r = self.list.remove_listed(addr, space).map(|op| (vec![op], Ok(()))).unwrap_or_else(|e| (Vec::new(), Err(e)));
            self.run(r)
        }
        fn listed_files(&self) -> Vec<(String, ocsd_mem_space_acc_t, Vec<FileRange>)> {
            self.list.listed_files()
        }
        fn accessors(&self) -> &[Accessor] {
            self.m.accessors()
        }
        /// The mapper's description, which the list's must match.
        fn describe_each(&mut self) -> Vec<String> {
            let d = self.m.describe_each();
            assert_eq!(self.list.describe_each(), d);
            d
        }
    }

    fn read_byte(m: &mut Map, addr: u64) -> Option<u8> {
        use crate::common::MemAccess;
        let mut b = [0u8; 2];
        match m.m.read(addr, OCSD_MEM_SPACE_EL1N, 0, &mut b) {
            Ok(2) => Some(b[0]),
            _ => None,
        }
    }

    /// Changes queued from a callback wait for the mapper's next read, and
    /// the epoch the decoders see moves as soon as one is queued.
    #[test]
    fn queued_changes_apply_at_the_next_read() {
        use crate::common::MemAccess;
        let mut m = Map::default();
        let q = Arc::new(MapQueue::default());
        m.m.set_queue(Some(q.clone()));
        m.add_listed(buffer(0x1000, 0x100, 1, OCSD_MEM_SPACE_ANY)).unwrap();
        assert_eq!(read_byte(&mut m, 0x2000), None);
        let e0 = m.m.epoch();
        q.push(m.list.add_listed(buffer(0x2000, 0x100, 2, OCSD_MEM_SPACE_ANY)).unwrap());
        assert_ne!(m.m.epoch(), e0);
        assert_eq!(m.m.accessors().len(), 1);
        assert_eq!(read_byte(&mut m, 0x2000), Some(2));
        q.push(m.list.remove_listed(0x1000, OCSD_MEM_SPACE_ANY).unwrap());
        assert_eq!(read_byte(&mut m, 0x1000), None);
        assert_eq!(m.m.accessors().len(), 1);
    }

    #[test]
    fn listed_overlap_tests_only_the_new_ends() {
        let mut m = Map::default();
        m.add_listed(buffer(0x1000, 0x100, 1, OCSD_MEM_SPACE_ANY)).unwrap();
        // encloses the first: taken; reads go to the first listed
        m.add_listed(buffer(0x800, 0x1000, 2, OCSD_MEM_SPACE_ANY)).unwrap();
        assert_eq!(read_byte(&mut m, 0x1010), Some(1));
        assert_eq!(read_byte(&mut m, 0x900), Some(2));
        // an end inside a listed range in a shared space: refused
        assert_eq!(m.add_listed(buffer(0x17fe, 0x100, 3, OCSD_MEM_SPACE_EL1N)), Err(OCSD_ERR_MEM_ACC_OVERLAP));
        // in a disjoint space: taken
        m.add_listed(buffer(0x5000, 0x100, 3, OCSD_MEM_SPACE_EL1N)).unwrap();
        m.add_listed(buffer(0x5000, 0x100, 4, OCSD_MEM_SPACE_EL2)).unwrap();
        // a bad range first
        assert_eq!(m.add_listed(buffer(0x3001, 0x10, 3, OCSD_MEM_SPACE_ANY)), Err(OCSD_ERR_MEM_ACC_RANGE_INVALID));
    }

    #[test]
    fn remove_takes_the_first_holding_the_address_and_a_file_keeps_its_object() {
        let (_t, p) = file_of(0x2000);
        let mut m = Map::default();
        m.add_file_regions(&p, &[region(0x10000, 0, 0x100), region(0x40000, 0x1000, 0x100)], OCSD_MEM_SPACE_EL1N).unwrap();
        m.add_listed(buffer(0x1000, 0x100, 1, OCSD_MEM_SPACE_ANY)).unwrap();
        assert_eq!(m.accessors().len(), 3);
        // an address inside the file's region, any space bit in common: the whole file goes
        assert_eq!(m.remove_listed(0x40010, OCSD_MEM_SPACE_N), Ok(()));
        assert_eq!(m.accessors().len(), 1);
        assert_eq!(m.remove_listed(0x40010, OCSD_MEM_SPACE_ANY), Err(OCSD_ERR_INVALID_PARAM_VAL));
        // the object stays: another start is still a different range ...
        assert_eq!(m.add_file_regions(&p, &[region(0x90000, 0, 0)], OCSD_MEM_SPACE_ANY), Err(OCSD_ERR_MEM_ACC_FILE_DIFF_RANGE));
        // ... and the region's start brings back all of its ranges
        m.add_file_regions(&p, &[region(0x40000, 0x1000, 0x100)], OCSD_MEM_SPACE_ANY).unwrap();
        assert_eq!(m.accessors().len(), 3);
        assert_eq!(read_byte(&mut m, 0x10000), Some(0x5a));
        assert_eq!(m.listed_files().len(), 1);
        // the list describes what the mapper has: the buffer, then the file
        let d = m.describe_each();
        assert_eq!(d.len(), 2);
        assert_eq!(d[0], "BuffAcc; Range::0x1000:10ff; Mem Space::Any");
        assert!(d[1].starts_with("FileAcc; Range::0x10000:10fff; Mem Space::Any\nFileAcc; Range::0x40000:400ff; Mem Space::Any\nFilename="), "{}", d[1]);
    }

    #[test]
    fn a_failed_re_add_still_changes_the_listed_file() {
        let (_t, p) = file_of(0x2000);
        let mut m = Map::default();
        m.add_file_regions(&p, &[region(0x10000, 0, 0x100)], OCSD_MEM_SPACE_EL1N).unwrap();
        assert_eq!(read_byte(&mut m, 0x10400), None);
        // same start: the object is found, takes the region (which stretches
        // its base to 0x10fff) and the space, then overlaps itself
        assert_eq!(m.add_file_regions(&p, &[region(0x10000, 0, 0), region(0x40000, 0x1000, 0x100)], OCSD_MEM_SPACE_EL2), Err(OCSD_ERR_MEM_ACC_OVERLAP));
        let listed = m.listed_files();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].1, OCSD_MEM_SPACE_EL2);
        assert_eq!(listed[0].2.iter().map(|r| (r.start, r.end)).collect::<Vec<_>>(), vec![(0x10000, 0x10fff), (0x40000, 0x400ff)]);
        let d = m.describe_each();
        assert_eq!(d.len(), 1);
        assert!(d[0].starts_with("FileAcc; Range::0x10000:10fff; Mem Space::EL2N\nFileAcc; Range::0x40000:400ff; Mem Space::Any\nFilename="), "{}", d[0]);
    }
}
