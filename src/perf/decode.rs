//! Full decode of a recording: instruction ranges and branch samples per
//! thread, with the binaries' code read through [`Spaces`].
//!
//! Branch samples follow perf's `cs-etm.c` (`--itrace=b`): a discontinuity
//! (NO_SYNC, TRACE_ON, EO_TRACE) after an instruction range gives
//! `last instruction => 0`; the first range after a discontinuity gives
//! `0 => range start`; a range ending in a taken branch (or followed by an
//! exception or exception return) gives `its last instruction => next range
//! start`. Queues are decoded one after the other (perf's timeless order),
//! each block after a decoder reset.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::error::NullLog;
use crate::common::GenElemSink;
use crate::dcd_tree::DecodeTree;
use crate::mem::{Accessor, Source};

use super::cs_meta::CsMeta;
use super::dump::{blocks, BlockMode};
use super::file::PerfData;
use super::spaces::Spaces;
use super::PerfError;

/// A branch sample (`from` 0: trace started; `to` 0: trace stopped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchSample {
    pub from: u64,
    pub to: u64,
    pub tid: i32,
    pub cpu: i32,
}

/// An executed instruction range (`end` is the address of its last
/// instruction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeSample {
    pub start: u64,
    pub last: u64,
    pub n_instr: u32,
    pub tid: i32,
    pub isa: ocsd_isa,
    /// The range ends with a branch that was taken (direct or indirect).
    pub taken: bool,
    /// The last instruction is a direct branch (`branch_addr` is its target).
    pub direct: bool,
    pub branch_addr: u64,
    /// The last instruction is a call (branch with link) / a return.
    pub is_call: bool,
    pub is_return: bool,
}

/// What the decode delivers.
pub trait SampleSink {
    fn branch(&mut self, _b: &BranchSample) {}
    fn range(&mut self, _r: &RangeSample, _spaces: &mut Spaces) {}
}

#[derive(Clone, Copy, PartialEq)]
enum Pkt {
    Empty,
    Discontinuity,
    Range { start: u64, last: u64, taken: bool },
}

/// Shared by the memory callback and the element sink.
pub struct Shared {
    pub spaces: Spaces,
    /// Current thread per trace ID (-1: unknown).
    pub tid: [i32; 128],
}

struct ElemSink {
    shared: Arc<Mutex<Shared>>,
    out: Rc<RefCell<dyn SampleSink>>,
    prev: [Pkt; 128],
    cpu_of_id: [i32; 128],
    pid_in_vmid: bool,
}

impl ElemSink {
    fn branch(&mut self, id: u8, from: u64, to: u64) {
        let tid = self.shared.lock().map(|s| s.tid[id as usize]).unwrap_or(-1);
        let b = BranchSample { from, to, tid, cpu: self.cpu_of_id[id as usize] };
        self.out.borrow_mut().branch(&b);
    }
}

impl GenElemSink for ElemSink {
    fn trace_elem_in(&mut self, _idx: ocsd_trc_index_t, id: u8, e: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        let i = (id & 0x7f) as usize;
        match e.elem_type {
            OCSD_GEN_TRC_ELEM_NO_SYNC | OCSD_GEN_TRC_ELEM_TRACE_ON | OCSD_GEN_TRC_ELEM_EO_TRACE => {
                if let Pkt::Range { last, .. } = self.prev[i] {
                    self.branch(id, last, 0);
                }
                self.prev[i] = Pkt::Discontinuity;
            }
            OCSD_GEN_TRC_ELEM_INSTR_RANGE => {
                let sz = e.last_instr_sz() as u64;
                let last = e.en_addr.wrapping_sub(sz);
                let is_br = e.last_i_type == OCSD_INSTR_BR || e.last_i_type == OCSD_INSTR_BR_INDIRECT;
                let taken = is_br && e.last_instr_exec() != 0;
                match self.prev[i] {
                    Pkt::Discontinuity => self.branch(id, 0, e.st_addr),
                    Pkt::Range { last: pl, taken: true, .. } => self.branch(id, pl, e.st_addr),
                    _ => {}
                }
                self.prev[i] = Pkt::Range { start: e.st_addr, last, taken };
                // the range, with the direct branch's target
                let mut shared = match self.shared.lock() {
                    Ok(s) => s,
                    Err(_) => return OCSD_RESP_FATAL_SYS_ERR,
                };
                let tid = shared.tid[i];
                let mut r = RangeSample {
                    start: e.st_addr,
                    last,
                    n_instr: e.num_instr_range(),
                    tid,
                    isa: e.isa,
                    taken,
                    direct: e.last_i_type == OCSD_INSTR_BR,
                    branch_addr: 0,
                    is_call: e.last_i_subtype == OCSD_S_INSTR_BR_LINK,
                    is_return: e.last_i_subtype == OCSD_S_INSTR_V8_RET || e.last_i_subtype == OCSD_S_INSTR_V7_IMPLIED_RET,
                };
                if r.direct && taken {
                    let mut op = [0u8; 4];
                    let n = shared.spaces.read(tid, last, &mut op[..sz.clamp(2, 4) as usize]);
                    if n >= 2 {
                        let mut info = ocsd_instr_info {
                            pe_type: ocsd_arch_profile_t { arch: ARCH_AA64, profile: profile_CortexA },
                            isa: e.isa,
                            instr_addr: last,
                            opcode: u32::from_le_bytes(op),
                            ..Default::default()
                        };
                        if crate::instr::decode_instruction(&mut info) == OCSD_OK {
                            r.branch_addr = info.branch_addr;
                        }
                    }
                }
                let Shared { spaces, .. } = &mut *shared;
                self.out.borrow_mut().range(&r, spaces);
            }
            OCSD_GEN_TRC_ELEM_EXCEPTION | OCSD_GEN_TRC_ELEM_EXCEPTION_RET => {
                if let Pkt::Range { start, last, .. } = self.prev[i] {
                    self.prev[i] = Pkt::Range { start, last, taken: true };
                }
            }
            OCSD_GEN_TRC_ELEM_PE_CONTEXT => {
                let c = &e.context;
                let tid = if self.pid_in_vmid {
                    (c.vmid_valid() != 0).then_some(c.vmid as i32)
                } else {
                    (c.ctxt_id_valid() != 0).then_some(c.context_id as i32)
                };
                if let Some(t) = tid {
                    if let Ok(mut s) = self.shared.lock() {
                        s.tid[i] = t;
                    }
                }
            }
            _ => {}
        }
        OCSD_RESP_CONT
    }
}

