//! Raw frame text (placeholder until the full printer lands).

use crate::abi::*;

/// Append the raw frame printer's text for one deformatter output.
pub fn write_raw_frame(out: &mut String, frame_elem: ocsd_rawframe_elem_t, index: ocsd_trc_index_t, data: &[u8], trace_id: u8) {
    out.push_str(&format!("Frame Data; Index {:6}; {} {:x}; {:?}\n", index, frame_elem, trace_id, data));
}
