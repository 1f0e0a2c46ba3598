//! Custom decoders written in C: the factory registry
//! (`ocsd_register_custom_decoder`, `ocsd_deregister_decoders`,
//! `ocsd_cust_protocol_to_str`), the [`CustomDecoderOps`] implementation
//! over a C decoder instance, and the library callbacks handed to it.
//!
//! The safe part (the tree-side decoder and the services a decoder may call)
//! is [`crate::dcd_tree::custom`]; this file holds only the raw-pointer
//! calls. Each library callback gets as its `lib_context` the address of a
//! heap [`LibCtx`] owned by the decoder; while the library is inside the
//! decoder's `fn_data_in`, the context points at the services of that call.

use std::cell::Cell;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use super::custom::*;
use crate::abi::gen_elem::ocsd_generic_trace_elem;
use crate::abi::*;
use crate::common::OcsdError;
use crate::dcd_tree::custom::{CustomDecoder, CustomDecoderOps, CustomServices};

// ---------------------------------------------------------------------------
// Factory registry

struct Registry {
    factories: Vec<(String, ocsd_extern_dcd_fact_t)>,
    /// Next custom protocol ID; like OpenCSD's it is never reset, not even
    /// by `ocsd_deregister_decoders`.
    next_protocol: ocsd_trace_protocol_t,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry { factories: Vec::new(), next_protocol: OCSD_PROTOCOL_CUSTOM_0 });

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// `ocsd_register_custom_decoder`: on success the factory's `protocol_id`
/// is set (in the caller's struct too).
pub fn register(name: &str, fact: &mut ocsd_extern_dcd_fact_t) -> ocsd_err_t {
    let mut r = registry();
    if crate::dcd_tree::registry::protocol_for_name(name).is_some() || r.factories.iter().any(|(n, _)| n == name) {
        return OCSD_ERR_DCDREG_NAME_REPEAT;
    }
    if fact.createDecoder.is_none() || fact.destroyDecoder.is_none() || fact.csidFromConfig.is_none() {
        return OCSD_ERR_INVALID_PARAM_VAL;
    }
    let id = r.next_protocol;
    if r.next_protocol < OCSD_PROTOCOL_END {
        r.next_protocol += 1;
    }
    fact.protocol_id = id;
    if id >= OCSD_PROTOCOL_END {
        return OCSD_ERR_DCDREG_TOOMANY;
    }
    r.factories.push((name.to_string(), *fact));
    OCSD_OK
}

/// `ocsd_deregister_decoders`: forget every custom factory (decoders
/// already created keep working and are destroyed with their tree).
pub fn deregister_all() {
    registry().factories.clear();
}

pub fn find_by_name(name: &str) -> Option<ocsd_extern_dcd_fact_t> {
    registry().factories.iter().find(|(n, _)| n == name).map(|(_, f)| *f)
}

pub fn find_by_protocol(protocol: ocsd_trace_protocol_t) -> Option<ocsd_extern_dcd_fact_t> {
    registry().factories.iter().find(|(_, f)| f.protocol_id == protocol).map(|(_, f)| *f)
}

/// `ocsd_cust_protocol_to_str`: the factory's `pktToString`, or OpenCSD's
/// placeholder text when it has none.
///
/// # Safety
/// `buffer` must be writable for `buflen` (> 0) bytes; `pkt` is passed to
/// the client's function as is.
pub unsafe fn protocol_to_str(protocol: ocsd_trace_protocol_t, pkt: *const c_void, buffer: *mut c_char, buflen: c_int) -> ocsd_err_t {
    if !(OCSD_PROTOCOL_CUSTOM_0..OCSD_PROTOCOL_END).contains(&protocol) {
        return OCSD_ERR_NO_PROTOCOL;
    }
    let Some(fact) = find_by_protocol(protocol) else { return OCSD_ERR_NO_PROTOCOL };
    match fact.pktToString {
        Some(f) => {
            // SAFETY: the client's function, with the caller's buffer.
            unsafe { f(pkt, buffer, buflen) };
        }
        None => {
            let text = format!("CUSTOM_PKT[]: print unsupported; protocol({}).", protocol);
            // SAFETY: the caller guarantees `buffer` holds `buflen` bytes.
            unsafe { super::copy_str_to_c(&text, buffer, buflen) };
        }
    }
    OCSD_OK
}

// ---------------------------------------------------------------------------
// A C decoder instance

/// The library context a C decoder passes back in every callback.
pub struct LibCtx {
    /// While the library is inside `fn_data_in`: the address of a
    /// `&mut dyn CustomServices` on the caller's stack; NULL otherwise.
    active: Cell<*mut c_void>,
    /// The callbacks given to `createDecoder` (kept alive for decoders that
    /// keep the pointer rather than a copy).
    callbacks: Cell<ocsd_extern_dcd_cb_fns>,
}

/// [`CustomDecoderOps`] over a C decoder instance.
pub struct CDecoderOps {
    inst: ocsd_extern_dcd_inst_t,
    destroy: fnDestroyCustomDecoder,
    ctx: Box<LibCtx>,
}

