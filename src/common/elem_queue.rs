//! The queue between a packet decoder and the client's element callback.
//!
//! A decoder appends the elements one packet gives; the decode stack then
//! delivers them one by one. When the client answers WAIT, delivery stops
//! and the rest stay queued until the client flushes: nothing is lost or
//! repeated, and the decoders never deal with WAIT themselves. The queue's
//! storage is reused, so steady-state decode allocates nothing.

use std::collections::VecDeque;

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

#[derive(Default)]
pub struct ElemQueue {
    q: VecDeque<QueuedElem>,
}

impl ElemQueue {
    pub fn new() -> Self {
        ElemQueue { q: VecDeque::with_capacity(64) }
    }

    /// Queue an element for delivery.
    #[inline]
    pub fn push(&mut self, index: ocsd_trc_index_t, trace_id: u8, elem: &ocsd_generic_trace_elem) {
        self.q.push_back(QueuedElem { index, trace_id, elem: *elem, ext: [0; EXT_DATA_MAX], has_ext: false });
    }

    /// Queue an element whose `ptr_extended_data` must point at `ext`.
    pub fn push_with_ext(&mut self, index: ocsd_trc_index_t, trace_id: u8, elem: &ocsd_generic_trace_elem, ext: &[u8]) {
        let mut buf = [0u8; EXT_DATA_MAX];
        let n = ext.len().min(EXT_DATA_MAX);
        buf[..n].copy_from_slice(&ext[..n]);
        self.q.push_back(QueuedElem { index, trace_id, elem: *elem, ext: buf, has_ext: true });
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn clear(&mut self) {
        self.q.clear();
    }

    /// The most recently queued element, to amend before delivery.
    pub fn last_mut(&mut self) -> Option<&mut QueuedElem> {
        self.q.back_mut()
    }

    /// Deliver queued elements to `sink` until the queue is empty or the sink
    /// answers anything but continue. Returns the last response.
    pub fn deliver(&mut self, sink: &mut dyn GenElemSink) -> ocsd_datapath_resp_t {
        let mut resp = OCSD_RESP_CONT;
        // each element handed over where it is queued, then dropped (taking
        // it out first copies it to the stack, field by field and then in
        // wide moves that wait for those narrow stores)
        while let Some(e) = self.q.front_mut() {
            if e.has_ext {
                e.elem.ptr_extended_data = e.ext.as_ptr() as *const std::os::raw::c_void;
            }
            resp = sink.trace_elem_in(e.index, e.trace_id, &e.elem);
            self.q.pop_front();
            if !resp_is_cont(resp) {
                break;
            }
        }
        resp
    }
}
