//! A byte buffer for the lister's per-line paths, written through a cursor.
//!
//! [`LineBuf`] keeps its bytes initialised beyond the text written so far,
//! so that every piece goes in as a fixed-size copy: a table entry padded to
//! 16, 32 or 64 bytes, or the 8 or 16 digit bytes of a number, is copied
//! whole and the cursor moves on by the piece's real length (what lies
//! beyond is overwritten by the next piece). Copies of a size known at
//! compile time need no call to `memcpy`, and each costs one room check.

use super::num::{dec_digits8, hex_digits, hex_digits32, dec_long_digits, TextOut};

/// Bytes kept ready beyond the cursor when the buffer grows.
const SLACK: usize = 4096;

/// Text written at a cursor into an initialised byte buffer. The text is
/// `as_bytes()`; the bytes beyond it are scratch space.
#[derive(Clone, Debug, Default)]
pub struct LineBuf {
    /// Always initialised; the text is `buf[..pos]`.
    buf: Vec<u8>,
    pos: usize,
}

/// A piece of text padded to `N` bytes: copied whole, counted as `len`.
#[derive(Clone, Copy, Debug)]
pub struct Padded<const N: usize> {
    pub bytes: [u8; N],
    pub len: usize,
}

impl<const N: usize> Padded<N> {
    /// `s` padded with spaces (fails to compile in a `const` when `s` is
    /// longer than `N`).
    pub const fn new(s: &str) -> Self {
        let b = s.as_bytes();
        assert!(b.len() <= N, "piece longer than its padding");
        let mut bytes = [b' '; N];
        let mut i = 0;
        while i < b.len() {
            bytes[i] = b[i];
            i += 1;
        }
        Padded { bytes, len: b.len() }
    }

    /// `s` padded with spaces, built at run time (panics when `s` is
    /// longer than `N`: the tables are sized for their longest text).
    pub fn new_owned(s: &str) -> Self {
        let b = s.as_bytes();
        assert!(b.len() <= N, "piece longer than its padding");
        let len = b.len();
        let mut bytes = [b' '; N];
        bytes[..len].copy_from_slice(&b[..len]);
        Padded { bytes, len }
    }

    /// The concatenation of `a` and `b`, padded (`a.len + b.len <= N`).
    pub fn join<const A: usize, const B: usize>(a: &Padded<A>, b: &Padded<B>) -> Self {
        let mut bytes = [b' '; N];
        bytes[..a.len].copy_from_slice(&a.bytes[..a.len]);
        bytes[a.len..a.len + b.len].copy_from_slice(&b.bytes[..b.len]);
        Padded { bytes, len: a.len + b.len }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len.min(N)]
    }
}

impl LineBuf {
    pub fn new() -> Self {
        LineBuf::default()
    }

    /// A buffer with `n` bytes ready before it first grows.
    pub fn with_capacity(n: usize) -> Self {
        LineBuf { buf: vec![0; n], pos: 0 }
    }

    /// The text written.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.pos]
    }

    /// Length of the text.
    #[inline]
    pub fn len(&self) -> usize {
        self.pos
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos == 0
    }

    /// Bytes the buffer holds ready (text and scratch).
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Empty the text (the space stays).
    #[inline]
    pub fn clear(&mut self) {
        self.pos = 0;
    }

    /// Keep the first `n` bytes of the text.
    pub fn truncate(&mut self, n: usize) {
        self.pos = self.pos.min(n);
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, n: usize) {
        let want = self.pos + n + SLACK;
        let new_len = want.max(self.buf.len() * 2);
        self.buf.resize(new_len, 0);
    }

    /// The `N` bytes at the cursor, made room for.
    #[inline(always)]
    fn chunk<const N: usize>(&mut self) -> &mut [u8; N] {
        if self.buf.len() - self.pos < N {
            self.grow(N);
        }
        let p = self.pos;
        match self.buf[p..].first_chunk_mut::<N>() {
            Some(c) => c,
            None => unreachable!("room was made"),
        }
    }

    /// Move the cursor on by `len` bytes of what the last chunk wrote
    /// (at most its `N`).
    #[inline(always)]
    fn advance<const N: usize>(&mut self, len: usize) {
        self.pos += len.min(N);
    }

    /// Copy all `N` bytes of `bytes`, keep `len` of them.
    #[inline(always)]
    pub fn put_chunk<const N: usize>(&mut self, bytes: &[u8; N], len: usize) {
        *self.chunk::<N>() = *bytes;
        self.advance::<N>(len);
    }

    /// A padded piece.
    #[inline(always)]
    pub fn put_padded<const N: usize>(&mut self, p: &Padded<N>) {
        self.put_chunk(&p.bytes, p.len);
    }

    /// Bytes of any length (one `memcpy` unless the length is known at
    /// compile time).
    #[inline(always)]
    pub fn put_bytes(&mut self, b: &[u8]) {
        let n = b.len();
        if self.buf.len() - self.pos < n {
            self.grow(n);
        }
        let p = self.pos;
        self.buf[p..p + n].copy_from_slice(b);
        self.pos = p + n;
    }

    /// A byte.
    #[inline(always)]
    pub fn put_byte(&mut self, b: u8) {
        self.put_chunk(&[b], 1);
    }
}

