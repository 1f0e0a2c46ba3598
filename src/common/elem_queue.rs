//! The queue between a packet decoder and the client's element callback.
//!
//! A decoder appends the elements one packet gives; the decode stack then
//! delivers them one by one. When the client answers WAIT, delivery stops
//! and the rest stay queued until the client flushes: nothing is lost or
//! repeated, and the decoders never deal with WAIT themselves. The queue's
//! storage is reused, so steady-state decode allocates nothing.

use crate::abi::gen_elem::ocsd_generic_trace_elem;
use crate::abi::*;
use crate::common::GenElemSink;

/// Bytes of extended data an element may carry inline (STM payloads).
pub const EXT_DATA_MAX: usize = 8;

#[derive(Clone, Copy)]
pub struct QueuedElem {
    pub index: ocsd_trc_index_t,
    pub trace_id: u8,
    pub elem: ocsd_generic_trace_elem,
    /// Extended data that `elem.ptr_extended_data` points at on delivery.
    pub ext: [u8; EXT_DATA_MAX],
    pub has_ext: bool,
}

/// The elements queued are `q[head..]`: those before `head` were
/// delivered, and are dropped when the queue empties (as it does after
/// each delivery the client does not stop) or when they are most of it.
/// A plain vector and an index cost fewer instructions per element than a
/// ring buffer: the queue is filled and emptied whole nearly every time.
#[derive(Default)]
pub struct ElemQueue {
    q: Vec<QueuedElem>,
    head: usize,
}

impl ElemQueue {
    pub fn new() -> Self {
        ElemQueue { q: Vec::with_capacity(64), head: 0 }
    }

    #[inline(always)]
    fn push_elem(&mut self, e: QueuedElem) {
        if self.head != 0 {
            self.drop_delivered();
        }
        self.q.push(e);
    }

    /// Drop the delivered elements when they are all or most of the queue
    /// (the client stopped a delivery part-way).
    #[cold]
    #[inline(never)]
    fn drop_delivered(&mut self) {
        if self.head >= self.q.len() || self.head >= 64.max(self.q.len() / 2) {
            self.q.drain(..self.head.min(self.q.len()));
            self.head = 0;
        }
    }

    /// Queue an element for delivery.
    #[inline]
    pub fn push(&mut self, index: ocsd_trc_index_t, trace_id: u8, elem: &ocsd_generic_trace_elem) {
        self.push_elem(QueuedElem { index, trace_id, elem: *elem, ext: [0; EXT_DATA_MAX], has_ext: false });
    }

    /// Queue an element whose `ptr_extended_data` must point at `ext`.
    pub fn push_with_ext(&mut self, index: ocsd_trc_index_t, trace_id: u8, elem: &ocsd_generic_trace_elem, ext: &[u8]) {
        let mut buf = [0u8; EXT_DATA_MAX];
        let n = ext.len().min(EXT_DATA_MAX);
        buf[..n].copy_from_slice(&ext[..n]);
        self.push_elem(QueuedElem { index, trace_id, elem: *elem, ext: buf, has_ext: true });
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head >= self.q.len()
    }

    pub fn len(&self) -> usize {
        self.q.len().saturating_sub(self.head)
    }

    pub fn clear(&mut self) {
        self.q.clear();
        self.head = 0;
    }

    /// The most recently queued element, to amend before delivery.
    pub fn last_mut(&mut self) -> Option<&mut QueuedElem> {
        if self.is_empty() {
            None
        } else {
            self.q.last_mut()
        }
    }

    /// Deliver queued elements to `sink` until the queue is empty or the sink
    /// answers anything but continue. Returns the last response.
    pub fn deliver(&mut self, sink: &mut dyn GenElemSink) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        // each element handed over where it is queued, then passed (taking
        // it out first copies it to the stack, field by field and then in
        // wide moves that wait for those narrow stores)
        while let Some(e) = self.q.get_mut(self.head) {
            if e.has_ext {
                e.elem.ptr_extended_data = e.ext.as_ptr() as *const std::os::raw::c_void;
            }
            resp = sink.trace_elem_in(e.index, e.trace_id, &e.elem);
            self.head += 1;
            if !resp_is_cont(resp) {
                break;
            }
        }
        if self.head >= self.q.len() {
            self.clear();
        }
        resp
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::gen_elem::OCSD_GEN_TRC_ELEM_INSTR_RANGE;

    /// A client that answers WAIT to some elements (after taking them).
    struct Client {
        got: Vec<u32>,
        /// The (low bytes of the) indexes of the elements given with a
        /// pointer to extended data.
        ext: Vec<u8>,
        wait_every: u64,
        calls: u64,
    }
    impl GenElemSink for Client {
        fn trace_elem_in(&mut self, index: ocsd_trc_index_t, _: u8, e: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
            self.got.push(index);
            if !e.ptr_extended_data.is_null() {
                self.ext.push(index as u8);
            }
            self.calls += 1;
            if self.wait_every != 0 && self.calls.is_multiple_of(self.wait_every) {
                OCSD_RESP_WAIT
            } else {
                OCSD_RESP_CONT
            }
        }
    }

    /// Whatever the client's WAIT answers, elements reach it once each, in
    /// the order queued, those with extended data pointing at it; the queue counts what
    /// is left and gives the last element queued to amend.
    #[test]
    fn elements_reach_the_client_once_in_order() {
        let mut rnd = crate::common::xorshift64(0x5eed_0e1e);
        for wait_every in [0u64, 1, 2, 3, 7] {
            let mut q = ElemQueue::new();
            let mut c = Client { got: vec![], ext: vec![], wait_every, calls: 0 };
            let (mut pushed, mut with_ext) = (0u32, vec![]);
            let e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_INSTR_RANGE);
            for _ in 0..3000 {
                let r = rnd();
                if r.is_multiple_of(3) {
                    let before = q.len();
                    q.deliver(&mut c);
                    assert!(q.len() <= before);
                    assert_eq!(q.is_empty(), q.q.len() == q.head);
                    continue;
                }
                for _ in 0..(r >> 8) % 200 {
                    if pushed.is_multiple_of(5) {
                        q.push_with_ext(pushed, 1, &e, &[pushed as u8]);
                        with_ext.push(pushed as u8);
                    } else {
                        q.push(pushed, 1, &e);
                    }
                    assert_eq!(q.last_mut().map(|l| l.index), Some(pushed));
                    // the elements delivered are dropped before they are
                    // more than 64 or half of those kept
                    assert!(q.head <= 64.max(q.q.len() / 2), "{} of {}", q.head, q.q.len());
                    pushed += 1;
                }
                assert_eq!(q.len() as u32, pushed - c.got.len() as u32);
            }
            while !q.is_empty() {
                q.deliver(&mut c);
            }
            assert!(q.last_mut().is_none());
            assert_eq!(c.got, (0..pushed).collect::<Vec<_>>(), "WAIT every {wait_every}");
            assert_eq!(c.ext, with_ext);
        }
    }
}
