//! [`Decoder::decode_parallel`]: the elements of [`Decoder::decode`], in
//! the same order, decoded on several threads (see
//! [`crate::dcd_tree::parallel`]).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use super::text::{counted_instructions, write_line, TextFormat, TextSummary};
use super::{Decoder, Element, Error, ListerLines, PackedElements, SharedLog};
use crate::printers::line::LineBuf;
use crate::abi::gen_elem::{ocsd_gen_trc_elem_t, ocsd_generic_trace_elem};
use crate::abi::*;
use crate::common::{ErrorLog, GenElemSink, OcsdError};
use crate::dcd_tree::parallel::{self, Outcome, ParallelOptions, SegmentOutput};

/// Run `trace` through `tree`'s deformatter into a recording for
/// [`parallel::decode`]; with the trace bytes taken.
fn record(tree: &mut crate::dcd_tree::DecodeTree, trace: &[u8]) -> (parallel::Recording, usize) {
    let mut rec = tree.start_recording();
    rec.reserve(trace.len());
    let index = tree.record_range(&mut rec, trace, 0, super::FEED);
    (rec, index)
}

/// What a segment's decode gives, in its order.
enum Item<T> {
    /// `map`'s value and the range of the text it wrote.
    Elem(T, usize, usize),
    /// An element given to the client.
    Given,
    Msg(SegMsg),
}

/// A message a segment's decoders logged, kept with its output.
enum SegMsg {
    Error(String, OcsdError),
    Message(String, ocsd_err_severity_t, String),
}

impl SegMsg {
    /// Log it as the serial decode would have.
    fn log(&self, log: &mut SharedLog) {
        match self {
            SegMsg::Error(c, err) => log.log_error(c, err),
            SegMsg::Message(c, sev, text) => log.log_message(c, *sev, text),
        }
    }
}

/// A segment output that keeps the messages logged among its items.
trait KeepsMessages {
    fn keep(&mut self, m: SegMsg);
}

/// The log of a segment's decode tree: the messages go into its output.
struct SegLog<S>(Rc<RefCell<S>>);

impl<S: KeepsMessages> ErrorLog for SegLog<S> {
    fn log_error(&mut self, component: &str, err: &OcsdError) {
        self.0.borrow_mut().keep(SegMsg::Error(component.to_string(), err.clone()));
    }
    fn log_message(&mut self, component: &str, sev: ocsd_err_severity_t, msg: &str) {
        self.0.borrow_mut().keep(SegMsg::Message(component.to_string(), sev, msg.to_string()));
    }
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

impl<T> KeepsMessages for Seg<T> {
    fn keep(&mut self, m: SegMsg) {
        self.items.push(Item::Msg(m));
    }
}

impl Decoder {
    /// A tree to record a first session's trace for a parallel decode
    /// (this decoder's tree is left as it is for a serial decode); None
    /// when the decode is to be serial: not the first session (a later
    /// session starts from reset decoders, which say so in their first
    /// element), or packets counted.
    fn first_session_recorder(&mut self) -> Result<Option<crate::dcd_tree::DecodeTree>, Error> {
        if self.packets.is_some() || self.sessions != 0 {
            return Ok(None);
        }
        Ok(Some(self.recipe.tree(Box::new(crate::common::error::NullLog), None)?))
    }

    /// The trace of a first session recorded for a parallel decode, with
    /// the trace bytes taken (see [`Decoder::first_session_recorder`]).
    fn first_session_recording(&mut self, trace: &[u8]) -> Result<Option<(parallel::Recording, usize)>, Error> {
        Ok(self.first_session_recorder()?.map(|mut t| record(&mut t, trace)))
    }

