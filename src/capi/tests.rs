//! C API tests driven from Rust: handles, NULL and bad arguments, text
//! buffers, the WAIT / FLUSH path through a decode stack, custom decoders.

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_uchar, c_void};
use std::ptr::{null, null_mut};
use std::sync::Mutex;

use super::custom::*;
use super::*;
use crate::common::{DecodeCtx, PacketDecoder, PacketOut, PacketProcessor, TracePacket};
use crate::dcd_tree::Stack;
use crate::etmv4::types::{ocsd_etmv4_i_pkt, ETM4_PKT_I_ASYNC, ETM4_PKT_I_NOTSYNC, ETM4_PKT_I_TRACE_INFO};

/// The tests run one at a time: most log through the global logger (whose
/// output some of them capture) or use the decoder registry.
static GLOBAL: Mutex<()> = Mutex::new(());
fn global() -> std::sync::MutexGuard<'static, ()> {
    GLOBAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn buf_str(b: &[c_char]) -> String {
    // SAFETY: test buffers are NUL-terminated by the functions under test.
    unsafe { CStr::from_ptr(b.as_ptr()) }.to_string_lossy().into_owned()
}

#[test]
fn version() {
    let _g = global();
    assert_eq!(ocsd_get_version(), 0x010800);
    // SAFETY: a static NUL-terminated string.
    assert_eq!(unsafe { CStr::from_ptr(ocsd_get_version_str()) }.to_str().unwrap(), "1.8.0");
}

#[test]
fn handles_unknown_null_and_destroyed() {
    let _g = global();
    let bogus = 0xdead_beef_usize as dcd_tree_handle_t;
    for h in [C_API_INVALID_TREE_HANDLE, bogus] {
        let mut n = 7u32;
        assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, 1, [0u8].as_ptr(), &mut n), OCSD_RESP_FATAL_NOT_INIT);
        assert_eq!(ocsd_dt_process_data(h, OCSD_OP_EOT, 0, 0, null(), null_mut()), OCSD_RESP_FATAL_NOT_INIT);
        let name = CString::new("ETMV4I").unwrap();
        let mut id: c_uchar = 0;
        assert_eq!(ocsd_dt_create_decoder(h, name.as_ptr(), 2, [0u8; 64].as_ptr() as *const c_void, &mut id), OCSD_ERR_INVALID_PARAM_VAL);
        assert_eq!(ocsd_dt_remove_decoder(h, 0x10), OCSD_ERR_INVALID_PARAM_VAL);
        assert_eq!(ocsd_dt_attach_packet_callback(h, 0x10, OCSD_C_API_CB_PKT_MON, mon_cb as *mut c_void, null()), OCSD_ERR_INVALID_PARAM_VAL);
        let mut p: *mut ocsd_decode_stats_t = null_mut();
        assert_eq!(ocsd_dt_get_decode_stats(h, 0x10, &mut p), OCSD_ERR_INVALID_PARAM_VAL);
        assert_eq!(ocsd_dt_reset_decode_stats(h, 0x10), OCSD_ERR_INVALID_PARAM_VAL);
        assert_eq!(ocsd_dt_set_gen_elem_outfn(h, Some(elem_cb), null()), OCSD_ERR_INVALID_PARAM_VAL);
        assert_eq!(ocsd_def_errlog_set_strprint_cb(h, null_mut(), None), OCSD_ERR_NOT_INIT);
        assert_eq!(ocsd_dt_add_binfile_mem_acc(h, 0, OCSD_MEM_SPACE_ANY, name.as_ptr()), OCSD_ERR_INVALID_PARAM_VAL);
        assert_eq!(ocsd_dt_add_buffer_mem_acc(h, 0, OCSD_MEM_SPACE_ANY, [0u8; 8].as_ptr(), 8), OCSD_ERR_INVALID_PARAM_VAL);
        assert_eq!(ocsd_dt_add_callback_mem_acc(h, 0, 10, OCSD_MEM_SPACE_ANY, Some(mem_cb), null()), OCSD_ERR_INVALID_PARAM_VAL);
        assert_eq!(ocsd_dt_remove_mem_acc(h, 0, OCSD_MEM_SPACE_ANY), OCSD_ERR_INVALID_PARAM_VAL);
        assert_eq!(ocsd_dt_set_mem_acc_cacheing(h, 1, 2048, 16), OCSD_ERR_INVALID_PARAM_VAL);
        assert_eq!(ocsd_dt_set_raw_frame_printer(h, 0x18), OCSD_ERR_NOT_INIT);
        assert_eq!(ocsd_dt_set_gen_elem_printer(h), OCSD_ERR_NOT_INIT);
        assert_eq!(ocsd_dt_set_pkt_protocol_printer(h, 0x10, 1), OCSD_ERR_NOT_INIT);
        ocsd_tl_log_mapped_mem_ranges(h);
        ocsd_destroy_dcd_tree(h);
    }

    let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    assert!(!h.is_null());
    assert_eq!(ocsd_dt_set_gen_elem_outfn(h, Some(elem_cb), null()), OCSD_OK);
    ocsd_destroy_dcd_tree(h);
    // destroyed: refused, and destroying again is harmless
    assert_eq!(ocsd_dt_set_gen_elem_outfn(h, Some(elem_cb), null()), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_FLUSH, 0, 0, null(), null_mut()), OCSD_RESP_FATAL_NOT_INIT);
    ocsd_destroy_dcd_tree(h);
    // a new tree never gets an old handle
    let h2 = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    assert!(!h2.is_null() && h2 != h);
    ocsd_destroy_dcd_tree(h2);
    // an unknown tree type is a single source, as in OpenCSD 1.8.0
    let h3 = ocsd_create_dcd_tree(7, 0);
    assert!(!h3.is_null());
    assert_eq!(ocsd_dt_set_raw_frame_printer(h3, OCSD_DFRMTR_PACKED_RAW_OUT as c_int), OCSD_ERR_DCDT_NO_FORMATTER);
    ocsd_destroy_dcd_tree(h3);
}

