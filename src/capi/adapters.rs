//! Adapters between the Rust pipeline interfaces and the client's C
//! callbacks (generic elements, packet sink / monitor, memory access,
//! logger string output), and the library printers that print through the
//! default logger (`ocsd_dt_set_*_printer`).

use std::ffi::CString;
use std::fmt::Write as _;
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use super::logger;
use crate::abi::gen_elem::ocsd_generic_trace_elem;
use crate::abi::*;
use crate::common::{GenElemSink, TracePacket};
use crate::dcd_tree::{PacketObserver, RawFrameMonitor};
use crate::mem::ReadFn;
use crate::printers::gen_elem::write_elem_str;
use crate::printers::raw_frame::write_raw_frame;

/// The client's opaque context pointer, passed back untouched.
#[derive(Clone, Copy)]
pub struct Ctx(pub *const c_void);
// SAFETY: the library never dereferences the client's context pointer; it
// only hands it back to the client's own callbacks.
unsafe impl Send for Ctx {}
// SAFETY: as above, the pointer is never dereferenced by the library.
unsafe impl Sync for Ctx {}

/// Generic elements to the client's `FnTraceElemIn`.
#[derive(Clone, Copy)]
pub struct CElemSink {
    pub f: unsafe extern "C" fn(*const c_void, ocsd_trc_index_t, u8, *const ocsd_generic_trace_elem) -> ocsd_datapath_resp_t,
    pub ctx: Ctx,
}

impl GenElemSink for CElemSink {
    #[inline]
    fn trace_elem_in(&mut self, index_sop: ocsd_trc_index_t, trc_chan_id: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        // SAFETY: `f` is the client's non-NULL callback with OpenCSD's
        // FnTraceElemIn signature; `elem` is valid for the call.
        unsafe { (self.f)(self.ctx.0, index_sop, trc_chan_id, elem) }
    }
}

/// The tree's element output: the client's callback or the element
/// printer, replaceable from inside the callback itself
/// (`ocsd_dt_set_gen_elem_outfn` / `ocsd_dt_set_gen_elem_printer` called
/// while the tree is busy): the replacement takes over from the next
/// element, and the running output is never dropped under its own feet.
pub struct SwitchSink {
    current: CurrentSink,
    ctl: Arc<super::handles::HandleCtl>,
}

/// The running element output (an enum, not a boxed trait object: one
/// direct call per element on the hot path).
enum CurrentSink {
    Callback(CElemSink),
    Printer(ElemPrinter),
}

impl SwitchSink {
    pub fn new(req: super::handles::SinkReq, ctl: Arc<super::handles::HandleCtl>) -> Self {
        SwitchSink { current: Self::make(req), ctl }
    }

    /// Take over a new output asked for from a callback (kept out of the
    /// per-element path).
    #[cold]
    #[inline(never)]
    fn switch(&mut self) {
        if let Some(req) = self.ctl.take_sink() {
            self.current = Self::make(req);
        }
    }

    fn make(req: super::handles::SinkReq) -> CurrentSink {
        match req {
            super::handles::SinkReq::Callback(c) => CurrentSink::Callback(c),
            super::handles::SinkReq::Printer(enabled) => CurrentSink::Printer(ElemPrinter { enabled }),
        }
    }
}

impl GenElemSink for SwitchSink {
    #[inline]
    fn trace_elem_in(&mut self, index_sop: ocsd_trc_index_t, trc_chan_id: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        if self.ctl.sink_pending.load(std::sync::atomic::Ordering::Acquire) {
            self.switch();
        }
        match &mut self.current {
            CurrentSink::Callback(c) => c.trace_elem_in(index_sop, trc_chan_id, elem),
            CurrentSink::Printer(p) => p.trace_elem_in(index_sop, trc_chan_id, elem),
        }
    }
    /// The batch from one decoder step: to the client's callback directly,
    /// checking after each element whether a new output was asked for.
    fn trace_elems_in(&mut self, elems: &[(ocsd_trc_index_t, ocsd_generic_trace_elem)], trc_chan_id: u8) -> (usize, ocsd_datapath_resp_t) {
        let mut k = 0;
        while k < elems.len() {
            if self.ctl.sink_pending.load(std::sync::atomic::Ordering::Acquire) {
                self.switch();
            }
            match &mut self.current {
                CurrentSink::Callback(c) => {
                    let mut c = *c;
                    for (idx, e) in &elems[k..] {
                        k += 1;
                        let r = c.trace_elem_in(*idx, trc_chan_id, e);
                        if !resp_is_cont(r) {
                            return (k, r);
                        }
                        if self.ctl.sink_pending.load(std::sync::atomic::Ordering::Acquire) {
                            break;
                        }
                    }
                }
                CurrentSink::Printer(p) => {
                    let (idx, e) = &elems[k];
                    k += 1;
                    let r = p.trace_elem_in(*idx, trc_chan_id, e);
                    if !resp_is_cont(r) {
                        return (k, r);
                    }
                }
            }
        }
        (k, OCSD_RESP_CONT)
    }
}

