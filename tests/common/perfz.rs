//! perf.data recordings compressed as `perf record -z` writes them (for
//! the tests of compressed recordings and of damaged ones).

pub fn rd16(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes(b[o..o + 2].try_into().unwrap())
}
pub fn rd32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}
pub fn rd64(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

/// Compressed records holding `data` (whole records), the compressed
/// stream cut every `cut` bytes, alternating the two record forms.
fn compressed_records(enc: &mut zstd::stream::raw::Encoder<'static>, data: &[u8], cut: usize, form2: &mut bool) -> Vec<u8> {
    use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
    let mut z = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut input = InBuffer::around(data);
    while input.pos() < data.len() {
        let mut out = OutBuffer::around(&mut buf[..]);
        enc.run(&mut input, &mut out).unwrap();
        let n = out.pos();
        z.extend_from_slice(&buf[..n]);
    }
    loop {
        let mut out = OutBuffer::around(&mut buf[..]);
        let left = enc.flush(&mut out).unwrap();
        let n = out.pos();
        z.extend_from_slice(&buf[..n]);
        if left == 0 {
            break;
        }
    }
    let mut recs = Vec::new();
    for piece in z.chunks(cut) {
        if *form2 {
            let padded = piece.len().div_ceil(8) * 8;
            recs.extend_from_slice(&83u32.to_le_bytes());
            recs.extend_from_slice(&0u16.to_le_bytes());
            recs.extend_from_slice(&((16 + padded) as u16).to_le_bytes());
            recs.extend_from_slice(&(piece.len() as u64).to_le_bytes());
            recs.extend_from_slice(piece);
            recs.resize(recs.len() + padded - piece.len(), 0);
        } else {
            recs.extend_from_slice(&81u32.to_le_bytes());
            recs.extend_from_slice(&0u16.to_le_bytes());
            recs.extend_from_slice(&((8 + piece.len()) as u16).to_le_bytes());
            recs.extend_from_slice(piece);
        }
        *form2 = !*form2;
    }
    recs
}

/// A copy of the (little-endian) recording `bytes` with its kernel records
/// compressed as `perf record -z` writes them; the feature sections after
/// the data move with it.
pub fn compress_like_perf(bytes: &[u8], cut: usize) -> Vec<u8> {
    let (data_off, data_size) = (rd64(bytes, 40) as usize, rd64(bytes, 48) as usize);
    let data_end = data_off + data_size;
    let mut enc = zstd::stream::raw::Encoder::new(3).unwrap();
    let mut form2 = false;
    let mut data = Vec::new();
    let mut batch = Vec::new();
    let mut at = data_off;
    while at < data_end {
        let (t, size) = (rd32(bytes, at), rd16(bytes, at + 6) as usize);
        let mut next = at + size;
        if t == 71 {
            next += rd64(bytes, at + 8) as usize;
        }
        if t < 64 {
            batch.extend_from_slice(&bytes[at..next]);
        } else {
            if !batch.is_empty() {
                data.extend(compressed_records(&mut enc, &batch, cut, &mut form2));
                batch.clear();
            }
            data.extend_from_slice(&bytes[at..next]);
        }
        at = next;
    }
    if !batch.is_empty() {
        data.extend(compressed_records(&mut enc, &batch, cut, &mut form2));
    }
    let mut out = bytes[..data_off].to_vec();
    out[48..56].copy_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(&data);
    // the feature sections: a table of (offset, size), one per feature bit
    let delta = data.len() as i64 - data_size as i64;
    let mut rest = bytes[data_end..].to_vec();
    let features: u32 = (0..4).map(|i| rd64(bytes, 72 + 8 * i).count_ones()).sum();
    for k in 0..features as usize {
        let o = 16 * k;
        let moved = (rd64(&rest, o) as i64 + delta) as u64;
        rest[o..o + 8].copy_from_slice(&moved.to_le_bytes());
    }
    out.extend_from_slice(&rest);
    out
}

/// The file offsets of the AUXTRACE records of a (little-endian) recording.
pub fn auxtrace_offsets(bytes: &[u8]) -> Vec<u64> {
    let (data_off, data_size) = (rd64(bytes, 40) as usize, rd64(bytes, 48) as usize);
    let mut at = data_off;
    let mut v = Vec::new();
    while at < data_off + data_size {
        let t = rd32(bytes, at);
        if t == 71 {
            v.push(at as u64);
        }
        at += rd16(bytes, at + 6) as usize + if t == 71 { rd64(bytes, at + 8) as usize } else { 0 };
    }
    v
}

/// `out` of a rewritten copy (compressed, pipe mode) with its AUXTRACE
/// records' file offsets (`from`) written as the original's (`to`), for
/// comparison.
pub fn as_original(out: &[u8], from: &[u64], to: &[u64]) -> String {
    let mut s = String::from_utf8_lossy(out).into_owned();
    assert_eq!(from.len(), to.len());
    // (longest first: no offset's text is then a prefix of one replaced later)
    let mut pairs: Vec<(String, String)> = from.iter().zip(to).map(|(f, t)| (format!("{:#x}", f), format!("{:#x}", t))).collect();
    pairs.sort_by_key(|(f, _)| std::cmp::Reverse(f.len()));
    for (f, t) in pairs {
        s = s.replace(&format!("{f} "), &format!("{t} ")).replace(&format!("{f})"), &format!("{t})")).replace(&format!("{f}\""), &format!("{t}\""));
    }
    s
}

/// (offset, "mmap" / "comm") of the MMAP and COMM records `perf report -D`
/// lists in `dump`, each offset plus `shift` (16 for a pipe-mode stream,
/// whose offsets perf counts from after its header).
pub fn mmap_comm_listed(dump: &str, shift: u64) -> Vec<(u64, &'static str)> {
    let mut v = Vec::new();
    for l in dump.lines() {
        let kind = if l.contains("PERF_RECORD_MMAP") { "mmap" } else if l.contains("PERF_RECORD_COMM") { "comm" } else { continue };
        let Some(off) = l.split_whitespace().find(|w| w.starts_with("0x")) else { continue };
        v.push((u64::from_str_radix(&off[2..], 16).unwrap() + shift, kind));
    }
    v
}

/// (file offset, "mmap" / "comm") of the MMAP and COMM records read.
pub fn mmap_comm_read(pd: &opencsd_c_api::perf::PerfData) -> Vec<(u64, &'static str)> {
    use opencsd_c_api::perf::file::Sideband;
    pd.sideband
        .iter()
        .filter_map(|s| match s.event {
            Sideband::Mmap(_) => Some((s.file_offset, "mmap")),
            Sideband::Comm { .. } => Some((s.file_offset, "comm")),
            _ => None,
        })
        .collect()
}
