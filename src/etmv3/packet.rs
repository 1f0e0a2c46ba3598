//! ETMv3 packet field updates (OpenCSD's `EtmV3TrcPacket`) and packet text
#![allow(non_upper_case_globals)]
//! (`EtmV3TrcPacket::toString`).

use std::fmt::Write;

use super::types::*;
use super::write_val_str;
use crate::abi::*;
use crate::common::TracePacket;

impl ocsd_etmv3_pkt {
    /// A packet in the reset state (ISA unknown, everything else zero).
    pub fn new() -> Self {
        let mut p = ocsd_etmv3_pkt::default();
        p.reset_state();
        p
    }

    /// Clear the per-packet fields, keeping the state carried between
    /// packets (address, context, timestamp, ...).
    pub fn clear(&mut self) {
        self.addr.pkt_bits = 0;
        self.prev_isa = self.curr_isa;
        self.exception.bits.set_present(0);
        self.atom.num = 0;
        self.cycle_count = 0;
        self.context.set_updated(0);
        self.context.set_updated_c(0);
        self.context.set_updated_v(0);
        self.data.set_ooo_tag(0);
        self.data.value = 0;
        self.data.set_update_addr(0);
        self.data.set_update_be(0);
        self.data.set_update_dval(0);
        self.ts_update_bits = 0;
        self.isync_info.set_has_cycle_count(0);
        self.isync_info.set_has_LSipAddress(0);
        self.isync_info.set_no_address(0);
    }

    /// Reset all state, including the state carried between packets.
    pub fn reset_state(&mut self) {
        *self = ocsd_etmv3_pkt::default();
        self.curr_isa = ocsd_isa_unknown;
        self.prev_isa = ocsd_isa_unknown;
    }

    pub(crate) fn set_err_type(&mut self, e: ocsd_etmv3_pkt_type) {
        self.err_type = self.type_;
        self.type_ = e;
    }

    pub(crate) fn update_address(&mut self, part: ocsd_vaddr_t, bits: u32) {
        let mask = if bits >= 64 { !0u64 } else { (1u64 << bits) - 1 };
        self.addr.pkt_bits = bits as u8;
        self.addr.val = (self.addr.val & !mask) | (part & mask);
        if bits as u8 > self.addr.valid_bits {
            self.addr.valid_bits = bits as u8;
        }
    }

    /// OpenCSD updates the instruction address field here (not
    /// `data.addr`) and flags a data address update.
    pub(crate) fn update_data_address(&mut self, value: u32, bits: u8) {
        let mask: u32 = if bits >= 32 { !0 } else if bits == 0 { 0 } else { (1u32 << bits) - 1 };
        self.addr.pkt_bits = bits;
        self.addr.val &= !(mask as u64);
        self.addr.val |= (value & mask) as u64;
        if bits > self.addr.valid_bits {
            self.addr.valid_bits = bits;
        }
        self.data.set_update_addr(1);
    }

    pub(crate) fn update_timestamp(&mut self, ts: u64, bits: u8) {
        let mask = if bits >= 64 { !0u64 } else { (1u64 << bits) - 1 };
        self.timestamp = (self.timestamp & !mask) | (ts & mask);
        self.ts_update_bits = bits;
    }

    pub(crate) fn set_exception(
        &mut self,
        type_: ocsd_armv7_exception,
        number: u16,
        cancel: bool,
        cm_type: bool,
        irq_n: u32,
        resume: u32,
    ) {
        self.exception.bits.set_cancel(cancel as u32);
        self.exception.bits.set_cm_irq_n(irq_n);
        self.exception.bits.set_cm_resume(resume);
        self.exception.bits.set_cm_type(cm_type as u32);
        self.exception.number = number;
        self.exception.type_ = type_;
        self.exception.bits.set_present(1);
    }

    pub(crate) fn update_ns(&mut self, ns: u32) {
        self.context.set_curr_NS(ns);
        self.context.set_updated(1);
    }
    pub(crate) fn update_alt_isa(&mut self, alt: u32) {
        self.context.set_curr_alt_isa(alt);
        self.context.set_updated(1);
    }
    pub(crate) fn update_hyp(&mut self, hyp: u32) {
        self.context.set_curr_Hyp(hyp);
        self.context.set_updated(1);
    }
    pub(crate) fn update_isa(&mut self, isa: ocsd_isa) {
        self.prev_isa = self.curr_isa;
        self.curr_isa = isa;
    }
    pub(crate) fn update_context_id(&mut self, id: u32) {
        self.context.set_updated_c(1);
        self.context.ctxtID = id;
    }
    pub(crate) fn update_vmid(&mut self, vmid: u8) {
        self.context.set_updated_v(1);
        self.context.VMID = vmid;
    }
    pub(crate) fn set_data_value(&mut self, v: u32) {
        self.data.value = v;
        self.data.set_update_dval(1);
    }
    pub(crate) fn update_data_endian(&mut self, be: u8) {
        self.data.set_be(be as u32);
        self.data.set_update_be(1);
    }

