//! T32 instruction classification.
//!
//! Every function here takes the opcode in OpenCSD's internal T32 layout:
//! the first halfword in bits `[31:16]` and the following halfword in bits
//! `[15:0]` (for a 16-bit instruction the low half is whatever follows it).

use super::{Barrier, Decoded};
use crate::abi::*;

/// True when the halfword `hw` is the first half of a 32-bit instruction.
#[inline]
pub const fn is_wide_thumb(hw: u16) -> bool {
    hw & 0xF800 >= 0xE800
}

/// Sign extend the low `bits` bits of `v` (1 <= bits <= 32).
#[inline(always)]
const fn sext(v: u32, bits: u32) -> u32 {
    (((v << (32 - bits)) as i32) >> (32 - bits)) as u32
}

/// Direct branch kinds (and how their target is computed).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direct {
    /// `B<c>` encoding T1 (16-bit, conditional).
    BCondT1,
    /// B encoding T2 (16-bit).
    BT2,
    /// `B<c>` encoding T3 (32-bit, conditional).
    BCondT3,
    /// B encoding T4 or BL (bit 14 of the second halfword set).
    BT4OrBl,
    /// BLX (immediate): to A32.
    BlxImm,
    /// CBZ, CBNZ (forward only).
    Cbz,
    /// Armv8.1-M LE, LETP: backwards loop end.
    LoopEnd,
    /// Armv8.1-M WLS, WLSTP: forwards loop start.
    LoopStart,
}

#[inline]
const fn is_b_cond_t1(op: u32) -> bool {
    // cond 1110 is UDF, 1111 is SVC
    op & 0xF000_0000 == 0xD000_0000 && op & 0x0E00_0000 != 0x0E00_0000
}

#[inline]
const fn is_b_cond_t3(op: u32) -> bool {
    // cond 111x are the branch / misc control space
    op & 0xF800_D000 == 0xF000_8000 && op & 0x0380_0000 != 0x0380_0000
}

#[inline]
const fn is_cbz(op: u32) -> bool {
    op & 0xF500_0000 == 0xB100_0000
}

#[inline]
const fn is_loop_end(op: u32) -> bool {
    matches!(op & 0xFFFF_F001, 0xF00F_C001 | 0xF02F_C001 | 0xF01F_C001) // LE T1, LE T2, LETP
}

#[inline]
const fn is_loop_start(op: u32) -> bool {
    op & 0xFFF0_F001 == 0xF040_C001 // WLS
        || op & 0xFFC0_F001 == 0xF000_C001 // WLSTP
}

#[inline]
fn direct(op: u32) -> Option<Direct> {
    Some(match op {
        _ if is_b_cond_t1(op) => Direct::BCondT1,
        _ if op & 0xF800_0000 == 0xE000_0000 => Direct::BT2,
        _ if is_b_cond_t3(op) => Direct::BCondT3,
        _ if op & 0xF800_9000 == 0xF000_9000 => Direct::BT4OrBl,
        _ if op & 0xF800_D001 == 0xF000_C000 => Direct::BlxImm,
        _ if is_cbz(op) => Direct::Cbz,
        _ if is_loop_end(op) => Direct::LoopEnd,
        _ if is_loop_start(op) => Direct::LoopStart,
        _ => return None,
    })
}

/// S:I1:I2:imm10:imm11 style offset of B T4 / BL / BLX, with `imm11_mask`
/// selecting which low bits of the second halfword take part.
#[inline(always)]
const fn bl_offset(op: u32, imm11_mask: u32) -> u32 {
    let s = (op >> 26) & 1;
    let i1 = !((op >> 13) ^ s) & 1;
    let i2 = !((op >> 11) ^ s) & 1;
    let imm10 = (op >> 16) & 0x3FF;
    let imm11 = op & imm11_mask;
    sext(
        (s << 24) | (i1 << 23) | (i2 << 22) | (imm10 << 12) | (imm11 << 1),
        25,
    )
}

