//! PTM packet processor: trace bytes of one trace ID in, `ocsd_ptm_pkt`
//! packets out (OpenCSD's `TrcPktProcPtm`).
#![allow(non_upper_case_globals)]

use super::types::*;
use super::config::*;
use crate::abi::*;
use crate::common::{OcsdError, PacketOut, PacketProcessor};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    WaitSync,
    ProcHdr,
    ProcData,
    SendPkt,
}

/// The packet handler chosen by the header byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PktFn {
    ASync,
    ISync,
    Trigger,
    WPointUpdate,
    Ignore,
    CtxtID,
    Vmid,
    Atom,
    TimeStamp,
    ExceptionRet,
    BranchAddr,
    Reserved,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AsyncResult {
    ASync,
    NotASync,
    ASyncExtra0,
    Throw0,
    Incomplete,
}

const UNSYNC_PKT_MAX: usize = 16;
const ASYNC_PAD_0_LIMIT: usize = 11;
const ASYNC_REQ_0: usize = 5;

fn header_kind(b: u8) -> (ocsd_ptm_pkt_type, PktFn) {
    match b {
        0x00 => (PTM_PKT_A_SYNC, PktFn::ASync),
        0x08 => (PTM_PKT_I_SYNC, PktFn::ISync),
        0x72 => (PTM_PKT_WPOINT_UPDATE, PktFn::WPointUpdate),
        0x0C => (PTM_PKT_TRIGGER, PktFn::Trigger),
        0x6E => (PTM_PKT_CONTEXT_ID, PktFn::CtxtID),
        0x3C => (PTM_PKT_VMID, PktFn::Vmid),
        0x42 | 0x46 => (PTM_PKT_TIMESTAMP, PktFn::TimeStamp),
        0x76 => (PTM_PKT_EXCEPTION_RET, PktFn::ExceptionRet),
        0x66 => (PTM_PKT_IGNORE, PktFn::Ignore),
        _ if b & 0x01 == 0x01 => (PTM_PKT_BRANCH_ADDRESS, PktFn::BranchAddr),
        _ if b & 0x81 == 0x80 => (PTM_PKT_ATOM, PktFn::Atom),
        _ => (PTM_PKT_RESERVED, PktFn::Reserved),
    }
}

/// The PTM packet processor.
pub struct PtmPktProc {
    cfg: PtmConfig,
    name: String,
    chan_id: u8,

    state: State,
    pkt_data: Vec<u8>,
    pkt: ocsd_ptm_pkt,
    pkt_index: ocsd_trc_index_t,
    pkt_fn: PktFn,

    // current input block
    data_processed: usize,
    block_idx: ocsd_trc_index_t,

    wait_async_so_pkt: bool,
    async_raw_op: bool,
    op_not_sync_pkt: bool,
    async_0: usize,

    num_pkt_bytes_req: usize,
    need_cycle_count: bool,
    got_cycle_count: bool,
    got_cc_bytes: usize,
    num_ctxt_id_bytes: usize,
    got_ctxt_id_bytes: usize,
    got_ts_bytes: bool,
    ts_byte_max: usize,
    got_addr_bytes: bool,
    num_addr_bytes: usize,
    got_excep_bytes: bool,
    num_excep_bytes: usize,
    addr_pkt_isa: ocsd_isa,
    excep_alt_isa: u32,
}

type PResult = Result<(), OcsdError>;

