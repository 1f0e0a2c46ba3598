//! CoreSight trace frame deformatter.
//!
//! A CoreSight formatter interleaves the trace of up to 127 sources in
//! 16-byte frames. In each frame, bytes 0..14 at even offsets are either a
//! trace ID (bit 0 set: ID in bits 7:1) or a data byte whose bit 0 lives in
//! byte 15 (bit n for byte 2n); odd-offset bytes are always data. When an ID
//! byte changes the ID, the matching bit of byte 15 says whether the data
//! byte after it still belongs to the previous ID.
//!
//! Input comes memory-aligned (ETB/ETR buffers: whole frames), or from a
//! TPIU with frame syncs (`0xFFFFFF7F`) and optionally half-frame syncs
//! (`0xFF7F`). With `OCSD_DFRMTR_RESET_ON_4X_FSYNC`, runs of FSYNC words in
//! aligned data (perf inserts them between blocks) reset the decoders.
#![forbid(unsafe_code)]

use crate::abi::*;
use crate::common::{ErrorLog, LiveDemux, OcsdError};

const FSYNC: [u8; 4] = [0xFF, 0xFF, 0xFF, 0x7F];
const HSYNC: [u8; 2] = [0xFF, 0x7F];
/// The first and second halves of an FSYNC (the second is an HSYNC).
const FSYNC_START: [u8; 2] = [0xFF, 0xFF];
const FSYNC_END: [u8; 2] = [0xFF, 0x7F];
const FRAME: usize = OCSD_DFRMTR_FRAME_SIZE as usize;
const COMPONENT: &str = "DFMT_CSFRAMES";

/// OpenCSD keeps the unpacked frame in an array of 16 entries of
/// `{ u32 index; u8 id; u8 data[15]; u32 valid; u32 used; }` (28 bytes) that
/// is never cleared. Some of OpenCSD's packet processors (STM, PTM) read past
/// the end of the data they are given when they dump unsynchronised bytes,
/// and so print bytes of that array. The deformatter keeps a byte image of
/// it so that the same bytes can be shown: never read as trace.
pub const OUT_CHAN_SIZE: usize = 28;
/// Entries in OpenCSD's unpacked-frame array.
pub const OUT_CHAN_NUM: usize = 16;

/// Where the deformatter sends what it extracts.
pub trait DeformatterOut {
    /// Whether a decoder is attached to trace ID `id`.
    fn id_attached(&self, id: u8) -> bool;
    /// Data bytes of trace ID `id`, first byte at trace index `index`.
    /// `tail` is what follows `data` in the deformatter's output memory laid
    /// out as OpenCSD's (see [`OUT_CHAN_SIZE`]). Returns the response and
    /// the number of bytes used.
    fn id_data(&mut self, id: u8, index: ocsd_trc_index_t, data: &[u8], tail: &[u8]) -> (ocsd_datapath_resp_t, usize);
    /// [`DeformatterOut::id_data`] for `data`, the 15 data bytes of the
    /// frame at `index` of the block given to
    /// [`FrameDeformatter::data_in`], a frame holding no ID byte.
    #[inline]
    fn id_frame(&mut self, id: u8, index: ocsd_trc_index_t, data: &[u8; FRAME - 1], tail: &[u8]) -> (ocsd_datapath_resp_t, usize) {
        self.id_data(id, index, data, tail)
    }
    /// Data-less operation (EOT, FLUSH, RESET) for every attached ID; returns
    /// the most severe response.
    fn id_op_all(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t) -> ocsd_datapath_resp_t;
    /// Raw frame monitor output (only called when raw output is enabled).
    fn raw_frame(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, elem: ocsd_rawframe_elem_t, data: &[u8], id: u8);
    /// Whether a raw frame monitor is attached.
    fn has_raw_monitor(&self) -> bool;
    /// The error logger.
    fn logger(&mut self) -> &mut dyn ErrorLog;
}

/// The data of one trace ID within a frame.
#[derive(Clone, Copy)]
struct IdChunk {
    id: u8,
    index: ocsd_trc_index_t,
    data: [u8; FRAME],
    valid: usize,
    used: usize,
}

impl Default for IdChunk {
    fn default() -> Self {
        IdChunk { id: OCSD_BAD_CS_SRC_ID, index: 0, data: [0; FRAME], valid: 0, used: 0 }
    }
}

pub struct FrameDeformatter {
    cfg_flags: u32,
    alignment: usize,
    // stream state
    curr_idx: ocsd_trc_index_t,
    first_data: bool,
    synced: bool,
    curr_src_id: u8,
    force_sync_idx: Option<ocsd_trc_index_t>,
    // frame being extracted
    frame: [u8; FRAME],
    frame_n: usize,
    idx_sof: ocsd_trc_index_t,
    /// TPIU input: the block ended in the first half of an FSYNC at the
    /// start of a frame; the next must start with its second half.
    fsync_start_eob: bool,
    // unpacked frame awaiting output
    chunks: [IdChunk; 8],
    n_chunks: usize,
    chunks_done: usize,
    highest_resp: ocsd_datapath_resp_t,
    raw_chan_enabled: [bool; 128],
    /// Byte image of OpenCSD's unpacked-frame array (see [`OUT_CHAN_SIZE`]).
    out_mem: [u8; OUT_CHAN_SIZE * OUT_CHAN_NUM],
    /// Demultiplexer statistics, shared with the C API (see
    /// [`FrameDeformatter::live_stats`]).
    stats: LiveDemux,
    /// The most severe level it logs (see [`FrameDeformatter::set_log_level`]).
    log_max: ocsd_err_severity_t,
}

impl Default for FrameDeformatter {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameDeformatter {
    pub fn new() -> Self {
        let mut d = FrameDeformatter {
            cfg_flags: 0,
            alignment: FRAME,
            curr_idx: OCSD_BAD_TRC_INDEX,
            first_data: false,
            synced: false,
            curr_src_id: OCSD_BAD_CS_SRC_ID,
            force_sync_idx: None,
            frame: [0; FRAME],
            frame_n: 0,
            idx_sof: OCSD_BAD_TRC_INDEX,
            fsync_start_eob: false,
            chunks: [IdChunk::default(); 8],
            n_chunks: 0,
            chunks_done: 0,
            highest_resp: OCSD_RESP_CONT,
            raw_chan_enabled: [true; 128],
            out_mem: [0; OUT_CHAN_SIZE * OUT_CHAN_NUM],
            stats: LiveDemux::new(),
            log_max: OCSD_ERR_SEV_INFO,
        };
        d.reset_state();
        d
    }

    /// The demultiplexer statistics now.
    pub fn demux_stats(&self) -> ocsd_demux_stats_t {
        self.stats.get()
    }

    /// The demultiplexer statistics block itself, shared: its counts
    /// change as the deformatter works.
    pub fn live_stats(&self) -> LiveDemux {
        self.stats.clone()
    }

    pub fn config_flags(&self) -> u32 {
        self.cfg_flags
    }

    /// The part of an unpacked frame still to be sent (after a WAIT or a
    /// fatal answer): its trace ID and the index of its next byte. A FLUSH
    /// sends it, also after a RESET (see [`FrameDeformatter::data_in`]).
    pub fn pending_output(&self) -> Option<(u8, ocsd_trc_index_t)> {
        let c = self.chunks.get(self.chunks_done).filter(|_| self.chunks_done < self.n_chunks)?;
        Some((c.id, c.index.wrapping_add(c.used as u32)))
    }

