//! Folded parallel decode: each segment's output folded where it is
//! decoded instead of kept for the calling thread.
//!
//! [`decode`](super::decode) keeps every segment's output until the
//! calling thread gives it out in serial order: the output is written,
//! held and read again, and one thread gives out all of it. A client that
//! only folds the elements (counts, profiles, coverage), and whose
//! reduction does not depend on the order of the folded pieces, needs
//! none of that: each segment's decode folds its own output, on its own
//! thread, and the calling thread reduces what the segments folded.
//!
//! The elements folded are exactly those of the serial decode, each once:
//! a segment's output is folded in pieces cut at the chunk boundaries
//! where a stitch can happen (where the previous segment's decoder may
//! meet this one's state, counted from the segment's first chunk; where
//! this one's may meet the next segment's, counted from its end; the
//! stream's end), and only the pieces between the chunk where the segment
//! takes over and the chunk where the next one does are reduced. The
//! boundaries of a stitch are found as [`decode`](super::decode) finds
//! them (a probe beside the segment's decoder past its end).
#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;

use rayon::prelude::*;

use super::{next_check, plan_segments, Ctx, ParallelOptions, Recording, Runner, SegmentOutput, SharedMem, Spare, Summary, CHECK_EVERY, DECODES};
use crate::dcd_tree::DecodeTree;

/// An output that a folded decode cuts into pieces.
pub trait FoldOutput: SegmentOutput {
    /// End the piece being written: what is written next goes into a new
    /// one.
    fn cut(&mut self);
}

/// What a folded decode gives: segment outputs, each with the range of
/// its pieces that belong to the serial output, stream by stream (trace
/// ID slots in order), each stream's in the order of its elements.
pub struct Folded<O> {
    pub outs: Vec<(O, Range<usize>)>,
    pub summary: Summary,
}

/// What a segment's folded decode left.
struct FoldResult<O> {
    out: O,
    /// The chunk where each piece starts.
    cuts: Vec<usize>,
    /// Chunk boundary and segment where the states met (None: ran to the
    /// end and through end of trace).
    meet: Option<(usize, usize)>,
    /// The first chunk whose output is not the decoder's normal output;
    /// usize::MAX if none.
    stopped_at: usize,
}

/// Decode `rec` on `opts.threads` threads, each segment's output written
/// to an `O` that `make` builds (as for [`decode`](super::decode)) and cut
/// into pieces ([`FoldOutput::cut`]). None when the folded pieces cannot
/// be the serial output (see [`Outcome::Fallback`](super::Outcome)): the
/// caller decodes serially.
pub fn decode_folded<O, F>(rec: &Recording, mem: &crate::mem::MemMapper, opts: &ParallelOptions, make: F) -> Option<Folded<O>>
where
    O: FoldOutput + 'static,
    F: Fn() -> Option<(DecodeTree, Rc<RefCell<O>>)> + Sync,
{
    if rec.bail.is_some() {
        return None;
    }
    let shared = mem.share_static()?;
    let threads = opts.threads.max(1);
    let mem = &SharedMem::new(shared, threads, rec.streams.len());
    let plans = plan_segments(rec, opts);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().ok()?;
    // (outputs hold folded values only: none is kept for another segment)
    let spare = Spare { outs: std::sync::Mutex::new(Vec::new()), keep: 0, seen: std::sync::Mutex::new((0, 0)) };
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let decode = DECODES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let cx = Ctx { rec, plans: &plans, mem, spare: &spare, make: &make, cancel: &cancel, decode, piece: 0 };
    let mut results: Vec<Option<FoldResult<O>>> = pool.install(|| {
        (0..plans.len())
            .into_par_iter()
            .map(|i| {
                let r = fold_segment(&cx, i);
                if r.is_none() {
                    cancel.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                r
            })
            .collect()
    });
    pool.broadcast(|_| super::drop_kits::<O>(decode));
    let mut summary = Summary { segments: plans.len(), ..Default::default() };
    let mut outs = Vec::new();
    for si in 0..rec.streams.len() {
        let Some(mut cur) = plans.iter().position(|p| p.stream == si) else { continue };
        let mut start = plans[cur].first;
        loop {
            let r = results.get_mut(cur)?.take()?;
            let stop = r.meet.map_or(usize::MAX, |(c, _)| c.max(start));
            if r.stopped_at < stop {
                return None;
            }
            // the pieces from the chunk where this segment took over up to
            // the one where the next takes over: both must be cuts
            let a = r.cuts.iter().position(|&c| c == start)?;
            let b = if stop == usize::MAX { r.cuts.len() } else { r.cuts.iter().position(|&c| c == stop)? };
            summary.largest_output = summary.largest_output.max(r.out.len());
            outs.push((r.out, a..b));
            match r.meet {
                Some((c, t)) => {
                    summary.stitches += 1;
                    summary.overlap_chunks += 2 * c.saturating_sub(plans[cur].end);
                    start = stop.max(c);
                    cur = t;
                }
                None => break,
            }
        }
    }
    Some(Folded { outs, summary })
}

/// Decode segment `i` from its first chunk, its output cut at the chunk
/// boundaries where a stitch can happen; past its end, a probe runs beside
/// it (as in [`run_segment`](super::run_segment)) until their states are
/// equal at a boundary.
fn fold_segment<O: FoldOutput + 'static>(cx: &Ctx<'_, O>, i: usize) -> Option<FoldResult<O>> {
    let p = cx.plans[i];
    let s = &cx.rec.streams[p.stream];
    let n = s.chunks.len();
    let mut r = Runner::new(cx, p.stream, false)?;
    let mut cuts = vec![p.first];
    let mut meet = None;
    let mut stopped_at = usize::MAX;
    let (mut fp, mut fq) = (String::new(), String::new());
    let mut probe: Option<Runner<O>> = None;
    // where the previous segment's decoder may meet this one's state, and
    // where this one's may meet the next's
    let mut taken_at = p.first + CHECK_EVERY;
    let mut check_at = p.end + CHECK_EVERY;
    let mut c = p.first;
    loop {
        if c > p.first && (c == taken_at || c == check_at || c == n) {
            r.out.borrow_mut().cut();
            cuts.push(c);
        }
        if c == taken_at {
            taken_at = next_check(p.first, c);
        }
        if c == p.end && p.next.is_some() {
            probe = Some(Runner::new(cx, p.stream, true)?);
        }
        if let (Some(q), Some(t)) = (probe.as_ref(), p.next) {
            if c == check_at || c == n {
                if r.fingerprint(&mut fp) && q.fingerprint(&mut fq) && fp == fq {
                    meet = Some((c, t));
                    break;
                }
                check_at = next_check(p.end, c);
            }
        }
        if c >= n {
            break;
        }
        if c % 256 == 0 && cx.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        if !r.feed(s, &s.chunks[c]) {
            stopped_at = c;
            break;
        }
        if let Some(q) = probe.as_mut() {
            if !q.feed(s, &s.chunks[c]) {
                if let Some(q) = probe.take() {
                    q.finish(cx);
                }
            }
        }
        c += 1;
    }
    if let Some(q) = probe.take() {
        q.finish(cx);
    }
    if meet.is_none() && stopped_at == usize::MAX {
        r.eot();
    }
    Some(FoldResult { out: r.finish(cx), cuts, meet, stopped_at })
}
