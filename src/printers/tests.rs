//! Exact-text tests for the element and raw frame printers. Expected strings
//! are copied from OpenCSD 1.8.0 `trc_pkt_lister` logs (the text after
//! `Idx:N; ID:hex; `); a few cases the logs never show are taken from the
//! OpenCSD source and marked as such.

use super::gen_elem::{write_elem_str, write_mem_space_str, ElemLineWriter, IdxText};
use super::line::LineBuf;
use super::raw_frame::write_raw_frame;
use crate::abi::gen_elem::*;
use crate::abi::*;

fn text(e: &ocsd_generic_trace_elem) -> String {
    let mut s = String::new();
    write_elem_str(e, &mut s);
    // the lister's line writer gives the same text, on a first and on a
    // repeated element
    let mut w = ElemLineWriter::new();
    for _ in 0..2 {
        let mut b = LineBuf::new();
        w.write_line(&mut b, &mut IdxText::default(), 4321, 0x1a, e);
        assert_eq!(std::str::from_utf8(b.as_bytes()).unwrap(), format!("Idx:4321; ID:1a; {s}\n"));
    }
    s
}

/// The lister's line writer against the element text, over every value
/// of the fields an instruction range's text shows, with indexes and trace
/// IDs changing and ranges coming again (from its table of lines) and
/// meeting others in the same table slot.
#[test]
fn range_lines_match_text() {
    let mut w = ElemLineWriter::new();
    let mut idx = IdxText::default();
    let mut b = LineBuf::new();
    let mut expect = String::new();
    let mut n = 0u64;
    let addrs = [(0x4d2488u64, 0x4d2494u64), (0x4d2488 + 4096 * 4, 0x4d2494 + 4096 * 4), (0xffff_ffc0_000a_b160, 0xffff_ffc0_000a_b174), (0, 2), (0x1001, 0x1003)];
    for round in 0..2 {
        for &(st, en) in &addrs {
            for sz in 0..8u32 {
                for isa in -1..8 {
                    for exec in [false, true] {
                        for ty in -1..9 {
                            for sub in -1..7 {
                                for cond in [false, true] {
                                    let mut e = range(st, en, (sz * 37 + round) % 12 + 1, sz, isa, exec, ty, sub, cond);
                                    if (ty + sub) % 5 == 0 {
                                        e = with_cc(e, (n as u32).wrapping_mul(2654435761) >> (n % 32));
                                    }
                                    let chan = [0x12u8, 0x12, 0x7f, 0][(n % 4) as usize];
                                    let index = [(n / 3) as u32, 99_999_999 + n as u32, u32::MAX][(n % 3) as usize];
                                    w.write_line(&mut b, &mut idx, index, chan, &e);
                                    expect.push_str(&format!("Idx:{index}; ID:{chan:x}; {}\n", {
                                        let mut s = String::new();
                                        write_elem_str(&e, &mut s);
                                        s
                                    }));
                                    n += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    assert_eq!(std::str::from_utf8(b.as_bytes()).unwrap(), expect);
}

fn with_cc(mut e: ocsd_generic_trace_elem, cc: u32) -> ocsd_generic_trace_elem {
    e.set_has_cc(1);
    e.cycle_count = cc;
    e
}

fn range(
    st: u64,
    en: u64,
    num: u32,
    sz: u32,
    isa: ocsd_isa,
    exec: bool,
    ty: ocsd_instr_type,
    sub: ocsd_instr_subtype,
    cond: bool,
) -> ocsd_generic_trace_elem {
    let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_INSTR_RANGE);
    e.st_addr = st;
    e.en_addr = en;
    e.set_num_instr_range(num);
    e.set_last_instr_sz(sz);
    e.isa = isa;
    e.set_last_instr_exec(exec as u32);
    e.last_i_type = ty;
    e.last_i_subtype = sub;
    e.set_last_instr_cond(cond as u32);
    e
}

#[test]
fn instr_range() {
    use ocsd_isa_aarch64 as A64;
    assert_eq!(
        text(&range(0x39850, 0x39858, 2, 4, A64, false, OCSD_INSTR_BR, OCSD_S_INSTR_NONE, true)),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x39850:[0x39858] num_i(2) last_sz(4) (ISA=A64) N BR   <cond>)"
    );
    assert_eq!(
        text(&range(0x14fb8, 0x14fc8, 4, 4, A64, false, OCSD_INSTR_BR, OCSD_S_INSTR_NONE, true)),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x14fb8:[0x14fc8] num_i(4) last_sz(4) (ISA=A64) N BR   <cond>)"
    );
    assert_eq!(
        text(&range(0x14fc8, 0x14fcc, 1, 4, A64, true, OCSD_INSTR_BR, OCSD_S_INSTR_NONE, false)),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x14fc8:[0x14fcc] num_i(1) last_sz(4) (ISA=A64) E BR  )"
    );
    assert_eq!(
        text(&range(0xa10c8, 0xa10cc, 1, 4, A64, true, OCSD_INSTR_BR_INDIRECT, OCSD_S_INSTR_V8_RET, false)),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0xa10c8:[0xa10cc] num_i(1) last_sz(4) (ISA=A64) E iBR A64:ret )"
    );
    assert_eq!(
        text(&range(0x3c1d4, 0x3c1dc, 2, 4, A64, true, OCSD_INSTR_BR_INDIRECT, OCSD_S_INSTR_V8_ERET, false)),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x3c1d4:[0x3c1dc] num_i(2) last_sz(4) (ISA=A64) E iBR A64:eret )"
    );
    assert_eq!(
        text(&range(0x10000b8, 0x10000bc, 1, 4, A64, true, OCSD_INSTR_BR, OCSD_S_INSTR_BR_LINK, false)),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x10000b8:[0x10000bc] num_i(1) last_sz(4) (ISA=A64) E BR  b+link )"
    );
    assert_eq!(
        text(&range(
            0xffffffc0000ab160,
            0xffffffc0000ab174,
            5,
            4,
            A64,
            false,
            OCSD_INSTR_BR_INDIRECT,
            OCSD_S_INSTR_BR_LINK,
            false
        )),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0xffffffc0000ab160:[0xffffffc0000ab174] num_i(5) last_sz(4) (ISA=A64) N iBR b+link )"
    );
    assert_eq!(
        text(&range(0xa7260, 0xa7268, 2, 4, A64, true, OCSD_INSTR_BR_INDIRECT, OCSD_S_INSTR_NONE, false)),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0xa7260:[0xa7268] num_i(2) last_sz(4) (ISA=A64) E iBR )"
    );
    assert_eq!(
        text(&range(0x10054, 0x10070, 7, 4, A64, true, OCSD_INSTR_ISB, OCSD_S_INSTR_NONE, false)),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x10054:[0x10070] num_i(7) last_sz(4) (ISA=A64) E ISB )"
    );
    assert_eq!(
        text(&range(0xc37cc, 0xc37e8, 7, 4, A64, true, OCSD_INSTR_WFI_WFE, OCSD_S_INSTR_NONE, false)),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0xc37cc:[0xc37e8] num_i(7) last_sz(4) (ISA=A64) E WFI.WFE)"
    );
    assert_eq!(
        text(&range(0xc3488, 0xc3490, 2, 4, A64, true, OCSD_INSTR_TSTART, OCSD_S_INSTR_NONE, false)),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0xc3488:[0xc3490] num_i(2) last_sz(4) (ISA=A64) E TSTART)"
    );
    // DSB.DMB: not in the logs; the name is OpenCSD's table entry.
    assert_eq!(
        text(&range(0x1000, 0x1008, 2, 4, A64, true, OCSD_INSTR_DSB_DMB, OCSD_S_INSTR_NONE, false)),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1000:[0x1008] num_i(2) last_sz(4) (ISA=A64) E DSB.DMB)"
    );
}

