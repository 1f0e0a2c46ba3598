//! A CoreSight trace decoder with OpenCSD's C API.
//!
//! The crate mirrors the decode pipeline:
//! - [`deformatter`]: CoreSight frame deformatter (trace ID demultiplexing);
//! - [`config`]: protocol configurations from ID / control register values;
//! - one module per protocol ([`etmv4`], [`ete`], [`etmv3`], [`ptm`],
//!   [`stm`], [`itm`]), each with its packet types, packet processor,
//!   packet decoder and packet text;
//! - [`instr`]: A64 / A32 / T32 instruction decode for instruction following;
//! - [`mem`]: target memory access (files, buffers, callbacks, caching);
//! - [`dcd_tree`]: the decode tree joining it all;
//! - [`printers`]: generic element and raw frame text;
//! - [`capi`]: the thin C API layer (`ocsd_*` functions);
//! - [`snapshot`]: the snapshot reader used by `trc_pkt_lister`;
//! - [`tarmac`]: Tarmac output of the decoded instructions, and comparison
//!   with a reference execution trace.
//!
//! Unsafe code is confined to the C ABI types, the C API layer and the
//! element printer's extended-data read: the pipeline modules forbid it,
//! and every unsafe operation needs its own `unsafe` block.

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
pub mod capi;
