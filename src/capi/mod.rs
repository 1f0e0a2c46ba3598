//! The C API: OpenCSD 1.8.0's `libopencsd_c_api` functions
//! (`opencsd/c_api/opencsd_c_api.h`), with its signatures and behaviour.
//!
//! Each function checks its pointers and lengths, converts them, and calls
//! the safe Rust core; no panic crosses the C boundary (every body runs
//! under `catch_unwind` and answers OpenCSD's error on a panic).
//!
//! Where OpenCSD would dereference a NULL pointer or an unknown handle (and
//! crash), these functions return an error instead: `OCSD_ERR_INVALID_PARAM_VAL`
//! (or the function's own "no tree" code where OpenCSD checks the handle:
//! `OCSD_RESP_FATAL_NOT_INIT` for `ocsd_dt_process_data`, `OCSD_ERR_NOT_INIT`
//! for the printers and the string-print callback), or do nothing for
//! `void` functions. Decode tree handles are never reused, so a destroyed
//! handle is refused the same way.
//!
//! The other documented difference from OpenCSD: memory buffers given to
//! `ocsd_dt_add_buffer_mem_acc` are copied (OpenCSD keeps the client's
//! pointer).
//!
//! A formatted tree takes decoders for the reserved trace IDs (0, 0x70 to
//! 0x7F) as OpenCSD 1.8.0's does; where a function looks a decoder up by a
//! reserved ID it finds the decoder of ID 0, and such decoders cannot be
//! removed (`OCSD_ERR_INVALID_ID`), as there.
#![allow(non_camel_case_types, non_snake_case)]
// The C entry points take the client's raw pointers as OpenCSD's do: each
// pointer is checked (NULL, length) before it is read, under a SAFETY
// comment, or handed back to the client's own callback unread. Marking the
// functions `unsafe fn`, as this lint asks, changes nothing for a C caller.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod adapters;
pub mod builtin;
pub mod custom;
pub mod custom_dcd;
pub mod handles;
pub mod logger;
pub mod types;

#[cfg(test)]
mod tests;

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_uchar, c_void};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::OcsdError;
use crate::dcd_tree::DecodeTree;
use crate::mem::ocsd_files::{AccList, MapOp};
use crate::mem::{Accessor, MemMapper, Source};
use adapters::*;
use custom::ocsd_extern_dcd_fact_t;
use handles::TreeHandle;
pub use types::*;

/// Run a C API function body; a panic answers `$fail`.
macro_rules! ffi_guard {
    ($fail:expr, $body:block) => {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| $body)) {
            Ok(v) => v,
            Err(_) => $fail,
        }
    };
}

/// Run `f` on the tree of a live handle; `missing` for any other handle,
/// and for a tree that is busy with another call (a call made from inside
/// one of the tree's own callbacks: see `handles`).
fn with_tree<R>(handle: dcd_tree_handle_t, missing: R, f: impl FnOnce(&mut TreeHandle) -> R) -> R {
    let Some((p, ctl)) = handles::lookup_ctl(handle) else { return missing };
    if ctl.busy.swap(true, Ordering::AcqRel) {
        return missing;
    }
    /// Ends the busy state, then applies what callbacks asked for (also
    /// when `f` unwinds).
    struct Busy(handles::TreePtr, Arc<handles::HandleCtl>);
    impl Drop for Busy {
        fn drop(&mut self) {
            let removals = std::mem::take(&mut self.1.pending().remove_ids);
            if self.1.destroyed.load(Ordering::Acquire) {
                // destroyed from a callback: the handle is gone from the
                // registry, the tree is ours to drop
                // SAFETY: the pointer came from Box::into_raw; the handle
                // was removed from the registry by ocsd_destroy_dcd_tree,
                // which left the drop to this (the only) running call.
                let tree = unsafe { Box::from_raw(self.0 .0) };
                logger::drop_tree_callback(tree.id);
                drop(tree);
                return;
            }
            // SAFETY: the tree is live (not destroyed) and `f` has returned,
            // so no other reference to it exists.
            let t = unsafe { &mut *self.0 .0 };
            let removed = !removals.is_empty();
            for id in removals {
                // (the tree refuses a reserved ID on a formatted source)
                let id = if t.tree.src_type() == OCSD_TRC_SRC_FRAME_FORMATTED { id } else { 0 };
                let _ = t.tree.remove_decoder(id);
            }
            if removed {
                t.sync_stats();
            }
            if let Some(req) = self.1.take_sink() {
                t.tree.set_elem_sink(Some(Box::new(SwitchSink::new(req, self.1.clone()))));
            }
            // memory map changes from callbacks not yet read through
            t.tree.mapper.apply_queued();
            self.1.busy.store(false, Ordering::Release);
        }
    }
    let busy = Busy(p, ctl);
    // SAFETY: the registry holds only pointers from Box::into_raw of live
    // trees; the busy flag (just set) keeps re-entrant calls off it, and a
    // tree is used by one thread at a time (API contract).
    let r = f(unsafe { &mut *busy.0 .0 });
    drop(busy);
    r
}

