//! The reference data the unit tests read (`$OCSD_SHARED`, else `../shared`
//! beside the checkout, or `../../shared` from a worktree in `wt/`).

use std::path::{Path, PathBuf};

/// The reference data folder; `None`, with a line saying that `test` is
/// skipped, when it is not there.
pub(crate) fn shared_dir(test: &str) -> Option<PathBuf> {
    let found = match std::env::var_os("OCSD_SHARED") {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.join("conformance").is_dir()),
        None => ["../shared", "../../shared"].iter().map(|r| Path::new(env!("CARGO_MANIFEST_DIR")).join(r)).find(|p| p.join("conformance").is_dir()),
    };
    if found.is_none() {
        eprintln!("SKIPPED {test}: reference data not found at ../shared (set OCSD_SHARED)");
    }
    found
}
