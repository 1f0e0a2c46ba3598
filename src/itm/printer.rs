//! ITM packet text, as OpenCSD's `ItmTrcPacket::toString` writes it.

use std::fmt::Write;

use super::types::*;
use crate::common::TracePacket;

fn type_name(ty: ocsd_itm_pkt_type) -> (&'static str, &'static str) {
    match ty {
        ITM_PKT_NOTSYNC => ("ITM_NOTSYNC", "ITM data stream not synchronised"),
        ITM_PKT_INCOMPLETE_EOT => ("ITM_INCOMPLETE_EOT", "Incomplete packet flushed at end of trace"),
        ITM_PKT_ASYNC => ("ITM_ASYNC", "Alignment synchronisation packet"),
        ITM_PKT_OVERFLOW => ("ITM_OVERFLOW", "ITM overflow packet"),
        ITM_PKT_SWIT => ("ITM_SWIT", "Software Stimulus write packet"),
        ITM_PKT_DWT => ("ITM_DWT", "DWT hardware stimulus write"),
        ITM_PKT_TS_LOCAL => ("ITM_TS_LOCAL", "Local Timestamp"),
        ITM_PKT_TS_GLOBAL_1 => ("ITM_GTS_1", "Global Timestamp [25:0]"),
        ITM_PKT_TS_GLOBAL_2 => ("ITM_GTS_2", "Global Timestamp [{63|42}:26]"),
        ITM_PKT_EXTENSION => ("ITM_EXTENSION", "Extension packet"),
        ITM_PKT_BAD_SEQUENCE => ("ITM_BAD_SEQUENCE", "Invalid sequence in packet"),
        ITM_PKT_RESERVED => ("ITM_RESERVED", "Reserved Packet Header"),
        _ => ("ITM_UNKNOWN", "ERROR: unknown packet type"),
    }
}

impl ocsd_itm_pkt {
    /// The value in hex, as many digits as its size in bytes.
    fn write_val(&self, out: &mut String) {
        if self.val_sz <= 4 {
            let _ = write!(out, "0x{:01$x}", self.value, usize::from(self.val_sz) * 2);
        } else {
            let _ = write!(out, "0x{:02x}{:08x}", self.val_ext, self.value);
        }
    }

    fn write_dwt(&self, out: &mut String) {
        const EXCEP_FN: [&str; 4] = ["reserved", "entered", "exited", "returned to"];
        let src = self.src_id;
        match src {
            0 => {
                let _ = write!(out, "[Event Counter: 0x{:02x}; Flags: ", self.value);
                let flags = [
                    (ITM_DWT_ECNTR_CPI, " CPI "),
                    (ITM_DWT_ECNTR_EXC, " EXC "),
                    (ITM_DWT_ECNTR_SLP, " Sleep "),
                    (ITM_DWT_ECNTR_LSU, " LSU "),
                    (ITM_DWT_ECNTR_FLD, " Fold "),
                    (ITM_DWT_ECNTR_CYC, " CYC "),
                ];
                for (bit, name) in flags {
                    out.push_str(if self.value & bit as u32 != 0 { name } else { " --- " });
                }
                out.push_str("] ");
            }
            1 => {
                let _ = write!(
                    out,
                    "[Exception Num:  0x{:04x}({}) ]",
                    self.value & 0x1FF,
                    EXCEP_FN[((self.value >> 12) & 0x3) as usize]
                );
            }
            2 => {
                out.push_str("[PC Sample: ");
                self.write_val(out);
                out.push_str("] ");
            }
            8..=23 => {
                let dt_type = (src >> 3) & 0x3;
                let write = src & 0x1 != 0;
                let comp = (src >> 1) & 0x3;
                let _ = write!(out, "[Data Trc: comp={}; ", comp);
                match (dt_type, write) {
                    (1, false) => out.push_str("PC Value="),
                    (1, true) => out.push_str("Address="),
                    _ => out.push_str(if write { "Val write: " } else { "Val read: " }),
                }
                self.write_val(out);
                out.push_str(if dt_type == 1 { " ] " } else { "] " });
            }
            _ => out.push_str("[Reserved discriminator value] "),
        }
    }
}