/// Loop instruction offset: imml:immh:'0' (zero-extended).
#[inline(always)]
const fn loop_offset(op: u32) -> u32 {
    ((op & 0x7FE) << 1) | ((op & 0x800) >> 10)
}

/// Branch target, with bit 0 set when the target stays T32.
#[inline]
const fn direct_target(kind: Direct, addr: u32, op: u32) -> u32 {
    let pc = addr.wrapping_add(4);
    match kind {
        Direct::BCondT1 => pc.wrapping_add(sext((op >> 16) & 0xFF, 8) << 1) | 1,
        Direct::BT2 => pc.wrapping_add(sext((op >> 16) & 0x7FF, 11) << 1) | 1,
        Direct::BCondT3 => {
            let s = (op >> 26) & 1;
            let j1 = (op >> 13) & 1;
            let j2 = (op >> 11) & 1;
            let imm6 = (op >> 16) & 0x3F;
            let imm11 = op & 0x7FF;
            let off = sext(
                (s << 20) | (j2 << 19) | (j1 << 18) | (imm6 << 12) | (imm11 << 1),
                21,
            );
            pc.wrapping_add(off) | 1
        }
        Direct::BT4OrBl => pc.wrapping_add(bl_offset(op, 0x7FF)) | 1,
        // Align(PC, 4); the target is A32 so bit 0 stays clear.
        Direct::BlxImm => (addr & !3)
            .wrapping_add(4)
            .wrapping_add(bl_offset(op, 0x7FE)),
        Direct::Cbz => {
            let i = (op >> 25) & 1;
            let imm5 = (op >> 19) & 0x1F;
            pc.wrapping_add((i << 6) | (imm5 << 1)) | 1
        }
        Direct::LoopEnd => pc.wrapping_sub(loop_offset(op)) | 1,
        Direct::LoopStart => pc.wrapping_add(loop_offset(op)) | 1,
    }
}

/// Indirect branches: `Some((is_link, sub_type))`.
#[inline]
fn indirect(op: u32) -> Option<(bool, ocsd_instr_subtype)> {
    const PLAIN: Option<(bool, ocsd_instr_subtype)> = Some((false, OCSD_S_INSTR_NONE));
    const RET: Option<(bool, ocsd_instr_subtype)> = Some((false, OCSD_S_INSTR_V7_IMPLIED_RET));

    match op {
        // BX, BLX (register), and v8-M BXNS, BLXNS
        _ if op & 0xFF00_0000 == 0x4700_0000 => {
            if op & 0x0080_0000 != 0 {
                Some((true, OCSD_S_INSTR_BR_LINK))
            } else if op & 0x0078_0000 == 0x0070_0000 {
                RET // BX LR
            } else {
                PLAIN
            }
        }
        // BXJ (behaves as BX in v8)
        _ if op & 0xFFF0_D000 == 0xF3C0_8000 => PLAIN,
        // POP {.., pc}
        _ if op & 0xFF00_0000 == 0xBD00_0000 => RET,
        // MOV PC, Rm / ADD PC, Rm; MOV PC, LR is a return.
        _ if op & 0xFD87_0000 == 0x4487_0000 => {
            if op & 0xFFFF_0000 == 0x46F7_0000 {
                RET
            } else {
                PLAIN
            }
        }
        // TBB, TBH
        _ if op & 0xFFF0_FFE0 == 0xE8D0_F000 => PLAIN,
        // RFE (T1, T2)
        _ if op & 0xFFD0_0000 == 0xE810_0000 => PLAIN,
        _ if op & 0xFFD0_0000 == 0xE990_0000 => PLAIN,
        // SUBS PC, LR, #imm (incl. ERET)
        _ if op & 0xFFF0_D000 == 0xF3D0_8000 => PLAIN,
        // LDR PC, imm (T3)
        _ if op & 0xFFF0_F000 == 0xF8D0_F000 => PLAIN,
        // LDR PC, literal (T2)
        _ if op & 0xFF7F_F000 == 0xF85F_F000 => PLAIN,
        // LDR PC, imm (T4); LDR PC, [SP], #imm is a return.
        _ if op & 0xFFF0_F800 == 0xF850_F800 => {
            if op & 0x000F_0F00 == 0x000D_0B00 {
                RET
            } else {
                PLAIN
            }
        }
        // LDR PC, register (T2)
        _ if op & 0xFFF0_FFC0 == 0xF850_F000 => PLAIN,
        // LDM with PC in the list; LDMIA SP!, {..,pc} is a return.
        _ if op & 0xFE50_8000 == 0xE810_8000 => {
            if op & 0x0FFF_0000 == 0x08BD_0000 {
                RET
            } else {
                PLAIN
            }
        }
        _ => None,
    }
}

