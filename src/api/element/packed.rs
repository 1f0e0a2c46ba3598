//! Elements waiting for the client: those of each segment of a parallel
//! decode until their turn comes, kept compactly ([`PackedElements`]),
//! and those of a step of a serial decode ([`ElementQueue`]). An
//! [`Element`] is about 200 bytes; an instruction range (most of the
//! elements of instruction trace) differs from the range before it in a
//! few fields only (addresses, instruction count, ISA, last instruction,
//! flags, cycle count). A range is kept as those fields (40 bytes), the
//! rest (trace ID, context, timestamp, the payload beyond the count) taken
//! from the last range kept whole; other elements are kept whole.
use super::{Element, ElementKind, InstrRange};
use crate::abi::gen_elem::*;
use crate::abi::*;

/// What a record is.
const SAME: u8 = 0;
/// A range kept whole: it starts the fields later [`SAME`] ranges share.
const TEMPLATE: u8 = 1;
/// Another element, kept whole.
const WHOLE: u8 = 2;

/// One element: a range's own fields, or where it is kept whole.
#[derive(Clone, Copy, Default)]
struct Rec {
    index: u64,
    st_addr: u64,
    en_addr: u64,
    num_instr: u32,
    flag_bits: u32,
    cycle_count: u32,
    isa: u8,
    last_i_type: u8,
    last_i_subtype: u8,
    tag: u8,
}

/// Elements in the order they came, each given back as the [`Element`]
/// [`Element::from_raw`] made of it.
#[derive(Default)]
pub(crate) struct PackedElements {
    recs: Vec<Rec>,
    /// [`TEMPLATE`] ranges, with their place in `recs`.
    templates: Vec<(usize, Element)>,
    /// [`WHOLE`] elements, with their place in `recs`.
    whole: Vec<(usize, Element)>,
    /// The shared fields of the last template (see [`shared_fields`]);
    /// meaningless while `templates` is empty.
    key: [u64; 6],
}

/// The fields of range `e` from trace ID `trace_id` that a [`Rec`] does
/// not keep: its trace ID, context, timestamp and payload but the
/// instruction count (zeroed as the count's member, wherever it lies in
/// the union).
#[inline(always)]
fn shared_fields(trace_id: u8, e: &ocsd_generic_trace_elem) -> [u64; 6] {
    let c = &e.context;
    let mut p = e.payload;
    p.num_instr_range = 0;
    let [p0, p1] = p.words();
    let w = |lo: u32, hi: u32| lo as u64 | (hi as u64) << 32;
    [
        w(c.security_level as u32, c.exception_level as u32),
        w(c.context_id, c.vmid),
        w(c.flags, trace_id as u32),
        e.timestamp,
        p0,
        p1,
    ]
}

impl PackedElements {
    pub(crate) fn len(&self) -> usize {
        self.recs.len()
    }

    /// Elements it holds without growing.
    pub(crate) fn capacity(&self) -> usize {
        self.recs.capacity()
    }

    pub(crate) fn clear(&mut self) {
        self.recs.clear();
        self.templates.clear();
        self.whole.clear();
    }

    /// Keep the element `Element::from_raw(index, trace_id, e)`.
    #[inline(always)]
    pub(crate) fn push(&mut self, index: u64, trace_id: u8, e: &ocsd_generic_trace_elem) {
        // (a range whose enums do not fit a byte is kept whole)
        if e.elem_type != OCSD_GEN_TRC_ELEM_INSTR_RANGE || (e.isa | e.last_i_type | e.last_i_subtype) as u32 > 0xff {
            return self.push_whole(index, trace_id, e);
        }
        let key = shared_fields(trace_id, e);
        let same = key.iter().zip(&self.key).fold(0, |d, (a, b)| d | (a ^ b)) == 0;
        let tag = if same && !self.templates.is_empty() {
            SAME
        } else {
            self.push_template(index, trace_id, e, key);
            TEMPLATE
        };
        self.recs.push(Rec {
            index,
            st_addr: e.st_addr,
            en_addr: e.en_addr,
            num_instr: e.num_instr_range(),
            flag_bits: e.flag_bits,
            cycle_count: e.cycle_count,
            isa: e.isa as u8,
            last_i_type: e.last_i_type as u8,
            last_i_subtype: e.last_i_subtype as u8,
            tag,
        });
    }

    #[inline(never)]
    fn push_template(&mut self, index: u64, trace_id: u8, e: &ocsd_generic_trace_elem, key: [u64; 6]) {
        self.templates.push((self.recs.len(), Element::from_raw(index, trace_id, e)));
        self.key = key;
    }

    #[inline(never)]
    fn push_whole(&mut self, index: u64, trace_id: u8, e: &ocsd_generic_trace_elem) {
        self.whole.push((self.recs.len(), Element::from_raw(index, trace_id, e)));
        self.recs.push(Rec { tag: WHOLE, ..Rec::default() });
    }

