//! Text of the frame deformatter's raw frame output, as OpenCSD 1.8.0's
//! `RawFramePrinter` writes it (`trc_pkt_lister -o_raw_packed /
//! -o_raw_unpacked`).
//!
//! One block per call:
//! `Frame Data; Index<index, width 7>; <kind, right-aligned>; <bytes>` where
//! the bytes are two-digit hex each followed by a space, sixteen to a line.
//! The block ends with a newline.

use std::fmt::Write;

use crate::abi::*;

/// Bytes printed on each line of frame data.
const BYTES_PER_LINE: usize = 16;

/// Append the text of one raw frame element to `out`, newline-terminated
/// (a block longer than sixteen bytes spans several lines).
///
/// `trace_id` is used for [`OCSD_FRM_ID_DATA`] only
/// ([`OCSD_BAD_CS_SRC_ID`] prints as `????`).
pub fn write_raw_frame(
    out: &mut String,
    frame_elem: ocsd_rawframe_elem_t,
    index: ocsd_trc_index_t,
    data: &[u8],
    trace_id: u8,
) {
    let _ = write!(out, "Frame Data; Index{index:7}; ");
    match frame_elem {
        OCSD_FRM_PACKED => {
            let _ = write!(out, "{:>15}", "RAW_PACKED; ");
        }
        OCSD_FRM_HSYNC => {
            let _ = write!(out, "{:>15}", "HSYNC; ");
        }
        OCSD_FRM_FSYNC => {
            let _ = write!(out, "{:>15}", "FSYNC; ");
        }
        OCSD_FRM_ID_DATA => {
            let _ = write!(out, "{:>10}", "ID_DATA[");
            if trace_id == OCSD_BAD_CS_SRC_ID {
                out.push_str("????");
            } else {
                let _ = write!(out, "0x{trace_id:02x}");
            }
            out.push_str("]; ");
        }
        _ => {
            let _ = write!(out, "{:>15}", "UNKNOWN; ");
        }
    }
    for (i, byte) in data.iter().enumerate() {
        if i > 0 && i % BYTES_PER_LINE == 0 {
            out.push('\n');
        }
        let _ = write!(out, "{byte:02x} ");
    }
    out.push('\n');
}
