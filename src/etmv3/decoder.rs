//! ETMv3 packet decoder: packets in, generic trace elements out (OpenCSD's
//! `TrcPktDecodeEtmV3`).
//!
//! OpenCSD stacks the elements of a packet in a reusable ring of element
//! objects (`OcsdGenElemList`), where the last ones can be held back
//! ("pended") until the next packet says whether they were cancelled by an
//! exception. Element objects are reused without being cleared, so fields
//! an element type does not set keep the values of an earlier element; the
//! ring here reproduces that, so C clients see the same field values.

use super::code_follower::CodeFollower;
use super::types::*;
use super::config::*;
use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::{DecodeCtx, MemContext, OcsdError, PacketDecoder};


fn set_isa(e: &mut ocsd_generic_trace_elem, isa: ocsd_isa) {
    e.isa = if !(0..=ocsd_isa_unknown).contains(&isa) { ocsd_isa_unknown } else { isa };
}

fn set_cycle_count(e: &mut ocsd_generic_trace_elem, cc: u32) {
    e.cycle_count = cc;
    e.set_has_cc(1);
}

/// The pool of reusable output elements with pend / commit / cancel
/// (OpenCSD's `OcsdGenElemList`).
struct ElemList {
    elems: Vec<(ocsd_generic_trace_elem, ocsd_trc_index_t)>,
    first: usize,
    used: usize,
    pend: usize,
}

