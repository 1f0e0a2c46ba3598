//! Packet processor tests on hand-built byte sequences.

use super::*;
use crate::common::{ErrorLog, OcsdError, PacketOut, PacketProcessor, TracePacket};
use crate::ete::ocsd_ete_cfg;

const ASYNC: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80];

#[derive(Default)]
struct Out {
    lines: Vec<(u32, String, Vec<u8>)>,
    raw_only: Vec<(u32, Vec<u8>)>,
    errors: Vec<String>,
    wait_on: Option<usize>,
    pkts: Vec<ocsd_etmv4_i_pkt>,
    /// Take runs of atom packets unseen (the last index of each run taken).
    absorbing: bool,
    absorbed: Vec<(u32, Vec<u8>)>,
}

impl ErrorLog for Out {
    fn log_error(&mut self, component: &str, err: &OcsdError) {
        self.errors.push(format!("{} : {}", component, err.details()));
    }
    fn log_message(&mut self, _: &str, _: ocsd_err_severity_t, _: &str) {}
}

impl PacketOut<ocsd_etmv4_i_pkt> for Out {
    fn packet(&mut self, idx: u32, pkt: &ocsd_etmv4_i_pkt, raw: &[u8]) -> ocsd_datapath_resp_t {
        let mut s = String::new();
        pkt.write_str(&mut s);
        self.lines.push((idx, s, raw.to_vec()));
        self.pkts.push(*pkt);
        if self.wait_on == Some(self.lines.len()) {
            OCSD_RESP_WAIT
        } else {
            OCSD_RESP_CONT
        }
    }
    fn raw_only(&mut self, idx: u32, _: &ocsd_etmv4_i_pkt, raw: &[u8]) {
        self.raw_only.push((idx, raw.to_vec()));
    }
    fn logger(&mut self) -> &mut dyn ErrorLog {
        self
    }
    fn atom_run(&mut self, index: u32, bytes: &[u8]) -> (usize, ocsd_datapath_resp_t) {
        if !self.absorbing {
            return (0, OCSD_RESP_CONT);
        }
        self.absorbed.push((index, bytes.to_vec()));
        (bytes.len(), OCSD_RESP_CONT)
    }
}

fn etm4_cfg() -> EtmV4Config {
    EtmV4Config::new(&ocsd_etmv4_cfg {
        reg_idr0: 0x28000EA1,
        reg_idr1: 0x4100F403,
        reg_idr2: 0x00000488,
        reg_configr: 0xC1,
        reg_traceidr: 0x10,
        arch_ver: ARCH_V8,
        core_prof: profile_CortexA,
        ..Default::default()
    })
}

fn ete_cfg() -> EtmV4Config {
    EtmV4Config::from_ete(&ocsd_ete_cfg {
        reg_idr0: 0x28c1cea1,
        reg_idr1: 0x4100fff0,
        reg_idr2: 0xd0001088,
        reg_idr8: 0,
        reg_devarch: 0x47735a13,
        reg_configr: 0xc1,
        reg_traceidr: 0x2,
        arch_ver: ARCH_AA64,
        core_prof: profile_CortexA,
    })
}

/// Run `bytes` after an A-sync and a trace info; returns the packet texts
/// after those two.
fn run(cfg: EtmV4Config, bytes: &[u8]) -> Vec<String> {
    let mut data = ASYNC.to_vec();
    data.extend_from_slice(&[0x01, 0x00]);
    data.extend_from_slice(bytes);
    let mut p = EtmV4IPktProc::with_config(cfg);
    let mut out = Out::default();
    let (resp, n) = p.process_data(0, &data, &mut out);
    assert_eq!(resp, OCSD_RESP_CONT);
    assert_eq!(n, data.len());
    p.eot(&mut out);
    out.lines.into_iter().skip(2).map(|(_, s, _)| s).collect()
}

fn one(cfg: EtmV4Config, bytes: &[u8]) -> String {
    let v = run(cfg, bytes);
    assert_eq!(v.len(), 1, "{:?}", v);
    v[0].clone()
}

