//! Instruction disassembly for the Tarmac writer, over the `yaxpeax-arm`
//! crate (pure Rust, A64 and A32/T32).
//!
//! The disassembler writes PC-relative operands as offsets (`$+0x10`);
//! for A64 and A32 they are replaced with the absolute target address,
//! as Arm's models print them (`b 0x10310000`). T32 keeps the offset.

use std::fmt::Write as _;

use yaxpeax_arch::{Decoder, U8Reader};
use yaxpeax_arm::armv7 as a32;
use yaxpeax_arm::armv8::a64;

/// Instruction set of one instruction, as Tarmac names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Isa {
    /// AArch64 (`O` in Tarmac).
    A64,
    /// AArch32 Arm (`A`).
    A32,
    /// AArch32 Thumb (`T`).
    T32,
}

impl Isa {
    /// The Tarmac instruction-set letter.
    pub fn letter(self) -> char {
        match self {
            Isa::A64 => 'O',
            Isa::A32 => 'A',
            Isa::T32 => 'T',
        }
    }

    /// From a Tarmac instruction-set token (`O`, `A`, `T`, `T16`, `T32`).
    pub fn from_token(t: &str) -> Option<Isa> {
        match t {
            "O" => Some(Isa::A64),
            "A" => Some(Isa::A32),
            "T" | "T16" | "T32" => Some(Isa::T32),
            _ => None,
        }
    }
}

/// Size in bytes of the T32 instruction whose first halfword is `hw1`.
pub fn t32_size(hw1: u16) -> u8 {
    if (hw1 >> 11) >= 0b11101 {
        4
    } else {
        2
    }
}

/// Disassemblers for the three instruction sets, made once and reused.
pub struct Disassembler {
    a64: a64::InstDecoder,
    a32: a32::InstDecoder,
    t32: a32::InstDecoder,
}

impl Default for Disassembler {
    fn default() -> Self {
        Disassembler {
            a64: a64::InstDecoder::default(),
            a32: a32::InstDecoder::armv7(),
            t32: a32::InstDecoder::armv7_thumb(),
        }
    }
}

impl Disassembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Append the disassembly of the instruction at `addr` whose bytes
    /// (little-endian, as in memory) are `bytes` to `out`. An encoding the
    /// disassembler does not know is written as `<undefined>`.
    pub fn write(&self, isa: Isa, addr: u64, bytes: &[u8], out: &mut String) {
        match isa {
            Isa::A64 => {
                let mut r = U8Reader::new(bytes);
                match self.a64.decode(&mut r) {
                    Ok(inst) => {
                        let from = out.len();
                        let _ = write!(out, "{}", inst);
                        if let Some(t) = a64_target(&inst, addr) {
                            absolute(out, from, t);
                        }
                    }
                    Err(_) => out.push_str("<undefined>"),
                }
            }
            Isa::A32 | Isa::T32 => {
                let dec = if isa == Isa::A32 { &self.a32 } else { &self.t32 };
                let mut r = U8Reader::new(bytes);
                match dec.decode(&mut r) {
                    Ok(inst) => {
                        let from = out.len();
                        let _ = write!(out, "{}", inst);
                        if let Some(t) = aarch32_branch_target(isa, addr, bytes) {
                            absolute(out, from, t);
                        }
                    }
                    Err(_) => out.push_str("<undefined>"),
                }
            }
        }
    }
}

/// Replace the `$+OFFSET` / `$-OFFSET` operand written from `from` on
/// with `0xTARGET`.
fn absolute(out: &mut String, from: usize, target: u64) {
    let Some(p) = out[from..].find('$').map(|p| p + from) else { return };
    let end = out[p..].find(|c: char| c == ',' || c.is_whitespace()).map_or(out.len(), |e| e + p);
    // `0x` and the hex digits, built on the stack (no allocation)
    let mut hex = [0u8; 18];
    let digits = (64 - target.leading_zeros() as usize).div_ceil(4).max(1);
    hex[0] = b'0';
    hex[1] = b'x';
    for i in 0..digits {
        hex[2 + i] = b"0123456789abcdef"[((target >> (4 * (digits - 1 - i))) & 0xf) as usize];
    }
    // ASCII only, so always valid UTF-8
    out.replace_range(p..end, std::str::from_utf8(&hex[..2 + digits]).unwrap_or(""));
}

/// Target of the PC-relative operand of an A64 instruction.
fn a64_target(inst: &a64::Instruction, addr: u64) -> Option<u64> {
    inst.operands.iter().find_map(|op| match op {
        a64::Operand::PCOffset(off) => {
            let base = if inst.opcode == a64::Opcode::ADRP { addr & !0xfff } else { addr };
            Some(base.wrapping_add(*off as u64))
        }
        _ => None,
    })
}

