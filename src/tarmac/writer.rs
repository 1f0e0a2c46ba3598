//! Tarmac output: one instruction-execution line per executed instruction.

use std::io::{self, Write};

use super::disasm::{Disassembler, Isa};
use super::instrs::{for_each_instr, range_isa, Instr};
use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::{MemAccess, MemContext};

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
    /// Exception lines (`E`) written.
    pub exceptions: u64,
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
/// An `OCSD_GEN_TRC_ELEM_EXCEPTION` becomes an exception line in the form
/// models write them (`TIME clk E PC NUMBER CoreEvent_NAME`):
///
/// ```text
/// 5617 clk E 000a723c 00000002 CoreEvent_CALL
/// ```
///
/// with the preferred return address the trace gives (`00000000` when it
/// gives none; for SVC, HVC and SMC it is the instruction after the call,
/// where a model names the call itself), the exception number as the
/// protocol encodes it, and, when the exception was taken from AArch64
/// (so the protocol is ETMv4 or ETE, A profile), the name of that exception
/// type (`RESET`, `DEBUG_HALT`, `CALL`, `TRAP`, `SYSTEM_ERROR`,
/// `INST_DEBUG`, `DATA_DEBUG`, `ALIGNMENT`, `INST_FAULT`, `DATA_FAULT`,
/// `IRQ`, `FIQ`); otherwise `CoreEvent_EXCEPTION`. tarmac-trace-utilities
/// read these lines as exceptions.
///
/// For the decode of several cores ([`TarmacWriter::with_cpu_tags`]) each
/// line carries its core after the time (`7 clk cpu1 IT (3) ...`), and the
/// instruction index in parentheses counts that core's instructions.
///
/// Opcodes are read in the context (context ID, VMID) the elements gave
/// last for the trace ID, so memory images mapped per process serve the
/// instructions of their process.
///
/// The writer allocates nothing per instruction.
pub struct TarmacWriter<W: Write> {
    out: W,
    cfg: TarmacConfig,
    dis: Disassembler,
    /// Last PE context per trace ID.
    ctx: Vec<Option<ocsd_pe_context>>,
    /// Context ID and VMID per trace ID, as the elements gave them.
    mem_ctx: Vec<MemContext>,
    /// With CPU tags: the CPU number of each trace ID (given, or assigned
    /// at its first line).
    cpus: Option<Vec<Option<u32>>>,
    /// Instructions written per trace ID (the index with CPU tags).
    per_id: Vec<u64>,
    stats: TarmacStats,
    line: String,
}

impl<W: Write> TarmacWriter<W> {
    pub fn new(out: W, cfg: TarmacConfig) -> Self {
        TarmacWriter {
            out,
            cfg,
            dis: Disassembler::new(),
            ctx: vec![None; 256],
            mem_ctx: vec![MemContext::default(); 256],
            cpus: None,
            per_id: vec![0; 256],
            stats: TarmacStats::default(),
            line: String::with_capacity(128),
        }
    }

    /// Tag every line with the core of its trace ID (`cpu0`, `cpu1`, ...),
    /// as models write the Tarmac of several cores: for decodes with
    /// several trace sources. `cpus` gives the CPU number of trace IDs
    /// where it is known (e.g. from a snapshot's core names); other trace
    /// IDs get the lowest free numbers in the order they first appear.
    pub fn with_cpu_tags(mut self, cpus: &[(u8, u32)]) -> Self {
        let mut map = vec![None; 256];
        for &(id, cpu) in cpus {
            map[id as usize] = Some(cpu);
        }
        self.cpus = Some(map);
        self
    }

    /// The CPU number of `trace_id` with CPU tags (assigned on first use).
    fn cpu(&mut self, trace_id: u8) -> Option<u32> {
        let map = self.cpus.as_mut()?;
        if let Some(c) = map[trace_id as usize] {
            return Some(c);
        }
        let mut c = 0;
        while map.contains(&Some(c)) {
            c += 1;
        }
        map[trace_id as usize] = Some(c);
        Some(c)
    }

