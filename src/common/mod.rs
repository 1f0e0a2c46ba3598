//! The interfaces that join the pipeline: packet processors, packet
//! decoders, the generic element output, memory access and error logging.
//!
//! Ownership is plain: the decode tree owns one [`crate::dcd_tree::stack`]
//! per trace ID; each holds its packet processor and (for full decode) its
//! packet decoder. Everything a component needs from the outside (the
//! element queue, memory, the error logger) is passed in per call, so no
//! component holds a reference to another.
#![forbid(unsafe_code)]

pub mod error;
pub mod elem_queue;
pub mod mem_view;
pub mod read_window;
pub mod stats;

use crate::abi::*;
use crate::abi::gen_elem::ocsd_generic_trace_elem;

pub use elem_queue::ElemQueue;
pub use error::{ComponentLog, ErrorLog, OcsdError};
pub use mem_view::{ChunkedBytes, MemView, ViewData};
pub use read_window::ReadWindow;
pub use stats::{LiveDemux, LiveStats};

/// A protocol packet: the `#[repr(C)]` packet struct of the protocol
/// (`ocsd_etmv4_i_pkt`, ...) that C clients receive through packet sink and
/// monitor callbacks.
pub trait TracePacket: 'static {
    /// Append OpenCSD's text for this packet: what `ocsd_pkt_str` and the
    /// packet printers write (e.g. `I_ASYNC : Alignment Synchronisation.`).
    fn write_str(&self, out: &mut String);

    /// Append the same text as [`TracePacket::write_str`] to a byte buffer,
    /// for protocols with a byte path (the lister's per-packet lines).
    /// False when the protocol has none: the caller uses `write_str`.
    fn write_bytes(&self, _out: &mut crate::printers::line::LineBuf) -> bool {
        false
    }

    /// Whether this packet is a bad/error packet (for the
    /// `OCSD_OPFLG_PKTPROC_NOFWD_BAD_PKTS` / `NOMON_BAD_PKTS` flags).
    fn is_bad_packet(&self) -> bool {
        false
    }
}

/// Where a packet processor delivers its output.
///
/// Implemented by the decode tree's per-ID stack, which forwards each
/// packet to the packet monitor (with its raw bytes), then to the packet
/// decoder or the client's packet sink.
pub trait PacketOut<P> {
    /// One complete packet that started at trace index `index_sop`, made of
    /// the bytes `raw`. A WAIT response means: stop after this packet.
    fn packet(&mut self, index_sop: ocsd_trc_index_t, pkt: &P, raw: &[u8]) -> ocsd_datapath_resp_t;

    /// Raw bytes for the packet monitor only, not for the decoder or sink
    /// (OpenCSD's `outputRawPacketToMonitor` alone): processors use it when
    /// dumping unsynchronised data, where only the first dump also goes down
    /// the data path (through [`PacketOut::packet`]).
    fn raw_only(&mut self, _index_sop: ocsd_trc_index_t, _pkt: &P, _raw: &[u8]) {}

    /// The error logger for this component's messages.
    fn logger(&mut self) -> &mut dyn ErrorLog;

    /// Raw bytes for the packet monitor only, not forwarded to the decoder
    /// or packet sink (OpenCSD's `outputRawPacketToMonitor`; PTM uses it
    /// for unsynchronised data, in blocks of up to 16 bytes).
    fn packet_to_monitor(&mut self, _index_sop: ocsd_trc_index_t, _pkt: &P, _raw: &[u8]) {}

    /// A packet for the decoder or packet sink only, not shown to the
    /// packet monitor (OpenCSD's `outputDecodedPacket`; PTM sends its one
    /// NOTSYNC packet this way). The default forwards it as a normal packet
    /// with no raw bytes.
    fn packet_to_sink(&mut self, index_sop: ocsd_trc_index_t, pkt: &P) -> ocsd_datapath_resp_t {
        self.packet(index_sop, pkt, &[])
    }

    /// Whether a packet monitor is attached (OpenCSD's `hasRawMon`): PTM's
    /// index bookkeeping while unsynchronised depends on it.
    fn has_raw_monitor(&self) -> bool {
        true
    }