/// Packets to the client's packet sink (`FnDefPktDataIn`).
pub struct CPktSink {
    pub f: unsafe extern "C" fn(*const c_void, ocsd_datapath_op_t, ocsd_trc_index_t, *const c_void) -> ocsd_datapath_resp_t,
    pub ctx: Ctx,
}

impl PacketObserver for CPktSink {
    fn packet(&mut self, op: ocsd_datapath_op_t, index_sop: ocsd_trc_index_t, _pkt: Option<&dyn TracePacket>, pkt_ptr: *const c_void, _raw: &[u8]) -> ocsd_datapath_resp_t {
        // SAFETY: `f` is the client's non-NULL callback; `pkt_ptr` is the
        // protocol's C packet struct (or NULL for non-data operations),
        // valid for the call.
        unsafe { (self.f)(self.ctx.0, op, index_sop, pkt_ptr) }
    }
}

/// Packets and their bytes to the client's packet monitor (`FnDefPktDataMon`).
pub struct CPktMon {
    pub f: unsafe extern "C" fn(*const c_void, ocsd_datapath_op_t, ocsd_trc_index_t, *const c_void, u32, *const u8),
    pub ctx: Ctx,
}

impl PacketObserver for CPktMon {
    fn packet(&mut self, op: ocsd_datapath_op_t, index_sop: ocsd_trc_index_t, _pkt: Option<&dyn TracePacket>, pkt_ptr: *const c_void, raw: &[u8]) -> ocsd_datapath_resp_t {
        let data = if raw.is_empty() { std::ptr::null() } else { raw.as_ptr() };
        // SAFETY: `f` is the client's non-NULL callback; the packet and the
        // `raw.len()` bytes at `data` are valid for the call.
        unsafe { (self.f)(self.ctx.0, op, index_sop, pkt_ptr, raw.len() as u32, data) };
        OCSD_RESP_CONT
    }
}

/// A memory read function over the client's `Fn_MemAcc_CB`.
pub fn mem_acc_cb(
    f: unsafe extern "C" fn(*const c_void, ocsd_vaddr_t, ocsd_mem_space_acc_t, u32, *mut u8) -> u32,
    ctx: Ctx,
) -> ReadFn {
    Box::new(move |addr, space, _id, buf: &mut [u8]| {
        let ctx = ctx;
        // SAFETY: `f` is the client's non-NULL callback; `buf` is writable
        // for `buf.len()` bytes during the call.
        unsafe { f(ctx.0, addr, space, buf.len() as u32, buf.as_mut_ptr()) as usize }
    })
}

/// A memory read function over the client's `Fn_MemAccID_CB`.
pub fn mem_acc_id_cb(
    f: unsafe extern "C" fn(*const c_void, ocsd_vaddr_t, ocsd_mem_space_acc_t, u8, u32, *mut u8) -> u32,
    ctx: Ctx,
) -> ReadFn {
    Box::new(move |addr, space, id, buf: &mut [u8]| {
        let ctx = ctx;
        // SAFETY: `f` is the client's non-NULL callback; `buf` is writable
        // for `buf.len()` bytes during the call.
        unsafe { f(ctx.0, addr, space, id, buf.len() as u32, buf.as_mut_ptr()) as usize }
    })
}

/// The logger's string output to the client's `FnDefLoggerPrintStrCB`.
pub fn str_print_cb(f: unsafe extern "C" fn(*const c_void, *const std::os::raw::c_char, c_int), ctx: Ctx) -> Arc<dyn Fn(&str) + Send + Sync> {
    Arc::new(move |s: &str| {
        let ctx = ctx;
        // OpenCSD passes the std::string's c_str(): text up to the first NUL
        let text = s.split('\0').next().unwrap_or("");
        if let Ok(c) = CString::new(text) {
            // SAFETY: `f` is the client's non-NULL callback; `c` is a valid
            // NUL-terminated string of `text.len()` bytes during the call.
            unsafe { f(ctx.0, c.as_ptr(), s.len() as c_int) };
        }
    })
}

// ---------------------------------------------------------------------------
// Library printers (OpenCSD's PacketPrinter, TrcGenericElementPrinter,
// RawFramePrinter) writing through the default logger's output.

/// `ocsd_dt_set_pkt_protocol_printer`: `Idx:<n>; ID:<id>[; [raw bytes]];\t<packet>`.
pub struct PacketPrinter {
    pub id: u8,
    /// Printing enabled: an output logger existed when the printer was made.
    pub enabled: bool,
    pub last_resp: ocsd_datapath_resp_t,
}

