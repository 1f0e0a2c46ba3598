//! Robustness harness shared by `tests/robustness.rs` and the cargo-fuzz
//! targets in `fuzz/` (included there with `#[path]`).
//!
//! It drives whole decode trees the way a client does (data in, WAIT ->
//! FLUSH, EOT, RESET) over random and mutated real trace, and checks the
//! library's contract on bad input:
//! - no panic (the caller catches unwinds and reports the scenario);
//! - each `data_in` consumes at most what it was given;
//! - progress: every loop is bounded, and a CONT answer with nothing
//!   consumed cannot repeat forever;
//! - WAIT loses and repeats nothing: the elements (or, for packet-only
//!   stacks, the packets) seen with random WAITs answered by the sink equal
//!   those seen when the sink never waits.
//!
//! Protocols plug in through [`PROTOCOLS`]: one line per snapshot device
//! type (the register names its config builder reads, with typical
//! values). A protocol whose config builder or decoder is not registered
//! yet is reported as skipped, not failed.

#![allow(dead_code)]

use std::cell::RefCell;
use std::fmt::Write as _;
use std::os::raw::c_void;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use opencsd_c_api::abi::gen_elem::ocsd_generic_trace_elem;
use opencsd_c_api::abi::*;
use opencsd_c_api::common::{ErrorLog, GenElemSink, OcsdError, TracePacket};
use opencsd_c_api::dcd_tree::{DecodeTree, PacketObserver, RawFrameMonitor, TraceIdDecoder};
use opencsd_c_api::mem::{Accessor, Source};
use opencsd_c_api::printers::gen_elem::write_elem_str;
use opencsd_c_api::printers::raw_frame::write_raw_frame;
use opencsd_c_api::snapshot::{self, ini::Ini, to_tree, Device, Snapshot};

// ---------------------------------------------------------------------------
// PRNG

/// xorshift64* — small, seedable, no dependency.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        // splitmix the seed so that nearby seeds give unrelated streams
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng(if z == 0 { 0x1234_5678 } else { z })
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    pub fn u8(&mut self) -> u8 {
        (self.next_u64() >> 56) as u8
    }
    /// Uniform in 0..n (0 when n == 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
    /// Uniform in lo..=hi.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    /// True with probability num/den.
    pub fn chance(&mut self, num: u32, den: u32) -> bool {
        (self.next_u64() % den as u64) < num as u64
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.u8()).collect()
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
    pub fn fork(&mut self) -> Rng {
        Rng::new(self.next_u64())
    }
}

/// Corrupt `data` as the shared corrupted snapshots are: a few byte flips,
/// insertions and deletions anywhere in the whole buffer.
pub fn corrupt_sparsely(data: &mut Vec<u8>, rng: &mut Rng) {
    for _ in 0..rng.range(1, 6) {
        if data.is_empty() {
            return;
        }
        let at = rng.below(data.len());
        match rng.below(4) {
            0 => data[at] ^= 1 << rng.below(8),
            1 => data[at] = rng.u8(),
            2 => {
                let n = rng.range(1, 17);
                let ins = rng.bytes(n);
                data.splice(at..at, ins);
            }
            _ => {
                let end = (at + rng.range(1, 17)).min(data.len());
                data.drain(at..end);
            }
        }
    }
}

/// A 64-bit mix of `x` (stateless, for deterministic memory contents).
pub fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 33)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x = (x ^ (x >> 33)).wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    x ^ (x >> 33)
}

// ---------------------------------------------------------------------------
// Protocols

/// A protocol as the snapshot format describes its trace source: device
/// type, plausible cores, and the registers its config builder reads.
pub struct ProtoSpec {
    pub dev_type: &'static str,
    pub cores: &'static [&'static str],
    pub regs: &'static [(&'static str, u32)],
    /// (register, bit shift) holding the 7-bit trace ID.
    pub id_reg: (&'static str, u32),
}

/// Every built-in protocol, one line each. STM and ITM join automatically
/// once their config builders (`snapshot::to_tree::device_config`) and
/// decoders (`dcd_tree::registry::create_builtin`) are registered.
pub const PROTOCOLS: &[ProtoSpec] = &[
    ProtoSpec { dev_type: "ETM4", cores: &["Cortex-A57", "Cortex-A53", "Cortex-A55", "Cortex-M33", "Cortex-R52", "ARMv8.1-M", "ARM-AA64"], regs: &[("TRCCONFIGR", 0xC1), ("TRCTRACEIDR", 0x10), ("TRCIDR0", 0x2800_0EA1), ("TRCIDR1", 0x4100_F403), ("TRCIDR2", 0x0000_0488), ("TRCIDR8", 0), ("TRCIDR9", 0), ("TRCIDR10", 0), ("TRCIDR11", 0), ("TRCIDR12", 0), ("TRCIDR13", 0)], id_reg: ("TRCTRACEIDR", 0) },
    ProtoSpec { dev_type: "ETE", cores: &["ARM-AA64", "Cortex-A710", "ARMv9.0-A", "ARMv8.4-A"], regs: &[("TRCCONFIGR", 0x1), ("TRCTRACEIDR", 0x2), ("TRCDEVARCH", 0x4770_5A13), ("TRCIDR0", 0x0800_0AA1), ("TRCIDR1", 0x4100_FFF0), ("TRCIDR2", 0xC000_1088), ("TRCIDR8", 0)], id_reg: ("TRCTRACEIDR", 0) },
    ProtoSpec { dev_type: "ETM3.5", cores: &["Cortex-A7", "Cortex-A9", "Cortex-R5", "Cortex-M3"], regs: &[("ETMCR", 0x1000_1860), ("ETMIDR", 0x410C_F250), ("ETMCCER", 0x3440_08F2), ("ETMTRACEIDR", 0x10)], id_reg: ("ETMTRACEIDR", 0) },
    ProtoSpec { dev_type: "PTM1.1", cores: &["Cortex-A15", "Cortex-A9", "Cortex-A7"], regs: &[("ETMCR", 0x1000_1000), ("ETMIDR", 0x411C_F312), ("ETMCCER", 0x34C0_1AC2), ("ETMTRACEIDR", 0x13)], id_reg: ("ETMTRACEIDR", 0) },
    ProtoSpec { dev_type: "STM", cores: &[], regs: &[("STMTCSR", 0x00A0_0005)], id_reg: ("STMTCSR", 16) },
    ProtoSpec { dev_type: "ITM", cores: &[], regs: &[("ITMTCR", 0x0020_0006)], id_reg: ("ITMTCR", 16) },
];

/// Collects everything logged (compared between runs, and shown on failure).
#[derive(Default)]
pub struct Record {
    /// Generic elements (full decode) as `Idx:..; ID:..; text`.
    pub elems: Vec<String>,
    /// Packets given to packet sinks (packet-only stacks).
    pub pkts: Vec<String>,
    /// Packets (with raw bytes) given to monitors.
    pub mon: Vec<String>,
    /// Raw frames from the deformatter.
    pub frames: Vec<String>,
    /// Errors and messages logged.
    pub log: Vec<String>,
    /// Data path events the driver saw (fatal responses).
    pub events: Vec<String>,
    /// The trace IDs decoded as PTM.
    pub ptm: Vec<usize>,
    /// The trace IDs decoded as STM.
    pub stm: Vec<usize>,
    /// The deformatter reads TPIU input (FSYNCs, HSYNCs).
    pub tpiu: bool,
}

pub type SharedRec = Rc<RefCell<Record>>;

/// Answers WAIT at random points (or never).
#[derive(Clone)]
pub struct Waiter {
    rng: Option<Rng>,
    /// Wait with probability 1/den.
    den: u32,
}

impl Waiter {
    pub fn never() -> Self {
        Waiter { rng: None, den: 1 }
    }
    pub fn random(seed: u64, den: u32) -> Self {
        Waiter { rng: Some(Rng::new(seed)), den: den.max(1) }
    }
    fn resp(&mut self) -> ocsd_datapath_resp_t {
        match self.rng.as_mut() {
            None => OCSD_RESP_CONT,
            Some(r) => {
                if r.chance(1, self.den) {
                    // WARN_WAIT / ERR_WAIT are waits too
                    *r.pick(&[OCSD_RESP_WAIT, OCSD_RESP_WAIT, OCSD_RESP_WAIT, OCSD_RESP_WARN_WAIT, OCSD_RESP_ERR_WAIT])
                } else {
                    *r.pick(&[OCSD_RESP_CONT, OCSD_RESP_CONT, OCSD_RESP_CONT, OCSD_RESP_WARN_CONT, OCSD_RESP_ERR_CONT])
                }
            }
        }
    }
}

