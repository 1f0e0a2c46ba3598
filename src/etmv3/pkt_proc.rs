//! ETMv3 packet processor: trace bytes of one trace ID in, `ocsd_etmv3_pkt`
#![allow(non_upper_case_globals)]
//! packets out (OpenCSD's `TrcPktProcEtmV3` / `EtmV3PktProcImpl`).

use super::types::*;
use super::config::*;
use crate::abi::*;
use crate::common::{OcsdError, PacketOut, PacketProcessor};

/// Operation flag: the source is an unformatted (bypassed) ETM stream.
pub const ETMV3_OPFLG_UNFORMATTED_SOURCE: u32 = 0x0001_0000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    WaitSync,
    ProcHdr,
    ProcData,
    SendPkt,
}

/// The ETMv3 packet processor.
pub struct EtmV3PktProc {
    cfg: EtmV3Config,
    name: String,
    chan_id: u8,
    op_flags: u32,

    state: State,
    bytes_processed: usize,
    pkt_data: Vec<u8>,
    pkt_idx: usize,
    pkt: ocsd_etmv3_pkt,

    part_pkt_data: Vec<u8>,
    send_part_pkt: bool,
    post_part_state: State,
    post_part_type: ocsd_etmv3_pkt_type,

    stream_sync: bool,
    start_of_sync: bool,

    bytes_expected: usize,
    branch_needs_exception: bool,
    isync_got_cc: bool,
    isync_get_lsip_addr: bool,
    isync_info_idx: usize,
    expecting_data_addr: bool,
    found_data_addr: bool,

    packet_index: ocsd_trc_index_t,
}

type PResult = Result<(), OcsdError>;

impl EtmV3PktProc {
    /// A packet processor for the ETMv3 source configured by `cfg`; the
    /// component is named `PKTP_ETMV3_<trace ID, 4 decimal digits>`.
    pub fn new(cfg: &ocsd_etmv3_cfg) -> Self {
        let cfg = EtmV3Config::new(cfg);
        let mut p = EtmV3PktProc {
            cfg,
            name: format!("PKTP_ETMV3_{:04}", cfg.trace_id()),
            chan_id: cfg.trace_id(),
            op_flags: 0,
            state: State::WaitSync,
            bytes_processed: 0,
            pkt_data: Vec::with_capacity(32),
            pkt_idx: 0,
            pkt: ocsd_etmv3_pkt::new(),
            part_pkt_data: Vec::with_capacity(16),
            send_part_pkt: false,
            post_part_state: State::WaitSync,
            post_part_type: ETM3_PKT_NOTSYNC,
            stream_sync: false,
            start_of_sync: false,
            bytes_expected: 0,
            branch_needs_exception: false,
            isync_got_cc: false,
            isync_get_lsip_addr: false,
            isync_info_idx: 0,
            expecting_data_addr: false,
            found_data_addr: false,
            packet_index: 0,
        };
        p.init_processor_state();
        p
    }