impl TracePacket for ocsd_itm_pkt {
    fn write_str(&self, out: &mut String) {
        const TS_TC: [&str; 4] =
            ["TS Sync", "TS Delayed", "TS Sync, Packet Delayed", "TS Delayed, Packet Delayed"];
        const GTS1_BITS: [u32; 4] = [6, 13, 20, 25];
        let (name, desc) = type_name(self.type_);
        out.push_str(name);
        out.push_str(": ");
        match self.type_ {
            ITM_PKT_SWIT => {
                let _ = write!(out, "{{src id: 0x{:02x}}}  ", self.src_id);
                self.write_val(out);
            }
            ITM_PKT_DWT => {
                let _ = write!(out, "{{desc: 0x{:02x}}} ", self.src_id);
                self.write_dwt(out);
            }
            ITM_PKT_TS_LOCAL => {
                self.write_val(out);
                let _ = write!(out, " {{ {} }}", TS_TC[usize::from(self.src_id & 3)]);
            }
            ITM_PKT_TS_GLOBAL_1 => {
                let bits = GTS1_BITS[usize::from(self.val_sz.clamp(1, 4) - 1)];
                let _ = write!(out, "{{ TS bits [{}:0]", bits);
                if self.src_id & 0x1 != 0 {
                    out.push_str(", Clk change");
                }
                if self.src_id & 0x2 != 0 {
                    out.push_str(", Clk wrap");
                }
                out.push_str("} ");
                self.write_val(out);
            }
            ITM_PKT_TS_GLOBAL_2 => {
                out.push_str(if self.val_sz == 5 { "{ TS bits [63:26]} " } else { "{ TS bits [47:26]} " });
                self.write_val(out);
            }
            ITM_PKT_EXTENSION => {
                let bitsize = u32::from(self.src_id & 0x1F) + 1;
                if bitsize == 3 && self.src_id & 0x80 == 0 {
                    let _ = write!(out, "{{stim port page}} 0x{:02x}", self.value);
                } else {
                    let _ = write!(
                        out,
                        "{{unknown extension type, {} bits }} 0x{:02$x}",
                        bitsize,
                        self.value,
                        (bitsize / 4 + 1) as usize
                    );
                }
            }
            ITM_PKT_INCOMPLETE_EOT | ITM_PKT_BAD_SEQUENCE => {
                let _ = write!(out, "[Init type: {}] ", type_name(self.err_type).0);
            }
            _ => {}
        }
        out.push_str("; '");
        out.push_str(desc);
        out.push('\'');
    }

