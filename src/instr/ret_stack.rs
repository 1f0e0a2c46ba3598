//! Address return stack (OpenCSD's `TrcAddrReturnStack`), used by the
//! ETMv4/ETE and PTM decoders when return stack tracing is enabled.
//!
//! A 16-entry circular stack of (return address, ISA). Behaviour matches
//! OpenCSD 1.8.0 exactly, including its quirks:
//! - pushes beyond 16 entries overwrite the oldest entry;
//! - popping an empty stack returns `u64::MAX` (`(ocsd_vaddr_t)-1`), leaves
//!   the ISA unchanged and drives the entry count negative, which is what
//!   [`overflow`](TrcAddrReturnStack::overflow) reports; a later push adds
//!   one to the (possibly negative) count;
//! - push, pop and flush only act (and clear "pop pending") when the stack
//!   is active, except flush which always resets.

use crate::abi::{ocsd_isa, ocsd_isa_arm, ocsd_vaddr_t};

const DEPTH: usize = 16;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Entry {
    addr: ocsd_vaddr_t,
    isa: ocsd_isa,
}

/// The return stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrcAddrReturnStack {
    active: bool,
    /// Set by the decoder when a pop may be needed depending on the next
    /// packet (ETMv4).
    pop_pending: bool,
    head_idx: usize,
    num_entries: i32,
    stack: [Entry; DEPTH],
}

impl Default for TrcAddrReturnStack {
    fn default() -> Self {
        Self::new()
    }
}

impl TrcAddrReturnStack {
    /// An inactive, empty stack.
    pub const fn new() -> Self {
        Self {
            active: false,
            pop_pending: false,
            head_idx: 0,
            num_entries: 0,
            stack: [Entry {
                addr: 0,
                isa: ocsd_isa_arm,
            }; DEPTH],
        }
    }

    pub fn set_active(&mut self, active: bool) {
        self.active = active;
    }

    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Push a return address (only when active). Clears pop pending.
    pub fn push(&mut self, addr: ocsd_vaddr_t, isa: ocsd_isa) {
        if self.active {
            self.head_idx = (self.head_idx + 1) % DEPTH;
            self.stack[self.head_idx] = Entry { addr, isa };
            self.num_entries = (self.num_entries + 1).min(DEPTH as i32);
            self.pop_pending = false;
        }
    }

    /// Pop a return address (only when active; otherwise returns
    /// `u64::MAX` and leaves `isa` alone). On an empty stack returns
    /// `u64::MAX`, leaves `isa` alone and marks the stack overflowed.
    /// Clears pop pending.
    pub fn pop(&mut self, isa: &mut ocsd_isa) -> ocsd_vaddr_t {
        let mut addr = ocsd_vaddr_t::MAX;
        if self.active {
            if self.num_entries > 0 {
                let e = self.stack[self.head_idx];
                addr = e.addr;
                *isa = e.isa;
                self.head_idx = (self.head_idx + DEPTH - 1) % DEPTH;
            }
            // Saturate far below zero rather than wrap (C's int would need
            // 2^31 pops to overflow; the sign is all that is observable).
            self.num_entries = self.num_entries.saturating_sub(1);
            self.pop_pending = false;
        }
        addr
    }

    /// Empty the stack (whether active or not) and clear pop pending.
    pub fn flush(&mut self) {
        self.num_entries = 0;
        self.pop_pending = false;
    }

    /// True after a pop from an empty stack (until enough pushes or a flush).
    pub fn overflow(&self) -> bool {
        self.num_entries < 0
    }

    /// Mark that a pop may be needed (only when active).
    pub fn set_pop_pending(&mut self) {
        if self.active {
            self.pop_pending = true;
        }
    }

    pub fn clear_pop_pending(&mut self) {
        self.pop_pending = false;
    }

    pub fn pop_pending(&self) -> bool {
        self.pop_pending
    }

    /// Number of valid entries (negative after popping an empty stack).
    pub fn num_entries(&self) -> i32 {
        self.num_entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{ocsd_isa_aarch64, ocsd_isa_thumb2};

    fn active() -> TrcAddrReturnStack {
        let mut s = TrcAddrReturnStack::new();
        s.set_active(true);
        s
    }

    #[test]
    fn inactive_stack_ignores_everything() {
        let mut s = TrcAddrReturnStack::new();
        assert!(!s.is_active());
        s.push(0x1000, ocsd_isa_aarch64);
        s.set_pop_pending();
        assert!(!s.pop_pending());
        let mut isa = ocsd_isa_thumb2;
        assert_eq!(s.pop(&mut isa), u64::MAX);
        assert_eq!(isa, ocsd_isa_thumb2);
        assert!(!s.overflow());
        assert_eq!(s.num_entries(), 0);
    }

    #[test]
    fn lifo_with_isa() {
        let mut s = active();
        s.push(0x1000, ocsd_isa_aarch64);
        s.push(0x2002, ocsd_isa_thumb2);
        let mut isa = ocsd_isa_arm;
        assert_eq!(s.pop(&mut isa), 0x2002);
        assert_eq!(isa, ocsd_isa_thumb2);
        assert_eq!(s.pop(&mut isa), 0x1000);
        assert_eq!(isa, ocsd_isa_aarch64);
        assert!(!s.overflow());
    }

    #[test]
    fn underflow_sets_overflow_and_push_recovers_count() {
        let mut s = active();
        let mut isa = ocsd_isa_aarch64;
        assert_eq!(s.pop(&mut isa), u64::MAX);
        assert_eq!(isa, ocsd_isa_aarch64);
        assert!(s.overflow());
        assert_eq!(s.pop(&mut isa), u64::MAX);
        assert_eq!(s.num_entries(), -2);
        // As in OpenCSD, pushes just count up from the negative value.
        s.push(0x10, ocsd_isa_arm);
        assert!(s.overflow());
        s.push(0x20, ocsd_isa_arm);
        assert!(!s.overflow());
        assert_eq!(s.num_entries(), 0);
        // ... so the pushed entries cannot be popped.
        assert_eq!(s.pop(&mut isa), u64::MAX);
        s.flush();
        assert!(!s.overflow());
    }

    #[test]
    fn wraps_at_16_entries() {
        let mut s = active();
        for i in 0..20u64 {
            s.push(0x100 + i, ocsd_isa_aarch64);
        }
        assert_eq!(s.num_entries(), 16);
        let mut isa = ocsd_isa_arm;
        for i in (4..20u64).rev() {
            assert_eq!(s.pop(&mut isa), 0x100 + i);
        }
        assert!(!s.overflow());
        assert_eq!(s.pop(&mut isa), u64::MAX);
        assert!(s.overflow());
    }

    #[test]
    fn pop_pending_cleared_by_push_pop_flush() {
        let mut s = active();
        s.set_pop_pending();
        assert!(s.pop_pending());
        s.push(1, ocsd_isa_arm);
        assert!(!s.pop_pending());
        s.set_pop_pending();
        let mut isa = ocsd_isa_arm;
        s.pop(&mut isa);
        assert!(!s.pop_pending());
        s.set_pop_pending();
        s.flush();
        assert!(!s.pop_pending());
        s.set_pop_pending();
        s.clear_pop_pending();
        assert!(!s.pop_pending());
    }

    #[test]
    fn flush_empties() {
        let mut s = active();
        s.push(1, ocsd_isa_arm);
        s.push(2, ocsd_isa_arm);
        s.flush();
        let mut isa = ocsd_isa_arm;
        assert_eq!(s.pop(&mut isa), u64::MAX);
        assert!(s.overflow());
    }
}
