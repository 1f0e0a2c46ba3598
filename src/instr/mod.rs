//! Instruction decode for instruction following: classifies A64, A32 and
//! T32 opcodes (branches, their targets, links, returns, barriers, ...) the
//! way OpenCSD 1.8.0's `TrcIDecode` does, plus the address return stack
//! ([`ret_stack`]) used by the ETMv4/ETE and PTM decoders.
//!
//! Everything here is plain integer matching: no allocation, no panics for
//! any opcode or address (address arithmetic wraps as the C code's does).
#![forbid(unsafe_code)]
#![allow(non_upper_case_globals)]

mod a32;
mod a64;
pub mod ret_stack;
mod t32;

pub use a64::{a64_is_plain, aa64_opcode_is_invalid};
pub use ret_stack::TrcAddrReturnStack;
pub use t32::is_wide_thumb;

use crate::abi::*;

/// Barrier classes recognised by the decoders.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Barrier {
    None,
    Isb,
    Dmb,
    Dsb,
}

/// Result of one ISA decoder: the error to return and the sub-type to store.
struct Decoded {
    err: ocsd_err_t,
    sub_type: ocsd_instr_subtype,
}

/// Decode the instruction in `info.opcode` (at `info.instr_addr`, in ISA
/// `info.isa`, for core `info.pe_type`), as OpenCSD's
/// `TrcIDecode::DecodeInstruction` does, with the A64 bad-opcode check off.
/// See [`decode_instruction_ex`].
#[inline]
pub fn decode_instruction(info: &mut ocsd_instr_info) -> ocsd_err_t {
    decode_instruction_ex(info, false)
}

/// OpenCSD's one instruction decoder object is shared by every decode
/// tree: once a decoder has been created with
/// `ETM4_OPFLG_PKTDEC_AA64_OPCODE_CHK` (or a tree created with
/// `OPENCSD_ERR_ON_AA64_BAD_OPCODE` set), every A64 decode in the process
/// checks for bad opcodes. The C API sets this; ETMv4/ETE decoders take
/// it as their own flag.
/// The environment variable that turns the A64 bad-opcode check on.
pub const ENV_AA64_BAD_OPCODE: &str = "OPENCSD_ERR_ON_AA64_BAD_OPCODE";

pub static AA64_BAD_OPCODE_ERR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Decode the instruction in `info.opcode` (at `info.instr_addr`, in ISA
/// `info.isa`, for core `info.pe_type`), as OpenCSD 1.8.0's
/// `TrcIDecode::DecodeInstruction` does.
///
/// Inputs: `pe_type.arch` (pointer-authentication branches need
/// `>= ARCH_V8r3`; WFIT/WFET and TSTART need `>= ARCH_AA64`), `isa`,
/// `instr_addr`, `opcode`, `dsb_dmb_waypoints` (DSB/DMB are reported as
/// `OCSD_INSTR_DSB_DMB` only when set), `wfi_wfe_branch` (WFI/WFE(/T) are
/// reported as `OCSD_INSTR_WFI_WFE` only when set), `track_it_block` and,
/// for T32, the in/out `thumb_it_conditions`.
///
/// Outputs: `type_`, `sub_type`, `branch_addr` (direct branches only;
/// otherwise left as it was), `next_isa`, `instr_size`, `is_conditional`,
/// `is_link`, `thumb_it_conditions`.
///
/// # Opcode convention
/// The caller always passes the little-endian 32-bit word read at
/// `instr_addr`.
/// - A32 / A64: the instruction word; `opcode` is not modified.
/// - T32: bits `[15:0]` hold the first halfword and bits `[31:16]` the next
///   one. Like OpenCSD, the decoder swaps the halfwords and **writes the
///   swapped value back to `opcode`**: on return the first halfword is in
///   bits `[31:16]` and the second (or, for a 16-bit instruction, the
///   following halfword) in bits `[15:0]`. `instr_size` is 4 when the first
///   halfword is `0xE800` or above (masked with `0xF800`), else 2.
///
/// # A64 notes
/// FEAT_CMPBR `CB<cc>`/`CBB<cc>`/`CBH<cc>` are direct branches that are *not*
/// flagged conditional (only CBZ/CBNZ/TBZ/TBNZ/B.cond/BC.cond are), and the
/// FEAT_PAuth_LR `RETA[AB]SPPC <label>` form is an indirect return
/// (`OCSD_S_INSTR_V8_RET`), not a direct branch. BTI and the PAC/AUT hints
/// are `OCSD_INSTR_OTHER`.
///
/// # Armv8.1-M (T32)
/// LE, LETP (backwards) and WLS, WLSTP (forwards) are direct branches
/// (`OCSD_INSTR_BR`, not conditional, target `PC+4 -/+ imml:immh:'0'`); DLS,
/// DLSTP, LCTP and the branch-future family (BF, BFX, BFL, BFLX, BFCSEL) are
/// `OCSD_INSTR_OTHER`, as in OpenCSD.
///
/// # IT blocks (T32)
/// When `track_it_block` is set, `thumb_it_conditions` carries state between
/// calls: a non-zero value marks the instruction conditional and is
/// decremented; when zero, an IT instruction (classified as
/// `OCSD_INSTR_OTHER`) loads it with the number of instructions in its
/// block (1-4). When `track_it_block` is clear it is left untouched. A32
/// and A64 decodes reset it to 0.
///
/// # Errors
/// - `OCSD_ERR_UNSUPPORTED_ISA` for any ISA other than A32, T32 and A64
///   (only `sub_type` is written, to `OCSD_S_INSTR_NONE`).
/// - `OCSD_ERR_INVALID_OPCODE` for an A64 opcode with
///   [`aa64_opcode_is_invalid`] when `aa64_err_bad_opcode` is set (OpenCSD's
///   `ETM4_OPFLG_PKTDEC_AA64_OPCODE_CHK` / `OPENCSD_ERR_ON_AA64_BAD_OPCODE`
///   check). `instr_size` (4), `type_` (OTHER), `next_isa`, `is_link` (0),
///   `thumb_it_conditions` (0) and `sub_type` (NONE) are written first.
pub fn decode_instruction_ex(info: &mut ocsd_instr_info, aa64_err_bad_opcode: bool) -> ocsd_err_t {
    // OpenCSD keeps the architecture version as a 16-bit value.
    let arch = info.pe_type.arch as u16;
    let res = match info.isa {
        ocsd_isa_arm => a32::decode(info),
        ocsd_isa_thumb2 => t32::decode(info),
        ocsd_isa_aarch64 => a64::decode(info, arch, aa64_err_bad_opcode),
        _ => Decoded {
            err: OCSD_ERR_UNSUPPORTED_ISA,
            sub_type: OCSD_S_INSTR_NONE,
        },
    };
    info.sub_type = res.sub_type;
    res.err
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod conformance;
