//! Hand-built opcode tests for the instruction decoder.

use super::*;

/// Decode `op` at `addr`; waypoint options on, IT tracking off.
fn dec_arch(isa: ocsd_isa, arch: ocsd_arch_version_t, addr: u64, op: u32) -> ocsd_instr_info {
    let mut i = ocsd_instr_info {
        pe_type: ocsd_arch_profile_t {
            arch,
            profile: profile_CortexA,
        },
        isa,
        instr_addr: addr,
        opcode: op,
        dsb_dmb_waypoints: 1,
        wfi_wfe_branch: 1,
        ..Default::default()
    };
    assert_eq!(decode_instruction(&mut i), OCSD_OK);
    i
}

fn a64(addr: u64, op: u32) -> ocsd_instr_info {
    dec_arch(ocsd_isa_aarch64, ARCH_AA64, addr, op)
}

fn a32(addr: u64, op: u32) -> ocsd_instr_info {
    dec_arch(ocsd_isa_arm, ARCH_V8, addr, op)
}

/// T32: `hw1` is the first halfword, `hw2` the following one.
fn t32(addr: u64, hw1: u16, hw2: u16) -> ocsd_instr_info {
    dec_arch(
        ocsd_isa_thumb2,
        ARCH_V8,
        addr,
        (hw2 as u32) << 16 | hw1 as u32,
    )
}

/// (type, sub_type, is_link, is_conditional)
fn cls(i: &ocsd_instr_info) -> (ocsd_instr_type, ocsd_instr_subtype, u8, u8) {
    (i.type_, i.sub_type, i.is_link, i.is_conditional)
}

const BR: ocsd_instr_type = OCSD_INSTR_BR;
const IBR: ocsd_instr_type = OCSD_INSTR_BR_INDIRECT;
const OTHER: ocsd_instr_type = OCSD_INSTR_OTHER;
const NONE: ocsd_instr_subtype = OCSD_S_INSTR_NONE;
const LINK: ocsd_instr_subtype = OCSD_S_INSTR_BR_LINK;
const RET: ocsd_instr_subtype = OCSD_S_INSTR_V8_RET;
const ERET: ocsd_instr_subtype = OCSD_S_INSTR_V8_ERET;
const V7RET: ocsd_instr_subtype = OCSD_S_INSTR_V7_IMPLIED_RET;

// ---------------------------------------------------------------------------
// A64

#[test]
fn a64_b_bl() {
    let i = a64(0x1000, 0x1400_0004); // b #+0x10
    assert_eq!(cls(&i), (BR, NONE, 0, 0));
    assert_eq!(
        (i.branch_addr, i.instr_size, i.next_isa),
        (0x1010, 4, ocsd_isa_aarch64)
    );

    let i = a64(0x1000, 0x17FF_FFFF); // b #-4
    assert_eq!(i.branch_addr, 0xFFC);

    let i = a64(0x4000, 0x9400_0010); // bl #+0x40
    assert_eq!(cls(&i), (BR, LINK, 1, 0));
    assert_eq!(i.branch_addr, 0x4040);

    let i = a64(0x8000, 0x9600_0000); // bl #-0x8000000 (most negative)
    assert_eq!(i.branch_addr, 0x8000u64.wrapping_sub(0x800_0000));

    // address arithmetic wraps in 64 bits
    let i = a64(0, 0x97FF_FFFF); // bl #-4
    assert_eq!(i.branch_addr, 0xFFFF_FFFF_FFFF_FFFC);
    let i = a64(u64::MAX - 3, 0x1400_0002); // b #+8
    assert_eq!(i.branch_addr, 4);
}

#[test]
fn a64_conditional_branches() {
    let i = a64(0x2000, 0x5400_0041); // b.ne #+8
    assert_eq!(cls(&i), (BR, NONE, 0, 1));
    assert_eq!(i.branch_addr, 0x2008);

    let i = a64(0x2000, 0x54FF_FFE0); // b.eq #-4
    assert_eq!(i.branch_addr, 0x1FFC);

    let i = a64(0x2000, 0x5400_0050); // bc.eq #+8 (FEAT_HBC)
    assert_eq!(cls(&i), (BR, NONE, 0, 1));
    assert_eq!(i.branch_addr, 0x2008);

    let i = a64(0x2000, 0xB400_0060); // cbz x0, #+12
    assert_eq!(cls(&i), (BR, NONE, 0, 1));
    assert_eq!(i.branch_addr, 0x200C);

    let i = a64(0x2000, 0x35FF_FFC1); // cbnz w1, #-8
    assert_eq!(cls(&i), (BR, NONE, 0, 1));
    assert_eq!(i.branch_addr, 0x1FF8);

    let i = a64(0x2000, 0xB608_0083); // tbz x3, #33, #+16
    assert_eq!(cls(&i), (BR, NONE, 0, 1));
    assert_eq!(i.branch_addr, 0x2010);

    let i = a64(0x2000, 0x3707_FFE0); // tbnz w0, #0, #-4
    assert_eq!(cls(&i), (BR, NONE, 0, 1));
    assert_eq!(i.branch_addr, 0x1FFC);

    let i = a64(0x2000, 0x3600_0000 | (0x2000 << 5)); // tbz, most negative imm14
    assert_eq!(i.branch_addr, 0x2000u64.wrapping_sub(0x8000)); // 64-bit wrap
}

