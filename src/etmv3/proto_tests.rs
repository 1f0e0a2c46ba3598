//! Hand-built byte sequences for every ETMv3 packet type, and PTM packets;
//! decode of simple sequences; random input must never panic.

use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::error::NullLog;
use crate::common::*;
use crate::etmv3::*;
use crate::ptm::{ocsd_ptm_pkt, PtmDecoder, PtmPktProc};

pub(crate) struct Collect<P> {
    pub pkts: Vec<(ocsd_trc_index_t, P, Vec<u8>)>,
    pub log: Vec<String>,
}
struct Log(Vec<String>);
impl ErrorLog for Log {
    fn log_error(&mut self, c: &str, e: &OcsdError) {
        self.0.push(format!("{}: {}", c, e.details()));
    }
    fn log_message(&mut self, _: &str, _: ocsd_err_severity_t, _: &str) {}
}
struct Out<'a, P> {
    c: &'a mut Collect<P>,
    log: Log,
}
impl<P: Copy + 'static + TracePacket> PacketOut<P> for Out<'_, P> {
    fn packet(&mut self, i: ocsd_trc_index_t, p: &P, raw: &[u8]) -> ocsd_datapath_resp_t {
        self.c.pkts.push((i, *p, raw.to_vec()));
        OCSD_RESP_CONT
    }
    fn logger(&mut self) -> &mut dyn ErrorLog {
        &mut self.log
    }
}

fn run<PP: PacketProcessor>(pp: &mut PP, data: &[u8]) -> Collect<PP::Packet>
where
    PP::Packet: Copy,
{
    let mut c = Collect { pkts: vec![], log: vec![] };
    let mut out = Out { c: &mut c, log: Log(vec![]) };
    let mut idx = 0usize;
    while idx < data.len() {
        let (_, n) = pp.process_data(idx as u32, &data[idx..], &mut out);
        if n == 0 {
            break;
        }
        idx += n;
    }
    pp.eot(&mut out);
    let log = std::mem::take(&mut out.log.0);
    c.log = log;
    c
}

fn text<P: TracePacket>(p: &P) -> String {
    let mut s = String::new();
    p.write_str(&mut s);
    s
}

const ASYNC: [u8; 6] = [0, 0, 0, 0, 0, 0x80];

fn etm_cfg(ctrl: u32, idr: u32, ccer: u32) -> ocsd_etmv3_cfg {
    ocsd_etmv3_cfg { reg_idr: idr, reg_ctrl: ctrl, reg_ccer: ccer, reg_trc_id: 0x10, arch_ver: ARCH_V7, core_prof: profile_CortexA }
}

fn etm_texts(cfg: &ocsd_etmv3_cfg, body: &[u8]) -> Vec<String> {
    let mut data = ASYNC.to_vec();
    data.extend_from_slice(body);
    let mut pp = EtmV3PktProc::new(cfg);
    run(&mut pp, &data).pkts.iter().map(|(_, p, _)| text(p)).collect()
}

#[test]
fn etmv3_sync_and_notsync() {
    let cfg = etm_cfg(0, 0x410C_F250, 0);
    let mut pp = EtmV3PktProc::new(&cfg);
    let c = run(&mut pp, &[0x55, 0x66, 0, 0, 0, 0, 0, 0x80, 0x0C]);
    let t: Vec<_> = c.pkts.iter().map(|(i, p, r)| (*i, text(p), r.len())).collect();
    assert_eq!(t[0], (0, "NOTSYNC : Trace Stream not synchronised".to_string(), 2));
    assert_eq!(t[1], (2, "A_SYNC : Alignment Synchronisation.".to_string(), 6));
    assert_eq!(t[2], (8, "TRIGGER : Trace Trigger Event.".to_string(), 1));
}

