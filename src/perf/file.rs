//! Reading a perf.data file: the records of the data section, in file
//! order, each with its file offset.
//!
//! `linux-perf-data` reads the file header's attributes and feature
//! sections (build IDs, simpleperf's meta information) and parses the
//! bodies of the kernel's records (MMAP, MMAP2, COMM, SWITCH, ... with their
//! `sample_id_all` trailers). The walk over the data section is done here:
//! the crate's record iterator re-orders records by time and its errors do
//! not carry the file offset, and both the packet dump (perf's order) and
//! the error messages (record and offset) need them.

use std::collections::HashMap;
use std::sync::Arc;
use std::io::Cursor;

use linux_perf_data::linux_perf_event_reader::{
    CommonData, EventRecord, RawData, RawEventRecord, RecordParseInfo, RecordType,
};
use linux_perf_data::{Endianness, PerfFileReader};

use super::PerfError;

/// `PERF_RECORD_*` user types (perf's own records).
pub const PERF_RECORD_AUXTRACE_INFO: u32 = 70;
pub const PERF_RECORD_AUXTRACE: u32 = 71;
/// Pipe mode's tracepoint format data: followed by that many bytes.
const PERF_RECORD_HEADER_TRACING_DATA: u32 = 66;
/// A build ID, as an entry of the file's build-id table (pipe mode, and
/// `perf inject -b`).
const PERF_RECORD_HEADER_BUILD_ID: u32 = 67;
/// `perf record -z`: kernel records compressed with zstd (one stream
/// across all such records); the second form gives its data size.
pub const PERF_RECORD_COMPRESSED: u32 = 81;
pub const PERF_RECORD_COMPRESSED2: u32 = 83;
/// Kernel record types not parsed by the crate.
pub const PERF_RECORD_AUX: u32 = 11;
pub const PERF_RECORD_ITRACE_START: u32 = 12;
const PERF_RECORD_MISC_MMAP_BUILD_ID: u16 = 1 << 14;

/// `PERF_AUX_FLAG_*` of an AUX record.
pub const PERF_AUX_FLAG_TRUNCATED: u64 = 0x01;
pub const PERF_AUX_FLAG_OVERWRITE: u64 = 0x02;
pub const PERF_AUX_FLAG_PARTIAL: u64 = 0x04;
pub const PERF_AUX_FLAG_COLLISION: u64 = 0x08;
/// CoreSight: the AUX data is not frame formatted (ETE / TRBE).
pub const PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW: u64 = 0x100;

/// Name of a record type as perf prints it (for messages).
pub fn record_name(t: u32) -> String {
    let n = match t {
        1 => "MMAP",
        2 => "LOST",
        3 => "COMM",
        4 => "EXIT",
        5 => "THROTTLE",
        6 => "UNTHROTTLE",
        7 => "FORK",
        8 => "READ",
        9 => "SAMPLE",
        10 => "MMAP2",
        11 => "AUX",
        12 => "ITRACE_START",
        13 => "LOST_SAMPLES",
        14 => "SWITCH",
        15 => "SWITCH_CPU_WIDE",
        64 => "HEADER_ATTR",
        67 => "HEADER_BUILD_ID",
        68 => "FINISHED_ROUND",
        69 => "ID_INDEX",
        70 => "AUXTRACE_INFO",
        71 => "AUXTRACE",
        72 => "AUXTRACE_ERROR",
        81 => "COMPRESSED",
        83 => "COMPRESSED2",
        _ => return format!("type {}", t),
    };
    format!("PERF_RECORD_{}", n)
}

/// One AUXTRACE record: a block of trace from one AUX buffer.
#[derive(Debug, Clone)]
pub struct AuxtraceRecord {
    /// File offset of the record.
    pub file_offset: u64,
    /// Where its trace bytes are in the file.
    pub data_start: usize,
    pub size: u64,
    /// Offset of this block in the AUX buffer's stream.
    pub offset: u64,
    pub reference: u64,
    /// Queue index (the CPU, or the thread's index in per-thread mode).
    pub idx: u32,
    pub tid: i32,
    pub cpu: i32,
}

/// An AUX record: new data in the AUX buffer.
#[derive(Debug, Clone)]
pub struct AuxRecord {
    pub file_offset: u64,
    pub aux_offset: u64,
    pub aux_size: u64,
    pub flags: u64,
    pub common: SampleId,
}

impl AuxRecord {
    pub fn truncated(&self) -> bool {
        self.flags & PERF_AUX_FLAG_TRUNCATED != 0
    }
    pub fn partial(&self) -> bool {
        self.flags & PERF_AUX_FLAG_PARTIAL != 0
    }
    pub fn raw_format(&self) -> bool {
        self.flags & PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW != 0
    }
}

/// A mapping of a file (or anonymous / kernel memory) into a process.
#[derive(Debug, Clone)]
pub struct MmapEvent {
    pub pid: i32,
    pub tid: i32,
    pub start: u64,
    pub len: u64,
    pub pgoff: u64,
    pub path: String,
    /// Build ID carried by an MMAP2 record (`PERF_RECORD_MISC_MMAP_BUILD_ID`).
    pub build_id: Option<Vec<u8>>,
    /// Executable mapping (MMAP2 protection, or MMAP without the data flag).
    pub exec: bool,
    pub kernel: bool,
}

/// The sideband records that give each thread's address space and the
/// thread running on each CPU.
#[derive(Debug, Clone)]
pub enum Sideband {
    Mmap(MmapEvent),
    Comm { pid: i32, tid: i32, name: String, exec: bool },
    /// Trace started for a thread (on `common.cpu`).
    ItraceStart { pid: i32, tid: i32 },
    /// Context switch: `out` switching out; for CPU-wide records the
    /// other thread.
    Switch { out: bool, next_prev: Option<(i32, i32)> },
    Fork { pid: i32, ppid: i32, tid: i32 },
    Exit { pid: i32, tid: i32 },
}

/// The fields of a record's `sample_id` trailer that the decode uses (the
/// crate's `CommonData` holds six, 72 bytes, in every kept record).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampleId {
    pub tid: Option<i32>,
    pub cpu: Option<u32>,
}

impl From<CommonData> for SampleId {
    fn from(c: CommonData) -> SampleId {
        SampleId { tid: c.tid, cpu: c.cpu }
    }
}

#[derive(Debug, Clone)]
pub struct SidebandRecord {
    pub file_offset: u64,
    pub common: SampleId,
    pub event: Sideband,
}

