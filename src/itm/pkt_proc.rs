//! ITM packet processor: bytes of one trace ID (or a raw ITM stream) in,
//! ITM packets out (OpenCSD's `TrcPktProcItm`).
//!
//! Before the first ASYNC, the processor dumps unsynchronised bytes to the
//! packet monitor only, in pieces of at most 8 bytes, and sends a single
//! NOTSYNC packet to the decoder, as OpenCSD does.

use super::config::ItmConfig;
use super::types::*;
use crate::abi::*;
use crate::common::{LiveStats, OcsdError, PacketOut, PacketProcessor};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ProcState {
    WaitSync,
    ProcHdr,
    ProcData,
    SendPkt,
}

/// The routine that reads the current packet's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PktFn {
    Async,
    LocalTS,
    GlobalTS1,
    GlobalTS2,
    Extension,
    Data,
}

#[derive(Debug, Clone, Copy)]
struct PktErr {
    code: ocsd_err_t,
    msg: &'static str,
}

/// ITM packet processor.
pub struct ItmPktProc {
    cfg: ItmConfig,
    name: String,
    op_flags: u32,

    state: ProcState,
    stream_sync: bool,
    cur_fn: PktFn,
    pkt: ocsd_itm_pkt,

    used: usize,
    packet_index: ocsd_trc_index_t,
    header: u8,
    packet_data: Vec<u8>,

    sent_notsync: bool,
    sync_start: bool,
    dump_unsynced: usize,

    /// Bad header and sequence errors (OpenCSD's processor for this
    /// protocol keeps no statistics block: they are not handed out).

    stats: LiveStats,
}

impl ItmPktProc {
    /// A processor for the ITM described by `cfg`; its error messages come
    /// from `PKTP_ITM_<trace id, 4 decimal digits>`.
    pub fn new(cfg: &ocsd_itm_cfg) -> Self {
        Self::with_config(ItmConfig::new(cfg))
    }

    pub fn with_config(cfg: ItmConfig) -> Self {
        let mut p = ItmPktProc {
            name: format!("PKTP_ITM_{:04}", cfg.trace_id()),
            cfg,
            op_flags: 0,
            state: ProcState::WaitSync,
            stream_sync: false,
            cur_fn: PktFn::Data,
            pkt: ocsd_itm_pkt::default(),
            used: 0,
            packet_index: 0,
            header: 0,
            packet_data: Vec::with_capacity(16),
            sent_notsync: false,
            sync_start: false,
            dump_unsynced: 0,
            stats: LiveStats::new(),
        };
        p.init_processor_state();
        p
    }