#[test]
fn instr_range_with_cycle_count() {
    let t32 = ocsd_isa_thumb2;
    assert_eq!(
        text(&with_cc(
            range(0xc002115c, 0xc002115e, 1, 2, t32, true, OCSD_INSTR_OTHER, OCSD_S_INSTR_NONE, false),
            1
        )),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0xc002115c:[0xc002115e] num_i(1) last_sz(2) (ISA=T32) E ---  [CC=1]; )"
    );
    assert_eq!(
        text(&with_cc(
            range(0xc004f01a, 0xc004f01e, 1, 4, t32, false, OCSD_INSTR_OTHER, OCSD_S_INSTR_NONE, false),
            1
        )),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0xc004f01a:[0xc004f01e] num_i(1) last_sz(4) (ISA=T32) N ---  [CC=1]; )"
    );
    assert_eq!(
        text(&with_cc(
            range(
                0xc0021144,
                0xc0021146,
                1,
                2,
                t32,
                true,
                OCSD_INSTR_BR_INDIRECT,
                OCSD_S_INSTR_V7_IMPLIED_RET,
                false
            ),
            1
        )),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0xc0021144:[0xc0021146] num_i(1) last_sz(2) (ISA=T32) E iBR V7:impl ret [CC=1]; )"
    );
    assert_eq!(
        text(&with_cc(
            range(0xc0036328, 0xc0036354, 11, 4, ocsd_isa_arm, false, OCSD_INSTR_BR, OCSD_S_INSTR_NONE, true),
            30
        )),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0xc0036328:[0xc0036354] num_i(11) last_sz(4) (ISA=A32) N BR   <cond> [CC=30]; )"
    );
    assert_eq!(
        text(&with_cc(
            range(
                0xc0052c70,
                0xc0052c80,
                4,
                4,
                ocsd_isa_arm,
                true,
                OCSD_INSTR_BR_INDIRECT,
                OCSD_S_INSTR_BR_LINK,
                false
            ),
            1
        )),
        "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0xc0052c70:[0xc0052c80] num_i(4) last_sz(4) (ISA=A32) E iBR b+link  [CC=1]; )"
    );
}

