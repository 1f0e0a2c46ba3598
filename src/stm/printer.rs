//! STM packet text, as OpenCSD's `StmTrcPacket::toString` writes it.

use std::fmt::Write;

use super::types::*;
use crate::common::TracePacket;

impl ocsd_stm_pkt {
    pub fn is_marker_pkt(&self) -> bool {
        self.pkt_has_marker != 0
    }

    pub fn is_ts_pkt(&self) -> bool {
        self.pkt_has_ts != 0
    }

    /// Name and description of a packet type, decorated with this packet's
    /// marker and timestamp flags where the type can carry them.
    fn type_name(&self, ty: ocsd_stm_pkt_type, out: &mut String) -> &'static str {
        let (name, desc, decorate) = match ty {
            STM_PKT_RESERVED => ("RESERVED", "Reserved Packet Header", false),
            STM_PKT_NOTSYNC => ("NOTSYNC", "STM not synchronised", false),
            STM_PKT_INCOMPLETE_EOT => ("INCOMPLETE_EOT", "Incomplete packet flushed at end of trace", false),
            STM_PKT_NO_ERR_TYPE => ("NO_ERR_TYPE", "Error type not set", false),
            STM_PKT_BAD_SEQUENCE => ("BAD_SEQUENCE", "Invalid sequence in packet", false),
            STM_PKT_ASYNC => ("ASYNC", "Alignment synchronisation packet", false),
            STM_PKT_VERSION => ("VERSION", "Version packet", false),
            STM_PKT_FREQ => ("FREQ", "Frequency packet", false),
            STM_PKT_NULL => ("NULL", "Null packet", false),
            STM_PKT_TRIG => ("TRIG", "Trigger packet", true),
            STM_PKT_GERR => ("GERR", "Global Error", false),
            STM_PKT_MERR => ("MERR", "Master Error", false),
            STM_PKT_M8 => ("M8", "Set current master", false),
            STM_PKT_C8 => ("C8", "Set current channel", false),
            STM_PKT_C16 => ("C16", "Set current channel", false),
            STM_PKT_FLAG => ("FLAG", "Flag packet", true),
            STM_PKT_D4 => ("D4", "4 bit data", true),
            STM_PKT_D8 => ("D8", "8 bit data", true),
            STM_PKT_D16 => ("D16", "16 bit data", true),
            STM_PKT_D32 => ("D32", "32 bit data", true),
            STM_PKT_D64 => ("D64", "64 bit data", true),
            _ => ("UNKNOWN", "ERROR: unknown packet type", false),
        };
        out.push_str(name);
        if decorate {
            if self.is_marker_pkt() {
                out.push('M');
            }
            if self.is_ts_pkt() {
                out.push_str("TS");
            }
        }
        // The description gets the same decorations; return the plain part
        // and let the caller add them.
        desc
    }

    fn type_desc_suffix(&self, ty: ocsd_stm_pkt_type, out: &mut String) {
        let decorate = matches!(
            ty,
            STM_PKT_TRIG | STM_PKT_FLAG | STM_PKT_D4 | STM_PKT_D8 | STM_PKT_D16 | STM_PKT_D32 | STM_PKT_D64
        );
        if decorate {
            if self.is_marker_pkt() {
                out.push_str(" + marker");
            }
            if self.is_ts_pkt() {
                out.push_str(" + timestamp");
            }
        }
    }
}

/// OpenCSD's `getValStr` for a 64-bit value with all bits valid, in hex,
/// followed by the updated bits (`~[0x...]`) when `update_bits` is set.
fn write_ts_val(out: &mut String, value: u64, update_bits: u8) {
    let _ = write!(out, "0x{:016X}", value);
    if update_bits != 0 {
        let mask = if update_bits >= 64 { !0u64 } else { !0u64 >> (64 - u32::from(update_bits)) };
        let _ = write!(out, " ~[0x{:X}]", value & mask);
    }
}

