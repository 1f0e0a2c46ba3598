//! C ABI mirror of OpenCSD 1.8.0's `opencsd/ptm/trc_pkt_types_ptm.h`, plus
//! [`PtmConfig`](super::config::PtmConfig), the register interpreter for `ocsd_ptm_cfg` (OpenCSD's
//! `PtmConfig` class).
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use std::os::raw::c_int;

use crate::abi::*;

pub type ocsd_ptm_pkt_type = c_int;
pub const PTM_PKT_NOTSYNC: ocsd_ptm_pkt_type = 0;
pub const PTM_PKT_INCOMPLETE_EOT: ocsd_ptm_pkt_type = 1;
pub const PTM_PKT_NOERROR: ocsd_ptm_pkt_type = 2;
pub const PTM_PKT_BRANCH_ADDRESS: ocsd_ptm_pkt_type = 3;
pub const PTM_PKT_A_SYNC: ocsd_ptm_pkt_type = 4;
pub const PTM_PKT_I_SYNC: ocsd_ptm_pkt_type = 5;
pub const PTM_PKT_TRIGGER: ocsd_ptm_pkt_type = 6;
pub const PTM_PKT_WPOINT_UPDATE: ocsd_ptm_pkt_type = 7;
pub const PTM_PKT_IGNORE: ocsd_ptm_pkt_type = 8;
pub const PTM_PKT_CONTEXT_ID: ocsd_ptm_pkt_type = 9;
pub const PTM_PKT_VMID: ocsd_ptm_pkt_type = 10;
pub const PTM_PKT_ATOM: ocsd_ptm_pkt_type = 11;
pub const PTM_PKT_TIMESTAMP: ocsd_ptm_pkt_type = 12;
pub const PTM_PKT_EXCEPTION_RET: ocsd_ptm_pkt_type = 13;
pub const PTM_PKT_BRANCH_OR_BYPASS_EOT: ocsd_ptm_pkt_type = 14;
pub const PTM_PKT_TPIU_PAD_EOB: ocsd_ptm_pkt_type = 15;
pub const PTM_PKT_BAD_SEQUENCE: ocsd_ptm_pkt_type = 16;
pub const PTM_PKT_RESERVED: ocsd_ptm_pkt_type = 17;

/// Context state carried between packets (`ptm_context_t`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ptm_context_t {
    /// cbindgen-c: struct { uint32_t curr_alt_isa:1; uint32_t curr_NS:1; uint32_t curr_Hyp:1; uint32_t updated:1; uint32_t updated_c:1; uint32_t updated_v:1; };
    pub flags: u32,
    pub ctxtID: u32,
    pub VMID: u8,
}
crate::bitfields!(ptm_context_t, flags: {
    curr_alt_isa / set_curr_alt_isa: 0, 1;
    curr_NS / set_curr_NS: 1, 1;
    curr_Hyp / set_curr_Hyp: 2, 1;
    updated / set_updated: 3, 1;
    updated_c / set_updated_c: 4, 1;
    updated_v / set_updated_v: 5, 1;
});

/// The named `bits` member of `ocsd_ptm_excep`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_ptm_excep_bits {
    /// cbindgen-c: uint32_t present:1;
    pub word: u32,
}
crate::bitfields!(ocsd_ptm_excep_bits, word: {
    present / set_present: 0, 1;
});

/// Exception information in a branch packet (`ocsd_ptm_excep`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_ptm_excep {
    pub type_: ocsd_armv7_exception,
    pub number: u16,
    pub bits: ocsd_ptm_excep_bits,
}

/// A PTM packet (`ocsd_ptm_pkt`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_ptm_pkt {
    pub type_: ocsd_ptm_pkt_type,
    pub curr_isa: ocsd_isa,
    pub prev_isa: ocsd_isa,
    pub addr: ocsd_pkt_vaddr,
    pub context: ptm_context_t,
    pub atom: ocsd_pkt_atom,
    pub i_sync_reason: ocsd_iSync_reason,
    pub cycle_count: u32,
    pub cc_valid: u8,
    pub timestamp: u64,
    pub ts_update_bits: u8,
    pub exception: ocsd_ptm_excep,
    pub err_type: ocsd_ptm_pkt_type,
}

/// PTM hardware configuration: in OpenCSD 1.8.0 the same structure as the
/// ETMv3 one (`ocsd_ptm_cfg` is a typedef of `ocsd_etmv3_cfg`).
pub type ocsd_ptm_cfg = crate::etmv3::types::ocsd_etmv3_cfg;

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_opencsd() {
        assert_eq!(size_of::<ptm_context_t>(), 12);
        assert_eq!(offset_of!(ptm_context_t, ctxtID), 4);
        assert_eq!(offset_of!(ptm_context_t, VMID), 8);
        assert_eq!(size_of::<ocsd_ptm_excep>(), 12);
        assert_eq!(offset_of!(ocsd_ptm_excep, number), 4);
        assert_eq!(offset_of!(ocsd_ptm_excep, bits), 8);
        assert_eq!(size_of::<ocsd_ptm_pkt>(), 104);
        assert_eq!(offset_of!(ocsd_ptm_pkt, curr_isa), 4);
        assert_eq!(offset_of!(ocsd_ptm_pkt, prev_isa), 8);
        assert_eq!(offset_of!(ocsd_ptm_pkt, addr), 16);
        assert_eq!(offset_of!(ocsd_ptm_pkt, context), 40);
        assert_eq!(offset_of!(ocsd_ptm_pkt, atom), 52);
        assert_eq!(offset_of!(ocsd_ptm_pkt, i_sync_reason), 60);
        assert_eq!(offset_of!(ocsd_ptm_pkt, cycle_count), 64);
        assert_eq!(offset_of!(ocsd_ptm_pkt, cc_valid), 68);
        assert_eq!(offset_of!(ocsd_ptm_pkt, timestamp), 72);
        assert_eq!(offset_of!(ocsd_ptm_pkt, ts_update_bits), 80);
        assert_eq!(offset_of!(ocsd_ptm_pkt, exception), 84);
        assert_eq!(offset_of!(ocsd_ptm_pkt, err_type), 96);
        assert_eq!(size_of::<ocsd_ptm_cfg>(), 24);
    }

}