#[test]
fn no_sync_eot_trace_on() {
    let unsync = |ty, why| {
        let mut e = ocsd_generic_trace_elem::new(ty);
        e.set_unsync_eot_info(why);
        text(&e)
    };
    assert_eq!(
        unsync(OCSD_GEN_TRC_ELEM_NO_SYNC, UNSYNC_INIT_DECODER),
        "OCSD_GEN_TRC_ELEM_NO_SYNC( [init-decoder])"
    );
    assert_eq!(
        unsync(OCSD_GEN_TRC_ELEM_NO_SYNC, UNSYNC_RESET_DECODER),
        "OCSD_GEN_TRC_ELEM_NO_SYNC( [reset-decoder])"
    );
    assert_eq!(
        unsync(OCSD_GEN_TRC_ELEM_NO_SYNC, UNSYNC_OVERFLOW),
        "OCSD_GEN_TRC_ELEM_NO_SYNC( [overflow])"
    );
    assert_eq!(
        unsync(OCSD_GEN_TRC_ELEM_NO_SYNC, UNSYNC_DISCARD),
        "OCSD_GEN_TRC_ELEM_NO_SYNC( [discard])"
    );
    assert_eq!(
        unsync(OCSD_GEN_TRC_ELEM_NO_SYNC, UNSYNC_BAD_PACKET),
        "OCSD_GEN_TRC_ELEM_NO_SYNC( [bad-packet])"
    );
    assert_eq!(
        unsync(OCSD_GEN_TRC_ELEM_EO_TRACE, UNSYNC_EOT),
        "OCSD_GEN_TRC_ELEM_EO_TRACE( [end-of-trace])"
    );
    assert_eq!(
        unsync(OCSD_GEN_TRC_ELEM_EO_TRACE, UNSYNC_OVERFLOW),
        "OCSD_GEN_TRC_ELEM_EO_TRACE( [overflow])"
    );
    // Not in the logs: the remaining table entries, and an out-of-range value.
    assert_eq!(
        unsync(OCSD_GEN_TRC_ELEM_NO_SYNC, UNSYNC_UNKNOWN),
        "OCSD_GEN_TRC_ELEM_NO_SYNC( [undefined])"
    );
    assert_eq!(
        unsync(OCSD_GEN_TRC_ELEM_NO_SYNC, UNSYNC_BAD_IMAGE),
        "OCSD_GEN_TRC_ELEM_NO_SYNC( [bad-program-image])"
    );
    assert_eq!(
        unsync(OCSD_GEN_TRC_ELEM_NO_SYNC, 8),
        "OCSD_GEN_TRC_ELEM_NO_SYNC()"
    );

    let on = |why| {
        let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_TRACE_ON);
        e.set_trace_on_reason(why);
        e
    };
    assert_eq!(
        text(&on(TRACE_ON_NORMAL)),
        "OCSD_GEN_TRC_ELEM_TRACE_ON( [begin or filter])"
    );
    assert_eq!(
        text(&on(TRACE_ON_OVERFLOW)),
        "OCSD_GEN_TRC_ELEM_TRACE_ON( [overflow])"
    );
    assert_eq!(
        text(&on(TRACE_ON_EX_DEBUG)),
        "OCSD_GEN_TRC_ELEM_TRACE_ON( [debug restart])"
    );
    assert_eq!(
        text(&with_cc(on(TRACE_ON_NORMAL), 380)),
        "OCSD_GEN_TRC_ELEM_TRACE_ON( [begin or filter] [CC=380]; )"
    );
}

fn pe_ctx(
    isa: ocsd_isa,
    el: Option<ocsd_ex_level>,
    sec: ocsd_sec_level,
    bits64: bool,
    vmid: Option<u32>,
    ctxt_id: Option<u32>,
) -> ocsd_generic_trace_elem {
    let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_PE_CONTEXT);
    e.isa = isa;
    let c = &mut e.context;
    c.security_level = sec;
    c.exception_level = el.unwrap_or(ocsd_EL_unknown);
    c.set_el_valid(el.is_some() as u32);
    c.set_bits64(bits64 as u32);
    if let Some(v) = vmid {
        c.vmid = v;
        c.set_vmid_valid(1);
    }
    if let Some(v) = ctxt_id {
        c.context_id = v;
        c.set_ctxt_id_valid(1);
    }
    e
}