#[test]
fn tree_argument_checks() {
    let _g = global();
    let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    let unknown = CString::new("NO_SUCH_DECODER").unwrap();
    let mut id: c_uchar = 0;
    let cfg = [0u8; 256];
    assert_eq!(ocsd_dt_create_decoder(h, unknown.as_ptr(), 2, cfg.as_ptr() as *const c_void, &mut id), OCSD_ERR_DCDREG_NAME_UNKNOWN);
    assert_eq!(ocsd_dt_create_decoder(h, null(), 2, cfg.as_ptr() as *const c_void, &mut id), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_create_decoder(h, unknown.as_ptr(), 2, cfg.as_ptr() as *const c_void, null_mut()), OCSD_ERR_INVALID_PARAM_VAL);
    let etm = CString::new("ETMV4I").unwrap();
    assert_eq!(ocsd_dt_create_decoder(h, etm.as_ptr(), 2, null(), &mut id), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_remove_decoder(h, 0), OCSD_ERR_INVALID_ID);
    assert_eq!(ocsd_dt_remove_decoder(h, 0x70), OCSD_ERR_INVALID_ID);
    assert_eq!(ocsd_dt_remove_decoder(h, 0x10), OCSD_OK);
    assert_eq!(ocsd_dt_attach_packet_callback(h, 0x10, OCSD_C_API_CB_PKT_MON, mon_cb as *mut c_void, null()), OCSD_ERR_INVALID_ID);
    let mut p: *mut ocsd_decode_stats_t = null_mut();
    assert_eq!(ocsd_dt_get_decode_stats(h, 0x10, &mut p), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_get_decode_stats(h, 0x10, null_mut()), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_set_gen_elem_outfn(h, None, null()), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_set_pkt_protocol_printer(h, 0x10, 0), OCSD_ERR_INVALID_PARAM_VAL);

    // data path arguments
    let mut n = 99u32;
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, 0, [0u8].as_ptr(), &mut n), OCSD_RESP_FATAL_INVALID_PARAM);
    assert_eq!(n, 0);
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, 16, null(), &mut n), OCSD_RESP_FATAL_INVALID_PARAM);
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, 16, [0u8; 16].as_ptr(), null_mut()), OCSD_RESP_FATAL_INVALID_PARAM);
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_FLUSH, 0, 0, null(), null_mut()), OCSD_RESP_CONT);

    // memory accessors
    assert_eq!(ocsd_dt_remove_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY), OCSD_ERR_NOT_INIT);
    assert_eq!(ocsd_dt_set_mem_acc_cacheing(h, 1, 2048, 16), OCSD_ERR_NOT_INIT);
    assert_eq!(ocsd_dt_add_buffer_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY, null(), 16), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_add_buffer_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY, [0u8; 3].as_ptr(), 3), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_add_buffer_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY, [1u8; 16].as_ptr(), 16), OCSD_OK);
    assert_eq!(ocsd_dt_add_buffer_mem_acc(h, 0x1008, OCSD_MEM_SPACE_EL1N, [1u8; 16].as_ptr(), 16), OCSD_ERR_MEM_ACC_OVERLAP);
    assert_eq!(ocsd_dt_add_callback_mem_acc(h, 0x2000, 0x2fff, OCSD_MEM_SPACE_ANY, None, null()), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_add_callback_trcid_mem_acc(h, 0x3000, 0x2fff, OCSD_MEM_SPACE_ANY, Some(mem_id_cb), null()), OCSD_ERR_MEM_ACC_RANGE_INVALID);
    assert_eq!(ocsd_dt_add_binfile_mem_acc(h, 0x8000, OCSD_MEM_SPACE_ANY, null()), OCSD_ERR_INVALID_PARAM_VAL);
    let missing = CString::new("/no/such/file.bin").unwrap();
    // (OpenCSD 1.8.0's file accessor fails its set-up for a missing file)
    assert_eq!(ocsd_dt_add_binfile_mem_acc(h, 0x8000, OCSD_MEM_SPACE_ANY, missing.as_ptr()), OCSD_ERR_NOT_INIT);
    // accessor ranges must start on a halfword, end before one, and be
    // more than a byte long
    assert_eq!(ocsd_dt_add_buffer_mem_acc(h, 0x4000, OCSD_MEM_SPACE_ANY, [1u8; 5].as_ptr(), 5), OCSD_ERR_MEM_ACC_RANGE_INVALID);
    assert_eq!(ocsd_dt_add_buffer_mem_acc(h, 0x4001, OCSD_MEM_SPACE_ANY, [1u8; 8].as_ptr(), 8), OCSD_ERR_MEM_ACC_RANGE_INVALID);
    assert_eq!(ocsd_dt_add_callback_mem_acc(h, 0x5000, 0x5000, OCSD_MEM_SPACE_ANY, Some(mem_cb), null()), OCSD_ERR_MEM_ACC_RANGE_INVALID);
    assert_eq!(ocsd_dt_add_callback_mem_acc(h, 0x5000, 0x5ffe, OCSD_MEM_SPACE_ANY, Some(mem_cb), null()), OCSD_ERR_MEM_ACC_RANGE_INVALID);
    assert_eq!(ocsd_dt_add_binfile_region_mem_acc(h, null(), 1, OCSD_MEM_SPACE_ANY, missing.as_ptr()), OCSD_ERR_INVALID_PARAM_VAL);
    let r = ocsd_file_mem_region_t { file_offset: 0, start_address: 0x9000, region_size: 4 };
    assert_eq!(ocsd_dt_add_binfile_region_mem_acc(h, &r, 0, OCSD_MEM_SPACE_ANY, missing.as_ptr()), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_set_mem_acc_cacheing(h, 1, 2048, 16), OCSD_OK);
    assert_eq!(ocsd_dt_set_mem_acc_cacheing(h, 0, 0, 0), OCSD_OK);
    assert_eq!(ocsd_dt_set_mem_acc_cacheing(h, 1, 32, 16), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_set_mem_acc_cacheing(h, 1, 2048, 1000), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_remove_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY), OCSD_OK);
    assert_eq!(ocsd_dt_remove_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY), OCSD_ERR_INVALID_PARAM_VAL);

    // printers
    assert_eq!(ocsd_dt_set_raw_frame_printer(h, OCSD_DFRMTR_PACKED_RAW_OUT as c_int), OCSD_OK);
    assert_eq!(ocsd_dt_set_raw_frame_printer(h, OCSD_DFRMTR_PACKED_RAW_OUT as c_int), OCSD_ERR_ATTACH_TOO_MANY);
    assert_eq!(ocsd_dt_set_gen_elem_printer(h), OCSD_OK);
    ocsd_destroy_dcd_tree(h);

    // single source tree without a decoder
    let s = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    let mut n = 5u32;
    assert_eq!(ocsd_dt_process_data(s, OCSD_OP_DATA, 0, 4, [1u8; 4].as_ptr(), &mut n), OCSD_RESP_FATAL_NOT_INIT);
    assert_eq!(n, 0);
    assert_eq!(ocsd_dt_set_raw_frame_printer(s, 0x18), OCSD_ERR_DCDT_NO_FORMATTER);
    assert_eq!(ocsd_dt_remove_decoder(s, 0xff), OCSD_OK);
    ocsd_destroy_dcd_tree(s);
}

#[test]
fn strings_and_buffers() {
    let _g = global();
    let mut buf = [0x55 as c_char; 64];
    // ocsd_err_str: truncated to size - 1, always terminated
    ocsd_err_str(OCSD_ERR_INVALID_PARAM_VAL, buf.as_mut_ptr(), 64);
    assert_eq!(buf_str(&buf), "0x0006 (OCSD_ERR_INVALID_PARAM_VAL) [Invalid value parameter pa");
    let mut small = [0x55 as c_char; 7];
    ocsd_err_str(OCSD_OK, small.as_mut_ptr(), 7);
    assert_eq!(buf_str(&small), "0x0000");
    ocsd_err_str(OCSD_OK, null_mut(), 7);
    ocsd_err_str(OCSD_OK, small.as_mut_ptr(), 0);
    let mut big = [0 as c_char; 256];
    ocsd_err_str(9999, big.as_mut_ptr(), 256);
    assert_eq!(buf_str(&big), "0x270f (unknown); ");

    // ocsd_gen_elem_str
    let mut e = ocsd_generic_trace_elem::default();
    ocsd_gen_elem_init(&mut e, OCSD_GEN_TRC_ELEM_TRACE_ON);
    assert_eq!(ocsd_gen_elem_str(&e, big.as_mut_ptr(), 256), OCSD_OK);
    assert_eq!(buf_str(&big), "OCSD_GEN_TRC_ELEM_TRACE_ON( [begin or filter])");
    assert_eq!(ocsd_gen_elem_str(&e, buf.as_mut_ptr(), 1), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_gen_elem_str(&e, null_mut(), 64), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_gen_elem_str(null(), buf.as_mut_ptr(), 64), OCSD_ERR_INVALID_PARAM_VAL);
    let mut two = [0x55 as c_char; 2];
    assert_eq!(ocsd_gen_elem_str(&e, two.as_mut_ptr(), 2), OCSD_OK);
    assert_eq!(buf_str(&two), "O");
    ocsd_gen_elem_init(null_mut(), OCSD_GEN_TRC_ELEM_TRACE_ON);

    // ocsd_pkt_str
    assert_eq!(ocsd_pkt_str(OCSD_PROTOCOL_ETMV4I, [0u8; 64].as_ptr() as *const c_void, null_mut(), 64), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_pkt_str(OCSD_PROTOCOL_ETMV4I, [0u8; 64].as_ptr() as *const c_void, buf.as_mut_ptr(), 1), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_pkt_str(OCSD_PROTOCOL_ETMV4I, null(), buf.as_mut_ptr(), 64), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_pkt_str(OCSD_PROTOCOL_UNKNOWN, null(), buf.as_mut_ptr(), 64), OCSD_ERR_NO_PROTOCOL);
    assert_eq!(ocsd_pkt_str(OCSD_PROTOCOL_ETMV4D, null(), buf.as_mut_ptr(), 64), OCSD_ERR_NO_PROTOCOL);
    assert_eq!(buf_str(&buf), "");
    assert_eq!(ocsd_pkt_str(OCSD_PROTOCOL_CUSTOM_9, null(), buf.as_mut_ptr(), 64), OCSD_ERR_NO_PROTOCOL);
    assert_eq!(ocsd_cust_protocol_to_str(OCSD_PROTOCOL_CUSTOM_9, null(), buf.as_mut_ptr(), 64), OCSD_ERR_NO_PROTOCOL);
    assert_eq!(ocsd_cust_protocol_to_str(OCSD_PROTOCOL_ETMV3, null(), buf.as_mut_ptr(), 64), OCSD_ERR_NO_PROTOCOL);
}