#[inline]
fn barrier(op: u32) -> Barrier {
    if op & 0xFFFF_FF00 == 0xF3BF_8F00 {
        match op & 0xF0 {
            0x40 => Barrier::Dsb,
            0x50 => Barrier::Dmb,
            0x60 => Barrier::Isb,
            _ => Barrier::None,
        }
    } else if op & 0xFFFF_0F00 == 0xEE07_0F00 {
        // CP15 barrier operations
        match op & 0xFF {
            0x9A => Barrier::Dsb,
            0xBA => Barrier::Dmb,
            0x95 => Barrier::Isb,
            _ => Barrier::None,
        }
    } else {
        Barrier::None
    }
}

#[inline]
const fn is_wfx(op: u32) -> bool {
    op & 0xFFFF_FFFE == 0xF3AF_8002 // WFE.W, WFI.W
        || op & 0xFFEF_0000 == 0xBF20_0000 // WFE, WFI
}

/// `B<c>` T1, `B<c>` T3, CBZ, CBNZ.
#[inline]
const fn is_conditional(op: u32) -> bool {
    is_b_cond_t1(op) || is_b_cond_t3(op) || is_cbz(op)
}

/// For an IT instruction, the number of instructions it makes conditional
/// (1 to 4); 0 for anything else.
#[inline]
pub(crate) const fn it_block_size(op: u32) -> u8 {
    if op & 0xFF00_0000 != 0xBF00_0000 {
        return 0;
    }
    let mask = (op >> 16) & 0xF;
    if mask == 0 {
        return 0; // hint space
    }
    // The position of the lowest set bit of the mask gives the count.
    4 - mask.trailing_zeros() as u8
}

/// Instructions none of whose encodings is a branch, IT or hint, barrier
/// or conditional: 16-bit ones whose first four bits are `0b0000`-`0b0011`,
/// `0b0101`-`0b1010` or `0b1100` (shifts, adds, moves and compares with
/// immediates, loads and stores, ADR and SP adds, LDM/STM without PC), and
/// 32-bit ones starting `0b1111` whose second halfword's top bit is clear
/// (data processing, loads and stores without PC as the destination,
/// multiplies: every branch, `LDR PC`, `SUBS PC, LR`, barrier and WFI/WFE
/// there has it set). Such an instruction is plain (`OCSD_INSTR_OTHER`,
/// unconditional outside IT blocks) without asking each of the
/// classifications in [`classify`], which the test
/// `plain_halfwords_are_none_of_the_classes` checks.
#[inline(always)]
const fn is_plain(op: u32) -> bool {
    const PLAIN_T16: u32 = 0b0001_0111_1110_1111;
    (PLAIN_T16 >> (op >> 28)) & 1 != 0 || (op >> 28 == 0xF && op & 0x8000 == 0)
}

