//! The safe Rust API: build a decoder, give it memory images and trace,
//! and take the decoded elements as an iterator or through a callback.
//!
//! ```
//! use opencsd_c_api::api::{Decoder, ElementKind, MemoryImage, Protocol};
//!
//! // A64 code at 0x1000: NOP; NOP; B 0x1000
//! let code: Vec<u8> = [0xD503201Fu32, 0xD503201F, 0x17FFFFFE].iter().flat_map(|w| w.to_le_bytes()).collect();
//! // ETMv4 trace of that loop (one source, no CoreSight frames):
//! // A-Sync, Trace Info, Trace On, Address+Context 0x1000 (AArch64 EL1 NS), 3 E atoms
//! let mut trace = vec![0u8; 11];
//! trace.extend([0x80, 0x01, 0x00, 0x04, 0x85, 0x00, 0x08, 0, 0, 0, 0, 0, 0, 0x31, 0xf7, 0xf7, 0xf7]);
//!
//! let regs = [("TRCIDR0", 0x28000EA1), ("TRCIDR1", 0x4100F403), ("TRCIDR2", 0x00000488),
//!             ("TRCCONFIGR", 0xC1), ("TRCTRACEIDR", 0x10)];
//! let mut decoder = Decoder::builder()
//!     .single_source()
//!     .source_from_registers(Protocol::EtmV4, "Cortex-A57", &regs)?
//!     .memory(MemoryImage::bytes(0x1000, &code))
//!     .build()?;
//!
//! let mut instructions = 0;
//! for elem in decoder.decode(&trace[..]) {
//!     if let ElementKind::InstrRange(r) = elem.kind {
//!         assert_eq!((r.start, r.end), (0x1000, 0x100c));
//!         instructions += r.instr_count;
//!     }
//! }
//! assert_eq!(instructions, 9);
//! # Ok::<(), opencsd_c_api::api::Error>(())
//! ```
#![forbid(unsafe_code)]

pub mod dstream;
pub mod element;
pub mod memory;

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::abi::gen_elem::ocsd_generic_trace_elem;
use crate::abi::*;
use crate::common::{ErrorLog, GenElemSink, OcsdError, TracePacket};
pub use crate::config::{arch_profile, ConfigError, Protocol, ProtocolConfig, RegisterSource};
use crate::dcd_tree::{DecodeTree, PacketObserver};
pub use crate::mem::elf::{ElfError, ElfFileError, ElfImage};
pub use dstream::{strip_dstream_footers, DstreamReader};
pub use element::*;
pub use memory::{AddressSpace, ContextId, MappedFile, MemoryImage, Vmid};

/// What can go wrong building or running a decoder.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{path}: {error}")]
    SourceConfig { path: String, error: ConfigError },
    #[error(transparent)]
    Elf(#[from] ElfFileError),
    #[error("{0}")]
    Memory(String),
    #[error("{0}")]
    Snapshot(String),
    #[error("{0}")]
    Usage(String),
    /// The decoder stopped on a fatal error (e.g. `-halt_err` style flags,
    /// or a source with no decoder).
    #[error("decode stopped at trace byte {index}: {message}")]
    Fatal { index: u64, message: String },
}

/// How the trace data is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// CoreSight formatted frames (ETB / ETR / TPIU buffers holding several
    /// sources): `fsyncs` when frame syncs are present (TPIU), `hsyncs` for
    /// half-word syncs; otherwise the frames are 16-byte aligned in memory.
    Formatted { fsyncs: bool, hsyncs: bool },
    /// The raw byte stream of one source (no frames).
    SingleSource,
}

impl TraceFormat {
    fn deformatter_flags(self) -> u32 {
        match self {
            TraceFormat::Formatted { fsyncs: false, hsyncs } => OCSD_DFRMTR_FRAME_MEM_ALIGN | if hsyncs { OCSD_DFRMTR_HAS_HSYNCS } else { 0 },
            TraceFormat::Formatted { fsyncs: true, hsyncs } => OCSD_DFRMTR_HAS_FSYNCS | if hsyncs { OCSD_DFRMTR_HAS_HSYNCS } else { 0 },
            TraceFormat::SingleSource => 0,
        }
    }
}

