//! A32 instruction classification.

use super::{Barrier, Decoded};
use crate::abi::*;

/// Indirect branches (anything that writes the PC from a register or
/// memory): `Some(sub_type)`.
#[inline]
fn indirect(op: u32) -> Option<ocsd_instr_subtype> {
    const NONE: Option<ocsd_instr_subtype> = Some(OCSD_S_INSTR_NONE);
    const RET: Option<ocsd_instr_subtype> = Some(OCSD_S_INSTR_V7_IMPLIED_RET);

    if op & 0xF000_0000 == 0xF000_0000 {
        // Unconditional space: only RFE.
        return if op & 0xFE50_0000 == 0xF810_0000 {
            NONE
        } else {
            None
        };
    }
    match op {
        // BX, BLX (register); BX LR is an implied return.
        _ if op & 0x0FF0_00D0 == 0x0120_0010 => {
            if op & 0xFF == 0x1E {
                RET
            } else {
                NONE
            }
        }
        // BXJ (behaves as BX in v8)
        _ if op & 0x0FF0_00F0 == 0x0120_0020 => NONE,
        // LDM{xx} with PC in the list; LDMIA SP!, {..,pc} (POP) is a return.
        _ if op & 0x0E10_8000 == 0x0810_8000 => {
            if op & 0x0FFF_A000 == 0x08BD_8000 {
                RET
            } else {
                NONE
            }
        }
        // LDR PC, immediate (incl. POP {pc}: LDR PC, [SP], #imm)
        _ if op & 0x0E50_F000 == 0x0410_F000 => {
            if op & 0x01FF_0000 == 0x009D_0000 {
                RET
            } else {
                NONE
            }
        }
        // LDR PC, register
        _ if op & 0x0E50_F010 == 0x0610_F000 => NONE,
        // MOV PC, Rm; plain MOV PC, LR (S=0, no shift) is a return.
        _ if op & 0x0FE0_F000 == 0x01A0_F000 => {
            if op & 0x0010_0FFF == 0x0000_000E {
                RET
            } else {
                NONE
            }
        }
        // Miscellaneous instructions in the data-processing space
        _ if op & 0x0F90_0080 == 0x0100_0000 => None,
        // Extra loads and stores
        _ if op & 0x0F90_00F0 == 0x0180_0090 => None,
        // MSR (immediate) and hints
        _ if op & 0x0FB0_F000 == 0x0320_F000 => None,
        // Data processing (immediate) to PC, except TST/TEQ/CMP/CMN
        _ if op & 0x0E00_F000 == 0x0200_F000 => {
            if op & 0x0F90_F000 == 0x0310_F000 {
                None
            } else {
                NONE
            }
        }
        // Data processing (register) to PC
        _ if op & 0x0E00_F000 == 0x0000_F000 => NONE,
        _ => None,
    }
}

/// B, BL, BLX (immediate).
#[inline]
const fn is_direct(op: u32) -> bool {
    if op & 0xF000_0000 == 0xF000_0000 {
        op & 0xFE00_0000 == 0xFA00_0000
    } else {
        op & 0x0E00_0000 == 0x0A00_0000
    }
}

/// BL, BLX (immediate), BLX (register).
#[inline]
const fn is_link(op: u32) -> bool {
    if op & 0xF000_0000 == 0xF000_0000 {
        op & 0xFE00_0000 == 0xFA00_0000
    } else {
        op & 0x0F00_0000 == 0x0B00_0000 || op & 0x0FF0_00F0 == 0x0120_0030
    }
}

/// Target of B/BL/BLX (immediate), with bit 0 set when the target is T32
/// (BLX), as a 32-bit address.
#[inline]
const fn direct_target(addr: u32, op: u32) -> u32 {
    let offset = (((op & 0x00FF_FFFF) << 8) as i32) >> 6;
    let mut npc = addr.wrapping_add(8).wrapping_add(offset as u32);
    if op & 0xF000_0000 == 0xF000_0000 {
        // BLX: switch to T32, H bit gives bit 1 of the target.
        npc |= 1 | ((op >> 23) & 2);
    }
    npc
}