    /// A run of ETMv4 / ETE atom packets, one header byte each, the first
    /// at trace index `index` and the others after it, byte by byte:
    /// `bytes`. The output takes from the first on those it can take
    /// straight from their bytes, each as [`PacketOut::packet`] would have
    /// taken it, and returns how many it took and its response to the last
    /// of them (the others answered CONT). (0, CONT): none taken, to be sent
    /// as packets. The default takes none.
    fn atom_run(&mut self, _index: ocsd_trc_index_t, _bytes: &[u8]) -> (usize, ocsd_datapath_resp_t) {
        (0, OCSD_RESP_CONT)
    }
}

/// A protocol's packet processor: bytes of one trace ID in, packets out.
pub trait PacketProcessor {
    type Packet: TracePacket;

    /// The component name it logs under (`PKTP_ETMV4I_0016`).
    fn name(&self) -> &str;

    /// Process `data`, whose first byte is at trace index `index`. For each
    /// complete packet call `out.packet`. Returns the response and the number
    /// of bytes consumed; stops early (consumed < len) after a packet whose
    /// output answered WAIT, or on a fatal error.
    fn process_data(
        &mut self,
        index: ocsd_trc_index_t,
        data: &[u8],
        out: &mut dyn PacketOut<Self::Packet>,
    ) -> (ocsd_datapath_resp_t, usize);

    /// As [`PacketProcessor::process_data`], also given `tail`: the bytes
    /// that follow `data` in the caller's buffer as OpenCSD lays it out
    /// (for a frame deformatter: the rest of its `out_chan_data` array;
    /// for a single source: the rest of the read buffer). OpenCSD's STM
    /// processor over-reads its input when it dumps unsynchronised bytes to
    /// the packet monitor; `tail` lets it show the same bytes. Processors
    /// that never over-read ignore it.
    fn process_data_with_tail(
        &mut self,
        index: ocsd_trc_index_t,
        data: &[u8],
        _tail: &[u8],
        out: &mut dyn PacketOut<Self::Packet>,
    ) -> (ocsd_datapath_resp_t, usize) {
        self.process_data(index, data, out)
    }

    /// End of trace: output any partial packet (as OpenCSD does, usually as
    /// an incomplete-EOT packet).
    fn eot(&mut self, out: &mut dyn PacketOut<Self::Packet>) -> ocsd_datapath_resp_t;

    /// Reset to the unsynchronised state.
    fn reset(&mut self, index: ocsd_trc_index_t);

    /// Whether the processor is synchronised (for decode statistics).
    fn is_synced(&self) -> bool {
        true
    }

    /// Packet statistics: (bad header errors, bad sequence errors).
    fn error_counts(&self) -> (u32, u32) {
        (0, 0)
    }

    /// Set the component operation flags (`OCSD_OPFLG_PKTPROC_*`).
    fn set_op_flags(&mut self, _flags: u32) {}

    /// Count into `stats` from now on (the decode stack's statistics
    /// block, which the C API hands out): processors that keep error or
    /// unsynchronised byte counts keep them there, as OpenCSD's keep them
    /// in their statistics block.
    fn attach_stats(&mut self, _stats: &LiveStats) {}

    /// Whether OpenCSD's processor for this protocol initialises its
    /// statistics (`statsInit`): only ETMv4 / ETE's do. For the others
    /// `ocsd_dt_get_decode_stats` answers `OCSD_ERR_NOT_INIT` (the block
    /// it points to stays zero).
    fn keeps_stats(&self) -> bool {
        false
    }

    /// Whether `other`, a processor of the same configuration, is in the
    /// same state as this one: everything of it that can change what it
    /// outputs later (not statistics, not scratch storage) equal, for
    /// parallel decode's stitching (see [`crate::dcd_tree::parallel`]): the
    /// two give equal output for equal input from then on. False (the
    /// default): the protocol does not compare states and is decoded whole
    /// on one thread.
    fn same_state(&self, _other: &Self) -> bool
    where
        Self: Sized,
    {
        false
    }
}

/// Instruction-decode and memory services a packet decoder uses.
pub trait MemAccess {
    /// Read up to `buf.len()` bytes of target memory at `addr`, in memory
    /// space `space`, for trace ID `trace_id`. Returns the number of bytes
    /// read: 0 when the address is not mapped.
    fn read(
        &mut self,
        addr: ocsd_vaddr_t,
        space: ocsd_mem_space_acc_t,
        trace_id: u8,
        buf: &mut [u8],
    ) -> Result<usize, ocsd_err_t>;

