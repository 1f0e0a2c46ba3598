//! Decoded elements of a snapshot, with the snapshot's memory, for the
//! Tarmac writer and the comparer.
//!
//! This drives the crate's decode tree the way `trc_pkt_lister -decode`
//! does (same tree, same memory images) and hands each element, with
//! target memory, to a visitor.

use std::cell::RefCell;
use std::io::Read;
use std::rc::Rc;

use crate::abi::gen_elem::*;
use crate::abi::*;
use crate::common::error::NullLog;
use crate::common::{GenElemSink, MemAccess};
use crate::snapshot::{self, to_tree, Snapshot};

type Pending = Rc<RefCell<Vec<(ocsd_trc_index_t, u8, ocsd_generic_trace_elem)>>>;

/// Keeps the elements of one `data_in` call for the visitor.
struct Collect(Pending);

impl GenElemSink for Collect {
    fn trace_elem_in(&mut self, index: ocsd_trc_index_t, id: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        let mut e = *elem;
        e.ptr_extended_data = std::ptr::null(); // not valid after the call
        self.0.borrow_mut().push((index, id, e));
        OCSD_RESP_CONT
    }
}

/// Decode trace buffer `buffer` (the first buffer when `None`) of the
/// snapshot in `dir`, calling `visit(index, trace_id, element, memory)`
/// for each generic element in order. Returns the bytes of trace
/// processed; an error (one line, naming the file) when the snapshot, its
/// buffer or its trace file cannot be read or no decoder could be built.
pub fn decode_snapshot(
    dir: &str,
    buffer: Option<&str>,
    mut visit: impl FnMut(ocsd_trc_index_t, u8, &ocsd_generic_trace_elem, &mut dyn MemAccess),
) -> Result<u64, String> {
    if !snapshot::snapshot_found(dir) {
        return Err(format!("{}: no snapshot.ini in this directory", dir));
    }
    let snap = Snapshot::read(dir).map_err(|e| format!("{}: {}", dir, e))?;
    let names = snap.buffer_names();
    let name = match buffer {
        Some(b) if names.iter().any(|n| n == b) => b.to_string(),
        Some(b) => return Err(format!("{}: no trace buffer named {} (buffers: {})", dir, b, names.join(", "))),
        None => names.first().cloned().ok_or_else(|| format!("{}: no trace buffers listed", dir))?,
    };
    let built = to_tree::create_tree(&snap, &name, false, 0, Box::new(NullLog))
        .ok_or_else(|| format!("{}: no decoder could be created for trace buffer {}", dir, name))?;
    let mut tree = built.tree;
    let pending: Pending = Rc::new(RefCell::new(Vec::with_capacity(256)));
    tree.set_elem_sink(Some(Box::new(Collect(pending.clone()))));
    let mut file = std::fs::File::open(&built.buffer_file).map_err(|e| format!("{}: {}", built.buffer_file, e))?;

    let mut drain = |tree: &mut crate::dcd_tree::DecodeTree| {
        let mut p = pending.borrow_mut();
        for (index, id, elem) in p.iter() {
            visit(*index, *id, elem, &mut tree.mapper);
        }
        p.clear();
    };
    let mut buf = vec![0u8; 1 << 16];
    let mut index: u64 = 0;
    loop {
        let n = file.read(&mut buf).map_err(|e| format!("{}: {}", built.buffer_file, e))?;
        if n == 0 {
            break;
        }
        let mut done = 0;
        while done < n {
            let (resp, used) = tree.data_in(OCSD_OP_DATA, index as ocsd_trc_index_t, &buf[done..n]);
            drain(&mut tree);
            done += used;
            index += used as u64;
            if resp_is_fatal(resp) {
                return Err(format!("{}: fatal decode error at trace index {}", built.buffer_file, index));
            }
            if resp_is_wait(resp) || used == 0 {
                let (r, _) = tree.data_in(OCSD_OP_FLUSH, 0, &[]);
                drain(&mut tree);
                if resp_is_fatal(r) {
                    return Err(format!("{}: fatal decode error at trace index {}", built.buffer_file, index));
                }
                if used == 0 && !resp_is_wait(resp) {
                    break;
                }
            }
        }
    }
    tree.data_in(OCSD_OP_EOT, 0, &[]);
    drain(&mut tree);
    Ok(index)
}