    /// Interpret a P-header; false if the encoding is not valid.
    pub(crate) fn update_atom_from_phdr(&mut self, hdr: u8, cycle_acc: bool) -> bool {
        if !cycle_acc {
            match hdr & 0x3 {
                0x0 => {
                    let e = (hdr >> 2) & 0xF;
                    let n = (hdr & 0x40 != 0) as u8;
                    self.atom.num = e + n;
                    self.atom.En_bits = (1u32 << e) - 1;
                    self.p_hdr_fmt = 1;
                }
                0x2 => {
                    self.atom.num = 2;
                    self.p_hdr_fmt = 2;
                    self.atom.En_bits = (hdr & 0x8 == 0) as u32 | (((hdr & 0x4 == 0) as u32) << 1);
                }
                _ => return false,
            }
            return true;
        }
        match hdr & 0xA3 {
            0x80 => {
                self.p_hdr_fmt = 1;
                let e = (hdr >> 2) & 0x7;
                let n = (hdr & 0x40 != 0) as u8;
                self.atom.num = e + n;
                if self.atom.num == 0 {
                    return false; // deprecated 0b10000000
                }
                self.atom.En_bits = (1u32 << e) - 1;
                self.cycle_count = (e + n) as u32;
            }
            0x82 => {
                self.p_hdr_fmt = 2;
                if hdr & 0x10 != 0 {
                    self.p_hdr_fmt = 4;
                    self.atom.num = 1;
                    self.cycle_count = 0;
                    self.atom.En_bits = (hdr & 0x04 == 0) as u32;
                } else {
                    self.atom.num = 2;
                    self.cycle_count = 1;
                    self.atom.En_bits = (hdr & 0x8 == 0) as u32 | (((hdr & 0x4 == 0) as u32) << 1);
                }
            }
            0xA0 => {
                self.p_hdr_fmt = 3;
                self.cycle_count = ((hdr >> 2) & 7) as u32 + 1;
                let e = (hdr & 0x40 != 0) as u8;
                self.atom.num = e;
                self.atom.En_bits = e as u32;
            }
            _ => return false,
        }
        true
    }

    // ---- queries used by the decoder
    pub fn is_ctxt_updated(&self) -> bool {
        self.context.updated_v() == 1 || self.context.updated() == 1 || self.context.updated_c() == 1
    }
    pub fn is_excep_pkt(&self) -> bool {
        self.exception.bits.present() == 1
    }
    pub fn is_excep_cancel(&self) -> bool {
        self.exception.bits.present() == 1 && self.exception.bits.cancel() == 1
    }
}

fn type_name(t: ocsd_etmv3_pkt_type) -> (&'static str, &'static str) {
    match t {
        ETM3_PKT_NOTSYNC => ("NOTSYNC", "Trace Stream not synchronised"),
        ETM3_PKT_INCOMPLETE_EOT => ("INCOMPLETE_EOT.", "Incomplete packet at end of trace data."),
        ETM3_PKT_BRANCH_ADDRESS => ("BRANCH_ADDRESS", "Branch address."),
        ETM3_PKT_A_SYNC => ("A_SYNC", "Alignment Synchronisation."),
        ETM3_PKT_CYCLE_COUNT => ("CYCLE_COUNT", "Cycle Count."),
        ETM3_PKT_I_SYNC => ("I_SYNC", "Instruction Packet synchronisation."),
        ETM3_PKT_I_SYNC_CYCLE => ("I_SYNC_CYCLE", "Instruction Packet synchronisation with cycle count."),
        ETM3_PKT_TRIGGER => ("TRIGGER", "Trace Trigger Event."),
        ETM3_PKT_P_HDR => ("P_HDR", "Atom P-header."),
        ETM3_PKT_STORE_FAIL => ("STORE_FAIL", "Data Store Failed."),
        ETM3_PKT_OOO_DATA => ("OOO_DATA", "Out of Order data value packet."),
        ETM3_PKT_OOO_ADDR_PLC => ("OOO_ADDR_PLC", "Out of Order data address placeholder."),
        ETM3_PKT_NORM_DATA => ("NORM_DATA", "Data trace packet."),
        ETM3_PKT_DATA_SUPPRESSED => ("DATA_SUPPRESSED", "Data trace suppressed."),
        ETM3_PKT_VAL_NOT_TRACED => ("VAL_NOT_TRACED", "Data trace value not traced."),
        ETM3_PKT_IGNORE => ("IGNORE", "Packet ignored."),
        ETM3_PKT_CONTEXT_ID => ("CONTEXT_ID", "Context ID change."),
        ETM3_PKT_VMID => ("VMID", "VMID change."),
        ETM3_PKT_EXCEPTION_ENTRY => ("EXCEPTION_ENTRY", "Exception entry data marker."),
        ETM3_PKT_EXCEPTION_EXIT => ("EXCEPTION_EXIT", "Exception return."),
        ETM3_PKT_TIMESTAMP => ("TIMESTAMP", "Timestamp Value."),
        ETM3_PKT_BAD_SEQUENCE => ("BAD_SEQUENCE", "Invalid sequence for packet type."),
        ETM3_PKT_BAD_TRACEMODE => ("BAD_TRACEMODE", "Invalid packet type for this trace mode."),
        _ => ("I_RESERVED", "Reserved Packet Header"),
    }
}