#[test]
fn etmv3_every_instruction_packet() {
    // cycle accurate, 4-byte context ID, 64-bit timestamps, v3.5
    let cfg = etm_cfg(0x1000 | (3 << 14), 0x410C_F250, 0x2000_0000);
    let t = etm_texts(
        &cfg,
        &[
            0x08, 0x01, 0x02, 0x03, 0x04, 0x00, 0x5d, 0x11, 0x02, 0xc0, // I-Sync, ctxt 0x04030201
            0x70, 0x8f, 0x3c, 0x01, 0x02, 0x03, 0x04, 0x21, 0x99, 0xf6, 0x04, 0xc0, // I-Sync + CC
            0xb7, 0xfd, 0xd6, 0x01, // branch
            0x84, 0xbc, 0x82, 0x92, 0xa0, // P-headers (cycle accurate)
            0x04, 0x05, // cycle count
            0x6e, 0x78, 0x56, 0x34, 0x12, // context ID
            0x3c, 0x41, // VMID 'A'
            0x76, 0x7e, 0x66, // exception exit, entry, ignore
            0x42, 0xbd, 0x9a, 0xc3, 0xce, 0xaf, 0x90, 0x80, 0x80, 0x00, // timestamp
        ],
    );
    assert_eq!(t[1], "I_SYNC : Instruction Packet synchronisation.; (Periodic); Addr=0xc002115c; S;  CtxtID=4030201; ISA=Thumb2; ");
    assert_eq!(t[2], "I_SYNC_CYCLE : Instruction Packet synchronisation with cycle count.; (Trace Enable); Addr=0xc004f698; S;  CtxtID=4030201; ISA=Thumb2; Cycles=7695; ");
    assert_eq!(t[3], "BRANCH_ADDRESS : Branch address.; Addr=0xC035BEB6 ~[0x35BEB6]; ");
    assert_eq!(t[4], "P_HDR : Atom P-header.; WE; Cycles=1");
    assert_eq!(t[5], "P_HDR : Atom P-header.; WWWWWWWW; Cycles=8");
    assert_eq!(t[6], "P_HDR : Atom P-header.; WEE; Cycles=1");
    assert_eq!(t[7], "P_HDR : Atom P-header.; E; Cycles=0".replace("; Cycles=0", ""));
    assert_eq!(t[8], "P_HDR : Atom P-header.; W; Cycles=1");
    assert_eq!(t[9], "CYCLE_COUNT : Cycle Count.; Cycles=5");
    assert_eq!(t[10], "CONTEXT_ID : Context ID change.; CtxtID=0x12345678");
    assert_eq!(t[11], "VMID : VMID change.; VMID=0xA");
    assert_eq!(t[12], "EXCEPTION_EXIT : Exception return.");
    assert_eq!(t[13], "EXCEPTION_ENTRY : Exception entry data marker.");
    assert_eq!(t[14], "IGNORE : Packet ignored.");
    assert_eq!(t[15], "TIMESTAMP : Timestamp Value.; TS=0x82f9d0cd3d (562536959293) ");
}

/// A cycle count packet takes payload bytes while their top bit is set
/// (5 at most), as OpenCSD's packet processor does (checked against
/// OpenCSD 1.3.3 on corrupted TC2 trace).
#[test]
fn etmv3_multi_byte_cycle_counts() {
    let cfg = etm_cfg(0x1000, 0x410C_F250, 0);
    let mut data = ASYNC.to_vec();
    // 4 bytes: 0x3c | 0x30 << 7 | 0x0c << 14 | 0x02 << 21; then 5 bytes,
    // the fifth giving 4 bits (its top bit ends the count whatever it is)
    data.extend_from_slice(&[0x04, 0xbc, 0xb0, 0x8c, 0x02, 0x04, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0c]);
    let mut pp = EtmV3PktProc::new(&cfg);
    let c = run(&mut pp, &data);
    let t: Vec<_> = c.pkts.iter().map(|(i, p, r)| (*i, text(p), r.len())).collect();
    assert_eq!(t[1], (6, "CYCLE_COUNT : Cycle Count.; Cycles=4397116".to_string(), 5));
    assert_eq!(t[2], (11, format!("CYCLE_COUNT : Cycle Count.; Cycles={}", u32::MAX), 6));
    assert_eq!(t[3], (17, "TRIGGER : Trace Trigger Event.".to_string(), 1));
}