    /// The parallel decode of a first session (a later session starts from
    /// reset decoders, which say so in their first element: only the first
    /// is decoded in parallel), each segment's output an `O` its decode
    /// tree's log and the element sink `sink` makes write to, `emit` giving
    /// a range of an output out. Some(bytes processed) when done; None
    /// when the decode is to be serial: not the first session, packets
    /// counted, or the parallel decode fell back (the messages logged are
    /// then taken back: the serial decode logs them again; the elements
    /// already given are for the caller to skip).
    fn first_session_parallel<O: SegmentOutput + KeepsMessages + 'static>(
        &mut self,
        trace: &[u8],
        opts: &ParallelOptions,
        sink: impl Fn(&Rc<RefCell<O>>) -> Box<dyn GenElemSink> + Sync,
        mut emit: impl FnMut(&mut O, std::ops::Range<usize>, &mut SharedLog),
    ) -> Result<Option<u64>, Error> {
        let Some((rec, index)) = self.first_session_recording(trace)? else { return Ok(None) };
        let before = self.log.borrow().clone();
        let recipe = &self.recipe;
        let make = |slot: u8| {
            let seg = Rc::new(RefCell::new(O::default()));
            let mut tree = recipe.tree_for(Box::new(SegLog(seg.clone())), None, Some(slot)).ok()?;
            tree.set_elem_sink(Some(sink(&seg)));
            Some((tree, seg))
        };
        let mut log = SharedLog(self.log.clone());
        match parallel::decode(&rec, &self.tree.mapper, opts, make, |seg: &mut O, r| emit(seg, r, &mut log)) {
            Outcome::Done(_) => {
                self.sessions += 1;
                Ok(Some(index as u64))
            }
            Outcome::Fallback => {
                *self.log.borrow_mut() = before;
                Ok(None)
            }
        }
    }

