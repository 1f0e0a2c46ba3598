//! ETMv4 / ETE instruction trace packet processor: splits one trace ID's
//! byte stream into packets, as OpenCSD's `TrcPktProcEtmV4I`.
//!
//! Packet parsing is driven by a 256-entry header table built from the
//! configuration (which packets the trace source can emit). Each packet's
//! bytes are gathered in a buffer owned by the processor, so a packet may
//! span calls and no allocation happens per packet.

mod same_state;
mod reuse;

use super::config::EtmV4Config;
use super::types::*;
use crate::abi::*;
use crate::common::{LiveStats, OcsdError, PacketOut, PacketProcessor};

/// The component name prefix in OpenCSD's logs.
pub const ETMV4I_PKTS_NAME: &str = "PKTP_ETMV4I";

/// How the bytes after a header are gathered into a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handler {
    NotSync,
    NoPayload,
    Reserved,
    InvalidCfg,
    Extension,
    ASync,
    TraceInfo,
    Timestamp,
    Exception,
    CycleCount,
    SpeclRes,
    CondInstr,
    CondResult,
    Context,
    AddrCtxt,
    ShortAddr,
    LongAddr,
    Q,
    Atom,
    Ite,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ProcState {
    ProcHdr,
    ProcData,
    SendPkt,
    SendUnsynced,
}

// trace info sections
const TINFO_INFO_SECT: u8 = 0x01;
const TINFO_KEY_SECT: u8 = 0x02;
const TINFO_SPEC_SECT: u8 = 0x04;
const TINFO_CYCT_SECT: u8 = 0x08;
const TINFO_WNDW_SECT: u8 = 0x10;
const TINFO_CTRL: u8 = 0x20;
const TINFO_ALL_SECT: u8 = 0x1F;
const TINFO_ALL: u8 = 0x3F;

/// A packet error: the packet goes out as an error packet and the error is
/// logged (OpenCSD throws these).
struct PktErr {
    code: ocsd_err_t,
    msg: &'static str,
}

type PResult = Result<(), PktErr>;

/// The last three broadcast addresses, for exact match address packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct AddrStack {
    v_addr: [ocsd_pkt_vaddr; 3],
    isa: [u8; 3],
}

impl AddrStack {
    fn new() -> Self {
        let a = ocsd_pkt_vaddr { size: VA_64BIT, val: 0, pkt_bits: 0, valid_bits: 64 };
        AddrStack { v_addr: [a; 3], isa: [0; 3] }
    }
    fn push(&mut self, v: ocsd_pkt_vaddr, isa: u8) {
        self.v_addr[2] = self.v_addr[1];
        self.v_addr[1] = self.v_addr[0];
        self.v_addr[0] = v;
        self.isa[2] = self.isa[1];
        self.isa[1] = self.isa[0];
        self.isa[0] = isa;
    }
    fn get(&self, idx: u8) -> Option<(ocsd_pkt_vaddr, u8)> {
        let i = idx as usize;
        if i < 3 {
            Some((self.v_addr[i], self.isa[i]))
        } else {
            None
        }
    }
}

/// An atom packet's header byte, decoded: the packet's type, its atoms
/// (least significant bit the oldest; set: E) and their number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AtomHeader {
    pub type_: ocsd_etmv4_i_pkt_type,
    pub bits: u32,
    pub num: u8,
}

/// The atom packets' header bytes, 0xC0 to 0xFF in every configuration
/// (an atom packet is its header byte alone); None: not an atom header.
pub(crate) static ATOM_HEADERS: [Option<AtomHeader>; 256] = {
    let mut t = [None; 256];
    let mut b = 0xC0;
    while b <= 0xFF {
        t[b] = atom_header(b as u8);
        b += 1;
    }
    t
};

/// [`ATOM_HEADERS`]' entry for `b`.
const fn atom_header(b: u8) -> Option<AtomHeader> {
    const F4_PATTERNS: [u32; 4] = [0xE, 0x0, 0xA, 0x5];
    let (type_, bits, num) = match b {
        0xF6..=0xF7 => (ETM4_PKT_I_ATOM_F1, (b & 0x1) as u32, 1),
        0xD8..=0xDB => (ETM4_PKT_I_ATOM_F2, (b & 0x3) as u32, 2),
        0xF8..=0xFF => (ETM4_PKT_I_ATOM_F3, (b & 0x7) as u32, 3),
        0xDC..=0xDF => (ETM4_PKT_I_ATOM_F4, F4_PATTERNS[(b & 0x3) as usize], 4),
        0xD5..=0xD7 | 0xF5 => match ((b & 0x20) >> 3) | (b & 0x3) {
            5 => (ETM4_PKT_I_ATOM_F5, 0x1E, 5), // NEEEE
            1 => (ETM4_PKT_I_ATOM_F5, 0x00, 5), // NNNNN
            2 => (ETM4_PKT_I_ATOM_F5, 0x0A, 5), // NENEN
            _ => (ETM4_PKT_I_ATOM_F5, 0x15, 5), // ENENE (3)
        },
        0xC0..=0xD4 | 0xE0..=0xF4 => {
            // (b & 0x1F) + 3 E atoms (at most 23), then one more atom: E
            // unless bit 5 is set
            let count = (b & 0x1F) as u32 + 3;
            let mut pattern = (1u32 << count) - 1;
            if b & 0x20 == 0 {
                pattern |= 1u32 << count;
            }
            (ETM4_PKT_I_ATOM_F6, pattern, (count + 1) as u8)
        }
        _ => return None,
    };
    Some(AtomHeader { type_, bits, num })
}

/// ETMv4 / ETE instruction trace packet processor.
pub struct EtmV4IPktProc {
    cfg: EtmV4Config,
    name: String,
    op_flags: u32,
    table: [(ocsd_etmv4_i_pkt_type, Handler); 256],

    pkt: ocsd_etmv4_i_pkt,
    addr_stack: AddrStack,
    raw: Vec<u8>,

    state: ProcState,
    handler: Handler,
    packet_index: ocsd_trc_index_t,
    block_index: ocsd_trc_index_t,
    processed: usize,
    /// Runs of atom packets the output refused ([`PacketOut::atom_run`])
    /// since a packet other than an atom packet or the input block began:
    /// after two, atom packets go out one by one until then (the first
    /// atoms after an address are mostly refused, those after them taken;
    /// where both are refused, the rest rarely are not).
    atom_run_refusals: u8,

    is_sync: bool,
    first_trace_info: bool,
    sent_notsync_packet: bool,
    dump_unsynced_bytes: usize,
    update_on_unsync_packet_index: ocsd_trc_index_t,

    // intra-packet parse state
    tinfo_sect_flags: u8,
    tinfo_ctrl_bytes: usize,
    ts_done: bool,
    ccount_done: bool,
    ts_bytes: u32,
    excep_size: usize,
    count_done: bool,
    commit_done: bool,
    has_count: bool,
    f1p1_done: bool,
    f1p2_done: bool,
    f1_has_p2: bool,
    vmid_bytes: u32,
    ctxtid_bytes: u32,
    addr_is: u8,
    addr_bytes: u32,
    addr_64bit: bool,
    ctxt_info_done: bool,
    addr_done: bool,
    q_type: u8,
    has_addr: bool,
    addr_short: bool,
    addr_match: bool,
    qe: u8,

    /// Statistics (bad header and sequence errors, bytes dropped while
    /// unsynchronised): the stack's block once attached.
    stats: LiveStats,
}

