//! Decoder unit tests: hand-built packet sequences over a small A64
//! program held by a test memory accessor; elements are checked through
//! their OpenCSD text.

use super::decoder::EtmV4IPktDecoder;
use super::*;
use crate::abi::gen_elem::ocsd_generic_trace_elem;
use crate::common::{DecodeCtx, ElemQueue, ErrorLog, GenElemSink, MemAccess, OcsdError, PacketDecoder};
use crate::printers::gen_elem::write_elem_str;

const NOP: u32 = 0xD503_201F;
const RET: u32 = 0xD65F_03C0;
const ERET: u32 = 0xD69F_03E0;
/// `B.EQ .+8`
const BEQ_8: u32 = 0x5400_0040;
/// `B .+imm` (imm a multiple of 4)
fn b(imm: i32) -> u32 {
    0x1400_0000 | ((imm >> 2) as u32 & 0x03FF_FFFF)
}
/// `BL .+imm`
fn bl(imm: i32) -> u32 {
    0x9400_0000 | ((imm >> 2) as u32 & 0x03FF_FFFF)
}

const BASE: u64 = 0x1000;

/// Program memory: A64 words from `BASE`, in any memory space.
struct TestMem {
    bytes: Vec<u8>,
    reads: usize,
    /// Reads made before each [`MemAccess::context_shown`] call.
    shown: Vec<usize>,
}

impl TestMem {
    fn new(words: &[u32]) -> Self {
        TestMem { bytes: words.iter().flat_map(|w| w.to_le_bytes()).collect(), reads: 0, shown: Vec::new() }
    }
}

impl MemAccess for TestMem {
    fn read(&mut self, addr: ocsd_vaddr_t, _space: ocsd_mem_space_acc_t, _id: u8, buf: &mut [u8]) -> Result<usize, ocsd_err_t> {
        self.reads += 1;
        if addr < BASE || addr >= BASE + self.bytes.len() as u64 {
            return Ok(0);
        }
        let off = (addr - BASE) as usize;
        let n = buf.len().min(self.bytes.len() - off);
        buf[..n].copy_from_slice(&self.bytes[off..off + n]);
        Ok(n)
    }

    fn context_shown(&mut self, _id: u8) {
        self.shown.push(self.reads);
    }
}

#[derive(Default)]
struct Log(Vec<String>);
impl ErrorLog for Log {
    fn log_error(&mut self, component: &str, err: &OcsdError) {
        self.0.push(format!("{} : {}", component, err.details()));
    }
    fn log_message(&mut self, component: &str, _: ocsd_err_severity_t, msg: &str) {
        self.0.push(format!("{} : {}", component, msg));
    }
}

#[derive(Default)]
struct Sink(Vec<String>);
impl GenElemSink for Sink {
    fn trace_elem_in(&mut self, idx: ocsd_trc_index_t, id: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        let mut s = format!("{}:{:x}:", idx, id);
        write_elem_str(elem, &mut s);
        self.0.push(s);
        OCSD_RESP_CONT
    }
}

/// A decoder fed packets one by one, with memory `M` (default: a
/// [`TestMem`], which counts reads; a [`crate::mem::MemMapper`] where
/// decoded blocks are cached).
struct Harness<M: MemAccess = TestMem> {
    dec: EtmV4IPktDecoder,
    mem: M,
    log: Log,
    q: ElemQueue,
    sink: Sink,
    idx: ocsd_trc_index_t,
}

fn cfg(max_spec: u32, ret_stack: bool) -> EtmV4Config {
    EtmV4Config::new(&ocsd_etmv4_cfg {
        reg_idr0: 0x28000EA1,
        reg_idr1: 0x4100F403,
        reg_idr2: 0x00000488,
        reg_idr8: max_spec,
        reg_configr: 0xC1 | if ret_stack { 1 << 12 } else { 0 },
        reg_traceidr: 0x10,
        arch_ver: ARCH_V8,
        core_prof: profile_CortexA,
        ..Default::default()
    })
}

impl Harness {
    fn new(cfg: EtmV4Config, words: &[u32]) -> Self {
        Self::with_dec(EtmV4IPktDecoder::with_env(16, cfg, 0, false), words)
    }

    fn with_dec(dec: EtmV4IPktDecoder, words: &[u32]) -> Self {
        Harness::with_mem(dec, TestMem::new(words))
    }
}

impl<M: MemAccess> Harness<M> {
    fn with_mem(dec: EtmV4IPktDecoder, mem: M) -> Self {
        Harness { dec, mem, log: Log::default(), q: ElemQueue::new(), sink: Sink::default(), idx: 0 }
    }

    fn pkt(&mut self, p: ocsd_etmv4_i_pkt) -> ocsd_datapath_resp_t {
        let mut ctx = DecodeCtx::new(&mut self.q, &mut self.mem, &mut self.log);
        let r = self.dec.packet_in(self.idx, &p, &mut ctx);
        self.q.deliver(&mut self.sink);
        self.idx += 1;
        r
    }

    fn eot(&mut self) {
        let mut ctx = DecodeCtx::new(&mut self.q, &mut self.mem, &mut self.log);
        self.dec.eot(&mut ctx);
        self.q.deliver(&mut self.sink);
    }

    /// Elements output since the last call.
    fn take(&mut self) -> Vec<String> {
        std::mem::take(&mut self.sink.0)
    }

    /// ASYNC, TRACE_INFO (speculation depth `spec`), TRACE_ON and an
    /// address + context packet: A64, EL1 non-secure at `addr`.
    fn sync_at(&mut self, addr: u64, spec: u32) {
        self.pkt(typed(ETM4_PKT_I_ASYNC));
        let mut ti = typed(ETM4_PKT_I_TRACE_INFO);
        ti.curr_spec_depth = spec;
        self.pkt(ti);
        self.pkt(typed(ETM4_PKT_I_TRACE_ON));
        self.pkt(addr_ctxt(addr));
    }
}

fn typed(t: ocsd_etmv4_i_pkt_type) -> ocsd_etmv4_i_pkt {
    ocsd_etmv4_i_pkt { type_: t, ..Default::default() }
}

fn addr_ctxt(addr: u64) -> ocsd_etmv4_i_pkt {
    let mut p = typed(ETM4_PKT_I_ADDR_CTXT_L_64IS0);
    p.v_addr.val = addr;
    p.context.set_updated(1);
    p.context.set_EL(1);
    p.context.set_NS(1);
    p.context.set_SF(1);
    p
}

