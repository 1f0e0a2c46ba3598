//! The ETMv4 / ETE decoder's P0 element stack (OpenCSD's `EtmV4P0Stack`
//! and `TrcStackElem*`): elements decoded from packets wait here until
//! speculation is resolved (commit, cancel, mispredict, discard).
//!
//! New elements go on the front; the oldest is at the back. Elements are
//! plain values in a `VecDeque` whose storage is reused, so steady-state
//! decode allocates nothing.

use std::collections::VecDeque;

use super::types::*;
use crate::abi::gen_elem::{trace_marker_payload_t, trace_sw_ite_t};
use crate::abi::*;

/// Kind of a stacked element (`p0_elem_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum P0Kind {
    Unknown,
    Atom,
    Addr,
    Ctxt,
    TrcOn,
    Excep,
    ExcepRet,
    Event,
    Ts,
    Cc,
    TsCc,
    Marker,
    Q,
    Overflow,
    FuncRet,
    SrcAddr,
    TransTraceInit,
    TransStart,
    TransCommit,
    TransFail,
    Ite,
    /// Uncommitted elements from before the trace info sync point.
    UnseenUncommitted,
    /// Trace info: no return stack push before the next address.
    TInfo,
}

/// The payload of a stacked element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum P0Data {
    None,
    Addr(etmv4_addr_val_t),
    Q { count: i32, addr: Option<etmv4_addr_val_t> },
    /// Context and the instruction set of the address it came with.
    Ctxt(etmv4_context_t, u8),
    Excep { prev_same: bool, num: u16 },
    Atom(ocsd_pkt_atom),
    Params([u32; 4]),
    Marker(trace_marker_payload_t),
    Ite(trace_sw_ite_t),
    /// A number of like elements held as one (unseen uncommitted elements).
    Count(u32),
}

/// One stacked element: its kind, whether it is a real P0 element (counts
/// for commit / cancel), the packet it came from, and its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct P0Elem {
    pub kind: P0Kind,
    pub is_p0: bool,
    pub root_pkt: ocsd_etmv4_i_pkt_type,
    pub root_index: ocsd_trc_index_t,
    pub data: P0Data,
}

impl P0Elem {
    pub fn new(kind: P0Kind, is_p0: bool, root_pkt: ocsd_etmv4_i_pkt_type, root_index: ocsd_trc_index_t, data: P0Data) -> Self {
        P0Elem { kind, is_p0, root_pkt, root_index, data }
    }

    /// Parameter `n` (0..3) of a parameter element, else 0.
    pub fn param(&self, n: usize) -> u32 {
        match &self.data {
            P0Data::Params(p) => p[n & 0x3],
            _ => 0,
        }
    }

    /// Counted element: remove up to `n` of its elements; returns how many.
    pub fn take_count(&mut self, n: i32) -> i32 {
        match &mut self.data {
            P0Data::Count(c) => {
                let t = (n.max(0) as u32).min(*c);
                *c -= t;
                t as i32
            }
            _ => 0,
        }
    }

    /// Counted element: none left.
    pub fn count_is_empty(&self) -> bool {
        !matches!(self.data, P0Data::Count(c) if c > 0)
    }

    /// Atom element: no atoms left.
    pub fn atom_is_empty(&self) -> bool {
        match &self.data {
            P0Data::Atom(a) => a.num == 0,
            _ => true,
        }
    }

    /// Atom element: take the oldest atom (E or N).
    pub fn atom_commit_oldest(&mut self) -> ocsd_atm_val {
        match &mut self.data {
            P0Data::Atom(a) if a.num > 0 => {
                let v = if a.En_bits & 1 != 0 { ATOM_E } else { ATOM_N };
                a.num -= 1;
                a.En_bits >>= 1;
                v
            }
            _ => ATOM_N,
        }
    }

    /// Atom element: drop up to `n` of the newest atoms; returns how many.
    pub fn atom_cancel_newest(&mut self, n: i32) -> i32 {
        match &mut self.data {
            P0Data::Atom(a) => {
                let remove = n.clamp(0, a.num as i32);
                a.num -= remove as u8;
                remove
            }
            _ => 0,
        }
    }

    /// Atom element: flip the newest atom.
    pub fn atom_mispredict_newest(&mut self) {
        if let P0Data::Atom(a) = &mut self.data {
            if a.num > 0 && a.num <= 32 {
                a.En_bits ^= 1u32 << (a.num - 1);
            }
        }
    }
}

/// The element stack: front = newest, back = oldest.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct P0Stack {
    elems: VecDeque<P0Elem>,
}