/// Ask for a new element output: now when the tree is idle, from the next
/// element when it is busy (the call comes from one of its callbacks).
fn set_elem_output(handle: dcd_tree_handle_t, req: handles::SinkReq) -> ocsd_err_t {
    let Some((_, ctl)) = handles::lookup_ctl(handle) else { return OCSD_ERR_INVALID_PARAM_VAL };
    if ctl.busy.load(Ordering::Acquire) {
        ctl.pending().sink = Some(req);
        ctl.sink_pending.store(true, Ordering::Release);
        return OCSD_OK;
    }
    with_tree(handle, OCSD_ERR_INVALID_PARAM_VAL, |t| {
        t.tree.set_elem_sink(Some(Box::new(SwitchSink::new(req, ctl.clone()))));
        OCSD_OK
    })
}

/// A C string argument (`None` for NULL).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn c_string(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-NULL and NUL-terminated per the contract.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Copy `s` into the C buffer as `strncpy(buffer, s, size - 1);
/// buffer[size - 1] = 0;` does: truncated to `size - 1` bytes, always
/// terminated.
///
/// # Safety
/// `buffer` must be writable for `size` (>= 1) bytes.
pub(crate) unsafe fn copy_str_to_c(s: &str, buffer: *mut c_char, size: c_int) {
    if buffer.is_null() || size < 1 {
        return;
    }
    let size = size as usize;
    let bytes = s.as_bytes();
    let bytes = &bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len())];
    let n = bytes.len().min(size - 1);
    // SAFETY: `buffer` holds `size` bytes per the contract; `n < size`.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer as *mut u8, n);
        std::ptr::write_bytes((buffer as *mut u8).add(n), 0, size - n);
    }
}

fn is_custom_protocol(p: ocsd_trace_protocol_t) -> bool {
    (OCSD_PROTOCOL_CUSTOM_0..OCSD_PROTOCOL_END).contains(&p)
}

static VERSION_STR: &[u8] = b"1.8.0\0";

// ---------------------------------------------------------------------------
// Library version

/// Library version: `MMMMnnpp` (major, minor, patch).
#[no_mangle]
pub extern "C" fn ocsd_get_version() -> u32 {
    OCSD_VER_NUM
}

/// Library version string.
#[no_mangle]
pub extern "C" fn ocsd_get_version_str() -> *const c_char {
    VERSION_STR.as_ptr() as *const c_char
}

// ---------------------------------------------------------------------------
// Decode tree

/// Create a decode tree; `C_API_INVALID_TREE_HANDLE` on failure.
#[no_mangle]
pub extern "C" fn ocsd_create_dcd_tree(src_type: ocsd_dcd_tree_src_t, deformatterCfgFlags: u32) -> dcd_tree_handle_t {
    ffi_guard!(C_API_INVALID_TREE_HANDLE, {
        match DecodeTree::new(src_type, deformatterCfgFlags, Box::new(logger::DefaultLog)) {
            Ok(mut tree) => {
                // OpenCSD's tree creation reads OPENCSD_ERR_ON_AA64_BAD_OPCODE
                // into its shared instruction decoder
                if std::env::var_os(crate::instr::ENV_AA64_BAD_OPCODE).is_some() {
                    crate::instr::AA64_BAD_OPCODE_ERR.store(true, Ordering::Relaxed);
                }
                // as OpenCSD's: decoders run once the client has attached an
                // element output and (instruction following) memory
                tree.interfaces_required = true;
                tree.mem_attached = false;
                handles::insert(|id, ctl| Box::new(TreeHandle::new(id, tree, ctl)))
            }
            Err(_) => C_API_INVALID_TREE_HANDLE,
        }
    })
}

/// Destroy a decode tree and its decoders, accessors and callbacks.
#[no_mangle]
pub extern "C" fn ocsd_destroy_dcd_tree(handle: dcd_tree_handle_t) {
    ffi_guard!((), {
        if let Some((p, ctl)) = handles::remove(handle) {
            if ctl.busy.load(Ordering::Acquire) {
                // called from inside one of the tree's callbacks: the
                // running call drops the tree when it returns
                ctl.destroyed.store(true, Ordering::Release);
                return;
            }
            // SAFETY: the pointer came from Box::into_raw and was just taken
            // out of the registry, so it is dropped exactly once.
            let tree = unsafe { Box::from_raw(p.0) };
            logger::drop_tree_callback(tree.id);
            drop(tree);
        }
    })
}

/// Trace data in (or a DATA / EOT / FLUSH / RESET operation).
#[no_mangle]
pub extern "C" fn ocsd_dt_process_data(
    handle: dcd_tree_handle_t,
    op: ocsd_datapath_op_t,
    index: ocsd_trc_index_t,
    dataBlockSize: u32,
    pDataBlock: *const u8,
    numBytesProcessed: *mut u32,
) -> ocsd_datapath_resp_t {
    ffi_guard!(OCSD_RESP_FATAL_SYS_ERR, {
        let set_used = |n: u32| {
            if !numBytesProcessed.is_null() {
                // SAFETY: checked non-NULL; the client's count location.
                unsafe { *numBytesProcessed = n };
            }
        };
        with_tree(handle, OCSD_RESP_FATAL_NOT_INIT, |t| {
            if t.tree.src_type() == OCSD_TRC_SRC_SINGLE && t.tree.decoder_for_cs_id(0).is_none() {
                set_used(0);
                return OCSD_RESP_FATAL_NOT_INIT;
            }
            let data: &[u8] = if op == OCSD_OP_DATA {
                if numBytesProcessed.is_null() {
                    return OCSD_RESP_FATAL_INVALID_PARAM;
                }
                if pDataBlock.is_null() || dataBlockSize == 0 {
                    &[]
                } else {
                    // SAFETY: the client's block of `dataBlockSize` bytes,
                    // checked non-NULL.
                    unsafe { std::slice::from_raw_parts(pDataBlock, dataBlockSize as usize) }
                }
            } else {
                &[]
            };
            let (resp, used) = t.tree.data_in(op, index, data);
            if op == OCSD_OP_DATA {
                set_used(used as u32);
            }
            resp
        })
    })
}

