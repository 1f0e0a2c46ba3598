//! `ocsd perf FILE`: CoreSight trace in a perf.data recording, without perf.
//! A thin layer over `opencsd_c_api::perf`.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;
use std::path::PathBuf;

use opencsd_c_api::perf::{self, dump::{BlockMode, TextStyle}, PerfData, PerfError};

use crate::profiles::{write_profiles, ProfileError, ProfileOuts};

/// Element text of `ocsd perf`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementFormat {
    /// `Idx:..; ID:..; OCSD_GEN_TRC_ELEM_...` lines as trc_pkt_lister -decode_only prints them.
    Text,
    /// One JSON object per element and line.
    Json,
}

#[derive(clap::Args, Debug, Clone)]
#[command(
    about = "Decode the CoreSight trace of a perf.data recording (perf record -e cs_etm// or simpleperf record -e cs-etm)",
    after_help = "Without --dump, --branches or a profile option, prints every decoded element, block by block \
(a `#` line naming each AUX block, then its elements), as `ocsd decode` prints them."
)]
pub struct PerfArgs {
    /// The perf.data file (also a pipe-mode stream, `perf record -o -`);
    /// `-`: read it from standard input.
    pub file: PathBuf,
    /// Format of the decoded elements, printed when no other output is
    /// asked for (or with this option or -o).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<ElementFormat>,
    /// Write the decoded elements to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Look for the traced binaries under this folder (as perf's --symfs).
    #[arg(long, value_name = "DIR")]
    pub symfs: Option<PathBuf>,
    /// Look for the traced binaries in this folder and its subfolders, by
    /// build ID (as simpleperf's --symdir); may be given more than once.
    #[arg(long, value_name = "DIR")]
    pub symdir: Vec<PathBuf>,
    /// The kernel image (as perf's --vmlinux); else looked for in the
    /// build-id cache and perf's vmlinux path list.
    #[arg(long, value_name = "FILE")]
    pub vmlinux: Option<PathBuf>,
    /// Print the packets of each AUX buffer as `perf report -D` does.
    #[arg(long)]
    pub dump: bool,
    /// How to cut the trace into blocks: auto (as perf: split at AUX
    /// records only when the AUXTRACE index is in perf's layout), whole
    /// (each AUXTRACE record, frame formatted), aux (split at AUX records,
    /// format from their flags).
    #[arg(long, value_name = "MODE", default_value = "auto")]
    pub blocks: String,
    /// Packet text of --dump: 1.3 (as Debian's perf prints it, with
    /// OpenCSD 1.3.x) or 1.8 (OpenCSD 1.8.0, this library).
    #[arg(long, value_name = "VERSION", default_value = "1.3")]
    pub dump_text: String,
    /// Print one `FROM => TO` line per branch sample, as
    /// `perf script -F ip,addr --itrace=b` does.
    #[arg(long)]
    pub branches: bool,
    /// Write an AutoFDO profile (simpleperf inject's text format) to OUT.
    #[arg(long, value_name = "OUT")]
    pub autofdo: Option<PathBuf>,
    /// Write a flame graph (SVG) of the executed instructions, stacks from
    /// the calls and returns in the trace.
    #[arg(long, value_name = "OUT.svg")]
    pub flamegraph: Option<PathBuf>,
    /// Write the folded stacks behind --flamegraph (one `stack count` line each).
    #[arg(long, value_name = "OUT")]
    pub folded: Option<PathBuf>,
    /// Write line coverage as an lcov tracefile (for genhtml).
    #[arg(long, value_name = "OUT")]
    pub lcov: Option<PathBuf>,
    /// Print executed instructions per function (ELF symbols).
    #[arg(long)]
    pub functions: bool,
    /// Decode threads (0: one per core, serial when all but the largest
    /// trace block hold under 64 KB; 1: serial). The output is the same whatever the count.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
}

/// Prints branch samples as perf script does.
struct BranchPrinter<W: Write> {
    w: W,
    err: Option<std::io::Error>,
}

impl<W: Write> perf::decode::SampleSink for BranchPrinter<W> {
    fn branch(&mut self, b: &perf::decode::BranchSample) {
        if self.err.is_none() {
            if let Err(e) = writeln!(self.w, " {:>16x} => {:>16x}", b.from, b.to) {
                self.err = Some(e);
            }
        }
    }
}

/// The address spaces of the recording, binaries looked for where the
/// options say.
fn spaces_for(pd: &PerfData, args: &PerfArgs) -> perf::spaces::Spaces {
    let mut s = perf::spaces::Spaces::with_vmlinux(pd, args.symfs.as_deref(), args.vmlinux.as_deref());
    s.set_symdirs(&args.symdir);
    s
}

fn block_mode(s: &str) -> Result<BlockMode, String> {
    match s {
        "auto" => Ok(BlockMode::Auto),
        "whole" => Ok(BlockMode::Whole),
        "aux" => Ok(BlockMode::ByAux),
        _ => Err(format!("--blocks: unknown mode '{}' (auto, whole, aux)", s)),
    }
}