fn addr(a: u64) -> ocsd_etmv4_i_pkt {
    let mut p = typed(ETM4_PKT_I_ADDR_L_64IS0);
    p.v_addr.val = a;
    p
}

/// Atom packet; `pattern` oldest first, 'E' or 'N'.
fn atoms(pattern: &str) -> ocsd_etmv4_i_pkt {
    let mut p = typed(ETM4_PKT_I_ATOM_F6);
    let mut bits = 0u32;
    for (i, c) in pattern.chars().enumerate() {
        if c == 'E' {
            bits |= 1 << i;
        }
    }
    p.atom = ocsd_pkt_atom { En_bits: bits, num: pattern.len() as u8 };
    p
}

fn except(num: u32) -> ocsd_etmv4_i_pkt {
    let mut p = typed(ETM4_PKT_I_EXCEPT);
    p.exception_info.set_exceptionType(num);
    p
}

/// The program: 0x1000 NOP, 0x1004 NOP, 0x1008 B.EQ 0x1010, 0x100c NOP,
/// 0x1010 BL 0x1020, 0x1014 RET, 0x1018 NOP, 0x101c ERET, 0x1020 NOP,
/// 0x1024 RET, 0x1028 B 0x1000
fn program() -> Vec<u32> {
    vec![NOP, NOP, BEQ_8, NOP, bl(0x10), RET, NOP, ERET, NOP, RET, b(-0x28)]
}

const SYNC_ELEMS: [&str; 3] = [
    "0:10:OCSD_GEN_TRC_ELEM_NO_SYNC( [init-decoder])",
    "2:10:OCSD_GEN_TRC_ELEM_TRACE_ON( [begin or filter])",
    "3:10:OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=A64) EL1N; 64-bit; )",
];