/// Set the generic trace element output callback.
#[no_mangle]
pub extern "C" fn ocsd_dt_set_gen_elem_outfn(handle: dcd_tree_handle_t, pFn: FnTraceElemIn, p_context: *const c_void) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        match pFn {
            Some(f) => set_elem_output(handle, handles::SinkReq::Callback(CElemSink { f, ctx: Ctx(p_context) })),
            None => OCSD_ERR_INVALID_PARAM_VAL,
        }
    })
}

// ---------------------------------------------------------------------------
// Decoders

/// Create a decoder registered under `decoder_name` (built-in or custom)
/// from its configuration struct; its trace ID is written to `*pCSID`.
#[no_mangle]
pub extern "C" fn ocsd_dt_create_decoder(
    handle: dcd_tree_handle_t,
    decoder_name: *const c_char,
    create_flags: c_int,
    decoder_cfg: *const c_void,
    pCSID: *mut c_uchar,
) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        // SAFETY: the client's decoder name, NULL or NUL-terminated.
        let Some(name) = (unsafe { c_string(decoder_name) }) else { return OCSD_ERR_INVALID_PARAM_VAL };
        if pCSID.is_null() {
            return OCSD_ERR_INVALID_PARAM_VAL;
        }
        with_tree(handle, OCSD_ERR_INVALID_PARAM_VAL, |t| {
            let formatted = t.tree.src_type() == OCSD_TRC_SRC_FRAME_FORMATTED;
            // OpenCSD's tree turns its shared instruction decoder's A64
            // bad-opcode check on for good when asked, before it makes the
            // decoder (whose creation may then fail)
            let aa64_chk = || {
                if create_flags as u32 & crate::ete::types::ETM4_OPFLG_PKTDEC_AA64_OPCODE_CHK != 0 {
                    crate::instr::AA64_BAD_OPCODE_ERR.store(true, Ordering::Relaxed);
                }
            };
            let res = if let Some(fact) = custom_dcd::find_by_name(&name) {
                aa64_chk();
                create_custom(t, &name, &fact, create_flags, decoder_cfg, formatted)
            } else {
                // SAFETY: the client's config struct for the named decoder.
                match unsafe { builtin::builtin_cfg_from_ptr(&name, decoder_cfg) } {
                    Ok(cfg) => {
                        use crate::dcd_tree::registry::create_builtin;
                        aa64_chk();
                        // OpenCSD makes the trace ID's slot first (refused
                        // when taken: `add_decoder`), then the decoder; when
                        // that fails (bad create flags) the slot stays taken.
                        // (Then the ID is read from a packet processor made
                        // for it.)
                        match create_builtin(&name, &*cfg, create_flags as u32) {
                            Ok(dec) => t.tree.add_decoder(dec),
                            Err(e) => match create_builtin(&name, &*cfg, OCSD_CREATE_FLG_PACKET_PROC).map(|p| p.cs_id()) {
                                Ok(id) if t.tree.slot_taken(id) => Err(OCSD_ERR_ATTACH_TOO_MANY),
                                Ok(id) => {
                                    t.tree.hold_slot(id);
                                    Err(e)
                                }
                                Err(_) => Err(e),
                            },
                        }
                    }
                    Err(e) => Err(e),
                }
            };
            match res {
                Ok(csid) => {
                    t.sync_stats();
                    // SAFETY: checked non-NULL; the client's result location.
                    unsafe { *pCSID = csid };
                    OCSD_OK
                }
                Err(e) => e,
            }
        })
    })
}

fn create_custom(
    t: &mut TreeHandle,
    name: &str,
    fact: &ocsd_extern_dcd_fact_t,
    create_flags: c_int,
    cfg: *const c_void,
    formatted: bool,
) -> Result<u8, ocsd_err_t> {
    let Some(csid_fn) = fact.csidFromConfig else { return Err(OCSD_ERR_NOT_INIT) };
    let mut csid: c_uchar = 0;
    // SAFETY: the factory's function, given the client's config pointer as
    // is and a valid result location.
    let err = unsafe { csid_fn(cfg, &mut csid) };
    if err != OCSD_OK {
        return Err(err);
    }
    // (as OpenCSD's tree: any ID below 0x80, reserved ones too, each once)
    if formatted && csid >= 0x80 {
        return Err(OCSD_ERR_INVALID_ID);
    }
    if t.tree.slot_taken(csid) {
        return Err(OCSD_ERR_ATTACH_TOO_MANY);
    }
    let flags = if formatted { create_flags | OCSD_CREATE_FLG_INST_ID as c_int } else { create_flags };
    // SAFETY: the client's config pointer, passed to its own factory.
    let dec = match unsafe { custom_dcd::create(name, fact, flags, cfg, csid) } {
        Ok(d) => d,
        Err(e) => {
            // the ID's slot, made before the factory failed, stays taken
            // (as OpenCSD's tree leaves it)
            t.tree.hold_slot(csid);
            return Err(e);
        }
    };
    t.tree.add_decoder(Box::new(dec))?;
    Ok(csid)
}