impl CustomDecoderOps for CDecoderOps {
    fn data_in(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, data: &[u8], services: &mut dyn CustomServices) -> (ocsd_datapath_resp_t, usize) {
        let Some(f) = self.inst.fn_data_in else { return (OCSD_RESP_FATAL_NOT_INIT, 0) };
        let mut svc: &mut dyn CustomServices = services;
        let prev = self.ctx.active.replace(&mut svc as *mut &mut dyn CustomServices as *mut c_void);
        let mut used: u32 = 0;
        // OpenCSD passes no buffer and no count pointer for the non-data
        // operations.
        let (ptr, len, used_ptr) = if op == OCSD_OP_DATA {
            (data.as_ptr(), data.len() as u32, &mut used as *mut u32)
        } else {
            (std::ptr::null(), 0, std::ptr::null_mut())
        };
        // SAFETY: the decoder's own data-in function with its handle; `ptr`
        // holds `len` bytes and `used_ptr` is writable, for the call.
        let resp = unsafe { f(self.inst.decoder_handle, op, index, len, ptr, used_ptr) };
        self.ctx.active.set(prev);
        (resp, (used as usize).min(data.len()))
    }

    fn update_pkt_mon(&mut self, flags: c_int) {
        if let Some(f) = self.inst.fn_update_pkt_mon {
            // SAFETY: the decoder's own function with its handle.
            unsafe { f(self.inst.decoder_handle, flags) };
        }
        let mut cb = self.ctx.callbacks.get();
        cb.packetCBFlags = flags;
        self.ctx.callbacks.set(cb);
    }
}

impl Drop for CDecoderOps {
    fn drop(&mut self) {
        if let Some(d) = self.destroy {
            // SAFETY: the factory's destroy function with the handle its
            // create function returned; called once.
            unsafe { d(self.inst.decoder_handle) };
        }
    }
}

/// Create a decoder of the custom factory `fact` (registered as `name`) for
/// the trace ID `cs_id` found in its configuration.
///
/// # Safety
/// `cfg` is passed to the client's create function as is.
pub unsafe fn create(name: &str, fact: &ocsd_extern_dcd_fact_t, create_flags: c_int, cfg: *const c_void, cs_id: u8) -> Result<CustomDecoder, ocsd_err_t> {
    let Some(create) = fact.createDecoder else { return Err(OCSD_ERR_NOT_INIT) };
    let ctx = Box::new(LibCtx {
        active: Cell::new(std::ptr::null_mut()),
        callbacks: Cell::new(ocsd_extern_dcd_cb_fns {
            fn_gen_elem_out: Some(cb_gen_elem_out),
            fn_log_error: Some(cb_log_error),
            fn_log_msg: Some(cb_log_msg),
            fn_arm_instruction_decode: Some(cb_decode_arm_inst),
            fn_memory_access: Some(cb_mem_access),
            fn_packet_mon: Some(cb_pkt_mon),
            fn_packet_data_sink: Some(cb_pkt_data_sink),
            packetCBFlags: 0,
            lib_context: std::ptr::null(),
        }),
    });
    let lib_context = &*ctx as *const LibCtx as *const c_void;
    let mut cb = ctx.callbacks.get();
    cb.lib_context = lib_context;
    ctx.callbacks.set(cb);
    let mut inst = ocsd_extern_dcd_inst_t::default();
    // SAFETY: the client's create function; the callbacks struct and the
    // instance struct are valid (the callbacks for the decoder's life).
    let err = unsafe { create(create_flags, cfg, ctx.callbacks.as_ptr(), &mut inst) };
    if err != OCSD_OK {
        return Err(err);
    }
    if inst.fn_data_in.is_none() || inst.fn_update_pkt_mon.is_none() || inst.cs_id == 0 || inst.decoder_handle.is_null() || inst.p_decoder_name.is_null() {
        // as OpenCSD: refused, without destroying the instance
        return Err(OCSD_ERR_INVALID_PARAM_VAL);
    }
    // SAFETY: checked non-NULL; the decoder's NUL-terminated name.
    let inst_name = unsafe { CStr::from_ptr(inst.p_decoder_name) }.to_string_lossy().into_owned();
    let ops = Box::new(CDecoderOps { inst, destroy: fact.destroyDecoder, ctx });
    Ok(CustomDecoder::new(name, fact.protocol_id, cs_id, create_flags as u32, &inst_name, inst.cs_id, ops))
}

// ---------------------------------------------------------------------------
// Library callbacks

