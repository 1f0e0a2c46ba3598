//! API tests on hand-built trace and memory.

use super::*;
use crate::abi::gen_elem::*;
use crate::mem::elf::testelf;

const NOP: u32 = 0xD503_201F;
/// `B .-8`
const B_BACK_8: u32 = 0x17FF_FFFE;

fn code() -> Vec<u8> {
    [NOP, NOP, B_BACK_8].iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// ETMv4, one source: A-Sync, Trace Info, Trace On, Address+Context at
/// `addr` (AArch64 EL1 NS, context ID 0x42 when `cid`), then E atoms.
fn trace(addr: u64, atoms: usize) -> Vec<u8> {
    let mut t = vec![0u8; 11];
    t.extend([0x80, 0x01, 0x00, 0x04, 0x85]);
    t.push(((addr >> 2) & 0x7f) as u8);
    t.push(((addr >> 9) & 0x7f) as u8);
    for i in 2..8 {
        t.push((addr >> (8 * i)) as u8);
    }
    t.push(0x31);
    t.extend(std::iter::repeat_n(0xf7, atoms));
    t
}

const REGS: [(&str, u32); 5] =
    [("TRCIDR0", 0x28000EA1), ("TRCIDR1", 0x4100F403), ("TRCIDR2", 0x00000488), ("TRCCONFIGR", 0xC1), ("TRCTRACEIDR", 0x10)];

fn builder() -> DecoderBuilder {
    Decoder::builder().single_source().source_from_registers(Protocol::EtmV4, "Cortex-A57", &REGS).unwrap()
}

fn texts(dec: &mut Decoder, t: &[u8]) -> Vec<String> {
    dec.decode(t).map(|e| {
        let mut s = String::new();
        e.write_lister_line(&mut s);
        s
    }).collect()
}

#[test]
fn iterator_gives_typed_elements() {
    let mut dec = builder().memory(MemoryImage::bytes(0x1000, &code())).build().unwrap();
    let elems: Vec<Element> = dec.decode(&trace(0x1000, 2)[..]).collect();
    let kinds: Vec<&ElementKind> = elems.iter().map(|e| &e.kind).collect();
    assert!(matches!(kinds[0], ElementKind::NoSync { reason: UnsyncReason::InitDecoder }));
    assert!(matches!(kinds[1], ElementKind::TraceOn { reason: TraceOnReason::Normal }));
    match kinds[2] {
        ElementKind::PeContext(c) => {
            assert_eq!((c.isa, c.exception_level, c.security, c.aarch64), (Isa::A64, Some(1), Security::NonSecure, true));
        }
        k => panic!("{k:?}"),
    }
    let ranges: Vec<&InstrRange> = kinds.iter().filter_map(|k| if let ElementKind::InstrRange(r) = k { Some(r) } else { None }).collect();
    assert_eq!(ranges.len(), 2);
    for r in ranges {
        assert_eq!((r.start, r.end, r.instr_count, r.isa), (0x1000, 0x100c, 3, Isa::A64));
        assert_eq!((r.last_instr_type, r.last_instr_executed, r.last_instr_addr()), (InstrType::Branch, true, 0x1008));
    }
    assert!(matches!(kinds.last().unwrap(), ElementKind::EndOfTrace { .. }));
    assert!(elems.iter().all(|e| e.trace_id == 0x10));
    assert_eq!(elems[3].opencsd_text(), "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x1000:[0x100c] num_i(3) last_sz(4) (ISA=A64) E BR  )");
}

#[test]
fn callback_and_iterator_agree_and_sessions_restart() {
    let t = trace(0x1000, 3);
    let mut dec = builder().memory(MemoryImage::bytes(0x1000, &code())).count_packets(true).build().unwrap();
    let a = texts(&mut dec, &t);
    let mut b = Vec::new();
    let n = dec.decode_each(&t[..], |e| {
        let mut s = String::new();
        e.write_lister_line(&mut s);
        b.push(s);
    });
    assert_eq!(n.unwrap(), t.len() as u64);
    // the second session starts from a reset decoder
    assert!(a[0].contains("[init-decoder]") && b[0].contains("[reset-decoder]"), "{} / {}", a[0], b[0]);
    assert_eq!(a[1..], b[1..]);
    assert_eq!(dec.packets(), Some(2 * (4 + 3)));
}

#[test]
fn memory_from_elf_closure_and_spaces() {
    // the same code from an ELF (64- and 32-bit), relocated, from a closure
    let elf64 = testelf::build(true, &[(0x1000, 5, &code())]);
    let elf32 = testelf::build(false, &[(0x8000, 5, &code())]);
    let want = {
        let mut d = builder().memory(MemoryImage::bytes(0x1000, &code())).build().unwrap();
        texts(&mut d, &trace(0x1000, 3))
    };
    let mut d = builder().memory(MemoryImage::elf_bytes("a.elf", elf64, None).unwrap()).build().unwrap();
    assert_eq!(texts(&mut d, &trace(0x1000, 3)), want);
    let mut d = builder().memory(MemoryImage::elf_bytes("b.elf", elf32, Some(0x1000)).unwrap()).build().unwrap();
    assert_eq!(texts(&mut d, &trace(0x1000, 3)), want);
    let c = code();
    let img = MemoryImage::callback(0x1000, 0x1fff, move |addr, buf| {
        let off = (addr - 0x1000) as usize;
        if off >= c.len() {
            return 0;
        }
        let n = buf.len().min(c.len() - off);
        buf[..n].copy_from_slice(&c[off..off + n]);
        n
    });
    let mut d = builder().memory(img).build().unwrap();
    assert_eq!(texts(&mut d, &trace(0x1000, 3)), want);
    // code only in EL2: EL1 fetches find nothing
    let mut d = builder().memory(MemoryImage::bytes(0x1000, &code()).in_space(AddressSpace::EL2)).build().unwrap();
    let got: Vec<Element> = d.decode(&trace(0x1000, 1)[..]).collect();
    assert!(got.iter().any(|e| matches!(e.kind, ElementKind::AddrNotAccessible { address: 0x1000, .. })));
    assert!(!got.iter().any(|e| matches!(e.kind, ElementKind::InstrRange(_))));
}

#[test]
fn bad_configuration_and_memory_are_errors() {
    let e = Decoder::builder().source_from_registers(Protocol::EtmV4, "Cortex-Z9", &REGS).err().unwrap();
    assert!(e.to_string().contains("Cortex-Z9"), "{e}");
    let e = Decoder::builder().source_from_registers(Protocol::EtmV4, "Cortex-A53", &REGS[..2]).err().unwrap();
    assert!(e.to_string().contains("TRCIDR2"), "{e}");
    let bad_id = [("TRCIDR0", 0x28000EA1), ("TRCIDR2", 0x488), ("TRCCONFIGR", 0xC1), ("TRCTRACEIDR", 0x7f)];
    let e = Decoder::builder().source_from_registers(Protocol::EtmV4, "Cortex-A53", &bad_id).unwrap().build().err().unwrap();
    assert!(e.to_string().contains("0x7f"), "{e}");
    assert!(matches!(Decoder::builder().build(), Err(Error::Usage(_))));
    let e = builder()
        .memory(MemoryImage::bytes(0x1000, &code()))
        .memory(MemoryImage::bytes(0x1004, &code()))
        .build()
        .err()
        .unwrap();
    assert!(e.to_string().contains("overlaps"), "{e}");
    assert!(matches!(MemoryImage::elf_bytes("x", b"not an elf".to_vec(), None), Err(Error::Elf(_))));
    assert!(matches!(MemoryImage::elf_file("/nonexistent/x.elf"), Err(Error::Elf(_))));
}

#[test]
fn elements_serialize_with_stable_names() {
    let mut dec = builder().memory(MemoryImage::bytes(0x1000, &code())).build().unwrap();
    let elems: Vec<Element> = dec.decode(&trace(0x1000, 1)[..]).collect();
    let json: Vec<String> = elems.iter().map(|e| serde_json::to_string(e).unwrap()).collect();
    assert_eq!(json[0], r#"{"index":0,"trace_id":16,"type":"no_sync","reason":"init_decoder","cycle_count":null}"#);
    assert_eq!(
        json[2],
        r#"{"index":15,"trace_id":16,"type":"pe_context","isa":"a64","exception_level":1,"security":"non_secure","aarch64":true,"vmid":null,"context_id":null,"cycle_count":null}"#
    );
    assert_eq!(
        json[3],
        r#"{"index":25,"trace_id":16,"type":"instr_range","start":"0x1000","end":"0x100c","isa":"a64","instr_count":3,"last_instr_type":"branch","last_instr_subtype":"none","last_instr_executed":true,"last_instr_size":4,"last_instr_conditional":false,"cycle_count":null}"#
    );
}

#[test]
fn snapshot_dump_may_be_an_elf() {
    let dir = std::env::temp_dir().join(format!("ocsd-api-snap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("snapshot.ini"), "[snapshot]\nversion=1.0\n[device_list]\ndevice0=cpu_0.ini\ndevice1=etm_0.ini\n[trace]\nmetadata=trace.ini\n").unwrap();
    std::fs::write(dir.join("cpu_0.ini"), "[device]\nname=cpu_0\nclass=core\ntype=Cortex-A57\n[regs]\nPC=0\n[dump1]\nfile=code.elf\naddress=0x0\n").unwrap();
    let regs: String = REGS.iter().map(|(n, v)| format!("{n}=0x{v:x}\n")).collect();
    std::fs::write(dir.join("etm_0.ini"), format!("[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n[regs]\n{regs}")).unwrap();
    std::fs::write(
        dir.join("trace.ini"),
        "[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=ETB_0\nfile=trace.bin\nformat=source_data\n[source_buffers]\nETM_0=ETB_0\n[core_trace_sources]\ncpu_0=ETM_0\n",
    )
    .unwrap();
    std::fs::write(dir.join("code.elf"), testelf::build(true, &[(0x1000, 5, &code())])).unwrap();
    std::fs::write(dir.join("trace.bin"), trace(0x1000, 2)).unwrap();
    let mut s = Decoder::from_snapshot(&dir, None).unwrap();
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let t = std::fs::read(&s.trace_file).unwrap();
    let n = s.decoder.decode(&t[..]).filter(|e| matches!(e.kind, ElementKind::InstrRange(_))).count();
    assert_eq!(n, 2);
    assert!(s.decoder.mapped_files()[0].elf);
    // ELF's magic number on what is not an ELF file: mapped as raw bytes,
    // with a warning
    let mut bad = b"\x7fELF".to_vec();
    bad.extend(std::iter::repeat_n(0xee, 60));
    std::fs::write(dir.join("code.elf"), &bad).unwrap();
    let s = Decoder::from_snapshot(&dir, None).unwrap();
    assert!(s.warnings.iter().any(|w| w.contains("mapped as raw bytes")), "{:?}", s.warnings);
    let f = &s.decoder.mapped_files()[0];
    assert!(!f.elf);
    assert_eq!(*f.data().unwrap(), bad);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hex_addresses_in_json() {
    for v in [0u64, 1, 0xf, 0x10, 0x1000, 0x7f8e58fd80, u64::MAX] {
        let j = serde_json::to_string(&ElementKind::AddrNotAccessible { address: v, mem_space: 0 }).unwrap();
        assert!(j.contains(&format!("\"address\":\"0x{v:x}\"")), "{j}");
    }
}

/// ETMv4 Address+Context packet: 64-bit address `addr`, AArch64 EL1 NS,
/// with the VMID (8 bits) and context ID (32 bits) when given.
fn addr_ctxt(addr: u64, vmid: Option<u8>, cid: Option<u32>) -> Vec<u8> {
    let mut t = vec![0x85, ((addr >> 2) & 0x7f) as u8, ((addr >> 9) & 0x7f) as u8];
    for i in 2..8 {
        t.push((addr >> (8 * i)) as u8);
    }
    t.push(0x31 | if vmid.is_some() { 0x40 } else { 0 } | if cid.is_some() { 0x80 } else { 0 });
    t.extend(vmid);
    t.extend(cid.map(u32::to_le_bytes).into_iter().flatten());
    t
}

/// A-Sync, Trace Info, Trace On, then for each (VMID, context ID, atoms):
/// an Address+Context packet at 0x1000 and that many E atoms.
fn context_trace(parts: &[(Option<u8>, Option<u32>, usize)]) -> Vec<u8> {
    let mut t = vec![0u8; 11];
    t.extend([0x80, 0x01, 0x00, 0x04]);
    for &(vmid, cid, atoms) in parts {
        t.extend(addr_ctxt(0x1000, vmid, cid));
        t.extend(std::iter::repeat_n(0xf7, atoms));
    }
    t
}

/// A second "process" at the same address: NOP; B .-4 (2 instructions a loop).
fn code2() -> Vec<u8> {
    [NOP, 0x17FF_FFFF].iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn closure_image(code: Vec<u8>) -> MemoryImage {
    MemoryImage::callback(0x1000, 0x1fff, move |addr, buf| {
        let off = (addr - 0x1000) as usize;
        if off >= code.len() {
            return 0;
        }
        let n = buf.len().min(code.len() - off);
        buf[..n].copy_from_slice(&code[off..off + n]);
        n
    })
}

/// (instructions per range, or 0 for memory not accessible) in order, and
/// the context IDs of the PE_CONTEXT elements.
fn ranges_and_contexts(dec: &mut Decoder, t: &[u8]) -> (Vec<u32>, Vec<Option<u32>>) {
    let mut ranges = Vec::new();
    let mut ctxs = Vec::new();
    for e in dec.decode(t) {
        match e.kind {
            ElementKind::InstrRange(r) => {
                assert_eq!(r.start, 0x1000);
                assert_eq!(r.end, 0x1000 + 4 * r.instr_count as u64);
                ranges.push(r.instr_count);
            }
            ElementKind::AddrNotAccessible { address, .. } => {
                assert_eq!(address, 0x1000);
                ranges.push(0);
            }
            ElementKind::PeContext(c) => ctxs.push(c.context_id),
            _ => {}
        }
    }
    (ranges, ctxs)
}

#[test]
fn process_images_selected_by_context_id() {
    // process 1 runs, then process 2 at the same addresses, then 1 again,
    // then a process with no image (nothing may be served from the others)
    let t = context_trace(&[(None, Some(1), 2), (None, Some(2), 3), (None, Some(1), 1), (None, Some(3), 1)]);
    let want = vec![3, 3, 2, 2, 2, 3, 0];
    type Make = fn(Vec<u8>) -> MemoryImage;
    let bytes: Make = |c| MemoryImage::bytes(0x1000, &c);
    // files and buffers are read directly; callbacks through the page cache
    for (name, make1, make2) in [("bytes", bytes, bytes), ("callbacks", closure_image as Make, closure_image as Make), ("mixed", bytes, closure_image as Make)] {
        let mut dec = builder()
            .memory(make1(code()).for_context(ContextId(1)))
            .memory(make2(code2()).for_context(ContextId(2)))
            // an image for every context elsewhere does not get in the way
            .memory(MemoryImage::bytes(0x8000, &code()))
            .build()
            .unwrap();
        let (ranges, ctxs) = ranges_and_contexts(&mut dec, &t);
        assert_eq!(ranges, want, "{name}");
        assert_eq!(ctxs, vec![Some(1), Some(2), Some(1), Some(3)], "{name}");
        // a second session gives the same (nothing cached from the first)
        assert_eq!(ranges_and_contexts(&mut dec, &t).0, want, "{name}, again");
    }
    // an image for any context overlapping a process image is refused;
    // images of two processes at the same address are not
    let e = builder().memory(MemoryImage::bytes(0x1000, &code())).memory(MemoryImage::bytes(0x1000, &code2()).for_context(ContextId(2))).build();
    assert!(e.err().unwrap().to_string().contains("overlaps"));
    let e = builder().memory(MemoryImage::bytes(0x1000, &code()).for_context(ContextId(2))).memory(MemoryImage::bytes(0x1004, &code2()).for_context(ContextId(2))).build();
    assert!(e.err().unwrap().to_string().contains("overlaps"));
}

#[test]
fn context_images_need_the_context_traced() {
    // no context ID in the trace: a process image is never read, an image
    // for any context is
    let t = context_trace(&[(None, None, 1)]);
    let mut dec = builder().memory(MemoryImage::bytes(0x1000, &code()).for_context(ContextId(1))).build().unwrap();
    assert_eq!(ranges_and_contexts(&mut dec, &t).0, vec![0]);
    let mut dec = builder().memory(MemoryImage::bytes(0x1000, &code())).build().unwrap();
    assert_eq!(ranges_and_contexts(&mut dec, &t).0, vec![3]);
    // a context packet without a context ID keeps the last one
    let t = context_trace(&[(None, Some(2), 1), (None, None, 1)]);
    let mut dec = builder().memory(MemoryImage::bytes(0x1000, &code2()).for_context(ContextId(2))).build().unwrap();
    assert_eq!(ranges_and_contexts(&mut dec, &t).0, vec![2, 2]);
}

#[test]
fn guest_images_selected_by_vmid_and_exception_level() {
    let t = context_trace(&[(Some(5), Some(1), 1), (Some(6), Some(1), 1), (Some(5), Some(1), 1)]);
    let mut dec = builder()
        .memory(MemoryImage::bytes(0x1000, &code()).for_vmid(Vmid(5)))
        .memory(MemoryImage::bytes(0x1000, &code2()).for_vmid(Vmid(6)).for_context(ContextId(1)))
        .build()
        .unwrap();
    assert_eq!(ranges_and_contexts(&mut dec, &t).0, vec![3, 2, 3]);
    // the trace runs at EL1 non-secure: an EL2 image at the same address is
    // not read, the EL1 one is
    let mut dec = builder()
        .memory(MemoryImage::bytes(0x1000, &code2()).in_space(AddressSpace::EL2))
        .memory(MemoryImage::bytes(0x1000, &code()).in_space(AddressSpace::EL1N).for_context(ContextId(1)))
        .build()
        .unwrap();
    assert_eq!(ranges_and_contexts(&mut dec, &t).0, vec![3, 3, 3]);
}

/// A small deterministic generator for the element fields below.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A value of interesting size: small, 32-bit or full 64-bit.
    fn val(&mut self) -> u64 {
        let v = self.next();
        match self.next() % 4 {
            0 => v % 16,
            1 => v & 0xffff_ffff,
            2 => 0,
            _ => v,
        }
    }
}

fn json_of(e: &Element) -> String {
    let mut s = String::new();
    e.write_json(&mut s);
    let mut b = LineBuf::new();
    e.write_json(&mut b);
    assert_eq!(s.as_bytes(), b.as_bytes(), "String and LineBuf give the same JSON");
    s
}

/// `Element::write_json` writes what `serde_json` makes of the element,
/// for every element type (and types out of range) with random fields.
#[test]
// (each field drawn from the generator in turn)
#[allow(clippy::field_reassign_with_default)]
fn json_writer_matches_serde_for_every_kind() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let payload_bytes = [0x81u8, 0x92, 0xa3, 0xb4, 0xc5, 0xd6, 0xe7, 0xf8];
    let mut seen = HashSet::new();
    for t in -2..=22 {
        for _ in 0..400 {
            let mut raw = ocsd_generic_trace_elem::default();
            raw.elem_type = t;
            raw.isa = (rng.next() % 9) as ocsd_isa;
            raw.st_addr = rng.val();
            raw.en_addr = rng.val();
            raw.context.security_level = (rng.next() % 5) as ocsd_sec_level;
            raw.context.exception_level = (rng.next() % 6) as ocsd_ex_level - 1;
            raw.context.context_id = rng.val() as u32;
            raw.context.vmid = rng.val() as u32;
            raw.context.flags = rng.next() as u32;
            raw.timestamp = rng.val();
            raw.cycle_count = rng.val() as u32;
            raw.last_i_type = (rng.next() % 9) as ocsd_instr_type;
            raw.last_i_subtype = (rng.next() % 6) as ocsd_instr_subtype;
            raw.flag_bits = rng.next() as u32;
            raw.payload = ocsd_gen_elem_payload { raw: [rng.val(), rng.val()] };
            if t == OCSD_GEN_TRC_ELEM_SWTRACE {
                let mut i = raw.sw_trace_info();
                i.set_swt_payload_pkt_bitsize([0, 4, 8, 16, 32, 64][(rng.next() % 6) as usize]);
                raw.set_sw_trace_info(i);
                if rng.next().is_multiple_of(2) {
                    raw.ptr_extended_data = payload_bytes.as_ptr() as *const std::os::raw::c_void;
                }
            }
            let e = Element::from_raw(rng.val(), rng.next() as u8, &raw);
            let want = serde_json::to_string(&e).unwrap();
            assert_eq!(json_of(&e), want, "{e:?}");
            seen.insert(want.split('"').nth(7).unwrap_or_default().to_string());
        }
    }
    // every variant came up
    assert_eq!(seen.len(), 20, "{seen:?}");
}

/// A conformance snapshot's folder (None: the reference data is absent,
/// and the test says it is skipped).
fn snapshot_dir(test: &str, name: &str) -> Option<PathBuf> {
    Some(crate::test_shared::shared_dir(test)?.join("conformance/snapshots").join(name))
}

/// On real trace: the JSON of every element is serde's, and the lister
/// lines of [`ListerLines`] are those of [`Element::write_lister_line`].
#[test]
fn json_and_lister_lines_match_on_snapshots() {
    let mut checked = 0;
    if crate::test_shared::shared_dir("json and lister lines on snapshots").is_none() {
        return;
    }
    for name in ["juno_r1_1", "TC2", "stm_only", "itm_only_raw", "armv8_1m_branches", "a57_single_step", "Snowball", "tc2-ptm-rstk-t32"] {
        let Some(dir) = snapshot_dir("json and lister lines on snapshots", name).filter(|d| d.is_dir()) else { continue };
        let mut s = Decoder::from_snapshot(&dir, None).unwrap();
        let trace = std::fs::read(&s.trace_file).unwrap();
        let mut lines = ListerLines::new();
        let mut buf = LineBuf::new();
        // and the lines written one after another
        let mut all_lines = ListerLines::new();
        let mut all = LineBuf::new();
        let mut text = String::new();
        let mut want = String::new();
        let mut n = 0;
        s.decoder
            .decode_each(&trace[..], |e| {
                assert_eq!(json_of(e), serde_json::to_string(e).unwrap(), "{name}: {e:?}");
                buf.clear();
                lines.write(e, &mut buf);
                text.clear();
                e.write_lister_line(&mut text);
                text.push('\n');
                assert_eq!(std::str::from_utf8(buf.as_bytes()).unwrap(), text, "{name}");
                want.push_str(&text);
                all_lines.write(e, &mut all);
                n += 1;
            })
            .unwrap();
        assert_eq!(std::str::from_utf8(all.as_bytes()).unwrap(), want, "{name}");
        assert!(n > 0, "{name}");
        checked += 1;
    }
    assert!(checked >= 4, "snapshots not found under ../shared/conformance/snapshots");
}

/// `decode_text` writes the lines and JSON of the elements that
/// `decode` gives, in pieces of about the size asked for, with the counts.
#[test]
fn decode_text_gives_the_lines_of_the_elements() {
    let mut checked = 0;
    if crate::test_shared::shared_dir("decode_text on snapshots").is_none() {
        return;
    }
    for name in ["juno_r1_1", "stm_only", "itm_only_raw", "tc2-ptm-rstk-t32", "a57_single_step"] {
        let Some(dir) = snapshot_dir("decode_text on snapshots", name).filter(|d| d.is_dir()) else { continue };
        let trace = std::fs::read(Decoder::from_snapshot(&dir, None).unwrap().trace_file).unwrap();
        let mut want_text = String::new();
        let mut want_json = String::new();
        let (mut elements, mut instructions, mut by_type) = (0u64, 0u64, [0u64; TEXT_COUNT_TYPES]);
        let mut dec = Decoder::from_snapshot(&dir, None).unwrap().decoder;
        let bytes = dec
            .decode_each(&trace[..], |e| {
                e.write_lister_line(&mut want_text);
                want_text.push('\n');
                want_json.push_str(&serde_json::to_string(e).unwrap());
                want_json.push('\n');
                elements += 1;
                by_type[e.raw_type() as usize] += 1;
                if let ElementKind::InstrRange(r) = e.kind {
                    instructions += r.instr_count as u64;
                }
            })
            .unwrap();
        // a second session, after the first
        let second = dec.decode(&trace[..]).count();
        assert!(second > 0);
        for (format, want) in [(TextFormat::Lister, &want_text), (TextFormat::Json, &want_json)] {
            for chunk in [1, 1000, 1 << 16] {
                let mut dec = Decoder::from_snapshot(&dir, None).unwrap().decoder;
                let mut got = Vec::new();
                let mut pieces = Vec::new();
                let sum = dec.decode_text(&trace[..], format, chunk, |t| {
                    assert!(t.ends_with(b"\n"));
                    got.extend_from_slice(t);
                    pieces.push(t.len());
                    true
                });
                assert!(sum.error.is_none(), "{name}");
                assert_eq!(String::from_utf8(got).unwrap(), *want, "{name} {format:?} {chunk}");
                assert_eq!((sum.bytes, sum.elements, sum.instructions, sum.by_type), (bytes, elements, instructions, by_type), "{name}");
                // every piece but the last holds at least `chunk` bytes
                pieces.pop();
                assert!(pieces.iter().all(|&n| n >= chunk), "{name}");
                // the decoder goes on to give its elements as before
                assert_eq!(dec.decode(&trace[..]).count(), second, "{name}");
            }
        }
        // stopping at the first piece
        let mut dec = Decoder::from_snapshot(&dir, None).unwrap().decoder;
        let mut calls = 0;
        let sum = dec.decode_text(&trace[..], TextFormat::Lister, 1, |_| {
            calls += 1;
            false
        });
        assert_eq!(calls, 1, "{name}");
        assert!(sum.elements < elements || elements <= 1, "{name}");
        checked += 1;
    }
    assert!(checked >= 3);
}

#[test]
fn large_dump_is_read_as_the_decode_needs_it() {
    // a dump of a few MiB with the code in its middle: mapped
    // without reading it, decoded as the same bytes in memory, and only
    // the pages the decode touched read
    let at = 3 << 20;
    let mut data: Vec<u8> = (0..(5usize << 20)).map(|i| (i * 13 + i / 4099) as u8).collect();
    data[at..at + 12].copy_from_slice(&code());
    let p = std::env::temp_dir().join(format!("ocsd-api-large-dump-{}", std::process::id()));
    std::fs::write(&p, &data).unwrap();
    let base = 0x1000_0000u64;
    let addr = base + at as u64;
    let want = {
        let mut d = builder().memory(MemoryImage::bytes(addr, &code())).build().unwrap();
        texts(&mut d, &trace(addr, 3))
    };
    let mut d = builder().memory(MemoryImage::dump_file(p.to_str().unwrap(), base).unwrap()).build().unwrap();
    assert_eq!(d.mapped_files()[0].bytes.chunks_loaded(), 0);
    assert_eq!(texts(&mut d, &trace(addr, 3)), want);
    let loaded = d.mapped_files()[0].bytes.chunks_loaded();
    assert!((1..=2).contains(&loaded), "{loaded} pages read");
    // the whole file for profiles, the bytes the decode read among them
    assert_eq!(*d.mapped_files()[0].data().unwrap(), data);
    // a region past the end is an error; a small dump is read as a large
    // one is, from the file opened when it was mapped (still read once
    // unlinked)
    assert!(MemoryImage::dump_file_region(p.to_str().unwrap(), base, 5 << 20, None).is_err());
    std::fs::write(&p, code()).unwrap();
    let d = builder().memory(MemoryImage::dump_file(p.to_str().unwrap(), addr).unwrap()).build().unwrap();
    std::fs::remove_file(&p).unwrap();
    assert_eq!(*d.mapped_files()[0].data().unwrap(), code());
    assert!(MemoryImage::dump_file(p.to_str().unwrap(), addr).is_err());
}
