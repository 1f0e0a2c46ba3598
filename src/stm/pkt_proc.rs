//! STM (STPv2) packet processor: bytes of one trace ID in, STM packets out.
//!
//! STPv2 is a nibble stream: in each byte, bits `[3:0]` are the first nibble
//! in protocol order and bits `[7:4]` the second. Packets start on any nibble,
//! so a byte may be shared between two packets; its raw bytes then appear
//! in both packets' monitor output (the second one shows the shared byte
//! as `nibble << 4`), as OpenCSD shows them.
//!
//! The processor reproduces OpenCSD 1.8.0 exactly, including its 8-bit
//! nibble counters and the raw bytes it gives the packet monitor for
//! unsynchronised data (see [`PacketProcessor::process_data_with_tail`]),
//! and what a WAIT does: a call cut short with only the second nibble of
//! its last byte unread leaves that nibble pending, read first by the next
//! call with that call's index base (a frame deformatter's next chunk for
//! the ID may start bytes or frames later), and dropped at the end of
//! trace, as OpenCSD's processor leaves it (its FLUSH does nothing).

use super::config::StmConfig;
use super::types::*;
use crate::abi::*;
use crate::common::{LiveStats, OcsdError, PacketOut, PacketProcessor};

/// Nibbles in an ASYNC packet before its final 0 nibble.
const ASYNC_F_NIBBLES: u8 = 21;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ProcState {
    WaitSync,
    ProcHdr,
    ProcData,
    SendPkt,
}

/// The routine that handles the packet being read (OpenCSD's op tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PktFn {
    // 1 nibble opcodes (all 16 are defined)
    Null,
    M8,
    Merr,
    C8,
    D4,
    D8,
    D16,
    D32,
    D64,
    D4MTS,
    D8MTS,
    D16MTS,
    D32MTS,
    D64MTS,
    FlagTS,
    FExt,
    // 2 nibble opcodes 0xFn
    ReservedFn,
    F0Ext,
    Gerr,
    C16,
    D4TS,
    D8TS,
    D16TS,
    D32TS,
    D64TS,
    D4M,
    D8M,
    D16M,
    D32M,
    D64M,
    Flag,
    ASync,
    // 3 nibble opcodes 0xF0n
    ReservedF0n,
    Version,
    NullTS,
    Trigger,
    TriggerTS,
    Freq,
    // timestamp tail of any packet
    ExtractTS,
}

fn op_1n(n: u8) -> PktFn {
    use PktFn::*;
    match n & 0xF {
        0x0 => Null,
        0x1 => M8,
        0x2 => Merr,
        0x3 => C8,
        0x4 => D8,
        0x5 => D16,
        0x6 => D32,
        0x7 => D64,
        0x8 => D8MTS,
        0x9 => D16MTS,
        0xA => D32MTS,
        0xB => D64MTS,
        0xC => D4,
        0xD => D4MTS,
        0xE => FlagTS,
        _ => FExt,
    }
}

fn op_2n(n: u8) -> PktFn {
    use PktFn::*;
    match n & 0xF {
        0x0 => F0Ext,
        0x2 => Gerr,
        0x3 => C16,
        0x4 => D8TS,
        0x5 => D16TS,
        0x6 => D32TS,
        0x7 => D64TS,
        0x8 => D8M,
        0x9 => D16M,
        0xA => D32M,
        0xB => D64M,
        0xC => D4TS,
        0xD => D4M,
        0xE => Flag,
        0xF => ASync,
        _ => ReservedFn,
    }
}

fn op_3n(n: u8) -> PktFn {
    use PktFn::*;
    match n & 0xF {
        0x0 => Version,
        0x1 => NullTS,
        0x6 => Trigger,
        0x7 => TriggerTS,
        0x8 => Freq,
        _ => ReservedF0n,
    }
}

/// A packet error: OpenCSD throws these and the processing loop logs them
/// and forwards the bad packet.
#[derive(Debug, Clone, Copy)]
struct PktErr {
    code: ocsd_err_t,
    msg: &'static str,
}

fn bin_to_gray(v: u64) -> u64 {
    v ^ (v >> 1)
}

fn gray_to_bin(g: u64) -> u64 {
    let mut b = g;
    let mut s = 1;
    while s < 64 {
        b ^= b >> s;
        s <<= 1;
    }
    b
}

