//! Test helpers shared by the protocol modules' tests: the reference data
//! folder, expected logs, a CoreSight frame demultiplexer that lays out its
//! output as OpenCSD's deformatter does, and packet-output collectors.



use crate::abi::*;
use crate::common::{ErrorLog, OcsdError};

pub(crate) use crate::test_shared::shared_dir;

/// The lines of an expected log (`conformance/expected/NAME.ppl.gz`).
pub fn expected_lines(shared: &std::path::Path, name: &str) -> Vec<String> {
    let path = shared.join("conformance/expected").join(format!("{}.ppl.gz", name));
    let out = std::process::Command::new("zcat").arg(&path).output().expect("zcat");
    assert!(out.status.success(), "cannot read {}", path.display());
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}

/// `Idx:..; ID:..; [0x.. ];\t` prefix of a packet monitor line.
pub fn monitor_prefix(index: ocsd_trc_index_t, id: u8, raw: &[u8]) -> String {
    let mut s = format!("Idx:{}; ID:{:x}; [", index, id);
    for b in raw {
        s.push_str(&format!("0x{:02x} ", b));
    }
    s.push_str("];\t");
    s
}

/// An error logger that records `component: message` lines.
#[derive(Default)]
pub struct RecLog {
    pub lines: Vec<String>,
}

impl ErrorLog for RecLog {
    fn log_error(&mut self, component: &str, err: &OcsdError) {
        self.lines.push(format!("{}: {}", component, err.details()));
    }
    fn log_message(&mut self, component: &str, _sev: ocsd_err_severity_t, msg: &str) {
        self.lines.push(format!("{}: {}", component, msg));
    }
}

const OUT_CHAN_SIZE: usize = 28;
const OUT_CHAN_NUM: usize = 16;

/// One block handed to a packet processor: index, data, and the bytes that
/// follow it in OpenCSD's deformatter memory.
pub struct Block {
    pub index: ocsd_trc_index_t,
    pub data: Vec<u8>,
    pub tail: Vec<u8>,
}

/// Demultiplex 16-byte CoreSight frames (memory aligned, no syncs) and
/// return the blocks for `want_id`, each with the tail of OpenCSD's
/// `out_chan_data m_out_data[16]` array after the block (index u32, id u8,
/// data[15], valid u32, used u32 per entry; stale bytes kept).
pub fn deformat(buf: &[u8], want_id: u8) -> Vec<Block> {
    let mut mem = [0u8; OUT_CHAN_SIZE * OUT_CHAN_NUM];
    let mut curr_id = OCSD_BAD_CS_SRC_ID;
    let mut blocks = Vec::new();
    for (fnum, frame) in buf.chunks_exact(16).enumerate() {
        let sof = (fnum * 16) as u32;
        let mut idx = 0usize;
        let mut valid = [0usize; OUT_CHAN_NUM];
        let mut ids = [0u8; OUT_CHAN_NUM];
        let mut index = [0u32; OUT_CHAN_NUM];
        ids[0] = curr_id;
        index[0] = sof;
        let push = |idx: usize, valid: &mut [usize; OUT_CHAN_NUM], mem: &mut [u8], b: u8| {
            mem[idx * OUT_CHAN_SIZE + 5 + valid[idx]] = b;
            valid[idx] += 1;
        };
        let mut flag_bit = 1u8;
        for i in (0..14).step_by(2) {
            let mut prev_and_change = false;
            if frame[i] & 1 != 0 {
                let new_id = (frame[i] >> 1) & 0x7F;
                if new_id != curr_id {
                    prev_and_change = flag_bit & frame[15] != 0;
                    if prev_and_change {
                        push(idx, &mut valid, &mut mem, frame[i + 1]);
                    }
                    curr_id = new_id;
                    if valid[idx] > 0 {
                        idx += 1;
                        valid[idx] = 0;
                        index[idx] = sof + i as u32;
                    }
                    ids[idx] = curr_id;
                }
            } else {
                let b = frame[i] | u8::from(flag_bit & frame[15] != 0);
                push(idx, &mut valid, &mut mem, b);
            }
            if !prev_and_change {
                push(idx, &mut valid, &mut mem, frame[i + 1]);
            }
            flag_bit <<= 1;
        }
        if frame[14] & 1 != 0 {
            curr_id = (frame[14] >> 1) & 0x7F;
        } else {
            let b = frame[14] | u8::from(flag_bit & frame[15] != 0);
            push(idx, &mut valid, &mut mem, b);
        }
        for e in 0..=idx {
            let base = e * OUT_CHAN_SIZE;
            mem[base..base + 4].copy_from_slice(&index[e].to_le_bytes());
            mem[base + 4] = ids[e];
            mem[base + 20..base + 24].copy_from_slice(&(valid[e] as u32).to_le_bytes());
            mem[base + 24..base + 28].copy_from_slice(&0u32.to_le_bytes());
        }
        for e in 0..=idx {
            if ids[e] == want_id && valid[e] > 0 {
                let base = e * OUT_CHAN_SIZE + 5;
                blocks.push(Block {
                    index: index[e],
                    data: mem[base..base + valid[e]].to_vec(),
                    tail: mem[base + valid[e]..].to_vec(),
                });
            }
        }
    }
    blocks
}