#[test]
fn logger_and_last_error() {
    let _g = global();
    // (OCSD_ERR_NOT_INIT before any output logger exists is checked by the
    // C tests, in a fresh process)
    assert_eq!(ocsd_def_errlog_init(OCSD_ERR_SEV_INFO, 1), OCSD_OK);
    assert_eq!(ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, null()), OCSD_OK);
    let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    assert_eq!(ocsd_def_errlog_set_strprint_cb(h, null_mut(), Some(str_cb)), OCSD_OK);
    STR_OUT.lock().unwrap().clear();
    let msg = CString::new("hello\n").unwrap();
    ocsd_def_errlog_msgout(msg.as_ptr());
    ocsd_def_errlog_msgout(null());
    assert_eq!(*STR_OUT.lock().unwrap(), "hello\n");

    // an error through the library logger becomes the last error
    assert_eq!(ocsd_dt_add_buffer_mem_acc(h, 0, OCSD_MEM_SPACE_ANY, [0u8; 8].as_ptr(), 8), OCSD_OK);
    assert_eq!(ocsd_dt_set_mem_acc_cacheing(h, 1, 2048, 1), OCSD_ERR_INVALID_PARAM_VAL);
    let (mut idx, mut chan) = (0u32, 0u8);
    let mut text = [0 as c_char; 256];
    assert_eq!(ocsd_get_last_err(&mut idx, &mut chan, text.as_mut_ptr(), 256), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!((idx, chan), (OCSD_BAD_TRC_INDEX, OCSD_BAD_CS_SRC_ID));
    assert_eq!(buf_str(&text), "0x0006 (OCSD_ERR_INVALID_PARAM_VAL) [Invalid value parameter passed to component.]; MemAcc Caching: number of pages too small");
    assert!(STR_OUT.lock().unwrap().starts_with("hello\nGen_Info : 0x0006 (OCSD_ERR_INVALID_PARAM_VAL)"));
    assert_eq!(ocsd_get_last_err(null_mut(), null_mut(), null_mut(), 0), OCSD_ERR_INVALID_PARAM_VAL);

    // mapped ranges are logged at info level
    STR_OUT.lock().unwrap().clear();
    ocsd_tl_log_mapped_mem_ranges(h);
    assert_eq!(
        *STR_OUT.lock().unwrap(),
        "Gen_Info : Mapped Memory Accessors\nGen_Info : BuffAcc; Range::0x00:7; Mem Space::Any\nGen_Info : ========================\n"
    );

    // destroying the tree drops its string callback
    ocsd_destroy_dcd_tree(h);
    STR_OUT.lock().unwrap().clear();
    ocsd_def_errlog_msgout(msg.as_ptr());
    assert_eq!(*STR_OUT.lock().unwrap(), "");
    ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 0);
}

static STR_OUT: Mutex<String> = Mutex::new(String::new());

unsafe extern "C" fn str_cb(_ctx: *const c_void, s: *const c_char, len: c_int) {
    // SAFETY: the library passes a NUL-terminated string.
    let t = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
    assert_eq!(t.len(), len as usize);
    STR_OUT.lock().unwrap().push_str(&t);
}

unsafe extern "C" fn mon_cb(_: *const c_void, _: ocsd_datapath_op_t, _: ocsd_trc_index_t, _: *const c_void, _: u32, _: *const u8) {}

unsafe extern "C" fn elem_cb(_: *const c_void, _: ocsd_trc_index_t, _: u8, _: *const ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
    OCSD_RESP_CONT
}

unsafe extern "C" fn mem_cb(_: *const c_void, _: ocsd_vaddr_t, _: ocsd_mem_space_acc_t, _: u32, _: *mut u8) -> u32 {
    0
}

unsafe extern "C" fn mem_id_cb(_: *const c_void, _: ocsd_vaddr_t, _: ocsd_mem_space_acc_t, _: u8, _: u32, _: *mut u8) -> u32 {
    0
}

// ---------------------------------------------------------------------------
// WAIT / FLUSH through a decode stack, as a C client drives it

/// Test protocol: each byte is a packet; each packet decodes to three
/// elements carrying (byte, 0..3).
#[repr(C)]
struct BytePkt {
    b: u8,
}
impl TracePacket for BytePkt {
    fn write_str(&self, out: &mut String) {
        out.push_str(&format!("BYTE {:02x}", self.b));
    }
}

/// `tail`: a partial packet it sends at EOT.
struct ByteProc {
    tail: Option<u8>,
}
impl PacketProcessor for ByteProc {
    type Packet = BytePkt;
    fn name(&self) -> &str {
        "PKTP_BYTE"
    }
    fn process_data(&mut self, index: ocsd_trc_index_t, data: &[u8], out: &mut dyn PacketOut<BytePkt>) -> (ocsd_datapath_resp_t, usize) {
        for (i, b) in data.iter().enumerate() {
            let r = out.packet(index + i as u32, &BytePkt { b: *b }, std::slice::from_ref(b));
            if !resp_is_cont(r) {
                return (r, i + 1);
            }
        }
        (OCSD_RESP_CONT, data.len())
    }
    fn eot(&mut self, out: &mut dyn PacketOut<BytePkt>) -> ocsd_datapath_resp_t {
        match self.tail {
            Some(b) => out.packet(100, &BytePkt { b }, &[b]),
            None => OCSD_RESP_CONT,
        }
    }
    fn reset(&mut self, _: ocsd_trc_index_t) {}
}

struct ByteDec;
impl PacketDecoder for ByteDec {
    type Packet = BytePkt;
    fn name(&self) -> &str {
        "DCD_BYTE"
    }
    fn uses_memory(&self) -> bool {
        false
    }
    fn packet_in(&mut self, index_sop: ocsd_trc_index_t, pkt: &BytePkt, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        for k in 0..3u64 {
            let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_CUSTOM);
            e.st_addr = pkt.b as u64;
            e.en_addr = k;
            ctx.out.push(index_sop, 0x10, &e);
        }
        OCSD_RESP_CONT
    }
    fn eot(&mut self, ctx: &mut DecodeCtx) -> ocsd_datapath_resp_t {
        ctx.out.push(0, 0x10, &ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_EO_TRACE));
        OCSD_RESP_CONT
    }
    fn reset(&mut self, _: ocsd_trc_index_t) {}
    fn trace_id(&self) -> u8 {
        0x10
    }
}

struct Client {
    seen: Vec<(u64, u64)>,
    calls: u32,
    wait_every: u32,
}

unsafe extern "C" fn client_elem(ctx: *const c_void, _idx: ocsd_trc_index_t, chan: u8, e: *const ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
    // SAFETY: the test passes a &mut Client as context; the element is valid.
    let (c, e) = unsafe { (&mut *(ctx as *mut Client), &*e) };
    assert_eq!(chan, 0x10);
    c.seen.push((e.st_addr, if e.elem_type == OCSD_GEN_TRC_ELEM_EO_TRACE { 99 } else { e.en_addr }));
    c.calls += 1;
    if c.calls % c.wait_every == 0 {
        OCSD_RESP_WAIT
    } else {
        OCSD_RESP_CONT
    }
}

fn add_byte_stack(h: dcd_tree_handle_t) {
    let p = handles::lookup(h).unwrap();
    // SAFETY: a live tree, used by this thread only.
    let t = unsafe { &mut *p.0 };
    let st = Stack::new("BYTES", OCSD_PROTOCOL_CUSTOM_9, 0x10, ByteProc { tail: None }, Some(ByteDec));
    t.tree.add_decoder(Box::new(st)).unwrap();
    t.sync_stats();
}

#[test]
fn wait_and_flush_lose_and_repeat_nothing() {
    let _g = global();
    let data: Vec<u8> = (1..=50).collect();
    for wait_every in [1u32, 2, 3, 7, 1000] {
        let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
        add_byte_stack(h);
        let mut client = Client { seen: Vec::new(), calls: 0, wait_every };
        assert_eq!(ocsd_dt_set_gen_elem_outfn(h, Some(client_elem), &mut client as *mut Client as *const c_void), OCSD_OK);
        // drive as perf's cs-etm decoder does
        let mut processed = 0usize;
        let mut resp = OCSD_RESP_CONT;
        let mut guard = 0;
        while processed < data.len() {
            guard += 1;
            assert!(guard < 10_000);
            if resp_is_cont(resp) {
                let mut n = 0u32;
                resp = ocsd_dt_process_data(h, OCSD_OP_DATA, processed as u32, (data.len() - processed) as u32, data[processed..].as_ptr(), &mut n);
                processed += n as usize;
            } else if resp_is_wait(resp) {
                resp = ocsd_dt_process_data(h, OCSD_OP_FLUSH, 0, 0, null(), null_mut());
            } else {
                panic!("fatal {}", resp);
            }
        }
        while resp_is_wait(resp) {
            resp = ocsd_dt_process_data(h, OCSD_OP_FLUSH, 0, 0, null(), null_mut());
        }
        let mut r = ocsd_dt_process_data(h, OCSD_OP_EOT, 0, 0, null(), null_mut());
        while resp_is_wait(r) {
            r = ocsd_dt_process_data(h, OCSD_OP_FLUSH, 0, 0, null(), null_mut());
        }
        let mut want: Vec<(u64, u64)> = data.iter().flat_map(|b| (0..3).map(move |k| (*b as u64, k))).collect();
        want.push((0, 99));
        assert_eq!(client.seen, want, "wait every {}", wait_every);

        // a processor that keeps no statistics (as OpenCSD's other than
        // ETMv4 / ETE's): NOT_INIT, and the block pointed to stays zero
        let mut p: *mut ocsd_decode_stats_t = null_mut();
        assert_eq!(ocsd_dt_get_decode_stats(h, 0x55, &mut p), OCSD_ERR_NOT_INIT);
        // SAFETY: the tree's statistics block, valid while the tree lives.
        let s = unsafe { &*p };
        assert_eq!((s.version, s.channel_total), (OCSD_VER_NUM, 0));
        assert_eq!(ocsd_dt_reset_decode_stats(h, 0x10), OCSD_OK);
        // packet printers: the full decoder takes the packets
        assert_eq!(ocsd_dt_set_pkt_protocol_printer(h, 0x10, 0), OCSD_ERR_INVALID_PARAM_VAL);
        ocsd_destroy_dcd_tree(h);
    }
}

