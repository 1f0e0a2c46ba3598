//! Numbers as text for the printers' per-line paths: hexadecimal and
//! decimal from two-digit tables, without the formatting machinery.

use super::line::Padded;

/// Two-digit tables: `HEX_PAIRS[2b..2b+2]` is byte `b` in hex,
/// `DEC_PAIRS[2n..2n+2]` is `n` (0..100) in decimal. They are `&str`s
/// checked once at compile time, so the per-number paths copy ASCII slices
/// without UTF-8 validation or the formatting machinery.
const fn pairs<const N: usize>(radix: usize, upper: bool) -> [u8; N] {
    let digits: &[u8; 16] = if upper { b"0123456789ABCDEF" } else { b"0123456789abcdef" };
    let mut t = [0u8; N];
    let mut i = 0;
    while i < N / 2 {
        t[2 * i] = digits[i / radix];
        t[2 * i + 1] = digits[i % radix];
        i += 1;
    }
    t
}
const HEX_PAIR_BYTES: [u8; 512] = pairs::<512>(16, false);
const HEX_UPPER_PAIR_BYTES: [u8; 512] = pairs::<512>(16, true);
const DEC_PAIR_BYTES: [u8; 200] = pairs::<200>(10, false);
const HEX_PAIRS: &str = match std::str::from_utf8(&HEX_PAIR_BYTES) {
    Ok(s) => s,
    Err(_) => panic!("ASCII table"),
};
const HEX_UPPER_PAIRS: &str = match std::str::from_utf8(&HEX_UPPER_PAIR_BYTES) {
    Ok(s) => s,
    Err(_) => panic!("ASCII table"),
};
const DEC_PAIRS: &str = match std::str::from_utf8(&DEC_PAIR_BYTES) {
    Ok(s) => s,
    Err(_) => panic!("ASCII table"),
};
const ZEROS: &str = "0000000000000000";

/// Append `v` in lower-case hexadecimal, at least `width` digits (zero
/// padded): `{:0width$x}` without the formatting machinery, for the
/// per-element printing paths.
#[inline]
pub fn push_hex(out: &mut String, v: u64, width: usize) {
    push_hex_with(out, v, width, HEX_PAIRS)
}

/// As [`push_hex`], upper-case digits (`{:0width$X}`).
#[inline]
pub fn push_hex_upper(out: &mut String, v: u64, width: usize) {
    push_hex_with(out, v, width, HEX_UPPER_PAIRS)
}

#[inline]
fn push_hex_with(out: &mut String, v: u64, width: usize, table: &'static str) {
    let digits = if v == 0 { 1 } else { (67 - v.leading_zeros() as usize) / 4 };
    let mut pad = width.saturating_sub(digits);
    while pad > 0 {
        let n = pad.min(ZEROS.len());
        out.push_str(&ZEROS[..n]);
        pad -= n;
    }
    let mut shift = digits * 4;
    if digits & 1 == 1 {
        shift -= 4;
        let d = ((v >> shift) & 0xf) as usize;
        out.push_str(&table[2 * d + 1..2 * d + 2]);
    }
    while shift > 0 {
        shift -= 8;
        let b = ((v >> shift) & 0xff) as usize;
        out.push_str(&table[2 * b..2 * b + 2]);
    }
}

/// Append `v` in decimal (`{}`), without the formatting machinery.
#[inline]
pub fn push_dec(out: &mut String, v: u64) {
    // base-100 digits, least significant first
    let mut pairs = [0u8; 10];
    let mut n = 0;
    let mut x = v;
    while x >= 100 {
        pairs[n] = (x % 100) as u8;
        x /= 100;
        n += 1;
    }
    let top = x as usize;
    if top >= 10 {
        out.push_str(&DEC_PAIRS[2 * top..2 * top + 2]);
    } else {
        out.push_str(&DEC_PAIRS[2 * top + 1..2 * top + 2]);
    }
    while n > 0 {
        n -= 1;
        let p = pairs[n] as usize;
        out.push_str(&DEC_PAIRS[2 * p..2 * p + 2]);
    }
}


/// A text buffer the printers append to: a `String` (the C API's string
/// functions, tests) or a line buffer ([`super::line::LineBuf`] and
/// [`super::line::Room`]: the lister's log lines, where numbers go in as
/// fixed-size chunks, with no per-digit appends and no UTF-8 checks;
/// everything appended is ASCII or whole `&str`s, so the bytes stay valid
/// UTF-8).
pub trait TextOut {
    fn put_str(&mut self, s: &str);
    fn put_char(&mut self, c: char);
    /// `{:0width$x}`
    fn put_hex(&mut self, v: u64, width: usize);
    /// `{:0width$X}`
    fn put_hex_upper(&mut self, v: u64, width: usize);
    /// `{}`
    fn put_dec(&mut self, v: u64);
    /// `write!` (rare lines only).
    fn put_fmt(&mut self, args: std::fmt::Arguments);
    /// Bytes of ASCII / UTF-8 text (checked only where the buffer is a
    /// `String`).
    fn put_utf8(&mut self, b: &[u8]);
    /// The first `len` bytes of `bytes` (ASCII), which buffers with room
    /// to spare copy whole (see [`super::line::LineBuf`]).
    #[inline(always)]
    fn put_chunk<const N: usize>(&mut self, bytes: &[u8; N], len: usize) {
        self.put_utf8(&bytes[..len.min(N)])
    }
    /// A padded table piece (see [`Padded`]): its text.
    #[inline(always)]
    fn put_padded<const N: usize>(&mut self, p: &Padded<N>) {
        self.put_chunk(&p.bytes, p.len)
    }
}