impl EtmV4IPktProc {
    /// A processor for `cfg`. `inst_id` numbers the component in log
    /// messages (`PKTP_ETMV4I_0016` for 16); OpenCSD's decode tree uses the
    /// CoreSight trace ID.
    pub fn new(inst_id: i32, cfg: EtmV4Config) -> Self {
        let mut p = EtmV4IPktProc {
            cfg,
            name: format!("{}_{:04}", ETMV4I_PKTS_NAME, inst_id),
            op_flags: 0,
            table: [(ETM4_PKT_I_RESERVED, Handler::Reserved); 256],
            pkt: ocsd_etmv4_i_pkt::default(),
            addr_stack: AddrStack::new(),
            raw: Vec::with_capacity(64),
            atom_run_refusals: 0,
            state: ProcState::ProcHdr,
            handler: Handler::NotSync,
            packet_index: 0,
            block_index: 0,
            processed: 0,
            is_sync: false,
            first_trace_info: false,
            sent_notsync_packet: false,
            dump_unsynced_bytes: 0,
            update_on_unsync_packet_index: 0,
            tinfo_sect_flags: 0,
            tinfo_ctrl_bytes: 0,
            ts_done: false,
            ccount_done: false,
            ts_bytes: 0,
            excep_size: 0,
            count_done: false,
            commit_done: false,
            has_count: false,
            f1p1_done: false,
            f1p2_done: false,
            f1_has_p2: false,
            vmid_bytes: 0,
            ctxtid_bytes: 0,
            addr_is: 0,
            addr_bytes: 0,
            addr_64bit: false,
            ctxt_info_done: false,
            addr_done: false,
            q_type: 0,
            has_addr: false,
            addr_short: false,
            addr_match: false,
            qe: 0,
            stats: LiveStats::new(),
        };
        p.build_table();
        p.pkt.protocol_version = p.cfg.full_version();
        p.init_processor_state();
        p
    }

    /// A processor named after the configuration's trace ID.
    pub fn with_config(cfg: EtmV4Config) -> Self {
        let id = cfg.trace_id() as i32;
        Self::new(id, cfg)
    }

    /// The component name used in log messages.
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn config(&self) -> &EtmV4Config {
        &self.cfg
    }
    fn init_packet_state(&mut self) {
        self.raw.clear();
        self.pkt.init_next_packet();
        self.update_on_unsync_packet_index = 0;
    }

    fn init_processor_state(&mut self) {
        self.init_packet_state();
        self.handler = Handler::NotSync;
        self.packet_index = 0;
        self.is_sync = false;
        self.first_trace_info = false;
        self.sent_notsync_packet = false;
        self.state = ProcState::ProcHdr;
        self.pkt.init_start_state();
    }

    #[inline]
    fn cur_index(&self) -> ocsd_trc_index_t {
        self.block_index.wrapping_add(self.processed as u32)
    }

    fn output_packet(&mut self, out: &mut dyn PacketOut<ocsd_etmv4_i_pkt>) -> ocsd_datapath_resp_t {
        out.packet(self.packet_index, &self.pkt, &self.raw)
    }

    fn output_unsynced(&mut self, out: &mut dyn PacketOut<ocsd_etmv4_i_pkt>) -> ocsd_datapath_resp_t {
        let n = self.dump_unsynced_bytes.min(self.raw.len());
        self.stats.add_unsynced(n as u64);
        let mut resp = OCSD_RESP_CONT;
        if !self.sent_notsync_packet {
            // monitor and decoder both see the first not-sync packet
            resp = out.packet(self.packet_index, &self.pkt, &self.raw[..n]);
            self.sent_notsync_packet = true;
        } else if n > 0 {
            out.raw_only(self.packet_index, &self.pkt, &self.raw[..n]);
        }
        self.raw.drain(..n);
        resp
    }

    fn log(&self, out: &mut dyn PacketOut<ocsd_etmv4_i_pkt>, err: &PktErr) {
        let e = OcsdError::at(OCSD_ERR_SEV_ERROR, err.code, self.packet_index, self.cfg.trace_id(), err.msg);
        out.logger().log_error(&self.name, &e);
    }

    // ------------------------------------------------------------------
    // header table

    fn set(&mut self, hdr: usize, t: ocsd_etmv4_i_pkt_type, h: Handler) {
        self.table[hdr] = (t, h);
    }

    fn build_table(&mut self) {
        let cfg = self.cfg;
        let maj = cfg.maj_version();
        let full = cfg.full_version();
        for e in self.table.iter_mut() {
            *e = (ETM4_PKT_I_RESERVED, Handler::Reserved);
        }
        self.set(0x00, ETM4_PKT_I_EXTENSION, Handler::Extension);
        self.set(0x01, ETM4_PKT_I_TRACE_INFO, Handler::TraceInfo);
        self.set(0x02, ETM4_PKT_I_TIMESTAMP, Handler::Timestamp);
        self.set(0x03, ETM4_PKT_I_TIMESTAMP, Handler::Timestamp);
        self.set(0x04, ETM4_PKT_I_TRACE_ON, Handler::NoPayload);
        // V8M function return
        let func_ret = if cfg.core_profile() == profile_CortexM
            && (cfg.arch_version() & 0xFF00) == ARCH_V8
            && full >= 0x42
        {
            Handler::NoPayload
        } else {
            Handler::Reserved
        };
        self.set(0x05, ETM4_PKT_I_FUNC_RET, func_ret);
        self.set(0x06, ETM4_PKT_I_EXCEPT, Handler::Exception);
        // exception return: not valid in ETE
        self.set(0x07, ETM4_PKT_I_EXCEPT_RTN, if maj >= 5 { Handler::InvalidCfg } else { Handler::NoPayload });
        if maj >= 5 {
            self.set(0x0A, ETE_PKT_I_TRANS_ST, Handler::NoPayload);
            self.set(0x0B, ETE_PKT_I_TRANS_COMMIT, Handler::NoPayload);
            if cfg.min_version() >= 3 {
                self.set(0x09, ETE_PKT_I_ITE, Handler::Ite);
            }
        }
        for i in 0..4 {
            self.set(0x0C + i, if i >= 2 { ETM4_PKT_I_CCNT_F1 } else { ETM4_PKT_I_CCNT_F2 }, Handler::CycleCount);
        }
        for i in 0..16 {
            self.set(0x10 + i, ETM4_PKT_I_CCNT_F3, Handler::CycleCount);
        }
        let dsm = if cfg.enabled_data_trace() { Handler::NoPayload } else { Handler::InvalidCfg };
        for i in 0..8 {
            self.set(0x20 + i, ETM4_PKT_I_NUM_DS_MKR, dsm);
        }
        for i in 0..5 {
            self.set(0x28 + i, ETM4_PKT_I_UNNUM_DS_MKR, dsm);
        }
        self.set(0x2D, ETM4_PKT_I_COMMIT, Handler::SpeclRes);
        self.set(0x2E, ETM4_PKT_I_CANCEL_F1, Handler::SpeclRes);
        self.set(0x2F, ETM4_PKT_I_CANCEL_F1_MISPRED, Handler::SpeclRes);
        for i in 0..4 {
            self.set(0x30 + i, ETM4_PKT_I_MISPREDICT, Handler::SpeclRes);
            self.set(0x34 + i, ETM4_PKT_I_CANCEL_F2, Handler::SpeclRes);
        }
        for i in 0..8 {
            self.set(0x38 + i, ETM4_PKT_I_CANCEL_F3, Handler::SpeclRes);
        }

        let cond_valid = cfg.has_cond_trace() && cfg.enabled_cond_i_trace() != super::config::CondITrace::Disabled;
        let ci = if cond_valid { Handler::CondInstr } else { Handler::InvalidCfg };
        let cr = if cond_valid { Handler::CondResult } else { Handler::InvalidCfg };
        for i in 0..3 {
            self.set(0x40 + i, ETM4_PKT_I_COND_I_F2, ci);
            self.set(0x44 + i, ETM4_PKT_I_COND_RES_F4, cr);
            self.set(0x48 + i, ETM4_PKT_I_COND_RES_F2, cr);
            self.set(0x4C + i, ETM4_PKT_I_COND_RES_F2, cr);
        }
        self.set(0x43, ETM4_PKT_I_COND_FLUSH, if cond_valid { Handler::NoPayload } else { Handler::InvalidCfg });
        for i in 0..16 {
            self.set(0x50 + i, ETM4_PKT_I_COND_RES_F3, cr);
        }
        for i in 0..4 {
            self.set(0x68 + i, ETM4_PKT_I_COND_RES_F1, cr);
        }
        self.set(0x6C, ETM4_PKT_I_COND_I_F1, ci);
        self.set(0x6D, ETM4_PKT_I_COND_I_F3, ci);
        for i in 0..2 {
            self.set(0x6E + i, ETM4_PKT_I_COND_RES_F1, cr);
        }

        if full >= 0x43 {
            self.set(0x70, ETM4_PKT_I_IGNORE, Handler::NoPayload);
        }
        for i in 0..15 {
            self.set(0x71 + i, ETM4_PKT_I_EVENT, Handler::NoPayload);
        }
        for i in 0..2 {
            self.set(0x80 + i, ETM4_PKT_I_CTXT, Handler::Context);
        }
        self.set(0x82, ETM4_PKT_I_ADDR_CTXT_L_32IS0, Handler::AddrCtxt);
        self.set(0x83, ETM4_PKT_I_ADDR_CTXT_L_32IS1, Handler::AddrCtxt);
        self.set(0x85, ETM4_PKT_I_ADDR_CTXT_L_64IS0, Handler::AddrCtxt);
        self.set(0x86, ETM4_PKT_I_ADDR_CTXT_L_64IS1, Handler::AddrCtxt);
        if full >= 0x46 {
            self.set(0x88, ETE_PKT_I_TS_MARKER, Handler::NoPayload);
        }
        for i in 0..3 {
            self.set(0x90 + i, ETM4_PKT_I_ADDR_MATCH, Handler::NoPayload);
        }
        self.set(0x95, ETM4_PKT_I_ADDR_S_IS0, Handler::ShortAddr);
        self.set(0x96, ETM4_PKT_I_ADDR_S_IS1, Handler::ShortAddr);
        self.set(0x9A, ETM4_PKT_I_ADDR_L_32IS0, Handler::LongAddr);
        self.set(0x9B, ETM4_PKT_I_ADDR_L_32IS1, Handler::LongAddr);
        self.set(0x9D, ETM4_PKT_I_ADDR_L_64IS0, Handler::LongAddr);
        self.set(0x9E, ETM4_PKT_I_ADDR_L_64IS1, Handler::LongAddr);
        let has_q = cfg.has_q_elem();
        for i in 0..16usize {
            let h = match i {
                0x3 | 0x4 | 0x7 | 0x8 | 0x9 | 0xD | 0xE => Handler::Reserved,
                _ if has_q => Handler::Q,
                _ => Handler::Reserved,
            };
            self.set(0xA0 + i, ETM4_PKT_I_Q, h);
        }
        if full >= 0x50 {
            for i in 0..3 {
                self.set(0xB0 + i, ETE_PKT_I_SRC_ADDR_MATCH, Handler::NoPayload);
            }
            self.set(0xB4, ETE_PKT_I_SRC_ADDR_S_IS0, Handler::ShortAddr);
            self.set(0xB5, ETE_PKT_I_SRC_ADDR_S_IS1, Handler::ShortAddr);
            self.set(0xB6, ETE_PKT_I_SRC_ADDR_L_32IS0, Handler::LongAddr);
            self.set(0xB7, ETE_PKT_I_SRC_ADDR_L_32IS1, Handler::LongAddr);
            self.set(0xB8, ETE_PKT_I_SRC_ADDR_L_64IS0, Handler::LongAddr);
            self.set(0xB9, ETE_PKT_I_SRC_ADDR_L_64IS1, Handler::LongAddr);
        }
        // the atom headers, the same in every configuration
        for b in 0xC0..=0xFF {
            if let Some(h) = ATOM_HEADERS[b] {
                self.set(b, h.type_, Handler::Atom);
            }
        }
    }

