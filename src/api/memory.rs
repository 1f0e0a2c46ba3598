//! Target memory for instruction following: ELF files, raw dumps, byte
//! buffers and closures, each mapped in an address space.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use super::Error;
use crate::abi::*;
use crate::mem::elf::{ElfFileError, ElfFileErrorKind, ElfImage};
use crate::mem::{Accessor, ContextFilter, FileBytes, ReadFn, Source};

/// The address space an image belongs to: exception level and security
/// state, as the decoders ask for memory (`OCSD_MEM_SPACE_*`). An image in
/// [`AddressSpace::ANY`] serves every request; a kernel image can be put in
/// [`AddressSpace::EL1N`] and a hypervisor in [`AddressSpace::EL2`], so
/// that the same virtual addresses hold different code per exception level.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct AddressSpace(pub ocsd_mem_space_acc_t);

impl AddressSpace {
    pub const ANY: AddressSpace = AddressSpace(OCSD_MEM_SPACE_ANY);
    pub const EL1S: AddressSpace = AddressSpace(OCSD_MEM_SPACE_EL1S);
    pub const EL1N: AddressSpace = AddressSpace(OCSD_MEM_SPACE_EL1N);
    pub const EL2: AddressSpace = AddressSpace(OCSD_MEM_SPACE_EL2);
    pub const EL2S: AddressSpace = AddressSpace(OCSD_MEM_SPACE_EL2S);
    pub const EL3: AddressSpace = AddressSpace(OCSD_MEM_SPACE_EL3);
    /// Any secure level.
    pub const SECURE: AddressSpace = AddressSpace(OCSD_MEM_SPACE_S);
    /// Any non-secure level.
    pub const NON_SECURE: AddressSpace = AddressSpace(OCSD_MEM_SPACE_N);
}

impl Default for AddressSpace {
    fn default() -> Self {
        AddressSpace::ANY
    }
}

impl fmt::Debug for AddressSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        crate::printers::gen_elem::write_mem_space_str(self.0, &mut s);
        f.write_str(&s)
    }
}

impl FromStr for AddressSpace {
    type Err = Error;
    /// Snapshot names: `ANY`, `EL1S`, `EL1N`, `EL2`, `EL2S`, `EL3`, `S`,
    /// `N`, `ROOT`, `R`, `EL1R`, `EL2R` (case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let up = s.to_ascii_uppercase();
        if up == "ANY" {
            return Ok(AddressSpace::ANY);
        }
        match crate::config::mem_space_from_str(&up) {
            OCSD_MEM_SPACE_ANY => Err(Error::Usage(format!("unknown memory space `{s}` (ANY, EL1N, EL1S, EL2, EL2S, EL3, S, N, ROOT, R)"))),
            v => Ok(AddressSpace(v)),
        }
    }
}

/// A context ID (`CONTEXTIDR`, as the trace gives it): selects a process
/// image, see [`MemoryImage::for_context`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ContextId(pub u32);

/// A virtual machine ID (`VTTBR_EL2.VMID`, as the trace gives it): selects
/// a guest's image, see [`MemoryImage::for_vmid`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Vmid(pub u32);

enum ImageData {
    Elf { name: String, elf: ElfImage, load_address: Option<u64> },
    /// A buffer, or a file read when first used.
    Bytes { name: String, data: FileBytes, offset: usize, address: u64, len: usize },
    Callback { start: u64, end: u64, read: ReadFn },
}

/// A file (an ELF file or a memory dump) whose bytes a decoder maps:
/// [`crate::api::Decoder::mapped_files`]. Profiles name code by these
/// files (and an ELF file's symbols and line tables).
#[derive(Clone, Debug)]
pub struct MappedFile {
    /// The name the image was given (its path, for files).
    pub name: String,
    /// The file's bytes: read when first used, see [`MappedFile::data`].
    pub(super) bytes: FileBytes,
    /// An ELF file (else raw bytes).
    pub elf: bool,
    /// Where its bytes are mapped: (start address, end address
    /// (exclusive), file offset of the start).
    pub maps: Vec<(u64, u64, u64)>,
}

impl MappedFile {
    /// The whole file's bytes. A raw dump is read as the decoders need
    /// its bytes: this reads the rest (the bytes the decoders read are
    /// these).
    pub fn data(&self) -> Result<Arc<Vec<u8>>, Error> {
        self.bytes.whole().map_err(|_| Error::Io { path: self.name.clone(), message: "cannot read the whole file (shorter than when it was opened?)".into() })
    }
}

/// log2 of the bytes of a raw dump read at a time (64 KiB: 16 pages in
/// one read; the C API's file accessors read a page at a time, as OpenCSD
/// keeps its memory use).
const DUMP_CHUNK_SHIFT: u32 = 16;

/// A piece of target memory to map: build one with [`MemoryImage::elf_file`],
/// [`MemoryImage::dump_file`], [`MemoryImage::bytes`] or
/// [`MemoryImage::callback`], then give it to the decoder.
pub struct MemoryImage {
    data: ImageData,
    space: AddressSpace,
    filter: ContextFilter,
}

