//! ETMv4 / ETE packet decoder: packets in, generic trace elements out
//! (OpenCSD's `TrcPktDecodeEtmV4I`, also used for ETE).
//!
//! Packets become elements on the P0 stack ([`P0Stack`]); commit, cancel,
//! mispredict and discard operations resolve them into generic elements,
//! following the program through memory for atoms, exceptions, Q and
//! source-address elements. Output elements are staged in `OutElems`
//! (OpenCSD's `OcsdGenElemStack`) and moved to the element queue when a
//! resolution step completes, so an error part-way through discards the
//! partial output as OpenCSD does.
//!
//! Nothing here allocates per packet or per instruction: the stacks reuse
//! their storage and program memory is read through a small window
//! (`MemWindow`).

#![allow(non_upper_case_globals)]

mod same_state;
mod follow;
pub(crate) mod reuse;

use follow::{BlockCache, MemWindow};

use super::config::EtmV4Config;
use super::p0_stack::{P0Data, P0Elem, P0Kind, P0Stack};
use super::pkt_proc::ATOM_HEADERS;
use super::types::*;
use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::{CachePage, DecodeCtx, ElemQueue, ErrorLog, MemAccess, MemContext, MemView, OcsdError, PacketDecoder};
use crate::ete::types::{ETE_OPFLG_PKTDEC_SRCADDR_N_ATOMS, ETM4_OPFLG_PKTDEC_AA64_OPCODE_CHK};
use crate::instr::{a64_is_plain, aa64_opcode_is_invalid, decode_instruction_ex, TrcAddrReturnStack};

/// Decoder flags this decoder accepts.
const SUPPORTED_OP_FLAGS: u32 = OCSD_OPFLG_PKTDEC_COMMON
    | OCSD_OPFLG_N_UNCOND_CHK_NO_THUMB
    | ETE_OPFLG_PKTDEC_SRCADDR_N_ATOMS
    | ETM4_OPFLG_PKTDEC_AA64_OPCODE_CHK;

const ENV_RANGE_LIMIT: &str = "OPENCSD_INSTR_RANGE_LIMIT";

/// Decoder state (`m_curr_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    NoSync,
    WaitSync,
    WaitTInfo,
    DecodePkts,
    ResolveElem,
}

/// Pending speculation resolution (`m_elem_res`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ElemRes {
    commit: i32,
    cancel: i32,
    mispredict: bool,
    discard: bool,
}

/// An atom packet (formats 1 to 6).
#[inline(always)]
fn is_atom(t: ocsd_etmv4_i_pkt_type) -> bool {
    matches!(t, ETM4_PKT_I_ATOM_F1 | ETM4_PKT_I_ATOM_F2 | ETM4_PKT_I_ATOM_F3 | ETM4_PKT_I_ATOM_F4 | ETM4_PKT_I_ATOM_F5 | ETM4_PKT_I_ATOM_F6)
}

/// An address packet that carries an address alone (no context).
#[inline(always)]
fn is_plain_addr(t: ocsd_etmv4_i_pkt_type) -> bool {
    matches!(
        t,
        ETM4_PKT_I_ADDR_MATCH
            | ETM4_PKT_I_ADDR_L_32IS0
            | ETM4_PKT_I_ADDR_L_32IS1
            | ETM4_PKT_I_ADDR_L_64IS0
            | ETM4_PKT_I_ADDR_L_64IS1
            | ETM4_PKT_I_ADDR_S_IS0
            | ETM4_PKT_I_ADDR_S_IS1
    )
}

impl ElemRes {
    fn any(&self) -> bool {
        self.commit != 0 || self.cancel != 0 || self.mispredict || self.discard
    }
}

/// Result of an instruction walk (`WP_res_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WpRes {
    NotFound,
    Found,
    Nacc,
}

/// A range of executed instructions (`instr_range_t`).
#[derive(Debug, Clone, Copy, Default)]
struct InstrRange {
    st_addr: ocsd_vaddr_t,
    en_addr: ocsd_vaddr_t,
    num_instr: u32,
}

/// Output element staging, as OpenCSD's `OcsdGenElemStack`: each new
/// element inherits the ISA and PE context of the one before it (these
/// persist from element to element, also across sends and resets).
struct OutElems {
    pending: Vec<(ocsd_trc_index_t, ocsd_generic_trace_elem)>,
    persist: ocsd_generic_trace_elem,
}

impl OutElems {
    fn new() -> Self {
        OutElems { pending: Vec::with_capacity(32), persist: ocsd_generic_trace_elem::default() }
    }

    fn last(&self) -> &ocsd_generic_trace_elem {
        self.pending.last().map(|p| &p.1).unwrap_or(&self.persist)
    }

    /// A new element (`addElem`): type unknown, persistent data copied.
    fn add(&mut self, idx: ocsd_trc_index_t) -> &mut ocsd_generic_trace_elem {
        let src = self.last();
        let e = ocsd_generic_trace_elem { isa: src.isa, context: src.context, ..Default::default() };
        self.pending.push((idx, e));
        let n = self.pending.len() - 1;
        &mut self.pending[n].1
    }

    /// A new INSTR_RANGE element for the walk `r` that ended at `instr`'s
    /// waypoint, written once into its slot (`add` then `set_range`).
    #[inline]
    fn push_range(&mut self, idx: ocsd_trc_index_t, r: &InstrRange, executed: bool, instr: &ocsd_instr_info) {
        let context = self.last().context;
        let flags = range_flag_bits(executed, instr);
        self.push_range_with(idx, r, instr.isa, instr.type_, instr.sub_type, flags, context);
    }

    /// [`OutElems::push_range`] from its parts: the last instruction's
    /// ISA, type and subtype, the element's flags, and the context the
    /// new element copies from the one before it.
    #[inline(always)]
    fn push_range_with(
        &mut self,
        idx: ocsd_trc_index_t,
        r: &InstrRange,
        isa: ocsd_isa,
        last_i_type: ocsd_instr_type,
        last_i_subtype: ocsd_instr_subtype,
        flag_bits: u32,
        context: ocsd_pe_context,
    ) {
        let mut payload = ocsd_gen_elem_payload::default();
        payload.num_instr_range = r.num_instr;
        self.pending.push((
            idx,
            ocsd_generic_trace_elem {
                elem_type: OCSD_GEN_TRC_ELEM_INSTR_RANGE,
                isa,
                st_addr: r.st_addr,
                en_addr: r.en_addr,
                context,
                timestamp: 0,
                cycle_count: 0,
                last_i_type,
                last_i_subtype,
                flag_bits,
                payload,
                ptr_extended_data: std::ptr::null(),
            },
        ));
    }

    fn add_type(&mut self, idx: ocsd_trc_index_t, t: ocsd_gen_trc_elem_t) -> &mut ocsd_generic_trace_elem {
        let e = self.add(idx);
        e.elem_type = t;
        e
    }

    /// The current element (`outElem()`).
    fn cur(&mut self) -> &mut ocsd_generic_trace_elem {
        match self.pending.last_mut() {
            Some(p) => &mut p.1,
            None => &mut self.persist,
        }
    }

    fn num_to_send(&self) -> usize {
        self.pending.len()
    }

    fn keep_persistent(&mut self) {
        if let Some((_, e)) = self.pending.last() {
            self.persist.isa = e.isa;
            self.persist.context = e.context;
        }
    }

    /// Drop unsent elements (`resetElemStack`).
    fn reset(&mut self) {
        self.keep_persistent();
        self.pending.clear();
    }

    /// Deliver the staged elements to the queue (`sendElements`).
    fn send(&mut self, q: &mut ElemQueue, trace_id: u8) {
        for (idx, e) in &self.pending {
            q.push(*idx, trace_id, e);
        }
        self.reset();
    }
}

/// An INSTR_RANGE element's flags: last instruction executed, its size
/// and whether it is conditional.
#[inline]
fn range_flag_bits(executed: bool, instr: &ocsd_instr_info) -> u32 {
    range_flags(executed, instr.instr_size, instr.is_conditional != 0)
}

/// [`range_flag_bits`] from the last instruction's size and condition.
#[inline(always)]
fn range_flags(executed: bool, size: u8, cond: bool) -> u32 {
    executed as u32 | ((size as u32 & 0x7) << 1) | ((cond as u32) << 10)
}

/// ETMv4 / ETE instruction trace decoder.
pub struct EtmV4IPktDecoder {
    cfg: EtmV4Config,
    /// The packet whose resolution stopped at the memory-access gate
    /// (the client answered WAIT); FLUSH finishes it.
    cont_pkt: Option<ocsd_etmv4_i_pkt>,
    name: String,
    trace_id: u8,
    op_flags: u32,

    // configuration-derived
    max_spec_depth: i32,
    is_ete: bool,
    ete_has_ts_marker: bool,
    v7m_eret_p0: bool,
    v8m_func_ret: bool,
    /// The configuration is one OpenCSD refuses ([`EtmV4Config::decode_refusal`]).
    cfg_refused: bool,
    comm_trans_p0: bool,
    enabled_cci: bool,
    m_profile: bool,
    range_limit: u32,
    env_aa64_bad_opcode: bool,
    /// A64 bad-opcode check on: the environment setting or
    /// `ETM4_OPFLG_PKTDEC_AA64_OPCODE_CHK` (kept with `op_flags`).
    aa64_chk: bool,
    /// The process-wide A64 bad-opcode check ([`crate::instr::AA64_BAD_OPCODE_ERR`]),
    /// taken as `aa64_chk` at each packet once on.
    aa64_shared: &'static std::sync::atomic::AtomicBool,

    // decode state
    state: State,
    unsync_info: unsync_info_t,
    index_curr_pkt: ocsd_trc_index_t,
    stack: P0Stack,
    res: ElemRes,
    curr_spec_depth: i32,
    need_ctxt: bool,
    need_addr: bool,
    elem_pending_addr: bool,
    prev_overflow: bool,
    is_secure: bool,
    is_64bit: bool,
    last_is: u8,
    ete_first_ts_marker: bool,
    cc_threshold: u32,
    instr: ocsd_instr_info,
    ret_stack: TrcAddrReturnStack,
    /// After a trace info element: no return stack pushes until an address.
    tinfo_wait_addr: bool,
    /// Expected start of the next range (range continuity check).
    next_range_check: Option<ocsd_vaddr_t>,

    out: OutElems,
    /// A `PE_CONTEXT` element was staged since elements last went out:
    /// the memory is told when it goes ([`MemAccess::context_shown`]).
    context_staged: bool,
    mem: MemWindow,
    blocks: BlockCache,
    /// Kept-aside elements during a cancel (reused storage).
    cancel_keep: Vec<P0Elem>,
}