    // ------------------------------------------------------------------
    // packet handlers: called with each byte after it joins the packet

    fn dispatch(&mut self, b: u8) -> PResult {
        match self.handler {
            Handler::NotSync => {
                self.i_not_sync(b);
                Ok(())
            }
            Handler::NoPayload => {
                self.i_no_payload(b);
                Ok(())
            }
            Handler::Reserved => self.i_reserved(b),
            Handler::InvalidCfg => {
                // a header reserved in this configuration: a bad header, as
                // a reserved one (OpenCSD's iPktInvalidCfg throws
                // OCSD_ERR_INVALID_PCKT_HDR: logged, counted, sent on)
                self.pkt.update_err_type(ETM4_PKT_I_RESERVED_CFG, b);
                Err(PktErr { code: OCSD_ERR_INVALID_PCKT_HDR, msg: "" })
            }
            Handler::Extension => {
                self.i_extension(b);
                Ok(())
            }
            Handler::ASync => {
                self.i_async(b);
                Ok(())
            }
            Handler::TraceInfo => self.i_trace_info(b),
            Handler::Timestamp => self.i_timestamp(b),
            Handler::Exception => {
                self.i_exception(b);
                Ok(())
            }
            Handler::CycleCount => self.i_cycle_count(b),
            Handler::SpeclRes => self.i_specl_res(b),
            Handler::CondInstr => self.i_cond_instr(b),
            Handler::CondResult => self.i_cond_result(b),
            Handler::Context => {
                self.i_context(b);
                Ok(())
            }
            Handler::AddrCtxt => {
                self.i_addr_ctxt(b);
                Ok(())
            }
            Handler::ShortAddr => {
                self.i_short_addr(b);
                Ok(())
            }
            Handler::LongAddr => {
                self.i_long_addr(b);
                Ok(())
            }
            Handler::Q => self.i_q(b),
            Handler::Atom => {
                self.i_atom(b);
                Ok(())
            }
            Handler::Ite => {
                self.i_ite();
                Ok(())
            }
        }
    }

    fn i_not_sync(&mut self, b: u8) {
        if b == 0x00 {
            // possible start of an A-sync: dump what came before it
            if self.raw.len() > 1 {
                self.dump_unsynced_bytes = self.raw.len() - 1;
                self.state = ProcState::SendUnsynced;
                self.update_on_unsync_packet_index = self.cur_index().wrapping_sub(1);
            } else {
                self.packet_index = self.cur_index().wrapping_sub(1);
            }
            self.handler = self.table[0].1;
        } else if self.raw.len() >= 8 {
            self.dump_unsynced_bytes = self.raw.len();
            self.state = ProcState::SendUnsynced;
            self.update_on_unsync_packet_index = self.cur_index();
        }
    }

    fn i_no_payload(&mut self, b: u8) {
        match self.pkt.type_ {
            ETM4_PKT_I_ADDR_MATCH | ETE_PKT_I_SRC_ADDR_MATCH => self.set_address_exact_match(b & 0x3),
            ETM4_PKT_I_EVENT => self.pkt.event_val = b & 0xF,
            ETM4_PKT_I_NUM_DS_MKR | ETM4_PKT_I_UNNUM_DS_MKR => self.pkt.dsm_val = b & 0x7,
            _ => {}
        }
        self.state = ProcState::SendPkt;
    }

    fn i_reserved(&mut self, b: u8) -> PResult {
        self.pkt.update_err_type(ETM4_PKT_I_RESERVED, b);
        Err(PktErr { code: OCSD_ERR_INVALID_PCKT_HDR, msg: "" })
    }

    fn bad_sequence(&mut self, msg: &'static str) -> PktErr {
        self.pkt.update_err_type(ETM4_PKT_I_BAD_SEQUENCE, 0);
        PktErr { code: OCSD_ERR_BAD_PACKET_SEQ, msg }
    }

    fn i_extension(&mut self, b: u8) {
        if self.raw.len() != 2 {
            return;
        }
        if !self.is_sync && b != 0x00 {
            self.handler = Handler::NotSync;
            self.pkt.type_ = ETM4_PKT_I_NOTSYNC;
            return;
        }
        match b {
            0x03 => {
                self.pkt.type_ = ETM4_PKT_I_DISCARD;
                self.state = ProcState::SendPkt;
            }
            0x05 => {
                self.pkt.type_ = ETM4_PKT_I_OVERFLOW;
                self.state = ProcState::SendPkt;
            }
            0x00 => {
                self.pkt.type_ = ETM4_PKT_I_ASYNC;
                self.handler = Handler::ASync;
            }
            _ => {
                self.pkt.err_type = self.pkt.type_;
                self.pkt.type_ = ETM4_PKT_I_BAD_SEQUENCE;
                self.state = ProcState::SendPkt;
            }
        }
    }

