//! ETMv4 in a decode tree behind the frame deformatter: data path rules
//! that OpenCSD applies between the deformatter and the packet processor.

use super::*;
use crate::common::{ErrorLog, OcsdError};
use crate::dcd_tree::DecodeTree;

struct NoLog;
impl ErrorLog for NoLog {
    fn log_error(&mut self, _: &str, _: &OcsdError) {}
    fn log_message(&mut self, _: &str, _: ocsd_err_severity_t, _: &str) {}
}

fn tree() -> DecodeTree {
    let mut t = DecodeTree::new(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN, Box::new(NoLog)).unwrap();
    let cfg = ocsd_etmv4_cfg {
        reg_idr0: 0x28000EA1,
        reg_idr1: 0x4100F403,
        reg_idr2: 0x00000488,
        reg_configr: 0xC1,
        reg_traceidr: 0x10,
        arch_ver: ARCH_V8,
        core_prof: profile_CortexA,
        ..Default::default()
    };
    t.add_decoder(create_etmv4i(&cfg, true)).unwrap();
    t
}

/// Frame 1: ID 0x10 and 14 bytes of A-sync for it. Frame 2: ID 0x20 with
/// data, then near the end ID 0x10 whose flag bit gives the following byte
/// to the previous ID (0x20), then (last byte) ID 0x30 for the next frame:
/// ID 0x10 is switched to but gets no data. `feed_10` instead clears that
/// flag bit so 0x10 gets the byte.
fn frames(feed_10: bool) -> Vec<u8> {
    let mut f = vec![0x21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x00, 0x00, 0x00];
    f.extend_from_slice(&[0x41, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x21, 0x00, 0x61]);
    f.push(if feed_10 { 0x00 } else { 0x40 });
    f
}

#[test]
fn empty_block_for_attached_id_stops_data_path() {
    let mut t = tree();
    let (r, used) = t.data_in(OCSD_OP_DATA, 0, &frames(false));
    assert_eq!(r, OCSD_RESP_FATAL_INVALID_PARAM);
    // the whole frame holding the empty block was taken, as in OpenCSD
    assert_eq!(used, 32);

    let mut t = tree();
    let (r, used) = t.data_in(OCSD_OP_DATA, 0, &frames(true));
    assert_eq!(r, OCSD_RESP_CONT);
    assert_eq!(used, 32);
}