#[test]
fn pe_context() {
    let a64 = ocsd_isa_aarch64;
    assert_eq!(
        text(&pe_ctx(
            a64,
            Some(ocsd_EL0),
            ocsd_sec_nonsecure,
            true,
            None,
            None
        )),
        "OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=A64) EL0N; 64-bit; )"
    );
    assert_eq!(
        text(&pe_ctx(
            a64,
            Some(ocsd_EL1),
            ocsd_sec_nonsecure,
            true,
            Some(0),
            Some(0x4300)
        )),
        "OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=A64) EL1N; 64-bit; VMID=0x0; CTXTID=0x4300; )"
    );
    assert_eq!(
        text(&pe_ctx(
            a64,
            Some(ocsd_EL1),
            ocsd_sec_nonsecure,
            true,
            Some(0),
            None
        )),
        "OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=A64) EL1N; 64-bit; VMID=0x0; )"
    );
    assert_eq!(
        text(&pe_ctx(
            a64,
            Some(ocsd_EL1),
            ocsd_sec_secure,
            true,
            None,
            None
        )),
        "OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=A64) EL1S; 64-bit; )"
    );
    assert_eq!(
        text(&pe_ctx(
            ocsd_isa_thumb2,
            Some(ocsd_EL0),
            ocsd_sec_secure,
            false,
            None,
            None
        )),
        "OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=T32) EL0S; 32-bit; )"
    );
    assert_eq!(
        text(&pe_ctx(
            ocsd_isa_arm,
            None,
            ocsd_sec_nonsecure,
            false,
            None,
            None
        )),
        "OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=A32) N; 32-bit; )"
    );
    assert_eq!(
        text(&with_cc(
            pe_ctx(ocsd_isa_thumb2, None, ocsd_sec_secure, false, None, None),
            7695
        )),
        "OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=T32) S; 32-bit;  [CC=7695]; )"
    );
    // Not in the logs: RME security states, hex VMID / context ID, and an
    // exception level flagged as not valid.
    assert_eq!(
        text(&pe_ctx(
            a64,
            Some(ocsd_EL3),
            ocsd_sec_root,
            true,
            None,
            None
        )),
        "OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=A64) EL3Root; 64-bit; )"
    );
    assert_eq!(
        text(&pe_ctx(
            a64,
            Some(ocsd_EL2),
            ocsd_sec_realm,
            true,
            Some(0x1f),
            Some(0xabc)
        )),
        "OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=A64) EL2Realm; 64-bit; VMID=0x1f; CTXTID=0xabc; )"
    );
    let mut e = pe_ctx(a64, Some(ocsd_EL1), ocsd_sec_nonsecure, true, None, None);
    e.context.set_el_valid(0);
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=A64) N; 64-bit; )"
    );
}

#[test]
fn addr_nacc_and_mem_space() {
    let nacc = |addr, space: ocsd_mem_space_acc_t| {
        let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_ADDR_NACC);
        e.st_addr = addr;
        e.set_exception_number(space as u32);
        text(&e)
    };
    assert_eq!(
        nacc(0xffffffc000594ac0, OCSD_MEM_SPACE_EL1N),
        "OCSD_GEN_TRC_ELEM_ADDR_NACC( 0xffffffc000594ac0; Memspace [0x2:EL1N] )"
    );
    assert_eq!(
        nacc(0xc0076a4c, OCSD_MEM_SPACE_N),
        "OCSD_GEN_TRC_ELEM_ADDR_NACC( 0xc0076a4c; Memspace [0x6:Any NS] )"
    );
    assert_eq!(
        nacc(0xc02f5b3a, OCSD_MEM_SPACE_S),
        "OCSD_GEN_TRC_ELEM_ADDR_NACC( 0xc02f5b3a; Memspace [0x19:Any S] )"
    );
    // Not in the logs: OpenCSD's names for the other spaces and for mixes.
    assert_eq!(
        nacc(0x1000, OCSD_MEM_SPACE_EL2),
        "OCSD_GEN_TRC_ELEM_ADDR_NACC( 0x1000; Memspace [0x4:EL2N] )"
    );
    assert_eq!(
        nacc(0x1000, OCSD_MEM_SPACE_EL1S | OCSD_MEM_SPACE_EL2),
        "OCSD_GEN_TRC_ELEM_ADDR_NACC( 0x1000; Memspace [0x5:EL1S,EL2N,] )"
    );
    let space = |s| {
        let mut out = String::new();
        write_mem_space_str(s, &mut out);
        out
    };
    assert_eq!(space(OCSD_MEM_SPACE_ANY), "Any");
    assert_eq!(space(OCSD_MEM_SPACE_R), "Any R");
    assert_eq!(space(OCSD_MEM_SPACE_ROOT), "Root");
    assert_eq!(space(OCSD_MEM_SPACE_EL3 | OCSD_MEM_SPACE_ROOT), "EL3,Root,");
    assert_eq!(space(OCSD_MEM_SPACE_NONE), "");
}

