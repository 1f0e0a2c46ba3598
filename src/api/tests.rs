//! API tests on hand-built trace and memory.

use super::*;
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
    t.extend(std::iter::repeat(0xf7).take(atoms));
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
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hex_addresses_in_json() {
    for v in [0u64, 1, 0xf, 0x10, 0x1000, 0x7f8e58fd80, u64::MAX] {
        let j = serde_json::to_string(&ElementKind::AddrNotAccessible { address: v, mem_space: 0 }).unwrap();
        assert!(j.contains(&format!("\"address\":\"0x{v:x}\"")), "{j}");
    }
}