#[test]
fn eot_answers_as_the_decoder_after_a_wait_on_the_partial_packet() {
    let _g = global();
    // OpenCSD's processor base takes EOT as: the processor's end (its
    // partial packet to the decoder, the client answering WAIT on its
    // second element), then, unless that was fatal, the decoder's EOT,
    // whose answer replaces the WAIT: the decoder sends what it has
    // queued and its end of trace element, the client answering CONT.
    let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    let p = handles::lookup(h).unwrap();
    // SAFETY: a live tree, used by this thread only.
    let t = unsafe { &mut *p.0 };
    let st = Stack::new("TAIL", OCSD_PROTOCOL_CUSTOM_9, 0x10, ByteProc { tail: Some(0xee) }, Some(ByteDec));
    t.tree.add_decoder(Box::new(st)).unwrap();
    let mut client = Client { seen: Vec::new(), calls: 0, wait_every: 5 };
    assert_eq!(ocsd_dt_set_gen_elem_outfn(h, Some(client_elem), &mut client as *mut Client as *const c_void), OCSD_OK);
    let mut n = 0u32;
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, 1, [1u8].as_ptr(), &mut n), OCSD_RESP_CONT);
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_EOT, 0, 0, null(), null_mut()), OCSD_RESP_CONT);
    assert_eq!(client.seen, vec![(1, 0), (1, 1), (1, 2), (0xee, 0), (0xee, 1), (0xee, 2), (0, 99)]);
    ocsd_destroy_dcd_tree(h);
}

#[test]
fn packet_callbacks_on_stack() {
    let _g = global();
    let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    add_byte_stack(h);
    // custom protocol IDs accept callbacks; a full decoder refuses a sink
    assert_eq!(ocsd_dt_attach_packet_callback(h, 0, OCSD_C_API_CB_PKT_SINK, sink_cb as *mut c_void, null()), OCSD_ERR_INVALID_PARAM_TYPE);
    assert_eq!(ocsd_dt_attach_packet_callback(h, 0, OCSD_C_API_CB_PKT_MON, null_mut(), null()), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_attach_packet_callback(h, 0, 5, mon_cb as *mut c_void, null()), OCSD_ERR_INVALID_PARAM_VAL);
    let mut raw: Vec<u8> = Vec::new();
    assert_eq!(ocsd_dt_attach_packet_callback(h, 0, OCSD_C_API_CB_PKT_MON, raw_mon_cb as *mut c_void, &mut raw as *mut Vec<u8> as *const c_void), OCSD_OK);
    let mut n = 0u32;
    // as OpenCSD's, a full decoder refuses to run without an element output
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, 3, [4u8, 5, 6].as_ptr(), &mut n), OCSD_RESP_FATAL_NOT_INIT);
    assert_eq!(raw, vec![4]);
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_RESET, 0, 0, null(), null_mut()), OCSD_RESP_FATAL_NOT_INIT);
    assert_eq!(ocsd_dt_set_gen_elem_outfn(h, Some(elem_cb), null()), OCSD_OK);
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_RESET, 0, 0, null(), null_mut()), OCSD_RESP_CONT);
    raw.clear();
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, 3, [4u8, 5, 6].as_ptr(), &mut n), OCSD_RESP_CONT);
    assert_eq!(n, 3);
    assert_eq!(raw, vec![4, 5, 6]);
    ocsd_destroy_dcd_tree(h);
}

/// An ETMv4 (v8-A) configuration on trace ID 0x10.
fn etmv4_cfg_0x10() -> crate::etmv4::types::ocsd_etmv4_cfg {
    let mut cfg: crate::etmv4::types::ocsd_etmv4_cfg = unsafe { std::mem::zeroed() };
    cfg.reg_idr0 = 0x28000EA1;
    cfg.reg_idr1 = 0x4100F403;
    cfg.reg_idr2 = 0x00000488;
    cfg.reg_traceidr = 0x10;
    cfg.arch_ver = ARCH_V8;
    cfg.core_prof = profile_CortexA;
    cfg
}

/// A single-source tree with an ETMv4 decoder ([`etmv4_cfg_0x10`]) made
/// with `flags`.
fn single_etmv4_tree(flags: u32) -> dcd_tree_handle_t {
    let cfg = etmv4_cfg_0x10();
    let name = CString::new(OCSD_BUILTIN_DCD_ETMV4I).unwrap();
    let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    let mut id = 0u8;
    assert_eq!(ocsd_dt_create_decoder(h, name.as_ptr(), flags as c_int, &cfg as *const _ as *const c_void, &mut id), OCSD_OK);
    h
}

/// An ETMv4 A-sync packet and a trace info packet.
const ASYNC_AND_INFO: [u8; 14] = [0u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x01, 0x00];

/// OpenCSD's decoders check their interfaces on every operation: an ETMv4
/// decoder needs an element output, then memory (the C API creates its
/// memory map with the first accessor); STM needs no memory.
#[test]
fn decoders_need_their_interfaces() {
    let _g = global();
    let async_and_info = ASYNC_AND_INFO;
    let h = single_etmv4_tree(OCSD_CREATE_FLG_FULL_DECODER);
    let mut n = 0u32;
    let run = |n: &mut u32| ocsd_dt_process_data(h, OCSD_OP_DATA, 0, async_and_info.len() as u32, async_and_info.as_ptr(), n);
    // no element output: fatal at the first packet (the 12-byte async)
    assert_eq!(run(&mut n), OCSD_RESP_FATAL_NOT_INIT);
    assert_eq!(n, 12);
    assert_eq!(ocsd_dt_set_gen_elem_outfn(h, Some(elem_cb), null()), OCSD_OK);
    // no memory yet
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_EOT, 0, 0, null(), null_mut()), OCSD_RESP_FATAL_NOT_INIT);
    assert_eq!(ocsd_dt_add_callback_mem_acc(h, 0x1000, 0x1fff, OCSD_MEM_SPACE_ANY, Some(mem_cb), null()), OCSD_OK);
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_RESET, 0, 0, null(), null_mut()), OCSD_RESP_CONT);
    assert_eq!(run(&mut n), OCSD_RESP_CONT);
    assert_eq!(n as usize, async_and_info.len());
    ocsd_destroy_dcd_tree(h);
}

/// OpenCSD's instruction trace decoders refuse data trace, and ETMv4 also
/// LSP0 and conditional non-branch trace: created all the same, they fail
/// every operation, interfaces attached or not, with every refused TRCCONFIGR.
#[test]
fn decoders_refuse_data_trace_configurations() {
    let _g = global();
    use crate::etmv3::ocsd_etmv3_cfg;
    use crate::etmv4::types::ocsd_etmv4_cfg;
    let mut v4: ocsd_etmv4_cfg = unsafe { std::mem::zeroed() };
    v4.reg_idr0 = 0x28000EF9; // data trace (0x18) and LSP0 (0x6) implemented
    v4.reg_idr1 = 0x4100F403;
    v4.reg_idr2 = 0x00000488;
    v4.reg_traceidr = 0x10;
    v4.arch_ver = ARCH_V8;
    v4.core_prof = profile_CortexA;
    let mut v3: ocsd_etmv3_cfg = unsafe { std::mem::zeroed() };
    v3.reg_idr = 0x4114F250;
    v3.reg_trc_id = 0x10;
    v3.arch_ver = ARCH_V7;
    v3.core_prof = profile_CortexA;
    let async_and_info = [0u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x01, 0x00];
    let v3_async = [0u8, 0, 0, 0, 0, 0x80];
    // (TRCCONFIGR / ETMCR, accepted)
    let v4_cases = [(0x1u32, true), (0x3, false), (0x6, false), (0x2_0003, false), (0x101, false), (0x701, false), (0x401, true)];
    let v3_cases = [(0x0u32, true), (0x4, false), (0x8, false), (0x10_0000, false)];
    let cases = v4_cases.iter().map(|&(c, ok)| (true, c, ok)).chain(v3_cases.iter().map(|&(c, ok)| (false, c, ok)));
    for (is_v4, reg, ok) in cases {
        let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
        let (name, cfg, data): (&str, *const c_void, &[u8]) = if is_v4 {
            v4.reg_configr = reg;
            (OCSD_BUILTIN_DCD_ETMV4I, &v4 as *const _ as *const c_void, &async_and_info)
        } else {
            v3.reg_ctrl = reg;
            (OCSD_BUILTIN_DCD_ETMV3, &v3 as *const _ as *const c_void, &v3_async)
        };
        let name = CString::new(name).unwrap();
        let mut id = 0u8;
        assert_eq!(ocsd_dt_create_decoder(h, name.as_ptr(), OCSD_CREATE_FLG_FULL_DECODER as c_int, cfg, &mut id), OCSD_OK);
        assert_eq!(ocsd_dt_set_gen_elem_outfn(h, Some(elem_cb), null()), OCSD_OK);
        assert_eq!(ocsd_dt_add_callback_mem_acc(h, 0x1000, 0x1fff, OCSD_MEM_SPACE_ANY, Some(mem_cb), null()), OCSD_OK);
        let mut n = 0u32;
        let want = if ok { OCSD_RESP_CONT } else { OCSD_RESP_FATAL_NOT_INIT };
        let what = format!("{} config {reg:#x}", if is_v4 { "ETMv4" } else { "ETMv3" });
        assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, data.len() as u32, data.as_ptr(), &mut n), want, "{what}");
        assert_eq!(ocsd_dt_process_data(h, OCSD_OP_EOT, 0, 0, null(), null_mut()), want, "{what}");
        ocsd_destroy_dcd_tree(h);
    }
}