#[test]
fn sync_and_trace_info() {
    let mut p = EtmV4IPktProc::with_config(etm4_cfg());
    let mut out = Out::default();
    let mut data = ASYNC.to_vec();
    data.extend_from_slice(&[0x01, 0x01, 0x00, 0x01, 0x01, 0x00]);
    p.process_data(100, &data, &mut out);
    assert_eq!(out.lines[0], (100, "I_ASYNC : Alignment Synchronisation.".to_string(), ASYNC.to_vec()));
    assert_eq!(out.lines[1].0, 112);
    assert_eq!(out.lines[1].1, "I_TRACE_INFO : Trace Info.; INFO=0x0 { CC.0 }; Decoder Sync point TINFO");
    assert_eq!(out.lines[2].1, "I_TRACE_INFO : Trace Info.; INFO=0x0 { CC.0 }");
    assert!(p.is_synced());
    assert_eq!(p.name(), "PKTP_ETMV4I_0016");
}

#[test]
fn trace_info_sections() {
    // info (CC on), key, spec, cycle threshold
    let s = one(ete_cfg(), &[0x01, 0x0F, 0x01, 0x05, 0x03, 0x16]);
    assert_eq!(s, "I_TRACE_INFO : Trace Info.; INFO=0x1 { CC.1, TSTATE.0 }; CC_THRESHOLD=0x16");
    let mut p = EtmV4IPktProc::with_config(ete_cfg());
    let mut out = Out::default();
    let mut data = ASYNC.to_vec();
    data.extend_from_slice(&[0x01, 0x0F, 0x41, 0x05, 0x03, 0x16]);
    p.process_data(0, &data, &mut out);
    assert_eq!(
        out.lines[1].1,
        "I_TRACE_INFO : Trace Info.; INFO=0x41 { CC.1, TSTATE.1 }; CC_THRESHOLD=0x16; INIT SPEC DEPTH=3; Decoder Sync point TINFO"
    );
    let pkt = &out.pkts[1];
    assert_eq!(pkt.p0_key, 5);
    assert_eq!(pkt.curr_spec_depth, 3);
}

#[test]
fn not_sync_then_sync() {
    let mut p = EtmV4IPktProc::with_config(etm4_cfg());
    let mut out = Out::default();
    let mut data = vec![0x95, 0x11, 0x22, 0xF7, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x00, 0x12];
    data.extend_from_slice(&ASYNC);
    p.process_data(0, &data, &mut out);
    // the first dump goes down the data path, later ones to the monitor only
    assert_eq!(out.lines[0], (0, "I_NOT_SYNC : I Stream not synchronised".to_string(), data[..8].to_vec()));
    assert_eq!(out.raw_only, vec![(8, vec![0x77, 0x88]), (10, vec![0x00, 0x12])]);
    assert_eq!(out.lines[1].0, 12);
    assert_eq!(out.lines[1].1, "I_ASYNC : Alignment Synchronisation.");
}

#[test]
fn addresses() {
    let c = etm4_cfg();
    assert_eq!(one(c, &[0x95, 0xaf, 0x17]), "I_ADDR_S_IS0 : Address, Short, IS0.; Addr=0x0000000000002EBC ~[0x2EBC]");
    assert_eq!(one(c, &[0x96, 0x05]), "I_ADDR_S_IS1 : Address, Short, IS1.; Addr=0x000000000000000A ~[0xA]");
    assert_eq!(
        one(c, &[0x9d, 0x00, 0x35, 0x09, 0x00, 0xc0, 0xff, 0xff, 0xff]),
        "I_ADDR_L_64IS0 : Address, Long, 64 bit, IS0.; Addr=0xFFFFFFC000096A00; "
    );
    assert_eq!(
        one(c, &[0x9e, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08]),
        "I_ADDR_L_64IS1 : Address, Long, 64 bit, IS1.; Addr=0x0807060504030202; "
    );
    assert_eq!(one(c, &[0x9a, 0x38, 0x43, 0x00, 0x01]), "I_ADDR_L_32IS0 : Address, Long, 32 bit, IS0.; Addr=0x00000000010086E0; ");
    assert_eq!(one(c, &[0x9b, 0x38, 0x43, 0x00, 0x01]), "I_ADDR_L_32IS1 : Address, Long, 32 bit, IS1.; Addr=0x0000000001004370; ");
    // exact match re-uses the stack
    let v = run(c, &[0x9a, 0x38, 0x43, 0x00, 0x01, 0x95, 0x07, 0x91]);
    assert_eq!(v[2], "I_ADDR_MATCH : Exact Address Match., [1]; Addr=0x00000000010086E0; ");
}