#[test]
fn etmv3_branch_with_exception_and_non_ca_atoms() {
    let cfg = etm_cfg(0, 0x410C_F240, 0);
    let t = etm_texts(
        &cfg,
        &[
            0x81, 0x80, 0x80, 0x80, 0x48, 0x1d, // 5-byte branch, ARM, exception bytes follow: IRQ, NS
            0x84, 0x8a, // P-headers: E, EN format 2
        ],
    );
    assert_eq!(t[1], "BRANCH_ADDRESS : Branch address.; Addr=0x00000000 ~[0x0]; ISA=ARM(32); NS; Exception=IRQ; ");
    assert_eq!(t[2], "P_HDR : Atom P-header.; E");
    assert_eq!(t[3], "P_HDR : Atom P-header.; NE");
}

#[test]
fn etmv3_data_trace_packets() {
    // data value + address trace, instruction trace on
    let cfg = etm_cfg(0x4 | 0x8, 0x410C_F240, 0);
    let t = etm_texts(
        &cfg,
        &[
            0x06, 0x11, // normal data, 1 byte value
            0x2a, 0x33, 0x44, 0x55, // normal data + address, 2 byte value
            0x62, // data suppressed
            0x6a, // value not traced
            0x7a, 0x07, // value not traced + address
            0x50, // store failed
            0x24, 0x99, // out of order data, tag 1, 1 byte
            0x54, // OOO placeholder, tag 1 (no address)
        ],
    );
    assert_eq!(t[1], "NORM_DATA : Data trace packet.; Val=0x11");
    // OpenCSD adds the address bytes to the expected length only once the
    // last one is seen, so the value bytes follow as expected here
    assert!(t[2].starts_with("NORM_DATA : Data trace packet.; Addr="), "{}", t[2]);
    assert_eq!(t[3], "DATA_SUPPRESSED : Data trace suppressed.");
    // 0x6a flags an address: the next byte (0x7a) is taken as one
    assert!(t[4].starts_with("VAL_NOT_TRACED : Data trace value not traced.; Addr="), "{}", t[4]);
    assert!(t.iter().any(|x| x == "STORE_FAIL : Data Store Failed."));
    assert!(t.iter().any(|x| x == "OOO_DATA : Out of Order data value packet.; Val=0x99; OO_Tag=0x1"));
    assert!(t.iter().any(|x| x == "OOO_ADDR_PLC : Out of Order data address placeholder.; OO_Tag=0x1"));
}

#[test]
fn etmv3_bad_headers_resync() {
    let cfg = etm_cfg(0, 0x410C_F240, 0);
    let mut data = ASYNC.to_vec();
    data.extend_from_slice(&[0x06, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x0c]);
    let mut pp = EtmV3PktProc::new(&cfg);
    let c = run(&mut pp, &data);
    let t: Vec<_> = c.pkts.iter().map(|(_, p, _)| text(p)).collect();
    assert!(t[1].starts_with("BAD_TRACEMODE : Invalid packet type for this trace mode.["), "{}", t[1]);
    assert_eq!(t[2], "P_HDR : Atom P-header.; "); // no atoms
    assert!(c.log.iter().any(|l| l.starts_with("PKTP_ETMV3_0016: 0x0014")));
    assert_eq!(t.last().unwrap(), "TRIGGER : Trace Trigger Event.");
}

fn ptm_cfg(ctrl: u32, idr: u32, ccer: u32) -> ocsd_etmv3_cfg {
    ocsd_etmv3_cfg { reg_idr: idr, reg_ctrl: ctrl, reg_ccer: ccer, reg_trc_id: 0x13, arch_ver: ARCH_V7, core_prof: profile_CortexA }
}

fn ptm_texts(cfg: &ocsd_etmv3_cfg, data: &[u8]) -> Vec<String> {
    let mut pp = PtmPktProc::new(cfg);
    run(&mut pp, data).pkts.iter().map(|(_, p, _)| text(p)).collect::<Vec<_>>()
}

