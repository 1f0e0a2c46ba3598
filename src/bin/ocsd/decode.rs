//! `ocsd decode` and `ocsd compare`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use opencsd_c_api::api::dstream::{DSTREAM_BLOCK, DSTREAM_DATA};
use opencsd_c_api::api::{
    DstreamReader,
    AddressSpace, ContextId, Decoder, DecoderBuilder, Element, ElementKind, LineBuf, ListerLines, MemoryImage, ParallelOptions, TextFormat, TextSummary, Vmid,
};
use opencsd_c_api::perf::autofdo::AutoFdo;
use opencsd_c_api::perf::decode::SampleSink;
use opencsd_c_api::perf::profile::{ElementSamples, Profile};
use opencsd_c_api::perf::spaces::Spaces;
use opencsd_c_api::tarmac::{Comparer, Reference, TarmacConfig, TarmacWriter};

use crate::config_file::{self, parse_num};
use crate::profiles::{write_profiles, ProfileError, ProfileOuts};
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

fn fail(cmd: &str, f: Failure) -> u8 {
    eprintln!("ocsd {cmd}: error: {}", f.msg);
    f.code
}

/// A memory image named on the command line.
struct ImageArg {
    file: String,
    addr: Option<u64>,
    space: AddressSpace,
    context_id: Option<u32>,
    vmid: Option<u32>,
}

impl ImageArg {
    /// The image in its address space, for its contexts.
    fn place(&self, img: MemoryImage) -> MemoryImage {
        let mut img = img.in_space(self.space);
        if let Some(id) = self.context_id {
            img = img.for_context(ContextId(id));
        }
        if let Some(v) = self.vmid {
            img = img.for_vmid(Vmid(v));
        }
        img
    }
}

/// A context ID or VMID option value (32 bits).
fn parse_u32(arg: &str, key: &str, v: &str) -> Result<u32, Failure> {
    parse_num(v)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| Failure::input(format!("{arg}: {key}=`{v}` is not a 32-bit number (0x... or decimal)")))
}

/// `FILE[@ADDR][:SPACE][,ctx=N][,vmid=N][,space=SPACE]`
fn parse_image_arg(arg: &str, need_addr: bool) -> Result<ImageArg, Failure> {
    let mut rest = arg.to_string();
    let mut space = AddressSpace::ANY;
    let (mut context_id, mut vmid) = (None, None);
    // trailing ,KEY=VALUE options (a comma without `=` belongs to the file name)
    while let Some((head, tail)) = rest.rsplit_once(',') {
        let Some((k, v)) = tail.split_once('=') else { break };
        match k.trim().to_ascii_lowercase().as_str() {
            "ctx" | "context" | "context_id" | "cid" => context_id = Some(parse_u32(arg, k, v)?),
            "vmid" => vmid = Some(parse_u32(arg, k, v)?),
            "space" => space = v.parse::<AddressSpace>().map_err(|e| Failure::input(format!("{arg}: {e}")))?,
            _ => return Err(Failure::input(format!("{arg}: unknown image option `{k}` (ctx=N, vmid=N, space=SPACE)"))),
        }
        rest = head.to_string();
    }
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
    Ok(ImageArg { file, addr, space, context_id, vmid })
}

fn mem_image(file: &Path, addr: Option<u64>, force_raw: bool) -> Result<MemoryImage, Failure> {
    let name = file.to_string_lossy().to_string();
    let cannot = |e: std::io::Error| Failure::input(format!("{name}: cannot read: {e}"));
    let mut f = File::open(file).map_err(cannot)?;
    let mut magic = Vec::with_capacity(4);
    Read::by_ref(&mut f).take(4).read_to_end(&mut magic).map_err(cannot)?;
    if !force_raw && opencsd_c_api::api::ElfImage::is_elf(&magic) {
        let data = std::fs::read(file).map_err(cannot)?;
        return MemoryImage::elf_bytes(&name, data, addr).map_err(|e| Failure::input(e.to_string()));
    }
    if !force_raw && addr.is_none() {
        return Err(Failure::input(format!("{name}: not an ELF file (no \\x7fELF magic); a raw dump needs an address: FILE@ADDR")));
    }
    let Some(addr) = addr else { unreachable!() };
    if magic.is_empty() {
        return Err(Failure::input(format!("{name}: empty file")));
    }
    // (its pages read as the decode needs them)
    MemoryImage::dump_file(&name, addr).map_err(|e| Failure::input(e.to_string()))
}

