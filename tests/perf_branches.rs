//! Branch samples against `perf script -F ip,addr --itrace=b` on the same
//! recording and the same binary. The traced programs are not shipped, so a
//! synthetic ELF stands in for `/data/local/tmp/etm_test_loop` (with the
//! recorded build ID, found through `--symfs`): both perf (through Debian's
//! OpenCSD) and this library follow the trace through its code, and must
//! print the same branches. Several code patterns exercise conditional,
//! unconditional, call, return and indirect branches.

use std::cell::RefCell;
use std::process::Command;
use std::rc::Rc;

use opencsd_c_api::perf::autofdo::AutoFdo;
use opencsd_c_api::perf::decode::{decode, BranchSample, SampleSink};
use opencsd_c_api::perf::dump::BlockMode;
use opencsd_c_api::perf::profile::Profile;
use opencsd_c_api::perf::spaces::Spaces;
use opencsd_c_api::perf::PerfData;

mod common;
use common::*;



struct Lines(Vec<String>);
impl SampleSink for Lines {
    fn branch(&mut self, b: &BranchSample) {
        self.0.push(format!(" {:>16x} => {:>16x}", b.from, b.to));
    }
}

const PATTERNS: &[&[u32]] = &[
    &[0x5400_0021],                                                   // b.ne .+4
    &[0xd503_201f, 0x5400_0021, 0x9400_0002, 0xd65f_03c0],             // nop, b.ne, bl, ret
    &[0xd503_201f, 0xd503_201f, 0x1400_0002, 0x5400_0041, 0xd61f_0000], // b, b.ne .+8, br x0
    &[0x5400_0021, 0xd65f_03c0, 0xd503_201f],
];

#[test]
fn branches_match_perf_script_on_synthetic_binaries() {
    let Some(shared) = shared_or_skip() else { return };
    let rec = shared.join("perf/etm_test_loop.perf.data");
    let pd = PerfData::open(&rec).unwrap();
    let meta = pd.cs_meta().unwrap();
    let build_id = hex("0c9a20bf9c009d0e4e8bbf9fad0300ae");
    let symfs = std::env::temp_dir().join(format!("ocsd-perf-symfs-{}", std::process::id()));
    let bin = symfs.join("data/local/tmp/etm_test_loop");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    let mut total = 0;
    for (n, words) in PATTERNS.iter().enumerate() {
        std::fs::write(&bin, synthetic_elf(&build_id, words)).unwrap();
        let out = Command::new("perf")
            .args(["script", "-F", "ip,addr", "--itrace=b", "--symfs"])
            .arg(&symfs)
            .arg("-i")
            .arg(&rec)
            .env("PAGER", "cat")
            .output()
            .expect("running perf (Debian package linux-perf; .ci/run installs it)");
        let want: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
        let lines = Rc::new(RefCell::new(Lines(Vec::new())));
        let spaces = Spaces::new(&pd, Some(&symfs));
        let (spaces, warnings) = decode(&pd, &meta, BlockMode::Auto, spaces, lines.clone(), 1).unwrap();
        assert!(spaces.binaries.iter().any(|b| b.found_at.as_deref() == Some(bin.as_path())), "{:?}", warnings);
        let got = lines.borrow().0.clone();
        assert!(!want.is_empty(), "pattern {}: perf printed no branches", n);
        assert_eq!(got, want, "pattern {}: branches differ from perf script's", n);
        total += got.len();
        // on several threads, each way of cutting blocks: the same samples
        // and warnings as serially (user-space code, read with each
        // source's thread)
        for mode in [BlockMode::Auto, BlockMode::ByAux, BlockMode::Whole] {
            let serial = Rc::new(RefCell::new(Lines(Vec::new())));
            let (_, sw) = decode(&pd, &meta, mode, Spaces::new(&pd, Some(&symfs)), serial.clone(), 1).unwrap();
            for threads in [2, 3] {
                let par = Rc::new(RefCell::new(Lines(Vec::new())));
                let (_, pw) = decode(&pd, &meta, mode, Spaces::new(&pd, Some(&symfs)), par.clone(), threads).unwrap();
                assert_eq!(par.borrow().0, serial.borrow().0, "pattern {}, {:?}, {} threads", n, mode, threads);
                assert_eq!(pw, sw);
            }
        }

        // the AutoFDO profile of the same decode: ranges inside the binary
        let a = Rc::new(RefCell::new(AutoFdo::default()));
        let (mut spaces, _) = decode(&pd, &meta, BlockMode::ByAux, Spaces::new(&pd, Some(&symfs)), a.clone(), 1).unwrap();
        let mut text = Vec::new();
        a.borrow_mut().finish(&mut spaces);
        a.borrow().write(&spaces, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("// build_id: 0x0c9a20bf9c009d0e4e8bbf9fad0300ae00000000\n// /data/local/tmp/etm_test_loop\n"), "{}", text);
        let nranges: usize = text.lines().next().unwrap().parse().unwrap();
        assert!(nranges > 0, "{}", text);
    }
    eprintln!("{} branch samples equal perf script's over {} code patterns", total, PATTERNS.len());
    let _ = std::fs::remove_dir_all(&symfs);
}