impl LineBuf {
    /// Room for `L` bytes at the cursor, written through a [`Room`] (a
    /// local cursor: no reloads of the buffer's fields per piece). What is
    /// written counts once [`LineBuf::commit`] takes the room back.
    #[inline(always)]
    pub fn room<const L: usize>(&mut self) -> Room<'_, L> {
        let b = self.chunk::<L>();
        Room { b, p: 0, overflow: false }
    }

    /// Keep what `room` wrote, unless it ran out of space (false: nothing
    /// is kept, write the text another way).
    #[inline(always)]
    pub fn commit<const L: usize>(&mut self, room: RoomDone<L>) -> bool {
        if room.overflow {
            return false;
        }
        self.pos += room.p.min(L);
        true
    }
}

/// `L` bytes of a [`LineBuf`]'s space at its cursor, written at a local
/// cursor. A piece that does not fit sets `overflow` and is dropped.
pub struct Room<'a, const L: usize> {
    b: &'a mut [u8; L],
    p: usize,
    overflow: bool,
}

/// What a [`Room`] wrote: its length, and whether it ran out of space.
pub struct RoomDone<const L: usize> {
    p: usize,
    overflow: bool,
}

impl<'a, const L: usize> Room<'a, L> {
    /// Writing into `b` from its start.
    #[inline(always)]
    pub fn new(b: &'a mut [u8; L]) -> Self {
        Room { b, p: 0, overflow: false }
    }

    /// Copy all `N` bytes of `bytes`, keep `len` of them.
    #[inline(always)]
    pub fn put_chunk<const N: usize>(&mut self, bytes: &[u8; N], len: usize) {
        match self.b.get_mut(self.p..).and_then(|s| s.first_chunk_mut::<N>()) {
            Some(d) => {
                *d = *bytes;
                self.p += len.min(N);
            }
            None => self.overflow = true,
        }
    }

    #[inline(always)]
    pub fn put_padded<const N: usize>(&mut self, p: &Padded<N>) {
        self.put_chunk(&p.bytes, p.len);
    }

    #[inline(always)]
    pub fn put_byte(&mut self, b: u8) {
        self.put_chunk(&[b], 1);
    }

    #[inline(always)]
    pub fn put_bytes(&mut self, b: &[u8]) {
        match self.b.get_mut(self.p..self.p + b.len()) {
            Some(d) => {
                d.copy_from_slice(b);
                self.p += b.len();
            }
            None => self.overflow = true,
        }
    }

    /// Bytes written so far.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.p
    }

    /// Nothing written yet.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.p == 0
    }

    /// The `N` bytes at offset `from` (written or not), if the room has
    /// them.
    #[inline(always)]
    pub fn window<const N: usize>(&self, from: usize) -> Option<&[u8; N]> {
        self.b.get(from..).and_then(|s| s.first_chunk::<N>())
    }

    /// What was written from offset `from` on.
    #[inline(always)]
    pub fn written_since(&self, from: usize) -> &[u8] {
        self.b.get(from..self.p).unwrap_or(&[])
    }

    /// The end of the writing: give it to [`LineBuf::commit`].
    #[inline(always)]
    pub fn done(self) -> RoomDone<L> {
        RoomDone { p: self.p, overflow: self.overflow }
    }
}

