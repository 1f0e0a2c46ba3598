//! `ocsd decode` and `ocsd compare`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use opencsd_c_api::api::{AddressSpace, Decoder, DecoderBuilder, Element, ElementKind, MemoryImage, ParallelOptions};
use opencsd_c_api::tarmac::{Comparer, Reference, TarmacConfig, TarmacWriter};

use crate::config_file::{self, parse_num};
use crate::{CompareArgs, DecodeArgs, Format, InputArgs};

/// A failure: exit status and one line of text.
pub struct Failure {
    pub code: u8,
    pub msg: String,
}

impl Failure {
    fn input(msg: impl Into<String>) -> Failure {
        Failure { code: 2, msg: msg.into() }
    }
}

fn fail(cmd: &str, f: Failure) -> ExitCode {
    eprintln!("ocsd {cmd}: error: {}", f.msg);
    ExitCode::from(f.code)
}

/// `FILE[@ADDR][:SPACE]`
fn parse_image_arg(arg: &str, need_addr: bool) -> Result<(String, Option<u64>, AddressSpace), Failure> {
    let mut rest = arg.to_string();
    let mut space = AddressSpace::ANY;
    if let Some((head, tail)) = rest.rsplit_once(':') {
        if let Ok(s) = tail.parse::<AddressSpace>() {
            space = s;
            rest = head.to_string();
        }
    }
    let (file, addr) = match rest.rsplit_once('@') {
        Some((f, a)) => {
            let v = parse_num(a).ok_or_else(|| Failure::input(format!("{arg}: `{a}` is not an address (0x... or decimal)")))?;
            (f.to_string(), Some(v))
        }
        None => (rest, None),
    };
    if need_addr && addr.is_none() {
        return Err(Failure::input(format!("{arg}: a raw dump needs its address: FILE@ADDR")));
    }
    Ok((file, addr, space))
}

fn mem_image(file: &Path, addr: Option<u64>, force_raw: bool) -> Result<MemoryImage, Failure> {
    let name = file.to_string_lossy().to_string();
    let data = std::fs::read(file).map_err(|e| Failure::input(format!("{name}: cannot read: {e}")))?;
    if !force_raw && opencsd_c_api::api::ElfImage::is_elf(&data) {
        return MemoryImage::elf_bytes(&name, data, addr).map_err(|e| Failure::input(e.to_string()));
    }
    if !force_raw && addr.is_none() {
        return Err(Failure::input(format!("{name}: not an ELF file (no \\x7fELF magic); a raw dump needs an address: FILE@ADDR")));
    }
    let Some(addr) = addr else { unreachable!() };
    if data.is_empty() {
        return Err(Failure::input(format!("{name}: empty file")));
    }
    Ok(MemoryImage::bytes(addr, &data))
}

/// The decoder and the trace file for the input options.
pub fn open_input(inp: &InputArgs, count_packets: bool) -> Result<(Decoder, PathBuf), Failure> {
    let mut images = Vec::new();
    for e in &inp.elfs {
        let (file, addr, space) = parse_image_arg(e, false)?;
        let data = std::fs::read(&file).map_err(|err| Failure::input(format!("{file}: cannot read: {err}")))?;
        let img = MemoryImage::elf_bytes(&file, data, addr).map_err(|err| Failure::input(err.to_string()))?;
        images.push(img.in_space(space));
    }
    for d in &inp.dumps {
        let (file, addr, space) = parse_image_arg(d, true)?;
        images.push(mem_image(Path::new(&file), addr, true)?.in_space(space));
    }
    let (mut dec, trace) = if let Some(dir) = &inp.snapshot {
        if !dir.is_dir() {
            return Err(Failure::input(format!("{}: no such directory", dir.display())));
        }
        let s = Decoder::from_snapshot_with(dir, inp.buffer.as_deref(), |b| b.count_packets(count_packets))
            .map_err(|e| Failure::input(e.to_string()))?;
        for w in &s.warnings {
            eprintln!("ocsd: warning: {}: {w}", dir.display());
        }
        (s.decoder, s.trace_file)
    } else {
        let (Some(trace), Some(cfg_path)) = (&inp.trace, &inp.config) else {
            return Err(Failure::input("give --snapshot DIR, or --trace FILE with --config FILE"));
        };
        let cfg = config_file::read(cfg_path).map_err(|e| Failure::input(format!("{}: {e}", cfg_path.display())))?;
        let mut b: DecoderBuilder = Decoder::builder().format(cfg.format).count_packets(count_packets);
        for s in cfg.sources {
            b = b.source(s);
        }
        for m in &cfg.memory {
            images.push(mem_image(&m.file, m.address, false)?.in_space(m.space));
        }
        let dec = b.build().map_err(|e| Failure::input(format!("{}: {e}", cfg_path.display())))?;
        (dec, trace.clone())
    };
    for img in images {
        dec.add_memory(img).map_err(|e| Failure::input(e.to_string()))?;
    }
    match std::fs::metadata(&trace) {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Err(Failure::input(format!("{}: not a file", trace.display()))),
        Err(e) => return Err(Failure::input(format!("{}: cannot read: {e}", trace.display()))),
    }
    Ok((dec, trace))
}

