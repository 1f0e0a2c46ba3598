//! PTM packet decoder: packets in, generic trace elements out (OpenCSD's
//! `TrcPktDecodePtm`). Follows the program image from waypoint to
//! waypoint; the return stack supplies addresses of returns when enabled.
//!
//! OpenCSD reuses one element object for all output, setting only the
//! fields each element type needs: the others keep earlier values, which
//! C clients can see, so this decoder does the same.
#![allow(non_upper_case_globals)]

use std::fmt::Write;

use super::ret_stack::RetStack;
use super::walks::{Walk, Walks};
use super::types::*;
use super::config::*;
use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::{DecodeCtx, MemContext, OcsdError, PacketDecoder, ReadWindow};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    NoSync,
    WaitSync,
    WaitISync,
    DecodePkts,
    /// Stopped at the memory-access gate between two atoms of an atom
    /// packet (OpenCSD's `CONT_ATOM`); FLUSH resumes with the next atom.
    ContAtom,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WpOp {
    Waypoint,
    ToAddrIncl,
}

/// The PTM packet decoder.
pub struct PtmDecoder {
    cfg: PtmConfig,
    name: String,
    trace_id: u8,
    state: State,
    unsync_info: unsync_info_t,
    index: ocsd_trc_index_t,

    // PE address state
    pe_isa: ocsd_isa,
    pe_addr: ocsd_vaddr_t,
    pe_valid: bool,
    pe_context: ocsd_pe_context,

    need_isync: bool,
    instr_info: ocsd_instr_info,
    mem_nacc_pending: bool,
    nacc_addr: ocsd_vaddr_t,
    i_sync_pe_ctxt: bool,
    atoms: ocsd_pkt_atom,
    /// The atom packet being decoded when the gate suspended it.
    cont_pkt: ocsd_ptm_pkt,
    ret_stack: RetStack,
    elem: ocsd_generic_trace_elem,
    msg: String,
    /// Instruction reads served from the view of a memory run.
    win: ReadWindow,
    /// Walks to a waypoint made before.
    walks: Walks,
}


fn set_cycle_count(e: &mut ocsd_generic_trace_elem, cc: u32) {
    e.cycle_count = cc;
    e.set_has_cc(1);
}


