//! Packet text of ETMv4 / ETE instruction trace packets, as OpenCSD's
//! `EtmV4ITrcPacket::toString` writes it, and the packet's state updates
//! (OpenCSD's `EtmV4ITrcPacket` setters) used by the packet processor.


use super::types::*;
use crate::abi::*;
use crate::common::TracePacket;
use crate::printers::line::{LineBuf, Padded};
use crate::printers::num::TextOut;

/// `{}` of a signed value.
fn push_signed<T: TextOut>(out: &mut T, v: i32) {
    if v < 0 {
        out.put_char('-');
    }
    out.put_dec(v.unsigned_abs() as u64);
}

/// The packet type table: type => name, description. Gives
/// [`packet_type_name`] and the `NAME : description` text the packet
/// printers start with (one piece, for the per-packet path).
macro_rules! packet_types {
    ($($t:ident => $n:literal, $d:literal;)*) => {
        /// Name and description of a packet type.
        pub fn packet_type_name(t: ocsd_etmv4_i_pkt_type) -> (&'static str, &'static str) {
            match t {
                $($t => ($n, $d),)*
                _ => ("I_UNKNOWN", "Unknown Packet Header"),
            }
        }

        /// `NAME : description` of a packet type, padded for a one-piece copy.
        fn packet_type_text(t: ocsd_etmv4_i_pkt_type) -> &'static Padded<64> {
            match t {
                $($t => {
                    const P: Padded<64> = Padded::new(concat!($n, " : ", $d));
                    &P
                })*
                _ => {
                    const P: Padded<64> = Padded::new("I_UNKNOWN : Unknown Packet Header");
                    &P
                }
            }
        }
    };
}

