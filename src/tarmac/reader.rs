//! Reader of reference execution traces: the instruction lines of Tarmac
//! (as Arm's models write it, and the Trace Matcher format) and their
//! variants.
//!
//! Recognised instruction lines (other lines are skipped):
//!
//! ```text
//! [TIME [UNIT]] [cpuN] IT|IS|IF (INDEX) ADDR[:PA] OPCODE ISA MODE : DISASSEMBLY
//! [TIME [UNIT]] [cpuN] IT|IS|IF (ADDR) OPCODE ISA MODE : DISASSEMBLY
//! [TIME [UNIT]] [cpuN] ES (ADDR:OPCODE) ISA MODE : [CCFAIL] DISASSEMBLY
//! ```
//!
//! `ADDR` is the virtual address; a `:PA` physical address after it (with
//! an optional `_S` / `_NS` suffix) is ignored. `ISA` is `O` (A64), `A`
//! (A32) or `T`/`T16`/`T32` (T32). `IS` (and `ES ... CCFAIL`) is an
//! instruction whose condition failed: it still counts as executed in
//! program order. `IT EXC ...` / `IT Reset ...` lines report exceptions,
//! not instructions. Lines are grouped by their `cpuN` tag (the empty
//! name when there is none).

use std::io::BufRead;

use super::disasm::Isa;

/// One instruction of the reference trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefInstr {
    /// Virtual address.
    pub addr: u64,
    /// Opcode as written (hex digits of the encoding field).
    pub opcode: u32,
    /// Number of hex digits of the opcode field (4 or 8 normally).
    pub opcode_digits: u8,
    pub isa: Isa,
    /// Line number in the reference file (1-based).
    pub line: u64,
}

/// The instructions of a reference trace, per CPU tag, in file order.
#[derive(Debug, Default)]
pub struct Reference {
    /// (cpu tag, its instructions); the tag is `""` for untagged lines.
    pub cpus: Vec<(String, Vec<RefInstr>)>,
    /// Lines read.
    pub lines: u64,
}

/// A reference trace that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}:{line}: {msg}")]
    Syntax { path: String, line: u64, msg: String },
    #[error("{path}: no instruction lines (IT/IS/ES) found")]
    NoInstructions { path: String },
}

const TIME_UNITS: &[&str] = &["clk", "ns", "cs", "cyc", "tic", "ps", "us", "ms", "s"];

impl Reference {
    /// Read the reference trace at `path`.
    pub fn from_file(path: &std::path::Path) -> Result<Reference, ReadError> {
        let name = path.display().to_string();
        let f = std::fs::File::open(path).map_err(|e| ReadError::Io { path: name.clone(), source: e })?;
        Self::read(std::io::BufReader::with_capacity(1 << 16, f), &name)
    }

    /// Read a reference trace; `name` names it in errors.
    pub fn read<R: BufRead>(mut r: R, name: &str) -> Result<Reference, ReadError> {
        let mut refs = Reference::default();
        let mut buf = Vec::with_capacity(256);
        let mut last_cpu: Option<usize> = None;
        loop {
            buf.clear();
            let n = r.read_until(b'\n', &mut buf).map_err(|e| ReadError::Io { path: name.to_string(), source: e })?;
            if n == 0 {
                break;
            }
            refs.lines += 1;
            // non-UTF-8 bytes cannot be part of an instruction line's
            // fields; such lines are read lossily
            let line = String::from_utf8_lossy(&buf);
            match parse_line(&line) {
                Ok(None) => {}
                Ok(Some((cpu, mut ins))) => {
                    ins.line = refs.lines;
                    let idx = match last_cpu {
                        Some(i) if refs.cpus[i].0 == cpu => i,
                        _ => match refs.cpus.iter().position(|(c, _)| c == cpu) {
                            Some(i) => i,
                            None => {
                                refs.cpus.push((cpu.to_string(), Vec::new()));
                                refs.cpus.len() - 1
                            }
                        },
                    };
                    last_cpu = Some(idx);
                    refs.cpus[idx].1.push(ins);
                }
                Err(msg) => return Err(ReadError::Syntax { path: name.to_string(), line: refs.lines, msg }),
            }
        }
        if refs.cpus.iter().all(|(_, v)| v.is_empty()) {
            return Err(ReadError::NoInstructions { path: name.to_string() });
        }
        Ok(refs)
    }