/// A formatted tree takes decoders for the reserved trace IDs, as OpenCSD
/// 1.8.0's: a lookup by a reserved ID finds the decoder of ID 0, and they
/// cannot be removed.
#[test]
fn reserved_trace_ids_on_a_formatted_tree() {
    let _g = global();
    use crate::stm::ocsd_stm_cfg;
    let name = CString::new(OCSD_BUILTIN_DCD_STM).unwrap();
    let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    let create = |id: u32| {
        let cfg = ocsd_stm_cfg { reg_tcsr: id << 16, ..Default::default() };
        let mut out = 0xAAu8;
        let e = ocsd_dt_create_decoder(h, name.as_ptr(), OCSD_CREATE_FLG_FULL_DECODER as c_int, &cfg as *const _ as *const c_void, &mut out);
        (e, out)
    };
    // 0x75 first: looked up by its ID it is not found (slot 0 is empty)
    assert_eq!(create(0x75), (OCSD_OK, 0x75));
    assert_eq!(ocsd_dt_attach_packet_callback(h, 0x75, OCSD_C_API_CB_PKT_MON, mon_cb as *mut c_void, null()), OCSD_ERR_INVALID_ID);
    assert_eq!(create(0x75).0, OCSD_ERR_ATTACH_TOO_MANY);
    assert_eq!(create(0).0, OCSD_OK);
    // now ID 0's decoder answers for 0x75
    assert_eq!(ocsd_dt_attach_packet_callback(h, 0x75, OCSD_C_API_CB_PKT_MON, mon_cb as *mut c_void, null()), OCSD_OK);
    assert_eq!(ocsd_dt_remove_decoder(h, 0x75), OCSD_ERR_INVALID_ID);
    assert_eq!(ocsd_dt_remove_decoder(h, 0), OCSD_ERR_INVALID_ID);
    assert_eq!(create(0x10), (OCSD_OK, 0x10));
    assert_eq!(ocsd_dt_remove_decoder(h, 0x10), OCSD_OK);
    ocsd_destroy_dcd_tree(h);
}

/// As OpenCSD 1.8.0's tree: a decoder whose creation fails after its trace
/// ID's slot is made (bad create flags) leaves the slot taken until the ID
/// is removed; "ETMV4D" is no decoder.
#[test]
fn failed_create_keeps_the_trace_id_taken() {
    let _g = global();
    use crate::stm::ocsd_stm_cfg;
    let name = CString::new(OCSD_BUILTIN_DCD_STM).unwrap();
    let cfg = ocsd_stm_cfg { reg_tcsr: 0x20 << 16, ..Default::default() };
    let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    let mut id = 0u8;
    let create = |flags: u32, id: &mut u8| ocsd_dt_create_decoder(h, name.as_ptr(), flags as c_int, &cfg as *const _ as *const c_void, id);
    assert_eq!(create(0, &mut id), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(create(OCSD_CREATE_FLG_FULL_DECODER, &mut id), OCSD_ERR_ATTACH_TOO_MANY);
    assert_eq!(create(0, &mut id), OCSD_ERR_ATTACH_TOO_MANY);
    assert_eq!(ocsd_dt_remove_decoder(h, 0x20), OCSD_OK);
    assert_eq!(create(OCSD_CREATE_FLG_FULL_DECODER, &mut id), OCSD_OK);
    assert_eq!(id, 0x20);
    let v4d = CString::new("ETMV4D").unwrap();
    assert_eq!(ocsd_dt_create_decoder(h, v4d.as_ptr(), OCSD_CREATE_FLG_FULL_DECODER as c_int, &cfg as *const _ as *const c_void, &mut id), OCSD_ERR_DCDREG_NAME_UNKNOWN);
    ocsd_destroy_dcd_tree(h);
}

unsafe extern "C" fn sink_cb(_: *const c_void, _: ocsd_datapath_op_t, _: ocsd_trc_index_t, _: *const c_void) -> ocsd_datapath_resp_t {
    OCSD_RESP_CONT
}

unsafe extern "C" fn raw_mon_cb(ctx: *const c_void, op: ocsd_datapath_op_t, _: ocsd_trc_index_t, pkt: *const c_void, size: u32, data: *const u8) {
    if op != OCSD_OP_DATA {
        return;
    }
    // SAFETY: the test's Vec context; the packet and bytes valid for the call.
    let (v, pkt, bytes) = unsafe { (&mut *(ctx as *mut Vec<u8>), &*(pkt as *const BytePkt), std::slice::from_raw_parts(data, size as usize)) };
    assert_eq!(bytes, &[pkt.b]);
    v.extend_from_slice(bytes);
}

/// A packet sink recording the operations and packets it is given,
/// answering FATAL to the packet 0xee.
unsafe extern "C" fn fatal_tail_sink(ctx: *const c_void, op: ocsd_datapath_op_t, _: ocsd_trc_index_t, pkt: *const c_void) -> ocsd_datapath_resp_t {
    // SAFETY: the test's Vec context; the packet, when given, a BytePkt
    // valid for the call.
    let (v, b) = unsafe { (&mut *(ctx as *mut Vec<(ocsd_datapath_op_t, u8)>), if pkt.is_null() { 0 } else { (*(pkt as *const BytePkt)).b }) };
    v.push((op, b));
    if b == 0xee {
        OCSD_RESP_FATAL_INVALID_DATA
    } else {
        OCSD_RESP_CONT
    }
}

#[test]
fn packet_sink_is_not_told_eot_after_a_fatal_partial_packet() {
    let _g = global();
    // as OpenCSD's processor base: the sink's answer to EOT replaces the
    // processor's, unless that was fatal, when the sink is not told EOT
    for (tail, want_ops, want_resp) in [
        (false, vec![(OCSD_OP_DATA, 1), (OCSD_OP_EOT, 0)], OCSD_RESP_CONT),
        (true, vec![(OCSD_OP_DATA, 1), (OCSD_OP_DATA, 0xee)], OCSD_RESP_FATAL_INVALID_DATA),
    ] {
        let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
        let p = handles::lookup(h).unwrap();
        // SAFETY: a live tree, used by this thread only.
        let t = unsafe { &mut *p.0 };
        let st: Box<dyn crate::dcd_tree::TraceIdDecoder> = if tail {
            Box::new(Stack::new("TAIL", OCSD_PROTOCOL_CUSTOM_9, 0x10, ByteProc { tail: Some(0xee) }, None::<ByteDec>))
        } else {
            Box::new(Stack::new("BYTES", OCSD_PROTOCOL_CUSTOM_9, 0x10, ByteProc { tail: None }, None::<ByteDec>))
        };
        t.tree.add_decoder(st).unwrap();
        let mut seen: Vec<(ocsd_datapath_op_t, u8)> = Vec::new();
        assert_eq!(
            ocsd_dt_attach_packet_callback(h, 0x10, OCSD_C_API_CB_PKT_SINK, fatal_tail_sink as *mut c_void, &mut seen as *mut _ as *const c_void),
            OCSD_OK
        );
        let mut n = 0u32;
        assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, 1, [1u8].as_ptr(), &mut n), OCSD_RESP_CONT);
        assert_eq!(ocsd_dt_process_data(h, OCSD_OP_EOT, 0, 0, null(), null_mut()), want_resp);
        assert_eq!(seen, want_ops, "partial packet at EOT: {tail}");
        ocsd_destroy_dcd_tree(h);
    }
}

// ---------------------------------------------------------------------------
// Custom decoder through the C API (a C-style decoder written in Rust)