/// The CPU number in a core's name (`cpu_0`, `cpu1`, `Cortex-A53_2`): its
/// last run of digits.
fn cpu_number(core: &str) -> Option<u32> {
    let end = core.rfind(|c: char| c.is_ascii_digit())? + 1;
    let start = core[..end].rfind(|c: char| !c.is_ascii_digit()).map_or(0, |i| i + 1);
    core[start..end].parse().ok()
}

/// For Tarmac: the CPU of each instruction-trace source when there are
/// several (numbers from the snapshot's core names where they have one),
/// None for one.
fn tarmac_cpus(dec: &Decoder, cores: &[(u8, String)]) -> Option<Vec<(u8, u32)>> {
    let instr_sources = dec.sources().iter().filter(|(_, name)| !name.starts_with("DCD_STM") && !name.starts_with("DCD_ITM")).count();
    if instr_sources < 2 {
        return None;
    }
    let mut cpus: Vec<(u8, u32)> = Vec::new();
    for (id, core) in cores {
        if let Some(n) = cpu_number(core) {
            // two sources naming the same core number: leave the second to first appearance
            if !cpus.iter().any(|&(_, c)| c == n) {
                cpus.push((*id, n));
            }
        }
    }
    Some(cpus)
}

/// The trace file of the input, as the decoders read it.
pub struct TraceFile {
    pub path: PathBuf,
    /// A DSTREAM capture whose block footers are dropped (`--dstream`, or
    /// `format = "dstream"` in the configuration file).
    pub dstream: bool,
    /// A snapshot buffer of format `dstream_coresight` read without
    /// `--dstream`: failures say that the option may be missing.
    pub dstream_hint: bool,
}

impl TraceFile {
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }

    /// A reader of the trace bytes, and their number (about, for a DSTREAM
    /// capture) for the progress bar.
    pub fn reader(&self) -> Result<(Box<dyn Read>, u64), Failure> {
        let file = File::open(&self.path).map_err(|e| Failure::input(format!("{}: cannot read: {e}", self.name())))?;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let r = std::io::BufReader::new(file);
        Ok(if self.dstream {
            (Box::new(DstreamReader::new(r)), len / DSTREAM_BLOCK as u64 * DSTREAM_DATA as u64)
        } else {
            (Box::new(r), len)
        })
    }

    /// Said after a failure to decode.
    fn hint(&self) -> &'static str {
        if self.dstream_hint {
            " (the snapshot gives the buffer's format as dstream_coresight: if the file is a DSTREAM probe's capture, --dstream drops its block footers)"
        } else {
            ""
        }
    }
}