#[test]
fn a64_indirect() {
    let i = a64(0x1000, 0xD61F_0020); // br x1
    assert_eq!(cls(&i), (IBR, NONE, 0, 0));
    let i = a64(0x1000, 0xD63F_0040); // blr x2
    assert_eq!(cls(&i), (IBR, LINK, 1, 0));
    let i = a64(0x1000, 0xD65F_03C0); // ret
    assert_eq!(cls(&i), (IBR, RET, 0, 0));
    let i = a64(0x1000, 0xD65F_0020); // ret x1
    assert_eq!(cls(&i), (IBR, RET, 0, 0));
    let i = a64(0x1000, 0xD69F_03E0); // eret
    assert_eq!(cls(&i), (IBR, ERET, 0, 0));
    // drps is not a branch here
    assert_eq!(a64(0x1000, 0xD6BF_03E0).type_, OTHER);
    // branch_addr is only written for direct branches
    let mut i = ocsd_instr_info {
        isa: ocsd_isa_aarch64,
        opcode: 0xD65F_03C0,
        branch_addr: 0x1234,
        ..Default::default()
    };
    decode_instruction(&mut i);
    assert_eq!(i.branch_addr, 0x1234);
}

#[test]
fn a64_pointer_auth() {
    let cases: &[(u32, ocsd_instr_subtype, u8)] = &[
        (0xD71F_0822, NONE, 0), // braa x1, x2
        (0xD71F_0C22, NONE, 0), // brab x1, x2
        (0xD73F_0822, LINK, 1), // blraa x1, x2
        (0xD73F_0C22, LINK, 1), // blrab x1, x2
        (0xD61F_083F, NONE, 0), // braaz x1
        (0xD61F_0C3F, NONE, 0), // brabz x1
        (0xD63F_083F, LINK, 1), // blraaz x1
        (0xD63F_0C3F, LINK, 1), // blrabz x1
        (0xD65F_0BFF, RET, 0),  // retaa
        (0xD65F_0FFF, RET, 0),  // retab
        (0xD69F_0BFF, ERET, 0), // eretaa
        (0xD69F_0FFF, ERET, 0), // eretab
        // FEAT_PAuth_LR
        (0x5500_001F, RET, 0),  // retaasppc <label> (offset 0)
        (0x5500_003F, RET, 0),  // retaasppc <label>
        (0x5520_001F, RET, 0),  // retabsppc <label>
        (0x553F_FFFF, RET, 0),  // retabsppc, all imm16 bits set
        (0xD65F_0BE3, RET, 0),  // retaasppcr x3
        (0xD65F_0FE3, RET, 0),  // retabsppcr x3
        (0xD6FF_03E0, ERET, 0), // texit
        (0xD6FF_07E0, ERET, 0),
    ];
    for &(op, sub, link) in cases {
        for arch in [ARCH_V8r3, ARCH_AA64] {
            let i = dec_arch(ocsd_isa_aarch64, arch, 0x1000, op);
            assert_eq!(cls(&i), (IBR, sub, link, 0), "op {op:#x} arch {arch:#x}");
        }
        // Before v8.3 none of these is a branch.
        let i = dec_arch(ocsd_isa_aarch64, ARCH_V8, 0x1000, op);
        assert_eq!(cls(&i), (OTHER, NONE, 0, 0), "op {op:#x} v8");
    }
    // The signed RET* SPPC label form is a return, not a direct branch.
    let mut i = ocsd_instr_info {
        pe_type: ocsd_arch_profile_t {
            arch: ARCH_AA64,
            profile: profile_CortexA,
        },
        isa: ocsd_isa_aarch64,
        opcode: 0x5500_003F,
        branch_addr: 7,
        ..Default::default()
    };
    decode_instruction(&mut i);
    assert_eq!(i.branch_addr, 7);
    // Not pointer-auth: AUT/PAC hints, BTI, and SPPC with Rm field = 31 is RETAA.
    for op in [
        0xD503_233F,
        0xD503_23BF,
        0xD503_245F,
        0xD503_241F,
        0xD503_201F,
        0xDAC1_1BE0,
    ] {
        assert_eq!(a64(0x1000, op).type_, OTHER, "op {op:#x}");
    }
}

