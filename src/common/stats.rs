//! Decode statistics that can be read while a decode runs.
//!
//! OpenCSD keeps each packet processor's statistics in a block of its own
//! (`ocsd_decode_stats_t`) and hands the client a pointer to it: the
//! client may read it, or ask for it again, at any time, also from inside
//! the decode's own callbacks, and sees the counts as they are at that
//! moment. The counts here are kept the same way: in a block shared
//! between the component that counts (packet processor, decode stack,
//! frame deformatter) and whoever reads them, laid out exactly as the C
//! struct, so that the C API can hand out a pointer to the block itself.
//!
//! Each counter has one writer, the thread decoding; the counters are
//! atomics only so that the block can be shared. An increment is a relaxed
//! load and store (plain moves), not a read-modify-write.
#![forbid(unsafe_code)]

use std::mem::{align_of, offset_of, size_of};
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crate::abi::{ocsd_decode_stats_t, ocsd_demux_stats_t, OCSD_STATS_REVISION, OCSD_VER_NUM};

/// `ocsd_demux_stats_t`, counter by counter.
#[repr(C)]
#[derive(Debug, Default)]
pub struct DemuxBlock {
    valid_id_bytes: AtomicU64,
    no_id_bytes: AtomicU64,
    reserved_id_bytes: AtomicU64,
    unknown_id_bytes: AtomicU64,
    frame_bytes: AtomicU64,
}

/// `ocsd_decode_stats_t`, counter by counter.
#[repr(C)]
#[derive(Debug)]
pub struct StatsBlock {
    version: AtomicU32,
    revision: AtomicU16,
    channel_total: AtomicU64,
    channel_unsynced: AtomicU64,
    bad_header_errs: AtomicU32,
    bad_sequence_errs: AtomicU32,
    demux: DemuxBlock,
}

// The blocks are the C structs: a pointer to one is a pointer to the other.
const _: () = {
    assert!(size_of::<DemuxBlock>() == size_of::<ocsd_demux_stats_t>());
    assert!(align_of::<DemuxBlock>() == align_of::<ocsd_demux_stats_t>());
    assert!(offset_of!(DemuxBlock, valid_id_bytes) == offset_of!(ocsd_demux_stats_t, valid_id_bytes));
    assert!(offset_of!(DemuxBlock, no_id_bytes) == offset_of!(ocsd_demux_stats_t, no_id_bytes));
    assert!(offset_of!(DemuxBlock, reserved_id_bytes) == offset_of!(ocsd_demux_stats_t, reserved_id_bytes));
    assert!(offset_of!(DemuxBlock, unknown_id_bytes) == offset_of!(ocsd_demux_stats_t, unknown_id_bytes));
    assert!(offset_of!(DemuxBlock, frame_bytes) == offset_of!(ocsd_demux_stats_t, frame_bytes));
    assert!(size_of::<StatsBlock>() == size_of::<ocsd_decode_stats_t>());
    assert!(align_of::<StatsBlock>() == align_of::<ocsd_decode_stats_t>());
    assert!(offset_of!(StatsBlock, version) == offset_of!(ocsd_decode_stats_t, version));
    assert!(offset_of!(StatsBlock, revision) == offset_of!(ocsd_decode_stats_t, revision));
    assert!(offset_of!(StatsBlock, channel_total) == offset_of!(ocsd_decode_stats_t, channel_total));
    assert!(offset_of!(StatsBlock, channel_unsynced) == offset_of!(ocsd_decode_stats_t, channel_unsynced));
    assert!(offset_of!(StatsBlock, bad_header_errs) == offset_of!(ocsd_decode_stats_t, bad_header_errs));
    assert!(offset_of!(StatsBlock, bad_sequence_errs) == offset_of!(ocsd_decode_stats_t, bad_sequence_errs));
    assert!(offset_of!(StatsBlock, demux) == offset_of!(ocsd_decode_stats_t, demux));
};

#[inline(always)]
fn add64(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
}