/// `ISA=...; ` as OpenCSD's ETMv3 and PTM packets print it.
pub(crate) fn write_isa(out: &mut String, isa: ocsd_isa) {
    out.push_str("ISA=");
    out.push_str(match isa {
        ocsd_isa_arm => "ARM(32); ",
        ocsd_isa_thumb2 => "Thumb2; ",
        ocsd_isa_aarch64 => "AArch64; ",
        ocsd_isa_tee => "ThumbEE; ",
        ocsd_isa_jazelle => "Jazelle; ",
        _ => "Unknown; ",
    });
}

/// A C++ `ostream << uint8_t` writes the byte as a character.
pub(crate) fn push_u8_as_char(out: &mut String, b: u8) {
    out.push(b as char);
}

const AR_V7_EXCEP: [&str; 16] = [
    "No Exception", "Debug Halt", "SMC", "Hyp", "Async Data Abort", "Jazelle", "Reserved", "Reserved",
    "PE Reset", "Undefined Instr", "SVC", "Prefetch Abort", "Data Fault", "Generic", "IRQ", "FIQ",
];

// (OpenCSD releases before 1.8.0 lacked the comma after "HardFault",
// joining two entries; 1.8.0's table has 24)
const M_EXCEP: [&str; 24] = [
    "No Exception", "IRQ1", "IRQ2", "IRQ3", "IRQ4", "IRQ5", "IRQ6", "IRQ7", "IRQ0", "usage Fault", "NMI", "SVC",
    "DebugMonitor", "Mem Manage", "PendSV", "SysTick", "Reserved", "PE Reset", "Reserved", "HardFault",
    "Reserved", "BusFault", "Reserved", "Reserved",
];

impl ocsd_etmv3_pkt {
    fn write_excep(&self, out: &mut String) {
        out.push_str("Exception=");
        let num = self.exception.number as usize;
        if self.exception.bits.cm_type() != 0 {
            if num < 0x18 {
                out.push_str(M_EXCEP[num]);
            } else {
                let _ = write!(out, "IRQ{}", num as i64 - 0x10);
            }
            if self.exception.bits.cm_resume() != 0 {
                let _ = write!(out, "; Resume={}", self.exception.bits.cm_resume());
            }
            if self.exception.bits.cancel() != 0 {
                out.push_str("; Cancel prev instr");
            }
        } else {
            out.push_str(AR_V7_EXCEP.get(num).copied().unwrap_or("Reserved"));
            out.push_str("; ");
            if self.exception.bits.cancel() != 0 {
                out.push_str("; Cancel prev instr");
            }
        }
    }