impl P0Stack {
    pub fn new() -> Self {
        P0Stack { elems: VecDeque::with_capacity(64) }
    }
    pub fn len(&self) -> usize {
        self.elems.len()
    }
    pub fn is_empty(&self) -> bool {
        self.elems.is_empty()
    }
    /// Empty, or holding an address element alone.
    #[inline]
    pub fn empty_but_addr(&self) -> bool {
        match self.elems.len() {
            0 => true,
            1 => self.elems[0].kind == P0Kind::Addr,
            _ => false,
        }
    }
    pub fn clear(&mut self) {
        self.elems.clear();
    }
    pub fn push_front(&mut self, e: P0Elem) {
        self.elems.push_front(e);
    }
    pub fn push_back(&mut self, e: P0Elem) {
        self.elems.push_back(e);
    }
    pub fn pop_front(&mut self) -> Option<P0Elem> {
        self.elems.pop_front()
    }
    pub fn pop_back(&mut self) -> Option<P0Elem> {
        self.elems.pop_back()
    }
    pub fn front(&self) -> Option<&P0Elem> {
        self.elems.front()
    }
    pub fn back(&self) -> Option<&P0Elem> {
        self.elems.back()
    }
    pub fn front_mut(&mut self) -> Option<&mut P0Elem> {
        self.elems.front_mut()
    }
    pub fn back_mut(&mut self) -> Option<&mut P0Elem> {
        self.elems.back_mut()
    }
    /// Element `i` counted from the front (newest).
    pub fn get_mut(&mut self, i: usize) -> Option<&mut P0Elem> {
        self.elems.get_mut(i)
    }
    /// Element `k` counted from the back (oldest = 0).
    pub fn back_at(&self, k: usize) -> Option<P0Elem> {
        let n = self.elems.len();
        if k < n {
            self.elems.get(n - 1 - k).copied()
        } else {
            None
        }
    }
    /// Remove element `k` counted from the back (oldest = 0).
    pub fn remove_from_back(&mut self, k: usize) -> Option<P0Elem> {
        let n = self.elems.len();
        if k < n {
            self.elems.remove(n - 1 - k)
        } else {
            None
        }
    }
    /// Insert `e` so that it is element `k` counted from the back.
    pub fn insert_from_back(&mut self, k: usize, e: P0Elem) {
        let n = self.elems.len();
        self.elems.insert(n - k.min(n), e);
    }
    /// Remove element `i` counted from the front.
    pub fn remove(&mut self, i: usize) -> Option<P0Elem> {
        self.elems.remove(i)
    }

    // creation helpers: new elements go on the front unless `back`