packet_types! {
    ETM4_PKT_I_NOTSYNC => "I_NOT_SYNC", "I Stream not synchronised";
    ETM4_PKT_I_INCOMPLETE_EOT => "I_INCOMPLETE_EOT", "Incomplete packet at end of trace.";
    ETM4_PKT_I_NO_ERR_TYPE => "I_NO_ERR_TYPE", "No Error Type.";
    ETM4_PKT_I_BAD_SEQUENCE => "I_BAD_SEQUENCE", "Invalid Sequence in packet.";
    ETM4_PKT_I_BAD_TRACEMODE => "I_BAD_TRACEMODE", "Invalid Packet for trace mode.";
    ETM4_PKT_I_RESERVED => "I_RESERVED", "Reserved Packet Header";
    ETM4_PKT_I_RESERVED_CFG => "I_RESERVED_CFG", "Reserved header for current configuration.";
    ETM4_PKT_I_EXTENSION => "I_EXTENSION", "Extension packet header.";
    ETM4_PKT_I_TRACE_INFO => "I_TRACE_INFO", "Trace Info.";
    ETM4_PKT_I_TIMESTAMP => "I_TIMESTAMP", "Timestamp.";
    ETM4_PKT_I_TRACE_ON => "I_TRACE_ON", "Trace On.";
    ETM4_PKT_I_FUNC_RET => "I_FUNC_RET", "V8M - function return.";
    ETM4_PKT_I_EXCEPT => "I_EXCEPT", "Exception.";
    ETM4_PKT_I_EXCEPT_RTN => "I_EXCEPT_RTN", "Exception Return.";
    ETE_PKT_I_ITE => "I_ITE", "Instrumentation";
    ETE_PKT_I_TRANS_ST => "I_TRANS_ST", "Transaction Start.";
    ETE_PKT_I_TRANS_COMMIT => "I_TRANS_COMMIT", "Transaction Commit.";
    ETM4_PKT_I_CCNT_F1 => "I_CCNT_F1", "Cycle Count format 1.";
    ETM4_PKT_I_CCNT_F2 => "I_CCNT_F2", "Cycle Count format 2.";
    ETM4_PKT_I_CCNT_F3 => "I_CCNT_F3", "Cycle Count format 3.";
    ETM4_PKT_I_NUM_DS_MKR => "I_NUM_DS_MKR", "Data Synchronisation Marker - Numbered.";
    ETM4_PKT_I_UNNUM_DS_MKR => "I_UNNUM_DS_MKR", "Data Synchronisation Marker - Unnumbered.";
    ETM4_PKT_I_COMMIT => "I_COMMIT", "Commit";
    ETM4_PKT_I_CANCEL_F1 => "I_CANCEL_F1", "Cancel Format 1.";
    ETM4_PKT_I_CANCEL_F1_MISPRED => "I_CANCEL_F1_MISPRED", "Cancel Format 1 + Mispredict.";
    ETM4_PKT_I_MISPREDICT => "I_MISPREDICT", "Mispredict.";
    ETM4_PKT_I_CANCEL_F2 => "I_CANCEL_F2", "Cancel Format 2.";
    ETM4_PKT_I_CANCEL_F3 => "I_CANCEL_F3", "Cancel Format 3.";
    ETM4_PKT_I_COND_I_F2 => "I_COND_I_F2", "Conditional Instruction, format 2.";
    ETM4_PKT_I_COND_FLUSH => "I_COND_FLUSH", "Conditional Flush.";
    ETM4_PKT_I_COND_RES_F4 => "I_COND_RES_F4", "Conditional Result, format 4.";
    ETM4_PKT_I_COND_RES_F2 => "I_COND_RES_F2", "Conditional Result, format 2.";
    ETM4_PKT_I_COND_RES_F3 => "I_COND_RES_F3", "Conditional Result, format 3.";
    ETM4_PKT_I_COND_RES_F1 => "I_COND_RES_F1", "Conditional Result, format 1.";
    ETM4_PKT_I_COND_I_F1 => "I_COND_I_F1", "Conditional Instruction, format 1.";
    ETM4_PKT_I_COND_I_F3 => "I_COND_I_F3", "Conditional Instruction, format 3.";
    ETM4_PKT_I_IGNORE => "I_IGNORE", "Ignore.";
    ETM4_PKT_I_EVENT => "I_EVENT", "Trace Event.";
    ETM4_PKT_I_CTXT => "I_CTXT", "Context Packet.";
    ETM4_PKT_I_ADDR_CTXT_L_32IS0 => "I_ADDR_CTXT_L_32IS0", "Address & Context, Long, 32 bit, IS0.";
    ETM4_PKT_I_ADDR_CTXT_L_32IS1 => "I_ADDR_CTXT_L_32IS1", "Address & Context, Long, 32 bit, IS1.";
    ETM4_PKT_I_ADDR_CTXT_L_64IS0 => "I_ADDR_CTXT_L_64IS0", "Address & Context, Long, 64 bit, IS0.";
    ETM4_PKT_I_ADDR_CTXT_L_64IS1 => "I_ADDR_CTXT_L_64IS1", "Address & Context, Long, 64 bit, IS1.";
    ETE_PKT_I_TS_MARKER => "I_TS_MARKER", "Timestamp Marker";
    ETM4_PKT_I_ADDR_MATCH => "I_ADDR_MATCH", "Exact Address Match.";
    ETM4_PKT_I_ADDR_S_IS0 => "I_ADDR_S_IS0", "Address, Short, IS0.";
    ETM4_PKT_I_ADDR_S_IS1 => "I_ADDR_S_IS1", "Address, Short, IS1.";
    ETM4_PKT_I_ADDR_L_32IS0 => "I_ADDR_L_32IS0", "Address, Long, 32 bit, IS0.";
    ETM4_PKT_I_ADDR_L_32IS1 => "I_ADDR_L_32IS1", "Address, Long, 32 bit, IS1.";
    ETM4_PKT_I_ADDR_L_64IS0 => "I_ADDR_L_64IS0", "Address, Long, 64 bit, IS0.";
    ETM4_PKT_I_ADDR_L_64IS1 => "I_ADDR_L_64IS1", "Address, Long, 64 bit, IS1.";
    ETM4_PKT_I_Q => "I_Q", "Q Packet.";
    ETE_PKT_I_SRC_ADDR_MATCH => "I_SRC_ADDR_MATCH", "Exact Source Address Match.";
    ETE_PKT_I_SRC_ADDR_S_IS0 => "I_SRC_ADDR_S_IS0", "Source Address, Short, IS0.";
    ETE_PKT_I_SRC_ADDR_S_IS1 => "I_SRC_ADDR_S_IS1", "Source Address, Short, IS1.";
    // OpenCSD 1.8.0 spells this one name "SCR".
    ETE_PKT_I_SRC_ADDR_L_32IS0 => "I_SCR_ADDR_L_32IS0", "Source Address, Long, 32 bit, IS0.";
    ETE_PKT_I_SRC_ADDR_L_32IS1 => "I_SRC_ADDR_L_32IS1", "Source Address, Long, 32 bit, IS1.";
    ETE_PKT_I_SRC_ADDR_L_64IS0 => "I_SRC_ADDR_L_64IS0", "Source Address, Long, 64 bit, IS0.";
    ETE_PKT_I_SRC_ADDR_L_64IS1 => "I_SRC_ADDR_L_64IS1", "Source Address, Long, 64 bit, IS1.";
    ETM4_PKT_I_ATOM_F6 => "I_ATOM_F6", "Atom format 6.";
    ETM4_PKT_I_ATOM_F5 => "I_ATOM_F5", "Atom format 5.";
    ETM4_PKT_I_ATOM_F2 => "I_ATOM_F2", "Atom format 2.";
    ETM4_PKT_I_ATOM_F4 => "I_ATOM_F4", "Atom format 4.";
    ETM4_PKT_I_ATOM_F1 => "I_ATOM_F1", "Atom format 1.";
    ETM4_PKT_I_ATOM_F3 => "I_ATOM_F3", "Atom format 3.";
    ETM4_PKT_I_ASYNC => "I_ASYNC", "Alignment Synchronisation.";
    ETM4_PKT_I_DISCARD => "I_DISCARD", "Discard.";
    ETM4_PKT_I_OVERFLOW => "I_OVERFLOW", "Overflow.";
    ETE_PKT_I_PE_RESET => "I_PE_RESET", "PE Reset.";
    ETE_PKT_I_TRANS_FAIL => "I_TRANS_FAIL", "Transaction Fail.";
}

