//! Stand-in for `ocsd perf` until the `ocsd` command lands: the same
//! subcommand code (src/bin/ocsd/perf_cmd.rs) behind its own parser.
#[path = "../src/bin/ocsd/perf_cmd.rs"]
mod perf_cmd;

use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: perf_cmd::PerfArgs,
}

fn main() -> std::process::ExitCode {
    perf_cmd::run(&Cli::parse().args)
}
