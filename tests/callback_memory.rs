//! Memory given through one client callback over the whole address space
//! (perf's way) decodes exactly as memory given as files, on every
//! snapshot of the conformance set. Needs `$OCSD_SHARED` or `../shared`;
//! skipped loudly without it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use opencsd_c_api::abi::gen_elem::ocsd_generic_trace_elem;
use opencsd_c_api::abi::*;
use opencsd_c_api::common::error::NullLog;
use opencsd_c_api::common::GenElemSink;
use opencsd_c_api::mem::{Accessor, Source};
use opencsd_c_api::printers::gen_elem::write_elem_str;
use opencsd_c_api::snapshot::{to_tree, Snapshot};

mod common;
use common::*;

struct Collect(std::rc::Rc<std::cell::RefCell<Vec<String>>>);

impl GenElemSink for Collect {
    fn trace_elem_in(&mut self, idx: ocsd_trc_index_t, id: u8, e: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        let mut s = format!("{} {:x} ", idx, id);
        write_elem_str(e, &mut s);
        self.0.borrow_mut().push(s);
        OCSD_RESP_CONT
    }
}

/// (elements as text, callback calls) of a full decode of `buffer`; with
/// `callback`, the tree's file accessors are replaced by one callback
/// answering from the same files.
fn decode(snap: &Snapshot, buffer: &str, callback: bool) -> Option<(Vec<String>, u64)> {
    let built = to_tree::create_tree(snap, buffer, false, 0, Box::new(NullLog))?;
    let mut tree = built.tree;
    let calls = Arc::new(AtomicU64::new(0));
    if callback {
        let images = tree.mapper.file_images();
        tree.mapper.clear();
        let c = calls.clone();
        tree.mapper
            .add(Accessor {
                start: 0,
                end: u64::MAX,
                space: OCSD_MEM_SPACE_ANY,
                source: Source::Callback {
                    read: Box::new(move |addr, space, _id, buf| {
                        c.fetch_add(1, Ordering::Relaxed);
                        // the first image of the space holding the address
                        match images.iter().find(|i| addr >= i.start && addr <= i.end && (i.space & space) != 0) {
                            Some(i) => i.read(addr, buf),
                            None => 0,
                        }
                    }),
                },
            })
            .ok()?;
    }
    let out = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    tree.set_elem_sink(Some(Box::new(Collect(out.clone()))));
    let data = std::fs::read(&built.buffer_file).ok()?;
    let mut pos = 0;
    while pos < data.len() {
        let (resp, used) = tree.data_in(OCSD_OP_DATA, pos as ocsd_trc_index_t, &data[pos..]);
        pos += used;
        if resp_is_fatal(resp) || used == 0 {
            break;
        }
    }
    tree.data_in(OCSD_OP_EOT, 0, &[]);
    let v = out.borrow().clone();
    Some((v, calls.load(Ordering::Relaxed)))
}

#[test]
fn callback_memory_decodes_as_file_memory() {
    let Some(shared) = shared_or_skip() else {
        return;
    };
    let mut checked = 0;
    for base in ["conformance/snapshots", "conformance/snapshots-ete"] {
        let Ok(dirs) = std::fs::read_dir(shared.join(base)) else { continue };
        let mut dirs: Vec<PathBuf> = dirs.filter_map(|d| d.ok().map(|d| d.path())).filter(|p| p.is_dir()).collect();
        dirs.sort();
        for dir in dirs {
            let Ok(snap) = Snapshot::read(dir.to_str().unwrap()) else { continue };
            for buffer in snap.buffer_names() {
                let Some((files, _)) = decode(&snap, &buffer, false) else { continue };
                let (cb, calls) = decode(&snap, &buffer, true).expect("callback tree");
                assert_eq!(files.len(), cb.len(), "{} {}: element counts", dir.display(), buffer);
                for (i, (a, b)) in files.iter().zip(&cb).enumerate() {
                    assert_eq!(a, b, "{} {}: element {}", dir.display(), buffer, i);
                }
                eprintln!("{} {}: {} elements, {} callback calls", dir.display(), buffer, cb.len(), calls);
                checked += 1;
            }
        }
    }
    eprintln!("{} buffers decode alike from files and from a callback", checked);
    assert!(checked >= 10);
}
