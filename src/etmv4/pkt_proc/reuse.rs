//! A packet processor used again for another stretch of trace, for
//! parallel decode's reuse of decode stacks from segment to segment (see
//! [`crate::dcd_tree::parallel`]).

use super::EtmV4IPktProc;

impl EtmV4IPktProc {
    /// Put the processor in the state of a new processor of its
    /// configuration (with its name and operation flags).
    pub(crate) fn renew(&mut self) {
        let mut fresh = EtmV4IPktProc::new(0, self.cfg);
        std::mem::swap(&mut fresh.name, &mut self.name);
        fresh.op_flags = self.op_flags;
        *self = fresh;
    }
}