#[test]
fn a64_compare_and_branch() {
    // CB<cc> register, W and X
    let i = a64(0x3000, 0x7402_0041); // cbgt w1, w2, #+8
    assert_eq!(cls(&i), (BR, NONE, 0, 0));
    assert_eq!(i.branch_addr, 0x3008);
    let i = a64(0x3000, 0xF402_0041); // cbgt x1, x2, #+8
    assert_eq!((i.type_, i.branch_addr), (BR, 0x3008));
    let i = a64(0x3000, 0xF4E2_3FE1); // cbne x1, x2, #-4
    assert_eq!((i.type_, i.branch_addr), (BR, 0x2FFC));
    let i = a64(0x3000, 0x7402_2001); // cbgt w1, w2, #-0x400 (most negative imm9)
    assert_eq!((i.type_, i.branch_addr), (BR, 0x3000 - 0x400));
    // CBB<cc>, CBH<cc>
    let i = a64(0x3000, 0x7402_8041); // cbbgt w1, w2, #+8
    assert_eq!((i.type_, i.branch_addr), (BR, 0x3008));
    let i = a64(0x3000, 0x7402_C041); // cbhgt w1, w2, #+8
    assert_eq!((i.type_, i.branch_addr), (BR, 0x3008));
    // CB<cc> immediate, W and X
    let i = a64(0x3000, 0x7500_3FE1); // cbgt w1, #0, #-4
    assert_eq!((i.type_, i.branch_addr), (BR, 0x2FFC));
    let i = a64(0x3000, 0xF5FF_8041); // cbne x1, #63, #+8
    assert_eq!((i.type_, i.branch_addr), (BR, 0x3008));
    // Unallocated neighbours
    for op in [
        0x7402_4041,
        0xF402_4041,
        0xF402_8041,
        0xF402_C041,
        0x7500_4041,
        0xF500_4041,
    ] {
        assert_eq!(cls(&a64(0x3000, op)), (OTHER, NONE, 0, 0), "op {op:#x}");
    }
}

#[test]
fn a64_barriers_wfx_tstart() {
    assert_eq!(a64(0, 0xD503_3FDF).type_, OCSD_INSTR_ISB); // isb
    assert_eq!(a64(0, 0xD503_3F9F).type_, OCSD_INSTR_DSB_DMB); // dsb sy
    assert_eq!(a64(0, 0xD503_3BBF).type_, OCSD_INSTR_DSB_DMB); // dmb ish
    assert_eq!(a64(0, 0xD503_30FF).type_, OTHER); // sb
    assert_eq!(a64(0, 0xD503_207F).type_, OCSD_INSTR_WFI_WFE); // wfi
    assert_eq!(a64(0, 0xD503_205F).type_, OCSD_INSTR_WFI_WFE); // wfe
    assert_eq!(a64(0, 0xD503_1020).type_, OCSD_INSTR_WFI_WFE); // wfit x0
    assert_eq!(a64(0, 0xD503_1003).type_, OCSD_INSTR_WFI_WFE); // wfet x3
    assert_eq!(a64(0, 0xD523_3060).type_, OCSD_INSTR_TSTART); // tstart x0
    assert_eq!(a64(0, 0xD523_307E).type_, OCSD_INSTR_TSTART); // tstart x30
    assert_eq!(a64(0, 0xD503_201F).type_, OTHER); // nop
    assert_eq!(a64(0, 0xD503_245F).type_, OTHER); // bti c

    // WFIT/WFET and TSTART need ARCH_AA64; plain WFI/WFE do not.
    let v8 = |op| dec_arch(ocsd_isa_aarch64, ARCH_V8r3, 0, op).type_;
    assert_eq!(v8(0xD503_1020), OTHER);
    assert_eq!(v8(0xD523_3060), OTHER);
    assert_eq!(v8(0xD503_207F), OCSD_INSTR_WFI_WFE);

    // Options off
    let mut i = ocsd_instr_info {
        pe_type: ocsd_arch_profile_t {
            arch: ARCH_AA64,
            profile: profile_CortexA,
        },
        isa: ocsd_isa_aarch64,
        ..Default::default()
    };
    for (op, ty) in [
        (0xD503_3F9F, OTHER),
        (0xD503_207F, OTHER),
        (0xD503_3FDF, OCSD_INSTR_ISB),
    ] {
        i.opcode = op;
        decode_instruction(&mut i);
        assert_eq!(i.type_, ty, "op {op:#x}");
    }
    // A DSB with waypoints off is not then looked at as WFx/TSTART.
    i.opcode = 0xD503_309F;
    i.wfi_wfe_branch = 1;
    decode_instruction(&mut i);
    assert_eq!(i.type_, OTHER);
}

#[test]
fn a64_other_and_fields() {
    let mut i = ocsd_instr_info {
        pe_type: ocsd_arch_profile_t {
            arch: ARCH_AA64,
            profile: profile_CortexA,
        },
        isa: ocsd_isa_aarch64,
        opcode: 0x9100_0400, // add x0, x0, #1
        instr_size: 9,
        is_link: 1,
        is_conditional: 1,
        thumb_it_conditions: 3,
        sub_type: LINK,
        type_: BR,
        next_isa: ocsd_isa_arm,
        ..Default::default()
    };
    assert_eq!(decode_instruction(&mut i), OCSD_OK);
    assert_eq!(cls(&i), (OTHER, NONE, 0, 0));
    assert_eq!(
        (i.instr_size, i.next_isa, i.thumb_it_conditions),
        (4, ocsd_isa_aarch64, 0)
    );
    assert_eq!(i.opcode, 0x9100_0400);
}