#[inline(always)]
fn add32(c: &AtomicU32, n: u32) {
    c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
}

impl DemuxBlock {
    fn get(&self) -> ocsd_demux_stats_t {
        ocsd_demux_stats_t {
            frame_bytes: self.frame_bytes.load(Relaxed),
            no_id_bytes: self.no_id_bytes.load(Relaxed),
            valid_id_bytes: self.valid_id_bytes.load(Relaxed),
            unknown_id_bytes: self.unknown_id_bytes.load(Relaxed),
            reserved_id_bytes: self.reserved_id_bytes.load(Relaxed),
        }
    }

    fn set(&self, d: &ocsd_demux_stats_t) {
        self.frame_bytes.store(d.frame_bytes, Relaxed);
        self.no_id_bytes.store(d.no_id_bytes, Relaxed);
        self.valid_id_bytes.store(d.valid_id_bytes, Relaxed);
        self.unknown_id_bytes.store(d.unknown_id_bytes, Relaxed);
        self.reserved_id_bytes.store(d.reserved_id_bytes, Relaxed);
    }
}

/// A packet processor's statistics, as the stack that holds it, the
/// processor and the C API share them.
#[derive(Clone, Debug)]
pub struct LiveStats(Arc<StatsBlock>);

impl Default for LiveStats {
    fn default() -> Self {
        Self::new()
    }
}

impl LiveStats {
    /// Zero counts, OpenCSD's version and statistics revision.
    pub fn new() -> Self {
        LiveStats(Arc::new(StatsBlock {
            version: AtomicU32::new(OCSD_VER_NUM),
            revision: AtomicU16::new(OCSD_STATS_REVISION),
            channel_total: AtomicU64::new(0),
            channel_unsynced: AtomicU64::new(0),
            bad_header_errs: AtomicU32::new(0),
            bad_sequence_errs: AtomicU32::new(0),
            demux: DemuxBlock::default(),
        }))
    }

    #[inline]
    pub fn add_total(&self, n: u64) {
        add64(&self.0.channel_total, n);
    }
    #[inline]
    pub fn add_unsynced(&self, n: u64) {
        add64(&self.0.channel_unsynced, n);
    }
    #[inline]
    pub fn add_bad_header(&self) {
        add32(&self.0.bad_header_errs, 1);
    }
    #[inline]
    pub fn add_bad_sequence(&self) {
        add32(&self.0.bad_sequence_errs, 1);
    }

    /// Bytes dropped while unsynchronised.
    pub fn unsynced(&self) -> u64 {
        self.0.channel_unsynced.load(Relaxed)
    }

    /// (bad header errors, bad sequence errors)
    pub fn errors(&self) -> (u32, u32) {
        (self.0.bad_header_errs.load(Relaxed), self.0.bad_sequence_errs.load(Relaxed))
    }

    /// OpenCSD's `resetStats`: the counts and the first three demux counts
    /// to zero (the unknown and reserved ID counts are left as they are,
    /// until the demux part is next written).
    pub fn reset(&self) {
        let b = &*self.0;
        b.version.store(OCSD_VER_NUM, Relaxed);
        b.revision.store(OCSD_STATS_REVISION, Relaxed);
        b.channel_total.store(0, Relaxed);
        b.channel_unsynced.store(0, Relaxed);
        b.bad_header_errs.store(0, Relaxed);
        b.bad_sequence_errs.store(0, Relaxed);
        b.demux.frame_bytes.store(0, Relaxed);
        b.demux.no_id_bytes.store(0, Relaxed);
        b.demux.valid_id_bytes.store(0, Relaxed);
    }

    /// Write the tree's demux counts into the block (as OpenCSD does each
    /// time the block is asked for).
    pub fn set_demux(&self, d: &ocsd_demux_stats_t) {
        self.0.demux.set(d);
    }

