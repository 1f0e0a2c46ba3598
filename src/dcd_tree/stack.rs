//! One trace ID's decode stack: packet processor, optional packet decoder,
//! element queue, and the packet sink / monitor observers.

mod reuse;

use std::any::Any;
use std::os::raw::c_void;

use crate::abi::*;
use crate::common::{ComponentLog, DecodeCtx, ElemQueue, ErrorLog, GenElemSink, LiveStats, MemAccess, OcsdError, PacketDecoder, PacketOut, PacketProcessor, TracePacket};

/// Watches the packets of one trace ID: the client's packet sink or packet
/// monitor callback, or a packet printer.
pub trait PacketObserver {
    /// A packet (`pkt` None for data-less operations such as EOT). `raw` is
    /// the packet's bytes (monitors only). The response matters for sinks.
    fn packet(
        &mut self,
        op: ocsd_datapath_op_t,
        index_sop: ocsd_trc_index_t,
        pkt: Option<&dyn TracePacket>,
        pkt_ptr: *const c_void,
        raw: &[u8],
    ) -> ocsd_datapath_resp_t;
}

/// What a stack needs from its decode tree for one call.
pub struct StackEnv<'a> {
    pub elem_sink: Option<&'a mut dyn GenElemSink>,
    pub mem: &'a mut dyn MemAccess,
    pub log: &'a mut dyn ErrorLog,
    /// Which of the decoder's interfaces the client has attached.
    pub attached: Interfaces,
}

/// The interfaces a packet decoder needs attached before it runs.
///
/// OpenCSD's decoders check them on every operation (`checkInit`): without
/// an element output, or (for protocols that follow instructions) without
/// a memory access interface, they log `OCSD_ERR_NOT_INIT` and answer
/// `OCSD_RESP_FATAL_NOT_INIT`. A C API tree starts with neither attached;
/// the Rust tree and the lister always have both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interfaces {
    pub elem_out: bool,
    pub mem: bool,
}

impl Interfaces {
    pub const ALL: Interfaces = Interfaces { elem_out: true, mem: true };

    /// OpenCSD's message for the first thing `dec` lacks to run: an
    /// accepted configuration, then the interfaces it needs.
    fn missing_for<D: PacketDecoder>(&self, dec: &D) -> Option<&'static str> {
        if !dec.config_ok() {
            Some("No decoder configuration information")
        } else if !self.elem_out {
            Some("No element output interface attached and enabled")
        } else if dec.uses_memory() && !self.mem {
            Some("No memory access interface attached and enabled")
        } else {
            None
        }
    }
}

/// Log `dec`'s missing interface as OpenCSD does; the fatal response.
fn not_init<D: PacketDecoder>(dec: &D, msg: &str, log: &mut dyn ErrorLog, numbered: bool) -> ocsd_datapath_resp_t {
    let mut l = ComponentLog::new(log, !numbered, false);
    l.log_error(dec.name(), &OcsdError::with_msg(OCSD_ERR_SEV_ERROR, OCSD_ERR_NOT_INIT, msg));
    OCSD_RESP_FATAL_NOT_INIT
}