struct EchoDcd {
    cb: ocsd_extern_dcd_cb_fns,
    cs_id: u8,
    flags: c_int,
}

static ECHO_NAME: &[u8] = b"echo_test\0";

unsafe extern "C" fn echo_create(_flags: c_int, cfg: *const c_void, cb: *const ocsd_extern_dcd_cb_fns, inst: *mut ocsd_extern_dcd_inst_t) -> ocsd_err_t {
    // SAFETY: the library passes valid pointers; the test config is a u8.
    let (cs_id, cb, inst) = unsafe { (*(cfg as *const u8), *cb, &mut *inst) };
    let d = Box::new(EchoDcd { cb, cs_id, flags: 0 });
    inst.fn_data_in = Some(echo_data_in);
    inst.fn_update_pkt_mon = Some(echo_update);
    inst.cs_id = cs_id;
    inst.p_decoder_name = ECHO_NAME.as_ptr() as *mut c_char;
    inst.decoder_handle = Box::into_raw(d) as *mut c_void;
    OCSD_OK
}

unsafe extern "C" fn echo_destroy(h: *const c_void) -> ocsd_err_t {
    // SAFETY: the handle from echo_create.
    drop(unsafe { Box::from_raw(h as *mut EchoDcd) });
    OCSD_OK
}

unsafe extern "C" fn echo_csid(cfg: *const c_void, id: *mut c_uchar) -> ocsd_err_t {
    if cfg.is_null() {
        return OCSD_ERR_INVALID_PARAM_VAL;
    }
    // SAFETY: the test config is a u8.
    unsafe { *id = *(cfg as *const u8) };
    OCSD_OK
}

unsafe extern "C" fn echo_update(h: *const c_void, flags: c_int) {
    // SAFETY: the handle from echo_create.
    unsafe { (*(h as *mut EchoDcd)).flags = flags };
}

unsafe extern "C" fn echo_data_in(h: *const c_void, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, size: u32, data: *const u8, used: *mut u32) -> ocsd_datapath_resp_t {
    // SAFETY: the handle from echo_create.
    let d = unsafe { &mut *(h as *mut EchoDcd) };
    if op != OCSD_OP_DATA {
        return OCSD_RESP_CONT;
    }
    // SAFETY: the library passes `size` bytes and a count location.
    let bytes = unsafe { std::slice::from_raw_parts(data, size as usize) };
    let cb = d.cb;
    for (i, b) in bytes.iter().enumerate() {
        let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_CUSTOM);
        e.st_addr = *b as u64;
        if d.flags & OCSD_CUST_DCD_PKT_CB_USE_MON != 0 {
            // SAFETY: the library's callback and context.
            unsafe { cb.fn_packet_mon.unwrap()(cb.lib_context, op, index + i as u32, b as *const u8 as *const c_void, 1, b) };
        }
        let mut m = [0u8; 4];
        let mut n = 4u32;
        // SAFETY: the library's callback and context; `m` holds 4 bytes.
        let err = unsafe { cb.fn_memory_access.unwrap()(cb.lib_context, 0x1000 + *b as u64, d.cs_id, OCSD_MEM_SPACE_ANY, &mut n, m.as_mut_ptr()) };
        assert_eq!(err, OCSD_OK);
        e.en_addr = if n == 4 { u32::from_le_bytes(m) as u64 } else { 0 };
        // SAFETY: the library's callback and context.
        let r = unsafe { cb.fn_gen_elem_out.unwrap()(cb.lib_context, index + i as u32, d.cs_id, &e) };
        assert_eq!(r, OCSD_RESP_CONT);
    }
    let msg = CString::new("echoed").unwrap();
    // SAFETY: the library's callbacks and context.
    unsafe {
        cb.fn_log_msg.unwrap()(cb.lib_context, OCSD_ERR_SEV_INFO, msg.as_ptr());
        cb.fn_log_error.unwrap()(cb.lib_context, OCSD_ERR_SEV_ERROR, OCSD_ERR_BAD_PACKET_SEQ, index, d.cs_id, msg.as_ptr());
        *used = size;
    }
    OCSD_RESP_CONT
}

unsafe extern "C" fn echo_to_str(pkt: *const c_void, buf: *mut c_char, len: c_int) -> ocsd_err_t {
    // SAFETY: the test passes a u8 packet and a buffer of `len` bytes.
    unsafe { copy_str_to_c(&format!("ECHO[{:02x}]", *(pkt as *const u8)), buf, len) };
    OCSD_OK
}

unsafe extern "C" fn collect_elem(ctx: *const c_void, idx: ocsd_trc_index_t, chan: u8, e: *const ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
    // SAFETY: the test's Vec context; a valid element.
    let (v, e) = unsafe { (&mut *(ctx as *mut Vec<(u32, u8, u64, u64)>), &*e) };
    assert_eq!(e.elem_type, OCSD_GEN_TRC_ELEM_CUSTOM);
    v.push((idx, chan, e.st_addr, e.en_addr));
    OCSD_RESP_CONT
}

#[test]
fn custom_decoder_through_c_api() {
    let _g = global();
    // (a component takes the verbosity of when it is made: the decoder's
    // info message below is logged)
    ocsd_def_errlog_init(OCSD_ERR_SEV_INFO, 1);
    ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, null());
    let mut fact = ocsd_extern_dcd_fact_t {
        createDecoder: Some(echo_create),
        destroyDecoder: Some(echo_destroy),
        csidFromConfig: Some(echo_csid),
        pktToString: Some(echo_to_str),
        protocol_id: 0,
    };
    let name = CString::new("RUST_ECHO").unwrap();
    let mut bad = fact;
    bad.destroyDecoder = None;
    assert_eq!(ocsd_register_custom_decoder(name.as_ptr(), &mut bad), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_register_custom_decoder(null(), &mut fact), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_register_custom_decoder(name.as_ptr(), null_mut()), OCSD_ERR_INVALID_PARAM_VAL);
    let etm = CString::new("ETMV4I").unwrap();
    assert_eq!(ocsd_register_custom_decoder(etm.as_ptr(), &mut fact), OCSD_ERR_DCDREG_NAME_REPEAT);
    assert_eq!(ocsd_register_custom_decoder(name.as_ptr(), &mut fact), OCSD_OK);
    assert!(is_custom_protocol(fact.protocol_id));
    assert_eq!(ocsd_register_custom_decoder(name.as_ptr(), &mut fact), OCSD_ERR_DCDREG_NAME_REPEAT);

    let mut buf = [0 as c_char; 32];
    let pkt = 0xabu8;
    assert_eq!(ocsd_pkt_str(fact.protocol_id, &pkt as *const u8 as *const c_void, buf.as_mut_ptr(), 32), OCSD_OK);
    assert_eq!(buf_str(&buf), "ECHO[ab]");
    assert_eq!(ocsd_cust_protocol_to_str(fact.protocol_id, &pkt as *const u8 as *const c_void, buf.as_mut_ptr(), 4), OCSD_OK);
    assert_eq!(buf_str(&buf), "ECH");

    let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    let mut id: c_uchar = 0;
    let cfg = 0x22u8;
    assert_eq!(ocsd_dt_create_decoder(h, name.as_ptr(), OCSD_CREATE_FLG_FULL_DECODER as c_int, null(), &mut id), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_create_decoder(h, name.as_ptr(), OCSD_CREATE_FLG_FULL_DECODER as c_int, &cfg as *const u8 as *const c_void, &mut id), OCSD_OK);
    assert_eq!(id, 0x22);
    assert_eq!(ocsd_dt_create_decoder(h, name.as_ptr(), OCSD_CREATE_FLG_FULL_DECODER as c_int, &cfg as *const u8 as *const c_void, &mut id), OCSD_ERR_ATTACH_TOO_MANY);
    let mut elems: Vec<(u32, u8, u64, u64)> = Vec::new();
    assert_eq!(ocsd_dt_set_gen_elem_outfn(h, Some(collect_elem), &mut elems as *mut _ as *const c_void), OCSD_OK);
    let mem: Vec<u8> = (0..=255u8).collect();
    assert_eq!(ocsd_dt_add_buffer_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY, mem.as_ptr(), 256), OCSD_OK);
    let mut raw: Vec<u8> = Vec::new();
    assert_eq!(ocsd_dt_attach_packet_callback(h, 0x22, OCSD_C_API_CB_PKT_MON, echo_mon as *mut c_void, &mut raw as *mut Vec<u8> as *const c_void), OCSD_OK);
    let mut p: *mut ocsd_decode_stats_t = null_mut();
    assert_eq!(ocsd_dt_get_decode_stats(h, 0x22, &mut p), OCSD_ERR_INVALID_PARAM_VAL);
    assert_eq!(ocsd_dt_set_pkt_protocol_printer(h, 0x22, 1), OCSD_ERR_INVALID_PARAM_VAL);

    assert_eq!(ocsd_def_errlog_set_strprint_cb(h, null_mut(), Some(str_cb)), OCSD_OK);
    STR_OUT.lock().unwrap().clear();
    let mut n = 0u32;
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 100, 2, [3u8, 4].as_ptr(), &mut n), OCSD_RESP_CONT);
    assert_eq!(n, 2);
    assert_eq!(elems, vec![(100, 0x22, 3, 0x06050403), (101, 0x22, 4, 0x07060504)]);
    assert_eq!(raw, vec![3, 4]);
    assert_eq!(
        *STR_OUT.lock().unwrap(),
        "echo_test_0034 : echoedecho_test_0034 : 0x0013 (OCSD_ERR_BAD_PACKET_SEQ) [Bad packet sequence]; TrcIdx=100; CS ID=22; echoed"
    );
    let (mut idx, mut chan) = (0u32, 0u8);
    assert_eq!(ocsd_get_last_err(&mut idx, &mut chan, null_mut(), 0), OCSD_ERR_BAD_PACKET_SEQ);
    assert_eq!((idx, chan), (100, 0x22));
    ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 0);

    assert_eq!(ocsd_dt_remove_decoder(h, 0x22), OCSD_OK);
    assert_eq!(ocsd_dt_create_decoder(h, name.as_ptr(), OCSD_CREATE_FLG_PACKET_PROC as c_int, &cfg as *const u8 as *const c_void, &mut id), OCSD_OK);
    ocsd_destroy_dcd_tree(h);

    assert_eq!(ocsd_deregister_decoders(), OCSD_OK);
    assert_eq!(ocsd_pkt_str(fact.protocol_id, &pkt as *const u8 as *const c_void, buf.as_mut_ptr(), 32), OCSD_ERR_NO_PROTOCOL);
    let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    assert_eq!(ocsd_dt_create_decoder(h, name.as_ptr(), 2, &cfg as *const u8 as *const c_void, &mut id), OCSD_ERR_DCDREG_NAME_UNKNOWN);
    ocsd_destroy_dcd_tree(h);
}