/// OpenCSD's `trcPrintableElem::getValStr` in hex mode: `0x` and the value
/// on the hex digits its valid bits cover, `?` for the digits not valid,
/// ` (n:0)` when not all bits are valid, and ` ~[0x..]` for the bits this
/// packet updated.
pub fn write_val_hex<T: TextOut>(out: &mut T, total_bits: u32, valid_bits: u32, value: u64, update_bits: u32) {
    let total_bits = total_bits.clamp(4, 64);
    let num_hex = total_bits.div_ceil(4);
    let valid_chars = valid_bits.div_ceil(4) as usize;
    out.put_str("0x");
    for _ in valid_chars as u32..num_hex {
        out.put_char('?');
    }
    if valid_bits > 32 {
        out.put_hex_upper(value, valid_chars);
    } else {
        out.put_hex_upper(value as u32 as u64, valid_chars);
    }
    if valid_bits < total_bits {
        out.put_str(" (");
        push_signed(out, valid_bits as i32 - 1);
        out.put_str(":0)");
    }
    if update_bits != 0 {
        let mask = if update_bits >= 64 { !0u64 } else { !0u64 >> (64 - update_bits) };
        out.put_str(" ~[0x");
        out.put_hex_upper(value & mask, 0);
        out.put_char(']');
    }
}