    /// One read of `req` bytes at `addr` (as [`MemAccess::read`]), its
    /// bytes at the start of `out` (`out.len() >= req`), and with them a
    /// view of as many of the bytes that follow as the memory can vouch
    /// for: see [`MemRun`]. The default vouches for nothing more.
    fn read_run(
        &mut self,
        addr: ocsd_vaddr_t,
        space: ocsd_mem_space_acc_t,
        trace_id: u8,
        req: usize,
        out: &mut [u8],
    ) -> Result<MemRun, ocsd_err_t> {
        let n = req.min(out.len());
        let got = self.read(addr, space, trace_id, &mut out[..n])?;
        Ok(MemRun { got, token: 0, view: None, before: 0, page: None })
    }

    /// `n` further reads were served from the view of the last
    /// [`MemAccess::read_run`], with no other memory access in between.
    fn run_uses(&mut self, _n: u32) {}

    /// After `uses` further reads served from the view of the current run
    /// (reported as [`MemAccess::run_uses`] would), the read of `req` bytes
    /// at `addr` as [`MemAccess::read_run`] makes it, except that when it
    /// is served from a cache page that `known` names (`known[index %
    /// known.len()]` is the page's [`CachePage::serial`]) the run has no
    /// view but names the page: the caller holds the view an earlier run
    /// of that page gave, which serves the reads inside it as before.
    fn read_run_known(
        &mut self,
        addr: ocsd_vaddr_t,
        space: ocsd_mem_space_acc_t,
        trace_id: u8,
        req: usize,
        out: &mut [u8],
        uses: u32,
        _known: &[u64],
    ) -> Result<MemRun, ocsd_err_t> {
        self.run_uses(uses);
        self.read_run(addr, space, trace_id, req, out)
    }

    /// The 4-byte read at `addr` as [`MemAccess::read_run_known`] makes it
    /// (after `uses` further reads of the current run), when the cache
    /// serves it from a page that `known` names: the page, the bytes
    /// read and the [`MemAccess::epoch`] after it. None when it would not
    /// be served so: then nothing is done,
    /// not even the `uses` reported, and the caller makes the read with
    /// [`MemAccess::read_run_known`]. The default never serves it.
    fn read_known_word(
        &mut self,
        _addr: ocsd_vaddr_t,
        _space: ocsd_mem_space_acc_t,
        _trace_id: u8,
        _uses: u32,
        _known: &[u64],
    ) -> Option<(CachePage, [u8; 4], Option<u64>)> {
        None
    }

    /// Whether the 4-byte read at `addr` that [`MemAccess::read_run_known`]
    /// would make finds nothing because it falls in a hole the memory
    /// keeps, with no pages cached (the `uses` it would be given are then
    /// dropped): if so, that read's effects are made (true) and the
    /// caller takes it as a read of no bytes; else nothing is done. The
    /// default never knows.
    fn hole_known(&mut self, _addr: ocsd_vaddr_t, _space: ocsd_mem_space_acc_t, _trace_id: u8) -> bool {
        false
    }

    /// Changes with every access and change of the memory other than
    /// [`MemAccess::run_uses`]: while it stays the same, the view of the
    /// last [`MemAccess::read_run`] still serves the reads it vouches for.
    /// None: views last for one call of the decoder only.
    fn epoch(&self) -> Option<u64> {
        None
    }

    /// [`MemAccess::run_uses`] of `n` (when any), then [`MemAccess::epoch`]:
    /// what a decoder asks at the end of each packet, in one call.
    fn uses_then_epoch(&mut self, n: u32) -> Option<u64> {
        if n > 0 {
            self.run_uses(n);
        }
        self.epoch()
    }

    /// Drop what is cached for `trace_id` (OpenCSD's
    /// `InvalidateMemAccCache`, called by decoders on a context change).
    fn invalidate_cache(&mut self, _trace_id: u8) {}

    /// The client has been handed a `PE_CONTEXT` element of `trace_id`:
    /// a client callback may answer later reads from another image (perf
    /// reads the process named by the last context it saw). Bytes read
    /// from callbacks after this are not promised equal to those before
    /// (see [`MemRun::token`]); what is cached stays as it is.
    fn context_shown(&mut self, _trace_id: u8) {}

    /// The decoder of `trace_id` is now in context `ctx` (its fields that
    /// are `None` did not change): memory images selected by context ID or
    /// VMID answer its reads from now on. Decoders call it where the trace
    /// gives them a context. OpenCSD's memory accessors have no context,
    /// so for memory mapped through the C API this changes nothing.
    fn update_context(&mut self, _trace_id: u8, _ctx: MemContext) {}