#[test]
fn exception_and_return() {
    let excep = |ret_addr: Option<u64>, br_tgt: bool, num: u32| {
        let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_EXCEPTION);
        if let Some(a) = ret_addr {
            e.en_addr = a;
            e.set_excep_ret_addr(1);
        }
        e.set_excep_ret_addr_br_tgt(br_tgt as u32);
        e.set_exception_number(num);
        e
    };
    assert_eq!(
        text(&with_cc(excep(Some(0xc0010ef4), false, 0x0e), 15)),
        "OCSD_GEN_TRC_ELEM_EXCEPTION(pref ret addr:0xc0010ef4; excep num (0x0e)  [CC=15]; )"
    );
    assert_eq!(
        text(&excep(Some(0x5910e8), true, 0x0e)),
        "OCSD_GEN_TRC_ELEM_EXCEPTION(pref ret addr:0x5910e8 [addr also prev br tgt]; excep num (0x0e) )"
    );
    // Not in the logs: no return address (e.g. M-profile tail chain), and a
    // number wider than the two-digit minimum.
    let mut tail = excep(None, false, 0x0b);
    tail.set_excep_M_tail_chain(1);
    assert_eq!(
        text(&tail),
        "OCSD_GEN_TRC_ELEM_EXCEPTION(excep num (0x0b) )"
    );
    assert_eq!(
        text(&excep(None, false, 0x1f3)),
        "OCSD_GEN_TRC_ELEM_EXCEPTION(excep num (0x1f3) )"
    );

    let ret = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_EXCEPTION_RET);
    assert_eq!(text(&ret), "OCSD_GEN_TRC_ELEM_EXCEPTION_RET()");
}

#[test]
fn timestamp_cycle_count_event() {
    let mut ts = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_TIMESTAMP);
    ts.timestamp = 0x82f9d0cd3d;
    assert_eq!(
        text(&ts),
        "OCSD_GEN_TRC_ELEM_TIMESTAMP( [ TS=0x0082f9d0cd3d]; )"
    );
    ts.timestamp = 0x58e9080a81;
    assert_eq!(
        text(&with_cc(ts, 25)),
        "OCSD_GEN_TRC_ELEM_TIMESTAMP( [ TS=0x0058e9080a81];  [CC=25]; )"
    );
    // has_ts / cpu_freq_change add nothing to the text; wider values widen.
    ts.set_has_ts(1);
    ts.set_cpu_freq_change(1);
    ts.timestamp = 0x1234_5678_9abc_def0;
    assert_eq!(
        text(&ts),
        "OCSD_GEN_TRC_ELEM_TIMESTAMP( [ TS=0x123456789abcdef0]; )"
    );

    let cc = with_cc(
        ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_CYCLE_COUNT),
        8,
    );
    assert_eq!(text(&cc), "OCSD_GEN_TRC_ELEM_CYCLE_COUNT( [CC=8]; )");

    let event = |ev_type, ev_number| {
        let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_EVENT);
        e.set_trace_event(trace_event_t { ev_type, ev_number });
        text(&e)
    };
    assert_eq!(
        event(EVENT_NUMBERED, 1),
        "OCSD_GEN_TRC_ELEM_EVENT( Numbered:1; )"
    );
    // Not in the logs.
    assert_eq!(
        event(EVENT_TRIGGER, 0),
        "OCSD_GEN_TRC_ELEM_EVENT( Trigger; )"
    );
    assert_eq!(event(EVENT_UNKNOWN, 3), "OCSD_GEN_TRC_ELEM_EVENT()");
}

fn swt(
    master_chan: Option<(u16, u16)>,
    bits: u32,
    payload: *const u8,
    flags: &[fn(&mut ocsd_swt_info_t, u32)],
) -> ocsd_generic_trace_elem {
    let mut info = ocsd_swt_info_t::default();
    if let Some((m, c)) = master_chan {
        info.swt_master_id = m;
        info.swt_channel_id = c;
        info.set_swt_id_valid(1);
    }
    info.set_swt_payload_pkt_bitsize(bits);
    if bits > 0 {
        info.set_swt_payload_num_packets(1);
    }
    for set in flags {
        set(&mut info, 1);
    }
    let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_SWTRACE);
    e.set_sw_trace_info(info);
    e.ptr_extended_data = payload.cast();
    e
}