struct ElemRec {
    rec: SharedRec,
    wait: Waiter,
    text: String,
}

impl GenElemSink for ElemRec {
    fn trace_elem_in(&mut self, index_sop: ocsd_trc_index_t, chan: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        self.text.clear();
        let _ = write!(self.text, "Idx:{}; ID:{:x}; ", index_sop, chan);
        write_elem_str(elem, &mut self.text);
        self.rec.borrow_mut().elems.push(self.text.clone());
        self.wait.resp()
    }
}

struct PktRec {
    rec: SharedRec,
    id: u8,
    monitor: bool,
    wait: Waiter,
}

impl PacketObserver for PktRec {
    fn packet(
        &mut self,
        op: ocsd_datapath_op_t,
        index_sop: ocsd_trc_index_t,
        pkt: Option<&dyn TracePacket>,
        pkt_ptr: *const c_void,
        raw: &[u8],
    ) -> ocsd_datapath_resp_t {
        let mut s = format!("op{} ID:{:x} Idx:{} ", op, self.id, index_sop);
        if op == OCSD_OP_DATA {
            assert!(!pkt_ptr.is_null(), "data packet without a C packet pointer");
            match pkt {
                Some(p) => {
                    if self.monitor {
                        s.push('[');
                        for b in raw {
                            let _ = write!(s, "{:02x}", b);
                        }
                        s.push_str("] ");
                    }
                    p.write_str(&mut s);
                    let _ = p.is_bad_packet();
                }
                None => s.push_str("<no packet>"),
            }
        }
        if std::env::var_os("OCSD_ROBUST_VERBOSE").is_some() {
            eprintln!("  {} {}", if self.monitor { "monitor" } else { "sink" }, s);
        }
        if self.monitor {
            self.rec.borrow_mut().mon.push(s);
            OCSD_RESP_CONT
        } else {
            self.rec.borrow_mut().pkts.push(s);
            if op == OCSD_OP_DATA {
                self.wait.resp()
            } else {
                OCSD_RESP_CONT
            }
        }
    }
}

struct FrameRec {
    rec: SharedRec,
}

impl RawFrameMonitor for FrameRec {
    fn raw_frame(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, elem: ocsd_rawframe_elem_t, data: &[u8], id: u8) {
        let mut s = format!("op{} ", op);
        if op == OCSD_OP_DATA {
            write_raw_frame(&mut s, elem, index, data, id);
        }
        self.rec.borrow_mut().frames.push(s.trim_end().replace('\n', " | "));
    }
}

struct LogRec {
    rec: SharedRec,
}

impl ErrorLog for LogRec {
    fn log_error(&mut self, component: &str, err: &OcsdError) {
        let s = format!("{} : {}", component, err.details());
        let _ = err.error_string();
        self.rec.borrow_mut().log.push(s);
    }
    fn log_message(&mut self, component: &str, sev: ocsd_err_severity_t, msg: &str) {
        self.rec.borrow_mut().log.push(format!("{} [{}] {}", component, sev, msg));
    }
}

pub fn log_for(rec: &SharedRec) -> Box<dyn ErrorLog> {
    Box::new(LogRec { rec: rec.clone() })
}

// ---------------------------------------------------------------------------
// Building decoders and trees

/// A random configuration for `spec` on trace ID `id`: each register is its
/// typical value, the typical value with bits flipped, or random.
pub fn random_device(spec: &ProtoSpec, id: u8, rng: &mut Rng, mutate: bool) -> (Device, String) {
    let mut dev = Device { name: format!("{}_{}", spec.dev_type, id), class: "trace_source".into(), type_name: spec.dev_type.into(), ..Default::default() };
    for &(name, typical) in spec.regs {
        let mut v = typical;
        if mutate {
            match rng.below(8) {
                0 | 1 => v ^= 1 << rng.below(32),
                2 => v ^= rng.u32() & rng.u32(),
                3 => v = rng.u32(),
                _ => {}
            }
        }
        if name == spec.id_reg.0 {
            v = (v & !(0x7F << spec.id_reg.1)) | ((id as u32 & 0x7F) << spec.id_reg.1);
        }
        dev.regs.push((name.to_string(), format!("0x{:X}", v)));
    }
    // now and then a register goes missing
    if mutate && rng.chance(1, 25) && !dev.regs.is_empty() {
        let i = rng.below(dev.regs.len());
        dev.regs.remove(i);
    }
    let core = if spec.cores.is_empty() {
        String::new()
    } else if mutate && rng.chance(1, 30) {
        "Banana-Z9".to_string()
    } else {
        rng.pick(spec.cores).to_string()
    };
    (dev, core)
}

/// Why a decoder could not be made.
#[derive(Debug)]
pub enum MakeErr {
    /// The protocol is not available yet (no config builder / decoder).
    Unsupported(String),
    /// The library rejected the configuration with an error code (fine).
    Rejected(String),
}

/// Create the decode stack for a (possibly mutated) device through the
/// same path the snapshot reader uses.
pub fn make_decoder(dev: &Device, core: &str, full: bool, log: &mut dyn ErrorLog) -> Result<Box<dyn TraceIdDecoder>, MakeErr> {
    if opencsd_c_api::config::Protocol::from_device_type(&dev.type_name).is_none() {
        return Err(MakeErr::Unsupported(format!("no configuration for device type {}", dev.type_name)));
    }
    let ap = if core.is_empty() { ocsd_arch_profile_t::default() } else { snapshot::arch_profile(core) };
    let Some(cfg) = to_tree::device_config(dev, ap, log) else {
        return Err(MakeErr::Rejected("register values refused".into()));
    };
    let name = cfg.decoder_name();
    let flags = if full { OCSD_CREATE_FLG_FULL_DECODER } else { OCSD_CREATE_FLG_PACKET_PROC };
    match cfg.create_decoder(flags) {
        Ok(d) => Ok(d),
        Err(e) if e == OCSD_ERR_NO_PROTOCOL || e == OCSD_ERR_DCDREG_NAME_UNKNOWN => {
            Err(MakeErr::Unsupported(format!("decoder {} not registered (err {:?})", name, e)))
        }
        Err(e) => Err(MakeErr::Rejected(format!("create_decoder({}) -> {:?}", name, e))),
    }
}

/// Whether protocol `spec` has a decoder in this build (packet processing
/// and, if `full`, full decode).
pub fn proto_available(spec: &ProtoSpec, full: bool) -> Result<(), String> {
    let mut rng = Rng::new(1);
    let (dev, core) = random_device(spec, 0x10, &mut rng, false);
    match make_decoder(&dev, &core, full, &mut opencsd_c_api::common::error::NullLog) {
        Ok(_) => Ok(()),
        Err(MakeErr::Unsupported(s)) | Err(MakeErr::Rejected(s)) => Err(s),
    }
}

/// Deformatter flag combinations: all valid input formats, with and
/// without raw frame output.
pub fn deformatter_flag_sets() -> Vec<u32> {
    let mut v = Vec::new();
    for base in [
        OCSD_DFRMTR_FRAME_MEM_ALIGN,
        OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_RESET_ON_4X_FSYNC,
        OCSD_DFRMTR_HAS_FSYNCS,
        OCSD_DFRMTR_HAS_FSYNCS | OCSD_DFRMTR_HAS_HSYNCS,
    ] {
        for raw in [0, OCSD_DFRMTR_PACKED_RAW_OUT, OCSD_DFRMTR_UNPACKED_RAW_OUT, OCSD_DFRMTR_PACKED_RAW_OUT | OCSD_DFRMTR_UNPACKED_RAW_OUT] {
            v.push(base | raw);
        }
    }
    v
}

pub fn alignment_of(flags: u32) -> usize {
    if flags & OCSD_DFRMTR_HAS_HSYNCS != 0 {
        2
    } else if flags & OCSD_DFRMTR_HAS_FSYNCS != 0 {
        4
    } else {
        16
    }
}