#[test]
fn a64_bad_opcode_check() {
    assert!(aa64_opcode_is_invalid(0));
    assert!(aa64_opcode_is_invalid(0x0000_FFFF));
    assert!(!aa64_opcode_is_invalid(0x0001_0000));
    assert!(!aa64_opcode_is_invalid(0xD503_201F));

    let mk = |op| ocsd_instr_info {
        pe_type: ocsd_arch_profile_t {
            arch: ARCH_V8,
            profile: profile_CortexA,
        },
        isa: ocsd_isa_aarch64,
        opcode: op,
        is_conditional: 1,
        sub_type: LINK,
        type_: BR,
        ..Default::default()
    };
    let mut i = mk(0);
    assert_eq!(decode_instruction_ex(&mut i, true), OCSD_ERR_INVALID_OPCODE);
    assert_eq!((i.type_, i.sub_type, i.instr_size), (OTHER, NONE, 4));
    assert_eq!(i.is_conditional, 1); // not updated on error
    let mut i = mk(0x0000_1234);
    assert_eq!(decode_instruction_ex(&mut i, true), OCSD_ERR_INVALID_OPCODE);
    // Check off, or other ISAs: no error.
    let mut i = mk(0);
    assert_eq!(decode_instruction(&mut i), OCSD_OK);
    assert_eq!(i.type_, OTHER);
    let mut i = mk(0);
    i.isa = ocsd_isa_arm;
    assert_eq!(decode_instruction_ex(&mut i, true), OCSD_OK);
    // A valid opcode decodes normally with the check on.
    let mut i = mk(0x1400_0001);
    assert_eq!(decode_instruction_ex(&mut i, true), OCSD_OK);
    assert_eq!((i.type_, i.branch_addr), (BR, 4));
}

// ---------------------------------------------------------------------------
// A32

#[test]
fn a32_direct() {
    let i = a32(0x8000, 0xEA00_0000); // b #+8 (pc+8)
    assert_eq!(cls(&i), (BR, NONE, 0, 0));
    assert_eq!(
        (i.branch_addr, i.next_isa, i.instr_size),
        (0x8008, ocsd_isa_arm, 4)
    );
    assert_eq!(a32(0x8000, 0xEAFF_FFFE).branch_addr, 0x8000); // b .
    assert_eq!(
        a32(0x8000, 0xEA80_0000).branch_addr,
        0x8008u32.wrapping_sub(0x200_0000) as u64
    ); // most negative, 32-bit wrap

    let i = a32(0x8000, 0xEB00_0001); // bl
    assert_eq!(cls(&i), (BR, LINK, 1, 0));
    assert_eq!(i.branch_addr, 0x800C);

    let i = a32(0x8000, 0x1B00_0000); // blne
    assert_eq!(cls(&i), (BR, LINK, 1, 1));
    let i = a32(0x8000, 0x0A00_0000); // beq
    assert_eq!(cls(&i), (BR, NONE, 0, 1));

    let i = a32(0x8000, 0xFA00_0000); // blx #imm -> T32
    assert_eq!(cls(&i), (BR, LINK, 1, 0));
    assert_eq!((i.branch_addr, i.next_isa), (0x8008, ocsd_isa_thumb2));
    let i = a32(0x8000, 0xFB00_0000); // blx with H=1
    assert_eq!((i.branch_addr, i.next_isa), (0x800A, ocsd_isa_thumb2));

    // 32-bit address arithmetic: the address is truncated and wraps.
    assert_eq!(a32(0x1_0000_8000, 0xEA00_0000).branch_addr, 0x8008);
    assert_eq!(a32(0xFFFF_FFFC, 0xEA00_0000).branch_addr, 4);
    assert_eq!(a32(0, 0xEAFF_FFF0).branch_addr, 0xFFFF_FFC8);
}

#[test]
fn a32_indirect() {
    let cases: &[(u32, ocsd_instr_subtype, u8, &str)] = &[
        (0xE12F_FF1E, V7RET, 0, "bx lr"),
        (0xE12F_FF10, NONE, 0, "bx r0"),
        (0xE12F_FF33, LINK, 1, "blx r3"),
        (0xE12F_FF3E, LINK, 1, "blx lr"),
        (0xE12F_FF20, NONE, 0, "bxj r0"),
        (0xE8BD_8010, V7RET, 0, "pop {r4, pc}"),
        (0xE890_8000, NONE, 0, "ldm r0, {pc}"),
        (0xE91B_8800, NONE, 0, "ldmdb r11, {r11, pc}"),
        (0xE49D_F004, V7RET, 0, "ldr pc, [sp], #4"),
        (0xE590_F004, NONE, 0, "ldr pc, [r0, #4]"),
        (0xE79F_F100, NONE, 0, "ldr pc, [pc, r0, lsl #2]"),
        (0xE1A0_F00E, V7RET, 0, "mov pc, lr"),
        (0xE1B0_F00E, NONE, 0, "movs pc, lr"),
        (0xE1A0_F000, NONE, 0, "mov pc, r0"),
        (0xE08F_F100, NONE, 0, "add pc, pc, r0, lsl #2"),
        (0xE280_F004, NONE, 0, "add pc, r0, #4"),
        (0xE25E_F004, NONE, 0, "subs pc, lr, #4"),
        (0xF890_0A00, NONE, 0, "rfeia r0"),
        // OpenCSD's DP-register-to-PC pattern also catches LDRH pc (unpredictable).
        (0xE1DF_F0B0, NONE, 0, "ldrh pc, [pc]"),
    ];
    for &(op, sub, link, name) in cases {
        let i = a32(0x8000, op);
        assert_eq!((i.type_, i.sub_type, i.is_link), (IBR, sub, link), "{name}");
    }
    assert_eq!(a32(0, 0x012F_FF1E).is_conditional, 1); // bxeq lr
                                                       // Not branches
    for (op, name) in [
        (0xE350_F000u32, "cmp r0, #0 (Rd field 1111)"),
        (0xE1A0_0001, "mov r0, r1"),
        (0xE590_0004, "ldr r0, [r0, #4]"),
        (0xE8BD_4010, "pop {r4, lr}"),
        (0xE10F_F000, "mrs pc?, apsr (misc space)"),
        (0xE180_F090, "extra load/store space with Rd = pc"),
        (0xE320_F000, "nop"),
        (0xF12F_FF1E, "bx in the unconditional space"),
        (0xEF00_0000, "svc"),
    ] {
        assert_eq!(cls(&a32(0x8000, op)), (OTHER, NONE, 0, 0), "{name}");
    }
}