unsafe extern "C" fn echo_mon(ctx: *const c_void, op: ocsd_datapath_op_t, _: ocsd_trc_index_t, pkt: *const c_void, size: u32, data: *const u8) {
    if op != OCSD_OP_DATA {
        return;
    }
    // SAFETY: the test's Vec context; the decoder's packet and bytes.
    let (v, pkt, bytes) = unsafe { (&mut *(ctx as *mut Vec<u8>), *(pkt as *const u8), std::slice::from_raw_parts(data, size as usize)) };
    assert_eq!(bytes, &[pkt]);
    v.extend_from_slice(bytes);
}

/// The statistics block `ocsd_dt_get_decode_stats` hands out stays live, as
/// OpenCSD's pointer into its packet processor's block: data processed and
/// a reset afterwards show through it without another call.
#[test]
fn decode_stats_block_is_live() {
    let _g = global();
    let async_and_info = ASYNC_AND_INFO;
    let h = single_etmv4_tree(OCSD_CREATE_FLG_PACKET_PROC);
    assert_eq!(ocsd_dt_attach_packet_callback(h, 0x10, OCSD_C_API_CB_PKT_SINK, sink_cb as *mut c_void, null()), OCSD_OK);
    let mut p: *mut ocsd_decode_stats_t = null_mut();
    assert_eq!(ocsd_dt_get_decode_stats(h, 0x10, &mut p), OCSD_OK);
    assert_eq!(unsafe { (*p).channel_total }, 0);
    let mut n = 0u32;
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, async_and_info.len() as u32, async_and_info.as_ptr(), &mut n), OCSD_RESP_CONT);
    assert_eq!(unsafe { (*p).channel_total }, async_and_info.len() as u64);
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 14, async_and_info.len() as u32, async_and_info.as_ptr(), &mut n), OCSD_RESP_CONT);
    assert_eq!(unsafe { (*p).channel_total }, 2 * async_and_info.len() as u64);
    assert_eq!(ocsd_dt_reset_decode_stats(h, 0x10), OCSD_OK);
    assert_eq!(unsafe { (*p).channel_total }, 0);
    // the same block again
    let mut q: *mut ocsd_decode_stats_t = null_mut();
    assert_eq!(ocsd_dt_get_decode_stats(h, 0x10, &mut q), OCSD_OK);
    assert_eq!(p, q);
    ocsd_destroy_dcd_tree(h);
}

/// What a packet sink saw of the statistics from inside its callback.
struct StatsSeen {
    tree: dcd_tree_handle_t,
    held: *const ocsd_decode_stats_t,
    /// (packet type, get's answer, channel_total, unsynced, held block's channel_total)
    seen: Vec<(u32, ocsd_err_t, u64, u64, u64)>,
    reset_at: Option<usize>,
}

unsafe extern "C" fn stats_sink_cb(ctx: *const c_void, op: ocsd_datapath_op_t, _: ocsd_trc_index_t, pkt: *const c_void) -> ocsd_datapath_resp_t {
    if op != OCSD_OP_DATA {
        return OCSD_RESP_CONT;
    }
    // SAFETY: the test's StatsSeen; the packet is an ETMv4 packet, valid for the call.
    let (c, pkt) = unsafe { (&mut *(ctx as *mut StatsSeen), &*(pkt as *const ocsd_etmv4_i_pkt)) };
    if c.reset_at == Some(c.seen.len()) {
        assert_eq!(ocsd_dt_reset_decode_stats(c.tree, 0x10), OCSD_OK);
    }
    let mut p: *mut ocsd_decode_stats_t = null_mut();
    let err = ocsd_dt_get_decode_stats(c.tree, 0x10, &mut p);
    // SAFETY: blocks the library handed out, valid while the tree lives.
    let (total, unsynced) = if err == OCSD_OK { unsafe { ((*p).channel_total, (*p).channel_unsynced) } } else { (u64::MAX, u64::MAX) };
    let held = unsafe { (*c.held).channel_total };
    c.seen.push((pkt.type_ as u32, err, total, unsynced, held));
    OCSD_RESP_CONT
}

/// As OpenCSD's block, the statistics are live inside the tree's own
/// callbacks: asked for there, they answer with the counts at that moment
/// (the bytes of earlier data blocks, the unsynchronised bytes dropped
/// before the packet being given), and a block held from before shows the
/// same; a reset from a callback zeroes them.
#[test]
fn decode_stats_from_inside_callbacks() {
    let _g = global();
    let h = single_etmv4_tree(OCSD_CREATE_FLG_PACKET_PROC);
    let mut held: *mut ocsd_decode_stats_t = null_mut();
    assert_eq!(ocsd_dt_get_decode_stats(h, 0x10, &mut held), OCSD_OK);
    let mut c = StatsSeen { tree: h, held, seen: Vec::new(), reset_at: None };
    assert_eq!(ocsd_dt_attach_packet_callback(h, 0x10, OCSD_C_API_CB_PKT_SINK, stats_sink_cb as *mut c_void, &mut c as *mut StatsSeen as *const c_void), OCSD_OK);
    let mut first = vec![0x11u8, 0x22, 0x33];
    first.extend_from_slice(&ASYNC_AND_INFO);
    let mut n = 0u32;
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, first.len() as u32, first.as_ptr(), &mut n), OCSD_RESP_CONT);
    let second = ASYNC_AND_INFO;
    c.reset_at = Some(c.seen.len() + 1);
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, n, second.len() as u32, second.as_ptr(), &mut n), OCSD_RESP_CONT);
    assert_eq!(
        c.seen,
        vec![
            // the first block: 3 bytes dropped before the not-sync packet,
            // nothing counted as processed until the block is done
            (ETM4_PKT_I_NOTSYNC as u32, OCSD_OK, 0, 3, 0),
            (ETM4_PKT_I_ASYNC as u32, OCSD_OK, 0, 3, 0),
            (ETM4_PKT_I_TRACE_INFO as u32, OCSD_OK, 0, 3, 0),
            // the second: the first block's bytes, until the reset
            (ETM4_PKT_I_ASYNC as u32, OCSD_OK, first.len() as u64, 3, first.len() as u64),
            (ETM4_PKT_I_TRACE_INFO as u32, OCSD_OK, 0, 0, 0),
        ]
    );
    // SAFETY: the block handed out before, valid while the tree lives.
    assert_eq!(unsafe { (*held).channel_total }, second.len() as u64);
    ocsd_destroy_dcd_tree(h);
}