/// Memory to map for full decode.
#[derive(Clone, Debug)]
pub enum MemSetup {
    /// Nothing mapped.
    None,
    /// Whatever the tree already has (snapshot dumps).
    Keep,
    /// Drop what the tree has and map random images: a few buffers and a
    /// client callback over the rest of the address space, whose bytes
    /// depend on the address only (so runs are repeatable).
    Random(u64),
    /// The tree's file images given instead through client callbacks
    /// over the same ranges, answering from the same files: decoded
    /// through the page cache and its callback paths, and checked against
    /// the same decode from the files.
    KeepAsCallback,
}

fn map_random_memory(tree: &mut DecodeTree, seed: u64) {
    let mut rng = Rng::new(seed);
    tree.mapper.clear();
    // buffers at random or typical addresses
    let bases: [u64; 6] = [0, 0x8000, 0x40_0000, 0xC000_0000, 0xFFFF_FFC0_0008_0000, u64::MAX - 0xFFF];
    for _ in 0..rng.below(4) {
        let start = if rng.chance(1, 2) { *rng.pick(&bases) } else { rng.next_u64() };
        let len = rng.range(1, 4096);
        let data = rng.bytes(len);
        let end = start.saturating_add(len as u64 - 1);
        let space = *rng.pick(&[OCSD_MEM_SPACE_ANY, OCSD_MEM_SPACE_EL1N, OCSD_MEM_SPACE_S, OCSD_MEM_SPACE_N, OCSD_MEM_SPACE_EL3]);
        let _ = tree.mapper.add(Accessor { start, end, space, source: Source::Buffer { data: std::sync::Arc::new(data) } });
    }
    if rng.chance(3, 4) {
        let salt = rng.next_u64();
        let (start, end) = if rng.chance(1, 2) { (0, u64::MAX) } else {
            let a = rng.next_u64();
            let b = rng.next_u64();
            (a.min(b), a.max(b))
        };
        let space = *rng.pick(&[OCSD_MEM_SPACE_ANY, OCSD_MEM_SPACE_N, OCSD_MEM_SPACE_EL2]);
        let read = move |addr: ocsd_vaddr_t, _space: ocsd_mem_space_acc_t, _id: u8, buf: &mut [u8]| -> usize {
            let h = mix64(addr ^ salt);
            for (i, b) in buf.iter_mut().enumerate() {
                *b = mix64(addr.wrapping_add(i as u64) ^ salt) as u8;
            }
            match h % 32 {
                0 => 0,                                // unreadable here
                1 => buf.len() / 2,                    // short read
                2 => buf.len().saturating_add(1),      // a client that lies
                _ => buf.len(),
            }
        };
        let _ = tree.mapper.add(Accessor { start, end, space, source: Source::Callback { read: Box::new(read) } });
    }
}

/// How to observe a tree: which ids get monitors, how the sink waits.
#[derive(Clone)]
pub struct Observe {
    pub seed: u64,
    /// WAIT with probability 1/den in the sinks (None: never).
    pub wait_den: Option<u32>,
}

/// Attach the recording sinks and monitors to every stack of `tree`.
pub fn attach(tree: &mut DecodeTree, rec: &SharedRec, obs: &Observe) {
    let mut rng = Rng::new(obs.seed);
    let mut wait_seeds = Rng::new(obs.seed ^ 0x5741_4954);
    let mk_wait = |r: &mut Rng| match obs.wait_den {
        Some(d) => Waiter::random(r.next_u64(), d),
        None => {
            r.next_u64();
            Waiter::never()
        }
    };
    tree.set_elem_sink(Some(Box::new(ElemRec { rec: rec.clone(), wait: mk_wait(&mut wait_seeds), text: String::new() })));
    if let Some(flags) = tree.deformatter_mut().map(|d| d.config_flags()) {
        rec.borrow_mut().tpiu = flags & (OCSD_DFRMTR_HAS_FSYNCS | OCSD_DFRMTR_HAS_HSYNCS) != 0;
        tree.set_raw_monitor(if rng.chance(2, 3) { Some(Box::new(FrameRec { rec: rec.clone() })) } else { None });
    }
    for id in tree.element_ids() {
        let with_mon = rng.chance(1, 2);
        let proc_flags = if rng.chance(1, 3) { rng.u32() & (OCSD_OPFLG_PKTPROC_COMMON | 0x0001_0000) } else { 0 };
        let dec_flags = if rng.chance(1, 3) { rng.u32() & (OCSD_OPFLG_PKTDEC_COMMON | 0x0003_0000) } else { 0 };
        let w = mk_wait(&mut wait_seeds);
        let Some(d) = tree.decoder_mut(id) else { continue };
        match d.protocol() {
            OCSD_PROTOCOL_PTM => rec.borrow_mut().ptm.push(id as usize),
            OCSD_PROTOCOL_STM => rec.borrow_mut().stm.push(id as usize),
            _ => {}
        }
        if with_mon {
            d.set_monitor(Some(Box::new(PktRec { rec: rec.clone(), id, monitor: true, wait: Waiter::never() })));
        }
        if !d.has_decoder() {
            let r = d.set_sink(Some(Box::new(PktRec { rec: rec.clone(), id, monitor: false, wait: w })));
            assert_eq!(r, OCSD_OK, "set_sink on a packet-only stack");
        }
        d.set_proc_op_flags(proc_flags);
        d.set_dec_op_flags(dec_flags);
        let _ = d.stats();
    }
}

// ---------------------------------------------------------------------------
// Driving

/// One input session: blocks of trace, ended by EOT (and RESET).
pub type Session = Vec<Vec<u8>>;

/// Feed `sessions` through `tree` as a client does. Returns an error
/// describing a broken contract (not a decode error: those are logged).
pub fn drive(tree: &mut DecodeTree, sessions: &[Session], rec: &SharedRec) -> Result<(), String> {
    let total: usize = sessions.iter().flatten().map(|b| b.len()).sum();
    // generous, but finite: every call either consumes data or delivers at
    // least one queued element / packet
    let budget = 64 * total + 100_000;
    let mut calls = 0usize;
    let mut index: u32 = 0;
    let verbose = std::env::var_os("OCSD_ROBUST_VERBOSE").is_some();
    // What the frame deformatter had left to send of a frame when the
    // last RESET came (a WAIT or a fatal answer stopped it): OpenCSD's
    // RESET keeps it, and a FLUSH before a new frame sends it (to the
    // decoders just reset). Only a client that waits FLUSHes there, so
    // such a decode is not compared with the one without WAITs.
    let mut left_at_reset: Option<(u8, u32)> = None;
    let mut call = |tree: &mut DecodeTree, op: ocsd_datapath_op_t, index: u32, data: &[u8]| -> Result<(ocsd_datapath_resp_t, usize), String> {
        calls += 1;
        let left = tree.deformatter_mut().and_then(|d| d.pending_output());
        if left_at_reset.is_some() && left != left_at_reset {
            left_at_reset = None;
        }
        if op == OCSD_OP_FLUSH && left_at_reset.is_some() {
            rec.borrow_mut().events.push("flush after a reset".into());
        }
        if calls > budget {
            return Err(format!("no progress: more than {} data path calls for {} bytes", budget, total));
        }
        let (r, used) = tree.data_in(op, index, data);
        if verbose {
            eprintln!("data_in(op {}, index {}, {} bytes) -> resp {}, used {}", op, index, data.len(), r, used);
        }
        if used > data.len() {
            return Err(format!("op {} consumed {} of {} bytes", op, used, data.len()));
        }
        if op != OCSD_OP_DATA && used != 0 {
            return Err(format!("op {} reported {} bytes consumed", op, used));
        }
        if op == OCSD_OP_RESET {
            left_at_reset = tree.deformatter_mut().and_then(|d| d.pending_output());
        }
        if !(OCSD_RESP_CONT..=OCSD_RESP_FATAL_SYS_ERR).contains(&r) {
            return Err(format!("op {} returned unknown response {}", op, r));
        }
        Ok((r, used))
    };
    for (sn, session) in sessions.iter().enumerate() {
        for block in session {
            let mut done = 0usize;
            let mut idle = 0usize;
            while done < block.len() {
                let (r, used) = call(tree, OCSD_OP_DATA, index, &block[done..])?;
                done += used;
                index = index.wrapping_add(used as u32);
                if resp_is_fatal(r) {
                    // OpenCSD's contract: a fatal response needs a reset;
                    // the client drops the rest of the block.
                    rec.borrow_mut().events.push(format!("fatal {} at {}", r, index));
                    call(tree, OCSD_OP_RESET, index, &[])?;
                    index = index.wrapping_add((block.len() - done) as u32);
                    break;
                }
                if resp_is_wait(r) {
                    let mut r = r;
                    let mut flushes = 0;
                    while resp_is_wait(r) {
                        flushes += 1;
                        if flushes > 1_000_000 {
                            return Err("FLUSH keeps answering WAIT".into());
                        }
                        r = call(tree, OCSD_OP_FLUSH, 0, &[])?.0;
                    }
                    if resp_is_fatal(r) {
                        rec.borrow_mut().events.push(format!("fatal {} at {}", r, index));
                        call(tree, OCSD_OP_RESET, index, &[])?;
                        index = index.wrapping_add((block.len() - done) as u32);
                        break;
                    }
                    idle = 0;
                } else if used == 0 {
                    idle += 1;
                    if idle > 1000 {
                        return Err(format!("data_in answered CONT ({}) 1000 times without consuming data", r));
                    }
                }
            }
        }
        // end of trace: the sink may wait on the last elements too
        let (mut r, _) = call(tree, OCSD_OP_EOT, 0, &[])?;
        let mut flushes = 0;
        while resp_is_wait(r) {
            flushes += 1;
            if flushes > 1_000_000 {
                return Err("FLUSH after EOT keeps answering WAIT".into());
            }
            r = call(tree, OCSD_OP_FLUSH, 0, &[])?.0;
        }
        if resp_is_fatal(r) {
            rec.borrow_mut().events.push(format!("fatal {} at EOT of session {}", r, sn));
        }
        call(tree, OCSD_OP_RESET, 0, &[])?;
        index = 0;
    }
    // operations that are not valid
    let (r, _) = tree.data_in(OCSD_OP_DATA, 0, &[]);
    if !resp_is_fatal(r) {
        return Err(format!("empty data block answered {}", r));
    }
    let (r, _) = tree.data_in(77, 0, &[1, 2, 3]);
    if !resp_is_fatal(r) {
        return Err(format!("unknown operation answered {}", r));
    }
    Ok(())
}

