//! Text output: generic elements and raw frames.

pub mod gen_elem;
pub mod raw_frame;
