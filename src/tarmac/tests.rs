//! Tarmac writer and comparer on hand-built elements and memory.

use super::*;
use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::mem::{Accessor, MemMapper, Source};

/// Memory of `len` bytes at `start` where each 32-bit word holds
/// `0x0b000000 | offset/4` (distinct, recognisable opcodes).
fn word_mem(start: u64, len: usize) -> MemMapper {
    let mut data = Vec::with_capacity(len);
    for i in 0..len / 4 {
        data.extend_from_slice(&(0x0b00_0000u32 | i as u32).to_le_bytes());
    }
    mem_with(start, data)
}

fn mem_with(start: u64, data: Vec<u8>) -> MemMapper {
    let mut m = MemMapper::new();
    m.add(Accessor { start, end: start + data.len() as u64 - 1, space: OCSD_MEM_SPACE_ANY, source: Source::Buffer { data: data.into() } }).unwrap();
    m
}

fn opcode_at(start: u64, addr: u64) -> u32 {
    0x0b00_0000 | ((addr - start) / 4) as u32
}

fn pe_context(el: i32, sec: ocsd_sec_level, bits64: bool) -> ocsd_generic_trace_elem {
    let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_PE_CONTEXT);
    e.context.exception_level = el;
    e.context.security_level = sec;
    e.context.set_el_valid(1);
    e.context.set_bits64(bits64 as u32);
    e
}

fn range(isa: ocsd_isa, st: u64, en: u64, n: u32, exec: bool, sub: ocsd_instr_subtype) -> ocsd_generic_trace_elem {
    let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_INSTR_RANGE);
    e.isa = isa;
    e.st_addr = st;
    e.en_addr = en;
    e.set_num_instr_range(n);
    e.last_i_type = OCSD_INSTR_BR;
    e.last_i_subtype = sub;
    e.set_last_instr_exec(exec as u32);
    e
}

fn a64(st: u64, n: u32) -> ocsd_generic_trace_elem {
    range(ocsd_isa_aarch64, st, st + 4 * n as u64, n, true, OCSD_S_INSTR_NONE)
}

fn write(elems: &[ocsd_generic_trace_elem], mem: &mut MemMapper, disasm: bool) -> (String, TarmacStats) {
    let mut w = TarmacWriter::new(Vec::new(), TarmacConfig { disasm });
    for e in elems {
        w.element(0x10, e, mem).unwrap();
    }
    let stats = w.stats();
    (String::from_utf8(w.finish().unwrap()).unwrap(), stats)
}

// ---------------------------------------------------------------- writer

#[test]
fn a64_lines_modes_and_link() {
    let mut code = Vec::new();
    for w in [0xd280_0020u32, 0x9400_0002, 0xd65f_03c0] {
        code.extend_from_slice(&w.to_le_bytes());
    }
    let mut mem = mem_with(0x8000, code);
    let elems = [
        pe_context(0, ocsd_sec_nonsecure, true),
        range(ocsd_isa_aarch64, 0x8000, 0x8008, 2, true, OCSD_S_INSTR_BR_LINK),
        pe_context(3, ocsd_sec_secure, true),
        range(ocsd_isa_aarch64, 0x8008, 0x800c, 1, true, OCSD_S_INSTR_V8_RET),
    ];
    let (text, stats) = write(&elems, &mut mem, true);
    assert_eq!(
        text,
        "1 clk IT (1) 00008000 d2800020 O EL0t_n : mov x0, #0x1\n\
         2 clk IT (2) 00008004 94000002 O EL0t_n : bl 0x800c\n\
         2 clk R X30 0000000000008008\n\
         3 clk IT (3) 00008008 d65f03c0 O EL3h_s : ret\n"
    );
    assert_eq!(stats, TarmacStats { instructions: 3, link_writes: 1, no_memory: 0, truncated_ranges: 0, exceptions: 0 });
}