/// Run `f` with the services of the library call in progress for the
/// decoder whose context is `lib_context`; `default` outside one.
fn with_services<R>(lib_context: *const c_void, default: R, f: impl FnOnce(&mut dyn CustomServices) -> R) -> R {
    if lib_context.is_null() {
        return default;
    }
    // SAFETY: a non-NULL `lib_context` is the LibCtx address this library
    // gave the decoder; the LibCtx lives as long as the decoder.
    let ctx = unsafe { &*(lib_context as *const LibCtx) };
    let p = ctx.active.replace(std::ptr::null_mut());
    if p.is_null() {
        // no library call in progress (or a nested callback)
        return default;
    }
    // SAFETY: `p` points at the `&mut dyn CustomServices` of the
    // `CDecoderOps::data_in` frame below us on the stack; it is taken out
    // of the context while in use, so it is never aliased.
    let svc = unsafe { &mut **(p as *mut &mut dyn CustomServices) };
    let r = catch_unwind(AssertUnwindSafe(|| f(svc)));
    ctx.active.set(p);
    r.unwrap_or(default)
}

unsafe extern "C" fn cb_gen_elem_out(lib_context: *const c_void, index_sop: ocsd_trc_index_t, trc_chan_id: u8, elem: *const ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
    if elem.is_null() {
        return OCSD_RESP_FATAL_INVALID_PARAM;
    }
    // SAFETY: checked non-NULL; the decoder's element, valid for the call.
    let elem = unsafe { &*elem };
    with_services(lib_context, OCSD_RESP_FATAL_NOT_INIT, |s| s.gen_elem_out(index_sop, trc_chan_id, elem))
}

/// A C string argument as text (`None` for NULL).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn c_text(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: non-NULL and NUL-terminated per the contract.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

unsafe extern "C" fn cb_log_error(lib_context: *const c_void, filter_level: ocsd_err_severity_t, code: ocsd_err_t, idx: ocsd_trc_index_t, chan_id: u8, p_msg: *const c_char) {
    // SAFETY: the decoder passes NULL or a message string.
    let msg = unsafe { c_text(p_msg) }.unwrap_or_default();
    let err = OcsdError::at(filter_level, code, idx, chan_id, msg);
    with_services(lib_context, (), |s| s.log_error(&err))
}

unsafe extern "C" fn cb_log_msg(lib_context: *const c_void, filter_level: ocsd_err_severity_t, msg: *const c_char) {
    // SAFETY: the decoder passes NULL or a message string.
    let Some(msg) = (unsafe { c_text(msg) }) else { return };
    with_services(lib_context, (), |s| s.log_msg(filter_level, &msg))
}

unsafe extern "C" fn cb_decode_arm_inst(lib_context: *const c_void, instr_info: *mut ocsd_instr_info) -> ocsd_err_t {
    if instr_info.is_null() {
        return OCSD_ERR_INVALID_PARAM_VAL;
    }
    // SAFETY: checked non-NULL; the decoder's struct, valid for the call.
    let info = unsafe { &mut *instr_info };
    with_services(lib_context, OCSD_ERR_ATTACH_INVALID_PARAM, |s| s.decode_instr(info))
}

unsafe extern "C" fn cb_mem_access(lib_context: *const c_void, address: ocsd_vaddr_t, cs_trace_id: u8, mem_space: ocsd_mem_space_acc_t, num_bytes: *mut u32, p_buffer: *mut u8) -> ocsd_err_t {
    if num_bytes.is_null() {
        return OCSD_ERR_INVALID_PARAM_VAL;
    }
    // SAFETY: checked non-NULL.
    let want = unsafe { *num_bytes } as usize;
    if want > 0 && p_buffer.is_null() {
        return OCSD_ERR_INVALID_PARAM_VAL;
    }
    let buf: &mut [u8] = if want == 0 {
        &mut []
    } else {
        // SAFETY: the decoder's buffer of `*num_bytes` bytes, checked non-NULL.
        unsafe { std::slice::from_raw_parts_mut(p_buffer, want) }
    };
    let res = with_services(lib_context, Err(OCSD_ERR_INVALID_PARAM_VAL), |s| s.mem_access(address, cs_trace_id, mem_space, buf));
    let (err, n) = match res {
        Ok(n) => (OCSD_OK, n),
        Err(e) => (e, 0),
    };
    // SAFETY: checked non-NULL.
    unsafe { *num_bytes = n as u32 };
    err
}

unsafe extern "C" fn cb_pkt_mon(lib_context: *const c_void, op: ocsd_datapath_op_t, index_sop: ocsd_trc_index_t, pkt: *const c_void, size: u32, p_data: *const u8) {
    let raw: &[u8] = if size == 0 || p_data.is_null() {
        &[]
    } else {
        // SAFETY: the decoder's `size` packet bytes, checked non-NULL.
        unsafe { std::slice::from_raw_parts(p_data, size as usize) }
    };
    with_services(lib_context, (), |s| s.pkt_mon(op, index_sop, pkt, raw))
}

unsafe extern "C" fn cb_pkt_data_sink(lib_context: *const c_void, op: ocsd_datapath_op_t, index_sop: ocsd_trc_index_t, pkt: *const c_void) -> ocsd_datapath_resp_t {
    with_services(lib_context, OCSD_RESP_CONT, |s| s.pkt_sink(op, index_sop, pkt))
}
