//! The decode tree: trace data in (formatted frames or a single source),
//! through the deformatter to one decode stack per trace ID, generic
//! elements out to the client.
#![forbid(unsafe_code)]

pub mod custom;
pub mod parallel;
pub mod registry;
pub mod stack;

use std::any::Any;

use crate::abi::gen_elem::ocsd_generic_trace_elem;
use crate::abi::*;
use crate::common::error::LevelLog;
use crate::common::{ErrorLog, GenElemSink, OcsdError};
use crate::deformatter::{DeformatterOut, FrameDeformatter};
use crate::mem::MemMapper;
pub use stack::{Interfaces, PacketObserver, Stack, StackEnv, TraceIdDecoder};

/// Receives the deformatter's raw frame output.
pub trait RawFrameMonitor {
    fn raw_frame(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, elem: ocsd_rawframe_elem_t, data: &[u8], id: u8);
}

/// An element sink that accepts everything (when the client set none).
struct Discard;
impl GenElemSink for Discard {
    fn trace_elem_in(&mut self, _: ocsd_trc_index_t, _: u8, _: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        OCSD_RESP_CONT
    }
}

pub struct DecodeTree {
    src_type: ocsd_dcd_tree_src_t,
    deformatter: Option<FrameDeformatter>,
    stacks: Vec<Option<Box<dyn TraceIdDecoder>>>,
    /// Bit `i`: `stacks[i]` may hold a decoder (set when one is added,
    /// cleared when it is removed), so operations for every trace ID visit
    /// only those.
    live: u128,
    /// Bit `i`: a decoder for slot `i` failed to be created after OpenCSD
    /// would have made its slot ([`DecodeTree::hold_slot`]): the slot is
    /// taken until removed.
    held: u128,
    id_filter: Option<[bool; 128]>,
    pub mapper: MemMapper,
    elem_sink: Option<Box<dyn GenElemSink>>,
    logger: Box<dyn ErrorLog>,
    /// Where the frame deformatter reports, when not to `logger` (see
    /// [`DecodeTree::set_deformatter_logger`]).
    dfmt_logger: Option<Box<dyn ErrorLog>>,
    raw_monitor: Option<Box<dyn RawFrameMonitor>>,
    pub stats_demux_enabled: bool,
    /// A fatal response from one trace ID held back while another ID still
    /// has elements for a waiting client (see [`TreeOut::id_op_all`]).
    pending_fatal: ocsd_datapath_resp_t,
    /// Decoders need an element sink and (instruction following) memory
    /// attached, as OpenCSD's do (see [`Interfaces`]): set by the C API,
    /// whose trees start with neither.
    pub interfaces_required: bool,
    /// A memory access interface is attached (OpenCSD's C API creates its
    /// memory map with the first accessor added).
    pub mem_attached: bool,
    /// Per slot, the logger's verbosity when its decoder was added: the
    /// most its components log ([`LevelLog`]).
    log_levels: [ocsd_err_severity_t; 128],
}

impl DecodeTree {
    /// A tree for `src_type` input; `deformatter_flags` configure the frame
    /// deformatter of a formatted source.
    pub fn new(src_type: ocsd_dcd_tree_src_t, deformatter_flags: u32, logger: Box<dyn ErrorLog>) -> Result<Self, ocsd_err_t> {
        let mut tree = DecodeTree {
            src_type,
            deformatter: None,
            stacks: (0..128).map(|_| None).collect(),
            live: 0,
            held: 0,
            id_filter: None,
            mapper: MemMapper::new(),
            elem_sink: None,
            logger,
            dfmt_logger: None,
            raw_monitor: None,
            stats_demux_enabled: true,
            pending_fatal: OCSD_RESP_CONT,
            interfaces_required: false,
            mem_attached: true,
            log_levels: [OCSD_ERR_SEV_INFO; 128],
        };
        match src_type {
            OCSD_TRC_SRC_FRAME_FORMATTED => {
                let mut d = FrameDeformatter::new();
                // (the logger is attached, and its verbosity taken, before
                // the configuration is checked)
                d.set_log_level(tree.logger.verbosity());
                let err = d.configure(deformatter_flags, tree.logger.as_mut());
                if err != OCSD_OK {
                    return Err(err);
                }
                tree.deformatter = Some(d);
            }
            // any other source type is a single source, as OpenCSD's tree
            // takes it (only a formatted one gets a frame deformatter)
            _ => tree.src_type = OCSD_TRC_SRC_SINGLE,
        }
        Ok(tree)
    }