/// Parse an environment value as C's `atoi` would, as an unsigned limit.
fn atoi_u32(s: &str) -> u32 {
    let s = s.trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for c in digits.bytes() {
        if !c.is_ascii_digit() {
            break;
        }
        v = (v * 10 + (c - b'0') as i64).min(i32::MAX as i64 + 1);
    }
    let v = if neg { -v } else { v };
    v as i32 as u32
}

impl EtmV4IPktDecoder {
    /// A decoder for `cfg`; `inst_id` numbers it in logs (`DCD_ETMV4_0016`).
    pub fn new(inst_id: i32, cfg: EtmV4Config) -> Self {
        let range_limit = std::env::var(ENV_RANGE_LIMIT).map(|v| atoi_u32(&v)).unwrap_or(0);
        let env_aa64_bad_opcode = std::env::var_os(crate::instr::ENV_AA64_BAD_OPCODE).is_some();
        Self::with_env(inst_id, cfg, range_limit, env_aa64_bad_opcode)
    }

    /// A decoder with explicit values for the environment settings
    /// (`OPENCSD_INSTR_RANGE_LIMIT`, `OPENCSD_ERR_ON_AA64_BAD_OPCODE`).
    pub fn with_env(inst_id: i32, cfg: EtmV4Config, range_limit: u32, aa64_bad_opcode: bool) -> Self {
        let arch = cfg.arch_version();
        let m_profile = cfg.core_profile() == profile_CortexM;
        let mut instr = ocsd_instr_info::default();
        instr.pe_type.arch = arch;
        instr.pe_type.profile = cfg.core_profile();
        instr.dsb_dmb_waypoints = 0;
        instr.wfi_wfe_branch = cfg.wfi_wfe_branch() as u8;
        instr.track_it_block = 1;
        instr.isa = ocsd_isa_unknown;
        let mut ret_stack = TrcAddrReturnStack::new();
        ret_stack.set_active(cfg.enabled_ret_stack());
        let mut d = EtmV4IPktDecoder {
            cfg,
            name: format!("DCD_ETMV4_{:04}", inst_id),
            trace_id: cfg.trace_id(),
            op_flags: 0,
            max_spec_depth: cfg.max_spec_depth().min(i32::MAX as u32) as i32,
            is_ete: cfg.maj_version() >= 5,
            // timestamps wait for the first timestamp marker only on ETE 1.1
            // and later with TRCIDR0.TSMARK: an ETMv4.6 (which has the
            // marker packet, see the packet processor) sends timestamps
            // from the start, whatever TRCIDR0 bit 23 says
            ete_has_ts_marker: cfg.full_version() >= 0x51 && cfg.regs().reg_idr0 & 0x80_0000 != 0,
            v7m_eret_p0: arch == ARCH_V7 && m_profile,
            cfg_refused: cfg.decode_refusal().is_some(),
            v8m_func_ret: (ARCH_V8..=ARCH_V8_max).contains(&arch) && m_profile,
            comm_trans_p0: cfg.comm_trans_p0(),
            enabled_cci: cfg.enabled_cci(),
            m_profile,
            range_limit,
            env_aa64_bad_opcode: aa64_bad_opcode,
            aa64_chk: aa64_bad_opcode,
            aa64_shared: &crate::instr::AA64_BAD_OPCODE_ERR,
            state: State::NoSync,
            unsync_info: UNSYNC_INIT_DECODER,
            index_curr_pkt: 0,
            stack: P0Stack::new(),
            res: ElemRes::default(),
            curr_spec_depth: 0,
            need_ctxt: true,
            need_addr: true,
            elem_pending_addr: false,
            prev_overflow: false,
            is_secure: true,
            is_64bit: false,
            last_is: 0,
            ete_first_ts_marker: false,
            cc_threshold: 0,
            instr,
            ret_stack,
            tinfo_wait_addr: false,
            next_range_check: None,
            out: OutElems::new(),
            context_staged: false,
            cont_pkt: None,
            mem: MemWindow::new(),
            blocks: BlockCache::new(),
            cancel_keep: Vec::with_capacity(8),
        };
        d.reset_decoder();
        d.unsync_info = UNSYNC_INIT_DECODER;
        d
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The configuration the decoder was built with.
    pub fn config(&self) -> &EtmV4Config {
        &self.cfg
    }

    /// Take the process-wide A64 bad-opcode check from `flag` instead
    /// (tests).
    #[cfg(test)]
    pub(crate) fn set_shared_aa64_check(&mut self, flag: &'static std::sync::atomic::AtomicBool) {
        self.aa64_shared = flag;
    }

    #[inline]
    fn aa64_opcode_chk(&self) -> bool {
        self.aa64_chk
    }

    // ------------------------------------------------------------------
    // state

    fn reset_decoder(&mut self) {
        self.state = State::NoSync;
        self.cont_pkt = None;
        self.is_secure = true;
        self.is_64bit = false;
        self.cc_threshold = 0;
        self.curr_spec_depth = 0;
        self.need_ctxt = true;
        self.need_addr = true;
        self.elem_pending_addr = false;
        self.prev_overflow = false;
        self.stack.clear();
        self.out.reset();
        self.last_is = 0;
        self.res = ElemRes::default();
        self.ete_first_ts_marker = false;
        self.next_range_check = None;
    }

    fn log(&self, log: &mut dyn ErrorLog, sev: ocsd_err_severity_t, err: ocsd_err_t, idx: ocsd_trc_index_t, msg: &str) {
        log.log_error(&self.name, &OcsdError::at(sev, err, idx, self.trace_id, msg));
    }

    /// Log a packet error; unless halting on bad packets, drop to unsynced
    /// and carry on (`handlePacketErr`).
    fn packet_err(&mut self, log: &mut dyn ErrorLog, err: ocsd_err_t, sev: ocsd_err_severity_t, idx: ocsd_trc_index_t, msg: &str, reason: unsync_info_t) -> ocsd_err_t {
        self.log(log, sev, err, idx, msg);
        if self.op_flags & OCSD_OPFLG_PKTDEC_HALT_BAD_PKTS != 0 {
            return err;
        }
        self.reset_decoder();
        self.state = State::NoSync;
        self.unsync_info = reason;
        OCSD_OK
    }

    fn seq_err(&mut self, log: &mut dyn ErrorLog, err: ocsd_err_t, idx: ocsd_trc_index_t, msg: &str) -> ocsd_err_t {
        self.packet_err(log, err, OCSD_ERR_SEV_ERROR, idx, msg, UNSYNC_BAD_PACKET)
    }

    fn bad_packet(&mut self, log: &mut dyn ErrorLog, msg: &str) -> ocsd_err_t {
        let sev = if self.op_flags & OCSD_OPFLG_PKTDEC_ERROR_BAD_PKTS != 0 { OCSD_ERR_SEV_ERROR } else { OCSD_ERR_SEV_WARN };
        let idx = self.index_curr_pkt;
        self.packet_err(log, OCSD_ERR_BAD_DECODE_PKT, sev, idx, msg, UNSYNC_BAD_PACKET)
    }

    fn bad_image(&mut self, log: &mut dyn ErrorLog, idx: ocsd_trc_index_t, msg: &str) -> ocsd_err_t {
        self.packet_err(log, OCSD_ERR_BAD_DECODE_IMAGE, OCSD_ERR_SEV_ERROR, idx, msg, UNSYNC_BAD_IMAGE)
    }

    fn calc_isa(is_64bit: bool, is: u8) -> ocsd_isa {
        if is_64bit {
            ocsd_isa_aarch64
        } else if is == 1 {
            ocsd_isa_thumb2
        } else {
            ocsd_isa_arm
        }
    }

    fn set_instr_addr_isa(&mut self, addr: ocsd_vaddr_t, is: u8) {
        self.instr.instr_addr = addr;
        self.instr.isa = Self::calc_isa(self.is_64bit, is);
    }

    /// Memory space for program reads from the current EL and security
    /// state (`getCurrMemSpace`).
    #[inline]
    fn curr_mem_space(&self) -> ocsd_mem_space_acc_t {
        let ctx = &self.out.last().context;
        if ctx.el_valid() == 0 {
            return if self.is_secure { OCSD_MEM_SPACE_S } else { OCSD_MEM_SPACE_N };
        }
        crate::mem::mem_space_for_el(ctx.security_level, ctx.exception_level)
    }

    fn push_ret(&mut self, addr: ocsd_vaddr_t, isa: ocsd_isa) {
        if !self.tinfo_wait_addr {
            self.ret_stack.push(addr, isa);
        }
    }

    // ------------------------------------------------------------------
    // packet processing

    #[inline(always)]
    fn process_packet(&mut self, pkt: &ocsd_etmv4_i_pkt, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        loop {
            match self.state {
                State::NoSync => {
                    self.out.reset();
                    let idx = self.index_curr_pkt;
                    let e = self.out.add_type(idx, OCSD_GEN_TRC_ELEM_NO_SYNC);
                    e.set_unsync_eot_info(self.unsync_info);
                    self.out.send(ctx.out, self.trace_id);
                    self.state = State::WaitSync;
                }
                State::WaitSync => {
                    if pkt.type_ == ETM4_PKT_I_ASYNC {
                        self.state = State::WaitTInfo;
                    }
                    return resp;
                }
                State::WaitTInfo => {
                    self.need_ctxt = true;
                    self.need_addr = true;
                    if pkt.type_ == ETM4_PKT_I_TRACE_INFO {
                        self.do_trace_info(pkt);
                        self.state = State::DecodePkts;
                        self.ret_stack.flush();
                    } else if self.is_ete && pkt.type_ == ETM4_PKT_I_EVENT {
                        // ETE allows event packets before the first trace info
                        if self.decode_packet(pkt, ctx) != OCSD_OK {
                            resp = OCSD_RESP_FATAL_INVALID_DATA;
                        }
                    }
                    return resp;
                }
                State::DecodePkts => {
                    if is_atom(pkt.type_) {
                        // the most common packet, as decode_packet takes it
                        // (those that leave no trace mostly go to `absorb`)
                        if self.atoms_direct(pkt.atom.num) {
                            resp = self.commit_direct_atoms(pkt.type_, pkt.atom, ctx);
                            if self.state == State::DecodePkts || !resp_is_cont(resp) {
                                return resp;
                            }
                            continue;
                        }
                        self.push_atom_pkt(pkt);
                    } else if self.decode_packet(pkt, ctx) != OCSD_OK {
                        return OCSD_RESP_FATAL_INVALID_DATA;
                    }
                    if self.state != State::ResolveElem {
                        return resp;
                    }
                }
                State::ResolveElem => {
                    resp = self.resolve_elements(ctx);
                    if self.state == State::DecodePkts || !resp_is_cont(resp) {
                        return resp;
                    }
                }
            }
        }
    }

    fn do_trace_info(&mut self, pkt: &ocsd_etmv4_i_pkt) {
        let idx = self.index_curr_pkt;
        self.cc_threshold = pkt.cc_threshold;
        self.curr_spec_depth = pkt.curr_spec_depth.min(i32::MAX as u32) as i32;
        // elements that were in flight at the sync point, for later commits
        // and cancels
        self.stack.push_unseen_uncommitted(self.curr_spec_depth, pkt.type_, idx);
        self.stack.push_no_param(P0Kind::TInfo, false, pkt.type_, idx, false);
        if pkt.trace_info.in_trans_state() != 0 {
            self.stack.push_no_param(P0Kind::TransTraceInit, false, pkt.type_, idx, false);
        }
    }

    /// An address packet's address goes on the stack (`decodePacket`).
    #[inline(always)]
    fn push_addr_pkt(&mut self, pkt: &ocsd_etmv4_i_pkt, idx: ocsd_trc_index_t) {
        self.last_is = pkt.v_addr_ISA;
        self.stack.push_addr(pkt.type_, idx, etmv4_addr_val_t { val: pkt.v_addr.val, isa: pkt.v_addr_ISA });
    }

    /// An atom packet's atoms go on the stack; above the maximum
    /// speculation depth the excess is committed (`decodePacket` for atoms).
    #[inline(always)]
    fn push_atom_pkt(&mut self, pkt: &ocsd_etmv4_i_pkt) {
        self.stack.push_atom(pkt.type_, self.index_curr_pkt, pkt.atom);
        self.curr_spec_depth = self.curr_spec_depth.saturating_add(pkt.atom.num as i32);
        if self.curr_spec_depth > self.max_spec_depth {
            // auto-commit anything above the maximum speculation depth
            self.res.commit = self.curr_spec_depth.saturating_sub(self.max_spec_depth);
        }
        if self.res.any() {
            self.state = State::ResolveElem;
        }
    }

    /// An atom packet's atoms would all be committed at once, before
    /// anything else but an address stacked before them (no speculation,
    /// nothing else stacked, nothing resolving or waiting to go out):
    /// [`Self::commit_direct_atoms`] takes them.
    #[inline(always)]
    fn atoms_direct(&self, num: u8) -> bool {
        num > 0 && self.no_speculation() && self.stack.empty_but_addr() && !self.res.any() && self.out.num_to_send() == 0
    }

    /// Atoms are committed as soon as they are stacked: no speculation
    /// allowed, none in flight.
    #[inline(always)]
    fn no_speculation(&self) -> bool {
        self.max_spec_depth == 0 && self.curr_spec_depth == 0
    }

    /// The next atom packet's atoms are committed as soon as they are
    /// stacked, before anything else: no speculation, nothing stacked.
    #[inline(always)]
    fn atoms_commit_first(&self) -> bool {
        self.no_speculation() && self.stack.is_empty()
    }

    /// An atom packet [`Self::atoms_direct`] accepts, as `push_atom_pkt`
    /// then `resolve_elements` take it, without the round trip through the
    /// stack: the address stacked before it, if any, is committed first
    /// (as `commit_other` takes it; an address is no P0 element and
    /// counts no commit), then the atoms are committed from the packet
    /// (what is left of them after an error goes on the stack as the
    /// commit would have left it), then the resolution goes on from there.
    #[inline(never)]
    fn commit_direct_atoms(&mut self, type_: ocsd_etmv4_i_pkt_type, atom: ocsd_pkt_atom, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        if let Some(P0Elem { kind: P0Kind::Addr, data: P0Data::Addr(a), .. }) = self.stack.pop_back() {
            self.commit_addr(a);
        }
        // push_atom_pkt: every atom above the (zero) speculation depth
        let n = i32::from(atom.num);
        self.curr_spec_depth = n;
        self.res.commit = n;
        self.state = State::ResolveElem;
        // commit_elements, the packet's atoms the only element stacked
        let root_index = self.index_curr_pkt;
        let mut a = atom;
        let mut err = OCSD_OK;
        self.commit_atom_run(&mut a, root_index, ctx, &mut err);
        self.direct_atoms_end(type_, n, a, err, ctx)
    }

    /// The end of [`Self::commit_direct_atoms`], the packet's `n` atoms
    /// committed as far as they went (`a` those left, `err` how it
    /// ended).
    #[inline(always)]
    fn direct_atoms_end(&mut self, type_: ocsd_etmv4_i_pkt_type, n: i32, a: ocsd_pkt_atom, err: ocsd_err_t, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        let root_index = self.index_curr_pkt;
        if self.state == State::NoSync {
            self.res = ElemRes::default();
        } else {
            if a.num > 0 {
                self.stack.push_atom(type_, root_index, a);
            }
            self.commits_made(n);
        }
        // the rest of resolve_elements' commit step (atoms leave nothing
        // to cancel, mispredict or discard), then its loop
        if err != OCSD_OK {
            return OCSD_RESP_FATAL_INVALID_DATA;
        }
        if self.state == State::ResolveElem && !self.res.any() {
            // all committed: the loop's last step, the elements to the
            // client, then back to decoding packets
            if self.out.num_to_send() > 0 && !self.send_step(ctx) {
                return ctx.client_resp();
            }
            self.state = State::DecodePkts;
            return OCSD_RESP_CONT;
        }
        self.resolve_elements(ctx)
    }

    /// Turn a packet into stacked elements (`decodePacket`).
    fn decode_packet(&mut self, pkt: &ocsd_etmv4_i_pkt, ctx: &mut DecodeCtx) -> ocsd_err_t {
        let idx = self.index_curr_pkt;
        let t = pkt.type_;
        let mut err = OCSD_OK;
        let mut is_addr = false;
        match t {
            ETM4_PKT_I_ASYNC | ETM4_PKT_I_IGNORE => {}
            ETM4_PKT_I_TRACE_INFO => {
                self.stack.push_no_param(P0Kind::TInfo, false, t, idx, false);
            }
            ETM4_PKT_I_TRACE_ON => self.stack.push_no_param(P0Kind::TrcOn, false, t, idx, false),
            t if is_atom(t) => {
                self.push_atom_pkt(pkt);
                return OCSD_OK;
            }
            ETM4_PKT_I_CTXT => {
                self.stack.push_context(t, idx, pkt.context, self.last_is, false);
            }
            t if is_plain_addr(t) => {
                self.push_addr_pkt(pkt, idx);
                is_addr = true;
            }
            ETM4_PKT_I_ADDR_CTXT_L_64IS0 | ETM4_PKT_I_ADDR_CTXT_L_64IS1 | ETM4_PKT_I_ADDR_CTXT_L_32IS0
            | ETM4_PKT_I_ADDR_CTXT_L_32IS1 => {
                self.last_is = pkt.v_addr_ISA;
                self.stack.push_context(t, idx, pkt.context, self.last_is, false);
                self.stack.push_addr(t, idx, etmv4_addr_val_t { val: pkt.v_addr.val, isa: pkt.v_addr_ISA });
                is_addr = true;
            }
            ETE_PKT_I_SRC_ADDR_MATCH
            | ETE_PKT_I_SRC_ADDR_S_IS0
            | ETE_PKT_I_SRC_ADDR_S_IS1
            | ETE_PKT_I_SRC_ADDR_L_32IS0
            | ETE_PKT_I_SRC_ADDR_L_32IS1
            | ETE_PKT_I_SRC_ADDR_L_64IS0
            | ETE_PKT_I_SRC_ADDR_L_64IS1 => {
                self.last_is = pkt.v_addr_ISA;
                self.stack.push_src_addr(t, idx, etmv4_addr_val_t { val: pkt.v_addr.val, isa: pkt.v_addr_ISA });
                self.curr_spec_depth = self.curr_spec_depth.saturating_add(1);
            }
            ETM4_PKT_I_EXCEPT => {
                let ei = pkt.exception_info;
                self.stack.push_except(t, idx, ei.addr_interp() == 0x2, ei.exceptionType() as u16);
                // wait for the following address before counting it
                self.elem_pending_addr = true;
            }
            ETM4_PKT_I_EXCEPT_RTN => {
                self.stack.push_no_param(P0Kind::ExcepRet, self.v7m_eret_p0, t, idx, false);
                if self.v7m_eret_p0 {
                    self.curr_spec_depth = self.curr_spec_depth.saturating_add(1);
                }
            }
            ETM4_PKT_I_FUNC_RET => {
                if self.v8m_func_ret {
                    self.stack.push_no_param(P0Kind::FuncRet, true, t, idx, false);
                    self.curr_spec_depth = self.curr_spec_depth.saturating_add(1);
                }
            }
            ETM4_PKT_I_EVENT => self.stack.push_params(P0Kind::Event, false, t, idx, &[pkt.event_val as u32]),
            ETM4_PKT_I_CCNT_F1 | ETM4_PKT_I_CCNT_F2 | ETM4_PKT_I_CCNT_F3 => {
                self.stack.push_params(P0Kind::Cc, false, t, idx, &[pkt.cycle_count]);
                // OpenCSD takes the packet's commit count whether or not this
                // packet carried one: without a commit field (TRCIDR0.COMMOPT
                // set) that is the count of the last commit-carrying packet
                // since the processor last reset.
                self.res.commit = pkt.commit_elements.min(i32::MAX as u32) as i32;
            }
            ETM4_PKT_I_TIMESTAMP => {
                let ts = pkt.ts.timestamp;
                let lo = ts as u32;
                let hi = (ts >> 32) as u32;
                if self.enabled_cci {
                    self.stack.push_params(P0Kind::TsCc, false, t, idx, &[lo, hi, pkt.cycle_count]);
                } else {
                    self.stack.push_params(P0Kind::Ts, false, t, idx, &[lo, hi]);
                }
            }
            ETE_PKT_I_TS_MARKER => {
                self.stack.push_marker(t, idx, trace_marker_payload_t { type_: ELEM_MARKER_TS, value: 0 });
            }
            ETM4_PKT_I_BAD_SEQUENCE => err = self.bad_packet(ctx.log, "Bad byte sequence in packet."),
            ETM4_PKT_I_BAD_TRACEMODE => err = self.bad_packet(ctx.log, "Invalid packet type for trace mode."),
            ETM4_PKT_I_RESERVED => err = self.bad_packet(ctx.log, "Reserved packet header"),
            ETM4_PKT_I_MISPREDICT | ETM4_PKT_I_CANCEL_F1_MISPRED | ETM4_PKT_I_CANCEL_F2 | ETM4_PKT_I_CANCEL_F3 => {
                self.res.mispredict = true;
                if pkt.atom.num > 0 {
                    self.stack.push_atom(t, idx, pkt.atom);
                    self.curr_spec_depth = self.curr_spec_depth.saturating_add(pkt.atom.num as i32);
                }
                self.res.cancel = pkt.cancel_elements.min(i32::MAX as u32) as i32;
            }
            ETM4_PKT_I_CANCEL_F1 => self.res.cancel = pkt.cancel_elements.min(i32::MAX as u32) as i32,
            ETM4_PKT_I_COMMIT => self.res.commit = pkt.commit_elements.min(i32::MAX as u32) as i32,
            ETM4_PKT_I_OVERFLOW | ETM4_PKT_I_DISCARD => {
                if t == ETM4_PKT_I_OVERFLOW {
                    self.prev_overflow = true;
                }
                self.curr_spec_depth = 0;
                self.res.discard = true;
            }
            ETM4_PKT_I_Q => {
                // OpenCSD keeps the count in an int: counts above i32::MAX wrap
                // negative, walk no instructions and are reported back as the
                // original unsigned value in the I_RANGE_NOPATH element.
                let count = pkt.Q_pkt.q_count as i32;
                let addr = if pkt.Q_pkt.addr_present() != 0 {
                    self.curr_spec_depth = self.curr_spec_depth.saturating_add(1);
                    Some(etmv4_addr_val_t { val: pkt.v_addr.val, isa: pkt.v_addr_ISA })
                } else {
                    self.elem_pending_addr = true;
                    None
                };
                self.stack.push_front(P0Elem::new(P0Kind::Q, true, t, idx, P0Data::Q { count, addr }));
            }
            ETE_PKT_I_TRANS_ST => {
                self.stack.push_no_param(P0Kind::TransStart, self.comm_trans_p0, t, idx, false);
                if self.comm_trans_p0 {
                    self.curr_spec_depth = self.curr_spec_depth.saturating_add(1);
                }
            }
            ETE_PKT_I_TRANS_COMMIT => self.stack.push_no_param(P0Kind::TransCommit, false, t, idx, false),
            ETE_PKT_I_TRANS_FAIL => self.stack.push_no_param(P0Kind::TransFail, false, t, idx, false),
            ETE_PKT_I_ITE => {
                self.stack.push_ite(t, idx, trace_sw_ite_t { el: pkt.ite_pkt.el, value: pkt.ite_pkt.value });
            }
            ETM4_PKT_I_COND_FLUSH
            | ETM4_PKT_I_COND_I_F1
            | ETM4_PKT_I_COND_I_F2
            | ETM4_PKT_I_COND_I_F3
            | ETM4_PKT_I_COND_RES_F1
            | ETM4_PKT_I_COND_RES_F2
            | ETM4_PKT_I_COND_RES_F3
            | ETM4_PKT_I_COND_RES_F4
            | ETM4_PKT_I_NUM_DS_MKR
            | ETM4_PKT_I_UNNUM_DS_MKR => {
                err = self.packet_err(
                    ctx.log,
                    OCSD_ERR_UNSUPP_DECODE_PKT,
                    OCSD_ERR_SEV_ERROR,
                    idx,
                    "Data trace related, unsupported packet type.",
                    UNSYNC_BAD_PACKET,
                );
            }
            // (ETE's PE reset packet among them: OpenCSD 1.8.0's decoder
            // has no case for it)
            _ => err = self.bad_packet(ctx.log, "Unknown packet type."),
        }

        if self.state == State::NoSync {
            // a bad packet reset the decoder
            return err;
        }

        // an address completes an element that was waiting for it
        if is_addr && self.elem_pending_addr {
            self.curr_spec_depth = self.curr_spec_depth.saturating_add(1);
            self.elem_pending_addr = false;
        }

        if self.curr_spec_depth > self.max_spec_depth {
            // auto-commit anything above the maximum speculation depth
            self.res.commit = self.curr_spec_depth.saturating_sub(self.max_spec_depth);
        }

        if err == OCSD_OK && self.res.any() {
            self.state = State::ResolveElem;
        }
        err
    }

    /// A resolution step ended: its elements reach the client before the
    /// next step reads memory (OpenCSD's timing), through the memory-access
    /// gate. False: the client stopped the decode there.
    #[inline(always)]
    fn send_step(&mut self, ctx: &mut DecodeCtx) -> bool {
        let sent = ctx.send_and_gate(&self.out.pending, self.trace_id);
        self.out.reset();
        self.context_sent(ctx.mem);
        sent
    }

    #[inline(never)]
    fn resolve_elements(&mut self, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        loop {
            if self.out.num_to_send() > 0 {
                if !self.send_step(ctx) {
                    // suspended in ResolveElem: FLUSH resumes here
                    return ctx.client_resp();
                }
            } else if self.res.any() {
                let mut err = OCSD_OK;
                if self.res.commit != 0 {
                    err = self.commit_elements(ctx);
                }
                // a context change flushes output part-way through a commit
                if self.res.commit == 0 {
                    if err == OCSD_OK && self.res.cancel != 0 {
                        err = self.cancel_elements(ctx.log);
                    }
                    if err == OCSD_OK && self.res.mispredict {
                        err = self.mispredict_atom(ctx.log);
                    }
                    if err == OCSD_OK && self.res.discard {
                        err = self.discard_elements();
                    }
                }
                if err != OCSD_OK {
                    resp = OCSD_RESP_FATAL_INVALID_DATA;
                }
            }
            if !resp_is_cont(resp) {
                return resp;
            }
            if self.out.num_to_send() == 0 && !self.res.any() {
                if self.state == State::ResolveElem {
                    self.state = State::DecodePkts;
                }
                return resp;
            }
        }
    }

    // ------------------------------------------------------------------
    // speculation resolution

    #[inline]
    fn commit_elements(&mut self, ctx: &mut DecodeCtx) -> ocsd_err_t {
        let num_commit_req = self.res.commit;
        let mut context_flush = false;
        let mut err = OCSD_OK;
        self.out.reset();

        while self.res.commit > 0 && err == OCSD_OK && !context_flush {
            let Some(kind) = self.stack.back().map(|b| b.kind) else {
                // OpenCSD 1.8.0 reports this overrun at trace index 0
                err = self.seq_err(ctx.log, OCSD_ERR_COMMIT_PKT_OVERRUN, 0, "Not enough elements to commit");
                break;
            };
            let pop = if kind == P0Kind::Atom {
                self.commit_atoms(ctx, &mut err)
            } else {
                self.commit_other(ctx, &mut err, &mut context_flush)
            };
            if pop {
                self.stack.pop_back();
            }
            if self.state == State::NoSync {
                // reset by an error: nothing more to commit
                self.res = ElemRes::default();
                return err;
            }
        }
        self.commits_made(num_commit_req);
        err
    }

    /// After a commit of `num_commit_req` elements: what was committed
    /// leaves the speculation depth.
    #[inline(always)]
    fn commits_made(&mut self, num_commit_req: i32) {
        self.res.commit = self.res.commit.max(0);
        self.curr_spec_depth = self.curr_spec_depth.saturating_sub(num_commit_req.saturating_sub(self.res.commit));
    }

    /// Commit the oldest stacked element when it is not an atom element.
    /// Returns whether it is to be popped.
    #[inline(never)]
    fn commit_other(&mut self, ctx: &mut DecodeCtx, err: &mut ocsd_err_t, context_flush: &mut bool) -> bool {
        let Some(back) = self.stack.back().copied() else { return false };
        let mut pop = true;
        match back.kind {
            P0Kind::Atom => pop = self.commit_atoms(ctx, err),
            P0Kind::TrcOn => {
                self.next_range_check = None;
                let reason = if self.prev_overflow { TRACE_ON_OVERFLOW } else { TRACE_ON_NORMAL };
                let e = self.out.add_type(back.root_index, OCSD_GEN_TRC_ELEM_TRACE_ON);
                e.set_trace_on_reason(reason);
                self.prev_overflow = false;
                self.ret_stack.flush();
            }
            P0Kind::Addr => {
                if let P0Data::Addr(a) = back.data {
                    self.commit_addr(a);
                } else {
                    self.ret_stack.clear_pop_pending();
                    self.tinfo_wait_addr = false;
                }
            }
            P0Kind::Ctxt => {
                if let P0Data::Ctxt(c, is) = back.data {
                    if c.updated() != 0 {
                        self.out.add(back.root_index);
                        self.update_context(&c, is);
                        *context_flush = true;
                        // OpenCSD drops this trace ID's cached memory on a context change
                        self.mem.release(ctx.mem);
                        ctx.mem.invalidate_cache(self.trace_id);
                        // memory images selected by context follow the trace's context
                        let id = (c.updated_c() != 0).then_some(c.ctxtID);
                        ctx.mem.update_context(self.trace_id, MemContext { context_id: id, vmid: (c.updated_v() != 0).then_some(c.VMID) });
                    }
                }
            }
            P0Kind::Event | P0Kind::Ts | P0Kind::Cc | P0Kind::TsCc => self.process_ts_cc_event(&back),
            P0Kind::Marker => self.process_marker(&back),
            P0Kind::Excep => {
                *err = self.return_stack_pop(ctx.log);
                if *err == OCSD_OK && self.state != State::NoSync {
                    self.next_range_check = None;
                    *err = self.process_exception(ctx);
                    if self.state != State::NoSync {
                        self.res.commit -= 1;
                    } else if *err == OCSD_OK {
                        // OpenCSD counts the exception as committed even
                        // when processing it reset the decoder: the
                        // count drops below zero, the emptied stack is
                        // then short of elements and a commit overrun is
                        // reported (and the decoder reset) as well.
                        *err = self.seq_err(ctx.log, OCSD_ERR_COMMIT_PKT_OVERRUN, 0, "Not enough elements to commit");
                    }
                }
                if self.state == State::NoSync {
                    pop = false;
                }
            }
            P0Kind::ExcepRet => {
                self.next_range_check = None;
                self.out.add_type(back.root_index, OCSD_GEN_TRC_ELEM_EXCEPTION_RET);
                if back.is_p0 {
                    self.res.commit -= 1;
                }
            }
            P0Kind::FuncRet => {
                if back.is_p0 {
                    self.res.commit -= 1;
                }
            }
            P0Kind::SrcAddr => {
                self.next_range_check = None;
                *err = self.process_source_address(&back, ctx);
                if self.state != State::NoSync {
                    self.res.commit -= 1;
                }
                if self.state == State::NoSync {
                    pop = false;
                }
            }
            P0Kind::Q => {
                self.next_range_check = None;
                *err = self.process_q_element(&back, ctx);
                if self.state != State::NoSync {
                    self.res.commit -= 1;
                }
                if self.state == State::NoSync || *err != OCSD_OK {
                    pop = false;
                }
            }
            P0Kind::TransStart | P0Kind::TransCommit | P0Kind::TransFail | P0Kind::TransTraceInit => {
                if back.kind == P0Kind::TransStart && self.comm_trans_p0 {
                    self.res.commit -= 1;
                }
                self.next_range_check = None;
                self.process_trans(&back);
            }
            P0Kind::Ite => self.process_ite(&back),
            P0Kind::UnseenUncommitted => {
                let mut elem = back;
                self.res.commit -= elem.take_count(self.res.commit);
                if !elem.count_is_empty() {
                    pop = false;
                    if let Some(b) = self.stack.back_mut() {
                        *b = elem;
                    }
                }
            }
            P0Kind::TInfo => {
                self.tinfo_wait_addr = true;
                self.ret_stack.flush();
            }
            P0Kind::Unknown | P0Kind::Overflow => {}
        }
        pop
    }

    /// Commit an address element: the next instruction is there, the
    /// return stack pops nothing for it.
    #[inline(always)]
    fn commit_addr(&mut self, a: etmv4_addr_val_t) {
        self.ret_stack.clear_pop_pending();
        self.tinfo_wait_addr = false;
        self.set_instr_addr_isa(a.val, a.isa);
        self.need_addr = false;
    }

    /// Commit atoms of the oldest stacked element, an atom element: its
    /// atoms are taken into a local and written back once (nothing while
    /// they are processed reads the stack). Returns whether the element is
    /// used up and is to be popped.
    #[inline(always)]
    fn commit_atoms(&mut self, ctx: &mut DecodeCtx, err: &mut ocsd_err_t) -> bool {
        let Some(back) = self.stack.back() else { return false };
        let root_index = back.root_index;
        let P0Data::Atom(mut a) = back.data else { return true };
        self.commit_atom_run(&mut a, root_index, ctx, err);
        if self.state == State::NoSync {
            // after a reset by an error the stack is already empty
            return false;
        }
        if a.num == 0 {
            return true;
        }
        if let Some(P0Elem { data: P0Data::Atom(b), .. }) = self.stack.back_mut() {
            *b = a;
        }
        false
    }

    /// Commit the atoms of `a` (of the element at `root_index`) while
    /// commits are due, without error, and the decoder stays in sync.
    #[inline(always)]
    fn commit_atom_run(&mut self, a: &mut ocsd_pkt_atom, root_index: ocsd_trc_index_t, ctx: &mut DecodeCtx, err: &mut ocsd_err_t) {
        // the memory space is that of the current context, which atoms
        // do not change
        let space = self.curr_mem_space();
        // the common case: a run of atoms whose blocks are replayed
        self.commit_replayed_atoms(a, root_index, space, ctx.mem);
        self.commit_atom_steps(a, root_index, space, ctx, err);
    }

    /// [`Self::commit_atom_run`] atom by atom.
    #[inline(always)]
    fn commit_atom_steps(&mut self, a: &mut ocsd_pkt_atom, root_index: ocsd_trc_index_t, space: ocsd_mem_space_acc_t, ctx: &mut DecodeCtx, err: &mut ocsd_err_t) {
        while self.res.commit > 0 && *err == OCSD_OK && a.num > 0 {
            if (self.need_ctxt || self.need_addr) && !self.ret_stack.pop_pending() {
                // no address or context to follow from (e.g. after a memory
                // read failed): the atoms are committed without output, and
                // nothing in that changes these flags, so all at once
                let k = (self.res.commit.min(i32::from(a.num))) as u8;
                a.num -= k;
                a.En_bits = a.En_bits.checked_shr(u32::from(k)).unwrap_or(0);
                self.res.commit -= i32::from(k);
                continue;
            }
            let atom = if a.En_bits & 1 != 0 { ATOM_E } else { ATOM_N };
            a.num -= 1;
            a.En_bits >>= 1;
            if self.ret_stack.pop_pending() {
                *err = self.return_stack_pop_pending(ctx.log);
                if *err != OCSD_OK || self.state == State::NoSync {
                    break;
                }
            }
            if !self.need_ctxt && !self.need_addr {
                *err = self.process_atom(atom, root_index, space, ctx);
                if self.state == State::NoSync {
                    break;
                }
            }
            self.res.commit -= 1;
        }
    }

    #[inline(never)]
    fn cancel_elements(&mut self, log: &mut dyn ErrorLog) -> ocsd_err_t {
        let num_cancel_req = self.res.cancel;
        let mut err = OCSD_OK;
        let mut stack_done = false;
        self.cancel_keep.clear();
        while self.res.cancel > 0 {
            if !stack_done {
                match self.stack.front_mut() {
                    None => stack_done = true,
                    Some(front) => {
                        if front.is_p0 {
                            if front.kind == P0Kind::Atom {
                                let n = front.atom_cancel_newest(self.res.cancel);
                                self.res.cancel -= n;
                                if front.atom_is_empty() {
                                    self.stack.pop_front();
                                }
                            } else if front.kind == P0Kind::UnseenUncommitted {
                                let n = front.take_count(self.res.cancel);
                                self.res.cancel -= n;
                                if front.count_is_empty() {
                                    self.stack.pop_front();
                                }
                            } else {
                                self.res.cancel -= 1;
                                self.stack.pop_front();
                            }
                        } else {
                            match front.kind {
                                P0Kind::Event | P0Kind::Ts | P0Kind::Cc | P0Kind::TsCc | P0Kind::Marker | P0Kind::Ite => {
                                    if let Some(e) = self.stack.pop_front() {
                                        self.cancel_keep.push(e);
                                    }
                                }
                                _ => {
                                    self.stack.pop_front();
                                }
                            }
                        }
                        if self.stack.is_empty() {
                            stack_done = true;
                        }
                    }
                }
            } else {
                let idx = self.index_curr_pkt;
                err = self.seq_err(log, OCSD_ERR_COMMIT_PKT_OVERRUN, idx, "Not enough elements to cancel");
                self.res.cancel = 0;
                break;
            }
        }
        // put back what the cancel does not affect, newest at the front;
        // as in OpenCSD this happens even when an overrun reset the decoder,
        // so those elements wait on the emptied stack for the next sync
        while let Some(e) = self.cancel_keep.pop() {
            self.stack.push_front(e);
        }
        if self.state == State::NoSync {
            return err;
        }
        self.curr_spec_depth = self.curr_spec_depth.saturating_sub(num_cancel_req.saturating_sub(self.res.cancel));
        err
    }

    #[inline(never)]
    fn mispredict_atom(&mut self, log: &mut dyn ErrorLog) -> ocsd_err_t {
        let mut found = false;
        let mut i = 0;
        while let Some(e) = self.stack.get_mut(i) {
            match e.kind {
                P0Kind::Atom => {
                    e.atom_mispredict_newest();
                    found = true;
                    break;
                }
                P0Kind::Addr => {
                    // addresses between the mispredict and its atom are void
                    self.stack.remove(i);
                }
                P0Kind::UnseenUncommitted => {
                    // mispredict of an element from before the sync point
                    found = true;
                    break;
                }
                _ => i += 1,
            }
        }
        let mut err = OCSD_OK;
        if !found {
            let idx = self.index_curr_pkt;
            err = self.seq_err(log, OCSD_ERR_COMMIT_PKT_OVERRUN, idx, "Not found mispredict atom");
        }
        self.res.mispredict = false;
        err
    }

    #[inline(never)]
    fn discard_elements(&mut self) -> ocsd_err_t {
        // output the timestamps, cycle counts, events and markers still
        // stacked, oldest first, and drop the rest: instrumentation (ITE)
        // elements too, as OpenCSD 1.8.0 drops them here (its test for
        // them repeats the marker's, so they go where nothing is made of
        // them)
        while let Some(e) = self.stack.pop_back() {
            match e.kind {
                P0Kind::Marker => self.process_marker(&e),
                _ => self.process_ts_cc_event(&e),
            }
        }
        self.res = ElemRes::default();
        self.curr_spec_depth = 0;
        self.state = State::NoSync;
        self.unsync_info = if self.prev_overflow { UNSYNC_OVERFLOW } else { UNSYNC_DISCARD };
        self.need_ctxt = true;
        self.need_addr = true;
        self.elem_pending_addr = false;
        OCSD_OK
    }

    fn commit_elem_on_eot(&mut self) {
        if self.out.num_to_send() == 0 {
            self.out.reset();
        }
        while let Some(e) = self.stack.back().copied() {
            match e.kind {
                P0Kind::Unknown | P0Kind::Atom | P0Kind::TrcOn | P0Kind::Excep | P0Kind::ExcepRet | P0Kind::Overflow | P0Kind::Q
                | P0Kind::UnseenUncommitted => self.stack.clear(),
                P0Kind::TransStart => {
                    if self.comm_trans_p0 {
                        self.stack.clear();
                    }
                }
                P0Kind::TransFail | P0Kind::TransCommit => {
                    if self.max_spec_depth == 0 || self.curr_spec_depth == 0 {
                        self.process_trans(&e);
                    }
                }
                P0Kind::Event | P0Kind::Ts | P0Kind::Cc | P0Kind::TsCc => self.process_ts_cc_event(&e),
                P0Kind::Marker => self.process_marker(&e),
                P0Kind::Ite => self.process_ite(&e),
                _ => {}
            }
            self.stack.pop_back();
        }
        let reason = if self.prev_overflow { UNSYNC_OVERFLOW } else { UNSYNC_EOT };
        let idx = self.index_curr_pkt;
        let e = self.out.add_type(idx, OCSD_GEN_TRC_ELEM_EO_TRACE);
        e.set_unsync_eot_info(reason);
    }

    // ------------------------------------------------------------------
    // element output

    /// After staged elements went to the client (or its queue).
    #[inline]
    fn context_sent(&mut self, mem: &mut dyn MemAccess) {
        if self.context_staged {
            self.context_staged = false;
            mem.context_shown(self.trace_id);
        }
    }

    fn update_context(&mut self, c: &etmv4_context_t, is: u8) {
        self.context_staged = true;
        self.is_64bit = c.SF() != 0;
        self.is_secure = c.NS() == 0;
        let isa = Self::calc_isa(self.is_64bit, is);
        let e = self.out.cur();
        e.elem_type = OCSD_GEN_TRC_ELEM_PE_CONTEXT;
        e.flag_bits = 0;
        e.context.set_bits64(c.SF());
        e.context.security_level = match (c.NSE() != 0, c.NS() != 0) {
            (true, true) => ocsd_sec_realm,
            (true, false) => ocsd_sec_root,
            (false, true) => ocsd_sec_nonsecure,
            (false, false) => ocsd_sec_secure,
        };
        e.context.exception_level = c.EL() as ocsd_ex_level;
        e.context.set_el_valid(1);
        if c.updated_c() != 0 {
            e.context.set_ctxt_id_valid(1);
            e.context.context_id = c.ctxtID;
        }
        if c.updated_v() != 0 {
            e.context.set_vmid_valid(1);
            e.context.vmid = c.VMID;
        }
        e.isa = isa;
        self.instr.isa = isa;
        self.need_ctxt = false;
    }

    fn process_ts_cc_event(&mut self, e: &P0Elem) {
        let permit_ts = !self.ete_has_ts_marker || self.ete_first_ts_marker;
        match e.kind {
            P0Kind::Event => {
                let o = self.out.add_type(e.root_index, OCSD_GEN_TRC_ELEM_EVENT);
                o.set_trace_event(trace_event_t { ev_type: EVENT_NUMBERED, ev_number: e.param(0) as u16 });
            }
            P0Kind::Ts | P0Kind::TsCc if permit_ts => {
                let o = self.out.add_type(e.root_index, OCSD_GEN_TRC_ELEM_TIMESTAMP);
                o.timestamp = e.param(0) as u64 | ((e.param(1) as u64) << 32);
                if e.kind == P0Kind::TsCc {
                    o.cycle_count = e.param(2);
                    o.set_has_cc(1);
                }
            }
            P0Kind::Cc => {
                let o = self.out.add_type(e.root_index, OCSD_GEN_TRC_ELEM_CYCLE_COUNT);
                o.cycle_count = e.param(0);
                o.set_has_cc(1);
            }
            _ => {}
        }
    }

    fn process_marker(&mut self, e: &P0Elem) {
        if let P0Data::Marker(m) = e.data {
            if self.ete_has_ts_marker && m.type_ == ELEM_MARKER_TS {
                self.ete_first_ts_marker = true;
            }
            let o = self.out.add_type(e.root_index, OCSD_GEN_TRC_ELEM_SYNC_MARKER);
            o.set_sync_marker(m);
        }
    }

    fn process_trans(&mut self, e: &P0Elem) {
        let t = match e.kind {
            P0Kind::TransTraceInit => OCSD_MEM_TRANS_TRACE_INIT,
            P0Kind::TransStart => OCSD_MEM_TRANS_START,
            P0Kind::TransCommit => OCSD_MEM_TRANS_COMMIT,
            _ => OCSD_MEM_TRANS_FAIL,
        };
        let o = self.out.add_type(e.root_index, OCSD_GEN_TRC_ELEM_MEMTRANS);
        o.set_mem_trans(t);
    }

    fn process_ite(&mut self, e: &P0Elem) {
        if let P0Data::Ite(ite) = e.data {
            let o = self.out.add_type(e.root_index, OCSD_GEN_TRC_ELEM_INSTRUMENTATION);
            o.set_sw_ite(ite);
        }
    }

    fn set_range(e: &mut ocsd_generic_trace_elem, r: &InstrRange, executed: bool, instr: &mut ocsd_instr_info) {
        e.elem_type = OCSD_GEN_TRC_ELEM_INSTR_RANGE;
        e.flag_bits = 0;
        e.set_last_instr_exec(executed as u32);
        e.last_i_type = instr.type_;
        e.last_i_subtype = instr.sub_type;
        e.set_last_instr_sz(instr.instr_size as u32);
        e.isa = instr.isa;
        e.set_last_instr_cond(instr.is_conditional as u32 & 1);
        e.st_addr = r.st_addr;
        e.en_addr = r.en_addr;
        e.set_num_instr_range(r.num_instr);
        if executed {
            instr.isa = instr.next_isa;
        }
    }

    /// Make the current output element an ADDR_NACC at `addr`.
    fn set_nacc(&mut self, addr: ocsd_vaddr_t) {
        let space = self.curr_mem_space();
        let e = self.out.cur();
        e.elem_type = OCSD_GEN_TRC_ELEM_ADDR_NACC;
        e.flag_bits = 0;
        e.st_addr = addr;
        e.set_exception_number(space as u32);
    }

    #[inline]
    fn return_stack_pop(&mut self, log: &mut dyn ErrorLog) -> ocsd_err_t {
        if self.ret_stack.pop_pending() {
            return self.return_stack_pop_pending(log);
        }
        OCSD_OK
    }

    fn return_stack_pop_pending(&mut self, log: &mut dyn ErrorLog) -> ocsd_err_t {
        {
            let mut isa = self.instr.isa;
            let addr = self.ret_stack.pop(&mut isa);
            if self.ret_stack.overflow() {
                return self.seq_err(log, OCSD_ERR_RET_STACK_OVERFLOW, OCSD_BAD_TRC_INDEX, "Trace Return Stack Overflow.");
            }
            self.instr.instr_addr = addr;
            self.instr.isa = isa;
            self.need_addr = false;
        }
        OCSD_OK
    }

    fn n_atom_check(&self, atom: ocsd_atm_val) -> bool {
        if atom != ATOM_N || self.instr.is_conditional != 0 {
            return false;
        }
        let f = self.op_flags;
        if f & (OCSD_OPFLG_N_UNCOND_DIR_BR_CHK | OCSD_OPFLG_STRICT_N_UNCOND_BR_CHK) == 0 {
            return false;
        }
        if f & OCSD_OPFLG_N_UNCOND_CHK_NO_THUMB != 0 && self.instr.isa == ocsd_isa_thumb2 {
            return false;
        }
        match self.instr.type_ {
            OCSD_INSTR_BR => true,
            OCSD_INSTR_BR_INDIRECT => f & OCSD_OPFLG_STRICT_N_UNCOND_BR_CHK != 0,
            _ => false,
        }
    }

    #[inline(always)]
    fn process_atom(&mut self, atom: ocsd_atm_val, root_index: ocsd_trc_index_t, space: ocsd_mem_space_acc_t, ctx: &mut DecodeCtx) -> ocsd_err_t {
        // the common case: a cached block at the current address is
        // replayed and gives one range element, written once
        if self.instr.isa == ocsd_isa_aarch64 && self.range_limit == 0 {
            if let Some(range) = self.replay_block(space, self.aa64_chk) {
                return self.atom_range_found(atom, root_index, &range, ctx.log);
            }
            return self.process_atom_primed(atom, root_index, space, ctx);
        }
        self.process_atom_walk(atom, root_index, ctx)
    }

    /// An A64 atom whose block the window does not hold: the block after
    /// the window's first read at the address (a branch into another cache
    /// page), as the walk would begin, else the walk.
    #[inline(never)]
    fn process_atom_primed(&mut self, atom: ocsd_atm_val, root_index: ocsd_trc_index_t, space: ocsd_mem_space_acc_t, ctx: &mut DecodeCtx) -> ocsd_err_t {
        match self.replay_block_primed(ctx.mem, space, self.aa64_chk) {
            Ok(Some(range)) => self.atom_range_found(atom, root_index, &range, ctx.log),
            Ok(None) if self.mem.take_primed_short(self.instr.instr_addr, space) => {
                // no instruction at the address: the walk would stop at
                // its first fetch, memory not accessible, with no range
                let a = self.instr.instr_addr;
                self.atom_without_waypoint(root_index, &InstrRange { st_addr: a, en_addr: a, num_instr: 0 }, WpRes::Nacc);
                OCSD_OK
            }
            Ok(None) => self.process_atom_walk(atom, root_index, ctx),
            Err(e) => self.atom_walk_failed(e, root_index, ctx.log),
        }
    }

    /// An atom whose walk reached its waypoint at `self.instr`: follow the
    /// branch as the atom says and output the range.
    #[inline(always)]
    fn atom_range_found(&mut self, atom: ocsd_atm_val, root_index: ocsd_trc_index_t, range: &InstrRange, log: &mut dyn ErrorLog) -> ocsd_err_t {
        let next_addr = self.instr.instr_addr;
        let mut ete_eret = false;
        if self.n_atom_check(atom) {
            // (the element stays empty: kept only when halting on errors)
            self.out.add(root_index);
            return self.bad_image(log, root_index, "Bad program image - N Atom on unconditional branch.\n");
        }
        let executed = atom == ATOM_E;
        if executed {
            match self.instr.type_ {
                OCSD_INSTR_BR => {
                    self.instr.instr_addr = self.instr.branch_addr;
                    if self.instr.is_link != 0 {
                        self.push_ret(next_addr, self.instr.isa);
                    }
                    // a branch taken ends a T32 IT block
                    self.instr.thumb_it_conditions = 0;
                }
                OCSD_INSTR_BR_INDIRECT => {
                    self.need_addr = true;
                    if self.instr.is_link != 0 {
                        self.push_ret(next_addr, self.instr.isa);
                    }
                    self.instr.thumb_it_conditions = 0;
                    self.ret_stack.set_pop_pending();
                    // ETE has no exception return packets: an ERET
                    // taken gives the element
                    if self.is_ete && self.instr.sub_type == OCSD_S_INSTR_V8_ERET {
                        ete_eret = true;
                    }
                }
                _ => {}
            }
        }
        self.out.push_range(root_index, range, executed, &self.instr);
        if executed {
            self.instr.isa = self.instr.next_isa;
        }

        if self.op_flags & OCSD_OPFLG_CHK_RANGE_CONTINUE != 0 {
            if let Some(exp) = self.next_range_check {
                if exp != range.st_addr {
                    return self.bad_image(log, root_index, "Discontinuous ranges - Inconsistent program image for decode\n");
                }
            }
        }
        self.next_range_check = if executed { None } else { Some(next_addr) };

        if ete_eret {
            self.out.add_type(root_index, OCSD_GEN_TRC_ELEM_EXCEPTION_RET);
        }
        OCSD_OK
    }

    /// An atom whose block is not replayed: walk the instructions.
    #[inline(never)]
    fn process_atom_walk(&mut self, atom: ocsd_atm_val, root_index: ocsd_trc_index_t, ctx: &mut DecodeCtx) -> ocsd_err_t {
        let (range, res, err) = self.trace_to_wp(ctx, None);
        if err != OCSD_OK {
            return self.atom_walk_failed(err, root_index, ctx.log);
        }

        if res == WpRes::Found {
            return self.atom_range_found(atom, root_index, &range, ctx.log);
        }
        self.atom_without_waypoint(root_index, &range, res);
        OCSD_OK
    }

    /// An atom's walk ended without a waypoint (memory not accessible, at
    /// `Nacc` the address after `range`): its range if any, the next
    /// address unknown.
    #[inline(always)]
    fn atom_without_waypoint(&mut self, root_index: ocsd_trc_index_t, range: &InstrRange, res: WpRes) {
        self.out.add(root_index);
        self.need_addr = true;
        self.next_range_check = None;
        if range.st_addr != range.en_addr {
            let e = self.out.cur();
            Self::set_range(e, range, true, &mut self.instr);
            if res == WpRes::Nacc {
                self.out.add(root_index);
            }
        }
        if res == WpRes::Nacc {
            let a = self.instr.instr_addr;
            self.set_nacc(a);
        }
    }

    /// The walk for an atom failed with `err` (reading memory, or
    /// decoding an instruction).
    #[cold]
    #[inline(never)]
    fn atom_walk_failed(&mut self, err: ocsd_err_t, root_index: ocsd_trc_index_t, log: &mut dyn ErrorLog) -> ocsd_err_t {
        if err == OCSD_ERR_UNSUPPORTED_ISA {
            self.need_addr = true;
            self.need_ctxt = true;
            self.log(log, OCSD_ERR_SEV_WARN, err, root_index, "Warning: unsupported instruction set processing atom packet.");
            return OCSD_OK;
        }
        // the element the atom would have given goes out empty
        self.out.add(root_index);
        self.seq_err(log, err, root_index, "Error processing atom packet.")
    }

    fn process_exception(&mut self, ctx: &mut DecodeCtx) -> ocsd_err_t {
        let Some(exc) = self.stack.back().copied() else {
            return OCSD_OK;
        };
        let excep_idx = exc.root_index;
        let P0Data::Excep { prev_same: branch_target, num: excep_num } = exc.data else {
            return OCSD_OK;
        };
        // (OpenCSD's exception processing also has a branch for ETE's PE
        // reset packet, which its decoder never reaches: it takes that packet
        // for an unknown one, as `decode_packet` does)
        let mut ctxt_elem: Option<P0Elem> = None;
        // stack indices from the back: exception is len-1
        let mut pos = 1usize;
        let peek = |s: &P0Stack, k: usize| -> Option<P0Elem> { s.back_at(k) };
        if let Some(e) = peek(&self.stack, pos) {
            if e.kind == P0Kind::Ctxt {
                ctxt_elem = Some(e);
                pos += 1;
            }
        }
        // the return address, and the following elements used (context,
        // address)
        let (excep_ret_addr, used) = match peek(&self.stack, pos) {
            Some(P0Elem { kind: P0Kind::Addr, data: P0Data::Addr(a), .. }) => {
                if branch_target {
                    // the address was also the target of the previous
                    // branch: no range before the exception
                    let b64 = match ctxt_elem {
                        Some(P0Elem { data: P0Data::Ctxt(c, _), .. }) => c.SF() != 0,
                        _ => self.instr.isa == ocsd_isa_aarch64,
                    };
                    self.instr.instr_addr = a.val;
                    self.instr.isa = if a.isa == 0 {
                        if b64 {
                            ocsd_isa_aarch64
                        } else {
                            ocsd_isa_arm
                        }
                    } else {
                        ocsd_isa_thumb2
                    };
                    self.need_addr = false;
                }
                (a.val, pos)
            }
            _ => {
                // reported at the packet being decoded, not at the exception
                let ci = self.index_curr_pkt;
                return self.seq_err(ctx.log, OCSD_ERR_BAD_PACKET_SEQ, ci, "Address missing in exception packet.");
            }
        };

        // remove the context and address elements used (the exception
        // itself is popped by the caller)
        for _ in 0..used {
            self.stack.remove_from_back(1);
        }

        self.out.add(excep_idx);
        if let Some(P0Elem { data: P0Data::Ctxt(c, is), .. }) = ctxt_elem {
            self.update_context(&c, is);
            self.out.add(excep_idx);
        }

        // an M-profile tail chain: no return address, no range before
        let m_tail_chain = self.m_profile && excep_ret_addr == 0xFFFF_FFFE;
        let mut res = WpRes::NotFound;
        if self.instr.instr_addr < excep_ret_addr && !m_tail_chain {
            let (range, r, err) = self.trace_to_wp(ctx, Some(excep_ret_addr));
            res = r;
            if err != OCSD_OK {
                if err == OCSD_ERR_UNSUPPORTED_ISA {
                    self.need_addr = true;
                    self.need_ctxt = true;
                    self.log(
                        ctx.log,
                        OCSD_ERR_SEV_WARN,
                        err,
                        excep_idx,
                        "Warning: unsupported instruction set processing exception packet.",
                    );
                } else {
                    self.log(ctx.log, OCSD_ERR_SEV_ERROR, err, excep_idx, "Error processing exception packet.");
                }
                // unlike an atom, OpenCSD does not resynchronise after a
                // failed walk to the exception's return address: the
                // error goes back up the data path
                return err;
            }
            let mut range_out = false;
            if res == WpRes::Found {
                let e = self.out.cur();
                Self::set_range(e, &range, true, &mut self.instr);
                range_out = true;
            } else {
                self.need_addr = true;
                if range.st_addr != range.en_addr {
                    let e = self.out.cur();
                    Self::set_range(e, &range, true, &mut self.instr);
                    range_out = true;
                }
            }
            if range_out {
                self.out.add(excep_idx);
            }
        }
        if res == WpRes::Nacc {
            let a = self.instr.instr_addr;
            self.set_nacc(a);
            self.out.add(excep_idx);
        }

        let e = self.out.cur();
        e.elem_type = OCSD_GEN_TRC_ELEM_EXCEPTION;
        e.flag_bits = 0;
        e.en_addr = excep_ret_addr;
        if m_tail_chain {
            e.set_excep_M_tail_chain(1);
        } else {
            e.set_excep_ret_addr(1);
        }
        e.set_excep_ret_addr_br_tgt(branch_target as u32);
        e.set_exception_number(excep_num as u32);
        // an exception taken inside a T32 IT block ends it
        self.instr.thumb_it_conditions = 0;
        OCSD_OK
    }

    fn process_source_address(&mut self, elem: &P0Elem, ctx: &mut DecodeCtx) -> ocsd_err_t {
        let P0Data::Addr(src) = elem.data else {
            return OCSD_OK;
        };
        let idx = elem.root_index;
        let src_addr = src.val;
        let curr_addr = self.instr.instr_addr;
        let split_on_n = self.op_flags & ETE_OPFLG_PKTDEC_SRCADDR_N_ATOMS != 0;
        let space = self.curr_mem_space();
        let aa64_chk = self.aa64_opcode_chk();

        // decode the instruction at the source address
        let f = match self.mem.fetch(ctx.mem, src_addr, space, self.trace_id) {
            Ok(f) => f,
            Err(e) => {
                self.log(ctx.log, OCSD_ERR_SEV_ERROR, e, idx, "Mem access error processing source address packet.");
                return e;
            }
        };
        if f.avail != 4 {
            let o = self.out.add_type(idx, OCSD_GEN_TRC_ELEM_ADDR_NACC);
            o.st_addr = src_addr;
            o.set_exception_number(space as u32);
            return OCSD_OK;
        }
        self.instr.opcode = f.opcode;
        self.instr.instr_addr = src_addr;
        let err = decode_instruction_ex(&mut self.instr, aa64_chk);
        if err != OCSD_OK {
            self.log(ctx.log, OCSD_ERR_SEV_ERROR, err, idx, "Instruction decode error processing source address packet.");
            return err;
        }
        self.instr.instr_addr = self.instr.instr_addr.wrapping_add(self.instr.instr_size as u64);

        let mut out_range = InstrRange { st_addr: 0, en_addr: self.instr.instr_addr, num_instr: 1 };
        if self.need_addr || curr_addr > src_addr {
            self.need_addr = false;
            out_range.st_addr = src_addr;
        } else {
            out_range.st_addr = curr_addr;
        }

        if out_range.en_addr.wrapping_sub(out_range.st_addr) > self.instr.instr_size as u64 {
            if self.instr.isa != ocsd_isa_thumb2 && !split_on_n {
                // fixed-size instructions: count them
                out_range.num_instr = (out_range.en_addr.wrapping_sub(out_range.st_addr) / 4) as u32;
            } else {
                // walk the range to count, splitting at branches when asked
                let mut walk = self.instr;
                walk.instr_addr = out_range.st_addr;
                out_range.num_instr = 0;
                while walk.instr_addr < out_range.en_addr {
                    let f = match self.mem.fetch(ctx.mem, walk.instr_addr, space, self.trace_id) {
                        Ok(f) => f,
                        Err(e) => return e,
                    };
                    if f.avail == 4 {
                        walk.opcode = f.opcode;
                        let e = decode_instruction_ex(&mut walk, aa64_chk);
                        if e != OCSD_OK {
                            return e;
                        }
                        walk.instr_addr = walk.instr_addr.wrapping_add(walk.instr_size as u64);
                        out_range.num_instr += 1;
                        if split_on_n && walk.instr_addr < out_range.en_addr && walk.type_ != OCSD_INSTR_OTHER {
                            // a branch not taken inside the range
                            let mid = InstrRange { st_addr: out_range.st_addr, en_addr: walk.instr_addr, num_instr: out_range.num_instr };
                            let o = self.out.add(idx);
                            Self::set_range(o, &mid, false, &mut walk);
                            out_range.st_addr = mid.en_addr;
                            out_range.num_instr = 0;
                        }
                    } else {
                        let o = self.out.add_type(idx, OCSD_GEN_TRC_ELEM_ADDR_NACC);
                        o.st_addr = src_addr;
                        o.set_exception_number(space as u32);
                        out_range.num_instr = 1;
                        out_range.st_addr = src_addr;
                        out_range.en_addr = self.instr.instr_addr;
                        break;
                    }
                }
            }
        }

        match self.instr.type_ {
            OCSD_INSTR_BR => {
                if self.instr.is_link != 0 {
                    self.push_ret(self.instr.instr_addr, self.instr.isa);
                }
                self.instr.instr_addr = self.instr.branch_addr;
            }
            OCSD_INSTR_BR_INDIRECT => {
                self.need_addr = true;
                if self.instr.is_link != 0 {
                    self.push_ret(self.instr.instr_addr, self.instr.isa);
                }
                self.ret_stack.set_pop_pending();
            }
            _ => {}
        }
        self.instr.isa = self.instr.next_isa;

        let o = self.out.add(idx);
        let mut instr = self.instr;
        Self::set_range(o, &out_range, true, &mut instr);
        OCSD_OK
    }

    fn process_q_element(&mut self, elem: &P0Elem, ctx: &mut DecodeCtx) -> ocsd_err_t {
        let P0Data::Q { count, addr } = elem.data else {
            return OCSD_OK;
        };
        let idx = elem.root_index;
        let q_addr = match addr {
            Some(a) => a,
            None => {
                // the address must be next on the stack (maybe after a context)
                let mut pos = 1usize;
                let mut ctxt: Option<P0Elem> = None;
                if let Some(e) = self.stack.back_at(pos) {
                    if e.kind == P0Kind::Ctxt {
                        ctxt = Some(e);
                        pos += 1;
                    }
                }
                let a = match self.stack.back_at(pos) {
                    Some(P0Elem { kind: P0Kind::Addr, data: P0Data::Addr(a), .. }) => a,
                    _ => {
                        self.log(ctx.log, OCSD_ERR_SEV_ERROR, OCSD_ERR_BAD_PACKET_SEQ, idx, "Address missing in Q packet.");
                        return OCSD_ERR_BAD_PACKET_SEQ;
                    }
                };
                for _ in 0..pos {
                    self.stack.remove_from_back(1);
                }
                // the context is processed next
                if let Some(c) = ctxt {
                    self.stack.insert_from_back(1, c);
                }
                a
            }
        };

        self.out.add(idx);
        let mut range = InstrRange { st_addr: self.instr.instr_addr, en_addr: self.instr.instr_addr, num_instr: 0 };
        let space = self.curr_mem_space();
        let aa64_chk = self.aa64_opcode_chk();
        let mut is_branch = false;
        let mut err = OCSD_OK;
        for _ in 0..count.max(0) {
            match self.decode_next(ctx.mem, space, aa64_chk) {
                Err(e) => {
                    err = e;
                    break;
                }
                Ok(false) => break,
                Ok(true) => {
                    range.num_instr += 1;
                    is_branch = self.instr.type_ == OCSD_INSTR_BR || self.instr.type_ == OCSD_INSTR_BR_INDIRECT;
                    if is_branch {
                        break;
                    }
                }
            }
        }
        if err != OCSD_OK {
            // reported at the Q packet, as OpenCSD does
            self.log(ctx.log, OCSD_ERR_SEV_ERROR, err, idx, "Error processing Q packet");
            return err;
        }
        let mut incomplete = true;
        if count > 0 && range.num_instr == count as u32 && (self.instr.instr_addr == q_addr.val || is_branch) {
            incomplete = false;
            range.en_addr = self.instr.instr_addr;
            let e = self.out.cur();
            Self::set_range(e, &range, true, &mut self.instr);
        }
        if incomplete {
            let isa = Self::calc_isa(self.is_64bit, q_addr.isa);
            let e = self.out.cur();
            e.elem_type = OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH;
            e.flag_bits = 0;
            e.st_addr = range.st_addr;
            e.en_addr = q_addr.val;
            e.set_num_instr_range(count as u32);
            e.isa = isa;
        }
        self.set_instr_addr_isa(q_addr.val, q_addr.isa);
        self.need_addr = false;
        OCSD_OK
    }

    /// Any atom packet would leave no trace now: nothing to follow its
    /// atoms from (no address or context, e.g. no memory at the last
    /// address, and no return stack pop pending), no speculation, nothing
    /// stacked before it, and the decoder [`Self::quiescent`].
    #[inline(always)]
    fn atoms_absorbed(&self) -> bool {
        // need_ctxt / need_addr first, then a pending return stack pop:
        // where memory is there, the flags are mostly set only by an
        // indirect branch whose target the return stack gives
        (self.need_ctxt || self.need_addr) && !self.ret_stack.pop_pending() && self.atoms_commit_first() && self.quiescent()
    }

    /// Between packets with nothing to do but take the next: in sync,
    /// within the speculation depth, nothing resolving or waiting to go
    /// out, no context to show, no memory read to report (`packet_in`
    /// would do nothing around `process_packet`).
    #[inline(always)]
    fn quiescent(&self) -> bool {
        self.state == State::DecodePkts
            && self.curr_spec_depth <= self.max_spec_depth
            && !self.res.any()
            && self.out.num_to_send() == 0
            && !self.context_staged
            && self.mem.idle()
    }
}

impl EtmV4IPktDecoder {
    /// Atom packets from their header bytes while each would be taken by
    /// `absorb` or, in `packet_in`, by `commit_direct_atoms` (the most
    /// common packets, without the packet processor's packet or a call
    /// per packet through the stack).
    fn atom_packets(&mut self, index: ocsd_trc_index_t, bytes: &[u8], ctx: &mut DecodeCtx) -> (usize, ocsd_datapath_resp_t) {
        let mut taken = 0;
        let mut resp = OCSD_RESP_CONT;
        // (a replay may take several packets at once: the next byte is
        // always `bytes[taken]`)
        while let Some(&b) = bytes.get(taken) {
            let Some(h) = ATOM_HEADERS[b as usize] else { break };
            let idx = index.wrapping_add(taken as u32);
            // (atoms_absorbed asks for an address or context first)
            if (self.need_ctxt || self.need_addr) && self.atoms_absorbed() {
                // as `absorb` takes it (every atom packet has atoms)
                self.index_curr_pkt = idx;
                taken += 1;
                continue;
            }
            if !(self.state == State::DecodePkts && self.atoms_direct(h.num)) {
                break;
            }
            // as packet_in takes each packet, process_packet through
            // commit_direct_atoms: those whose atoms replay cached blocks
            // one after the other
            self.mem.check(ctx.mem);
            let (k, r, stop) = self.replay_atom_packets(idx, &bytes[taken..], ctx);
            taken += k;
            resp = r;
            if stop {
                break;
            }
        }
        (taken, resp)
    }