    /// As [`MemAccess::read`], in context `ctx` rather than the context the
    /// decoder of `trace_id` is in now: for readers of decoded elements
    /// (Tarmac output) that follow the context from the elements, which
    /// the decoder may have left by the time they are read.
    fn read_in_context(
        &mut self,
        addr: ocsd_vaddr_t,
        space: ocsd_mem_space_acc_t,
        trace_id: u8,
        _ctx: &MemContext,
        buf: &mut [u8],
    ) -> Result<usize, ocsd_err_t> {
        self.read(addr, space, trace_id, buf)
    }
}

/// The execution context of a trace source as its trace gives it, by which
/// memory images can be selected (a process image per context ID, a guest
/// per VMID). `None`: not traced (or, in an update, unchanged). Exception
/// level and security state select images too, through the memory space
/// of each read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemContext {
    pub context_id: Option<u32>,
    pub vmid: Option<u32>,
}

impl MemContext {
    /// The context ID and VMID a `PE_CONTEXT` element (or a decoder's PE
    /// context) marks valid.
    pub fn from_pe_context(c: &ocsd_pe_context) -> Self {
        MemContext {
            context_id: (c.ctxt_id_valid() != 0).then_some(c.context_id),
            vmid: (c.vmid_valid() != 0).then_some(c.vmid),
        }
    }

    /// Take the fields `upd` gives; true if that changed anything.
    #[inline]
    pub fn merge(&mut self, upd: MemContext) -> bool {
        let old = *self;
        if upd.context_id.is_some() {
            self.context_id = upd.context_id;
        }
        if upd.vmid.is_some() {
            self.vmid = upd.vmid;
        }
        *self != old
    }
}

/// What [`MemAccess::read_run`] found.
#[derive(Clone, Debug, Default)]
pub struct MemRun {
    /// Bytes of the requested read (`out[..got]`); fewer than asked when
    /// the memory is not accessible there.
    pub got: usize,
    /// Names where the bytes came from: a later run with the same nonzero
    /// token has the same bytes at the same addresses (0: no promise).
    pub token: u64,
    /// When the request was met in full, possibly: the bytes from the read
    /// address on (at least the request) that further reads of the same
    /// size inside them, made next by the same trace ID in the same memory
    /// space, would get from the same place. The caller may serve such
    /// reads itself and report them with [`MemAccess::run_uses`].
    pub view: Option<MemView>,
    /// How many of the view's bytes come before the read address: the
    /// view covers `[addr - before, addr - before + len)`, and reads of
    /// the same size anywhere inside it are served as those after the
    /// read address are (0 when there is no view).
    pub before: usize,
    /// The cache page the run was served from, for [`MemAccess::read_run_known`].
    pub page: Option<CachePage>,
}

/// Names one load of one page of a memory cache: a page loaded again is
/// another page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CachePage {
    pub index: u32,
    pub serial: u64,
}

/// A memory accessor with nothing mapped.
pub struct NoMemory;
impl MemAccess for NoMemory {
    fn read(&mut self, _: ocsd_vaddr_t, _: ocsd_mem_space_acc_t, _: u8, _: &mut [u8]) -> Result<usize, ocsd_err_t> {
        Ok(0)
    }
}

/// What a packet decoder is handed with each packet: the element queue it
/// appends its output to, target memory, the error logger, and the
/// client's element sink behind the queue.
///
/// # The memory-access rule
///
/// A client may answer memory requests from what it has been shown (perf
/// reads the memory of the process named by the last `PE_CONTEXT` element
/// it received), and may change its memory while it waits. So, as in
/// OpenCSD, a decoder that has finished a resolution step (OpenCSD's
/// `sendElements` points) passes [`DecodeCtx::gate`] before it reads memory
/// for a later step: the gate delivers every queued element to the client
/// and tells the decoder whether it may go on. When the client answers
/// WAIT (or a fatal response) the decoder stops right there, at a point it
/// can resume from, and returns; the stack holds further input and calls
/// [`PacketDecoder::flush`] when the client flushes.
pub struct DecodeCtx<'a> {
    pub out: &'a mut ElemQueue,
    pub mem: &'a mut dyn MemAccess,
    pub log: &'a mut dyn ErrorLog,
    /// The client's element sink (None: elements are dropped).
    sink: Option<&'a mut dyn GenElemSink>,
    /// The client's last answer at the gate (CONT while it is not waiting).
    client_resp: ocsd_datapath_resp_t,
    /// The client's answer to an element given to it early
    /// ([`DecodeCtx::send_one`]), not yet acted on: the next gate, or the
    /// delivery after the decoder returns, takes it as the answer it would
    /// have had there.
    sent_resp: ocsd_datapath_resp_t,
}