#[derive(Default)]
struct Stats {
    elements: u64,
    by_kind: BTreeMap<&'static str, u64>,
    instructions: u64,
    synced: bool,
}

impl Stats {
    fn add(&mut self, e: &Element) {
        self.elements += 1;
        *self.by_kind.entry(e.type_name()).or_default() += 1;
        match e.kind {
            ElementKind::InstrRange(r) => self.instructions += r.instr_count as u64,
            ElementKind::InstrRangeNoPath { instr_count, .. } => self.instructions += instr_count as u64,
            _ => {}
        }
        if !matches!(e.kind, ElementKind::NoSync { .. } | ElementKind::EndOfTrace { .. }) {
            self.synced = true;
        }
    }
}

fn progress_bar(len: u64) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() || len < (1 << 20) {
        return None;
    }
    let pb = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {bytes}/{total_bytes} [{bar:40}] {bytes_per_sec} {eta}") {
        pb.set_style(style.progress_chars("=> "));
    }
    Some(pb)
}

enum Out {
    Text,
    Json,
    Tarmac(TarmacWriter<Box<dyn Write>>),
}

pub fn run_decode(a: &DecodeArgs) -> ExitCode {
    match decode(a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => fail("decode", f),
    }
}

fn decode(a: &DecodeArgs) -> Result<(), Failure> {
    let (mut dec, trace_path) = open_input(&a.input, a.stats)?;
    let trace_name = trace_path.display().to_string();
    let file = File::open(&trace_path).map_err(|e| Failure::input(format!("{trace_name}: cannot read: {e}")))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let out_name = a.output.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "standard output".into());
    let mut out: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(BufWriter::with_capacity(1 << 16, File::create(p).map_err(|e| Failure::input(format!("{}: cannot create: {e}", p.display())))?)),
        None => Box::new(BufWriter::with_capacity(1 << 16, std::io::stdout().lock())),
    };
    let mut out_kind = match a.format {
        Format::Text => Out::Text,
        Format::Json => Out::Json,
        Format::Tarmac => Out::Tarmac(TarmacWriter::new(std::mem::replace(&mut out, Box::new(std::io::sink())), TarmacConfig { disasm: !a.no_disasm })),
    };
    let start = Instant::now();
    let mut stats = Stats::default();
    let mut write_err = None;
    let verbose = a.verbose;
    let (bytes, fatal) = if a.jobs > 0 && !matches!(out_kind, Out::Tarmac(_)) {
        let trace = std::fs::read(&trace_path).map_err(|e| Failure::input(format!("{trace_name}: cannot read: {e}")))?;
        let json = matches!(out_kind, Out::Json);
        let map = move |e: &Element, line: &mut String| {
            // the line is made on the decode threads
            if json {
                if let Ok(j) = serde_json::to_string(e) {
                    line.push_str(&j);
                }
            } else {
                e.write_lister_line(line);
            }
            line.push('\n');
            *e
        };
        let r = dec.decode_parallel(&trace, &ParallelOptions::new(a.jobs), map, |e, line| {
            stats.add(&e);
            if write_err.is_none() {
                if let Err(err) = out.write_all(line.as_bytes()) {
                    write_err = Some(err);
                }
            }
        });
        match r {
            Ok(b) => (b, None),
            Err(e) => (trace.len() as u64, Some(e.to_string())),
        }
    } else {
        let pb = progress_bar(len);
        let mut line = String::with_capacity(256);
        let mut it = dec.decode(std::io::BufReader::new(file));
        while let Some(e) = it.next() {
            stats.add(&e);
            let r = match &mut out_kind {
                Out::Tarmac(w) => {
                    let raw = e.raw();
                    w.element(e.trace_id, &raw, it.decoder().memory())
                }
                Out::Text => {
                    line.clear();
                    e.write_lister_line(&mut line);
                    line.push('\n');
                    out.write_all(line.as_bytes())
                }
                Out::Json => serde_json::to_writer(&mut out, &e).map_err(std::io::Error::from).and_then(|_| out.write_all(b"\n")),
            };
            if let Err(err) = r {
                write_err = Some(err);
                break;
            }
            if stats.elements % 4096 == 0 {
                if let Some(pb) = &pb {
                    pb.set_position(it.bytes());
                }
                if verbose {
                    for m in it.decoder().take_messages() {
                        eprintln!("ocsd: {m}");
                    }
                }
            }
        }
        let bytes = it.bytes();
        let fatal = it.error().map(|e| e.to_string());
        drop(it);
        if let Some(pb) = pb {
            pb.finish_and_clear();
        }
        (bytes, fatal)
    };
    let mut tarmac_stats = None;
    if let Out::Tarmac(w) = out_kind {
        let st = w.stats();
        if st.no_memory > 0 {
            eprintln!("ocsd decode: {} instruction(s) written without opcode: no memory image at their address (add --elf/--dump)", st.no_memory);
        }
        if st.truncated_ranges > 0 {
            eprintln!("ocsd decode: {} Thumb range(s) cut short: no memory image to size their instructions", st.truncated_ranges);
        }
        tarmac_stats = Some(st);
        match w.finish() {
            Ok(o) => out = o,
            Err(err) => write_err = write_err.or(Some(err)),
        }
    }
    let flushed = out.flush();
    if let Some(err) = write_err.or(flushed.err()) {
        if err.kind() == std::io::ErrorKind::BrokenPipe {
            return Ok(());
        }
        return Err(Failure { code: 1, msg: format!("{out_name}: write failed: {err}") });
    }
    if verbose {
        for m in dec.take_messages() {
            eprintln!("ocsd: {m}");
        }
    }
    let errors = dec.error_count();
    if a.stats {
        let secs = start.elapsed().as_secs_f64();
        let mut s = String::new();
        s.push_str(&format!("trace bytes:   {bytes}\n"));
        if let Some(p) = dec.packets() {
            s.push_str(&format!("packets:       {p}\n"));
        }
        s.push_str(&format!("elements:      {}\n", stats.elements));
        for (k, n) in &stats.by_kind {
            s.push_str(&format!("  {:<34} {n}\n", k.trim_start_matches("OCSD_GEN_TRC_ELEM_")));
        }
        s.push_str(&format!("instructions:  {}\n", stats.instructions));
        if let Some(t) = tarmac_stats {
            s.push_str(&format!(
                "tarmac:        {} instruction lines, {} link register writes, {} without memory\n",
                t.instructions, t.link_writes, t.no_memory
            ));
        }
        s.push_str(&format!("errors:        {errors}\n"));
        s.push_str(&format!("time:          {secs:.3} s ({:.1} MB/s)\n", bytes as f64 / 1e6 / secs.max(1e-9)));
        eprint!("{s}");
    } else if errors > 0 && !verbose {
        eprintln!("ocsd decode: {trace_name}: {errors} decode error(s) logged (--verbose shows them)");
    }
    if let Some(f) = fatal {
        let hint = if stats.synced { "" } else { "no trace synchronisation found before the " };
        return Err(Failure::input(format!("{trace_name}: {hint}{f} (output above is complete up to there)")));
    }
    if bytes > 0 && !stats.synced {
        return Err(Failure::input(format!(
            "{trace_name}: no trace synchronisation found in {bytes} bytes (check the trace format and the source configuration: protocol, trace ID)"
        )));
    }
    Ok(())
}

