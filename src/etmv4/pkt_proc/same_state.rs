//! Whether two packet processors are in the same state, for parallel
//! decode's stitching (see [`crate::dcd_tree::parallel`]).
//!
//! The struct is taken apart without `..`: a field added to the processor
//! stops the build here until it is classed as state or not.

use super::{EtmV4IPktProc, ProcState};

impl EtmV4IPktProc {
    /// Whether `o` (same configuration) is in this processor's state:
    /// everything that can change later output, the packet being built and
    /// the values that carry from packet to packet, the parse position and
    /// sync state. Left out: the configuration (equal for both sides of a
    /// stitch), the header table made from it, the name, the atom-run hint,
    /// statistics, and what is dead (below).
    pub(crate) fn same_state(&self, o: &EtmV4IPktProc) -> bool {
        let EtmV4IPktProc {
            cfg: _,
            name: _,
            op_flags,
            table: _,
            pkt,
            addr_stack,
            raw,
            state,
            handler,
            packet_index,
            block_index,
            processed,
            // a hint of how fast to go, not of what to output
            atom_run_refusals: _,
            is_sync,
            first_trace_info,
            sent_notsync_packet,
            dump_unsynced_bytes,
            update_on_unsync_packet_index,
            tinfo_sect_flags,
            tinfo_ctrl_bytes,
            ts_done,
            ccount_done,
            ts_bytes,
            excep_size,
            count_done,
            commit_done,
            has_count,
            f1p1_done,
            f1p2_done,
            f1_has_p2,
            vmid_bytes,
            ctxtid_bytes,
            addr_is,
            addr_bytes,
            addr_64bit,
            ctxt_info_done,
            addr_done,
            q_type,
            has_addr,
            addr_short,
            addr_match,
            qe,
            stats: _,
        } = self;
        let same = *packet_index == o.packet_index
            && *block_index == o.block_index
            && *processed == o.processed
            && *state == o.state
            && *handler == o.handler
            && *op_flags == o.op_flags
            && (*is_sync, *first_trace_info) == (o.is_sync, o.first_trace_info)
            && raw == &o.raw
            && addr_stack == &o.addr_stack;
        if !same {
            return false;
        }
        // Between packets (nothing of the next one read yet; raw and state
        // are equal, so both are or neither is) what only one packet uses
        // is dead: every packet handler sets its parse state on the
        // packet's first bytes, the exception fields are all set when an
        // exception packet completes, before they are read, and the
        // exact-match index is set by each packet that shows it (address
        // exact match, Q with a match) as it is parsed. (Compared, the
        // index an exact-match packet before the stitch left kept a
        // segment's states from meeting the next one's for hundreds of
        // bytes: about 2,000 chunks decoded twice more on
        // bugfix-exact-match.)
        let between = raw.is_empty() && *state == ProcState::ProcHdr;
        let (mut p, mut q) = (*pkt, o.pkt);
        if between {
            for x in [&mut p, &mut q] {
                x.exception_info = Default::default();
                x.addr_exact_match_idx = 0;
            }
        }
        if p != q {
            return false;
        }
        // once synchronised the processor never loses sync (only a reset,
        // which sets these again, unsynchronises it): what it kept for
        // dumping unsynchronised bytes is dead
        if !*is_sync
            && (*sent_notsync_packet, *dump_unsynced_bytes, *update_on_unsync_packet_index)
                != (o.sent_notsync_packet, o.dump_unsynced_bytes, o.update_on_unsync_packet_index)
        {
            return false;
        }
        between
            || ((*tinfo_sect_flags, *tinfo_ctrl_bytes, *ts_done, *ccount_done, *ts_bytes, *excep_size, *count_done, *commit_done, *has_count)
                == (o.tinfo_sect_flags, o.tinfo_ctrl_bytes, o.ts_done, o.ccount_done, o.ts_bytes, o.excep_size, o.count_done, o.commit_done, o.has_count)
                && (*f1p1_done, *f1p2_done, *f1_has_p2, *vmid_bytes, *ctxtid_bytes, *addr_is, *addr_bytes, *addr_64bit, *ctxt_info_done, *addr_done)
                    == (o.f1p1_done, o.f1p2_done, o.f1_has_p2, o.vmid_bytes, o.ctxtid_bytes, o.addr_is, o.addr_bytes, o.addr_64bit, o.ctxt_info_done, o.addr_done)
                && (*q_type, *has_addr, *addr_short, *addr_match, *qe) == (o.q_type, o.has_addr, o.addr_short, o.addr_match, o.qe))
    }
}