    fn i_async(&mut self, b: u8) {
        let len = self.raw.len();
        if b != 0x00 {
            if !self.is_sync && len != 12 {
                self.handler = Handler::NotSync;
                self.pkt.type_ = ETM4_PKT_I_NOTSYNC;
                return;
            }
            self.state = ProcState::SendPkt;
            if len != 12 || b != 0x80 {
                self.pkt.type_ = ETM4_PKT_I_BAD_SEQUENCE;
                self.pkt.err_type = ETM4_PKT_I_ASYNC;
            } else {
                self.is_sync = true;
            }
        } else if len == 12 {
            if !self.is_sync {
                // ignore extra leading 0x00 while looking for sync
                self.dump_unsynced_bytes = 1;
                self.state = ProcState::SendUnsynced;
            } else {
                self.pkt.type_ = ETM4_PKT_I_BAD_SEQUENCE;
                self.pkt.err_type = ETM4_PKT_I_ASYNC;
                self.state = ProcState::SendPkt;
            }
        }
    }

    fn i_trace_info(&mut self, b: u8) -> PResult {
        let len = self.raw.len();
        if len == 1 {
            self.tinfo_sect_flags = 0;
            self.tinfo_ctrl_bytes = 1;
        } else if len == 2 {
            // sections absent in the control byte count as done
            self.tinfo_sect_flags = !b & TINFO_ALL_SECT;
            if b & 0x80 == 0 {
                self.tinfo_sect_flags |= TINFO_CTRL;
            }
        } else {
            let last = b & 0x80 == 0;
            let f = self.tinfo_sect_flags;
            if f & TINFO_CTRL == 0 {
                if last {
                    self.tinfo_sect_flags |= TINFO_CTRL;
                }
                self.tinfo_ctrl_bytes += 1;
            } else {
                for sect in [TINFO_INFO_SECT, TINFO_KEY_SECT, TINFO_SPEC_SECT, TINFO_CYCT_SECT, TINFO_WNDW_SECT] {
                    if f & sect == 0 {
                        if last {
                            self.tinfo_sect_flags |= sect;
                        }
                        break;
                    }
                }
            }
        }

        if self.tinfo_sect_flags == TINFO_ALL {
            let mut idx = self.tinfo_ctrl_bytes + 1;
            let present = self.raw.get(1).copied().unwrap_or(0) & TINFO_ALL_SECT;
            self.clear_trace_info();
            if present & TINFO_INFO_SECT != 0 && idx < self.raw.len() {
                let (n, v) = self.extract_cont_field(idx, 5)?;
                idx += n;
                self.pkt.set_trace_info(v);
            }
            if present & TINFO_KEY_SECT != 0 && idx < self.raw.len() {
                let (n, v) = self.extract_cont_field(idx, 5)?;
                idx += n;
                self.pkt.set_trace_info_key(v);
            }
            let mut spec_present = false;
            if present & TINFO_SPEC_SECT != 0 && idx < self.raw.len() {
                let (n, v) = self.extract_cont_field(idx, 5)?;
                idx += n;
                self.pkt.set_trace_info_spec(v);
                spec_present = true;
            }
            if present & TINFO_CYCT_SECT != 0 && idx < self.raw.len() {
                let (n, v) = self.extract_cont_field(idx, 5)?;
                idx += n;
                self.pkt.set_trace_info_cyct(v);
            }
            if present & TINFO_WNDW_SECT != 0 && idx < self.raw.len() {
                // commit window: not used by current ETE versions
                let _ = self.extract_cont_field(idx, 5)?;
            }
            // These two flags share the word that holds the INFO field, so
            // INFO values with bits 16/17 set (seen on corrupted trace) show
            // them as well: they are only ever set here, never cleared, as in
            // OpenCSD.
            if spec_present {
                self.pkt.trace_info.set_spec_field_present(1);
            }
            if !self.first_trace_info {
                self.pkt.trace_info.set_initial_t_info(1);
            }
            self.state = ProcState::SendPkt;
            self.first_trace_info = true;
        }
        Ok(())
    }

    /// Reset the trace info values before a new trace info packet.
    fn clear_trace_info(&mut self) {
        let v = &mut self.pkt.pkt_valid;
        v.set_ts_valid(0);
        v.set_trace_info_valid(0);
        v.set_p0_key_valid(0);
        v.set_spec_depth_valid(0);
        v.set_cc_thresh_valid(0);
        self.pkt.set_trace_info(0);
        self.pkt.set_trace_info_spec(0);
        self.addr_stack = AddrStack::new();
        if let Some((a, isa)) = self.addr_stack.get(0) {
            self.pkt.v_addr = a;
            self.pkt.v_addr_ISA = isa;
        }
    }

    fn i_timestamp(&mut self, b: u8) -> PResult {
        if self.raw.len() == 1 {
            self.ccount_done = b & 0x1 == 0;
            self.ts_done = false;
            self.ts_bytes = 0;
        } else if !self.ts_done {
            self.ts_bytes += 1;
            self.ts_done = self.ts_bytes == 9 || b & 0x80 == 0;
        } else if !self.ccount_done {
            self.ccount_done = b & 0x80 == 0;
        }

        if self.ts_done && self.ccount_done {
            let mut idx = 1;
            let (ts_bytes, ts_val) = self.extract_ts_field64(idx)?;
            let mut ts_bits = if ts_bytes < 9 { ts_bytes as u8 * 7 } else { 64 };
            if self.pkt.pkt_valid.ts_valid() == 0 && self.first_trace_info {
                ts_bits = 64; // after trace info, missing bits are all 0
            }
            self.pkt.set_ts(ts_val, ts_bits);
            if self.raw[0] & 0x1 == 0x1 {
                idx += ts_bytes;
                let (_, count) = self.extract_cont_field(idx, 3)?;
                let size = self.cfg.cc_size();
                let mask = if size >= 32 { !0u32 } else { (1u32 << size) - 1 };
                self.pkt.set_cycle_count(count & mask);
            }
            self.state = ProcState::SendPkt;
        }
        Ok(())
    }

    fn i_exception(&mut self, b: u8) {
        let len = self.raw.len();
        let ete = self.cfg.maj_version() >= 5;
        match len {
            1 => self.excep_size = 3,
            2 => {
                if b & 0x80 == 0 {
                    self.excep_size = 2;
                }
                // ETE PE reset / transaction failure
                if ete {
                    let t = (self.raw[1] >> 1) & 0x1F;
                    if t == 0 || t == 0x18 {
                        self.excep_size = 3;
                    }
                }
            }
            _ => {}
        }

        if len == self.excep_size {
            let b1 = self.raw[1];
            let mut excep_type = ((b1 >> 1) & 0x1F) as u16;
            let addr_interp = ((b1 & 0x40) >> 5) | (b1 & 0x1);
            let mut m_fault_pending = 0;
            let m_type = (self.cfg.core_profile() == profile_CortexM) as u8;
            if b1 & 0x80 != 0 {
                let b2 = self.raw.get(2).copied().unwrap_or(0);
                excep_type |= ((b2 & 0x1F) as u16) << 5;
                m_fault_pending = (b2 >> 5) & 0x1;
            }
            self.pkt.set_exception_info(excep_type, addr_interp, m_fault_pending, m_type);
            self.state = ProcState::SendPkt;
            if ete && (excep_type == 0 || excep_type == 0x18) {
                self.set_64bit_address(0, 0);
                self.pkt.type_ = if excep_type == 0x18 { ETE_PKT_I_TRANS_FAIL } else { ETE_PKT_I_PE_RESET };
            }
        }
    }