    pub fn src_type(&self) -> ocsd_dcd_tree_src_t {
        self.src_type
    }

    pub fn deformatter_mut(&mut self) -> Option<&mut FrameDeformatter> {
        self.deformatter.as_mut()
    }

    /// Reconfigure the deformatter (`OCSD_ERR_DCDT_NO_FORMATTER` on a
    /// single-source tree).
    pub fn configure_deformatter(&mut self, flags: u32) -> ocsd_err_t {
        let log = match self.dfmt_logger.as_mut() {
            Some(l) => l.as_mut(),
            None => self.logger.as_mut(),
        };
        match self.deformatter.as_mut() {
            Some(d) => d.configure(flags, log),
            None => OCSD_ERR_DCDT_NO_FORMATTER,
        }
    }

    pub fn logger_mut(&mut self) -> &mut dyn ErrorLog {
        self.logger.as_mut()
    }

    pub fn set_logger(&mut self, logger: Box<dyn ErrorLog>) {
        self.logger = logger;
    }

    /// Give the frame deformatter its own error logger (None: the tree's).
    ///
    /// OpenCSD attaches each component to the logger that is current when
    /// the component is created. Its `trc_pkt_lister` creates the tree (and
    /// with it the deformatter) while the library's default logger is
    /// current, and only then switches to its own logger for the decoders:
    /// the deformatter's errors never reach the lister's log, nor its "last
    /// error". The lister reproduces that with this call.
    pub fn set_deformatter_logger(&mut self, logger: Option<Box<dyn ErrorLog>>) {
        if let Some(d) = self.deformatter.as_mut() {
            d.set_log_level(logger.as_ref().unwrap_or(&self.logger).verbosity());
        }
        self.dfmt_logger = logger;
    }

    pub fn set_elem_sink(&mut self, sink: Option<Box<dyn GenElemSink>>) {
        self.elem_sink = sink;
    }

    pub fn set_raw_monitor(&mut self, mon: Option<Box<dyn RawFrameMonitor>>) {
        self.raw_monitor = mon;
    }

    /// Only decode these trace IDs (None: all).
    pub fn set_id_filter(&mut self, ids: Option<&[u8]>) {
        self.id_filter = ids.map(|ids| {
            let mut f = [false; 128];
            for &i in ids {
                if let Some(e) = f.get_mut(i as usize) {
                    *e = true;
                }
            }
            f
        });
    }

    /// The key a decoder for trace ID `cs_id` is stored under: the ID for a
    /// formatted source; 0 for the one decoder of a single-source tree.
    /// As OpenCSD's tree finds a decoder by trace ID, a reserved ID (0,
    /// 0x70 to 0x7F) on a formatted tree finds the decoder of slot 0 (the
    /// one for trace ID 0, if any).
    fn slot_for(&self, cs_id: u8) -> usize {
        Self::slot_of(self.src_type, cs_id)
    }

    /// The slot that answers for trace ID `cs_id` on a tree of source type
    /// `src_type`: the ID on a formatted tree, 0 on a single-source tree
    /// and for IDs a formatted tree does not take.
    pub fn slot_of(src_type: ocsd_dcd_tree_src_t, cs_id: u8) -> usize {
        if src_type == OCSD_TRC_SRC_SINGLE || !is_valid_cs_src_id(cs_id) {
            0
        } else {
            cs_id as usize
        }
    }

    /// The statistics block of each slot's decoder that has one, shared,
    /// and whether its processor keeps statistics.
    pub fn live_stats(&self) -> Vec<(usize, (crate::common::LiveStats, bool))> {
        self.stacks.iter().enumerate().filter_map(|(i, s)| Some((i, s.as_ref()?.live_stats()?))).collect()
    }

    /// The slot a new decoder for trace ID `cs_id` takes: the ID itself on
    /// a formatted tree (any ID below 0x80), 0 on a single-source tree.
    fn new_slot(&self, cs_id: u8) -> usize {
        if self.src_type == OCSD_TRC_SRC_SINGLE {
            0
        } else {
            cs_id as usize
        }
    }