impl TracePacket for ocsd_stm_pkt {
    fn write_str(&self, out: &mut String) {
        let desc = self.type_name(self.type_, out);
        out.push(':');
        out.push_str(desc);
        self.type_desc_suffix(self.type_, out);

        let p = &self.payload;
        match self.type_ {
            STM_PKT_INCOMPLETE_EOT | STM_PKT_BAD_SEQUENCE => {
                out.push('[');
                self.type_name(self.err_type, out);
                out.push(']');
            }
            STM_PKT_VERSION => {
                let _ = write!(out, "; Ver={}", p.d8());
            }
            STM_PKT_FREQ => {
                let _ = write!(out, "; Freq={}Hz", p.d32());
            }
            STM_PKT_TRIG => {
                let _ = write!(out, "; TrigData=0x{:02x}", p.d8());
            }
            STM_PKT_M8 => {
                let _ = write!(out, "; Master=0x{:02x}", self.master);
            }
            STM_PKT_C8 | STM_PKT_C16 => {
                let _ = write!(out, "; Chan=0x{:04x}", self.channel);
            }
            STM_PKT_D4 => {
                let _ = write!(out, "; Data=0x{:x}", p.d8() & 0xF);
            }
            STM_PKT_D8 => {
                let _ = write!(out, "; Data=0x{:02x}", p.d8());
            }
            STM_PKT_D16 => {
                let _ = write!(out, "; Data=0x{:04x}", p.d16());
            }
            STM_PKT_D32 => {
                let _ = write!(out, "; Data=0x{:08x}", p.d32());
            }
            STM_PKT_D64 => {
                let _ = write!(out, "; Data=0x{:016x}", p.d64());
            }
            _ => {}
        }

        if self.is_ts_pkt() {
            out.push_str("; TS=");
            write_ts_val(out, self.timestamp, self.pkt_ts_bits);
        }
    }

    fn is_bad_packet(&self) -> bool {
        self.type_ >= STM_PKT_BAD_SEQUENCE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(p: &ocsd_stm_pkt) -> String {
        let mut s = String::new();
        p.write_str(&mut s);
        s
    }

    #[test]
    fn packet_text() {
        let mut p = ocsd_stm_pkt { type_: STM_PKT_NOTSYNC, ..Default::default() };
        assert_eq!(text(&p), "NOTSYNC:STM not synchronised");
        p.type_ = STM_PKT_ASYNC;
        assert_eq!(text(&p), "ASYNC:Alignment synchronisation packet");
        p.type_ = STM_PKT_VERSION;
        p.payload.D8 = 3;
        assert_eq!(text(&p), "VERSION:Version packet; Ver=3");
        p.type_ = STM_PKT_FREQ;
        p.payload.D32 = 19_200_000;
        assert_eq!(text(&p), "FREQ:Frequency packet; Freq=19200000Hz");
        p.type_ = STM_PKT_M8;
        p.master = 0x40;
        assert_eq!(text(&p), "M8:Set current master; Master=0x40");
        p.type_ = STM_PKT_C16;
        p.channel = 0x480;
        assert_eq!(text(&p), "C16:Set current channel; Chan=0x0480");
        p.type_ = STM_PKT_D32;
        p.pkt_has_marker = 1;
        p.payload.D32 = 0x0102_1010;
        assert_eq!(text(&p), "D32M:32 bit data + marker; Data=0x01021010");
        p.type_ = STM_PKT_FLAG;
        p.pkt_has_marker = 0;
        p.pkt_has_ts = 1;
        p.pkt_ts_bits = 36;
        p.timestamp = 0x3_AEB2_84C9;
        assert_eq!(text(&p), "FLAGTS:Flag packet + timestamp; TS=0x00000003AEB284C9 ~[0x3AEB284C9]");
        p.type_ = STM_PKT_INCOMPLETE_EOT;
        p.err_type = STM_PKT_D8;
        assert_eq!(
            text(&p),
            "INCOMPLETE_EOT:Incomplete packet flushed at end of trace[D8TS]; TS=0x00000003AEB284C9 ~[0x3AEB284C9]"
        );
        p.pkt_has_ts = 0;
        p.type_ = STM_PKT_D4;
        p.payload.D8 = 0xA;
        assert_eq!(text(&p), "D4:4 bit data; Data=0xa");
        p.type_ = STM_PKT_TRIG;
        p.payload.D8 = 0x5;
        assert_eq!(text(&p), "TRIG:Trigger packet; TrigData=0x05");
        p.type_ = 99;
        assert_eq!(text(&p), "UNKNOWN:ERROR: unknown packet type");
        p.type_ = STM_PKT_NULL;
        p.pkt_has_ts = 1;
        p.pkt_ts_bits = 64;
        p.timestamp = 0x10;
        assert_eq!(text(&p), "NULL:Null packet; TS=0x0000000000000010 ~[0x10]");
        p.pkt_ts_bits = 0;
        assert_eq!(text(&p), "NULL:Null packet; TS=0x0000000000000010");
    }
}