#[test]
fn sw_trace() {
    let p32 = 0x003d59dc_u32.to_ne_bytes();
    let mut e = swt(
        Some((0x41, 0)),
        32,
        p32.as_ptr(),
        &[ocsd_swt_info_t::set_swt_has_timestamp],
    );
    e.timestamp = 0;
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SWTRACE( (Ma:0x41; Ch:0x00) 0x003d59dc;  [ TS=0x000000000000]; )"
    );
    let p = 0x00359ff8_u32.to_ne_bytes();
    let mut e = swt(
        Some((0x41, 0)),
        32,
        p.as_ptr(),
        &[ocsd_swt_info_t::set_swt_has_timestamp],
    );
    e.timestamp = 0x357e74176e;
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SWTRACE( (Ma:0x41; Ch:0x00) 0x00359ff8;  [ TS=0x00357e74176e]; )"
    );
    let e = swt(
        Some((0x41, 0)),
        0,
        std::ptr::null(),
        &[ocsd_swt_info_t::set_swt_marker_packet],
    );
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SWTRACE( (Ma:0x41; Ch:0x00) +Mrk )"
    );
    let p = 0x01021010_u32.to_ne_bytes();
    let e = swt(
        Some((0x40, 0x480)),
        32,
        p.as_ptr(),
        &[ocsd_swt_info_t::set_swt_marker_packet],
    );
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SWTRACE( (Ma:0x40; Ch:0x480) 0x01021010; +Mrk )"
    );
    let mut e = swt(
        Some((0x40, 0x480)),
        0,
        std::ptr::null(),
        &[
            ocsd_swt_info_t::set_swt_marker_packet,
            ocsd_swt_info_t::set_swt_has_timestamp,
        ],
    );
    e.timestamp = 0x3aeb284c9;
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SWTRACE( (Ma:0x40; Ch:0x480) +Mrk  [ TS=0x0003aeb284c9]; )"
    );
    let p = 0u32.to_ne_bytes();
    let e = swt(
        Some((0, 0)),
        32,
        p.as_ptr(),
        &[ocsd_swt_info_t::set_swt_frequency],
    );
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SWTRACE( (Ma:0x00; Ch:0x00) 0x00000000; Freq)"
    );
    let p = 0x0124f800_u32.to_ne_bytes();
    let e = swt(None, 32, p.as_ptr(), &[ocsd_swt_info_t::set_swt_frequency]);
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SWTRACE((Ma:0x??; Ch:0x??) 0x0124f800; Freq)"
    );
}

#[test]
fn sw_trace_widths_and_errors() {
    // Not in the logs: payload widths other than 32 bits, errors, trigger,
    // and a payload-carrying element with no payload pointer.
    let one = [0xa7u8];
    let e = swt(Some((1, 2)), 4, one.as_ptr(), &[]);
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SWTRACE( (Ma:0x01; Ch:0x02) 0x7; )"
    );
    let e = swt(
        Some((1, 2)),
        8,
        one.as_ptr(),
        &[ocsd_swt_info_t::set_swt_trigger_event],
    );
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SWTRACE( (Ma:0x01; Ch:0x02) 0xa7; Trig )"
    );
    let p16 = 0x00beu16.to_ne_bytes();
    let e = swt(Some((1, 2)), 16, p16.as_ptr(), &[]);
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SWTRACE( (Ma:0x01; Ch:0x02) 0x00be; )"
    );
    // A 64-bit payload need not be 8-byte aligned.
    let mut buf = [0u8; 9];
    buf[1..].copy_from_slice(&0x0011_2233_4455_6677u64.to_ne_bytes());
    let e = swt(Some((1, 2)), 64, buf[1..].as_ptr(), &[]);
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SWTRACE( (Ma:0x01; Ch:0x02) 0x0011223344556677; )"
    );
    let e = swt(Some((1, 2)), 32, std::ptr::null(), &[]);
    assert_eq!(text(&e), "OCSD_GEN_TRC_ELEM_SWTRACE( (Ma:0x01; Ch:0x02) )");
    let e = swt(Some((1, 2)), 12, std::ptr::null(), &[]);
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SWTRACE( (Ma:0x01; Ch:0x02) 0x{Data Error : unsupported bit width.}; )"
    );
    let e = swt(
        Some((1, 2)),
        0,
        std::ptr::null(),
        &[ocsd_swt_info_t::set_swt_master_err],
    );
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SWTRACE( (Ma:0x01; Ch:0x02) {Master Error.})"
    );
    let e = swt(
        Some((1, 2)),
        32,
        std::ptr::null(),
        &[ocsd_swt_info_t::set_swt_global_err],
    );
    assert_eq!(text(&e), "OCSD_GEN_TRC_ELEM_SWTRACE({Global Error.})");
}

fn itm(pkt_type: swt_itm_type, src: u8, size: u8, value: u32, overflow: bool, ts: u64) -> String {
    let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_ITMTRACE);
    e.set_swt_itm(swt_itm_info {
        pkt_type,
        payload_src_id: src,
        payload_size: size,
        value,
        overflow: overflow as u8,
    });
    e.timestamp = ts;
    text(&e)
}

