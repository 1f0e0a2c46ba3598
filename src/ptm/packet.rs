//! PTM packet field updates (OpenCSD's `PtmTrcPacket`) and packet text
//! (`PtmTrcPacket::toString`).
#![allow(non_upper_case_globals)]

use std::fmt::Write;

use super::types::*;
use crate::abi::*;
use crate::common::TracePacket;
use crate::etmv3::packet::{push_u8_as_char, write_isa};
use crate::etmv3::write_val_str;

impl ocsd_ptm_pkt {
    /// A packet in the reset state.
    pub fn new() -> Self {
        let mut p = ocsd_ptm_pkt::default();
        p.reset_state();
        p
    }

    pub fn clear(&mut self) {
        self.err_type = PTM_PKT_NOERROR;
        self.cycle_count = 0;
        self.cc_valid = 0;
        self.context.set_updated(0);
        self.context.set_updated_c(0);
        self.context.set_updated_v(0);
        self.ts_update_bits = 0;
        self.atom.En_bits = 0;
        self.exception.bits.set_present(0);
        self.prev_isa = self.curr_isa;
    }

    pub fn reset_state(&mut self) {
        self.type_ = PTM_PKT_NOTSYNC;
        self.context.ctxtID = 0;
        self.context.VMID = 0;
        self.context.set_curr_alt_isa(0);
        self.context.set_curr_Hyp(0);
        self.context.set_curr_NS(0);
        self.addr.valid_bits = 0;
        self.addr.size = VA_32BIT;
        self.addr.val = 0;
        self.prev_isa = ocsd_isa_unknown;
        self.curr_isa = ocsd_isa_unknown;
        self.timestamp = 0;
        self.clear();
    }

    pub(crate) fn set_err_type(&mut self, e: ocsd_ptm_pkt_type) {
        self.err_type = self.type_;
        self.type_ = e;
    }
    pub(crate) fn update_ns(&mut self, v: u32) {
        self.context.set_curr_NS(v);
        self.context.set_updated(1);
    }
    pub(crate) fn update_alt_isa(&mut self, v: u32) {
        self.context.set_curr_alt_isa(v);
        self.context.set_updated(1);
    }
    pub(crate) fn update_hyp(&mut self, v: u32) {
        self.context.set_curr_Hyp(v);
        self.context.set_updated(1);
    }
    pub(crate) fn update_isa(&mut self, isa: ocsd_isa) {
        self.prev_isa = self.curr_isa;
        self.curr_isa = isa;
    }
    pub(crate) fn update_context_id(&mut self, id: u32) {
        self.context.ctxtID = id;
        self.context.set_updated_c(1);
    }
    pub(crate) fn update_vmid(&mut self, v: u8) {
        self.context.VMID = v;
        self.context.set_updated_v(1);
    }
    pub(crate) fn set_exception(&mut self, t: ocsd_armv7_exception, num: u16) {
        self.exception.bits.set_present(1);
        self.exception.number = num;
        self.exception.type_ = t;
    }
    pub(crate) fn set_cycle_count(&mut self, cc: u32) {
        self.cycle_count = cc;
        self.cc_valid = 1;
    }
    pub(crate) fn update_address(&mut self, part: ocsd_vaddr_t, bits: u32) {
        let mask = if bits >= 64 { !0u64 } else { (1u64 << bits) - 1 };
        self.addr.pkt_bits = bits as u8;
        self.addr.val = (self.addr.val & !mask) | (part & mask);
        if bits as u8 > self.addr.valid_bits {
            self.addr.valid_bits = bits as u8;
        }
    }
    pub(crate) fn update_timestamp(&mut self, ts: u64, bits: u8) {
        let mask = if bits >= 64 { !0u64 } else { (1u64 << bits) - 1 };
        self.timestamp = (self.timestamp & !mask) | (ts & mask);
        self.ts_update_bits = bits;
    }
    pub(crate) fn set_cycle_acc_atom_from_phdr(&mut self, hdr: u8) {
        self.atom.num = 1;
        self.atom.En_bits = if hdr & 0x2 != 0 { 0 } else { 1 };
    }
    pub(crate) fn set_atom_from_phdr(&mut self, hdr: u8) {
        let fmt = hdr & 0xF0;
        self.atom.num = if fmt == 0x80 {
            if hdr & 0x08 == 0x08 {
                2
            } else {
                1
            }
        } else if fmt == 0x90 {
            3
        } else if hdr & 0xE0 == 0xA0 {
            4
        } else {
            5
        };
        let mut mask: u8 = 0x2;
        self.atom.En_bits = 0;
        for _ in 0..self.atom.num {
            self.atom.En_bits <<= 1;
            if mask & hdr == 0 {
                self.atom.En_bits |= 1;
            }
            mask <<= 1;
        }
    }
}