impl<'a> DecodeCtx<'a> {
    /// A context whose queued elements are delivered by the caller after
    /// the decoder returns (no client behind the gate: it always opens).
    pub fn new(out: &'a mut ElemQueue, mem: &'a mut dyn MemAccess, log: &'a mut dyn ErrorLog) -> Self {
        DecodeCtx { out, mem, log, sink: None, client_resp: OCSD_RESP_CONT, sent_resp: OCSD_RESP_CONT }
    }

    /// A context that delivers to `sink` at the gate.
    pub fn with_sink(
        out: &'a mut ElemQueue,
        mem: &'a mut dyn MemAccess,
        log: &'a mut dyn ErrorLog,
        sink: Option<&'a mut dyn GenElemSink>,
    ) -> Self {
        DecodeCtx { out, mem, log, sink, client_resp: OCSD_RESP_CONT, sent_resp: OCSD_RESP_CONT }
    }

    /// The gate before a memory read: deliver every queued element to the
    /// client. True: all delivered and the client goes on, memory may be
    /// read. False: the client answered WAIT or a fatal response; the
    /// decoder must stop at a resumable point and return
    /// [`DecodeCtx::client_resp`]. Costs one branch when nothing is queued.
    #[inline]
    pub fn gate(&mut self) -> bool {
        if !resp_is_cont(self.sent_resp) {
            // the client answered an element given early: as if at this gate
            self.client_resp = std::mem::replace(&mut self.sent_resp, OCSD_RESP_CONT);
            return false;
        }
        if self.out.is_empty() || self.sink.is_none() {
            return resp_is_cont(self.client_resp);
        }
        self.gate_deliver()
    }

    /// Queue `elem` (index, element) of trace ID `trace_id` for the next
    /// gate or the delivery after the decoder returns, as pushing it to
    /// [`DecodeCtx::out`] does, where nothing the decoder does before that
    /// point can tell from its delivery (no memory read, no message): it
    /// goes to the client now, without a copy into the queue, while
    /// nothing is queued and the client answered nothing but CONT. Its
    /// answer is kept ([`DecodeCtx::sent_resp`]) for that gate or
    /// delivery, and the elements after a WAIT (or fatal) answer are
    /// queued.
    #[inline]
    pub fn send_one(&mut self, index: ocsd_trc_index_t, trace_id: u8, elem: &ocsd_generic_trace_elem) {
        if self.out.is_empty() && resp_is_cont(self.client_resp) && resp_is_cont(self.sent_resp) {
            if let Some(s) = self.sink.as_deref_mut() {
                let r = s.trace_elem_in(index, trace_id, elem);
                if !resp_is_cont(r) {
                    self.sent_resp = r;
                }
                return;
            }
        }
        self.out.push(index, trace_id, elem);
    }

    /// The client's answer to an element [`DecodeCtx::send_one`] gave it
    /// that no gate has taken yet (CONT: none): the caller delivering the
    /// queue after the decoder returns takes it as the answer to that
    /// delivery, leaving the queue as it is.
    pub fn sent_resp(&self) -> ocsd_datapath_resp_t {
        self.sent_resp
    }

    /// Queue `elems` (index, element) of trace ID `trace_id`, then pass
    /// the gate: the same as pushing each to [`DecodeCtx::out`] and calling
    /// [`DecodeCtx::gate`]. When nothing is queued before them they go to
    /// the client straight from `elems`, without a copy into the queue;
    /// only those left after a WAIT (or fatal) answer are queued.
    #[inline]
    pub fn send_and_gate(&mut self, elems: &[(ocsd_trc_index_t, ocsd_generic_trace_elem)], trace_id: u8) -> bool {
        if !self.out.is_empty() || !resp_is_cont(self.client_resp) || !resp_is_cont(self.sent_resp) {
            for (idx, e) in elems {
                self.out.push(*idx, trace_id, e);
            }
            return self.gate();
        }
        let Some(s) = self.sink.as_deref_mut() else {
            for (idx, e) in elems {
                self.out.push(*idx, trace_id, e);
            }
            return resp_is_cont(self.client_resp);
        };
        let (n, r) = s.trace_elems_in(elems, trace_id);
        if !resp_is_cont(r) {
            for (idx, e) in elems.get(n..).unwrap_or(&[]) {
                self.out.push(*idx, trace_id, e);
            }
            self.client_resp = r;
            return false;
        }
        true
    }

