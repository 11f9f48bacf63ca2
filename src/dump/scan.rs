//! Whole-file scans: the views of many frames, computed on every core in order-preserving
//! chunks, handed to the caller one by one in frame order. `inspect`, `export --filter`, the
//! statistics and the browser's filter scan all go through here.
//!
//! Owns: the chunking (bounded memory: one chunk of results at a time). Must never: reorder
//! frames, or fill the decoder's cache (a scan would only push out the rows on screen).

use super::reader::DumpFile;
use super::view::{FrameDecoder, FrameView};
use crate::wal::Detail;
use rayon::prelude::*;
use std::ops::{ControlFlow, Range};

/// Frames per chunk: large enough to keep both cores busy, small enough that a stopped scan
/// stops at once and a chunk of results stays a few megabytes.
pub const CHUNK: usize = 2048;

/// Maps the view of every frame in `frames` through `map` (in parallel), then calls `each`
/// with the results in frame order until it breaks. Frames past the index are skipped. With
/// `Detail::Counts`, WAL rows may come without summary, time and id text (see
/// [`FrameDecoder::view_uncached_with`]).
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
        r.into_par_iter().map(|i| decoder.view_uncached_with(dump, i, detail).map(&map)).collect()
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