    fn i_cycle_count(&mut self, b: u8) -> PResult {
        let format = self.pkt.type_;
        let len = self.raw.len();
        if len == 1 {
            self.count_done = false;
            self.commit_done = false;
            self.has_count = true;
            if format == ETM4_PKT_I_CCNT_F3 {
                if !self.cfg.commit_opt1() {
                    self.pkt.set_commit_elements((((b >> 2) & 0x3) + 1) as u32);
                }
                let cc = self.pkt.cc_threshold_val().wrapping_add((b & 0x3) as u32);
                self.pkt.set_cycle_count(cc);
                self.state = ProcState::SendPkt;
            } else if format == ETM4_PKT_I_CCNT_F1 {
                if b & 0x1 == 0x1 {
                    self.has_count = false;
                    self.count_done = true;
                }
                if self.cfg.commit_opt1() {
                    self.commit_done = true;
                }
            }
        } else if format == ETM4_PKT_I_CCNT_F2 && len == 2 {
            if !self.cfg.commit_opt1() {
                // header bit 0 (A): commit count is relative to the max
                // speculation depth
                let offset: i64 = if self.raw[0] & 0x1 == 0x1 { self.cfg.max_spec_depth() as i64 - 15 } else { 1 };
                let commit = ((b >> 4) & 0xF) as i64 + offset;
                self.pkt.set_commit_elements(commit as u32);
            }
            let cc = self.pkt.cc_threshold_val().wrapping_add((b & 0xF) as u32);
            self.pkt.set_cycle_count(cc);
            self.state = ProcState::SendPkt;
        } else if !self.commit_done {
            self.commit_done = b & 0x80 == 0;
        } else if !self.count_done {
            self.count_done = b & 0x80 == 0;
        }

        if format == ETM4_PKT_I_CCNT_F1 && self.commit_done && self.count_done {
            let mut idx = 1;
            if !self.cfg.commit_opt1() {
                let (n, v) = self.extract_cont_field(idx, 5)?;
                idx += n;
                self.pkt.set_commit_elements(v);
            }
            if self.has_count {
                let (_, v) = self.extract_cont_field(idx, 3)?;
                let cc = v.wrapping_add(self.pkt.cc_threshold_val());
                self.pkt.set_cycle_count(cc);
            } else {
                self.pkt.set_cycle_count(0); // unknown count after overflow
            }
            self.state = ProcState::SendPkt;
        }
        Ok(())
    }

    fn i_specl_res(&mut self, b: u8) -> PResult {
        if self.raw.len() == 1 {
            match self.pkt.type_ {
                ETM4_PKT_I_MISPREDICT | ETM4_PKT_I_CANCEL_F2 => {
                    match b & 0x3 {
                        0x1 => self.pkt.set_atom_pattern(0x1, 1), // E
                        0x2 => self.pkt.set_atom_pattern(0x3, 2), // EE
                        0x3 => self.pkt.set_atom_pattern(0x0, 1), // N
                        _ => {}
                    }
                    let cancel = (self.pkt.type_ == ETM4_PKT_I_CANCEL_F2) as u32;
                    self.pkt.set_cancel_elements(cancel);
                    self.state = ProcState::SendPkt;
                }
                ETM4_PKT_I_CANCEL_F3 => {
                    if b & 0x1 != 0 {
                        self.pkt.set_atom_pattern(0x1, 1);
                    }
                    self.pkt.set_cancel_elements((((b >> 1) & 0x3) + 2) as u32);
                    self.state = ProcState::SendPkt;
                }
                _ => {}
            }
        } else if b & 0x80 == 0 {
            let (_, v) = self.extract_cont_field(1, 5)?;
            if self.pkt.type_ == ETM4_PKT_I_COMMIT {
                self.pkt.set_commit_elements(v);
            } else {
                self.pkt.set_cancel_elements(v);
            }
            self.state = ProcState::SendPkt;
        }
        Ok(())
    }

    fn i_cond_instr(&mut self, b: u8) -> PResult {
        let len = self.raw.len();
        let mut f1_done = false;
        if len == 1 {
            if self.pkt.type_ == ETM4_PKT_I_COND_I_F2 {
                let ci = &mut self.pkt.cond_instr;
                ci.set_cond_key_set(0);
                ci.set_f3_final_elem(0);
                match b & 0x3 {
                    0 => {
                        ci.set_f2_cond_incr(1);
                        ci.num_c_elem = 1;
                    }
                    1 => {
                        ci.set_f2_cond_incr(0);
                        ci.num_c_elem = 1;
                    }
                    2 => {
                        ci.set_f2_cond_incr(1);
                        ci.num_c_elem = 2;
                    }
                    _ => {}
                }
                self.state = ProcState::SendPkt;
            }
        } else if len == 2 {
            if self.pkt.type_ == ETM4_PKT_I_COND_I_F3 {
                let num = ((b >> 1) & 0x3F) + (b & 0x1);
                let ci = &mut self.pkt.cond_instr;
                ci.set_cond_key_set(0);
                ci.set_f3_final_elem((b & 0x1) as u32);
                ci.set_f2_cond_incr(0);
                ci.num_c_elem = num;
                self.state = ProcState::SendPkt;
            } else {
                f1_done = b & 0x80 == 0;
            }
        } else {
            f1_done = b & 0x80 == 0;
        }
        if f1_done {
            // the key is parsed but (as in OpenCSD) not stored in the packet
            let _ = self.extract_cont_field(1, 5)?;
            self.state = ProcState::SendPkt;
        }
        Ok(())
    }

    fn i_cond_result(&mut self, b: u8) -> PResult {
        let len = self.raw.len();
        if len == 1 {
            self.f1p1_done = false;
            self.f1p2_done = false;
            self.f1_has_p2 = false;
            match self.pkt.type_ {
                ETM4_PKT_I_COND_RES_F1 => {
                    self.f1_has_p2 = true;
                    if b & 0xFC == 0x6C {
                        self.f1p2_done = true;
                        self.f1_has_p2 = false;
                    }
                }
                ETM4_PKT_I_COND_RES_F2 => {
                    let cr = &mut self.pkt.cond_result;
                    cr.set_key_res_0_set(0);
                    cr.set_key_res_1_set(0);
                    cr.set_f2_key_incr(if b & 0x4 != 0 { 2 } else { 1 });
                    cr.set_f2f4_token((b & 0x3) as u32);
                    self.state = ProcState::SendPkt;
                }
                ETM4_PKT_I_COND_RES_F4 => {
                    let cr = &mut self.pkt.cond_result;
                    cr.set_key_res_0_set(0);
                    cr.set_key_res_1_set(0);
                    cr.set_f2f4_token((b & 0x3) as u32);
                    self.state = ProcState::SendPkt;
                }
                _ => {}
            }
        } else if self.pkt.type_ == ETM4_PKT_I_COND_RES_F3 && len == 2 {
            let tokens = (self.raw[1] as u32) | (((self.raw[0] & 0xF) as u32) << 8);
            let cr = &mut self.pkt.cond_result;
            cr.set_key_res_0_set(0);
            cr.set_key_res_1_set(0);
            cr.set_f3_tokens(tokens);
            self.state = ProcState::SendPkt;
        } else {
            if !self.f1p1_done {
                self.f1p1_done = b & 0x80 == 0;
            } else if !self.f1p2_done {
                self.f1p2_done = b & 0x80 == 0;
            }
            if self.f1p1_done && self.f1p2_done {
                let mut idx = 1;
                let (n, key0, res0) = self.extract_cond_result(idx)?;
                idx += n;
                let ci0 = self.raw[0] & 0x1;
                let second = if self.f1_has_p2 {
                    let (_, key1, res1) = self.extract_cond_result(idx)?;
                    Some((key1, res1, (self.raw[0] >> 1) & 0x1))
                } else {
                    None
                };
                let cr = &mut self.pkt.cond_result;
                cr.set_key_res_0_set(1);
                cr.cond_r_key_0 = key0;
                cr.set_res_0(res0 as u32);
                cr.set_ci_0(ci0 as u32);
                if let Some((key1, res1, ci1)) = second {
                    cr.set_key_res_1_set(1);
                    cr.cond_r_key_1 = key1;
                    cr.set_res_1(res1 as u32);
                    cr.set_ci_1(ci1 as u32);
                }
                self.state = ProcState::SendPkt;
            }
        }
        Ok(())
    }