#[test]
fn ptm_every_packet() {
    // cycle accurate, 1-byte context ID, 64-bit natural binary timestamps, PTM 1.1
    let cfg = ptm_cfg(0x1000 | (1 << 14), 0x411C_F312, 0x34C0_1AC2);
    let mut data = vec![0x11, 0x22]; // unsynced
    data.extend_from_slice(&ASYNC);
    data.extend_from_slice(&[
        0x08, 0x83, 0x8d, 0x01, 0xc0, 0x21, 0x04, 0x55, // I-Sync, trace enable, CC=1, ctxt 0x55
        0xe8, 0x20, // atom E with cycle count
        0xbb, 0xb6, 0xbd, 0x01, 0x04, // branch, CC
        0x8d, 0x80, 0xfe, 0xff, 0x4f, 0x1d, 0x3c, // branch with exception, CC
        0x72, 0x05, // waypoint update
        0x6e, 0x66, // context ID
        0x3c, 0x42, // VMID 'B'
        0x42, 0xcc, 0x97, 0xc6, 0xce, 0xaf, 0x90, 0x80, 0x80, 0x00, 0x00, // timestamp + CC
        0x76, 0x66, 0x0c, 0x04, // ERET, ignore, trigger, reserved
    ]);
    let t = ptm_texts(&cfg, &data);
    assert_eq!(t[0], "NOTSYNC : PTM Not Synchronised; ");
    assert_eq!(t[1], "ASYNC : Alignment Synchronisation Packet; ");
    assert_eq!(t[2], "ISYNC : Instruction Synchronisation packet; (Trace Enable); Addr=0xc0018d82; S;  CtxtID=00000055; ISA=Thumb2; Cycles=1; ");
    assert_eq!(t[3], "ATOM : Atom packet; E; Cycles=522; ");
    assert_eq!(t[4], "BRANCH_ADDRESS : Branch address packet; Addr=0xC02F5B3A ~[0x2F5B3A]; Cycles=1; ");
    assert_eq!(t[5], "BRANCH_ADDRESS : Branch address packet; Addr=0xFFFF0018 ~[0xFFFF0018]; ISA=ARM(32); NS; Excep=IRQ [0e]; Cycles=15; ");
    assert!(t[6].starts_with("WP_UPDATE : Waypoint update packet; Addr="), "{}", t[6]);
    assert_eq!(t[7], "CTXTID : Context ID packet; CtxtID=0x00000066; ");
    assert_eq!(t[8], "VMID : VM ID packet; VMID=0x0B; ");
    assert_eq!(t[9], "TIMESTAMP : Timestamp packet; TS=0x00000082F9D18BCC ~[0x82F9D18BCC](562537008076); Cycles=0; ");
    assert_eq!(t[10], "ERET : Exception return packet; ");
    assert_eq!(t[11], "IGNORE : Ignore packet; ");
    assert_eq!(t[12], "TRIGGER : Trigger Event packet; ");
    assert_eq!(t[13], "RESERVED : Reserved Packet Header; ");
}

#[test]
fn ptm_non_cycle_accurate_atoms_and_split_input() {
    let cfg = ptm_cfg(0, 0x411C_F312, 0);
    let mut data = ASYNC.to_vec();
    data.extend_from_slice(&[0x08, 0x00, 0x10, 0x00, 0x80, 0x09, 0x84, 0x88, 0x9a, 0xa0, 0xc4]);
    // feed one byte at a time: packets must not depend on block boundaries
    let mut pp = PtmPktProc::new(&cfg);
    let mut c = Collect { pkts: vec![], log: vec![] };
    let mut out = Out { c: &mut c, log: Log(vec![]) };
    for (i, b) in data.iter().enumerate() {
        pp.process_data(i as u32, std::slice::from_ref(b), &mut out);
    }
    let t: Vec<_> = c.pkts.iter().map(|(i, p, _)| (*i, text(p))).collect();
    assert_eq!(t[0], (0, "ASYNC : Alignment Synchronisation Packet; ".to_string()));
    assert_eq!(t[1].0, 6);
    assert_eq!(t[2].1, "ATOM : Atom packet; E; ");
    assert_eq!(t[3].1, "ATOM : Atom packet; EE; ");
    assert_eq!(t[4].1, "ATOM : Atom packet; NEN; ");
    assert_eq!(t[5].1, "ATOM : Atom packet; EEEE; ");
    assert_eq!(t[6].1, "ATOM : Atom packet; EEENE; ");
}

