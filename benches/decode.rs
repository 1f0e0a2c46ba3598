//! Decode throughput on the reference snapshots, in memory:
//!
//! - `full_decode/*`: a fresh decode tree from the snapshot (as
//!   trc_pkt_lister builds it: one decoder per source, the cores' memory
//!   dumps mapped), the whole trace buffer fed through it, EOT; the
//!   elements go to a sink that only counts them.
//! - `packet_processing/*`: the same with packet processing only (no
//!   packet decoder, no element output).
//!
//! Tree creation (which reads the memory dump files) is outside the timed
//! part. Throughput is in bytes of trace; the element count of each
//! snapshot is printed first, for elements per second.
//!
//!     OCSD_SHARED=/path/to/shared cargo bench --bench decode
//!
//! The snapshots come from `$OCSD_SHARED` or `../shared`; without them the
//! benchmarks are skipped with a message.

use std::path::Path;
use std::cell::Cell;
use std::rc::Rc;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use opencsd_c_api::abi::*;
use opencsd_c_api::common::error::NullLog;
use opencsd_c_api::dcd_tree::DecodeTree;
use opencsd_c_api::snapshot::{to_tree, Snapshot};

#[path = "../tests/common/mod.rs"]
mod common;
use common::*;

const SNAPSHOTS: &[&str] = &["bugfix-exact-match", "juno_r1_1"];

struct Input {
    snap: Snapshot,
    buffer: String,
    data: Vec<u8>,
}

fn load(dir: &Path) -> Input {
    let snap = Snapshot::read(dir.to_str().expect("UTF-8 path")).expect("snapshot");
    let buffer = snap.buffer_names().into_iter().next().expect("a trace buffer");
    let file = snap.path_of(&snap.buffer(&buffer).unwrap().file);
    let data = std::fs::read(&file).expect("trace buffer file");
    Input { snap, buffer, data }
}

fn tree(input: &Input, packet_only: bool, count: &Rc<Cell<u64>>) -> DecodeTree {
    let mut t = to_tree::create_tree(&input.snap, &input.buffer, packet_only, 0, Box::new(NullLog)).expect("decode tree").tree;
    if !packet_only {
        t.set_elem_sink(Some(Box::new(Counter(count.clone()))));
    }
    t
}

/// Feed the whole buffer, then EOT. The sink never waits, so the tree
/// takes every byte; a fatal error stops the run.
fn decode(t: &mut DecodeTree, data: &[u8]) {
    let mut pos = 0;
    while pos < data.len() {
        let (resp, used) = t.data_in(OCSD_OP_DATA, pos as ocsd_trc_index_t, &data[pos..]);
        assert!(!resp_is_fatal(resp), "fatal response {} at {}", resp, pos);
        pos += used;
        if used == 0 {
            let (resp, _) = t.data_in(OCSD_OP_FLUSH, 0, &[]);
            assert!(!resp_is_fatal(resp), "fatal response {} on flush", resp);
        }
    }
    t.data_in(OCSD_OP_EOT, 0, &[]);
}

fn benches(c: &mut Criterion) {
    let Some(shared) = shared_or_skip() else {
        return;
    };
    let inputs: Vec<(&str, Input)> =
        SNAPSHOTS.iter().map(|name| (*name, load(&shared.join("conformance/snapshots").join(name)))).collect();

    let count = Rc::new(Cell::new(0));
    for (name, input) in &inputs {
        count.set(0);
        decode(&mut tree(input, false, &count), &input.data);
        eprintln!("{}: {} bytes of trace, {} elements per full decode", name, input.data.len(), count.get());
    }

    for (group, packet_only) in [("full_decode", false), ("packet_processing", true)] {
        let mut g = c.benchmark_group(group);
        g.sample_size(20);
        for (name, input) in &inputs {
            g.throughput(Throughput::Bytes(input.data.len() as u64));
            g.bench_function(*name, |b| {
                b.iter_batched(|| tree(input, packet_only, &count), |mut t| decode(&mut t, &input.data), BatchSize::PerIteration)
            });
        }
        g.finish();
    }
}

criterion_group!(decode_benches, benches);
criterion_main!(decode_benches);
