//! Instruction disassembly for the Tarmac writer, over the `yaxpeax-arm`
//! crate (pure Rust, A64 and A32/T32).
//!
//! Branch and address-forming instructions get their absolute target
//! appended, as Arm's models print it (`B $+0x10 ; 0x10310000`), since
//! the disassembler only knows offsets.

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
                        let _ = write!(out, "{}", inst);
                        a64_target(&inst, addr, out);
                    }
                    Err(_) => out.push_str("<undefined>"),
                }
            }
            Isa::A32 | Isa::T32 => {
                let dec = if isa == Isa::A32 { &self.a32 } else { &self.t32 };
                let mut r = U8Reader::new(bytes);
                match dec.decode(&mut r) {
                    Ok(inst) => {
                        let _ = write!(out, "{}", inst);
                        if isa == Isa::A32 {
                            a32_target(&inst, addr, out);
                        }
                    }
                    Err(_) => out.push_str("<undefined>"),
                }
            }
        }
    }
}

/// ` ; 0xTARGET` for PC-relative operands of A64 instructions.
fn a64_target(inst: &a64::Instruction, addr: u64, out: &mut String) {
    for op in inst.operands.iter() {
        if let a64::Operand::PCOffset(off) = op {
            let base = if inst.opcode == a64::Opcode::ADRP { addr & !0xfff } else { addr };
            let _ = write!(out, " ; {:#x}", base.wrapping_add(*off as u64));
            return;
        }
    }
}

/// ` ; 0xTARGET` for A32 branch immediates (relative to the instruction
/// address + 8).
fn a32_target(inst: &a32::Instruction, addr: u64, out: &mut String) {
    for op in inst.operands.iter() {
        let off = match op {
            a32::Operand::BranchOffset(o) => (*o as i64) << 2,
            a32::Operand::BranchThumbOffset(o) => (*o as i64) << 1,
            _ => continue,
        };
        let _ = write!(out, " ; {:#x}", (addr as u32).wrapping_add(8).wrapping_add(off as u32));
        return;
    }
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
        assert!(s.starts_with("b "), "{}", s);
        assert!(s.ends_with("; 0x10310000"), "{}", s);
        // BL 0x163a0fb4 at 0x163a0ca8
        let s = dis(Isa::A64, 0x163a_0ca8, &0x9400_00c3u32.to_le_bytes());
        assert!(s.starts_with("bl "), "{}", s);
        assert!(s.ends_with("; 0x163a0fb4"), "{}", s);
        // B.NE backwards: 0x54ffff01 at 0x1000 -> 0x1000 - 0x20
        let s = dis(Isa::A64, 0x1000, &0x54ff_ff01u32.to_le_bytes());
        assert!(s.ends_with("; 0xfe0"), "{}", s);
    }

    #[test]
    fn a64_plain_and_adrp() {
        assert_eq!(dis(Isa::A64, 0, &0xd65f_03c0u32.to_le_bytes()), "ret");
        // ADRP x0, page +1 at 0x1234 -> 0x2000
        let s = dis(Isa::A64, 0x1234, &0xb000_0000u32.to_le_bytes());
        assert!(s.starts_with("adrp x0"), "{}", s);
        assert!(s.ends_with("; 0x2000"), "{}", s);
    }

    #[test]
    fn a32_and_t32() {
        // BL {pc}+0x398 at 0x20158 -> 0x204f0 (tarmac-trace-utilities sample)
        let s = dis(Isa::A32, 0x20158, &0xeb00_00e4u32.to_le_bytes());
        assert!(s.starts_with("bl "), "{}", s);
        assert!(s.ends_with("; 0x204f0"), "{}", s);
        // T32 16-bit: MOVS r0,#1 = 0x2001
        let s = dis(Isa::T32, 0x8000, &0x2001u16.to_le_bytes());
        assert!(s.contains("r0"), "{}", s);
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