/// STM packet processor (OpenCSD's `TrcPktProcStm`).
pub struct StmPktProc {
    cfg: StmConfig,
    name: String,
    op_flags: u32,

    state: ProcState,
    stream_sync: bool,
    cur_fn: PktFn,

    pkt: ocsd_stm_pkt,
    needs_ts: bool,
    is_marker: bool,

    // input handling (8-bit counters, as OpenCSD's)
    num_nibbles: u8,
    nibble: u8,
    nibble_2nd: u8,
    nibble_2nd_valid: bool,
    num_data_nibbles: u8,
    used: usize,
    packet_index: ocsd_trc_index_t,
    packet_data: Vec<u8>,
    wait_sync_save_suppressed: bool,

    // payload accumulators (persist between packets, as OpenCSD's)
    val8: u8,
    val16: u16,
    val32: u32,
    val64: u64,

    // timestamp extraction
    req_ts_nibbles: u8,
    curr_ts_nibbles: u8,
    ts_update_value: u64,
    ts_req_set: bool,

    // sync detection
    num_f_nibbles: u8,
    sync_start: bool,
    is_sync: bool,
    sync_index: ocsd_trc_index_t,

    /// Bad header and sequence errors (OpenCSD's processor for this
    /// protocol keeps no statistics block: they are not handed out).

    stats: LiveStats,
}

impl StmPktProc {
    /// A processor for the STM described by `cfg`; its error messages come
    /// from `PKTP_STM_<trace id, 4 decimal digits>`.
    pub fn new(cfg: &ocsd_stm_cfg) -> Self {
        Self::with_config(StmConfig::new(cfg))
    }

    pub fn with_config(cfg: StmConfig) -> Self {
        let name = format!("PKTP_STM_{:04}", cfg.trace_id());
        let mut p = StmPktProc {
            cfg,
            name,
            op_flags: 0,
            state: ProcState::WaitSync,
            stream_sync: false,
            cur_fn: PktFn::Null,
            pkt: ocsd_stm_pkt::default(),
            needs_ts: false,
            is_marker: false,
            num_nibbles: 0,
            nibble: 0,
            nibble_2nd: 0,
            nibble_2nd_valid: false,
            num_data_nibbles: 0,
            used: 0,
            packet_index: 0,
            packet_data: Vec::with_capacity(64),
            wait_sync_save_suppressed: false,
            val8: 0,
            val16: 0,
            val32: 0,
            val64: 0,
            req_ts_nibbles: 0,
            curr_ts_nibbles: 0,
            ts_update_value: 0,
            ts_req_set: false,
            num_f_nibbles: 0,
            sync_start: false,
            is_sync: false,
            sync_index: 0,
            stats: LiveStats::new(),
        };
        p.init_processor_state();
        p
    }

