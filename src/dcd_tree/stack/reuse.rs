//! Parallel decode's reuse of decode stacks and of their decoders' caches
//! from segment to segment (see [`crate::dcd_tree::parallel`]).

use super::Stack;
use crate::abi::*;
use crate::common::{PacketDecoder, PacketProcessor};

impl<P: PacketProcessor, D: PacketDecoder<Packet = P::Packet>> Stack<P, D> {
    /// The packet decoder (none on a packet-processing-only stack).
    pub(crate) fn decoder_mut(&mut self) -> Option<&mut D> {
        self.dec.as_mut()
    }

    /// Put the stack in the state of a new stack of its configuration,
    /// `renew_proc` and `renew_dec` doing so for the processor and the
    /// decoder. False (and nothing done) when a packet sink or monitor is
    /// attached: observers may keep state of their own.
    ///
    /// The struct is taken apart without `..`: a field added to the stack
    /// stops the build here until it is classed.
    pub(crate) fn renew(&mut self, renew_proc: impl FnOnce(&mut P), renew_dec: impl FnOnce(&mut D)) -> bool {
        let Stack {
            name: _,
            protocol: _,
            cs_id: _,
            proc_,
            dec,
            queue,
            monitor,
            sink,
            proc_flags: _,
            stats,
            pending_resp,
            numbered: _,
            dec_suspended,
        } = self;
        if monitor.is_some() || sink.is_some() {
            return false;
        }
        renew_proc(proc_);
        // (a renewed processor counts into the stack's block again)
        if proc_.keeps_stats() {
            proc_.attach_stats(stats);
        }
        if let Some(d) = dec.as_mut() {
            renew_dec(d);
        }
        queue.clear();
        stats.reset();
        *pending_resp = OCSD_RESP_CONT;
        *dec_suspended = false;
        true
    }
}
