//! [`Decoder::decode_parallel`]: the elements of [`Decoder::decode`], in
//! the same order, decoded on several threads (see
//! [`crate::dcd_tree::parallel`]).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use super::{Decoder, Element, Error, SharedLog};
use crate::abi::gen_elem::ocsd_generic_trace_elem;
use crate::abi::*;
use crate::common::{ErrorLog, GenElemSink, OcsdError};
use crate::dcd_tree::parallel::{self, Outcome, ParallelOptions, SegmentOutput};

/// What a segment's decode gives, in its order.
enum Item<T> {
    /// `map`'s value and the range of the text it wrote.
    Elem(T, usize, usize),
    /// An element given to the client.
    Given,
    Error(String, OcsdError),
    Message(String, ocsd_err_severity_t, String),
}

/// A segment's output: the items, and the text `map` wrote.
struct Seg<T> {
    items: Vec<Item<T>>,
    text: String,
}

impl<T> Default for Seg<T> {
    fn default() -> Self {
        Seg { items: Vec::new(), text: String::new() }
    }
}

impl<T: Send> SegmentOutput for Seg<T> {
    fn len(&self) -> usize {
        self.items.len()
    }
    fn recycle(&mut self) {
        self.items.clear();
        self.text.clear();
    }
    fn capacity(&self) -> usize {
        self.items.capacity()
    }
}

type Items<T> = Rc<RefCell<Seg<T>>>;
type MapFn<T> = Arc<dyn Fn(&Element, &mut String) -> T + Send + Sync>;

struct SegSink<T> {
    items: Items<T>,
    map: MapFn<T>,
}

impl<T> GenElemSink for SegSink<T> {
    fn trace_elem_in(&mut self, index: ocsd_trc_index_t, id: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        let e = Element::from_raw(index as u64, id, elem);
        let seg = &mut *self.items.borrow_mut();
        let start = seg.text.len();
        let v = (self.map)(&e, &mut seg.text);
        let end = seg.text.len();
        seg.items.push(Item::Elem(v, start, end));
        OCSD_RESP_CONT
    }
}

struct SegLog<T>(Items<T>);

impl<T> ErrorLog for SegLog<T> {
    fn log_error(&mut self, component: &str, err: &OcsdError) {
        self.0.borrow_mut().items.push(Item::Error(component.to_string(), err.clone()));
    }
    fn log_message(&mut self, component: &str, sev: ocsd_err_severity_t, msg: &str) {
        self.0.borrow_mut().items.push(Item::Message(component.to_string(), sev, msg.to_string()));
    }
}

impl Decoder {
    /// Decode `trace` to the end on several threads, calling `f` with each
    /// element that [`Decoder::decode`] would give, in the same order (see
    /// [`Decoder::decode_parallel`]). Returns the trace bytes processed.
    pub fn decode_parallel_each(&mut self, trace: &[u8], opts: &ParallelOptions, mut f: impl FnMut(&Element)) -> Result<u64, Error> {
        self.decode_parallel(trace, opts, |e, _| *e, |e, _| f(&e))
    }

    /// Decode `trace` to the end on `opts.threads` threads (see
    /// [`ParallelOptions::new`]), as one trace session. For each element
    /// that [`Decoder::decode`] would give, in the same order, `map` runs
    /// on a decode thread with the element and a text buffer it may write
    /// to (turn the element into text there, for example), and `f` then
    /// gets, on the calling thread, what `map` returned and the text it
    /// wrote. The decoders' messages are those of the serial decode (see
    /// [`Decoder::take_messages`]). Returns the trace bytes processed.
    ///
    /// The trace is cut into one stream per trace ID, and each ETMv4 / ETE
    /// stream into segments at its synchronisation points (an A-sync packet
    /// followed by trace info); each segment is decoded by a decoder of its
    /// own, which runs on past the segment's end until its state meets the
    /// next segment's decoder's: the elements, their indexes and their
    /// order are exactly those of the serial decode. Memory images from
    /// files and buffers are shared between the threads (each has its own
    /// memory access cache).
    ///
    /// The decode is serial (on the calling thread, with the same result)
    /// when parallel decode cannot give the serial result: with memory read
    /// through a callback (a callback must see its reads in serial order,
    /// and no memory may be read while earlier elements still wait for the
    /// client), when packets are counted
    /// ([`super::DecoderBuilder::count_packets`]), for the second and later
    /// sessions of a decoder, or after a fatal error.
    /// Memory: the whole trace is held, and the output (`map`'s values and
    /// text) of the segments decoded ahead of `f`, a number bounded by
    /// `opts` (see [`ParallelOptions::lookahead`]), whatever the trace's
    /// size.
    pub fn decode_parallel<T: Send + 'static>(
        &mut self,
        trace: &[u8],
        opts: &ParallelOptions,
        map: impl Fn(&Element, &mut String) -> T + Send + Sync + 'static,
        mut f: impl FnMut(T, &str),
    ) -> Result<u64, Error> {
        let map: MapFn<T> = Arc::new(map);
        let mut given = 0usize;
        // a later session starts from reset decoders, which say so in
        // their first element: only the first is decoded in parallel
        if self.packets.is_none() && self.sessions == 0 {
            let before = self.log.borrow().clone();
            // a tree of its own records the trace: this decoder's tree is
            // left as it is for a serial decode
            let mut rtree = self.recipe.tree(Box::new(crate::common::error::NullLog), None)?;
            let mut rec = rtree.start_recording();
            let mut index = 0usize;
            while index < trace.len() && rec.unsupported().is_none() {
                let end = trace.len().min(index + super::FEED);
                let (_, used) = rtree.record_data(&mut rec, index as ocsd_trc_index_t, &trace[index..end], &[]);
                if used == 0 {
                    break;
                }
                index += used;
            }
            let recipe = &self.recipe;
            let make = || {
                let items: Items<T> = Rc::new(RefCell::new(Seg::default()));
                let mut tree = recipe.tree(Box::new(SegLog(items.clone())), None).ok()?;
                tree.set_elem_sink(Some(Box::new(SegSink { items: items.clone(), map: map.clone() })));
                Some((tree, items))
            };
            let mut log = SharedLog(self.log.clone());
            let outcome = parallel::decode(&rec, &self.tree.mapper, opts, make, |seg: &mut Seg<T>, r| {
                for it in &mut seg.items[r] {
                    match std::mem::replace(it, Item::Given) {
                        Item::Elem(v, a, b) => {
                            given += 1;
                            f(v, &seg.text[a..b]);
                        }
                        Item::Given => {}
                        Item::Error(c, e) => log.log_error(&c, &e),
                        Item::Message(c, s, m) => log.log_message(&c, s, &m),
                    }
                }
            });
            match outcome {
                Outcome::Done(_) => {
                    // one session: a later decode starts from reset decoders
                    self.sessions += 1;
                    return Ok(index as u64);
                }
                Outcome::Fallback => {
                    // decode serially; the elements already given are not
                    // given again, the messages are logged again
                    *self.log.borrow_mut() = before;
                }
            }
        }
        let mut skip = given;
        let mut text = String::new();
        self.decode_each(trace, |e| {
            if skip > 0 {
                skip -= 1;
            } else {
                text.clear();
                let v = map(e, &mut text);
                f(v, &text);
            }
        })
    }
}