/// The protocol-independent face of a per-ID stack, as the tree sees it.
pub trait TraceIdDecoder {
    /// Registered decoder name (`ETMV4I`, `STM`, ...).
    fn decoder_name(&self) -> &str;
    fn protocol(&self) -> ocsd_trace_protocol_t;
    /// Trace ID from the decoder's configuration.
    fn cs_id(&self) -> u8;
    fn has_decoder(&self) -> bool;
    fn data_in(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, data: &[u8], env: &mut StackEnv) -> (ocsd_datapath_resp_t, usize);
    /// A DATA operation whose bytes are followed by `tail` in the caller's
    /// memory (see [`crate::common::PacketProcessor::process_data_with_tail`]).
    fn data_in_tail(&mut self, index: ocsd_trc_index_t, data: &[u8], _tail: &[u8], env: &mut StackEnv) -> (ocsd_datapath_resp_t, usize) {
        self.data_in(OCSD_OP_DATA, index, data, env)
    }
    /// Whether the components log under numbered names
    /// (`DCD_ETMV4_0016`): true on a tree with a frame deformatter, false on
    /// a single-source tree (`DCD_ETMV4`), as OpenCSD names them. The tree
    /// sets it when the decoder is attached.
    fn set_numbered_names(&mut self, _numbered: bool) {}
    fn set_monitor(&mut self, obs: Option<Box<dyn PacketObserver>>);
    fn set_sink(&mut self, obs: Option<Box<dyn PacketObserver>>) -> ocsd_err_t;
    fn set_proc_op_flags(&mut self, flags: u32);
    fn set_dec_op_flags(&mut self, flags: u32);
    /// (channel synced, bad header errors, bad sequence errors)
    fn stats(&self) -> (bool, u32, u32);
    /// The statistics block itself, shared: its counts change as the
    /// stack decodes; and whether the processor keeps statistics (see
    /// [`PacketProcessor::keeps_stats`]). None when there is no library
    /// packet processor.
    fn live_stats(&self) -> Option<(LiveStats, bool)> {
        None
    }
    /// The statistics block's values now (the `demux` part is the tree's),
    /// or OpenCSD's error: `OCSD_ERR_NOT_INIT` when the processor keeps no
    /// statistics, `OCSD_ERR_INVALID_PARAM_VAL` when there is no library
    /// packet processor (custom decoders).
    fn decode_stats(&self) -> Result<ocsd_decode_stats_t, ocsd_err_t> {
        match self.live_stats() {
            Some((s, true)) => Ok(s.snapshot()),
            Some((_, false)) => Err(OCSD_ERR_NOT_INIT),
            None => Err(OCSD_ERR_INVALID_PARAM_VAL),
        }
    }
    /// Whether `other` is a stack of the same kind in the same state (packet
    /// processor and decoder: see [`crate::common::PacketProcessor::same_state`]),
    /// for parallel decode's stitching. False when the protocol does not
    /// compare states, or elements or a response still wait for the client
    /// on either side.
    fn same_state(&self, _other: &dyn TraceIdDecoder) -> bool {
        false
    }
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

pub struct Stack<P: PacketProcessor, D: PacketDecoder<Packet = P::Packet>> {
    name: &'static str,
    protocol: ocsd_trace_protocol_t,
    cs_id: u8,
    proc_: P,
    dec: Option<D>,
    queue: ElemQueue,
    monitor: Option<Box<dyn PacketObserver>>,
    sink: Option<Box<dyn PacketObserver>>,
    proc_flags: u32,
    /// The statistics block (bytes the packet processor consumed; its
    /// error and unsynchronised byte counts), shared with the processor
    /// and handed out by the C API; zero when the processor keeps no
    /// statistics ([`PacketProcessor::keeps_stats`]).
    stats: LiveStats,
    /// A fatal decoder response owed to the client once the queued
    /// elements are delivered (CONT: none).
    pending_resp: ocsd_datapath_resp_t,
    /// Components log under numbered names (see
    /// [`TraceIdDecoder::set_numbered_names`]).
    numbered: bool,
    /// The decoder stopped at its memory-access gate (the client answered
    /// WAIT there) and resumes on FLUSH.
    dec_suspended: bool,
}

impl<P: PacketProcessor + 'static, D: PacketDecoder<Packet = P::Packet> + 'static> Stack<P, D> {
    pub fn new(name: &'static str, protocol: ocsd_trace_protocol_t, cs_id: u8, mut proc_: P, dec: Option<D>) -> Self {
        let stats = LiveStats::new();
        if proc_.keeps_stats() {
            proc_.attach_stats(&stats);
        }
        Stack {
            name,
            protocol,
            cs_id,
            proc_,
            dec,
            queue: ElemQueue::new(),
            monitor: None,
            sink: None,
            proc_flags: 0,
            stats,
            pending_resp: OCSD_RESP_CONT,
            numbered: true,
            dec_suspended: false,
        }
    }

    /// The packet processor, and the output it writes packets to.
    ///
    /// The processor logs as OpenCSD's does: not at all when a packet
    /// decoder sits above it (OpenCSD attaches the error logger to the
    /// stack's top component only), under its unnumbered name on a
    /// single-source tree.
    fn split<'s, 'e>(&'s mut self, env: &'e mut StackEnv<'_>) -> (&'s mut P, Out<'s, 'e, P::Packet, D>) {
        let detached = self.dec.is_some();
        let out = Out {
            dec: self.dec.as_mut(),
            queue: &mut self.queue,
            monitor: self.monitor.as_mut(),
            sink: self.sink.as_mut(),
            elem_sink: match env.elem_sink.as_deref_mut() {
                Some(s) => Some(s),
                None => None,
            },
            mem: &mut *env.mem,
            log: ComponentLog::new(&mut *env.log, !self.numbered, detached),
            attached: env.attached,
            proc_flags: self.proc_flags,
            pending: &mut self.pending_resp,
            suspended: &mut self.dec_suspended,
        };
        (&mut self.proc_, out)
    }

