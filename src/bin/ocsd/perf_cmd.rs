//! `ocsd perf`: placeholder until the perf.data reader lands (this file is
//! replaced by the perf subcommand's own).

use std::process::ExitCode;

#[derive(clap::Args, Debug, Clone)]
pub struct PerfArgs {
    /// The perf.data file.
    pub file: std::path::PathBuf,
}

pub fn run(args: &PerfArgs) -> ExitCode {
    eprintln!("ocsd perf: {}: perf.data decoding is not available in this build", args.file.display());
    ExitCode::from(2)
}