    /// The component name used in error messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn config(&self) -> &ItmConfig {
        &self.cfg
    }

    fn init_processor_state(&mut self) {
        self.state = ProcState::WaitSync;
        self.stream_sync = false;
        self.init_next_packet();
        self.sent_notsync = false;
        self.sync_start = false;
        self.dump_unsynced = 0;
    }

    fn init_next_packet(&mut self) {
        self.packet_data.clear();
        self.pkt.init();
    }

    fn bad_sequence(&mut self, msg: &'static str) -> PktErr {
        self.pkt.update_err_type(ITM_PKT_BAD_SEQUENCE);
        PktErr { code: OCSD_ERR_BAD_PACKET_SEQ, msg }
    }

    fn reserved_hdr(&mut self) -> PktErr {
        self.pkt.type_ = ITM_PKT_RESERVED;
        PktErr { code: OCSD_ERR_INVALID_PCKT_HDR, msg: "" }
    }

    fn data_to_process(&self, data: &[u8]) -> bool {
        self.used < data.len() || self.state == ProcState::SendPkt
    }

    fn read_byte(&mut self, data: &[u8]) -> Option<u8> {
        let b = *data.get(self.used)?;
        self.used += 1;
        self.packet_data.push(b);
        Some(b)
    }

    fn output_packet(&mut self, out: &mut dyn PacketOut<ocsd_itm_pkt>) -> ocsd_datapath_resp_t {
        let resp = out.packet(self.packet_index, &self.pkt, &self.packet_data);
        self.init_next_packet();
        self.state = if self.stream_sync { ProcState::ProcHdr } else { ProcState::WaitSync };
        resp
    }

    // ---- sync search ---------------------------------------------------------

    /// Unsynced bytes to the monitor; the NOTSYNC packet to the decoder once.
    fn flush_unsynced(&mut self, out: &mut dyn PacketOut<ocsd_itm_pkt>) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        let n = self.dump_unsynced.min(self.packet_data.len());
        if n > 0 {
            out.packet_to_monitor(self.packet_index, &self.pkt, &self.packet_data[..n]);
        }
        if !self.sent_notsync {
            resp = out.packet_to_sink(self.packet_index, &self.pkt);
            self.sent_notsync = true;
        }
        self.packet_data.drain(..n);
        self.dump_unsynced = 0;
        resp
    }

    /// Read an ASYNC sequence (at least 5 zero bytes, counting the header,
    /// then 0x80); returns (found, error).
    fn read_async_seq(&mut self, data: &[u8]) -> (bool, bool) {
        while self.packet_data.len() < 5 {
            match self.read_byte(data) {
                None => return (false, false),
                Some(0) => {}
                Some(_) => return (false, true),
            }
        }
        loop {
            match self.read_byte(data) {
                None => return (false, false),
                Some(0x80) => return (true, false),
                Some(0) => {}
                Some(_) => return (false, true),
            }
        }
    }

    fn wait_for_sync(
        &mut self,
        blk_index: ocsd_trc_index_t,
        data: &[u8],
        out: &mut dyn PacketOut<ocsd_itm_pkt>,
    ) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        self.pkt.type_ = ITM_PKT_NOTSYNC;
        self.dump_unsynced = 0;
        if !self.sync_start {
            self.packet_index = blk_index.wrapping_add(self.used as u32);
        }

        while !self.stream_sync && self.data_to_process(data) && resp_is_cont(resp) {
            if self.sync_start {
                let (found, err) = self.read_async_seq(data);
                self.stream_sync = found;
                if found {
                    self.pkt.type_ = ITM_PKT_ASYNC;
                    self.state = ProcState::SendPkt;
                } else if err {
                    // not an ASYNC after all: back to the hunt.
                    self.dump_unsynced = self.packet_data.len();
                    self.sync_start = false;
                }
            }
            if !self.sync_start {
                let Some(b) = self.read_byte(data) else { break };
                if b == 0 {
                    // possible ASYNC start: flush what came before.
                    self.sync_start = true;
                    resp = self.flush_unsynced(out);
                    self.packet_index = blk_index.wrapping_add(self.used as u32 - 1);
                } else {
                    self.dump_unsynced += 1;
                    if self.dump_unsynced >= 8 {
                        resp = self.flush_unsynced(out);
                    }
                }
            }
        }

        if !self.stream_sync && !self.sync_start {
            resp = self.flush_unsynced(out);
        }
        resp
    }

    // ---- packets -------------------------------------------------------------

    fn process_header(&mut self, data: &[u8]) -> Result<(), PktErr> {
        let Some(h) = self.read_byte(data) else { return Ok(()) };
        self.header = h;
        let (ty, f) = if h & 0x03 != 0 {
            // stimulus data: SWIT or DWT
            (if h & 0x4 != 0 { ITM_PKT_DWT } else { ITM_PKT_SWIT }, Some(PktFn::Data))
        } else if h & 0x0F == 0 {
            match h & 0xF0 {
                0x00 => (ITM_PKT_ASYNC, Some(PktFn::Async)),
                0x70 => (ITM_PKT_OVERFLOW, None),
                _ => (ITM_PKT_TS_LOCAL, Some(PktFn::LocalTS)),
            }
        } else if h & 0x0B == 0x08 {
            (ITM_PKT_EXTENSION, Some(PktFn::Extension))
        } else if h & 0xDF == 0x94 {
            if h & 0x20 == 0 {
                (ITM_PKT_TS_GLOBAL_1, Some(PktFn::GlobalTS1))
            } else {
                (ITM_PKT_TS_GLOBAL_2, Some(PktFn::GlobalTS2))
            }
        } else {
            return Err(self.reserved_hdr());
        };
        self.pkt.type_ = ty;
        match f {
            Some(f) => {
                self.cur_fn = f;
                self.state = ProcState::ProcData;
            }
            None => self.state = ProcState::SendPkt,
        }
        Ok(())
    }

    /// Read continuation bytes (bit 7 set: more follow) up to `limit` bytes
    /// in the packet; true when the last byte was read.
    fn read_cont_bytes(&mut self, data: &[u8], limit: usize) -> bool {
        while self.packet_data.len() < limit {
            match self.read_byte(data) {
                None => return false,
                Some(b) if b & 0x80 == 0 => return true,
                Some(_) => {}
            }
        }
        false
    }

    fn cont_value(&self) -> u64 {
        self.packet_data[1..]
            .iter()
            .enumerate()
            .fold(0u64, |v, (i, b)| v | (u64::from(b & 0x7F) << (7 * i)))
    }

    fn run_fn(&mut self, data: &[u8]) -> Result<(), PktErr> {
        match self.cur_fn {
            PktFn::Data => {
                let req = match self.header & 0x3 {
                    3 => 4,
                    n => usize::from(n),
                };
                if self.packet_data.len() == 1 {
                    self.pkt.src_id = (self.header >> 3) & 0x1F;
                }
                while self.packet_data.len() - 1 < req {
                    if self.read_byte(data).is_none() {
                        break;
                    }
                }
                if self.packet_data.len() - 1 == req {
                    let mut bytes = [0u8; 4];
                    bytes[..req].copy_from_slice(&self.packet_data[1..=req]);
                    self.pkt.set_value(u32::from_le_bytes(bytes), req as u8);
                    self.state = ProcState::SendPkt;
                }
            }
            PktFn::LocalTS => {
                const LIMIT: usize = 5;
                if self.packet_data.len() == 1 {
                    if self.header & 0x80 != 0 {
                        self.pkt.src_id = (self.header >> 4) & 0x3;
                    } else {
                        // single byte: value in the header, TS sync
                        self.pkt.src_id = 0;
                        self.pkt.set_value(u32::from((self.header >> 4) & 0x7), 1);
                        self.state = ProcState::SendPkt;
                        return Ok(());
                    }
                }
                if self.read_cont_bytes(data, LIMIT) {
                    let n = (self.packet_data.len() - 1) as u8;
                    self.pkt.set_value(self.cont_value() as u32, n);
                    self.state = ProcState::SendPkt;
                } else if self.packet_data.len() == LIMIT {
                    return Err(self.bad_sequence("Local TS packet: Payload continuation value too long"));
                }
            }
            PktFn::GlobalTS1 => {
                const LIMIT: usize = 5;
                if self.read_cont_bytes(data, LIMIT) {
                    if self.packet_data.len() == 5 {
                        // bits [6:5] of the 4th payload byte: wrap, clock change
                        let b = self.packet_data[4];
                        self.pkt.src_id = (b >> 5) & 0x3;
                        self.packet_data[4] = b & 0x1F;
                    }
                    let n = (self.packet_data.len() - 1) as u8;
                    self.pkt.set_value(self.cont_value() as u32, n);
                    self.state = ProcState::SendPkt;
                } else if self.packet_data.len() == LIMIT {
                    return Err(self.bad_sequence("GTS1 packet: Payload continuation value too long"));
                }
            }
            PktFn::GlobalTS2 => {
                const LIMIT: usize = 7;
                if self.read_cont_bytes(data, LIMIT) {
                    if self.packet_data.len() <= 5 {
                        let n = (self.packet_data.len() - 1) as u8;
                        self.pkt.set_value(self.cont_value() as u32, n);
                    } else {
                        self.pkt.set_ext_value(self.cont_value());
                    }
                    self.state = ProcState::SendPkt;
                } else if self.packet_data.len() == LIMIT {
                    return Err(self.bad_sequence("GTS2 packet: Payload continuation value too long"));
                }
            }
            PktFn::Extension => {
                const LIMIT: usize = 5;
                const N_BITS: [u8; 5] = [2, 9, 16, 23, 31];
                let done = self.header & 0x80 == 0 || self.read_cont_bytes(data, LIMIT);
                if done {
                    let mut src = N_BITS[(self.packet_data.len() - 1).min(4)];
                    if self.header & 0x4 != 0 {
                        src |= 0x80;
                    }
                    self.pkt.src_id = src;
                    let mut value = 0u32;
                    if self.packet_data.len() > 1 {
                        value = (self.cont_value() as u32) << 3;
                    }
                    value |= u32::from((self.header >> 4) & 0x7);
                    self.pkt.set_value(value, 4);
                    self.state = ProcState::SendPkt;
                } else if self.packet_data.len() == LIMIT {
                    return Err(self.bad_sequence("Extension packet: Payload continuation value too long"));
                }
            }
            PktFn::Async => {
                let (found, err) = self.read_async_seq(data);
                if found {
                    self.state = ProcState::SendPkt;
                } else if err {
                    return Err(self.bad_sequence("Async Packet: unexpected none zero value"));
                }
            }
        }
        Ok(())
    }

    fn step(
        &mut self,
        index: ocsd_trc_index_t,
        data: &[u8],
        out: &mut dyn PacketOut<ocsd_itm_pkt>,
        resp: &mut ocsd_datapath_resp_t,
    ) -> Result<(), PktErr> {
        match self.state {
            ProcState::WaitSync => {
                *resp = self.wait_for_sync(index, data, out);
                return Ok(());
            }
            ProcState::ProcHdr => {
                self.packet_index = index.wrapping_add(self.used as u32);
                self.process_header(data)?;
                if self.state != ProcState::ProcData {
                    return Ok(());
                }
                self.run_fn(data)?;
            }
            ProcState::ProcData => self.run_fn(data)?,
            ProcState::SendPkt => {}
        }
        if self.state == ProcState::SendPkt {
            *resp = self.output_packet(out);
        }
        Ok(())
    }
}

