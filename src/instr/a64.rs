//! A64 instruction classification.

use super::{Barrier, Decoded};
use crate::abi::*;

/// OpenCSD's A64 "bad opcode" test: every opcode whose top halfword is zero
/// (`0x0000xxxx`, the permanently undefined `UDF #imm16` space, which is
/// what zero-filled or unmapped memory images read as) is treated as
/// invalid when the check is enabled.
#[inline]
pub const fn aa64_opcode_is_invalid(op: u32) -> bool {
    op & 0xFFFF_0000 == 0
}

/// Whether an A64 opcode lies outside the "branches, exception generating
/// and system instructions" encoding group (op0 bits `[28:26]` != 0b101).
/// Every branch, barrier, WFI/WFE(T), TSTART and conditional opcode the
/// decoder recognises is in that group, so any other opcode decodes as
/// `OCSD_INSTR_OTHER`: not a link, not conditional, sub-type none.
#[inline(always)]
pub const fn a64_is_plain(op: u32) -> bool {
    (op >> 26) & 0b111 != 0b101
}

/// Sign extend the low `bits` bits of `v` (1 <= bits <= 32).
#[inline(always)]
const fn sext(v: u32, bits: u32) -> i64 {
    (((v << (32 - bits)) as i32) >> (32 - bits)) as i64
}

/// FEAT_CMPBR compare and branch: `CB<cc>` (register, W and X), `CBB<cc>`,
/// `CBH<cc>` and `CB<cc>` (immediate).
#[inline]
pub(crate) const fn is_cmp_branch(op: u32) -> bool {
    let desc = (op >> 14) & 0b11; // bits [15:14]
    match op >> 24 {
        // CB<cc> Wn (00), CBB<cc> (10), CBH<cc> (11); 01 is unallocated.
        0x74 => desc != 0b01,
        // CB<cc> Xn: only 00 (byte / halfword forms have no X variant).
        0xF4 => desc == 0b00,
        // CB<cc> #imm, W or X: bit 14 must be zero.
        0x75 | 0xF5 => desc & 0b01 == 0,
        _ => false,
    }
}

/// Indirect branches: `Some((is_link, sub_type))`.
#[inline]
fn indirect(op: u32, arch: u16) -> Option<(bool, ocsd_instr_subtype)> {
    let link = op & 0x0020_0000 != 0;
    let link_sub = if link {
        OCSD_S_INSTR_BR_LINK
    } else {
        OCSD_S_INSTR_NONE
    };

    if op & 0xFFDF_FC1F == 0xD61F_0000 {
        // BR, BLR
        return Some((link, link_sub));
    }
    if op & 0xFFFF_FC1F == 0xD65F_0000 {
        // RET {Xn}
        return Some((false, OCSD_S_INSTR_V8_RET));
    }
    if op == 0xD69F_03E0 {
        // ERET
        return Some((false, OCSD_S_INSTR_V8_ERET));
    }
    // Pointer authentication forms are only recognised from Armv8.3.
    if (arch as i32) < ARCH_V8r3 {
        return None;
    }
    match op {
        // BRAA, BRAB, BLRAA, BLRAB
        _ if op & 0xFFDF_F800 == 0xD71F_0800 => Some((link, link_sub)),
        // BRAAZ, BRABZ, BLRAAZ, BLRABZ
        _ if op & 0xFFDF_F81F == 0xD61F_081F => Some((link, link_sub)),
        // ERETAA, ERETAB
        _ if op & 0xFFFF_FBFF == 0xD69F_0BFF => Some((false, OCSD_S_INSTR_V8_ERET)),
        // RETAA, RETAB
        _ if op & 0xFFFF_FBFF == 0xD65F_0BFF => Some((false, OCSD_S_INSTR_V8_RET)),
        // FEAT_PAuth_LR: RETAASPPC, RETABSPPC <label>
        _ if op & 0xFFC0_001F == 0x5500_001F => Some((false, OCSD_S_INSTR_V8_RET)),
        // FEAT_PAuth_LR: RETAASPPCR, RETABSPPCR <Xm> (Xm == 31 is RETAA/RETAB)
        _ if op & 0xFFFF_FBE0 == 0xD65F_0BE0 && op & 0x1F != 0x1F => {
            Some((false, OCSD_S_INSTR_V8_RET))
        }
        // TEXIT: treated as an exception return.
        0xD6FF_03E0 | 0xD6FF_07E0 => Some((false, OCSD_S_INSTR_V8_ERET)),
        _ => None,
    }
}