pub fn run_compare(a: &CompareArgs) -> ExitCode {
    match compare(a) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(f) => fail("compare", f),
    }
}

/// Exit 0 and `N instructions in M segments match`, or exit 1 and the first
/// divergence (per trace ID).
fn compare(a: &CompareArgs) -> Result<bool, Failure> {
    let reference = Reference::from_file(&a.reference).map_err(|e| Failure::input(e.to_string().replace('\n', " ")))?;
    let (mut dec, trace_path) = open_input(&a.input, false)?;
    let trace_name = trace_path.display().to_string();
    let file = File::open(&trace_path).map_err(|e| Failure::input(format!("{trace_name}: cannot read: {e}")))?;
    let mut cmp = Comparer::new(&reference);
    let mut it = dec.decode(std::io::BufReader::new(file));
    while let Some(e) = it.next() {
        let raw = e.raw();
        cmp.element(e.index as _, e.trace_id, &raw, it.decoder().memory());
    }
    if let Some(err) = it.error() {
        return Err(Failure::input(format!("{trace_name}: {err}")));
    }
    let report = cmp.finish();
    if report.ids.is_empty() {
        return Err(Failure::input(format!("{trace_name}: no instructions decoded: nothing to compare (check the trace configuration and memory images)")));
    }
    println!("{report}");
    Ok(report.matches())
}