/// A perf.data file read into memory.
pub struct PerfData {
    pub bytes: Vec<u8>,
    /// Where the records read from decompressed data are in the file (see
    /// [`PerfData::file_offset`]); empty without compressed records.
    segments: Vec<Segment>,
    pub endian: Endianness,
    pub data_offset: u64,
    pub data_size: u64,
    /// A pipe-mode stream (`perf record -o -`): the attributes and features
    /// come as records before the events, not in header sections.
    pub pipe: bool,
    /// The AUXTRACE_INFO record: (file offset, type, private u64 words).
    pub auxtrace_info: Option<(u64, u32, Vec<u64>)>,
    pub auxtrace: Vec<AuxtraceRecord>,
    pub aux: Vec<AuxRecord>,
    pub sideband: Vec<SidebandRecord>,
    /// Build IDs of the file's build-id table, by path.
    pub build_ids: Arc<PathTable<BuildId>>,
    /// Whether the HEADER_AUXTRACE feature holds an index in perf's own
    /// layout (simpleperf writes the entries without perf's count word, and
    /// perf then reads the trace as it arrives, assuming frame-formatted
    /// trace).
    pub perf_auxtrace_index: bool,
    /// simpleperf's meta information (`key` -> `value`), when present.
    pub simpleperf_meta: HashMap<String, String>,
    /// The recording machine's kernel release (HEADER_OSRELEASE).
    pub os_release: Option<String>,
    /// `config` of the first dynamic-PMU event (the cs_etm event): its
    /// `ETM_OPT_TS` bit says whether the trace carries timestamps.
    pub etm_config: Option<u64>,
    /// simpleperf's FEAT_FILE / FEAT_FILE2 entries, by path: what it read
    /// of each binary on the device.
    pub simpleperf_files: Arc<PathTable<SimpleperfFile>>,
}

/// A binary as simpleperf described it on the device (FEAT_FILE2): the
/// lowest executable segment's address and where it starts (file offset
/// for an ELF file, offset in the module's memory for a kernel module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimpleperfFile {
    pub kind: SimpleperfDso,
    pub min_vaddr: u64,
    pub offset_of_min_vaddr: u64,
}

/// simpleperf's `DsoType` of a FEAT_FILE entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimpleperfDso {
    Kernel,
    KernelModule,
    Elf,
    Other,
}

impl SimpleperfDso {
    fn of(t: u64) -> Self {
        match t {
            0 => SimpleperfDso::Kernel,
            1 => SimpleperfDso::KernelModule,
            2 => SimpleperfDso::Elf,
            _ => SimpleperfDso::Other,
        }
    }
}

/// Values by path, as a feature section lists them (the build-ID table,
/// simpleperf's file table): one buffer for all the paths and a sorted
/// hash index, instead of a string allocation and a hash-map entry per
/// path. A recording names a few hundred binaries and a run looks up the
/// few its mappings use, so the table is built for reading it once.
#[derive(Debug, Clone)]
pub struct PathTable<V> {
    /// The paths, one after the other (invalid UTF-8 replaced).
    names: Vec<u8>,
    /// (start of the path in `names`, its length, value), in table order.
    items: Vec<(u32, u32, V)>,
    /// (hash of the path, item), sorted.
    index: Vec<(u64, u32)>,
    /// Distinct paths.
    distinct: usize,
}

impl<V> Default for PathTable<V> {
    fn default() -> Self {
        PathTable { names: Vec::new(), items: Vec::new(), index: Vec::new(), distinct: 0 }
    }
}

fn path_hash(p: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(p);
    h.finish()
}

impl<V> PathTable<V> {
    fn with_capacity(n: usize, name_bytes: usize) -> Self {
        PathTable { names: Vec::with_capacity(name_bytes), items: Vec::with_capacity(n), index: Vec::new(), distinct: 0 }
    }

    /// Add `path` (bytes as [`text`] takes them); [`PathTable::seal`]
    /// before looking up.
    fn push(&mut self, path: &[u8], v: V) {
        match std::str::from_utf8(path) {
            Ok(p) => self.push_str(p, v),
            Err(_) => self.push_str(&String::from_utf8_lossy(path), v),
        }
    }

    fn push_str(&mut self, p: &str, v: V) {
        let (Ok(start), Ok(len)) = (u32::try_from(self.names.len()), u32::try_from(p.len())) else { return };
        self.names.extend_from_slice(p.as_bytes());
        self.items.push((start, len, v));
    }

    fn name(&self, i: usize) -> &[u8] {
        let (start, len, _) = self.items[i];
        self.names.get(start as usize..(start + len) as usize).unwrap_or(&[])
    }

    /// Build the index (after the last push).
    fn seal(mut self) -> Self {
        let mut index: Vec<(u64, u32)> = (0..self.items.len()).map(|i| (path_hash(self.name(i)), i as u32)).collect();
        index.sort_unstable();
        let mut distinct = 0;
        for (k, &(h, i)) in index.iter().enumerate() {
            // first of its path among the entries of the same hash
            let seen = index[..k].iter().rev().take_while(|e| e.0 == h).any(|e| self.name(e.1 as usize) == self.name(i as usize));
            if !seen {
                distinct += 1;
            }
        }
        self.index = index;
        self.distinct = distinct;
        self
    }

    /// The value of `path` (the last one the table gives for it).
    pub fn get(&self, path: &str) -> Option<&V> {
        let path = path.as_bytes();
        let h = path_hash(path);
        let from = self.index.partition_point(|e| e.0 < h);
        self.index[from..].iter().take_while(|e| e.0 == h).filter(|e| self.name(e.1 as usize) == path).last().map(|e| &self.items[e.1 as usize].2)
    }

    /// Distinct paths.
    pub fn len(&self) -> usize {
        self.distinct
    }

    pub fn is_empty(&self) -> bool {
        self.distinct == 0
    }
}

/// A build ID of the build-ID table: up to 20 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildId {
    bytes: [u8; 20],
    len: u8,
}

impl BuildId {
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// Bytes as text (invalid UTF-8 replaced, as `String::from_utf8_lossy`
/// does); valid text, the usual case, is checked by the faster validator.
fn text(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(b).into_owned(),
    }
}