    /// Attach a decode stack, as `ocsd_dt_create_decoder` does.
    ///
    /// As in OpenCSD, the decoder's components log under numbered names
    /// (`DCD_ETMV4_0016`) on a tree with a frame deformatter and under plain
    /// names (`DCD_ETMV4`) on a single-source tree.
    ///
    /// A formatted tree takes any trace ID below 0x80, the reserved ones
    /// (0, 0x70 to 0x7F) too, as OpenCSD's does: the frame deformatter
    /// sends a decoder the data of its ID, whatever the ID.
    pub fn add_decoder(&mut self, mut dec: Box<dyn TraceIdDecoder>) -> Result<u8, ocsd_err_t> {
        let cs_id = dec.cs_id();
        let slot = self.new_slot(cs_id);
        if slot >= self.stacks.len() {
            return Err(OCSD_ERR_INVALID_ID);
        }
        if self.slot_taken(cs_id) {
            return Err(OCSD_ERR_ATTACH_TOO_MANY);
        }
        dec.set_numbered_names(self.src_type == OCSD_TRC_SRC_FRAME_FORMATTED);
        self.log_levels[slot] = self.logger.verbosity();
        self.stacks[slot] = Some(dec);
        self.live |= 1u128 << slot;
        Ok(cs_id)
    }

    /// Hold the slot of trace ID `cs_id` (0 on a single-source tree) as
    /// taken: OpenCSD's tree makes a trace ID's slot before it creates the
    /// decoder, and leaves it when the decoder's creation fails (bad create
    /// flags, a custom factory's error), so that a later decoder for the ID
    /// is refused (`OCSD_ERR_ATTACH_TOO_MANY`) until the ID is removed.
    /// Nothing is decoded for a held slot.
    pub fn hold_slot(&mut self, cs_id: u8) {
        let slot = self.new_slot(cs_id);
        if slot < self.stacks.len() && self.stacks[slot].is_none() {
            self.held |= 1u128 << slot;
        }
    }

    /// Whether the slot a decoder for trace ID `cs_id` would take (0 on a
    /// single-source tree) holds a decoder or is held.
    pub fn slot_taken(&self, cs_id: u8) -> bool {
        let slot = self.new_slot(cs_id);
        slot >= self.stacks.len() || self.stacks[slot].is_some() || self.held & (1u128 << slot) != 0
    }

    /// Remove the decoder of trace ID `cs_id`.
    pub fn remove_decoder(&mut self, cs_id: u8) -> ocsd_err_t {
        // (as OpenCSD's: a reserved ID is refused on a formatted tree, so a
        // decoder for one stays until the tree goes)
        if cs_id as usize >= 128 || (self.src_type == OCSD_TRC_SRC_FRAME_FORMATTED && !is_valid_cs_src_id(cs_id)) {
            return OCSD_ERR_INVALID_ID;
        }
        let slot = self.slot_for(cs_id);
        let held = self.held & (1u128 << slot) != 0;
        self.held &= !(1u128 << slot);
        match self.stacks[slot].take() {
            Some(_) => {
                self.live &= !(1u128 << slot);
                OCSD_OK
            }
            None if held => OCSD_OK,
            None => OCSD_ERR_INVALID_PARAM_VAL,
        }
    }

    /// The decoder stored under `id` (element ID as the lister names it).
    pub fn decoder_mut(&mut self, id: u8) -> Option<&mut (dyn TraceIdDecoder + 'static)> {
        self.stacks.get_mut(id as usize).and_then(|s| s.as_deref_mut())
    }

    /// The decoder for trace ID `cs_id` (single source: the one decoder).
    pub fn decoder_for_cs_id(&mut self, cs_id: u8) -> Option<&mut (dyn TraceIdDecoder + 'static)> {
        if cs_id as usize >= 128 {
            return None;
        }
        let slot = self.slot_for(cs_id);
        self.decoder_mut(slot as u8)
    }

    /// (element id, decoder) for every attached decoder, in ID order.
    pub fn element_ids(&self) -> Vec<u8> {
        (0..128u8).filter(|&i| self.stacks[i as usize].is_some()).collect()
    }