    /// The component name used in error messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn config(&self) -> &EtmV3Config {
        &self.cfg
    }

    fn init_processor_state(&mut self) {
        self.stream_sync = false;
        self.state = State::WaitSync;
        self.start_of_sync = false;
        self.pkt.reset_state();
        self.init_packet_state();
        self.send_part_pkt = false;
    }

    fn init_packet_state(&mut self) {
        self.bytes_expected = 0;
        self.branch_needs_exception = false;
        self.isync_got_cc = false;
        self.isync_get_lsip_addr = false;
        self.isync_info_idx = 0;
        self.expecting_data_addr = false;
        self.found_data_addr = false;
        self.pkt_data.clear();
        self.pkt_idx = 0;
        self.pkt.clear();
    }

    fn malformed(&self, msg: &str) -> OcsdError {
        OcsdError::at(OCSD_ERR_SEV_ERROR, OCSD_ERR_BAD_PACKET_SEQ, self.packet_index, self.chan_id, msg)
    }
    fn bad_header(&self, msg: &str) -> OcsdError {
        OcsdError::at(OCSD_ERR_SEV_ERROR, OCSD_ERR_INVALID_PCKT_HDR, self.packet_index, self.chan_id, msg)
    }

    fn output_packet(&mut self, out: &mut dyn PacketOut<ocsd_etmv3_pkt>) -> ocsd_datapath_resp_t {
        if !self.send_part_pkt {
            let resp = out.packet(self.packet_index, &self.pkt, &self.pkt_data);
            self.state = if self.stream_sync { State::ProcHdr } else { State::WaitSync };
            self.pkt_data.clear();
            resp
        } else {
            let resp = out.packet(self.packet_index, &self.pkt, &self.part_pkt_data);
            self.state = self.post_part_state;
            self.packet_index = self.packet_index.wrapping_add(self.part_pkt_data.len() as u32);
            self.send_part_pkt = false;
            self.pkt.type_ = self.post_part_type;
            resp
        }
    }

    /// Send the first `n` bytes of the current packet data as a packet of
    /// their own; the rest stays as the current packet.
    fn set_bytes_part_pkt(&mut self, n: usize, next_state: State, next_type: ocsd_etmv3_pkt_type) {
        let n = n.min(self.pkt_data.len());
        self.part_pkt_data.clear();
        self.part_pkt_data.extend_from_slice(&self.pkt_data[..n]);
        self.pkt_data.drain(..n);
        self.send_part_pkt = true;
        self.post_part_state = next_state;
        self.post_part_type = next_type;
    }

    fn wait_for_sync(&mut self, data: &[u8]) -> usize {
        let mut processed = 0usize;
        let mut send = false;
        while !send && processed < data.len() {
            let b = data[processed];
            processed += 1;
            if self.start_of_sync {
                self.pkt_data.push(b);
                if b == 0x80 && self.pkt_data.len() >= 6 {
                    send = true;
                    if self.pkt_data.len() > 6 {
                        // leading zeros before a real A-Sync: strip them,
                        // re-process the 0x80.
                        self.pkt_data.pop();
                        processed -= 1;
                        let n = self.pkt_data.len() - 5;
                        self.set_bytes_part_pkt(n, State::WaitSync, ETM3_PKT_NOTSYNC);
                    } else {
                        self.stream_sync = true;
                        self.pkt.type_ = ETM3_PKT_A_SYNC;
                    }
                } else if b != 0x00 {
                    self.start_of_sync = false;
                } else if self.pkt_data.len() >= 13 {
                    self.set_bytes_part_pkt(8, State::WaitSync, ETM3_PKT_NOTSYNC);
                    send = true;
                }
            } else if b == 0x00 {
                if self.pkt_data.is_empty() {
                    self.pkt_data.push(b);
                    self.start_of_sync = true;
                } else {
                    processed -= 1;
                    send = true;
                    self.pkt.type_ = ETM3_PKT_NOTSYNC;
                }
            } else {
                self.pkt_data.push(b);
                if processed == data.len() || self.pkt_data.len() == 16 {
                    send = true;
                    self.pkt.type_ = ETM3_PKT_NOTSYNC;
                }
            }
        }
        if send {
            self.state = State::SendPkt;
        }
        processed
    }

    fn process_header_byte(&mut self, by: u8, op_flags: u32) -> PResult {
        self.init_packet_state();
        self.pkt_data.push(by);
        self.state = State::ProcData;

        if by & 0x01 == 0x01 {
            // branch address
            self.pkt.type_ = ETM3_PKT_BRANCH_ADDRESS;
            self.branch_needs_exception = false;
            if by & 0x80 != 0x80 {
                if by == 0x01 && (op_flags & ETMV3_OPFLG_UNFORMATTED_SOURCE) != 0 {
                    return Err(OcsdError::at(
                        OCSD_ERR_SEV_ERROR,
                        OCSD_ERR_HW_CFG_UNSUPP,
                        self.packet_index,
                        self.chan_id,
                        "Bypassed ETM stream not supported in this version of the decoder.",
                    ));
                }
                self.on_branch_address()?;
                self.state = State::SendPkt;
            }
        } else if by & 0x81 == 0x80 {
            self.pkt.type_ = ETM3_PKT_P_HDR;
            if self.pkt.update_atom_from_phdr(by, self.cfg.is_cycle_acc()) {
                self.state = State::SendPkt;
            } else {
                return Err(self.bad_header("Invalid P-Header."));
            }
        } else if by & 0xF3 == 0x00 {
            match by {
                0x00 => self.pkt.type_ = ETM3_PKT_A_SYNC,
                0x04 => self.pkt.type_ = ETM3_PKT_CYCLE_COUNT,
                0x08 => {
                    self.pkt.type_ = ETM3_PKT_I_SYNC;
                    self.isync_got_cc = false;
                    self.isync_get_lsip_addr = false;
                }
                _ => {
                    // 0x0C
                    self.pkt.type_ = ETM3_PKT_TRIGGER;
                    self.state = State::SendPkt;
                }
            }
        } else if by & 0x03 == 0x00 {
            if by & 0x93 == 0x00 {
                // out of order data
                if !self.cfg.is_data_val_trace() {
                    self.pkt.set_err_type(ETM3_PKT_BAD_TRACEMODE);
                    return Err(self.bad_header("Invalid data trace header (out of order data) - not tracing data values."));
                }
                self.pkt.type_ = ETM3_PKT_OOO_DATA;
                let size = (by & 0x0C) >> 2;
                if size == 0 {
                    self.pkt.data.set_ooo_tag(((by >> 5) & 0x3) as u32);
                    self.pkt.set_data_value(0);
                    self.state = State::SendPkt;
                } else {
                    self.bytes_expected = 1 + if size == 3 { 4 } else { size as usize };
                }
            } else if by == 0x70 {
                self.pkt.type_ = ETM3_PKT_I_SYNC_CYCLE;
                self.isync_got_cc = false;
                self.isync_get_lsip_addr = false;
            } else if by == 0x50 {
                if !self.cfg.is_data_val_trace() {
                    self.pkt.set_err_type(ETM3_PKT_BAD_TRACEMODE);
                    return Err(self.bad_header("Invalid data trace header (store failed) - not tracing data values."));
                }
                self.pkt.type_ = ETM3_PKT_STORE_FAIL;
                self.state = State::SendPkt;
            } else if by & 0xD3 == 0x50 {
                self.pkt.type_ = ETM3_PKT_OOO_ADDR_PLC;
                if !self.cfg.is_data_trace() {
                    self.pkt.set_err_type(ETM3_PKT_BAD_TRACEMODE);
                    return Err(self.bad_header("Invalid data trace header (out of order placeholder) - not tracing data."));
                }
                self.expecting_data_addr = (by & DATA_ADDR_EXPECTED_FLAG) == DATA_ADDR_EXPECTED_FLAG && self.cfg.is_data_addr_trace();
                self.found_data_addr = false;
                self.pkt.data.set_ooo_tag(((by >> 2) & 0x3) as u32);
                if !self.expecting_data_addr {
                    self.state = State::SendPkt;
                }
            } else if by == 0x3C {
                self.pkt.type_ = ETM3_PKT_VMID;
            } else {
                self.pkt.set_err_type(ETM3_PKT_RESERVED);
                return Err(self.bad_header("Packet header reserved encoding"));
            }
        } else if by & 0xD3 == 0x02 {
            // normal data
            let size = (by & 0x0C) >> 2;
            if !self.cfg.is_data_trace() {
                self.pkt.set_err_type(ETM3_PKT_BAD_TRACEMODE);
                return Err(self.bad_header("Invalid data trace header (normal data) - not tracing data."));
            }
            self.pkt.type_ = ETM3_PKT_NORM_DATA;
            self.expecting_data_addr = (by & DATA_ADDR_EXPECTED_FLAG) == DATA_ADDR_EXPECTED_FLAG && self.cfg.is_data_addr_trace();
            self.found_data_addr = false;
            self.bytes_expected = 1 + if size == 3 { 4 } else { size as usize };
            if !self.expecting_data_addr && self.bytes_expected == 1 {
                self.pkt.set_data_value(0);
                self.state = State::SendPkt;
            }
        } else if by == 0x62 {
            if !self.cfg.is_data_trace() {
                self.pkt.set_err_type(ETM3_PKT_BAD_TRACEMODE);
                return Err(self.bad_header("Invalid data trace header (data suppressed) - not tracing data."));
            }
            self.pkt.type_ = ETM3_PKT_DATA_SUPPRESSED;
            self.state = State::SendPkt;
        } else if by & 0xEF == 0x6A {
            if !self.cfg.is_data_trace() {
                self.pkt.set_err_type(ETM3_PKT_BAD_TRACEMODE);
                return Err(self.bad_header("Invalid data trace header (value not traced) - not tracing data."));
            }
            self.pkt.type_ = ETM3_PKT_VAL_NOT_TRACED;
            self.expecting_data_addr = (by & DATA_ADDR_EXPECTED_FLAG) == DATA_ADDR_EXPECTED_FLAG && self.cfg.is_data_addr_trace();
            self.found_data_addr = false;
            if !self.expecting_data_addr {
                self.state = State::SendPkt;
            }
        } else if by == 0x66 {
            self.pkt.type_ = ETM3_PKT_IGNORE;
            self.state = State::SendPkt;
        } else if by == 0x6E {
            self.pkt.type_ = ETM3_PKT_CONTEXT_ID;
            self.bytes_expected = 1 + self.cfg.ctxt_id_bytes();
        } else if by == 0x76 {
            self.pkt.type_ = ETM3_PKT_EXCEPTION_EXIT;
            self.state = State::SendPkt;
        } else if by == 0x7E {
            self.pkt.type_ = ETM3_PKT_EXCEPTION_ENTRY;
            self.state = State::SendPkt;
        } else if by & 0xFB == 0x42 {
            self.pkt.type_ = ETM3_PKT_TIMESTAMP;
        } else {
            self.pkt.set_err_type(ETM3_PKT_RESERVED);
            return Err(self.bad_header("Packet header reserved encoding."));
        }
        Ok(())
    }

    fn process_payload_byte(&mut self, by: u8) -> PResult {
        self.pkt_data.push(by);
        let len = self.pkt_data.len();
        match self.pkt.type_ {
            ETM3_PKT_BRANCH_ADDRESS => {
                let top = by & 0x80 == 0x80;
                let mut done = false;
                if self.cfg.is_alt_branch() {
                    if !top {
                        if !self.branch_needs_exception {
                            if by & 0xC0 == 0x40 {
                                self.branch_needs_exception = true;
                            } else {
                                done = true;
                            }
                        } else {
                            done = true;
                        }
                    }
                } else if len == 5 {
                    if by & 0xC0 == 0x40 {
                        self.branch_needs_exception = true;
                    } else {
                        done = true;
                    }
                } else if !top {
                    done = true;
                }
                if done {
                    self.on_branch_address()?;
                    self.state = State::SendPkt;
                }
            }
            ETM3_PKT_BRANCH_OR_BYPASS_EOT => {}
            ETM3_PKT_A_SYNC => {
                if by == 0x00 {
                    if len > 5 {
                        self.pkt.set_err_type(ETM3_PKT_BAD_SEQUENCE);
                        self.set_bytes_part_pkt(1, State::ProcData, ETM3_PKT_A_SYNC);
                        return Err(self.malformed("A-Sync ?: Extra 0x00 in sequence"));
                    }
                } else if by == 0x80 && len == 6 {
                    self.state = State::SendPkt;
                    self.stream_sync = true;
                } else {
                    self.pkt.set_err_type(ETM3_PKT_BAD_SEQUENCE);
                    self.bytes_processed -= 1;
                    self.pkt_data.pop();
                    return Err(self.malformed("A-Sync ? : Unexpected byte in sequence"));
                }
            }
            ETM3_PKT_CYCLE_COUNT => {
                // the count goes on while its bytes have the top bit set,
                // 5 bytes at most
                if by & 0x80 == 0 || len >= 6 {
                    self.pkt_idx = 1;
                    let cc = self.extract_cycle_count()?;
                    self.pkt.cycle_count = cc;
                    self.state = State::SendPkt;
                }
            }
            ETM3_PKT_I_SYNC_CYCLE | ETM3_PKT_I_SYNC => {
                if self.pkt.type_ == ETM3_PKT_I_SYNC_CYCLE && !self.isync_got_cc {
                    if by & 0x80 != 0x80 || len >= 6 {
                        self.isync_got_cc = true;
                    }
                    return Ok(());
                }
                if self.bytes_expected == 0 {
                    let cc_bytes = len - 2;
                    let ctxt_bytes = self.cfg.ctxt_id_bytes();
                    self.bytes_expected = if self.cfg.is_instr_trace() { cc_bytes + 6 + ctxt_bytes } else { 2 + ctxt_bytes };
                    self.isync_info_idx = 1 + cc_bytes + ctxt_bytes;
                }
                if len - 1 == self.isync_info_idx {
                    self.isync_get_lsip_addr = self.pkt_data[self.isync_info_idx] & 0x80 == 0x80;
                }
                if len >= self.bytes_expected {
                    if self.isync_get_lsip_addr {
                        if by & 0x80 != 0x80 {
                            self.on_isync_packet()?;
                        }
                    } else {
                        self.on_isync_packet()?;
                    }
                }
            }
            ETM3_PKT_NORM_DATA => {
                if self.expecting_data_addr && !self.found_data_addr {
                    if by & 0x80 != 0x80 {
                        self.found_data_addr = true;
                        self.bytes_expected += len - 1;
                    }
                } else if self.bytes_expected == len {
                    self.pkt_idx = 1;
                    if self.expecting_data_addr {
                        let (addr, bits, be) = self.extract_data_address()?;
                        self.pkt.update_data_address(addr, bits);
                        if let Some(be) = be {
                            self.pkt.update_data_endian(be);
                        }
                    }
                    let v = self.extract_data_value(((self.pkt_data[0] >> 2) & 0x3) as usize)?;
                    self.pkt.set_data_value(v);
                    self.state = State::SendPkt;
                }
            }
            ETM3_PKT_OOO_DATA => {
                if self.bytes_expected == len {
                    self.pkt_idx = 1;
                    let v = self.extract_data_value(((self.pkt_data[0] >> 2) & 0x3) as usize)?;
                    self.pkt.set_data_value(v);
                    self.pkt.data.set_ooo_tag(((self.pkt_data[0] >> 5) & 0x3) as u32);
                    self.state = State::SendPkt;
                }
                if self.bytes_expected < len {
                    return Err(self.malformed("Malformed out of order data packet."));
                }
            }
            ETM3_PKT_VAL_NOT_TRACED | ETM3_PKT_OOO_ADDR_PLC => {
                if self.expecting_data_addr && by & 0x80 != 0x80 {
                    self.pkt_idx = 1;
                    let (addr, bits, be) = self.extract_data_address()?;
                    self.pkt.update_data_address(addr, bits);
                    if let Some(be) = be {
                        self.pkt.update_data_endian(be);
                    }
                    self.state = State::SendPkt;
                }
            }
            ETM3_PKT_CONTEXT_ID => {
                if self.bytes_expected == len {
                    self.pkt_idx = 1;
                    let id = self.extract_ctxt_id()?;
                    self.pkt.update_context_id(id);
                    self.state = State::SendPkt;
                }
                if self.bytes_expected < len {
                    return Err(self.malformed("Malformed context id packet."));
                }
            }
            ETM3_PKT_TIMESTAMP => {
                if by & 0x80 != 0x80 {
                    self.pkt_idx = 1;
                    let (ts, bits) = self.extract_timestamp()?;
                    self.pkt.update_timestamp(ts, bits);
                    self.state = State::SendPkt;
                }
            }
            ETM3_PKT_VMID => {
                self.pkt.update_vmid(by);
                self.state = State::SendPkt;
            }
            _ => {
                return Err(OcsdError::at(
                    OCSD_ERR_SEV_ERROR,
                    OCSD_ERR_PKT_INTERP_FAIL,
                    self.packet_index,
                    self.chan_id,
                    "Interpreter failed - cannot process payload for unexpected or unsupported packet.",
                ))
            }
        }
        Ok(())
    }

    fn check_pkt_limits(&self) -> PResult {
        if self.pkt_idx >= self.pkt_data.len() {
            return Err(self.malformed("Malformed Packet - oversized packet."));
        }
        Ok(())
    }

    fn next_byte(&mut self) -> Result<u8, OcsdError> {
        self.check_pkt_limits()?;
        let b = self.pkt_data[self.pkt_idx];
        self.pkt_idx += 1;
        Ok(b)
    }

    fn on_branch_address(&mut self) -> PResult {
        let (addr, bits) = self.extract_br_addr_pkt()?;
        self.pkt.update_address(addr as u64, bits);
        Ok(())
    }

    fn extract_br_addr_pkt(&mut self) -> Result<(u32, u32), OcsdError> {
        const ADDR_SHIFT: [u32; 4] = [2, 1, 1, 0];
        const ADDR_MASK: [u8; 4] = [0x7, 0xF, 0xF, 0x1F];
        const ADDR_BITS: [u32; 4] = [3, 4, 4, 5];
        const EXCEP_DEPRECATED: [ocsd_armv7_exception; 8] = [
            Excp_Reset, Excp_IRQ, Excp_Reserved, Excp_Reserved, Excp_Jazelle, Excp_FIQ, Excp_AsyncDAbort, Excp_DebugHalt,
        ];

        let mut cbit = true;
        let mut bytecount = 0;
        let mut bitcount: u32 = 0;
        let mut value: u32 = 0;
        let mut addrbyte: u8 = 0;
        let mut byte5_update = false;

        while cbit && bytecount < 4 {
            addrbyte = self.next_byte()?;
            cbit = addrbyte & 0x80 != 0;
            let shift = bitcount;
            if bytecount == 0 {
                addrbyte &= !0x81;
                bitcount += 6;
                addrbyte >>= 1;
            } else if self.cfg.is_alt_branch() && !cbit {
                if addrbyte & 0x40 == 0x40 {
                    self.extract_exception_data()?;
                }
                addrbyte &= 0x3F;
                bitcount += 6;
            } else {
                addrbyte &= 0x7F;
                bitcount += 7;
            }
            value |= (addrbyte as u32) << shift;
            bytecount += 1;
        }

        if cbit {
            addrbyte = self.next_byte()?;
            if addrbyte & 0x80 != 0 {
                // deprecated byte 5 encoding: ARM state exception only
                let num = (addrbyte >> 3) & 0x7;
                self.pkt.update_isa(ocsd_isa_arm);
                self.pkt.set_exception(
                    EXCEP_DEPRECATED[num as usize],
                    num as u16,
                    addrbyte & 0x40 != 0,
                    self.cfg.is_v7m_arch(),
                    0,
                    0,
                );
            } else {
                if addrbyte & 0x40 == 0x40 {
                    self.extract_exception_data()?;
                }
                if addrbyte & 0xB8 == 0x08 {
                    self.pkt.update_isa(ocsd_isa_arm);
                } else if addrbyte & 0xB0 == 0x10 {
                    let isa = if self.pkt.context.curr_alt_isa() != 0 { ocsd_isa_tee } else { ocsd_isa_thumb2 };
                    self.pkt.update_isa(isa);
                } else if addrbyte & 0xA0 == 0x20 {
                    self.pkt.update_isa(ocsd_isa_jazelle);
                } else {
                    return Err(self.malformed("Malformed Packet - Unknown ISA."));
                }
            }
            byte5_update = true;
        }

        let isa_idx = match self.pkt.curr_isa {
            ocsd_isa_thumb2 => 1,
            ocsd_isa_tee => 2,
            ocsd_isa_jazelle => 3,
            _ => 0,
        };
        if byte5_update {
            value |= ((addrbyte & ADDR_MASK[isa_idx]) as u32) << bitcount;
            bitcount += ADDR_BITS[isa_idx];
        }
        let shift = ADDR_SHIFT[isa_idx];
        value <<= shift;
        bitcount += shift;
        Ok((value, bitcount))
    }

    fn extract_exception_data(&mut self) -> PResult {
        const TYPES_STD: [ocsd_armv7_exception; 16] = [
            Excp_NoException, Excp_DebugHalt, Excp_SMC, Excp_Hyp, Excp_AsyncDAbort, Excp_Jazelle, Excp_Reserved,
            Excp_Reserved, Excp_Reset, Excp_Undef, Excp_SVC, Excp_PrefAbort, Excp_SyncDataAbort, Excp_Generic,
            Excp_IRQ, Excp_FIQ,
        ];
        const TYPES_CM: [ocsd_armv7_exception; 24] = [
            Excp_NoException, Excp_CMIRQn, Excp_CMIRQn, Excp_CMIRQn, Excp_CMIRQn, Excp_CMIRQn, Excp_CMIRQn,
            Excp_CMIRQn, Excp_CMIRQn, Excp_CMUsageFault, Excp_CMNMI, Excp_SVC, Excp_CMDebugMonitor,
            Excp_CMMemManage, Excp_CMPendSV, Excp_CMSysTick, Excp_Reserved, Excp_Reset, Excp_Reserved,
            Excp_CMHardFault, Excp_Reserved, Excp_CMBusFault, Excp_Reserved, Excp_Reserved,
        ];

        let mut num: u16 = 0;
        let mut resume = 0u32;
        let mut irq_n = 0u32;
        let mut byte2 = false;

        let mut b = self.next_byte()?;
        self.pkt.update_ns((b & 0x1) as u32);
        num |= ((b >> 1) & 0xF) as u16;
        let cancel = b & 0x20 != 0;
        self.pkt.update_alt_isa((b & 0x40 != 0) as u32);

        if b & 0x80 != 0 {
            b = self.next_byte()?;
            if b & 0x40 != 0 {
                byte2 = true;
            } else {
                if self.cfg.is_v7m_arch() {
                    num |= ((b & 0x1F) as u16) << 4;
                }
                self.pkt.update_hyp((b & 0x20 != 0) as u32);
                if b & 0x80 != 0 {
                    b = self.next_byte()?;
                    byte2 = true;
                }
            }
            if byte2 {
                resume = (b & 0xF) as u32;
            }
        }

        let excep_type;
        if self.cfg.is_v7m_arch() {
            num &= 0x1FF;
            excep_type = if (num as usize) < 0x18 { TYPES_CM[num as usize] } else { Excp_CMIRQn };
            if excep_type == Excp_CMIRQn {
                irq_n = if num > 0x18 {
                    (num - 0x10) as u32
                } else if num == 0x008 {
                    0
                } else {
                    num as u32
                };
            }
        } else {
            num &= 0xF;
            excep_type = TYPES_STD[num as usize];
        }
        self.pkt.set_exception(excep_type, num, cancel, self.cfg.is_v7m_arch(), irq_n, resume);
        Ok(())
    }

    fn extract_ctxt_id(&mut self) -> Result<u32, OcsdError> {
        let size = self.cfg.ctxt_id_bytes();
        if self.pkt_idx + size > self.pkt_data.len() {
            return Err(self.malformed("Too few bytes to extract context ID."));
        }
        let mut id = 0u32;
        for i in 0..size {
            id |= (self.pkt_data[self.pkt_idx + i] as u32) << (8 * i);
        }
        self.pkt_idx += size;
        Ok(id)
    }

    fn extract_timestamp(&mut self) -> Result<(u64, u8), OcsdError> {
        let ts64 = self.cfg.ts_pkt_64();
        let max_bytes = if ts64 { 9 } else { 7 };
        let mut cur = 0usize;
        let mut cont = true;
        let mut mask: u8 = 0x7F;
        let last_mask: u8 = if ts64 { 0xFF } else { 0x3F };
        let mut iter_bits: u8 = 7;
        let last_iter_bits: u8 = if ts64 { 8 } else { 6 };
        let mut ts = 0u64;
        let mut bits = 0u8;
        while cur < max_bytes && cont {
            if self.pkt_data.len() < self.pkt_idx + cur + 1 {
                return Err(self.malformed("Insufficient bytes to extract timestamp."));
            }
            let b = self.pkt_data[self.pkt_idx + cur];
            ts |= ((b & mask) as u64) << (7 * cur);
            cur += 1;
            bits += iter_bits;
            cont = b & 0x80 == 0x80;
            if cur == max_bytes - 1 {
                mask = last_mask;
                iter_bits = last_iter_bits;
            }
        }
        self.pkt_idx += cur;
        Ok((ts, bits))
    }

    fn extract_data_address(&mut self) -> Result<(u32, u8, Option<u8>), OcsdError> {
        let mut addr = 0u32;
        let mut idx = 0u32;
        let mut bits = 0u8;
        let mut be = None;
        loop {
            let raw = self.next_byte()?;
            let b = raw & if idx == 4 { 0x0F } else { 0x7F };
            addr |= (b as u32) << (idx * 7);
            // OpenCSD tests the continuation bit on the masked byte, so a
            // data address is never longer than one byte.
            let mut cont = b & 0x80 == 0x80;
            if idx == 4 {
                bits += 4;
                be = Some((b >> 4) & 0x1);
                cont = false;
            } else {
                bits += 7;
            }
            idx += 1;
            if !cont {
                break;
            }
        }
        Ok((addr, bits, be))
    }

    fn extract_data_value(&mut self, size_code: usize) -> Result<u32, OcsdError> {
        const BYTES: [usize; 4] = [0, 1, 2, 4];
        let mut v = 0u32;
        for i in 0..BYTES[size_code & 3] {
            let b = self.next_byte()?;
            v |= (b as u32) << (i * 8);
        }
        Ok(v)
    }

    fn extract_cycle_count(&mut self) -> Result<u32, OcsdError> {
        let mut cc = 0u32;
        let mut idx = 0;
        let mut mask: u8 = 0x7F;
        loop {
            let b = self.next_byte()?;
            cc |= ((b & mask) as u32) << (7 * idx);
            let mut cont = b & 0x80 == 0x80;
            idx += 1;
            if idx == 4 {
                mask = 0x0F;
            }
            if idx == 5 {
                cont = false;
            }
            if !cont {
                break;
            }
        }
        Ok(cc)
    }

    fn on_isync_packet(&mut self) -> PResult {
        self.pkt_idx = 1;
        if self.isync_got_cc {
            let cc = self.extract_cycle_count()?;
            self.pkt.cycle_count = cc;
            self.pkt.isync_info.set_has_cycle_count(1);
        }
        if self.cfg.ctxt_id_bytes() != 0 {
            let id = self.extract_ctxt_id()?;
            self.pkt.update_context_id(id);
        }
        let info = self.next_byte()?;
        self.pkt.isync_info.reason = ((info >> 5) & 0x3) as ocsd_iSync_reason;
        let j = (info >> 4) & 0x1;
        let alt_isa = if self.cfg.minor_rev() >= 3 { (info >> 2) & 0x1 } else { 0 };
        self.pkt.update_ns(((info >> 3) & 0x1) as u32);
        if self.cfg.has_virt_ext() {
            self.pkt.update_hyp(((info >> 1) & 0x1) as u32);
        }

        if self.cfg.is_instr_trace() {
            let mut addr = 0u32;
            for i in 0..4 {
                let b = self.next_byte()?;
                addr |= (b as u32) << (8 * i);
            }
            let t = addr & 0x1;
            addr &= !0x1;
            self.pkt.update_address(addr as u64, 32);
            let isa = if j != 0 {
                ocsd_isa_jazelle
            } else if t != 0 {
                if alt_isa != 0 {
                    ocsd_isa_tee
                } else {
                    ocsd_isa_thumb2
                }
            } else {
                ocsd_isa_arm
            };
            self.pkt.update_isa(isa);
            if self.isync_get_lsip_addr {
                let (lsip, bits) = self.extract_br_addr_pkt()?;
                self.pkt.update_data_address(addr, 32);
                self.pkt.update_data_address(lsip, bits as u8);
            }
        } else {
            self.pkt.isync_info.set_no_address(1);
        }
        self.state = State::SendPkt;
        Ok(())
    }
}