/// Memory image of a few A32 instructions at 0x8000.
struct Image(Vec<u8>);
impl MemAccess for Image {
    fn read(&mut self, addr: ocsd_vaddr_t, _: ocsd_mem_space_acc_t, _: u8, buf: &mut [u8]) -> Result<usize, ocsd_err_t> {
        let off = addr.wrapping_sub(0x8000) as usize;
        if off >= self.0.len() {
            return Ok(0);
        }
        let n = buf.len().min(self.0.len() - off);
        buf[..n].copy_from_slice(&self.0[off..off + n]);
        Ok(n)
    }
}

fn a32_image() -> Image {
    let mut v = vec![];
    for w in [0xe1a0_0000u32, 0xe1a0_0000, 0xeaff_fffc /* b 0x8000 */, 0xe12f_ff1e /* bx lr */] {
        v.extend_from_slice(&w.to_le_bytes());
    }
    Image(v)
}

fn decode_all<D: PacketDecoder>(dec: &mut D, pkts: &[(ocsd_trc_index_t, D::Packet, Vec<u8>)], mem: &mut dyn MemAccess) -> Vec<ocsd_generic_trace_elem> {
    let mut q = ElemQueue::new();
    let mut log = NullLog;
    for (i, p, _) in pkts {
        let mut ctx = DecodeCtx::new(&mut q, mem, &mut log);
        dec.packet_in(*i, p, &mut ctx);
    }
    let mut ctx = DecodeCtx::new(&mut q, mem, &mut log);
    dec.eot(&mut ctx);
    struct S(Vec<ocsd_generic_trace_elem>);
    impl GenElemSink for S {
        fn trace_elem_in(&mut self, _: ocsd_trc_index_t, _: u8, e: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
            self.0.push(*e);
            OCSD_RESP_CONT
        }
    }
    let mut s = S(vec![]);
    q.deliver(&mut s);
    s.0
}

#[test]
fn etmv3_decode_atoms() {
    let cfg = etm_cfg(0, 0x410C_F240, 0);
    let mut data = ASYNC.to_vec();
    data.extend_from_slice(&[0x08, 0x00, 0x00, 0x80, 0x00, 0x00, 0x8c]); // I-Sync @0x8000 ARM; 3 E atoms
    let mut pp = EtmV3PktProc::new(&cfg);
    let c = run(&mut pp, &data);
    let mut dec = EtmV3Decoder::new(&cfg);
    let els = decode_all(&mut dec, &c.pkts, &mut a32_image());
    let types: Vec<_> = els.iter().map(|e| e.elem_type).collect();
    assert_eq!(
        types,
        [
            OCSD_GEN_TRC_ELEM_NO_SYNC,
            OCSD_GEN_TRC_ELEM_TRACE_ON,
            OCSD_GEN_TRC_ELEM_PE_CONTEXT,
            OCSD_GEN_TRC_ELEM_INSTR_RANGE,
            OCSD_GEN_TRC_ELEM_INSTR_RANGE,
            OCSD_GEN_TRC_ELEM_INSTR_RANGE,
            OCSD_GEN_TRC_ELEM_EO_TRACE
        ]
    );
    assert_eq!((els[3].st_addr, els[3].en_addr), (0x8000, 0x8004));
    assert_eq!((els[5].st_addr, els[5].en_addr), (0x8008, 0x800c));
    assert_eq!(els[5].last_i_type, OCSD_INSTR_BR);
    assert_eq!(els[0].unsync_eot_info(), UNSYNC_INIT_DECODER);
}

#[test]
fn ptm_decode_waypoints() {
    let cfg = ptm_cfg(0, 0x411C_F312, 0);
    let mut data = ASYNC.to_vec();
    data.extend_from_slice(&[0x08, 0x00, 0x80, 0x00, 0x00, 0x01, 0x84]); // I-Sync @0x8000 ARM; one E atom
    let mut pp = PtmPktProc::new(&cfg);
    let c = run(&mut pp, &data);
    let mut dec = PtmDecoder::new(&cfg);
    let els = decode_all(&mut dec, &c.pkts, &mut a32_image());
    let types: Vec<_> = els.iter().map(|e| e.elem_type).collect();
    assert_eq!(
        types,
        [
            OCSD_GEN_TRC_ELEM_NO_SYNC,
            OCSD_GEN_TRC_ELEM_TRACE_ON,
            OCSD_GEN_TRC_ELEM_PE_CONTEXT,
            OCSD_GEN_TRC_ELEM_INSTR_RANGE,
            OCSD_GEN_TRC_ELEM_EO_TRACE
        ]
    );
    assert_eq!((els[3].st_addr, els[3].en_addr, els[3].num_instr_range()), (0x8000, 0x800c, 3));
}