/// Remove and destroy the decoder of trace ID `CSID`.
#[no_mangle]
pub extern "C" fn ocsd_dt_remove_decoder(handle: dcd_tree_handle_t, CSID: c_uchar) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        if let Some((_, ctl)) = handles::lookup_ctl(handle) {
            if ctl.busy.load(Ordering::Acquire) {
                // from inside a callback of this tree: removed when the
                // running call returns
                ctl.pending().remove_ids.push(CSID);
                return OCSD_OK;
            }
        }
        with_tree(handle, OCSD_ERR_INVALID_PARAM_VAL, |t| {
            // the tree refuses a reserved ID on a formatted source; removing
            // an ID with no decoder is not an error in OpenCSD
            let id = if t.tree.src_type() == OCSD_TRC_SRC_FRAME_FORMATTED { CSID } else { 0 };
            let r = match t.tree.remove_decoder(id) {
                OCSD_ERR_INVALID_ID => OCSD_ERR_INVALID_ID,
                _ => OCSD_OK,
            };
            t.sync_stats();
            r
        })
    })
}

/// Attach a packet sink (`FnDefPktDataIn`) or packet monitor
/// (`FnDefPktDataMon`) callback to the decoder of trace ID `CSID`.
#[no_mangle]
pub extern "C" fn ocsd_dt_attach_packet_callback(
    handle: dcd_tree_handle_t,
    CSID: c_uchar,
    callback_type: ocsd_c_api_cb_types,
    p_fn_callback_data: *mut c_void,
    p_context: *const c_void,
) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        with_tree(handle, OCSD_ERR_INVALID_PARAM_VAL, |t| {
            let Some(dec) = t.tree.decoder_for_cs_id(CSID) else { return OCSD_ERR_INVALID_ID };
            let protocol = dec.protocol();
            let known = builtin::has_packet_callbacks(protocol) || is_custom_protocol(protocol);
            match callback_type {
                OCSD_C_API_CB_PKT_SINK => {
                    if !known {
                        return OCSD_ERR_NO_PROTOCOL;
                    }
                    if p_fn_callback_data.is_null() {
                        return OCSD_ERR_INVALID_PARAM_VAL;
                    }
                    // SAFETY: for OCSD_C_API_CB_PKT_SINK the client passes a
                    // non-NULL FnDefPktDataIn (checked).
                    let f = unsafe {
                        std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*const c_void, ocsd_datapath_op_t, ocsd_trc_index_t, *const c_void) -> ocsd_datapath_resp_t>(p_fn_callback_data)
                    };
                    dec.set_sink(Some(Box::new(CPktSink { f, ctx: Ctx(p_context) })))
                }
                OCSD_C_API_CB_PKT_MON => {
                    if !known {
                        return OCSD_ERR_NO_PROTOCOL;
                    }
                    if p_fn_callback_data.is_null() {
                        return OCSD_ERR_INVALID_PARAM_VAL;
                    }
                    // SAFETY: for OCSD_C_API_CB_PKT_MON the client passes a
                    // non-NULL FnDefPktDataMon (checked).
                    let f = unsafe {
                        std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*const c_void, ocsd_datapath_op_t, ocsd_trc_index_t, *const c_void, u32, *const u8)>(p_fn_callback_data)
                    };
                    dec.set_monitor(Some(Box::new(CPktMon { f, ctx: Ctx(p_context) })));
                    OCSD_OK
                }
                _ => OCSD_ERR_INVALID_PARAM_VAL,
            }
        })
    })
}

/// The packet processing statistics of trace ID `CSID`: `*p_stats_block`
/// points to the decoder's statistics block, as OpenCSD's points into its
/// packet processor: live (its counts change as the decode goes on, also
/// while a callback of the tree runs), valid until the tree is destroyed;
/// its demux counts are those of this call. Works from inside the tree's
/// callbacks too.
#[no_mangle]
pub extern "C" fn ocsd_dt_get_decode_stats(handle: dcd_tree_handle_t, CSID: c_uchar, p_stats_block: *mut *mut ocsd_decode_stats_t) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        if p_stats_block.is_null() {
            return OCSD_ERR_INVALID_PARAM_VAL;
        }
        let Some((_, ctl)) = handles::lookup_ctl(handle) else { return OCSD_ERR_INVALID_PARAM_VAL };
        let st = ctl.stats();
        // (custom decoders have no library packet processor to keep them)
        let Some((block, init)) = st.for_cs_id(CSID) else { return OCSD_ERR_INVALID_PARAM_VAL };
        // SAFETY: checked non-NULL; the client's result location. The block
        // is kept by the control block until the tree is destroyed.
        unsafe { *p_stats_block = block.as_c_ptr().cast_mut() };
        if !init {
            // (OpenCSD points to the processor's unused, zero block too)
            return OCSD_ERR_NOT_INIT;
        }
        block.set_demux(&st.demux.as_ref().map(|d| d.get()).unwrap_or_default());
        OCSD_OK
    })
}