/// Statistics are looked up as OpenCSD's tree looks up a decoder: by the
/// trace ID on a formatted tree, and in slot 0 for an ID that is not a
/// valid source ID there (reserved ones, 0x80 and above) and for any ID on
/// a single-source tree. Only ETMv4 / ETE processors keep statistics: an
/// STM decoder's block is NOT_INIT (and stays zero).
#[test]
fn decode_stats_lookup_follows_the_tree() {
    let _g = global();
    let etm4 = CString::new(OCSD_BUILTIN_DCD_ETMV4I).unwrap();
    // formatted: a decoder for ID 0 (reserved, taken as OpenCSD takes it)
    let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    let mut cfg = etmv4_cfg_0x10();
    cfg.reg_traceidr = 0;
    let mut id = 0xffu8;
    assert_eq!(ocsd_dt_create_decoder(h, etm4.as_ptr(), OCSD_CREATE_FLG_PACKET_PROC as c_int, &cfg as *const _ as *const c_void, &mut id), OCSD_OK);
    assert_eq!(id, 0);
    let mut p: *mut ocsd_decode_stats_t = null_mut();
    let mut q: *mut ocsd_decode_stats_t = null_mut();
    assert_eq!(ocsd_dt_get_decode_stats(h, 0, &mut p), OCSD_OK);
    for other in [0x7f, 0x90, 0xff] {
        assert_eq!(ocsd_dt_get_decode_stats(h, other, &mut q), OCSD_OK, "ID {other:#x}");
        assert_eq!(p, q);
    }
    assert_eq!(ocsd_dt_get_decode_stats(h, 0x10, &mut q), OCSD_ERR_INVALID_PARAM_VAL);
    ocsd_destroy_dcd_tree(h);
    // single source: any ID answers with the one decoder
    let h = single_etmv4_tree(OCSD_CREATE_FLG_PACKET_PROC);
    assert_eq!(ocsd_dt_get_decode_stats(h, 0x10, &mut p), OCSD_OK);
    assert_eq!(ocsd_dt_get_decode_stats(h, 0x33, &mut q), OCSD_OK);
    assert_eq!(p, q);
    ocsd_destroy_dcd_tree(h);
    // STM: no statistics kept, a zero block pointed to
    let h = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    let stm = CString::new(OCSD_BUILTIN_DCD_STM).unwrap();
    let mut scfg: crate::stm::types::ocsd_stm_cfg = unsafe { std::mem::zeroed() };
    scfg.reg_tcsr = 0x20 << 16;
    assert_eq!(ocsd_dt_create_decoder(h, stm.as_ptr(), OCSD_CREATE_FLG_PACKET_PROC as c_int, &scfg as *const _ as *const c_void, &mut id), OCSD_OK);
    assert_eq!(ocsd_dt_attach_packet_callback(h, 0x20, OCSD_C_API_CB_PKT_SINK, sink_cb as *mut c_void, null()), OCSD_OK);
    let data = [0xffu8; 32];
    let mut n = 0u32;
    assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, data.len() as u32, data.as_ptr(), &mut n), OCSD_RESP_CONT);
    p = null_mut();
    assert_eq!(ocsd_dt_get_decode_stats(h, 0x20, &mut p), OCSD_ERR_NOT_INIT);
    assert!(!p.is_null());
    // SAFETY: the block the library pointed to, valid while the tree lives.
    let s = unsafe { &*p };
    assert_eq!((s.version, s.channel_total, s.channel_unsynced, s.bad_header_errs), (OCSD_VER_NUM, 0, 0, 0));
    assert_eq!(ocsd_dt_reset_decode_stats(h, 0x20), OCSD_OK);
    ocsd_destroy_dcd_tree(h);
}

/// OpenCSD's components take the logger's verbosity when they are made:
/// raising it afterwards does not bring out a decoder's warnings (a bad
/// packet), while a decoder made after the change logs them.
#[test]
fn components_keep_the_verbosity_they_were_made_with() {
    let _g = global();
    assert_eq!(ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 1), OCSD_OK);
    assert_eq!(ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, null()), OCSD_OK);
    // A-sync, trace info, then a reserved header: a bad packet, logged by
    // the decoder at warning level
    let mut data = ASYNC_AND_INFO.to_vec();
    data.extend_from_slice(&[0x08, 0xf7]);
    let run = |h: dcd_tree_handle_t| {
        assert_eq!(ocsd_dt_set_gen_elem_outfn(h, Some(elem_cb), null()), OCSD_OK);
        assert_eq!(ocsd_dt_add_buffer_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY, [0u8; 8].as_ptr(), 8), OCSD_OK);
        assert_eq!(ocsd_def_errlog_set_strprint_cb(h, null_mut(), Some(str_cb)), OCSD_OK);
        STR_OUT.lock().unwrap().clear();
        let mut n = 0u32;
        ocsd_dt_process_data(h, OCSD_OP_DATA, 0, data.len() as u32, data.as_ptr(), &mut n);
        let out = STR_OUT.lock().unwrap().clone();
        ocsd_destroy_dcd_tree(h);
        out
    };
    let before = single_etmv4_tree(OCSD_CREATE_FLG_FULL_DECODER);
    assert_eq!(ocsd_def_errlog_init(OCSD_ERR_SEV_WARN, 0), OCSD_OK);
    let after = single_etmv4_tree(OCSD_CREATE_FLG_FULL_DECODER);
    let (quiet, told) = (run(before), run(after));
    ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 0);
    assert_eq!(quiet, "");
    assert!(told.starts_with("DCD_ETMV4 : 0x0019 (OCSD_ERR_BAD_DECODE_PKT)"), "{told}");
}

/// The frame deformatter, like every component, takes the logger's
/// verbosity when the tree attaches it (at the tree's creation): a tree
/// made while the verbosity is NONE does not log a bad block size after
/// the verbosity is raised; one made at ERROR does.
#[test]
fn deformatter_keeps_the_verbosity_of_its_tree_creation() {
    let _g = global();
    assert_eq!(ocsd_def_errlog_init(OCSD_ERR_SEV_NONE, 1), OCSD_OK);
    assert_eq!(ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, null()), OCSD_OK);
    let run = |h: dcd_tree_handle_t| {
        assert_ne!(h, C_API_INVALID_TREE_HANDLE);
        assert_eq!(ocsd_def_errlog_set_strprint_cb(h, null_mut(), Some(str_cb)), OCSD_OK);
        STR_OUT.lock().unwrap().clear();
        let mut n = 0u32;
        // not a whole number of 16-byte frames
        let data = [0u8; 3];
        assert_eq!(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, 3, data.as_ptr(), &mut n), OCSD_RESP_FATAL_INVALID_DATA);
        let out = STR_OUT.lock().unwrap().clone();
        ocsd_destroy_dcd_tree(h);
        out
    };
    let quiet = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    assert_eq!(ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 0), OCSD_OK);
    let told = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    let (quiet, told) = (run(quiet), run(told));
    assert_eq!(quiet, "");
    assert!(told.contains("Input block incorrect size, must be 16 byte multiple"), "{told}");
}

/// An element callback that logs its tree's mapped ranges (the tree's
/// handle is its context).
unsafe extern "C" fn log_ranges_elem(ctx: *const c_void, _: ocsd_trc_index_t, _: u8, _: *const ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
    ocsd_tl_log_mapped_mem_ranges(ctx as dcd_tree_handle_t);
    OCSD_RESP_CONT
}

/// OpenCSD lets a client log the mapped ranges from inside the tree's own
/// callbacks: they are listed as from outside.
#[test]
fn mapped_ranges_are_logged_from_inside_a_callback() {
    let _g = global();
    assert_eq!(ocsd_def_errlog_init(OCSD_ERR_SEV_INFO, 1), OCSD_OK);
    assert_eq!(ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, null()), OCSD_OK);
    let h = single_etmv4_tree(OCSD_CREATE_FLG_FULL_DECODER);
    assert_eq!(ocsd_dt_set_gen_elem_outfn(h, Some(log_ranges_elem), h as *const c_void), OCSD_OK);
    assert_eq!(ocsd_dt_add_buffer_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY, [0u8; 8].as_ptr(), 8), OCSD_OK);
    assert_eq!(ocsd_def_errlog_set_strprint_cb(h, null_mut(), Some(str_cb)), OCSD_OK);
    STR_OUT.lock().unwrap().clear();
    ocsd_tl_log_mapped_mem_ranges(h);
    let outside = STR_OUT.lock().unwrap().clone();
    STR_OUT.lock().unwrap().clear();
    let mut n = 0u32;
    let data = ASYNC_AND_INFO;
    ocsd_dt_process_data(h, OCSD_OP_DATA, 0, data.len() as u32, data.as_ptr(), &mut n);
    ocsd_dt_process_data(h, OCSD_OP_EOT, 0, 0, null(), null_mut());
    let inside = STR_OUT.lock().unwrap().clone();
    ocsd_destroy_dcd_tree(h);
    ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 0);
    assert_eq!(outside, "Gen_Info : Mapped Memory Accessors\nGen_Info : BuffAcc; Range::0x1000:1007; Mem Space::Any\nGen_Info : ========================\n");
    assert!(!inside.is_empty() && inside.len().is_multiple_of(outside.len()) && inside.starts_with(&outside), "{inside}");
}