    fn i_context(&mut self, b: u8) {
        let len = self.raw.len();
        let mut send = false;
        if len == 1 {
            if b & 0x1 == 0 {
                self.pkt.set_context_info(false, 0, 0, 0, 0);
                self.state = ProcState::SendPkt;
            }
        } else if len == 2 {
            if b & 0xC0 == 0 {
                send = true;
            } else {
                self.vmid_bytes = if b & 0x40 != 0 { self.cfg.vmid_size() / 8 } else { 0 };
                self.ctxtid_bytes = if b & 0x80 != 0 { self.cfg.cid_size() / 8 } else { 0 };
            }
        } else {
            if self.vmid_bytes > 0 {
                self.vmid_bytes -= 1;
            } else if self.ctxtid_bytes > 0 {
                self.ctxtid_bytes -= 1;
            }
            if self.ctxtid_bytes == 0 && self.vmid_bytes == 0 {
                send = true;
            }
        }
        if send {
            self.extract_and_set_context(1);
            self.state = ProcState::SendPkt;
        }
    }

    fn extract_and_set_context(&mut self, st_idx: usize) {
        let info = self.raw.get(st_idx).copied().unwrap_or(0);
        self.pkt.set_context_info(true, info & 0x3, (info >> 5) & 0x1, (info >> 4) & 0x1, (info >> 3) & 0x1);
        let n_vmid = if info & 0x40 != 0 { self.cfg.vmid_size() / 8 } else { 0 } as usize;
        let n_cid = if info & 0x80 != 0 { self.cfg.cid_size() / 8 } else { 0 } as usize;
        let mut idx = st_idx + 1;
        if n_vmid > 0 {
            let vmid = self.le_bytes(idx, n_vmid);
            idx += n_vmid;
            self.pkt.set_context_vmid(vmid);
        }
        if n_cid > 0 {
            let cid = self.le_bytes(idx, n_cid);
            self.pkt.set_context_cid(cid);
        }
    }

    /// Little-endian value of `n` (<= 4) packet bytes from `idx` (missing
    /// bytes read as 0).
    fn le_bytes(&self, idx: usize, n: usize) -> u32 {
        (0..n.min(4)).fold(0u32, |v, i| v | (self.raw.get(idx + i).copied().unwrap_or(0) as u32) << (8 * i))
    }

    fn i_addr_ctxt(&mut self, b: u8) {
        if self.raw.len() == 1 {
            self.addr_is = 0;
            self.addr_bytes = 4;
            self.addr_64bit = false;
            self.vmid_bytes = 0;
            self.ctxtid_bytes = 0;
            self.ctxt_info_done = false;
            match self.pkt.type_ {
                ETM4_PKT_I_ADDR_CTXT_L_32IS1 => self.addr_is = 1,
                ETM4_PKT_I_ADDR_CTXT_L_64IS1 => {
                    self.addr_is = 1;
                    self.addr_bytes = 8;
                    self.addr_64bit = true;
                }
                ETM4_PKT_I_ADDR_CTXT_L_64IS0 => {
                    self.addr_bytes = 8;
                    self.addr_64bit = true;
                }
                _ => {}
            }
        } else {
            if self.addr_bytes == 0 {
                if !self.ctxt_info_done {
                    self.ctxt_info_done = true;
                    self.vmid_bytes = if b & 0x40 != 0 { self.cfg.vmid_size() / 8 } else { 0 };
                    self.ctxtid_bytes = if b & 0x80 != 0 { self.cfg.cid_size() / 8 } else { 0 };
                } else if self.vmid_bytes > 0 {
                    self.vmid_bytes -= 1;
                } else if self.ctxtid_bytes > 0 {
                    self.ctxtid_bytes -= 1;
                }
            } else {
                self.addr_bytes -= 1;
            }
            if self.addr_bytes == 0 && self.ctxt_info_done && self.vmid_bytes == 0 && self.ctxtid_bytes == 0 {
                let mut st = 1;
                if self.addr_64bit {
                    let v = self.extract_64bit_long_addr(st, self.addr_is);
                    st += 8;
                    self.set_64bit_address(v, self.addr_is);
                } else {
                    let v = self.extract_32bit_long_addr(st, self.addr_is);
                    st += 4;
                    self.set_32bit_address(v, self.addr_is);
                }
                self.extract_and_set_context(st);
                self.state = ProcState::SendPkt;
            }
        }
    }

    fn i_short_addr(&mut self, b: u8) {
        let len = self.raw.len();
        if len == 1 {
            self.addr_done = false;
            self.addr_is = short_addr_is(b);
        } else if !self.addr_done {
            self.addr_done = len == 3 || b & 0x80 == 0;
        }
        if self.addr_done {
            let (_, val, bits) = self.extract_short_addr(1, self.addr_is);
            self.update_short_address(val, self.addr_is, bits);
            self.state = ProcState::SendPkt;
        }
    }

    /// The length of the short or long address packet whose header is
    /// `data[i]` (handler `h`), if the packet is whole in `data`.
    #[inline(always)]
    fn whole_addr_packet(&self, h: Handler, data: &[u8], i: usize) -> Option<usize> {
        let n = match h {
            Handler::ShortAddr => {
                if *data.get(i + 1)? & 0x80 != 0 {
                    3
                } else {
                    2
                }
            }
            Handler::LongAddr => 1 + long_addr_shape(self.pkt.type_).1 as usize,
            _ => return None,
        };
        (data.len() - i >= n).then_some(n)
    }

    /// The address packet now whole in `raw` (header `b`, handler `h`),
    /// taken as its handler takes it byte by byte up to its last.
    #[inline]
    fn addr_packet_taken(&mut self, h: Handler, b: u8) {
        if h == Handler::ShortAddr {
            self.addr_done = true;
            self.addr_is = short_addr_is(b);
            let (_, val, bits) = self.extract_short_addr(1, self.addr_is);
            self.update_short_address(val, self.addr_is, bits);
        } else {
            self.long_addr_kind();
            self.long_addr_set();
        }
        self.state = ProcState::SendPkt;
    }

    fn i_long_addr(&mut self, _b: u8) {
        if self.raw.len() == 1 {
            self.long_addr_kind();
        }
        if self.raw.len() == 1 + self.addr_bytes as usize {
            self.long_addr_set();
            self.state = ProcState::SendPkt;
        }
    }

    /// A long address packet's kind, from its header: ISA, size, bytes.
    fn long_addr_kind(&mut self) {
        let (is, bytes) = long_addr_shape(self.pkt.type_);
        self.addr_is = is;
        self.addr_bytes = u32::from(bytes);
        self.addr_64bit = bytes == 8;
    }

    /// A long address packet's address, its bytes all in `raw`.
    fn long_addr_set(&mut self) {
        if self.addr_64bit {
            let v = self.extract_64bit_long_addr(1, self.addr_is);
            self.set_64bit_address(v, self.addr_is);
        } else {
            let v = self.extract_32bit_long_addr(1, self.addr_is);
            self.set_32bit_address(v, self.addr_is);
        }
    }

