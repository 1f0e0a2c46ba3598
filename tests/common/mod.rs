//! What several integration tests share: finding the reference data, the
//! snapshot with a model's Tarmac trace, and decoding it through the Rust API.
#![allow(dead_code)] // each test crate uses part of this

use std::path::{Path, PathBuf};

pub mod perfpipe;
pub mod perfz;

use opencsd_c_api::abi::gen_elem::ocsd_generic_trace_elem;
use opencsd_c_api::api::Decoder;
use opencsd_c_api::common::MemAccess;

/// The shared reference data: `$OCSD_SHARED`, else `../shared`, if it holds
/// the conformance runner.
pub fn shared_dir() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("OCSD_SHARED") {
        let p = PathBuf::from(p);
        if p.join("conformance/run").is_file() {
            return Some(p);
        }
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    p.join("conformance/run").is_file().then_some(p)
}

pub const SKIPPED: &str = "\n*** SKIPPED: OpenCSD reference data not found (set OCSD_SHARED or place it at ../shared) ***\n";

/// `snapshots-ete/002-ack_test_scr` (its folder holds the model's
/// `test_TARMAC`), or `None` after saying loudly that the data is absent.
pub fn ack_test_scr() -> Option<PathBuf> {
    match shared_dir() {
        Some(s) => Some(s.join("conformance/snapshots-ete/002-ack_test_scr")),
        None => {
            eprintln!("{SKIPPED}");
            None
        }
    }
}

/// Decode the snapshot with the Rust API, handing each element (as the C
/// element) and the decoder's memory to `f`.
pub fn decode_each(snap: &Path, mut f: impl FnMut(u64, u8, &ocsd_generic_trace_elem, &mut dyn MemAccess)) {
    let s = Decoder::from_snapshot(snap, None).unwrap();
    let mut dec = s.decoder;
    let file = std::fs::File::open(&s.trace_file).unwrap();
    let mut it = dec.decode(std::io::BufReader::new(file));
    while let Some(e) = it.next() {
        let raw = e.raw();
        f(e.index, e.trace_id, &raw, it.decoder().memory());
    }
    assert!(it.error().is_none());
}

/// Says loudly that the reference data is absent; `None` then. The shared
/// data otherwise.
pub fn shared_or_skip() -> Option<PathBuf> {
    let s = shared_dir();
    if s.is_none() {
        eprintln!("{SKIPPED}");
    }
    s
}

/// An element sink that only counts, never asking the decoders to wait.
pub struct Counter(pub std::rc::Rc<std::cell::Cell<u64>>);

impl opencsd_c_api::common::GenElemSink for Counter {
    fn trace_elem_in(
        &mut self,
        _: opencsd_c_api::abi::ocsd_trc_index_t,
        _: u8,
        _: &ocsd_generic_trace_elem,
    ) -> opencsd_c_api::abi::ocsd_datapath_resp_t {
        self.0.set(self.0.get() + 1);
        opencsd_c_api::abi::OCSD_RESP_CONT
    }
}

/// A global allocator that counts allocations and reallocations, for
/// tests that check the hot path allocates nothing. A test crate installs
/// it with `#[global_allocator] static GLOBAL: Counting = Counting;` and
/// reads [`allocations`] around the part it watches.
pub struct Counting;

