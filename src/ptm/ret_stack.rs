//! Return address stack for PTM decode (OpenCSD's `TrcAddrReturnStack`):
//! 16 entries, the oldest overwritten when full; popping more than was
//! pushed marks an overflow.

use crate::abi::*;

#[derive(Debug, Clone)]
pub struct RetStack {
    active: bool,
    head: usize,
    num: i32,
    stack: [(ocsd_vaddr_t, ocsd_isa); 16],
}

impl Default for RetStack {
    fn default() -> Self {
        RetStack { active: false, head: 0, num: 0, stack: [(0, ocsd_isa_arm); 16] }
    }
}

impl RetStack {
    pub fn set_active(&mut self, a: bool) {
        self.active = a;
    }
    pub fn is_active(&self) -> bool {
        self.active
    }
    pub fn push(&mut self, addr: ocsd_vaddr_t, isa: ocsd_isa) {
        if self.active {
            self.head = (self.head + 1) & 0xF;
            self.stack[self.head] = (addr, isa);
            self.num = (self.num + 1).min(16);
        }
    }
    /// Pop an address; `isa` is updated only when an entry was there.
    /// Returns `u64::MAX` when the stack is empty (then [`overflow`]).
    ///
    /// [`overflow`]: RetStack::overflow
    pub fn pop(&mut self, isa: &mut ocsd_isa) -> ocsd_vaddr_t {
        let mut addr = !0u64;
        if self.active {
            if self.num > 0 {
                let (a, i) = self.stack[self.head];
                addr = a;
                *isa = i;
                self.head = (self.head + 15) & 0xF;
            }
            self.num -= 1;
        }
        addr
    }
    pub fn flush(&mut self) {
        self.num = 0;
    }
    pub fn overflow(&self) -> bool {
        self.num < 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_pop_overflow() {
        let mut s = RetStack::default();
        s.set_active(true);
        let mut isa = ocsd_isa_arm;
        for i in 0..20u64 {
            s.push(i * 4, ocsd_isa_thumb2);
        }
        for i in (4..20u64).rev() {
            assert_eq!(s.pop(&mut isa), i * 4);
            assert_eq!(isa, ocsd_isa_thumb2);
        }
        assert!(!s.overflow());
        assert_eq!(s.pop(&mut isa), !0u64);
        assert!(s.overflow());
        s.flush();
        assert!(!s.overflow());
    }
}