/// Numbers (`hex`, `dec`), `std::fmt::Write` and [`TextOut`] for a cursor
/// type with the inherent writers `put_bytes`, `put_byte`, `put_chunk` and
/// `put_padded` ([`Room`] and [`LineBuf`] write the same way).
macro_rules! cursor_text_out {
    ([$($g:tt)*] $t:ty) => {
        impl<$($g)*> $t {
            /// `v` in hexadecimal, at least `width` digits.
            #[inline(always)]
            pub fn hex(&mut self, v: u64, width: usize, upper: bool) {
                let sig = if v == 0 { 1 } else { (67 - v.leading_zeros() as usize) / 4 };
                let mut n = sig.max(width);
                if n > 16 {
                    for _ in 16..n {
                        self.put_byte(b'0');
                    }
                    n = 16;
                }
                if n <= 8 {
                    let d = hex_digits32(v as u32, upper) << (8 * (8 - n));
                    self.put_chunk(&d.to_be_bytes(), n);
                } else {
                    let d = hex_digits(v, upper) << (8 * (16 - n));
                    self.put_chunk(&d.to_be_bytes(), n);
                }
        }

        /// `v` in decimal.
        #[inline(always)]
        pub fn dec(&mut self, v: u64) {
            if v < 10 {
                self.put_byte(b'0' + v as u8);
            } else if v < 100_000_000 {
                let d = dec_digits8(v as u32);
                // the leading '0' digits are 0x30 bytes: skip them
                let lead = ((d ^ 0x3030_3030_3030_3030).leading_zeros() / 8) as usize;
                self.put_chunk(&(d << (8 * lead)).to_be_bytes(), 8 - lead);
            } else {
                let (buf, start) = dec_long_digits(v);
                self.put_bytes(&buf[start..]);
            }
        }
        }

        impl<$($g)*> std::fmt::Write for $t {
            fn write_str(&mut self, s: &str) -> std::fmt::Result {
                self.put_bytes(s.as_bytes());
                Ok(())
            }
        }

        impl<$($g)*> TextOut for $t {
            #[inline(always)]
            fn put_str(&mut self, s: &str) {
                self.put_bytes(s.as_bytes())
            }
            #[inline]
            fn put_char(&mut self, c: char) {
                if c.is_ascii() {
                    self.put_byte(c as u8);
                } else {
                    let mut b = [0u8; 4];
                    self.put_bytes(c.encode_utf8(&mut b).as_bytes());
                }
            }
            #[inline(always)]
            fn put_hex(&mut self, v: u64, width: usize) {
                self.hex(v, width, false)
            }
            #[inline]
            fn put_hex_upper(&mut self, v: u64, width: usize) {
                self.hex(v, width, true)
            }
            #[inline(always)]
            fn put_dec(&mut self, v: u64) {
                self.dec(v)
            }
            fn put_fmt(&mut self, args: std::fmt::Arguments) {
                let _ = std::fmt::Write::write_fmt(self, args);
            }
            #[inline]
            fn put_utf8(&mut self, b: &[u8]) {
                self.put_bytes(b)
            }
            #[inline(always)]
            fn put_chunk<const N: usize>(&mut self, bytes: &[u8; N], len: usize) {
                <$t>::put_chunk(self, bytes, len)
            }
            #[inline(always)]
            fn put_padded<const N: usize>(&mut self, p: &Padded<N>) {
                <$t>::put_padded(self, p)
            }
        }
    };
}

cursor_text_out!([const L: usize] Room<'_, L>);
cursor_text_out!([] LineBuf);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_match_fmt() {
        let vals = [
            0u64, 1, 9, 10, 15, 16, 99, 100, 101, 255, 256, 999, 1000, 4095, 4096, 65535, 123456, 9_999_999,
            10_000_000, 99_999_999, 100_000_000, 0xdead_beef, 1 << 63, u64::MAX, 10_000_000_000_000_000_000,
        ];
        let mut b = LineBuf::new();
        let mut s = String::new();
        for v in vals {
            for width in [0usize, 1, 2, 8, 9, 16, 17, 20] {
                b.put_hex(v, width);
                b.put_char(';');
                b.put_hex_upper(v, width);
                b.put_char(' ');
                s.push_str(&format!("{v:0width$x};{v:0width$X} "));
            }
            b.put_dec(v);
            b.put_char('|');
            s.push_str(&format!("{v}|"));
        }
        for v in (0..200_000u64).chain((200_000..3_000_000_000u64).step_by(7_919)) {
            b.put_dec(v);
            b.put_byte(b',');
            s.push_str(&format!("{v},"));
        }
        assert_eq!(std::str::from_utf8(b.as_bytes()).unwrap(), s);
    }

    #[test]
    fn pieces_grow_and_clear() {
        const P: Padded<16> = Padded::new("abc");
        let mut b = LineBuf::with_capacity(4);
        for _ in 0..5000 {
            b.put_padded(&P);
            b.put_str("de");
        }
        assert_eq!(b.len(), 25_000);
        assert_eq!(&b.as_bytes()[..10], b"abcdeabcde");
        b.truncate(3);
        assert_eq!(b.as_bytes(), b"abc");
        b.clear();
        assert!(b.is_empty());
        b.put_char('é');
        b.put_fmt(format_args!("{}-{:02x}", 7, 3));
        let j: Padded<8> = Padded::join(&Padded::<4>::new("ab"), &Padded::<4>::new("cd"));
        b.put_padded(&j);
        assert_eq!(std::str::from_utf8(b.as_bytes()).unwrap(), "é7-03abcd");
    }
}