/// Replace each of the tree's file images by a client callback over the
/// same range and memory space that answers from the same file.
pub fn files_as_callback(tree: &mut DecodeTree) {
    let images = tree.mapper.file_images();
    tree.mapper.clear();
    for img in images {
        let (start, end, space) = (img.start, img.end, img.space);
        let read = move |addr: ocsd_vaddr_t, _space: ocsd_mem_space_acc_t, _id: u8, buf: &mut [u8]| -> usize { img.read(addr, buf) };
        let _ = tree.mapper.add(Accessor { start, end, space, source: Source::Callback { read: Box::new(read) } });
    }
}

/// The elements of a decode of `sessions` (observers attached, no WAIT).
pub fn elements_of(label: &str, build: &dyn Fn(&SharedRec) -> Option<DecodeTree>, sessions: &[Session], obs_seed: u64) -> Result<Vec<String>, String> {
    let rec: SharedRec = Rc::new(RefCell::new(Record::default()));
    let Some(mut tree) = build(&rec) else { return Ok(Vec::new()) };
    attach(&mut tree, &rec, &Observe { seed: obs_seed, wait_den: None });
    drive(&mut tree, sessions, &rec).map_err(|e| format!("{}: {}", label, e))?;
    drop(tree);
    let elems = rec.borrow().elems.clone();
    Ok(elems)
}

