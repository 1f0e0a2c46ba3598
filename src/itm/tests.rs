//! ITM tests: hand-built packet sequences, robustness, and comparison with
//! OpenCSD 1.8.0's logs for the reference snapshot.

use super::*;
use crate::abi::gen_elem::*;
use crate::common::elem_queue::QueuedElem;
use crate::common::{DecodeCtx, ElemQueue, ErrorLog, NoMemory, PacketDecoder, PacketOut, PacketProcessor, TracePacket};
use crate::stm::testutil::*;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Decode,
    Packets,
}

/// Element text for ITM elements (enough of OpenCSD's element printer to
/// check the fields), and the other elements the ITM decoder produces.
fn elem_text(q: &QueuedElem) -> String {
    let e = &q.elem;
    match e.elem_type {
        OCSD_GEN_TRC_ELEM_NO_SYNC => {
            let r = e.unsync_eot_info();
            format!("OCSD_GEN_TRC_ELEM_NO_SYNC( [{}])", if r == UNSYNC_INIT_DECODER { "init-decoder" } else { "bad-packet" })
        }
        OCSD_GEN_TRC_ELEM_EO_TRACE => "OCSD_GEN_TRC_ELEM_EO_TRACE( [end-of-trace])".to_string(),
        OCSD_GEN_TRC_ELEM_ITMTRACE => {
            let i = e.swt_itm();
            let mut s = String::from("OCSD_GEN_TRC_ELEM_ITMTRACE(");
            if i.overflow != 0 {
                s += "ITM_OVERFLOW; ";
            }
            let w = usize::from(i.payload_size) * 2;
            match i.pkt_type {
                SWIT_PAYLOAD => s += &format!("ITM_SWIT (ch: 0x{:x}; Data: 0x{:02$x}) ", i.payload_src_id, i.value, w),
                DWT_PAYLOAD => s += &format!("ITM_DWT (desc: 0x{:x}; Data: 0x{:02$x}) ", i.payload_src_id, i.value, w),
                TS_GLOBAL => s += &format!("ITM_TS_GLOBAL ( TS: 0x{:016x}) ", e.timestamp),
                t => {
                    let tc = ["TS Sync", "TS Delay", "Packet Delay", "TS and Packet Delay"][(t - TS_SYNC) as usize];
                    s += &format!(
                        "ITM_TS_LOCAL ( TS delta: 0x{:08x}, {{ {}}}; TS cumulative: 0x{:016x}) ",
                        i.value, tc, e.timestamp
                    );
                }
            }
            s + ")"
        }
        t => format!("elem type {}", t),
    }
}

struct Collect {
    id: u8,
    mode: Mode,
    lines: Vec<String>,
    pkts: Vec<ocsd_itm_pkt>,
    dec: ItmDecoder,
    q: ElemQueue,
    log: RecLog,
    saw_fatal: bool,
}

impl Collect {
    fn new(cfg: &ocsd_itm_cfg, mode: Mode) -> Self {
        let dec = ItmDecoder::new(cfg);
        Collect {
            id: dec.trace_id(),
            mode,
            lines: Vec::new(),
            pkts: Vec::new(),
            dec,
            q: ElemQueue::new(),
            log: RecLog::default(),
            saw_fatal: false,
        }
    }

    fn take_elems(&mut self) {
        assert!(self.q.len() <= 1, "ITM decoder gives at most one element per call");
        if let Some(e) = self.q.last_mut() {
            let line = format!("Idx:{}; ID:{:x}; {}", e.index, e.trace_id, elem_text(e));
            self.lines.push(line);
        }
        self.q.clear();
    }

    fn decode(&mut self, index: ocsd_trc_index_t, pkt: &ocsd_itm_pkt) -> ocsd_datapath_resp_t {
        let mut mem = NoMemory;
        let mut ctx = DecodeCtx::new(&mut self.q, &mut mem, &mut self.log);
        let r = self.dec.packet_in(index, pkt, &mut ctx);
        self.take_elems();
        self.saw_fatal |= r == OCSD_RESP_FATAL_INVALID_DATA;
        r
    }

    fn eot(&mut self) {
        if self.mode == Mode::Decode {
            let mut mem = NoMemory;
            let mut ctx = DecodeCtx::new(&mut self.q, &mut mem, &mut self.log);
            self.dec.eot(&mut ctx);
            self.take_elems();
        }
    }

    fn text(pkt: &ocsd_itm_pkt) -> String {
        let mut s = String::new();
        pkt.write_str(&mut s);
        s
    }
}

