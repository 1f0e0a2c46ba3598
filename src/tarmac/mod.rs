//! Tarmac: write the decoded instruction stream as Tarmac, and compare it
//! with a reference execution trace.
//!
//! - [`TarmacWriter`] turns generic trace elements into Tarmac
//!   instruction lines (`IT` / `IS`), with opcodes read from target memory
//!   and disassembly ([`disasm`], over the `yaxpeax-arm` crate), plus a
//!   link-register write after each branch with link so that Arm's
//!   tarmac-trace-utilities find the calls.
//! - [`Reference`] reads a reference trace (Tarmac as Arm's models write
//!   it, `VA:PA` addresses, several CPUs); [`Comparer`] checks that each
//!   decoded segment (the instructions between two discontinuities)
//!   appears in it as consecutive instructions, in order, and reports
//!   `N instructions in M segments match` or the first divergence.
//!
//! Both take the elements one at a time, with the target memory the
//! decode used (with the Rust API: `Element::raw()` and
//! `Decoder::memory()`), so they work with any source of elements:
//!
//! ```
//! use opencsd_c_api::abi::gen_elem::*;
//! use opencsd_c_api::abi::*;
//! use opencsd_c_api::mem::{Accessor, MemMapper, Source};
//! use opencsd_c_api::tarmac::{TarmacConfig, TarmacWriter};
//!
//! // two A64 instructions in memory: MOV x0,#1 ; BL +8
//! let mut code = Vec::new();
//! code.extend_from_slice(&0xd280_0020u32.to_le_bytes());
//! code.extend_from_slice(&0x9400_0002u32.to_le_bytes());
//! let mut mem = MemMapper::new();
//! mem.add(Accessor { start: 0x8000, end: 0x8007, space: OCSD_MEM_SPACE_ANY, source: Source::Buffer { data: std::sync::Arc::new(code) } }).unwrap();
//!
//! let mut ctx = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_PE_CONTEXT);
//! ctx.context.exception_level = ocsd_EL1;
//! ctx.context.security_level = ocsd_sec_nonsecure;
//! ctx.context.set_el_valid(1);
//! ctx.context.set_bits64(1);
//! let mut range = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_INSTR_RANGE);
//! range.isa = ocsd_isa_aarch64;
//! range.st_addr = 0x8000;
//! range.en_addr = 0x8008;
//! range.set_num_instr_range(2);
//! range.last_i_type = OCSD_INSTR_BR;
//! range.last_i_subtype = OCSD_S_INSTR_BR_LINK;
//! range.set_last_instr_exec(1);
//!
//! let mut w = TarmacWriter::new(Vec::new(), TarmacConfig { disasm: false });
//! w.element(0x10, &ctx, &mut mem).unwrap();
//! w.element(0x10, &range, &mut mem).unwrap();
//! let text = String::from_utf8(w.finish().unwrap()).unwrap();
//! assert_eq!(text, "1 clk IT (1) 00008000 d2800020 O EL1h_n :\n\
//!                   2 clk IT (2) 00008004 94000002 O EL1h_n :\n\
//!                   2 clk R X30 0000000000008008\n");
//! ```

#![forbid(unsafe_code)]
// the C ABI constants keep their C names (ocsd_isa_aarch64...)
#![allow(non_upper_case_globals)]

pub mod compare;
pub mod disasm;
pub mod instrs;
pub mod reader;
pub mod writer;

pub use compare::{CompareReport, Comparer, Divergence, IdReport};
pub use disasm::{Disassembler, Isa};
pub use reader::{ReadError, RefInstr, Reference};
pub use writer::{TarmacConfig, TarmacStats, TarmacWriter};

#[cfg(test)]
mod tests;