/// Decode every block, queue after queue, and write its elements where
/// the options say.
fn write_elements(pd: &PerfData, meta: &perf::CsMeta, mode: BlockMode, args: &PerfArgs, warn: &dyn Fn(Vec<String>)) -> Result<(), PerfError> {
    let format = match args.format {
        Some(ElementFormat::Json) => opencsd_c_api::api::TextFormat::Json,
        _ => opencsd_c_api::api::TextFormat::Lister,
    };
    let w: Box<dyn Write> = match &args.output {
        Some(p) => Box::new(std::fs::File::create(p).map_err(|e| PerfError::Io(format!("{}: cannot create: {}", p.display(), e)))?),
        None => Box::new(std::io::stdout().lock()),
    };
    let text = Rc::new(RefCell::new(perf::elements::ElementText::new(format, w)));
    let spaces = spaces_for(pd, args);
    let (spaces, ws) = perf::decode::decode_timeless(pd, meta, mode, spaces, text.clone(), 1)?;
    warn(ws);
    std::mem::forget(spaces);
    let mut t = text.borrow_mut();
    t.finish().map_err(|e| PerfError::Io(e.to_string()))?;
    if t.empty_blocks > 0 && mode == BlockMode::Auto {
        // (perf, whose way of cutting the trace `auto` follows, decodes
        // nothing there either: often unformatted trace taken as formatted)
        warn(vec![format!(
            "warning: {} of {} AUX block(s) decoded to no element; if the trace is not frame formatted (TRBE, or recorded by simpleperf), try --blocks aux",
            t.empty_blocks, t.blocks
        )]);
    }
    Ok(())
}

/// Run the subcommand: 0 on success, 2 on an error (bad or missing input).
pub fn run(args: &PerfArgs) -> u8 {
    match run_inner(args) {
        Ok(()) => 0,
        // output closed early (`| head`): not an error
        Err(PerfError::Io(m)) if m.contains("Broken pipe") => 0,
        Err(e) => {
            // (an error reading the file names it already)
            let path = if args.file.as_os_str() == "-" { "standard input".to_string() } else { args.file.display().to_string() };
            let msg = e.to_string();
            if msg.starts_with(&path) {
                eprintln!("ocsd perf: {}", msg);
            } else {
                eprintln!("ocsd perf: {}: {}", path, msg);
            }
            2
        }
    }
}

fn run_inner(args: &PerfArgs) -> Result<(), PerfError> {
    let mode = block_mode(&args.blocks).map_err(PerfError::Io)?;
    let style = match args.dump_text.as_str() {
        "1.3" => TextStyle::V1_3,
        "1.8" => TextStyle::V1_8,
        s => return Err(PerfError::Io(format!("--dump-text: unknown version '{}' (1.3, 1.8)", s))),
    };
    let pd = if args.file.as_os_str() == "-" {
        // a stream on standard input (perf record -o - | ocsd perf -)
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes).map_err(|e| PerfError::Io(format!("standard input: {}", e)))?;
        PerfData::from_bytes(bytes)?
    } else {
        PerfData::open(&args.file)?
    };
    let meta = pd.cs_meta()?;
    pd.require_trace()?;
    if args.dump {
        let stdout = std::io::stdout();
        let mut w = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
        perf::dump::dump(&pd, &meta, mode, style, &mut w)?;
        w.flush().map_err(|e| PerfError::Io(e.to_string()))?;
    }
    // the warnings in one write (stderr is not buffered)
    let warn = |ws: Vec<String>| {
        if !ws.is_empty() {
            let mut all = ws.join("\n");
            all.push('\n');
            let _ = std::io::stderr().lock().write_all(all.as_bytes());
        }
    };
    if args.branches {
        let spaces = spaces_for(&pd, args);
        let stdout = std::io::stdout();
        let p = Rc::new(RefCell::new(BranchPrinter { w: std::io::BufWriter::with_capacity(1 << 16, stdout.lock()), err: None }));
        warn(perf::decode::decode(&pd, &meta, mode, spaces, p.clone(), args.threads)?.1);
        let mut p = p.borrow_mut();
        if let Some(e) = p.err.take() {
            return Err(PerfError::Io(e.to_string()));
        }
        p.w.flush().map_err(|e| PerfError::Io(e.to_string()))?;
    }
    if let Some(out) = &args.autofdo {
        // simpleperf decodes each AUX record's data, format from its flags
        let spaces = spaces_for(&pd, args);
        let a = Rc::new(RefCell::new(perf::autofdo::AutoFdo::default()));
        let mut spaces = perf::decode::decode_timeless(&pd, &meta, BlockMode::ByAux, spaces, a.clone(), args.threads)?;
        warn(std::mem::take(&mut spaces.1));
        a.borrow_mut().finish(&mut spaces.0);
        let mut f = std::io::BufWriter::new(std::fs::File::create(out).map_err(|e| PerfError::Io(format!("{}: {}", out.display(), e)))?);
        a.borrow().write(&spaces.0, &mut f).and_then(|_| f.flush()).map_err(|e| PerfError::Io(format!("{}: {}", out.display(), e)))?;
        // the process ends soon: freeing the address spaces and the counts
        // piece by piece would only cost time
        std::mem::forget(spaces.0);
        std::mem::forget(a);
    }
    let outs = ProfileOuts { functions: args.functions, folded: args.folded.as_ref(), flamegraph: args.flamegraph.as_ref(), lcov: args.lcov.as_ref() };
    // the elements: asked for, or nothing else was
    if args.format.is_some() || args.output.is_some() || !(args.dump || args.branches || args.autofdo.is_some() || outs.any()) {
        write_elements(&pd, &meta, mode, args, &warn)?;
    }
    if outs.any() {
        let spaces = spaces_for(&pd, args);
        let prof = Rc::new(RefCell::new(perf::profile::Profile::default()));
        let (mut spaces, ws) = perf::decode::decode(&pd, &meta, mode, spaces, prof.clone(), args.threads)?;
        warn(ws);
        let prof = prof.borrow();
        let title = format!("{} (instructions)", args.file.display());
        write_profiles(&prof, &mut spaces, &outs, &title).map_err(|e| match e {
            ProfileError::Io(m) => PerfError::Io(m),
            ProfileError::Empty(m) => PerfError::Decode(format!("{m} (are the traced binaries available? see --symfs)")),
        })?;
    }
    // as above: the recording's records are not freed one by one
    std::mem::forget(pd);
    Ok(())
}