    /// Log nothing less severe than `max` from now on: OpenCSD's frame
    /// deformatter takes its logger's verbosity once, when the decode tree
    /// attaches the logger to it (at the tree's creation), as every
    /// component does.
    pub fn set_log_level(&mut self, max: ocsd_err_severity_t) {
        self.log_max = max;
    }

    fn log_error(&self, log: &mut dyn ErrorLog, e: &OcsdError) {
        if e.sev <= self.log_max {
            log.log_error(COMPONENT, e);
        }
    }

    /// Set the input format (`OCSD_DFRMTR_*` flags).
    pub fn configure(&mut self, flags: u32, log: &mut dyn ErrorLog) -> ocsd_err_t {
        // OpenCSD makes each check in turn, a later failure's message
        // replacing an earlier one's: the last failing check names it
        let msg = if flags & (OCSD_DFRMTR_HAS_FSYNCS | OCSD_DFRMTR_HAS_HSYNCS) != 0 && flags & OCSD_DFRMTR_FRAME_MEM_ALIGN != 0 {
            Some("Invalid Config Flag Combination Set")
        } else if flags & OCSD_DFRMTR_VALID_MASK == 0 {
            Some("No Config Flags Set")
        } else if flags & !OCSD_DFRMTR_VALID_MASK != 0 {
            Some("Unknown Config Flags")
        } else {
            None
        };
        if let Some(m) = msg {
            self.log_error(log, &OcsdError::with_msg(OCSD_ERR_SEV_ERROR, OCSD_ERR_INVALID_PARAM_VAL, m));
            return OCSD_ERR_INVALID_PARAM_VAL;
        }
        self.cfg_flags = flags;
        self.alignment = if flags & OCSD_DFRMTR_HAS_HSYNCS != 0 {
            2
        } else if flags & OCSD_DFRMTR_HAS_FSYNCS != 0 {
            4
        } else {
            FRAME
        };
        OCSD_OK
    }

    /// Start decoding at a known frame boundary (for unaligned sources).
    pub fn force_sync(&mut self, index: ocsd_trc_index_t) {
        self.force_sync_idx = Some(index);
        self.synced = false;
    }

    /// Enable or disable raw unpacked output for a trace ID.
    pub fn set_raw_chan_enabled(&mut self, id: u8, enabled: bool) {
        if let Some(e) = self.raw_chan_enabled.get_mut(id as usize) {
            *e = enabled;
        }
    }

    fn reset_state(&mut self) {
        self.curr_idx = OCSD_BAD_TRC_INDEX;
        self.synced = false;
        self.first_data = false;
        self.curr_src_id = OCSD_BAD_CS_SRC_ID;
        self.frame_n = 0;
        self.idx_sof = OCSD_BAD_TRC_INDEX;
        self.fsync_start_eob = false;
        // (the unpacked frame's output state stays, as OpenCSD's reset
        // leaves it: a FLUSH after a RESET sends what a WAIT left of it)
    }

    fn collate(&mut self, r: ocsd_datapath_resp_t) {
        if r > self.highest_resp {
            self.highest_resp = r;
        }
    }

    fn raw_enabled(&self, out: &dyn DeformatterOut) -> (bool, bool) {
        let mon = out.has_raw_monitor();
        (
            mon && self.cfg_flags & OCSD_DFRMTR_PACKED_RAW_OUT != 0,
            mon && self.cfg_flags & OCSD_DFRMTR_UNPACKED_RAW_OUT != 0,
        )
    }

    /// Process a data-path operation.
    pub fn data_in(
        &mut self,
        op: ocsd_datapath_op_t,
        index: ocsd_trc_index_t,
        data: &[u8],
        out: &mut dyn DeformatterOut,
    ) -> (ocsd_datapath_resp_t, usize) {
        self.highest_resp = OCSD_RESP_CONT;
        match op {
            OCSD_OP_RESET => {
                self.reset_state();
                let r = self.none_data_op(OCSD_OP_RESET, 0, out);
                (r, 0)
            }
            OCSD_OP_FLUSH => {
                let r = out.id_op_all(OCSD_OP_FLUSH, 0);
                self.collate(r);
                if resp_is_cont(self.highest_resp) {
                    self.output_frame(out);
                }
                (self.highest_resp, 0)
            }
            OCSD_OP_EOT => (self.none_data_op(OCSD_OP_EOT, 0, out), 0),
            OCSD_OP_DATA => {
                if data.is_empty() {
                    return (OCSD_RESP_FATAL_INVALID_PARAM, 0);
                }
                self.process(index, data, out)
            }
            _ => (OCSD_RESP_FATAL_INVALID_OP, 0),
        }
    }

    fn none_data_op(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, out: &mut dyn DeformatterOut) -> ocsd_datapath_resp_t {
        let r = out.id_op_all(op, index);
        self.collate(r);
        if out.has_raw_monitor() {
            out.raw_frame(op, 0, OCSD_FRM_NONE, &[], 0);
        }
        self.highest_resp
    }

    fn process(&mut self, index: ocsd_trc_index_t, data: &[u8], out: &mut dyn DeformatterOut) -> (ocsd_datapath_resp_t, usize) {
        let mut processed = 0usize;
        let result = (|| -> Result<(), OcsdError> {
            if !self.first_data {
                self.curr_idx = index;
            } else if self.curr_idx != index {
                return Err(OcsdError::at(OCSD_ERR_SEV_ERROR, OCSD_ERR_DFMTR_NOTCONTTRACE, index, OCSD_BAD_CS_SRC_ID, ""));
            }
            // blocks come in whole frames (memory-aligned input), byte
            // pairs (with HSYNCs) or words (FSYNCs only), as OpenCSD asks,
            // also what is left of a block after a WAIT
            if !data.len().is_multiple_of(self.alignment) {
                return Err(OcsdError::with_msg(
                    OCSD_ERR_SEV_ERROR,
                    OCSD_ERR_INVALID_PARAM_VAL,
                    format!("Input block incorrect size, must be {} byte multiple", self.alignment),
                ));
            }
            if self.check_for_sync(data, &mut processed) {
                // (whole frames of the current trace ID, the most common,
                // go out without being gathered and unpacked byte by byte)
                let fast = self.cfg_flags & OCSD_DFRMTR_FRAME_MEM_ALIGN != 0 && !out.has_raw_monitor();
                loop {
                    if fast && !self.single_id_frames(data, &mut processed, out) {
                        break;
                    }
                    if !self.extract_frame(data, &mut processed, out)? {
                        break;
                    }
                    self.unpack_frame();
                    if !self.output_frame(out) {
                        break;
                    }
                }
            }
            Ok(())
        })();
        if let Err(e) = result {
            self.log_error(out.logger(), &e);
            self.collate(OCSD_RESP_FATAL_INVALID_DATA);
        }
        self.first_data = true;
        (self.highest_resp, processed)
    }