#[test]
fn random_input_never_panics() {
    let mut seed = 0x1234_5678_9abc_def0u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..200 {
        let len = (rnd() % 600) as usize;
        let mut data: Vec<u8> = (0..len).map(|_| rnd() as u8).collect();
        if round % 2 == 0 {
            data.splice(0..0, ASYNC);
        }
        let ctrl = (rnd() as u32) & 0x7000_F10C;
        let idr = 0x4100_F200 | ((rnd() as u32) & 0x0010_00F0);
        let ccer = rnd() as u32;
        let cfg = etm_cfg(ctrl, idr, ccer);
        let mut pp = EtmV3PktProc::new(&cfg);
        let c = run(&mut pp, &data);
        for (_, p, _) in &c.pkts {
            let _ = text(p);
        }
        let mut dec = EtmV3Decoder::new(&cfg);
        decode_all(&mut dec, &c.pkts, &mut a32_image());

        let mut pp = PtmPktProc::new(&cfg);
        let c: Collect<ocsd_ptm_pkt> = run(&mut pp, &data);
        for (_, p, _) in &c.pkts {
            let _ = text(p);
        }
        let mut dec = PtmDecoder::new(&cfg);
        decode_all(&mut dec, &c.pkts, &mut a32_image());
    }
}

/// OpenCSD's PTM processor keeps the bytes of the packet it was reading
/// across a RESET (its `InitProcessorState` clears the packet, not its
/// bytes): zeros held while looking for an A-sync are shown with the next
/// packet after the reset (checked with one C client on OpenCSD 1.3.3 and
/// this library, 4x FSYNC resets in PTM trace).
#[test]
fn ptm_reset_keeps_the_bytes_of_the_packet_being_read() {
    let cfg = ptm_cfg(0, 0x411C_F312, 0);
    let mut pp = PtmPktProc::new(&cfg);
    let mut c = Collect { pkts: vec![], log: vec![] };
    let mut out = Out { c: &mut c, log: Log(vec![]) };
    // unsynchronised, the block ending in two zeros (an A-sync may start)
    assert_eq!(pp.process_data(0, &[0x11, 0x00, 0x00], &mut out).1, 3);
    pp.reset(3);
    let mut data = vec![0x22, 0x33];
    data.extend_from_slice(&ASYNC);
    assert_eq!(pp.process_data(3, &data, &mut out).1, data.len());
    pp.eot(&mut out);
    // the two zeros held join the A-sync read after the reset
    let t: Vec<(u32, String, Vec<u8>)> = c.pkts.iter().map(|(i, p, r)| (*i, text(p), r.clone())).collect();
    let last = t.last().expect("packets");
    assert_eq!(last.1, "ASYNC : Alignment Synchronisation Packet; ");
    assert_eq!(last.2, [0, 0, 0, 0, 0, 0, 0, 0x80], "{t:?}");
}

/// Two process images at 0x8000 selected by context ID (1: two NOPs then
/// `B 0x8000`; 2: `B 0x8008`, then NOPs), and the contexts the decoder
/// told the memory.
struct ContextImages {
    ctx: MemContext,
    told: Vec<MemContext>,
}
impl MemAccess for ContextImages {
    fn read(&mut self, addr: ocsd_vaddr_t, _: ocsd_mem_space_acc_t, _: u8, buf: &mut [u8]) -> Result<usize, ocsd_err_t> {
        let words: &[u32] = match self.ctx.context_id {
            Some(1) => &[0xe1a0_0000, 0xe1a0_0000, 0xeaff_fffc],
            Some(2) => &[0xea00_0000, 0xe1a0_0000, 0xe1a0_0000, 0xe1a0_0000],
            _ => &[],
        };
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let off = addr.wrapping_sub(0x8000) as usize;
        if off >= bytes.len() {
            return Ok(0);
        }
        let n = buf.len().min(bytes.len() - off);
        buf[..n].copy_from_slice(&bytes[off..off + n]);
        Ok(n)
    }