impl PacketProcessor for EtmV3PktProc {
    type Packet = ocsd_etmv3_pkt;

    fn name(&self) -> &str {
        EtmV3PktProc::name(self)
    }

    fn process_data(
        &mut self,
        index: ocsd_trc_index_t,
        data: &[u8],
        out: &mut dyn PacketOut<ocsd_etmv3_pkt>,
    ) -> (ocsd_datapath_resp_t, usize) {
        let mut resp = OCSD_RESP_CONT;
        self.bytes_processed = 0;
        let op_flags = self.op_flags;
        while (self.bytes_processed < data.len() || (self.bytes_processed == data.len() && self.state == State::SendPkt))
            && resp_is_cont(resp)
        {
            let r = match self.state {
                State::WaitSync => {
                    if !self.start_of_sync {
                        self.packet_index = index.wrapping_add(self.bytes_processed as u32);
                    }
                    let n = self.wait_for_sync(&data[self.bytes_processed..]);
                    self.bytes_processed += n;
                    Ok(())
                }
                State::ProcHdr => {
                    self.packet_index = index.wrapping_add(self.bytes_processed as u32);
                    let b = data[self.bytes_processed];
                    self.bytes_processed += 1;
                    self.process_header_byte(b, op_flags)
                }
                State::ProcData => {
                    let b = data[self.bytes_processed];
                    self.bytes_processed += 1;
                    self.process_payload_byte(b)
                }
                State::SendPkt => {
                    resp = self.output_packet(out);
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
        (resp, self.bytes_processed)
    }

    fn eot(&mut self, out: &mut dyn PacketOut<ocsd_etmv3_pkt>) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        if !self.pkt_data.is_empty() {
            resp = self.output_packet(out);
            self.init_packet_state();
        }
        resp
    }

    fn reset(&mut self, _index: ocsd_trc_index_t) {
        self.init_processor_state();
    }

    fn is_synced(&self) -> bool {
        self.stream_sync
    }

    fn set_op_flags(&mut self, flags: u32) {
        self.op_flags = flags;
    }
}