    fn check_for_sync(&mut self, data: &[u8], processed: &mut usize) -> bool {
        if self.synced {
            return true;
        }
        let mut unsynced = 0usize;
        if let Some(fidx) = self.force_sync_idx {
            let start = self.curr_idx as u64;
            let end = start + data.len() as u64;
            if (fidx as u64) >= start && (fidx as u64) < end {
                unsynced = (fidx as u64 - start) as usize;
                self.synced = true;
            } else {
                unsynced = data.len();
            }
        } else if self.cfg_flags & OCSD_DFRMTR_HAS_FSYNCS != 0 {
            unsynced = self.find_first_fsync(data);
        } else {
            self.synced = true;
        }
        if unsynced > 0 {
            *processed = unsynced;
            self.curr_idx = self.curr_idx.wrapping_add(unsynced as u32);
        }
        self.synced
    }

    /// OpenCSD 1.8.0's search for the first FSYNC of TPIU input: at every
    /// byte offset of the block but its last 3 bytes (they are not taken:
    /// the client gives them again, with what follows or alone). Returns
    /// the bytes skipped.
    fn find_first_fsync(&mut self, data: &[u8]) -> usize {
        if data.len() < 4 {
            // (OpenCSD reads past a block this short; holding no FSYNC,
            // it is taken whole: never left to be given again as it is)
            return data.len();
        }
        let last = data.len() - 3;
        match (0..last).find(|&i| data[i..].starts_with(&FSYNC)) {
            Some(i) => {
                self.synced = true;
                i
            }
            None => last,
        }
    }

    /// Memory-aligned input without a raw monitor, between frames: the
    /// frames from `processed` that hold no ID byte ([`single_id_frame`])
    /// while the current trace ID is attached, each sent as
    /// `extract_frame`, `unpack_frame` and `output_frame` would send it
    /// and leaving the same state. Returns false when a stream stopped
    /// the output (as `output_frame`); true when the next frame is for
    /// the general path (or there is none).
    #[inline]
    fn single_id_frames(&mut self, data: &[u8], processed: &mut usize, out: &mut dyn DeformatterOut) -> bool {
        // (a frame partly gathered, or a frame's chunks still to go out:
        // the general path)
        if self.frame_n != 0 || self.chunks_done < self.n_chunks {
            return true;
        }
        let id = self.curr_src_id;
        if id == OCSD_BAD_CS_SRC_ID {
            return true;
        }
        while let Some(f) = data.get(*processed..).and_then(|r| r.first_chunk::<FRAME>()) {
            let Some(d) = single_id_frame(f) else { return true };
            if !out.id_attached(id) {
                return true;
            }
            let index = self.curr_idx;
            *processed += FRAME;
            self.curr_idx = index.wrapping_add(FRAME as u32);
            self.idx_sof = index;
            // (its auxiliary byte is the frame's one non-data byte)
            self.stats.add_frame(1);
            self.mirror_chunk(0, index, id, &d);
            let (r, used) = out.id_frame(id, index, &d, &self.out_mem[20..]);
            self.collate(r);
            let used = used.min(FRAME - 1);
            self.stats.add_valid_id(used as u64);
            if !resp_is_cont(self.highest_resp) {
                // the frame's chunk kept for the data path to resend, as
                // unpack_frame would have left it
                let c = &mut self.chunks[0];
                (c.id, c.index, c.valid, c.used) = (id, index, FRAME - 1, 0);
                c.data[..FRAME - 1].copy_from_slice(&d);
                (self.n_chunks, self.chunks_done) = (1, 0);
                self.chunk_stopped(used);
                return false;
            }
        }
        true
    }

    /// Gather the next frame. Returns whether there is a frame to unpack.
    fn extract_frame(&mut self, data: &[u8], processed: &mut usize, out: &mut dyn DeformatterOut) -> Result<bool, OcsdError> {
        if *processed >= data.len() {
            return Ok(false);
        }
        let (raw_packed, raw_unpacked) = self.raw_enabled(out);
        let mut fsync_bytes = 0usize;
        let mut hsync_bytes = 0usize;
        let mut ex_bytes = 0usize;

        if self.cfg_flags & OCSD_DFRMTR_FRAME_MEM_ALIGN != 0 {
            if self.cfg_flags & OCSD_DFRMTR_RESET_ON_4X_FSYNC != 0 {
                let mut p = *processed;
                let mut n_fsyncs = 0;
                while p + 4 <= data.len() && data[p..p + 4] == FSYNC {
                    p += 4;
                    n_fsyncs += 1;
                }
                fsync_bytes = n_fsyncs * 4;
                // a whole number of frames of FSYNCs resets the decoders
                // (before the FSYNCs are shown, as in OpenCSD)
                if n_fsyncs > 0 && n_fsyncs % 4 == 0 {
                    let r = out.id_op_all(OCSD_OP_RESET, self.curr_idx);
                    self.collate(r);
                    self.curr_src_id = OCSD_BAD_CS_SRC_ID;
                    self.frame_n = 0;
                    self.idx_sof = OCSD_BAD_TRC_INDEX;
                }
                if fsync_bytes > 0 && (raw_packed || raw_unpacked) {
                    out.raw_frame(OCSD_OP_DATA, self.curr_idx, OCSD_FRM_FSYNC, &data[*processed..*processed + fsync_bytes], 0);
                }
                if n_fsyncs % 4 != 0 {
                    return Err(OcsdError::at(
                        OCSD_ERR_SEV_ERROR,
                        OCSD_ERR_DFMTR_BAD_FHSYNC,
                        self.curr_idx,
                        OCSD_BAD_CS_SRC_ID,
                        "Incorrect FSYNC frame reset pattern",
                    ));
                }
            }
            if *processed + fsync_bytes >= data.len() {
                self.frame_n = 0;
            } else {
                let start = *processed + fsync_bytes;
                let avail = (data.len() - start).min(FRAME);
                self.frame[..avail].copy_from_slice(&data[start..start + avail]);
                // aligned input is a whole number of frames; a short tail
                // cannot occur after the alignment check, but stay safe.
                self.frame_n = avail;
                self.idx_sof = self.curr_idx.wrapping_add(fsync_bytes as u32);
                ex_bytes = avail;
            }
        } else {
            // TPIU input, in pairs of bytes: FSYNCs only before a frame
            // (one may straddle two blocks), HSYNCs (if present) anywhere
            let has_fsyncs = self.cfg_flags & OCSD_DFRMTR_HAS_FSYNCS != 0;
            let has_hsyncs = self.cfg_flags & OCSD_DFRMTR_HAS_HSYNCS != 0;
            let mut p = *processed;
            let pair = |p: usize| data.get(p..p + 2);
            if has_fsyncs && self.frame_n == 0 {
                if self.fsync_start_eob {
                    // (the second half of an FSYNC is an HSYNC)
                    if pair(p) != Some(&FSYNC_END[..]) {
                        return Err(OcsdError::at(
                            OCSD_ERR_SEV_ERROR,
                            OCSD_ERR_DFMTR_BAD_FHSYNC,
                            self.curr_idx,
                            OCSD_BAD_CS_SRC_ID,
                            "Bad FSYNC pattern before frame or invalid ID.(0x7F)",
                        ));
                    }
                    fsync_bytes += 2;
                    p += 2;
                    self.fsync_start_eob = false;
                }
                while data.get(p..p + 4) == Some(&FSYNC[..]) {
                    fsync_bytes += 4;
                    p += 4;
                }
                if data.len() - p == 2 && pair(p) == Some(&FSYNC_START[..]) {
                    fsync_bytes += 2;
                    p += 2;
                    self.fsync_start_eob = true;
                }
            }
            while self.frame_n < FRAME {
                let Some(&[b0, b1]) = pair(p) else { break };
                if self.frame_n == 0 {
                    // (after the FSYNCs skipped, not the HSYNCs)
                    self.idx_sof = self.curr_idx.wrapping_add(fsync_bytes as u32);
                }
                self.frame[self.frame_n] = b0;
                self.frame[self.frame_n + 1] = b1;
                if [b0, b1] == HSYNC {
                    if !has_hsyncs {
                        return Err(OcsdError::at(OCSD_ERR_SEV_ERROR, OCSD_ERR_DFMTR_BAD_FHSYNC, self.curr_idx, OCSD_BAD_CS_SRC_ID, "Bad HSYNC in frame."));
                    }
                    hsync_bytes += 2;
                } else if [b0, b1] == FSYNC_START {
                    // an FSYNC in a frame, or the invalid ID 0x7F (the index
                    // is the pass's start)
                    return Err(OcsdError::at(
                        OCSD_ERR_SEV_ERROR,
                        OCSD_ERR_DFMTR_BAD_FHSYNC,
                        self.curr_idx,
                        OCSD_BAD_CS_SRC_ID,
                        "Bad FSYNC start in frame or invalid ID (0x7F).",
                    ));
                } else {
                    self.frame_n += 2;
                    ex_bytes += 2;
                }
                p += 2;
            }
        }

        let total = ex_bytes + fsync_bytes + hsync_bytes;
        // the raw packed bytes go out with a whole frame, or at the end of
        // the block; a whole frame is unpacked
        let block_done = *processed + total >= data.len();
        if (self.frame_n == FRAME || block_done) && raw_packed && total > 0 {
            out.raw_frame(OCSD_OP_DATA, self.curr_idx, OCSD_FRM_PACKED, &data[*processed..*processed + total], 0);
        }
        *processed += total;
        self.curr_idx = self.curr_idx.wrapping_add(total as u32);
        self.stats.add_frame((fsync_bytes + hsync_bytes) as u64);
        Ok(self.frame_n == FRAME)
    }