impl PtmPktProc {
    /// A packet processor for the PTM source configured by `cfg`; the
    /// component is named `PKTP_PTM_<trace ID, 4 decimal digits>`.
    pub fn new(cfg: &ocsd_ptm_cfg) -> Self {
        let cfg = PtmConfig::new(cfg);
        let mut p = PtmPktProc {
            cfg,
            name: format!("PKTP_PTM_{:04}", cfg.trace_id()),
            chan_id: cfg.trace_id(),
            state: State::WaitSync,
            pkt_data: Vec::with_capacity(32),
            pkt: ocsd_ptm_pkt::new(),
            pkt_index: 0,
            pkt_fn: PktFn::Reserved,
            data_processed: 0,
            block_idx: 0,
            wait_async_so_pkt: false,
            async_raw_op: false,
            op_not_sync_pkt: false,
            async_0: 0,
            num_pkt_bytes_req: 0,
            need_cycle_count: false,
            got_cycle_count: false,
            got_cc_bytes: 0,
            num_ctxt_id_bytes: 0,
            got_ctxt_id_bytes: 0,
            got_ts_bytes: false,
            ts_byte_max: 0,
            got_addr_bytes: false,
            num_addr_bytes: 0,
            got_excep_bytes: false,
            num_excep_bytes: 0,
            addr_pkt_isa: ocsd_isa_unknown,
            excep_alt_isa: 0,
        };
        p.init_processor_state();
        p
    }

