//! Library version: mirror of `opencsd/ocsd_if_version.h`.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

pub const OCSD_VER_MAJOR: u32 = 0x1;
pub const OCSD_VER_MINOR: u32 = 0x8;
pub const OCSD_VER_PATCH: u32 = 0x0;
pub const OCSD_VER_NUM: u32 = (OCSD_VER_MAJOR << 16) | (OCSD_VER_MINOR << 8) | OCSD_VER_PATCH;
pub const OCSD_VER_STRING: &str = "1.8.0";
pub const OCSD_LIB_NAME: &str = "OpenCSD Library";
pub const OCSD_LIB_SHORT_NAME: &str = "OCSD";
