//! A CoreSight trace decoder with OpenCSD's C API, and a safe Rust API.
//!
//! # The pipeline
//!
//! ```text
//!  trace bytes ──► deformatter ──► per trace ID:  packet processor ──► packet decoder ──► generic elements
//!  (ETB/ETR/TPIU    (CoreSight      (ETMv4/ETE, ETMv3, PTM, STM, ITM)   │ follows code in       (instruction ranges,
//!   or one source)   frames → IDs)                                       ▼ target memory          PE context, exceptions,
//!                                                                   memory images             timestamps, ...)
//! ```
//!
//! Each trace source's decoder is configured from the trace unit's ID and
//! control registers ([`config`]); instruction trace decoders read the
//! executed code from memory images (ELF files, dumps, buffers, callbacks:
//! [`mem`]) to turn atoms and addresses into executed instruction ranges.
//!
//! # Where to start
//!
//! [`api`] is the front door for Rust: build a [`api::Decoder`] from
//! register values and memory images, then iterate over the decoded
//! [`api::Element`]s (typed [`api::ElementKind`]s). The C API ([`capi`],
//! OpenCSD's `ocsd_*` functions) and the commands (`trc_pkt_lister`,
//! `ocsd`) use the same core.
//!
//! Decoding a snapshot from the shared reference data (the example does
//! nothing when that data is not at `../shared` or `$OCSD_SHARED`):
//!
//! ```
//! use opencsd_c_api::api::{Decoder, ElementKind};
//! use std::path::PathBuf;
//!
//! let shared = std::env::var("OCSD_SHARED").map(PathBuf::from)
//!     .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"));
//! let snap = shared.join("conformance/snapshots/juno_r1_1");
//! if snap.join("snapshot.ini").is_file() {
//!     let mut s = Decoder::from_snapshot(&snap, None)?;
//!     let trace = std::fs::read(&s.trace_file).expect("trace buffer");
//!     let mut instructions = 0u64;
//!     for e in s.decoder.decode(&trace[..]) {
//!         if let ElementKind::InstrRange(r) = e.kind {
//!             instructions += u64::from(r.instr_count);
//!         }
//!     }
//!     assert!(instructions > 10_000);
//! } else {
//!     eprintln!("shared reference data not found: example skipped");
//! }
//! # Ok::<(), opencsd_c_api::api::Error>(())
//! ```
//!
//! # Modules
//!
//! The crate mirrors the decode pipeline:
//! - [`deformatter`]: CoreSight frame deformatter (trace ID demultiplexing);
//! - [`config`]: protocol configurations from ID / control register values;
//! - one module per protocol ([`etmv4`], [`ete`], [`etmv3`], [`ptm`],
//!   [`stm`], [`itm`]), each with its packet types, packet processor,
//!   packet decoder and packet text;
//! - [`instr`]: A64 / A32 / T32 instruction decode for instruction following;
//! - [`mem`]: target memory access (files, buffers, callbacks, caching, ELF);
//! - [`dcd_tree`]: the decode tree joining it all;
//! - [`printers`]: generic element and raw frame text;
//! - [`api`]: the safe Rust API;
//! - [`capi`]: the thin C API layer (`ocsd_*` functions);
//! - [`snapshot`]: the snapshot reader used by `trc_pkt_lister`;
//! - [`tarmac`]: Tarmac output of the decoded instructions, and comparison
//!   with a reference execution trace.
//!
//! Unsafe code is confined to the C ABI types, the C API layer and the
//! element printer's extended-data read: the pipeline modules and the Rust
//! API forbid it, and every unsafe operation needs its own `unsafe` block.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod abi;
pub mod common;
pub mod deformatter;
pub mod config;
pub mod api;
pub mod mem;
pub mod instr;
pub mod etmv4;
pub mod ete;
pub mod etmv3;
pub mod ptm;
pub mod stm;
pub mod itm;
pub mod dcd_tree;
pub mod printers;
pub mod snapshot;
pub mod tarmac;
pub mod perf;
pub mod capi;
#[cfg(test)]
mod test_shared;