    fn write_branch(&self, out: &mut String) {
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
            self.write_excep(out);
        }
    }

    fn write_atoms(&self, out: &mut String) {
        let mut bits = self.atom.En_bits;
        if self.cycle_count == 0 {
            for _ in 0..self.atom.num {
                out.push(if bits & 1 != 0 { 'E' } else { 'N' });
                bits >>= 1;
            }
            return;
        }
        match self.p_hdr_fmt {
            1 => {
                for _ in 0..self.atom.num {
                    out.push_str(if bits & 1 != 0 { "WE" } else { "WN" });
                    bits >>= 1;
                }
            }
            2 => {
                out.push('W');
                for _ in 0..self.atom.num {
                    out.push(if bits & 1 != 0 { 'E' } else { 'N' });
                    bits >>= 1;
                }
            }
            3 => {
                for _ in 0..self.cycle_count {
                    out.push('W');
                }
                if self.atom.num != 0 {
                    out.push(if bits & 1 != 0 { 'E' } else { 'N' });
                }
            }
            _ => {}
        }
        let _ = write!(out, "; Cycles={}", self.cycle_count);
    }

    fn write_isync(&self, out: &mut String) {
        const REASON: [&str; 4] = ["Periodic", "Trace Enable", "Restart Overflow", "Debug Exit"];
        let _ = write!(out, "({}); ", REASON[(self.isync_info.reason & 3) as usize]);
        if self.isync_info.no_address() == 0 {
            out.push_str(if self.isync_info.has_LSipAddress() != 0 { "Data Instr Addr=0x" } else { "Addr=0x" });
            let _ = write!(out, "{:08x}; ", self.addr.val);
        }
        out.push_str(if self.context.curr_NS() != 0 { "NS; " } else { "S; " });
        out.push_str(if self.context.curr_Hyp() != 0 { "Hyp; " } else { " " });
        if self.context.updated_c() != 0 {
            let _ = write!(out, "CtxtID={:x}; ", self.context.ctxtID);
        }
        if self.isync_info.no_address() != 0 {
            return;
        }
        write_isa(out, self.curr_isa);
        if self.isync_info.has_cycle_count() != 0 {
            let _ = write!(out, "Cycles={}; ", self.cycle_count);
        }
        if self.isync_info.has_LSipAddress() != 0 {
            out.push_str("Curr Instr Addr=");
            write_val_str(out, 32, self.data.addr.valid_bits as u32, self.data.addr.val, self.data.addr.pkt_bits as u32);
            out.push(';');
        }
    }

    fn write_data_addr(&self, out: &mut String) {
        if self.data.update_addr() != 0 {
            out.push_str("; Addr=");
            write_val_str(out, 32, self.data.addr.valid_bits as u32, self.data.addr.val, self.data.addr.pkt_bits as u32);
        }
    }
}

impl TracePacket for ocsd_etmv3_pkt {
    fn write_str(&self, out: &mut String) {
        let (name, desc) = type_name(self.type_);
        out.push_str(name);
        out.push_str(" : ");
        out.push_str(desc);
        match self.type_ {
            ETM3_PKT_BAD_SEQUENCE | ETM3_PKT_BAD_TRACEMODE => {
                out.push('[');
                out.push_str(type_name(self.err_type).0);
                out.push(']');
            }
            ETM3_PKT_BRANCH_ADDRESS => {
                out.push_str("; ");
                self.write_branch(out);
            }
            ETM3_PKT_I_SYNC_CYCLE | ETM3_PKT_I_SYNC => {
                out.push_str("; ");
                self.write_isync(out);
            }
            ETM3_PKT_P_HDR => {
                out.push_str("; ");
                self.write_atoms(out);
            }
            ETM3_PKT_CYCLE_COUNT => {
                let _ = write!(out, "; Cycles={}", self.cycle_count);
            }
            ETM3_PKT_CONTEXT_ID => {
                let _ = write!(out, "; CtxtID=0x{:x}", self.context.ctxtID);
            }
            ETM3_PKT_VMID => {
                out.push_str("; VMID=0x");
                push_u8_as_char(out, self.context.VMID);
            }
            ETM3_PKT_TIMESTAMP => {
                let _ = write!(out, "; TS=0x{:x} ({}) ", self.timestamp, self.timestamp);
            }
            ETM3_PKT_OOO_DATA => {
                let _ = write!(out, "; Val=0x{:x}; OO_Tag=0x{:x}", self.data.value, self.data.ooo_tag());
            }
            ETM3_PKT_VAL_NOT_TRACED => self.write_data_addr(out),
            ETM3_PKT_OOO_ADDR_PLC => {
                self.write_data_addr(out);
                let _ = write!(out, "; OO_Tag=0x{:x}", self.data.ooo_tag());
            }
            ETM3_PKT_NORM_DATA => {
                self.write_data_addr(out);
                if self.data.update_dval() != 0 {
                    let _ = write!(out, "; Val=0x{:x}", self.data.value);
                }
            }
            _ => {}
        }
    }

    fn is_bad_packet(&self) -> bool {
        self.type_ >= ETM3_PKT_BAD_SEQUENCE
    }
}
