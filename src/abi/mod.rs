//! C ABI mirror of OpenCSD 1.8.0's common public types
//! (`opencsd/ocsd_if_types.h`, `opencsd/trc_pkt_types.h`).
//!
//! Every struct here is `#[repr(C)]` with the size, offsets and bit-field
//! positions of OpenCSD's (checked by `c-tests/abi_layout.c` against
//! `../shared/abi/opencsd-1.8.0-struct-layout.txt`). C enums are `c_int`
//! typedefs with one constant per enumerator: the same values and the same
//! 4-byte layout, and no undefined behaviour when a C caller passes a value
//! outside the enumeration.
//!
//! Groups of C bit-fields are a `u32` word in Rust with generated accessors
//! ([`bitfields!`](crate::bitfields)); a doc line `cbindgen-c: ...` on such a
//! word gives the C declaration the header generator writes in its place.
//!
//! The items live in one file per OpenCSD header, so that the header
//! generator can run cbindgen on each file: [`version`]
//! (`ocsd_if_version.h`), [`if_types`] (`ocsd_if_types.h`), [`pkt_types`]
//! (`trc_pkt_types.h`) and [`gen_elem`] (`trc_gen_elem_types.h`). All but
//! `gen_elem` are re-exported here, so `crate::abi::*` names them all.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

pub mod bitfield;
pub mod gen_elem;
pub mod if_types;
pub mod pkt_types;
pub mod version;

pub use if_types::*;
pub use pkt_types::*;
pub use version::*;

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_opencsd() {
        assert_eq!(size_of::<ocsd_arch_profile_t>(), 8);
        assert_eq!(size_of::<ocsd_instr_info>(), 64);
        assert_eq!(offset_of!(ocsd_instr_info, type_), 32);
        assert_eq!(offset_of!(ocsd_instr_info, sub_type), 56);
        assert_eq!(size_of::<ocsd_pe_context>(), 20);
        assert_eq!(size_of::<ocsd_file_mem_region_t>(), 24);
        assert_eq!(size_of::<ocsd_swt_info_t>(), 8);
        assert_eq!(size_of::<ocsd_demux_stats_t>(), 40);
        assert_eq!(size_of::<ocsd_decode_stats_t>(), 72);
        assert_eq!(offset_of!(ocsd_decode_stats_t, demux), 32);
        assert_eq!(size_of::<ocsd_pkt_vaddr>(), 24);
        assert_eq!(size_of::<ocsd_pkt_atom>(), 8);
    }

    #[test]
    fn bitfield_accessors() {
        let mut c = ocsd_pe_context::default();
        c.set_vmid_valid(1);
        c.set_bits64(1);
        assert_eq!(c.flags, 0b101);
        assert_eq!(c.vmid_valid(), 1);
        c.set_vmid_valid(0);
        assert_eq!(c.flags, 0b001);
    }
}