    fn is_bad_packet(&self) -> bool {
        self.type_ >= ITM_PKT_BAD_SEQUENCE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(p: &ocsd_itm_pkt) -> String {
        let mut s = String::new();
        p.write_str(&mut s);
        s
    }

    fn pkt(type_: ocsd_itm_pkt_type, src_id: u8, value: u32, val_sz: u8) -> ocsd_itm_pkt {
        ocsd_itm_pkt { type_, src_id, value, val_sz, ..Default::default() }
    }

    #[test]
    fn packet_text() {
        assert_eq!(text(&pkt(ITM_PKT_NOTSYNC, 0, 0, 0)), "ITM_NOTSYNC: ; 'ITM data stream not synchronised'");
        assert_eq!(text(&pkt(ITM_PKT_ASYNC, 0, 0, 0)), "ITM_ASYNC: ; 'Alignment synchronisation packet'");
        assert_eq!(text(&pkt(ITM_PKT_OVERFLOW, 0, 0, 0)), "ITM_OVERFLOW: ; 'ITM overflow packet'");
        assert_eq!(
            text(&pkt(ITM_PKT_SWIT, 3, 0xbb, 1)),
            "ITM_SWIT: {src id: 0x03}  0xbb; 'Software Stimulus write packet'"
        );
        assert_eq!(
            text(&pkt(ITM_PKT_DWT, 0, 0x15, 1)),
            "ITM_DWT: {desc: 0x00} [Event Counter: 0x15; Flags:  CPI  ---  Sleep  ---  Fold  --- ] ; 'DWT hardware stimulus write'"
        );
        assert_eq!(
            text(&pkt(ITM_PKT_DWT, 1, 0x1004, 2)),
            "ITM_DWT: {desc: 0x01} [Exception Num:  0x0004(entered) ]; 'DWT hardware stimulus write'"
        );
        assert_eq!(
            text(&pkt(ITM_PKT_DWT, 2, 0x1000, 4)),
            "ITM_DWT: {desc: 0x02} [PC Sample: 0x00001000] ; 'DWT hardware stimulus write'"
        );
        assert_eq!(
            text(&pkt(ITM_PKT_DWT, 0x12, 0x44, 1)),
            "ITM_DWT: {desc: 0x12} [Data Trc: comp=1; Val read: 0x44] ; 'DWT hardware stimulus write'"
        );
        assert_eq!(
            text(&pkt(ITM_PKT_DWT, 0x08, 0x1234, 2)),
            "ITM_DWT: {desc: 0x08} [Data Trc: comp=0; PC Value=0x1234 ] ; 'DWT hardware stimulus write'"
        );
        assert_eq!(
            text(&pkt(ITM_PKT_DWT, 0x0B, 0x1234, 2)),
            "ITM_DWT: {desc: 0x0b} [Data Trc: comp=1; Address=0x1234 ] ; 'DWT hardware stimulus write'"
        );
        assert_eq!(
            text(&pkt(ITM_PKT_DWT, 0x06, 0x1234, 2)),
            "ITM_DWT: {desc: 0x06} [Reserved discriminator value] ; 'DWT hardware stimulus write'"
        );
        assert_eq!(
            text(&pkt(ITM_PKT_TS_LOCAL, 3, 0x07543f5e, 4)),
            "ITM_TS_LOCAL: 0x07543f5e { TS Delayed, Packet Delayed }; 'Local Timestamp'"
        );
        assert_eq!(
            text(&pkt(ITM_PKT_TS_GLOBAL_1, 3, 0x02fea782, 4)),
            "ITM_GTS_1: { TS bits [25:0], Clk change, Clk wrap} 0x02fea782; 'Global Timestamp [25:0]'"
        );
        let mut g2 = pkt(ITM_PKT_TS_GLOBAL_2, 0, 0x04080c13, 5);
        assert_eq!(text(&g2), "ITM_GTS_2: { TS bits [63:26]} 0x0004080c13; 'Global Timestamp [{63|42}:26]'");
        g2.val_sz = 4;
        g2.value = 0x48d16;
        assert_eq!(text(&g2), "ITM_GTS_2: { TS bits [47:26]} 0x00048d16; 'Global Timestamp [{63|42}:26]'");
        assert_eq!(
            text(&pkt(ITM_PKT_EXTENSION, 2, 2, 4)),
            "ITM_EXTENSION: {stim port page} 0x02; 'Extension packet'"
        );
        assert_eq!(
            text(&pkt(ITM_PKT_EXTENSION, 0x89, 0x3f5, 4)),
            "ITM_EXTENSION: {unknown extension type, 10 bits } 0x3f5; 'Extension packet'"
        );
        let mut bad = pkt(ITM_PKT_BAD_SEQUENCE, 0, 0, 0);
        bad.err_type = ITM_PKT_TS_GLOBAL_1;
        assert_eq!(text(&bad), "ITM_BAD_SEQUENCE: [Init type: ITM_GTS_1] ; 'Invalid sequence in packet'");
        assert_eq!(text(&pkt(ITM_PKT_RESERVED, 0, 0, 0)), "ITM_RESERVED: ; 'Reserved Packet Header'");
        assert_eq!(text(&pkt(77, 0, 0, 0)), "ITM_UNKNOWN: ; 'ERROR: unknown packet type'");
    }
}