impl PacketOut<ocsd_itm_pkt> for Collect {
    fn packet(&mut self, index_sop: ocsd_trc_index_t, pkt: &ocsd_itm_pkt, raw: &[u8]) -> ocsd_datapath_resp_t {
        if self.mode == Mode::Decode && !raw.is_empty() {
            self.lines.push(monitor_prefix(index_sop, self.id, raw) + &Self::text(pkt));
        }
        self.packet_to_sink(index_sop, pkt)
    }

    fn packet_to_monitor(&mut self, index_sop: ocsd_trc_index_t, pkt: &ocsd_itm_pkt, raw: &[u8]) {
        assert!(!raw.is_empty());
        if self.mode == Mode::Decode {
            self.lines.push(monitor_prefix(index_sop, self.id, raw) + &Self::text(pkt));
        }
    }

    fn packet_to_sink(&mut self, index_sop: ocsd_trc_index_t, pkt: &ocsd_itm_pkt) -> ocsd_datapath_resp_t {
        self.pkts.push(*pkt);
        match self.mode {
            Mode::Packets => {
                self.lines.push(format!("Idx:{}; ID:{:x};\t{}", index_sop, self.id, Self::text(pkt)));
                OCSD_RESP_CONT
            }
            Mode::Decode => self.decode(index_sop, pkt),
        }
    }

    fn logger(&mut self) -> &mut dyn ErrorLog {
        &mut self.log
    }
}

fn run_with(cfg: &ocsd_itm_cfg, data: &[u8], mode: Mode, chunk: usize) -> Collect {
    let mut proc = ItmPktProc::new(cfg);
    let mut c = Collect::new(cfg, mode);
    let mut pos = 0;
    while pos < data.len() {
        let end = pos.saturating_add(chunk).min(data.len());
        let (resp, used) = proc.process_data(pos as u32, &data[pos..end], &mut c);
        assert!(used <= end - pos);
        assert!(resp_is_cont(resp) || resp_is_fatal(resp));
        if used == 0 {
            break;
        }
        pos += used;
    }
    proc.eot(&mut c);
    c.eot();
    c
}

fn run(data: &[u8], mode: Mode) -> Collect {
    run_with(&ocsd_itm_cfg { reg_tcr: 0x0020_0000 }, data, mode, usize::MAX)
}

const ASYNC: [u8; 6] = [0, 0, 0, 0, 0, 0x80];

fn texts(c: &Collect) -> Vec<String> {
    c.pkts.iter().map(Collect::text).collect()
}

#[test]
fn every_packet_type() {
    let mut d = ASYNC.to_vec();
    d.extend([0x70]); // overflow
    d.extend([0x19, 0xbb]); // SWIT ch 3, 1 byte
    d.extend([0x0a, 0x45, 0x23]); // SWIT ch 1, 2 bytes
    d.extend([0x0b, 0x23, 0x01, 0x89, 0x67]); // SWIT 4 bytes
    d.extend([0x05, 0x15]); // DWT event counter
    d.extend([0x0e, 0x04, 0x10]); // DWT exception
    d.extend([0x17, 0x00, 0x10, 0x00, 0x00]); // DWT PC sample
    d.extend([0x20]); // local TS, 1 byte
    d.extend([0xd0, 0x0d]); // local TS, TC=1
    d.extend([0xc0, 0x82, 0xc8, 0x04]); // local TS, 3 bytes
    d.extend([0x94, 0xd3, 0xc6, 0x10]); // GTS1, 3 bytes
    d.extend([0x94, 0x82, 0xcf, 0xfa, 0x77]); // GTS1, 4 bytes, wrap + clk change
    d.extend([0xb4, 0x96, 0x9a, 0x92, 0x00]); // GTS2, 4 bytes
    d.extend([0xb4, 0x93, 0x98, 0xa0, 0xa0, 0x80, 0x00]); // GTS2, 6 bytes
    d.extend([0x28]); // extension: stim port page 2
    d.extend([0x8a, 0x76, 0x98]); // SWIT ch 0x11 -> 0x51 in page 2
    d.extend([0x8c, 0x81, 0x01]); // extension HW, 2 payload bytes
    let c = run(&d, Mode::Packets);
    // a stream starting with ASYNC still gives the decoder one NOTSYNC
    let want = [
        "ITM_NOTSYNC: ; 'ITM data stream not synchronised'",
        "ITM_ASYNC: ; 'Alignment synchronisation packet'",
        "ITM_OVERFLOW: ; 'ITM overflow packet'",
        "ITM_SWIT: {src id: 0x03}  0xbb; 'Software Stimulus write packet'",
        "ITM_SWIT: {src id: 0x01}  0x2345; 'Software Stimulus write packet'",
        "ITM_SWIT: {src id: 0x01}  0x67890123; 'Software Stimulus write packet'",
        "ITM_DWT: {desc: 0x00} [Event Counter: 0x15; Flags:  CPI  ---  Sleep  ---  Fold  --- ] ; 'DWT hardware stimulus write'",
        "ITM_DWT: {desc: 0x01} [Exception Num:  0x0004(entered) ]; 'DWT hardware stimulus write'",
        "ITM_DWT: {desc: 0x02} [PC Sample: 0x00001000] ; 'DWT hardware stimulus write'",
        "ITM_TS_LOCAL: 0x02 { TS Sync }; 'Local Timestamp'",
        "ITM_TS_LOCAL: 0x0d { TS Delayed }; 'Local Timestamp'",
        "ITM_TS_LOCAL: 0x012402 { TS Sync }; 'Local Timestamp'",
        "ITM_GTS_1: { TS bits [20:0]} 0x042353; 'Global Timestamp [25:0]'",
        "ITM_GTS_1: { TS bits [25:0], Clk change, Clk wrap} 0x02fea782; 'Global Timestamp [25:0]'",
        "ITM_GTS_2: { TS bits [47:26]} 0x00048d16; 'Global Timestamp [{63|42}:26]'",
        "ITM_GTS_2: { TS bits [63:26]} 0x0004080c13; 'Global Timestamp [{63|42}:26]'",
        "ITM_EXTENSION: {stim port page} 0x02; 'Extension packet'",
        "ITM_SWIT: {src id: 0x11}  0x9876; 'Software Stimulus write packet'",
        "ITM_EXTENSION: {unknown extension type, 17 bits } 0x00408; 'Extension packet'",
    ];
    assert_eq!(texts(&c), want);
    assert!(c.log.lines.is_empty());
}