    /// The component name used in error messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn config(&self) -> &StmConfig {
        &self.cfg
    }

    /// The current packet (as last output or being built).
    pub fn current_packet(&self) -> &ocsd_stm_pkt {
        &self.pkt
    }

    fn trace_id(&self) -> u8 {
        self.cfg.trace_id()
    }

    // ---- state init -------------------------------------------------------

    fn init_processor_state(&mut self) {
        self.state = ProcState::WaitSync;
        self.stream_sync = false;
        self.clear_sync_count();
        // initial packet state
        self.pkt.master = 0;
        self.pkt.channel = 0;
        self.pkt.timestamp = 0;
        self.pkt.ts_type = STM_TS_UNKNOWN;
        self.pkt.type_ = STM_PKT_NOTSYNC;
        self.nibble_2nd_valid = false;
        self.init_next_packet();
        self.wait_sync_save_suppressed = false;
        self.packet_data.clear();
    }

    fn init_next_packet(&mut self) {
        self.needs_ts = false;
        self.is_marker = false;
        self.num_nibbles = 0;
        self.num_data_nibbles = 0;
        self.pkt.err_type = STM_PKT_NO_ERR_TYPE;
        self.pkt.pkt_ts_bits = 0;
        self.pkt.pkt_has_marker = 0;
        self.pkt.pkt_has_ts = 0;
    }

    fn clear_sync_count(&mut self) {
        self.num_f_nibbles = 0;
        self.sync_start = false;
        self.is_sync = false;
    }

    // ---- packet field updates (StmTrcPacket) -----------------------------

    fn set_pkt_type(&mut self, ty: ocsd_stm_pkt_type, marker: bool) {
        self.pkt.type_ = ty;
        if marker {
            self.pkt.pkt_has_marker = 1;
        }
    }

    fn update_err_type(&mut self, ty: ocsd_stm_pkt_type) {
        self.pkt.err_type = self.pkt.type_;
        self.pkt.type_ = ty;
    }

    fn set_master(&mut self, master: u8) {
        self.pkt.master = master;
        self.pkt.channel = 0;
    }

    fn set_channel(&mut self, channel: u16, low8: bool) {
        self.pkt.channel = if low8 { (self.pkt.channel & 0xFF00) | (channel & 0xFF) } else { channel };
    }

    fn on_version(&mut self, ts_type: ocsd_stm_ts_type) {
        self.pkt.ts_type = ts_type;
        self.pkt.master = 0;
        self.pkt.channel = 0;
    }

    fn set_ts(&mut self, val: u64, bits: u8) {
        if bits >= 64 {
            self.pkt.timestamp = val;
        } else {
            let mask = (1u64 << bits) - 1;
            self.pkt.timestamp = (self.pkt.timestamp & !mask) | (val & mask);
        }
        self.pkt.pkt_ts_bits = bits;
        self.pkt.pkt_has_ts = 1;
    }

    fn bad_sequence(&mut self, msg: &'static str) -> PktErr {
        self.update_err_type(STM_PKT_BAD_SEQUENCE);
        PktErr { code: OCSD_ERR_BAD_PACKET_SEQ, msg }
    }

    fn reserved_hdr(&mut self, msg: &'static str) -> PktErr {
        self.set_pkt_type(STM_PKT_RESERVED, false);
        PktErr { code: OCSD_ERR_INVALID_PCKT_HDR, msg }
    }

    // ---- input ------------------------------------------------------------

    fn data_to_process(&self, data: &[u8]) -> bool {
        self.used < data.len() || self.nibble_2nd_valid || self.state == ProcState::SendPkt
    }

    fn save_byte(&mut self, b: u8) {
        if !self.wait_sync_save_suppressed {
            self.packet_data.push(b);
        }
    }

    /// Read the next nibble; false when out of data.
    fn read_nibble(&mut self, data: &[u8]) -> bool {
        if self.nibble_2nd_valid {
            self.nibble = self.nibble_2nd;
            self.nibble_2nd_valid = false;
        } else if let Some(&b) = data.get(self.used) {
            self.used += 1;
            self.save_byte(b);
            self.nibble_2nd = (b >> 4) & 0xF;
            self.nibble_2nd_valid = true;
            self.nibble = b & 0xF;
        } else {
            return false;
        }
        self.num_nibbles = self.num_nibbles.wrapping_add(1);
        self.check_sync_nibble();
        true
    }

    fn check_sync_nibble(&mut self) {
        if self.nibble != 0xF {
            if !self.sync_start {
                return;
            }
            if self.nibble == 0 && self.num_f_nibbles >= ASYNC_F_NIBBLES {
                self.is_sync = true;
                self.num_f_nibbles = ASYNC_F_NIBBLES;
            } else {
                self.clear_sync_count();
            }
            return;
        }
        self.num_f_nibbles = self.num_f_nibbles.wrapping_add(1);
        if !self.sync_start {
            self.sync_start = true;
            let half = (i32::from(self.num_nibbles) - 1) / 2;
            self.sync_index = self.packet_index.wrapping_add(half as u32);
        }
    }

    // ---- output -----------------------------------------------------------

    fn send_packet(&mut self) {
        self.state = ProcState::SendPkt;
    }

    fn output_packet(&mut self, out: &mut dyn PacketOut<ocsd_stm_pkt>) -> ocsd_datapath_resp_t {
        let resp = out.packet(self.packet_index, &self.pkt, &self.packet_data);
        self.packet_data.clear();
        self.init_next_packet();
        if self.nibble_2nd_valid {
            // the unused nibble starts the next packet: show it, padded.
            self.save_byte(self.nibble_2nd << 4);
        }
        self.state = if self.stream_sync { ProcState::ProcHdr } else { ProcState::WaitSync };
        resp
    }

    // ---- sync search -------------------------------------------------------

    fn wait_for_sync(&mut self, blk_index: ocsd_trc_index_t, data: &[u8], tail: &[u8]) {
        let start = self.used;
        self.packet_index = blk_index.wrapping_add(self.used as u32);
        self.num_nibbles = if self.is_sync { self.num_f_nibbles.wrapping_add(1) } else { self.num_f_nibbles };

        self.wait_sync_save_suppressed = true;
        let mut got_data = true;
        while got_data && !self.is_sync {
            got_data = self.read_nibble(data);
        }
        self.wait_sync_save_suppressed = false;

        if self.num_nibbles == 0 {
            return;
        }

        if !got_data || self.num_nibbles > 22 {
            // unsynchronised data, up to any sync sequence start.
            self.set_pkt_type(STM_PKT_NOTSYNC, false);
            let sync_nibbles = if self.is_sync { 22 } else { self.num_f_nibbles };
            let nibbles = self.num_nibbles.wrapping_sub(sync_nibbles);
            let bytes = usize::from(nibbles / 2 + nibbles % 2);
            // OpenCSD reads these bytes from its input pointer without
            // checking how many it consumed: bytes past `data` come from
            // the caller's buffer (`tail`).
            let avail = data.len().saturating_sub(start) + tail.len();
            for i in 0..bytes.min(avail) {
                let pos = start + i;
                let b = if pos < data.len() { data[pos] } else { tail[pos - data.len()] };
                self.save_byte(b);
            }
        } else {
            self.set_pkt_type(STM_PKT_ASYNC, false);
            self.stream_sync = true;
            self.clear_sync_count();
            self.packet_index = self.sync_index;
            // the whole sync sequence may no longer be in the buffer.
            for _ in 0..10 {
                self.save_byte(0xFF);
            }
            self.save_byte(0x0F);
        }
        self.send_packet();
    }

    // ---- packet routines --------------------------------------------------

    fn call(&mut self, f: PktFn, data: &[u8]) -> Result<(), PktErr> {
        use PktFn::*;
        self.cur_fn = f;
        match f {
            Null => {
                self.set_pkt_type(STM_PKT_NULL, false);
                self.ts_or_send(data)
            }
            NullTS => {
                self.pkt_needs_ts();
                self.call(Null, data)
            }
            M8 => {
                if self.num_nibbles == 1 {
                    self.set_pkt_type(STM_PKT_M8, false);
                }
                self.extract_val8(data, 3);
                if self.num_nibbles == 3 {
                    self.set_master(self.val8);
                    self.send_packet();
                }
                Ok(())
            }
            Merr => {
                if self.num_nibbles == 1 {
                    self.set_pkt_type(STM_PKT_MERR, false);
                }
                self.extract_val8(data, 3);
                if self.num_nibbles == 3 {
                    self.set_channel(0, false);
                    self.pkt.payload.D8 = self.val8;
                    self.send_packet();
                }
                Ok(())
            }
            C8 => {
                if self.num_nibbles == 1 {
                    self.set_pkt_type(STM_PKT_C8, false);
                }
                self.extract_val8(data, 3);
                if self.num_nibbles == 3 {
                    self.set_channel(u16::from(self.val8), true);
                    self.send_packet();
                }
                Ok(())
            }
            D4 => {
                if self.num_nibbles == 1 {
                    self.set_pkt_type(STM_PKT_D4, self.is_marker);
                    self.num_data_nibbles = 2;
                }
                if self.num_nibbles != self.num_data_nibbles && self.read_nibble(data) {
                    self.pkt.payload.D8 = self.nibble & 0xF;
                    return self.ts_or_send(data);
                }
                Ok(())
            }
            D8 => {
                if self.num_nibbles == 1 {
                    self.set_pkt_type(STM_PKT_D8, self.is_marker);
                    self.num_data_nibbles = 3;
                }
                self.extract_val8(data, self.num_data_nibbles);
                if self.num_nibbles == self.num_data_nibbles {
                    self.pkt.payload.D8 = self.val8;
                    return self.ts_or_send(data);
                }
                Ok(())
            }
            D16 => {
                if self.num_nibbles == 1 {
                    self.set_pkt_type(STM_PKT_D16, self.is_marker);
                    self.num_data_nibbles = 5;
                }
                self.extract_val16(data, self.num_data_nibbles);
                if self.num_nibbles == self.num_data_nibbles {
                    self.pkt.payload.D16 = self.val16;
                    return self.ts_or_send(data);
                }
                Ok(())
            }
            D32 => {
                if self.num_nibbles == 1 {
                    self.set_pkt_type(STM_PKT_D32, self.is_marker);
                    self.num_data_nibbles = 9;
                }
                self.extract_val32(data, self.num_data_nibbles);
                if self.num_nibbles == self.num_data_nibbles {
                    self.pkt.payload.D32 = self.val32;
                    return self.ts_or_send(data);
                }
                Ok(())
            }
            D64 => {
                if self.num_nibbles == 1 {
                    self.set_pkt_type(STM_PKT_D64, self.is_marker);
                    self.num_data_nibbles = 17;
                }
                self.extract_val64(data, self.num_data_nibbles);
                if self.num_nibbles == self.num_data_nibbles {
                    self.pkt.payload.D64 = self.val64;
                    return self.ts_or_send(data);
                }
                Ok(())
            }
            D4MTS | D8MTS | D16MTS | D32MTS | D64MTS => {
                self.pkt_needs_ts();
                self.is_marker = true;
                let next = match f {
                    D4MTS => D4,
                    D8MTS => D8,
                    D16MTS => D16,
                    D32MTS => D32,
                    _ => D64,
                };
                self.call(next, data)
            }
            FlagTS => {
                self.pkt_needs_ts();
                self.set_pkt_type(STM_PKT_FLAG, false);
                self.call(ExtractTS, data)
            }
            FExt => {
                if self.read_nibble(data) {
                    return self.call(op_2n(self.nibble), data);
                }
                Ok(())
            }
            ReservedFn => {
                self.pkt.payload.D16 = 0x00F | (u16::from(self.nibble) << 4);
                Err(self.reserved_hdr("STM: Unsupported or Reserved STPv2 Header"))
            }
            F0Ext => {
                if self.read_nibble(data) {
                    return self.call(op_3n(self.nibble), data);
                }
                Ok(())
            }
            Gerr => {
                if self.num_nibbles == 2 {
                    self.set_pkt_type(STM_PKT_GERR, false);
                }
                self.extract_val8(data, 4);
                if self.num_nibbles == 4 {
                    self.pkt.payload.D8 = self.val8;
                    self.set_master(0);
                    self.send_packet();
                }
                Ok(())
            }
            C16 => {
                if self.num_nibbles == 2 {
                    self.set_pkt_type(STM_PKT_C16, false);
                }
                self.extract_val16(data, 6);
                if self.num_nibbles == 6 {
                    self.set_channel(self.val16, false);
                    self.send_packet();
                }
                Ok(())
            }
            D4TS | D8TS | D16TS | D32TS | D64TS => {
                self.pkt_needs_ts();
                let (ty, n, next) = match f {
                    D4TS => (STM_PKT_D4, 3, D4),
                    D8TS => (STM_PKT_D8, 4, D8),
                    D16TS => (STM_PKT_D16, 6, D16),
                    D32TS => (STM_PKT_D32, 10, D32),
                    _ => (STM_PKT_D64, 18, D64),
                };
                self.set_pkt_type(ty, false);
                self.num_data_nibbles = n;
                self.call(next, data)
            }
            D4M | D8M | D16M | D32M | D64M => {
                let (ty, n, next) = match f {
                    D4M => (STM_PKT_D4, 3, D4),
                    D8M => (STM_PKT_D8, 4, D8),
                    D16M => (STM_PKT_D16, 6, D16),
                    D32M => (STM_PKT_D32, 10, D32),
                    _ => (STM_PKT_D64, 18, D64),
                };
                self.set_pkt_type(ty, true);
                self.num_data_nibbles = n;
                self.call(next, data)
            }
            Flag => {
                self.set_pkt_type(STM_PKT_FLAG, false);
                self.send_packet();
                Ok(())
            }
            ASync => {
                while self.read_nibble(data) {
                    if self.is_sync {
                        self.stream_sync = true;
                        self.set_pkt_type(STM_PKT_ASYNC, false);
                        self.clear_sync_count();
                        self.send_packet();
                        break;
                    } else if !self.sync_start {
                        return Err(self.bad_sequence("STM: Invalid ASYNC sequence"));
                    }
                }
                Ok(())
            }
            ReservedF0n => {
                self.pkt.payload.D16 = 0x00F | (u16::from(self.nibble) << 8);
                Err(self.reserved_hdr("STM: Unsupported or Reserved STPv2 Header"))
            }
            Version => {
                if self.num_nibbles == 3 {
                    self.set_pkt_type(STM_PKT_VERSION, false);
                }
                if self.read_nibble(data) {
                    self.pkt.payload.D8 = self.nibble;
                    match self.nibble {
                        3 => self.on_version(STM_TS_NATBINARY),
                        4 => self.on_version(STM_TS_GREY),
                        _ => return Err(self.bad_sequence("STM VERSION packet : unrecognised version number.")),
                    }
                    self.send_packet();
                }
                Ok(())
            }
            Trigger => {
                if self.num_nibbles == 3 {
                    self.set_pkt_type(STM_PKT_TRIG, false);
                }
                self.extract_val8(data, 5);
                if self.num_nibbles == 5 {
                    self.pkt.payload.D8 = self.val8;
                    return self.ts_or_send(data);
                }
                Ok(())
            }
            TriggerTS => {
                self.pkt_needs_ts();
                self.call(Trigger, data)
            }
            Freq => {
                if self.num_nibbles == 3 {
                    self.set_pkt_type(STM_PKT_FREQ, false);
                    self.val32 = 0;
                }
                self.extract_val32(data, 11);
                if self.num_nibbles == 11 {
                    self.pkt.payload.D32 = self.val32;
                    self.send_packet();
                }
                Ok(())
            }
            ExtractTS => self.extract_ts(data),
        }
    }

    /// After the payload: read a timestamp if the packet has one, else send.
    fn ts_or_send(&mut self, data: &[u8]) -> Result<(), PktErr> {
        if self.needs_ts {
            self.call(PktFn::ExtractTS, data)
        } else {
            self.send_packet();
            Ok(())
        }
    }

    fn pkt_needs_ts(&mut self) {
        self.needs_ts = true;
        self.req_ts_nibbles = 0;
        self.curr_ts_nibbles = 0;
        self.ts_update_value = 0;
        self.ts_req_set = false;
    }

    fn extract_ts(&mut self, data: &[u8]) -> Result<(), PktErr> {
        if !self.ts_req_set && self.read_nibble(data) {
            self.req_ts_nibbles = match self.nibble {
                0xD => 14,
                0xE => 16,
                0xF => return Err(self.bad_sequence("STM: Invalid timestamp size 0xF")),
                n => n,
            };
            self.ts_req_set = true;
        }
        if !self.ts_req_set {
            return Ok(());
        }
        while self.curr_ts_nibbles < self.req_ts_nibbles {
            if !self.read_nibble(data) {
                break;
            }
            self.ts_update_value = (self.ts_update_value << 4) | u64::from(self.nibble);
            self.curr_ts_nibbles += 1;
        }
        if self.req_ts_nibbles == self.curr_ts_nibbles {
            let new_bits = self.req_ts_nibbles * 4;
            match self.pkt.ts_type {
                STM_TS_GREY => {
                    let mut gray = bin_to_gray(self.pkt.timestamp);
                    if new_bits == 64 {
                        gray = self.ts_update_value;
                    } else {
                        let mask = (1u64 << new_bits) - 1;
                        gray = (gray & !mask) | (self.ts_update_value & mask);
                    }
                    self.set_ts(gray_to_bin(gray), new_bits);
                }
                STM_TS_NATBINARY => self.set_ts(self.ts_update_value, new_bits),
                _ => return Err(self.bad_sequence("STM: unknown timestamp encoding")),
            }
            self.send_packet();
        }
        Ok(())
    }

    fn extract_val8(&mut self, data: &[u8], nibbles: u8) {
        while self.num_nibbles < nibbles && self.read_nibble(data) {
            self.val8 = (self.val8 << 4) | self.nibble;
        }
    }

    fn extract_val16(&mut self, data: &[u8], nibbles: u8) {
        while self.num_nibbles < nibbles && self.read_nibble(data) {
            self.val16 = (self.val16 << 4) | u16::from(self.nibble);
        }
    }

    fn extract_val32(&mut self, data: &[u8], nibbles: u8) {
        while self.num_nibbles < nibbles && self.read_nibble(data) {
            self.val32 = (self.val32 << 4) | u32::from(self.nibble);
        }
    }

    fn extract_val64(&mut self, data: &[u8], nibbles: u8) {
        while self.num_nibbles < nibbles && self.read_nibble(data) {
            self.val64 = (self.val64 << 4) | u64::from(self.nibble);
        }
    }

    // ---- main loop ---------------------------------------------------------

    fn step(
        &mut self,
        index: ocsd_trc_index_t,
        data: &[u8],
        tail: &[u8],
        out: &mut dyn PacketOut<ocsd_stm_pkt>,
        resp: &mut ocsd_datapath_resp_t,
    ) -> Result<(), PktErr> {
        match self.state {
            ProcState::WaitSync => {
                self.wait_for_sync(index, data, tail);
                return Ok(());
            }
            ProcState::ProcHdr => {
                self.packet_index = index.wrapping_add(self.used as u32);
                if !self.read_nibble(data) {
                    return Ok(());
                }
                self.state = ProcState::ProcData;
                self.call(op_1n(self.nibble), data)?;
            }
            ProcState::ProcData => {
                self.call(self.cur_fn, data)?;
            }
            ProcState::SendPkt => {}
        }
        if self.state == ProcState::SendPkt {
            *resp = self.output_packet(out);
        }
        Ok(())
    }
}

