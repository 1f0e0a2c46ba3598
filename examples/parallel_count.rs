//! Decode a snapshot's trace buffer with the Rust API and count the
//! elements, serially or on N threads (`decode_parallel_each`): the decode
//! alone, without the cost of printing.
//!
//!     cargo run --release --example parallel_count -- SNAPSHOT_DIR [THREADS]
//!
//! THREADS 0 (default): serial (`decode_each`); `iter`: serial, pulling
//! the elements from `decode`'s iterator. Prints the element count and a
//! checksum of the element indexes and trace IDs, the same whatever the
//! thread count.
//!
//!     cargo run --release --example parallel_count -- SNAPSHOT_DIR THREADS fold
//!
//! The elements folded (`decode_parallel_fold`; THREADS 0: serially, with
//! `decode_each`): their count and a sum of a hash of each element's index
//! and trace ID, which does not depend on the order the elements are
//! folded in, the same whatever the thread count.
use std::path::Path;

use opencsd_c_api::api::{Decoder, Element, ParallelOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: parallel_count SNAPSHOT_DIR [THREADS]");
        std::process::exit(2);
    };
    let iterate = args.get(2).is_some_and(|s| s == "iter");
    let threads: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let mut s = match Decoder::from_snapshot(Path::new(dir), None) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("parallel_count: {dir}: {e}");
            std::process::exit(2);
        }
    };
    let trace = match std::fs::read(&s.trace_file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("parallel_count: {}: {e}", s.trace_file.display());
            std::process::exit(2);
        }
    };
    if args.get(3).is_some_and(|a| a == "fold") {
        let opts = ParallelOptions::folding(threads.max(1));
        let r = if threads == 0 {
            let mut acc = (0u64, 0u64);
            s.decoder.decode_each(&trace[..], |e| fold(&mut acc, e)).map(|b| (acc, b))
        } else {
            s.decoder.decode_parallel_fold(&trace, &opts, || (0u64, 0u64), fold, |a, b| (a.0 + b.0, a.1.wrapping_add(b.1)))
        };
        match r {
            Ok(((n, sum), _)) => println!("elements: {n}; sum: {sum:016x}"),
            Err(e) => {
                eprintln!("parallel_count: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    let mut n = 0u64;
    let mut sum = 0u64;
    let mut f = |e: &Element| {
        n += 1;
        sum = sum.wrapping_mul(31).wrapping_add(e.index).wrapping_add(e.trace_id as u64);
    };
    let r = if iterate {
        let mut it = s.decoder.decode(&trace[..]);
        for e in &mut it {
            f(&e);
        }
        it.finish()
    } else if threads == 0 {
        s.decoder.decode_each(&trace[..], &mut f)
    } else {
        s.decoder.decode_parallel_each(&trace, &ParallelOptions::new(threads), &mut f)
    };
    if let Err(e) = r {
        eprintln!("parallel_count: {e}");
        std::process::exit(1);
    }
    println!("elements: {n}; checksum: {sum:016x}");
}

/// Count `e` and add a hash of its index and trace ID to the sum.
fn fold(acc: &mut (u64, u64), e: &Element) {
    let h = (e.index ^ (e.trace_id as u64) << 56).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    acc.0 += 1;
    acc.1 = acc.1.wrapping_add(h ^ h >> 29);
}
