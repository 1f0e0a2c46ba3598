//! ELF files as target memory: the loadable, executable segments of a
//! little-endian 32- or 64-bit ELF, at their link addresses or relocated
//! to a load address. Parsing uses goblin; every size and offset is
//! checked against the file, so a damaged file is an error, never a panic.
#![forbid(unsafe_code)]

use std::fmt;
use std::sync::Arc;

use goblin::elf::program_header::{ProgramHeader, PF_X, PT_LOAD};

/// One loadable segment: `data` is the segment's bytes in the file
/// (p_filesz of them), mapped at `address`.
#[derive(Clone)]
pub struct ElfSegment {
    pub address: u64,
    /// Offset of the segment's bytes within the file.
    pub file_offset: usize,
    pub size: usize,
    pub executable: bool,
}

impl fmt::Debug for ElfSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ElfSegment {{ 0x{:x}..0x{:x}, x={} }}", self.address, self.address + self.size as u64, self.executable)
    }
}

/// A parsed ELF file: its bytes and the segments that hold code.
#[derive(Clone, Debug)]
pub struct ElfImage {
    /// The whole file, shared by the accessors made from it.
    pub data: Arc<Vec<u8>>,
    pub is_64: bool,
    pub machine: u16,
    pub entry: u64,
    /// Executable PT_LOAD segments with bytes in the file, by address
    /// (data segments are not needed to follow code, and may be cut off).
    pub segments: Vec<ElfSegment>,
}

/// Why a file is not a usable ELF image.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ElfError {
    #[error("not an ELF file (no \\x7fELF magic)")]
    NotElf,
    #[error("unsupported ELF class {0} (expected 1 = 32-bit or 2 = 64-bit)")]
    BadClass(u8),
    #[error("big-endian ELF files are not supported")]
    BigEndian,
    #[error("damaged ELF file: {0}")]
    Malformed(String),
    #[error("segment at 0x{address:x} needs file bytes 0x{offset:x}..0x{end:x}, beyond the end of the file (0x{len:x} bytes): truncated")]
    Truncated { address: u64, offset: u64, end: u64, len: usize },
    #[error("segments overlap: 0x{a:x}..0x{a_end:x} and 0x{b:x}..0x{b_end:x}")]
    Overlap { a: u64, a_end: u64, b: u64, b_end: u64 },
    #[error("no executable loadable segment with file contents")]
    NoCode,
    #[error("relocating to 0x{0:x} moves a segment beyond the 64-bit address space")]
    BadLoadAddress(u64),
}

impl ElfImage {
    /// Parse `data` as an ELF file.
    pub fn parse(data: Vec<u8>) -> Result<ElfImage, ElfError> {
        if data.len() < 4 || &data[..4] != b"\x7fELF" {
            return Err(ElfError::NotElf);
        }
        if data.len() < 6 {
            return Err(ElfError::Malformed("header truncated".into()));
        }
        match data[4] {
            1 | 2 => {}
            c => return Err(ElfError::BadClass(c)),
        }
        if data[5] == 2 {
            return Err(ElfError::BigEndian);
        }
        let need = if data[4] == 2 { 64 } else { 52 };
        if data.len() < need {
            return Err(ElfError::Malformed(format!("truncated: {} bytes, the ELF header alone needs {need}", data.len())));
        }
        // Only the ELF header and the program headers are read: section
        // headers (often cut off in memory dumps of ELF files) are not needed.
        let malformed = |e: goblin::error::Error| ElfError::Malformed(e.to_string());
        let header = goblin::elf::Elf::parse_header(&data).map_err(malformed)?;
        let ctx = goblin::container::Ctx::new(header.container().map_err(malformed)?, header.endianness().map_err(malformed)?);
        let phoff = usize::try_from(header.e_phoff).map_err(|_| ElfError::Malformed("program header offset out of range".into()))?;
        if phoff >= data.len() && header.e_phnum > 0 {
            return Err(ElfError::Malformed(format!("program headers at 0x{phoff:x} are beyond the end of the file (0x{:x} bytes): truncated", data.len())));
        }
        let phdrs = ProgramHeader::parse(&data, phoff, header.e_phnum as usize, ctx).map_err(malformed)?;
        let mut segments = Vec::new();
        for ph in phdrs.iter().filter(|p| p.p_type == PT_LOAD && p.p_filesz > 0 && p.p_flags & PF_X != 0) {
            let end = ph.p_offset.checked_add(ph.p_filesz);
            match end {
                Some(end) if end <= data.len() as u64 => {}
                _ => {
                    return Err(ElfError::Truncated {
                        address: ph.p_vaddr,
                        offset: ph.p_offset,
                        end: ph.p_offset.saturating_add(ph.p_filesz),
                        len: data.len(),
                    })
                }
            }
            if ph.p_vaddr.checked_add(ph.p_filesz).is_none() {
                return Err(ElfError::Malformed(format!("segment at 0x{:x} wraps the address space", ph.p_vaddr)));
            }
            segments.push(ElfSegment {
                address: ph.p_vaddr,
                file_offset: ph.p_offset as usize,
                size: ph.p_filesz as usize,
                executable: true,
            });
        }
        if segments.is_empty() {
            return Err(ElfError::NoCode);
        }
        segments.sort_by_key(|s| s.address);
        for w in segments.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            if b.address < a.address + a.size as u64 {
                return Err(ElfError::Overlap { a: a.address, a_end: a.address + a.size as u64, b: b.address, b_end: b.address + b.size as u64 });
            }
        }
        Ok(ElfImage { is_64: ctx.container.is_big(), machine: header.e_machine, entry: header.e_entry, segments, data: Arc::new(data) })
    }

    /// Read and parse the file at `path`.
    pub fn read(path: &str) -> Result<ElfImage, ElfFileError> {
        let data = std::fs::read(path).map_err(|e| ElfFileError { path: path.to_string(), error: ElfFileErrorKind::Io(e.to_string()) })?;
        ElfImage::parse(data).map_err(|e| ElfFileError { path: path.to_string(), error: ElfFileErrorKind::Elf(e) })
    }

    /// Whether `data` starts with the ELF magic.
    pub fn is_elf(data: &[u8]) -> bool {
        data.len() >= 4 && &data[..4] == b"\x7fELF"
    }

    /// The lowest segment address.
    pub fn base_address(&self) -> u64 {
        self.segments[0].address
    }

    /// The segments placed so that the lowest one starts at `load_address`
    /// (all keep their distances), or at their link addresses for `None`.
    pub fn placed(&self, load_address: Option<u64>) -> Result<Vec<ElfSegment>, ElfError> {
        let Some(load) = load_address else { return Ok(self.segments.clone()) };
        let base = self.base_address();
        self.segments
            .iter()
            .map(|s| {
                let addr = (s.address - base).checked_add(load).ok_or(ElfError::BadLoadAddress(load))?;
                addr.checked_add(s.size as u64).ok_or(ElfError::BadLoadAddress(load))?;
                Ok(ElfSegment { address: addr, ..s.clone() })
            })
            .collect()
    }
}