impl ElemList {
    fn new() -> Self {
        ElemList { elems: Vec::new(), first: 0, used: 0, pend: 0 }
    }
    fn reset(&mut self) {
        self.first = 0;
        self.used = 0;
        self.pend = 0;
    }
    fn adj(&self, i: usize) -> usize {
        if i >= self.elems.len() {
            i - self.elems.len()
        } else {
            i
        }
    }
    fn grow(&mut self) {
        let size = self.elems.len();
        let inc = if size == 0 { 8 } else { size / 2 };
        // existing elements move to the front, in order from `first`
        self.elems.rotate_left(self.first.min(size));
        let mut blank = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_UNKNOWN);
        blank.isa = 0;
        self.elems.resize(size + inc, (blank, 0));
        self.first = 0;
    }
    /// The next element of the list (stale contents), for packet `idx`.
    fn next(&mut self, idx: ocsd_trc_index_t) -> &mut ocsd_generic_trace_elem {
        if self.used == self.elems.len() {
            self.grow();
        }
        self.used += 1;
        let i = self.adj(self.first + self.used - 1);
        self.elems[i].1 = idx;
        &mut self.elems[i].0
    }
    fn num(&self) -> usize {
        self.used
    }
    fn elem_type(&self, n: usize) -> ocsd_gen_trc_elem_t {
        if n < self.used {
            self.elems[self.adj(self.first + n)].0.elem_type
        } else {
            OCSD_GEN_TRC_ELEM_UNKNOWN
        }
    }
    fn pend_last_n(&mut self, n: usize) {
        if n >= self.used {
            self.pend = n;
        }
    }
    fn commit_all(&mut self) {
        self.pend = 0;
    }
    fn cancel_pend(&mut self) {
        if self.pend > 0 {
            self.used = self.used.saturating_sub(self.pend);
        }
    }
    fn elem_to_send(&self) -> bool {
        self.used > self.pend
    }
    fn send(&mut self, trace_id: u8, ctx: &mut DecodeCtx) {
        while self.elem_to_send() {
            let (e, idx) = &self.elems[self.first];
            ctx.out.push(*idx, trace_id, e);
            self.first += 1;
            if self.first >= self.elems.len() {
                self.first = 0;
            }
            self.used -= 1;
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    NoSync,
    WaitASync,
    WaitISync,
    DecodePkts,
}

/// OpenCSD's PE context helper (`OcsdPeContext`).
#[derive(Clone, Copy)]
struct PeContext(ocsd_pe_context);

impl PeContext {
    fn reset() -> Self {
        PeContext(ocsd_pe_context { exception_level: ocsd_EL_unknown, security_level: ocsd_sec_secure, ..Default::default() })
    }
    fn set_el(&mut self, el: ocsd_ex_level) {
        self.0.exception_level = el;
        self.0.set_el_valid((el > ocsd_EL_unknown) as u32);
    }
    fn set_ctxt_id(&mut self, id: u32) {
        self.0.context_id = id;
        self.0.set_ctxt_id_valid(1);
    }
    fn set_vmid(&mut self, id: u32) {
        self.0.vmid = id;
        self.0.set_vmid_valid(1);
    }
}

/// The ETMv3 packet decoder.
pub struct EtmV3Decoder {
    cfg: EtmV3Config,
    name: String,
    trace_id: u8,
    state: State,
    need_addr: bool,
    sent_unknown: bool,
    wait_isync: bool,
    unsync_info: unsync_info_t,
    i_addr: ocsd_vaddr_t,
    pe_ctx: PeContext,
    /// The context the memory was last told ([`Self::process_phdr`]);
    /// None after a reset, when it is told again.
    mem_ctx_told: Option<MemContext>,
    follower: CodeFollower,
    list: ElemList,
    index: ocsd_trc_index_t,
    /// The configuration is one OpenCSD refuses ([`EtmV3Config::decode_refusal`]).
    config_err: bool,
}

impl EtmV3Decoder {
    /// A decoder for the ETMv3 source configured by `cfg`; the component is
    /// named `DCD_ETMV3_<trace ID, 4 decimal digits>`.
    pub fn new(cfg: &ocsd_etmv3_cfg) -> Self {
        let cfg = EtmV3Config::new(cfg);
        let trace_id = cfg.trace_id();
        let mut follower = CodeFollower::default();
        follower.set_arch_profile(ocsd_arch_profile_t { arch: cfg.arch_version(), profile: cfg.core_profile() });
        follower.set_trace_id(trace_id);
        let mut d = EtmV3Decoder {
            cfg,
            name: format!("DCD_ETMV3_{:04}", trace_id),
            trace_id,
            state: State::NoSync,
            need_addr: true,
            sent_unknown: false,
            wait_isync: false,
            unsync_info: UNSYNC_INIT_DECODER,
            i_addr: 0,
            pe_ctx: PeContext::reset(),
            mem_ctx_told: None,
            follower,
            list: ElemList::new(),
            index: 0,
            config_err: cfg.decode_refusal().is_some(),
        };
        d.reset_decoder();
        d
    }

    /// The component name used in error messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn reset_decoder(&mut self) {
        self.state = State::NoSync;
        self.need_addr = true;
        self.sent_unknown = false;
        self.wait_isync = false;
        self.mem_ctx_told = None;
        self.list.reset();
    }

    fn set_need_addr(&mut self, need: bool) {
        self.need_addr = need;
        self.sent_unknown = false;
    }

    fn err(&self, code: ocsd_err_t, msg: &str) -> OcsdError {
        OcsdError::at(OCSD_ERR_SEV_ERROR, code, self.index, self.trace_id, msg)
    }

    fn fail(&mut self, ctx: &mut DecodeCtx, e: OcsdError) {
        ctx.log.log_error(&self.name, &e);
        self.unsync_info = UNSYNC_BAD_PACKET;
        self.reset_decoder();
    }

    fn pre_isync_valid(&self, t: ocsd_etmv3_pkt_type) -> bool {
        t == ETM3_PKT_TIMESTAMP || (self.cfg.is_cycle_acc() && (t == ETM3_PKT_CYCLE_COUNT || t == ETM3_PKT_P_HDR))
    }

    fn send_elements(&mut self, ctx: &mut DecodeCtx) {
        self.list.send(self.trace_id, ctx);
    }

    /// Decode one packet; the bool is whether elements were sent.
    fn decode_packet(&mut self, pkt: &ocsd_etmv3_pkt, ctx: &mut DecodeCtx) -> (ocsd_datapath_resp_t, bool) {
        let mut resp = OCSD_RESP_CONT;
        if pkt.type_ != ETM3_PKT_BRANCH_ADDRESS {
            self.list.commit_all();
        }
        let idx = self.index;
        let r: Result<(), OcsdError> = match pkt.type_ {
            ETM3_PKT_NOTSYNC => Err(self.err(OCSD_ERR_BAD_PACKET_SEQ, "Trace Packet Synchronisation Lost")),
            ETM3_PKT_INCOMPLETE_EOT | ETM3_PKT_A_SYNC | ETM3_PKT_IGNORE => Ok(()),
            ETM3_PKT_CYCLE_COUNT => {
                let e = self.list.next(idx);
                e.set_type(OCSD_GEN_TRC_ELEM_CYCLE_COUNT);
                set_cycle_count(e, pkt.cycle_count);
                Ok(())
            }
            ETM3_PKT_TRIGGER => {
                let e = self.list.next(idx);
                e.set_type(OCSD_GEN_TRC_ELEM_EVENT);
                e.payload.trace_event = trace_event_t { ev_type: EVENT_TRIGGER, ev_number: 0 };
                Ok(())
            }
            ETM3_PKT_BRANCH_ADDRESS => {
                self.process_branch_addr(pkt);
                Ok(())
            }
            ETM3_PKT_I_SYNC_CYCLE | ETM3_PKT_I_SYNC => {
                self.process_isync(pkt, false);
                Ok(())
            }
            ETM3_PKT_P_HDR => self.process_phdr(pkt, ctx),
            ETM3_PKT_CONTEXT_ID => {
                self.pe_ctx.set_ctxt_id(pkt.context.ctxtID);
                let c = self.pe_ctx.0;
                let e = self.list.next(idx);
                e.set_type(OCSD_GEN_TRC_ELEM_PE_CONTEXT);
                e.context = c;
                Ok(())
            }
            ETM3_PKT_VMID => {
                self.pe_ctx.set_vmid(pkt.context.VMID as u32);
                let c = self.pe_ctx.0;
                let e = self.list.next(idx);
                e.set_type(OCSD_GEN_TRC_ELEM_PE_CONTEXT);
                e.context = c;
                Ok(())
            }
            ETM3_PKT_EXCEPTION_ENTRY => {
                let e = self.list.next(idx);
                e.set_type(OCSD_GEN_TRC_ELEM_EXCEPTION);
                e.set_excep_data_marker(1);
                Ok(())
            }
            ETM3_PKT_EXCEPTION_EXIT => {
                let e = self.list.next(idx);
                e.set_type(OCSD_GEN_TRC_ELEM_EXCEPTION_RET);
                self.pend_exception_return();
                Ok(())
            }
            ETM3_PKT_TIMESTAMP => {
                let e = self.list.next(idx);
                e.set_type(OCSD_GEN_TRC_ELEM_TIMESTAMP);
                e.timestamp = pkt.timestamp;
                e.set_cpu_freq_change(0);
                e.set_has_ts(1);
                Ok(())
            }
            ETM3_PKT_STORE_FAIL
            | ETM3_PKT_OOO_DATA
            | ETM3_PKT_OOO_ADDR_PLC
            | ETM3_PKT_NORM_DATA
            | ETM3_PKT_DATA_SUPPRESSED
            | ETM3_PKT_VAL_NOT_TRACED
            | ETM3_PKT_BAD_TRACEMODE => {
                resp = OCSD_RESP_FATAL_INVALID_DATA;
                Err(self.err(OCSD_ERR_HW_CFG_UNSUPP, "Invalid packet type : Data Tracing decode not supported."))
            }
            ETM3_PKT_BAD_SEQUENCE => {
                resp = OCSD_RESP_FATAL_INVALID_DATA;
                Err(self.err(OCSD_ERR_BAD_PACKET_SEQ, "Bad Packet sequence."))
            }
            _ => {
                resp = OCSD_RESP_FATAL_INVALID_DATA;
                Err(self.err(OCSD_ERR_BAD_PACKET_SEQ, "Reserved or unknown packet ID."))
            }
        };
        match r {
            Ok(()) => {
                let sent = self.list.elem_to_send();
                self.state = State::DecodePkts;
                self.send_elements(ctx);
                (resp, sent)
            }
            Err(e) => {
                self.fail(ctx, e);
                (resp, false)
            }
        }
    }

    fn process_isync(&mut self, pkt: &ocsd_etmv3_pkt, first_sync: bool) {
        const ON_MAP: [trace_on_reason_t; 4] = [TRACE_ON_NORMAL, TRACE_ON_NORMAL, TRACE_ON_OVERFLOW, TRACE_ON_EX_DEBUG];
        let idx = self.index;
        let ctxt_update = pkt.is_ctxt_updated();
        let mut use_second = false;
        if first_sync || pkt.isync_info.reason != iSync_Periodic {
            let e = self.list.next(idx);
            e.set_type(OCSD_GEN_TRC_ELEM_TRACE_ON);
            e.payload.trace_on_reason = ON_MAP[(pkt.isync_info.reason & 3) as usize];
            use_second = true;
        }
        // OpenCSD takes the element for the context before knowing it is
        // needed; an unused element stays in the list as a stale entry.
        let mut e_ptr_needed = true;
        if ctxt_update || first_sync {
            if first_sync {
                self.pe_ctx = PeContext::reset();
            }
            if pkt.context.updated_c() == 1 {
                self.pe_ctx.set_ctxt_id(pkt.context.ctxtID);
            }
            if pkt.context.updated_v() == 1 {
                self.pe_ctx.set_vmid(pkt.context.VMID as u32);
            }
            if pkt.context.updated() == 1 {
                self.pe_ctx.set_el(if pkt.context.curr_Hyp() != 0 { ocsd_EL2 } else { ocsd_EL_unknown });
                self.pe_ctx.0.security_level =
                    if pkt.context.curr_NS() != 0 { ocsd_sec_nonsecure } else { ocsd_sec_secure };
            }
            let c = self.pe_ctx.0;
            let e = self.list.next(idx);
            e.set_type(OCSD_GEN_TRC_ELEM_PE_CONTEXT);
            e.context = c;
            set_isa(e, pkt.curr_isa);
            if pkt.isync_info.has_cycle_count() != 0 {
                set_cycle_count(e, pkt.cycle_count);
            }
            e_ptr_needed = false;
        }
        if e_ptr_needed {
            // OpenCSD took an element that is then neither typed nor
            // dropped: it stays queued for output with stale contents.
            let _ = self.list.next(idx);
        }
        let _ = use_second;
        if pkt.isync_info.no_address() == 0 {
            self.i_addr = if pkt.isync_info.has_LSipAddress() != 0 { pkt.data.addr.val } else { pkt.addr.val };
            self.set_need_addr(false);
        }
    }

    fn process_branch_addr(&mut self, pkt: &ocsd_etmv3_pkt) {
        let idx = self.index;
        if pkt.is_excep_cancel() {
            self.list.cancel_pend();
        } else {
            self.list.commit_all();
        }
        self.i_addr = pkt.addr.val;
        self.set_need_addr(false);
        if pkt.is_excep_pkt() {
            let mut update_ctx = false;
            if pkt.is_ctxt_updated() {
                let sec = if pkt.context.curr_NS() != 0 { ocsd_sec_nonsecure } else { ocsd_sec_secure };
                if sec != self.pe_ctx.0.security_level {
                    self.pe_ctx.0.security_level = sec;
                    update_ctx = true;
                }
                let el = if pkt.context.curr_Hyp() != 0 { ocsd_EL2 } else { ocsd_EL_unknown };
                if el != self.pe_ctx.0.exception_level {
                    self.pe_ctx.set_el(el);
                    update_ctx = true;
                }
            }
            if update_ctx {
                let c = self.pe_ctx.0;
                let e = self.list.next(idx);
                e.set_type(OCSD_GEN_TRC_ELEM_PE_CONTEXT);
                e.context = c;
            }
            if pkt.exception.number != 0 {
                let e = self.list.next(idx);
                e.set_type(OCSD_GEN_TRC_ELEM_EXCEPTION);
                e.payload.exception_number = pkt.exception.number as u32;
            }
        }
    }

    fn process_phdr(&mut self, pkt: &ocsd_etmv3_pkt, ctx: &mut DecodeCtx) -> Result<(), OcsdError> {
        // memory images selected by context follow the trace's context (told
        // when it changed: a call per P-header was 4% of TC2's instructions)
        let mem_ctx = MemContext::from_pe_context(&self.pe_ctx.0);
        if self.mem_ctx_told != Some(mem_ctx) {
            ctx.mem.update_context(self.trace_id, mem_ctx);
            self.mem_ctx_told = Some(mem_ctx);
        }
        let idx = self.index;
        let ca = self.cfg.is_cycle_acc();
        let mut atom = pkt.atom;
        let fmt = pkt.p_hdr_fmt;
        let pkt_cc = pkt.cycle_count;
        let atom_cc = |num: u8| -> u32 {
            if !ca {
                return 0;
            }
            match fmt {
                3 => pkt_cc,
                2 => (num > 1) as u32,
                1 => 1,
                _ => 0,
            }
        };
        let remain_cc = |num: u8| -> u32 {
            if !ca {
                return 0;
            }
            match fmt {
                3 => pkt_cc,
                2 => (num > 1) as u32,
                1 => num as u32,
                _ => 0,
            }
        };

        let mut isa = pkt.curr_isa;
        let ms = if self.pe_ctx.0.security_level == ocsd_sec_secure { OCSD_MEM_SPACE_S } else { OCSD_MEM_SPACE_N };
        self.follower.set_mem_space_access(ms);

        // (nothing but the follower's reads uses the memory in the loop)
        self.follower.begin_reads(ctx.mem);
        loop {
            if self.need_addr {
                if !self.sent_unknown || ca {
                    let sent_unknown = self.sent_unknown;
                    let e = self.list.next(idx);
                    if sent_unknown || atom.num == 0 {
                        e.set_type(OCSD_GEN_TRC_ELEM_CYCLE_COUNT);
                    } else {
                        e.set_type(OCSD_GEN_TRC_ELEM_ADDR_UNKNOWN);
                    }
                    if ca {
                        set_cycle_count(e, remain_cc(atom.num));
                    }
                    self.sent_unknown = true;
                }
                atom.num = 0;
            } else {
                let slot = {
                    let e = self.list.next(idx);
                    e.set_type(OCSD_GEN_TRC_ELEM_INSTR_RANGE);
                    if ca {
                        if atom.num == 0 {
                            e.set_type(OCSD_GEN_TRC_ELEM_CYCLE_COUNT);
                        }
                        set_cycle_count(e, atom_cc(atom.num));
                    }
                    self.list.num() - 1
                };
                if atom.num != 0 {
                    let a = if atom.En_bits & 1 != 0 { ATOM_E } else { ATOM_N };
                    self.follower.set_isa(isa);
                    let _ = self.follower.follow_single_atom(ctx.mem, self.i_addr, a);
                    let mut cur = slot;
                    if self.follower.has_range() {
                        let f = &self.follower;
                        let (en, size, type_, sub_type, cond) = (f.range_en(), f.instr_size(), f.instr_type(), f.instr_subtype(), f.is_cond());
                        let i_addr = self.i_addr;
                        let e = self.list_elem(cur);
                        e.st_addr = i_addr;
                        e.en_addr = en;
                        e.payload.num_instr_range = 1;
                        e.set_last_instr_exec((a == ATOM_E) as u32);
                        e.set_last_instr_sz((size & 0x7) as u32);
                        e.last_i_type = type_;
                        e.last_i_subtype = sub_type;
                        e.set_last_instr_cond(cond as u32);
                        set_isa(e, isa);
                        if self.follower.has_next_addr() {
                            self.i_addr = self.follower.next_addr();
                        } else {
                            self.set_need_addr(true);
                        }
                    }
                    if self.follower.isa_changed() {
                        isa = self.follower.next_isa();
                    }
                    if self.follower.is_nacc() {
                        if self.follower.has_range() {
                            let _ = self.list.next(idx);
                            cur = self.list.num() - 1;
                            let e = self.list_elem(cur);
                            e.set_type(OCSD_GEN_TRC_ELEM_ADDR_NACC);
                        } else {
                            self.list_elem(cur).elem_type = OCSD_GEN_TRC_ELEM_ADDR_NACC;
                        }
                        let nacc = self.follower.nacc_addr();
                        let ms = self.follower.mem_space_access();
                        let e = self.list_elem(cur);
                        e.st_addr = nacc;
                        e.payload.exception_number = ms as u32;
                        self.set_need_addr(true);
                        self.follower.clear_nacc();
                    }
                }
                atom.En_bits >>= 1;
                if atom.num != 0 {
                    atom.num -= 1;
                }
            }
            if atom.num == 0 {
                break;
            }
        }
        self.follower.end_reads(ctx.mem);

        let n = self.list.num();
        if n >= 1 && self.list.elem_type(n - 1) == OCSD_GEN_TRC_ELEM_INSTR_RANGE {
            self.list.pend_last_n(1);
        }
        Ok(())
    }

    /// The `n`th element in use (0 = oldest).
    fn list_elem(&mut self, n: usize) -> &mut ocsd_generic_trace_elem {
        let i = self.list.adj(self.list.first + n);
        &mut self.list.elems[i].0
    }

    fn pend_exception_return(&mut self) {
        let mut pend = 1;
        if self.cfg.core_profile() != profile_CortexM {
            let n = self.list.num();
            if n > 1 && self.list.elem_type(n - 2) == OCSD_GEN_TRC_ELEM_INSTR_RANGE {
                pend = 2;
            }
        }
        self.list.pend_last_n(pend);
    }
}