#[test]
fn no_disasm_and_other_elements_ignored_but_exceptions() {
    let mut mem = word_mem(0x1000, 64);
    let mut exc = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_EXCEPTION);
    exc.payload.exception_number = 3;
    let elems = [
        pe_context(1, ocsd_sec_nonsecure, true),
        ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_TRACE_ON),
        a64(0x1000, 2),
        exc,
        ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_TIMESTAMP),
        a64(0x1010, 1),
    ];
    let (text, _) = write(&elems, &mut mem, false);
    assert_eq!(
        text,
        "1 clk IT (1) 00001000 0b000000 O EL1h_n :\n\
         2 clk IT (2) 00001004 0b000001 O EL1h_n :\n\
         2 clk E 00000000 00000003 CoreEvent_TRAP\n\
         3 clk IT (3) 00001010 0b000004 O EL1h_n :\n"
    );
}

#[test]
fn condition_failed_last_instruction_is_is_and_links_nothing() {
    let mut mem = word_mem(0x1000, 64);
    let elems = [pe_context(1, ocsd_sec_secure, false), range(ocsd_isa_arm, 0x1000, 0x1008, 2, false, OCSD_S_INSTR_BR_LINK)];
    let (text, stats) = write(&elems, &mut mem, false);
    assert_eq!(text, "1 clk IT (1) 00001000 0b000000 A svc_s :\n2 clk IS (2) 00001004 0b000001 A svc_s :\n");
    assert_eq!(stats.link_writes, 0);
}

#[test]
fn t32_sizes_opcodes_and_thumb_link() {
    // MOVS r0,#1 (16-bit) ; BL +4 (32-bit: f000 f802)
    let code = vec![0x01, 0x20, 0x00, 0xf0, 0x02, 0xf8];
    let mut mem = mem_with(0x2000, code);
    let elems = [pe_context(0, ocsd_sec_nonsecure, false), range(ocsd_isa_thumb2, 0x2000, 0x2006, 2, true, OCSD_S_INSTR_BR_LINK)];
    let (text, _) = write(&elems, &mut mem, true);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{}", text);
    assert!(lines[0].starts_with("1 clk IT (1) 00002000 2001 T usr_n : movs r0"), "{}", lines[0]);
    assert_eq!(lines[1], "2 clk IT (2) 00002002 f000f802 T usr_n : bl.w 0x200a");
    assert_eq!(lines[2], "2 clk R r14 00002007");
}

#[test]
fn a32_link_and_modes() {
    let mut mem = word_mem(0x3000, 16);
    let mut unknown_el = pe_context(0, ocsd_sec_nonsecure, false);
    unknown_el.context.set_el_valid(0);
    let elems = [
        pe_context(2, ocsd_sec_nonsecure, false),
        range(ocsd_isa_arm, 0x3000, 0x3004, 1, true, OCSD_S_INSTR_BR_LINK),
        unknown_el,
        a64(0x3004, 1),
        pe_context(1, ocsd_sec_realm, true),
        a64(0x3008, 1),
    ];
    let (text, _) = write(&elems, &mut mem, false);
    assert_eq!(
        text,
        "1 clk IT (1) 00003000 0b000000 A hyp_n :\n\
         1 clk R r14 00003004\n\
         2 clk IT (2) 00003004 0b000001 O unk_n :\n\
         3 clk IT (3) 00003008 0b000002 O EL1h_r :\n"
    );
}

#[test]
fn unreadable_memory_is_said_not_hidden() {
    let mut mem = word_mem(0x1000, 8);
    // two readable, two beyond the mapped bytes
    let (text, stats) = write(&[pe_context(1, ocsd_sec_nonsecure, true), a64(0x1000, 4)], &mut mem, true);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[2], "3 clk IT (3) 00001008 00000000 O EL1h_n : <no memory>");
    assert_eq!(stats.no_memory, 2);
    // Thumb without memory: sizes unknown, the range is cut and counted
    let (text, stats) = write(&[range(ocsd_isa_thumb2, 0x9000, 0x9008, 3, true, OCSD_S_INSTR_NONE)], &mut mem, true);
    assert_eq!(text, "");
    assert_eq!(stats.truncated_ranges, 1);
}