/// Builds a [`Decoder`]: see [`Decoder::builder`].
pub struct DecoderBuilder {
    format: TraceFormat,
    sources: Vec<ProtocolConfig>,
    images: Vec<MemoryImage>,
    flags: u32,
    count_packets: bool,
}

impl Default for DecoderBuilder {
    fn default() -> Self {
        DecoderBuilder {
            format: TraceFormat::Formatted { fsyncs: false, hsyncs: false },
            sources: Vec::new(),
            images: Vec::new(),
            flags: 0,
            count_packets: false,
        }
    }
}

impl DecoderBuilder {
    /// CoreSight formatted frames, 16-byte aligned (ETB / ETR dumps; the default).
    pub fn formatted(mut self) -> Self {
        self.format = TraceFormat::Formatted { fsyncs: false, hsyncs: false };
        self
    }

    /// One source's raw byte stream (no frames).
    pub fn single_source(mut self) -> Self {
        self.format = TraceFormat::SingleSource;
        self
    }

    pub fn format(mut self, format: TraceFormat) -> Self {
        self.format = format;
        self
    }

    /// Add a trace source with a ready configuration.
    pub fn source(mut self, cfg: ProtocolConfig) -> Self {
        self.sources.push(cfg);
        self
    }

    /// Add a trace source configured from its register values (names as in
    /// the Arm documentation: `TRCIDR0`, `TRCCONFIGR`, `ETMCR`, `STMTCSR`,
    /// ...; see [`Protocol::registers`]) for a core named `core`
    /// (`Cortex-A53`, `ARMv8-A`, `ARMv7-M`, ...; unused for STM / ITM).
    pub fn source_from_registers<R: RegisterSource + ?Sized>(self, protocol: Protocol, core: &str, regs: &R) -> Result<Self, Error> {
        let cfg = config_from_registers(protocol, core, regs)?;
        Ok(self.source(cfg))
    }

    /// Add target memory.
    pub fn memory(mut self, image: MemoryImage) -> Self {
        self.images.push(image);
        self
    }

    /// Decoder operation flags (`OCSD_OPFLG_*`, `ETM4_OPFLG_*`, ...).
    pub fn decoder_flags(mut self, flags: u32) -> Self {
        self.flags = flags;
        self
    }

    /// Count packets for [`Decoder::packets`] (watches every packet).
    pub fn count_packets(mut self, on: bool) -> Self {
        self.count_packets = on;
        self
    }

    pub fn build(self) -> Result<Decoder, Error> {
        if self.sources.is_empty() {
            return Err(Error::Usage("no trace source configured".into()));
        }
        let formatted = self.format != TraceFormat::SingleSource;
        if !formatted && self.sources.len() > 1 {
            return Err(Error::Usage("a single-source trace takes exactly one source".into()));
        }
        for s in &self.sources {
            s.validate(formatted)?;
        }
        let log = Rc::new(RefCell::new(Messages::default()));
        let packets = Rc::new(Cell::new(0u64));
        let recipe = Recipe { format: self.format, sources: self.sources, flags: self.flags };
        let mut tree = recipe.tree(Box::new(SharedLog(log.clone())), self.count_packets.then_some(&packets))?;
        let queue = Rc::new(RefCell::new(ElementQueue::default()));
        tree.set_elem_sink(Some(Box::new(QueueSink(queue.clone()))));
        let mut dec = Decoder { tree, queue, log, packets: self.count_packets.then_some(packets), sessions: 0, recipe, files: Vec::new() };
        for img in self.images {
            dec.add_memory(img)?;
        }
        Ok(dec)
    }
}

/// What a decode tree of a [`Decoder`] is made from (kept to make more of
/// them for [`Decoder::decode_parallel`]).
#[derive(Clone)]
struct Recipe {
    format: TraceFormat,
    sources: Vec<ProtocolConfig>,
    flags: u32,
}

impl Recipe {
    /// A tree with the decoders (no element sink, no memory).
    fn tree(&self, log: Box<dyn ErrorLog>, packets: Option<&Rc<Cell<u64>>>) -> Result<DecodeTree, Error> {
        self.tree_for(log, packets, None)
    }