/// A protobuf varint at `*at` of `b`.
fn varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= ((byte & 0x7f) as u64) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Call `f` with each field of a protobuf message: (field number,
/// varint value or 0, the bytes of a length-delimited field or none).
/// None when the message is damaged.
fn proto_fields<'a>(b: &'a [u8], mut f: impl FnMut(u64, u64, &'a [u8])) -> Option<()> {
    let mut at = 0;
    while at < b.len() {
        let key = varint(b, &mut at)?;
        match key & 7 {
            0 => {
                let v = varint(b, &mut at)?;
                f(key >> 3, v, &[]);
            }
            1 => at = at.checked_add(8).filter(|&e| e <= b.len())?,
            2 => {
                let n = usize::try_from(varint(b, &mut at)?).ok()?;
                let end = at.checked_add(n).filter(|&e| e <= b.len())?;
                f(key >> 3, 0, &b[at..end]);
                at = end;
            }
            5 => at = at.checked_add(4).filter(|&e| e <= b.len())?,
            _ => return None,
        }
    }
    Some(())
}

/// simpleperf's FEAT_FILE2 section: entries of a u32 size and a
/// `FileFeature` protobuf message (path 1, type 2, min_vaddr 3, symbols 4,
/// ELF info 6 / kernel module info 7 with the offset as field 1). Symbols
/// are skipped. A damaged entry ends the table.
pub fn parse_file2_section(sec: &[u8], e: Endianness) -> PathTable<SimpleperfFile> {
    let mut out = PathTable::with_capacity(sec.len() / 48, sec.len() / 4);
    let mut at = 0usize;
    while let Some(len) = rd_u32(sec, at, e) {
        let Some(msg) = sec.get(at + 4..(at + 4).saturating_add(len as usize)) else { break };
        at += 4 + len as usize;
        let (mut path, mut kind, mut min_vaddr, mut off) = (None, 0u64, 0u64, 0u64);
        let ok = proto_fields(msg, |n, v, bytes| match n {
            1 => path = Some(bytes),
            2 => kind = v,
            3 => min_vaddr = v,
            6 | 7 => {
                let _ = proto_fields(bytes, |n, v, _| {
                    if n == 1 {
                        off = v;
                    }
                });
            }
            _ => {}
        });
        if ok.is_none() {
            break;
        }
        if let Some(p) = path {
            out.push(p, SimpleperfFile { kind: SimpleperfDso::of(kind), min_vaddr, offset_of_min_vaddr: off });
        }
    }
    out.seal()
}

/// `ETM_OPT_TS` of the cs_etm event's config (coresight-pmu.h).
pub const ETM_OPT_TS: u32 = 28;

impl PerfData {
    /// Whether perf decodes this recording with timestamps (queues in the
    /// order of the timestamps in their trace) rather than timeless (queue
    /// after queue): the cs_etm event was recorded with timestamps on.
    pub fn timestamped(&self) -> bool {
        self.etm_config.is_some_and(|c| c & (1 << ETM_OPT_TS) != 0)
    }
}

fn rd_u16(b: &[u8], at: usize, e: Endianness) -> Option<u16> {
    let s: [u8; 2] = b.get(at..at + 2)?.try_into().ok()?;
    Some(match e {
        Endianness::LittleEndian => u16::from_le_bytes(s),
        Endianness::BigEndian => u16::from_be_bytes(s),
    })
}
fn rd_u32(b: &[u8], at: usize, e: Endianness) -> Option<u32> {
    let s: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    Some(match e {
        Endianness::LittleEndian => u32::from_le_bytes(s),
        Endianness::BigEndian => u32::from_be_bytes(s),
    })
}
pub(crate) fn rd_u64(b: &[u8], at: usize, e: Endianness) -> Option<u64> {
    let s: [u8; 8] = b.get(at..at + 8)?.try_into().ok()?;
    Some(match e {
        Endianness::LittleEndian => u64::from_le_bytes(s),
        Endianness::BigEndian => u64::from_be_bytes(s),
    })
}

const HEADER_AUXTRACE_FEATURE: u32 = 18;
/// Feature bits whose sections the header parse reads further.
const HEADER_OSRELEASE_FEATURE: u32 = linux_perf_data::Feature::OSRELEASE.0;
const HEADER_EVENT_DESC_FEATURE: u32 = linux_perf_data::Feature::EVENT_DESC.0;
const HEADER_SIMPLEPERF_META_INFO_FEATURE: u32 = linux_perf_data::Feature::SIMPLEPERF_META_INFO.0;

/// Check every size and count in the header, the feature section table
/// and the sections the perf.data crate reads while parsing them (event
/// descriptions, event types, attributes, the OS release string): the
/// crate sizes buffers from them before reading, so a damaged file could
/// make it ask for terabytes, which ends the process instead of giving an
/// error. Each must fit in the file (or its section); the error names
/// the section and its offset.
fn check_crate_sizes(b: &[u8], e: Endianness) -> Result<(), PerfError> {
    let len = b.len() as u64;
    let u64_at = |at: u64| usize::try_from(at).ok().and_then(|at| rd_u64(b, at, e));
    let bad = |what: &str, offset: u64, msg: String| PerfError::Format { what: what.into(), offset, msg };
    // (offset, size) of a section, which must lie inside the file
    let section = |what: &str, at: u64| -> Result<(u64, u64), PerfError> {
        let (Some(off), Some(size)) = (u64_at(at), u64_at(at + 8)) else {
            return Err(bad(what, at, "the section table is cut short by the end of the file".into()));
        };
        if off.checked_add(size).is_none_or(|end| end > len) {
            return Err(bad(what, off, format!("section of {size:#x} bytes runs past the end of the file ({len:#x} bytes)")));
        }
        Ok((off, size))
    };
    let attr_size = u64_at(16).unwrap_or(0);
    let (attrs_off, attrs_size) = section("attribute section", 24)?;
    let (data_off, data_size) = section("data section", 40)?;
    let (types_off, types_size) = section("event types section", 56)?;
    // the feature sections' table follows the data section, one entry per
    // feature bit set
    let mut features = Vec::new();
    for word in 0..4u64 {
        let bits = u64_at(72 + 8 * word).unwrap_or(0);
        for bit in 0..64 {
            if bits & (1 << bit) != 0 {
                features.push((word * 64 + bit) as u32);
            }
        }
    }
    let table = data_off.saturating_add(data_size);
    let mut sections = Vec::new();
    for (k, f) in features.iter().enumerate() {
        let at = table.saturating_add(16 * k as u64);
        sections.push((*f, section(&format!("feature section {f}"), at)?));
    }
    let find = |f: u32| sections.iter().find(|(g, _)| *g == f).map(|(_, s)| *s);
    check_feature_sections(|f| find(f).map(|(off, size)| (off, &b[off as usize..(off + size) as usize])), e)?;
    if find(HEADER_EVENT_DESC_FEATURE).is_some() {
        // (the attributes come from the event descriptions)
    } else if types_size != 0 {
        // per event type: the attribute, then the (offset, size) of its ids
        walk_attr_entries(b, types_off, types_size, attr_size, attr_size.saturating_add(16), e, |at| section("event type ids", at).map(|_| ()))?;
    } else if find(HEADER_SIMPLEPERF_META_INFO_FEATURE).is_some() && attr_size >= 16 {
        // simpleperf: the (offset, size) of an attribute's ids ends it
        walk_attr_entries(b, attrs_off, attrs_size, attr_size - 16, attr_size, e, |at| section("attribute ids", at).map(|_| ()))?;
    } else if attrs_size != 0 && attr_size == 0 {
        return Err(bad("file header", 16, "attribute size 0 with an attribute section".into()));
    }
    Ok(())
}

/// The bytes the perf.data crate reads of an attribute whose `size` field
/// is `size`: the fields of the largest attribute version it fills, all of
/// them past the latest.
fn crate_attr_read(size: u32) -> u64 {
    const VERSIONS: [u32; 8] = [64, 72, 80, 96, 104, 112, 120, 128];
    if size >= 128 {
        return u64::from(size);
    }
    VERSIONS.iter().rev().find(|&&v| v <= size).map_or(0, |&v| u64::from(v))
}

/// Walk the entries of a section the crate reads as attributes of
/// `attr_part` bytes each followed by an (offset, size) of their ids, as the
/// crate moves through it (an attribute whose `size` field is not that of
/// a version leaves it some bytes short of where the entry says), calling
/// `ids_at` with where it reads each ids section. Stops where the crate
/// itself stops with an error.
fn walk_attr_entries(
    b: &[u8],
    off: u64,
    size: u64,
    attr_part: u64,
    entry: u64,
    e: Endianness,
    mut ids_at: impl FnMut(u64) -> Result<(), PerfError>,
) -> Result<(), PerfError> {
    if entry == 0 {
        return Ok(());
    }
    let mut at = off;
    for _ in 0..size / entry {
        let Some(sz) = usize::try_from(at + 4).ok().and_then(|i| rd_u32(b, i, e)) else { return Ok(()) };
        if sz < 64 || u64::from(sz) > attr_part {
            // (the crate refuses it)
            return Ok(());
        }
        let ids = at + crate_attr_read(sz) + (attr_part - u64::from(sz));
        ids_at(ids)?;
        at = ids + 16;
    }
    Ok(())
}

/// The feature sections the crate reads while parsing the header, given by
/// `find` as (file offset, bytes): the OS release string, the event
/// descriptions. Their counts and lengths must fit in the section.
fn check_feature_sections<'a>(find: impl Fn(u32) -> Option<(u64, &'a [u8])>, e: Endianness) -> Result<(), PerfError> {
    let bad = |what: &str, offset: u64, msg: String| PerfError::Format { what: what.into(), offset, msg };
    if let Some((off, sec)) = find(HEADER_OSRELEASE_FEATURE) {
        // a string: u32 length, then the bytes
        let size = sec.len() as u64;
        if size >= 4 && u64::from(rd_u32(sec, 0, e).unwrap_or(0)) > size - 4 {
            return Err(bad("OS release feature section", off, "string longer than its section".into()));
        }
    }
    if let Some((off, sec)) = find(HEADER_EVENT_DESC_FEATURE) {
        // u32 count, u32 attribute size; per event: the attribute, u32 id
        // count, a string (u32 length, bytes), the ids (u64 each)
        let what = "event description feature section";
        let size = sec.len() as u64;
        let u32_in = |at: u64| usize::try_from(at).ok().and_then(|i| rd_u32(sec, i, e));
        let (Some(nr), Some(a_size)) = (u32_in(0), u32_in(4)) else { return Ok(()) };
        let too_many = || bad(what, off, format!("{nr} events do not fit in {size:#x} bytes"));
        // (the crate sizes a vector for `nr` events before it reads one:
        // each takes at least its id count and string length)
        if u64::from(nr).saturating_mul(8) > size {
            return Err(too_many());
        }
        let mut at = 8u64;
        for _ in 0..nr {
            // the attribute, as the crate reads it
            let Some(sz) = u32_in(at + 4) else { return Err(too_many()) };
            if sz < 64 || sz > a_size {
                // (the crate refuses it)
                return Ok(());
            }
            at = at + crate_attr_read(sz) + u64::from(a_size - sz);
            let Some(nr_ids) = u32_in(at).filter(|_| at + 4 <= size) else { return Err(too_many()) };
            at += 4;
            let Some(s_len) = u32_in(at).filter(|_| at + 4 <= size) else { return Err(too_many()) };
            at = at + 4 + u64::from(s_len);
            at = at.saturating_add(8 * u64::from(nr_ids));
            if at > size {
                return Err(too_many());
            }
        }
    }
    Ok(())
}