/// The decoder and the trace file for the input options (and the
/// snapshot's (trace ID, core name) pairs).
pub fn open_input(inp: &InputArgs, count_packets: bool) -> Result<(Decoder, TraceFile, Vec<(u8, String)>), Failure> {
    let mut images = Vec::new();
    for e in &inp.elfs {
        let a = parse_image_arg(e, false)?;
        let data = std::fs::read(&a.file).map_err(|err| Failure::input(format!("{}: cannot read: {err}", a.file)))?;
        let img = MemoryImage::elf_bytes(&a.file, data, a.addr).map_err(|err| Failure::input(err.to_string()))?;
        images.push(a.place(img));
    }
    for d in &inp.dumps {
        let a = parse_image_arg(d, true)?;
        images.push(a.place(mem_image(Path::new(&a.file), a.addr, true)?));
    }
    let mut cores = Vec::new();
    let mut dstream = inp.dstream;
    let mut dstream_hint = false;
    let (mut dec, trace) = if let Some(dir) = &inp.snapshot {
        if !dir.is_dir() {
            return Err(Failure::input(format!("{}: no such directory", dir.display())));
        }
        let s = Decoder::from_snapshot_with(dir, inp.buffer.as_deref(), |b| b.count_packets(count_packets))
            .map_err(|e| Failure::input(e.to_string()))?;
        for w in &s.warnings {
            eprintln!("ocsd: warning: {}: {w}", dir.display());
        }
        cores = s.cores;
        dstream_hint = s.buffer_format == "dstream_coresight" && !dstream;
        (s.decoder, s.trace_file)
    } else {
        let (Some(trace), Some(cfg_path)) = (&inp.trace, &inp.config) else {
            return Err(Failure::input("give --snapshot DIR, or --trace FILE with --config FILE"));
        };
        let cfg = config_file::read(cfg_path).map_err(|e| Failure::input(format!("{}: {e}", cfg_path.display())))?;
        dstream |= cfg.dstream;
        let mut b: DecoderBuilder = Decoder::builder().format(cfg.format).count_packets(count_packets);
        for s in cfg.sources {
            b = b.source(s);
        }
        for m in &cfg.memory {
            let a = ImageArg { file: String::new(), addr: m.address, space: m.space, context_id: m.context_id, vmid: m.vmid };
            images.push(a.place(mem_image(&m.file, m.address, false)?));
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
    Ok((dec, TraceFile { path: trace, dstream, dstream_hint }, cores))
}

/// Element types counted one by one (OpenCSD's are 0..=19); the rest
/// share the last counter.
const KINDS: usize = 32;

/// What [`Decoder::decode_text`] gives its text to: `out`, the first write
/// error kept in `err` (and the decode stopped there).
fn write_to<'a>(out: &'a mut dyn Write, err: &'a mut Option<std::io::Error>) -> impl FnMut(&[u8]) -> bool + 'a {
    move |text| match out.write_all(text) {
        Ok(()) => true,
        Err(e) => {
            *err = Some(e);
            false
        }
    }
}

struct Stats {
    elements: u64,
    /// By OpenCSD element type, with an example element's name.
    by_kind: [(u64, &'static str); KINDS],
    instructions: u64,
    synced: bool,
}

impl Default for Stats {
    fn default() -> Self {
        Stats { elements: 0, by_kind: [(0, ""); KINDS], instructions: 0, synced: false }
    }
}

impl Stats {
    #[inline]
    fn add(&mut self, e: &Element) {
        self.elements += 1;
        let k = &mut self.by_kind[usize::try_from(e.raw_type()).map_or(KINDS - 1, |t| t.min(KINDS - 1))];
        if k.0 == 0 {
            k.1 = e.type_name();
        }
        k.0 += 1;
        match e.kind {
            ElementKind::InstrRange(r) => self.instructions += r.instr_count as u64,
            ElementKind::InstrRangeNoPath { instr_count, .. } => self.instructions += instr_count as u64,
            _ => {}
        }
        if !matches!(e.kind, ElementKind::NoSync { .. } | ElementKind::EndOfTrace { .. }) {
            self.synced = true;
        }
    }

    /// Add the counts of a text decode.
    fn add_summary(&mut self, s: &TextSummary) {
        self.elements += s.elements;
        for (t, &n) in s.by_type.iter().enumerate() {
            let k = &mut self.by_kind[t.min(KINDS - 1)];
            if n > 0 && k.0 == 0 {
                k.1 = Element::type_name_of(t as i32);
            }
            k.0 += n;
        }
        self.instructions += s.instructions;
        self.synced |= s.synced;
    }

    /// (type name, count) of the element types seen, by name.
    fn kinds(&self) -> BTreeMap<&'static str, u64> {
        let mut m = BTreeMap::new();
        for &(n, name) in &self.by_kind {
            if n > 0 {
                *m.entry(name).or_default() += n;
            }
        }
        m
    }
}

/// Text written before it goes to the output in one piece.
const OUT_CHUNK: usize = 1 << 16;

/// A progress bar for a long decode to a terminal.
fn wants_progress(len: u64) -> bool {
    std::io::stderr().is_terminal() && len >= (1 << 20)
}

fn progress_bar(len: u64) -> Option<indicatif::ProgressBar> {
    if !wants_progress(len) {
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

/// Run `ocsd decode`: the exit status.
pub fn run_decode(a: &DecodeArgs) -> u8 {
    match decode(a) {
        Ok(()) => 0,
        Err(f) => fail("decode", f),
    }
}

fn decode(a: &DecodeArgs) -> Result<(), Failure> {
    let outs = ProfileOuts { functions: a.functions, folded: a.folded.as_ref(), flamegraph: a.flamegraph.as_ref(), lcov: a.lcov.as_ref() };
    if outs.any() || a.autofdo.is_some() {
        return profile(a, &outs);
    }
    let (mut dec, trace_file, cores) = open_input(&a.input, a.stats)?;
    let trace_name = trace_file.name();
    let (trace_in, len) = trace_file.reader()?;
    let out_name = a.output.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "standard output".into());
    let mut out: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(BufWriter::with_capacity(1 << 16, File::create(p).map_err(|e| Failure::input(format!("{}: cannot create: {e}", p.display())))?)),
        None => Box::new(BufWriter::with_capacity(1 << 16, std::io::stdout().lock())),
    };
    let mut out_kind = match a.format {
        Format::Text => Out::Text,
        Format::Json => Out::Json,
        Format::Tarmac => {
            let w = TarmacWriter::new(std::mem::replace(&mut out, Box::new(std::io::sink())), TarmacConfig { disasm: !a.no_disasm });
            Out::Tarmac(match tarmac_cpus(&dec, &cores) {
                Some(cpus) => w.with_cpu_tags(&cpus),
                None => w,
            })
        }
    };
    let start = Instant::now();
    let mut stats = Stats::default();
    let mut write_err = None;
    let verbose = a.verbose;
    let (bytes, fatal) = if a.jobs > 0 && !matches!(out_kind, Out::Tarmac(_)) {
        let trace = read_whole(trace_in, len, &trace_name)?;
        // the lines are written on the decode threads
        let format = if matches!(out_kind, Out::Json) { TextFormat::Json } else { TextFormat::Lister };
        let r = dec.decode_text_parallel(&trace, &ParallelOptions::new(a.jobs), format, OUT_CHUNK, write_to(&mut out, &mut write_err));
        stats.add_summary(&r);
        (r.bytes, r.error.map(|e| e.to_string()))
    } else if !matches!(out_kind, Out::Tarmac(_)) && !verbose && !wants_progress(len) {
        // text straight from the decoders' elements (the progress bar and
        // the messages while decoding need the element loop below)
        let format = if matches!(out_kind, Out::Json) { TextFormat::Json } else { TextFormat::Lister };
        let r = dec.decode_text(trace_in, format, OUT_CHUNK, write_to(&mut out, &mut write_err));
        stats.add_summary(&r);
        (r.bytes, r.error.map(|e| e.to_string()))
    } else {
        let pb = progress_bar(len);
        let mut text = LineBuf::with_capacity(OUT_CHUNK + 4096);
        let mut lines = ListerLines::new();
        let json = matches!(out_kind, Out::Json);
        let mut it = dec.decode(trace_in);
        while let Some(e) = it.next() {
            stats.add(&e);
            let r = match &mut out_kind {
                Out::Tarmac(w) => {
                    let raw = e.raw();
                    w.element(e.trace_id, &raw, it.decoder().memory())
                }
                Out::Text | Out::Json => {
                    if json {
                        e.write_json(&mut text);
                        text.put_byte(b'\n');
                    } else {
                        lines.write(&e, &mut text);
                    }
                    if text.len() >= OUT_CHUNK {
                        let r = out.write_all(text.as_bytes());
                        text.clear();
                        r
                    } else {
                        Ok(())
                    }
                }
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
        if write_err.is_none() && !text.is_empty() {
            write_err = out.write_all(text.as_bytes()).err();
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
        for (k, n) in &stats.kinds() {
            s.push_str(&format!("  {:<34} {n}\n", k.trim_start_matches("OCSD_GEN_TRC_ELEM_")));
        }
        s.push_str(&format!("instructions:  {}\n", stats.instructions));
        if let Some(t) = tarmac_stats {
            s.push_str(&format!(
                "tarmac:        {} instruction lines, {} link register writes, {} exceptions, {} without memory\n",
                t.instructions, t.link_writes, t.exceptions, t.no_memory
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
        return Err(Failure::input(format!("{trace_name}: {hint}{f} (output above is complete up to there){}", trace_file.hint())));
    }
    if bytes > 0 && !stats.synced {
        return Err(Failure::input(format!(
            "{trace_name}: no trace synchronisation found in {bytes} bytes (check the trace format and the source configuration: protocol, trace ID){}",
            trace_file.hint()
        )));
    }
    Ok(())
}

/// The whole trace, from the reader already open (`len`: the bytes it
/// is expected to give).
fn read_whole(mut trace_in: Box<dyn Read>, len: u64, trace_name: &str) -> Result<Vec<u8>, Failure> {
    let mut trace = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    trace_in.read_to_end(&mut trace).map_err(|e| Failure::input(format!("{trace_name}: cannot read: {e}")))?;
    Ok(trace)
}

/// The elements of the decode of `a`'s input, as samples to `sink` in
/// address spaces made of the memory images; the decode's fatal error, if
/// any.
fn decode_samples<S: SampleSink>(a: &DecodeArgs, sink: S) -> Result<(ElementSamples<S>, String, Option<String>), Failure> {
    let (mut dec, trace_file, _) = open_input(&a.input, false)?;
    let trace_name = trace_file.name();
    let (trace_in, len) = trace_file.reader()?;
    let mut samples = ElementSamples::new(Spaces::from_files(dec.mapped_files()), sink);
    // (each element where the decode queued it, not moved out)
    let r = if a.jobs > 0 {
        // decoded on the threads, the samples taken on this one from the
        // elements in the serial order
        let trace = read_whole(trace_in, len, &trace_name)?;
        dec.decode_parallel_each(&trace, &ParallelOptions::new(a.jobs), |e| samples.element(e.trace_id, &e.raw()))
    } else {
        dec.decode_each(trace_in, |e| samples.element(e.trace_id, &e.raw()))
    };
    let fatal = r.err().map(|e| format!("{trace_name}: {e}{}", trace_file.hint()));
    if a.verbose {
        for m in dec.take_messages() {
            eprintln!("ocsd: {m}");
        }
    }
    Ok((samples, trace_name, fatal))
}

/// `ocsd decode` with profiles asked for: the elements go to the profiles
/// (one decode for all) instead of the output.
fn profile(a: &DecodeArgs, outs: &ProfileOuts) -> Result<(), Failure> {
    // only the sinks asked for collect
    let sinks = (a.autofdo.is_some().then(AutoFdo::default), outs.any().then(Profile::default));
    let (mut s, trace_name, fatal) = decode_samples(a, sinks)?;
    let ((afdo, prof), spaces) = s.parts();
    if let (Some(out), Some(afdo)) = (&a.autofdo, afdo) {
        afdo.finish(spaces);
        let io = |e: std::io::Error| Failure { code: 1, msg: format!("{}: {e}", out.display()) };
        let mut w = BufWriter::new(File::create(out).map_err(|e| Failure::input(format!("{}: cannot create: {e}", out.display())))?);
        afdo.write(spaces, &mut w).and_then(|_| w.flush()).map_err(io)?;
    }
    if let Some(prof) = prof {
        let title = format!("{trace_name} (instructions)");
        write_profiles(prof, spaces, outs, &title).map_err(|e| match e {
            ProfileError::Io(m) => Failure { code: 1, msg: m },
            ProfileError::Empty(m) => Failure::input(format!("{m} (is the traced code in the memory images? see --elf and --dump)")),
        })?;
    }
    // bad trace, as for the element output: exit status 2
    match fatal {
        Some(m) => Err(Failure::input(format!("{m} (the profiles written hold the trace decoded up to there)"))),
        None => Ok(()),
    }
}

/// Run `ocsd compare`: the exit status.
pub fn run_compare(a: &CompareArgs) -> u8 {
    match compare(a) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(f) => fail("compare", f),
    }
}

/// Exit 0 and `N instructions in M segments match`, or exit 1 and the first
/// divergence (per trace ID).
fn compare(a: &CompareArgs) -> Result<bool, Failure> {
    let reference = Reference::from_file(&a.reference).map_err(|e| Failure::input(e.to_string().replace('\n', " ")))?;
    let (mut dec, trace_file, _) = open_input(&a.input, false)?;
    let trace_name = trace_file.name();
    let (trace_in, _) = trace_file.reader()?;
    let mut cmp = Comparer::new(&reference);
    let mut it = dec.decode(trace_in);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_numbers_from_core_names() {
        assert_eq!(cpu_number("cpu_0"), Some(0));
        assert_eq!(cpu_number("cpu12"), Some(12));
        assert_eq!(cpu_number("Cortex-A53_3"), Some(3));
        assert_eq!(cpu_number("core"), None);
    }
}