    /// A tree with the decoders (no element sink, no memory); with
    /// `slot`, only the decoder the tree keeps in that slot (a parallel
    /// decode's segment uses one stack of its tree).
    fn tree_for(&self, log: Box<dyn ErrorLog>, packets: Option<&Rc<Cell<u64>>>, slot: Option<u8>) -> Result<DecodeTree, Error> {
        let formatted = self.format != TraceFormat::SingleSource;
        let src = if formatted { OCSD_TRC_SRC_FRAME_FORMATTED } else { OCSD_TRC_SRC_SINGLE };
        let mut tree = DecodeTree::new(src, self.format.deformatter_flags(), log)
            .map_err(|e| Error::Usage(format!("cannot create decode tree: {}", err_name(e))))?;
        let create = OCSD_CREATE_FLG_FULL_DECODER | self.flags;
        // (the tree's slot of a trace ID: the ID, or 0 for single-source trace)
        let wanted = |id: u8| slot.is_none_or(|w| w == if formatted { id } else { 0 });
        for s in self.sources.iter().filter(|s| wanted(s.trace_id())) {
            let mut d = s.create_decoder(create).map_err(|e| Error::Usage(format!("cannot create {} decoder: {}", s.decoder_name(), err_name(e))))?;
            d.set_dec_op_flags(self.flags & !(OCSD_CREATE_FLG_PACKET_PROC | OCSD_CREATE_FLG_FULL_DECODER | OCSD_CREATE_FLG_INST_ID));
            if let Some(p) = packets {
                d.set_monitor(Some(Box::new(PacketCounter(p.clone()))));
            }
            tree.add_decoder(d).map_err(|e| match e {
                OCSD_ERR_ATTACH_TOO_MANY => Error::Usage(format!("two sources use trace ID 0x{:x}", s.trace_id())),
                e => Error::Usage(format!("cannot attach {} decoder for trace ID 0x{:x}: {}", s.decoder_name(), s.trace_id(), err_name(e))),
            })?;
        }
        Ok(tree)
    }
}

/// The configuration of `protocol` from register values, for `core`.
pub fn config_from_registers<R: RegisterSource + ?Sized>(protocol: Protocol, core: &str, regs: &R) -> Result<ProtocolConfig, Error> {
    let ap = match protocol {
        Protocol::Stm | Protocol::Itm => ocsd_arch_profile_t::default(),
        _ => {
            let ap = arch_profile(core);
            if ap.arch == ARCH_UNKNOWN {
                return Err(ConfigError::UnknownCore(core.to_string()).into());
            }
            ap
        }
    };
    Ok(ProtocolConfig::from_registers(protocol, regs, ap, &mut |_, _| {})?)
}

fn err_name(e: ocsd_err_t) -> String {
    match crate::common::error::err_desc(e) {
        Some((name, desc)) => format!("{name} ({desc})"),
        None => format!("error {e}"),
    }
}

/// Messages the decoders log (bad packets, resynchronisation, ...).
#[derive(Default, Clone)]
struct Messages {
    lines: Vec<String>,
    errors: u64,
    last_error: Option<String>,
}

struct SharedLog(Rc<RefCell<Messages>>);

impl ErrorLog for SharedLog {
    fn log_error(&mut self, component: &str, err: &OcsdError) {
        let mut m = self.0.borrow_mut();
        let line = format!("{} : {}", component, err.details());
        if err.sev <= OCSD_ERR_SEV_ERROR {
            m.errors += 1;
            m.last_error = Some(line.clone());
        }
        if err.sev <= OCSD_ERR_SEV_INFO {
            m.lines.push(line);
        }
    }
    fn log_message(&mut self, component: &str, sev: ocsd_err_severity_t, msg: &str) {
        if sev <= OCSD_ERR_SEV_INFO {
            self.0.borrow_mut().lines.push(format!("{} : {}", component, msg.trim_end()));
        }
    }
}

/// Queues the decode's elements for the client (kept packed while they
/// wait, made into [`Element`]s as they are taken).
struct QueueSink(Rc<RefCell<ElementQueue>>);

impl GenElemSink for QueueSink {
    fn trace_elem_in(&mut self, index: ocsd_trc_index_t, id: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        self.0.borrow_mut().push(index, id, elem);
        OCSD_RESP_CONT
    }