    fn unpack_frame(&mut self) {
        let f = self.frame;
        let aux = f[15];
        self.n_chunks = 1;
        self.chunks_done = 0;
        self.chunks[0] = IdChunk { id: self.curr_src_id, index: self.idx_sof, ..IdChunk::default() };
        let mut cur = 0usize;
        let mut non_data = 0u64;

        if let Some(data) = single_id_frame(&f) {
            // no ID change in the frame (the common case)
            let c = &mut self.chunks[0];
            c.data[..FRAME - 1].copy_from_slice(&data);
            c.valid = FRAME - 1;
            let (index, id) = (c.index, c.id);
            self.frame_n = 0;
            self.stats.add_frame(1);
            self.mirror_chunk(0, index, id, &data);
            return;
        }

        for pair in 0..8 {
            let i = pair * 2;
            let flag = (aux >> pair) & 1;
            let b = f[i];
            let mut second_done = false;
            if b & 1 != 0 {
                let new_id = (b >> 1) & 0x7F;
                if i < 14 && new_id != self.curr_src_id {
                    if flag != 0 {
                        // the following data byte still belongs to the old ID
                        push_byte(&mut self.chunks[cur], f[i + 1]);
                        second_done = true;
                    }
                    self.curr_src_id = new_id;
                    if self.chunks[cur].valid > 0 {
                        cur += 1;
                        self.chunks[cur] = IdChunk { id: new_id, index: self.idx_sof.wrapping_add(i as u32), ..IdChunk::default() };
                        self.n_chunks = cur + 1;
                    }
                    self.chunks[cur].id = new_id;
                } else if i == 14 {
                    self.curr_src_id = new_id;
                }
                non_data += 1;
            } else {
                push_byte(&mut self.chunks[cur], b | flag);
            }
            if i < 14 && !second_done {
                push_byte(&mut self.chunks[cur], f[i + 1]);
            }
        }
        self.frame_n = 0;
        non_data += 1; // byte 15
        self.stats.add_frame(non_data);
        // mirror into OpenCSD's memory image: bytes past `valid` keep
        // whatever earlier frames left there
        for e in 0..self.n_chunks {
            let c = self.chunks[e];
            self.mirror_chunk(e, c.index, c.id, &c.data[..c.valid]);
        }
    }

    /// Entry `e` of OpenCSD's frame memory: a chunk of `data` for `id` at
    /// `index`, none of it used yet.
    #[inline]
    fn mirror_chunk(&mut self, e: usize, index: ocsd_trc_index_t, id: u8, data: &[u8]) {
        let m = &mut self.out_mem[e * OUT_CHAN_SIZE..(e + 1) * OUT_CHAN_SIZE];
        m[0..4].copy_from_slice(&index.to_le_bytes());
        m[4] = id;
        m[5..5 + data.len()].copy_from_slice(data);
        m[20..24].copy_from_slice(&(data.len() as u32).to_le_bytes());
        m[24..28].copy_from_slice(&0u32.to_le_bytes());
    }

    /// The current chunk's stream stopped the output having used `used`
    /// more of its bytes: counted (in the frame memory too), the chunk
    /// done if it has no byte left.
    fn chunk_stopped(&mut self, used: usize) {
        let ch = &mut self.chunks[self.chunks_done];
        ch.used += used;
        let at = self.chunks_done * OUT_CHAN_SIZE + 24;
        self.out_mem[at..at + 4].copy_from_slice(&(ch.used as u32).to_le_bytes());
        if ch.used == ch.valid {
            self.chunks_done += 1;
        }
    }