/// The branch, barrier and condition classification of `op` (the
/// halfwords swapped) into `info`, its subtype into `sub_type`.
#[inline(always)]
fn classify(info: &mut ocsd_instr_info, op: u32, sub_type: &mut ocsd_instr_subtype) {
    if let Some(kind) = direct(op) {
        let npc = direct_target(kind, info.instr_addr as u32, op);
        info.type_ = OCSD_INSTR_BR;
        info.branch_addr = (npc & !1) as ocsd_vaddr_t;
        if npc & 1 == 0 {
            info.next_isa = ocsd_isa_arm;
        }
        let link = match kind {
            Direct::BT4OrBl => op & 0x4000 != 0,
            Direct::BlxImm => true,
            _ => false,
        };
        if link {
            info.is_link = 1;
            *sub_type = OCSD_S_INSTR_BR_LINK;
        }
    } else if let Some((link, sub)) = indirect(op) {
        info.type_ = OCSD_INSTR_BR_INDIRECT;
        info.is_link = link as u8;
        *sub_type = sub;
    } else {
        match barrier(op) {
            Barrier::Isb => info.type_ = OCSD_INSTR_ISB,
            Barrier::Dsb | Barrier::Dmb => {
                if info.dsb_dmb_waypoints != 0 {
                    info.type_ = OCSD_INSTR_DSB_DMB;
                }
            }
            Barrier::None => {
                if info.wfi_wfe_branch != 0 && is_wfx(op) {
                    info.type_ = OCSD_INSTR_WFI_WFE;
                }
            }
        }
    }

    if is_conditional(op) {
        info.is_conditional = 1;
    }
}

/// Decode a T32 opcode into `info`. `info.opcode` comes in as the
/// little-endian word read at the instruction address and is written back
/// with its halfwords swapped.
#[inline]
pub(crate) fn decode(info: &mut ocsd_instr_info) -> Decoded {
    let op = info.opcode.rotate_left(16);
    info.opcode = op;

    info.instr_size = if is_wide_thumb((op >> 16) as u16) {
        4
    } else {
        2
    };
    info.type_ = OCSD_INSTR_OTHER;
    info.next_isa = info.isa;
    info.is_link = 0;
    info.is_conditional = 0;

    let mut sub_type = OCSD_S_INSTR_NONE;
    if !is_plain(op) {
        classify(info, op, &mut sub_type);
    }

    if info.track_it_block != 0 {
        if info.thumb_it_conditions == 0 {
            // Only a plain instruction can be an IT.
            if info.type_ == OCSD_INSTR_OTHER {
                info.thumb_it_conditions = it_block_size(op);
            }
        } else {
            // Inside an IT block: conditional, one fewer to go.
            info.is_conditional = 1;
            info.thumb_it_conditions -= 1;
        }
    }
    Decoded {
        err: OCSD_OK,
        sub_type,
    }
}

#[cfg(test)]
mod plain_tests {
    use super::*;

    #[test]
    fn plain_halfwords_are_none_of_the_classes() {
        let mut plain = 0u64;
        // any second halfword with its top bit clear, and set
        let mut seconds: Vec<u32> = vec![0x0000, 0x0001, 0x0F00, 0x0F9A, 0x0FBA, 0x0F95, 0x4000, 0x7000, 0x7FFF, 0x4770, 0x3F00];
        seconds.extend([0x8000, 0xC001, 0xF000, 0xFFFF, 0xBF00, 0x8F4F, 0xF800]);
        let mut rnd = crate::common::xorshift32(0x2545_F491);
        seconds.extend((0..48).map(|_| rnd() & 0xFFFF));
        for hw in 0..=0xFFFFu32 {
            for &next in &seconds {
                let op = (hw << 16) | next;
                if !is_plain(op) {
                    continue;
                }
                plain += 1;
                assert_eq!(is_wide_thumb(hw as u16), hw >= 0xF000, "{op:#010x}");
                assert!(direct(op).is_none(), "{op:#010x}");
                assert!(indirect(op).is_none(), "{op:#010x}");
                assert!(barrier(op) == Barrier::None, "{op:#010x}");
                assert!(!is_wfx(op), "{op:#010x}");
                assert!(!is_conditional(op), "{op:#010x}");
                assert_eq!(it_block_size(op), 0, "{op:#010x}");
            }
        }
        // eleven of the sixteen first nibbles whatever follows, and 0b1111
        // with the second halfword's top bit clear
        let clear = seconds.iter().filter(|&&n| n & 0x8000 == 0).count() as u64;
        assert_eq!(plain, 11 * 4096 * seconds.len() as u64 + 4096 * clear);
    }
}