    /// Deliver queued elements; once they are all out, a fatal response
    /// the decoder gave after queueing them is due.
    fn deliver(&mut self, env: &mut StackEnv) -> ocsd_datapath_resp_t {
        let r = match env.elem_sink.as_deref_mut() {
            Some(s) => self.queue.deliver(s),
            None => {
                self.queue.clear();
                OCSD_RESP_CONT
            }
        };
        if self.queue.is_empty() && self.pending_resp != OCSD_RESP_CONT {
            return std::mem::replace(&mut self.pending_resp, OCSD_RESP_CONT).max(r);
        }
        r
    }
}

impl<P: PacketProcessor + 'static, D: PacketDecoder<Packet = P::Packet> + 'static> Stack<P, D> {
    /// Bring the stack up to date for a waiting client: deliver what is
    /// queued, then let a decoder stopped at its memory-access gate resume
    /// (and deliver what that gives). CONT when nothing is owed any more.
    fn catch_up(&mut self, env: &mut StackEnv) -> ocsd_datapath_resp_t {
        let r = self.deliver(env);
        if !self.queue.is_empty() || !resp_is_cont(r) {
            return if resp_is_cont(r) { OCSD_RESP_WAIT } else { r };
        }
        if !std::mem::replace(&mut self.dec_suspended, false) {
            return r;
        }
        let Some(d) = self.dec.as_mut() else { return r };
        let mut dlog = ComponentLog::new(&mut *env.log, !self.numbered, false);
        let mut ctx = DecodeCtx::with_sink(&mut self.queue, &mut *env.mem, &mut dlog, sink_of(&mut env.elem_sink));
        let rf = d.flush(&mut ctx);
        let sent = ctx.sent_resp();
        if ctx.gate_closed() {
            self.dec_suspended = true;
            if resp_is_fatal(rf) {
                self.pending_resp = self.pending_resp.max(rf);
            }
            return ctx.client_resp();
        }
        if resp_is_fatal(rf) {
            self.pending_resp = self.pending_resp.max(rf);
        }
        // (an answer to an element given early is this delivery's)
        let r = if resp_is_cont(sent) { self.deliver(env) } else { sent };
        if !self.queue.is_empty() || !resp_is_cont(r) {
            return if resp_is_cont(r) { OCSD_RESP_WAIT } else { r };
        }
        r.max(rf)
    }
}

/// The client's element sink, reborrowed for a decode context.
fn sink_of<'r>(s: &'r mut Option<&mut dyn GenElemSink>) -> Option<&'r mut dyn GenElemSink> {
    match s {
        Some(s) => Some(&mut **s),
        None => None,
    }
}

/// The packet processor's output for one call.
struct Out<'s, 'e, P: TracePacket, D: PacketDecoder<Packet = P>> {
    dec: Option<&'s mut D>,
    queue: &'s mut ElemQueue,
    monitor: Option<&'s mut Box<dyn PacketObserver>>,
    sink: Option<&'s mut Box<dyn PacketObserver>>,
    elem_sink: Option<&'e mut dyn GenElemSink>,
    mem: &'e mut dyn MemAccess,
    /// The packet processor's view of the error log.
    log: ComponentLog<'e>,
    attached: Interfaces,
    proc_flags: u32,
    /// A fatal decoder response held back until the elements queued before
    /// it have been delivered.
    pending: &'s mut ocsd_datapath_resp_t,
    /// Set when the decoder stops at its memory-access gate.
    suspended: &'s mut bool,
}