    /// The block's values now.
    pub fn snapshot(&self) -> ocsd_decode_stats_t {
        let b = &*self.0;
        ocsd_decode_stats_t {
            version: b.version.load(Relaxed),
            revision: b.revision.load(Relaxed),
            channel_total: b.channel_total.load(Relaxed),
            channel_unsynced: b.channel_unsynced.load(Relaxed),
            bad_header_errs: b.bad_header_errs.load(Relaxed),
            bad_sequence_errs: b.bad_sequence_errs.load(Relaxed),
            demux: b.demux.get(),
        }
    }

    /// Whether `other` counts into the same block.
    pub fn same_block(&self, other: &LiveStats) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The block, as the C struct (valid while a clone of this lives).
    pub fn as_c_ptr(&self) -> *const ocsd_decode_stats_t {
        Arc::as_ptr(&self.0).cast()
    }
}

/// A frame deformatter's demultiplexer statistics, shared with the C API.
#[derive(Clone, Debug, Default)]
pub struct LiveDemux(Arc<DemuxBlock>);

impl LiveDemux {
    pub fn new() -> Self {
        Self::default()
    }
    #[inline]
    pub fn add_frame(&self, n: u64) {
        add64(&self.0.frame_bytes, n);
    }
    #[inline]
    pub fn add_no_id(&self, n: u64) {
        add64(&self.0.no_id_bytes, n);
    }
    #[inline]
    pub fn add_valid_id(&self, n: u64) {
        add64(&self.0.valid_id_bytes, n);
    }
    #[inline]
    pub fn add_unknown_id(&self, n: u64) {
        add64(&self.0.unknown_id_bytes, n);
    }
    #[inline]
    pub fn add_reserved_id(&self, n: u64) {
        add64(&self.0.reserved_id_bytes, n);
    }
    /// The counts now.
    pub fn get(&self) -> ocsd_demux_stats_t {
        self.0.get()
    }
    /// All counts to zero.
    pub fn reset(&self) {
        self.0.set(&ocsd_demux_stats_t::default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_reads_as_the_c_struct() {
        let s = LiveStats::new();
        s.add_total(100);
        s.add_unsynced(7);
        s.add_bad_header();
        s.add_bad_sequence();
        s.add_bad_sequence();
        s.set_demux(&ocsd_demux_stats_t { frame_bytes: 1, no_id_bytes: 2, valid_id_bytes: 3, unknown_id_bytes: 4, reserved_id_bytes: 5 });
        let snap = s.snapshot();
        assert_eq!((snap.version, snap.revision), (OCSD_VER_NUM, OCSD_STATS_REVISION));
        assert_eq!((snap.channel_total, snap.channel_unsynced, snap.bad_header_errs, snap.bad_sequence_errs), (100, 7, 1, 2));
        assert_eq!((snap.demux.frame_bytes, snap.demux.reserved_id_bytes), (1, 5));
        // a clone counts into the same block
        s.clone().add_total(1);
        assert_eq!(s.snapshot().channel_total, 101);
        s.reset();
        let r = s.snapshot();
        assert_eq!((r.channel_total, r.channel_unsynced, r.bad_header_errs, r.bad_sequence_errs), (0, 0, 0, 0));
        // OpenCSD's resetStats leaves the unknown and reserved ID counts
        assert_eq!((r.demux.frame_bytes, r.demux.no_id_bytes, r.demux.valid_id_bytes), (0, 0, 0));
        assert_eq!((r.demux.unknown_id_bytes, r.demux.reserved_id_bytes), (4, 5));
    }

    #[test]
    fn demux_counts() {
        let d = LiveDemux::new();
        d.add_frame(16);
        d.add_no_id(2);
        d.add_valid_id(10);
        d.add_unknown_id(3);
        d.add_reserved_id(1);
        let g = d.clone().get();
        assert_eq!((g.frame_bytes, g.no_id_bytes, g.valid_id_bytes, g.unknown_id_bytes, g.reserved_id_bytes), (16, 2, 10, 3, 1));
        d.reset();
        assert_eq!(d.get().frame_bytes, 0);
    }
}
