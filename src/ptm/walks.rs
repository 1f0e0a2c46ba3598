//! The PTM decoder's cache of instruction walks. A walk from an address to
//! the next waypoint depends only on its start address, its instruction
//! set and the bytes it reads, when the decoder's configuration is fixed
//! and no Thumb IT-block state is carried from instruction to instruction
//! (PTM does not track IT blocks): a walk from an address seen before,
//! whose bytes carry the same memory token
//! ([`crate::common::MemRun::token`]), gives the same instructions and
//! stops at the same waypoint. The decoder then takes the walk's result
//! from here instead of reading and decoding each instruction again.
#![forbid(unsafe_code)]

use crate::abi::*;

/// One walk: from `start` in `isa`, over bytes carrying `token`, `num`
/// instructions to the waypoint, reading `span` bytes from `start`; `info`
/// the instruction state the walk left (the waypoint decoded, its address
/// advanced past it).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Walk {
    pub start: ocsd_vaddr_t,
    pub token: u64,
    pub isa: ocsd_isa,
    pub num: u32,
    pub span: u32,
    pub info: ocsd_instr_info,
}

/// Walks by start address, direct mapped: made on first use, small, and
/// grown while walks are kept four times as often as it has slots (a decoder
/// that follows little code costs little memory).
#[derive(Debug, Default)]
pub(super) struct Walks {
    slots: Vec<Walk>,
    /// Walks kept since the size last changed.
    puts: usize,
}

/// Slots at first, and at most (powers of two): 5 KiB and 80 KiB.
const FIRST_SLOTS: usize = 64;
const MAX_SLOTS: usize = 1024;

impl Walks {
    #[inline]
    fn slot(start: ocsd_vaddr_t, isa: ocsd_isa, slots: usize) -> usize {
        ((start >> 1) ^ (start >> 11) ^ (isa as u64).wrapping_mul(0x9e37)) as usize & (slots - 1)
    }

    /// The walk from `start` in `isa` over bytes carrying `token` (never
    /// one of token 0).
    #[inline]
    pub fn get(&self, start: ocsd_vaddr_t, isa: ocsd_isa, token: u64) -> Option<&Walk> {
        if self.slots.is_empty() {
            return None;
        }
        let w = &self.slots[Self::slot(start, isa, self.slots.len())];
        (token != 0 && w.token == token && w.start == start && w.isa == isa).then_some(w)
    }

    /// Keep `w` (in place of the walk in its slot; never one of no
    /// instruction).
    pub fn put(&mut self, w: Walk) {
        if w.token == 0 || w.num == 0 {
            return;
        }
        if self.slots.is_empty() {
            self.slots = vec![Walk::default(); FIRST_SLOTS];
        } else if self.puts > 4 * self.slots.len() && self.slots.len() < MAX_SLOTS {
            self.grow();
        }
        self.puts += 1;
        let n = self.slots.len();
        self.slots[Self::slot(w.start, w.isa, n)] = w;
    }

    /// Four times the slots, the walks kept moved to theirs.
    fn grow(&mut self) {
        let n = 4 * self.slots.len();
        let old = std::mem::replace(&mut self.slots, vec![Walk::default(); n]);
        for w in old.into_iter().filter(|w| w.token != 0) {
            self.slots[Self::slot(w.start, w.isa, n)] = w;
        }
        self.puts = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(start: u64, token: u64) -> Walk {
        Walk { start, token, isa: ocsd_isa_thumb2, num: 3, span: 8, ..Default::default() }
    }

    #[test]
    fn a_walk_is_found_only_by_its_start_isa_and_token() {
        let mut c = Walks::default();
        assert!(c.get(0x8000, ocsd_isa_thumb2, 5).is_none());
        c.put(walk(0x8000, 5));
        assert_eq!(c.get(0x8000, ocsd_isa_thumb2, 5).map(|w| w.num), Some(3));
        assert!(c.get(0x8000, ocsd_isa_thumb2, 6).is_none());
        assert!(c.get(0x8000, ocsd_isa_arm, 5).is_none());
        assert!(c.get(0x8002, ocsd_isa_thumb2, 5).is_none());
        // token 0 promises nothing: never kept, never found
        c.put(walk(0x9000, 0));
        assert!(c.get(0x9000, ocsd_isa_thumb2, 0).is_none());
    }

    #[test]
    fn a_walk_put_in_a_taken_slot_replaces_the_one_there() {
        let mut c = Walks::default();
        c.put(walk(0x8000, 5));
        // same slot at any size: the start differs by a multiple of the
        // largest slot count in both hashed parts
        let other = 0x8000 + ((MAX_SLOTS as u64) << 12);
        assert_eq!(Walks::slot(0x8000, ocsd_isa_thumb2, FIRST_SLOTS), Walks::slot(other, ocsd_isa_thumb2, FIRST_SLOTS));
        c.put(walk(other, 5));
        assert!(c.get(0x8000, ocsd_isa_thumb2, 5).is_none());
        assert!(c.get(other, ocsd_isa_thumb2, 5).is_some());
    }

    #[test]
    fn growing_keeps_the_walks() {
        let mut c = Walks::default();
        let starts: Vec<u64> = (0..40).map(|i| 0x8000 + 6 * i).collect();
        // (kept again and again: more than four times the first slots)
        for _ in 0..8 {
            for &s in &starts {
                c.put(walk(s, 5));
            }
        }
        assert!(c.slots.len() > FIRST_SLOTS);
        let kept = starts.iter().filter(|&&s| c.get(s, ocsd_isa_thumb2, 5).is_some()).count();
        // (direct mapped: a few may share a slot)
        assert!(kept >= 36, "{kept} of 40 kept");
    }
}