#[test]
fn itm_trace() {
    assert_eq!(
        itm(SWIT_PAYLOAD, 0x10, 2, 0xf0f0, false, 0),
        "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_SWIT (ch: 0x10; Data: 0xf0f0) )"
    );
    assert_eq!(
        itm(SWIT_PAYLOAD, 0x10, 2, 0x0101, false, 0),
        "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_SWIT (ch: 0x10; Data: 0x0101) )"
    );
    assert_eq!(
        itm(SWIT_PAYLOAD, 0x8b, 4, 0x67890123, false, 0),
        "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_SWIT (ch: 0x8b; Data: 0x67890123) )"
    );
    assert_eq!(
        itm(SWIT_PAYLOAD, 0x3, 1, 0xbb, true, 0),
        "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_OVERFLOW; ITM_SWIT (ch: 0x3; Data: 0xbb) )"
    );
    assert_eq!(
        itm(DWT_PAYLOAD, 0x2, 1, 0, false, 0),
        "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_DWT (desc: 0x2; Data: 0x00) )"
    );
    assert_eq!(
        itm(DWT_PAYLOAD, 0x2, 4, 0x1080, false, 0),
        "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_DWT (desc: 0x2; Data: 0x00001080) )"
    );
    assert_eq!(
        itm(DWT_PAYLOAD, 0x5, 2, 0x322, false, 0),
        "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_DWT (desc: 0x5; Data: 0x0322) )"
    );
    assert_eq!(
        itm(DWT_PAYLOAD, 0x12, 1, 0x44, true, 0),
        "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_OVERFLOW; ITM_DWT (desc: 0x12; Data: 0x44) )"
    );
    assert_eq!(
        itm(TS_GLOBAL, 0, 0, 0, false, 0x1234583afe32),
        "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_TS_GLOBAL ( TS: 0x00001234583afe32) )"
    );
    assert_eq!(
        itm(TS_GLOBAL, 0, 0, 0, true, 0x1020304cf23456),
        "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_OVERFLOW; ITM_TS_GLOBAL ( TS: 0x001020304cf23456) )"
    );
    assert_eq!(
        itm(TS_SYNC, 0, 0, 0x78, false, 0x7543fd6),
        "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_TS_LOCAL ( TS delta: 0x00000078, { TS Sync}; TS cumulative: 0x0000000007543fd6) )"
    );
    assert_eq!(
        itm(TS_DELAY, 0, 0, 0xd, false, 0x11),
        "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_TS_LOCAL ( TS delta: 0x0000000d, { TS Delay}; TS cumulative: 0x0000000000000011) )"
    );
    assert_eq!(
        itm(TS_PKT_DELAY, 0, 0, 0x1342, false, 0x16975),
        "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_TS_LOCAL ( TS delta: 0x00001342, { Packet Delay}; TS cumulative: 0x0000000000016975) )"
    );
    assert_eq!(
        itm(TS_PKT_TS_DELAY, 0, 0, 0x7543f5e, false, 0x7543f5e),
        "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_TS_LOCAL ( TS delta: 0x07543f5e, { TS and Packet Delay}; TS cumulative: 0x0000000007543f5e) )"
    );
}

#[test]
fn marker_memtrans_instrumentation() {
    let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_SYNC_MARKER);
    e.set_sync_marker(trace_marker_payload_t {
        type_: ELEM_MARKER_TS,
        value: 0,
    });
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SYNC_MARKER( [Timestamp marker(0x00000000)])"
    );
    e.set_sync_marker(trace_marker_payload_t {
        type_: ELEM_MARKER_TS,
        value: 0x1a2b,
    });
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_SYNC_MARKER( [Timestamp marker(0x00001a2b)])"
    );

    let trans = |t| {
        let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_MEMTRANS);
        e.set_mem_trans(t);
        text(&e)
    };
    assert_eq!(
        trans(OCSD_MEM_TRANS_START),
        "OCSD_GEN_TRC_ELEM_MEMTRANS(Start)"
    );
    assert_eq!(
        trans(OCSD_MEM_TRANS_COMMIT),
        "OCSD_GEN_TRC_ELEM_MEMTRANS(Commit)"
    );
    assert_eq!(
        trans(OCSD_MEM_TRANS_FAIL),
        "OCSD_GEN_TRC_ELEM_MEMTRANS(Fail)"
    );
    assert_eq!(
        trans(OCSD_MEM_TRANS_TRACE_INIT),
        "OCSD_GEN_TRC_ELEM_MEMTRANS(Init)"
    );
    assert_eq!(trans(4), "OCSD_GEN_TRC_ELEM_MEMTRANS()");

    let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_INSTRUMENTATION);
    e.set_sw_ite(trace_sw_ite_t {
        el: 1,
        value: 0xfffff,
    });
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_INSTRUMENTATION(EL1; 0x00000000000fffff)"
    );
}

#[test]
fn detail_free_types_and_out_of_range() {
    let plain = |t| text(&ocsd_generic_trace_elem::new(t));
    assert_eq!(
        plain(OCSD_GEN_TRC_ELEM_UNKNOWN),
        "OCSD_GEN_TRC_ELEM_UNKNOWN()"
    );
    assert_eq!(
        plain(OCSD_GEN_TRC_ELEM_ADDR_UNKNOWN),
        "OCSD_GEN_TRC_ELEM_ADDR_UNKNOWN()"
    );
    assert_eq!(
        plain(OCSD_GEN_TRC_ELEM_CUSTOM),
        "OCSD_GEN_TRC_ELEM_CUSTOM()"
    );
    assert_eq!(plain(20), "OCSD_GEN_TRC_ELEM??: index out of range.");
    assert_eq!(plain(-1), "OCSD_GEN_TRC_ELEM??: index out of range.");

    let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH);
    e.st_addr = 0x80001000;
    e.en_addr = 0x80001040;
    e.set_num_instr_range(16);
    assert_eq!(
        text(&e),
        "OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH(first 0x80001000:[next 0x80001040] num_i(16) )"
    );

    // Appends to what is already there.
    let mut s = String::from("Idx:0; ID:2; ");
    write_elem_str(
        &ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_EXCEPTION_RET),
        &mut s,
    );
    assert_eq!(s, "Idx:0; ID:2; OCSD_GEN_TRC_ELEM_EXCEPTION_RET()");
}