impl fmt::Debug for MemoryImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.data {
            ImageData::Elf { name, load_address, .. } => write!(f, "ELF {name} at {load_address:x?} in {:?}", self.space)?,
            ImageData::Bytes { name, address, len, .. } => write!(f, "{name}: {len} bytes at 0x{address:x} in {:?}", self.space)?,
            ImageData::Callback { start, end, .. } => write!(f, "callback 0x{start:x}..=0x{end:x} in {:?}", self.space)?,
        }
        if let Some(id) = self.filter.context_id {
            write!(f, " for context ID 0x{id:x}")?;
        }
        if let Some(v) = self.filter.vmid {
            write!(f, " for VMID 0x{v:x}")?;
        }
        Ok(())
    }
}

impl MemoryImage {
    /// The executable segments of the ELF file at `path`, at their link
    /// addresses.
    pub fn elf_file(path: &str) -> Result<MemoryImage, Error> {
        Ok(Self::from_elf(path, ElfImage::read(path)?, None))
    }

    /// The executable segments of the ELF file at `path`, moved together so
    /// that the lowest one starts at `load_address`.
    pub fn elf_file_at(path: &str, load_address: u64) -> Result<MemoryImage, Error> {
        Ok(Self::from_elf(path, ElfImage::read(path)?, Some(load_address)))
    }

    /// An ELF file already in memory (`name` appears in messages).
    pub fn elf_bytes(name: &str, data: Vec<u8>, load_address: Option<u64>) -> Result<MemoryImage, Error> {
        let elf = ElfImage::parse(data).map_err(|e| ElfFileError { path: name.to_string(), error: ElfFileErrorKind::Elf(e) })?;
        Ok(Self::from_elf(name, elf, load_address))
    }

    fn from_elf(name: &str, elf: ElfImage, load_address: Option<u64>) -> MemoryImage {
        MemoryImage { data: ImageData::Elf { name: name.to_string(), elf, load_address }, space: AddressSpace::ANY, filter: ContextFilter::ANY }
    }

    /// A raw memory dump: the whole file at `path` mapped at `address`.
    /// The file stays open, and only the pages the decode needs are read
    /// from it, when first needed.
    pub fn dump_file(path: &str, address: u64) -> Result<MemoryImage, Error> {
        Self::dump_file_region(path, address, 0, None)
    }

    /// `len` bytes (all when `None`) of the file at `path` from `offset`,
    /// mapped at `address`.
    pub fn dump_file_region(path: &str, address: u64, offset: usize, len: Option<usize>) -> Result<MemoryImage, Error> {
        // Read 64 KiB at a time as the decode needs the bytes, whatever
        // the dump's size: most of a large image (a kernel, a RAM dump) is
        // never read, and reading a small one whole first costs as much as
        // the parts a decode touches (bugfix-exact-match's 1.9 MiB dump:
        // the same serial time either way, in 29 reads), and keeps that
        // read out of a parallel decode's serial start.
        let io = |message: String| Error::Io { path: path.to_string(), message };
        let file = std::fs::File::open(path).map_err(|e| io(e.to_string()))?;
        let data = FileBytes::from_file_in_chunks(file, DUMP_CHUNK_SHIFT).map_err(|e| io(if e == OCSD_ERR_MEM_ACC_RANGE_INVALID { "not a regular file".into() } else { "cannot read its size".into() }))?;
        Self::dump_bytes_region(path, data, address, offset, len)
    }

    /// [`MemoryImage::dump_file_region`] of file `path` opened (`data`,
    /// its bytes).
    fn dump_bytes_region(path: &str, data: FileBytes, address: u64, offset: usize, len: Option<usize>) -> Result<MemoryImage, Error> {
        if offset >= data.len() {
            return Err(Error::Memory(format!("{path}: offset 0x{offset:x} is beyond the end of the file (0x{:x} bytes)", data.len())));
        }
        let len = len.unwrap_or(data.len() - offset).min(data.len() - offset);
        Ok(MemoryImage { data: ImageData::Bytes { name: path.to_string(), data, offset, address, len }, space: AddressSpace::ANY, filter: ContextFilter::ANY })
    }

    /// Whether the file at `path` starts with ELF's magic number (read
    /// from its first 4 bytes; false when it cannot be read).
    pub(crate) fn file_is_elf(path: &str) -> bool {
        use std::io::Read;
        let mut magic = [0u8; 4];
        std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && ElfImage::is_elf(&magic)
    }

    /// A copy of `data` mapped at `address`.
    pub fn bytes(address: u64, data: &[u8]) -> MemoryImage {
        let len = data.len();
        MemoryImage {
            data: ImageData::Bytes { name: "buffer".into(), data: Arc::new(data.to_vec()).into(), offset: 0, address, len },
            space: AddressSpace::ANY,
            filter: ContextFilter::ANY,
        }
    }

