//! C ABI mirror of OpenCSD 1.8.0's `opencsd/etmv3/trc_pkt_types_etmv3.h`,
//! plus [`EtmV3Config`](super::config::EtmV3Config), the register interpreter for `ocsd_etmv3_cfg`
//! (OpenCSD's `EtmV3Config` class).
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use std::os::raw::c_int;

use crate::abi::*;

// ---------------------------------------------------------------------------
// Packet types
pub type ocsd_etmv3_pkt_type = c_int;
pub const ETM3_PKT_NOERROR: ocsd_etmv3_pkt_type = 0;
pub const ETM3_PKT_NOTSYNC: ocsd_etmv3_pkt_type = 1;
pub const ETM3_PKT_INCOMPLETE_EOT: ocsd_etmv3_pkt_type = 2;
pub const ETM3_PKT_BRANCH_ADDRESS: ocsd_etmv3_pkt_type = 3;
pub const ETM3_PKT_A_SYNC: ocsd_etmv3_pkt_type = 4;
pub const ETM3_PKT_CYCLE_COUNT: ocsd_etmv3_pkt_type = 5;
pub const ETM3_PKT_I_SYNC: ocsd_etmv3_pkt_type = 6;
pub const ETM3_PKT_I_SYNC_CYCLE: ocsd_etmv3_pkt_type = 7;
pub const ETM3_PKT_TRIGGER: ocsd_etmv3_pkt_type = 8;
pub const ETM3_PKT_P_HDR: ocsd_etmv3_pkt_type = 9;
pub const ETM3_PKT_STORE_FAIL: ocsd_etmv3_pkt_type = 10;
pub const ETM3_PKT_OOO_DATA: ocsd_etmv3_pkt_type = 11;
pub const ETM3_PKT_OOO_ADDR_PLC: ocsd_etmv3_pkt_type = 12;
pub const ETM3_PKT_NORM_DATA: ocsd_etmv3_pkt_type = 13;
pub const ETM3_PKT_DATA_SUPPRESSED: ocsd_etmv3_pkt_type = 14;
pub const ETM3_PKT_VAL_NOT_TRACED: ocsd_etmv3_pkt_type = 15;
pub const ETM3_PKT_IGNORE: ocsd_etmv3_pkt_type = 16;
pub const ETM3_PKT_CONTEXT_ID: ocsd_etmv3_pkt_type = 17;
pub const ETM3_PKT_VMID: ocsd_etmv3_pkt_type = 18;
pub const ETM3_PKT_EXCEPTION_ENTRY: ocsd_etmv3_pkt_type = 19;
pub const ETM3_PKT_EXCEPTION_EXIT: ocsd_etmv3_pkt_type = 20;
pub const ETM3_PKT_TIMESTAMP: ocsd_etmv3_pkt_type = 21;
pub const ETM3_PKT_BRANCH_OR_BYPASS_EOT: ocsd_etmv3_pkt_type = 22;
pub const ETM3_PKT_BAD_SEQUENCE: ocsd_etmv3_pkt_type = 23;
pub const ETM3_PKT_BAD_TRACEMODE: ocsd_etmv3_pkt_type = 24;
pub const ETM3_PKT_RESERVED: ocsd_etmv3_pkt_type = 25;

/// Bit set in data trace headers when data address packets follow.
pub const DATA_ADDR_EXPECTED_FLAG: u8 = 0x20;

/// The named `bits` member of `ocsd_etmv3_excep`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_etmv3_excep_bits {
    /// cbindgen-c: uint32_t present:1; uint32_t cancel:1; uint32_t cm_type:1; uint32_t cm_resume:4; uint32_t cm_irq_n:9;
    pub word: u32,
}
crate::bitfields!(ocsd_etmv3_excep_bits, word: {
    present / set_present: 0, 1;
    cancel / set_cancel: 1, 1;
    cm_type / set_cm_type: 2, 1;
    cm_resume / set_cm_resume: 3, 4;
    cm_irq_n / set_cm_irq_n: 7, 9;
});

/// Exception information in a branch packet (`ocsd_etmv3_excep`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_etmv3_excep {
    pub type_: ocsd_armv7_exception,
    pub number: u16,
    pub bits: ocsd_etmv3_excep_bits,
}

/// Context state carried between packets (`etmv3_context_t`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct etmv3_context_t {
    /// cbindgen-c: struct { uint32_t curr_alt_isa:1; uint32_t curr_NS:1; uint32_t curr_Hyp:1; uint32_t updated:1; uint32_t updated_c:1; uint32_t updated_v:1; };
    pub flags: u32,
    pub ctxtID: u32,
    pub VMID: u8,
}
crate::bitfields!(etmv3_context_t, flags: {
    curr_alt_isa / set_curr_alt_isa: 0, 1;
    curr_NS / set_curr_NS: 1, 1;
    curr_Hyp / set_curr_Hyp: 2, 1;
    updated / set_updated: 3, 1;
    updated_c / set_updated_c: 4, 1;
    updated_v / set_updated_v: 5, 1;
});

