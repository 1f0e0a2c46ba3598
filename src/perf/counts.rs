//! Event counts per key for the profiles, with the keys counted most
//! recently in a small direct-mapped table in front of a hash map.
//!
//! Instruction trace repeats itself: a loop gives the same range, the same
//! branch, thousands of times in a row. Counting each in a hash map costs a
//! hash and a probe of a table too large for the first-level cache, for
//! every range of the trace. Here a key is counted in its slot of a table
//! of [`SLOTS`] entries (one multiply to find it); a key found in another
//! key's slot sends that key's count to the hash map and takes its place.
//! The counts are the same as counting every event in the map.

use std::hash::{BuildHasher, Hash};

use rustc_hash::{FxBuildHasher, FxHashMap};

/// Entries of the direct-mapped table (a power of two).
const SLOTS: usize = 4096;

pub struct Counts<K> {
    /// The keys counted last, each in the slot its hash picks, with the
    /// count not yet in `map`.
    slots: Box<[Option<(K, u64)>]>,
    map: FxHashMap<K, u64>,
}

impl<K: Copy + Eq + Hash> Default for Counts<K> {
    fn default() -> Self {
        Counts { slots: vec![None; SLOTS].into_boxed_slice(), map: FxHashMap::default() }
    }
}

impl<K: Copy + Eq + Hash> Counts<K> {
    #[inline]
    fn slot(k: &K) -> usize {
        // the hash's high bits (FxHash mixes into them)
        (FxBuildHasher.hash_one(k) >> (u64::BITS - SLOTS.trailing_zeros())) as usize
    }

    /// Count `n` more events of `k` (saturating).
    #[inline]
    pub fn add(&mut self, k: K, n: u64) {
        let i = Self::slot(&k);
        match &mut self.slots[i] {
            Some((sk, c)) if *sk == k => *c = c.saturating_add(n),
            s => {
                if let Some((old, c)) = s.replace((k, n)) {
                    Self::spill(&mut self.map, old, c);
                }
            }
        }
    }

    #[inline(never)]
    fn spill(map: &mut FxHashMap<K, u64>, k: K, n: u64) {
        let c = map.entry(k).or_default();
        *c = c.saturating_add(n);
    }

    /// Every key counted with its count, each key once.
    pub fn into_map(mut self) -> FxHashMap<K, u64> {
        for (k, n) in self.slots.iter_mut().filter_map(Option::take) {
            Self::spill(&mut self.map, k, n);
        }
        self.map
    }

    /// Every key counted with a part of its count: a key may come twice,
    /// its parts adding up to its count.
    pub fn parts(&self) -> impl Iterator<Item = (&K, u64)> {
        self.map.iter().map(|(k, n)| (k, *n)).chain(self.slots.iter().flatten().map(|(k, n)| (k, *n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeded counts over a few keys and over many (slots shared, keys
    /// moved to the map and back): the same as counting in a map.
    #[test]
    fn counts_equal_a_plain_map() {
        let mut rnd = crate::common::xorshift64(0x5eed_c0de);
        for keys in [3u64, 100, 50_000] {
            let mut c: Counts<(u64, u64)> = Counts::default();
            let mut want: FxHashMap<(u64, u64), u64> = FxHashMap::default();
            for _ in 0..200_000 {
                let k = (rnd() % keys, rnd() % 2);
                let n = rnd() % 3;
                c.add(k, n);
                *want.entry(k).or_default() += n;
            }
            let mut parts: FxHashMap<(u64, u64), u64> = FxHashMap::default();
            for (k, n) in c.parts() {
                *parts.entry(*k).or_default() += n;
            }
            assert_eq!(parts, want, "{keys} keys, parts");
            assert_eq!(c.into_map(), want, "{keys} keys");
        }
    }

    #[test]
    fn counts_saturate() {
        let mut c: Counts<u32> = Counts::default();
        c.add(7, u64::MAX - 1);
        c.add(7, 5);
        assert_eq!(c.into_map()[&7], u64::MAX);
    }
}