#[test]
fn context_packets() {
    let c = etm4_cfg();
    assert_eq!(one(c, &[0x81, 0x93, 0, 0, 0, 0]), "I_CTXT : Context Packet.; Ctxt: AArch64,EL3, S; CID=0x00000000; ");
    assert_eq!(one(c, &[0x80]), "I_CTXT : Context Packet.; Ctxt: Same");
    assert_eq!(
        one(c, &[0x85, 0x00, 0x35, 0x09, 0x00, 0xc0, 0xff, 0xff, 0xff, 0xf1, 0x05, 0x12, 0x34, 0x56, 0x78]),
        "I_ADDR_CTXT_L_64IS0 : Address & Context, Long, 64 bit, IS0.; Addr=0xFFFFFFC000096A00; Ctxt: AArch64,EL1, NS; CID=0x78563412; VMID=0x0005; "
    );
    // 32 bit address merges into a 64 bit one with AArch64 context
    let v = run(c, &[0x85, 0x00, 0x35, 0x09, 0x00, 0xc0, 0xff, 0xff, 0xff, 0x31, 0x9a, 0x37, 0x19, 0x11, 0x00]);
    assert_eq!(v[1], "I_ADDR_L_32IS0 : Address, Long, 32 bit, IS0.; Addr=0xFFFFFFC0001132DC; ");
    // ETE: 32 bit VMID, Realm
    assert_eq!(
        one(ete_cfg(), &[0x81, 0x79, 1, 2, 3, 4]),
        "I_CTXT : Context Packet.; Ctxt: AArch64,EL1, Realm; VMID=0x4030201; "
    );
}

#[test]
fn atoms() {
    let c = etm4_cfg();
    assert_eq!(one(c, &[0xf7]), "I_ATOM_F1 : Atom format 1.; E");
    assert_eq!(one(c, &[0xf6]), "I_ATOM_F1 : Atom format 1.; N");
    assert_eq!(one(c, &[0xda]), "I_ATOM_F2 : Atom format 2.; NE");
    assert_eq!(one(c, &[0xfd]), "I_ATOM_F3 : Atom format 3.; ENE");
    assert_eq!(one(c, &[0xdc]), "I_ATOM_F4 : Atom format 4.; NEEE");
    assert_eq!(one(c, &[0xd5]), "I_ATOM_F5 : Atom format 5.; NNNNN");
    assert_eq!(one(c, &[0xf5]), "I_ATOM_F5 : Atom format 5.; NEEEE");
    assert_eq!(one(c, &[0xe0]), "I_ATOM_F6 : Atom format 6.; EEEN");
    assert_eq!(one(c, &[0xc0]), "I_ATOM_F6 : Atom format 6.; EEEE");
    assert_eq!(one(c, &[0xe4]), "I_ATOM_F6 : Atom format 6.; EEEEEEEN");
}

#[test]
fn exceptions() {
    let c = etm4_cfg();
    assert_eq!(one(c, &[0x06, 0x1d]), "I_EXCEPT : Exception.;  IRQ; Ret Addr Follows;");
    assert_eq!(one(c, &[0x06, 0x58]), "I_EXCEPT : Exception.;  Data Fault; Ret Addr Follows, Match Prev;");
    assert_eq!(one(c, &[0x07]), "I_EXCEPT_RTN : Exception Return.");
    // ETE: exception return is reserved for the configuration (no error logged)
    assert_eq!(one(ete_cfg(), &[0x07]), "I_RESERVED_CFG : Reserved header for current configuration.[I_EXCEPT_RTN]");
    // ETE: transaction failure and PE reset are 3 byte packets
    assert_eq!(run(ete_cfg(), &[0x06, 0x31, 0x70, 0xf7]), vec!["I_TRANS_FAIL : Transaction Fail.", "I_ATOM_F1 : Atom format 1.; E"]);
    assert_eq!(one(ete_cfg(), &[0x06, 0x01, 0x00]), "I_PE_RESET : PE Reset.");
    // M profile extended exception
    let mut m = *etm4_cfg().regs();
    m.core_prof = profile_CortexM;
    let m = EtmV4Config::new(&m);
    assert_eq!(one(m, &[0x06, 0x91, 0x30]), "I_EXCEPT : Exception.;  IRQ8; Fault Pending; Ret Addr Follows;");
}