#[test]
fn high_addresses_have_sixteen_digits() {
    let start = 0xffff_ffc0_0008_1000u64;
    let mut mem = word_mem(start, 16);
    let (text, _) = write(&[pe_context(1, ocsd_sec_nonsecure, true), a64(start, 1)], &mut mem, false);
    assert_eq!(text, "1 clk IT (1) ffffffc000081000 0b000000 O EL1h_n :\n");
}

#[test]
fn writer_output_reads_back_as_reference() {
    let mut mem = word_mem(0x1000, 256);
    let elems = [pe_context(1, ocsd_sec_nonsecure, true), a64(0x1000, 3), a64(0x1040, 2)];
    let (text, _) = write(&elems, &mut mem, true);
    let r = Reference::read(text.as_bytes(), "w").unwrap();
    assert_eq!(r.cpus.len(), 1);
    let got: Vec<(u64, u32)> = r.cpus[0].1.iter().map(|i| (i.addr, i.opcode)).collect();
    assert_eq!(got, vec![(0x1000, 0x0b00_0000), (0x1004, 0x0b00_0001), (0x1008, 0x0b00_0002), (0x1040, 0x0b00_0010), (0x1044, 0x0b00_0011)]);
}

fn exception(num: u32, ret: Option<u64>) -> ocsd_generic_trace_elem {
    let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_EXCEPTION);
    e.set_exception_number(num);
    if let Some(a) = ret {
        e.en_addr = a;
        e.set_excep_ret_addr(1);
    }
    e
}

#[test]
fn exceptions_are_e_lines() {
    let mut mem = word_mem(0x1000, 256);
    let elems = [
        pe_context(0, ocsd_sec_nonsecure, true),
        a64(0x1000, 2),
        exception(0x2, Some(0x1008)),
        pe_context(1, ocsd_sec_nonsecure, true),
        a64(0x1040, 1),
        exception(0xE, Some(0x1_0000_1044)),
        exception(0x9, None),
        // from AArch32 the numbering depends on the protocol: no name
        pe_context(1, ocsd_sec_secure, false),
        exception(0x2, Some(0x2000)),
    ];
    let (text, stats) = write(&elems, &mut mem, false);
    let e_lines: Vec<&str> = text.lines().filter(|l| l.contains(" E ")).collect();
    assert_eq!(
        e_lines,
        vec![
            "2 clk E 00001008 00000002 CoreEvent_CALL",
            "3 clk E 0000000100001044 0000000e CoreEvent_IRQ",
            "3 clk E 00000000 00000009 CoreEvent_EXCEPTION",
            "3 clk E 00002000 00000002 CoreEvent_EXCEPTION",
        ]
    );
    // after the instructions before it
    assert_eq!(text.lines().nth(2), Some("2 clk E 00001008 00000002 CoreEvent_CALL"));
    assert_eq!(stats.exceptions, 4);
    // the reader takes E lines in its stride
    let r = Reference::read(text.as_bytes(), "w").unwrap();
    assert_eq!(r.instructions(), 3);
}