#[test]
fn decoder_elements() {
    let mut d = vec![0x11, 0x22];
    d.extend(ASYNC);
    d.extend([0x70, 0x19, 0xbb]); // overflow, SWIT
    d.extend([0x20]); // local TS 2
    d.extend([0xe0, 0xc2, 0x26]); // local TS, TC=2
    d.extend([0x94, 0xd3, 0xc6, 0x10]); // GTS1 before any GTS2: no element
    d.extend([0xb4, 0x96, 0x9a, 0x92, 0x00]); // GTS2
    d.extend([0x94, 0x5d]); // GTS1, 1 byte
    d.extend([0x28, 0x8a, 0x76, 0x98]); // page 2, SWIT ch 0x11
    d.extend([0x15, 0x00]); // DWT PC sample, 1 byte
    let c = run(&d, Mode::Decode);
    let elems: Vec<&String> = c.lines.iter().filter(|l| l.contains("OCSD_GEN")).collect();
    let want = [
        "Idx:0; ID:20; OCSD_GEN_TRC_ELEM_NO_SYNC( [init-decoder])",
        "Idx:9; ID:20; OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_OVERFLOW; ITM_SWIT (ch: 0x3; Data: 0xbb) )",
        "Idx:11; ID:20; OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_TS_LOCAL ( TS delta: 0x00000002, { TS Sync}; TS cumulative: 0x0000000000000002) )",
        "Idx:12; ID:20; OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_TS_LOCAL ( TS delta: 0x00001342, { Packet Delay}; TS cumulative: 0x0000000000001344) )",
        "Idx:19; ID:20; OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_TS_GLOBAL ( TS: 0x0000123458042353) )",
        "Idx:24; ID:20; OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_TS_GLOBAL ( TS: 0x000012345804235d) )",
        "Idx:27; ID:20; OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_SWIT (ch: 0x51; Data: 0x9876) )",
        "Idx:30; ID:20; OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_DWT (desc: 0x2; Data: 0x00) )",
        "Idx:30; ID:20; OCSD_GEN_TRC_ELEM_EO_TRACE( [end-of-trace])",
    ];
    assert_eq!(elems, want);
    assert_eq!(c.lines[0], "Idx:0; ID:20; [0x11 0x22 ];\tITM_NOTSYNC: ; 'ITM data stream not synchronised'");
}

#[test]
fn local_ts_prescaler() {
    let mut d = ASYNC.to_vec();
    d.extend([0x30, 0x30]);
    let c = run_with(&ocsd_itm_cfg { reg_tcr: 0x0020_0210 }, &d, Mode::Decode, usize::MAX);
    assert!(c.lines.iter().any(|l| l.contains("TS cumulative: 0x0000000000000060")));
}