    /// The component name used in error messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn config(&self) -> &PtmConfig {
        &self.cfg
    }

    fn init_processor_state(&mut self) {
        self.pkt.type_ = PTM_PKT_NOTSYNC;
        self.pkt_fn = PktFn::Reserved;
        self.state = State::WaitSync;
        self.async_0 = 0;
        self.wait_async_so_pkt = false;
        self.async_raw_op = false;
        self.op_not_sync_pkt = false;
        self.excep_alt_isa = 0;
        self.pkt.reset_state();
        self.pkt.clear();
        // (the bytes of the packet being read stay, as in OpenCSD: after a
        // RESET they are shown with the next packet, or at EOT)
    }

    fn malformed(&mut self, msg: &str) -> OcsdError {
        self.pkt.set_err_type(PTM_PKT_BAD_SEQUENCE);
        OcsdError::at(OCSD_ERR_SEV_ERROR, OCSD_ERR_BAD_PACKET_SEQ, self.pkt_index, self.chan_id, msg)
    }

    fn read_byte(&mut self, data: &[u8]) -> Option<u8> {
        if self.data_processed < data.len() {
            let b = data[self.data_processed];
            self.data_processed += 1;
            self.pkt_data.push(b);
            Some(b)
        } else {
            None
        }
    }

    fn output_packet(&mut self, out: &mut dyn PacketOut<ocsd_ptm_pkt>) -> ocsd_datapath_resp_t {
        let resp = out.packet(self.pkt_index, &self.pkt, &self.pkt_data);
        self.pkt_data.clear();
        resp
    }

    fn wait_async(&mut self, data: &[u8], tail: &[u8], out: &mut dyn PacketOut<ocsd_ptm_pkt>) -> ocsd_datapath_resp_t {
        const SPARE_ZEROS: [u8; 16] = [0; 16];
        let mut resp = OCSD_RESP_CONT;
        let mut do_scan = true;
        let mut send_unsynced = false;
        let mut have_async = false;
        let mut unsynced_bytes = 0usize;
        let mut scan_block_start = 0usize;
        let pkt_bytes_on_entry = self.pkt_data.len();

        while do_scan && resp_is_cont(resp) {
            if self.wait_async_so_pkt {
                match self.find_async(data) {
                    AsyncResult::ASync | AsyncResult::ASyncExtra0 => {
                        self.state = State::SendPkt;
                        self.wait_async_so_pkt = false;
                        send_unsynced = true;
                        have_async = true;
                        do_scan = false;
                    }
                    AsyncResult::Throw0 => {
                        unsynced_bytes += ASYNC_PAD_0_LIMIT;
                        self.wait_async_so_pkt = false;
                        let n = ASYNC_PAD_0_LIMIT.min(self.pkt_data.len());
                        self.pkt_data.drain(..n);
                    }
                    AsyncResult::NotASync => {
                        unsynced_bytes += self.pkt_data.len();
                        self.wait_async_so_pkt = false;
                        self.pkt_data.clear();
                    }
                    AsyncResult::Incomplete => {
                        send_unsynced = true;
                        do_scan = false;
                    }
                }
            } else {
                let b = data[self.data_processed];
                self.data_processed += 1;
                if b == 0x00 {
                    self.wait_async_so_pkt = true;
                    self.pkt_data.push(0);
                    self.async_0 = 1;
                } else {
                    unsynced_bytes += 1;
                }
            }

            if unsynced_bytes >= UNSYNC_PKT_MAX {
                send_unsynced = true;
            }
            if self.data_processed == data.len() {
                send_unsynced = true;
                do_scan = false;
            }

            if send_unsynced && unsynced_bytes > 0 {
                if self.async_raw_op {
                    if pkt_bytes_on_entry > 0 {
                        let n = pkt_bytes_on_entry.min(SPARE_ZEROS.len());
                        out.packet_to_monitor(self.pkt_index, &self.pkt, &SPARE_ZEROS[..n]);
                        self.pkt_index = self.pkt_index.wrapping_add(pkt_bytes_on_entry as u32);
                    }
                    // OpenCSD reads these from the input block even when
                    // some of them came from an earlier block, so it may
                    // show bytes past its end: those of `tail`.
                    let mut shown = [0u8; UNSYNC_PKT_MAX + 16];
                    let mut n = 0;
                    for i in scan_block_start..scan_block_start + unsynced_bytes {
                        let b = if i < data.len() { data.get(i) } else { tail.get(i - data.len()) };
                        match (b, shown.get_mut(n)) {
                            (Some(&b), Some(slot)) => {
                                *slot = b;
                                n += 1;
                            }
                            _ => break,
                        }
                    }
                    out.packet_to_monitor(self.pkt_index, &self.pkt, &shown[..n]);
                }
                if !self.op_not_sync_pkt {
                    resp = out.packet_to_sink(self.pkt_index, &self.pkt);
                    self.op_not_sync_pkt = true;
                }
                scan_block_start += unsynced_bytes;
                self.pkt_index = self.pkt_index.wrapping_add(unsynced_bytes as u32);
                unsynced_bytes = 0;
                send_unsynced = false;
            }

            if have_async {
                self.pkt.type_ = PTM_PKT_A_SYNC;
            }
        }
        resp
    }

    fn find_async(&mut self, data: &[u8]) -> AsyncResult {
        let mut res = AsyncResult::NotASync;
        loop {
            match self.read_byte(data) {
                Some(0x00) => {
                    self.async_0 += 1;
                    if self.async_0 >= ASYNC_PAD_0_LIMIT + ASYNC_REQ_0 {
                        return AsyncResult::Throw0;
                    }
                }
                Some(b) => {
                    if b == 0x80 {
                        if self.async_0 == 5 {
                            res = AsyncResult::ASync;
                        } else if self.async_0 > 5 {
                            res = AsyncResult::ASyncExtra0;
                        }
                    }
                    return res;
                }
                None => return AsyncResult::Incomplete,
            }
        }
    }

    fn run_pkt_fn(&mut self, data: &[u8]) -> PResult {
        match self.pkt_fn {
            PktFn::ASync => self.pkt_async(data),
            PktFn::ISync => self.pkt_isync(data),
            PktFn::WPointUpdate => {
                self.pkt_wpoint_update(data);
                Ok(())
            }
            PktFn::CtxtID => self.pkt_ctxt_id(data),
            PktFn::Vmid => {
                if let Some(b) = self.read_byte(data) {
                    self.pkt.update_vmid(b);
                    self.state = State::SendPkt;
                }
                Ok(())
            }
            PktFn::Atom => self.pkt_atom(data),
            PktFn::TimeStamp => self.pkt_timestamp(data),
            PktFn::BranchAddr => self.pkt_branch_addr(data),
            PktFn::Trigger | PktFn::Ignore | PktFn::ExceptionRet | PktFn::Reserved => {
                self.state = State::SendPkt;
                Ok(())
            }
        }
    }

    fn pkt_async(&mut self, data: &[u8]) -> PResult {
        if self.pkt_data.len() == 1 {
            self.async_0 = 1;
        }
        match self.find_async(data) {
            AsyncResult::ASync | AsyncResult::ASyncExtra0 => self.state = State::SendPkt,
            AsyncResult::Throw0 | AsyncResult::NotASync => return Err(self.malformed("Bad Async packet")),
            AsyncResult::Incomplete => {}
        }
        Ok(())
    }

    fn pkt_isync(&mut self, data: &[u8]) -> PResult {
        if self.pkt_data.len() == 1 {
            self.num_ctxt_id_bytes = self.cfg.ctxt_id_bytes();
            self.got_ctxt_id_bytes = 0;
            self.num_pkt_bytes_req = 6 + self.num_ctxt_id_bytes;
        }
        let mut got_bytes = false;
        while !got_bytes {
            let Some(b) = self.read_byte(data) else { break };
            let idx = self.pkt_data.len() - 1;
            if idx == 5 {
                let alt_isa = (b >> 2) & 0x1;
                let reason = (b >> 5) & 0x3;
                self.pkt.i_sync_reason = reason as ocsd_iSync_reason;
                self.pkt.update_ns(((b >> 3) & 0x1) as u32);
                self.pkt.update_alt_isa(((b >> 2) & 0x1) as u32);
                self.pkt.update_hyp(((b >> 1) & 0x1) as u32);
                let mut isa = ocsd_isa_arm;
                if self.pkt_data[1] & 0x1 != 0 {
                    isa = if alt_isa != 0 { ocsd_isa_tee } else { ocsd_isa_thumb2 };
                }
                self.pkt.update_isa(isa);
                self.need_cycle_count = if reason != 0 { self.cfg.ena_cycle_acc() } else { false };
                self.got_cycle_count = false;
                self.num_pkt_bytes_req += self.need_cycle_count as usize;
                self.got_cc_bytes = 0;
            } else if idx > 5 {
                if self.need_cycle_count && !self.got_cycle_count {
                    self.got_cycle_count = if idx == 6 { b & 0x40 == 0 } else { b & 0x80 == 0 || idx == 10 };
                    self.got_cc_bytes += 1;
                    if !self.got_cycle_count {
                        self.num_pkt_bytes_req += 1;
                    }
                } else if self.num_ctxt_id_bytes > self.got_ctxt_id_bytes {
                    self.got_ctxt_id_bytes += 1;
                }
            }
            got_bytes = self.num_pkt_bytes_req == self.pkt_data.len();
        }
        if got_bytes {
            let d = &self.pkt_data;
            let addr = (d[1] as u32 & 0xFE) | (d[2] as u32) << 8 | (d[3] as u32) << 16 | (d[4] as u32) << 24;
            self.pkt.update_address(addr as u64, 32);
            let mut opt_idx = 6;
            if self.need_cycle_count {
                let cc = self.extract_cycle_count(opt_idx)?;
                self.pkt.set_cycle_count(cc);
                opt_idx += self.got_cc_bytes;
            }
            if self.num_ctxt_id_bytes != 0 {
                let id = self.extract_ctxt_id(opt_idx)?;
                self.pkt.update_context_id(id);
            }
            self.state = State::SendPkt;
        }
        Ok(())
    }

    fn pkt_wpoint_update(&mut self, data: &[u8]) {
        if self.pkt_data.len() == 1 {
            self.got_addr_bytes = false;
            self.num_addr_bytes = 0;
            self.got_excep_bytes = false;
            self.num_excep_bytes = 0;
            self.addr_pkt_isa = ocsd_isa_unknown;
        }
        let mut done = false;
        while !done {
            let Some(b) = self.read_byte(data) else { break };
            let idx = self.pkt_data.len() - 1;
            if !self.got_addr_bytes {
                if idx <= 4 {
                    if b & 0x80 == 0 {
                        self.got_addr_bytes = true;
                        done = true;
                        self.got_excep_bytes = true;
                    }
                } else {
                    if b & 0x40 == 0 {
                        self.got_excep_bytes = true;
                    }
                    self.got_addr_bytes = true;
                    done = self.got_excep_bytes;
                    self.addr_pkt_isa = self.isa_from_byte5(b);
                }
                self.num_addr_bytes += 1;
            } else if !self.got_excep_bytes {
                self.excep_alt_isa = (b & 0x40 == 0x40) as u32;
                self.got_excep_bytes = true;
                self.num_excep_bytes += 1;
                done = true;
            }
        }
        if done {
            self.finish_addr_isa();
            let (addr, bits) = self.extract_address(1);
            self.pkt.update_address(addr as u64, bits);
            self.state = State::SendPkt;
        }
    }

    fn isa_from_byte5(&self, b: u8) -> ocsd_isa {
        if b & 0x20 == 0x20 {
            ocsd_isa_jazelle
        } else if b & 0x30 == 0x10 {
            ocsd_isa_thumb2
        } else {
            ocsd_isa_arm
        }
    }

    fn finish_addr_isa(&mut self) {
        if self.addr_pkt_isa == ocsd_isa_unknown {
            self.addr_pkt_isa = self.pkt.curr_isa;
        }
        if self.got_excep_bytes {
            if self.addr_pkt_isa == ocsd_isa_tee && self.excep_alt_isa == 0 {
                self.addr_pkt_isa = ocsd_isa_thumb2;
            } else if self.addr_pkt_isa == ocsd_isa_thumb2 && self.excep_alt_isa == 1 {
                self.addr_pkt_isa = ocsd_isa_tee;
            }
        }
        self.pkt.update_isa(self.addr_pkt_isa);
    }

    fn pkt_ctxt_id(&mut self, data: &[u8]) -> PResult {
        if self.pkt_data.len() == 1 {
            self.num_ctxt_id_bytes = self.cfg.ctxt_id_bytes();
            self.got_ctxt_id_bytes = 0;
        }
        let mut got = self.num_ctxt_id_bytes == self.got_ctxt_id_bytes;
        while !got {
            if self.read_byte(data).is_none() {
                break;
            }
            self.got_ctxt_id_bytes += 1;
            got = self.num_ctxt_id_bytes == self.got_ctxt_id_bytes;
        }
        if got {
            let mut id = 0;
            if self.num_ctxt_id_bytes != 0 {
                id = self.extract_ctxt_id(1)?;
            }
            self.pkt.update_context_id(id);
            self.state = State::SendPkt;
        }
        Ok(())
    }

    fn pkt_atom(&mut self, data: &[u8]) -> PResult {
        let hdr = self.pkt_data[0];
        if !self.cfg.ena_cycle_acc() {
            self.pkt.set_atom_from_phdr(hdr);
            self.state = State::SendPkt;
            return Ok(());
        }
        let mut got_all = false;
        if hdr & 0x40 == 0 {
            got_all = true;
        } else {
            while !got_all {
                let Some(b) = self.read_byte(data) else { break };
                if b & 0x80 == 0 || self.pkt_data.len() == 5 {
                    got_all = true;
                }
            }
        }
        if got_all {
            let cc = self.extract_cycle_count(0)?;
            self.pkt.set_cycle_count(cc);
            self.pkt.set_cycle_acc_atom_from_phdr(hdr);
            self.state = State::SendPkt;
        }
        Ok(())
    }

    fn pkt_timestamp(&mut self, data: &[u8]) -> PResult {
        if self.pkt_data.len() == 1 {
            self.got_ts_bytes = false;
            self.need_cycle_count = self.cfg.ena_cycle_acc();
            self.got_cc_bytes = 0;
            self.ts_byte_max = if self.cfg.ts_pkt_64() { 10 } else { 8 };
        }
        let mut got = false;
        while !got {
            let Some(b) = self.read_byte(data) else { break };
            if !self.got_ts_bytes {
                if b & 0x80 == 0 || self.pkt_data.len() == self.ts_byte_max {
                    self.got_ts_bytes = true;
                    if !self.need_cycle_count {
                        got = true;
                    }
                }
            } else {
                let mask = if self.got_cc_bytes == 0 { 0x40 } else { 0x80 };
                if b & mask == 0 {
                    got = true;
                }
                self.got_cc_bytes += 1;
                if self.got_cc_bytes == 5 {
                    got = true;
                }
            }
        }
        if got {
            let (ts, bits, end_idx) = self.extract_ts()?;
            if self.need_cycle_count {
                let cc = self.extract_cycle_count(end_idx)?;
                self.pkt.set_cycle_count(cc);
            }
            // OpenCSD 1.8.0 takes the value as natural binary whatever
            // ETMCCER says about Gray coding.
            self.pkt.update_timestamp(ts, bits);
            self.state = State::SendPkt;
        }
        Ok(())
    }

    fn pkt_branch_addr(&mut self, data: &[u8]) -> PResult {
        let mut done = false;
        if self.pkt_data.len() == 1 {
            let hdr = self.pkt_data[0];
            self.got_addr_bytes = false;
            self.num_addr_bytes = 1;
            self.need_cycle_count = self.cfg.ena_cycle_acc();
            self.got_cc_bytes = 0;
            self.got_excep_bytes = false;
            self.num_excep_bytes = 0;
            self.addr_pkt_isa = ocsd_isa_unknown;
            if hdr & 0x80 == 0 {
                self.got_addr_bytes = true;
                if !self.need_cycle_count {
                    done = true;
                }
                self.got_excep_bytes = true;
            }
        }
        while !done {
            let Some(b) = self.read_byte(data) else { break };
            let idx = self.pkt_data.len() - 1;
            if !self.got_addr_bytes {
                if idx < 4 {
                    if b & 0x80 == 0 {
                        if b & 0x40 == 0 {
                            self.got_excep_bytes = true;
                        }
                        self.got_addr_bytes = true;
                        done = self.got_excep_bytes && !self.need_cycle_count;
                    }
                } else {
                    if b & 0x40 == 0 {
                        self.got_excep_bytes = true;
                    }
                    self.got_addr_bytes = true;
                    done = self.got_excep_bytes && !self.need_cycle_count;
                    self.addr_pkt_isa = self.isa_from_byte5(b);
                }
                self.num_addr_bytes += 1;
            } else if !self.got_excep_bytes {
                if self.num_excep_bytes == 0 {
                    if b & 0x80 == 0 {
                        self.got_excep_bytes = true;
                    }
                    self.excep_alt_isa = (b & 0x40 == 0x40) as u32;
                } else {
                    self.got_excep_bytes = true;
                }
                self.num_excep_bytes += 1;
                if self.got_excep_bytes && !self.need_cycle_count {
                    done = true;
                }
            } else if self.need_cycle_count {
                if self.got_cc_bytes == 0 {
                    done = b & 0x40 == 0;
                } else {
                    done = b & 0x80 == 0 || self.got_cc_bytes == 4;
                }
                self.got_cc_bytes += 1;
            } else {
                return Err(self.malformed("sequencing error analysing branch packet"));
            }
        }

        if done {
            self.finish_addr_isa();
            let (addr, bits) = self.extract_address(0);
            self.pkt.update_address(addr as u64, bits);

            if self.num_excep_bytes > 0 {
                const V7AR: [ocsd_armv7_exception; 16] = [
                    Excp_NoException, Excp_DebugHalt, Excp_SMC, Excp_Hyp, Excp_AsyncDAbort, Excp_ThumbEECheckFail,
                    Excp_Reserved, Excp_Reserved, Excp_Reset, Excp_Undef, Excp_SVC, Excp_PrefAbort,
                    Excp_SyncDataAbort, Excp_Generic, Excp_IRQ, Excp_FIQ,
                ];
                let e1 = self.pkt_data[self.num_addr_bytes];
                let mut num = ((e1 >> 1) & 0xF) as u16;
                self.pkt.update_ns((e1 & 0x1) as u32);
                if self.num_excep_bytes > 1 {
                    let e2 = self.pkt_data[self.num_addr_bytes + 1];
                    self.pkt.update_hyp(((e2 >> 5) & 0x1) as u32);
                    num |= ((e2 & 0x1F) as u16) << 4;
                }
                let t = if num <= 0xF { V7AR[num as usize] } else { Excp_Reserved };
                self.pkt.set_exception(t, num);
            }
            if self.need_cycle_count {
                let cc = self.extract_cycle_count(self.num_addr_bytes + self.num_excep_bytes)?;
                self.pkt.set_cycle_count(cc);
            }
            self.state = State::SendPkt;
        }
        Ok(())
    }

    fn extract_ctxt_id(&mut self, idx: usize) -> Result<u32, OcsdError> {
        let mut id = 0u32;
        for i in 0..self.num_ctxt_id_bytes {
            if idx + i >= self.pkt_data.len() {
                return Err(self.malformed("Insufficient packet bytes for Context ID value."));
            }
            id |= (self.pkt_data[idx + i] as u32) << (8 * i);
        }
        Ok(id)
    }

    fn extract_cycle_count(&mut self, offset: usize) -> Result<u32, OcsdError> {
        let mut cc = 0u32;
        let mut i = 0usize;
        let mut shift = 4;
        loop {
            if offset + i >= self.pkt_data.len() {
                return Err(self.malformed("Insufficient packet bytes for Cycle Count value."));
            }
            let b = self.pkt_data[offset + i];
            let cont;
            if i == 0 {
                cont = b & 0x40 != 0;
                cc = ((b >> 2) & 0xF) as u32;
            } else {
                cont = b & 0x80 != 0 && i != 4;
                cc |= ((b & 0x7F) as u32) << shift;
                shift += 7;
            }
            i += 1;
            if !cont {
                break;
            }
        }
        Ok(cc)
    }

    fn extract_ts(&mut self) -> Result<(u64, u8, usize), OcsdError> {
        let b64 = self.cfg.ts_pkt_64();
        let mut idx = 1usize;
        let mut shift = 0u32;
        let mut ts = 0u64;
        let mut bits = 0u8;
        loop {
            if idx >= self.pkt_data.len() {
                return Err(self.malformed("Insufficient packet bytes for Timestamp value."));
            }
            let mut b = self.pkt_data[idx];
            let cont;
            if b64 {
                if idx < 9 {
                    cont = b & 0x80 == 0x80;
                    b &= 0x7F;
                    bits += 7;
                } else {
                    cont = false;
                    bits += 8;
                }
            } else if idx < 7 {
                cont = b & 0x80 == 0x80;
                b &= 0x7F;
                bits += 7;
            } else {
                b &= 0x3F;
                cont = false;
                bits += 6;
            }
            ts |= (b as u64) << shift;
            idx += 1;
            shift += 7;
            if !cont {
                break;
            }
        }
        Ok((ts, bits, idx))
    }

    fn extract_address(&self, offset: usize) -> (u32, u32) {
        let mut addr = 0u32;
        let mut mask: u8 = 0x7E;
        let mut num_bits = 7u32;
        let mut next_shift = 0u32;
        let mut total = 0u32;
        for i in 0..self.num_addr_bytes {
            if i == 4 {
                mask = 0x0F;
                num_bits = 4;
                if self.addr_pkt_isa == ocsd_isa_jazelle {
                    mask = 0x1F;
                    num_bits = 5;
                } else if self.addr_pkt_isa == ocsd_isa_arm {
                    mask = 0x07;
                    num_bits = 3;
                }
            } else if i > 0 {
                mask = 0x7F;
                num_bits = 7;
                if i == self.num_addr_bytes - 1 {
                    mask = 0x3F;
                    num_bits = 6;
                }
            }
            let shift = next_shift;
            let b = self.pkt_data.get(i + offset).copied().unwrap_or(0);
            addr |= ((b & mask) as u32).wrapping_shl(shift);
            total += num_bits;
            if i == 0 {
                if self.addr_pkt_isa == ocsd_isa_jazelle {
                    addr >>= 1;
                    next_shift = 6;
                    total -= 1;
                } else {
                    next_shift = 7;
                }
            } else {
                next_shift += 7;
            }
        }
        if self.addr_pkt_isa == ocsd_isa_arm {
            addr <<= 1;
            total += 1;
        }
        (addr, total)
    }
}

