//! Views of target memory handed to the decoders with a read
//! ([`crate::common::MemRun`]): the bytes of one buffer, or of a memory
//! image file that is read in chunks the first time a view's reader needs
//! them ([`ChunkedBytes`]).
//!
//! A decoder keeps a view of a whole file image, as it would of one
//! buffer: code jumping around the image costs no memory call, and only
//! the chunks the decode runs through are ever read (OpenCSD reads its
//! file accessors on demand too).

use std::sync::{Arc, OnceLock};

use crate::abi::*;

/// Reads `out.len()` bytes of a file at a position: how a
/// [`ChunkedBytes`] gets its chunks.
pub type ChunkReader = Box<dyn Fn(usize, &mut [u8]) -> Result<(), ocsd_err_t> + Send + Sync>;

/// Bytes read in chunks of `1 << shift`, each when first used, and kept.
/// Chunks never change once read; a chunk that cannot be read (a file
/// that shrank) fails the access with the reader's error, and is tried
/// again at the next.
pub struct ChunkedBytes {
    len: usize,
    shift: u32,
    chunks: Box<[OnceLock<Box<[u8]>>]>,
    read: ChunkReader,
}

impl ChunkedBytes {
    pub fn new(len: usize, shift: u32, read: ChunkReader) -> Self {
        let n = if len == 0 { 0 } else { ((len - 1) >> shift) + 1 };
        ChunkedBytes { len, shift, chunks: (0..n).map(|_| OnceLock::new()).collect(), read }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes from `pos` (< len) to the end of its chunk.
    #[inline(always)]
    pub fn from(&self, pos: usize) -> Result<&[u8], ocsd_err_t> {
        let k = pos >> self.shift;
        let off = pos - (k << self.shift);
        let c = match self.chunks[k].get() {
            Some(c) => &c[..],
            None => self.load(k)?,
        };
        Ok(&c[off..])
    }

    #[cold]
    #[inline(never)]
    fn load(&self, k: usize) -> Result<&[u8], ocsd_err_t> {
        let start = k << self.shift;
        let mut buf = vec![0u8; (self.len - start).min(1 << self.shift)].into_boxed_slice();
        (self.read)(start, &mut buf)?;
        // read by another thread meanwhile: the same bytes
        Ok(self.chunks[k].get_or_init(|| buf))
    }

    /// Copy `[pos, pos + out.len())` (inside len).
    pub fn copy(&self, mut pos: usize, mut out: &mut [u8]) -> Result<(), ocsd_err_t> {
        while !out.is_empty() {
            let run = self.from(pos)?;
            let n = run.len().min(out.len());
            let (head, rest) = out.split_at_mut(n);
            head.copy_from_slice(&run[..n]);
            out = rest;
            pos += n;
        }
        Ok(())
    }

    /// Chunks read so far.
    pub fn chunks_read(&self) -> usize {
        self.chunks.iter().filter(|c| c.get().is_some()).count()
    }
}

/// Where a [`MemView`]'s bytes are.
#[derive(Clone)]
pub enum ViewData {
    /// One buffer.
    Whole(Arc<Vec<u8>>),
    /// A file read in chunks on demand.
    Chunked(Arc<ChunkedBytes>),
}

impl std::fmt::Debug for ViewData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ViewData::Whole(d) => write!(f, "Whole({} bytes)", d.len()),
            ViewData::Chunked(c) => write!(f, "Chunked({} bytes, {} chunks read)", c.len(), c.chunks_read()),
        }
    }
}

/// Bytes `data[off..off + len]`: the memory at `[addr, addr + len)` of a
/// [`crate::common::MemRun`].
#[derive(Clone, Debug)]
pub struct MemView {
    pub data: ViewData,
    pub off: usize,
    pub len: usize,
}

impl MemView {
    /// The view's bytes from `at` (< len) to its end or to the end of the
    /// chunk holding `at` (at least one byte). Errors: a chunk that cannot
    /// be read.
    #[inline(always)]
    pub fn run(&self, at: usize) -> Result<&[u8], ocsd_err_t> {
        match &self.data {
            ViewData::Whole(d) => Ok(&d[self.off + at..self.off + self.len]),
            ViewData::Chunked(c) => {
                let r = c.from(self.off + at)?;
                Ok(&r[..r.len().min(self.len - at)])
            }
        }
    }

    /// `n` bytes from `at` in one piece, if the storage has them so (a
    /// whole view always does).
    #[inline(always)]
    pub fn slice(&self, at: usize, n: usize) -> Result<Option<&[u8]>, ocsd_err_t> {
        let r = self.run(at)?;
        Ok(r.get(..n))
    }

    /// Copy `out.len()` bytes from `at` (inside the view).
    #[inline]
    pub fn copy(&self, at: usize, out: &mut [u8]) -> Result<(), ocsd_err_t> {
        match &self.data {
            ViewData::Whole(d) => {
                out.copy_from_slice(&d[self.off + at..self.off + at + out.len()]);
                Ok(())
            }
            ViewData::Chunked(c) => c.copy(self.off + at, out),
        }
    }

    /// The 4 bytes at `at` (inside the view) as a little-endian word.
    #[inline(always)]
    pub fn word(&self, at: usize) -> Result<u32, ocsd_err_t> {
        let r = self.run(at)?;
        if let Some(w) = r.get(..4) {
            return Ok(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        }
        let mut b = [0u8; 4];
        self.copy(at, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunked(data: Vec<u8>, shift: u32) -> Arc<ChunkedBytes> {
        let d = Arc::new(data);
        let src = d.clone();
        Arc::new(ChunkedBytes::new(
            d.len(),
            shift,
            Box::new(move |pos, out| {
                if src[0] == 0xee {
                    return Err(OCSD_ERR_FILE_ERROR);
                }
                out.copy_from_slice(&src[pos..pos + out.len()]);
                Ok(())
            }),
        ))
    }

    #[test]
    fn chunked_views_read_what_they_are_asked() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 13) as u8).collect();
        let c = chunked(data.clone(), 6);
        assert_eq!(c.chunks_read(), 0);
        let v = MemView { data: ViewData::Chunked(c.clone()), off: 100, len: 800 };
        // a run ends with its chunk (64 bytes) or the view
        assert_eq!(v.run(0).unwrap(), &data[100..128]);
        assert_eq!(c.chunks_read(), 1);
        assert_eq!(v.run(799).unwrap(), &data[899..900]);
        // words across a chunk end
        assert_eq!(v.word(26).unwrap(), u32::from_le_bytes(data[126..130].try_into().unwrap()));
        assert_eq!(v.slice(26, 4).unwrap(), None);
        assert_eq!(v.slice(20, 8).unwrap(), Some(&data[120..128]));
        let mut all = vec![0u8; 800];
        v.copy(0, &mut all).unwrap();
        assert_eq!(all, data[100..900]);
        // the same through a whole view
        let w = MemView { data: ViewData::Whole(Arc::new(data.clone())), off: 100, len: 800 };
        assert_eq!(w.run(0).unwrap(), &data[100..900]);
        assert_eq!(w.word(26).unwrap(), v.word(26).unwrap());
        assert_eq!(w.slice(26, 4).unwrap(), Some(&data[126..130]));
        // an unreadable chunk is an error, at every access
        let mut bad = vec![0u8; 200];
        bad[0] = 0xee;
        let b = MemView { data: ViewData::Chunked(chunked(bad, 6)), off: 0, len: 200 };
        assert_eq!(b.run(70), Err(OCSD_ERR_FILE_ERROR));
        assert_eq!(b.word(62), Err(OCSD_ERR_FILE_ERROR));
    }
}