#[test]
fn several_cores_are_tagged() {
    let mut mem = word_mem(0x1000, 256);
    let mut w = TarmacWriter::new(Vec::new(), TarmacConfig { disasm: false }).with_cpu_tags(&[(0x12, 2)]);
    let ctx = pe_context(1, ocsd_sec_nonsecure, true);
    let mut bl = a64(0x1000, 2);
    bl.last_i_subtype = OCSD_S_INSTR_BR_LINK;
    for (id, e) in [(0x10, &ctx), (0x12, &ctx), (0x14, &ctx), (0x10, &a64(0x1000, 1)), (0x12, &bl), (0x14, &a64(0x1010, 1)), (0x10, &exception(3, Some(0x1004))), (0x10, &a64(0x1020, 1))] {
        w.element(id, e, &mut mem).unwrap();
    }
    let text = String::from_utf8(w.finish().unwrap()).unwrap();
    assert_eq!(
        text,
        "1 clk cpu0 IT (1) 00001000 0b000000 O EL1h_n :\n\
         2 clk cpu2 IT (1) 00001000 0b000000 O EL1h_n :\n\
         3 clk cpu2 IT (2) 00001004 0b000001 O EL1h_n :\n\
         3 clk cpu2 R X30 0000000000001008\n\
         4 clk cpu1 IT (1) 00001010 0b000004 O EL1h_n :\n\
         4 clk cpu0 E 00001004 00000003 CoreEvent_TRAP\n\
         5 clk cpu0 IT (2) 00001020 0b000008 O EL1h_n :\n"
    );
    // read back: one stream per core
    let r = Reference::read(text.as_bytes(), "w").unwrap();
    let cpus: Vec<(&str, usize)> = r.cpus.iter().map(|(c, i)| (c.as_str(), i.len())).collect();
    assert_eq!(cpus, vec![("cpu0", 2), ("cpu2", 2), ("cpu1", 1)]);
}

#[test]
fn opcodes_are_read_in_the_elements_context() {
    // two processes at the same address; the decoder may already be in
    // the next context when the writer reads
    use crate::common::{MemAccess, MemContext};
    use crate::mem::ContextFilter;
    let mut mem = MemMapper::new();
    for (cid, word) in [(1u32, 0xd503_201fu32), (2, 0xd65f_03c0)] {
        let acc = Accessor { start: 0x1000, end: 0x1003, space: OCSD_MEM_SPACE_ANY, source: Source::Buffer { data: word.to_le_bytes().to_vec().into() } };
        mem.add_for_context(acc, ContextFilter { context_id: Some(cid), vmid: None }).unwrap();
    }
    mem.update_context(0x10, MemContext { context_id: Some(2), vmid: None });
    let mut p1 = pe_context(0, ocsd_sec_nonsecure, true);
    p1.context.set_ctxt_id_valid(1);
    p1.context.context_id = 1;
    let mut p2 = p1;
    p2.context.context_id = 2;
    // a context element without a context ID keeps the last one
    let same = pe_context(0, ocsd_sec_nonsecure, true);
    let (text, _) = write(&[p1, a64(0x1000, 1), same, a64(0x1000, 1), p2, a64(0x1000, 1)], &mut mem, false);
    let ops: Vec<&str> = text.lines().map(|l| l.split(' ').nth(5).unwrap()).collect();
    assert_eq!(ops, vec!["d503201f", "d503201f", "d65f03c0"]);
    // the decoder's context was left alone
    assert_eq!(mem.context(0x10).context_id, Some(2));
}

// ---------------------------------------------------------------- compare

/// A reference trace of CPU `cpu` executing the A64 instructions at
/// `addrs` (opcodes as in [`word_mem`] at 0x1000).
fn reference(cpus: &[(&str, &[u64])]) -> Reference {
    let mut text = String::from("0 clk R cpsr 000003cd\n");
    let mut n = 0;
    // interleave the CPUs line by line, as models do
    let longest = cpus.iter().map(|(_, a)| a.len()).max().unwrap_or(0);
    for i in 0..longest {
        for (cpu, addrs) in cpus {
            if let Some(a) = addrs.get(i) {
                n += 1;
                text.push_str(&format!("{} clk {} IT ({}) {:08x} {:08x} O EL1h_n : X\n", n, cpu, n, a, opcode_at(0x1000, *a)));
                text.push_str(&format!("{} clk {} R X0 0000000000000000\n", n, cpu));
            }
        }
    }
    Reference::read(text.as_bytes(), "ref").unwrap()
}