    fn i_q(&mut self, b: u8) -> PResult {
        if self.raw.len() == 1 {
            self.q_type = b & 0xF;
            self.addr_bytes = 0;
            self.count_done = false;
            self.has_addr = false;
            self.addr_short = true;
            self.addr_match = false;
            self.addr_is = 1;
            self.qe = 0;
            match self.q_type {
                // count only, implied address
                0x0..=0x2 => {
                    self.addr_match = true;
                    self.has_addr = true;
                    self.qe = self.q_type & 0x3;
                }
                0xC => {}
                // count + short address
                0x5 | 0x6 => {
                    if self.q_type == 0x5 {
                        self.addr_is = 0;
                    }
                    self.has_addr = true;
                    self.addr_bytes = 2;
                }
                // count + long address
                0xA | 0xB => {
                    if self.q_type == 0xA {
                        self.addr_is = 0;
                    }
                    self.has_addr = true;
                    self.addr_short = false;
                    self.addr_bytes = 4;
                }
                // no count, no address
                0xF => self.count_done = true,
                _ => {
                    self.pkt.err_type = self.pkt.type_;
                    self.pkt.type_ = ETM4_PKT_I_BAD_SEQUENCE;
                    self.state = ProcState::SendPkt;
                    return Ok(());
                }
            }
        } else if self.addr_bytes > 0 {
            if self.addr_short && self.addr_bytes == 2 && b & 0x80 == 0 {
                self.addr_bytes -= 1; // short address can be a single byte
            }
            self.addr_bytes -= 1;
        } else if !self.count_done {
            self.count_done = b & 0x80 == 0;
        }

        if self.addr_bytes == 0 && self.count_done {
            let mut idx = 1;
            if self.has_addr {
                if self.addr_match {
                    self.set_address_exact_match(self.qe);
                } else if self.addr_short {
                    let (n, v, bits) = self.extract_short_addr(idx, self.addr_is);
                    idx += n;
                    self.update_short_address(v, self.addr_is, bits);
                } else {
                    let v = self.extract_32bit_long_addr(idx, self.addr_is);
                    idx += 4;
                    self.set_32bit_address(v, self.addr_is);
                }
            }
            if self.q_type != 0xF {
                let (_, count) = self.extract_cont_field(idx, 5)?;
                let q = &mut self.pkt.Q_pkt;
                q.q_count = count;
                q.set_q_type(self.q_type as u32);
                q.set_count_present(1);
                q.set_addr_present(self.has_addr as u32);
                q.set_addr_match(self.addr_match as u32);
            } else {
                let q = &mut self.pkt.Q_pkt;
                q.q_count = 0;
                q.set_q_type(0xF);
                q.set_count_present(0);
                q.set_addr_present(0);
                q.set_addr_match(0);
            }
            self.state = ProcState::SendPkt;
        }
        Ok(())
    }

    /// At an atom packet's header, `data[i]`: the run of atom packets from
    /// there (one byte each) offered to the output, which takes what it
    /// can straight from their bytes ([`PacketOut::atom_run`]). Returns
    /// the response to the last taken, with the processor's state left as
    /// sending that packet would have left it; None: none taken.
    #[inline(never)]
    fn offer_atom_run(&mut self, data: &[u8], i: usize, out: &mut dyn PacketOut<ocsd_etmv4_i_pkt>) -> Option<ocsd_datapath_resp_t> {
        let run = data[i..].iter().take_while(|&&b| self.table[b as usize].1 == Handler::Atom).count();
        let (n, resp) = out.atom_run(self.packet_index, &data[i..i + run]);
        if n == 0 {
            self.atom_run_refusals += 1;
            return None;
        }
        self.atom_run_refusals = 0;
        let last = i + n.min(run) - 1;
        let b = data[last];
        self.packet_index = self.block_index.wrapping_add(last as u32);
        self.pkt.type_ = self.table[b as usize].0;
        self.i_atom(b);
        self.processed = last + 1;
        Some(resp)
    }

    /// An atom packet's header byte `b` (its type set from `table`).
    #[inline(always)]
    fn i_atom(&mut self, b: u8) {
        if let Some(h) = ATOM_HEADERS[b as usize] {
            self.pkt.set_atom_pattern(h.bits, h.num);
        }
        self.state = ProcState::SendPkt;
    }

    fn i_ite(&mut self) {
        // header, EL byte, 8 bytes payload
        if self.raw.len() == 10 {
            let value = (0..8).fold(0u64, |v, i| v | (self.raw[2 + i] as u64) << (8 * i));
            self.pkt.ite_pkt.el = self.raw[1];
            self.pkt.ite_pkt.value = value;
            self.state = ProcState::SendPkt;
        }
    }

    // ------------------------------------------------------------------
    // address state (OpenCSD's EtmV4ITrcPacket address setters)

    fn push_vaddr(&mut self) {
        self.addr_stack.push(self.pkt.v_addr, self.pkt.v_addr_ISA);
    }

    fn set_64bit_address(&mut self, addr: u64, is: u8) {
        let v = &mut self.pkt.v_addr;
        v.pkt_bits = 64;
        v.valid_bits = 64;
        v.size = VA_64BIT;
        v.val = addr;
        self.pkt.v_addr_ISA = is;
        self.push_vaddr();
    }

    fn set_32bit_address(&mut self, addr: u32, is: u8) {
        let mask = 0xFFFF_FFFFu64;
        let sf = self.pkt.pkt_valid.context_valid() != 0 && self.pkt.context.SF() != 0;
        let v = &mut self.pkt.v_addr;
        v.pkt_bits = 32;
        if sf {
            v.size = VA_64BIT;
            v.val = (v.val & !mask) | (addr as u64 & mask);
        } else {
            v.val = addr as u64;
            v.size = VA_32BIT;
        }
        if v.valid_bits < 32 {
            v.valid_bits = 32;
        }
        self.pkt.v_addr_ISA = is;
        self.push_vaddr();
    }

    fn update_short_address(&mut self, addr: u32, is: u8, update_bits: u8) {
        let mask = if update_bits >= 64 { !0u64 } else { (1u64 << update_bits) - 1 };
        let v = &mut self.pkt.v_addr;
        v.pkt_bits = update_bits;
        if v.valid_bits < update_bits {
            v.valid_bits = update_bits;
        }
        v.val = (v.val & !mask) | (addr as u64 & mask);
        self.pkt.v_addr_ISA = is;
        self.push_vaddr();
    }

    fn set_address_exact_match(&mut self, idx: u8) {
        self.pkt.addr_exact_match_idx = idx;
        if let Some((a, isa)) = self.addr_stack.get(idx) {
            self.pkt.v_addr = a;
            self.pkt.v_addr_ISA = isa;
        }
        self.push_vaddr();
    }

    // ------------------------------------------------------------------
    // field extraction from the packet buffer

    /// A continuation-bit field of up to `byte_limit` bytes at `st`:
    /// (bytes used, value).
    fn extract_cont_field(&mut self, st: usize, byte_limit: usize) -> Result<(usize, u32), PktErr> {
        let mut idx = 0;
        let mut value = 0u32;
        let mut last = false;
        while !last && idx < byte_limit {
            match self.raw.get(st + idx) {
                Some(&b) => {
                    last = b & 0x80 == 0;
                    value |= ((b & 0x7F) as u32).wrapping_shl(7 * idx as u32);
                    idx += 1;
                }
                None => return Err(self.bad_sequence("Invalid 32 bit continuation fields in packet")),
            }
        }
        Ok((idx, value))
    }

    /// A timestamp field: up to 9 bytes, the 9th using all 8 bits.
    fn extract_ts_field64(&mut self, st: usize) -> Result<(usize, u64), PktErr> {
        let mut idx = 0;
        let mut value = 0u64;
        loop {
            match self.raw.get(st + idx) {
                Some(&b) => {
                    let (mask, last) = if idx == 8 { (0xFF, true) } else { (0x7F, b & 0x80 == 0) };
                    value |= ((b & mask) as u64) << (7 * idx);
                    idx += 1;
                    if last {
                        break;
                    }
                }
                None => return Err(self.bad_sequence("Invalid 64 bit continuation fields in packet")),
            }
        }
        Ok((idx, value))
    }

    /// A conditional result field: (bytes used, key, result byte).
    fn extract_cond_result(&mut self, st: usize) -> Result<(usize, u32, u8), PktErr> {
        let mut idx = 0;
        let mut key = 0u32;
        let mut result = 0u8;
        let mut incr = 0u32;
        let mut last = false;
        while !last && idx < 6 {
            match self.raw.get(st + idx) {
                Some(&b) => {
                    if idx == 0 {
                        result = b;
                        key = ((b >> 4) & 0x7) as u32;
                        incr += 3;
                    } else {
                        key |= ((b & 0x7F) as u32).wrapping_shl(incr);
                        incr += 7;
                    }
                    last = b & 0x80 == 0;
                    idx += 1;
                }
                None => return Err(self.bad_sequence("Invalid continuation fields in packet")),
            }
        }
        Ok((idx, key, result))
    }

