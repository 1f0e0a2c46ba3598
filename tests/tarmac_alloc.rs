//! The Tarmac writer (with disassembly) and the comparer allocate nothing
//! per instruction: a counting global allocator watches their calls over
//! the decode of `snapshots-ete/002-ack_test_scr` (the decode itself is not
//! counted). Needs `$OCSD_SHARED` or `../shared`; skipped loudly without it.


use opencsd_c_api::tarmac::{Comparer, Reference, TarmacConfig, TarmacWriter};

mod common;
use common::*;

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn writer_and_comparer_allocate_nothing_per_instruction() {
    let Some(shared) = shared_or_skip() else {
        return;
    };
    let snap = shared.join("conformance/snapshots-ete/002-ack_test_scr");
    let reference = Reference::from_file(&snap.join("test_TARMAC")).unwrap();
    let mut writer = TarmacWriter::new(std::io::sink(), TarmacConfig { disasm: true });
    let mut cmp = Comparer::new(&reference);
    let (mut in_writer, mut in_comparer) = (0u64, 0u64);
    decode_each(&snap, |idx, id, elem, mem| {
        let a = allocations();
        writer.element(id, elem, mem).unwrap();
        let b = allocations();
        cmp.element(idx, id, elem, mem);
        let c = allocations();
        in_writer += b - a;
        in_comparer += c - b;
    });
    let instrs = writer.stats().instructions;
    eprintln!("{} instructions: {} allocations in the writer, {} in the comparer", instrs, in_writer, in_comparer);
    assert_eq!(instrs, 5146);
    // start-up only (the comparer's per-trace-ID state, the line buffer
    // growing to the longest line): nothing that scales with the trace
    assert!(in_writer < 10, "{} allocations in the writer", in_writer);
    assert!(in_comparer < 10, "{} allocations in the comparer", in_comparer);
    assert!(cmp.finish().matches());
}