impl<P: TracePacket, D: PacketDecoder<Packet = P>> PacketOut<P> for Out<'_, '_, P, D> {
    fn packet(&mut self, index_sop: ocsd_trc_index_t, pkt: &P, raw: &[u8]) -> ocsd_datapath_resp_t {
        let bad = pkt.is_bad_packet();
        let ptr = pkt as *const P as *const c_void;
        if let Some(m) = self.monitor.as_deref_mut() {
            if !raw.is_empty() && (!bad || self.proc_flags & OCSD_OPFLG_PKTPROC_NOMON_BAD_PKTS == 0) {
                m.packet(OCSD_OP_DATA, index_sop, Some(pkt), ptr, raw);
            }
        }
        if bad && self.proc_flags & OCSD_OPFLG_PKTPROC_NOFWD_BAD_PKTS != 0 {
            return OCSD_RESP_CONT;
        }
        if let Some(d) = self.dec.as_deref_mut() {
            let unnumbered = self.log.unnumbered;
            if let Some(msg) = self.attached.missing_for(&*d) {
                return not_init(&*d, msg, &mut *self.log.inner, !unnumbered);
            }
            if self.queue.is_empty() && d.absorb(index_sop, pkt) {
                return OCSD_RESP_CONT;
            }
            let mut dlog = ComponentLog::new(&mut *self.log.inner, unnumbered, false);
            let mut ctx = DecodeCtx::with_sink(self.queue, &mut *self.mem, &mut dlog, sink_of(&mut self.elem_sink));
            let r = d.packet_in(index_sop, pkt, &mut ctx);
            let gate = ctx.gate_closed().then(|| ctx.client_resp());
            let sent = ctx.sent_resp();
            self.decoded(r, gate, sent)
        } else if let Some(s) = self.sink.as_deref_mut() {
            s.packet(OCSD_OP_DATA, index_sop, Some(pkt), ptr, &[])
        } else {
            OCSD_RESP_CONT
        }
    }

    fn raw_only(&mut self, index_sop: ocsd_trc_index_t, pkt: &P, raw: &[u8]) {
        if raw.is_empty() {
            return;
        }
        let bad = pkt.is_bad_packet();
        if let Some(m) = self.monitor.as_deref_mut() {
            if !raw.is_empty() && (!bad || self.proc_flags & OCSD_OPFLG_PKTPROC_NOMON_BAD_PKTS == 0) {
                m.packet(OCSD_OP_DATA, index_sop, Some(pkt), pkt as *const P as *const c_void, raw);
            }
        }
    }

    fn logger(&mut self) -> &mut dyn ErrorLog {
        &mut self.log
    }

    fn packet_to_monitor(&mut self, index_sop: ocsd_trc_index_t, pkt: &P, raw: &[u8]) {
        // as OpenCSD, a packet without bytes is not shown to the monitor
        if raw.is_empty() {
            return;
        }
        if let Some(m) = self.monitor.as_deref_mut() {
            let ptr = pkt as *const P as *const c_void;
            m.packet(OCSD_OP_DATA, index_sop, Some(pkt), ptr, raw);
        }
    }

    fn packet_to_sink(&mut self, index_sop: ocsd_trc_index_t, pkt: &P) -> ocsd_datapath_resp_t {
        let saved = self.monitor.take();
        let r = self.packet(index_sop, pkt, &[]);
        self.monitor = saved;
        r
    }

    fn has_raw_monitor(&self) -> bool {
        self.monitor.is_some()
    }

    /// Atom packets straight to the decoder when nothing watches packets
    /// and nothing waits for the client (a packet the decoder takes this
    /// way is one [`PacketOut::packet`] would give it, not bad, without a
    /// monitor to show it to).
    fn atom_run(&mut self, index: ocsd_trc_index_t, bytes: &[u8]) -> (usize, ocsd_datapath_resp_t) {
        if self.monitor.is_some() || !self.queue.is_empty() {
            return (0, OCSD_RESP_CONT);
        }
        let Some(d) = self.dec.as_deref_mut() else { return (0, OCSD_RESP_CONT) };
        if self.attached.missing_for(&*d).is_some() {
            return (0, OCSD_RESP_CONT);
        }
        let mut dlog = ComponentLog::new(&mut *self.log.inner, self.log.unnumbered, false);
        let mut ctx = DecodeCtx::with_sink(self.queue, &mut *self.mem, &mut dlog, sink_of(&mut self.elem_sink));
        let (n, r) = d.atom_packets(index, bytes, &mut ctx);
        if n == 0 {
            return (0, OCSD_RESP_CONT);
        }
        let gate = ctx.gate_closed().then(|| ctx.client_resp());
        let sent = ctx.sent_resp();
        (n, self.decoded(r, gate, sent))
    }
}