#[test]
fn atoms_follow_program() {
    let mut h = Harness::new(cfg(0, false), &program());
    h.sync_at(0x1000, 0);
    assert_eq!(h.take(), vec!["0:10:OCSD_GEN_TRC_ELEM_NO_SYNC( [init-decoder])"]);
    h.pkt(atoms("NEE"));
    let mut want: Vec<String> = SYNC_ELEMS[1..].iter().map(|s| s.to_string()).collect();
    want.extend(
        [
            "4:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1000:[0x100c] num_i(3) last_sz(4) (ISA=A64) N BR   <cond>)",
            "4:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x100c:[0x1014] num_i(2) last_sz(4) (ISA=A64) E BR  b+link )",
            "4:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1020:[0x1028] num_i(2) last_sz(4) (ISA=A64) E iBR A64:ret )",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    assert_eq!(h.take(), want);
    // the indirect branch needs an address
    h.pkt(addr(0x1018));
    h.pkt(atoms("E"));
    assert_eq!(
        h.take(),
        vec!["6:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1018:[0x1020] num_i(2) last_sz(4) (ISA=A64) E iBR A64:eret )"]
    );
    h.eot();
    assert_eq!(h.take(), vec!["6:10:OCSD_GEN_TRC_ELEM_EO_TRACE( [end-of-trace])"]);
    assert!(h.log.0.is_empty(), "{:?}", h.log.0);
    // instruction fetches are served from a window, not one read each
    assert!(h.mem.reads < 10, "{} reads", h.mem.reads);
}

#[test]
fn return_stack_gives_ret_target() {
    let mut h = Harness::new(cfg(0, true), &program());
    h.sync_at(0x100c, 0);
    // BL taken, then the RET at 0x1024 taken: no address packet, so the
    // return stack supplies 0x1014
    h.pkt(atoms("EE"));
    h.pkt(atoms("E"));
    let got = h.take();
    assert_eq!(
        got.last().map(String::as_str),
        Some("5:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1014:[0x1018] num_i(1) last_sz(4) (ISA=A64) E iBR A64:ret )")
    );
}

/// Memory from a buffer at 0x1000: a loop calling a function. 0x1000 BL
/// 0x1010, 0x1004 B 0x1000, 0x1008 NOP, 0x100c NOP, 0x1010 NOP, 0x1014 RET.
fn call_loop_memory() -> crate::mem::MemMapper {
    use crate::mem::{Accessor, MemMapper, Source};
    let words = [bl(0x10), b(-4), NOP, NOP, NOP, RET];
    let data: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut mem = MemMapper::new();
    let end = BASE + data.len() as u64 - 1;
    mem.add(Accessor { start: BASE, end, space: OCSD_MEM_SPACE_ANY, source: Source::Buffer { data: std::sync::Arc::new(data) } }).unwrap();
    mem
}

/// A loop calling a function, traced three times with the return stack on
/// and no address packets, memory from a buffer (whose bytes the decoded
/// blocks are cached under): from the second time on, the call's block is
/// replayed from the block cache, and its return address must still reach
/// the return stack for the function's RET.
#[test]
fn replayed_calls_push_the_return_stack() {
    let mut h = Harness::with_mem(EtmV4IPktDecoder::with_env(16, cfg(0, true), 0, false), call_loop_memory());
    for p in [typed(ETM4_PKT_I_ASYNC), typed(ETM4_PKT_I_TRACE_INFO), typed(ETM4_PKT_I_TRACE_ON), addr_ctxt(0x1000)] {
        h.pkt(p);
    }
    let iteration = |idx: u64| {
        vec![
            format!("{idx}:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1000:[0x1004] num_i(1) last_sz(4) (ISA=A64) E BR  b+link )"),
            format!("{idx}:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1010:[0x1018] num_i(2) last_sz(4) (ISA=A64) E iBR A64:ret )"),
            format!("{idx}:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1004:[0x1008] num_i(1) last_sz(4) (ISA=A64) E BR  )"),
        ]
    };
    for k in 0..3u64 {
        h.pkt(atoms("EEE"));
        let ranges: Vec<String> = h.take().into_iter().filter(|e| e.contains("INSTR_RANGE")).collect();
        assert_eq!(ranges, iteration(4 + k), "iteration {k}");
    }
    // a call and its return in separate packets
    for _ in 0..3 {
        h.pkt(atoms("E"));
    }
    let got = h.take();
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got[2].contains("exec range=0x1004:[0x1008]"), "{got:?}");
    assert!(h.log.0.is_empty(), "{:?}", h.log.0);
}

/// A run of atom packets offered to `atom_packets` whose replay takes two
/// packets at once and stops at a taken RET (no return stack: an address
/// is needed), the packets after it absorbed: every byte of the run is
/// taken once, and the end of trace carries the last packet's index.
#[test]
fn an_atom_run_replayed_part_way_takes_each_packet_once() {
    use crate::etmv4::pkt_proc::ATOM_HEADERS;
    let mut h = Harness::with_mem(EtmV4IPktDecoder::with_env(16, cfg(0, false), 0, false), call_loop_memory());
    for p in [typed(ETM4_PKT_I_ASYNC), typed(ETM4_PKT_I_TRACE_INFO), typed(ETM4_PKT_I_TRACE_ON), addr_ctxt(0x1000), atoms("EE"), addr(0x1000)] {
        h.pkt(p);
    }
    // (the call and the function are walked once: their blocks are cached)
    h.take();
    let e = 0xF7u8;
    assert_eq!(ATOM_HEADERS[e as usize].map(|a| (a.num, a.bits)), Some((1, 1)));
    let run = [e, e, e, e];
    let mut ctx = DecodeCtx::with_sink(&mut h.q, &mut h.mem, &mut h.log, Some(&mut h.sink));
    let (n, _) = PacketDecoder::atom_packets(&mut h.dec, h.idx, &run, &mut ctx);
    assert_eq!(n, run.len());
    h.eot();
    let first = h.idx;
    assert_eq!(
        h.take(),
        vec![
            format!("{first}:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1000:[0x1004] num_i(1) last_sz(4) (ISA=A64) E BR  b+link )"),
            format!("{}:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1010:[0x1018] num_i(2) last_sz(4) (ISA=A64) E iBR A64:ret )", first + 1),
            format!("{}:10:OCSD_GEN_TRC_ELEM_EO_TRACE( [end-of-trace])", first + 3),
        ]
    );
    assert!(h.log.0.is_empty(), "{:?}", h.log.0);
}

#[test]
fn exception_outputs_range_to_return_address() {
    let mut h = Harness::new(cfg(0, false), &program());
    h.sync_at(0x1000, 0);
    h.take();
    h.pkt(except(3));
    assert!(h.take().is_empty(), "exception waits for its address");
    h.pkt(addr(0x1008));
    let mut want: Vec<String> = SYNC_ELEMS[1..].iter().map(|s| s.to_string()).collect();
    want.push("4:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1000:[0x1008] num_i(2) last_sz(4) (ISA=A64) E --- )".into());
    want.push("4:10:OCSD_GEN_TRC_ELEM_EXCEPTION(pref ret addr:0x1008; excep num (0x03) )".into());
    assert_eq!(h.take(), want);
    // exception return (not a P0 element on A-profile): output when the
    // next P0 element commits
    h.pkt(typed(ETM4_PKT_I_EXCEPT_RTN));
    h.pkt(addr(0x1020));
    h.pkt(atoms("E"));
    assert_eq!(
        h.take(),
        vec![
            "6:10:OCSD_GEN_TRC_ELEM_EXCEPTION_RET()",
            "8:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1020:[0x1028] num_i(2) last_sz(4) (ISA=A64) E iBR A64:ret )",
        ]
    );
}

/// T32 halfwords as the little-endian words of [`TestMem`].
fn t32_words(halfwords: &[u16]) -> Vec<u32> {
    halfwords.chunks(2).map(|p| u32::from(p[0]) | u32::from(*p.get(1).unwrap_or(&0)) << 16).collect()
}

/// An exception taken inside a T32 IT block ends the block: the handler's
/// instructions are not conditional (OpenCSD clears the IT state on an
/// exception and on a branch taken).
#[test]
fn exception_inside_an_it_block_ends_it() {
    // 0x1000 ITTTT EQ, 0x1002.. NOP x4, 0x100a NOP x3, 0x1010 NOP,
    // 0x1012 B 0x1010
    let words = t32_words(&[0xBF01, 0xBF00, 0xBF00, 0xBF00, 0xBF00, 0xBF00, 0xBF00, 0xBF00, 0xBF00, 0xE7FD]);
    let mut h = Harness::new(cfg(0, false), &words);
    let t32_addr = |t, a| {
        let mut p = typed(t);
        p.v_addr.val = a;
        p.v_addr_ISA = 1;
        p
    };
    h.pkt(typed(ETM4_PKT_I_ASYNC));
    h.pkt(typed(ETM4_PKT_I_TRACE_INFO));
    h.pkt(typed(ETM4_PKT_I_TRACE_ON));
    let mut ac = t32_addr(ETM4_PKT_I_ADDR_CTXT_L_32IS1, 0x1000);
    ac.context.set_updated(1);
    ac.context.set_EL(1);
    ac.context.set_NS(1);
    h.pkt(ac);
    // the exception returns to 0x1004, inside the block
    h.pkt(except(3));
    h.pkt(t32_addr(ETM4_PKT_I_ADDR_L_32IS1, 0x1004));
    h.pkt(t32_addr(ETM4_PKT_I_ADDR_L_32IS1, 0x1010));
    h.pkt(atoms("E"));
    let elems = h.take();
    assert_eq!(
        elems[elems.len() - 3..],
        [
            "4:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1000:[0x1004] num_i(2) last_sz(2) (ISA=T32) E ---  <cond>)",
            "4:10:OCSD_GEN_TRC_ELEM_EXCEPTION(pref ret addr:0x1004; excep num (0x03) )",
            "7:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1010:[0x1014] num_i(2) last_sz(2) (ISA=T32) E BR  )",
        ]
    );
}

#[test]
fn memory_is_told_of_each_context_once_the_client_has_it() {
    let mut h = Harness::new(cfg(0, false), &program());
    h.sync_at(0x1000, 0);
    // the context goes out with the first atom's range, before its reads
    h.pkt(atoms("N"));
    assert_eq!(h.mem.shown, vec![0]);
    let reads = h.mem.reads;
    assert!(reads > 0);
    h.take();
    // an exception with a context: the walk to its return address reads
    // memory before the PE_CONTEXT element goes out, in the context the
    // client knows; the memory hears of the new one after those reads
    h.pkt(except(3));
    h.pkt(addr_ctxt(0x1014));
    let got = h.take();
    assert_eq!(got.iter().filter(|e| e.contains("PE_CONTEXT")).count(), 1, "{:?}", got);
    assert!(h.mem.reads > reads);
    assert_eq!(h.mem.shown, vec![0, h.mem.reads]);
    // no context, nothing to tell
    h.pkt(atoms("E"));
    assert_eq!(h.mem.shown.len(), 2);
}

#[test]
fn speculation_commit_cancel_mispredict() {
    let mut h = Harness::new(cfg(8, false), &program());
    h.sync_at(0x1000, 0);
    h.take();
    h.pkt(atoms("NEE"));
    assert!(h.take().is_empty(), "atoms are speculative");
    // cancel the newest atom, flip the (new) newest one
    let mut c = typed(ETM4_PKT_I_CANCEL_F1);
    c.cancel_elements = 1;
    h.pkt(c);
    h.pkt(typed(ETM4_PKT_I_MISPREDICT));
    assert!(h.take().is_empty());
    // N then (mispredicted E ->) N
    let mut cm = typed(ETM4_PKT_I_COMMIT);
    cm.commit_elements = 2;
    h.pkt(cm);
    let mut want: Vec<String> = SYNC_ELEMS[1..].iter().map(|s| s.to_string()).collect();
    // elements carry the index of the packet they came from
    want.push("4:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1000:[0x100c] num_i(3) last_sz(4) (ISA=A64) N BR   <cond>)".into());
    want.push("4:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x100c:[0x1014] num_i(2) last_sz(4) (ISA=A64) N BR  b+link )".into());
    assert_eq!(h.take(), want);
    // too many commits: error and unsync
    h.pkt(cm);
    assert_eq!(h.take(), vec!["8:10:OCSD_GEN_TRC_ELEM_NO_SYNC( [bad-packet])"]);
    assert!(h.log.0[0].contains("Not enough elements to commit"), "{:?}", h.log.0);
}

#[test]
fn trace_info_speculation_depth_is_committed_first() {
    let mut h = Harness::new(cfg(8, false), &program());
    h.sync_at(0x1000, 2);
    h.take();
    h.pkt(atoms("N"));
    let mut cm = typed(ETM4_PKT_I_COMMIT);
    cm.commit_elements = 2;
    h.pkt(cm);
    // the two unseen elements take the commit: nothing output
    assert!(h.take().is_empty());
    cm.commit_elements = 1;
    h.pkt(cm);
    let mut want: Vec<String> = SYNC_ELEMS[1..].iter().map(|s| s.to_string()).collect();
    want.push("4:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1000:[0x100c] num_i(3) last_sz(4) (ISA=A64) N BR   <cond>)".into());
    assert_eq!(h.take(), want);
}

#[test]
fn timestamps_and_cycle_counts_survive_cancel_and_discard() {
    let mut h = Harness::new(cfg(8, false), &program());
    h.sync_at(0x1000, 0);
    h.take();
    h.pkt(atoms("E"));
    let mut ts = typed(ETM4_PKT_I_TIMESTAMP);
    ts.ts.timestamp = 0x1234;
    h.pkt(ts);
    let mut c = typed(ETM4_PKT_I_CANCEL_F1);
    c.cancel_elements = 1;
    h.pkt(c);
    let mut cc = typed(ETM4_PKT_I_CCNT_F1);
    cc.cycle_count = 42;
    h.pkt(cc);
    h.pkt(typed(ETM4_PKT_I_DISCARD));
    // the trace on and context elements were never committed: dropped
    assert_eq!(
        h.take(),
        [
            "5:10:OCSD_GEN_TRC_ELEM_TIMESTAMP( [ TS=0x000000001234]; )",
            "7:10:OCSD_GEN_TRC_ELEM_CYCLE_COUNT( [CC=42]; )",
            "8:10:OCSD_GEN_TRC_ELEM_NO_SYNC( [discard])",
        ]
    );
    // waits for a new sync point
    h.pkt(atoms("E"));
    h.eot();
    assert_eq!(h.take(), vec!["9:10:OCSD_GEN_TRC_ELEM_EO_TRACE( [end-of-trace])"]);
}

/// The timestamp elements of a sync, a timestamp (no marker before it)
/// and an atom on configuration `c`.
fn timestamps_without_a_marker(c: EtmV4Config) -> Vec<String> {
    let mut h = Harness::new(c, &program());
    h.sync_at(0x1000, 0);
    let mut ts = typed(ETM4_PKT_I_TIMESTAMP);
    ts.ts.timestamp = 0x60;
    h.pkt(ts);
    h.pkt(atoms("E"));
    h.eot();
    h.take().into_iter().filter(|e| e.contains("TIMESTAMP")).collect()
}

/// An ETMv4 configuration (TRCIDR0, TRCIDR1) with timestamps on.
fn etmv4_ts(reg_idr0: u32, reg_idr1: u32) -> EtmV4Config {
    EtmV4Config::new(&ocsd_etmv4_cfg {
        reg_idr0,
        reg_idr1,
        reg_idr2: 0x00000488,
        reg_configr: 0xC1 | 1 << 11,
        reg_traceidr: 0x10,
        arch_ver: ARCH_V8,
        core_prof: profile_CortexA,
        ..Default::default()
    })
}

/// An ETE configuration (TRCDEVARCH) with timestamps on and
/// TRCIDR0.TSMARK (bit 23) set.
fn ete_ts(reg_devarch: u32) -> EtmV4Config {
    EtmV4Config::from_ete(&crate::ete::types::ocsd_ete_cfg {
        reg_idr0: 0x2880_0EA1,
        reg_idr1: 0x4100_FFF0,
        reg_idr2: 0x00000488,
        reg_idr8: 0,
        reg_devarch,
        reg_configr: 0xC1 | 1 << 11,
        reg_traceidr: 0x10,
        arch_ver: ARCH_AA64,
        core_prof: profile_CortexA,
    })
}

#[test]
fn timestamps_wait_for_a_marker_only_from_ete_1_1() {
    // ETMv4.6 (Cortex-M7 / M33 ETMs report TRCIDR0 0x28800CA1): TRCIDR0
    // bit 23 does not hold timestamps back (OpenCSD's eteHasTSMarker needs
    // version 5.1)
    assert_eq!(timestamps_without_a_marker(etmv4_ts(0x2880_0EA1, 0x4100_F463)), ["4:10:OCSD_GEN_TRC_ELEM_TIMESTAMP( [ TS=0x000000000060]; )"]);
    // the same without bit 23, and ETMv4.3 with it
    assert_eq!(timestamps_without_a_marker(etmv4_ts(0x2800_0EA1, 0x4100_F463)).len(), 1);
    assert_eq!(timestamps_without_a_marker(etmv4_ts(0x2880_0EA1, 0x4100_F433)).len(), 1);
    // ETE 1.0 sends them; ETE 1.1 with TSMARK holds them until a marker
    assert_eq!(timestamps_without_a_marker(ete_ts(0x4770_5A13)).len(), 1);
    assert!(timestamps_without_a_marker(ete_ts(0x4771_5A13)).is_empty());
}

/// A discard drops the instrumentation (ITE) elements still stacked, as
/// OpenCSD 1.8.0's does; end of trace outputs them.
#[test]
fn discard_drops_stacked_instrumentation() {
    for (end, want) in [(ETM4_PKT_I_DISCARD, 0), (ETM4_PKT_I_TRACE_ON, 1)] {
        // ETE 1.3 (instrumentation packets), speculation depth 4: the ITE
        // stays stacked, an uncommitted atom after it
        let mut c = ete_ts(0x4773_5A13);
        c = EtmV4Config::from_ete(&crate::ete::types::ocsd_ete_cfg { reg_idr8: 4, ..*c.ete_regs().unwrap() });
        let mut h = Harness::new(c, &program());
        h.sync_at(0x1000, 0);
        h.pkt(atoms("E"));
        let mut commit = typed(ETM4_PKT_I_COMMIT);
        commit.commit_elements = 1;
        h.pkt(commit);
        let mut ite = typed(ETE_PKT_I_ITE);
        ite.ite_pkt.el = 1;
        ite.ite_pkt.value = 0x1234;
        h.pkt(ite);
        h.pkt(atoms("E"));
        if end == ETM4_PKT_I_DISCARD {
            h.pkt(typed(end));
        } else {
            h.eot();
        }
        let n = h.take().iter().filter(|e| e.contains("INSTRUMENTATION")).count();
        assert_eq!(n, want, "{}", if want == 0 { "discard" } else { "end of trace" });
    }
}

#[test]
fn overflow_then_trace_on_reason() {
    let mut h = Harness::new(cfg(0, false), &program());
    h.sync_at(0x1000, 0);
    h.pkt(atoms("E"));
    h.take();
    h.pkt(typed(ETM4_PKT_I_OVERFLOW));
    assert_eq!(h.take(), vec!["5:10:OCSD_GEN_TRC_ELEM_NO_SYNC( [overflow])"]);
    h.eot();
    assert_eq!(h.take(), vec!["5:10:OCSD_GEN_TRC_ELEM_EO_TRACE( [overflow])"]);
}

#[test]
fn memory_not_accessible_gives_addr_nacc() {
    let mut h = Harness::new(cfg(0, false), &program());
    h.sync_at(0x1020, 0);
    h.take();
    h.pkt(atoms("E"));
    h.pkt(addr(0x8000));
    h.pkt(atoms("E"));
    let got = h.take();
    assert_eq!(got.last().map(String::as_str), Some("6:10:OCSD_GEN_TRC_ELEM_ADDR_NACC( 0x8000; Memspace [0x2:EL1N] )"));
    // walking off the end of memory: range, then NACC
    let mut h = Harness::new(cfg(0, false), &[NOP, NOP]);
    h.sync_at(0x1000, 0);
    h.pkt(atoms("E"));
    let got = h.take();
    assert_eq!(
        &got[got.len() - 2..],
        [
            "4:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1000:[0x1008] num_i(2) last_sz(4) (ISA=A64) E --- )",
            "4:10:OCSD_GEN_TRC_ELEM_ADDR_NACC( 0x1008; Memspace [0x2:EL1N] )",
        ]
    );
}

/// After a sync, packet type `t` is a bad packet logged with `reason`,
/// and the next atom finds the decoder unsynchronised.
fn assert_bad_packet(h: &mut Harness, t: ocsd_etmv4_i_pkt_type, reason: &str) {
    h.sync_at(0x1000, 0);
    h.take();
    h.pkt(typed(t));
    assert_eq!(
        h.log.0,
        vec![format!("DCD_ETMV4_0016 : 0x0019 (OCSD_ERR_BAD_DECODE_PKT) [Reserved or unknown packet in decoder.]; TrcIdx=4; CS ID=10; {reason}")]
    );
    assert!(h.take().is_empty());
    h.pkt(atoms("E"));
    assert_eq!(h.take(), vec!["5:10:OCSD_GEN_TRC_ELEM_NO_SYNC( [bad-packet])"]);
}

#[test]
fn bad_packet_and_reset_unsync() {
    let mut h = Harness::new(cfg(0, false), &program());
    assert_bad_packet(&mut h, ETM4_PKT_I_RESERVED, "Reserved packet header");
    // resync, then an explicit reset
    h.sync_at(0x1000, 0);
    h.pkt(atoms("E"));
    assert_eq!(h.take().len(), 3);
    h.dec.reset(0);
    h.pkt(atoms("E"));
    assert_eq!(h.take(), vec!["11:10:OCSD_GEN_TRC_ELEM_NO_SYNC( [reset-decoder])"]);
}

/// OpenCSD 1.8.0's decoder takes ETE's PE reset packet for an unknown
/// packet: a bad packet, the decoder unsynchronised.
#[test]
fn ete_pe_reset_is_an_unknown_packet() {
    let mut h = Harness::new(ete_ts(0x4770_5A13), &program());
    assert_bad_packet(&mut h, ETE_PKT_I_PE_RESET, "Unknown packet type.");
}

#[test]
fn range_limit_and_bad_opcode_errors() {
    let dec = EtmV4IPktDecoder::with_env(16, cfg(0, false), 2, false);
    let mut h = Harness::with_dec(dec, &program());
    h.sync_at(0x1000, 0);
    h.take();
    h.pkt(atoms("E"));
    // trace on and context went out before the atom was processed
    let mut want: Vec<String> = SYNC_ELEMS[1..].iter().map(|s| s.to_string()).collect();
    want.push("4:10:OCSD_GEN_TRC_ELEM_NO_SYNC( [bad-packet])".into());
    assert_eq!(h.take(), want);
    assert_eq!(h.log.0.len(), 2);
    assert!(h.log.0[0].ends_with("; Decode Instruction Range Limit Overrun"));
    assert!(h.log.0[1].ends_with("TrcIdx=4; CS ID=10; Error processing atom packet."));

    // an A64 word with a zero top half-word is invalid when checking
    let mut h = Harness::new(cfg(0, false), &[NOP, 0x0000_1234, RET]);
    h.dec.set_op_flags(crate::ete::types::ETM4_OPFLG_PKTDEC_AA64_OPCODE_CHK);
    h.sync_at(0x1000, 0);
    h.take();
    h.pkt(atoms("E"));
    assert_eq!(h.take().last().map(String::as_str), Some("4:10:OCSD_GEN_TRC_ELEM_NO_SYNC( [bad-packet])"));
    assert!(h.log.0[0].contains("0x002c (OCSD_ERR_INVALID_OPCODE)"), "{:?}", h.log.0);
    // without the check the word is just another instruction
    let mut h = Harness::new(cfg(0, false), &[NOP, 0x0000_1234, RET]);
    h.sync_at(0x1000, 0);
    h.pkt(atoms("E"));
    assert!(h.take().last().unwrap().contains("num_i(3)"));

    // the process-wide check (OpenCSD's shared instruction decoder), turned
    // on after the decoder was made, counts from its next packet
    static SHARED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let mut h = Harness::new(cfg(0, false), &[NOP, 0x0000_1234, RET]);
    h.dec.set_shared_aa64_check(&SHARED);
    SHARED.store(true, std::sync::atomic::Ordering::Relaxed);
    h.sync_at(0x1000, 0);
    h.take();
    h.pkt(atoms("E"));
    assert_eq!(h.take().last().map(String::as_str), Some("4:10:OCSD_GEN_TRC_ELEM_NO_SYNC( [bad-packet])"));
}

#[test]
fn corrupt_input_does_not_panic() {
    // every packet type with odd field values, in a few orders
    let types = [
        ETM4_PKT_I_ASYNC,
        ETM4_PKT_I_TRACE_INFO,
        ETM4_PKT_I_TRACE_ON,
        ETM4_PKT_I_ATOM_F6,
        ETM4_PKT_I_EXCEPT,
        ETE_PKT_I_PE_RESET,
        ETM4_PKT_I_ADDR_CTXT_L_64IS0,
        ETM4_PKT_I_ADDR_S_IS1,
        ETM4_PKT_I_CTXT,
        ETM4_PKT_I_Q,
        ETE_PKT_I_SRC_ADDR_L_64IS0,
        ETM4_PKT_I_COMMIT,
        ETM4_PKT_I_CANCEL_F3,
        ETM4_PKT_I_MISPREDICT,
        ETM4_PKT_I_DISCARD,
        ETM4_PKT_I_TIMESTAMP,
        ETE_PKT_I_TS_MARKER,
        ETE_PKT_I_TRANS_ST,
        ETE_PKT_I_TRANS_FAIL,
        ETE_PKT_I_ITE,
        ETM4_PKT_I_EXCEPT_RTN,
        ETM4_PKT_I_COND_I_F1,
        ETM4_PKT_I_INCOMPLETE_EOT,
        0x7fff_ffff,
    ];
    let mut rnd64 = crate::common::xorshift64(0x1234_5678);
    let mut rnd = move || rnd64() as u32;
    for max_spec in [0, 3, u32::MAX] {
        let mut h = Harness::new(cfg(max_spec, true), &program());
        for _ in 0..5000 {
            let mut p = typed(types[rnd() as usize % types.len()]);
            p.v_addr.val = BASE + (rnd() % 64) as u64;
            p.v_addr_ISA = (rnd() & 1) as u8;
            p.atom = ocsd_pkt_atom { En_bits: rnd(), num: (rnd() % 40) as u8 };
            p.commit_elements = rnd() % 8;
            p.cancel_elements = rnd() % 8;
            p.curr_spec_depth = if rnd() % 50 == 0 { u32::MAX } else { rnd() % 4 };
            p.context.set_updated(1);
            p.context.set_SF(rnd() & 1);
            p.context.set_EL(rnd() & 3);
            p.exception_info.set_addr_interp(rnd() & 3);
            p.Q_pkt.q_count = rnd() % 10;
            p.Q_pkt.set_addr_present(rnd() & 1);
            h.pkt(p);
        }
        h.eot();
    }
}

#[test]
fn exception_without_address_reports_commit_overrun_too() {
    // An exception packet followed by an atom instead of its address: the
    // atom commits the exception, which finds no address. OpenCSD reports the
    // error at the packet being decoded (the atom), resets, then still counts
    // the exception as committed, so a commit overrun (at index 0) follows
    // before the decoder waits for a new sync.
    let mut h = Harness::new(cfg(0, false), &program());
    h.sync_at(0x1000, 0);
    h.take();
    h.pkt(except(3)); // idx 4
    h.pkt(atoms("E")); // idx 5
    assert_eq!(
        h.log.0,
        vec![
            "DCD_ETMV4_0016 : 0x0013 (OCSD_ERR_BAD_PACKET_SEQ) [Bad packet sequence]; TrcIdx=5; CS ID=10; Address missing in exception packet.",
            "DCD_ETMV4_0016 : 0x001a (OCSD_ERR_COMMIT_PKT_OVERRUN) [Overrun in commit packet stack - tried to commit more than available]; TrcIdx=0; CS ID=10; Not enough elements to commit",
        ]
    );
    // trace on and context were committed (and sent, on the context flush)
    // before the exception was reached
    let mut want: Vec<String> = SYNC_ELEMS[1..].iter().map(|s| s.to_string()).collect();
    want.push("5:10:OCSD_GEN_TRC_ELEM_NO_SYNC( [bad-packet])".into());
    assert_eq!(h.take(), want);
    // decoding resumes after a new sync
    h.sync_at(0x1000, 0);
    h.pkt(atoms("N"));
    let got = h.take();
    assert_eq!(
        got.last().map(String::as_str),
        Some("10:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1000:[0x100c] num_i(3) last_sz(4) (ISA=A64) N BR   <cond>)")
    );
    assert_eq!(h.log.0.len(), 2);
}

#[test]
fn commit_overrun_is_reported_at_index_zero() {
    let mut h = Harness::new(cfg(8, false), &program());
    h.sync_at(0x1000, 0);
    h.take();
    h.pkt(atoms("N")); // idx 4
    let mut cm = typed(ETM4_PKT_I_COMMIT);
    cm.commit_elements = 5;
    h.pkt(cm); // idx 5: one atom + trace on + context committed, then short
    assert_eq!(
        h.log.0,
        vec!["DCD_ETMV4_0016 : 0x001a (OCSD_ERR_COMMIT_PKT_OVERRUN) [Overrun in commit packet stack - tried to commit more than available]; TrcIdx=0; CS ID=10; Not enough elements to commit"]
    );
}

#[test]
fn q_count_above_i32_max_wraps_like_opencsd() {
    // OpenCSD holds the Q count in an int: a count above i32::MAX walks no
    // instructions and the no-path range reports the original count.
    let mut h = Harness::new(cfg(0, false), &program());
    h.sync_at(0x1000, 0);
    h.take();
    let mut q = typed(ETM4_PKT_I_Q);
    q.Q_pkt.q_count = 2_998_923_684;
    q.Q_pkt.set_addr_present(1);
    q.v_addr.val = 0x1020;
    h.pkt(q);
    let got = h.take();
    assert_eq!(
        got.last().map(String::as_str),
        Some("4:10:OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH(first 0x1000:[next 0x1020] num_i(2998923684) )"),
        "{:?}",
        got
    );
}

#[test]
fn cancel_overrun_keeps_timestamps_for_later() {
    // Cancelling more than is stacked is an overrun: error at the cancel
    // packet and a reset. The timestamp set aside by the cancel goes back on
    // the stack all the same (as in OpenCSD) and comes out at end of trace.
    let mut h = Harness::new(cfg(8, false), &program());
    h.sync_at(0x1000, 0);
    h.take();
    h.pkt(atoms("E")); // idx 4
    let mut ts = typed(ETM4_PKT_I_TIMESTAMP);
    ts.ts.timestamp = 0x99;
    h.pkt(ts); // idx 5
    let mut c = typed(ETM4_PKT_I_CANCEL_F1);
    c.cancel_elements = 3;
    h.pkt(c); // idx 6
    assert_eq!(
        h.log.0,
        vec!["DCD_ETMV4_0016 : 0x001a (OCSD_ERR_COMMIT_PKT_OVERRUN) [Overrun in commit packet stack - tried to commit more than available]; TrcIdx=6; CS ID=10; Not enough elements to cancel"]
    );
    assert_eq!(h.take(), vec!["6:10:OCSD_GEN_TRC_ELEM_NO_SYNC( [bad-packet])"]);
    h.eot();
    assert_eq!(
        h.take(),
        vec!["5:10:OCSD_GEN_TRC_ELEM_TIMESTAMP( [ TS=0x000000000099]; )", "6:10:OCSD_GEN_TRC_ELEM_EO_TRACE( [end-of-trace])"]
    );
}

#[test]
fn failed_walk_to_exception_return_address_is_fatal() {
    // An instruction range limit of 2 and an exception whose return address
    // is 3 instructions on: the walk fails. For an exception (unlike an
    // atom) OpenCSD logs the error and passes it up: the data path stops.
    let dec = EtmV4IPktDecoder::with_env(16, cfg(0, false), 2, false);
    let mut h = Harness::with_dec(dec, &program());
    h.sync_at(0x1000, 0);
    h.take();
    assert_eq!(h.pkt(except(3)), OCSD_RESP_CONT); // idx 4
    assert_eq!(h.pkt(addr(0x100c)), OCSD_RESP_FATAL_INVALID_DATA); // idx 5
    assert_eq!(
        h.log.0.last().map(String::as_str),
        Some("DCD_ETMV4_0016 : 0x002d (OCSD_ERR_I_RANGE_LIMIT_OVERRUN) [An optional limit on consecutive instructions in range during decode has been exceeded.]; TrcIdx=4; CS ID=10; Error processing exception packet.")
    );
    // no resynchronisation element: the decoder did not reset
    assert!(!h.take().iter().any(|e| e.contains("NO_SYNC")));
}

#[test]
fn q_without_address_is_reported_at_the_q_packet() {
    let mut h = Harness::new(cfg(0, false), &program());
    h.sync_at(0x1000, 0);
    h.take();
    let mut q = typed(ETM4_PKT_I_Q);
    q.Q_pkt.q_count = 2;
    h.pkt(q); // idx 4, waits for its address
    assert_eq!(h.pkt(atoms("E")), OCSD_RESP_FATAL_INVALID_DATA); // idx 5
    assert_eq!(
        h.log.0.last().map(String::as_str),
        Some("DCD_ETMV4_0016 : 0x0013 (OCSD_ERR_BAD_PACKET_SEQ) [Bad packet sequence]; TrcIdx=4; CS ID=10; Address missing in Q packet.")
    );
}

#[test]
fn cycle_count_reuses_last_commit_count() {
    // With TRCIDR0.COMMOPT set, cycle count packets carry no commit field;
    // OpenCSD still takes the packet's commit count, which is the last one
    // seen (here the commit packet's 1), so the cycle count commits an atom.
    let mut h = Harness::new(cfg(8, false), &program());
    h.sync_at(0x1000, 0);
    h.take();
    h.pkt(atoms("N")); // idx 4
    let mut cm = typed(ETM4_PKT_I_COMMIT);
    cm.commit_elements = 1;
    h.pkt(cm); // idx 5
    h.take();
    h.pkt(atoms("E")); // idx 6
    let mut cc = typed(ETM4_PKT_I_CCNT_F3);
    cc.cycle_count = 3;
    cc.commit_elements = 1; // left over from the commit packet, not valid
    h.pkt(cc); // idx 7
    assert_eq!(
        h.take(),
        vec!["6:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x100c:[0x1014] num_i(2) last_sz(4) (ISA=A64) E BR  b+link )"]
    );
    assert!(h.log.0.is_empty(), "{:?}", h.log.0);
}

#[test]
fn atoms_without_an_address_are_committed_silently_then_decode_resumes() {
    // after a failed memory read the decoder needs an address: the atoms
    // before it are committed (all of a packet at once) without output
    let mut h = Harness::new(cfg(0, false), &program());
    h.sync_at(0x8000, 0);
    h.take();
    h.pkt(atoms("E"));
    assert_eq!(h.take().last().map(String::as_str), Some("4:10:OCSD_GEN_TRC_ELEM_ADDR_NACC( 0x8000; Memspace [0x2:EL1N] )"));
    h.pkt(atoms("EENENNEEEENNENEEEEENNENE"));
    h.pkt(atoms("NEE"));
    assert!(h.take().is_empty());
    h.pkt(addr(0x1000));
    h.pkt(atoms("NE"));
    assert_eq!(
        h.take(),
        vec![
            "8:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1000:[0x100c] num_i(3) last_sz(4) (ISA=A64) N BR   <cond>)",
            "8:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x100c:[0x1014] num_i(2) last_sz(4) (ISA=A64) E BR  b+link )",
        ]
    );
}

#[test]
fn atoms_with_nothing_to_follow_are_absorbed_without_output_or_reads() {
    let mut h = Harness::new(cfg(0, false), &program());
    h.sync_at(0x1020, 0);
    // NOP, RET taken: the next address is unknown
    h.pkt(atoms("E"));
    h.take();
    let reads = h.mem.reads;
    assert!(h.dec.absorb(7, &atoms("ENE")));
    // what packet_in does with such atoms: nothing either
    h.idx = 8;
    h.pkt(atoms("EE"));
    assert!(h.take().is_empty());
    assert_eq!(h.mem.reads, reads);
    // an address: atoms are followed again
    h.pkt(addr(0x1000));
    assert!(!h.dec.absorb(10, &atoms("E")));
    h.pkt(atoms("NE"));
    assert_eq!(
        h.take(),
        vec![
            "10:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1000:[0x100c] num_i(3) last_sz(4) (ISA=A64) N BR   <cond>)",
            "10:10:OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x100c:[0x1014] num_i(2) last_sz(4) (ISA=A64) E BR  b+link )",
        ]
    );

    // with speculation the atoms wait on the stack for their commit
    let mut h = Harness::new(cfg(4, false), &program());
    h.sync_at(0x1020, 0);
    h.pkt(atoms("E"));
    assert!(!h.dec.absorb(6, &atoms("E")));
}

#[test]
fn address_packets_between_packets_are_stacked_unseen() {
    // an address packet taken by absorb gives what packet_in gives: the
    // same elements at the same indexes afterwards
    let run = |absorb: bool| {
        let mut h = Harness::new(cfg(0, false), &program());
        h.sync_at(0x1020, 0);
        h.pkt(atoms("E"));
        h.take();
        let a = addr(0x1000);
        if absorb {
            assert!(h.dec.absorb(h.idx, &a));
            h.idx += 1;
        } else {
            h.pkt(a);
        }
        h.pkt(atoms("NE"));
        h.pkt(addr(0x1010));
        h.pkt(atoms("E"));
        h.take()
    };
    let taken = run(true);
    assert_eq!(taken, run(false));
    assert_eq!(taken.len(), 3, "{:?}", taken);

    // not while elements wait to resolve (speculation), nor after an
    // exception whose address is still to come
    let mut h = Harness::new(cfg(4, false), &program());
    h.sync_at(0x1020, 0);
    h.pkt(atoms("E"));
    h.pkt(atoms("E"));
    assert!(h.dec.absorb(h.idx, &addr(0x1000)), "within the speculation depth, nothing to resolve");
    let mut h = Harness::new(cfg(0, false), &program());
    h.sync_at(0x1020, 0);
    let mut ex = typed(ETM4_PKT_I_EXCEPT);
    ex.exception_info.set_exceptionType(1);
    h.pkt(ex);
    assert!(!h.dec.absorb(h.idx, &addr(0x1000)), "an exception waits for its address");
}

/// A packet of [`feed_packets`]: an address, or an atom packet's header byte.
#[derive(Clone, Copy)]
enum Fed {
    Addr(u64),
    Atom(u8),
}

/// Feed `pkts` after a sync at 0x1000 as the stack does (a packet
/// `absorb` takes when nothing is queued goes no further), the atom
/// packets one by one or, with `runs`, in runs offered to `atom_packets`
/// as the packet processor offers them (a refused run's first packet then
/// going alone). Returns the elements, the log, the memory reads and the
/// decoder's state after the end of trace, and the number of packets
/// `atom_packets` took.
fn feed_packets(pkts: &[Fed], max_spec: u32, runs: bool) -> ((Vec<String>, Vec<String>, usize), EtmV4IPktDecoder, usize) {
    use crate::etmv4::pkt_proc::ATOM_HEADERS;
    let mut h = Harness::new(cfg(max_spec, false), &program());
    h.sync_at(0x1000, 0);
    let one = |h: &mut Harness, p: ocsd_etmv4_i_pkt| {
        if !(h.q.is_empty() && h.dec.absorb(h.idx, &p)) {
            let mut ctx = DecodeCtx::with_sink(&mut h.q, &mut h.mem, &mut h.log, Some(&mut h.sink));
            h.dec.packet_in(h.idx, &p, &mut ctx);
            h.q.deliver(&mut h.sink);
        }
        h.idx += 1;
    };
    let atom_pkt = |b: u8| {
        let a = ATOM_HEADERS[b as usize].expect("an atom header");
        ocsd_etmv4_i_pkt { type_: a.type_, atom: ocsd_pkt_atom { En_bits: a.bits, num: a.num }, ..Default::default() }
    };
    let mut k = 0;
    let mut in_runs = 0;
    while k < pkts.len() {
        match pkts[k] {
            Fed::Addr(a) => one(&mut h, addr(a)),
            Fed::Atom(b) if !runs => one(&mut h, atom_pkt(b)),
            Fed::Atom(b) => {
                let bytes: Vec<u8> = pkts[k..]
                    .iter()
                    .map_while(|p| match p {
                        Fed::Atom(b) => Some(*b),
                        Fed::Addr(_) => None,
                    })
                    .collect();
                let mut ctx = DecodeCtx::with_sink(&mut h.q, &mut h.mem, &mut h.log, Some(&mut h.sink));
                let (n, _) = PacketDecoder::atom_packets(&mut h.dec, h.idx, &bytes, &mut ctx);
                h.q.deliver(&mut h.sink);
                if n == 0 {
                    one(&mut h, atom_pkt(b));
                    k += 1;
                } else {
                    h.idx += n as u32;
                    k += n;
                    in_runs += n;
                }
                continue;
            }
        }
        k += 1;
    }
    h.eot();
    ((h.take(), h.log.0.clone(), h.mem.reads), h.dec, in_runs)
}

#[test]
fn atom_runs_from_header_bytes_decode_as_the_packets_one_by_one() {
    // random runs of atoms (every header byte) and addresses, mostly in
    // the program and now and then where there is no memory, with and
    // without speculation
    let (mut elems, mut in_runs) = (0, 0);
    for seed in 1..=60u64 {
        let mut rnd = crate::common::xorshift64(seed);
        let pkts: Vec<Fed> = (0..300)
            .map(|_| {
                let r = rnd();
                match r % 6 {
                    0 if r.is_multiple_of(7) => Fed::Addr(0x2000),
                    0 => Fed::Addr(BASE + 4 * ((r >> 8) % 11)),
                    _ => Fed::Atom(0xC0 + ((r >> 8) % 64) as u8),
                }
            })
            .collect();
        let max_spec = if seed % 4 == 0 { 3 } else { 0 };
        let (one_by_one, dec_one, _) = feed_packets(&pkts, max_spec, false);
        let (runs, dec_runs, n) = feed_packets(&pkts, max_spec, true);
        assert_eq!(one_by_one, runs, "seed {seed}");
        assert!(dec_one.same_state(&dec_runs), "seed {seed}: the decoders' states differ");
        elems += runs.0.len();
        in_runs += n;
    }
    // most atom packets go in runs (all but those after an address
    // where speculation holds them, and the first of a refused run)
    assert!(elems > 5_000 && in_runs > 8_000, "{elems} elements, {in_runs} packets in runs");
}