/// Target of an A32 / T32 direct branch, from the crate's own instruction
/// decoder (the one instruction following uses).
fn aarch32_branch_target(isa: Isa, addr: u64, bytes: &[u8]) -> Option<u64> {
    use crate::abi::*;
    let mut w = [0u8; 4];
    w[..bytes.len().min(4)].copy_from_slice(&bytes[..bytes.len().min(4)]);
    let mut info = ocsd_instr_info {
        pe_type: ocsd_arch_profile_t { arch: ARCH_V8, profile: profile_CortexA },
        isa: if isa == Isa::A32 { ocsd_isa_arm } else { ocsd_isa_thumb2 },
        instr_addr: addr,
        opcode: u32::from_le_bytes(w),
        ..Default::default()
    };
    (crate::instr::decode_instruction(&mut info) == OCSD_OK && info.type_ == OCSD_INSTR_BR).then_some(info.branch_addr & !1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dis(isa: Isa, addr: u64, bytes: &[u8]) -> String {
        let mut s = String::new();
        Disassembler::new().write(isa, addr, bytes, &mut s);
        s
    }

    #[test]
    fn a64_branch_targets_are_absolute() {
        // B 0x10310000 at 0x10300000 (model's test_TARMAC line 1)
        let s = dis(Isa::A64, 0x1030_0000, &0x1400_4000u32.to_le_bytes());
        assert_eq!(s, "b 0x10310000");
        // BL 0x163a0fb4 at 0x163a0ca8
        let s = dis(Isa::A64, 0x163a_0ca8, &0x9400_00c3u32.to_le_bytes());
        assert_eq!(s, "bl 0x163a0fb4");
        // B.NE backwards: 0x54ffff01 at 0x1000 -> 0x1000 - 0x20
        let s = dis(Isa::A64, 0x1000, &0x54ff_ff01u32.to_le_bytes());
        assert_eq!(s, "b.ne 0xfe0");
        // CBZ w0 with a register operand before the target
        let s = dis(Isa::A64, 0x2000, &0x3400_0040u32.to_le_bytes());
        assert_eq!(s, "cbz w0, 0x2008");
    }

    #[test]
    fn a64_plain_and_adrp() {
        assert_eq!(dis(Isa::A64, 0, &0xd65f_03c0u32.to_le_bytes()), "ret");
        // ADRP x0, page +1 at 0x1234 -> 0x2000
        let s = dis(Isa::A64, 0x1234, &0xb000_0000u32.to_le_bytes());
        assert_eq!(s, "adrp x0, 0x2000");
    }

    #[test]
    fn a32_and_t32() {
        // BL {pc}+0x398 at 0x20158 -> 0x204f0 (tarmac-trace-utilities sample)
        let s = dis(Isa::A32, 0x20158, &0xeb00_00e4u32.to_le_bytes());
        assert_eq!(s, "bl 0x204f0");
        // BNE {pc}-0xc at 0x202d8 -> 0x202cc
        assert_eq!(dis(Isa::A32, 0x202d8, &0x1aff_fffbu32.to_le_bytes()), "bne 0x202cc");
        // T32 16-bit: MOVS r0,#1 = 0x2001
        let s = dis(Isa::T32, 0x8000, &0x2001u16.to_le_bytes());
        assert!(s.contains("r0"), "{}", s);
        // T32 branches: BL (32-bit), B (16-bit, to itself), BEQ, CBZ, B.W
        assert_eq!(dis(Isa::T32, 0x8000, &[0x00, 0xf0, 0x02, 0xf8]), "bl.w 0x8008");
        assert_eq!(dis(Isa::T32, 0x8000, &0xe7feu16.to_le_bytes()), "b 0x8000");
        assert_eq!(dis(Isa::T32, 0x8000, &0xd000u16.to_le_bytes()), "beq 0x8004");
        assert_eq!(dis(Isa::T32, 0x8000, &0xb100u16.to_le_bytes()), "cbz r0, 0x8004");
        assert_eq!(dis(Isa::T32, 0x8000, &[0x00, 0xf0, 0x00, 0xb8]), "b.w 0x8004");
        // A32 BLX imm (to Thumb at +8)
        assert_eq!(dis(Isa::A32, 0x1000, &0xfa00_0000u32.to_le_bytes()), "blx 0x1008");
        // a branch to address 0 and one high in the address space
        assert_eq!(dis(Isa::A64, 0x10, &0x17ff_fffcu32.to_le_bytes()), "b 0x0");
        assert_eq!(dis(Isa::A64, 0xffff_ffc0_0000_0000, &0x1400_0001u32.to_le_bytes()), "b 0xffffffc000000004");
        assert_eq!(t32_size(0x2001), 2);
        assert_eq!(t32_size(0xf000), 4);
        assert_eq!(t32_size(0xe800), 4);
        assert_eq!(t32_size(0xe7fe), 2);
    }

    #[test]
    fn undefined_and_short_input() {
        assert_eq!(dis(Isa::A64, 0, &[0, 0]), "<undefined>");
    }
}