    pub fn decoder_names(&self) -> Vec<(u8, String)> {
        self.stacks
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|d| (i as u8, d.decoder_name().to_string())))
            .collect()
    }

    /// `ocsd_dt_process_data`: returns the response and bytes consumed.
    pub fn data_in(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, data: &[u8]) -> (ocsd_datapath_resp_t, usize) {
        self.data_in_with_tail(op, index, data, &[])
    }

    /// As [`DecodeTree::data_in`], for a caller whose `data` sits in a larger
    /// buffer: `tail` is what follows it there. Single-source decoders that
    /// reproduce OpenCSD's over-reads (see [`crate::deformatter::OUT_CHAN_SIZE`])
    /// show those bytes; nothing is decoded from them.
    pub fn data_in_with_tail(
        &mut self,
        op: ocsd_datapath_op_t,
        index: ocsd_trc_index_t,
        data: &[u8],
        tail: &[u8],
    ) -> (ocsd_datapath_resp_t, usize) {
        self.data_in_sink(op, index, data, tail, None)
    }

    /// As [`DecodeTree::data_in`], the elements going to `sink` instead of
    /// the tree's element sink (for this call only).
    pub fn data_in_to(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, data: &[u8], sink: &mut dyn GenElemSink) -> (ocsd_datapath_resp_t, usize) {
        self.data_in_sink(op, index, data, &[], Some(sink))
    }

    fn data_in_sink(
        &mut self,
        op: ocsd_datapath_op_t,
        index: ocsd_trc_index_t,
        data: &[u8],
        tail: &[u8],
        given: Option<&mut dyn GenElemSink>,
    ) -> (ocsd_datapath_resp_t, usize) {
        let attached = Interfaces {
            elem_out: !self.interfaces_required || self.elem_sink.is_some() || given.is_some(),
            mem: !self.interfaces_required || self.mem_attached,
        };
        let DecodeTree { deformatter, stacks, live, id_filter, mapper, elem_sink, logger, dfmt_logger, raw_monitor, src_type, pending_fatal, log_levels, .. } =
            self;
        let mut discard = Discard;
        let sink: &mut dyn GenElemSink = match (given, elem_sink.as_deref_mut()) {
            (Some(s), _) => s,
            (None, Some(s)) => s,
            (None, None) => &mut discard,
        };
        match deformatter {
            Some(d) => {
                let mut out = TreeOut {
                    stacks,
                    live: *live,
                    id_filter: id_filter.as_ref(),
                    mapper,
                    sink,
                    logger: logger.as_mut(),
                    dfmt_logger: dfmt_logger.as_deref_mut(),
                    raw_monitor: raw_monitor.as_deref_mut(),
                    pending_fatal,
                    attached,
                    log_levels,
                };
                d.data_in(op, index, data, &mut out)
            }
            None => {
                debug_assert_eq!(*src_type, OCSD_TRC_SRC_SINGLE);
                match stacks[0].as_deref_mut() {
                    Some(stack) => {
                        let mut log = LevelLog { inner: logger.as_mut(), max: log_levels[0] };
                        let mut env = StackEnv { elem_sink: Some(sink), mem: mapper, log: &mut log, attached };
                        if op == OCSD_OP_DATA {
                            stack.data_in_tail(index, data, tail, &mut env)
                        } else {
                            stack.data_in(op, index, data, &mut env)
                        }
                    }
                    None => {
                        logger.log_error(
                            "DCD_TREE",
                            &OcsdError::with_msg(OCSD_ERR_SEV_ERROR, OCSD_ERR_NOT_INIT, "No decoder attached to single source tree"),
                        );
                        (OCSD_RESP_FATAL_NOT_INIT, 0)
                    }
                }
            }
        }
    }

    /// Demultiplexer statistics of the deformatter.
    pub fn demux_stats(&self) -> Option<ocsd_demux_stats_t> {
        self.deformatter.as_ref().map(|d| d.demux_stats())
    }

    /// The deformatter's statistics block, shared (None without one).
    pub fn live_demux_stats(&self) -> Option<crate::common::LiveDemux> {
        self.deformatter.as_ref().map(|d| d.live_stats())
    }

    pub fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