fn run_compare(refs: &Reference, elems: &[(u64, ocsd_generic_trace_elem)]) -> CompareReport {
    let mut mem = word_mem(0x1000, 0x1000);
    let mut c = Comparer::new(refs);
    for (idx, e) in elems {
        c.element(*idx, 2, e, &mut mem);
    }
    c.finish()
}

fn seq(start: u64, n: u64) -> Vec<u64> {
    (0..n).map(|i| start + 4 * i).collect()
}

fn on() -> ocsd_generic_trace_elem {
    ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_TRACE_ON)
}

#[test]
fn segments_match_with_untraced_code_between() {
    // reference: 3 traced, 5 untraced, 2 traced, 4 untraced, 3 traced
    let mut addrs = seq(0x1000, 3);
    addrs.extend(seq(0x1800, 5));
    addrs.extend(seq(0x1100, 2));
    addrs.extend(seq(0x1800, 4));
    addrs.extend(seq(0x1200, 3));
    let refs = reference(&[("cpu0", &addrs)]);
    let ctx = pe_context(1, ocsd_sec_nonsecure, true);
    let elems = [(0, ctx), (1, on()), (2, a64(0x1000, 3)), (5, on()), (6, a64(0x1100, 2)), (9, on()), (10, a64(0x1200, 1)), (11, a64(0x1204, 2))];
    let r = run_compare(&refs, &elems);
    assert!(r.matches(), "{}", r);
    assert_eq!(r.to_string(), "8 instructions in 3 segments match");
    assert_eq!(r.ids[0].cpu, "cpu0");
}

#[test]
fn a_segment_is_placed_past_a_false_start() {
    // 0x1000,0x1004 occur first followed by 0x1800: the segment
    // 0x1000..0x1008 only fits at the second occurrence
    let mut addrs = vec![0x1000, 0x1004, 0x1800];
    addrs.extend(seq(0x1000, 3));
    let refs = reference(&[("", &addrs)]);
    let r = run_compare(&refs, &[(0, on()), (1, a64(0x1000, 3))]);
    assert_eq!(r.to_string(), "3 instructions in 1 segments match");
}

#[test]
fn the_cpu_holding_the_segments_is_chosen() {
    let a = seq(0x1000, 4);
    let b = seq(0x1100, 4);
    let refs = reference(&[("cpu0", &a), ("cpu1", &b)]);
    let r = run_compare(&refs, &[(0, on()), (1, a64(0x1100, 4))]);
    assert!(r.matches(), "{}", r);
    assert_eq!(r.ids[0].cpu, "cpu1");
}

#[test]
fn divergence_inside_a_segment_names_both_sides() {
    // reference runs 0x1000, 0x1004, then jumps to 0x1100; the decode says 0x1008
    let mut addrs = seq(0x1000, 2);
    addrs.extend(seq(0x1100, 2));
    let refs = reference(&[("cpu0", &addrs)]);
    let r = run_compare(&refs, &[(0, on()), (7, a64(0x1000, 3))]);
    assert!(!r.matches());
    let d = r.ids[0].divergence.as_ref().unwrap();
    assert_eq!((d.segment, d.instr_no, d.in_segment, d.trace_index, d.addr), (1, 3, 2, 7, 0x1008));
    let found = d.reference.unwrap();
    assert_eq!((found.addr, found.line), (0x1100, 6)); // header + 2 lines per instruction
    assert_eq!(d.after_line, 4);
    assert_eq!(
        r.to_string(),
        "divergence after 0 matching instructions in 0 segments: decoded instruction 3 (segment 1, instruction 3 of the segment, \
         trace index 7) at 0x1008 (A64, opcode 0b000002) differs from reference line 6: 0x1100 (A64, opcode 0b000040)"
    );
}