#[inline]
fn barrier(op: u32) -> Barrier {
    if op & 0xFFF0_0000 == 0xF570_0000 {
        match op & 0xF0 {
            0x40 => Barrier::Dsb,
            0x50 => Barrier::Dmb,
            0x60 => Barrier::Isb,
            _ => Barrier::None,
        }
    } else if op & 0x0FFF_0F00 == 0x0E07_0F00 {
        // CP15 barrier operations
        match op & 0xFF {
            0x9A => Barrier::Dsb, // mcr p15,0,Rt,c7,c10,4
            0xBA => Barrier::Dmb, // mcr p15,0,Rt,c7,c10,5
            0x95 => Barrier::Isb, // mcr p15,0,Rt,c7,c5,4
            _ => Barrier::None,
        }
    } else {
        Barrier::None
    }
}

#[inline]
const fn is_wfx(op: u32) -> bool {
    op & 0xF000_0000 != 0xF000_0000 && op & 0x0FFF_FFFE == 0x0320_F002
}

/// Decode an A32 opcode into `info`.
/// Instructions none of the classes in [`decode`] can be: conditional
/// (not the `0b1111` space), in the data-processing, load/store and
/// miscellaneous space (bit 27 clear), not writing PC (bits 15:12 not
/// `0b1111`: every branch by data processing or load, and WFI/WFE, has
/// them set) and not BX, BLX (register) or BXJ (which the decoder
/// takes whatever their bits 15:12 hold). The test
/// `plain_opcodes_are_none_of_the_classes` checks it.
#[inline(always)]
const fn is_plain(op: u32) -> bool {
    op >> 28 != 0xF
        && op & 0x0800_0000 == 0
        && op & 0x0000_F000 != 0x0000_F000
        && op & 0x0FF0_00D0 != 0x0120_0010
        && op & 0x0FF0_00F0 != 0x0120_0020
}

#[inline]
pub(crate) fn decode(info: &mut ocsd_instr_info) -> Decoded {
    let op = info.opcode;
    info.instr_size = 4;
    info.type_ = OCSD_INSTR_OTHER;
    info.next_isa = info.isa;
    info.is_link = 0;
    info.thumb_it_conditions = 0;

    let mut sub_type = OCSD_S_INSTR_NONE;
    if is_plain(op) {
        // (none of the classes below)
    } else if let Some(sub) = indirect(op) {
        info.type_ = OCSD_INSTR_BR_INDIRECT;
        sub_type = sub;
        if is_link(op) {
            info.is_link = 1;
            sub_type = OCSD_S_INSTR_BR_LINK;
        }
    } else if is_direct(op) {
        let npc = direct_target(info.instr_addr as u32, op);
        info.type_ = OCSD_INSTR_BR;
        if npc & 1 != 0 {
            info.next_isa = ocsd_isa_thumb2;
        }
        info.branch_addr = (npc & !1) as ocsd_vaddr_t;
        if is_link(op) {
            info.is_link = 1;
            sub_type = OCSD_S_INSTR_BR_LINK;
        }
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
    // Condition field other than AL (0b1110) and the unconditional space.
    info.is_conditional = (op & 0xE000_0000 != 0xE000_0000) as u8;
    Decoded {
        err: OCSD_OK,
        sub_type,
    }
}

#[cfg(test)]
mod plain_tests {
    use super::*;

    #[test]
    fn plain_opcodes_are_none_of_the_classes() {
        let mut rnd = crate::common::xorshift32(0x9E37_79B9);
        let mut plain = 0u64;
        // every value of the bits the classes look at most (31:20, 15:12,
        // 7:4), the others from a few patterns
        for top in 0..0x1000u32 {
            for rd in 0..16u32 {
                for mid in 0..16u32 {
                    for k in 0..4 {
                        let fill = rnd();
                        let rest = match k {
                            0 => 0,
                            1 => 0x000F_0F0F,
                            2 => 0x000D_0A0E,
                            _ => fill,
                        } & 0x000F_0F0F;
                        let op = (top << 20) | (rd << 12) | (mid << 4) | rest;
                        if !is_plain(op) {
                            continue;
                        }
                        plain += 1;
                        assert!(indirect(op).is_none(), "{op:#010x}");
                        assert!(!is_direct(op), "{op:#010x}");
                        assert!(barrier(op) == Barrier::None, "{op:#010x}");
                        assert!(!is_wfx(op), "{op:#010x}");
                    }
                }
            }
        }
        assert!(plain > 1_000_000, "{plain}");
    }
}