/// [`check_feature_sections`] for a pipe-mode stream: the feature records
/// before its first event, which the crate reads as the header.
fn check_pipe_features(b: &[u8], e: Endianness) -> Result<(), PerfError> {
    let mut feats: Vec<(u32, u64, &[u8])> = Vec::new();
    let mut at = 16usize;
    while let (Some(t), Some(n)) = (rd_u32(b, at, e), rd_u16(b, at + 6, e)) {
        let n = n as usize;
        if n < 8 || at + n > b.len() || !matches!(t, 64 | 80) {
            break;
        }
        if t == 80 && n >= 16 {
            if let Some(f) = rd_u64(b, at + 8, e) {
                feats.push((f as u32, at as u64 + 16, &b[at + 16..at + n]));
            }
        }
        at += n;
    }
    // (the crate keeps the last record of a feature)
    check_feature_sections(|f| feats.iter().rev().find(|(g, _, _)| *g == f).map(|(_, off, s)| (*off, *s)), e)
}

impl PerfData {
    /// Read and check `path`. The file is read into a buffer (sized from
    /// its length), not mapped: a mapping would need `unsafe` here, and a
    /// file cut by another process during the decode would then kill the
    /// process with SIGBUS instead of giving an error.
    pub fn open(path: &std::path::Path) -> Result<PerfData, PerfError> {
        if path.is_dir() {
            let what = if path.join("data").is_file() { "a perf.data directory (perf record --threads), which holds no CoreSight trace: perf refuses AUX area tracing with --threads; record without it" } else { "a directory, not a perf.data file" };
            return Err(PerfError::Io(format!("{}: {}", path.display(), what)));
        }
        let bytes = std::fs::read(path).map_err(|e| PerfError::Io(format!("{}: {}", path.display(), e)))?;
        Self::from_bytes(bytes)
    }