    /// Decode `trace` to the end on several threads, calling `f` with each
    /// element that [`Decoder::decode`] would give, in the same order (see
    /// [`Decoder::decode_parallel`]). Returns the trace bytes processed.
    ///
    /// The elements wait in memory compactly (an instruction range as its
    /// own fields, 40 bytes, the rest shared with the range before it) and
    /// are made into [`Element`]s again as they are given to `f`.
    pub fn decode_parallel_each(&mut self, trace: &[u8], opts: &ParallelOptions, mut f: impl FnMut(&Element)) -> Result<u64, Error> {
        let mut given = 0usize;
        let sink = |seg: &ElemItems| Box::new(ElemSegSink(seg.clone())) as Box<dyn GenElemSink>;
        let done = self.first_session_parallel(trace, opts, sink, |seg: &mut ElemSeg, r, log| {
            given += seg.give(r, &mut f, log);
        })?;
        if let Some(bytes) = done {
            return Ok(bytes);
        }
        let mut skip = given;
        self.decode_each(trace, |e| {
            if skip > 0 {
                skip -= 1;
            } else {
                f(e);
            }
        })
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
        let sink = |items: &Items<T>| Box::new(SegSink { items: items.clone(), map: map.clone() }) as Box<dyn GenElemSink>;
        let done = self.first_session_parallel(trace, opts, sink, |seg: &mut Seg<T>, r, log| {
            for it in &mut seg.items[r] {
                match std::mem::replace(it, Item::Given) {
                    Item::Elem(v, a, b) => {
                        given += 1;
                        f(v, &seg.text[a..b]);
                    }
                    Item::Given => {}
                    Item::Msg(m) => m.log(log),
                }
            }
        })?;
        if let Some(bytes) = done {
            return Ok(bytes);
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

/// A segment's output for [`Decoder::decode_parallel_fold`]: per piece
/// (see [`parallel::FoldOutput`]), what its elements folded into (None:
/// no element) and the messages logged.
struct FoldSeg<A> {
    pieces: Vec<(Option<A>, Vec<SegMsg>)>,
}

impl<A> Default for FoldSeg<A> {
    fn default() -> Self {
        FoldSeg { pieces: vec![(None, Vec::new())] }
    }
}

impl<A: Send> SegmentOutput for FoldSeg<A> {
    fn len(&self) -> usize {
        self.pieces.len()
    }
    fn recycle(&mut self) {
        self.pieces.clear();
        self.pieces.push((None, Vec::new()));
    }
    fn capacity(&self) -> usize {
        self.pieces.capacity()
    }
}

impl<A: Send> parallel::FoldOutput for FoldSeg<A> {
    fn cut(&mut self) {
        self.pieces.push((None, Vec::new()));
    }
}

impl<A> KeepsMessages for FoldSeg<A> {
    fn keep(&mut self, m: SegMsg) {
        if let Some(p) = self.pieces.last_mut() {
            p.1.push(m);
        }
    }
}

/// Folds each element into the piece being written (`fold` called
/// directly, not through a pointer: the element need not be made whole
/// where the fold reads few of its fields).
struct FoldSink<A, I, F> {
    seg: Rc<RefCell<FoldSeg<A>>>,
    init: Arc<I>,
    fold: Arc<F>,
}

impl<A, I: Fn() -> A, F: Fn(&mut A, &Element)> GenElemSink for FoldSink<A, I, F> {
    fn trace_elem_in(&mut self, index: ocsd_trc_index_t, id: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        let e = Element::from_raw(index as u64, id, elem);
        if let Some((acc, _)) = self.seg.borrow_mut().pieces.last_mut() {
            (self.fold)(acc.get_or_insert_with(|| (self.init)()), &e);
        }
        OCSD_RESP_CONT
    }

    fn trace_elems_in(&mut self, elems: &[(ocsd_trc_index_t, ocsd_generic_trace_elem)], id: u8) -> (usize, ocsd_datapath_resp_t) {
        if let Some((acc, _)) = self.seg.borrow_mut().pieces.last_mut() {
            let acc = acc.get_or_insert_with(|| (self.init)());
            for (index, elem) in elems {
                (self.fold)(acc, &Element::from_raw(*index as u64, id, elem));
            }
        }
        (elems.len(), OCSD_RESP_CONT)
    }
}

impl Decoder {
    /// Decode `trace` to the end on `opts.threads` threads, folding the
    /// elements that [`Decoder::decode`] would give: each decode thread
    /// folds runs of consecutive elements of one trace ID with `fold` into
    /// values `init` makes, and the calling thread combines those values
    /// with `reduce` (counts, histograms, coverage, profiles). Every
    /// element is folded exactly once, whatever the thread count. (When
    /// the decode is serial, see below, one value folds all the elements,
    /// in the serial order.)
    ///
    /// `reduce(a, b)` gets the values trace ID after trace ID (in the
    /// order of their decoders' slots), each trace ID's in the order of
    /// its elements: `b`'s elements of a trace ID come right after `a`'s
    /// last one of that ID. The elements of different trace IDs are not
    /// interleaved as the serial decode interleaves them: a fold that
    /// depends on that order cannot be done this way. `reduce` must be
    /// associative. The decoders' messages are those of the serial decode,
    /// trace ID after trace ID (see [`Decoder::take_messages`]). Returns
    /// the combined value (`init`'s when there is no element) and the
    /// trace bytes processed.
    ///
    /// Unlike [`Decoder::decode_parallel_each`], nothing waits for the
    /// calling thread: the elements are folded where they are decoded, so
    /// the decode scales with the threads. The trace is cut as
    /// [`Decoder::decode_parallel`] cuts it, and the decode is serial in
    /// the same cases.
    pub fn decode_parallel_fold<A: Send + 'static>(
        &mut self,
        trace: &[u8],
        opts: &ParallelOptions,
        init: impl Fn() -> A + Send + Sync + 'static,
        fold: impl Fn(&mut A, &Element) + Send + Sync + 'static,
        mut reduce: impl FnMut(A, A) -> A,
    ) -> Result<(A, u64), Error> {
        let (init, fold) = (Arc::new(init), Arc::new(fold));
        if let Some(mut rtree) = self.first_session_recorder()? {
            let recipe = &self.recipe;
            let make = |slot: u8| {
                let seg = Rc::new(RefCell::new(FoldSeg::<A>::default()));
                let mut tree = recipe.tree_for(Box::new(SegLog(seg.clone())), None, Some(slot)).ok()?;
                tree.set_elem_sink(Some(Box::new(FoldSink { seg: seg.clone(), init: init.clone(), fold: fold.clone() })));
                Some((tree, seg))
            };
            if let Some((folded, index)) = parallel::decode_folded(&mut rtree, trace, super::FEED, &self.tree.mapper, opts, make) {
                self.sessions += 1;
                let mut log = SharedLog(self.log.clone());
                let mut acc = init();
                for (seg, r) in folded.outs {
                    for (v, msgs) in seg.pieces.into_iter().take(r.end).skip(r.start) {
                        for m in &msgs {
                            m.log(&mut log);
                        }
                        if let Some(v) = v {
                            acc = reduce(acc, v);
                        }
                    }
                }
                return Ok((acc, index as u64));
            }
        }
        let mut acc = init();
        let bytes = self.decode_each(trace, |e| fold(&mut acc, e))?;
        Ok((acc, bytes))
    }
}

/// A segment's output for [`Decoder::decode_parallel_each`]: its elements,
/// and the messages logged among them, each with its place in the
/// segment's output (the number of items, elements and messages, before
/// it). An output unit ([`SegmentOutput::len`]) is an element or a message.
#[derive(Default)]
struct ElemSeg {
    elems: PackedElements,
    msgs: Vec<(usize, SegMsg)>,
}

impl ElemSeg {
    /// Give the items of `r` (output units) to `f` and `log`, in order;
    /// returns the number of elements given.
    fn give(&self, r: std::ops::Range<usize>, f: &mut impl FnMut(&Element), log: &mut SharedLog) -> usize {
        let m0 = self.msgs.partition_point(|(p, _)| *p < r.start);
        let m1 = self.msgs.partition_point(|(p, _)| *p < r.end);
        // the element at place `cur`, if not a message's place
        let mut cur = r.start;
        let mut e = r.start - m0;
        let mut given = 0;
        let mut elems = |from: usize, n: usize| {
            self.elems.give(from..from + n, f);
            n
        };
        for (p, m) in &self.msgs[m0..m1] {
            let n = p - cur;
            given += elems(e, n);
            e += n;
            m.log(log);
            cur = p + 1;
        }
        given + elems(e, r.end - cur)
    }

    fn place(&self) -> usize {
        self.elems.len() + self.msgs.len()
    }
}

impl SegmentOutput for ElemSeg {
    fn len(&self) -> usize {
        self.place()
    }
    fn recycle(&mut self) {
        self.elems.clear();
        self.msgs.clear();
    }
    fn capacity(&self) -> usize {
        self.elems.capacity() + self.msgs.capacity()
    }
}

type ElemItems = Rc<RefCell<ElemSeg>>;

struct ElemSegSink(ElemItems);

impl GenElemSink for ElemSegSink {
    fn trace_elem_in(&mut self, index: ocsd_trc_index_t, id: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        self.0.borrow_mut().elems.push(index as u64, id, elem);
        OCSD_RESP_CONT
    }

    fn trace_elems_in(&mut self, elems: &[(ocsd_trc_index_t, ocsd_generic_trace_elem)], id: u8) -> (usize, ocsd_datapath_resp_t) {
        self.0.borrow_mut().elems.push_batch(elems, id);
        (elems.len(), OCSD_RESP_CONT)
    }
}

impl KeepsMessages for ElemSeg {
    fn keep(&mut self, m: SegMsg) {
        let p = self.place();
        self.msgs.push((p, m));
    }
}

/// What one item of a text segment is: an element's line, or a message
/// logged between lines.
enum TextKind {
    Elem { elem_type: ocsd_gen_trc_elem_t, instructions: u32 },
    Msg(Box<SegMsg>),
}

/// One item of a text segment: its kind, and the length of the segment's
/// text after it (an item's line is the text from the item before it's end
/// to its own).
struct TextItem {
    end: usize,
    kind: TextKind,
}

/// A segment's output for [`Decoder::decode_text_parallel`]: the lines,
/// written on the decode thread in blocks of about [`TEXT_BLOCK`] bytes
/// (kept in a pool and used again, so that the text does not touch fresh
/// memory for every segment nor move as it grows), and per element its
/// type and instruction count (for the summary) instead of the element.
#[derive(Default)]
struct TextSeg {
    items: Vec<TextItem>,
    /// Full blocks, each with the offset of its first byte in the text.
    full: Vec<(usize, LineBuf)>,
    /// Text length before `cur`.
    full_len: usize,
    /// The block being written (empty until the first line).
    cur: LineBuf,
}

/// Bytes of text in a block before the next is begun.
const TEXT_BLOCK: usize = 256 * 1024;
/// A block's space: the line begun before `TEXT_BLOCK` ends fits.
const TEXT_BLOCK_ROOM: usize = TEXT_BLOCK + 16 * 1024;

/// Blocks not in use, shared by the decode threads.
static TEXT_BLOCKS: std::sync::Mutex<Vec<LineBuf>> = std::sync::Mutex::new(Vec::new());

fn take_text_block() -> LineBuf {
    let b = TEXT_BLOCKS.lock().ok().and_then(|mut v| v.pop());
    b.unwrap_or_else(|| LineBuf::with_capacity(TEXT_BLOCK_ROOM))
}

fn give_text_block(mut b: LineBuf) {
    if b.capacity() >= TEXT_BLOCK_ROOM {
        b.clear();
        if let Ok(mut v) = TEXT_BLOCKS.lock() {
            v.push(b);
        }
    }
}

impl TextSeg {
    /// The block to write the next line to.
    #[inline(always)]
    fn block(&mut self) -> &mut LineBuf {
        if self.cur.len() >= TEXT_BLOCK || self.cur.capacity() < TEXT_BLOCK_ROOM {
            self.next_block();
        }
        &mut self.cur
    }

    #[cold]
    fn next_block(&mut self) {
        let b = std::mem::replace(&mut self.cur, take_text_block());
        if b.is_empty() {
            give_text_block(b);
        } else {
            let n = b.len();
            self.full.push((self.full_len, b));
            self.full_len += n;
        }
    }

    #[inline(always)]
    fn text_len(&self) -> usize {
        self.full_len + self.cur.len()
    }

    /// Give the text from `from` to `to` to `out` (false: `out` refused).
    fn give(&self, from: usize, to: usize, out: &mut impl FnMut(&[u8]) -> bool) -> bool {
        let blocks = self.full.iter().map(|(o, b)| (*o, b)).chain(std::iter::once((self.full_len, &self.cur)));
        for (o, b) in blocks {
            let (st, en) = (from.max(o), to.min(o + b.len()));
            if st < en && !out(&b.as_bytes()[st - o..en - o]) {
                return false;
            }
        }
        true
    }
}

impl Drop for TextSeg {
    fn drop(&mut self) {
        self.recycle();
        give_text_block(std::mem::take(&mut self.cur));
    }
}

impl SegmentOutput for TextSeg {
    fn len(&self) -> usize {
        self.items.len()
    }
    fn recycle(&mut self) {
        self.items.clear();
        for (_, b) in self.full.drain(..) {
            give_text_block(b);
        }
        self.full_len = 0;
        self.cur.clear();
    }
    fn capacity(&self) -> usize {
        self.items.capacity()
    }
}

type TextItems = Rc<RefCell<TextSeg>>;

struct TextSegSink {
    seg: TextItems,
    format: TextFormat,
    lines: ListerLines,
}

impl TextSegSink {
    #[inline(always)]
    fn element(&mut self, seg: &mut TextSeg, index: ocsd_trc_index_t, id: u8, elem: &ocsd_generic_trace_elem) {
        write_line(self.format, &mut self.lines, index, id, elem, seg.block());
        let kind = TextKind::Elem { elem_type: elem.elem_type, instructions: counted_instructions(elem) };
        let end = seg.text_len();
        seg.items.push(TextItem { end, kind });
    }
}

impl GenElemSink for TextSegSink {
    fn trace_elem_in(&mut self, index: ocsd_trc_index_t, id: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        let seg = self.seg.clone();
        self.element(&mut seg.borrow_mut(), index, id, elem);
        OCSD_RESP_CONT
    }

    fn trace_elems_in(&mut self, elems: &[(ocsd_trc_index_t, ocsd_generic_trace_elem)], id: u8) -> (usize, ocsd_datapath_resp_t) {
        let seg = self.seg.clone();
        let seg = &mut *seg.borrow_mut();
        for (index, e) in elems {
            self.element(seg, *index, id, e);
        }
        (elems.len(), OCSD_RESP_CONT)
    }
}

impl KeepsMessages for TextSeg {
    fn keep(&mut self, m: SegMsg) {
        let end = self.text_len();
        self.items.push(TextItem { end, kind: TextKind::Msg(Box::new(m)) });
    }
}

impl Decoder {
    /// [`Decoder::decode_text`] on `opts.threads` threads, as
    /// [`Decoder::decode_parallel`] decodes: the same text and summary as
    /// the serial decode, each line written on a decode thread straight
    /// from the decoder's element. The text goes to `out` in pieces of
    /// whole lines (of about `chunk` bytes when the decode is serial, of a
    /// segment's lines when parallel); when `out` returns false, nothing
    /// more is given to it. Serial (with the same result) where
    /// [`Decoder::decode_parallel`] would be.
    pub fn decode_text_parallel(
        &mut self,
        trace: &[u8],
        opts: &ParallelOptions,
        format: TextFormat,
        chunk: usize,
        mut out: impl FnMut(&[u8]) -> bool,
    ) -> TextSummary {
        let mut summary = TextSummary::new();
        // (see decode_parallel: only the first session is parallel)
        if self.packets.is_none() && self.sessions == 0 {
            let before = self.log.borrow().clone();
            let mut rtree = match self.recipe.tree(Box::new(crate::common::error::NullLog), None) {
                Ok(t) => t,
                Err(e) => {
                    summary.error = Some(e);
                    return summary;
                }
            };
            let (rec, index) = record(&mut rtree, trace);
            let recipe = &self.recipe;
            let make = |slot: u8| {
                let seg: TextItems = Rc::new(RefCell::new(TextSeg::default()));
                let mut tree = recipe.tree_for(Box::new(SegLog(seg.clone())), None, Some(slot)).ok()?;
                tree.set_elem_sink(Some(Box::new(TextSegSink { seg: seg.clone(), format, lines: ListerLines::new() })));
                Some((tree, seg))
            };
            let mut log = SharedLog(self.log.clone());
            let mut go = true;
            let outcome = parallel::decode(&rec, &self.tree.mapper, opts, make, |seg: &mut TextSeg, r| {
                if !go || r.is_empty() {
                    return;
                }
                let from = if r.start == 0 { 0 } else { seg.items[r.start - 1].end };
                let to = seg.items[r.end - 1].end;
                for it in &seg.items[r] {
                    match &it.kind {
                        TextKind::Elem { elem_type, instructions } => summary.count_kind(*elem_type, *instructions),
                        TextKind::Msg(m) => m.log(&mut log),
                    }
                }
                if to > from {
                    go = seg.give(from, to, &mut out);
                }
            });
            if !go {
                summary.bytes = index as u64;
                return summary;
            }
            match outcome {
                Outcome::Done(_) => {
                    // one session: a later decode starts from reset decoders
                    self.sessions += 1;
                    summary.bytes = index as u64;
                    return summary;
                }
                Outcome::Fallback => {
                    // decode serially; the elements already given are not
                    // given again, the messages are logged again
                    *self.log.borrow_mut() = before;
                }
            }
        }
        let given = summary.elements;
        self.decode_text_from(trace, format, chunk, out, given, summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An element-segment output of elements (indexes 0..) and messages
    /// (each naming the element count before it), at the places they came.
    fn seg(items: &str) -> ElemSeg {
        let mut s = ElemSeg::default();
        let raw = ocsd_generic_trace_elem::default();
        for c in items.chars() {
            if c == 'm' {
                let p = s.place();
                s.msgs.push((p, SegMsg::Message("c".into(), OCSD_ERR_SEV_INFO, format!("after {}", s.elems.len()))));
            } else {
                let n = s.elems.len() as u64;
                s.elems.push(n, 0x10, &raw);
            }
        }
        s
    }

    /// Every range of places gives its elements and messages in order,
    /// whatever the ranges before it.
    #[test]
    fn element_segments_give_each_range_in_order() {
        let layout = "mee m emme eem";
        let layout: String = layout.chars().filter(|c| *c != ' ').collect();
        let s = seg(&layout);
        let items: Vec<String> = {
            let mut n = 0;
            layout
                .chars()
                .map(|c| {
                    if c == 'm' {
                        format!("m{n}")
                    } else {
                        n += 1;
                        format!("e{}", n - 1)
                    }
                })
                .collect()
        };
        assert_eq!(s.len(), items.len());
        for a in 0..=items.len() {
            for b in a..=items.len() {
                let log_msgs = Rc::new(RefCell::new(super::super::Messages::default()));
                let mut log = SharedLog(log_msgs.clone());
                let mut got = Vec::new();
                let n = s.give(a..b, &mut |e: &Element| got.push(format!("e{}", e.index)), &mut log);
                let want: Vec<&String> = items[a..b].iter().filter(|t| t.starts_with('e')).collect();
                assert_eq!(got.iter().collect::<Vec<_>>(), want, "{a}..{b}");
                assert_eq!(n, want.len());
                let msgs: Vec<String> = log_msgs.borrow().lines.iter().map(|l| l.rsplit("after ").next().unwrap_or("").to_string()).collect();
                let want_m: Vec<String> = items[a..b].iter().filter_map(|t| t.strip_prefix('m').map(str::to_string)).collect();
                assert_eq!(msgs, want_m, "{a}..{b} messages");
            }
        }
    }
}