/// Reset the statistics of trace ID `CSID` and the tree's demux statistics
/// (also from inside the tree's callbacks).
#[no_mangle]
pub extern "C" fn ocsd_dt_reset_decode_stats(handle: dcd_tree_handle_t, CSID: c_uchar) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        let Some((_, ctl)) = handles::lookup_ctl(handle) else { return OCSD_ERR_INVALID_PARAM_VAL };
        let st = ctl.stats();
        let Some((block, _)) = st.for_cs_id(CSID) else { return OCSD_ERR_INVALID_PARAM_VAL };
        block.reset();
        if let Some(d) = st.demux.as_ref() {
            d.reset();
        }
        OCSD_OK
    })
}

// ---------------------------------------------------------------------------
// Default error logger

/// Set the library error logger verbosity; create an output logger
/// (printing to stderr) if `create_output_logger` is non-zero.
#[no_mangle]
pub extern "C" fn ocsd_def_errlog_init(verbosity: ocsd_err_severity_t, create_output_logger: c_int) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_NOT_INIT, {
        logger::init(verbosity, create_output_logger != 0);
        OCSD_OK
    })
}

/// Choose the output logger's outputs (`C_API_MSGLOGOUT_FLG_*`) and file.
#[no_mangle]
pub extern "C" fn ocsd_def_errlog_config_output(output_flags: c_int, log_file_name: *const c_char) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_NOT_INIT, {
        // SAFETY: the client's file name, NULL or NUL-terminated.
        let name = unsafe { c_string(log_file_name) };
        logger::config_output(output_flags & C_API_MSGLOGOUT_MASK, name)
    })
}

/// Also send the output logger's strings to the client's callback.
#[no_mangle]
pub extern "C" fn ocsd_def_errlog_set_strprint_cb(handle: dcd_tree_handle_t, p_context: *mut c_void, p_str_print_cb: FnDefLoggerPrintStrCB) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_NOT_INIT, {
        with_tree(handle, OCSD_ERR_NOT_INIT, |t| {
            let print: Arc<dyn Fn(&str) + Send + Sync> = match p_str_print_cb {
                Some(f) => str_print_cb(f, Ctx(p_context)),
                None => Arc::new(|_: &str| {}),
            };
            logger::set_str_callback(logger::StrCallback { tree_id: t.id, print })
        })
    })
}

/// Print a message through the output logger (if there is one).
#[no_mangle]
pub extern "C" fn ocsd_def_errlog_msgout(msg: *const c_char) {
    ffi_guard!((), {
        // SAFETY: the client's message, NULL or NUL-terminated.
        if let Some(m) = unsafe { c_string(msg) } {
            logger::msg_out(&m);
        }
    })
}

/// The last error logged: its code (`OCSD_OK` if none), trace index,
/// channel ID and text.
#[no_mangle]
pub extern "C" fn ocsd_get_last_err(index: *mut ocsd_trc_index_t, chan_id: *mut u8, message: *mut c_char, message_len: c_int) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        let (code, idx, chan, text) = match logger::last_error() {
            Some(e) => (e.code, e.idx, e.chan_id, e.error_string()),
            None => (OCSD_OK, OCSD_BAD_TRC_INDEX, OCSD_BAD_CS_SRC_ID, String::new()),
        };
        if !index.is_null() {
            // SAFETY: checked non-NULL; the client's result location.
            unsafe { *index = idx };
        }
        if !chan_id.is_null() {
            // SAFETY: checked non-NULL; the client's result location.
            unsafe { *chan_id = chan };
        }
        // SAFETY: the client's buffer of `message_len` bytes (NULL / short
        // buffers are skipped by copy_str_to_c).
        unsafe { copy_str_to_c(&text, message, message_len) };
        code
    })
}

/// The text of an error code, as OpenCSD prints it.
#[no_mangle]
pub extern "C" fn ocsd_err_str(err: ocsd_err_t, buffer: *mut c_char, buffer_size: c_int) {
    ffi_guard!((), {
        let text = OcsdError::new(OCSD_ERR_SEV_ERROR, err).error_string();
        // SAFETY: the client's buffer of `buffer_size` bytes (NULL / short
        // buffers are skipped by copy_str_to_c).
        unsafe { copy_str_to_c(&text, buffer, buffer_size) };
    })
}

// ---------------------------------------------------------------------------
// Text of packets and elements

/// The text of a protocol packet (built-in or custom protocol).
#[no_mangle]
pub extern "C" fn ocsd_pkt_str(pkt_protocol: ocsd_trace_protocol_t, p_pkt: *const c_void, buffer: *mut c_char, buffer_size: c_int) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        if buffer.is_null() || buffer_size < 2 {
            return OCSD_ERR_INVALID_PARAM_VAL;
        }
        // SAFETY: checked non-NULL, at least 2 bytes.
        unsafe { *buffer = 0 };
        if is_custom_protocol(pkt_protocol) {
            // SAFETY: the buffer holds `buffer_size` bytes; the packet goes
            // to the factory as is.
            return unsafe { custom_dcd::protocol_to_str(pkt_protocol, p_pkt, buffer, buffer_size) };
        }
        if !builtin::has_packet_callbacks(pkt_protocol) {
            return OCSD_ERR_NO_PROTOCOL;
        }
        if p_pkt.is_null() {
            return OCSD_ERR_INVALID_PARAM_VAL;
        }
        let mut s = String::new();
        // SAFETY: the client's packet struct of `pkt_protocol`, non-NULL.
        let err = unsafe { builtin::builtin_pkt_str(pkt_protocol, p_pkt, &mut s) }.unwrap_or(OCSD_ERR_NO_PROTOCOL);
        if !s.is_empty() {
            // SAFETY: the buffer holds `buffer_size` bytes.
            unsafe { copy_str_to_c(&s, buffer, buffer_size) };
        }
        err
    })
}