#[test]
fn missing_binaries_warn_once_each_and_decode_goes_on() {
    let Some(shared) = shared_dir() else { return };
    let pd = PerfData::open(&shared.join("perf/kernel.perf.data")).unwrap();
    let meta = pd.cs_meta().unwrap();
    let lines = Rc::new(RefCell::new(Lines(Vec::new())));
    let empty = std::env::temp_dir().join("ocsd-perf-empty-symfs");
    let (_, warnings) = decode(&pd, &meta, BlockMode::Auto, Spaces::new(&pd, Some(&empty)), lines.clone(), 1).unwrap();
    assert!(!warnings.is_empty());
    let mut seen = std::collections::HashSet::new();
    for w in &warnings {
        assert!(w.starts_with("warning: "), "{}", w);
        assert!(seen.insert(w.clone()), "warned twice: {}", w);
    }
}


#[test]
fn functions_and_flamegraph_from_symbols() {
    let Some(shared) = shared_dir() else { return };
    let rec = shared.join("perf/etm_test_loop.perf.data");
    let pd = PerfData::open(&rec).unwrap();
    let meta = pd.cs_meta().unwrap();
    let symfs = std::env::temp_dir().join(format!("ocsd-perf-syms-{}", std::process::id()));
    let bin = symfs.join("data/local/tmp/etm_test_loop");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    // nop, b.ne .+4, bl .+0x10, ret; functions split the text in two
    let words = [0xd503_201f, 0x5400_0021, 0x9400_0004, 0xd65f_03c0];
    let funcs = [("main", 0x1000, 0x80), ("loop_body", 0x1080, 0xf80)];
    std::fs::write(&bin, synthetic_elf_syms(&hex("0c9a20bf9c009d0e4e8bbf9fad0300ae"), &words, &funcs)).unwrap();
    let prof = Rc::new(RefCell::new(Profile::default()));
    let (_, _) = decode(&pd, &meta, BlockMode::Auto, Spaces::new(&pd, Some(&symfs)), prof.clone(), 1).unwrap();
    let p = prof.borrow();
    let functions = p.functions();
    let main = functions.get("main").expect("main executed");
    let body = functions.get("loop_body").expect("loop_body executed");
    assert!(main.instructions > 0 && body.instructions > 0);
    let total: u64 = functions.values().map(|f| f.instructions).sum();
    let folded = p.folded();
    let folded_total: u64 = folded.values().sum();
    assert_eq!(total, folded_total, "every instruction is in one stack");
    assert!(folded.keys().all(|k| k.starts_with("etm_test_loop;")), "{:?}", folded.keys());
    let mut table = Vec::new();
    p.write_functions(&mut table).unwrap();
    let table = String::from_utf8(table).unwrap();
    assert!(table.contains(" main ") && table.contains(" loop_body "), "{}", table);
    let mut svg = Vec::new();
    p.write_flamegraph("etm_test_loop", &mut svg).unwrap();
    let svg = String::from_utf8(svg).unwrap();
    assert!(svg.contains("loop_body") && svg.trim_end().ends_with("</svg>"));
    let _ = std::fs::remove_dir_all(&symfs);
}