    pub fn push_no_param(&mut self, kind: P0Kind, is_p0: bool, pkt: ocsd_etmv4_i_pkt_type, idx: ocsd_trc_index_t, back: bool) {
        let e = P0Elem::new(kind, is_p0, pkt, idx, P0Data::None);
        if back {
            self.push_back(e)
        } else {
            self.push_front(e)
        }
    }
    pub fn push_params(&mut self, kind: P0Kind, is_p0: bool, pkt: ocsd_etmv4_i_pkt_type, idx: ocsd_trc_index_t, params: &[u32]) {
        let mut p = [0u32; 4];
        for (d, s) in p.iter_mut().zip(params) {
            *d = *s;
        }
        self.push_front(P0Elem::new(kind, is_p0, pkt, idx, P0Data::Params(p)));
    }
    pub fn push_atom(&mut self, pkt: ocsd_etmv4_i_pkt_type, idx: ocsd_trc_index_t, atom: ocsd_pkt_atom) {
        self.push_front(P0Elem::new(P0Kind::Atom, true, pkt, idx, P0Data::Atom(atom)));
    }
    pub fn push_except(&mut self, pkt: ocsd_etmv4_i_pkt_type, idx: ocsd_trc_index_t, prev_same: bool, num: u16) {
        self.push_front(P0Elem::new(P0Kind::Excep, true, pkt, idx, P0Data::Excep { prev_same, num }));
    }
    pub fn push_context(&mut self, pkt: ocsd_etmv4_i_pkt_type, idx: ocsd_trc_index_t, ctxt: etmv4_context_t, is: u8, back: bool) {
        let e = P0Elem::new(P0Kind::Ctxt, false, pkt, idx, P0Data::Ctxt(ctxt, is));
        if back {
            self.push_back(e)
        } else {
            self.push_front(e)
        }
    }
    pub fn push_addr(&mut self, pkt: ocsd_etmv4_i_pkt_type, idx: ocsd_trc_index_t, addr: etmv4_addr_val_t) {
        self.push_front(P0Elem::new(P0Kind::Addr, false, pkt, idx, P0Data::Addr(addr)));
    }
    pub fn push_src_addr(&mut self, pkt: ocsd_etmv4_i_pkt_type, idx: ocsd_trc_index_t, addr: etmv4_addr_val_t) {
        self.push_front(P0Elem::new(P0Kind::SrcAddr, false, pkt, idx, P0Data::Addr(addr)));
    }
    pub fn push_q(&mut self, pkt: ocsd_etmv4_i_pkt_type, idx: ocsd_trc_index_t, count: i32) {
        self.push_front(P0Elem::new(P0Kind::Q, true, pkt, idx, P0Data::Q { count, addr: None }));
    }
    pub fn push_marker(&mut self, pkt: ocsd_etmv4_i_pkt_type, idx: ocsd_trc_index_t, marker: trace_marker_payload_t) {
        self.push_front(P0Elem::new(P0Kind::Marker, false, pkt, idx, P0Data::Marker(marker)));
    }
    pub fn push_ite(&mut self, pkt: ocsd_etmv4_i_pkt_type, idx: ocsd_trc_index_t, ite: trace_sw_ite_t) {
        self.push_front(P0Elem::new(P0Kind::Ite, false, pkt, idx, P0Data::Ite(ite)));
    }
    /// Preload `n` unseen, uncommitted P0 elements (the speculation depth at
    /// a trace info sync point), for later commits and cancels. They are
    /// held as one counted element ([`P0Elem::take_count`]), so a corrupt
    /// depth value cannot make the stack huge.
    pub fn push_unseen_uncommitted(&mut self, n: i32, pkt: ocsd_etmv4_i_pkt_type, idx: ocsd_trc_index_t) -> i32 {
        if n > 0 {
            self.push_front(P0Elem::new(P0Kind::UnseenUncommitted, true, pkt, idx, P0Data::Count(n as u32)));
        }
        n.max(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoms_commit_cancel_mispredict() {
        let mut e = P0Elem::new(
            P0Kind::Atom,
            true,
            ETM4_PKT_I_ATOM_F3,
            5,
            P0Data::Atom(ocsd_pkt_atom { En_bits: 0b101, num: 3 }),
        );
        assert_eq!(e.atom_commit_oldest(), ATOM_E);
        assert_eq!(e.atom_commit_oldest(), ATOM_N);
        e.atom_mispredict_newest();
        assert_eq!(e.atom_commit_oldest(), ATOM_N);
        assert!(e.atom_is_empty());
        let mut e2 = P0Elem::new(P0Kind::Atom, true, ETM4_PKT_I_ATOM_F2, 0, P0Data::Atom(ocsd_pkt_atom { En_bits: 3, num: 2 }));
        assert_eq!(e2.atom_cancel_newest(5), 2);
        assert!(e2.atom_is_empty());
        // no panic on empty atoms
        e2.atom_mispredict_newest();
        assert_eq!(e2.atom_commit_oldest(), ATOM_N);
    }

    #[test]
    fn stack_order() {
        let mut s = P0Stack::new();
        s.push_no_param(P0Kind::TrcOn, false, ETM4_PKT_I_TRACE_ON, 1, false);
        s.push_addr(ETM4_PKT_I_ADDR_L_64IS0, 2, etmv4_addr_val_t { val: 0x1000, isa: 0 });
        s.push_context(ETM4_PKT_I_CTXT, 3, etmv4_context_t::default(), 0, true);
        assert_eq!(s.len(), 3);
        assert_eq!(s.back().map(|e| e.kind), Some(P0Kind::Ctxt));
        assert_eq!(s.front().map(|e| e.kind), Some(P0Kind::Addr));
        assert_eq!(s.push_unseen_uncommitted(2, ETM4_PKT_I_TRACE_INFO, 4), 2);
        assert_eq!(s.front().map(|e| (e.kind, e.is_p0)), Some((P0Kind::UnseenUncommitted, true)));
        let mut u = *s.front().unwrap();
        assert_eq!(u.take_count(1), 1);
        assert!(!u.count_is_empty());
        assert_eq!(u.take_count(5), 1);
        assert!(u.count_is_empty());
        s.push_params(P0Kind::Ts, false, ETM4_PKT_I_TIMESTAMP, 5, &[1, 2]);
        assert_eq!(s.front().unwrap().param(1), 2);
        assert_eq!(s.front().unwrap().param(3), 0);
        s.clear();
        assert!(s.is_empty());
    }
}