/// The text of a generic trace element.
#[no_mangle]
pub extern "C" fn ocsd_gen_elem_str(p_pkt: *const ocsd_generic_trace_elem, buffer: *mut c_char, buffer_size: c_int) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        if buffer.is_null() || buffer_size < 2 || p_pkt.is_null() {
            return OCSD_ERR_INVALID_PARAM_VAL;
        }
        let mut s = String::new();
        // SAFETY: checked non-NULL; the client's element.
        crate::printers::gen_elem::write_elem_str(unsafe { &*p_pkt }, &mut s);
        if !s.is_empty() {
            // SAFETY: the buffer holds `buffer_size` bytes.
            unsafe { copy_str_to_c(&s, buffer, buffer_size) };
        }
        OCSD_OK
    })
}

/// Initialise a generic element: set its type, clear its flags and
/// extended data pointer (other fields are left as they are).
#[no_mangle]
pub extern "C" fn ocsd_gen_elem_init(p_pkt: *mut ocsd_generic_trace_elem, elem_type: ocsd_gen_trc_elem_t) {
    ffi_guard!((), {
        if p_pkt.is_null() {
            return;
        }
        // SAFETY: checked non-NULL; the client's element.
        let e = unsafe { &mut *p_pkt };
        e.set_type(elem_type);
    })
}

// ---------------------------------------------------------------------------
// Memory accessors

/// Change a tree's memory map: `decide` works on its accessor list by
/// OpenCSD's rules and gives the mapper's changes with the result. `create`:
/// the call makes the mapper as OpenCSD does (an add); otherwise a tree
/// without one answers `OCSD_ERR_NOT_INIT`. From one of the tree's own
/// callbacks (OpenCSD allows it) the decision is made at once and the
/// changes wait for the mapper's next read; the first accessor cannot be
/// added there (the decoders have run without memory).
fn change_mem(handle: dcd_tree_handle_t, create: bool, decide: impl FnOnce(&mut AccList) -> (Vec<MapOp>, ocsd_err_t)) -> ocsd_err_t {
    let Some((_, ctl)) = handles::lookup_ctl(handle) else { return OCSD_ERR_INVALID_PARAM_VAL };
    if ctl.busy.load(Ordering::Acquire) {
        let mut m = ctl.mem();
        if !m.has_mapper {
            return if create { OCSD_ERR_INVALID_PARAM_VAL } else { OCSD_ERR_NOT_INIT };
        }
        let (ops, res) = decide(&mut m.list);
        for op in ops {
            ctl.map_queue.push(op);
        }
        return res;
    }
    with_tree(handle, OCSD_ERR_INVALID_PARAM_VAL, |t| {
        let ctl = t.ctl.clone();
        let mut m = ctl.mem();
        if !m.has_mapper {
            if !create {
                return OCSD_ERR_NOT_INIT;
            }
            m.has_mapper = true;
            t.tree.mem_attached = true;
            // OpenCSD's mapper logs through the library error logger
            t.tree.mapper.set_warn(Some(Arc::new(|err, msg: &str| logger::log_error(logger::GEN_INFO, &OcsdError::with_msg(OCSD_ERR_SEV_WARN, err, msg)))));
        }
        let (ops, res) = decide(&mut m.list);
        // (after the changes queued before, e.g. by other trees sharing a
        // file)
        t.tree.mapper.apply_queued();
        for op in ops {
            t.tree.mapper.apply(op);
        }
        res
    })
}

/// One change and its result as [`change_mem`] takes them.
fn one(r: Result<MapOp, ocsd_err_t>) -> (Vec<MapOp>, ocsd_err_t) {
    match r {
        Ok(op) => (vec![op], OCSD_OK),
        Err(e) => (Vec::new(), e),
    }
}

/// Changes and a result as [`change_mem`] takes them.
fn with_result((ops, r): (Vec<MapOp>, Result<(), ocsd_err_t>)) -> (Vec<MapOp>, ocsd_err_t) {
    (ops, r.err().unwrap_or(OCSD_OK))
}

/// Map a client read callback (None: the client gave none) over
/// `[start, end]` in `space`.
fn add_callback(handle: dcd_tree_handle_t, start: ocsd_vaddr_t, end: ocsd_vaddr_t, space: ocsd_mem_space_acc_t, read: Option<crate::mem::ReadFn>) -> ocsd_err_t {
    change_mem(handle, true, |l| match read {
        Some(read) => one(l.add_listed(Accessor { start, end, space, source: Source::Callback { read } })),
        None => (Vec::new(), OCSD_ERR_INVALID_PARAM_VAL),
    })
}

/// Map a whole binary file at `address`.
#[no_mangle]
pub extern "C" fn ocsd_dt_add_binfile_mem_acc(handle: dcd_tree_handle_t, address: ocsd_vaddr_t, mem_space: ocsd_mem_space_acc_t, filepath: *const c_char) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        // SAFETY: the client's path, NULL or NUL-terminated.
        let path = unsafe { c_string(filepath) };
        change_mem(handle, true, |l| {
            let Some(path) = path.filter(|p| !p.is_empty()) else { return (Vec::new(), OCSD_ERR_INVALID_PARAM_VAL) };
            // OpenCSD's one file accessor object per path: the whole file
            let whole = ocsd_file_mem_region_t { file_offset: 0, start_address: address, region_size: 0 };
            with_result(l.add_file_regions(&path, &[whole], mem_space))
        })
    })
}