/// The cs_etm event's attribute with `ETM_OPT_TS` (bit 28 of config) set:
/// perf would decode the recording timestamped.
fn with_timestamps_on(mut b: Vec<u8>) -> Vec<u8> {
    let rd = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let attr_size = rd(&b, 16) as usize;
    let (off, size) = (rd(&b, 24) as usize, rd(&b, 32) as usize);
    for at in (off..off + size).step_by(attr_size) {
        let typ = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        if typ >= 6 {
            let c = rd(&b, at + 8) | 1 << 28;
            b[at + 8..at + 16].copy_from_slice(&c.to_le_bytes());
        }
    }
    b
}

/// A recording made with timestamps on (`ETM_OPT_TS`) is decoded in
/// timestamp order; perf drops what a queue decodes before its first
/// timestamp. This trace has no timestamp packets: perf prints no branch
/// at all, and neither do we.
#[test]
fn timestamped_recording_without_timestamps_gives_what_perf_gives() {
    let Some(shared) = shared_dir() else { return };
    let symfs = std::env::temp_dir().join(format!("ocsd-perf-ts-{}", std::process::id()));
    let bin = symfs.join("data/local/tmp/etm_test_loop");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::write(&bin, synthetic_elf(&hex("0c9a20bf9c009d0e4e8bbf9fad0300ae"), PATTERNS[1])).unwrap();
    let run = |pd: &PerfData| {
        let lines = Rc::new(RefCell::new(Lines(Vec::new())));
        decode(pd, &pd.cs_meta().unwrap(), BlockMode::Auto, Spaces::new(pd, Some(&symfs)), lines.clone(), 1).unwrap();
        let v = lines.borrow().0.clone();
        v
    };
    for rec in ["etm_test_loop.perf.data", "ete_unformatted.perf.data"] {
        let bytes = std::fs::read(shared.join("perf").join(rec)).unwrap();
        let timeless = PerfData::from_bytes(bytes.clone()).unwrap();
        assert!(!timeless.timestamped());
        // (perf reads the unformatted recording as formatted: no branches)
        assert_eq!(run(&timeless).is_empty(), rec.starts_with("ete"), "{}", rec);
        let timed_bytes = with_timestamps_on(bytes);
        let timed = PerfData::from_bytes(timed_bytes.clone()).unwrap();
        assert!(timed.timestamped());
        let got = run(&timed);
        // perf on the same file and binary
        let file = symfs.join("timed.perf.data");
        std::fs::write(&file, &timed_bytes).unwrap();
        let out = Command::new("perf")
            .args(["script", "-F", "ip,addr", "--itrace=b", "--symfs"])
            .arg(&symfs)
            .arg("-i")
            .arg(&file)
            .env("PAGER", "cat")
            .output()
            .expect("running perf (Debian package linux-perf; .ci/run installs it)");
        let want: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
        assert_eq!(got, want, "{}", rec);
        assert!(got.is_empty(), "{}", rec);
    }
    let _ = std::fs::remove_dir_all(&symfs);
}