    /// Memory served by a closure for the addresses `start..=end`: it is
    /// given an address and a buffer, fills what it can and returns the
    /// number of bytes written (0: not available).
    pub fn callback(start: u64, end: u64, mut read: impl FnMut(u64, &mut [u8]) -> usize + Send + 'static) -> MemoryImage {
        MemoryImage {
            data: ImageData::Callback { start, end, read: Box::new(move |addr, _space, _id, buf| read(addr, buf).min(buf.len())) },
            space: AddressSpace::ANY,
            filter: ContextFilter::ANY,
        }
    }

    /// Put the image in address space `space` (default: any): a kernel
    /// image in [`AddressSpace::EL1N`], a hypervisor in
    /// [`AddressSpace::EL2`], secure firmware in [`AddressSpace::EL3`].
    pub fn in_space(mut self, space: AddressSpace) -> MemoryImage {
        self.space = space;
        self
    }

    /// Serve only code running under context ID `id`: a process image.
    /// The decoders follow the context the trace gives them (ETMv4 and ETE
    /// address-with-context packets, PTM and ETMv3 context ID packets and
    /// I-syncs), so images of several processes may be mapped at the same
    /// addresses, each under its context ID. While the trace has given no
    /// context ID (not traced, or not yet seen), no such image is read.
    ///
    /// ```
    /// use opencsd_c_api::api::{ContextId, MemoryImage};
    /// let a = MemoryImage::bytes(0x40_0000, &[0x1f, 0x20, 0x03, 0xd5]).for_context(ContextId(1234));
    /// let b = MemoryImage::bytes(0x40_0000, &[0xc0, 0x03, 0x5f, 0xd6]).for_context(ContextId(1300));
    /// # let _ = (a, b);
    /// ```
    pub fn for_context(mut self, id: ContextId) -> MemoryImage {
        self.filter.context_id = Some(id.0);
        self
    }

    /// Serve only code running in virtual machine `vmid` (combines with
    /// [`MemoryImage::for_context`] and [`MemoryImage::in_space`]).
    pub fn for_vmid(mut self, vmid: Vmid) -> MemoryImage {
        self.filter.vmid = Some(vmid.0);
        self
    }

    /// The contexts the image serves.
    pub(crate) fn context_filter(&self) -> ContextFilter {
        self.filter
    }

    /// The accessors for this image.
    pub(crate) fn into_accessors(self) -> Result<Vec<Accessor>, Error> {
        let space = self.space.0;
        match self.data {
            ImageData::Elf { name, elf, load_address } => {
                let segs = elf.placed(load_address).map_err(|e| ElfFileError { path: name.clone(), error: ElfFileErrorKind::Elf(e) })?;
                Ok(segs
                    .into_iter()
                    .map(|s| Accessor {
                        start: s.address,
                        end: s.address + s.size as u64 - 1,
                        space,
                        source: Source::File { path: name.clone(), data: elf.data.clone().into(), offset: s.file_offset },
                    })
                    .collect())
            }
            ImageData::Bytes { name, data, offset, address, len } => {
                if len == 0 {
                    return Err(Error::Memory(format!("{name}: empty memory image")));
                }
                let end = address
                    .checked_add(len as u64 - 1)
                    .ok_or_else(|| Error::Memory(format!("{name}: 0x{len:x} bytes at 0x{address:x} go beyond the 64-bit address space")))?;
                Ok(vec![Accessor { start: address, end, space, source: Source::File { path: name, data, offset } }])
            }
            ImageData::Callback { start, end, read } => {
                if end < start {
                    return Err(Error::Memory(format!("callback range 0x{start:x}..=0x{end:x} is empty")));
                }
                Ok(vec![Accessor { start, end, space, source: Source::Callback { read } }])
            }
        }
    }

    /// The file-backed pieces of the image: its name, bytes and where they
    /// are mapped (None: memory served by a callback).
    pub(crate) fn mapped_file(&self) -> Option<MappedFile> {
        match &self.data {
            ImageData::Elf { name, elf, load_address } => {
                let segs = elf.placed(*load_address).ok()?;
                let maps = segs.iter().map(|s| (s.address, s.address.saturating_add(s.size as u64), s.file_offset as u64)).collect();
                Some(MappedFile { name: name.clone(), bytes: elf.data.clone().into(), elf: true, maps })
            }
            ImageData::Bytes { name, data, offset, address, len } => {
                Some(MappedFile { name: name.clone(), bytes: data.clone(), elf: false, maps: vec![(*address, address.saturating_add(*len as u64), *offset as u64)] })
            }
            ImageData::Callback { .. } => None,
        }
    }

    /// A name for messages.
    pub(crate) fn name(&self) -> String {
        match &self.data {
            ImageData::Elf { name, .. } | ImageData::Bytes { name, .. } => name.clone(),
            ImageData::Callback { .. } => "callback".into(),
        }
    }
}