impl<P: TracePacket, D: PacketDecoder<Packet = P>> Out<'_, '_, P, D> {
    /// After the decoder took a packet and answered `r` (`gate`: what the
    /// client answered if the decoder stopped at its memory-access gate;
    /// `sent`: its answer to an element given to it early, which it takes
    /// as this delivery's): what it queued goes to the client, and the
    /// response to the packet.
    #[inline]
    fn decoded(&mut self, r: ocsd_datapath_resp_t, gate: Option<ocsd_datapath_resp_t>, sent: ocsd_datapath_resp_t) -> ocsd_datapath_resp_t {
        if let Some(cr) = gate {
            // the decoder stopped at its memory-access gate: it resumes
            // on FLUSH (whatever is still queued goes out first)
            *self.suspended = true;
            if resp_is_fatal(r) {
                *self.pending = r;
            }
            return cr;
        }
        let rd = match self.elem_sink.as_deref_mut() {
            // (the client stopped at that element: what is queued waits)
            _ if !resp_is_cont(sent) => sent,
            Some(s) => self.queue.deliver(s),
            None => {
                self.queue.clear();
                OCSD_RESP_CONT
            }
        };
        if !self.queue.is_empty() {
            // the client is waiting: what the decoder said (even a fatal
            // error) comes after the elements it queued before saying it
            if resp_is_fatal(r) {
                *self.pending = r;
            }
            return if resp_is_cont(rd) { OCSD_RESP_WAIT } else { rd };
        }
        if resp_is_fatal(r) {
            return r;
        }
        rd.max(r)
    }
}

impl<P: PacketProcessor + 'static, D: PacketDecoder<Packet = P::Packet> + 'static> TraceIdDecoder for Stack<P, D> {
    fn decoder_name(&self) -> &str {
        self.name
    }
    fn protocol(&self) -> ocsd_trace_protocol_t {
        self.protocol
    }
    fn cs_id(&self) -> u8 {
        self.cs_id
    }
    fn has_decoder(&self) -> bool {
        self.dec.is_some()
    }

    fn data_in_tail(&mut self, index: ocsd_trc_index_t, data: &[u8], tail: &[u8], env: &mut StackEnv) -> (ocsd_datapath_resp_t, usize) {
        if data.is_empty() {
            // OpenCSD's packet processor base refuses an empty block: a
            // fatal error (a frame deformatter can hand one over, for an ID
            // that starts at the end of a frame with no data yet)
            let (proc_, mut out) = self.split(env);
            let name = proc_.name().to_string();
            out.logger().log_error(
                &name,
                &OcsdError::with_msg(
                    OCSD_ERR_SEV_ERROR,
                    OCSD_ERR_INVALID_PARAM_VAL,
                    "Packet Processor: Zero length data block or NULL pointer error\n",
                ),
            );
            return (OCSD_RESP_FATAL_INVALID_PARAM, 0);
        }
        // elements (and decode) still owed to a waiting client go first
        if !self.queue.is_empty() || self.dec_suspended {
            let r = self.catch_up(env);
            if !resp_is_cont(r) {
                return (r, 0);
            }
        }
        let (proc_, mut out) = self.split(env);
        let (resp, used) = proc_.process_data_with_tail(index, data, tail, &mut out);
        if self.proc_.keeps_stats() {
            self.stats.add_total(used as u64);
        }
        (resp, used)
    }

