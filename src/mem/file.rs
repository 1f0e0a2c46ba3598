//! The bytes of a memory image file, read when first used.
//!
//! OpenCSD's file accessor opens its file when it is added and reads the
//! bytes each read asks for. [`FileBytes`] opens the file and takes its
//! size when the image is added, as OpenCSD does, and reads it in chunks of
//! [`CHUNK`] bytes, each the first time a read needs it: parts of an image
//! the trace never runs through cost no memory (on bugfix-exact-match the
//! decode runs through 1.4 of the 1.9 MB of its image).
//!
//! The decoders still keep one view of the whole image
//! ([`crate::common::ViewData::Chunked`]): a view per chunk would make
//! every jump between two chunks a memory call (tried: 23-27% more
//! instructions on file memory).
//!
//! The file stays open, so a file unlinked after it was added is still
//! read (as OpenCSD reads it). A file that shrank below its size when it
//! was added, or cannot be read, fails the read that needed the missing
//! chunk with `OCSD_ERR_FILE_ERROR` (OpenCSD would hand back what its
//! buffer held), and the next read of it tries again.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use crate::abi::*;
use crate::common::mem_view::ChunkReader;
use crate::common::{ChunkedBytes, MemView, ViewData};

/// log2 of [`CHUNK`].
pub const CHUNK_SHIFT: u32 = 12;
/// Bytes of a file read at a time (a memory page).
pub const CHUNK: usize = 1 << CHUNK_SHIFT;

/// Reads the bytes at a position of `file`; fails on a file now shorter
/// than when it was opened. One positioned read per chunk (`pread`: no
/// seek beside it, no lock between threads sharing the file).
#[cfg(unix)]
fn chunk_reader(file: File) -> ChunkReader {
    use std::os::unix::fs::FileExt;
    Box::new(move |pos: usize, out: &mut [u8]| file.read_exact_at(out, pos as u64).map_err(|_| OCSD_ERR_FILE_ERROR))
}

/// As the Unix one, with a seek then a read under a lock.
#[cfg(not(unix))]
fn chunk_reader(file: File) -> ChunkReader {
    use std::io::{Read, Seek, SeekFrom};
    let file = std::sync::Mutex::new(file);
    Box::new(move |pos: usize, out: &mut [u8]| {
        let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
        f.seek(SeekFrom::Start(pos as u64)).map_err(|_| OCSD_ERR_FILE_ERROR)?;
        f.read_exact(out).map_err(|_| OCSD_ERR_FILE_ERROR)
    })
}

/// Bytes of a file (or of a buffer standing for one), cheap to clone:
/// clones share the bytes.
#[derive(Clone, Debug)]
pub struct FileBytes(ViewData);

impl From<Arc<Vec<u8>>> for FileBytes {
    /// Bytes already in memory (an ELF image parsed whole).
    fn from(data: Arc<Vec<u8>>) -> Self {
        FileBytes(ViewData::Whole(data))
    }
}

impl From<Vec<u8>> for FileBytes {
    fn from(data: Vec<u8>) -> Self {
        Arc::new(data).into()
    }
}

impl FileBytes {
    /// Open `path` to read its bytes when first used:
    /// `OCSD_ERR_MEM_ACC_FILE_NOT_FOUND` when it cannot be opened,
    /// `OCSD_ERR_MEM_ACC_RANGE_INVALID` when it is not a regular file (a
    /// device or FIFO has no size to map; reading /dev/zero to its end
    /// would never finish).
    pub fn open(path: &Path) -> Result<FileBytes, ocsd_err_t> {
        let meta = std::fs::metadata(path).map_err(|_| OCSD_ERR_MEM_ACC_FILE_NOT_FOUND)?;
        if !meta.is_file() {
            return Err(OCSD_ERR_MEM_ACC_RANGE_INVALID);
        }
        let file = File::open(path).map_err(|_| OCSD_ERR_MEM_ACC_FILE_NOT_FOUND)?;
        Self::from_file(file)
    }

    /// The bytes of `file`, open, read when first used: as
    /// [`FileBytes::open`] (its size now, its errors).
    pub fn from_file(file: File) -> Result<FileBytes, ocsd_err_t> {
        Self::from_file_in_chunks(file, CHUNK_SHIFT)
    }

    /// [`FileBytes::from_file`] read `1 << shift` bytes at a time (at
    /// least a page, at most 1 MiB).
    pub fn from_file_in_chunks(file: File, shift: u32) -> Result<FileBytes, ocsd_err_t> {
        let shift = shift.clamp(CHUNK_SHIFT, 20);
        // the size of the file opened (the path may have been replaced)
        let meta = file.metadata().map_err(|_| OCSD_ERR_MEM_ACC_FILE_NOT_FOUND)?;
        if !meta.is_file() {
            return Err(OCSD_ERR_MEM_ACC_RANGE_INVALID);
        }
        let len = usize::try_from(meta.len()).map_err(|_| OCSD_ERR_MEM_ACC_RANGE_INVALID)?;
        Ok(FileBytes(ViewData::Chunked(Arc::new(ChunkedBytes::new(len, shift, chunk_reader(file))))))
    }

    /// All the bytes, in one buffer: the buffer itself for bytes given in
    /// memory, else a copy read through the chunks (which keep what they
    /// read, so the copy is what the decoders read).
    pub fn whole(&self) -> Result<Arc<Vec<u8>>, ocsd_err_t> {
        match &self.0 {
            ViewData::Whole(d) => Ok(d.clone()),
            ViewData::Chunked(c) => {
                let mut v = vec![0u8; c.len()];
                c.copy(0, &mut v)?;
                Ok(Arc::new(v))
            }
        }
    }