    /// `TIME clk ` and, with CPU tags, `cpuN `.
    fn start_line(&mut self, trace_id: u8) {
        use std::fmt::Write as _;
        let cpu = self.cpu(trace_id);
        self.line.clear();
        let _ = write!(self.line, "{} clk ", self.stats.instructions);
        if let Some(c) = cpu {
            let _ = write!(self.line, "cpu{c} ");
        }
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
                self.mem_ctx[trace_id as usize].merge(MemContext::from_pe_context(&elem.context));
                Ok(())
            }
            OCSD_GEN_TRC_ELEM_INSTR_RANGE => self.range(trace_id, elem, mem),
            OCSD_GEN_TRC_ELEM_EXCEPTION => self.exception(trace_id, elem),
            _ => Ok(()),
        }
    }

    fn range(&mut self, trace_id: u8, elem: &ocsd_generic_trace_elem, mem: &mut dyn MemAccess) -> io::Result<()> {
        let Some(isa) = range_isa(elem) else { return Ok(()) };
        let ctx = self.ctx[trace_id as usize].unwrap_or(elem.context);
        let mem_ctx = self.mem_ctx[trace_id as usize];
        let mut res = Ok(());
        let complete = for_each_instr(elem, &ctx, &mem_ctx, trace_id, mem, |i| {
            if res.is_ok() {
                res = self.write_instr(trace_id, i, &ctx);
            }
        });
        res?;
        if !complete {
            self.stats.truncated_ranges += 1;
        } else if elem.num_instr_range() > 0 && elem.last_instr_exec() != 0 && elem.last_i_subtype == OCSD_S_INSTR_BR_LINK {
            self.write_link(trace_id, isa, elem.en_addr)?;
        }
        Ok(())
    }

    /// `TIME clk E PC NUMBER CoreEvent_NAME`
    fn exception(&mut self, trace_id: u8, elem: &ocsd_generic_trace_elem) -> io::Result<()> {
        use std::fmt::Write as _;
        self.stats.exceptions += 1;
        let num = elem.exception_number();
        let from_a64 = self.ctx[trace_id as usize].is_some_and(|c| c.bits64() != 0);
        self.start_line(trace_id);
        let l = &mut self.line;
        l.push_str("E ");
        let pc = if elem.excep_ret_addr() != 0 { elem.en_addr } else { 0 };
        if pc >> 32 == 0 {
            let _ = write!(l, "{:08x} ", pc);
        } else {
            let _ = write!(l, "{:016x} ", pc);
        }
        let _ = writeln!(l, "{:08x} CoreEvent_{}", num, if from_a64 { a_profile_exception_name(num) } else { "EXCEPTION" });
        self.out.write_all(l.as_bytes())
    }

    fn write_instr(&mut self, trace_id: u8, i: &Instr, ctx: &ocsd_pe_context) -> io::Result<()> {
        use std::fmt::Write as _;
        self.stats.instructions += 1;
        if !i.readable {
            self.stats.no_memory += 1;
        }
        self.per_id[trace_id as usize] += 1;
        let n = if self.cpus.is_some() { self.per_id[trace_id as usize] } else { self.stats.instructions };
        self.start_line(trace_id);
        let l = &mut self.line;
        let _ = write!(l, "{} ({}) ", if i.executed { "IT" } else { "IS" }, n);
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

    fn write_link(&mut self, trace_id: u8, isa: Isa, ret: u64) -> io::Result<()> {
        use std::fmt::Write as _;
        self.stats.link_writes += 1;
        self.start_line(trace_id);
        let l = &mut self.line;
        let _ = match isa {
            Isa::A64 => writeln!(l, "R X30 {:016X}", ret),
            Isa::A32 => writeln!(l, "R r14 {:08x}", ret as u32),
            Isa::T32 => writeln!(l, "R r14 {:08x}", (ret as u32) | 1),
        };
        self.out.write_all(l.as_bytes())
    }
}

/// The exception types of ETMv4 and ETE for the A profile (the exception
/// number of their Exception packets).
fn a_profile_exception_name(num: u32) -> &'static str {
    match num {
        0x0 => "RESET",
        0x1 => "DEBUG_HALT",
        0x2 => "CALL",
        0x3 => "TRAP",
        0x4 => "SYSTEM_ERROR",
        0x6 => "INST_DEBUG",
        0x7 => "DATA_DEBUG",
        0xA => "ALIGNMENT",
        0xB => "INST_FAULT",
        0xC => "DATA_FAULT",
        0xE => "IRQ",
        0xF => "FIQ",
        _ => "EXCEPTION",
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
