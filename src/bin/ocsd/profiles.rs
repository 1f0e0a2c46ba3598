//! Writing the profiles for a person (`--functions`, `--folded`,
//! `--flamegraph`, `--lcov`), shared by `ocsd perf` (a recording) and
//! `ocsd decode` (a snapshot, or raw trace with ELF files and dumps).

use std::io::Write;
use std::path::{Path, PathBuf};

use opencsd_c_api::perf::profile::Profile;
use opencsd_c_api::perf::spaces::Spaces;

/// The profiles asked for.
pub struct ProfileOuts<'a> {
    /// The per-function table, on standard output.
    pub functions: bool,
    pub folded: Option<&'a PathBuf>,
    pub flamegraph: Option<&'a PathBuf>,
    pub lcov: Option<&'a PathBuf>,
}

impl ProfileOuts<'_> {
    pub fn any(&self) -> bool {
        self.functions || self.folded.is_some() || self.flamegraph.is_some() || self.lcov.is_some()
    }
}

/// Why a profile was not written.
pub enum ProfileError {
    /// A file could not be written (its name and the error).
    Io(String),
    /// Nothing to draw the flame graph from.
    Empty(String),
}

/// Write the profiles of `prof` (`title` heads the flame graph).
pub fn write_profiles(prof: &Profile, spaces: &mut Spaces, outs: &ProfileOuts, title: &str) -> Result<(), ProfileError> {
    let io = |p: &Path, e: std::io::Error| ProfileError::Io(format!("{}: {}", p.display(), e));
    let create = |p: &Path| std::fs::File::create(p).map(std::io::BufWriter::new).map_err(|e| io(p, e));
    if outs.functions {
        let stdout = std::io::stdout();
        let mut w = stdout.lock();
        prof.write_functions(&mut w).map_err(|e| ProfileError::Io(e.to_string()))?;
    }
    if let Some(p) = outs.folded {
        let mut f = create(p)?;
        for l in prof.folded_lines() {
            writeln!(f, "{}", l).map_err(|e| io(p, e))?;
        }
        f.flush().map_err(|e| io(p, e))?;
    }
    if let Some(p) = outs.flamegraph {
        let mut f = create(p)?;
        prof.write_flamegraph(title, &mut f).map_err(|e| ProfileError::Empty(format!("flame graph: {}", e)))?;
        f.flush().map_err(|e| io(p, e))?;
    }
    if let Some(p) = outs.lcov {
        let mut f = create(p)?;
        let n = prof.write_lcov(spaces, &mut f).map_err(|e| io(p, e))?;
        f.flush().map_err(|e| io(p, e))?;
        if n == 0 {
            eprintln!("warning: no source lines found (no DWARF line tables in the decoded binaries)");
        }
    }
    Ok(())
}
