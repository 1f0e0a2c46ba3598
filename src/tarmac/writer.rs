//! Tarmac output: one instruction-execution line per executed instruction.

use std::io::{self, Write};

use super::disasm::{Disassembler, Isa};
use super::instrs::{for_each_instr, range_isa, Instr};
use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::MemAccess;

/// Options of the Tarmac writer.
#[derive(Debug, Clone)]
pub struct TarmacConfig {
    /// Disassemble each instruction (`false`: the line ends after `:`,
    /// as `--no-disasm` asks).
    pub disasm: bool,
}

impl Default for TarmacConfig {
    fn default() -> Self {
        TarmacConfig { disasm: true }
    }
}

/// Counters of a [`TarmacWriter`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TarmacStats {
    /// `IT` / `IS` lines written.
    pub instructions: u64,
    /// Link-register write lines written (one per executed branch with link).
    pub link_writes: u64,
    /// Instructions written without their opcode (memory not readable at
    /// their address): opcode `00000000`, disassembly `<no memory>`.
    pub no_memory: u64,
    /// Thumb ranges cut short: memory not readable, so the instruction
    /// sizes (and the rest of the range) were unknown.
    pub truncated_ranges: u64,
}

/// Writes Tarmac instruction lines from generic trace elements.
///
/// Feed it every element of the decode ([`TarmacWriter::element`]), in
/// order, with the memory the decode used. Each instruction of an
/// `OCSD_GEN_TRC_ELEM_INSTR_RANGE` becomes a line
///
/// ```text
/// 7 clk IT (7) 00080010 d2800020 O EL1h_n : mov x0, #0x1
/// ```
///
/// (time and index are the running instruction count; address; opcode
/// read from memory; instruction set `O` (A64) / `A` (A32) / `T` (T32);
/// mode and security state from the last `PE_CONTEXT` of the trace ID:
/// `EL0t`, `EL1h`, `EL2h`, `EL3h` for AArch64, `usr`, `svc`, `hyp`,
/// `mon` for AArch32, `unk` when the exception level is not traced,
/// suffixed `_s` (secure or root), `_n` (non-secure) or `_r` (realm);
/// disassembly). The last instruction of a range whose condition failed
/// (an `N` atom) is written as `IS`. After an executed branch with link,
/// the link register write is written (`R X30 ...` / `R r14 ...`, the
/// return address, with bit 0 set for Thumb), which is how
/// tarmac-trace-utilities find calls.
///
/// The writer allocates nothing per instruction.
pub struct TarmacWriter<W: Write> {
    out: W,
    cfg: TarmacConfig,
    dis: Disassembler,
    /// Last PE context per trace ID.
    ctx: Vec<Option<ocsd_pe_context>>,
    stats: TarmacStats,
    line: String,
}

impl<W: Write> TarmacWriter<W> {
    pub fn new(out: W, cfg: TarmacConfig) -> Self {
        TarmacWriter { out, cfg, dis: Disassembler::new(), ctx: vec![None; 256], stats: TarmacStats::default(), line: String::with_capacity(128) }
    }

    pub fn stats(&self) -> TarmacStats {
        self.stats
    }

    /// Flush and give back the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }

    /// Take one element of trace ID `trace_id`; `mem` is the target memory
    /// the opcodes are read from.
    pub fn element(&mut self, trace_id: u8, elem: &ocsd_generic_trace_elem, mem: &mut dyn MemAccess) -> io::Result<()> {
        match elem.elem_type {
            OCSD_GEN_TRC_ELEM_PE_CONTEXT => {
                self.ctx[trace_id as usize] = Some(elem.context);
                Ok(())
            }
            OCSD_GEN_TRC_ELEM_INSTR_RANGE => self.range(trace_id, elem, mem),
            _ => Ok(()),
        }
    }

    fn range(&mut self, trace_id: u8, elem: &ocsd_generic_trace_elem, mem: &mut dyn MemAccess) -> io::Result<()> {
        let Some(isa) = range_isa(elem) else { return Ok(()) };
        let ctx = self.ctx[trace_id as usize].unwrap_or(elem.context);
        let mut res = Ok(());
        let complete = for_each_instr(elem, &ctx, trace_id, mem, |i| {
            if res.is_ok() {
                res = self.write_instr(i, &ctx);
            }
        });
        res?;
        if !complete {
            self.stats.truncated_ranges += 1;
        } else if elem.num_instr_range() > 0 && elem.last_instr_exec() != 0 && elem.last_i_subtype == OCSD_S_INSTR_BR_LINK {
            self.write_link(isa, elem.en_addr)?;
        }
        Ok(())
    }

    fn write_instr(&mut self, i: &Instr, ctx: &ocsd_pe_context) -> io::Result<()> {
        use std::fmt::Write as _;
        self.stats.instructions += 1;
        if !i.readable {
            self.stats.no_memory += 1;
        }
        let n = self.stats.instructions;
        let l = &mut self.line;
        l.clear();
        let _ = write!(l, "{} clk {} ({}) ", n, if i.executed { "IT" } else { "IS" }, n);
        if i.addr >> 32 == 0 {
            let _ = write!(l, "{:08x} ", i.addr);
        } else {
            let _ = write!(l, "{:016x} ", i.addr);
        }
        if i.size == 2 {
            let _ = write!(l, "{:04x}", i.opcode());
        } else {
            let _ = write!(l, "{:08x}", i.opcode());
        }
        l.push(' ');
        l.push(i.isa.letter());
        l.push(' ');
        push_mode(l, i.isa, ctx);
        l.push_str(" :");
        if self.cfg.disasm {
            l.push(' ');
            if i.readable {
                self.dis.write(i.isa, i.addr, &i.bytes[..i.size as usize], l);
            } else {
                l.push_str("<no memory>");
            }
        }
        l.push('\n');
        self.out.write_all(l.as_bytes())
    }

    fn write_link(&mut self, isa: Isa, ret: u64) -> io::Result<()> {
        use std::fmt::Write as _;
        self.stats.link_writes += 1;
        let n = self.stats.instructions;
        let l = &mut self.line;
        l.clear();
        let _ = match isa {
            Isa::A64 => writeln!(l, "{} clk R X30 {:016X}", n, ret),
            Isa::A32 => writeln!(l, "{} clk R r14 {:08x}", n, ret as u32),
            Isa::T32 => writeln!(l, "{} clk R r14 {:08x}", n, (ret as u32) | 1),
        };
        self.out.write_all(l.as_bytes())
    }
}

/// Tarmac mode and security field, e.g. `EL1h_n`, `svc_s`.
fn push_mode(l: &mut String, isa: Isa, ctx: &ocsd_pe_context) {
    let mode = if ctx.el_valid() == 0 {
        "unk"
    } else {
        match (isa, ctx.exception_level) {
            (Isa::A64, 0) => "EL0t",
            (Isa::A64, 1) => "EL1h",
            (Isa::A64, 2) => "EL2h",
            (Isa::A64, 3) => "EL3h",
            (_, 0) => "usr",
            (_, 1) => "svc",
            (_, 2) => "hyp",
            (_, 3) => "mon",
            _ => "unk",
        }
    };
    l.push_str(mode);
    l.push_str(match ctx.security_level {
        ocsd_sec_nonsecure => "_n",
        ocsd_sec_realm => "_r",
        _ => "_s",
    });
}
