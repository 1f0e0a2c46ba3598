//! ITM packet decoder: ITM packets in, `OCSD_GEN_TRC_ELEM_ITMTRACE`
//! elements out (OpenCSD's `TrcPktDecodeItm`).

use super::config::ItmConfig;
use super::types::*;
use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::{DecodeCtx, PacketDecoder};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DecodeState {
    NoSync,
    WaitSync,
    DecodePkts,
}

/// Masks of the global timestamp bits a GTS1 packet of 1 to 4 bytes holds.
const GTS_LOW_MASK: [u64; 4] = [0x7F, 0x3FFF, 0x1F_FFFF, 0x3FF_FFFF];

/// ITM packet decoder.
pub struct ItmDecoder {
    cfg: ItmConfig,
    name: String,
    trace_id: u8,
    state: DecodeState,
    unsync_info: unsync_info_t,
    elem: ocsd_generic_trace_elem,
    itm_info: swt_itm_info,
    index_curr_pkt: ocsd_trc_index_t,

    local_ts: u64,
    global_ts: u64,
    stim_page: u8,
    need_gts2: bool,
    gts_freq_change: bool,
    prev_overflow: bool,
}

impl ItmDecoder {
    /// A decoder for the ITM described by `cfg`; elements carry its trace ID.
    pub fn new(cfg: &ocsd_itm_cfg) -> Self {
        Self::with_config(ItmConfig::new(cfg))
    }

    pub fn with_config(cfg: ItmConfig) -> Self {
        let trace_id = cfg.trace_id();
        let mut d = ItmDecoder {
            cfg,
            name: format!("DCD_ITM_{:04}", trace_id),
            trace_id,
            state: DecodeState::NoSync,
            unsync_info: UNSYNC_INIT_DECODER,
            elem: ocsd_generic_trace_elem::default(),
            itm_info: swt_itm_info::default(),
            index_curr_pkt: 0,
            local_ts: 0,
            global_ts: 0,
            stim_page: 0,
            need_gts2: true,
            gts_freq_change: false,
            prev_overflow: false,
        };
        d.reset_decoder();
        d
    }