static ALLOCS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Allocations (and reallocations) counted so far by [`Counting`].
pub fn allocations() -> u64 {
    ALLOCS.load(std::sync::atomic::Ordering::Relaxed)
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counter is an atomic and allocates nothing.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

/// The 64-byte header of a little-endian AArch64 ELF64 file of type
/// `e_type` (2 ET_EXEC, 3 ET_DYN) with two program headers at `phoff` and
/// six section headers at `shoff`, the section names in section 3.
pub fn elf64_header(e_type: u16, entry: u64, phoff: u64, shoff: u64) -> Vec<u8> {
    let mut eh = Vec::new();
    eh.extend(b"\x7fELF\x02\x01\x01\0");
    eh.extend([0u8; 8]);
    eh.extend(e_type.to_le_bytes());
    eh.extend(183u16.to_le_bytes()); // EM_AARCH64
    eh.extend(1u32.to_le_bytes());
    for v in [entry, phoff, shoff] {
        eh.extend(v.to_le_bytes());
    }
    eh.extend(0u32.to_le_bytes());
    for v in [64u16, 56, 2, 64, 6, 3] {
        eh.extend(v.to_le_bytes());
    }
    eh
}

/// A minimal AArch64 ELF: one R+X PT_LOAD over the whole file, a GNU
/// build-ID note, `.text` at 0x1000..0x2000 filled with `words` repeated.
pub fn synthetic_elf(build_id: &[u8], words: &[u32]) -> Vec<u8> {
    synthetic_elf_syms(build_id, words, &[])
}

/// As [`synthetic_elf`], with FUNC symbols (name, address, size) in a
/// `.symtab`.
pub fn synthetic_elf_syms(build_id: &[u8], words: &[u32], funcs: &[(&str, u64, u64)]) -> Vec<u8> {
    let size = 0x3000usize;
    let mut b = vec![0u8; size];
    let put = |b: &mut Vec<u8>, at: usize, bytes: &[u8]| b[at..at + bytes.len()].copy_from_slice(bytes);
    let mut note = Vec::new();
    note.extend(4u32.to_le_bytes());
    note.extend((build_id.len() as u32).to_le_bytes());
    note.extend(3u32.to_le_bytes());
    note.extend(b"GNU\0");
    note.extend(build_id);
    put(&mut b, 0x200, &note);
    for (i, o) in (0x1000..0x2000).step_by(4).enumerate() {
        put(&mut b, o, &words[i % words.len()].to_le_bytes());
    }
    let shstr = b"\0.note.gnu.build-id\0.text\0.shstrtab\0.symtab\0.strtab\0";
    put(&mut b, 0x2000, shstr);
    let (phoff, shoff) = (64u64, 0x2100u64);
    put(&mut b, 0, &elf64_header(3, 0, phoff, shoff)); // ET_DYN
    let ph = |t: u32, f: u32, off: u64, sz: u64, al: u64| {
        let mut v = Vec::new();
        v.extend(t.to_le_bytes());
        v.extend(f.to_le_bytes());
        for x in [off, off, off, sz, sz, al] {
            v.extend(x.to_le_bytes());
        }
        v
    };
    let mut phs = ph(1, 5, 0, size as u64, 0x1000);
    phs.extend(ph(4, 4, 0x200, note.len() as u64, 4));
    put(&mut b, phoff as usize, &phs);
    let sh = |name: u32, t: u32, flags: u64, addr: u64, off: u64, sz: u64, al: u64| {
        let mut v = Vec::new();
        v.extend(name.to_le_bytes());
        v.extend(t.to_le_bytes());
        for x in [flags, addr, off, sz] {
            v.extend(x.to_le_bytes());
        }
        v.extend(0u32.to_le_bytes());
        v.extend(0u32.to_le_bytes());
        v.extend(al.to_le_bytes());
        v.extend(0u64.to_le_bytes());
        v
    };
    let mut shs = sh(0, 0, 0, 0, 0, 0, 0);
    shs.extend(sh(1, 7, 2, 0x200, 0x200, note.len() as u64, 4));
    shs.extend(sh(20, 1, 6, 0x1000, 0x1000, 0x1000, 4));
    shs.extend(sh(26, 3, 0, 0, 0x2000, shstr.len() as u64, 1));
    // .symtab (link: .strtab = section 5, info: first global = 1)
    let mut strtab = vec![0u8];
    let mut symtab = vec![0u8; 24];
    for (name, addr, size) in funcs {
        let off = strtab.len() as u32;
        strtab.extend(name.as_bytes());
        strtab.push(0);
        symtab.extend(off.to_le_bytes());
        symtab.push(0x12); // STB_GLOBAL, STT_FUNC
        symtab.push(0);
        symtab.extend(2u16.to_le_bytes()); // .text
        symtab.extend(addr.to_le_bytes());
        symtab.extend(size.to_le_bytes());
    }
    put(&mut b, 0x2400, &symtab);
    put(&mut b, 0x2800, &strtab);
    let mut st = sh(36, 2, 0, 0, 0x2400, symtab.len() as u64, 8);
    st[40..44].copy_from_slice(&5u32.to_le_bytes()); // sh_link
    st[44..48].copy_from_slice(&1u32.to_le_bytes()); // sh_info
    st[56..64].copy_from_slice(&24u64.to_le_bytes()); // sh_entsize
    shs.extend(st);
    shs.extend(sh(44, 3, 0, 0, 0x2800, strtab.len() as u64, 1));
    put(&mut b, shoff as usize, &shs);
    b
}

/// Bytes from hexadecimal digits.
pub fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// `ocsd ARGS`, run as a user runs it; its output.
pub fn ocsd(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ocsd")).args(args).output().expect("run ocsd")
}

/// The shared recordings in perf's file format (little-endian, `PERFILE2`),
/// with their bytes.
pub fn shared_perfile2(shared: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    shared_recordings(shared)
        .into_iter()
        .filter_map(|p| {
            let bytes = std::fs::read(&p).ok()?;
            bytes.starts_with(b"PERFILE2").then_some((p, bytes))
        })
        .collect()
}

/// A new scratch folder for this test process, named `what`.
pub fn scratch_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The perf.data recordings of the shared data (`perf/*.data`), sorted.
pub fn shared_recordings(shared: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(shared.join("perf"))
        .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "data")).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// A stand-in for the program etm_test_loop.perf.data traced (its build
/// ID; nop, b.ne .+4, bl .+8, ret), under `symfs` at its recorded path.
pub fn write_etm_test_loop(symfs: &Path) {
    let bin = symfs.join("data/local/tmp/etm_test_loop");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    let words = [0xd503_201f, 0x5400_0021, 0x9400_0002, 0xd65f_03c0];
    std::fs::write(&bin, synthetic_elf(&hex("0c9a20bf9c009d0e4e8bbf9fad0300ae"), &words)).unwrap();
}