    /// The rest of `packet_in` for an atom packet after
    /// `commit_direct_atoms` answered `resp` and left the decoder out of
    /// the packet decoding state or stopped: `process_packet` goes on
    /// with the packet from the state reached.
    #[cold]
    #[inline(never)]
    fn atom_packet_rest(&mut self, type_: ocsd_etmv4_i_pkt_type, atom: ocsd_pkt_atom, mut resp: ocsd_datapath_resp_t, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        let pkt = ocsd_etmv4_i_pkt { type_, atom, ..Default::default() };
        if self.state != State::DecodePkts && resp_is_cont(resp) {
            resp = self.process_packet(&pkt, ctx);
        }
        if !self.packet_end(ctx) {
            self.cont_pkt = Some(pkt);
        }
        resp
    }

    /// The end of a packet's decode: the memory is told of the reads
    /// (other decoders and the client may use it before the next call),
    /// anything still staged is queued (never refused here). False: the
    /// decode stopped at the memory-access gate, nothing done but the
    /// report; the packet is to be kept for FLUSH.
    #[inline(always)]
    fn packet_end(&mut self, ctx: &mut DecodeCtx) -> bool {
        self.mem.report(ctx.mem);
        if ctx.gate_closed() {
            return false;
        }
        if self.out.num_to_send() > 0 {
            self.out.send(ctx.out, self.trace_id);
        }
        self.context_sent(ctx.mem);
        true
    }
}

impl PacketDecoder for EtmV4IPktDecoder {
    type Packet = ocsd_etmv4_i_pkt;