/// Data trace values (`etmv3_data_t`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct etmv3_data_t {
    pub value: u32,
    pub addr: ocsd_pkt_vaddr,
    /// cbindgen-c: struct { uint32_t ooo_tag:2; uint32_t be:1; uint32_t update_be:1; uint32_t update_addr:1; uint32_t update_dval:1; };
    pub flags: u32,
}
crate::bitfields!(etmv3_data_t, flags: {
    ooo_tag / set_ooo_tag: 0, 2;
    be / set_be: 2, 1;
    update_be / set_update_be: 3, 1;
    update_addr / set_update_addr: 4, 1;
    update_dval / set_update_dval: 5, 1;
});

/// I-Sync packet information (`etmv3_isync_t`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct etmv3_isync_t {
    pub reason: ocsd_iSync_reason,
    /// cbindgen-c: struct { uint32_t has_cycle_count:1; uint32_t has_LSipAddress:1; uint32_t no_address:1; };
    pub flags: u32,
}
crate::bitfields!(etmv3_isync_t, flags: {
    has_cycle_count / set_has_cycle_count: 0, 1;
    has_LSipAddress / set_has_LSipAddress: 1, 1;
    no_address / set_no_address: 2, 1;
});

/// An ETMv3 packet (`ocsd_etmv3_pkt`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_etmv3_pkt {
    pub type_: ocsd_etmv3_pkt_type,
    pub curr_isa: ocsd_isa,
    pub prev_isa: ocsd_isa,
    pub context: etmv3_context_t,
    pub addr: ocsd_pkt_vaddr,
    pub isync_info: etmv3_isync_t,
    pub exception: ocsd_etmv3_excep,
    pub atom: ocsd_pkt_atom,
    pub p_hdr_fmt: u8,
    pub cycle_count: u32,
    pub timestamp: u64,
    pub ts_update_bits: u8,
    pub data: etmv3_data_t,
    pub err_type: ocsd_etmv3_pkt_type,
}

/// ETMv3 hardware configuration (`ocsd_etmv3_cfg`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_etmv3_cfg {
    pub reg_idr: u32,
    pub reg_ctrl: u32,
    pub reg_ccer: u32,
    pub reg_trc_id: u32,
    pub arch_ver: ocsd_arch_version_t,
    pub core_prof: ocsd_core_profile_t,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_opencsd() {
        assert_eq!(size_of::<ocsd_etmv3_excep>(), 12);
        assert_eq!(offset_of!(ocsd_etmv3_excep, number), 4);
        assert_eq!(offset_of!(ocsd_etmv3_excep, bits), 8);
        assert_eq!(size_of::<etmv3_context_t>(), 12);
        assert_eq!(offset_of!(etmv3_context_t, ctxtID), 4);
        assert_eq!(offset_of!(etmv3_context_t, VMID), 8);
        assert_eq!(size_of::<etmv3_data_t>(), 40);
        assert_eq!(offset_of!(etmv3_data_t, addr), 8);
        assert_eq!(offset_of!(etmv3_data_t, flags), 32);
        assert_eq!(size_of::<etmv3_isync_t>(), 8);
        assert_eq!(size_of::<ocsd_etmv3_pkt>(), 152);
        assert_eq!(offset_of!(ocsd_etmv3_pkt, curr_isa), 4);
        assert_eq!(offset_of!(ocsd_etmv3_pkt, prev_isa), 8);
        assert_eq!(offset_of!(ocsd_etmv3_pkt, context), 12);
        assert_eq!(offset_of!(ocsd_etmv3_pkt, addr), 24);
        assert_eq!(offset_of!(ocsd_etmv3_pkt, isync_info), 48);
        assert_eq!(offset_of!(ocsd_etmv3_pkt, exception), 56);
        assert_eq!(offset_of!(ocsd_etmv3_pkt, atom), 68);
        assert_eq!(offset_of!(ocsd_etmv3_pkt, p_hdr_fmt), 76);
        assert_eq!(offset_of!(ocsd_etmv3_pkt, cycle_count), 80);
        assert_eq!(offset_of!(ocsd_etmv3_pkt, timestamp), 88);
        assert_eq!(offset_of!(ocsd_etmv3_pkt, ts_update_bits), 96);
        assert_eq!(offset_of!(ocsd_etmv3_pkt, data), 104);
        assert_eq!(offset_of!(ocsd_etmv3_pkt, err_type), 144);
        assert_eq!(size_of::<ocsd_etmv3_cfg>(), 24);
        assert_eq!(offset_of!(ocsd_etmv3_cfg, arch_ver), 16);
        assert_eq!(offset_of!(ocsd_etmv3_cfg, core_prof), 20);
    }

    #[test]
    fn bitfield_positions() {
        let mut b = ocsd_etmv3_excep_bits::default();
        b.set_cm_irq_n(0x1FF);
        assert_eq!(b.word, 0x1FF << 7);
        b.set_cm_resume(0xF);
        assert_eq!(b.word & 0x78, 0x78);
        let mut c = etmv3_context_t::default();
        c.set_updated_v(1);
        assert_eq!(c.flags, 0x20);
        let mut d = etmv3_data_t::default();
        d.set_update_dval(1);
        d.set_ooo_tag(3);
        assert_eq!(d.flags, 0x23);
    }

}
