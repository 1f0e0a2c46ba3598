//! Access to a stack's decoder for parallel decode's reuse of decoder
//! caches from segment to segment (see [`crate::dcd_tree::parallel`]).

use super::Stack;
use crate::common::{PacketDecoder, PacketProcessor};

impl<P: PacketProcessor, D: PacketDecoder<Packet = P::Packet>> Stack<P, D> {
    /// The packet decoder (none on a packet-processing-only stack).
    pub(crate) fn decoder_mut(&mut self) -> Option<&mut D> {
        self.dec.as_mut()
    }
}