#[test]
fn cycle_counts_and_speculation() {
    let c = etm4_cfg(); // commit opt 1
    assert_eq!(one(c, &[0x0f]), "I_CCNT_F1 : Cycle Count format 1.; Count=0x0");
    assert_eq!(one(c, &[0x0e, 0x85, 0x01]), "I_CCNT_F1 : Cycle Count format 1.; Count=0x85");
    assert_eq!(one(c, &[0x0d, 0xf6]), "I_CCNT_F2 : Cycle Count format 2.; Count=0x6");
    assert_eq!(one(c, &[0x13]), "I_CCNT_F3 : Cycle Count format 3.; Count=0x3");
    let mut r = *etm4_cfg().regs();
    r.reg_idr0 &= !0x2000_0000;
    r.reg_idr8 = 78;
    let c0 = EtmV4Config::new(&r);
    assert_eq!(one(c0, &[0x0f, 0x01]), "I_CCNT_F1 : Cycle Count format 1.; Count=0x0; Commit(1)");
    assert_eq!(one(c0, &[0x0c, 0x87]), "I_CCNT_F2 : Cycle Count format 2.; Count=0x7; Commit(9)");
    assert_eq!(one(c0, &[0x0d, 0x07]), "I_CCNT_F2 : Cycle Count format 2.; Count=0x7; Commit(63)");
    assert_eq!(one(c0, &[0x1d]), "I_CCNT_F3 : Cycle Count format 3.; Count=0x1; Commit(4)");
    assert_eq!(one(c, &[0x2d, 0x84, 0x01]), "I_COMMIT : Commit; Commit(132)");
    assert_eq!(one(c, &[0x2e, 0x04]), "I_CANCEL_F1 : Cancel Format 1.; Cancel(4)");
    assert_eq!(one(c, &[0x2f, 0x02]), "I_CANCEL_F1_MISPRED : Cancel Format 1 + Mispredict.; Cancel(2), Mispredict");
    assert_eq!(one(c, &[0x30]), "I_MISPREDICT : Mispredict.; Mispredict");
    assert_eq!(one(c, &[0x33]), "I_MISPREDICT : Mispredict.; Atom: N, Mispredict");
    assert_eq!(one(c, &[0x36]), "I_CANCEL_F2 : Cancel Format 2.; Atom: EE, Cancel(1), Mispredict");
    assert_eq!(one(c, &[0x3b]), "I_CANCEL_F3 : Cancel Format 3.; Atom: E, Cancel(3), Mispredict");
}

#[test]
fn timestamps() {
    let c = etm4_cfg();
    let s = one(c, &[0x02, 0x81, 0x01]);
    assert_eq!(s, "I_TIMESTAMP : Timestamp.; Updated val = 0x81");
    let s = one(c, &[0x03, 0x05, 0x84, 0x01]);
    assert_eq!(s, "I_TIMESTAMP : Timestamp.; Updated val = 0x5; CC=0x84");
    // 9 byte timestamp: last byte holds 8 bits
    let v = run(ete_cfg(), &[0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81]);
    assert_eq!(v, vec!["I_TIMESTAMP : Timestamp.; Updated val = 0x81ffffffffffffff"]);
    // second timestamp only updates the low bits
    let v = run(c, &[0x02, 0x81, 0x01, 0x02, 0x05]);
    assert_eq!(v[1], "I_TIMESTAMP : Timestamp.; Updated val = 0x85");
}

#[test]
fn ete_packets() {
    let c = ete_cfg();
    assert_eq!(one(c, &[0x0a]), "I_TRANS_ST : Transaction Start.");
    assert_eq!(one(c, &[0x0b]), "I_TRANS_COMMIT : Transaction Commit.");
    assert_eq!(one(c, &[0x88]), "I_TS_MARKER : Timestamp Marker");
    assert_eq!(
        one(c, &[0x09, 0x01, 0xff, 0xff, 0x0f, 0, 0, 0, 0, 0]),
        "I_ITE : Instrumentation; EL1; Payload=0xfffff"
    );
    assert_eq!(one(c, &[0xb4, 0x07]), "I_SRC_ADDR_S_IS0 : Source Address, Short, IS0.; Addr=0x000000000000001C ~[0x1C]");
    assert_eq!(one(c, &[0xb5, 0x07]), "I_SRC_ADDR_S_IS1 : Source Address, Short, IS1.; Addr=0x000000000000000E ~[0xE]");
    assert_eq!(
        one(c, &[0xb6, 0x38, 0x43, 0x00, 0x01]),
        "I_SCR_ADDR_L_32IS0 : Source Address, Long, 32 bit, IS0.; Addr=0x00000000010086E0; "
    );
    assert_eq!(
        one(c, &[0xb8, 0x00, 0x35, 0x09, 0x00, 0xc0, 0xff, 0xff, 0xff]),
        "I_SRC_ADDR_L_64IS0 : Source Address, Long, 64 bit, IS0.; Addr=0xFFFFFFC000096A00; "
    );
    assert_eq!(one(c, &[0xb2]), "I_SRC_ADDR_MATCH : Exact Source Address Match., [2]; Addr=0x0000000000000000; ");
    // ETMv4.0 has none of these
    assert_eq!(one(etm4_cfg(), &[0x88]), "I_RESERVED : Reserved Packet Header");
}

