//! The bytes of a memory image file, read when first used.
//!
//! OpenCSD's file accessor opens its file when it is added and reads it
//! when the decode needs bytes from it. [`FileBytes`] opens the file and
//! takes its size when the image is added, as OpenCSD does, and reads the
//! file whole the first time a read needs any of its bytes: an image that
//! the trace never runs through (a snapshot lists every image of the
//! system; a decode uses a few) costs no memory and no reading.
//!
//! The bytes are then one buffer, so that the decoders keep a view of the
//! whole image (a view per part of it would make every jump between two
//! parts a memory call). Reading only the parts used was tried: on
//! bugfix-exact-match the decode runs through 1.4 of the 1.9 MB of its
//! image in 4 KiB parts, and the decode took 27% more instructions.
//!
//! The file stays open, so a file unlinked after it was added is still
//! read (as OpenCSD reads it). A file that shrank below its size when it
//! was added, or cannot be read, fails the read that needed it with
//! `OCSD_ERR_FILE_ERROR` (OpenCSD would hand back what its buffer held),
//! and the next read tries again.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use crate::abi::*;
use crate::common::MemView;

/// Bytes of a file (or of a buffer standing for one), cheap to clone:
/// clones share the bytes.
#[derive(Clone)]
pub struct FileBytes(Arc<Inner>);

struct Inner {
    len: usize,
    data: OnceLock<Arc<Vec<u8>>>,
    /// None: the bytes were given.
    file: Option<Mutex<File>>,
}

impl std::fmt::Debug for FileBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileBytes").field("len", &self.0.len).field("read", &self.is_read()).finish()
    }
}

impl From<Arc<Vec<u8>>> for FileBytes {
    /// Bytes already in memory (an ELF image parsed whole).
    fn from(data: Arc<Vec<u8>>) -> Self {
        FileBytes(Arc::new(Inner { len: data.len(), data: OnceLock::from(data), file: None }))
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
        // the size of the file opened (the path may have been replaced)
        let len = file.metadata().map_err(|_| OCSD_ERR_MEM_ACC_FILE_NOT_FOUND)?.len();
        let len = usize::try_from(len).map_err(|_| OCSD_ERR_MEM_ACC_RANGE_INVALID)?;
        Ok(FileBytes(Arc::new(Inner { len, data: OnceLock::new(), file: Some(Mutex::new(file)) })))
    }

    /// The size of the file when it was opened.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len
    }

    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// Whether the bytes are in memory.
    pub fn is_read(&self) -> bool {
        self.0.data.get().is_some()
    }

    /// All the bytes (`len` of them), read now if not yet.
    #[inline]
    pub fn bytes(&self) -> Result<&Arc<Vec<u8>>, ocsd_err_t> {
        match self.0.data.get() {
            Some(d) => Ok(d),
            None => self.load(),
        }
    }

    #[cold]
    #[inline(never)]
    fn load(&self) -> Result<&Arc<Vec<u8>>, ocsd_err_t> {
        let inner = &*self.0;
        let Some(file) = &inner.file else { return Err(OCSD_ERR_FILE_ERROR) };
        let mut buf = vec![0u8; inner.len];
        {
            let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
            f.seek(SeekFrom::Start(0)).map_err(|_| OCSD_ERR_FILE_ERROR)?;
            // fails on a file now shorter than when it was opened
            f.read_exact(&mut buf).map_err(|_| OCSD_ERR_FILE_ERROR)?;
        }
        // another thread may have read it meanwhile: the same bytes
        Ok(inner.data.get_or_init(|| Arc::new(buf)))
    }

    /// Copy the bytes at `[pos, pos + out.len())` (inside the file's size).
    #[inline]
    pub fn copy(&self, pos: usize, out: &mut [u8]) -> Result<(), ocsd_err_t> {
        if out.is_empty() {
            return Ok(());
        }
        out.copy_from_slice(&self.bytes()?[pos..pos + out.len()]);
        Ok(())
    }

    /// Copy up to `out.len()` bytes from `pos`, as many as the file has
    /// there: the count copied.
    pub fn read_at(&self, pos: usize, out: &mut [u8]) -> Result<usize, ocsd_err_t> {
        let n = out.len().min(self.0.len.saturating_sub(pos));
        self.copy(pos, &mut out[..n])?;
        Ok(n)
    }

    /// A view of the bytes `[pos - before, pos + after)` (inside the
    /// file's size).
    #[inline]
    pub fn view(&self, pos: usize, before: usize, after: usize) -> Result<MemView, ocsd_err_t> {
        Ok(MemView { data: self.bytes()?.clone(), off: pos - before, len: before + after })
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
        let data = pattern(10_000);
        let p = temp_file("first-use", &data);
        let f = FileBytes::open(&p).unwrap();
        assert_eq!((f.len(), f.is_read()), (data.len(), false));
        let mut b = [0u8; 8];
        f.copy(5000, &mut b).unwrap();
        assert!(f.is_read());
        assert_eq!(b, data[5000..5008]);
        assert_eq!(f.read_at(data.len() - 4, &mut b), Ok(4));
        assert_eq!(b[..4], data[data.len() - 4..]);
        assert_eq!(f.read_at(data.len(), &mut b), Ok(0));
        let v = f.view(100, 10, 50).unwrap();
        assert_eq!(v.bytes(), &data[90..150]);
        // clones share the bytes
        let g = f.clone();
        assert!(Arc::ptr_eq(g.bytes().unwrap(), f.bytes().unwrap()));
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn unlinked_file_still_read_shrunk_file_an_error() {
        let data = pattern(5000);
        let p = temp_file("gone", &data);
        let f = FileBytes::open(&p).unwrap();
        // unlinked before the first read: the open file is still read (as
        // OpenCSD's open stream is)
        std::fs::remove_file(&p).unwrap();
        let mut b = [0u8; 4];
        f.copy(4000, &mut b).unwrap();
        assert_eq!(b, data[4000..4004]);

        let p = temp_file("shrunk", &data);
        let f = FileBytes::open(&p).unwrap();
        std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(100).unwrap();
        // fewer bytes than the size mapped: an error, every time, no panic
        assert_eq!(f.copy(8, &mut b), Err(OCSD_ERR_FILE_ERROR));
        assert_eq!(f.read_at(4990, &mut b), Err(OCSD_ERR_FILE_ERROR));
        assert_eq!(f.view(8, 0, 4).err(), Some(OCSD_ERR_FILE_ERROR));
        // grown back: read
        std::fs::write(&p, &data).unwrap();
        f.copy(8, &mut b).unwrap();
        assert_eq!(b, data[8..12]);
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
        assert!(f.is_read());
        let mut b = [0u8; 6];
        assert_eq!(f.read_at(297, &mut b), Ok(3));
        assert_eq!(b[..3], data[297..]);
    }
}