/// Direct branches: `Some((is_link, byte offset from the instruction))`.
#[inline]
fn direct(op: u32) -> Option<(bool, i64)> {
    match op {
        // CBZ, CBNZ: imm19 at [23:5]
        _ if op & 0x7E00_0000 == 0x3400_0000 => Some((false, sext((op >> 5) & 0x7FFFF, 19) << 2)),
        // TBZ, TBNZ: imm14 at [18:5]
        _ if op & 0x7E00_0000 == 0x3600_0000 => Some((false, sext((op >> 5) & 0x3FFF, 14) << 2)),
        // B.cond, BC.cond: imm19 at [23:5]
        _ if op & 0xFF00_0000 == 0x5400_0000 => Some((false, sext((op >> 5) & 0x7FFFF, 19) << 2)),
        // B, BL: imm26
        _ if op & 0x7C00_0000 == 0x1400_0000 => {
            Some((op & 0x8000_0000 != 0, sext(op & 0x03FF_FFFF, 26) << 2))
        }
        // CB<cc>, CBB<cc>, CBH<cc>: imm9 at [13:5]
        _ if is_cmp_branch(op) => Some((false, sext((op >> 5) & 0x1FF, 9) << 2)),
        _ => None,
    }
}

#[inline]
fn barrier(op: u32) -> Barrier {
    if op & 0xFFFF_F09F != 0xD503_309F {
        return Barrier::None;
    }
    match op & 0x60 {
        0x00 => Barrier::Dsb,
        0x20 => Barrier::Dmb,
        0x40 => Barrier::Isb,
        _ => Barrier::None, // SB
    }
}

#[inline]
fn is_wfx(op: u32, arch: u16) -> bool {
    // WFE, WFI
    if op & 0xFFFF_FFDF == 0xD503_205F {
        return true;
    }
    // WFET, WFIT
    (arch as i32) >= ARCH_AA64 && op & 0xFFFF_FFC0 == 0xD503_1000
}

#[inline]
const fn is_tstart(op: u32) -> bool {
    op & 0xFFFF_FFE0 == 0xD523_3060
}

/// Conditional: CBZ/CBNZ/TBZ/TBNZ, B.cond and BC.cond (not `CB<cc>`).
#[inline]
const fn is_conditional(op: u32) -> bool {
    op & 0x7C00_0000 == 0x3400_0000 || op & 0xFF00_0000 == 0x5400_0000
}

/// Decode an A64 opcode into `info`; returns the error and the sub-type.
#[inline]
pub(crate) fn decode(info: &mut ocsd_instr_info, arch: u16, err_bad_opcode: bool) -> Decoded {
    let op = info.opcode;
    info.instr_size = 4;
    info.type_ = OCSD_INSTR_OTHER;
    info.next_isa = info.isa;
    info.is_link = 0;
    info.thumb_it_conditions = 0;

    if err_bad_opcode && aa64_opcode_is_invalid(op) {
        return Decoded {
            err: OCSD_ERR_INVALID_OPCODE,
            sub_type: OCSD_S_INSTR_NONE,
        };
    }

    let mut sub_type = OCSD_S_INSTR_NONE;
    if a64_is_plain(op) {
        info.is_conditional = 0;
        return Decoded { err: OCSD_OK, sub_type };
    }
    if let Some((link, sub)) = indirect(op, arch) {
        info.type_ = OCSD_INSTR_BR_INDIRECT;
        info.is_link = link as u8;
        sub_type = sub;
    } else if let Some((link, offset)) = direct(op) {
        info.type_ = OCSD_INSTR_BR;
        info.is_link = link as u8;
        info.branch_addr = info.instr_addr.wrapping_add(offset as u64);
        if link {
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
                if info.wfi_wfe_branch != 0 && is_wfx(op, arch) {
                    info.type_ = OCSD_INSTR_WFI_WFE;
                } else if (arch as i32) >= ARCH_AA64 && is_tstart(op) {
                    info.type_ = OCSD_INSTR_TSTART;
                }
            }
        }
    }
    info.is_conditional = is_conditional(op) as u8;
    Decoded {
        err: OCSD_OK,
        sub_type,
    }
}

#[cfg(test)]
mod plain_tests {
    use super::*;

    /// Every opcode outside the branch / exception / system group is
    /// classified OTHER by each of the individual matchers, so the
    /// `a64_is_plain` shortcut cannot change a decode.
    #[test]
    fn plain_opcodes_match_nothing() {
        let mut rnd = crate::common::xorshift32(0x1234_5678);
        for top in 0..=255u32 {
            for i in 0..4096u32 {
                // xorshift low bits, plus all-zero and all-one patterns
                let x = rnd();
                let low = match i {
                    0 => 0,
                    1 => 0x00FF_FFFF,
                    2 => 0x001F_FC1F & 0x00FF_FFFF,
                    _ => x & 0x00FF_FFFF,
                };
                let op = (top << 24) | low;
                if !a64_is_plain(op) {
                    continue;
                }
                assert!(indirect(op, ARCH_AA64 as u16).is_none(), "{:08x}", op);
                assert!(direct(op).is_none(), "{:08x}", op);
                assert_eq!(barrier(op), Barrier::None, "{:08x}", op);
                assert!(!is_wfx(op, ARCH_AA64 as u16), "{:08x}", op);
                assert!(!is_tstart(op), "{:08x}", op);
                assert!(!is_conditional(op), "{:08x}", op);
            }
        }
    }
}