    pub fn from_bytes(mut bytes: Vec<u8>) -> Result<PerfData, PerfError> {
        let header_err = |msg: String| PerfError::Format { what: "file header".into(), offset: 0, msg };
        let endian = match bytes.get(0..8) {
            Some(b"PERFILE2") => Endianness::LittleEndian,
            Some(b"2ELIFREP") => Endianness::BigEndian,
            _ => return Err(header_err("not a perf.data file (no PERFILE2 magic)".into())),
        };
        // a pipe-mode stream (`perf record -o -`) has a 16-byte header, then
        // records to the end: the attributes and features first, as records
        let pipe = rd_u64(&bytes, 8, endian) == Some(16);
        if !pipe && bytes.len() < 104 {
            return Err(header_err(format!("file is {} bytes, shorter than a perf.data header (104)", bytes.len())));
        }
        let u64_at = |at: usize| rd_u64(&bytes, at, endian).unwrap_or(0);
        let file_len = bytes.len() as u64;
        let (data_offset, data_size) = if pipe { (16, file_len - 16) } else { (u64_at(40), u64_at(48)) };
        if data_offset > file_len {
            return Err(header_err(format!("data section offset {:#x} is past the end of the file ({:#x} bytes)", data_offset, file_len)));
        }
        // Compressed kernel records (`perf record -z`): the data section is
        // read with them decompressed in their places, from a copy after
        // the file's bytes (offsets in it are past the file's end).
        let mut segments = Vec::new();
        let (walk_offset, walk_size) = match decompress_data(&bytes, data_offset, data_size, endian)? {
            Some((data, segs)) => {
                let at = bytes.len() as u64;
                let n = data.len() as u64;
                bytes.extend_from_slice(&data);
                segments = segs.into_iter().map(|s| Segment { virt: s.virt + at, ..s }).collect();
                (at, n)
            }
            None => (data_offset, data_size),
        };
        // Walk the data section first: it names the first broken record of
        // a truncated or damaged file.
        let mut pd = PerfData {
            endian,
            pipe,
            data_offset: walk_offset,
            data_size: walk_size,
            auxtrace_info: None,
            auxtrace: Vec::new(),
            aux: Vec::new(),
            sideband: Vec::new(),
            build_ids: Arc::default(),
            perf_auxtrace_index: false,
            simpleperf_meta: HashMap::new(),
            os_release: None,
            etm_config: None,
            simpleperf_files: Arc::default(),
            bytes: Vec::new(),
            segments,
        };
        let (raw, build_id_recs) = pd.walk_records(&bytes)?;
        // sized once: growing these vectors would touch fresh pages for
        // each copy (a page fault each, in a run this short)
        pd.sideband.reserve(raw.len());
        if data_offset.saturating_add(data_size) > file_len {
            return Err(PerfError::Format {
                what: "data section".into(),
                offset: data_offset,
                msg: format!(
                    "ends at {:#x}, past the end of the file ({:#x} bytes): the file is truncated",
                    data_offset + data_size,
                    file_len
                ),
            });
        }
        let reader = if pipe {
            // (the attribute and feature records before the first event)
            check_pipe_features(&bytes, endian)?;
            PerfFileReader::parse_pipe(Cursor::new(&bytes[..]))
                .map_err(|e| PerfError::Format { what: "pipe-mode attribute and feature records".into(), offset: 16, msg: e.to_string() })?
        } else {
            check_crate_sizes(&bytes, endian)?;
            PerfFileReader::parse_file(Cursor::new(&bytes[..]))
                .map_err(|e| PerfError::Format { what: "file header / feature sections".into(), offset: 0, msg: e.to_string() })?
        };
        let perf_file = reader.perf_file;
        let attrs = perf_file.event_attributes();
        pd.etm_config = attrs.iter().find_map(|a| match a.attributes().type_ {
            linux_perf_data::linux_perf_event_reader::PerfEventType::DynamicPmu(_, config, _, _) => Some(config),
            _ => None,
        });
        let parse_infos: Vec<RecordParseInfo> = attrs.iter().map(|a| RecordParseInfo::new(a.attributes(), endian)).collect();
        let id_to_attr: HashMap<u64, usize> =
            attrs.iter().enumerate().flat_map(|(i, a)| a.ids().iter().map(move |id| (*id, i))).collect();
        // the build-id table: the feature section, and build-id records
        // (pipe mode), entries of the same form
        let mut ids = perf_file.feature_section_data(linux_perf_data::Feature::BUILD_ID).map(|s| s.to_vec()).unwrap_or_default();
        for r in &build_id_recs {
            ids.extend_from_slice(&bytes[r.offset as usize..(r.offset + r.size) as usize]);
        }
        if !ids.is_empty() {
            pd.build_ids = Arc::new(parse_build_id_section(&ids, endian));
        }
        if let Ok(Some(r)) = perf_file.os_release() {
            pd.os_release = Some(r.to_string());
        }
        if let Ok(Some(m)) = perf_file.simpleperf_meta_info() {
            pd.simpleperf_meta = m.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        }
        // FEAT_FILE2 read here (its symbol tables are skipped, not
        // decoded); the legacy FEAT_FILE through the crate
        if let Some(sec) = perf_file.feature_section_data(linux_perf_data::Feature::SIMPLEPERF_FILE2) {
            pd.simpleperf_files = Arc::new(parse_file2_section(sec, endian));
        } else if let Ok(Some(files)) = perf_file.simpleperf_symbol_tables() {
            use linux_perf_data::SimpleperfTypeSpecificInfo as T;
            let mut t = PathTable::default();
            for f in files {
                let offset_of_min_vaddr = match &f.type_specific_msg {
                    Some(T::ElfFile(e)) => e.file_offset_of_min_vaddr,
                    Some(T::KernelModule(k)) => k.memory_offset_of_min_vaddr,
                    _ => 0,
                };
                t.push_str(&f.path, SimpleperfFile { kind: SimpleperfDso::of(f.r#type as u64), min_vaddr: f.min_vaddr, offset_of_min_vaddr });
            }
            pd.simpleperf_files = Arc::new(t.seal());
        }
        if let Some(sec) = perf_file.feature_section_data(linux_perf_data::Feature(HEADER_AUXTRACE_FEATURE)) {
            pd.perf_auxtrace_index = perf_index_layout(sec, endian);
        }
        drop(perf_file);

        // Second pass: parse the kernel records' bodies with their attribute.
        for r in raw {
            let body = &bytes[r.offset as usize + 8..r.offset as usize + r.size as usize];
            let rt = RecordType(r.rtype);
            let pi = pick_parse_info(&parse_infos, &id_to_attr, rt, body, endian);
            let rec = RawEventRecord::new(rt, r.misc, RawData::Single(body), pi);
            let bad = |e: std::io::Error| PerfError::Format { what: record_name(r.rtype), offset: pd.file_offset(r.offset), msg: format!("malformed record body: {}", e) };
            match r.rtype {
                PERF_RECORD_AUX => {
                    let (Some(ao), Some(asz), Some(fl)) = (rd_u64(body, 0, endian), rd_u64(body, 8, endian), rd_u64(body, 16, endian)) else {
                        return Err(PerfError::Format { what: record_name(r.rtype), offset: pd.file_offset(r.offset), msg: format!("body of {} bytes is too short", body.len()) });
                    };
                    let common = SampleId::from(rec.common_data().unwrap_or_default());
                    pd.aux.push(AuxRecord { file_offset: pd.file_offset(r.offset), aux_offset: ao, aux_size: asz, flags: fl, common });
                }
                PERF_RECORD_ITRACE_START => {
                    let (Some(pid), Some(tid)) = (rd_u32(body, 0, endian), rd_u32(body, 4, endian)) else {
                        return Err(PerfError::Format { what: record_name(r.rtype), offset: pd.file_offset(r.offset), msg: "body too short".into() });
                    };
                    let common = SampleId::from(rec.common_data().unwrap_or_default());
                    pd.sideband.push(SidebandRecord { file_offset: pd.file_offset(r.offset), common, event: Sideband::ItraceStart { pid: pid as i32, tid: tid as i32 } });
                }
                _ => {
                    // The crate asserts on an MMAP2 build ID longer than 20
                    // bytes: refuse such a record here instead (its length
                    // byte follows pid, tid, address, length and offset; a
                    // body too short for it fails in the crate's parse)
                    if r.rtype == 10 && r.misc & PERF_RECORD_MISC_MMAP_BUILD_ID != 0 && body.get(32).is_some_and(|&n| n > 20) {
                        return Err(PerfError::Format { what: record_name(r.rtype), offset: pd.file_offset(r.offset), msg: "build ID longer than 20 bytes".into() });
                    }
                    let ev = match rec.parse().map_err(bad)? {
                        EventRecord::Mmap(m) => Some(Sideband::Mmap(MmapEvent {
                            pid: m.pid,
                            tid: m.tid,
                            start: m.address,
                            len: m.length,
                            pgoff: m.page_offset,
                            path: text(&m.path.as_slice()),
                            build_id: None,
                            exec: m.is_executable,
                            kernel: matches!(m.cpu_mode, linux_perf_data::linux_perf_event_reader::CpuMode::Kernel),
                        })),
                        EventRecord::Mmap2(m) => {
                            use linux_perf_data::linux_perf_event_reader::Mmap2FileId;
                            let build_id = match &m.file_id {
                                Mmap2FileId::BuildId(b) => Some(b.clone()),
                                _ => None,
                            };
                            Some(Sideband::Mmap(MmapEvent {
                                pid: m.pid,
                                tid: m.tid,
                                start: m.address,
                                len: m.length,
                                pgoff: m.page_offset,
                                path: text(&m.path.as_slice()),
                                build_id,
                                exec: m.protection & 4 != 0,
                                kernel: matches!(m.cpu_mode, linux_perf_data::linux_perf_event_reader::CpuMode::Kernel),
                            }))
                        }
                        EventRecord::Comm(c) => Some(Sideband::Comm {
                            pid: c.pid,
                            tid: c.tid,
                            name: text(&c.name.as_slice()),
                            exec: c.is_execve,
                        }),
                        EventRecord::ContextSwitch(s) => {
                            use linux_perf_data::linux_perf_event_reader::ContextSwitchRecord as C;
                            Some(match s {
                                C::In { prev_pid, prev_tid } => Sideband::Switch { out: false, next_prev: prev_pid.zip(prev_tid) },
                                C::Out { next_pid, next_tid, .. } => Sideband::Switch { out: true, next_prev: next_pid.zip(next_tid) },
                            })
                        }
                        EventRecord::Fork(f) => Some(Sideband::Fork { pid: f.pid, ppid: f.ppid, tid: f.tid }),
                        EventRecord::Exit(f) => Some(Sideband::Exit { pid: f.pid, tid: f.tid }),
                        _ => None,
                    };
                    if let Some(event) = ev {
                        let common = SampleId::from(rec.common_data().unwrap_or_default());
                        pd.sideband.push(SidebandRecord { file_offset: pd.file_offset(r.offset), common, event });
                    }
                }
            }
        }
        pd.bytes = bytes;
        Ok(pd)
    }

    /// Walk the data section: check every record's size, keep the
    /// AUXTRACE_INFO and AUXTRACE records, return the kernel records to
    /// parse once the attributes are known.
    fn walk_records(&mut self, bytes: &[u8]) -> Result<(Vec<RawRec>, Vec<RawRec>), PerfError> {
        let e = self.endian;
        let file_len = bytes.len() as u64;
        let end = self.data_offset.saturating_add(self.data_size).min(file_len);
        let mut off = self.data_offset;
        let mut out = Vec::new();
        let mut build_ids = Vec::new();
        while off < end {
            let o = off as usize;
            let real_off = self.file_offset(off);
            let trunc = |what: String, msg: String| PerfError::Format { what, offset: real_off, msg };
            if end - off < 8 {
                return Err(trunc("record header".into(), format!("only {} bytes left in the data section: the file is truncated", end - off)));
            }
            let rtype = rd_u32(bytes, o, e).unwrap_or(0);
            let misc = rd_u16(bytes, o + 4, e).unwrap_or(0);
            let size = rd_u16(bytes, o + 6, e).unwrap_or(0) as u64;
            if size < 8 {
                return Err(trunc(record_name(rtype), format!("record size {} is smaller than its header", size)));
            }
            if off + size > end {
                return Err(trunc(
                    record_name(rtype),
                    format!("record of {:#x} bytes runs past the end of the data ({:#x}): the file is truncated", size, end),
                ));
            }
            let body = &bytes[o + 8..o + size as usize];
            let mut next = off + size;
            match rtype {
                PERF_RECORD_AUXTRACE_INFO => {
                    let t = rd_u32(body, 0, e).ok_or_else(|| trunc(record_name(rtype), "body too short".into()))?;
                    let words: Vec<u64> = (8..body.len()).step_by(8).filter_map(|i| rd_u64(body, i, e)).collect();
                    if self.auxtrace_info.is_none() {
                        self.auxtrace_info = Some((off, t, words));
                    }
                }
                PERF_RECORD_AUXTRACE => {
                    let f = |i: usize| rd_u64(body, i, e);
                    let (Some(sz), Some(ofs), Some(rf), Some(idx), Some(tid), Some(cpu)) =
                        (f(0), f(8), f(16), rd_u32(body, 24, e), rd_u32(body, 28, e), rd_u32(body, 32, e))
                    else {
                        return Err(trunc(record_name(rtype), format!("body of {} bytes is too short", body.len())));
                    };
                    if sz > end - next {
                        return Err(trunc(
                            record_name(rtype),
                            format!(
                                "{:#x} bytes of trace data, only {:#x} left in the file: the file is truncated",
                                sz,
                                end - next
                            ),
                        ));
                    }
                    self.auxtrace.push(AuxtraceRecord {
                        file_offset: self.file_offset(off),
                        data_start: next as usize,
                        size: sz,
                        offset: ofs,
                        reference: rf,
                        idx,
                        tid: tid as i32,
                        cpu: cpu as i32,
                    });
                    next += sz;
                }
                PERF_RECORD_HEADER_TRACING_DATA => {
                    // (the data follows the record, its size in the body)
                    let sz = rd_u32(body, 0, e).ok_or_else(|| trunc(record_name(rtype), "body too short".into()))? as u64;
                    if sz > end - next {
                        return Err(trunc(record_name(rtype), format!("{:#x} bytes of tracing data, only {:#x} left: the file is truncated", sz, end - next)));
                    }
                    next += sz;
                }
                PERF_RECORD_HEADER_BUILD_ID => build_ids.push(RawRec { offset: off, rtype, misc, size }),
                t if t < 64 => out.push(RawRec { offset: off, rtype, misc, size }),
                _ => {}
            }
            off = next;
        }
        Ok((out, build_ids))
    }

    /// The file offset of the record read at `off`: itself, but in data
    /// decompressed from compressed records (read from after the file's
    /// bytes), the offset of the record in the file, or of the compressed
    /// record it came from.
    fn file_offset(&self, off: u64) -> u64 {
        let i = self.segments.partition_point(|s| s.virt <= off);
        match i.checked_sub(1).map(|i| self.segments[i]) {
            Some(s) if s.inside => s.real,
            Some(s) => s.real + (off - s.virt),
            None => off,
        }
    }

    /// The trace bytes of an AUXTRACE record.
    pub fn aux_data(&self, r: &AuxtraceRecord) -> &[u8] {
        &self.bytes[r.data_start..r.data_start + r.size as usize]
    }
}

/// Most bytes the compressed records of one file may decompress to.
const MAX_DECOMPRESSED: usize = 1 << 30;

/// The data section `[offset, offset + size)` with its compressed records
/// (`PERF_RECORD_COMPRESSED`, `_COMPRESSED2`) replaced by the records they
/// hold, as perf reads them: one zstd stream across the compressed
/// records, each record taken whole once decompressed (a record split
/// between two compressed records follows the records in between, as perf
/// delivers it). None when there is no compressed record. Errors name the
/// compressed record that fails; the walk of the result finds any other
/// damage.
fn decompress_data(bytes: &[u8], offset: u64, size: u64, e: Endianness) -> Result<Option<(Vec<u8>, Vec<Segment>)>, PerfError> {
    let end = offset.saturating_add(size).min(bytes.len() as u64) as usize;
    let mut at = offset as usize;
    let mut out: Vec<u8> = Vec::new();
    let mut segs: Vec<Segment> = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut decoder: Option<zstd::stream::raw::Decoder<'static>> = None;
    let mut chunk = vec![0u8; 128 * 1024];
    // the last compressed record: offset and type
    let mut last = (at, PERF_RECORD_COMPRESSED);
    while at + 8 <= end {
        let rtype = rd_u32(bytes, at, e).unwrap_or(0);
        let size = rd_u16(bytes, at + 6, e).unwrap_or(0) as usize;
        if size < 8 || at + size > end {
            break; // (the walk reports it)
        }
        let mut next = at + size;
        if rtype == PERF_RECORD_AUXTRACE {
            next = next.saturating_add(rd_u64(bytes, at + 8, e).unwrap_or(0) as usize).min(end);
        }
        if rtype != PERF_RECORD_COMPRESSED && rtype != PERF_RECORD_COMPRESSED2 {
            if decoder.is_some() {
                copy_segment(&mut out, &mut segs, bytes, at, next);
            }
            at = next;
            continue;
        }
        let bad = |msg: String| PerfError::Format { what: record_name(rtype), offset: at as u64, msg };
        if decoder.is_none() {
            // the records before the first compressed one, as they are
            copy_segment(&mut out, &mut segs, bytes, offset as usize, at);
            decoder = Some(zstd::stream::raw::Decoder::new().map_err(|err| bad(format!("zstd: {}", err)))?);
        }
        let body = &bytes[at + 8..next];
        let payload = if rtype == PERF_RECORD_COMPRESSED2 {
            let n = rd_u64(body, 0, e).ok_or_else(|| bad("body too short".into()))?;
            body.get(8..).and_then(|b| b.get(..usize::try_from(n).ok()?)).ok_or_else(|| bad(format!("data size {:#x} runs past the record", n)))?
        } else {
            body
        };
        let dec = decoder.as_mut().expect("made above");
        let mut input = zstd::stream::raw::InBuffer::around(payload);
        loop {
            use zstd::stream::raw::Operation;
            let mut output = zstd::stream::raw::OutBuffer::around(&mut chunk[..]);
            dec.run(&mut input, &mut output).map_err(|err| bad(format!("zstd data: {}", err)))?;
            let got = output.pos();
            pending.extend_from_slice(&chunk[..got]);
            if out.len() + pending.len() > MAX_DECOMPRESSED {
                return Err(bad(format!("decompresses to more than {} bytes", MAX_DECOMPRESSED)));
            }
            if input.pos() == payload.len() && got < chunk.len() {
                break;
            }
        }
        // the whole records decompressed so far go out in the data's order
        let mut k = 0;
        while pending.len() - k >= 8 {
            let n = rd_u16(&pending, k + 6, e).unwrap_or(0) as usize;
            if n < 8 {
                return Err(bad(format!("decompressed record of size {} is smaller than its header", n)));
            }
            if pending.len() - k < n {
                break;
            }
            k += n;
        }
        segs.push(Segment { virt: out.len() as u64, real: at as u64, inside: true });
        out.extend_from_slice(&pending[..k]);
        pending.drain(..k);
        last = (at, rtype);
        at = next;
    }
    if decoder.is_none() {
        return Ok(None);
    }
    if !pending.is_empty() {
        return Err(PerfError::Format {
            what: record_name(last.1),
            offset: last.0 as u64,
            msg: format!("the compressed records end inside a record ({} bytes of it)", pending.len()),
        });
    }
    // what is left past the last whole record (the walk reports it)
    copy_segment(&mut out, &mut segs, bytes, at, end);
    Ok(Some((out, segs)))
}

/// A stretch of a data section read with its compressed records
/// decompressed: from `virt` (its offset in that data) up to the next
/// stretch, bytes of the file from `real`, or (`inside`) records
/// decompressed from the compressed record at `real`.
#[derive(Clone, Copy, Debug)]
struct Segment {
    virt: u64,
    real: u64,
    inside: bool,
}

/// Copy the file's `bytes[from..to]` to `out`, noting where they came from.
fn copy_segment(out: &mut Vec<u8>, segs: &mut Vec<Segment>, bytes: &[u8], from: usize, to: usize) {
    if from < to {
        segs.push(Segment { virt: out.len() as u64, real: from as u64, inside: false });
        out.extend_from_slice(&bytes[from..to]);
    }
}

struct RawRec {
    offset: u64,
    rtype: u32,
    misc: u16,
    size: u64,
}

/// The attribute's parse info for a record: the only one, or the one whose
/// ID the record carries (IDENTIFIER), or the first.
fn pick_parse_info(
    infos: &[RecordParseInfo],
    id_to_attr: &HashMap<u64, usize>,
    rt: RecordType,
    body: &[u8],
    e: Endianness,
) -> RecordParseInfo {
    let first = infos[0];
    if infos.len() == 1 || infos.iter().all(|p| *p == first) {
        return first;
    }
    use linux_perf_data::linux_perf_event_reader::SampleFormat;
    let all_ident = infos.iter().all(|p| p.sample_format.contains(SampleFormat::IDENTIFIER));
    if all_ident {
        // IDENTIFIER is the first word of a sample, the last of a
        // non-sample record's sample_id trailer.
        let id = if rt == RecordType::SAMPLE { rd_u64(body, 0, e) } else { body.len().checked_sub(8).and_then(|at| rd_u64(body, at, e)) };
        if let Some(i) = id.and_then(|id| id_to_attr.get(&id)) {
            return infos[*i];
        }
    }
    // Same id position in every attribute: look up by the first's layout.
    let rec = RawEventRecord::new(rt, 0, RawData::Single(body), first);
    if let Some(i) = rec.id().and_then(|id| id_to_attr.get(&id)) {
        return infos[*i];
    }
    first
}

/// The HEADER_BUILD_ID feature section: records of a header (8 bytes), a
/// pid (4), 24 bytes of build ID and a NUL-padded path. The ID's length is
/// byte 20 with `PERF_RECORD_MISC_BUILD_ID_SIZE`, else 20 bytes less
/// trailing all-zero 4-byte groups (simpleperf leaves bytes 20..24 unset).
/// A damaged entry ends the table.
pub fn parse_build_id_section(sec: &[u8], e: Endianness) -> PathTable<BuildId> {
    const MISC_BUILD_ID_SIZE: u16 = 1 << 15;
    // perf's entries are at least 36 bytes, and usually about 100
    let mut out = PathTable::with_capacity(sec.len() / 96, sec.len() / 2);
    let mut at = 0usize;
    while at + 36 <= sec.len() {
        let (Some(misc), Some(size)) = (rd_u16(sec, at + 4, e), rd_u16(sec, at + 6, e)) else { break };
        let size = size as usize;
        if size < 36 || at + size > sec.len() {
            break;
        }
        let id = &sec[at + 12..at + 36];
        let len = if misc & MISC_BUILD_ID_SIZE != 0 {
            (id[20] as usize).min(20)
        } else {
            let mut n = 20;
            while n >= 4 && id[n - 4..n].iter().all(|&b| b == 0) {
                n -= 4;
            }
            n
        };
        let path = &sec[at + 36..at + size];
        // up to its NUL (a word-at-a-time search)
        let path = std::ffi::CStr::from_bytes_until_nul(path).map_or(path, |c| c.to_bytes());
        let mut bytes = [0u8; 20];
        bytes[..len].copy_from_slice(&id[..len]);
        out.push(path, BuildId { bytes, len: len as u8 });
        at += size;
    }
    out.seal()
}

/// Whether a HEADER_AUXTRACE section is laid out as perf writes it: a u64
/// count, then that many (file offset, size) pairs.
fn perf_index_layout(sec: &[u8], e: Endianness) -> bool {
    let Some(nr) = rd_u64(sec, 0, e) else { return false };
    // perf reads blocks of up to 256 entries, each block with its count.
    let mut at = 0usize;
    let mut nr = nr;
    loop {
        if nr > 256 || at + 8 + nr as usize * 16 > sec.len() {
            return false;
        }
        at += 8 + nr as usize * 16;
        if at == sec.len() {
            return true;
        }
        match rd_u64(sec, at, e) {
            Some(n) => nr = n,
            None => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(misc: u16, id: &[u8], tail: &[u8], path: &str) -> Vec<u8> {
        let mut p = path.as_bytes().to_vec();
        p.resize((p.len() + 8) & !7, 0);
        let size = 8 + 4 + 24 + p.len();
        let mut v = Vec::new();
        v.extend(2u32.to_le_bytes());
        v.extend(misc.to_le_bytes());
        v.extend((size as u16).to_le_bytes());
        v.extend((-1i32).to_le_bytes());
        let mut idb = [0u8; 24];
        idb[..id.len()].copy_from_slice(id);
        idb[20..20 + tail.len()].copy_from_slice(tail);
        v.extend(idb);
        v.extend(p);
        v
    }

    #[test]
    fn build_id_table_lengths_and_damage() {
        let mut sec = entry(0, &[0x31, 0x4a, 0x4f, 0x09, 0xe2, 0xd2, 0x30, 0x5e], &[0xaa, 0xbb], "[kernel.kallsyms]");
        // explicit size (PERF_RECORD_MISC_BUILD_ID_SIZE): 6 bytes
        sec.extend(entry(1 << 15, &[1, 2, 3, 4, 5, 6, 0, 0], &[6], "/lib/a.so"));
        // 20 bytes, none trimmed
        sec.extend(entry(0, &[7; 20], &[], "/bin/b"));
        // a damaged entry (size past the end) ends the table
        let mut bad = entry(0, &[9; 20], &[], "/bin/c");
        bad[6] = 0xff;
        sec.extend(bad);
        let t = parse_build_id_section(&sec, Endianness::LittleEndian);
        assert_eq!(t.len(), 3);
        let id = |p: &str| t.get(p).map(|b| b.as_slice().to_vec());
        assert_eq!(id("[kernel.kallsyms]"), Some(vec![0x31, 0x4a, 0x4f, 0x09, 0xe2, 0xd2, 0x30, 0x5e]));
        assert_eq!(id("/lib/a.so"), Some(vec![1, 2, 3, 4, 5, 6]));
        assert_eq!(id("/bin/b"), Some(vec![7; 20]));
        assert_eq!(id("/bin/c"), None);
        assert_eq!(id("/bin"), None);
        assert!(parse_build_id_section(&sec[..20], Endianness::LittleEndian).is_empty());
    }
}

#[cfg(test)]
mod path_table_tests {
    use super::*;

    #[test]
    fn the_last_value_of_a_path_wins_as_in_a_map_and_invalid_utf8_is_replaced() {
        let mut t = PathTable::default();
        let mut m = std::collections::HashMap::new();
        // many paths, some given twice, some sharing prefixes
        for i in 0..300u32 {
            let p = format!("/system/lib{}/libx{}.so", i % 7, i % 113);
            t.push(p.as_bytes(), i);
            m.insert(p, i);
        }
        t.push(b"/bad\xff\xfe.so", 1000);
        m.insert(String::from_utf8_lossy(b"/bad\xff\xfe.so").into_owned(), 1000);
        let t = t.seal();
        assert_eq!(t.len(), m.len());
        for (p, v) in &m {
            assert_eq!(t.get(p), Some(v), "{}", p);
        }
        assert_eq!(t.get("/system/lib0/libx0.s"), None);
        assert_eq!(t.get(""), None);
        assert!(PathTable::<u32>::default().seal().is_empty());
    }
}

#[cfg(test)]
mod file2_tests {
    use super::*;

    #[test]
    fn file2_entries_without_their_symbols() {
        // path "/m.ko" (1), type 1 (2), min_vaddr 0x1234 (3), a symbol (4),
        // kernel module info {offset 0x80} (7); then an ELF entry; then a
        // damaged one
        let mut m1 = vec![0x0a, 5];
        m1.extend(b"/m.ko");
        m1.extend([0x10, 1, 0x18, 0xb4, 0x24, 0x22, 3, 0x08, 0x01, 0x10, 0x3a, 3, 0x08, 0x80, 0x01]);
        let mut m2 = vec![0x0a, 2, b'/', b'e', 0x10, 2, 0x18, 0x80, 0x20, 0x32, 2, 0x08, 0x10];
        m2.push(0x0d); // a fixed32 field
        m2.extend([0, 0, 0, 0]);
        let mut sec = Vec::new();
        for m in [&m1, &m2] {
            sec.extend((m.len() as u32).to_le_bytes());
            sec.extend(m.iter());
        }
        sec.extend(9u32.to_le_bytes());
        sec.extend([0x0a, 20, 1]);
        let t = parse_file2_section(&sec, Endianness::LittleEndian);
        assert_eq!(t.len(), 2);
        assert_eq!(t.get("/x"), None);
        assert_eq!(*t.get("/m.ko").unwrap(), SimpleperfFile { kind: SimpleperfDso::KernelModule, min_vaddr: 0x1234, offset_of_min_vaddr: 0x80 });
        assert_eq!(*t.get("/e").unwrap(), SimpleperfFile { kind: SimpleperfDso::Elf, min_vaddr: 0x1000, offset_of_min_vaddr: 0x10 });
    }
}