    /// Send the unpacked frame to the ID streams. Returns false when a stream
    /// asked to wait (or failed).
    fn output_frame(&mut self, out: &mut dyn DeformatterOut) -> bool {
        let (_, raw_unpacked) = self.raw_enabled(out);
        let mut cont = true;
        while self.chunks_done < self.n_chunks && cont {
            let c = self.chunks[self.chunks_done];
            if c.id != OCSD_BAD_CS_SRC_ID {
                let chan_raw = raw_unpacked && self.raw_chan_enabled.get(c.id as usize).copied().unwrap_or(false);
                if out.id_attached(c.id) {
                    // shown before it goes out, and again when resent after
                    // a stream used none of it (a WAIT or an error on its
                    // first byte), as OpenCSD shows it
                    if chan_raw && c.used == 0 {
                        out.raw_frame(OCSD_OP_DATA, c.index, OCSD_FRM_ID_DATA, &c.data[..c.valid], c.id);
                    }
                    let tail_at = self.chunks_done * OUT_CHAN_SIZE + 5 + c.valid;
                    let (r, used) =
                        out.id_data(c.id, c.index.wrapping_add(c.used as u32), &c.data[c.used..c.valid], &self.out_mem[tail_at..]);
                    self.collate(r);
                    let used = used.min(c.valid - c.used);
                    self.stats.add_valid_id(used as u64);
                    if !resp_is_cont(self.highest_resp) {
                        cont = false;
                        self.chunk_stopped(used);
                    } else {
                        self.chunks_done += 1;
                    }
                } else {
                    if chan_raw {
                        out.raw_frame(OCSD_OP_DATA, c.index, OCSD_FRM_ID_DATA, &c.data[..c.valid], c.id);
                    }
                    if is_reserved_cs_src_id(c.id) {
                        self.stats.add_reserved_id(c.valid as u64);
                    } else {
                        self.stats.add_no_id(c.valid as u64);
                    }
                    self.chunks_done += 1;
                }
            } else {
                if raw_unpacked {
                    out.raw_frame(OCSD_OP_DATA, c.index, OCSD_FRM_ID_DATA, &c.data[..c.valid], c.id);
                }
                self.stats.add_unknown_id(c.valid as u64);
                self.chunks_done += 1;
            }
        }
        cont
    }
}

/// The 15 data bytes of a frame that holds no ID byte (the common case),
/// each even one with its low bit from the auxiliary byte; None for a
/// frame with an ID byte.
#[inline]
pub(crate) fn single_id_frame(f: &[u8; FRAME]) -> Option<[u8; FRAME - 1]> {
    const EVEN_LOW: u64 = 0x0001_0001_0001_0001;
    let lo = u64::from_le_bytes([f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]]);
    let hi = u64::from_le_bytes([f[8], f[9], f[10], f[11], f[12], f[13], f[14], f[15]]);
    if (lo | hi) & EVEN_LOW != 0 {
        return None;
    }
    // four bits of the auxiliary byte (f[15]) to bit 0 of bytes 0, 2, 4, 6
    let spread = |x: u64| {
        let x = (x | x << 30) & 0x0000_0003_0000_0003;
        (x | x << 15) & EVEN_LOW
    };
    let aux = f[15] as u64;
    let lo = (lo | spread(aux & 0xF)).to_le_bytes();
    let hi = (hi | spread(aux >> 4)).to_le_bytes();
    let mut d = [0u8; FRAME - 1];
    d[..8].copy_from_slice(&lo);
    d[8..].copy_from_slice(&hi[..7]);
    Some(d)
}

/// [`single_id_frame`] of the frame at offset `at` of `bytes` (None also
/// when the frame is not all there).
#[inline]
pub(crate) fn single_id_frame_at(bytes: &[u8], at: usize) -> Option<[u8; FRAME - 1]> {
    single_id_frame(bytes.get(at..at.checked_add(FRAME)?)?.try_into().ok()?)
}