    /// Keep the elements one decoder step handed over together (see
    /// [`PackedElements::push`]).
    #[inline]
    pub(crate) fn push_batch(&mut self, elems: &[(ocsd_trc_index_t, ocsd_generic_trace_elem)], trace_id: u8) {
        for (index, e) in elems {
            self.push(*index as u64, trace_id, e);
        }
    }

    /// Give the elements at places `r` to `f`, in order.
    pub(crate) fn give(&self, r: std::ops::Range<usize>, f: &mut impl FnMut(&Element)) {
        let Some(recs) = self.recs.get(r.clone()) else { return };
        // the templates and whole elements from `r.start` on, and the
        // template in effect there
        let next_t = self.templates.partition_point(|(p, _)| *p < r.start);
        let mut templates = self.templates[next_t..].iter();
        let mut whole = self.whole[self.whole.partition_point(|(p, _)| *p < r.start)..].iter();
        let mut cur = next_t.checked_sub(1).map(|i| &self.templates[i].1);
        for rec in recs {
            let e = match rec.tag {
                SAME => cur.map(|t| t.with_range_fields(rec)),
                TEMPLATE => {
                    cur = templates.next().map(|(_, t)| t);
                    cur.copied()
                }
                _ => whole.next().map(|(_, e)| *e),
            };
            if let Some(e) = e {
                f(&e);
            }
        }
    }
}

/// Elements waiting for the client of a serial decode (the elements of
/// one step of the decode), taken in order. Instruction ranges, most of
/// the elements, wait as the decoder handed them over and are made
/// [`Element`]s as they are taken, in the place the client takes them
/// to (kept packed instead, each range cost about twice the instructions
/// to keep and take: two copies of an [`Element`] of 200 bytes). Other
/// elements, which may point to extended data that is the decoder's only
/// for the call, are made [`Element`]s when they come.
#[derive(Default)]
pub(crate) struct ElementQueue {
    /// The elements as handed over, and the trace ID of each.
    raw: Vec<(ocsd_trc_index_t, ocsd_generic_trace_elem)>,
    ids: Vec<u8>,
    /// The elements of `raw` that are not ranges, made when they came.
    other: std::collections::VecDeque<Element>,
    /// The next element to take.
    head: usize,
}

impl ElementQueue {
    #[inline]
    pub(crate) fn push(&mut self, index: ocsd_trc_index_t, trace_id: u8, e: &ocsd_generic_trace_elem) {
        self.push_batch(std::slice::from_ref(&(index, *e)), trace_id);
    }

    #[inline]
    pub(crate) fn push_batch(&mut self, elems: &[(ocsd_trc_index_t, ocsd_generic_trace_elem)], trace_id: u8) {
        self.raw.extend_from_slice(elems);
        self.ids.resize(self.raw.len(), trace_id);
        for (index, e) in elems {
            if e.elem_type != OCSD_GEN_TRC_ELEM_INSTR_RANGE {
                self.other.push_back(Element::from_raw(*index as u64, trace_id, e));
            }
        }
    }

    /// The next element.
    pub(crate) fn pop(&mut self) -> Option<Element> {
        let (Some((index, e)), Some(&id)) = (self.raw.get(self.head), self.ids.get(self.head)) else {
            self.clear();
            return None;
        };
        self.head += 1;
        if e.elem_type == OCSD_GEN_TRC_ELEM_INSTR_RANGE {
            Some(Element::from_raw(*index as u64, id, e))
        } else {
            self.other.pop_front()
        }
    }

    pub(crate) fn clear(&mut self) {
        self.raw.clear();
        self.ids.clear();
        self.other.clear();
        self.head = 0;
    }
}