    fn data_in(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, data: &[u8], env: &mut StackEnv) -> (ocsd_datapath_resp_t, usize) {
        match op {
            OCSD_OP_DATA => self.data_in_tail(index, data, &[], env),
            OCSD_OP_FLUSH => {
                if let Some(d) = self.dec.as_ref() {
                    if let Some(msg) = env.attached.missing_for(d) {
                        return (not_init(d, msg, &mut *env.log, self.numbered), 0);
                    }
                }
                // nothing owed, nothing suspended: the stack has nothing to
                // do (the common case: a client waiting on one trace ID
                // flushes them all; packet processors hold nothing a FLUSH
                // sends, as OpenCSD's)
                if self.queue.is_empty() && !self.dec_suspended && self.pending_resp == OCSD_RESP_CONT {
                    return (OCSD_RESP_CONT, 0);
                }
                // elements still owed to a waiting client go first, then
                // the decode the gate suspended
                (self.catch_up(env), 0)
            }
            OCSD_OP_EOT => {
                if let Some(d) = self.dec.as_ref() {
                    if let Some(msg) = env.attached.missing_for(d) {
                        return (not_init(d, msg, &mut *env.log, self.numbered), 0);
                    }
                }
                let mut resp = {
                    let (proc_, mut out) = self.split(env);
                    proc_.eot(&mut out)
                };
                if let Some(d) = self.dec.as_mut() {
                    // a fatal response waits behind the elements queued
                    // before it, as on the data path
                    let mut fatal = if resp_is_fatal(resp) { std::mem::replace(&mut resp, OCSD_RESP_CONT) } else { OCSD_RESP_CONT };
                    let mut dlog = ComponentLog::new(&mut *env.log, !self.numbered, false);
                    let mut ctx = DecodeCtx::new(&mut self.queue, &mut *env.mem, &mut dlog);
                    let r = d.eot(&mut ctx);
                    // as OpenCSD's processor base takes EOT, the decoder's
                    // answer replaces the processor's (a client's WAIT on
                    // an element of the partial packet is not kept: the
                    // decoder's EOT sends what is queued, then its own)
                    if resp_is_fatal(r) {
                        fatal = fatal.max(r);
                        resp = OCSD_RESP_CONT;
                    } else {
                        resp = r;
                    }
                    self.pending_resp = self.pending_resp.max(fatal);
                    resp = resp.max(self.deliver(env));
                } else if let Some(s) = self.sink.as_mut() {
                    // (told unless the processor's end was fatal; its
                    // answer replaces the processor's)
                    if !resp_is_fatal(resp) {
                        resp = s.packet(OCSD_OP_EOT, 0, None, std::ptr::null(), &[]);
                    }
                }
                if let Some(m) = self.monitor.as_mut() {
                    m.packet(OCSD_OP_EOT, 0, None, std::ptr::null(), &[]);
                }
                (resp, 0)
            }
            OCSD_OP_RESET => {
                if let Some(d) = self.dec.as_ref() {
                    if let Some(msg) = env.attached.missing_for(d) {
                        return (not_init(d, msg, &mut *env.log, self.numbered), 0);
                    }
                }
                self.proc_.reset(index);
                if let Some(d) = self.dec.as_mut() {
                    d.reset(index);
                }
                self.queue.clear();
                self.pending_resp = OCSD_RESP_CONT;
                self.dec_suspended = false;
                if let Some(s) = self.sink.as_mut() {
                    s.packet(OCSD_OP_RESET, index, None, std::ptr::null(), &[]);
                }
                if let Some(m) = self.monitor.as_mut() {
                    m.packet(OCSD_OP_RESET, index, None, std::ptr::null(), &[]);
                }
                (OCSD_RESP_CONT, 0)
            }
            _ => (OCSD_RESP_FATAL_INVALID_OP, 0),
        }
    }

    fn set_numbered_names(&mut self, numbered: bool) {
        self.numbered = numbered;
    }

    fn set_monitor(&mut self, obs: Option<Box<dyn PacketObserver>>) {
        self.monitor = obs;
    }

    fn set_sink(&mut self, obs: Option<Box<dyn PacketObserver>>) -> ocsd_err_t {
        if self.dec.is_some() {
            // a full decoder consumes the packets: no sink to attach
            return OCSD_ERR_INVALID_PARAM_TYPE;
        }
        self.sink = obs;
        OCSD_OK
    }

    fn set_proc_op_flags(&mut self, flags: u32) {
        self.proc_flags = flags;
        self.proc_.set_op_flags(flags);
    }

    fn set_dec_op_flags(&mut self, flags: u32) {
        if let Some(d) = self.dec.as_mut() {
            d.set_op_flags(flags);
        }
    }

    fn stats(&self) -> (bool, u32, u32) {
        let (h, s) = self.proc_.error_counts();
        (self.proc_.is_synced(), h, s)
    }

    fn live_stats(&self) -> Option<(LiveStats, bool)> {
        Some((self.stats.clone(), self.proc_.keeps_stats()))
    }

    fn same_state(&self, other: &dyn TraceIdDecoder) -> bool {
        let Some(o) = other.as_any().downcast_ref::<Self>() else { return false };
        let quiet = |s: &Self| s.queue.is_empty() && s.pending_resp == OCSD_RESP_CONT && !s.dec_suspended;
        quiet(self)
            && quiet(o)
            && self.proc_.same_state(&o.proc_)
            && match (&self.dec, &o.dec) {
                (Some(a), Some(b)) => a.same_state(b),
                (None, None) => true,
                _ => false,
            }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