    /// The size of the file when it was opened.
    #[inline]
    pub fn len(&self) -> usize {
        match &self.0 {
            ViewData::Whole(d) => d.len(),
            ViewData::Chunked(c) => c.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `other` shares these bytes (a clone of the same file).
    pub fn same_bytes(&self, other: &FileBytes) -> bool {
        match (&self.0, &other.0) {
            (ViewData::Whole(a), ViewData::Whole(b)) => Arc::ptr_eq(a, b),
            (ViewData::Chunked(a), ViewData::Chunked(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// Chunks read from the file so far (bytes given in memory: 0).
    pub fn chunks_loaded(&self) -> usize {
        match &self.0 {
            ViewData::Whole(_) => 0,
            ViewData::Chunked(c) => c.chunks_read(),
        }
    }

    /// Copy the bytes at `[pos, pos + out.len())` (inside the file's size).
    #[inline]
    pub fn copy(&self, pos: usize, out: &mut [u8]) -> Result<(), ocsd_err_t> {
        match &self.0 {
            ViewData::Whole(d) => {
                out.copy_from_slice(&d[pos..pos + out.len()]);
                Ok(())
            }
            ViewData::Chunked(c) => c.copy(pos, out),
        }
    }

    /// Copy up to `out.len()` bytes from `pos`, as many as the file has
    /// there: the count copied.
    pub fn read_at(&self, pos: usize, out: &mut [u8]) -> Result<usize, ocsd_err_t> {
        let n = out.len().min(self.len().saturating_sub(pos));
        self.copy(pos, &mut out[..n])?;
        Ok(n)
    }

    /// A view of the bytes `[pos - before, pos + after)` (inside the
    /// file's size); nothing is read until the view's reader asks.
    #[inline]
    pub fn view(&self, pos: usize, before: usize, after: usize) -> MemView {
        MemView { data: self.0.clone(), off: pos - before, len: before + after }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp_file(name: &str, data: &[u8]) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("ocsd-filebytes-{}-{}", std::process::id(), name));
        std::fs::File::create(&p).unwrap().write_all(data).unwrap();
        p
    }

    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    #[test]
    fn read_when_first_used() {
        let data = pattern(3 * CHUNK + 100);
        let p = temp_file("first-use", &data);
        let f = FileBytes::open(&p).unwrap();
        assert_eq!((f.len(), f.chunks_loaded()), (data.len(), 0));
        let mut b = [0u8; 8];
        f.copy(CHUNK + 5, &mut b).unwrap();
        assert_eq!(f.chunks_loaded(), 1);
        assert_eq!(b, data[CHUNK + 5..CHUNK + 13]);
        // across a chunk end
        f.copy(2 * CHUNK - 3, &mut b).unwrap();
        assert_eq!(b, data[2 * CHUNK - 3..2 * CHUNK + 5]);
        assert_eq!(f.chunks_loaded(), 2);
        assert_eq!(f.read_at(data.len() - 4, &mut b), Ok(4));
        assert_eq!(b[..4], data[data.len() - 4..]);
        assert_eq!(f.read_at(data.len(), &mut b), Ok(0));
        assert_eq!(f.chunks_loaded(), 3);
        // a view reads nothing until asked; clones share the chunks
        let v = f.clone().view(100, 10, 50);
        assert_eq!(f.chunks_loaded(), 3);
        assert_eq!(v.run(0).unwrap(), &data[90..150]);
        assert_eq!(f.chunks_loaded(), 4);
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn unlinked_file_still_read_shrunk_file_an_error() {
        let data = pattern(2 * CHUNK);
        let p = temp_file("gone", &data);
        let f = FileBytes::open(&p).unwrap();
        // unlinked before the first read: the open file is still read (as
        // OpenCSD's open stream is)
        std::fs::remove_file(&p).unwrap();
        let mut b = [0u8; 4];
        f.copy(CHUNK + 8, &mut b).unwrap();
        assert_eq!(b, data[CHUNK + 8..CHUNK + 12]);

        let p = temp_file("shrunk", &data);
        let f = FileBytes::open(&p).unwrap();
        f.copy(8, &mut b).unwrap();
        std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(CHUNK as u64 + 100).unwrap();
        // a chunk read before keeps its bytes; one now cut short is an
        // error, every time, no panic
        f.copy(4, &mut b).unwrap();
        assert_eq!(b, data[4..8]);
        assert_eq!(f.copy(CHUNK + 8, &mut b), Err(OCSD_ERR_FILE_ERROR));
        assert_eq!(f.read_at(2 * CHUNK - 4, &mut b), Err(OCSD_ERR_FILE_ERROR));
        assert_eq!(f.view(CHUNK + 8, 0, 4).word(0), Err(OCSD_ERR_FILE_ERROR));
        // grown back: read
        std::fs::write(&p, &data).unwrap();
        f.copy(CHUNK + 8, &mut b).unwrap();
        assert_eq!(b, data[CHUNK + 8..CHUNK + 12]);
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn not_found_and_not_a_file() {
        assert_eq!(FileBytes::open(Path::new("/nonexistent/ocsd/file.bin")).err(), Some(OCSD_ERR_MEM_ACC_FILE_NOT_FOUND));
        assert_eq!(FileBytes::open(&std::env::temp_dir()).err(), Some(OCSD_ERR_MEM_ACC_RANGE_INVALID));
    }

    #[test]
    fn bytes_in_memory() {
        let data = pattern(300);
        let f = FileBytes::from(data.clone());
        assert_eq!(f.chunks_loaded(), 0);
        let mut b = [0u8; 6];
        assert_eq!(f.read_at(297, &mut b), Ok(3));
        assert_eq!(b[..3], data[297..]);
    }
}