/// Build with `build`, drive without and then with random WAITs, and
/// compare what the client saw. `build` must be deterministic.
pub fn run_pair(label: &str, build: &dyn Fn(&SharedRec) -> Option<DecodeTree>, sessions: &[Session], obs_seed: u64, wait_den: u32) -> Result<(), String> {
    let run = |wait: Option<u32>| -> Result<Option<Record>, String> {
        let rec: SharedRec = Rc::new(RefCell::new(Record::default()));
        let Some(mut tree) = build(&rec) else { return Ok(None) };
        attach(&mut tree, &rec, &Observe { seed: obs_seed, wait_den: wait });
        drive(&mut tree, sessions, &rec).map_err(|e| format!("{}: {}", label, e))?;
        let _ = tree.demux_stats();
        drop(tree);
        Ok(Some(Rc::try_unwrap(rec).ok().expect("record still shared").into_inner()))
    };
    let Some(a) = run(None)? else { return Ok(()) };
    let Some(b) = run(Some(wait_den))? else { return Err(format!("{}: tree built once but not twice", label)) };
    // TPIU input (FSYNCs, HSYNCs): OpenCSD 1.8.0 takes a block only in
    // whole words (FSYNCs only) or byte pairs (with HSYNCs), and leaves the
    // last 3 bytes of a block it finds no FSYNC in: what a WAIT leaves of a
    // block (and the bytes left after a sync at an odd offset) may not be
    // such a block, and its resend then fails, in OpenCSD too. A decode in
    // which that happened is not compared with the other.
    let misaligned = |r: &Record| r.tpiu && r.log.iter().any(|s| s.contains("Input block incorrect size"));
    if misaligned(&a) || misaligned(&b) {
        return Ok(());
    }
    // A decoder OpenCSD refuses for its configuration (data trace, LSP0,
    // conditional trace) fails every operation, a FLUSH too: the FLUSHes
    // another trace ID's WAITs bring make the client drop data the decode
    // without WAITs went on to, in OpenCSD too. Such a decode is not
    // compared with the other.
    let refused = |r: &Record| r.log.iter().any(|s| s.contains("No decoder configuration information"));
    if refused(&a) || refused(&b) {
        return Ok(());
    }
    // A FLUSH after a RESET sends what the deformatter had left of a
    // frame, in OpenCSD too (see `drive`): only the client that waits
    // FLUSHes there.
    let stale = |r: &Record| r.events.iter().any(|e| e == "flush after a reset");
    if stale(&a) || stale(&b) {
        return Ok(());
    }
    // Per trace ID, elements must come in the same order; across IDs a
    // waiting client may see them interleaved differently at the end of
    // trace (EOT goes to every ID, as in OpenCSD), so compare per ID.
    let per_id = |v: &[String]| -> Vec<String> {
        let mut v = v.to_vec();
        v.sort_by_key(|s| elem_id(s)); // stable: keeps each ID's order
        v
    };
    // PTM while unsynchronised (below): the index of the last packet, so
    // of the end-of-trace element, moves with the WAITs, in OpenCSD too.
    // So the index of an EO_TRACE element of a PTM source that ends
    // unsynchronised (its element before is NO_SYNC) is not compared.
    let id_set = |ids: &[usize]| -> [bool; 256] {
        let mut set = [false; 256];
        for &id in ids {
            set[id] = true;
        }
        set
    };
    // (both runs build the same tree: the first run's sets serve both)
    let ptm = id_set(&a.ptm);
    // STM (OpenCSD's processor, mirrored for parity): a call that a WAIT
    // stops with only the second nibble of its last byte unread leaves the
    // nibble pending; the next call reads it first, with its own index base
    // (a deformatter's next chunk for the ID may start bytes or frames
    // later), and an EOT or RESET drops it. So for an STM source indices
    // are not compared, and the packet (and its element, if any) that
    // began with the last nibble before an EOT or RESET may be missing
    // with WAITs.
    // And after a bad packet OpenCSD's STM processor may take the nibbles
    // up differently when a WAIT left one pending (one C client with WAITs
    // prints the same on OpenCSD 1.3.3 and this library on corrupted STM
    // trace): an STM source's lines after its first bad packet (and its
    // logged errors after the first) are not compared.
    let stm = id_set(&a.stm);
    let stm_quirk = |v: &[String]| -> Vec<String> {
        let mut out = Vec::with_capacity(v.len());
        let mut bad = [false; 256];
        let mut synced = [false; 256];
        for (k, s) in v.iter().enumerate() {
            let id = elem_id(s);
            if !stm[id] {
                out.push(s.clone());
                continue;
            }
            if bad[id] {
                continue;
            }
            // (a lost sync after the first ASYNC follows a bad packet)
            if s.contains("BAD_SEQUENCE:") || s.contains("RESERVED:") || s.contains("[bad-packet]") || (synced[id] && s.contains("NOTSYNC:")) {
                bad[id] = true;
            }
            synced[id] |= s.contains("ASYNC:");
            let one_nibble = s.contains("NULL:Null packet") || s.contains("INCOMPLETE_EOT");
            if one_nibble && v[k + 1..].iter().find(|n| elem_id(n) == id).is_some_and(|n| n.starts_with("op1 ") || n.starts_with("op3 ")) {
                continue;
            }
            out.push(strip_idx(s));
        }
        out
    };
    let eot_quirk = |v: Vec<String>| -> Vec<String> {
        let mut prev_no_sync = [false; 256];
        v.into_iter()
            .map(|s| {
                let id = elem_id(&s);
                let out = if ptm[id] && prev_no_sync[id] && s.contains("OCSD_GEN_TRC_ELEM_EO_TRACE") { strip_idx(&s) } else { s };
                prev_no_sync[id] = out.contains("OCSD_GEN_TRC_ELEM_NO_SYNC");
                out
            })
            .collect()
    };
    compare(label, "elements", &stm_quirk(&eot_quirk(per_id(&a.elems))), &stm_quirk(&eot_quirk(per_id(&b.elems))))?;
    // PTM while unsynchronised (OpenCSD's `waitASync`, mirrored for
    // parity): the monitor is shown the skipped bytes in pieces cut at the
    // input block boundaries, read from the current block; the packet index
    // is re-anchored at each block start, misses zeros held over after a
    // long run of them, and counts held-over bytes twice when a monitor is
    // attached. A WAIT that splits a block changes all that, in OpenCSD too.
    // So, for a PTM source from NOTSYNC up to the ASYNC that ends the search,
    // the monitor's NOTSYNC lines are left out and packet indices are not
    // compared; everything else must match.
    // Every protocol: OpenCSD dumps unsynchronised bytes to the monitor in
    // pieces cut where the input blocks end (and STM / PTM show bytes past
    // the block), so a WAIT that splits a block changes those monitor lines
    // too. They are left out of the monitor comparison; the packets
    // themselves are still compared.
    // PTM also: an ASYNC found while unsynchronised waits in the packet
    // processor (OpenCSD's SEND_PKT state) when the client answered WAIT
    // to the NOTSYNC packet before it; OpenCSD's PTM flush does nothing,
    // so the ASYNC goes out with that ID's next trace bytes, and a RESET
    // first drops it. So an ASYNC whose ID's next line is a RESET is left
    // out, and the index of non-data operations is not compared.
    let ptm_quirk = |v: &[String], mon: bool| -> Vec<String> {
        let mut unsynced = [false; 256];
        let mut ptm = [false; 256];
        let mut out = Vec::with_capacity(v.len());
        for (k, s) in v.iter().enumerate() {
            let id = elem_id(s);
            if s.contains("NOTSYNC : PTM Not Synchronised") {
                unsynced[id] = true;
                ptm[id] = true;
            }
            if ptm[id] && s.contains("ASYNC : Alignment Synchronisation Packet") && v[k + 1..].iter().find(|n| elem_id(n) == id).is_some_and(|n| n.starts_with("op3 ")) {
                continue;
            }
            if ptm[id] && !s.starts_with("op0 ") {
                out.push(strip_idx(s));
                continue;
            }
            if mon && (s.contains("NOTSYNC") || s.contains("NOT_SYNC")) {
                continue;
            }
            if unsynced[id] {
                if s.contains("ASYNC : Alignment Synchronisation Packet") {
                    unsynced[id] = false;
                }
                out.push(strip_idx(s));
            } else {
                out.push(s.clone());
            }
        }
        out
    };
    compare(label, "packets", &ptm_quirk(&stm_quirk(&a.pkts), false), &ptm_quirk(&stm_quirk(&b.pkts), false))?;
    compare(label, "monitored packets", &ptm_quirk(&stm_quirk(&a.mon), true), &ptm_quirk(&stm_quirk(&b.mon), true))?;
    // A frame deformatter shows a chunk of ID data (raw frame printer)
    // before it goes to its stream, and again when it resends a chunk the
    // stream used none of (a WAIT on the stream's first output, say), as
    // OpenCSD's does: a line repeated right after itself is one.
    let once = |v: &[String]| -> Vec<String> {
        let mut v = v.to_vec();
        v.dedup();
        v
    };
    compare(label, "raw frames", &once(&a.frames), &once(&b.frames))?;
    compare(label, "fatal responses", &a.events, &b.events)?;
    // (the STM indices again, in the errors its processor logs)
    let stm_log = |v: &[String]| -> Vec<String> {
        let mut seen = [false; 256];
        v.iter()
            .filter_map(|s| {
                let id = s.split("CS ID=").nth(1).and_then(|t| t.get(..2)).and_then(|t| u8::from_str_radix(t, 16).ok());
                match (id, s.find("TrcIdx=")) {
                    (Some(id), Some(i)) if stm[id as usize] => {
                        if std::mem::replace(&mut seen[id as usize], true) {
                            return None;
                        }
                        let end = s[i..].find(';').map_or(s.len(), |e| i + e);
                        Some(format!("{}TrcIdx=?{}", &s[..i], &s[end..]))
                    }
                    _ => Some(s.clone()),
                }
            })
            .collect()
    };
    compare(label, "logged errors", &stm_log(&a.log), &stm_log(&b.log))?;
    Ok(())
}

/// The trace ID of a line with `ID:` in it (element lines: `ID:1a;`,
/// packet lines: `ID:1a `), in hex; 0 when there is none.
fn elem_id(s: &str) -> usize {
    s.split("ID:").nth(1).and_then(|t| t.split([';', ' ']).next()).and_then(|t| u8::from_str_radix(t, 16).ok()).unwrap_or(0) as usize
}

fn strip_idx(s: &str) -> String {
    match s.find("Idx:") {
        Some(i) => {
            let rest = &s[i + 4..];
            let end = rest.find(' ').unwrap_or(rest.len());
            format!("{}Idx:? {}", &s[..i], &rest[end..])
        }
        None => s.to_string(),
    }
}

fn compare(label: &str, what: &str, a: &[String], b: &[String]) -> Result<(), String> {
    if a == b {
        return Ok(());
    }
    let i = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let ctx = |v: &[String]| -> String {
        v[i.saturating_sub(if std::env::var_os("OCSD_ROBUST_WIDE").is_some() { 200 } else { 3 })..(i + 3).min(v.len())].iter().map(|s| format!("    {}\n", s)).collect()
    };
    Err(format!(
        "{}: {} differ with WAITs (nothing may be lost or repeated): {} without waits, {} with; first difference at #{}\n  without waits:\n{}  with waits:\n{}",
        label, what, a.len(), b.len(), i, ctx(a), ctx(b)
    ))
}

/// Run `f`, turning a panic into an error naming the scenario.
pub fn no_panic<T>(label: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            Err(format!("{}: PANIC: {}", label, msg))
        }
    }
}

// ---------------------------------------------------------------------------
// Input generation

/// Split `data` into blocks at random places; `align` > 1: mostly on
/// multiples of it (a deformatter rejects other sizes, which is tested
/// now and then too).
pub fn random_blocks(data: &[u8], rng: &mut Rng, align: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut p = 0;
    let style = rng.below(4);
    while p < data.len() {
        let mut n = match style {
            0 => rng.range(1, 16),
            1 => rng.range(1, 256),
            2 => 1024,
            _ => rng.range(1, 4096),
        };
        if align > 1 && !rng.chance(1, 50) {
            n = (n / align).max(1) * align;
        }
        let n = n.min(data.len() - p);
        out.push(data[p..p + n].to_vec());
        p += n;
    }
    out
}