    /// The component name used in error messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn config(&self) -> &ItmConfig {
        &self.cfg
    }

    fn reset_decoder(&mut self) {
        self.elem.init();
        self.state = DecodeState::NoSync;
        self.local_ts = 0;
        self.global_ts = 0;
        self.stim_page = 0;
        self.need_gts2 = true;
        self.prev_overflow = false;
        self.gts_freq_change = false;
    }

    fn set_ts(&mut self, ts: u64, freq_change: bool) {
        self.elem.timestamp = ts;
        self.elem.set_cpu_freq_change(u32::from(freq_change));
        self.elem.set_has_ts(1);
    }

    fn decode_packet(&mut self, pkt: &ocsd_itm_pkt, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        const LOCAL_TS_TYPES: [swt_itm_type; 4] = [TS_SYNC, TS_DELAY, TS_PKT_DELAY, TS_PKT_TS_DELAY];
        let mut resp = OCSD_RESP_CONT;
        let mut send = false;
        let src_id = pkt.src_id;

        self.itm_info.overflow = 0;
        self.itm_info.payload_size = 0;
        self.itm_info.payload_src_id = 0;
        self.itm_info.value = 0;

        match pkt.type_ {
            ITM_PKT_NOTSYNC => self.reset_decoder(),
            ITM_PKT_ASYNC | ITM_PKT_INCOMPLETE_EOT => {}
            ITM_PKT_DWT => {
                self.itm_info.pkt_type = DWT_PAYLOAD;
                self.itm_info.payload_size = pkt.val_sz;
                self.itm_info.value = pkt.value;
                self.itm_info.payload_src_id = src_id;
                send = true;
            }
            ITM_PKT_SWIT => {
                self.itm_info.pkt_type = SWIT_PAYLOAD;
                self.itm_info.payload_size = pkt.val_sz;
                self.itm_info.value = pkt.value;
                self.itm_info.payload_src_id = (src_id & 0x1F) | (self.stim_page << 5);
                send = true;
            }
            ITM_PKT_EXTENSION => {
                // only the stimulus port page extension (SW source, N = 2)
                if src_id & 0x80 == 0 && src_id & 0x1F == 2 {
                    self.stim_page = pkt.value as u8;
                }
            }
            ITM_PKT_OVERFLOW => {
                self.local_ts = 0;
                self.prev_overflow = true;
            }
            ITM_PKT_TS_GLOBAL_1 => {
                // a wrapped value waits for the next GTS2
                if !self.need_gts2 {
                    self.need_gts2 = src_id & 0x2 != 0;
                }
                if !self.gts_freq_change {
                    self.gts_freq_change = src_id & 0x1 != 0;
                }
                let size = usize::from(pkt.val_sz.clamp(1, 4));
                self.global_ts &= !GTS_LOW_MASK[size - 1];
                self.global_ts |= u64::from(pkt.value);
                if !self.need_gts2 {
                    self.itm_info.pkt_type = TS_GLOBAL;
                    self.set_ts(self.global_ts, self.gts_freq_change);
                    self.gts_freq_change = false;
                    send = true;
                }
            }
            ITM_PKT_TS_GLOBAL_2 => {
                self.itm_info.pkt_type = TS_GLOBAL;
                self.global_ts &= GTS_LOW_MASK[3];
                self.global_ts |= pkt.ext_value() << 26;
                self.set_ts(self.global_ts, self.gts_freq_change);
                self.gts_freq_change = false;
                self.need_gts2 = false;
                send = true;
            }
            ITM_PKT_TS_LOCAL => {
                self.itm_info.pkt_type = LOCAL_TS_TYPES[usize::from(src_id & 0x3)];
                self.itm_info.payload_size = pkt.val_sz;
                self.itm_info.value = pkt.value;
                self.local_ts =
                    self.local_ts.wrapping_add(u64::from(pkt.value).wrapping_mul(u64::from(self.cfg.ts_prescale())));
                self.set_ts(self.local_ts, false);
                send = true;
            }
            // bad sequence, reserved, unknown
            _ => {
                resp = OCSD_RESP_FATAL_INVALID_DATA;
                self.unsync_info = UNSYNC_BAD_PACKET;
                self.reset_decoder();
            }
        }

        if send {
            if self.prev_overflow {
                self.itm_info.overflow = 1;
                self.prev_overflow = false;
            }
            // setType clears the per-element flags set above (has_ts too),
            // as OpenCSD's does; the timestamp value stays.
            self.elem.set_type(OCSD_GEN_TRC_ELEM_ITMTRACE);
            self.elem.set_swt_itm(self.itm_info);
            ctx.out.push(self.index_curr_pkt, self.trace_id, &self.elem);
        }
        resp
    }
}

impl PacketDecoder for ItmDecoder {
    type Packet = ocsd_itm_pkt;

    fn name(&self) -> &str {
        ItmDecoder::name(self)
    }

    fn uses_memory(&self) -> bool {
        false
    }

    fn packet_in(&mut self, index_sop: ocsd_trc_index_t, pkt: &ocsd_itm_pkt, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        self.index_curr_pkt = index_sop;
        loop {
            match self.state {
                DecodeState::NoSync => {
                    self.elem.set_type(OCSD_GEN_TRC_ELEM_NO_SYNC);
                    self.elem.payload.unsync_eot_info = self.unsync_info;
                    ctx.out.push(self.index_curr_pkt, self.trace_id, &self.elem);
                    self.state = DecodeState::WaitSync;
                }
                DecodeState::WaitSync => {
                    if pkt.type_ == ITM_PKT_ASYNC {
                        self.state = DecodeState::DecodePkts;
                    }
                    return OCSD_RESP_CONT;
                }
                DecodeState::DecodePkts => return self.decode_packet(pkt, ctx),
            }
        }
    }

    fn eot(&mut self, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        self.elem.set_type(OCSD_GEN_TRC_ELEM_EO_TRACE);
        self.elem.payload.unsync_eot_info = UNSYNC_EOT;
        ctx.out.push(self.index_curr_pkt, self.trace_id, &self.elem);
        OCSD_RESP_CONT
    }

    fn reset(&mut self, _index: ocsd_trc_index_t) {
        // OpenCSD 1.8.0 only records the reason here; the decoder state is
        // kept until the next NOTSYNC.
        self.unsync_info = UNSYNC_RESET_DECODER;
    }

    fn trace_id(&self) -> u8 {
        self.trace_id
    }
}