#[test]
fn segments_out_of_order_or_missing_diverge() {
    let mut addrs = seq(0x1000, 2);
    addrs.extend(seq(0x1100, 2));
    let refs = reference(&[("cpu0", &addrs)]);
    // second segment lies before the first in the reference
    let r = run_compare(&refs, &[(0, on()), (1, a64(0x1100, 2)), (2, on()), (3, a64(0x1000, 2))]);
    let d = r.ids[0].divergence.as_ref().unwrap();
    assert_eq!((d.segment, d.addr, d.reference), (2, 0x1000, None));
    assert_eq!((r.ids[0].instructions, r.ids[0].segments), (2, 1));
    assert!(r.to_string().ends_with("not found in the reference after line 8"), "{}", r);
    // a segment running past the end of the reference
    let r = run_compare(&refs, &[(0, on()), (1, a64(0x1100, 3))]);
    assert!(r.to_string().contains(": the reference ends"), "{}", r);
}

#[test]
fn opcodes_must_agree_when_memory_has_them() {
    let addrs = seq(0x1000, 2);
    let refs = reference(&[("cpu0", &addrs)]);
    // memory with other opcodes at the same addresses
    let mut mem = mem_with(0x1000, vec![0x1f, 0x20, 0x03, 0xd5, 0x1f, 0x20, 0x03, 0xd5]);
    let mut c = Comparer::new(&refs);
    c.element(0, 2, &on(), &mut mem);
    c.element(1, 2, &a64(0x1000, 2), &mut mem);
    let r = c.finish();
    assert_eq!(r.ids[0].divergence.as_ref().map(|d| d.opcode), Some(Some(0xd503_201f)));
}

#[test]
fn nothing_decoded_is_not_a_match() {
    let refs = reference(&[("cpu0", &seq(0x1000, 2))]);
    let r = run_compare(&refs, &[(0, on())]);
    assert!(!r.matches());
    assert_eq!(r.to_string(), "no instructions decoded: nothing to compare");
}

#[test]
fn several_trace_ids_report_each() {
    let refs = reference(&[("cpu0", &seq(0x1000, 2)), ("cpu1", &seq(0x1100, 2))]);
    let mut mem = word_mem(0x1000, 0x1000);
    let mut c = Comparer::new(&refs);
    c.element(0, 0x10, &a64(0x1000, 2), &mut mem);
    c.element(1, 0x12, &a64(0x1100, 2), &mut mem);
    let r = c.finish();
    assert!(r.matches());
    assert_eq!(r.to_string(), "ID 0x10 (cpu0): 2 instructions in 1 segments match\nID 0x12 (cpu1): 2 instructions in 1 segments match");
    assert_eq!((r.instructions(), r.segments()), (4, 2));
}

#[test]
fn the_last_instructions_outcome_must_agree() {
    // the model executed 0x1000 (IT) and 0x1004 (IS: condition failed)
    let text = "1 clk IT (1) 00001000 0b000000 O EL1h_n : X\n2 clk IS (2) 00001004 0b000001 O EL1h_n : B.NE\n";
    let refs = Reference::read(text.as_bytes(), "r").unwrap();
    let not_taken = range(ocsd_isa_aarch64, 0x1000, 0x1008, 2, false, OCSD_S_INSTR_NONE);
    assert!(run_compare(&refs, &[(0, on()), (1, not_taken)]).matches());
    // the decode says taken: a divergence at the branch
    let r = run_compare(&refs, &[(0, on()), (1, a64(0x1000, 2))]);
    let d = r.ids[0].divergence.as_ref().unwrap();
    assert_eq!((d.addr, d.executed), (0x1004, true));
    assert!(r.to_string().ends_with("differs from reference line 2: 0x1004 (A64, opcode 0b000001, condition failed)"), "{}", r);
    // a condition-failed instruction inside a range (not a waypoint: the
    // trace cannot tell) is accepted either way
    let text = "1 clk IS (1) 00001000 0b000000 O EL1h_n : X\n2 clk IT (2) 00001004 0b000001 O EL1h_n : B\n";
    let refs = Reference::read(text.as_bytes(), "r").unwrap();
    assert!(run_compare(&refs, &[(0, on()), (1, a64(0x1000, 2))]).matches());
}