/// Corrupt `data`: flips, truncation, splices, deletions, duplications.
pub fn mutate(data: &mut Vec<u8>, rng: &mut Rng, donor: &[u8]) {
    let n_ops = rng.range(0, 6);
    for _ in 0..n_ops {
        if data.is_empty() {
            break;
        }
        match rng.below(7) {
            0 | 1 => {
                let flips = rng.range(1, 1 + data.len() / 256);
                for _ in 0..flips {
                    let i = rng.below(data.len());
                    data[i] ^= 1 << rng.below(8);
                }
            }
            2 => {
                let i = rng.below(data.len());
                data[i] = rng.u8();
            }
            3 => {
                // truncate
                let keep = rng.below(data.len() + 1);
                data.truncate(keep);
            }
            4 => {
                // splice a chunk of the donor (another part or another file)
                if !donor.is_empty() {
                    let len = rng.range(1, donor.len().min(512));
                    let from = rng.below(donor.len() - len + 1);
                    let at = rng.below(data.len() + 1);
                    let chunk: Vec<u8> = donor[from..from + len].to_vec();
                    if rng.chance(1, 2) {
                        data.splice(at..at, chunk);
                    } else {
                        let end = (at + len).min(data.len());
                        data.splice(at..end, chunk);
                    }
                }
            }
            5 => {
                // delete a range
                let a = rng.below(data.len());
                let b = (a + rng.range(1, 64)).min(data.len());
                data.drain(a..b);
            }
            _ => {
                // duplicate a range
                let a = rng.below(data.len());
                let b = (a + rng.range(1, 64)).min(data.len());
                let chunk: Vec<u8> = data[a..b].to_vec();
                data.splice(a..a, chunk);
            }
        }
    }
}

/// Random bytes shaped a little like trace: runs of zeros (async), 0xFF
/// and repeated bytes among the noise.
pub fn random_trace(rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    while v.len() < len {
        match rng.below(10) {
            0 => v.extend(std::iter::repeat_n(0u8, rng.range(1, 16))),
            1 => {
                v.extend(std::iter::repeat_n(0u8, 11));
                v.push(0x80);
            }
            2 => {
                let b = rng.u8();
                v.extend(std::iter::repeat_n(b, rng.range(1, 8)));
            }
            _ => {
                let n = rng.range(1, 32);
                v.extend(rng.bytes(n));
            }
        }
    }
    v.truncate(len);
    v
}