impl PtmDecoder {
    /// A decoder for the PTM source configured by `cfg`; the component is
    /// named `DCD_PTM_<trace ID, 4 decimal digits>`.
    pub fn new(cfg: &ocsd_ptm_cfg) -> Self {
        let cfg = PtmConfig::new(cfg);
        let trace_id = cfg.trace_id();
        let mut ret_stack = RetStack::default();
        if cfg.has_ret_stack() {
            ret_stack.set_active(cfg.ena_ret_stack());
        }
        let mut elem = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_UNKNOWN);
        elem.isa = 0;
        let mut d = PtmDecoder {
            cfg,
            name: format!("DCD_PTM_{:04}", trace_id),
            trace_id,
            state: State::NoSync,
            unsync_info: UNSYNC_INIT_DECODER,
            index: 0,
            pe_isa: ocsd_isa_unknown,
            pe_addr: 0,
            pe_valid: false,
            pe_context: ocsd_pe_context::default(),
            need_isync: true,
            instr_info: ocsd_instr_info {
                pe_type: ocsd_arch_profile_t { arch: cfg.arch_version(), profile: cfg.core_profile() },
                isa: ocsd_isa_unknown,
                dsb_dmb_waypoints: cfg.dmsb_way_pt() as u8,
                wfi_wfe_branch: 0,
                ..Default::default()
            },
            mem_nacc_pending: false,
            nacc_addr: 0,
            i_sync_pe_ctxt: false,
            atoms: ocsd_pkt_atom::default(),
            cont_pkt: ocsd_ptm_pkt::default(),
            ret_stack,
            elem,
            win: ReadWindow::default(),
            walks: Walks::default(),
            msg: String::new(),
        };
        d.reset_decoder();
        d
    }

    /// The component name used in error messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn config(&self) -> &PtmConfig {
        &self.cfg
    }

    fn reset_decoder(&mut self) {
        self.state = State::NoSync;
        self.need_isync = true;
        self.instr_info.isa = ocsd_isa_unknown;
        self.mem_nacc_pending = false;
        self.pe_context.set_ctxt_id_valid(0);
        self.pe_context.set_bits64(0);
        self.pe_context.set_vmid_valid(0);
        self.pe_context.exception_level = ocsd_EL_unknown;
        self.pe_context.security_level = ocsd_sec_secure;
        self.pe_context.set_el_valid(0);
        self.pe_addr = 0;
        self.pe_isa = ocsd_isa_unknown;
        self.pe_valid = false;
        self.atoms.num = 0;
        self.elem.init();
    }

    fn output(&mut self, ctx: &mut DecodeCtx) {
        // (nothing the decoder does between an output and the next gate
        // or its return can be told from the element's delivery)
        ctx.send_one(self.index, self.trace_id, &self.elem);
        if self.elem.elem_type == OCSD_GEN_TRC_ELEM_PE_CONTEXT {
            // memory images selected by context follow the trace's context
            ctx.mem.update_context(self.trace_id, MemContext::from_pe_context(&self.pe_context));
        }
    }

    fn mem_space(&self) -> ocsd_mem_space_acc_t {
        if self.pe_context.security_level == ocsd_sec_secure {
            OCSD_MEM_SPACE_S
        } else {
            OCSD_MEM_SPACE_N
        }
    }

    fn decode_packet(&mut self, pkt: &ocsd_ptm_pkt, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        match pkt.type_ {
            PTM_PKT_NOTSYNC | PTM_PKT_INCOMPLETE_EOT | PTM_PKT_NOERROR => {}
            PTM_PKT_BAD_SEQUENCE | PTM_PKT_RESERVED => {
                // OpenCSD 1.8.0 gives no reason here: the NO_SYNC element
                // says "undefined" (UNSYNC_UNKNOWN), whatever came before
                self.state = State::WaitSync;
                self.need_isync = true;
                self.elem.set_type(OCSD_GEN_TRC_ELEM_NO_SYNC);
                self.elem.payload.unsync_eot_info = UNSYNC_UNKNOWN;
                self.output(ctx);
            }
            PTM_PKT_A_SYNC | PTM_PKT_IGNORE => {}
            PTM_PKT_I_SYNC => self.process_isync(pkt, ctx),
            PTM_PKT_BRANCH_ADDRESS => resp = self.process_branch(pkt, ctx),
            PTM_PKT_TRIGGER => {
                self.elem.set_type(OCSD_GEN_TRC_ELEM_EVENT);
                self.elem.payload.trace_event = trace_event_t { ev_type: EVENT_TRIGGER, ev_number: 0 };
                self.output(ctx);
            }
            PTM_PKT_WPOINT_UPDATE => resp = self.process_wp_update(pkt, ctx),
            PTM_PKT_CONTEXT_ID => {
                if !(self.pe_context.ctxt_id_valid() != 0 && self.pe_context.context_id == pkt.context.ctxtID) {
                    self.pe_context.context_id = pkt.context.ctxtID;
                    self.pe_context.set_ctxt_id_valid(1);
                    self.elem.set_type(OCSD_GEN_TRC_ELEM_PE_CONTEXT);
                    self.elem.context = self.pe_context;
                    self.output(ctx);
                }
            }
            PTM_PKT_VMID => {
                if !(self.pe_context.vmid_valid() != 0 && self.pe_context.vmid == pkt.context.VMID as u32) {
                    self.pe_context.vmid = pkt.context.VMID as u32;
                    self.pe_context.set_vmid_valid(1);
                    self.elem.set_type(OCSD_GEN_TRC_ELEM_PE_CONTEXT);
                    self.elem.context = self.pe_context;
                    self.output(ctx);
                }
            }
            PTM_PKT_ATOM => {
                if self.pe_valid {
                    self.atoms = pkt.atom;
                    resp = self.process_atom(pkt, ctx);
                }
            }
            PTM_PKT_TIMESTAMP => {
                self.elem.set_type(OCSD_GEN_TRC_ELEM_TIMESTAMP);
                self.elem.timestamp = pkt.timestamp;
                if pkt.cc_valid != 0 {
                    set_cycle_count(&mut self.elem, pkt.cycle_count);
                }
                self.output(ctx);
            }
            PTM_PKT_EXCEPTION_RET => {
                self.elem.set_type(OCSD_GEN_TRC_ELEM_EXCEPTION_RET);
                self.output(ctx);
            }
            _ => {}
        }
        resp
    }

    fn process_isync(&mut self, pkt: &ocsd_ptm_pkt, ctx: &mut DecodeCtx) {
        self.pe_addr = pkt.addr.val;
        self.pe_isa = pkt.curr_isa;
        self.pe_valid = true;

        self.i_sync_pe_ctxt = pkt.curr_isa != pkt.prev_isa;
        if pkt.context.updated_c() == 1 {
            self.pe_context.context_id = pkt.context.ctxtID;
            self.pe_context.set_ctxt_id_valid(1);
            self.i_sync_pe_ctxt = true;
        }
        if pkt.context.updated_v() == 1 {
            self.pe_context.vmid = pkt.context.VMID as u32;
            self.pe_context.set_vmid_valid(1);
            self.i_sync_pe_ctxt = true;
        }
        self.pe_context.security_level =
            if pkt.context.curr_NS() != 0 { ocsd_sec_nonsecure } else { ocsd_sec_secure };

        if self.need_isync || pkt.i_sync_reason != iSync_Periodic {
            self.elem.set_type(OCSD_GEN_TRC_ELEM_TRACE_ON);
            self.elem.payload.trace_on_reason = match pkt.i_sync_reason {
                iSync_TraceRestartAfterOverflow => TRACE_ON_OVERFLOW,
                iSync_DebugExit => TRACE_ON_EX_DEBUG,
                _ => TRACE_ON_NORMAL,
            };
            if pkt.cc_valid != 0 {
                set_cycle_count(&mut self.elem, pkt.cycle_count);
            }
            self.output(ctx);
        } else {
            self.i_sync_pe_ctxt = false;
        }
        self.need_isync = false;
        self.ret_stack.flush();

        if self.i_sync_pe_ctxt {
            self.elem.set_type(OCSD_GEN_TRC_ELEM_PE_CONTEXT);
            self.elem.context = self.pe_context;
            self.elem.isa = if self.pe_isa > ocsd_isa_unknown || self.pe_isa < 0 { ocsd_isa_unknown } else { self.pe_isa };
            self.output(ctx);
            self.i_sync_pe_ctxt = false;
        }
    }

    fn process_branch(&mut self, pkt: &ocsd_ptm_pkt, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        if pkt.exception.bits.present() == 1 {
            self.elem.set_type(OCSD_GEN_TRC_ELEM_EXCEPTION);
            self.elem.payload.exception_number = pkt.exception.number as u32;
            self.elem.set_excep_ret_addr(0);
            if self.pe_valid {
                self.elem.set_excep_ret_addr(1);
                self.elem.en_addr = self.pe_addr;
            }
            if pkt.cc_valid != 0 {
                set_cycle_count(&mut self.elem, pkt.cycle_count);
            }
            self.output(ctx);
        } else if self.pe_valid {
            resp = self.process_atom_range(ATOM_E, "BranchAddr", WpOp::Waypoint, 0, pkt, ctx);
        }
        self.pe_isa = pkt.curr_isa;
        self.pe_addr = pkt.addr.val;
        self.pe_valid = true;
        self.check_pending_nacc(resp, ctx);
        resp
    }

    fn process_wp_update(&mut self, pkt: &ocsd_ptm_pkt, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        if self.pe_valid {
            resp = self.process_atom_range(ATOM_E, "WP update", WpOp::ToAddrIncl, pkt.addr.val, pkt, ctx);
        }
        self.check_pending_nacc(resp, ctx);
        resp
    }

    fn process_atom(&mut self, pkt: &ocsd_ptm_pkt, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        while self.atoms.num != 0 && self.pe_valid && resp_is_cont(resp) {
            // the ranges of earlier atoms reach the client before this
            // atom's memory is read; a WAIT there suspends the packet
            if !ctx.gate() {
                self.cont_pkt = *pkt;
                self.state = State::ContAtom;
                return ctx.client_resp();
            }
            let a = if self.atoms.En_bits & 1 != 0 { ATOM_E } else { ATOM_N };
            resp = self.process_atom_range(a, "atom", WpOp::Waypoint, 0, pkt, ctx);
            if !self.pe_valid {
                self.atoms.num = 0;
            } else if self.atoms.num != 0 {
                self.atoms.num -= 1;
                self.atoms.En_bits >>= 1;
            }
        }
        self.check_pending_nacc(resp, ctx);
        resp
    }

    fn check_pending_nacc(&mut self, resp: ocsd_datapath_resp_t, ctx: &mut DecodeCtx) {
        if self.mem_nacc_pending && resp_is_cont(resp) {
            self.elem.set_type(OCSD_GEN_TRC_ELEM_ADDR_NACC);
            self.elem.st_addr = self.nacc_addr;
            self.elem.payload.exception_number = self.mem_space() as u32;
            self.output(ctx);
            self.mem_nacc_pending = false;
        }
    }

    fn log(&mut self, ctx: &mut DecodeCtx, sev: ocsd_err_severity_t, code: ocsd_err_t, what: &str, pkt_msg: &str) {
        self.msg.clear();
        let _ = write!(self.msg, "{}{} packet.", what, pkt_msg);
        let e = OcsdError::at(sev, code, self.index, self.trace_id, self.msg.as_str());
        ctx.log.log_error(&self.name, &e);
    }

    fn process_atom_range(
        &mut self,
        a: ocsd_atm_val,
        pkt_msg: &str,
        op: WpOp,
        next_addr_match: ocsd_vaddr_t,
        pkt: &ocsd_ptm_pkt,
        ctx: &mut DecodeCtx,
    ) -> ocsd_datapath_resp_t {
        let resp = OCSD_RESP_CONT;
        self.instr_info.instr_addr = self.pe_addr;
        self.instr_info.isa = self.pe_isa;

        let (err, wp_found) = self.trace_instr_to_wp(op, next_addr_match, ctx);
        if err != OCSD_OK {
            if err == OCSD_ERR_UNSUPPORTED_ISA {
                self.pe_valid = false;
                self.log(ctx, OCSD_ERR_SEV_WARN, err, "Warning: unsupported instruction set processing ", pkt_msg);
                return OCSD_RESP_WARN_CONT;
            }
            self.log(ctx, OCSD_ERR_SEV_ERROR, err, "Error processing ", pkt_msg);
            return OCSD_RESP_FATAL_INVALID_DATA;
        }

        if wp_found {
            let next_addr = self.instr_info.instr_addr;
            match self.instr_info.type_ {
                OCSD_INSTR_BR => {
                    if a == ATOM_E {
                        self.instr_info.instr_addr = self.instr_info.branch_addr;
                        if self.instr_info.is_link != 0 {
                            self.ret_stack.push(next_addr, self.instr_info.isa);
                        }
                    }
                }
                OCSD_INSTR_BR_INDIRECT => {
                    if a == ATOM_E {
                        self.pe_valid = false;
                        if self.ret_stack.is_active() && pkt.type_ == PTM_PKT_ATOM {
                            let mut isa = self.instr_info.next_isa;
                            self.instr_info.instr_addr = self.ret_stack.pop(&mut isa);
                            self.instr_info.next_isa = isa;
                            if self.ret_stack.overflow() {
                                self.log(
                                    ctx,
                                    OCSD_ERR_SEV_ERROR,
                                    OCSD_ERR_RET_STACK_OVERFLOW,
                                    "Return stack error processing ",
                                    pkt_msg,
                                );
                                return OCSD_RESP_FATAL_INVALID_DATA;
                            }
                            self.pe_valid = true;
                        }
                        if self.instr_info.is_link != 0 {
                            self.ret_stack.push(next_addr, self.instr_info.isa);
                        }
                    }
                }
                _ => {}
            }
            self.set_range_elem(a == ATOM_E, pkt);
            self.output(ctx);
            self.pe_addr = self.instr_info.instr_addr;
            self.pe_isa = self.instr_info.next_isa;
        } else {
            self.pe_valid = false;
            if self.elem.st_addr != self.elem.en_addr {
                self.set_range_elem(true, pkt);
                self.output(ctx);
            }
        }
        resp
    }

    fn set_range_elem(&mut self, exec: bool, pkt: &ocsd_ptm_pkt) {
        let e = &mut self.elem;
        // OpenCSD sets the type before the walk that counts the
        // instructions (setType clears the payload's first word)
        let n = e.num_instr_range();
        e.set_type(OCSD_GEN_TRC_ELEM_INSTR_RANGE);
        e.payload.num_instr_range = n;
        e.set_last_instr_exec(exec as u32);
        e.set_last_instr_sz((self.instr_info.instr_size & 0x7) as u32);
        e.last_i_type = self.instr_info.type_;
        e.last_i_subtype = self.instr_info.sub_type;
        e.isa = if self.pe_isa > ocsd_isa_unknown || self.pe_isa < 0 { ocsd_isa_unknown } else { self.pe_isa };
        if pkt.cc_valid != 0 {
            set_cycle_count(e, pkt.cycle_count);
        }
        e.set_last_instr_cond(self.instr_info.is_conditional as u32);
    }

    /// Walk instructions from `instr_info.instr_addr` to a waypoint (or to
    /// an address). Returns (error, waypoint found).
    fn trace_instr_to_wp(&mut self, op: WpOp, next_addr_match: ocsd_vaddr_t, ctx: &mut DecodeCtx) -> (ocsd_err_t, bool) {
        // the reads served from the view of a run, reported at the end
        self.win.check(ctx.mem);
        let r = self.walk_to_wp(op, next_addr_match, ctx);
        self.win.report(ctx.mem);
        r
    }

    fn walk_to_wp(&mut self, op: WpOp, next_addr_match: ocsd_vaddr_t, ctx: &mut DecodeCtx) -> (ocsd_err_t, bool) {
        let ms = self.mem_space();
        let start = self.instr_info.instr_addr;
        self.elem.st_addr = start;
        self.elem.en_addr = start;
        self.elem.payload.num_instr_range = 0;
        // (a walk to a waypoint, its decode a function of the bytes alone)
        let cached = op == WpOp::Waypoint && self.instr_info.track_it_block == 0;
        // whether to look again after the first read, which may move the
        // view (to the page of a branch target)
        let mut again = false;
        if cached && !self.mem_nacc_pending {
            let t = self.win.token();
            match self.take_known_walk(start, t, ms, 0) {
                Some(true) => return (OCSD_OK, true),
                Some(false) => again = true,
                None => again = t == 0,
            }
        }
        let mut found = false;
        // the token of the views that served every read so far (None:
        // none yet; 0: no promise)
        let mut token = None;
        while !found && !self.mem_nacc_pending {
            let curr = self.instr_info.instr_addr;
            let mut buf = [0u8; 4];
            let n = match self.win.read4(ctx.mem, curr, ms, self.trace_id, &mut buf) {
                Ok(n) => n,
                Err(e) => return (e, found),
            };
            if n == 4 {
                let t = self.win.token();
                // the first read made: the walk from here made before over
                // the same bytes, every read after it served from the view
                if again && token.is_none() && self.take_known_walk(start, t, ms, 1) == Some(true) {
                    return (OCSD_OK, true);
                }
                token = Some(if token.unwrap_or(t) == t { t } else { 0 });
                self.instr_info.opcode = u32::from_le_bytes(buf);
                let err = crate::instr::decode_instruction(&mut self.instr_info);
                if err != OCSD_OK {
                    return (err, found);
                }
                self.instr_info.instr_addr = self.instr_info.instr_addr.wrapping_add(self.instr_info.instr_size as u64);
                self.elem.en_addr = self.instr_info.instr_addr;
                let n_i = self.elem.num_instr_range();
                self.elem.payload.num_instr_range = n_i.wrapping_add(1);
                self.elem.last_i_type = self.instr_info.type_;
                found = match op {
                    WpOp::ToAddrIncl => curr == next_addr_match,
                    WpOp::Waypoint => self.instr_info.type_ != OCSD_INSTR_OTHER,
                };
            } else {
                self.mem_nacc_pending = true;
                self.nacc_addr = self.instr_info.instr_addr;
            }
        }
        if found && cached {
            self.keep_walk(start, token.unwrap_or(0), ms);
        }
        (OCSD_OK, found)
    }

    /// The walk from `start` made before over bytes of `token`, taken as
    /// that walk left the state, when the view holds every byte it read:
    /// its reads after the `made` first ones (already made) reported as
    /// uses of the view. Some(true): taken; Some(false): kept, but its
    /// bytes are not all in the view; None: none kept.
    fn take_known_walk(&mut self, start: ocsd_vaddr_t, token: u64, ms: ocsd_mem_space_acc_t, made: u32) -> Option<bool> {
        let w = self.walks.get(start, self.instr_info.isa, token)?;
        if !self.win.covers(start, u64::from(w.span), ms, self.trace_id) {
            return Some(false);
        }
        let w = *w;
        self.win.add_uses(w.num - made);
        self.instr_info = w.info;
        self.elem.en_addr = w.info.instr_addr;
        self.elem.payload.num_instr_range = w.num;
        self.elem.last_i_type = w.info.type_;
        Some(true)
    }

    /// Keep the walk just made from `start`, all its reads served by views
    /// of `token`, if the view now holds all it read.
    fn keep_walk(&mut self, start: ocsd_vaddr_t, token: u64, ms: ocsd_mem_space_acc_t) {
        let last = self.instr_info.instr_addr.wrapping_sub(self.instr_info.instr_size as u64);
        let Some(span) = last.checked_sub(start).and_then(|d| d.checked_add(4)).and_then(|s| u32::try_from(s).ok()) else {
            return;
        };
        if token == 0 || token != self.win.token() || !self.win.covers(start, u64::from(span), ms, self.trace_id) {
            return;
        }
        let num = self.elem.num_instr_range();
        self.walks.put(Walk { start, token, isa: self.instr_info.isa, num, span, info: self.instr_info });
    }
}

