//! `ocsd`: decode CoreSight trace from a snapshot, or from a raw trace dump
//! with the trace configuration in a small TOML file; print the elements
//! as OpenCSD's text, JSON lines or Tarmac; compare with a reference
//! execution trace; decode perf.data recordings.
//!
//! A thin layer over the library's Rust API (`opencsd_c_api::api`).
//!
//! The process starts at a C `main` of its own (`no_main`), without the
//! Rust runtime's start-up: that start-up reads `/proc/self/maps` (through
//! `pthread_getattr_np`) and sets up an alternate signal stack for its
//! stack-overflow message: about 30 us of the 2-3 ms `ocsd perf` takes on
//! the shared recordings (85 us in a minimal static program), measured
//! under a hypervisor.
//! What it does that matters here is done in [`main`]: SIGPIPE ignored (a
//! closed pipe is an error the commands report), standard descriptors
//! opened if closed, panics kept from unwinding out of `main`, and the
//! standard output flushed at exit (`std::process::exit`).

#![cfg_attr(not(test), no_main)]

mod config_file;
mod decode;
mod perf_cmd;
mod profiles;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(name = "ocsd", version, about = "CoreSight trace decoder (OpenCSD-compatible)", propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Decode trace to text, JSON lines or Tarmac.
    Decode(DecodeArgs),
    /// Check decoded instructions against a reference execution trace (Tarmac).
    Compare(CompareArgs),
    /// Decode the CoreSight trace of a perf.data recording.
    Perf(perf_cmd::PerfArgs),
}

/// Where the trace and its configuration come from, and the memory images.
/// (One of --snapshot and --trace is required: the usage error names both.)
#[derive(Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["snapshot", "trace"])))]
pub struct InputArgs {
    /// A snapshot directory (snapshot.ini, device .ini files, trace and memory dumps).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["trace", "config"])]
    pub snapshot: Option<std::path::PathBuf>,
    /// With --snapshot: the trace buffer to decode (default: the first listed).
    #[arg(long, value_name = "NAME", requires = "snapshot")]
    pub buffer: Option<String>,
    /// A raw trace file (ETB/ETR/TPIU dump, or one source's byte stream).
    #[arg(long, value_name = "FILE", requires = "config")]
    pub trace: Option<std::path::PathBuf>,
    /// The trace configuration for --trace: a TOML file (see the README).
    #[arg(long, value_name = "FILE", requires = "trace")]
    pub config: Option<std::path::PathBuf>,
    /// The trace file is a DSTREAM probe's capture: drop the 8-byte footer
    /// after every 504 bytes of trace (trc_pkt_lister's -dstream_format;
    /// snapshot buffers of format dstream_coresight usually need it).
    #[arg(long)]
    pub dstream: bool,
    /// An ELF file as memory: its executable segments at their link
    /// addresses, or moved so the first starts at ADDR; optional :SPACE
    /// (EL1N, EL2, S, N, ...) to map it in one address space only;
    /// ,ctx=N and/or ,vmid=N to read it only while the trace gives that
    /// context ID / VMID (a process image; several may share addresses).
    #[arg(long = "elf", value_name = "FILE[@ADDR][:SPACE][,ctx=N][,vmid=N]")]
    pub elfs: Vec<String>,
    /// A raw memory dump mapped at ADDR (optional :SPACE, ,ctx=N, ,vmid=N as for --elf).
    #[arg(long = "dump", value_name = "FILE@ADDR[:SPACE][,ctx=N][,vmid=N]")]
    pub dumps: Vec<String>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// `Idx:..; ID:..; OCSD_GEN_TRC_ELEM_...` lines as trc_pkt_lister -decode_only prints them.
    Text,
    /// One JSON object per element and line.
    Json,
    /// Tarmac instruction lines (IT/IS), with disassembly.
    Tarmac,
}