impl PacketDecoder for EtmV3Decoder {
    type Packet = ocsd_etmv3_pkt;

    fn name(&self) -> &str {
        EtmV3Decoder::name(self)
    }

    fn config_ok(&self) -> bool {
        !self.config_err
    }

    fn packet_in(&mut self, index_sop: ocsd_trc_index_t, pkt: &ocsd_etmv3_pkt, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        self.index = index_sop;
        let mut resp = OCSD_RESP_CONT;
        loop {
            match self.state {
                State::NoSync => {
                    let idx = self.index;
                    let info = self.unsync_info;
                    let e = self.list.next(idx);
                    e.set_type(OCSD_GEN_TRC_ELEM_NO_SYNC);
                    e.payload.unsync_eot_info = info;
                    self.send_elements(ctx);
                    self.state = State::WaitASync;
                }
                State::WaitASync => {
                    if pkt.type_ == ETM3_PKT_A_SYNC {
                        self.state = State::WaitISync;
                    }
                    break;
                }
                State::WaitISync => {
                    self.wait_isync = true;
                    if pkt.type_ == ETM3_PKT_I_SYNC || pkt.type_ == ETM3_PKT_I_SYNC_CYCLE {
                        self.process_isync(pkt, true);
                        self.wait_isync = false;
                        self.send_elements(ctx);
                        self.state = State::DecodePkts;
                    } else if self.pre_isync_valid(pkt.type_) {
                        // OpenCSD returns to waiting for I-Sync only after
                        // sending elements; a packet giving none leaves it
                        // decoding.
                        let (r, sent) = self.decode_packet(pkt, ctx);
                        resp = r;
                        if self.state == State::DecodePkts && sent {
                            self.state = State::WaitISync;
                        }
                    }
                    break;
                }
                State::DecodePkts => {
                    resp = self.decode_packet(pkt, ctx).0;
                    break;
                }
            }
        }
        resp
    }

    fn eot(&mut self, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        let idx = self.index;
        let e = self.list.next(idx);
        e.set_type(OCSD_GEN_TRC_ELEM_EO_TRACE);
        e.payload.unsync_eot_info = UNSYNC_EOT;
        self.list.commit_all();
        self.send_elements(ctx);
        self.state = State::DecodePkts;
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