#[test]
fn misc_packets() {
    let c = etm4_cfg();
    assert_eq!(one(c, &[0x04]), "I_TRACE_ON : Trace On.");
    assert_eq!(one(c, &[0x71]), "I_EVENT : Trace Event.");
    assert_eq!(one(c, &[0x00, 0x03]), "I_DISCARD : Discard.");
    assert_eq!(one(c, &[0x00, 0x05]), "I_OVERFLOW : Overflow.");
    assert_eq!(one(c, &[0x00, 0x07]), "I_BAD_SEQUENCE : Invalid Sequence in packet.[I_EXTENSION]");
    assert_eq!(one(ete_cfg(), &[0x70]), "I_IGNORE : Ignore.");
    assert_eq!(one(c, &[0x70]), "I_RESERVED : Reserved Packet Header");
    // conditional and data sync packets are reserved for this configuration
    assert_eq!(one(c, &[0x43]), "I_RESERVED_CFG : Reserved header for current configuration.[I_COND_FLUSH]");
    assert_eq!(one(c, &[0x20]), "I_RESERVED_CFG : Reserved header for current configuration.[I_NUM_DS_MKR]");
}

#[test]
fn q_packets() {
    let mut r = *etm4_cfg().regs();
    r.reg_idr0 |= 0x3 << 15;
    let c = EtmV4Config::new(&r);
    assert_eq!(one(c, &[0xaf]), "I_Q : Q Packet.; Count(Unknown)");
    assert_eq!(one(c, &[0xac, 0x05]), "I_Q : Q Packet.; Count(5)");
    assert_eq!(one(c, &[0xa5, 0x07, 0x03]), "I_Q : Q Packet.; Count(3); Addr=0x000000000000001C ~[0x1C]");
    assert_eq!(one(c, &[0xa3]), "I_RESERVED : Reserved Packet Header");
    assert_eq!(one(etm4_cfg(), &[0xaf]), "I_RESERVED : Reserved Packet Header");
}

#[test]
fn cond_packets_with_cond_trace() {
    let mut r = *etm4_cfg().regs();
    r.reg_idr0 |= 0x40;
    r.reg_configr |= 0x7 << 8;
    let c = EtmV4Config::new(&r);
    assert_eq!(one(c, &[0x43]), "I_COND_FLUSH : Conditional Flush.");
    assert_eq!(one(c, &[0x41]), "I_COND_I_F2 : Conditional Instruction, format 2.");
    assert_eq!(one(c, &[0x6c, 0x85, 0x01]), "I_COND_I_F1 : Conditional Instruction, format 1.");
    assert_eq!(one(c, &[0x6d, 0x05]), "I_COND_I_F3 : Conditional Instruction, format 3.");
    assert_eq!(one(c, &[0x68, 0x15, 0x25]), "I_COND_RES_F1 : Conditional Result, format 1.");
    assert_eq!(one(c, &[0x6c | 0x02, 0x15]), "I_COND_RES_F1 : Conditional Result, format 1.");
    assert_eq!(one(c, &[0x49]), "I_COND_RES_F2 : Conditional Result, format 2.");
    assert_eq!(one(c, &[0x51, 0x22]), "I_COND_RES_F3 : Conditional Result, format 3.");
    assert_eq!(one(c, &[0x45]), "I_COND_RES_F4 : Conditional Result, format 4.");
}