impl PacketProcessor for StmPktProc {
    type Packet = ocsd_stm_pkt;

    fn name(&self) -> &str {
        StmPktProc::name(self)
    }

    fn process_data(
        &mut self,
        index: ocsd_trc_index_t,
        data: &[u8],
        out: &mut dyn PacketOut<ocsd_stm_pkt>,
    ) -> (ocsd_datapath_resp_t, usize) {
        self.process_data_with_tail(index, data, &[], out)
    }

    fn process_data_with_tail(
        &mut self,
        index: ocsd_trc_index_t,
        data: &[u8],
        tail: &[u8],
        out: &mut dyn PacketOut<ocsd_stm_pkt>,
    ) -> (ocsd_datapath_resp_t, usize) {
        self.used = 0;
        let resp = self.run(index, data, tail, out);
        (resp, self.used)
    }

    fn eot(&mut self, out: &mut dyn PacketOut<ocsd_stm_pkt>) -> ocsd_datapath_resp_t {
        // (a pending second nibble is not read: OpenCSD's onEOT sends only
        // a partial packet)
        let mut resp = OCSD_RESP_CONT;
        if self.num_nibbles > 0 {
            self.update_err_type(STM_PKT_INCOMPLETE_EOT);
            resp = self.output_packet(out);
        }
        resp
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

impl StmPktProc {
    /// OpenCSD's `processData` loop over `data` (from `self.used`): process
    /// until the data (and any pending nibble) is used up or an output
    /// answers other than CONT.
    fn run(
        &mut self,
        index: ocsd_trc_index_t,
        data: &[u8],
        tail: &[u8],
        out: &mut dyn PacketOut<ocsd_stm_pkt>,
    ) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        while self.data_to_process(data) && resp_is_cont(resp) {
            if let Err(e) = self.step(index, data, tail, out, &mut resp) {
                match e.code {
                    OCSD_ERR_BAD_PACKET_SEQ => self.stats.add_bad_sequence(),
                    OCSD_ERR_INVALID_PCKT_HDR => self.stats.add_bad_header(),
                    _ => {}
                }
                let err = OcsdError::at(OCSD_ERR_SEV_ERROR, e.code, self.packet_index, self.trace_id(), e.msg);
                out.logger().log_error(&self.name, &err);
                if self.op_flags & OCSD_OPFLG_PKTPROC_ERR_BAD_PKTS == 0 {
                    // forward the bad packet: the decoder decides.
                    resp = self.output_packet(out);
                    if self.op_flags & OCSD_OPFLG_PKTPROC_UNSYNC_ON_BAD_PKTS != 0 {
                        self.state = ProcState::WaitSync;
                    }
                } else {
                    resp = OCSD_RESP_FATAL_INVALID_DATA;
                }
            }
        }
        resp
    }
}
