//! STM packet decoder: STM packets in, software trace elements out
//! (OpenCSD's `TrcPktDecodeStm`).
//!
//! Each data packet (and FREQ, TRIG, GERR, MERR, FLAG, timestamped NULL)
//! becomes an `OCSD_GEN_TRC_ELEM_SWTRACE` element whose `sw_trace_info`
//! carries the current master / channel and flags; the payload goes in the
//! element's extended data (8 bytes, little-endian, as OpenCSD's payload
//! buffer).

use super::config::StmConfig;
use super::types::*;
use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::{DecodeCtx, PacketDecoder};

/// `SWT_ID_VALID_MASK`: the one flag that survives between packets.
const SWT_ID_VALID_MASK: u32 = 1 << 23;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DecodeState {
    NoSync,
    WaitSync,
    DecodePkts,
}

/// STM packet decoder.
pub struct StmDecoder {
    cfg: StmConfig,
    name: String,
    trace_id: u8,
    state: DecodeState,
    unsync_info: unsync_info_t,
    /// The output element; persists between packets as OpenCSD's does.
    elem: ocsd_generic_trace_elem,
    swt_info: ocsd_swt_info_t,
    /// OpenCSD's payload buffer (one 64-bit packet).
    payload: [u8; 8],
    index_curr_pkt: ocsd_trc_index_t,
}



impl StmDecoder {
    /// A decoder for the STM described by `cfg`; elements carry its trace ID.
    pub fn new(cfg: &ocsd_stm_cfg) -> Self {
        Self::with_config(StmConfig::new(cfg))
    }

    pub fn with_config(cfg: StmConfig) -> Self {
        let trace_id = cfg.trace_id();
        let mut d = StmDecoder {
            cfg,
            name: format!("DCD_STM_{:04}", trace_id),
            trace_id,
            state: DecodeState::NoSync,
            unsync_info: UNSYNC_INIT_DECODER,
            elem: ocsd_generic_trace_elem::default(),
            swt_info: ocsd_swt_info_t::default(),
            payload: [0; 8],
            index_curr_pkt: 0,
        };
        d.reset_decoder();
        d
    }

