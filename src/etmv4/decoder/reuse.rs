//! Reuse of a decoder's caches by a later decoder of the same trace
//! source, for parallel decode (see [`crate::dcd_tree::parallel`]): each
//! worker thread hands the decoded-block cache of one segment's decoder to
//! the next segment's decoder of the same trace ID, so that a segment does
//! not start with a cold cache.
//!
//! The cache only changes how fast, not what, a decoder decodes: a block
//! is replayed only when the memory it was decoded from holds the same
//! bytes (see [`super::follow::BlockCache`]), and a decoder of the same
//! configuration would decode those bytes to the same block. So a
//! decoder given another's cache produces exactly the output of a fresh
//! one. A serial decode uses one cache for the whole of a trace ID's trace
//! in the same way.

use super::follow::BlockCache;
use super::EtmV4IPktDecoder;

/// The caches taken from a decoder (see [`EtmV4IPktDecoder::take_caches`]).
pub struct DecoderCaches {
    blocks: BlockCache,
}

impl EtmV4IPktDecoder {
    /// Take the decoder's caches, leaving it empty ones.
    pub(crate) fn take_caches(&mut self) -> DecoderCaches {
        DecoderCaches { blocks: std::mem::replace(&mut self.blocks, BlockCache::new()) }
    }

    /// Use `caches`, taken from a decoder of the same configuration, in
    /// place of this decoder's.
    pub(crate) fn adopt_caches(&mut self, caches: DecoderCaches) {
        self.blocks = caches.blocks;
    }
}

impl EtmV4IPktDecoder {
    /// Put the decoder in the state of a new decoder of its configuration
    /// (with its name, operation flags and environment settings), keeping
    /// its caches: a decoder used again for another stretch of trace.
    pub(crate) fn renew(&mut self) {
        let mut fresh = EtmV4IPktDecoder::with_env(0, self.cfg, self.range_limit, self.env_aa64_bad_opcode);
        std::mem::swap(&mut fresh.name, &mut self.name);
        fresh.op_flags = self.op_flags;
        fresh.aa64_chk = self.aa64_chk;
        std::mem::swap(&mut fresh.blocks, &mut self.blocks);
        *self = fresh;
    }
}