/// An ELF error with the file it concerns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {error}")]
pub struct ElfFileError {
    pub path: String,
    pub error: ElfFileErrorKind,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ElfFileErrorKind {
    #[error("cannot read: {0}")]
    Io(String),
    #[error(transparent)]
    Elf(#[from] ElfError),
}

/// Hand-built ELF files for tests (here and in the API's tests).
#[cfg(test)]
pub(crate) mod testelf {
    /// A little-endian ELF with one PT_LOAD per (vaddr, flags, bytes);
    /// 64-bit when `is_64`.
    pub fn build(is_64: bool, segs: &[(u64, u32, &[u8])]) -> Vec<u8> {
        let (ehsize, phentsize) = if is_64 { (64usize, 56usize) } else { (52, 32) };
        let phoff = ehsize;
        let mut data_off = phoff + phentsize * segs.len();
        let mut out = vec![0u8; data_off];
        out[..4].copy_from_slice(b"\x7fELF");
        out[4] = if is_64 { 2 } else { 1 };
        out[5] = 1; // little-endian
        out[6] = 1; // version
        let w16 = |o: &mut Vec<u8>, at: usize, v: u16| o[at..at + 2].copy_from_slice(&v.to_le_bytes());
        let w32 = |o: &mut Vec<u8>, at: usize, v: u32| o[at..at + 4].copy_from_slice(&v.to_le_bytes());
        let w64 = |o: &mut Vec<u8>, at: usize, v: u64| o[at..at + 8].copy_from_slice(&v.to_le_bytes());
        w16(&mut out, 16, 2); // ET_EXEC
        w16(&mut out, 18, if is_64 { 183 } else { 40 }); // AArch64 / ARM
        w32(&mut out, 20, 1);
        let entry = segs.first().map(|s| s.0).unwrap_or(0);
        if is_64 {
            w64(&mut out, 24, entry);
            w64(&mut out, 32, phoff as u64);
            w16(&mut out, 52, ehsize as u16);
            w16(&mut out, 54, phentsize as u16);
            w16(&mut out, 56, segs.len() as u16);
            w16(&mut out, 58, 64);
        } else {
            w32(&mut out, 24, entry as u32);
            w32(&mut out, 28, phoff as u32);
            w16(&mut out, 40, ehsize as u16);
            w16(&mut out, 42, phentsize as u16);
            w16(&mut out, 44, segs.len() as u16);
            w16(&mut out, 46, 40);
        }
        let mut payload = Vec::new();
        for (i, (vaddr, flags, bytes)) in segs.iter().enumerate() {
            let ph = phoff + i * phentsize;
            let (off, len) = (data_off as u64, bytes.len() as u64);
            if is_64 {
                w32(&mut out, ph, 1);
                w32(&mut out, ph + 4, *flags);
                w64(&mut out, ph + 8, off);
                w64(&mut out, ph + 16, *vaddr);
                w64(&mut out, ph + 24, *vaddr);
                w64(&mut out, ph + 32, len);
                w64(&mut out, ph + 40, len);
                w64(&mut out, ph + 48, 4);
            } else {
                w32(&mut out, ph, 1);
                w32(&mut out, ph + 4, off as u32);
                w32(&mut out, ph + 8, *vaddr as u32);
                w32(&mut out, ph + 12, *vaddr as u32);
                w32(&mut out, ph + 16, len as u32);
                w32(&mut out, ph + 20, len as u32);
                w32(&mut out, ph + 24, *flags);
                w32(&mut out, ph + 28, 4);
            }
            payload.extend_from_slice(bytes);
            data_off += bytes.len();
        }
        out.extend_from_slice(&payload);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::testelf::build;
    use super::*;

    const RX: u32 = 5;
    const RW: u32 = 6;

    #[test]
    fn loads_executable_segments_64_and_32() {
        for is_64 in [true, false] {
            let f = build(is_64, &[(0x8000, RX, &[1, 2, 3, 4]), (0x9000, RW, &[9; 8]), (0x10000, RX, &[5, 6])]);
            let img = ElfImage::parse(f).unwrap();
            assert_eq!(img.is_64, is_64);
            assert_eq!(img.segments.len(), 2, "data segment skipped");
            assert_eq!(img.segments[0].address, 0x8000);
            let s = &img.segments[1];
            assert_eq!(&img.data[s.file_offset..s.file_offset + s.size], &[5, 6]);
            let placed = img.placed(Some(0x4000_0000)).unwrap();
            assert_eq!(placed[0].address, 0x4000_0000);
            assert_eq!(placed[1].address, 0x4000_8000);
        }
    }

    #[test]
    fn section_headers_and_data_beyond_the_file_do_not_matter() {
        // a memory dump of an ELF: section headers and the data segment cut off
        let mut f = build(true, &[(0x400000, RX, &[1, 2, 3, 4]), (0x410000, RW, &[7; 64])]);
        f[40..48].copy_from_slice(&0x10_0000u64.to_le_bytes()); // e_shoff beyond the end
        f[60..62].copy_from_slice(&12u16.to_le_bytes()); // e_shnum
        f.truncate(f.len() - 32);
        let img = ElfImage::parse(f).unwrap();
        assert_eq!(img.segments.len(), 1);
        assert_eq!(img.segments[0].address, 0x400000);
    }

    #[test]
    fn bad_files_are_errors() {
        assert_eq!(ElfImage::parse(b"hello world".to_vec()).unwrap_err(), ElfError::NotElf);
        assert_eq!(ElfImage::parse(vec![]).unwrap_err(), ElfError::NotElf);
        let good = build(true, &[(0x8000, RX, &[1, 2, 3, 4])]);
        let mut bad_class = good.clone();
        bad_class[4] = 3;
        assert_eq!(ElfImage::parse(bad_class).unwrap_err(), ElfError::BadClass(3));
        let mut be = good.clone();
        be[5] = 2;
        assert_eq!(ElfImage::parse(be).unwrap_err(), ElfError::BigEndian);
        // every truncation is an error, none panics
        for n in 0..good.len() {
            assert!(ElfImage::parse(good[..n].to_vec()).is_err(), "truncated to {n}");
        }
        let overlap = build(false, &[(0x8000, RX, &[0; 16]), (0x8008, RX, &[0; 16])]);
        assert!(matches!(ElfImage::parse(overlap).unwrap_err(), ElfError::Overlap { a: 0x8000, b: 0x8008, .. }));
        let no_code = build(true, &[(0x8000, RW, &[0; 16])]);
        assert_eq!(ElfImage::parse(no_code).unwrap_err(), ElfError::NoCode);
        let img = ElfImage::parse(build(true, &[(0x8000, RX, &[0; 16])])).unwrap();
        assert_eq!(img.placed(Some(u64::MAX - 4)).unwrap_err(), ElfError::BadLoadAddress(u64::MAX - 4));
    }

    #[test]
    fn garbage_after_magic_never_panics() {
        let good = build(true, &[(0x8000, RX, &[1, 2, 3, 4]), (0x9000, RX, &[5; 32])]);
        let mut seed = 0x1234_5678u32;
        for _ in 0..2000 {
            let mut f = good.clone();
            for _ in 0..4 {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let at = 4 + (seed as usize >> 8) % (f.len() - 4);
                f[at] = (seed >> 3) as u8;
            }
            let _ = ElfImage::parse(f);
        }
    }
}