/// `E` or `N` for each of the 8 bits of a byte, least significant first.
const ATOMS8: [[u8; 8]; 256] = {
    let mut t = [[b'N'; 8]; 256];
    let mut v = 0;
    while v < 256 {
        let mut i = 0;
        while i < 8 {
            if v >> i & 1 != 0 {
                t[v][i] = b'E';
            }
            i += 1;
        }
        v += 1;
    }
    t
};

const ARMV8_EXCEP: [&str; 16] = [
    "PE Reset", "Debug Halt", "Call", "Trap", "System Error", "Reserved", "Inst Debug", "Data Debug",
    "Reserved", "Reserved", "Alignment", "Inst Fault", "Data Fault", "Reserved", "IRQ", "FIQ",
];

const M_EXCEP: [&str; 32] = [
    "Reserved", "PE Reset", "NMI", "HardFault", "MemManage", "BusFault", "UsageFault", "Reserved",
    "Reserved", "Reserved", "Reserved", "SVC", "DebugMonitor", "Reserved", "PendSV", "SysTick",
    "IRQ0", "IRQ1", "IRQ2", "IRQ3", "IRQ4", "IRQ5", "IRQ6", "IRQ7",
    "DebugHalt", "LazyFP Push", "Lockup", "Reserved", "Reserved", "Reserved", "Reserved", "Reserved",
];

impl ocsd_etmv4_i_pkt {
    /// ETE packet (protocol version 5.x).
    pub fn is_ete(&self) -> bool {
        self.protocol_version & 0xF0 == 0x50
    }

    fn vaddr_total_bits(&self) -> u32 {
        if self.v_addr.size == VA_64BIT {
            64
        } else {
            32
        }
    }

    fn write_addr<T: TextOut>(&self, out: &mut T, update_bits: u32) {
        write_val_hex(out, self.vaddr_total_bits(), self.v_addr.valid_bits as u32, self.v_addr.val, update_bits);
    }

    fn write_context<T: TextOut>(&self, out: &mut T) {
        if self.pkt_valid.context_valid() == 0 {
            return;
        }
        let c = &self.context;
        if c.updated() != 0 {
            out.put_str("Ctxt: ");
            out.put_str(if c.SF() != 0 { "AArch64," } else { "AArch32, " });
            out.put_str("EL");
            out.put_dec(c.EL() as u64);
            out.put_str(", ");
            out.put_str(match (c.NSE() != 0, c.NS() != 0) {
                (true, true) => "Realm; ",
                (true, false) => "Root; ",
                (false, true) => "NS; ",
                (false, false) => "S; ",
            });
            if c.updated_c() != 0 {
                out.put_str("CID=0x");
                out.put_hex(c.ctxtID as u64, 8);
                out.put_str("; ");
            }
            if c.updated_v() != 0 {
                out.put_str("VMID=0x");
                out.put_hex(c.VMID as u64, 4);
                out.put_str("; ");
            }
        } else {
            out.put_str("Ctxt: Same");
        }
    }

    fn write_atoms<T: TextOut>(&self, out: &mut T) {
        // E or N per atom, oldest first, written 8 at a time
        let mut bits = self.atom.En_bits;
        let mut left = self.atom.num as usize;
        while left > 0 {
            let n = left.min(8);
            out.put_padded(&Padded { bytes: ATOMS8[(bits & 0xFF) as usize], len: n });
            bits >>= 8;
            left -= n;
        }
    }

    fn write_exception<T: TextOut>(&self, out: &mut T) {
        let e = &self.exception_info;
        let t = e.exceptionType() as usize;
        if e.m_type() == 0 {
            out.put_fmt(format_args!(" {};", ARMV8_EXCEP.get(t).copied().unwrap_or("Reserved")));
        } else {
            if let Some(name) = M_EXCEP.get(t) {
                out.put_fmt(format_args!(" {};", name));
            } else if (0x208..=0x3EF).contains(&t) {
                out.put_fmt(format_args!(" IRQ{};", t - 0x200));
            } else {
                out.put_str(" Reserved;");
            }
            if e.m_fault_pending() != 0 {
                out.put_str(" Fault Pending;");
            }
        }
        match e.addr_interp() {
            1 => out.put_str(" Ret Addr Follows;"),
            2 => out.put_str(" Ret Addr Follows, Match Prev;"),
            _ => {}
        }
    }