    fn name(&self) -> &str {
        EtmV4IPktDecoder::name(self)
    }

    /// OpenCSD's decoder refuses data trace, LSP0 (load / store as P0)
    /// and conditional non-branch trace when configured
    /// (`OCSD_ERR_HW_CFG_UNSUPP`), then fails every operation.
    #[inline]
    fn config_ok(&self) -> bool {
        !self.cfg_refused
    }

    /// An atom packet whose atoms, pushed, committed at once (no
    /// speculation) and popped, would leave no trace (`atoms_absorbed`):
    /// `packet_in` would only note the packet's index. An address packet
    /// while the decoder is quiescent: `packet_in` would only stack it.
    #[inline(always)]
    fn absorb(&mut self, index_sop: ocsd_trc_index_t, pkt: &ocsd_etmv4_i_pkt) -> bool {
        match pkt.type_ {
            t if is_atom(t) => {
                if pkt.atom.num > 0 && self.atoms_absorbed() {
                    self.index_curr_pkt = index_sop;
                    return true;
                }
            }
            // an address only goes on the stack: nothing resolves or goes
            // out until the next element to commit
            t if is_plain_addr(t) => {
                if self.quiescent() && !self.elem_pending_addr {
                    self.index_curr_pkt = index_sop;
                    self.push_addr_pkt(pkt, index_sop);
                    return true;
                }
            }
            _ => {}
        }
        false
    }