/// Map regions of a binary file (file offset, address, size each).
#[no_mangle]
pub extern "C" fn ocsd_dt_add_binfile_region_mem_acc(
    handle: dcd_tree_handle_t,
    region_array: *const ocsd_file_mem_region_t,
    num_regions: c_int,
    mem_space: ocsd_mem_space_acc_t,
    filepath: *const c_char,
) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        // SAFETY: the client's path, NULL or NUL-terminated.
        let path = unsafe { c_string(filepath) };
        change_mem(handle, true, |l| {
            if region_array.is_null() || num_regions == 0 {
                return (Vec::new(), OCSD_ERR_INVALID_PARAM_VAL);
            }
            let Some(path) = path.filter(|p| !p.is_empty()) else { return (Vec::new(), OCSD_ERR_INVALID_PARAM_VAL) };
            // (OpenCSD takes the first region whatever the count, and the
            // others while the count is above their index: none when it is
            // negative)
            let n = num_regions.max(1) as usize;
            // SAFETY: the client's array of `num_regions` regions, non-NULL.
            let regions = unsafe { std::slice::from_raw_parts(region_array, n) };
            // the path's file accessor object, made with the first region
            // (or found, when that starts one of its ranges), the others
            // added to it where they fit, then listed
            with_result(l.add_file_regions(&path, regions, mem_space))
        })
    })
}

/// Map a memory buffer (copied) at `address`.
#[no_mangle]
pub extern "C" fn ocsd_dt_add_buffer_mem_acc(
    handle: dcd_tree_handle_t,
    address: ocsd_vaddr_t,
    mem_space: ocsd_mem_space_acc_t,
    p_mem_buffer: *const u8,
    mem_length: u32,
) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        change_mem(handle, true, |l| {
            // a buffer needs at least one opcode's worth of bytes
            if p_mem_buffer.is_null() || mem_length < 4 {
                return (Vec::new(), OCSD_ERR_INVALID_PARAM_VAL);
            }
            // SAFETY: the client's buffer of `mem_length` bytes, non-NULL.
            let data = unsafe { std::slice::from_raw_parts(p_mem_buffer, mem_length as usize) }.to_vec();
            one(l.add_listed(Accessor {
                start: address,
                end: address.wrapping_add(mem_length as u64 - 1),
                space: mem_space,
                source: Source::Buffer { data: Arc::new(data) },
            }))
        })
    })
}

/// Map a client read callback over `[st_address, en_address]`.
#[no_mangle]
pub extern "C" fn ocsd_dt_add_callback_mem_acc(
    handle: dcd_tree_handle_t,
    st_address: ocsd_vaddr_t,
    en_address: ocsd_vaddr_t,
    mem_space: ocsd_mem_space_acc_t,
    p_cb_func: Fn_MemAcc_CB,
    p_context: *const c_void,
) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        add_callback(handle, st_address, en_address, mem_space, p_cb_func.map(|f| mem_acc_cb(f, Ctx(p_context))))
    })
}

/// Map a client read callback (also given the trace ID) over
/// `[st_address, en_address]`.
#[no_mangle]
pub extern "C" fn ocsd_dt_add_callback_trcid_mem_acc(
    handle: dcd_tree_handle_t,
    st_address: ocsd_vaddr_t,
    en_address: ocsd_vaddr_t,
    mem_space: ocsd_mem_space_acc_t,
    p_cb_func: Fn_MemAccID_CB,
    p_context: *const c_void,
) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        add_callback(handle, st_address, en_address, mem_space, p_cb_func.map(|f| mem_acc_id_cb(f, Ctx(p_context))))
    })
}

/// Remove the accessor starting at `st_address` in `mem_space`.
#[no_mangle]
pub extern "C" fn ocsd_dt_remove_mem_acc(handle: dcd_tree_handle_t, st_address: ocsd_vaddr_t, mem_space: ocsd_mem_space_acc_t) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        change_mem(handle, false, |l| one(l.remove_listed(st_address, mem_space)))
    })
}

/// Log the mapped memory ranges through the library logger (info level),
/// from the tree's accessor list (so also from inside its callbacks, as
/// OpenCSD allows).
#[no_mangle]
pub extern "C" fn ocsd_tl_log_mapped_mem_ranges(handle: dcd_tree_handle_t) {
    ffi_guard!((), {
        let Some((_, ctl)) = handles::lookup_ctl(handle) else { return };
        let lines = {
            let mut m = ctl.mem();
            if !m.has_mapper {
                return;
            }
            m.list.describe_each()
        };
        logger::log_message(logger::GEN_INFO, OCSD_ERR_SEV_INFO, "Mapped Memory Accessors\n");
        for mut s in lines {
            s.push('\n');
            logger::log_message(logger::GEN_INFO, OCSD_ERR_SEV_INFO, &s);
        }
        logger::log_message(logger::GEN_INFO, OCSD_ERR_SEV_INFO, "========================\n");
    })
}