    #[cold]
    fn gate_deliver(&mut self) -> bool {
        if let Some(s) = self.sink.as_deref_mut() {
            let r = self.out.deliver(s);
            if !resp_is_cont(r) {
                self.client_resp = r;
            } else if !self.out.is_empty() {
                self.client_resp = OCSD_RESP_WAIT;
            }
        }
        resp_is_cont(self.client_resp)
    }

    /// What the client answered when the gate last closed (CONT: it never
    /// closed in this call).
    pub fn client_resp(&self) -> ocsd_datapath_resp_t {
        self.client_resp
    }

    /// Whether the gate closed in this call (the decoder is suspended).
    pub fn gate_closed(&self) -> bool {
        !resp_is_cont(self.client_resp)
    }
}

/// A protocol's packet decoder: packets in, generic trace elements out.
///
/// Decoders append elements to the queue in `ctx.out`; the stack delivers
/// them after each packet and holds further input while the client is
/// waiting. A decoder that reads memory after earlier elements of the same
/// packet passes [`DecodeCtx::gate`] first (see there).
pub trait PacketDecoder {
    type Packet: TracePacket;

    /// The component name it logs under (`DCD_ETMV4_0016`).
    fn name(&self) -> &str;

    /// Whether it reads target memory (instruction following): OpenCSD's
    /// decoder then refuses to run until a memory access interface is
    /// attached.
    fn uses_memory(&self) -> bool {
        true
    }

    /// Whether the decoder accepted its configuration. OpenCSD's decoder
    /// that refuses one (ETMv3 with data trace) logs why nowhere (no error
    /// logger is attached yet when it is configured) and then answers every
    /// operation with `OCSD_ERR_NOT_INIT` "No decoder configuration
    /// information" and `OCSD_RESP_FATAL_NOT_INIT`.
    fn config_ok(&self) -> bool {
        true
    }

