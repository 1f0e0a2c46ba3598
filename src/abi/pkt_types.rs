//! C ABI mirror of OpenCSD 1.8.0's `opencsd/trc_pkt_types.h`: packet pieces
//! shared by the protocol packet types.
//!
//! The header generator (`tools/gen-headers`) writes this file's items to
//! `include/opencsd/trc_pkt_types.h`.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use super::if_types::*;
use std::os::raw::c_int;

pub type ocsd_pkt_va_size = c_int;
pub const VA_32BIT: ocsd_pkt_va_size = 0;
pub const VA_64BIT: ocsd_pkt_va_size = 1;

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_pkt_vaddr {
    pub size: ocsd_pkt_va_size,
    pub val: ocsd_vaddr_t,
    pub pkt_bits: u8,
    pub valid_bits: u8,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ocsd_pkt_atom {
    pub En_bits: u32,
    pub num: u8,
}

pub type ocsd_iSync_reason = c_int;
pub const iSync_Periodic: ocsd_iSync_reason = 0;
pub const iSync_TraceEnable: ocsd_iSync_reason = 1;
pub const iSync_TraceRestartAfterOverflow: ocsd_iSync_reason = 2;
pub const iSync_DebugExit: ocsd_iSync_reason = 3;

pub type ocsd_armv7_exception = c_int;
pub const Excp_Reserved: ocsd_armv7_exception = 0;
pub const Excp_NoException: ocsd_armv7_exception = 1;
pub const Excp_Reset: ocsd_armv7_exception = 2;
pub const Excp_IRQ: ocsd_armv7_exception = 3;
pub const Excp_FIQ: ocsd_armv7_exception = 4;
pub const Excp_AsyncDAbort: ocsd_armv7_exception = 5;
pub const Excp_DebugHalt: ocsd_armv7_exception = 6;
pub const Excp_Jazelle: ocsd_armv7_exception = 7;
pub const Excp_SVC: ocsd_armv7_exception = 8;
pub const Excp_SMC: ocsd_armv7_exception = 9;
pub const Excp_Hyp: ocsd_armv7_exception = 10;
pub const Excp_Undef: ocsd_armv7_exception = 11;
pub const Excp_PrefAbort: ocsd_armv7_exception = 12;
pub const Excp_Generic: ocsd_armv7_exception = 13;
pub const Excp_SyncDataAbort: ocsd_armv7_exception = 14;
pub const Excp_CMUsageFault: ocsd_armv7_exception = 15;
pub const Excp_CMNMI: ocsd_armv7_exception = 16;
pub const Excp_CMDebugMonitor: ocsd_armv7_exception = 17;
pub const Excp_CMMemManage: ocsd_armv7_exception = 18;
pub const Excp_CMPendSV: ocsd_armv7_exception = 19;
pub const Excp_CMSysTick: ocsd_armv7_exception = 20;
pub const Excp_CMBusFault: ocsd_armv7_exception = 21;
pub const Excp_CMHardFault: ocsd_armv7_exception = 22;
pub const Excp_CMIRQn: ocsd_armv7_exception = 23;
pub const Excp_ThumbEECheckFail: ocsd_armv7_exception = 24;

pub type ocsd_pkt_atm_type = c_int;
pub const ATOM_PATTERN: ocsd_pkt_atm_type = 0;
pub const ATOM_REPEAT: ocsd_pkt_atm_type = 1;

pub type ocsd_atm_val = c_int;
pub const ATOM_N: ocsd_atm_val = 0;
pub const ATOM_E: ocsd_atm_val = 1;