    fn write_text<T: TextOut>(&self, out: &mut T) {
        out.put_padded(packet_type_text(self.type_));

        match self.type_ {
            ETM4_PKT_I_BAD_SEQUENCE | ETM4_PKT_I_INCOMPLETE_EOT | ETM4_PKT_I_RESERVED_CFG => {
                out.put_fmt(format_args!("[{}]", packet_type_name(self.err_type).0));
            }
            ETM4_PKT_I_ADDR_CTXT_L_32IS0 | ETM4_PKT_I_ADDR_CTXT_L_32IS1 | ETM4_PKT_I_ADDR_L_32IS0
            | ETM4_PKT_I_ADDR_L_32IS1 | ETE_PKT_I_SRC_ADDR_L_32IS0 | ETE_PKT_I_SRC_ADDR_L_32IS1 => {
                let pb = self.v_addr.pkt_bits as u32;
                out.put_str("; Addr=");
                self.write_addr(out, if pb < 32 { pb } else { 0 });
                out.put_str("; ");
                if matches!(self.type_, ETM4_PKT_I_ADDR_CTXT_L_32IS0 | ETM4_PKT_I_ADDR_CTXT_L_32IS1) {
                    self.write_context(out);
                }
            }
            ETM4_PKT_I_ADDR_CTXT_L_64IS0 | ETM4_PKT_I_ADDR_CTXT_L_64IS1 | ETM4_PKT_I_ADDR_L_64IS0
            | ETM4_PKT_I_ADDR_L_64IS1 | ETE_PKT_I_SRC_ADDR_L_64IS0 | ETE_PKT_I_SRC_ADDR_L_64IS1 => {
                let pb = self.v_addr.pkt_bits as u32;
                out.put_str("; Addr=");
                self.write_addr(out, if pb < 64 { pb } else { 0 });
                out.put_str("; ");
                if matches!(self.type_, ETM4_PKT_I_ADDR_CTXT_L_64IS0 | ETM4_PKT_I_ADDR_CTXT_L_64IS1) {
                    self.write_context(out);
                }
            }
            ETM4_PKT_I_CTXT => {
                out.put_str("; ");
                self.write_context(out);
            }
            ETM4_PKT_I_ADDR_S_IS0 | ETM4_PKT_I_ADDR_S_IS1 | ETE_PKT_I_SRC_ADDR_S_IS0 | ETE_PKT_I_SRC_ADDR_S_IS1 => {
                out.put_str("; Addr=");
                self.write_addr(out, self.v_addr.pkt_bits as u32);
            }
            ETM4_PKT_I_ADDR_MATCH | ETE_PKT_I_SRC_ADDR_MATCH => {
                out.put_str(", [");
                out.put_dec(self.addr_exact_match_idx as u64);
                out.put_str("]; Addr=");
                self.write_addr(out, 0);
                out.put_str("; ");
            }
            ETM4_PKT_I_ATOM_F1 | ETM4_PKT_I_ATOM_F2 | ETM4_PKT_I_ATOM_F3 | ETM4_PKT_I_ATOM_F4
            | ETM4_PKT_I_ATOM_F5 | ETM4_PKT_I_ATOM_F6 => {
                out.put_str("; ");
                self.write_atoms(out);
            }
            ETM4_PKT_I_EXCEPT => {
                out.put_str("; ");
                self.write_exception(out);
            }
            ETM4_PKT_I_TIMESTAMP => {
                out.put_str("; Updated val = 0x");
                out.put_hex(self.ts.timestamp, 0);
                if self.pkt_valid.cc_valid() != 0 {
                    out.put_str("; CC=0x");
                    out.put_hex(self.cycle_count as u64, 0);
                }
            }
            ETM4_PKT_I_TRACE_INFO => {
                let ti = &self.trace_info;
                out.put_fmt(format_args!("; INFO=0x{:x} {{ CC.{}", ti.val() & 0xFF, ti.cc_enabled()));
                if self.is_ete() {
                    out.put_fmt(format_args!(", TSTATE.{}", ti.in_trans_state()));
                }
                out.put_str(" }");
                if ti.cc_enabled() != 0 {
                    out.put_fmt(format_args!("; CC_THRESHOLD=0x{:x}", self.cc_threshold));
                }
                if ti.initial_t_info() != 0 && self.pkt_valid.spec_depth_valid() != 0 && ti.spec_field_present() != 0 {
                    out.put_fmt(format_args!("; INIT SPEC DEPTH={}", self.curr_spec_depth));
                }
                if ti.initial_t_info() != 0 {
                    out.put_str("; Decoder Sync point TINFO");
                }
            }
            ETM4_PKT_I_CCNT_F1 | ETM4_PKT_I_CCNT_F2 | ETM4_PKT_I_CCNT_F3 => {
                out.put_fmt(format_args!("; Count=0x{:x}", self.cycle_count));
                if self.pkt_valid.commit_elem_valid() != 0 {
                    out.put_fmt(format_args!("; Commit({})", self.commit_elements));
                }
            }
            ETM4_PKT_I_CANCEL_F1 => {
                out.put_fmt(format_args!("; Cancel({})", self.cancel_elements));
            }
            ETM4_PKT_I_CANCEL_F1_MISPRED => {
                out.put_fmt(format_args!("; Cancel({}), Mispredict", self.cancel_elements));
            }
            ETM4_PKT_I_MISPREDICT => {
                out.put_str("; ");
                if self.atom.num != 0 {
                    out.put_str("Atom: ");
                    self.write_atoms(out);
                    out.put_str(", ");
                }
                out.put_str("Mispredict");
            }
            ETM4_PKT_I_CANCEL_F2 => {
                out.put_str("; ");
                if self.atom.num != 0 {
                    out.put_str("Atom: ");
                    self.write_atoms(out);
                    out.put_str(", ");
                }
                out.put_str("Cancel(1), Mispredict");
            }
            ETM4_PKT_I_CANCEL_F3 => {
                out.put_str("; ");
                if self.atom.num != 0 {
                    out.put_str("Atom: E, ");
                }
                out.put_fmt(format_args!("Cancel({}), Mispredict", self.cancel_elements));
            }
            ETM4_PKT_I_COMMIT => {
                out.put_fmt(format_args!("; Commit({})", self.commit_elements));
            }
            ETM4_PKT_I_Q => {
                let q = &self.Q_pkt;
                if q.count_present() != 0 {
                    out.put_fmt(format_args!("; Count({})", q.q_count));
                } else {
                    out.put_str("; Count(Unknown)");
                }
                if q.addr_match() != 0 {
                    out.put_fmt(format_args!("; [{}]", self.addr_exact_match_idx));
                }
                if q.addr_present() != 0 || q.addr_match() != 0 {
                    let pb = self.v_addr.pkt_bits as u32;
                    out.put_str("; Addr=");
                    self.write_addr(out, if pb < 64 { pb } else { 0 });
                }
            }
            ETE_PKT_I_ITE => {
                out.put_fmt(format_args!("; EL{}; Payload=0x{:x}", self.ite_pkt.el, self.ite_pkt.value));
            }
            _ => {}
        }
    }