fn frame(kind: ocsd_rawframe_elem_t, index: ocsd_trc_index_t, data: &[u8], id: u8) -> String {
    let mut s = String::new();
    write_raw_frame(&mut s, kind, index, data, id);
    s
}

#[test]
fn raw_frames() {
    assert_eq!(
        frame(
            OCSD_FRM_PACKED,
            0,
            &[
                0xff, 0xff, 0xff, 0x7f, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x01, 0x00, 0x80
            ],
            0
        ),
        "Frame Data; Index      0;    RAW_PACKED; ff ff ff 7f 03 00 00 00 00 00 00 00 00 00 00 00 \n80 01 00 80 \n"
    );
    assert_eq!(
        frame(
            OCSD_FRM_ID_DATA,
            4,
            &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x01, 0x01],
            1
        ),
        "Frame Data; Index      4;   ID_DATA[0x01]; 00 00 00 00 00 00 00 00 00 00 00 80 01 01 \n"
    );
    assert_eq!(
        frame(
            OCSD_FRM_PACKED,
            20,
            &[0x00, 0x9d, 0, 0, 0, 0, 0, 0, 0, 0, 0x04, 0x85, 0x2e, 0x74, 0xde, 0x00],
            1
        ),
        "Frame Data; Index     20;    RAW_PACKED; 00 9d 00 00 00 00 00 00 00 00 04 85 2e 74 de 00 \n"
    );
    assert_eq!(
        frame(OCSD_FRM_ID_DATA, 46122, &[0, 0, 0, 0], 0),
        "Frame Data; Index  46122;   ID_DATA[0x00]; 00 00 00 00 \n"
    );
    // Not in the logs: sync frames, unknown kinds, bad IDs, empty data and a
    // wide index (the width is a minimum).
    assert_eq!(
        frame(OCSD_FRM_FSYNC, 96, &[0xff, 0xff, 0xff, 0x7f], 0),
        "Frame Data; Index     96;         FSYNC; ff ff ff 7f \n"
    );
    assert_eq!(
        frame(OCSD_FRM_HSYNC, 98, &[0xff, 0x7f], 0),
        "Frame Data; Index     98;         HSYNC; ff 7f \n"
    );
    assert_eq!(
        frame(OCSD_FRM_NONE, 7, &[], 0),
        "Frame Data; Index      7;       UNKNOWN; \n"
    );
    assert_eq!(
        frame(OCSD_FRM_ID_DATA, 12345678, &[0x1a], OCSD_BAD_CS_SRC_ID),
        "Frame Data; Index12345678;   ID_DATA[????]; 1a \n"
    );
    assert_eq!(
        frame(OCSD_FRM_ID_DATA, 16, &[0x11], 0x6f),
        "Frame Data; Index     16;   ID_DATA[0x6f]; 11 \n"
    );
    let bytes: Vec<u8> = (0..33).collect();
    assert_eq!(
        frame(OCSD_FRM_PACKED, 0, &bytes, 0),
        "Frame Data; Index      0;    RAW_PACKED; 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f \n\
         10 11 12 13 14 15 16 17 18 19 1a 1b 1c 1d 1e 1f \n20 \n"
    );
}

#[test]
fn fast_number_formatting_matches_fmt() {
    use crate::printers::gen_elem::{push_dec, push_hex};
    let mut vals = vec![0u64, 1, 9, 10, 15, 16, 255, 256, 0xffff_ffff, u64::MAX, u64::MAX - 1, 1 << 63];
    let mut rnd = crate::common::xorshift64(0x9E37_79B9_7F4A_7C15);
    for _ in 0..2000 {
        let x = rnd();
        vals.push(x >> (x % 64));
    }
    for v in vals {
        for w in [0usize, 2, 8, 16, 20] {
            let mut s = String::from("p");
            push_hex(&mut s, v, w);
            assert_eq!(s, format!("p{:0w$x}", v, w = w));
            let mut s = String::from("p");
            crate::printers::num::push_hex_upper(&mut s, v, w);
            assert_eq!(s, format!("p{:0w$X}", v, w = w));
        }
        let mut s = String::new();
        push_dec(&mut s, v);
        assert_eq!(s, v.to_string());
    }
}