/// Memory access caching: on with these sizes (refused, with an error
/// logged, outside OpenCSD's limits), or off.
#[no_mangle]
pub extern "C" fn ocsd_dt_set_mem_acc_cacheing(handle: dcd_tree_handle_t, enable: c_int, page_size: u16, nr_pages: c_int) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        let (enable, page_size, num_pages) = (enable != 0, page_size as usize, nr_pages.max(0) as usize);
        let mut refused = None;
        let res = change_mem(handle, false, |_| match (enable, MemMapper::check_caching(page_size, num_pages)) {
            (true, Err(msg)) => {
                refused = Some(msg);
                (Vec::new(), OCSD_ERR_INVALID_PARAM_VAL)
            }
            _ => (vec![MapOp::Caching { enable, page_size, num_pages }], OCSD_OK),
        });
        // (logged with the accessor list let go: the client's string
        // callback may call the library)
        if let Some(msg) = refused {
            logger::log_error(logger::GEN_INFO, &OcsdError::with_msg(OCSD_ERR_SEV_ERROR, OCSD_ERR_INVALID_PARAM_VAL, msg));
        }
        res
    })
}

// ---------------------------------------------------------------------------
// Library printers

/// Print the deformatter's raw frames (`OCSD_DFRMTR_PACKED_RAW_OUT` /
/// `OCSD_DFRMTR_UNPACKED_RAW_OUT`) through the library logger.
#[no_mangle]
pub extern "C" fn ocsd_dt_set_raw_frame_printer(handle: dcd_tree_handle_t, flags: c_int) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        with_tree(handle, OCSD_ERR_NOT_INIT, |t| {
            let Some(d) = t.tree.deformatter_mut() else { return OCSD_ERR_DCDT_NO_FORMATTER };
            let cfg = d.config_flags() | (flags as u32 & (OCSD_DFRMTR_PACKED_RAW_OUT | OCSD_DFRMTR_UNPACKED_RAW_OUT));
            let _ = t.tree.configure_deformatter(cfg);
            if t.has_raw_printer {
                // the deformatter's raw frame output takes one printer
                return OCSD_ERR_ATTACH_TOO_MANY;
            }
            t.tree.set_raw_monitor(Some(Box::new(FramePrinter { enabled: logger::has_output() })));
            t.has_raw_printer = true;
            OCSD_OK
        })
    })
}

/// Print the generic elements through the library logger (replaces the
/// element callback).
#[no_mangle]
pub extern "C" fn ocsd_dt_set_gen_elem_printer(handle: dcd_tree_handle_t) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        if handles::lookup(handle).is_none() {
            return OCSD_ERR_NOT_INIT;
        }
        set_elem_output(handle, handles::SinkReq::Printer(logger::has_output()))
    })
}

/// Print the packets of trace ID `cs_id` through the library logger: as the
/// packet monitor (`monitor` != 0) or as the packet sink.
#[no_mangle]
pub extern "C" fn ocsd_dt_set_pkt_protocol_printer(handle: dcd_tree_handle_t, cs_id: u8, monitor: c_int) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        with_tree(handle, OCSD_ERR_NOT_INIT, |t| {
            let Some(dec) = t.tree.decoder_for_cs_id(cs_id) else { return OCSD_ERR_INVALID_PARAM_VAL };
            if !builtin::has_packet_callbacks(dec.protocol()) {
                // no library printer for this protocol
                return OCSD_ERR_INVALID_PARAM_VAL;
            }
            let printer = Box::new(PacketPrinter { id: cs_id, enabled: logger::has_output(), last_resp: OCSD_RESP_CONT });
            if monitor != 0 {
                dec.set_monitor(Some(printer));
                OCSD_OK
            } else {
                dec.set_sink(Some(printer))
            }
        })
    })
}

// ---------------------------------------------------------------------------
// Custom decoders

/// Register a custom decoder factory under `name`; sets
/// `p_dcd_fact->protocol_id`.
#[no_mangle]
pub extern "C" fn ocsd_register_custom_decoder(name: *const c_char, p_dcd_fact: *mut ocsd_extern_dcd_fact_t) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        // SAFETY: the client's name, NULL or NUL-terminated.
        let Some(name) = (unsafe { c_string(name) }) else { return OCSD_ERR_INVALID_PARAM_VAL };
        if p_dcd_fact.is_null() {
            return OCSD_ERR_INVALID_PARAM_VAL;
        }
        // SAFETY: checked non-NULL; the client's factory struct.
        custom_dcd::register(&name, unsafe { &mut *p_dcd_fact })
    })
}

/// Forget all registered custom decoder factories.
#[no_mangle]
pub extern "C" fn ocsd_deregister_decoders() -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        custom_dcd::deregister_all();
        OCSD_OK
    })
}

/// The text of a custom protocol's packet (through its factory).
#[no_mangle]
pub extern "C" fn ocsd_cust_protocol_to_str(pkt_protocol: ocsd_trace_protocol_t, trc_pkt: *const c_void, buffer: *mut c_char, buflen: c_int) -> ocsd_err_t {
    ffi_guard!(OCSD_ERR_FAIL, {
        if !is_custom_protocol(pkt_protocol) || custom_dcd::find_by_protocol(pkt_protocol).is_none() {
            return OCSD_ERR_NO_PROTOCOL;
        }
        if buffer.is_null() || buflen < 1 {
            return OCSD_ERR_INVALID_PARAM_VAL;
        }
        // SAFETY: the client's buffer of `buflen` bytes, non-NULL; the
        // packet goes to the factory as is.
        unsafe { custom_dcd::protocol_to_str(pkt_protocol, trc_pkt, buffer, buflen) }
    })
}
