//! Text output shared by the C API and `trc_pkt_lister`: generic trace elements and raw deformatter frames, byte-identical to OpenCSD 1.8.0.

pub mod gen_elem;
pub mod line;
pub mod num;
pub mod raw_frame;

#[cfg(test)]
mod tests;