impl PacketObserver for PacketPrinter {
    fn packet(&mut self, op: ocsd_datapath_op_t, index_sop: ocsd_trc_index_t, pkt: Option<&dyn TracePacket>, _pkt_ptr: *const c_void, raw: &[u8]) -> ocsd_datapath_resp_t {
        let mut s = String::new();
        match op {
            OCSD_OP_DATA => {
                let _ = write!(s, "Idx:{}; ID:{:x}", index_sop, self.id);
                if !raw.is_empty() {
                    s.push_str("; [");
                    for b in raw {
                        let _ = write!(s, "0x{:02x} ", b);
                    }
                    s.push(']');
                }
                s.push_str(";\t");
                if let Some(p) = pkt {
                    p.write_str(&mut s);
                }
                s.push('\n');
            }
            OCSD_OP_EOT => {
                let _ = writeln!(s, "ID:{:x}\tEND OF TRACE DATA", self.id);
            }
            OCSD_OP_FLUSH => {
                let _ = writeln!(s, "ID:{:x}\tFLUSH operation on trace decode path", self.id);
            }
            OCSD_OP_RESET => {
                let _ = writeln!(s, "ID:{:x}\tRESET operation on trace decode path", self.id);
            }
            _ => {}
        }
        if self.enabled {
            logger::msg_out(&s);
        }
        self.last_resp = OCSD_RESP_CONT;
        OCSD_RESP_CONT
    }
}

/// `ocsd_dt_set_gen_elem_printer`: `Idx:<n>; ID:<id>; <element>`.
pub struct ElemPrinter {
    pub enabled: bool,
}

impl GenElemSink for ElemPrinter {
    fn trace_elem_in(&mut self, index_sop: ocsd_trc_index_t, trc_chan_id: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        if self.enabled {
            let mut s = format!("Idx:{}; ID:{:x}; ", index_sop, trc_chan_id);
            write_elem_str(elem, &mut s);
            s.push('\n');
            logger::msg_out(&s);
        }
        OCSD_RESP_CONT
    }
}

/// `ocsd_dt_set_raw_frame_printer`: the deformatter's raw frames.
pub struct FramePrinter {
    pub enabled: bool,
}

impl RawFrameMonitor for FramePrinter {
    fn raw_frame(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, elem: ocsd_rawframe_elem_t, data: &[u8], id: u8) {
        if op != OCSD_OP_DATA || !self.enabled {
            return;
        }
        let mut s = String::new();
        write_raw_frame(&mut s, elem, index, data, id);
        logger::msg_out(&s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::gen_elem::OCSD_GEN_TRC_ELEM_INSTR_RANGE;
    use crate::capi::handles::{HandleCtl, SinkReq};
    use std::sync::atomic::Ordering;

    /// What the two test callbacks saw.
    struct Seen {
        first: Vec<ocsd_trc_index_t>,
        second: Vec<ocsd_trc_index_t>,
        ctl: Arc<HandleCtl>,
        switch_at: ocsd_trc_index_t,
        wait_at: ocsd_trc_index_t,
    }

    unsafe extern "C" fn first(ctx: *const c_void, idx: ocsd_trc_index_t, _id: u8, _e: *const ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        // SAFETY: `ctx` is the `Seen` the test passes, alive and not
        // otherwise borrowed during the batch.
        let s = unsafe { &mut *(ctx as *mut Seen) };
        s.first.push(idx);
        if idx == s.switch_at {
            // a new output asked for from inside the callback
            s.ctl.pending().sink = Some(SinkReq::Callback(CElemSink { f: second, ctx: Ctx(ctx) }));
            s.ctl.sink_pending.store(true, Ordering::Release);
        }
        OCSD_RESP_CONT
    }

    unsafe extern "C" fn second(ctx: *const c_void, idx: ocsd_trc_index_t, _id: u8, _e: *const ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        // SAFETY: as in `first`.
        let s = unsafe { &mut *(ctx as *mut Seen) };
        s.second.push(idx);
        if idx == s.wait_at {
            OCSD_RESP_WAIT
        } else {
            OCSD_RESP_CONT
        }
    }

    #[test]
    fn batch_switches_output_from_the_next_element_and_stops_at_wait() {
        let ctl = Arc::new(HandleCtl::default());
        let mut seen = Seen { first: vec![], second: vec![], ctl: ctl.clone(), switch_at: 1, wait_at: 3 };
        let ctx = Ctx(&mut seen as *mut Seen as *const c_void);
        let mut sink = SwitchSink::new(SinkReq::Callback(CElemSink { f: first, ctx }), ctl);
        let elems: Vec<(ocsd_trc_index_t, ocsd_generic_trace_elem)> =
            (0..6).map(|i| (i, ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_INSTR_RANGE))).collect();
        let (n, r) = sink.trace_elems_in(&elems, 0x12);
        assert_eq!((n, r), (4, OCSD_RESP_WAIT));
        // the rest, as the decode stack delivers it after the client's flush
        let (n2, r2) = sink.trace_elems_in(&elems[n..], 0x12);
        assert_eq!((n2, r2), (2, OCSD_RESP_CONT));
        assert_eq!(seen.first, vec![0, 1]);
        assert_eq!(seen.second, vec![2, 3, 4, 5]);
        // an empty batch calls nothing
        let (n3, r3) = sink.trace_elems_in(&[], 0x12);
        assert_eq!((n3, r3), (0, OCSD_RESP_CONT));
    }
}
