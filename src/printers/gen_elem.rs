//! Generic trace element text (placeholder until the full printer lands).

use crate::abi::gen_elem::ocsd_generic_trace_elem;

/// Append the text OpenCSD's `OcsdTraceElement::toString` gives `elem`.
pub fn write_elem_str(elem: &ocsd_generic_trace_elem, out: &mut String) {
    out.push_str(&format!("OCSD_GEN_TRC_ELEM_{}()", elem.elem_type));
}