    /// The component name used in error messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn config(&self) -> &StmConfig {
        &self.cfg
    }

    fn reset_decoder(&mut self) {
        self.state = DecodeState::NoSync;
        self.elem.init();
        self.swt_info = ocsd_swt_info_t::default();
    }

    fn output(&mut self, ctx: &mut DecodeCtx) {
        if self.elem.extended_data() != 0 {
            ctx.out.push_with_ext(self.index_curr_pkt, self.trace_id, &self.elem, &self.payload);
        } else {
            ctx.out.push(self.index_curr_pkt, self.trace_id, &self.elem);
        }
    }

    /// Put the packet payload in the payload buffer; the element is sent.
    fn update_payload(&mut self, pkt: &ocsd_stm_pkt) {
        self.swt_info.set_swt_payload_num_packets(1);
        let p = &pkt.payload;
        match pkt.type_ {
            STM_PKT_D4 => {
                self.swt_info.set_swt_payload_pkt_bitsize(4);
                self.payload[0] = p.d8();
            }
            STM_PKT_D8 | STM_PKT_TRIG | STM_PKT_GERR | STM_PKT_MERR => {
                self.swt_info.set_swt_payload_pkt_bitsize(8);
                self.payload[0] = p.d8();
            }
            STM_PKT_D16 => {
                self.swt_info.set_swt_payload_pkt_bitsize(16);
                self.payload[..2].copy_from_slice(&p.d16().to_le_bytes());
            }
            STM_PKT_D32 | STM_PKT_FREQ => {
                self.swt_info.set_swt_payload_pkt_bitsize(32);
                self.payload[..4].copy_from_slice(&p.d32().to_le_bytes());
            }
            STM_PKT_D64 => {
                self.swt_info.set_swt_payload_pkt_bitsize(64);
                self.payload = p.d64().to_le_bytes();
            }
            _ => {}
        }
        self.elem.set_extended_data(1);
        if pkt.is_marker_pkt() {
            self.swt_info.set_swt_marker_packet(1);
        }
    }

    fn decode_packet(&mut self, pkt: &ocsd_stm_pkt, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        let mut send = false;

        self.elem.set_type(OCSD_GEN_TRC_ELEM_SWTRACE);
        // clear the per-packet flags and payload size; keep "ID valid".
        self.swt_info.swt_flag_bits &= SWT_ID_VALID_MASK;

        match pkt.type_ {
            STM_PKT_BAD_SEQUENCE | STM_PKT_RESERVED => {
                resp = OCSD_RESP_FATAL_INVALID_DATA;
                self.unsync_info = UNSYNC_BAD_PACKET;
                self.reset_decoder();
            }
            STM_PKT_NOTSYNC => self.reset_decoder(),
            STM_PKT_VERSION => {
                self.swt_info.swt_master_id = u16::from(pkt.master);
                self.swt_info.swt_channel_id = pkt.channel;
            }
            STM_PKT_ASYNC | STM_PKT_INCOMPLETE_EOT => {}
            STM_PKT_NULL => send = pkt.is_ts_pkt(),
            STM_PKT_FREQ => {
                self.swt_info.set_swt_frequency(1);
                self.update_payload(pkt);
                send = true;
            }
            STM_PKT_TRIG => {
                self.swt_info.set_swt_trigger_event(1);
                self.update_payload(pkt);
                send = true;
            }
            STM_PKT_GERR => {
                self.swt_info.swt_master_id = u16::from(pkt.master);
                self.swt_info.swt_channel_id = pkt.channel;
                self.swt_info.set_swt_global_err(1);
                self.swt_info.set_swt_id_valid(0);
                self.update_payload(pkt);
                send = true;
            }
            STM_PKT_MERR => {
                self.swt_info.swt_channel_id = pkt.channel;
                self.swt_info.set_swt_master_err(1);
                self.update_payload(pkt);
                send = true;
            }
            STM_PKT_M8 => {
                self.swt_info.swt_master_id = u16::from(pkt.master);
                self.swt_info.swt_channel_id = pkt.channel;
                self.swt_info.set_swt_id_valid(1);
            }
            STM_PKT_C8 | STM_PKT_C16 => self.swt_info.swt_channel_id = pkt.channel,
            STM_PKT_FLAG => {
                self.swt_info.set_swt_marker_packet(1);
                send = true;
            }
            STM_PKT_D4 | STM_PKT_D8 | STM_PKT_D16 | STM_PKT_D32 | STM_PKT_D64 => {
                self.update_payload(pkt);
                send = true;
            }
            _ => {}
        }

        if send {
            if pkt.is_ts_pkt() {
                self.elem.timestamp = pkt.timestamp;
                self.elem.set_cpu_freq_change(0);
                self.elem.set_has_ts(1);
                self.swt_info.set_swt_has_timestamp(1);
            }
            self.elem.payload.sw_trace_info = self.swt_info;
            self.output(ctx);
        }
        resp
    }
}

impl PacketDecoder for StmDecoder {
    type Packet = ocsd_stm_pkt;

    fn name(&self) -> &str {
        StmDecoder::name(self)
    }

    fn uses_memory(&self) -> bool {
        false
    }

    fn packet_in(&mut self, index_sop: ocsd_trc_index_t, pkt: &ocsd_stm_pkt, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        self.index_curr_pkt = index_sop;
        let mut resp = OCSD_RESP_CONT;
        loop {
            match self.state {
                DecodeState::NoSync => {
                    self.elem.set_type(OCSD_GEN_TRC_ELEM_NO_SYNC);
                    self.elem.payload.unsync_eot_info = self.unsync_info;
                    self.output(ctx);
                    self.state = DecodeState::WaitSync;
                }
                DecodeState::WaitSync => {
                    if pkt.type_ == STM_PKT_ASYNC {
                        self.state = DecodeState::DecodePkts;
                    }
                    return resp;
                }
                DecodeState::DecodePkts => {
                    resp = self.decode_packet(pkt, ctx);
                    return resp;
                }
            }
        }
    }

    fn eot(&mut self, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        self.elem.set_type(OCSD_GEN_TRC_ELEM_EO_TRACE);
        self.elem.payload.unsync_eot_info = UNSYNC_EOT;
        self.output(ctx);
        OCSD_RESP_CONT
    }

    fn reset(&mut self, _index: ocsd_trc_index_t) {
        self.unsync_info = UNSYNC_RESET_DECODER;
        self.reset_decoder();
    }

    fn trace_id(&self) -> u8 {
        self.trace_id
    }
}