struct TreeOut<'a> {
    stacks: &'a mut Vec<Option<Box<dyn TraceIdDecoder>>>,
    /// [`DecodeTree::live`].
    live: u128,
    id_filter: Option<&'a [bool; 128]>,
    mapper: &'a mut MemMapper,
    sink: &'a mut dyn GenElemSink,
    logger: &'a mut dyn ErrorLog,
    dfmt_logger: Option<&'a mut (dyn ErrorLog + 'static)>,
    raw_monitor: Option<&'a mut (dyn RawFrameMonitor + 'static)>,
    pending_fatal: &'a mut ocsd_datapath_resp_t,
    attached: Interfaces,
    log_levels: &'a [ocsd_err_severity_t; 128],
}

impl TreeOut<'_> {
    fn passes_filter(&self, id: u8) -> bool {
        self.id_filter.is_none_or(|f| f.get(id as usize).copied().unwrap_or(false))
    }
}

impl DeformatterOut for TreeOut<'_> {
    fn id_attached(&self, id: u8) -> bool {
        self.passes_filter(id) && self.stacks.get(id as usize).is_some_and(|s| s.is_some())
    }

    fn id_data(&mut self, id: u8, index: ocsd_trc_index_t, data: &[u8], tail: &[u8]) -> (ocsd_datapath_resp_t, usize) {
        let TreeOut { stacks, mapper, sink, logger, attached, log_levels, .. } = self;
        match stacks.get_mut(id as usize).and_then(|s| s.as_deref_mut()) {
            Some(stack) => {
                let mut log = LevelLog { inner: *logger, max: log_levels[id as usize] };
                let mut env = StackEnv { elem_sink: Some(&mut **sink), mem: *mapper, log: &mut log, attached: *attached };
                stack.data_in_tail(index, data, tail, &mut env)
            }
            None => (OCSD_RESP_CONT, data.len()),
        }
    }

    /// A data-less operation for every attached trace ID, in ID order.
    ///
    /// FLUSH stops at the first trace ID that still has elements for a
    /// waiting client (answering WAIT), so a client that flushes until it
    /// gets CONT sees each ID's elements in order. EOT, as in OpenCSD, is
    /// given to every ID; what a waiting client has not taken stays queued
    /// per ID until it flushes. A fatal response from one ID is held back
    /// while any ID still has elements for the waiting client, so a client
    /// that resets on a fatal error loses none of them.
    fn id_op_all(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t) -> ocsd_datapath_resp_t {
        if op == OCSD_OP_RESET {
            *self.pending_fatal = OCSD_RESP_CONT;
        }
        let mut resp = OCSD_RESP_CONT;
        let mut fatal = OCSD_RESP_CONT;
        let mut waiting = false;
        // the IDs that may have a decoder, in ascending order
        let mut live = self.live;
        while live != 0 {
            let id = live.trailing_zeros() as u8;
            live &= live - 1;
            if !self.passes_filter(id) {
                continue;
            }
            let TreeOut { stacks, mapper, sink, logger, attached, log_levels, .. } = self;
            if let Some(stack) = stacks[id as usize].as_deref_mut() {
                let mut log = LevelLog { inner: *logger, max: log_levels[id as usize] };
                let mut env = StackEnv { elem_sink: Some(&mut **sink), mem: *mapper, log: &mut log, attached: *attached };
                let (r, _) = stack.data_in(op, index, &[], &mut env);
                if resp_is_fatal(r) {
                    fatal = fatal.max(r);
                } else {
                    resp = resp.max(r);
                }
                if resp_is_wait(r) {
                    waiting = true;
                    if op == OCSD_OP_FLUSH {
                        break;
                    }
                }
            }
        }
        // one ID's fatal error must not make the client reset while another
        // still has elements for it: report it once they are all delivered
        let fatal = fatal.max(std::mem::replace(self.pending_fatal, OCSD_RESP_CONT));
        if waiting {
            *self.pending_fatal = fatal;
            resp
        } else {
            resp.max(fatal)
        }
    }

    fn raw_frame(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, elem: ocsd_rawframe_elem_t, data: &[u8], id: u8) {
        if let Some(m) = self.raw_monitor.as_deref_mut() {
            m.raw_frame(op, index, elem, data, id);
        }
    }

    fn has_raw_monitor(&self) -> bool {
        self.raw_monitor.is_some()
    }

    fn logger(&mut self) -> &mut dyn ErrorLog {
        match self.dfmt_logger.as_deref_mut() {
            Some(l) => l,
            None => self.logger,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::error::NullLog;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A decoder that records the operations it is given and answers
    /// `flush_resp` to FLUSH.
    struct Probe {
        id: u8,
        seen: Rc<RefCell<Vec<(u8, ocsd_datapath_op_t)>>>,
        flush_resp: ocsd_datapath_resp_t,
    }

    impl TraceIdDecoder for Probe {
        fn decoder_name(&self) -> &str {
            "PROBE"
        }
        fn protocol(&self) -> ocsd_trace_protocol_t {
            OCSD_PROTOCOL_CUSTOM_0
        }
        fn cs_id(&self) -> u8 {
            self.id
        }
        fn has_decoder(&self) -> bool {
            true
        }
        fn data_in(&mut self, op: ocsd_datapath_op_t, _: ocsd_trc_index_t, data: &[u8], _: &mut StackEnv) -> (ocsd_datapath_resp_t, usize) {
            self.seen.borrow_mut().push((self.id, op));
            let r = if op == OCSD_OP_FLUSH { self.flush_resp } else { OCSD_RESP_CONT };
            (r, data.len())
        }
        fn set_monitor(&mut self, _: Option<Box<dyn PacketObserver>>) {}
        fn set_sink(&mut self, _: Option<Box<dyn PacketObserver>>) -> ocsd_err_t {
            OCSD_OK
        }
        fn set_proc_op_flags(&mut self, _: u32) {}
        fn set_dec_op_flags(&mut self, _: u32) {}
        fn stats(&self) -> (bool, u32, u32) {
            (true, 0, 0)
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
        fn as_any_mut(&mut self) -> &mut dyn Any {
            self
        }
    }

    #[test]
    fn operations_for_every_id_reach_the_attached_decoders_in_id_order() {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let mut tree = DecodeTree::new(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN, Box::new(NullLog)).unwrap();
        let probe = |id: u8, flush_resp| Box::new(Probe { id, seen: seen.clone(), flush_resp });
        for id in [0x6f, 0x30, 0x10, 0x12] {
            tree.add_decoder(probe(id, OCSD_RESP_CONT)).unwrap();
        }
        assert_eq!(tree.remove_decoder(0x30), OCSD_OK);
        tree.add_decoder(probe(0x05, OCSD_RESP_CONT)).unwrap();
        let ops = |seen: &Rc<RefCell<Vec<(u8, ocsd_datapath_op_t)>>>| std::mem::take(&mut *seen.borrow_mut());
        assert_eq!(tree.data_in(OCSD_OP_EOT, 0, &[]).0, OCSD_RESP_CONT);
        assert_eq!(ops(&seen), vec![(0x05, OCSD_OP_EOT), (0x10, OCSD_OP_EOT), (0x12, OCSD_OP_EOT), (0x6f, OCSD_OP_EOT)]);
        // a removed decoder's ID is skipped; one added again is visited
        assert_eq!(tree.remove_decoder(0x10), OCSD_OK);
        tree.add_decoder(probe(0x30, OCSD_RESP_CONT)).unwrap();
        tree.data_in(OCSD_OP_RESET, 0, &[]);
        assert_eq!(ops(&seen), vec![(0x05, OCSD_OP_RESET), (0x12, OCSD_OP_RESET), (0x30, OCSD_OP_RESET), (0x6f, OCSD_OP_RESET)]);
        // a FLUSH stops at the first ID still waiting for the client
        assert_eq!(tree.remove_decoder(0x12), OCSD_OK);
        tree.add_decoder(probe(0x12, OCSD_RESP_WAIT)).unwrap();
        assert_eq!(tree.data_in(OCSD_OP_FLUSH, 0, &[]).0, OCSD_RESP_WAIT);
        assert_eq!(ops(&seen), vec![(0x05, OCSD_OP_FLUSH), (0x12, OCSD_OP_FLUSH)]);
    }
}
