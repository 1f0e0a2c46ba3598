//! The table of generated headers: one entry per OpenCSD public header.
//!
//! Each entry names the Rust files whose items make up the header (cbindgen
//! runs once per header over exactly those files), the headers it includes
//! (as OpenCSD's own header does), its include guard (OpenCSD's), and any
//! hand-written C text that has no Rust counterpart (function-like macros,
//! `static inline` helpers, declarations of functions the *client*
//! implements).
//!
//! A listed source file that does not exist yet (protocol packet types and
//! the C API are written on other branches) is tolerated: the header is
//! emitted with what exists, and a comment lists what is pending. To plug a
//! new file in, add it to `sources` here and rerun the generator.

use crate::ctext;

/// A block of hand-written C text that uses some types: it is emitted only
/// when every type in `requires` is defined by some generated header (else a
/// comment says it is pending on them).
pub struct CBlock {
    pub requires: &'static [&'static str],
    pub text: &'static str,
}

pub struct Header {
    /// Output path under `include/`.
    pub path: &'static str,
    /// One-line description for the banner comment.
    pub brief: &'static str,
    /// OpenCSD's include guard macro for this header.
    pub guard: &'static str,
    /// Rust source files (relative to the crate root) holding this header's
    /// items. Missing files are reported as pending.
    pub sources: &'static [&'static str],
    /// `#include <...>` lines.
    pub sys_includes: &'static [&'static str],
    /// `#include "..."` lines (OpenCSD's own dependencies between headers).
    pub includes: &'static [&'static str],
    /// Hand-written C placed right after the includes (before the items).
    pub after_includes: &'static [CBlock],
    /// Hand-written C placed after the items (before the include guard end).
    pub trailer: &'static [CBlock],
}

