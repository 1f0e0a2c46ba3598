//! Whether two decoders are in the same state, for parallel decode's
//! stitching (see [`crate::dcd_tree::parallel`]).
//!
//! The struct is taken apart without `..`: a field added to the decoder
//! stops the build here until it is classed as state or not.

use super::EtmV4IPktDecoder;

impl EtmV4IPktDecoder {
    /// Whether `o` (same configuration) is in this decoder's state:
    /// everything that can change later output. Left out: the
    /// configuration and what is derived from it (equal on both sides of a
    /// stitch), the name, the memory window and the decoded-block cache
    /// (they hold bytes of read-only memory: they change how fast, not
    /// what, the decoder decodes), whether a context waits to be told to
    /// the memory (it only renews callback page tokens), and reused
    /// scratch storage. False while a packet waits for the client
    /// (`cont_pkt`) or elements wait to be sent, on either side: no stitch
    /// there.
    pub(crate) fn same_state(&self, o: &EtmV4IPktDecoder) -> bool {
        let EtmV4IPktDecoder {
            cfg: _,
            cont_pkt,
            name: _,
            trace_id: _,
            op_flags,
            max_spec_depth: _,
            is_ete: _,
            ete_has_ts_marker: _,
            v7m_eret_p0: _,
            cfg_refused: _,
            v8m_func_ret: _,
            comm_trans_p0: _,
            enabled_cci: _,
            m_profile: _,
            range_limit: _,
            env_aa64_bad_opcode: _,
            aa64_chk: _,
            aa64_shared: _,
            state,
            unsync_info,
            index_curr_pkt,
            stack,
            res,
            curr_spec_depth,
            need_ctxt,
            need_addr,
            elem_pending_addr,
            prev_overflow,
            is_secure,
            is_64bit,
            last_is,
            ete_first_ts_marker,
            cc_threshold,
            instr,
            ret_stack,
            tinfo_wait_addr,
            next_range_check,
            out: elems,
            context_staged: _,
            mem: _,
            blocks: _,
            cancel_keep: _,
        } = self;
        if cont_pkt.is_some() || elems.num_to_send() > 0 || o.cont_pkt.is_some() || o.out.num_to_send() > 0 {
            return false;
        }
        // the cheap and most often different first
        *index_curr_pkt == o.index_curr_pkt
            && *state == o.state
            && *op_flags == o.op_flags
            && *unsync_info == o.unsync_info
            && *curr_spec_depth == o.curr_spec_depth
            && (*need_ctxt, *need_addr, *elem_pending_addr, *prev_overflow, *is_secure, *is_64bit)
                == (o.need_ctxt, o.need_addr, o.elem_pending_addr, o.prev_overflow, o.is_secure, o.is_64bit)
            && (*last_is, *ete_first_ts_marker, *cc_threshold, *tinfo_wait_addr, *next_range_check)
                == (o.last_is, o.ete_first_ts_marker, o.cc_threshold, o.tinfo_wait_addr, o.next_range_check)
            && res == &o.res
            && instr == &o.instr
            && elems.persist.isa == o.out.persist.isa
            && elems.persist.context == o.out.persist.context
            && stack == &o.stack
            && ret_stack == &o.ret_stack
    }
}
