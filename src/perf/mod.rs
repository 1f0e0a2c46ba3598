//! perf.data recordings of CoreSight trace, without perf.
//!
//! - [`file`](mod@file): the records of a perf.data file (AUXTRACE_INFO, AUXTRACE,
//!   AUX, MMAP/MMAP2, COMM, ITRACE_START, SWITCH), with file offsets;
//! - [`cs_meta`]: the CoreSight metadata perf saved per CPU;
//! - [`dump`]: the packet dump `perf report -D` prints;
//! - [`spaces`]: processes' address spaces and the binaries behind them;
//! - [`decode`]: instruction ranges and perf's branch samples;
//! - [`elements`]: every decoded element as text or JSON lines;
//! - [`parallel`]: the same decode, AUX blocks on several threads;
//! - [`autofdo`]: simpleperf inject's AutoFDO text profile;
//! - `counts`: the event counts behind the profiles;
//! - [`profile`]: per-function table, flame graph, lcov line coverage.
#![forbid(unsafe_code)]

pub mod autofdo;
mod counts;
pub mod cs_meta;
pub mod decode;
pub mod elements;
pub mod dump;
pub mod file;
pub mod parallel;
pub mod profile;
pub mod spaces;

pub use cs_meta::CsMeta;
pub use file::PerfData;

/// What went wrong reading or decoding a recording.
#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    #[error("{0}")]
    Io(String),
    /// Bad or unsupported content: `what` names the record or section,
    /// `offset` its file offset.
    #[error("{what} at file offset {offset:#x}: {msg}")]
    Format { what: String, offset: u64, msg: String },
    #[error("no AUX trace data in the recording ({0})")]
    NoTrace(String),
    #[error("decode: {0}")]
    Decode(String),
}

impl PerfData {
    /// The CoreSight metadata, or the error naming the record.
    pub fn cs_meta(&self) -> Result<CsMeta, PerfError> {
        match &self.auxtrace_info {
            Some((off, typ, words)) => CsMeta::parse(*off, *typ, words),
            None => Err(PerfError::NoTrace("no PERF_RECORD_AUXTRACE_INFO record: not recorded with cs_etm / cs-etm".into())),
        }
    }

    /// Fails when there is no trace to decode, saying what is there.
    pub fn require_trace(&self) -> Result<(), PerfError> {
        if self.auxtrace.is_empty() {
            let with_data = self.aux.iter().filter(|a| a.aux_size > 0).count();
            return Err(PerfError::NoTrace(format!(
                "no PERF_RECORD_AUXTRACE record; {} PERF_RECORD_AUX record(s) announce {} bytes that were not saved",
                with_data,
                self.aux.iter().map(|a| a.aux_size).sum::<u64>()
            )));
        }
        Ok(())
    }
}