impl Element {
    /// This range with `rec`'s own fields: the element
    /// [`Element::from_raw`] made of the range `rec` was kept from.
    #[inline]
    fn with_range_fields(&self, rec: &Rec) -> Element {
        let mut raw = self.raw;
        raw.st_addr = rec.st_addr;
        raw.en_addr = rec.en_addr;
        raw.isa = rec.isa as ocsd_isa;
        raw.cycle_count = rec.cycle_count;
        raw.last_i_type = rec.last_i_type as ocsd_instr_type;
        raw.last_i_subtype = rec.last_i_subtype as ocsd_instr_subtype;
        raw.flag_bits = rec.flag_bits;
        raw.payload.num_instr_range = rec.num_instr;
        let e = raw.elem();
        Element {
            index: rec.index,
            trace_id: self.trace_id,
            kind: ElementKind::InstrRange(InstrRange::from_raw(&e)),
            cycle_count: (e.has_cc() != 0).then_some(e.cycle_count),
            raw,
            ext: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field of the C element an [`Element`] keeps, and its typed
    /// fields and text.
    fn fields(e: &Element) -> String {
        let r = e.raw();
        format!(
            "{e:?} {} {} {:x} {:x} {:?} {} {} {} {} {:x} {:?} {}",
            r.elem_type,
            r.isa,
            r.st_addr,
            r.en_addr,
            r.context,
            r.timestamp,
            r.cycle_count,
            r.last_i_type,
            r.last_i_subtype,
            r.flag_bits,
            r.payload.words(),
            e.opencsd_text()
        )
    }

    /// Seeded random elements, mostly ranges with a few fields changing
    /// (context, timestamp, trace ID, payload bytes past the count, values
    /// too large for a byte), kept and given back over every kind of range
    /// of places: each given element is the one `Element::from_raw` makes.
    #[test]
    fn packed_elements_give_back_the_elements_kept() {
        let mut rnd = crate::common::xorshift64(0x7ac4_3e11);
        let mut packed = PackedElements::default();
        let mut want = Vec::new();
        let mut e = ocsd_generic_trace_elem::default();
        let mut id = 0x10u8;
        for i in 0..3000u64 {
            let r = rnd();
            e.elem_type = match r % 16 {
                0 => OCSD_GEN_TRC_ELEM_TIMESTAMP,
                1 => OCSD_GEN_TRC_ELEM_EXCEPTION,
                2 => OCSD_GEN_TRC_ELEM_PE_CONTEXT,
                _ => OCSD_GEN_TRC_ELEM_INSTR_RANGE,
            };
            e.st_addr = rnd();
            e.en_addr = e.st_addr.wrapping_add(rnd() % 64);
            e.isa = (rnd() % 7) as i32;
            e.last_i_type = if r % 97 == 5 { 300 } else { (rnd() % 6) as i32 };
            e.last_i_subtype = (rnd() % 5) as i32;
            e.flag_bits = rnd() as u32 & 0x1fff;
            e.cycle_count = rnd() as u32;
            e.set_num_instr_range((rnd() % 40) as u32);
            match (r >> 8) % 23 {
                0 => e.context.context_id = rnd() as u32,
                1 => e.context.set_el_valid(1),
                2 => e.timestamp = rnd(),
                3 => id = 0x10 + (rnd() % 3) as u8,
                4 => e.payload.raw = [e.payload.words()[0], rnd()],
                _ => {}
            }
            packed.push(i, id, &e);
            want.push(Element::from_raw(i, id, &e));
        }
        assert_eq!(packed.len(), want.len());
        let want: Vec<String> = want.iter().map(fields).collect();
        let mut starts = vec![0, 1, 2, 1500, 2999, 3000];
        starts.extend((0..40).map(|_| (rnd() % 3000) as usize));
        for a in starts {
            for b in [a, a + 1, a + 37, a + 500, 3000] {
                let b = b.clamp(a, 3000);
                let mut got = Vec::new();
                packed.give(a..b, &mut |e: &Element| got.push(fields(e)));
                assert_eq!(got, want[a..b], "{a}..{b}");
            }
        }
        // out of range: nothing
        let mut n = 0;
        packed.give(2990..3001, &mut |_: &Element| n += 1);
        assert_eq!(n, 0);
        packed.clear();
        assert_eq!(packed.len(), 0);
    }

    /// The queue gives the elements pushed, in order, whether taken now
    /// and then or all at once, with pushes between takes.
    #[test]
    fn element_queue_takes_the_elements_in_order() {
        let mut rnd = crate::common::xorshift64(0x51de_0f0e);
        let mut q = ElementQueue::default();
        let mut model = std::collections::VecDeque::new();
        let mut e = ocsd_generic_trace_elem::default();
        for i in 0..5000u64 {
            let r = rnd();
            match r % 8 {
                0..=2 => {
                    e.elem_type = if r.is_multiple_of(11) { OCSD_GEN_TRC_ELEM_TIMESTAMP } else { OCSD_GEN_TRC_ELEM_INSTR_RANGE };
                    e.st_addr = rnd();
                    e.set_num_instr_range((r >> 8) as u32 % 9);
                    if r.is_multiple_of(13) {
                        e.timestamp = rnd();
                    }
                    if r.is_multiple_of(2) {
                        q.push(i as ocsd_trc_index_t, 0x20, &e);
                    } else {
                        q.push_batch(&[(i as ocsd_trc_index_t, e)], 0x20);
                    }
                    model.push_back(fields(&Element::from_raw(i, 0x20, &e)));
                }
                3 | 4 => assert_eq!(q.pop().map(|e| fields(&e)), model.pop_front()),
                _ if r.is_multiple_of(29) => {
                    let mut got = Vec::new();
                    while let Some(e) = q.pop() {
                        got.push(fields(&e));
                    }
                    assert_eq!(got, model.drain(..).collect::<Vec<_>>());
                }
                _ => {}
            }
        }
    }
}