#[inline]
fn push_byte(c: &mut IdChunk, b: u8) {
    if c.valid < FRAME {
        c.data[c.valid] = b;
        c.valid += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::error::NullLog;

    /// The details of the errors logged.
    #[derive(Default)]
    struct TestLog(Vec<String>);
    impl ErrorLog for TestLog {
        fn log_error(&mut self, _: &str, e: &OcsdError) {
            self.0.push(e.details());
        }
        fn log_message(&mut self, _: &str, _: ocsd_err_severity_t, _: &str) {}
    }

    #[derive(Default)]
    struct Capture {
        got: Vec<(u8, u32, Vec<u8>)>,
        raw: Vec<(ocsd_rawframe_elem_t, u32, Vec<u8>)>,
        log: TestLog,
        wait_after: Option<usize>,
        ops: Vec<ocsd_datapath_op_t>,
        /// Operations and raw frames in the order they came.
        order: Vec<String>,
    }
    impl DeformatterOut for Capture {
        fn id_attached(&self, id: u8) -> bool {
            id == 1 || id == 2
        }
        fn id_data(&mut self, id: u8, index: u32, data: &[u8], _tail: &[u8]) -> (ocsd_datapath_resp_t, usize) {
            if let Some(n) = self.wait_after {
                if n < data.len() {
                    self.got.push((id, index, data[..n].to_vec()));
                    self.wait_after = None;
                    return (OCSD_RESP_WAIT, n);
                }
            }
            self.got.push((id, index, data.to_vec()));
            (OCSD_RESP_CONT, data.len())
        }
        fn id_op_all(&mut self, op: ocsd_datapath_op_t, _: u32) -> ocsd_datapath_resp_t {
            self.ops.push(op);
            self.order.push(format!("op {op}"));
            OCSD_RESP_CONT
        }
        fn raw_frame(&mut self, _: ocsd_datapath_op_t, index: u32, elem: ocsd_rawframe_elem_t, data: &[u8], _: u8) {
            self.raw.push((elem, index, data.to_vec()));
            self.order.push(format!("raw {elem} at {index}"));
        }
        fn has_raw_monitor(&self) -> bool {
            true
        }
        fn logger(&mut self) -> &mut dyn ErrorLog {
            &mut self.log
        }
    }

    // The first frame of the a55-test-tpiu snapshot (after an FSYNC).
    const A55_FRAME: [u8; 16] = [0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x01, 0x00, 0x80];

    /// The byte-by-byte definition of a frame with no ID byte.
    #[test]
    fn single_id_frame_unpacks_as_byte_by_byte() {
        let mut rnd = crate::common::xorshift64(99);
        for _ in 0..5000 {
            let mut f = [0u8; FRAME];
            for b in f.iter_mut() {
                *b = rnd() as u8;
            }
            let ids = (0..8).filter(|i| f[2 * i] & 1 != 0).count();
            if rnd().is_multiple_of(2) {
                for i in 0..8 {
                    f[2 * i] &= !1;
                }
            }
            let want = (0..8).all(|i| f[2 * i] & 1 == 0).then(|| {
                let mut d = [0u8; FRAME - 1];
                for (i, b) in d.iter_mut().enumerate() {
                    *b = if i % 2 == 0 { f[i] | (f[15] >> (i / 2)) & 1 } else { f[i] };
                }
                d
            });
            assert_eq!(single_id_frame(&f), want, "{f:02x?} ({ids} ID bytes)");
        }
    }

    #[test]
    fn unpacks_single_id_frame() {
        let mut d = FrameDeformatter::new();
        let mut cap = Capture::default();
        assert_eq!(d.configure(OCSD_DFRMTR_FRAME_MEM_ALIGN, &mut NullLog), OCSD_OK);
        let (r, used) = d.data_in(OCSD_OP_DATA, 0, &A55_FRAME, &mut cap);
        assert_eq!((r, used), (OCSD_RESP_CONT, 16));
        let mut want = vec![0u8; 11];
        want.extend_from_slice(&[0x80, 0x01, 0x01]);
        assert_eq!(cap.got, vec![(1, 0, want)]);
    }

    #[test]
    fn tpiu_fsync_and_raw_output() {
        let mut d = FrameDeformatter::new();
        let mut cap = Capture::default();
        d.configure(OCSD_DFRMTR_HAS_FSYNCS | OCSD_DFRMTR_PACKED_RAW_OUT | OCSD_DFRMTR_UNPACKED_RAW_OUT, &mut NullLog);
        let mut buf = vec![0xFF, 0xFF, 0xFF, 0x7F];
        buf.extend_from_slice(&A55_FRAME);
        let (r, used) = d.data_in(OCSD_OP_DATA, 0, &buf, &mut cap);
        assert_eq!((r, used), (OCSD_RESP_CONT, 20));
        assert_eq!(cap.got[0].1, 4);
        assert_eq!(cap.raw[0].0, OCSD_FRM_PACKED);
        assert_eq!(cap.raw[0].2.len(), 20);
        assert_eq!(cap.raw[1].0, OCSD_FRM_ID_DATA);
        assert_eq!(cap.raw[1].1, 4);
    }

    #[test]
    fn id_change_with_previous_id_byte() {
        // ID 1, 13 data bytes, then at byte 6 switch to ID 2 with the
        // following byte still for ID 1 (aux bit 3 set).
        let mut f = [0u8; 16];
        f[0] = 0x03; // ID 1
        for (i, b) in f.iter_mut().enumerate().take(15).skip(1) {
            *b = (i as u8) << 1;
        }
        f[6] = 0x05; // ID 2
        f[15] = 1 << 3;
        let mut d = FrameDeformatter::new();
        let mut cap = Capture::default();
        d.configure(OCSD_DFRMTR_FRAME_MEM_ALIGN, &mut NullLog);
        d.data_in(OCSD_OP_DATA, 0, &f, &mut cap);
        assert_eq!(cap.got.len(), 2);
        assert_eq!(cap.got[0].0, 1);
        assert_eq!(cap.got[0].2, vec![2, 4, 6, 8, 10, 14]);
        assert_eq!(cap.got[1].0, 2);
        assert_eq!(cap.got[1].1, 6);
        assert_eq!(cap.got[1].2, vec![16, 18, 20, 22, 24, 26, 28]);
    }

    #[test]
    fn wait_then_flush_resumes_without_loss() {
        let mut d = FrameDeformatter::new();
        let mut cap = Capture { wait_after: Some(5), ..Default::default() };
        d.configure(OCSD_DFRMTR_FRAME_MEM_ALIGN, &mut NullLog);
        let (r, used) = d.data_in(OCSD_OP_DATA, 0, &A55_FRAME, &mut cap);
        assert_eq!(r, OCSD_RESP_WAIT);
        assert_eq!(used, 16);
        let (r, _) = d.data_in(OCSD_OP_FLUSH, 0, &[], &mut cap);
        assert_eq!(r, OCSD_RESP_CONT);
        let all: Vec<u8> = cap.got.iter().flat_map(|g| g.2.clone()).collect();
        assert_eq!(all.len(), 14);
        assert_eq!(cap.got[1].1, 5);
    }

    /// OpenCSD's RESET does not clear the unpacked frame's output state: a
    /// FLUSH after it sends what a WAIT left of the frame (to the decoders
    /// just reset), while DATA unpacks a new frame over it.
    #[test]
    fn flush_after_reset_sends_what_a_wait_left() {
        let mut d = FrameDeformatter::new();
        let mut cap = Capture { wait_after: Some(5), ..Default::default() };
        d.configure(OCSD_DFRMTR_FRAME_MEM_ALIGN, &mut NullLog);
        assert_eq!(d.data_in(OCSD_OP_DATA, 0, &A55_FRAME, &mut cap), (OCSD_RESP_WAIT, 16));
        assert_eq!(d.data_in(OCSD_OP_RESET, 0, &[], &mut cap).0, OCSD_RESP_CONT);
        assert_eq!(d.data_in(OCSD_OP_FLUSH, 0, &[], &mut cap).0, OCSD_RESP_CONT);
        assert_eq!(cap.ops, [OCSD_OP_RESET, OCSD_OP_FLUSH]);
        assert_eq!(cap.got.len(), 2);
        assert_eq!((cap.got[1].1, cap.got[1].2.len()), (5, 9));
        // a RESET then DATA: the new frame only
        let mut d = FrameDeformatter::new();
        let mut cap = Capture { wait_after: Some(5), ..Default::default() };
        d.configure(OCSD_DFRMTR_FRAME_MEM_ALIGN, &mut NullLog);
        assert_eq!(d.data_in(OCSD_OP_DATA, 0, &A55_FRAME, &mut cap), (OCSD_RESP_WAIT, 16));
        assert_eq!(d.data_in(OCSD_OP_RESET, 0, &[], &mut cap).0, OCSD_RESP_CONT);
        assert_eq!(d.data_in(OCSD_OP_DATA, 100, &A55_FRAME, &mut cap), (OCSD_RESP_CONT, 16));
        assert_eq!(cap.got.len(), 2);
        assert_eq!((cap.got[1].1, cap.got[1].2.len()), (100, 14));
    }

    #[test]
    fn bad_input_is_reported_not_panicking() {
        let mut d = FrameDeformatter::new();
        let mut cap = Capture::default();
        d.configure(OCSD_DFRMTR_FRAME_MEM_ALIGN, &mut NullLog);
        let (r, _) = d.data_in(OCSD_OP_DATA, 0, &[1, 2, 3], &mut cap);
        assert_eq!(r, OCSD_RESP_FATAL_INVALID_DATA);
        assert_eq!(d.configure(OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_HAS_FSYNCS, &mut NullLog), OCSD_ERR_INVALID_PARAM_VAL);
        let mut d = FrameDeformatter::new();
        d.configure(OCSD_DFRMTR_HAS_FSYNCS | OCSD_DFRMTR_HAS_HSYNCS, &mut NullLog);
        for len in [2usize, 4, 6, 18, 34] {
            let junk: Vec<u8> = (0..len).map(|i| (i * 37 + 0x7F) as u8).collect();
            let _ = d.data_in(OCSD_OP_DATA, 0, &junk, &mut cap);
        }
    }

    #[test]
    fn a_bad_configuration_is_named_by_its_last_failing_check() {
        let unknown = 0x8000_0000u32;
        assert_eq!(unknown & OCSD_DFRMTR_VALID_MASK, 0);
        for (flags, msg) in [
            (unknown | OCSD_DFRMTR_FRAME_MEM_ALIGN, "Unknown Config Flags"),
            (unknown, "No Config Flags Set"),
            (0, "No Config Flags Set"),
            (unknown | OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_HAS_FSYNCS, "Invalid Config Flag Combination Set"),
            (OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_HAS_HSYNCS, "Invalid Config Flag Combination Set"),
        ] {
            let mut d = FrameDeformatter::new();
            let mut log = TestLog::default();
            assert_eq!(d.configure(flags, &mut log), OCSD_ERR_INVALID_PARAM_VAL, "{flags:#x}");
            assert_eq!(log.0.len(), 1);
            assert!(log.0[0].ends_with(msg), "{flags:#x}: {}", log.0[0]);
        }
    }

    /// OpenCSD 1.8.0 (the same code as 1.3.3, checked with one C client on
    /// both libraries) searches a block for the first FSYNC at every byte
    /// offset but the last 3, which it leaves for the client to give again;
    /// and takes only blocks of whole words (FSYNCs only) or byte pairs
    /// (with HSYNCs).
    #[test]
    fn unsynced_tpiu_block_leaves_its_last_three_bytes() {
        for (flags, align) in [(OCSD_DFRMTR_HAS_FSYNCS, 4usize), (OCSD_DFRMTR_HAS_FSYNCS | OCSD_DFRMTR_HAS_HSYNCS, 2)] {
            let mut d = FrameDeformatter::new();
            let mut cap = Capture::default();
            d.configure(flags, &mut NullLog);
            assert_eq!(d.alignment, align);
            assert_eq!(d.data_in(OCSD_OP_DATA, 0, &[0x12; 8], &mut cap), (OCSD_RESP_CONT, 5));
            // what is left is no whole word or pair
            assert_eq!(d.data_in(OCSD_OP_DATA, 5, &[0x12; 3], &mut cap), (OCSD_RESP_FATAL_INVALID_DATA, 0));
            let want = format!("0x0006 (OCSD_ERR_INVALID_PARAM_VAL) [Invalid value parameter passed to component.]; Input block incorrect size, must be {align} byte multiple");
            assert_eq!(cap.log.0, vec![want]);
            // an FSYNC found at an odd offset: frames from there
            let mut d = FrameDeformatter::new();
            let mut cap = Capture::default();
            d.configure(flags, &mut NullLog);
            let mut block = vec![0x55, 0x55, 0x55];
            block.extend_from_slice(&FSYNC);
            block.extend_from_slice(&A55_FRAME);
            block.push(0);
            assert_eq!(d.data_in(OCSD_OP_DATA, 0, &block, &mut cap), (OCSD_RESP_CONT, 23));
            assert_eq!(cap.got.iter().map(|g| (g.0, g.1)).collect::<Vec<_>>(), vec![(1, 7)]);
        }
    }

    /// An FSYNC before a frame may be split over two blocks; a first half
    /// of one (or the ID 0x7F) inside a frame, an HSYNC where none are
    /// expected, or a split FSYNC not completed, is an error at the index
    /// where the pass over the block started (OpenCSD 1.8.0).
    #[test]
    fn tpiu_sync_errors_and_split_fsync() {
        let frames = |n: usize| -> Vec<u8> { (0..n).flat_map(|_| A55_FRAME).collect() };
        let new = |flags: u32| {
            let mut d = FrameDeformatter::new();
            d.configure(flags, &mut NullLog);
            (d, Capture::default())
        };
        // split FSYNC between frames: block 1 ends in its first half
        let (mut d, mut cap) = new(OCSD_DFRMTR_HAS_FSYNCS);
        let mut b1 = FSYNC.to_vec();
        b1.extend(frames(1));
        b1.extend_from_slice(&FSYNC_START);
        b1.extend_from_slice(&[0x03, 0x00]);
        // (the frame after the split FSYNC starts in block 1: no split)
        assert_eq!(d.data_in(OCSD_OP_DATA, 0, &b1, &mut cap).0, OCSD_RESP_FATAL_INVALID_DATA);
        assert!(cap.log.0[0].ends_with("TrcIdx=20; Bad FSYNC start in frame or invalid ID (0x7F)."), "{:?}", cap.log.0);
        // (blocks of byte pairs: with HSYNCs)
        let tpiu = OCSD_DFRMTR_HAS_FSYNCS | OCSD_DFRMTR_HAS_HSYNCS;
        let (mut d, mut cap) = new(tpiu);
        let mut b1 = FSYNC.to_vec();
        b1.extend(frames(1));
        b1.extend_from_slice(&FSYNC_START);
        assert_eq!(d.data_in(OCSD_OP_DATA, 0, &b1[..22], &mut cap), (OCSD_RESP_CONT, 22));
        let mut b2 = FSYNC_END.to_vec();
        b2.extend(frames(1));
        b2.extend_from_slice(&[0, 0]);
        assert_eq!(d.data_in(OCSD_OP_DATA, 22, &b2, &mut cap), (OCSD_RESP_CONT, 20));
        assert_eq!(cap.got.iter().map(|g| (g.0, g.1)).collect::<Vec<_>>(), vec![(1, 4), (1, 24)]);
        assert!(cap.log.0.is_empty());
        // the split FSYNC not completed
        let (mut d, mut cap) = new(tpiu);
        d.data_in(OCSD_OP_DATA, 0, &b1[..22], &mut cap);
        assert_eq!(d.data_in(OCSD_OP_DATA, 22, &frames(1), &mut cap).0, OCSD_RESP_FATAL_INVALID_DATA);
        assert!(cap.log.0[0].ends_with("TrcIdx=22; Bad FSYNC pattern before frame or invalid ID.(0x7F)"), "{:?}", cap.log.0);
        // an HSYNC without HSYNCs, part-way through a frame
        let (mut d, mut cap) = new(OCSD_DFRMTR_HAS_FSYNCS);
        let mut b = FSYNC.to_vec();
        b.extend(frames(1));
        b.extend_from_slice(&[0x03, 0x00, 0xFF, 0x7F]);
        b.extend(frames(1));
        assert_eq!(d.data_in(OCSD_OP_DATA, 0, &b[..40], &mut cap).0, OCSD_RESP_FATAL_INVALID_DATA);
        assert!(cap.log.0[0].ends_with("TrcIdx=20; Bad HSYNC in frame."), "{:?}", cap.log.0);
        // with HSYNCs it is skipped
        let (mut d, mut cap) = new(OCSD_DFRMTR_HAS_FSYNCS | OCSD_DFRMTR_HAS_HSYNCS);
        assert_eq!(d.data_in(OCSD_OP_DATA, 0, &b[..40], &mut cap), (OCSD_RESP_CONT, 40));
        assert_eq!(cap.got.len(), 2);
    }

    /// OpenCSD's `outputFrame` shows a chunk while the stream has used none
    /// of it: again when it resends it after a WAIT on which nothing was
    /// used (checked against OpenCSD 1.3.3 with one C client on corrupted
    /// TC2 trace), once more only if that happens again.
    #[test]
    fn unpacked_raw_shown_again_when_resent_unused() {
        struct ZeroWait(Capture, bool);
        impl DeformatterOut for ZeroWait {
            fn id_attached(&self, id: u8) -> bool {
                self.0.id_attached(id)
            }
            fn id_data(&mut self, id: u8, index: u32, data: &[u8], tail: &[u8]) -> (ocsd_datapath_resp_t, usize) {
                if self.1 {
                    self.1 = false;
                    return (OCSD_RESP_WAIT, 0);
                }
                self.0.id_data(id, index, data, tail)
            }
            fn id_op_all(&mut self, op: ocsd_datapath_op_t, index: u32) -> ocsd_datapath_resp_t {
                self.0.id_op_all(op, index)
            }
            fn raw_frame(&mut self, op: ocsd_datapath_op_t, index: u32, elem: ocsd_rawframe_elem_t, data: &[u8], id: u8) {
                self.0.raw_frame(op, index, elem, data, id)
            }
            fn has_raw_monitor(&self) -> bool {
                true
            }
            fn logger(&mut self) -> &mut dyn ErrorLog {
                self.0.logger()
            }
        }
        let mut d = FrameDeformatter::new();
        let mut out = ZeroWait(Capture::default(), true);
        d.configure(OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_UNPACKED_RAW_OUT, &mut NullLog);
        let (r, used) = d.data_in(OCSD_OP_DATA, 0, &A55_FRAME, &mut out);
        assert_eq!((r, used), (OCSD_RESP_WAIT, 16));
        assert_eq!(out.0.raw.len(), 1);
        assert_eq!(d.data_in(OCSD_OP_FLUSH, 0, &[], &mut out).0, OCSD_RESP_CONT);
        assert_eq!(out.0.raw.len(), 2);
        assert_eq!(out.0.raw[0], out.0.raw[1]);
        assert_eq!(out.0.got.len(), 1);
        // a WAIT after part of the chunk was used: not shown again
        let mut d = FrameDeformatter::new();
        let mut cap = Capture { wait_after: Some(3), ..Capture::default() };
        d.configure(OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_UNPACKED_RAW_OUT, &mut NullLog);
        assert_eq!(d.data_in(OCSD_OP_DATA, 0, &A55_FRAME, &mut cap).0, OCSD_RESP_WAIT);
        assert_eq!(d.data_in(OCSD_OP_FLUSH, 0, &[], &mut cap).0, OCSD_RESP_CONT);
        assert_eq!(cap.raw.len(), 1);
        assert_eq!(cap.got.len(), 2);
    }

    #[test]
    fn four_fsyncs_reset_downstream() {
        let mut d = FrameDeformatter::new();
        let mut cap = Capture::default();
        d.configure(OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_RESET_ON_4X_FSYNC, &mut NullLog);
        let mut buf = FSYNC.repeat(4);
        buf.extend_from_slice(&A55_FRAME);
        let (r, used) = d.data_in(OCSD_OP_DATA, 0, &buf, &mut cap);
        assert_eq!((r, used), (OCSD_RESP_CONT, 32));
        assert_eq!(cap.ops, vec![OCSD_OP_RESET]);
        assert_eq!(cap.got[0].1, 16);
        // with raw frames shown: the decoders are reset before the FSYNCs
        // are shown (OpenCSD resets them while it counts the FSYNCs); a
        // run that is no whole frame is shown, then an error
        let mut d = FrameDeformatter::new();
        let mut cap = Capture::default();
        d.configure(OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_RESET_ON_4X_FSYNC | OCSD_DFRMTR_PACKED_RAW_OUT, &mut NullLog);
        let mut buf = A55_FRAME.to_vec();
        buf.extend(FSYNC.repeat(4));
        buf.extend(FSYNC.repeat(4));
        buf.extend_from_slice(&A55_FRAME);
        assert_eq!(d.data_in(OCSD_OP_DATA, 0, &buf, &mut cap), (OCSD_RESP_CONT, 64));
        let want = [format!("raw {OCSD_FRM_PACKED} at 0"), format!("op {OCSD_OP_RESET}"), format!("raw {OCSD_FRM_FSYNC} at 16"), format!("raw {OCSD_FRM_PACKED} at 16")];
        assert_eq!(cap.order, want);
        let mut buf = FSYNC.repeat(3);
        buf.extend_from_slice(&[0x55; 4]);
        let mut cap = Capture::default();
        assert_eq!(d.data_in(OCSD_OP_DATA, 64, &buf, &mut cap).0, OCSD_RESP_FATAL_INVALID_DATA);
        assert_eq!(cap.order, [format!("raw {OCSD_FRM_FSYNC} at 64")]);
        assert!(cap.log.0[0].ends_with("TrcIdx=64; Incorrect FSYNC frame reset pattern"), "{:?}", cap.log.0);
    }

    /// A consumer that records every hand-over with its tail, and answers
    /// WAIT (part of the data used) on a pseudo-random few; with a raw
    /// monitor (`monitor`) that nothing is sent to (no raw flag set), the
    /// deformatter takes the byte-by-byte path for every frame.
    struct Recorder {
        monitor: bool,
        rnd: Box<dyn FnMut() -> u64>,
        got: Vec<(u8, u32, Vec<u8>, Vec<u8>)>,
    }
    impl DeformatterOut for Recorder {
        fn id_attached(&self, id: u8) -> bool {
            id != 5
        }
        fn id_data(&mut self, id: u8, index: u32, data: &[u8], tail: &[u8]) -> (ocsd_datapath_resp_t, usize) {
            let r = (self.rnd)();
            let used = if r.is_multiple_of(13) && !data.is_empty() { (r >> 8) as usize % data.len() } else { data.len() };
            self.got.push((id, index, data[..used].to_vec(), tail.to_vec()));
            (if used < data.len() || r.is_multiple_of(29) { OCSD_RESP_WAIT } else { OCSD_RESP_CONT }, used)
        }
        fn id_op_all(&mut self, _: ocsd_datapath_op_t, _: u32) -> ocsd_datapath_resp_t {
            OCSD_RESP_CONT
        }
        fn raw_frame(&mut self, _: ocsd_datapath_op_t, _: u32, _: ocsd_rawframe_elem_t, _: &[u8], _: u8) {
            panic!("no raw output asked for");
        }
        fn has_raw_monitor(&self) -> bool {
            self.monitor
        }
        fn logger(&mut self) -> &mut dyn ErrorLog {
            unreachable!("no error expected")
        }
    }

    /// Frames without an ID byte go out by the fast path exactly as the
    /// byte-by-byte path sends them: the same hand-overs (indexes, bytes,
    /// tails), the same answers to WAITs, the same statistics and image
    /// of OpenCSD's frame memory; among frames with ID changes, unknown
    /// and unattached IDs and FSYNC resets.
    #[test]
    fn frames_of_one_id_go_out_as_byte_by_byte() {
        let mut rnd = crate::common::xorshift64(4242);
        let mut trace = Vec::new();
        for _ in 0..3000 {
            let mut f = [0u8; FRAME];
            for b in f.iter_mut() {
                *b = rnd() as u8;
            }
            match rnd() % 8 {
                // an FSYNC reset
                0 if rnd().is_multiple_of(16) => {
                    for _ in 0..4 {
                        trace.extend_from_slice(&FSYNC);
                    }
                    continue;
                }
                // ID changes (to IDs 1..6; 5 is not attached)
                0 | 1 => {
                    for i in 0..7 {
                        if f[2 * i] & 1 != 0 {
                            f[2 * i] = ((1 + rnd() % 6) as u8) << 1 | 1;
                        }
                    }
                }
                // no ID byte
                _ => {
                    for i in 0..8 {
                        f[2 * i] &= !1;
                    }
                }
            }
            trace.extend_from_slice(&f);
        }
        let run = |monitor: bool| {
            let mut d = FrameDeformatter::new();
            assert_eq!(d.configure(OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_RESET_ON_4X_FSYNC, &mut NullLog), OCSD_OK);
            let mut out = Recorder { monitor, rnd: Box::new(crate::common::xorshift64(7)), got: Vec::new() };
            let mut answers = Vec::new();
            let mut at = 0usize;
            while at < trace.len() {
                let end = trace.len().min(at + 16 * (1 + (at / 16) % 37));
                let (mut r, used) = d.data_in(OCSD_OP_DATA, at as u32, &trace[at..end], &mut out);
                answers.push((r, used));
                while r == OCSD_RESP_WAIT {
                    r = d.data_in(OCSD_OP_FLUSH, 0, &[], &mut out).0;
                    answers.push((r, 0));
                }
                at += used;
            }
            let s = d.stats.get();
            (out.got, answers, [s.valid_id_bytes, s.no_id_bytes, s.reserved_id_bytes, s.unknown_id_bytes, s.frame_bytes], d.out_mem.to_vec())
        };
        let (fast, slow) = (run(false), run(true));
        assert!(fast.0.len() > 3000, "{} hand-overs", fast.0.len());
        assert_eq!(fast.0, slow.0);
        assert_eq!(fast.1, slow.1);
        assert_eq!(fast.2, slow.2);
        assert_eq!(fast.3, slow.3);
    }
}