#[test]
fn reserved_header_logs_error() {
    let mut p = EtmV4IPktProc::new(1, etm4_cfg());
    let mut out = Out::default();
    let mut data = ASYNC.to_vec();
    data.extend_from_slice(&[0x01, 0x00, 0x08, 0xf7]);
    p.process_data(13694, &data, &mut out);
    assert_eq!(out.errors, vec!["PKTP_ETMV4I_0001 : 0x0014 (OCSD_ERR_INVALID_PCKT_HDR) [Invalid packet header]; TrcIdx=13708; CS ID=10; "]);
    assert_eq!(out.lines[2].1, "I_RESERVED : Reserved Packet Header");
    assert_eq!(out.lines[2].0, 13708);
    assert_eq!(out.lines[3].1, "I_ATOM_F1 : Atom format 1.; E");
    assert_eq!(p.error_counts(), (1, 0));
    assert!(out.pkts[2].is_bad_packet());
}

#[test]
fn incomplete_packet_at_eot() {
    let mut p = EtmV4IPktProc::with_config(etm4_cfg());
    let mut out = Out::default();
    let mut data = ASYNC.to_vec();
    data.extend_from_slice(&[0x01, 0x00, 0x9d, 0x00, 0x35]);
    p.process_data(0, &data, &mut out);
    assert_eq!(out.lines.len(), 2);
    p.eot(&mut out);
    assert_eq!(out.lines[2].1, "I_INCOMPLETE_EOT : Incomplete packet at end of trace.[I_ADDR_L_64IS0]");
    assert_eq!(out.lines[2].2, vec![0x9d, 0x00, 0x35]);
    // nothing more at a second EOT
    p.eot(&mut out);
    assert_eq!(out.lines.len(), 3);
}

#[test]
fn wait_stops_after_packet_and_resumes() {
    let mut data = ASYNC.to_vec();
    data.extend_from_slice(&[0x01, 0x00, 0xf7, 0xf6, 0x95, 0x07]);
    let mut p = EtmV4IPktProc::with_config(etm4_cfg());
    let mut out = Out { wait_on: Some(3), ..Default::default() };
    let (resp, n) = p.process_data(0, &data, &mut out);
    assert_eq!(resp, OCSD_RESP_WAIT);
    assert_eq!(n, 15);
    let (resp, n2) = p.process_data(15, &data[15..], &mut out);
    assert_eq!(resp, OCSD_RESP_CONT);
    assert_eq!(n + n2, data.len());
    let texts: Vec<_> = out.lines.iter().map(|l| (l.0, l.1.clone())).collect();
    assert_eq!(texts[3], (15, "I_ATOM_F1 : Atom format 1.; N".to_string()));
    assert_eq!(texts[4].0, 16);
}

#[test]
fn byte_at_a_time_gives_the_same_packets() {
    let mut data = vec![0x12, 0x34];
    data.extend_from_slice(&ASYNC);
    data.extend_from_slice(&[0x01, 0x0F, 0x01, 0x05, 0x03, 0x16, 0x04, 0x85, 0x00, 0x35, 0x09, 0x00, 0xc0, 0xff, 0xff, 0xff]);
    data.extend_from_slice(&[0xe1, 0x05, 0x12, 0x34, 0x56, 0x78, 0xf7, 0x95, 0xaf, 0x17, 0x03, 0x05, 0x84, 0x01, 0x0e, 0x01, 0x81, 0x01]);
    // address packets of each length, which a whole block takes at once
    data.extend_from_slice(&[0x96, 0x05, 0x9a, 0x38, 0x43, 0x00, 0x01, 0xf7, 0x9e, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08]);
    data.extend_from_slice(&[0x95, 0x07, 0x91, 0x9b, 0x38, 0x43, 0x00, 0x01, 0x9d, 0x00, 0x35, 0x09, 0x00, 0xc0, 0xff, 0xff, 0xff, 0x95, 0x81]);
    let whole = {
        let mut p = EtmV4IPktProc::with_config(etm4_cfg());
        let mut out = Out::default();
        p.process_data(0, &data, &mut out);
        p.eot(&mut out);
        out.lines
    };
    let mut p = EtmV4IPktProc::with_config(etm4_cfg());
    let mut out = Out::default();
    for (i, b) in data.iter().enumerate() {
        let (_, n) = p.process_data(i as u32, std::slice::from_ref(b), &mut out);
        assert_eq!(n, 1);
    }
    p.eot(&mut out);
    assert_eq!(out.lines, whole);
}