    /// Decode one packet that started at trace index `index_sop`.
    fn packet_in(&mut self, index_sop: ocsd_trc_index_t, pkt: &Self::Packet, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t;

    /// Take a packet that gives nothing and reads or reports nothing (no
    /// element, no memory access, no log) without a [`DecodeCtx`]: true
    /// when taken, with exactly the effect [`PacketDecoder::packet_in`]
    /// would have had (and answered `OCSD_RESP_CONT`); false: nothing
    /// done, `packet_in` is to take it. Only asked when no element waits
    /// for the client. Default: never.
    #[inline(always)]
    fn absorb(&mut self, _index_sop: ocsd_trc_index_t, _pkt: &Self::Packet) -> bool {
        false
    }

    /// Take a run of ETMv4 / ETE atom packets given by their header bytes
    /// `bytes`, the first at trace index `index` ([`PacketOut::atom_run`]),
    /// from the first on as long as it can without the packets: each as
    /// [`PacketDecoder::packet_in`] (or [`PacketDecoder::absorb`]) would take
    /// it, what it queues to be delivered after it. Returns how many it took
    /// and its response to the last; stops after a packet that leaves
    /// elements queued, answers other than CONT or closes the gate. Only
    /// asked when no element waits for the client. Default: none.
    fn atom_packets(&mut self, _index: ocsd_trc_index_t, _bytes: &[u8], _ctx: &mut DecodeCtx) -> (usize, ocsd_datapath_resp_t) {
        (0, OCSD_RESP_CONT)
    }

    /// End of trace: flush what is pending and output the end-of-trace
    /// element(s).
    fn eot(&mut self, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t;

    /// Reset to the unsynchronised state.
    fn reset(&mut self, index: ocsd_trc_index_t);

    /// As [`PacketProcessor::same_state`], for the decoder (memory caches
    /// and decoded-instruction caches left out: they change how fast, not
    /// what, it decodes).
    fn same_state(&self, _other: &Self) -> bool
    where
        Self: Sized,
    {
        false
    }

    /// FLUSH after the gate closed (OpenCSD's `onFlush`): resume the work
    /// that [`DecodeCtx::gate`] suspended, under the same rule. Default:
    /// the decoder never suspends.
    fn flush(&mut self, _ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        OCSD_RESP_CONT
    }

    /// The trace ID the decoder was configured with (element output ID).
    fn trace_id(&self) -> u8;

    /// Set the component operation flags (`OCSD_OPFLG_PKTDEC_*`, and the
    /// protocol-specific flags such as `ETM4_OPFLG_PKTDEC_AA64_OPCODE_CHK`).
    fn set_op_flags(&mut self, _flags: u32) {}
}

/// Receives the generic trace elements (the client's callback, a printer).
pub trait GenElemSink {
    fn trace_elem_in(
        &mut self,
        index_sop: ocsd_trc_index_t,
        trc_chan_id: u8,
        elem: &ocsd_generic_trace_elem,
    ) -> ocsd_datapath_resp_t;

    /// Deliver `elems` (index, element) in order, as many calls of
    /// [`GenElemSink::trace_elem_in`], stopping after the first answer that
    /// is not CONT. Returns how many were delivered (that one included) and
    /// the last answer. A sink may take the whole batch in one call to save
    /// a dynamic call per element.
    fn trace_elems_in(&mut self, elems: &[(ocsd_trc_index_t, ocsd_generic_trace_elem)], trc_chan_id: u8) -> (usize, ocsd_datapath_resp_t) {
        for (k, (idx, e)) in elems.iter().enumerate() {
            let r = self.trace_elem_in(*idx, trc_chan_id, e);
            if !resp_is_cont(r) {
                return (k + 1, r);
            }
        }
        (elems.len(), OCSD_RESP_CONT)
    }
}

/// A xorshift64 generator for tests' pseudo-random inputs (the same
/// sequence on every run, from `seed`, which must not be 0).
#[cfg(test)]
pub(crate) fn xorshift64(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// [`xorshift64`]'s 32-bit sibling (shifts 13, 17, 5).
#[cfg(test)]
pub(crate) fn xorshift32(mut seed: u32) -> impl FnMut() -> u32 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    }
}

#[cfg(test)]
mod send_one_tests {
    use super::*;
    use crate::abi::gen_elem::OCSD_GEN_TRC_ELEM_INSTR_RANGE;
    use crate::common::error::NullLog;

    /// Takes the indexes of the elements it gets; answers WAIT to those in
    /// `wait_at`.
    struct Client {
        got: Vec<u32>,
        wait_at: Vec<u32>,
    }
    impl GenElemSink for Client {
        fn trace_elem_in(&mut self, index: ocsd_trc_index_t, _: u8, _: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
            self.got.push(index);
            if self.wait_at.contains(&index) {
                OCSD_RESP_WAIT
            } else {
                OCSD_RESP_CONT
            }
        }
    }

    /// An element given early reaches the client at once; a WAIT answer to
    /// it closes the next gate (as if the gate had delivered it), and the
    /// elements given after it wait in the queue until then.
    #[test]
    fn early_elements_and_the_gate() {
        let e = gen_elem::ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_INSTR_RANGE);
        let (mut q, mut mem, mut log) = (ElemQueue::new(), NoMemory, NullLog);
        let mut c = Client { got: vec![], wait_at: vec![1] };
        let mut ctx = DecodeCtx::with_sink(&mut q, &mut mem, &mut log, Some(&mut c));
        ctx.send_one(0, 7, &e);
        assert!(ctx.gate());
        ctx.send_one(1, 7, &e);
        assert_eq!(ctx.sent_resp(), OCSD_RESP_WAIT);
        assert!(!ctx.gate_closed());
        ctx.send_one(2, 7, &e);
        ctx.send_one(3, 7, &e);
        assert_eq!(ctx.out.len(), 2);
        assert!(!ctx.gate());
        assert!(ctx.gate_closed());
        assert_eq!((ctx.client_resp(), ctx.sent_resp()), (OCSD_RESP_WAIT, OCSD_RESP_CONT));
        // later elements queue behind the waiting ones
        ctx.send_one(4, 7, &e);
        assert_eq!(ctx.out.len(), 3);
        assert_eq!(c.got, [0, 1]);
        // without a sink everything waits in the queue
        let mut ctx = DecodeCtx::new(&mut q, &mut mem, &mut log);
        ctx.send_one(5, 7, &e);
        assert_eq!((ctx.out.len(), ctx.sent_resp()), (4, OCSD_RESP_CONT));
    }
}