#[test]
fn errors() {
    let mut d = ASYNC.to_vec();
    d.extend([0x04]); // reserved header
    d.extend([0xc0, 0x80, 0x80, 0x80, 0x80]); // local TS too long
    d.extend([0x00, 0x00, 0x12]); // bad ASYNC
    d.extend([0x94, 0x80, 0x80]); // GTS1 cut short by EOT
    let c = run(&d, Mode::Packets);
    let t = texts(&c);
    assert_eq!(t[0], "ITM_NOTSYNC: ; 'ITM data stream not synchronised'");
    assert_eq!(t[2], "ITM_RESERVED: ; 'Reserved Packet Header'");
    assert_eq!(t[3], "ITM_BAD_SEQUENCE: [Init type: ITM_TS_LOCAL] ; 'Invalid sequence in packet'");
    assert_eq!(t[4], "ITM_BAD_SEQUENCE: [Init type: ITM_ASYNC] ; 'Invalid sequence in packet'");
    assert_eq!(t[5], "ITM_INCOMPLETE_EOT: [Init type: ITM_GTS_1] ; 'Incomplete packet flushed at end of trace'");
    assert_eq!(c.log.lines.len(), 3);
    assert_eq!(
        c.log.lines[0],
        "PKTP_ITM_0032: 0x0014 (OCSD_ERR_INVALID_PCKT_HDR) [Invalid packet header]; TrcIdx=6; CS ID=20; "
    );
    assert!(c.log.lines[1].ends_with("Local TS packet: Payload continuation value too long"));
    assert!(c.log.lines[2].ends_with("Async Packet: unexpected none zero value"));
    let c = run(&d, Mode::Decode);
    assert!(c.saw_fatal);
    assert!(c.lines.iter().any(|l| l.ends_with("OCSD_GEN_TRC_ELEM_NO_SYNC( [bad-packet])")));
}

#[test]
fn split_input_gives_same_output() {
    let Some(shared) = shared_dir("itm split input") else { return };
    let data = std::fs::read(shared.join("conformance/snapshots/itm_only_raw/itm_testdata.bin")).unwrap();
    let cfg = ocsd_itm_cfg { reg_tcr: 0 };
    let whole = run_with(&cfg, &data, Mode::Packets, usize::MAX);
    for chunk in [1, 2, 3, 7, 16] {
        let c = run_with(&cfg, &data, Mode::Packets, chunk);
        assert_eq!(c.lines, whole.lines, "chunk {}", chunk);
    }
}

#[test]
fn garbage_never_panics() {
    let mut seed = 0x0fed_cba9_8765_4321u64;
    for round in 0..64 {
        let mut data = Vec::new();
        for _ in 0..2048 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let mut b = (seed >> 33) as u8;
            if round % 4 == 0 && b < 0x60 {
                b = 0;
            }
            data.push(b);
        }
        data.splice(10..10, ASYNC);
        let cfg = ocsd_itm_cfg { reg_tcr: 0x0011_0310 };
        let mut proc = ItmPktProc::new(&cfg);
        proc.set_op_flags(if round % 3 == 0 { OCSD_OPFLG_PKTPROC_UNSYNC_ON_BAD_PKTS } else { 0 });
        let mut c = Collect::new(&cfg, Mode::Decode);
        let mut pos = 0;
        while pos < data.len() {
            let end = (pos + 1 + (round * 31 + pos) % 200).min(data.len());
            let (_, used) = proc.process_data(pos as u32, &data[pos..end], &mut c);
            pos += used.max(1).min(end - pos);
        }
        proc.eot(&mut c);
        c.eot();
    }
}

fn check_raw(case: &str, mode: Mode) {
    let Some(shared) = shared_dir(case) else { return };
    let data = std::fs::read(shared.join("conformance/snapshots/itm_only_raw/itm_testdata.bin")).unwrap();
    let c = run_with(&ocsd_itm_cfg { reg_tcr: 0 }, &data, mode, usize::MAX);
    let want: Vec<String> = expected_lines(&shared, case).into_iter().filter(|l| l.starts_with("Idx:")).collect();
    assert!(!want.is_empty());
    for (i, (g, w)) in c.lines.iter().zip(want.iter()).enumerate() {
        assert_eq!(g, w, "{} line {}", case, i);
    }
    assert_eq!(c.lines.len(), want.len(), "{}: line count", case);
}

#[test]
fn ref_itm_only_raw() {
    check_raw("itm_only_raw", Mode::Decode);
}

#[test]
fn ref_itm_only_raw_pkts() {
    check_raw("itm_only_raw_pkts", Mode::Packets);
}
