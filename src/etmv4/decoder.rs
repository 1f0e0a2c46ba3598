//! ETMv4 / ETE packet decoder: packets in, generic trace elements out
//! (OpenCSD's `TrcPktDecodeEtmV4I`).

use super::config::EtmV4Config;
use super::types::*;
use crate::abi::*;
use crate::common::{DecodeCtx, PacketDecoder};

/// ETMv4 / ETE instruction trace decoder.
pub struct EtmV4IPktDecoder {
    cfg: EtmV4Config,
    name: String,
    op_flags: u32,
}

impl EtmV4IPktDecoder {
    /// A decoder for `cfg`; `inst_id` numbers it in logs (`DCD_ETMV4_0016`).
    pub fn new(inst_id: i32, cfg: EtmV4Config) -> Self {
        EtmV4IPktDecoder { cfg, name: format!("DCD_ETMV4_{:04}", inst_id), op_flags: 0 }
    }
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl PacketDecoder for EtmV4IPktDecoder {
    type Packet = ocsd_etmv4_i_pkt;

    fn packet_in(&mut self, _index_sop: ocsd_trc_index_t, _pkt: &ocsd_etmv4_i_pkt, _ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        OCSD_RESP_CONT
    }

    fn eot(&mut self, _ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        OCSD_RESP_CONT
    }

    fn reset(&mut self, _index: ocsd_trc_index_t) {}

    fn trace_id(&self) -> u8 {
        self.cfg.trace_id()
    }

    fn set_op_flags(&mut self, flags: u32) {
        self.op_flags = flags;
    }
}