impl PacketProcessor for PtmPktProc {
    type Packet = ocsd_ptm_pkt;

    fn name(&self) -> &str {
        PtmPktProc::name(self)
    }

    fn process_data(
        &mut self,
        index: ocsd_trc_index_t,
        data: &[u8],
        out: &mut dyn PacketOut<ocsd_ptm_pkt>,
    ) -> (ocsd_datapath_resp_t, usize) {
        self.process_data_with_tail(index, data, &[], out)
    }

    fn process_data_with_tail(
        &mut self,
        index: ocsd_trc_index_t,
        data: &[u8],
        tail: &[u8],
        out: &mut dyn PacketOut<ocsd_ptm_pkt>,
    ) -> (ocsd_datapath_resp_t, usize) {
        let mut resp = OCSD_RESP_CONT;
        self.data_processed = 0;
        self.block_idx = index;
        while (self.data_processed < data.len() || (self.data_processed == data.len() && self.state == State::SendPkt))
            && resp_is_cont(resp)
        {
            let r = match self.state {
                State::WaitSync => {
                    if !self.wait_async_so_pkt {
                        self.pkt_index = self.block_idx.wrapping_add(self.data_processed as u32);
                        self.pkt.type_ = PTM_PKT_NOTSYNC;
                        self.async_raw_op = out.has_raw_monitor();
                    }
                    resp = self.wait_async(data, tail, out);
                    Ok(())
                }
                State::ProcHdr => {
                    self.pkt_index = self.block_idx.wrapping_add(self.data_processed as u32);
                    // data_processed < len here
                    let b = self.read_byte(data).unwrap_or(0);
                    let (t, f) = header_kind(b);
                    self.pkt_fn = f;
                    self.pkt.type_ = t;
                    self.state = State::ProcData;
                    self.run_pkt_fn(data)
                }
                State::ProcData => self.run_pkt_fn(data),
                State::SendPkt => {
                    resp = self.output_packet(out);
                    self.pkt.clear();
                    self.state = State::ProcHdr;
                    Ok(())
                }
            };
            if let Err(err) = r {
                out.logger().log_error(&self.name, &err);
                if err.code == OCSD_ERR_BAD_PACKET_SEQ || err.code == OCSD_ERR_INVALID_PCKT_HDR {
                    self.state = State::SendPkt;
                } else {
                    resp = OCSD_RESP_FATAL_INVALID_DATA;
                }
            }
        }
        (resp, self.data_processed)
    }

    fn eot(&mut self, out: &mut dyn PacketOut<ocsd_ptm_pkt>) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        if !self.pkt_data.is_empty() {
            self.pkt.set_err_type(PTM_PKT_INCOMPLETE_EOT);
            resp = self.output_packet(out);
        }
        resp
    }

    fn reset(&mut self, _index: ocsd_trc_index_t) {
        self.init_processor_state();
    }

    fn is_synced(&self) -> bool {
        self.state != State::WaitSync
    }
}