/// `ocsd perf --autofdo` finds the binary as simpleperf does (`--symdir`
/// by build ID, `--symfs` + file name, `--symfs` + path alike), and the
/// frame-formatted (ETMv4) and unformatted (ETE) recordings of the same
/// program give the same profile.
#[test]
fn autofdo_finds_binaries_as_simpleperf_and_formats_agree() {
    let Some(shared) = shared_or_skip() else { return };
    let dir = std::env::temp_dir().join(format!("ocsd-perf-symdir-{}", std::process::id()));
    let flat = dir.join("flat");
    let tree = dir.join("tree/data/local/tmp");
    std::fs::create_dir_all(&flat).unwrap();
    std::fs::create_dir_all(&tree).unwrap();
    // a loop: b.ne back over nops, as in the recorded program's shape
    let elf = synthetic_elf(&hex("0c9a20bf9c009d0e4e8bbf9fad0300ae"), PATTERNS[1]);
    std::fs::write(flat.join("etm_test_loop"), &elf).unwrap();
    std::fs::write(tree.join("etm_test_loop"), &elf).unwrap();
    let run = |rec: &str, how: &[&std::ffi::OsStr]| -> String {
        let out = dir.join("out.txt");
        let st = Command::new(env!("CARGO_BIN_EXE_ocsd"))
            .arg("perf")
            .arg(shared.join("perf").join(rec))
            .args(how)
            .arg("--autofdo")
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success());
        std::fs::read_to_string(&out).unwrap()
    };
    let by_path = run("etm_test_loop.perf.data", &["--symfs".as_ref(), dir.join("tree").as_os_str()]);
    assert!(by_path.ends_with("// build_id: 0x0c9a20bf9c009d0e4e8bbf9fad0300ae00000000\n// /data/local/tmp/etm_test_loop\n\n"), "{}", by_path);
    assert!(by_path.lines().next().unwrap().parse::<usize>().unwrap() > 0, "{}", by_path);
    assert_eq!(run("etm_test_loop.perf.data", &["--symfs".as_ref(), flat.as_os_str()]), by_path);
    assert_eq!(run("etm_test_loop.perf.data", &["--symdir".as_ref(), dir.as_os_str()]), by_path);
    assert_eq!(run("ete_unformatted.perf.data", &["--symdir".as_ref(), dir.as_os_str()]), by_path);
    // simpleperf decodes the trace as it comes: timestamps on or off, the
    // profile is the same (nothing dropped before a first timestamp)
    let timed = dir.join("timed.perf.data");
    std::fs::write(&timed, with_timestamps_on(std::fs::read(shared.join("perf/etm_test_loop.perf.data")).unwrap())).unwrap();
    assert_eq!(run(timed.to_str().unwrap(), &["--symdir".as_ref(), dir.as_os_str()]), by_path);
    let _ = std::fs::remove_dir_all(&dir);
}

/// simpleperf's FEAT_FILE2 table as read here equals the crate's full
/// decode of it (the kernel recording has one).
#[test]
fn file2_table_matches_the_crate() {
    let Some(shared) = shared_dir() else { return };
    let bytes = std::fs::read(shared.join("perf/kernel.perf.data")).unwrap();
    let pd = PerfData::from_bytes(bytes.clone()).unwrap();
    let f = linux_perf_data::PerfFileReader::parse_file(std::io::Cursor::new(&bytes[..])).unwrap().perf_file;
    let files = f.simpleperf_symbol_tables().unwrap().unwrap();
    assert!(!files.is_empty());
    assert_eq!(pd.simpleperf_files.len(), files.len());
    for x in files {
        let ours = *pd.simpleperf_files.get(&x.path).unwrap_or_else(|| panic!("{} missing", x.path));
        assert_eq!(ours.min_vaddr, x.min_vaddr, "{}", x.path);
        let off = match x.type_specific_msg {
            Some(linux_perf_data::SimpleperfTypeSpecificInfo::ElfFile(e)) => e.file_offset_of_min_vaddr,
            Some(linux_perf_data::SimpleperfTypeSpecificInfo::KernelModule(k)) => k.memory_offset_of_min_vaddr,
            _ => 0,
        };
        assert_eq!(ours.offset_of_min_vaddr, off, "{}", x.path);
    }
}
