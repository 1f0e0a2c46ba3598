//! Numbers as text for the printers' per-line paths: hexadecimal and
//! decimal from two-digit tables, without the formatting machinery.

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