fn type_name(t: ocsd_ptm_pkt_type) -> (&'static str, &'static str) {
    match t {
        PTM_PKT_NOTSYNC => ("NOTSYNC", "PTM Not Synchronised"),
        PTM_PKT_INCOMPLETE_EOT => ("INCOMPLETE_EOT", "Incomplete packet flushed at end of trace"),
        PTM_PKT_NOERROR => ("NO_ERROR", "Error type not set"),
        PTM_PKT_BAD_SEQUENCE => ("BAD_SEQUENCE", "Invalid sequence in packet"),
        PTM_PKT_RESERVED => ("RESERVED", "Reserved Packet Header"),
        PTM_PKT_BRANCH_ADDRESS => ("BRANCH_ADDRESS", "Branch address packet"),
        PTM_PKT_A_SYNC => ("ASYNC", "Alignment Synchronisation Packet"),
        PTM_PKT_I_SYNC => ("ISYNC", "Instruction Synchronisation packet"),
        PTM_PKT_TRIGGER => ("TRIGGER", "Trigger Event packet"),
        PTM_PKT_WPOINT_UPDATE => ("WP_UPDATE", "Waypoint update packet"),
        PTM_PKT_IGNORE => ("IGNORE", "Ignore packet"),
        PTM_PKT_CONTEXT_ID => ("CTXTID", "Context ID packet"),
        PTM_PKT_VMID => ("VMID", "VM ID packet"),
        PTM_PKT_ATOM => ("ATOM", "Atom packet"),
        PTM_PKT_TIMESTAMP => ("TIMESTAMP", "Timestamp packet"),
        PTM_PKT_EXCEPTION_RET => ("ERET", "Exception return packet"),
        _ => ("UNKNOWN", "Unknown packet type"),
    }
}

impl ocsd_ptm_pkt {
    fn write_cc(&self, out: &mut String) {
        let _ = write!(out, "Cycles={}; ", self.cycle_count);
    }

    fn write_atoms(&self, out: &mut String) {
        let mut bits = self.atom.En_bits;
        if self.cc_valid != 0 {
            out.push(if bits & 1 != 0 { 'E' } else { 'N' });
            out.push_str("; ");
            self.write_cc(out);
        } else {
            for _ in 0..self.atom.num {
                out.push(if bits & 1 != 0 { 'E' } else { 'N' });
                bits >>= 1;
            }
            out.push_str("; ");
        }
    }

    fn write_branch(&self, out: &mut String) {
        const EXCEP: [&str; 16] = [
            "No Exception", "Debug Halt", "SMC", "Hyp", "Async Data Abort", "Jazelle", "Reserved", "Reserved",
            "PE Reset", "Undefined Instr", "SVC", "Prefetch Abort", "Data Fault", "Generic", "IRQ", "FIQ",
        ];
        out.push_str("Addr=");
        write_val_str(out, 32, self.addr.valid_bits as u32, self.addr.val, self.addr.pkt_bits as u32);
        out.push_str("; ");
        if self.curr_isa != self.prev_isa {
            write_isa(out, self.curr_isa);
        }
        if self.context.updated() != 0 {
            out.push_str(if self.context.curr_NS() != 0 { "NS; " } else { "S; " });
            out.push_str(if self.context.curr_Hyp() != 0 { "Hyp; " } else { "" });
        }
        if self.exception.bits.present() != 0 {
            out.push_str("Excep=");
            out.push_str(EXCEP.get(self.exception.number as usize).copied().unwrap_or("Unknown"));
            let _ = write!(out, " [{:02x}]; ", self.exception.number);
        }
        if self.cc_valid != 0 {
            self.write_cc(out);
        }
    }

    fn write_isync(&self, out: &mut String) {
        const REASON: [&str; 4] = ["Periodic", "Trace Enable", "Restart Overflow", "Debug Exit"];
        let _ = write!(out, "({}); ", REASON[(self.i_sync_reason & 3) as usize]);
        let _ = write!(out, "Addr=0x{:08x}; ", self.addr.val as u32);
        out.push_str(if self.context.curr_NS() != 0 { "NS; " } else { "S; " });
        out.push_str(if self.context.curr_Hyp() != 0 { "Hyp; " } else { " " });
        if self.context.updated_c() != 0 {
            let _ = write!(out, "CtxtID={:08x}; ", self.context.ctxtID);
        }
        write_isa(out, self.curr_isa);
        if self.cc_valid != 0 {
            self.write_cc(out);
        }
    }

    fn write_ts(&self, out: &mut String) {
        out.push_str("TS=");
        write_val_str(out, 64, 64, self.timestamp, self.ts_update_bits as u32);
        let _ = write!(out, "({}); ", self.timestamp);
        if self.cc_valid != 0 {
            self.write_cc(out);
        }
    }
}

impl TracePacket for ocsd_ptm_pkt {
    fn write_str(&self, out: &mut String) {
        let (name, desc) = type_name(self.type_);
        out.push_str(name);
        out.push_str(" : ");
        out.push_str(desc);
        out.push_str("; ");
        match self.type_ {
            PTM_PKT_BAD_SEQUENCE => {
                let _ = write!(out, "[{}]; ", type_name(self.err_type).0);
            }
            PTM_PKT_ATOM => self.write_atoms(out),
            PTM_PKT_CONTEXT_ID => {
                let _ = write!(out, "CtxtID=0x{:08x}; ", self.context.ctxtID);
            }
            PTM_PKT_VMID => {
                // a uint8_t streams as a character, padded to width 2
                out.push_str("VMID=0x0");
                push_u8_as_char(out, self.context.VMID);
                out.push_str("; ");
            }
            PTM_PKT_WPOINT_UPDATE | PTM_PKT_BRANCH_ADDRESS => self.write_branch(out),
            PTM_PKT_I_SYNC => self.write_isync(out),
            PTM_PKT_TIMESTAMP => self.write_ts(out),
            _ => {}
        }
    }

    fn is_bad_packet(&self) -> bool {
        self.type_ >= PTM_PKT_BAD_SEQUENCE
    }
}