    fn trace_elems_in(&mut self, elems: &[(ocsd_trc_index_t, ocsd_generic_trace_elem)], id: u8) -> (usize, ocsd_datapath_resp_t) {
        self.0.borrow_mut().push_batch(elems, id);
        (elems.len(), OCSD_RESP_CONT)
    }
}

/// Gives the decode's elements to a callback as they come
/// ([`Decoder::decode_each`]).
struct EachSink<'f, F: FnMut(&Element)>(&'f mut F);

impl<F: FnMut(&Element)> GenElemSink for EachSink<'_, F> {
    fn trace_elem_in(&mut self, index: ocsd_trc_index_t, id: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        (self.0)(&Element::from_raw(index as u64, id, elem));
        OCSD_RESP_CONT
    }

    fn trace_elems_in(&mut self, elems: &[(ocsd_trc_index_t, ocsd_generic_trace_elem)], id: u8) -> (usize, ocsd_datapath_resp_t) {
        for (index, e) in elems {
            (self.0)(&Element::from_raw(*index as u64, id, e));
        }
        (elems.len(), OCSD_RESP_CONT)
    }
}

struct PacketCounter(Rc<Cell<u64>>);

impl PacketObserver for PacketCounter {
    fn packet(
        &mut self,
        op: ocsd_datapath_op_t,
        _: ocsd_trc_index_t,
        pkt: Option<&dyn TracePacket>,
        _: *const std::os::raw::c_void,
        _: &[u8],
    ) -> ocsd_datapath_resp_t {
        if op == OCSD_OP_DATA && pkt.is_some() {
            self.0.set(self.0.get() + 1);
        }
        OCSD_RESP_CONT
    }
}

/// A decoder: a decode tree with its sources and memory. Feed it trace with
/// [`Decoder::decode`] (an iterator of [`Element`]s) or
/// [`Decoder::decode_each`] (a callback).
pub struct Decoder {
    tree: DecodeTree,
    queue: Rc<RefCell<ElementQueue>>,
    log: Rc<RefCell<Messages>>,
    packets: Option<Rc<Cell<u64>>>,
    sessions: u32,
    recipe: Recipe,
    /// The files mapped (for profiles).
    files: Vec<MappedFile>,
}

impl Decoder {
    pub fn builder() -> DecoderBuilder {
        DecoderBuilder::default()
    }

    /// Map more target memory. Images may not overlap within an address
    /// space, unless they serve different contexts
    /// ([`MemoryImage::for_context`], [`MemoryImage::for_vmid`]).
    pub fn add_memory(&mut self, image: MemoryImage) -> Result<(), Error> {
        let name = image.name();
        let filter = image.context_filter();
        let file = image.mapped_file();
        for acc in image.into_accessors()? {
            let (start, end) = (acc.start, acc.end);
            self.tree.mapper.add_for_context(acc, filter).map_err(|e| match e {
                OCSD_ERR_MEM_ACC_OVERLAP => Error::Memory(format!("{name}: 0x{start:x}..=0x{end:x} overlaps memory already mapped (for the same context)")),
                e => Error::Memory(format!("{name}: cannot map 0x{start:x}..=0x{end:x}: {}", err_name(e))),
            })?;
        }
        self.files.extend(file);
        Ok(())
    }

    /// The files mapped as memory images, in the order they were added.
    pub fn mapped_files(&self) -> &[MappedFile] {
        &self.files
    }

    /// Descriptions of the mapped memory, as `trc_pkt_lister` lists them.
    pub fn memory_map(&self) -> Vec<String> {
        self.tree.mapper.describe_each()
    }

    /// (trace ID, decoder name) of each source.
    pub fn sources(&self) -> Vec<(u8, String)> {
        self.tree.decoder_names()
    }