    // ---- state updates (OpenCSD's EtmV4ITrcPacket setters) ----

    /// Clear all intra-packet state: start of trace or after a discontinuity.
    pub fn init_start_state(&mut self) {
        self.pkt_valid.val = 0;
        self.v_addr.pkt_bits = 0;
        self.v_addr.valid_bits = 0;
        self.v_addr_ISA = 0;
        self.ts.bits_changed = 0;
        self.ts.timestamp = 0;
        self.commit_elements = 0;
        self.cancel_elements = 0;
        self.init_next_packet();
    }

    /// Clear what is valid for one packet only.
    pub fn init_next_packet(&mut self) {
        self.pkt_valid.set_cc_valid(0);
        self.pkt_valid.set_commit_elem_valid(0);
        self.pkt_valid.set_cancel_elem_valid(0);
        self.atom.num = 0;
        self.context.set_updated(0);
        self.context.set_updated_v(0);
        self.context.set_updated_c(0);
        self.err_type = ETM4_PKT_I_NO_ERR_TYPE;
        self.trace_info.set_initial_t_info(0);
        self.trace_info.set_spec_field_present(0);
    }

    /// Make this an error packet of type `err`, keeping the original type
    /// as `err_type`.
    pub fn update_err_type(&mut self, err: ocsd_etmv4_i_pkt_type, hdr_val: u8) {
        self.err_type = self.type_;
        self.type_ = err;
        self.err_hdr_val = hdr_val;
    }

