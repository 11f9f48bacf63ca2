//! Whole-file scans: the views of many frames, computed on every core in order-preserving
//! chunks, handed to the caller one by one in frame order. `inspect`, `export --filter`, the
//! statistics and the browser's filter scan all go through here.
//!
//! Owns: the chunking (bounded memory: one chunk of results at a time). Must never: reorder
//! frames, or fill the decoder's cache (a scan would only push out the rows on screen).

use super::reader::DumpFile;
use super::view::{FrameDecoder, FrameView};
use rayon::prelude::*;
use std::ops::{ControlFlow, Range};

/// Frames per chunk: large enough to keep both cores busy, small enough that a stopped scan
/// stops at once and a chunk of results stays a few megabytes.
pub const CHUNK: usize = 2048;

/// Maps the view of every frame in `frames` through `map` (in parallel), then calls `each`
/// with the results in frame order until it breaks. Frames past the index are skipped. With
/// `summaries` false, WAL rows may come without summary and time text (see
/// [`FrameDecoder::view_uncached_without_text`]).
pub fn for_each_view<T, M, E>(
    dump: &DumpFile,
    decoder: &FrameDecoder,
    frames: Range<usize>,
    summaries: bool,
    map: M,
    mut each: E,
) -> ControlFlow<()>
where
    T: Send,
    M: Fn(FrameView) -> T + Sync,
    E: FnMut(T) -> ControlFlow<()>,
{
    let mut start = frames.start;
    while start < frames.end {
        let end = (start + CHUNK).min(frames.end);
        let view = |i| match summaries {
            true => decoder.view_uncached(dump, i),
            false => decoder.view_uncached_without_text(dump, i),
        };
        let chunk: Vec<Option<T>> = (start..end).into_par_iter().map(|i| view(i).map(&map)).collect();
        for item in chunk.into_iter().flatten() {
            each(item)?;
        }
        start = end;
    }
    ControlFlow::Continue(())
}