#[derive(Args, Debug, Clone)]
pub struct DecodeArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Tarmac: no disassembly.
    #[arg(long)]
    pub no_disasm: bool,
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Print a summary to standard error: bytes, packets, elements by kind,
    /// instructions, errors, throughput.
    #[arg(long)]
    pub stats: bool,
    /// Print the decoders' messages (bad packets, lost sync, ...) on standard error.
    #[arg(short, long)]
    pub verbose: bool,
    /// Decode on N threads: across trace IDs, and within an ETMv4 / ETE
    /// trace ID from its sync points; the output is that of the serial
    /// decode. Text and JSON output and the profiles (the samples taken
    /// on the calling thread while the others decode); serial with
    /// --format tarmac, --stats, or memory from callbacks. 0: serial.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub jobs: usize,
    /// Print executed instructions per function (ELF symbols of the --elf
    /// files; a dump's code counts under its file name) instead of the
    /// elements.
    #[arg(long)]
    pub functions: bool,
    /// Write the folded stacks behind --flamegraph (one `stack count` line
    /// each) to OUT.
    #[arg(long, value_name = "OUT")]
    pub folded: Option<std::path::PathBuf>,
    /// Write a flame graph (SVG) of the executed instructions, stacks from
    /// the calls and returns in the trace, instead of the elements.
    #[arg(long, value_name = "OUT.svg")]
    pub flamegraph: Option<std::path::PathBuf>,
    /// Write line coverage as an lcov tracefile (DWARF line tables of the
    /// --elf files), instead of the elements.
    #[arg(long, value_name = "OUT")]
    pub lcov: Option<std::path::PathBuf>,
    /// Write an AutoFDO profile (simpleperf inject's text format, per
    /// --elf file or dump) to OUT, instead of the elements.
    #[arg(long, value_name = "OUT")]
    pub autofdo: Option<std::path::PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The reference execution trace (Tarmac, as Arm's models write it).
    #[arg(long, value_name = "FILE")]
    pub reference: std::path::PathBuf,
}

/// `ocsd perf ...` alone: the same command line interface with only the
/// perf subcommand built. clap builds every subcommand's arguments before
/// it parses, and `ocsd perf --autofdo` runs for a few milliseconds, so
/// that building is a visible share of it. Same name, version and
/// subcommand as [`Cli`]: the same help, version and error texts (a test
/// compares `ocsd perf --help` with `ocsd help perf`).
#[derive(Parser)]
#[command(name = "ocsd", version, about = "CoreSight trace decoder (OpenCSD-compatible)", propagate_version = true)]
struct PerfCli {
    #[command(subcommand)]
    cmd: PerfOnly,
}

#[derive(Subcommand)]
enum PerfOnly {
    /// Decode the CoreSight trace of a perf.data recording.
    Perf(perf_cmd::PerfArgs),
}

/// The command: its exit status.
fn run() -> u8 {
    if std::env::args_os().nth(1).is_some_and(|a| a == "perf") {
        let PerfCli { cmd: PerfOnly::Perf(a) } = PerfCli::parse();
        return perf_cmd::run(&a);
    }
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Decode(a) => decode::run_decode(&a),
        Cmd::Compare(a) => decode::run_compare(&a),
        Cmd::Perf(a) => perf_cmd::run(&a),
    }
}

/// Standard input, output and error open: a closed one is opened on
/// `/dev/null` (as the Rust runtime does), so that no file the command
/// opens takes its number.
fn fill_std_fds() {
    use std::os::fd::{AsRawFd, IntoRawFd};
    while let Ok(f) = std::fs::File::options().read(true).write(true).open("/dev/null") {
        if f.as_raw_fd() > 2 {
            break;
        }
        // kept open as the standard descriptor it filled
        let _ = f.into_raw_fd();
    }
}

/// Under the unit-test harness (which brings its own entry point), the
/// command as a Rust `main`, so that everything it uses is used.
#[cfg(test)]
fn main() {
    fill_std_fds();
    std::process::exit(i32::from(run()))
}

/// The process's entry point (see the module comment); the arguments are
/// read through `std::env`.
#[cfg(not(test))]
#[no_mangle]
pub extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    // SAFETY: `signal` is given a valid signal number and the SIG_IGN
    // disposition (no handler code, no memory); called before any other
    // thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    fill_std_fds();
    // a panic has printed its message: exit as the Rust runtime would
    let code = std::panic::catch_unwind(run).map_or(101, i32::from);
    // flushes the standard output, unlike a return from a C main
    std::process::exit(code)
}