    /// Decode `trace` (a byte slice or any reader) to the end; the iterator
    /// yields the elements in order. Each call is one trace session: the
    /// decoders are reset between sessions.
    pub fn decode<R: Read>(&mut self, trace: R) -> Elements<'_, R> {
        if self.sessions > 0 {
            self.tree.data_in(OCSD_OP_RESET, 0, &[]);
            self.queue.borrow_mut().clear();
        }
        self.sessions += 1;
        Elements { dec: self, reader: trace, buf: vec![0u8; BLOCK], pos: 0, len: 0, index: 0, resp: OCSD_RESP_CONT, state: State::Feed, error: None }
    }

    /// Decode `trace`, calling `f` for each element. Returns the number of
    /// trace bytes processed.
    pub fn decode_each<R: Read>(&mut self, trace: R, mut f: impl FnMut(&Element)) -> Result<u64, Error> {
        let mut it = self.decode(trace);
        // each element goes to `f` as the decoder hands it over: nothing
        // waits in the queue
        let mut sink = EachSink(&mut f);
        while it.state != State::Done {
            it.step_to(Some(&mut sink));
        }
        it.finish()
    }

    /// Messages the decoders logged since the last call (bad packets,
    /// lost synchronisation, memory not accessible, ...), in OpenCSD's text.
    pub fn take_messages(&mut self) -> Vec<String> {
        std::mem::take(&mut self.log.borrow_mut().lines)
    }

    /// Errors the decoders logged so far.
    pub fn error_count(&self) -> u64 {
        self.log.borrow().errors
    }

    /// Packets decoded so far (when built with
    /// [`DecoderBuilder::count_packets`]).
    pub fn packets(&self) -> Option<u64> {
        self.packets.as_ref().map(|p| p.get())
    }

    /// Open a snapshot directory (`snapshot.ini`, device and trace `.ini`
    /// files) as OpenCSD's `trc_pkt_lister` does: the decoders of the sources
    /// feeding trace buffer `buffer` (the first buffer when `None`), and the
    /// memory dumps of their cores. Unlike `trc_pkt_lister`, a dump file that
    /// is an ELF is read as one: its executable segments at their link
    /// addresses, or placed from the dump's `address=` when it is not 0.
    pub fn from_snapshot(dir: &Path, buffer: Option<&str>) -> Result<SnapshotDecoder, Error> {
        snapshot_decoder(dir, buffer, |b| b)
    }

    /// As [`Decoder::from_snapshot`], with `configure` applied to the
    /// builder (decoder flags, packet counting, more memory).
    pub fn from_snapshot_with(
        dir: &Path,
        buffer: Option<&str>,
        configure: impl FnOnce(DecoderBuilder) -> DecoderBuilder,
    ) -> Result<SnapshotDecoder, Error> {
        snapshot_decoder(dir, buffer, configure)
    }

    /// The mapped target memory, for reading opcodes as the decode did
    /// (e.g. for Tarmac output).
    pub fn memory(&mut self) -> &mut dyn crate::common::MemAccess {
        &mut self.tree.mapper
    }
}

/// A decoder made from a snapshot, with the trace file to feed it and any
/// warnings from reading the snapshot.
pub struct SnapshotDecoder {
    pub decoder: Decoder,
    pub trace_file: PathBuf,
    pub warnings: Vec<String>,
    /// (trace ID, core device name) of the sources the snapshot names a
    /// core for (`[core_trace_sources]`), e.g. `(0x10, "cpu_0")`.
    pub cores: Vec<(u8, String)>,
    /// The buffer's `format=` (`coresight`, `dstream_coresight`,
    /// `source_data`, ...). A DSTREAM capture (`dstream_coresight`) may
    /// hold the probe's block footers: see [`DstreamReader`].
    pub buffer_format: String,
}