    pub fn set_trace_info(&mut self, v: u32) {
        self.trace_info.set_val(v);
        self.pkt_valid.set_trace_info_valid(1);
    }
    pub fn set_trace_info_key(&mut self, v: u32) {
        self.p0_key = v;
        self.pkt_valid.set_p0_key_valid(1);
    }
    pub fn set_trace_info_spec(&mut self, v: u32) {
        self.curr_spec_depth = v;
        self.pkt_valid.set_spec_depth_valid(1);
    }
    pub fn set_trace_info_cyct(&mut self, v: u32) {
        self.cc_threshold = v;
        self.pkt_valid.set_cc_thresh_valid(1);
    }
    pub fn set_ts(&mut self, value: u64, bits: u8) {
        let mask = if bits >= 64 { !0u64 } else { (1u64 << bits) - 1 };
        self.ts.timestamp = (self.ts.timestamp & !mask) | (value & mask);
        self.ts.bits_changed = bits;
        self.pkt_valid.set_ts_valid(1);
    }
    pub fn set_cycle_count(&mut self, v: u32) {
        self.pkt_valid.set_cc_valid(1);
        self.cycle_count = v;
    }
    pub fn set_commit_elements(&mut self, v: u32) {
        self.pkt_valid.set_commit_elem_valid(1);
        self.commit_elements = v;
    }
    pub fn set_cancel_elements(&mut self, v: u32) {
        self.pkt_valid.set_cancel_elem_valid(1);
        self.cancel_elements = v;
    }
    /// CC threshold if valid, else 0.
    pub fn cc_threshold_val(&self) -> u32 {
        if self.pkt_valid.cc_thresh_valid() != 0 {
            self.cc_threshold
        } else {
            0
        }
    }
    pub fn set_atom_pattern(&mut self, en_bits: u32, num: u8) {
        self.atom.En_bits = en_bits;
        self.atom.num = num;
    }
    pub fn set_context_info(&mut self, update: bool, el: u8, ns: u8, sf: u8, nse: u8) {
        self.pkt_valid.set_context_valid(1);
        if update {
            self.context.set_updated(1);
            self.context.set_EL(el as u32);
            self.context.set_NS(ns as u32);
            self.context.set_SF(sf as u32);
            self.context.set_NSE(nse as u32);
        }
    }
    pub fn set_context_vmid(&mut self, vmid: u32) {
        self.pkt_valid.set_context_valid(1);
        self.context.set_updated(1);
        self.context.VMID = vmid;
        self.context.set_updated_v(1);
    }
    pub fn set_context_cid(&mut self, cid: u32) {
        self.pkt_valid.set_context_valid(1);
        self.context.set_updated(1);
        self.context.ctxtID = cid;
        self.context.set_updated_c(1);
    }
    pub fn set_exception_info(&mut self, excep_type: u16, addr_interp: u8, m_fault_pending: u8, m_type: u8) {
        let e = &mut self.exception_info;
        e.set_exceptionType(excep_type as u32);
        e.set_addr_interp(addr_interp as u32);
        e.set_m_fault_pending(m_fault_pending as u32);
        e.set_m_type(m_type as u32);
    }
}