impl TextOut for String {
    #[inline]
    fn put_str(&mut self, s: &str) {
        self.push_str(s)
    }
    #[inline]
    fn put_char(&mut self, c: char) {
        self.push(c)
    }
    #[inline]
    fn put_hex(&mut self, v: u64, width: usize) {
        push_hex(self, v, width)
    }
    #[inline]
    fn put_hex_upper(&mut self, v: u64, width: usize) {
        push_hex_upper(self, v, width)
    }
    #[inline]
    fn put_dec(&mut self, v: u64) {
        push_dec(self, v)
    }
    fn put_fmt(&mut self, args: std::fmt::Arguments) {
        let _ = std::fmt::Write::write_fmt(self, args);
    }
    fn put_utf8(&mut self, b: &[u8]) {
        self.push_str(&String::from_utf8_lossy(b))
    }
}

/// The 16 hexadecimal digits of `v` as ASCII, most significant first, in a
/// `u128` whose big-endian bytes are the digits: each nibble spread to a
/// byte, then the digit characters added to all bytes at once.
#[inline]
pub(crate) fn hex_digits(v: u64, upper: bool) -> u128 {
    const LO4: u128 = 0x0F0F_0F0F_0F0F_0F0F_0F0F_0F0F_0F0F_0F0F;
    const ONES: u128 = 0x0101_0101_0101_0101_0101_0101_0101_0101;
    let mut x = v as u128;
    x = (x | (x << 32)) & 0x0000_0000_FFFF_FFFF_0000_0000_FFFF_FFFF;
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF_0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF_00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & LO4;
    // 1 in each byte whose nibble is 10 or more
    let letters = ((x + 6 * ONES) >> 4) & ONES;
    x + b'0' as u128 * ONES + letters * if upper { 7 } else { 39 }
}

/// The 8 hexadecimal digits of a 32-bit `v` as ASCII, most significant
/// first, in the big-endian bytes of a `u64` (as [`hex_digits`]).
#[inline(always)]
pub(crate) fn hex_digits32(v: u32, upper: bool) -> u64 {
    const LO4: u64 = 0x0F0F_0F0F_0F0F_0F0F;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let mut x = v as u64;
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & LO4;
    let letters = ((x + 6 * ONES) >> 4) & ONES;
    x + b'0' as u64 * ONES + letters * if upper { 7 } else { 39 }
}

/// The 8 decimal digits of `v` (< 10^8, zero padded) as ASCII, most
/// significant first, in the big-endian bytes of a `u64`: split into
/// 4-digit, 2-digit and 1-digit lanes with multiply-shift division.
#[inline(always)]
pub(crate) fn dec_digits8(v: u32) -> u64 {
    let hi = (v / 10_000) as u64;
    let lo = (v % 10_000) as u64;
    // two 32-bit lanes of 0..9999 -> four 16-bit lanes of 0..99
    let x = (hi << 32) | lo;
    let q = ((x * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let x = (q << 16) | (x - q * 100);
    // four 16-bit lanes of 0..99 -> eight byte lanes of 0..9
    let q = ((x * 103) >> 10) & 0x000F_000F_000F_000F;
    let x = (q << 8) | (x - q * 10);
    x | 0x3030_3030_3030_3030
}

/// The decimal digits of `v` at the end of a 20-byte buffer, and where
/// they start.
pub(crate) fn dec_long_digits(v: u64) -> ([u8; 20], usize) {
    // two digits at a time from the end of a buffer
    let mut buf = [b'0'; 20];
    let mut i = 20;
    let mut x = v;
    while x >= 100 {
        let p = 2 * (x % 100) as usize;
        x /= 100;
        i -= 2;
        buf[i] = DEC_PAIR_BYTES[p];
        buf[i + 1] = DEC_PAIR_BYTES[p + 1];
    }
    if x >= 10 {
        let p = 2 * x as usize;
        i -= 2;
        buf[i] = DEC_PAIR_BYTES[p];
        buf[i + 1] = DEC_PAIR_BYTES[p + 1];
    } else {
        i -= 1;
        buf[i] = b'0' + x as u8;
    }
    (buf, i)
}

#[cfg(test)]
mod text_out_tests {
    use super::*;

    /// The string's number writers write what `format!` writes (the line
    /// buffers' are checked against `format!` in `line.rs`).
    #[test]
    fn string_numbers_match_fmt() {
        let vals = [
            0u64, 1, 9, 10, 15, 16, 99, 100, 101, 255, 256, 999, 1000, 4095, 4096, 65535, 123456, 0xdead_beef,
            0x4d0a1c, 1 << 63, u64::MAX, u64::MAX - 1, 10_000_000_000_000_000_000, 0x0123_4567_89ab_cdef,
        ];
        for v in vals {
            for width in [0usize, 1, 2, 4, 8, 12, 16, 17, 20] {
                let mut s = String::new();
                s.put_hex(v, width);
                assert_eq!(s, format!("{v:0width$x}"));
                s.clear();
                s.put_hex_upper(v, width);
                assert_eq!(s, format!("{v:0width$X}"));
            }
            let mut s = String::new();
            s.put_dec(v);
            assert_eq!(s, v.to_string());
        }
        for v in (0..100_000u64).chain((100_000..2_000_000_000u64).step_by(9_973)).chain(99_999_990..100_000_010) {
            let mut s = String::new();
            s.put_dec(v);
            s.put_hex(v, 3);
            assert_eq!(s, format!("{v}{v:03x}"));
        }
        let mut s = String::from("x");
        s.put_char('é');
        s.put_str("ab");
        s.put_fmt(format_args!("{}-{:02x}", 7, 3));
        s.put_utf8(b"!");
        assert_eq!(s, "xéab7-03!");
    }
}