    fn byte_at(&self, i: usize) -> u64 {
        self.raw.get(i).copied().unwrap_or(0) as u64
    }

    fn extract_64bit_long_addr(&self, st: usize, is: u8) -> u64 {
        let mut v = if is == 0 {
            ((self.byte_at(st) & 0x7F) << 2) | ((self.byte_at(st + 1) & 0x7F) << 9)
        } else {
            ((self.byte_at(st) & 0x7F) << 1) | (self.byte_at(st + 1) << 8)
        };
        for i in 2..8 {
            v |= self.byte_at(st + i) << (8 * i);
        }
        v
    }

    fn extract_32bit_long_addr(&self, st: usize, is: u8) -> u32 {
        let mut v = if is == 0 {
            ((self.byte_at(st) & 0x7F) << 2) | ((self.byte_at(st + 1) & 0x7F) << 9)
        } else {
            ((self.byte_at(st) & 0x7F) << 1) | (self.byte_at(st + 1) << 8)
        };
        v |= self.byte_at(st + 2) << 16;
        v |= self.byte_at(st + 3) << 24;
        v as u32
    }

    /// Short address: (bytes used, value, bits updated).
    fn extract_short_addr(&self, st: usize, is: u8) -> (usize, u32, u8) {
        let shift = if is == 0 { 2 } else { 1 };
        let mut bits = 7u8;
        let b0 = self.byte_at(st) as u32;
        let mut value = (b0 & 0x7F) << shift;
        let mut idx = 0;
        if b0 & 0x80 != 0 {
            idx += 1;
            value |= (self.byte_at(st + idx) as u32) << (7 + shift);
            bits += 8;
        }
        idx += 1;
        bits += shift as u8;
        (idx, value, bits)
    }
}

/// The instruction set bit of a short address packet, from its header.
#[inline]
fn short_addr_is(hdr: u8) -> u8 {
    (hdr as i32 == ETM4_PKT_I_ADDR_S_IS1 || hdr as i32 == ETE_PKT_I_SRC_ADDR_S_IS1) as u8
}

/// A long address packet's instruction set bit and address bytes, from
/// its type.
#[inline]
fn long_addr_shape(t: ocsd_etmv4_i_pkt_type) -> (u8, u8) {
    match t {
        ETM4_PKT_I_ADDR_L_32IS1 | ETE_PKT_I_SRC_ADDR_L_32IS1 => (1, 4),
        ETM4_PKT_I_ADDR_L_64IS1 | ETE_PKT_I_SRC_ADDR_L_64IS1 => (1, 8),
        ETM4_PKT_I_ADDR_L_64IS0 | ETE_PKT_I_SRC_ADDR_L_64IS0 => (0, 8),
        _ => (0, 4),
    }
}

impl PacketProcessor for EtmV4IPktProc {
    type Packet = ocsd_etmv4_i_pkt;

    fn name(&self) -> &str {
        EtmV4IPktProc::name(self)
    }

    fn process_data(
        &mut self,
        index: ocsd_trc_index_t,
        data: &[u8],
        out: &mut dyn PacketOut<ocsd_etmv4_i_pkt>,
    ) -> (ocsd_datapath_resp_t, usize) {
        let mut resp = OCSD_RESP_CONT;
        self.block_index = index;
        self.processed = 0;
        self.atom_run_refusals = 0;

        while (self.processed < data.len() || self.state == ProcState::SendPkt) && resp_is_cont(resp) {
            match self.state {
                ProcState::ProcHdr | ProcState::ProcData => {
                    if self.state == ProcState::ProcHdr {
                        self.packet_index = self.cur_index();
                        if self.is_sync {
                            let i = self.processed;
                            let b = data[i];
                            let (t, h) = self.table[b as usize];
                            self.handler = h;
                            self.pkt.type_ = t;
                            if matches!(h, Handler::Atom | Handler::NoPayload) {
                                // a one-byte packet (most packets are atoms):
                                // its byte goes out straight from the input,
                                // not through the packet buffer; the state
                                // after it is what the byte-wise path leaves
                                let taken = if h == Handler::Atom && self.atom_run_refusals < 2 {
                                    self.offer_atom_run(data, i, out)
                                } else {
                                    None
                                };
                                if let Some(r) = taken {
                                    resp = r;
                                } else {
                                    self.processed = i + 1;
                                    if h == Handler::Atom {
                                        self.i_atom(b);
                                    } else {
                                        self.i_no_payload(b);
                                        self.atom_run_refusals = 0;
                                    }
                                    resp = out.packet(self.packet_index, &self.pkt, &data[i..i + 1]);
                                }
                                self.pkt.init_next_packet();
                                self.update_on_unsync_packet_index = 0;
                                self.state = ProcState::ProcHdr;
                                continue;
                            }
                            if let Some(n) = self.whole_addr_packet(h, data, i) {
                                // an address packet whole in the block (the
                                // next most common packets): its bytes taken
                                // at once, leaving what the byte-wise path
                                // leaves after its last byte and SendPkt
                                let p = &data[i..i + n];
                                self.raw.extend_from_slice(p);
                                self.processed = i + n;
                                self.addr_packet_taken(h, b);
                                self.atom_run_refusals = 0;
                                resp = out.packet(self.packet_index, &self.pkt, p);
                                self.init_packet_state();
                                self.state = ProcState::ProcHdr;
                                continue;
                            }
                        } else {
                            self.handler = Handler::NotSync;
                            self.pkt.type_ = ETM4_PKT_I_NOTSYNC;
                        }
                        self.state = ProcState::ProcData;
                    }
                    while self.processed < data.len() && self.state == ProcState::ProcData {
                        let b = data[self.processed];
                        self.raw.push(b);
                        self.processed += 1;
                        if let Err(e) = self.dispatch(b) {
                            self.log(out, &e);
                            if e.code == OCSD_ERR_INVALID_PCKT_HDR {
                                self.stats.add_bad_header();
                            } else {
                                self.stats.add_bad_sequence();
                            }
                            // send the error packet on for the next stage to decide
                            self.state = ProcState::SendPkt;
                        }
                    }
                }
                ProcState::SendPkt => {
                    self.atom_run_refusals = 0;
                    resp = self.output_packet(out);
                    self.init_packet_state();
                    self.state = ProcState::ProcHdr;
                }
                ProcState::SendUnsynced => {
                    resp = self.output_unsynced(out);
                    if self.update_on_unsync_packet_index != 0 {
                        self.packet_index = self.update_on_unsync_packet_index;
                        self.update_on_unsync_packet_index = 0;
                    }
                    self.state = ProcState::ProcData;
                }
            }
        }
        (resp, self.processed)
    }

    fn eot(&mut self, out: &mut dyn PacketOut<ocsd_etmv4_i_pkt>) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        if !self.raw.is_empty() {
            self.pkt.update_err_type(ETM4_PKT_I_INCOMPLETE_EOT, 0);
            resp = self.output_packet(out);
            self.init_packet_state();
        }
        resp
    }

    fn reset(&mut self, _index: ocsd_trc_index_t) {
        self.init_processor_state();
    }

    fn is_synced(&self) -> bool {
        self.is_sync
    }

    fn error_counts(&self) -> (u32, u32) {
        self.stats.errors()
    }

    fn attach_stats(&mut self, stats: &LiveStats) {
        self.stats = stats.clone();
    }

    fn keeps_stats(&self) -> bool {
        true
    }

    fn set_op_flags(&mut self, flags: u32) {
        self.op_flags = flags & (OCSD_OPFLG_PKTPROC_COMMON | OCSD_OPFLG_COMP_MODE_MASK);
    }
    fn same_state(&self, other: &Self) -> bool {
        EtmV4IPktProc::same_state(self, other)
    }
}