/// Decode every block of the recording into `out`. `spaces` gives the
/// code; it is returned with the warnings (missing binaries, decode
/// errors).
pub fn decode(pd: &PerfData, meta: &CsMeta, mode: BlockMode, spaces: Spaces, out: Rc<RefCell<dyn SampleSink>>) -> Result<(Spaces, Vec<String>), PerfError> {
    let mut tid = [-1i32; 128];
    let mut cpu_of_id = [-1i32; 128];
    for c in &meta.cpus {
        let id = c.unit.trace_id() as usize;
        cpu_of_id[id] = c.cpu as i32;
        if let Some(t) = spaces.itrace_tid.get(&c.cpu) {
            tid[id] = *t;
        }
    }
    let pid_in_vmid = meta.cpus.first().map_or(false, |c| c.unit.pid_in_vmid());
    let shared = Arc::new(Mutex::new(Shared { spaces, tid }));
    let mut warnings = Vec::new();

    // queues in index order, blocks in file order (perf's timeless decode)
    let mut all = blocks(pd, mode);
    all.sort_by_key(|b| b.rec.idx);
    let mut trees: HashMap<u32, DecodeTree> = HashMap::new();
    for blk in &all {
        if !trees.contains_key(&blk.rec.idx) {
            let (src, flags) = if blk.formatted {
                (OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_RESET_ON_4X_FSYNC)
            } else {
                (OCSD_TRC_SRC_SINGLE, 0)
            };
            let mut tree = DecodeTree::new(src, flags, Box::new(NullLog)).map_err(|e| PerfError::Decode(format!("decode tree: error {}", e)))?;
            let units: Vec<_> = if blk.formatted { meta.cpus.iter().collect() } else { meta.by_cpu(blk.cpu as u32).into_iter().collect() };
            for u in units {
                let dec = u.unit.create_decoder(true).map_err(|e| PerfError::Decode(format!("CPU {}: decoder: error {}", u.cpu, e)))?;
                if let Err(e) = tree.add_decoder(dec) {
                    warnings.push(format!("warning: CPU {}: trace ID {:#x} not decoded (error {})", u.cpu, u.unit.trace_id(), e));
                }
            }
            let sh = shared.clone();
            let read = Box::new(move |addr: ocsd_vaddr_t, _space: ocsd_mem_space_acc_t, id: u8, buf: &mut [u8]| -> usize {
                match sh.lock() {
                    Ok(mut s) => {
                        let t = s.tid[(id & 0x7f) as usize];
                        s.spaces.read(t, addr, buf)
                    }
                    Err(_) => 0,
                }
            });
            // Code comes from files already in memory: a read is a copy, so
            // the mapper's page cache for callbacks would only add copies
            // (and could answer from another thread's image after a switch).
            let _ = tree.mapper.set_caching(false, 0, 0);
            let acc = Accessor { start: 0, end: u64::MAX, space: OCSD_MEM_SPACE_ANY, source: Source::Callback { read } };
            tree.mapper.add(acc).map_err(|e| PerfError::Decode(format!("memory accessor: error {}", e)))?;
            tree.set_elem_sink(Some(Box::new(ElemSink {
                shared: shared.clone(),
                out: out.clone(),
                prev: [Pkt::Empty; 128],
                cpu_of_id,
                pid_in_vmid,
            })));
            trees.insert(blk.rec.idx, tree);
        }
        let tree = trees.get_mut(&blk.rec.idx).expect("tree just made");
        let data = &pd.aux_data(&blk.rec)[blk.start..blk.start + blk.len];
        let _ = tree.data_in(OCSD_OP_RESET, 0, &[]);
        let mut used = 0usize;
        while used < data.len() {
            let (resp, n) = tree.data_in(OCSD_OP_DATA, (blk.offset + used as u64) as ocsd_trc_index_t, &data[used..]);
            used += n;
            if resp >= OCSD_RESP_FATAL_NOT_INIT {
                warnings.push(format!(
                    "warning: PERF_RECORD_AUXTRACE at {:#x}: decode stopped at trace index {} (response {})",
                    blk.rec.file_offset,
                    blk.offset + used as u64,
                    resp
                ));
                break;
            }
            if resp >= OCSD_RESP_WAIT {
                let _ = tree.data_in(OCSD_OP_FLUSH, 0, &[]);
            }
            if n == 0 && resp < OCSD_RESP_WAIT {
                break;
            }
        }
    }
    drop(trees);
    let shared = Arc::try_unwrap(shared).map_err(|_| PerfError::Decode("memory callbacks still held".into()))?;
    let mut s = shared.into_inner().map_err(|_| PerfError::Decode("internal lock poisoned".into()))?;
    warnings.extend(s.spaces.warnings.drain(..));
    Ok((s.spaces, warnings))
}