impl TracePacket for ocsd_etmv4_i_pkt {
    fn write_str(&self, out: &mut String) {
        self.write_text(out);
    }

    fn write_bytes(&self, out: &mut LineBuf) -> bool {
        // in reserved room with a local cursor; a text too long for it
        // (none is, today) is written again piece by piece
        let mut room = out.room::<512>();
        self.write_text(&mut room);
        let done = room.done();
        if !out.commit(done) {
            self.write_text(out);
        }
        true
    }

    fn is_bad_packet(&self) -> bool {
        // As OpenCSD: every type from the error markers up (this includes
        // the ETE extended exception types).
        self.type_ >= ETM4_PKT_I_BAD_SEQUENCE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(p: &ocsd_etmv4_i_pkt) -> String {
        let mut s = String::new();
        p.write_str(&mut s);
        s
    }

    #[test]
    fn val_str_formats() {
        let mut s = String::new();
        write_val_hex(&mut s, 64, 64, 0x2EBC, 17);
        assert_eq!(s, "0x0000000000002EBC ~[0x2EBC]");
        s.clear();
        write_val_hex(&mut s, 32, 32, 0x1234, 0);
        assert_eq!(s, "0x00001234");
        s.clear();
        write_val_hex(&mut s, 64, 32, 0xFFFF_FFFF_1234_5678, 0);
        assert_eq!(s, "0x????????12345678 (31:0)");
        s.clear();
        // more valid bits than the total: no question marks, no panic
        write_val_hex(&mut s, 32, 64, 0x1_0000_0000, 0);
        assert_eq!(s, "0x0000000100000000");
    }

    #[test]
    fn simple_texts() {
        let mut p = ocsd_etmv4_i_pkt { type_: ETM4_PKT_I_NOTSYNC, ..Default::default() };
        assert_eq!(text(&p), "I_NOT_SYNC : I Stream not synchronised");
        p.type_ = ETM4_PKT_I_RESERVED_CFG;
        p.err_type = ETM4_PKT_I_EXCEPT_RTN;
        assert_eq!(text(&p), "I_RESERVED_CFG : Reserved header for current configuration.[I_EXCEPT_RTN]");
        p.type_ = ETE_PKT_I_SRC_ADDR_L_32IS0;
        p.v_addr = ocsd_pkt_vaddr { size: VA_64BIT, val: 0x1000, pkt_bits: 32, valid_bits: 64 };
        assert_eq!(text(&p), "I_SCR_ADDR_L_32IS0 : Source Address, Long, 32 bit, IS0.; Addr=0x0000000000001000; ");
        assert!(!p.is_bad_packet());
        p.type_ = ETE_PKT_I_PE_RESET;
        assert!(p.is_bad_packet());
    }

    #[test]
    fn context_text() {
        let mut p = ocsd_etmv4_i_pkt { type_: ETM4_PKT_I_CTXT, ..Default::default() };
        p.set_context_info(true, 3, 0, 1, 0);
        p.set_context_cid(0);
        assert_eq!(text(&p), "I_CTXT : Context Packet.; Ctxt: AArch64,EL3, S; CID=0x00000000; ");
        p.init_next_packet();
        p.set_context_info(false, 0, 0, 0, 0);
        assert_eq!(text(&p), "I_CTXT : Context Packet.; Ctxt: Same");
        p.set_context_info(true, 2, 1, 0, 1);
        assert_eq!(text(&p), "I_CTXT : Context Packet.; Ctxt: AArch32, EL2, Realm; ");
    }
}