impl PacketProcessor for ItmPktProc {
    type Packet = ocsd_itm_pkt;

    fn name(&self) -> &str {
        ItmPktProc::name(self)
    }

    fn process_data(
        &mut self,
        index: ocsd_trc_index_t,
        data: &[u8],
        out: &mut dyn PacketOut<ocsd_itm_pkt>,
    ) -> (ocsd_datapath_resp_t, usize) {
        let mut resp = OCSD_RESP_CONT;
        self.used = 0;
        while self.data_to_process(data) && resp_is_cont(resp) {
            if let Err(e) = self.step(index, data, out, &mut resp) {
                match e.code {
                    OCSD_ERR_BAD_PACKET_SEQ => self.stats.add_bad_sequence(),
                    OCSD_ERR_INVALID_PCKT_HDR => self.stats.add_bad_header(),
                    _ => {}
                }
                let err = OcsdError::at(OCSD_ERR_SEV_ERROR, e.code, self.packet_index, self.cfg.trace_id(), e.msg);
                out.logger().log_error(&self.name, &err);
                if self.op_flags & OCSD_OPFLG_PKTPROC_ERR_BAD_PKTS == 0 {
                    resp = self.output_packet(out);
                    if self.op_flags & OCSD_OPFLG_PKTPROC_UNSYNC_ON_BAD_PKTS != 0 {
                        // OpenCSD 1.8.0 only changes state here and then
                        // loops for ever (its sync search needs the stream
                        // marked unsynced): look for the next ASYNC.
                        self.state = ProcState::WaitSync;
                        self.stream_sync = false;
                        self.sync_start = false;
                    }
                } else {
                    resp = OCSD_RESP_FATAL_INVALID_DATA;
                }
            }
        }
        (resp, self.used)
    }

    fn eot(&mut self, out: &mut dyn PacketOut<ocsd_itm_pkt>) -> ocsd_datapath_resp_t {
        if self.state == ProcState::ProcData {
            self.pkt.update_err_type(ITM_PKT_INCOMPLETE_EOT);
            return self.output_packet(out);
        }
        OCSD_RESP_CONT
    }

    fn reset(&mut self, _index: ocsd_trc_index_t) {
        self.init_processor_state();
    }

    fn is_synced(&self) -> bool {
        self.stream_sync
    }

    fn error_counts(&self) -> (u32, u32) {
        self.stats.errors()
    }

    fn set_op_flags(&mut self, flags: u32) {
        self.op_flags = flags;
    }
}