pub const HEADERS: &[Header] = &[
    Header {
        path: "opencsd/ocsd_if_version.h",
        brief: "library version numbers and strings",
        guard: "ARM_OCSD_IF_VERSION_H_INCLUDED",
        sources: &["src/abi/version.rs"],
        sys_includes: &["stdint.h"],
        includes: &[],
        after_includes: &[],
        trailer: &[],
    },
    Header {
        path: "opencsd/ocsd_if_types.h",
        brief: "common interface types: errors, data path, architecture, memory access, protocols, statistics",
        guard: "ARM_OCSD_IF_TYPES_H_INCLUDED",
        sources: &["src/abi/if_types.rs"],
        sys_includes: &["stdint.h", "stddef.h", "inttypes.h"],
        includes: &[],
        after_includes: &[CBlock { requires: &[], text: ctext::IF_TYPES_MACROS }],
        trailer: &[],
    },
    Header {
        path: "opencsd/trc_gen_elem_types.h",
        brief: "the generic trace element that decoders output",
        guard: "ARM_TRC_GEN_ELEM_TYPES_H_INCLUDED",
        sources: &["src/abi/gen_elem.rs"],
        sys_includes: &[],
        includes: &["opencsd/ocsd_if_types.h"],
        after_includes: &[],
        trailer: &[],
    },
    Header {
        path: "opencsd/trc_pkt_types.h",
        brief: "packet pieces shared by the protocol packet types",
        guard: "ARM_TRC_PKT_TYPES_H_INCLUDED",
        sources: &["src/abi/pkt_types.rs"],
        sys_includes: &["stdint.h"],
        includes: &["opencsd/ocsd_if_types.h"],
        after_includes: &[],
        trailer: &[],
    },
    Header {
        path: "opencsd/etmv3/trc_pkt_types_etmv3.h",
        brief: "ETMv3 packet and configuration types",
        guard: "ARM_TRC_ETM3_PKT_TYPES_ETMV3_H_INCLUDED",
        sources: &["src/etmv3/types.rs"],
        sys_includes: &[],
        includes: &["opencsd/trc_pkt_types.h"],
        after_includes: &[],
        trailer: &[],
    },
    Header {
        path: "opencsd/etmv4/trc_pkt_types_etmv4.h",
        brief: "ETMv4 packet and configuration types",
        guard: "ARM_TRC_PKT_TYPES_ETMV4_H_INCLUDED",
        sources: &["src/etmv4/types.rs"],
        sys_includes: &[],
        includes: &["opencsd/trc_pkt_types.h"],
        after_includes: &[],
        trailer: &[],
    },
    Header {
        path: "opencsd/ptm/trc_pkt_types_ptm.h",
        brief: "PTM packet and configuration types",
        guard: "ARM_TRC_PKT_PTM_TYPES_H_INCLUDED",
        sources: &["src/ptm/types.rs"],
        sys_includes: &[],
        includes: &["opencsd/trc_pkt_types.h", "opencsd/etmv3/trc_pkt_types_etmv3.h"],
        after_includes: &[],
        trailer: &[],
    },
    Header {
        path: "opencsd/stm/trc_pkt_types_stm.h",
        brief: "STM packet and configuration types",
        guard: "ARM_TRC_PKT_TYPES_STM_H_INCLUDED",
        sources: &["src/stm/types.rs"],
        sys_includes: &[],
        includes: &["opencsd/trc_pkt_types.h"],
        after_includes: &[],
        trailer: &[],
    },
    Header {
        path: "opencsd/ete/trc_pkt_types_ete.h",
        brief: "ETE configuration types (ETE packets are ETMv4 packets)",
        guard: "ARM_TRC_PKT_TYPES_ETE_H_INCLUDED",
        sources: &["src/ete/types.rs"],
        sys_includes: &[],
        includes: &["opencsd/trc_pkt_types.h", "opencsd/etmv4/trc_pkt_types_etmv4.h"],
        after_includes: &[],
        trailer: &[],
    },
    Header {
        path: "opencsd/itm/trc_pkt_types_itm.h",
        brief: "ITM packet and configuration types",
        guard: "ARM_TRC_PKT_TYPES_ITM_H_INCLUDED",
        sources: &["src/itm/types.rs"],
        sys_includes: &["stdint.h", "stddef.h"],
        includes: &["opencsd/trc_pkt_types.h"],
        after_includes: &[],
        trailer: &[],
    },
    Header {
        path: "opencsd/c_api/ocsd_c_api_types.h",
        brief: "C API types: handles, callback function types, logger flags",
        guard: "ARM_OCSD_C_API_TYPES_H_INCLUDED",
        sources: &["src/capi/types.rs"],
        sys_includes: &[],
        includes: &[
            "opencsd/ocsd_if_types.h",
            "opencsd/ocsd_if_version.h",
            "opencsd/trc_gen_elem_types.h",
            "opencsd/trc_pkt_types.h",
            "opencsd/etmv3/trc_pkt_types_etmv3.h",
            "opencsd/etmv4/trc_pkt_types_etmv4.h",
            "opencsd/ptm/trc_pkt_types_ptm.h",
            "opencsd/stm/trc_pkt_types_stm.h",
            "opencsd/ete/trc_pkt_types_ete.h",
            "opencsd/itm/trc_pkt_types_itm.h",
        ],
        after_includes: &[],
        trailer: &[CBlock { requires: &[], text: ctext::C_API_TYPES_TRAILER }],
    },
    Header {
        path: "opencsd/c_api/ocsd_c_api_custom.h",
        brief: "C API custom (external) decoder interface types",
        guard: "ARM_OCSD_C_API_CUSTOM_H_INCLUDED",
        sources: &["src/capi/custom.rs"],
        sys_includes: &[],
        includes: &["ocsd_c_api_types.h"],
        after_includes: &[],
        trailer: &[],
    },
    Header {
        path: "opencsd/c_api/opencsd_c_api.h",
        brief: "the C API functions",
        guard: "ARM_OPENCSD_C_API_H_INCLUDED",
        sources: &["src/capi/mod.rs", "src/capi/api.rs"],
        sys_includes: &[],
        includes: &["ocsd_c_api_types.h", "ocsd_c_api_custom.h"],
        after_includes: &[],
        trailer: &[],
    },
    Header {
        path: "opencsd/c_api/ocsd_c_api_cust_fact.h",
        brief: "functions a custom decoder factory implements (declarations for the client)",
        guard: "ARM_OCSD_C_API_CUST_FACT_H_INCLUDED",
        sources: &[],
        sys_includes: &[],
        includes: &["ocsd_c_api_types.h", "ocsd_c_api_custom.h"],
        after_includes: &[CBlock {
            requires: &["ocsd_extern_dcd_inst_t"],
            text: ctext::CUST_FACT_DECLS,
        }],
        trailer: &[],
    },
    Header {
        path: "opencsd/c_api/ocsd_c_api_cust_impl.h",
        brief: "inline helpers a custom decoder uses to call back into the library",
        guard: "ARM_OCSD_C_API_CUST_IMPL_H_INCLUDED",
        sources: &[],
        sys_includes: &[],
        includes: &["opencsd/c_api/ocsd_c_api_types.h", "opencsd/c_api/ocsd_c_api_custom.h"],
        after_includes: &[CBlock {
            requires: &["ocsd_extern_dcd_cb_fns"],
            text: ctext::CUST_IMPL_INLINES,
        }],
        trailer: &[],
    },
];