    fn atom_packets(&mut self, index: ocsd_trc_index_t, bytes: &[u8], ctx: &mut DecodeCtx) -> (usize, ocsd_datapath_resp_t) {
        EtmV4IPktDecoder::atom_packets(self, index, bytes, ctx)
    }

    #[inline(always)]
    fn packet_in(&mut self, index_sop: ocsd_trc_index_t, pkt: &ocsd_etmv4_i_pkt, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        self.index_curr_pkt = index_sop;
        self.mem.check(ctx.mem);
        // (the process-wide check, as OpenCSD's shared instruction decoder)
        self.aa64_chk |= self.aa64_shared.load(std::sync::atomic::Ordering::Relaxed);
        let resp = self.process_packet(pkt, ctx);
        if !self.packet_end(ctx) {
            // suspended at the memory-access gate: FLUSH resumes this packet
            self.cont_pkt = Some(*pkt);
        }
        resp
    }

    fn eot(&mut self, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        self.commit_elem_on_eot();
        self.mem.report(ctx.mem);
        self.out.send(ctx.out, self.trace_id);
        self.context_sent(ctx.mem);
        OCSD_RESP_CONT
    }

    fn reset(&mut self, _index: ocsd_trc_index_t) {
        self.reset_decoder();
        self.unsync_info = UNSYNC_RESET_DECODER;
    }

    fn flush(&mut self, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        // finish the packet whose resolution the client's WAIT interrupted
        // (OpenCSD's onFlush), through the same state machine, so that
        // what follows (e.g. the NO_SYNC after an error) comes out as it
        // would have without the WAIT
        let Some(pkt) = self.cont_pkt.take() else { return OCSD_RESP_CONT };
        self.mem.check(ctx.mem);
        let resp = self.process_packet(&pkt, ctx);
        self.mem.report(ctx.mem);
        if ctx.gate_closed() {
            self.cont_pkt = Some(pkt);
        } else if self.out.num_to_send() > 0 {
            self.out.send(ctx.out, self.trace_id);
        }
        self.context_sent(ctx.mem);
        resp
    }

    fn trace_id(&self) -> u8 {
        self.trace_id
    }

    fn set_op_flags(&mut self, flags: u32) {
        self.op_flags = flags & SUPPORTED_OP_FLAGS;
        self.aa64_chk = self.env_aa64_bad_opcode || self.op_flags & ETM4_OPFLG_PKTDEC_AA64_OPCODE_CHK != 0;
    }
    fn same_state(&self, other: &Self) -> bool {
        EtmV4IPktDecoder::same_state(self, other)
    }
}