#[test]
fn a32_barriers_wfx_conditional() {
    assert_eq!(a32(0, 0xF57F_F06F).type_, OCSD_INSTR_ISB);
    assert_eq!(a32(0, 0xF57F_F04F).type_, OCSD_INSTR_DSB_DMB);
    assert_eq!(a32(0, 0xF57F_F05F).type_, OCSD_INSTR_DSB_DMB);
    assert_eq!(a32(0, 0xF57F_F07F).type_, OTHER); // sb
    assert_eq!(a32(0, 0xEE07_0F95).type_, OCSD_INSTR_ISB); // cp15 isb
    assert_eq!(a32(0, 0xEE07_0F9A).type_, OCSD_INSTR_DSB_DMB); // cp15 dsb
    assert_eq!(a32(0, 0xEE07_0FBA).type_, OCSD_INSTR_DSB_DMB); // cp15 dmb
    assert_eq!(a32(0, 0xE320_F003).type_, OCSD_INSTR_WFI_WFE);
    assert_eq!(a32(0, 0xE320_F002).type_, OCSD_INSTR_WFI_WFE);
    assert_eq!(a32(0, 0x0320_F003).is_conditional, 1); // wfieq
    assert_eq!(a32(0, 0xE1A0_0001).is_conditional, 0);
    assert_eq!(a32(0, 0x01A0_0001).is_conditional, 1);
    assert_eq!(a32(0, 0xF57F_F06F).is_conditional, 0);

    let mut i = ocsd_instr_info {
        isa: ocsd_isa_arm,
        opcode: 0xF57F_F04F,
        ..Default::default()
    };
    decode_instruction(&mut i);
    assert_eq!(i.type_, OTHER);
    i.opcode = 0xE320_F003;
    decode_instruction(&mut i);
    assert_eq!(i.type_, OTHER);
}

// ---------------------------------------------------------------------------
// T32

#[test]
fn t32_opcode_convention_and_size() {
    let mut i = ocsd_instr_info {
        isa: ocsd_isa_thumb2,
        instr_addr: 0x100,
        opcode: 0xFFFE_F7FF, // bl . (f7ff fffe) read as a little-endian word
        ..Default::default()
    };
    decode_instruction(&mut i);
    assert_eq!(i.opcode, 0xF7FF_FFFE); // halfwords swapped and written back
    assert_eq!(i.instr_size, 4);
    assert_eq!(a_t(0x4608, 0xE800).instr_size, 2); // mov r0, r1 followed by anything
    assert_eq!(a_t(0xE800, 0x0000).instr_size, 4);
    assert_eq!(a_t(0xE7FF, 0x0000).instr_size, 2);
    assert_eq!(a_t(0xF000, 0x0000).instr_size, 4);
    assert!(is_wide_thumb(0xE800) && is_wide_thumb(0xFFFF) && !is_wide_thumb(0xE7FF));
}

fn a_t(hw1: u16, hw2: u16) -> ocsd_instr_info {
    t32(0x1000, hw1, hw2)
}

#[test]
fn t32_16bit_branches() {
    let i = t32(0x100, 0xE7FE, 0); // b .
    assert_eq!(cls(&i), (BR, NONE, 0, 0));
    assert_eq!(
        (i.branch_addr, i.instr_size, i.next_isa),
        (0x100, 2, ocsd_isa_thumb2)
    );
    assert_eq!(
        t32(0x100, 0xE400, 0).branch_addr,
        0x104u32.wrapping_sub(0x800) as u64
    ); // most negative, 32-bit wrap
    assert_eq!(t32(0x100, 0xE3FF, 0).branch_addr, 0x104 + 0x7FE);

    let i = t32(0x100, 0xD002, 0xFFFF); // beq #+4 (pc+4+4)
    assert_eq!(cls(&i), (BR, NONE, 0, 1));
    assert_eq!(i.branch_addr, 0x108);
    assert_eq!(t32(0x100, 0xD1FC, 0).branch_addr, 0xFC); // bne #-8

    // udf and svc are not B<c>
    assert_eq!(cls(&t32(0x100, 0xDE00, 0)), (OTHER, NONE, 0, 0));
    assert_eq!(cls(&t32(0x100, 0xDF00, 0)), (OTHER, NONE, 0, 0));

    let i = t32(0x100, 0xB110, 0); // cbz r0, #+4
    assert_eq!(cls(&i), (BR, NONE, 0, 1));
    assert_eq!(i.branch_addr, 0x108);
    let i = t32(0x100, 0xB910, 0); // cbnz r0, #+4
    assert_eq!((cls(&i), i.branch_addr), ((BR, NONE, 0, 1), 0x108));
    assert_eq!(t32(0x100, 0xBBF8, 0).branch_addr, 0x104 + 126); // max, forward only
}

