//! Whole-file scans: the views of many frames, computed on every core in order-preserving
//! chunks, handed to the caller one by one in frame order. `inspect`, `export --filter`, the
//! statistics and the browser's filter scan all go through here.
//!
//! Owns: the chunking (bounded memory: one chunk of results at a time). Must never: reorder
//! frames, or fill the decoder's cache (a scan would only push out the rows on screen).

use super::prefetch::prefetch;
use super::reader::DumpFile;
use super::view::{FrameDecoder, FrameView};
use crate::wal::Detail;
use rayon::prelude::*;
use std::ops::{ControlFlow, Range};

/// Frames per chunk: large enough to keep both cores busy, small enough that a stopped scan
/// stops at once and a chunk of results stays a few megabytes.
pub const CHUNK: usize = 2048;

/// Frames each worker takes in a row, so that each frame it prefetches is its own.
const RUN: usize = 64;
/// How many frames ahead a worker asks for the bytes it will read: one frame's work is a few
/// microseconds, much longer than a load from memory, so the next-but-one is early enough.
const AHEAD: usize = 2;
/// The most of one frame prefetched: the reader's first touches are in its first lines and
/// at its end (the properties follow the payload); within a long payload the hardware
/// prefetcher keeps up on its own.
const PREFETCH_MAX: u64 = 16 << 10;

/// The frames of a big dump are never cached (each is read once): a worker asks for the
/// frame it will read after the next, so that its first touches do not each wait for memory.
fn prefetch_frame(bytes: &[u8], from: u64, to: u64) {
    let to = to.min(from.saturating_add(PREFETCH_MAX));
    if let Some(range) = bytes.get(from as usize..to as usize) {
        prefetch(range);
    }
}

/// The view of frame `i` (`k` its place in `offsets`, the index's offsets from a chunk's
/// first frame), after asking for the bytes of the frame the worker reads after the next.
fn view_in_chunk(
    dump: &DumpFile,
    decoder: &FrameDecoder,
    detail: Detail,
    offsets: &[u64],
    i: usize,
    k: usize,
) -> Option<FrameView> {
    if let (Some(&from), Some(&to)) = (offsets.get(k + AHEAD), offsets.get(k + AHEAD + 1)) {
        prefetch_frame(dump.bytes(), from, to);
    }
    let loc = dump.frame_at(i, *offsets.get(k)?)?;
    Some(decoder.view_of(dump, loc, detail))
}

/// Folds the view of every frame in `frames` into an accumulator, on every core: each worker
/// folds its runs of frames into its own (`init`, `fold`), and the accumulators are merged
/// (`merge`) in no particular order, so the result must not depend on it (counts, sums,
/// ranges). No view leaves the worker that read it: for a whole-file statistic this is the
/// fast path, with nothing handed from thread to thread per frame.
pub fn fold_views<A, I, F, R>(
    dump: &DumpFile,
    decoder: &FrameDecoder,
    frames: Range<usize>,
    detail: Detail,
    init: I,
    fold: F,
    merge: R,
) -> A
where
    A: Send,
    I: Fn() -> A + Sync + Send,
    F: Fn(A, FrameView) -> A + Sync + Send,
    R: Fn(A, A) -> A + Sync + Send,
{
    let mut total = init();
    let mut start = frames.start;
    while start < frames.end {
        let r = start..(start + CHUNK).min(frames.end);
        start = r.end;
        let offsets = dump.index().offsets(r.clone());
        let first = r.start;
        let chunk = r
            .into_par_iter()
            .with_min_len(RUN)
            .fold(&init, |acc, i| match view_in_chunk(dump, decoder, detail, &offsets, i, i - first) {
                Some(v) => fold(acc, v),
                None => acc,
            })
            .reduce(&init, &merge);
        total = merge(total, chunk);
    }
    total
}

/// Maps the view of every frame in `frames` through `map` (in parallel), then calls `each`
/// with the results in frame order until it breaks. Frames past the index are skipped. With
/// `Detail::Counts`, WAL rows may come without summary, time and id text (see
/// [`FrameDecoder::view_of`]).
pub fn for_each_view<T, M, E>(
    dump: &DumpFile,
    decoder: &FrameDecoder,
    frames: Range<usize>,
    detail: Detail,
    map: M,
    mut each: E,
) -> ControlFlow<()>
where
    T: Send,
    M: Fn(FrameView) -> T + Sync,
    E: FnMut(T) -> ControlFlow<()>,
{
    let compute = |r: Range<usize>| -> Vec<Option<T>> {
        // One read of the index per chunk (a lock per frame costs both cores a shared line).
        let offsets = dump.index().offsets(r.clone());
        let start = r.start;
        r.into_par_iter()
            .with_min_len(RUN)
            .map(|i| view_in_chunk(dump, decoder, detail, &offsets, i, i - start).map(&map))
            .collect()
    };
    let next_chunk = |start: usize| start..(start + CHUNK).min(frames.end).max(start);
    let first = next_chunk(frames.start);
    let mut start = first.end;
    let mut ready = compute(first);
    loop {
        // The pool computes the next chunk while this thread hands out the ready one (`each`
        // may hold what cannot leave this thread, such as a locked stdout).
        let next = next_chunk(start);
        start = next.end;
        let mut computed = None;
        let flow = rayon::in_place_scope(|s| {
            if !next.is_empty() {
                s.spawn(|_| computed = Some(compute(next)));
            }
            ready.drain(..).flatten().try_for_each(&mut each)
        });
        match (flow, computed) {
            (ControlFlow::Continue(()), Some(c)) => ready = c,
            (flow, _) => return flow,
        }
    }
}
