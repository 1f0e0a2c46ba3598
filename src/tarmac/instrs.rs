//! The instructions of an instruction-range element, with their opcodes
//! read from target memory.

use super::disasm::{t32_size, Isa};
use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::{MemAccess, MemContext};

/// One instruction of a decoded range.
#[derive(Debug, Clone, Copy)]
pub struct Instr {
    pub addr: u64,
    pub isa: Isa,
    /// Size in bytes: 4, or 2 for a 16-bit T32 instruction.
    pub size: u8,
    /// The instruction's bytes as in memory (the first `size` are valid
    /// when `readable`).
    pub bytes: [u8; 4],
    /// Whether memory held the whole instruction.
    pub readable: bool,
    /// `false` only for the last instruction of a range whose condition
    /// failed (an `N` atom).
    pub executed: bool,
    /// The last instruction of its range.
    pub last: bool,
}

impl Instr {
    /// The opcode as Tarmac writes it: the 32-bit word, the halfword, or
    /// for a 32-bit T32 instruction the first halfword then the second.
    /// 0 when not readable.
    pub fn opcode(&self) -> u32 {
        if !self.readable {
            return 0;
        }
        let b = &self.bytes;
        match (self.isa, self.size) {
            (_, 2) => u16::from_le_bytes([b[0], b[1]]) as u32,
            (Isa::T32, _) => ((u16::from_le_bytes([b[0], b[1]]) as u32) << 16) | u16::from_le_bytes([b[2], b[3]]) as u32,
            _ => u32::from_le_bytes(*b),
        }
    }
}

/// Instruction set of a range element; `None` for Jazelle, TEE, custom
/// or unknown.
pub fn range_isa(elem: &ocsd_generic_trace_elem) -> Option<Isa> {
    match elem.isa {
        ocsd_isa_aarch64 => Some(Isa::A64),
        ocsd_isa_arm => Some(Isa::A32),
        ocsd_isa_thumb2 => Some(Isa::T32),
        _ => None,
    }
}

/// Memory space of program reads in context `ctx` (as the decoders
/// choose it from exception level and security state).
pub fn mem_space(ctx: &ocsd_pe_context) -> ocsd_mem_space_acc_t {
    if ctx.el_valid() == 0 {
        return match ctx.security_level {
            ocsd_sec_secure => OCSD_MEM_SPACE_S,
            ocsd_sec_realm => OCSD_MEM_SPACE_R,
            ocsd_sec_root => OCSD_MEM_SPACE_ROOT,
            _ => OCSD_MEM_SPACE_N,
        };
    }
    crate::mem::mem_space_for_el(ctx.security_level, ctx.exception_level)
}

/// Call `f` for each instruction of the `INSTR_RANGE` element `elem`
/// (context `ctx`; context ID and VMID `mem_ctx`, which select memory
/// images mapped for one context), reading opcodes from `mem`. Returns `false` when the
/// range had to be cut short: a T32 instruction whose size could not be
/// read (the rest of the range is unknown). Other element types and
/// non-Arm instruction sets give no instructions.
pub fn for_each_instr(
    elem: &ocsd_generic_trace_elem,
    ctx: &ocsd_pe_context,
    mem_ctx: &MemContext,
    trace_id: u8,
    mem: &mut dyn MemAccess,
    mut f: impl FnMut(&Instr),
) -> bool {
    if elem.elem_type != OCSD_GEN_TRC_ELEM_INSTR_RANGE {
        return true;
    }
    let Some(isa) = range_isa(elem) else { return true };
    let space = mem_space(ctx);
    let count = elem.num_instr_range();
    let mut addr = elem.st_addr;
    for i in 0..count {
        let last = i + 1 == count;
        let mut bytes = [0u8; 4];
        let got = mem.read_in_context(addr, space, trace_id, mem_ctx, &mut bytes).unwrap_or(0);
        let size = match isa {
            Isa::A64 | Isa::A32 => 4u8,
            Isa::T32 if got >= 2 => t32_size(u16::from_le_bytes([bytes[0], bytes[1]])),
            Isa::T32 if last && elem.last_instr_sz() != 0 => elem.last_instr_sz() as u8,
            Isa::T32 => return false,
        };
        let executed = !last || elem.last_instr_exec() != 0;
        f(&Instr { addr, isa, size, bytes, readable: got >= size as usize, executed, last });
        addr = addr.wrapping_add(size as u64);
    }
    true
}

/// Whether element type `t` marks a break in the instruction stream: the
/// instructions after it do not follow on from those before it in the
/// program's execution (trace off/on, lost sync, an exception into
/// possibly untraced code, memory that could not be followed...).
pub fn is_discontinuity(t: ocsd_gen_trc_elem_t) -> bool {
    matches!(
        t,
        OCSD_GEN_TRC_ELEM_NO_SYNC
            | OCSD_GEN_TRC_ELEM_TRACE_ON
            | OCSD_GEN_TRC_ELEM_EO_TRACE
            | OCSD_GEN_TRC_ELEM_EXCEPTION
            | OCSD_GEN_TRC_ELEM_ADDR_NACC
            | OCSD_GEN_TRC_ELEM_ADDR_UNKNOWN
            | OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH
    )
}