fn snapshot_decoder(
    dir: &Path,
    buffer: Option<&str>,
    configure: impl FnOnce(DecoderBuilder) -> DecoderBuilder,
) -> Result<SnapshotDecoder, Error> {
    use crate::snapshot::Snapshot;
    let dir_s = dir.to_string_lossy().to_string();
    let ini = dir.join("snapshot.ini");
    if !ini.is_file() {
        return Err(Error::Snapshot(format!("{}: no snapshot.ini in this directory", dir.display())));
    }
    let snap = Snapshot::read(&dir_s).map_err(|e| Error::Snapshot(format!("{}: {e}", dir.display())))?;
    let names = snap.buffer_names();
    let name = match buffer {
        Some(b) if names.iter().any(|n| n == b) => b.to_string(),
        Some(b) => return Err(Error::Snapshot(format!("{}: no trace buffer named `{b}` (buffers: {})", dir.display(), names.join(", ")))),
        None => names.first().cloned().ok_or_else(|| Error::Snapshot(format!("{}: no trace buffers listed", dir.display())))?,
    };
    let buf = snap.buffer(&name).ok_or_else(|| Error::Snapshot(format!("{}: buffer {name} not found", dir.display())))?;
    let format = match buf.format.as_str() {
        "source_data" => TraceFormat::SingleSource,
        "dstream_coresight" => TraceFormat::Formatted { fsyncs: true, hsyncs: false },
        _ => TraceFormat::Formatted { fsyncs: false, hsyncs: false },
    };
    let mut b = Decoder::builder().format(format);
    let mut warnings = Vec::new();
    let mut cores = Vec::new();
    let mut core_names = Vec::new();
    for (src, core) in snap.sources_of(&name) {
        let Some(dev) = snap.device(&src) else {
            warnings.push(format!("no device data for source {src}"));
            continue;
        };
        let Some(protocol) = crate::config::Protocol::from_device_type(&dev.type_name) else {
            warnings.push(format!("source {src}: device type {} has no decoder", dev.type_name));
            continue;
        };
        let core_dev = if core.is_empty() { None } else { snap.device(&core) };
        let core_name = core_dev.map(|c| c.type_name.clone()).unwrap_or_default();
        match config_from_registers(protocol, &core_name, dev) {
            Ok(cfg) => {
                if let Some(c) = core_dev {
                    cores.push(c);
                    core_names.push((cfg.trace_id(), core.clone()));
                }
                b = b.source(cfg);
            }
            Err(e) => warnings.push(format!("source {src} ({}.ini): {e}", src)),
        }
        if format == TraceFormat::SingleSource {
            break;
        }
    }
    if b.sources.is_empty() {
        return Err(Error::Snapshot(format!("{}: no decodable trace source for buffer {name}: {}", dir.display(), warnings.join("; "))));
    }
    let mut decoder = configure(b).build()?;
    let mut mapped = HashSet::new();
    for core in cores {
        for d in &core.dumps {
            let path = snap.path_of(&d.path);
            if !mapped.insert((path.clone(), d.address, d.offset, d.length)) {
                continue;
            }
            let space = AddressSpace(crate::config::mem_space_from_str(&d.space));
            let len = (d.length > 0).then_some(d.length);
            // (an ELF file read whole, its image keeping its bytes; a
            // dump as `dump_file_region` reads it)
            let img = if d.offset == 0 && MemoryImage::file_is_elf(&path) {
                std::fs::read(&path).map_err(|e| Error::Io { path: path.clone(), message: e.to_string() }).and_then(|data| {
                    MemoryImage::elf_bytes(&path, data, (d.address != 0).then_some(d.address)).or_else(|e| {
                        // as OpenCSD would: the file's bytes at the dump's address
                        warnings.push(format!("{e}; mapped as raw bytes"));
                        MemoryImage::dump_file_region(&path, d.address, d.offset, len)
                    })
                })
            } else {
                MemoryImage::dump_file_region(&path, d.address, d.offset, len)
            };
            match img.and_then(|i| decoder.add_memory(i.in_space(space))) {
                Ok(()) => {}
                Err(e) => warnings.push(e.to_string()),
            }
        }
    }
    Ok(SnapshotDecoder {
        decoder,
        trace_file: PathBuf::from(snap.path_of(&buf.file)),
        warnings,
        cores: core_names,
        buffer_format: buf.format.clone(),
    })
}

/// Bytes read from the trace at a time, and given to the tree at a time.
const BLOCK: usize = 1 << 16;
const FEED: usize = 4096;
/// [`FEED`] where the elements wait in the iterator's queue (about 112
/// bytes each, some 1,700 for a KiB of instruction trace).
const QUEUE_FEED: usize = 1024;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Feed,
    Eot,
    Done,
}

/// The elements of one trace session, decoded as they are pulled.
pub struct Elements<'d, R: Read> {
    dec: &'d mut Decoder,
    reader: R,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    index: u64,
    resp: ocsd_datapath_resp_t,
    state: State,
    error: Option<Error>,
}

