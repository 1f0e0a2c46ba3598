//! Trace captured by an Arm DSTREAM probe: the file is made of 512-byte
//! blocks, each 504 bytes of trace (TPIU frames, with frame syncs) followed
//! by an 8-byte footer the probe adds. The footers are not trace: they go
//! before the deformatter sees the bytes, as OpenCSD's `trc_pkt_lister`
//! drops them with `-dstream_format` (reading 504 bytes, then skipping 8),
//! so trace indexes count trace bytes only, as in its logs.
//!
//! A snapshot names such a buffer `format=dstream_coresight`; the format
//! alone does not say whether the footers are in the file (OpenCSD's
//! lister needs the option too), so they are dropped only when asked
//! (`ocsd decode --dstream`).

use std::io::{ErrorKind, Read};

/// Bytes of trace in each block.
pub const DSTREAM_DATA: usize = 504;
/// Bytes of footer after them.
pub const DSTREAM_FOOTER: usize = 8;
/// A whole block.
pub const DSTREAM_BLOCK: usize = DSTREAM_DATA + DSTREAM_FOOTER;

/// The trace bytes of a DSTREAM capture held in memory: the first 504
/// bytes of each 512-byte block (a last, shorter block: up to 504 bytes of
/// it).
pub fn strip_dstream_footers(capture: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(capture.len() / DSTREAM_BLOCK * DSTREAM_DATA + DSTREAM_DATA);
    for block in capture.chunks(DSTREAM_BLOCK) {
        out.extend_from_slice(&block[..block.len().min(DSTREAM_DATA)]);
    }
    out
}

/// A reader of the trace bytes of a DSTREAM capture read from `inner`
/// (see [`strip_dstream_footers`]).
pub struct DstreamReader<R> {
    inner: R,
    /// Trace bytes left in the current block before its footer.
    left: usize,
}

impl<R: Read> DstreamReader<R> {
    pub fn new(inner: R) -> Self {
        DstreamReader { inner, left: DSTREAM_DATA }
    }

    /// Read and drop a footer (fewer bytes at the end of the capture).
    fn skip_footer(&mut self) -> std::io::Result<()> {
        let mut footer = [0u8; DSTREAM_FOOTER];
        let mut got = 0;
        while got < DSTREAM_FOOTER {
            match self.inner.read(&mut footer[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl<R: Read> Read for DstreamReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            self.skip_footer()?;
            self.left = DSTREAM_DATA;
        }
        let want = buf.len().min(self.left);
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capture of `blocks` whole blocks and `tail` more bytes: trace byte
    /// k is k as u8 (mod 251, so a footer's 0xEE bytes never look like
    /// trace), footers 0xEE.
    fn capture(blocks: usize, tail: usize) -> (Vec<u8>, Vec<u8>) {
        let (mut cap, mut trace) = (Vec::new(), Vec::new());
        let mut k = 0usize;
        let mut data = |n: usize, cap: &mut Vec<u8>, trace: &mut Vec<u8>| {
            for _ in 0..n {
                let b = (k % 251) as u8;
                cap.push(b);
                trace.push(b);
                k += 1;
            }
        };
        for _ in 0..blocks {
            data(DSTREAM_DATA, &mut cap, &mut trace);
            cap.extend([0xEE; DSTREAM_FOOTER]);
        }
        data(tail.min(DSTREAM_DATA), &mut cap, &mut trace);
        cap.extend(std::iter::repeat_n(0xEE, tail.saturating_sub(DSTREAM_DATA)));
        (cap, trace)
    }

    /// Reads in pieces of `step` bytes.
    fn read_all(r: &mut impl Read, step: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; step];
        loop {
            let n = r.read(&mut buf).unwrap();
            if n == 0 {
                return out;
            }
            out.extend_from_slice(&buf[..n]);
        }
    }

    #[test]
    fn footers_are_dropped_from_every_block() {
        for (blocks, tail) in [(0, 0), (0, 100), (1, 0), (3, 0), (3, 1), (2, 504), (2, 507), (5, 511)] {
            let (cap, trace) = capture(blocks, tail);
            assert_eq!(strip_dstream_footers(&cap), trace, "{blocks} blocks + {tail}");
            for step in [1, 7, 504, 512, 4096] {
                assert_eq!(read_all(&mut DstreamReader::new(&cap[..]), step), trace, "{blocks} blocks + {tail}, reads of {step}");
            }
        }
    }

    /// A reader giving a few bytes at a time, as a pipe may.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.0.len()).min(3);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn short_reads_of_the_capture_keep_the_blocks_in_step() {
        let (cap, trace) = capture(4, 300);
        assert_eq!(read_all(&mut DstreamReader::new(Trickle(&cap)), 1000), trace);
    }
}