impl PacketDecoder for PtmDecoder {
    type Packet = ocsd_ptm_pkt;

    fn name(&self) -> &str {
        PtmDecoder::name(self)
    }

    fn packet_in(&mut self, index_sop: ocsd_trc_index_t, pkt: &ocsd_ptm_pkt, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        self.index = index_sop;
        let mut resp = OCSD_RESP_CONT;
        loop {
            match self.state {
                State::NoSync => {
                    self.elem.set_type(OCSD_GEN_TRC_ELEM_NO_SYNC);
                    self.elem.payload.unsync_eot_info = self.unsync_info;
                    self.output(ctx);
                    self.state = if pkt.type_ == PTM_PKT_A_SYNC { State::WaitISync } else { State::WaitSync };
                    break;
                }
                State::WaitSync => {
                    if pkt.type_ == PTM_PKT_A_SYNC {
                        self.state = State::WaitISync;
                    }
                    break;
                }
                State::WaitISync => {
                    if pkt.type_ == PTM_PKT_I_SYNC {
                        self.state = State::DecodePkts;
                    } else {
                        break;
                    }
                }
                State::DecodePkts => {
                    resp = self.decode_packet(pkt, ctx);
                    break;
                }
                State::ContAtom => {
                    // input before FLUSH: finish the suspended atoms first
                    resp = self.flush(ctx);
                    if self.state == State::ContAtom || !resp_is_cont(resp) {
                        return resp;
                    }
                }
            }
        }
        resp
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

    fn flush(&mut self, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        if self.state != State::ContAtom {
            return OCSD_RESP_CONT;
        }
        self.state = State::DecodePkts;
        let pkt = self.cont_pkt;
        self.process_atom(&pkt, ctx)
    }

    fn trace_id(&self) -> u8 {
        self.trace_id
    }
}