#[test]
fn t32_32bit_branches() {
    let i = t32(0x100, 0xF7FF, 0xFFFE); // bl .
    assert_eq!(cls(&i), (BR, LINK, 1, 0));
    assert_eq!(
        (i.branch_addr, i.next_isa, i.instr_size),
        (0x100, ocsd_isa_thumb2, 4)
    );

    let i = t32(0x1000, 0xF000, 0xFFFE); // bl #+0xffc (S=0, J1=J2=1)
    assert_eq!(i.branch_addr, 0x2000);

    let i = t32(0x2000, 0xF7FE, 0xBFFE); // b.w to 0x1000
    assert_eq!(cls(&i), (BR, NONE, 0, 0));
    assert_eq!(i.branch_addr, 0x1000);

    let i = t32(0x1000, 0xF000, 0x9000); // b.w #+0 with J1=J2=0, S=0: offset 0xC00000
    assert_eq!(i.branch_addr, 0x1004 + 0xC0_0000);
    let i = t32(0x0100_0000, 0xF400, 0x9000); // S=1, J1=J2=0: offset -0x1000000
    assert_eq!(i.branch_addr, 0x0100_0004u64.wrapping_sub(0x100_0000));

    let i = t32(0x1002, 0xF7FF, 0xEFFE); // blx . (to A32, aligned)
    assert_eq!(cls(&i), (BR, LINK, 1, 0));
    assert_eq!((i.branch_addr, i.next_isa), (0x1000, ocsd_isa_arm));
    let i = t32(0x1002, 0xF000, 0xC000); // blx with J1=J2=0 -> I1=I2=1
    assert_eq!(i.branch_addr, 0x1004 + 0xC0_0000);
    let i = t32(0x1002, 0xF000, 0xE800); // blx #+0 (J1=J2=1)
    assert_eq!(i.branch_addr, 0x1004);
    let i = t32(0x1000, 0xF000, 0xC000); // blx from an aligned address
    assert_eq!(i.branch_addr, 0x1004 + 0xC0_0000);
    assert_eq!(t32(0x1002, 0xF7FF, 0xEFFF).type_, OTHER); // H=1 is undefined

    let i = t32(0x100, 0xF000, 0x8000); // beq.w #+0
    assert_eq!(cls(&i), (BR, NONE, 0, 1));
    assert_eq!(i.branch_addr, 0x104);
    let i = t32(0x100, 0xF43F, 0xAFFE); // beq.w . (offset -4)
    assert_eq!((cls(&i), i.branch_addr), ((BR, NONE, 0, 1), 0x100));
    // cond 111x in B T3 space is misc control, not a branch
    assert_eq!(t32(0x100, 0xF3BF, 0x8F6F).type_, OCSD_INSTR_ISB);

    // 32-bit address arithmetic
    assert_eq!(t32(0xFFFF_FFFE, 0xE000, 0).branch_addr, 2);
    assert_eq!(t32(0x1_0000_0100, 0xE7FE, 0).branch_addr, 0x100);
}

#[test]
fn t32_indirect() {
    let cases: &[(u16, u16, ocsd_instr_subtype, u8, &str)] = &[
        (0x4770, 0, V7RET, 0, "bx lr"),
        (0x4700, 0, NONE, 0, "bx r0"),
        (0x4788, 0, LINK, 1, "blx r1"),
        (0x4774, 0, V7RET, 0, "bxns lr"),
        (0x4704, 0, NONE, 0, "bxns r0"),
        (0x478C, 0, LINK, 1, "blxns r1"),
        (0xBD10, 0, V7RET, 0, "pop {r4, pc}"),
        (0x46F7, 0, V7RET, 0, "mov pc, lr"),
        (0x4687, 0, NONE, 0, "mov pc, r0"),
        (0x4487, 0, NONE, 0, "add pc, r0"),
        (0xE8D0, 0xF001, NONE, 0, "tbb [r0, r1]"),
        (0xE8D0, 0xF011, NONE, 0, "tbh [r0, r1, lsl #1]"),
        (0xE810, 0xC000, NONE, 0, "rfedb r0"),
        (0xE990, 0xC000, NONE, 0, "rfeia r0"),
        (0xF3DE, 0x8F00, NONE, 0, "subs pc, lr, #0 (eret)"),
        (0xF3C0, 0x8F00, NONE, 0, "bxj r0"),
        (0xF8D0, 0xF004, NONE, 0, "ldr.w pc, [r0, #4]"),
        (0xF8DF, 0xF004, NONE, 0, "ldr.w pc, [pc, #4]"),
        (0xF85F, 0xF004, NONE, 0, "ldr.w pc, [pc, #-4]"),
        (0xF85D, 0xFB04, V7RET, 0, "ldr pc, [sp], #4"),
        (0xF850, 0xFB04, NONE, 0, "ldr pc, [r0], #4"),
        (0xF850, 0xF021, NONE, 0, "ldr.w pc, [r0, r1, lsl #2]"),
        (0xE8BD, 0x8010, V7RET, 0, "pop.w {r4, pc}"),
        (0xE890, 0x8010, NONE, 0, "ldmia r0, {r4, pc}"),
        (0xE910, 0x8010, NONE, 0, "ldmdb r0, {r4, pc}"),
    ];
    for &(hw1, hw2, sub, link, name) in cases {
        let i = t32(0x100, hw1, hw2);
        assert_eq!((i.type_, i.sub_type, i.is_link), (IBR, sub, link), "{name}");
    }
    for (hw1, hw2, name) in [
        (0x4608u16, 0u16, "mov r0, r1"),
        (0xBC10, 0, "pop {r4}"),
        (0xE8BD, 0x4010, "pop.w {r4, lr}"),
        (0xF8D0, 0x0004, "ldr.w r0, [r0, #4]"),
        (0xBF00, 0, "nop"),
    ] {
        assert_eq!(cls(&t32(0x100, hw1, hw2)), (OTHER, NONE, 0, 0), "{name}");
    }
}

