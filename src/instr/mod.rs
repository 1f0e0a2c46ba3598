//! Instruction decode for instruction following: classifies A64, A32 and
//! T32 opcodes (branches, their targets, links, returns, barriers, ...).

use crate::abi::*;

/// Decode the instruction in `info.opcode` (at `info.instr_addr`, in ISA
/// `info.isa`, for core `info.pe_type`), filling in `type_`, `sub_type`,
/// `branch_addr`, `next_isa`, `instr_size`, `is_conditional`, `is_link` and
/// `thumb_it_conditions`, as OpenCSD's `TrcIDecode::DecodeInstruction` does.
///
/// For T32, `opcode` holds the first halfword in bits [31:16] and the second
/// in bits [15:0] when the instruction is 32 bits wide (the caller reads 4
/// bytes and swaps halfwords), as in OpenCSD.
pub fn decode_instruction(info: &mut ocsd_instr_info) -> ocsd_err_t {
    let _ = info;
    OCSD_ERR_UNSUPPORTED_ISA
}