#[test]
fn no_panic_on_random_input() {
    // xorshift: deterministic pseudo-random trace
    let mut rnd = crate::common::xorshift64(0x9E37_79B9_7F4A_7C15);
    let mut data = vec![0u8; 200_000];
    for (i, b) in data.iter_mut().enumerate() {
        *b = rnd() as u8;
        if i % 5000 < 12 {
            *b = if i % 5000 == 11 { 0x80 } else { 0 };
        }
    }
    for cfg in [etm4_cfg(), ete_cfg(), EtmV4Config::default(), EtmV4Config::default_ete()] {
        let mut all = *cfg.regs();
        all.reg_idr0 = 0xFFFF_FFFF;
        all.reg_idr2 = 0xFFFF_FFFF;
        all.reg_configr = 0xFFFF_FFFF;
        all.reg_idr8 = 0xFFFF_FFFF;
        for c in [cfg, EtmV4Config::new(&all)] {
            let mut p = EtmV4IPktProc::with_config(c);
            let mut out = Out::default();
            for chunk in data.chunks(777) {
                let (_, n) = p.process_data(0, chunk, &mut out);
                assert_eq!(n, chunk.len());
            }
            p.eot(&mut out);
            assert!(!out.lines.is_empty());
        }
    }
}

#[test]
fn trace_info_field_bits_show_as_flags() {
    // A later trace info whose INFO field has bits 16 and 17 set (as on
    // corrupted trace): these bits are the initial-TINFO and spec-present
    // flags of the same word, so OpenCSD prints the sync point (and the spec
    // depth when that section is present) even though it is not the first.
    // INFO = 0x7f | 0x7f<<7 | 0x0f<<14 -> bits 16,17 set.
    let s = one(etm4_cfg(), &[0x01, 0x05, 0xff, 0xff, 0x0f, 0x07]);
    assert_eq!(
        s,
        "I_TRACE_INFO : Trace Info.; INFO=0xff { CC.1 }; CC_THRESHOLD=0x0; INIT SPEC DEPTH=7; Decoder Sync point TINFO"
    );
    // bit 16 only, no spec section: sync point without a spec depth
    let s = one(etm4_cfg(), &[0x01, 0x01, 0x80, 0x80, 0x04]);
    assert_eq!(s, "I_TRACE_INFO : Trace Info.; INFO=0x0 { CC.0 }; Decoder Sync point TINFO");
    // bit 17 only with a spec section: spec depth not printed, no sync point
    let s = one(etm4_cfg(), &[0x01, 0x05, 0x80, 0x80, 0x08, 0x03]);
    assert_eq!(s, "I_TRACE_INFO : Trace Info.; INFO=0x0 { CC.0 }");
}

#[test]
fn atom_runs_go_to_an_output_that_takes_them_from_their_bytes() {
    // after the A-sync (0..12) and trace info (12, 13): atoms E, NN
    // (format 2), E, N; a short address (18, 19); atoms E, E, N, EE
    let mut data = ASYNC.to_vec();
    data.extend_from_slice(&[0x01, 0x00, 0xF7, 0xD8, 0xF7, 0xF6, 0x95, 0x11, 0xF7, 0xF7, 0xF6, 0xDB]);
    for absorbing in [false, true] {
        let mut p = EtmV4IPktProc::with_config(etm4_cfg());
        let mut out = Out { absorbing, ..Default::default() };
        let (resp, n) = p.process_data(0, &data, &mut out);
        assert_eq!((resp, n), (OCSD_RESP_CONT, data.len()));
        let idx: Vec<u32> = out.lines.iter().map(|l| l.0).collect();
        if absorbing {
            // each run is offered whole from its first atom, at its index
            assert_eq!(idx, vec![0, 12, 18]);
            assert_eq!(out.absorbed, vec![(14, vec![0xF7, 0xD8, 0xF7, 0xF6]), (20, vec![0xF7, 0xF7, 0xF6, 0xDB])]);
        } else {
            assert_eq!(idx, vec![0, 12, 14, 15, 16, 17, 18, 20, 21, 22, 23]);
            assert!(out.absorbed.is_empty());
        }
        // the packet after a run taken is read as after the run
        assert!(out.lines.iter().any(|l| l.0 == 18 && l.1.starts_with("I_ADDR_S_IS0")), "{:?}", out.lines);
        // and the processor's state is that after the last atom
        let mut tail = Out::default();
        p.process_data(data.len() as u32, &[0xF7], &mut tail);
        assert_eq!(tail.lines.len(), 1);
        assert_eq!(tail.lines[0].0, data.len() as u32);
    }
}
