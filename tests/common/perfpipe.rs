//! perf.data recordings rewritten as the pipe-mode streams `perf record
//! -o -` writes: a 16-byte header, the attributes as HEADER_ATTR records,
//! the feature sections as HEADER_FEATURE records (the build-id table as
//! HEADER_BUILD_ID records, after the events; no AUXTRACE index, which
//! pipe mode cannot have), then the events.

use super::perfz::{rd16, rd32, rd64};

fn push_record(out: &mut Vec<u8>, rtype: u32, body: &[u8]) {
    let size = (8 + body.len()).div_ceil(8) * 8;
    assert!(size <= 0xffff, "record of {size} bytes");
    out.extend_from_slice(&rtype.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&(size as u16).to_le_bytes());
    out.extend_from_slice(body);
    out.resize(out.len() + size - 8 - body.len(), 0);
}

/// `bytes` (a little-endian perf.data file) as a pipe-mode stream; None
/// when a feature section is too large for one record.
pub fn to_pipe(bytes: &[u8]) -> Option<Vec<u8>> {
    let attr_size = rd64(bytes, 16) as usize;
    let (attrs_off, attrs_size) = (rd64(bytes, 24) as usize, rd64(bytes, 32) as usize);
    let (data_off, data_size) = (rd64(bytes, 40) as usize, rd64(bytes, 48) as usize);
    let mut out = b"PERFILE2".to_vec();
    out.extend_from_slice(&16u64.to_le_bytes());
    for i in 0..attrs_size / attr_size {
        let e = attrs_off + i * attr_size;
        let own = rd32(bytes, e + 4) as usize;
        let asz = if own == 0 || own > attr_size - 16 { attr_size - 16 } else { own };
        let (ids_off, ids_size) = (rd64(bytes, e + attr_size - 16) as usize, rd64(bytes, e + attr_size - 8) as usize);
        let mut body = bytes[e..e + asz].to_vec();
        body.extend_from_slice(&bytes[ids_off..ids_off + ids_size]);
        push_record(&mut out, 64, &body);
    }
    let mut build_ids = Vec::new();
    let mut table = data_off + data_size;
    for bit in 0..256usize {
        if rd64(bytes, 72 + (bit / 64) * 8) >> (bit % 64) & 1 == 0 {
            continue;
        }
        let (off, size) = (rd64(bytes, table) as usize, rd64(bytes, table + 8) as usize);
        table += 16;
        let sec = &bytes[off..off + size];
        match bit {
            // the build-id table: its entries as records
            2 => {
                let mut at = 0;
                while at + 8 <= sec.len() {
                    let n = rd16(sec, at + 6) as usize;
                    if n < 8 || at + n > sec.len() {
                        break;
                    }
                    let mut entry = sec[at..at + n].to_vec();
                    entry[..4].copy_from_slice(&67u32.to_le_bytes());
                    build_ids.extend_from_slice(&entry);
                    at += n;
                }
            }
            // the AUXTRACE index: not in pipe mode
            18 => {}
            _ => {
                if size + 16 > 0xffff {
                    return None;
                }
                let mut body = (bit as u64).to_le_bytes().to_vec();
                body.extend_from_slice(sec);
                push_record(&mut out, 80, &body);
            }
        }
    }
    out.extend_from_slice(&bytes[data_off..data_off + data_size]);
    out.extend_from_slice(&build_ids);
    Some(out)
}

/// The offsets of the AUXTRACE records of a pipe-mode stream.
pub fn pipe_auxtrace_offsets(bytes: &[u8]) -> Vec<u64> {
    let mut at = 16;
    let mut v = Vec::new();
    while at + 8 <= bytes.len() {
        let t = rd32(bytes, at);
        if t == 71 {
            v.push(at as u64);
        }
        let n = rd16(bytes, at + 6) as usize;
        if n < 8 {
            break;
        }
        at += n + if t == 71 { rd64(bytes, at + 8) as usize } else { 0 };
    }
    v
}