    fn update_context(&mut self, _: u8, ctx: MemContext) {
        self.told.push(ctx);
        self.ctx.merge(ctx);
    }
}

/// The decoder tells the memory its context when it changes (before the
/// atoms read memory in it), not at every P-header, and again after a
/// reset: each range is read from the image of its context.
#[test]
fn etmv3_memory_follows_the_context_id() {
    // 1-byte context IDs
    let cfg = etm_cfg(1 << 14, 0x410C_F240, 0);
    let isync = |ctxt: u8| [0x08, ctxt, 0x00, 0x00, 0x80, 0x00, 0x00]; // I-Sync @0x8000 ARM
    let mut data = ASYNC.to_vec();
    data.extend_from_slice(&isync(1));
    data.extend_from_slice(&[0x8c, 0x84]); // 3 E atoms, 1 E atom
    data.extend_from_slice(&[0x6e, 0x02]); // context ID 2
    data.extend_from_slice(&[0x8c]); // 3 E atoms
    let reset_at = data.len() as u32;
    data.extend_from_slice(&ASYNC);
    data.extend_from_slice(&isync(2));
    data.extend_from_slice(&[0x84]);
    let mut pp = EtmV3PktProc::new(&cfg);
    let c = run(&mut pp, &data);
    let mut dec = EtmV3Decoder::new(&cfg);
    let mut mem = ContextImages { ctx: MemContext::default(), told: vec![] };
    let mut q = ElemQueue::new();
    let mut log = NullLog;
    for (i, p, _) in &c.pkts {
        if *i == reset_at {
            dec.reset(*i);
        }
        let mut ctx = DecodeCtx::new(&mut q, &mut mem, &mut log);
        dec.packet_in(*i, p, &mut ctx);
    }
    dec.eot(&mut DecodeCtx::new(&mut q, &mut mem, &mut log));
    struct S(Vec<(u64, u64, ocsd_instr_type)>);
    impl GenElemSink for S {
        fn trace_elem_in(&mut self, _: ocsd_trc_index_t, _: u8, e: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
            if e.elem_type == OCSD_GEN_TRC_ELEM_INSTR_RANGE {
                self.0.push((e.st_addr, e.en_addr, e.last_i_type));
            }
            OCSD_RESP_CONT
        }
    }
    let mut s = S(vec![]);
    q.deliver(&mut s);
    let ctx = |id| MemContext { context_id: Some(id), vmid: None };
    assert_eq!(mem.told, [ctx(1), ctx(2), ctx(2)]);
    let (other, br) = (OCSD_INSTR_OTHER, OCSD_INSTR_BR);
    assert_eq!(
        s.0,
        [
            // context 1: NOP, NOP, B 0x8000; NOP
            (0x8000, 0x8004, other),
            (0x8004, 0x8008, other),
            (0x8008, 0x800c, br),
            (0x8000, 0x8004, other),
            // context 2, from 0x8004: NOP, NOP, NOP
            (0x8004, 0x8008, other),
            (0x8008, 0x800c, other),
            (0x800c, 0x8010, other),
            // after the reset, context 2 from 0x8000: B 0x8008
            (0x8000, 0x8004, br),
        ]
    );
}

/// M-profile exception names as OpenCSD 1.8.0 prints them (its table has
/// "HardFault" and "Reserved" as two entries, 24 in all).
#[test]
fn etmv3_m_profile_exception_names() {
    let mut cfg = etm_cfg(0x1000_1000, 0x4114_F250, 0);
    cfg.core_prof = profile_CortexM;
    for (num_bytes, name) in [([0x86u8, 0x01], "HardFault"), ([0x88, 0x01], "Reserved"), ([0x8A, 0x01], "BusFault"), ([0x8E, 0x01], "Reserved")] {
        let mut body = vec![0x81, 0x80, 0x80, 0x80, 0x48];
        body.extend_from_slice(&num_bytes);
        let texts = etm_texts(&cfg, &body);
        let last = texts.last().expect("a branch packet");
        assert!(last.ends_with(&format!("Exception={}", name)), "{:02x?}: {}", num_bytes, last);
    }
}