#[test]
fn t32_barriers_wfx() {
    assert_eq!(a_t(0xF3BF, 0x8F6F).type_, OCSD_INSTR_ISB);
    assert_eq!(a_t(0xF3BF, 0x8F4F).type_, OCSD_INSTR_DSB_DMB);
    assert_eq!(a_t(0xF3BF, 0x8F5F).type_, OCSD_INSTR_DSB_DMB);
    assert_eq!(a_t(0xEE07, 0x0F95).type_, OCSD_INSTR_ISB);
    assert_eq!(a_t(0xBF30, 0).type_, OCSD_INSTR_WFI_WFE);
    assert_eq!(a_t(0xBF20, 0).type_, OCSD_INSTR_WFI_WFE);
    assert_eq!(a_t(0xF3AF, 0x8003).type_, OCSD_INSTR_WFI_WFE);
    assert_eq!(a_t(0xF3AF, 0x8002).type_, OCSD_INSTR_WFI_WFE);
    assert_eq!(a_t(0xF3AF, 0x8000).type_, OTHER); // nop.w
    let mut i = ocsd_instr_info {
        isa: ocsd_isa_thumb2,
        opcode: 0x8F4F_F3BF,
        ..Default::default()
    };
    decode_instruction(&mut i);
    assert_eq!(i.type_, OTHER);
    i.opcode = 0xBF30;
    decode_instruction(&mut i);
    assert_eq!(i.type_, OTHER);
}

#[test]
fn t32_armv81m_loops() {
    // LE lr, <label>: backwards, imml:immh:'0'
    let i = t32(0x1000, 0xF00F, 0xC00B); // offset 0x14
    assert_eq!(cls(&i), (BR, NONE, 0, 0));
    assert_eq!(
        (i.branch_addr, i.next_isa, i.instr_size),
        (0x1004 - 0x14, ocsd_isa_thumb2, 4)
    );
    assert_eq!(t32(0x1000, 0xF00F, 0xC80B).branch_addr, 0x1004 - 0x16); // immh set
    assert_eq!(t32(0x1000, 0xF02F, 0xC00B).branch_addr, 0x1004 - 0x14); // LE (no LR update)
    assert_eq!(t32(0x1000, 0xF01F, 0xC00B).branch_addr, 0x1004 - 0x14); // LETP
    assert_eq!(t32(0x1000, 0xF00F, 0xCFFF).branch_addr, 0x1004 - 0xFFE);
    // WLS lr, r0, <label>; WLSTP.8/16/32/64: forwards
    let i = t32(0x1000, 0xF040, 0xC011);
    assert_eq!(cls(&i), (BR, NONE, 0, 0));
    assert_eq!(i.branch_addr, 0x1004 + 0x20);
    assert_eq!(t32(0x1000, 0xF043, 0xC811).branch_addr, 0x1004 + 0x22); // WLS, r3, immh
    assert_eq!(t32(0x1000, 0xF000, 0xC011).branch_addr, 0x1004 + 0x20); // WLSTP.8
    assert_eq!(t32(0x1000, 0xF032, 0xC011).branch_addr, 0x1004 + 0x20); // WLSTP.64 r2
                                                                        // DLS / DLSTP / LCTP and the branch-future family (BF, BFX, BFL, BFLX,
                                                                        // BFCSEL: second halfword 111x xxxx xxxx xxx1 with bit 12 clear) are
                                                                        // not branches for OpenCSD.
    for (hw1, hw2) in [
        (0xF040u16, 0xE001u16),    // dls lr, r0
        (0xF000, 0xE001),          // dlstp.8 lr, r0
        (0xF00F, 0xE001),          // lctp
        (0xF0C0, 0xE801),          // bf
        (0xF060, 0xE001),          // bfx
        (0xF000, 0xC001 | 0x2000), // bfl-style halfword (bit 13 set)
        (0xF080, 0xE001),          // bfcsel-style
    ] {
        assert_eq!(
            cls(&t32(0x1000, hw1, hw2)),
            (OTHER, NONE, 0, 0),
            "{hw1:#x} {hw2:#x}"
        );
    }
}