impl<R: Read> Elements<'_, R> {
    /// Trace bytes processed so far.
    pub fn bytes(&self) -> u64 {
        self.index
    }

    /// The error that ended decode early, if any.
    pub fn error(&self) -> Option<&Error> {
        self.error.as_ref()
    }

    /// Decode what is left, dropping the elements; the bytes processed, or
    /// the error that stopped decode.
    pub fn finish(mut self) -> Result<u64, Error> {
        for _ in &mut self {}
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(self.index),
        }
    }

    /// The decoder (for its messages and counters while iterating).
    pub fn decoder(&mut self) -> &mut Decoder {
        self.dec
    }

    fn step(&mut self) {
        self.step_to(None)
    }

    /// One step of the decode, its elements to `sink` (None: the queue).
    fn step_to(&mut self, mut sink: Option<&mut dyn GenElemSink>) {
        let queued = sink.is_none();
        let tree = &mut self.dec.tree;
        let mut tree_in = |op: ocsd_datapath_op_t, index: u64, data: &[u8]| match sink.as_deref_mut() {
            Some(s) => tree.data_in_to(op, index as ocsd_trc_index_t, data, s),
            None => tree.data_in(op, index as ocsd_trc_index_t, data),
        };
        match self.state {
            State::Feed => {
                if resp_is_fatal(self.resp) {
                    let message = self.dec.log.borrow().last_error.clone().unwrap_or_else(|| resp_text(self.resp));
                    self.error = Some(Error::Fatal { index: self.index, message });
                    self.state = State::Done;
                    return;
                }
                if resp_is_wait(self.resp) {
                    self.resp = tree_in(OCSD_OP_FLUSH, 0, &[]).0;
                    return;
                }
                if self.pos == self.len {
                    match read_full(&mut self.reader, &mut self.buf) {
                        Ok(0) => {
                            self.state = State::Eot;
                            return;
                        }
                        Ok(n) => {
                            self.pos = 0;
                            self.len = n;
                        }
                        Err(e) => {
                            self.error = Some(Error::Io { path: "trace".into(), message: e.to_string() });
                            self.state = State::Eot;
                            return;
                        }
                    }
                }
                // feed a slice at a time, so that few elements wait in the queue
                let feed = if queued { QUEUE_FEED } else { FEED };
                let end = self.len.min(self.pos + feed);
                let (r, used) = tree_in(OCSD_OP_DATA, self.index, &self.buf[self.pos..end]);
                self.resp = r;
                self.pos += used;
                self.index += used as u64;
            }
            State::Eot => {
                let (mut r, _) = tree_in(OCSD_OP_EOT, 0, &[]);
                while resp_is_wait(r) {
                    r = tree_in(OCSD_OP_FLUSH, 0, &[]).0;
                }
                self.state = State::Done;
            }
            State::Done => {}
        }
    }
}

/// A fatal data path response, for a message.
fn resp_text(r: ocsd_datapath_resp_t) -> String {
    let name = match r {
        OCSD_RESP_FATAL_NOT_INIT => "OCSD_RESP_FATAL_NOT_INIT: a decoder is not initialised",
        OCSD_RESP_FATAL_INVALID_OP => "OCSD_RESP_FATAL_INVALID_OP: invalid operation",
        OCSD_RESP_FATAL_INVALID_PARAM => "OCSD_RESP_FATAL_INVALID_PARAM: a decoder refused the data it was given",
        OCSD_RESP_FATAL_INVALID_DATA => "OCSD_RESP_FATAL_INVALID_DATA: invalid trace data",
        OCSD_RESP_FATAL_SYS_ERR => "OCSD_RESP_FATAL_SYS_ERR: system error",
        _ => return format!("fatal data path response {r}"),
    };
    name.to_string()
}

fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

impl<R: Read> Iterator for Elements<'_, R> {
    type Item = Element;

    fn next(&mut self) -> Option<Element> {
        loop {
            // (returned as the queue gave it, not unwrapped and wrapped again)
            let e = self.dec.queue.borrow_mut().pop();
            if e.is_some() {
                return e;
            }
            if self.state == State::Done {
                return None;
            }
            self.step();
        }
    }
}

mod parallel;
mod text;
pub use text::{TextFormat, TextSummary, TEXT_COUNT_TYPES};
pub use crate::dcd_tree::parallel::ParallelOptions;

#[cfg(test)]
mod tests;
