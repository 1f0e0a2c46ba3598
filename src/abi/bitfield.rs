//! Accessors for C bit-fields.
//!
//! Rust has no bit-fields, so each group of C bit-fields that share one
//! `uint32_t` storage unit is a plain `u32` word in the Rust mirror struct.
//! The `bitfields!` macro generates a getter and a setter for every named
//! field of such a word, at the bit position gcc gives it on x86-64 and
//! AArch64 (fields allocated from the least significant bit up).
//!
//! The header generator turns the word back into the C bit-field
//! declarations (see `tools/gen_headers.rs`), and `c-tests/abi_layout.c`
//! checks the positions against OpenCSD 1.8.0's layout.

/// Generate getters and setters for bit-fields packed in a `u32` word.
///
/// ```ignore
/// bitfields!(ocsd_pe_context, flags: {
///     bits64 / set_bits64: 0, 1;
///     ctxt_id_valid / set_ctxt_id_valid: 1, 1;
/// });
/// ```
#[macro_export]
macro_rules! bitfields {
    ($ty:ty, $word:ident : { $( $get:ident / $set:ident : $shift:expr, $width:expr ; )* }) => {
        impl $ty {
            $(
                #[inline]
                #[allow(dead_code)]
                pub fn $get(&self) -> u32 {
                    (self.$word >> $shift) & ((1u32 << $width) - 1)
                }
                #[inline]
                #[allow(dead_code)]
                pub fn $set(&mut self, v: u32) {
                    let mask: u32 = ((1u32 << $width) - 1) << $shift;
                    self.$word = (self.$word & !mask) | ((v << $shift) & mask);
                }
            )*
        }
    };
}