#[test]
fn t32_it_block_tracking() {
    assert_eq!(t32::it_block_size(0xBF08_0000), 1); // it eq
    assert_eq!(t32::it_block_size(0xBF04_0000), 2); // itt eq
    assert_eq!(t32::it_block_size(0xBF0C_0000), 2); // ite eq
    assert_eq!(t32::it_block_size(0xBF02_0000), 3); // ittt eq
    assert_eq!(t32::it_block_size(0xBF01_0000), 4); // itttt eq
    assert_eq!(t32::it_block_size(0xBF00_0000), 0); // nop
    assert_eq!(t32::it_block_size(0xBF30_0000), 0); // wfi

    let mut i = ocsd_instr_info {
        isa: ocsd_isa_thumb2,
        track_it_block: 1,
        ..Default::default()
    };
    let mut step = |hw: u16| {
        i.opcode = hw as u32;
        i.instr_addr += 2;
        assert_eq!(decode_instruction(&mut i), OCSD_OK);
        (i.type_, i.is_conditional, i.thumb_it_conditions)
    };
    assert_eq!(step(0xBF0C), (OTHER, 0, 2)); // ite eq
    assert_eq!(step(0x4608), (OTHER, 1, 1)); // moveq r0, r1
    assert_eq!(step(0x4770), (IBR, 1, 0)); // bxne lr
    assert_eq!(step(0x4608), (OTHER, 0, 0)); // mov r0, r1
    assert_eq!(step(0xBF01), (OTHER, 0, 4)); // itttt eq
    assert_eq!(step(0xBF04), (OTHER, 1, 3)); // an IT inside a block is not an IT here
    assert_eq!(step(0x4608), (OTHER, 1, 2));
    assert_eq!(step(0xE7FE), (BR, 1, 1)); // b inside the block
    assert_eq!(step(0x4608), (OTHER, 1, 0));

    // Only OTHER instructions start a block.
    let mut i = ocsd_instr_info {
        isa: ocsd_isa_thumb2,
        track_it_block: 1,
        ..Default::default()
    };
    i.opcode = 0xBF30; // wfi (with wfi_wfe_branch off it is OTHER, but not an IT either)
    decode_instruction(&mut i);
    assert_eq!(i.thumb_it_conditions, 0);

    // Tracking off: thumb_it_conditions is left alone.
    let mut i = ocsd_instr_info {
        isa: ocsd_isa_thumb2,
        thumb_it_conditions: 3,
        ..Default::default()
    };
    i.opcode = 0xBF04;
    decode_instruction(&mut i);
    assert_eq!((i.thumb_it_conditions, i.is_conditional), (3, 0));
    // A32/A64 clear it.
    i.isa = ocsd_isa_arm;
    i.opcode = 0xE1A0_0001;
    decode_instruction(&mut i);
    assert_eq!(i.thumb_it_conditions, 0);
}

// ---------------------------------------------------------------------------
// General

#[test]
fn unsupported_isas() {
    for isa in [
        ocsd_isa_tee,
        ocsd_isa_jazelle,
        ocsd_isa_custom,
        ocsd_isa_unknown,
        -1,
        99,
    ] {
        let mut i = ocsd_instr_info {
            isa,
            opcode: 0x1400_0001,
            sub_type: LINK,
            type_: BR,
            instr_size: 7,
            ..Default::default()
        };
        assert_eq!(decode_instruction(&mut i), OCSD_ERR_UNSUPPORTED_ISA);
        assert_eq!(
            (i.sub_type, i.type_, i.instr_size, i.opcode),
            (NONE, BR, 7, 0x1400_0001)
        );
    }
}

#[test]
fn no_panic_on_any_input() {
    // xorshift over many opcodes, extreme addresses, every ISA and option.
    let mut rnd = crate::common::xorshift32(0x1234_5678);
    let addrs = [
        0u64,
        1,
        2,
        0xFFFF_FFFE,
        0xFFFF_FFFF,
        0x1_0000_0000,
        u64::MAX,
        u64::MAX - 1,
    ];
    let archs = [
        ARCH_UNKNOWN,
        ARCH_V7,
        ARCH_V8,
        ARCH_V8r3,
        ARCH_AA64,
        -1,
        i32::MAX,
    ];
    for n in 0..200_000u32 {
        let x = rnd();
        let op = if n < 4 {
            [0, u32::MAX, 0x8000_0000, 0x7FFF_FFFF][n as usize]
        } else {
            x
        };
        for isa in [ocsd_isa_arm, ocsd_isa_thumb2, ocsd_isa_aarch64] {
            let mut i = ocsd_instr_info {
                pe_type: ocsd_arch_profile_t {
                    arch: archs[(n % 7) as usize],
                    profile: 0,
                },
                isa,
                instr_addr: addrs[(n % 8) as usize],
                opcode: op,
                dsb_dmb_waypoints: (n & 1) as u8,
                wfi_wfe_branch: (n >> 1 & 1) as u8,
                track_it_block: (n >> 2 & 1) as u8,
                thumb_it_conditions: (n % 6) as u8,
                ..Default::default()
            };
            let err = decode_instruction_ex(&mut i, n & 8 != 0);
            assert!(err == OCSD_OK || err == OCSD_ERR_INVALID_OPCODE);
            assert!(i.instr_size == 2 || i.instr_size == 4);
            if i.type_ != BR && i.type_ != IBR {
                assert_eq!((i.is_link, i.sub_type), (0, NONE));
            }
        }
    }
}