/// A CoreSight formatter: interleave per-ID streams into 16-byte frames.
/// `flags` selects the framing: FSYNCs between frames (TPIU), HSYNCs,
/// or 4x FSYNC resets in memory-aligned data.
pub fn format_frames(streams: &[(u8, Vec<u8>)], rng: &mut Rng, flags: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let fsync = [0xFF, 0xFF, 0xFF, 0x7F];
    let tpiu = flags & OCSD_DFRMTR_HAS_FSYNCS != 0;
    let hsync = flags & OCSD_DFRMTR_HAS_HSYNCS != 0;
    let reset4 = flags & OCSD_DFRMTR_RESET_ON_4X_FSYNC != 0;
    if tpiu {
        out.extend_from_slice(&fsync);
    }
    let mut pos: Vec<usize> = vec![0; streams.len()];
    let mut cur: Option<usize> = None;
    loop {
        let live: Vec<usize> = (0..streams.len()).filter(|&s| pos[s] < streams[s].1.len()).collect();
        if live.is_empty() {
            break;
        }
        let mut frame = [0u8; 16];
        let mut aux = 0u8;
        let mut p = 0;
        while p < 15 {
            let live: Vec<usize> = (0..streams.len()).filter(|&s| pos[s] < streams[s].1.len()).collect();
            let even = p % 2 == 0;
            if even && p < 14 && (cur.is_none() || live.is_empty() || !live.contains(&cur.unwrap()) || rng.chance(1, 12)) {
                // ID change: ID byte here, next byte is the new ID's data
                let (s, id) = if live.is_empty() { (None, 0u8) } else {
                    let s = *rng.pick(&live);
                    (Some(s), streams[s].0)
                };
                frame[p] = (id << 1) | 1;
                cur = s;
                p += 1;
                continue;
            }
            let b = match cur {
                Some(s) if pos[s] < streams[s].1.len() => {
                    pos[s] += 1;
                    streams[s].1[pos[s] - 1]
                }
                _ => 0,
            };
            if even {
                frame[p] = b & !1;
                aux |= (b & 1) << (p / 2);
            } else {
                frame[p] = b;
            }
            p += 1;
        }
        frame[15] = aux;
        if hsync {
            for pair in frame.chunks(2) {
                if rng.chance(1, 16) {
                    out.extend_from_slice(&[0xFF, 0x7F]);
                }
                out.extend_from_slice(pair);
            }
        } else {
            out.extend_from_slice(&frame);
        }
        if tpiu && rng.chance(1, 8) {
            out.extend_from_slice(&fsync);
        }
        if reset4 && rng.chance(1, 40) {
            for _ in 0..4 * rng.range(1, 2) {
                out.extend_from_slice(&fsync);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Scenarios

/// Random trace through random decoders of protocol `spec` (plus, in
/// formatted mode, neighbours of other protocols on other IDs).
pub fn random_scenario(seed: u64, spec_idx: usize, full: bool, formatted: Option<u32>, trace_len: usize) -> Result<(), String> {
    let mut rng = Rng::new(seed);
    let spec = &PROTOCOLS[spec_idx];
    let mutate_cfg = rng.chance(1, 2);
    // the decoders: (device, core, full)
    let mut devs: Vec<(Device, String, bool, u8)> = Vec::new();
    let main_id = if formatted.is_some() { rng.range(1, 0x6F) as u8 } else { rng.below(128) as u8 };
    let (d, c) = random_device(spec, main_id, &mut rng, mutate_cfg);
    devs.push((d, c, full, main_id));
    if formatted.is_some() {
        for _ in 0..rng.below(3) {
            let other = &PROTOCOLS[rng.below(PROTOCOLS.len())];
            let id = rng.range(1, 0x6F) as u8;
            let m = rng.chance(1, 4);
            let (d, c) = random_device(other, id, &mut rng, m);
            devs.push((d, c, rng.chance(1, 2), id));
        }
    }
    let mem = if full { match rng.below(3) { 0 => MemSetup::None, _ => MemSetup::Random(rng.next_u64()) } } else { MemSetup::None };
    let src_type = if formatted.is_some() { OCSD_TRC_SRC_FRAME_FORMATTED } else { OCSD_TRC_SRC_SINGLE };
    let dflags = formatted.unwrap_or(0);
    let label = format!("random seed={:#x} proto={} full={} src={} dfmt={:#x} len={} mem={:?}", seed, spec.dev_type, full, if formatted.is_some() { "formatted" } else { "single" }, dflags, trace_len, mem);

    let build = |rec: &SharedRec| -> Option<DecodeTree> {
        let mut tree = DecodeTree::new(src_type, dflags, log_for(rec)).ok()?;
        let mut added = 0;
        for (dev, core, f, _) in &devs {
            let mut log = LogRec { rec: rec.clone() };
            if let Ok(d) = make_decoder(dev, core, *f, &mut log) {
                if tree.add_decoder(d).is_ok() {
                    added += 1;
                }
            }
        }
        if added == 0 {
            return None;
        }
        match &mem {
            MemSetup::Random(s) => map_random_memory(&mut tree, *s),
            _ => tree.mapper.clear(),
        }
        Some(tree)
    };

    // the trace: per-ID random streams, formatted when needed
    let mut sessions = Vec::new();
    for _ in 0..rng.range(1, 2) {
        let data = if let Some(f) = formatted {
            let ids: Vec<u8> = devs.iter().map(|d| d.3).collect();
            let mut streams: Vec<(u8, Vec<u8>)> = ids.iter().map(|&id| (id, random_trace(&mut rng, trace_len / ids.len().max(1)))).collect();
            if rng.chance(1, 4) {
                streams.push((rng.range(0x70, 0x7F) as u8, rng.bytes(64)));
            }
            let mut v = format_frames(&streams, &mut rng, f);
            if rng.chance(1, 2) {
                let donor = v.clone();
                mutate(&mut v, &mut rng, &donor);
            }
            v
        } else {
            random_trace(&mut rng, trace_len)
        };
        let align = if formatted.is_some() { alignment_of(dflags) } else { 1 };
        sessions.push(random_blocks(&data, &mut rng, align));
    }
    let obs_seed = rng.next_u64();
    let den = *rng.pick(&[2, 5, 50]);
    no_panic(&label, || run_pair(&label, &build, &sessions, obs_seed, den))
}


/// Every snapshot directory under `shared/conformance/snapshots*`.
pub fn snapshot_dirs(shared: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    let Ok(rd) = std::fs::read_dir(shared.join("conformance")) else { return v };
    let mut tops: Vec<PathBuf> = rd.flatten().map(|e| e.path()).filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("snapshots"))).collect();
    tops.sort();
    for t in tops {
        if let Ok(rd) = std::fs::read_dir(&t) {
            let mut dirs: Vec<PathBuf> = rd.flatten().map(|e| e.path()).filter(|p| p.join("snapshot.ini").is_file()).collect();
            dirs.sort();
            v.extend(dirs);
        }
    }
    v
}

/// A copy of `snap` whose buffer `name` has format `format`.
fn with_format(snap: &Snapshot, name: &str, format: &str) -> Snapshot {
    let mut s = Snapshot {
        dir: snap.dir.clone(),
        devices: snap.devices.clone(),
        buffers: snap.buffers.clone(),
        source_buffers: snap.source_buffers.clone(),
        core_sources: snap.core_sources.clone(),
    };
    for b in s.buffers.iter_mut().filter(|b| b.name == name) {
        b.format = format.to_string();
    }
    s
}

/// Real trace of one snapshot buffer, mutated, through the tree the
/// snapshot describes (packet-only or full decode), with the deformatter
/// reconfigured or the source treated as single.
pub fn snapshot_scenario(seed: u64, dir: &Path, max_len: usize, donor: &[u8]) -> Result<(), String> {
    let mut rng = Rng::new(seed);
    let dir_s = dir.to_string_lossy().to_string();
    let snap = Snapshot::read(&dir_s).map_err(|e| format!("{}: reading a good snapshot failed: {}", dir_s, e))?;
    if snap.buffers.is_empty() {
        return Ok(());
    }
    let buf = snap.buffers[rng.below(snap.buffers.len())].clone();
    let Ok(bytes) = std::fs::read(snap.path_of(&buf.file)) else { return Ok(()) };
    let full = rng.chance(1, 2);
    let add_flags = if rng.chance(1, 3) { rng.u32() & (OCSD_OPFLG_PKTDEC_COMMON | 0x0003_0000) } else { 0 };
    let formatted = buf.format != "source_data";
    // the input format: as described, another deformatter configuration,
    // or the raw buffer into a single-source tree
    let choice = rng.below(6);
    let (snap2, dflags) = if formatted {
        match choice {
            0 => (with_format(&snap, &buf.name, "source_data"), None),
            1 | 2 => (with_format(&snap, &buf.name, &buf.format), Some(*rng.pick(&deformatter_flag_sets()))),
            _ => (with_format(&snap, &buf.name, &buf.format), None),
        }
    } else {
        (with_format(&snap, &buf.name, "source_data"), None)
    };
    let mem = if !full { MemSetup::Keep } else { match rng.below(4) { 0 => MemSetup::None, 1 => MemSetup::Random(rng.next_u64()), _ => MemSetup::Keep } };
    // (drawn apart from `rng`: the other choices stay as they were)
    let mem = if matches!(mem, MemSetup::Keep) && full && mix64(seed ^ 0xCA11_BAC6).is_multiple_of(2) { MemSetup::KeepAsCallback } else { mem };
    // the trace: a random window, mutated
    let len = bytes.len().min(max_len);
    let start = if bytes.len() > len { rng.below(bytes.len() - len + 1) } else { 0 };
    let start = start & !15;
    let mut data = bytes[start..(start + len).min(bytes.len())].to_vec();
    let clean = rng.chance(1, 4);
    if !clean {
        let d = if donor.is_empty() { bytes.clone() } else { donor.to_vec() };
        mutate(&mut data, &mut rng, &d);
    }
    let eff_flags = dflags.unwrap_or(if buf.format == "dstream_coresight" { OCSD_DFRMTR_HAS_FSYNCS } else { OCSD_DFRMTR_FRAME_MEM_ALIGN });
    let align = if snap2.buffer(&buf.name).is_some_and(|b| b.format == "source_data") { 1 } else { alignment_of(eff_flags) };
    let mut sessions = vec![random_blocks(&data, &mut rng, align)];
    if rng.chance(1, 4) {
        // a second session after EOT + RESET: another window
        let s2 = rng.below(bytes.len().max(1)) & !15;
        let e2 = (s2 + rng.range(16, 4096)).min(bytes.len());
        sessions.push(random_blocks(&bytes[s2..e2], &mut rng, align));
    }
    let label = format!(
        "snapshot {} buffer {} seed={:#x} full={} format={} dfmt={:?} mem={:?} window={}+{} mutated={}",
        dir_s, buf.name, seed, full, snap2.buffer(&buf.name).map(|b| b.format.clone()).unwrap_or_default(), dflags, mem, start, len, !clean
    );
    let build = |rec: &SharedRec| -> Option<DecodeTree> {
        let built = to_tree::create_tree(&snap2, &buf.name, !full, add_flags, log_for(rec))?;
        let mut tree = built.tree;
        if let Some(f) = dflags {
            let r = tree.configure_deformatter(f);
            assert_eq!(r, OCSD_OK, "valid deformatter flags {:#x} refused", f);
        }
        match &mem {
            MemSetup::None => tree.mapper.clear(),
            MemSetup::Random(s) => map_random_memory(&mut tree, *s),
            MemSetup::Keep => {}
            MemSetup::KeepAsCallback => files_as_callback(&mut tree),
        }
        Some(tree)
    };
    let obs_seed = rng.next_u64();
    let den = *rng.pick(&[2, 7, 100]);
    no_panic(&label, || run_pair(&label, &build, &sessions, obs_seed, den))?;
    if matches!(mem, MemSetup::KeepAsCallback) {
        // the same elements as from the files themselves
        let from_files = |rec: &SharedRec| -> Option<DecodeTree> {
            let built = to_tree::create_tree(&snap2, &buf.name, false, add_flags, log_for(rec))?;
            let mut tree = built.tree;
            if let Some(f) = dflags {
                tree.configure_deformatter(f);
            }
            Some(tree)
        };
        let a = no_panic(&label, || elements_of(&label, &build, &sessions, obs_seed))?;
        let b = no_panic(&label, || elements_of(&label, &from_files, &sessions, obs_seed))?;
        compare(&label, "elements from callback memory and from the files", &b, &a)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Snapshot files

/// Exercise the snapshot reader and tree builder on `files` (name ->
/// contents) written into `dir`: no panic, errors as values.
pub fn snapshot_files_scenario(dir: &Path, files: &[(String, Vec<u8>)], decode_bytes: usize) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    for (name, data) in files {
        let p = dir.join(name);
        if let Some(parent) = p.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::write(&p, data);
    }
    let label = format!("snapshot files in {}", dir.display());
    no_panic(&label, || {
        let dir_s = dir.to_string_lossy().to_string();
        let _ = snapshot::snapshot_found(&dir_s);
        let snap = match Snapshot::read(&dir_s) {
            Ok(s) => s,
            Err(e) => {
                let _ = e.to_string();
                return Ok(());
            }
        };
        for name in snap.buffer_names() {
            for packet_only in [true, false] {
                let rec: SharedRec = Rc::new(RefCell::new(Record::default()));
                if let Some(built) = to_tree::create_tree(&snap, &name, packet_only, 0, log_for(&rec)) {
                    let mut tree = built.tree;
                    let _ = tree.mapper.describe_each();
                    attach(&mut tree, &rec, &Observe { seed: 1, wait_den: None });
                    if let Ok(bytes) = std::fs::read(&built.buffer_file) {
                        let n = bytes.len().min(decode_bytes);
                        let sessions = vec![random_blocks(&bytes[..n], &mut Rng::new(n as u64), 16)];
                        drive(&mut tree, &sessions, &rec)?;
                    }
                }
            }
        }
        for (src, core) in snap.sources_of("") {
            let _ = (src, core);
        }
        Ok(())
    })
}

/// Parse arbitrary bytes as every kind of snapshot ini, and build configs
/// from the result (the ini-parser fuzz target).
pub fn ini_bytes_scenario(data: &[u8]) -> Result<(), String> {
    no_panic("ini bytes", || {
        let text = String::from_utf8_lossy(data);
        let ini = Ini::parse(&text);
        for s in &ini.sections {
            for (k, v) in &s.entries {
                let _ = snapshot::parse_c_ulong(v);
                let _ = ini.get(&s.name, k);
            }
        }
        // as a device file
        let mut dev = Device::default();
        if let Some(s) = ini.section("device") {
            dev.name = s.get("name").unwrap_or_default().to_string();
            dev.type_name = s.get("type").unwrap_or_default().to_string();
        }
        if let Some(s) = ini.section("regs") {
            for (k, v) in &s.entries {
                dev.regs.push((k.split('(').next().unwrap_or("").trim().to_string(), v.clone()));
            }
        }
        for spec in PROTOCOLS {
            let mut d = dev.clone();
            d.type_name = spec.dev_type.to_string();
            for core in spec.cores.iter().copied().chain([dev.name.as_str(), ""]) {
                let _ = snapshot::arch_profile(core);
                let _ = make_decoder(&d, core, true, &mut opencsd_c_api::common::error::NullLog);
            }
        }
        let _ = snapshot::arch_profile(&text);
        let _ = to_tree::mem_space_from_str(&text);
        Ok(())
    })
}

/// Mutate the text of real snapshot ini files (drop lines and sections,
/// garbage and huge values, missing files) and run the reader on them.
pub fn mutated_snapshot_files(seed: u64, src: &Path, tmp: &Path) -> Result<(), String> {
    let mut rng = Rng::new(seed);
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let Ok(rd) = std::fs::read_dir(src) else { return Ok(()) };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if p.extension().is_some_and(|e| e == "ini") {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            files.push((name, mutate_ini(&text, &mut rng).into_bytes()));
        } else if p.is_file() && rng.chance(4, 5) {
            // trace buffers and dumps: keep the first part (or drop the file)
            let bytes = std::fs::read(&p).unwrap_or_default();
            let n = bytes.len().min(8192);
            files.push((name, bytes[..n].to_vec()));
        }
    }
    snapshot_files_scenario(tmp, &files, 4096)
}

const GARBAGE: &[&str] = &[
    "", " ", "0x", "0xZZ", "-1", "99999999999999999999999999", "0xFFFFFFFFFFFFFFFFFFFFFFFF", "0xFFFFFFFFFFFFFFFF",
    "18446744073709551615", "4294967296", "0", "07777777777777777777777", "nan", "=", "[", "]", "é", "dumpé", "\u{0}",
    "../../../../etc/passwd", "/nonexistent/file.bin", "no_such_file.bin", "ETM4", "ETE", "PTM1.1", "ETM3.5", "STM", "ITM",
    "Cortex-A53", "ARMv", "ARMv9.9-X", "ARM-AA64-", "ARM-aa64-M", "coresight", "source_data", "dstream_coresight",
];

pub fn mutate_ini(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(|l| l.to_string()).collect();
    for _ in 0..rng.range(0, 6) {
        if lines.is_empty() {
            break;
        }
        let i = rng.below(lines.len());
        match rng.below(9) {
            0 => {
                lines.remove(i);
            }
            1 => {
                // replace a value
                if let Some((k, _)) = lines[i].split_once('=') {
                    lines[i] = format!("{}={}", k, rng.pick(GARBAGE));
                }
            }
            2 => {
                // replace a key
                if let Some((_, v)) = lines[i].split_once('=') {
                    lines[i] = format!("{}={}", rng.pick(GARBAGE), v);
                }
            }
            3 => lines[i] = format!("[{}]", rng.pick(GARBAGE)),
            4 => {
                // duplicate a line or section header
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            5 => {
                // cut a line short (at a character boundary)
                let cuts: Vec<usize> = lines[i].char_indices().map(|(c, _)| c).collect();
                if !cuts.is_empty() {
                    let at = cuts[rng.below(cuts.len())];
                    lines[i].truncate(at);
                }
            }
            6 => lines.insert(i, format!("[dump{}]\nfile={}\naddress={}\nlength={}\noffset={}\nspace={}", rng.below(9), rng.pick(GARBAGE), rng.pick(GARBAGE), rng.pick(GARBAGE), rng.pick(GARBAGE), rng.pick(GARBAGE))),
            7 => lines.insert(i, "x".repeat(rng.range(1, 100_000))),
            _ => {
                // drop a whole section
                if lines[i].starts_with('[') {
                    let end = (i + 1..lines.len()).find(|&j| lines[j].starts_with('[')).unwrap_or(lines.len());
                    lines.drain(i..end);
                }
            }
        }
    }
    let mut s = lines.join(if rng.chance(1, 5) { "\r\n" } else { "\n" });
    if rng.chance(1, 10) {
        s.push_str("\u{FEFF}[dump\u{e9}]\nfile=");
    }
    s
}

// ---------------------------------------------------------------------------
// Fuzz entry points (cargo-fuzz targets in fuzz/ call these)

fn seed_of(data: &[u8]) -> (u64, &[u8]) {
    let n = data.len().min(8);
    let mut s = [0u8; 8];
    s[..n].copy_from_slice(&data[..n]);
    (u64::from_le_bytes(s), &data[n..])
}

/// One protocol's stack (packet processor, or full decoder when `full`) on
/// a single-source tree: the first 8 bytes pick the configuration, memory
/// and WAIT points; the rest is the trace.
pub fn fuzz_stack(dev_type: &str, full: bool, data: &[u8]) -> Result<(), String> {
    let Some(spec_idx) = PROTOCOLS.iter().position(|p| p.dev_type == dev_type) else { return Ok(()) };
    if proto_available(&PROTOCOLS[spec_idx], full).is_err() {
        return Ok(()); // not there yet
    }
    let (seed, trace) = seed_of(data);
    let mut rng = Rng::new(seed);
    let spec = &PROTOCOLS[spec_idx];
    let mutate_cfg = seed & 1 != 0;
    let id = rng.below(128) as u8;
    let (dev, core) = random_device(spec, id, &mut rng, mutate_cfg);
    let mem = if full && seed & 2 != 0 { MemSetup::Random(rng.next_u64()) } else { MemSetup::None };
    let label = format!("fuzz {} full={} seed={:#x}", dev_type, full, seed);
    let build = |rec: &SharedRec| -> Option<DecodeTree> {
        let mut tree = DecodeTree::new(OCSD_TRC_SRC_SINGLE, 0, log_for(rec)).ok()?;
        let d = make_decoder(&dev, &core, full, &mut LogRec { rec: rec.clone() }).ok()?;
        tree.add_decoder(d).ok()?;
        if let MemSetup::Random(s) = &mem {
            map_random_memory(&mut tree, *s);
        }
        Some(tree)
    };
    let sessions = vec![random_blocks(trace, &mut rng, 1)];
    let obs_seed = rng.next_u64();
    let den = *rng.pick(&[2, 5, 50]);
    no_panic(&label, || run_pair(&label, &build, &sessions, obs_seed, den))
}

/// The deformatter in front of packet processors of every protocol: the
/// first byte picks the flags, the next 8 the decoders and WAIT points.
pub fn fuzz_deformatter(data: &[u8]) -> Result<(), String> {
    let Some((&sel, rest)) = data.split_first() else { return Ok(()) };
    let sets = deformatter_flag_sets();
    let flags = sets[sel as usize % sets.len()];
    let (seed, trace) = seed_of(rest);
    let mut rng = Rng::new(seed);
    let mut devs: Vec<(Device, String, bool)> = Vec::new();
    for _ in 0..rng.range(1, 4) {
        let spec = &PROTOCOLS[rng.below(PROTOCOLS.len())];
        // IDs the fuzzer finds easily: 1..=8
        let id = rng.range(1, 8) as u8;
        let (d, c) = random_device(spec, id, &mut rng, false);
        devs.push((d, c, rng.chance(1, 4)));
    }
    let label = format!("fuzz deformatter flags={:#x} seed={:#x}", flags, seed);
    let build = |rec: &SharedRec| -> Option<DecodeTree> {
        let mut tree = DecodeTree::new(OCSD_TRC_SRC_FRAME_FORMATTED, flags, log_for(rec)).ok()?;
        for (d, c, full) in &devs {
            if let Ok(dec) = make_decoder(d, c, *full, &mut LogRec { rec: rec.clone() }) {
                let _ = tree.add_decoder(dec);
            }
        }
        Some(tree)
    };
    let sessions = vec![random_blocks(trace, &mut rng, alignment_of(flags))];
    let obs_seed = rng.next_u64();
    no_panic(&label, || run_pair(&label, &build, &sessions, obs_seed, 3))
}