    /// Total instructions over all CPUs.
    pub fn instructions(&self) -> usize {
        self.cpus.iter().map(|(_, v)| v.len()).sum()
    }
}

fn parse_hex(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    u64::from_str_radix(s, 16).ok()
}

/// An address token: `ADDR` or `ADDR:PA[_S|_NS]`; the virtual address.
fn parse_addr(s: &str) -> Option<u64> {
    parse_hex(s.split(':').next().unwrap_or(""))
}

/// Parse one line: `Ok(None)` for a line that is not an instruction,
/// `Ok(Some((cpu, instr)))` for one, `Err` for an instruction line that
/// does not parse.
fn parse_line(line: &str) -> Result<Option<(&str, RefInstr)>, String> {
    let mut toks = line.split_whitespace().peekable();
    let mut tok = match toks.next() {
        Some(t) => t,
        None => return Ok(None),
    };
    // timestamp, with its unit apart or attached
    let digits = tok.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && (digits == tok.len() || TIME_UNITS.contains(&&tok[digits..])) {
        let apart = digits == tok.len();
        tok = match toks.next() {
            Some(t) => t,
            None => return Ok(None),
        };
        if apart && TIME_UNITS.contains(&tok) {
            tok = match toks.next() {
                Some(t) => t,
                None => return Ok(None),
            };
        }
    }
    let mut cpu = "";
    if tok.starts_with("cpu") {
        cpu = tok;
        tok = match toks.next() {
            Some(t) => t,
            None => return Ok(None),
        };
    }
    let is_es = match tok {
        "IT" | "IS" | "IF" => false,
        "ES" => true,
        _ => return Ok(None),
    };
    let rest: Vec<&str> = toks.collect();
    if matches!(rest.first(), Some(&"EXC") | Some(&"Reset")) {
        return Ok(None);
    }
    // the bracketed field, possibly split over several tokens
    let mut i = 0;
    let mut bracket = String::new();
    if rest.first().is_some_and(|t| t.starts_with('(')) {
        loop {
            let Some(t) = rest.get(i) else { return Err("unterminated '(' in instruction line".into()) };
            bracket.push_str(t);
            i += 1;
            if t.ends_with(')') {
                break;
            }
        }
        bracket = bracket.trim_start_matches('(').trim_end_matches(')').to_string();
    }
    let (addr, op_tok);
    if is_es {
        // ES (ADDR:OPCODE)
        let mut parts = bracket.split(':');
        let a = parts.next().unwrap_or("");
        let o = parts.next().unwrap_or("");
        addr = parse_hex(a).ok_or_else(|| format!("bad instruction address '{}'", a))?;
        op_tok = o.to_string();
    } else {
        let t1 = *rest.get(i).ok_or("instruction line ends after the index")?;
        let t2 = rest.get(i + 1).copied().unwrap_or("");
        if !bracket.is_empty() && Isa::from_token(t2).is_some() {
            // (ADDR) OPCODE ISA
            let a = bracket.split(':').next().unwrap_or("");
            addr = parse_hex(a).ok_or_else(|| format!("bad instruction address '{}'", a))?;
            op_tok = t1.to_string();
            i += 1;
        } else {
            // [(INDEX)] ADDR[:PA] OPCODE ISA
            addr = parse_addr(t1).ok_or_else(|| format!("bad instruction address '{}'", t1))?;
            op_tok = t2.to_string();
            i += 2;
        }
    }
    let isa_tok = rest.get(i).copied();
    let isa = isa_tok.and_then(Isa::from_token).ok_or_else(|| format!("expected instruction set O, A or T, found '{}'", isa_tok.unwrap_or("")))?;
    let opcode = parse_hex(&op_tok).filter(|_| op_tok.len() <= 8).ok_or_else(|| format!("bad opcode '{}'", op_tok))? as u32;
    Ok(Some((cpu, RefInstr { addr, opcode, opcode_digits: op_tok.len() as u8, isa, line: 0 })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(l: &str) -> Option<(String, RefInstr)> {
        parse_line(l).unwrap().map(|(c, i)| (c.to_string(), i))
    }

    #[test]
    fn model_lines() {
        let (cpu, i) = one("1 clk cpu0 IT (1) 10300000 14004000 O EL3h_s : B        0x10310000").unwrap();
        assert_eq!(cpu, "cpu0");
        assert_eq!((i.addr, i.opcode, i.isa), (0x1030_0000, 0x1400_4000, Isa::A64));
        let (_, i) = one("5653 clk cpu0 IT (5617) 000a7238:0000100a7238_NS d4000121 O EL0t_n : SVC      #9").unwrap();
        assert_eq!((i.addr, i.opcode), (0xa7238, 0xd400_0121));
        let (cpu, i) = one("26 clk cpu1 IS (26) 163a0bf4 54000081 O EL3h_s : B.NE     0x163a0c04").unwrap();
        assert_eq!((cpu.as_str(), i.addr), ("cpu1", 0x163a_0bf4));
        let (cpu, i) = one("3 clk IT (3) 00020158 eb0000e4 A svc_s : BL       {pc}+0x398 ; 0x204f0").unwrap();
        assert_eq!((cpu.as_str(), i.addr, i.isa), ("", 0x20158, Isa::A32));
        let (_, i) = one("10ns IT (10) 00008000 2001 T thread : MOVS r0,#1").unwrap();
        assert_eq!((i.addr, i.opcode, i.opcode_digits, i.isa), (0x8000, 0x2001, 4, Isa::T32));
    }

    #[test]
    fn other_flavours() {
        // bracketed address, no separate index
        let (_, i) = one("IT (00008000) e3a00001 A svc_s : MOV r0,#1").unwrap();
        assert_eq!((i.addr, i.opcode), (0x8000, 0xe3a0_0001));
        // ES form
        let (_, i) = one("100 ES (00008004:e12fff1e) A svc : CCFAIL BX lr").unwrap();
        assert_eq!((i.addr, i.opcode), (0x8004, 0xe12f_ff1e));
        // our own writer's output, with the no-disasm form
        let (_, i) = one("7 clk IT (7) ffffffc000081000 d2800020 O EL1h_n :").unwrap();
        assert_eq!(i.addr, 0xffff_ffc0_0008_1000);
    }

    #[test]
    fn non_instruction_lines_are_skipped() {
        for l in [
            "",
            "0 clk cpu0 R cpsr 000003cd",
            "15 clk cpu0 MR8 10310040:000010310040 00000000_163a0bd0",
            "5653 clk cpu0 E 000a7238:0000100a7238_NS 00000088 CoreEvent_LOWER_64_SYNC",
            "Warning: cpu.cpu0.cache_contents_unknown: D-Cache was enabled",
            "12 clk IT EXC [0x10] Undefined Instruction",
            "TEST PART_1",
        ] {
            assert!(one(l).is_none(), "{}", l);
        }
    }

    #[test]
    fn broken_instruction_lines_are_errors() {
        assert!(parse_line("1 clk IT (1) zzzz 14004000 O EL3h_s : B").is_err());
        assert!(parse_line("1 clk IT (1) 10300000 14004000 Q EL3h_s : B").is_err());
        assert!(parse_line("1 clk IT (1").is_err());
        assert!(parse_line("1 clk IT (1) 10300000 123456789 O x : B").is_err());
    }

    #[test]
    fn grouped_by_cpu_with_line_numbers() {
        let text = "0 clk cpu0 R cpsr 000003cd\n1 clk cpu0 IT (1) 1000 d503201f O EL1h_n : NOP\n2 clk cpu1 IT (1) 2000 d503201f O EL1h_n : NOP\n3 clk cpu0 IT (2) 1004 d503201f O EL1h_n : NOP\n";
        let r = Reference::read(text.as_bytes(), "t").unwrap();
        assert_eq!(r.cpus.len(), 2);
        assert_eq!(r.cpus[0].0, "cpu0");
        assert_eq!(r.cpus[0].1.iter().map(|i| (i.addr, i.line)).collect::<Vec<_>>(), vec![(0x1000, 2), (0x1004, 4)]);
        assert_eq!(r.cpus[1].1[0].line, 3);
        assert_eq!(r.instructions(), 3);
        assert!(matches!(Reference::read("hello\n".as_bytes(), "t"), Err(ReadError::NoInstructions { .. })));
        match Reference::read("1 clk IT (1) 1000 zz O x : y\n".as_bytes(), "ref.tarmac") {
            Err(e) => assert!(e.to_string().starts_with("ref.tarmac:1: "), "{}", e),
            Ok(_) => panic!("accepted a bad line"),
        }
    }
}
