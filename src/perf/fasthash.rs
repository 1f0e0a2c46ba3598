//! A fast hash for the maps of the perf reader (thread IDs, paths,
//! address pairs): an FxHash-style multiply-rotate over 8-byte words.
//! SipHash guards against chosen keys; a recording's keys can only make
//! its own lookups slower, and the maps are looked up per sample.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

const K: u64 = 0x517c_c1b7_2722_0a95;

impl FastHasher {
    #[inline]
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            self.add(u64::from_le_bytes(b));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b) ^ (rest.len() as u64) << 59);
        }
    }
    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.add(v as u64);
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.add(v as u64);
    }
    #[inline]
    fn write_i32(&mut self, v: i32) {
        self.add(v as u32 as u64);
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }
    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }
}

/// A `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_work_and_keys_spread() {
        let mut m: FastMap<String, usize> = FastMap::default();
        for i in 0..1000 {
            m.insert(format!("/lib/mod{}.ko", i), i);
        }
        assert!((0..1000).all(|i| m[&format!("/lib/mod{}.ko", i)] == i));
        let mut p: FastMap<(u64, u64), u64> = FastMap::default();
        *p.entry((0x1000, 0x1004)).or_default() += 1;
        *p.entry((0x1000, 0x1004)).or_default() += 1;
        assert_eq!(p[&(0x1000, 0x1004)], 2);
        // the top bits (hashbrown's control bytes) differ for nearby keys
        let h = |v: u64| {
            let mut s = FastHasher::default();
            s.write_u64(v);
            s.finish() >> 57
        };
        let tops: std::collections::HashSet<u64> = (0..64u64).map(|v| h(0x1000 + 4 * v)).collect();
        assert!(tops.len() > 16, "{}", tops.len());
    }
}
