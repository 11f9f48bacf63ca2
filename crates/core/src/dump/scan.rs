//! Whole-file scans: the views of many frames, computed on every core in order-preserving
//! chunks, handed to the caller one by one in frame order. `inspect`, `export --filter`, the
//! statistics and the browser's filter scan all go through here.
//!
//! A mapped file is asked for its size once per chunk, after the chunk is read (see
//! [`super::mapping`]): a consumer that stops at the first row past
//! [`DumpFile::known_shrink`] never hands out a row read from the zeros of a file cut short.
//!
//! Owns: the chunking (bounded memory: one chunk of results at a time). Must never: reorder
//! frames, or fill the decoder's cache (a scan would only push out the rows on screen).

use super::framing::FrameHeader;
use super::index::FrameFold;
use super::prefetch::prefetch;
use super::reader::{DumpFile, FrameLoc, UNNUMBERED};
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

/// The most frames a fold worker takes at a time: a few thousand, so that each worker walks
/// long stretches of the file front to back (which the hardware prefetches). Fewer frames
/// (down to [`RUN`]) make parts of each, so that every core has a dozen or more to take.
const FOLD_PART: usize = 8192;
const PARTS_PER_THREAD: usize = 16;

/// Folds the view of every frame in `frames` into an accumulator, on every core: the frames
/// are cut into parts, each part folded front to back by one worker into its own accumulator
/// (`init`, `fold`), and the accumulators are merged (`merge`) in no particular order, so the
/// result must not depend on it (counts, sums, ranges). No view leaves the worker that read
/// it, and the workers never wait for each other before the end.
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
    let part = (frames.len() / (rayon::current_num_threads() * PARTS_PER_THREAD)).clamp(RUN, FOLD_PART);
    let parts = frames.len().div_ceil(part);
    (0..parts)
        .into_par_iter()
        .map(|p| {
            let first = frames.start + p * part;
            let r = first..(first + part).min(frames.end);
            // One read of the index per part (a lock per frame costs both cores a shared line).
            let offsets = dump.index().offsets(r.clone());
            r.fold(init(), |acc, i| match view_in_chunk(dump, decoder, detail, &offsets, i, i - first) {
                Some(v) => fold(acc, v),
                None => acc,
            })
        })
        .reduce(&init, &merge)
}

/// [`fold_views`] over every frame of `dump`. A dump opened with its index deferred
/// ([`super::OpenOptions::defer_index`]) and large enough to be indexed on every core is folded
/// while its index is built, each frame the moment the index finds it: its bytes are still in
/// the core's caches, so the file is read once instead of twice. Such views come before their
/// frame numbers are known: their `index` is [`UNNUMBERED`] (a fold that needs the numbers
/// uses [`fold_views`]). Any damage in the file, and the result is [`fold_views`]'s over the
/// finished index instead, so it never depends on the path taken.
pub fn fold_all_views<A, I, F, R>(
    dump: &DumpFile,
    decoder: &FrameDecoder,
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
    let while_indexing = ViewFold { dump, decoder, detail, init: &init, fold: &fold, merge: &merge };
    match dump.build_index_folding(&while_indexing) {
        Some(acc) => acc,
        None => fold_views(dump, decoder, 0..dump.frame_count(), detail, init, fold, merge),
    }
}

/// How far ahead of the frame it reads a fold run by the index scan asks for the bytes: a few
/// frames, long enough for a load from memory, short enough to stay in the core's cache.
const WALK_AHEAD: u64 = 8 << 10;

/// A fold over views, as the index scan calls it for each frame it finds.
struct ViewFold<'a, I, F, R> {
    dump: &'a DumpFile,
    decoder: &'a FrameDecoder,
    detail: Detail,
    init: &'a I,
    fold: &'a F,
    merge: &'a R,
}

impl<A, I, F, R> FrameFold for ViewFold<'_, I, F, R>
where
    A: Send,
    I: Fn() -> A + Sync,
    F: Fn(A, FrameView) -> A + Sync,
    R: Fn(A, A) -> A + Sync,
{
    type Acc = A;
    fn init(&self) -> A {
        (self.init)()
    }
    fn frame(&self, acc: A, offset: u64, header: FrameHeader) -> A {
        // The walk goes front to back: ask for the bytes `WALK_AHEAD` past this frame's span.
        // Successive frames' spans tile the file, so each line is asked for once.
        let ahead = offset + WALK_AHEAD;
        prefetch_frame(self.dump.bytes(), ahead, ahead + header.total());
        let loc = FrameLoc { index: UNNUMBERED, offset, header };
        (self.fold)(acc, self.decoder.view_of(self.dump, loc, self.detail))
    }
    fn merge(&self, a: A, b: A) -> A {
        (self.merge)(a, b)
    }
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
        let views = r
            .into_par_iter()
            .with_min_len(RUN)
            .map(|i| view_in_chunk(dump, decoder, detail, &offsets, i, i - start).map(&map))
            .collect();
        // After the reads: a cut that any of them met is known before the chunk is handed out.
        let _ = dump.check_unchanged();
        views
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dump::{Framing, IndexCache, OpenOptions};
    use crate::schema::SchemaSet;
    use crate::sim::{WalGenConfig, WalGenerator};
    use std::collections::BTreeMap;

    const T: &str = "milvus.proto.milvus.DumpMessagesResponse";

    /// What a fold saw, and how many of its views came before their numbers were known.
    #[derive(Debug, Default, PartialEq)]
    struct Seen {
        frames: u64,
        bytes: u64,
        offsets: u64,
        bad: u64,
        per_type: BTreeMap<String, u64>,
        unnumbered: u64,
    }

    fn add(mut s: Seen, v: FrameView) -> Seen {
        s.frames += 1;
        s.bytes += v.size;
        s.offsets = s.offsets.wrapping_add(v.offset.wrapping_mul(0x9e37_79b9));
        s.bad += u64::from(v.status.is_bad());
        *s.per_type.entry(v.wal.map_or_else(String::new, |w| w.type_name)).or_default() += 1;
        s.unnumbered += u64::from(v.index == UNNUMBERED);
        s
    }

    fn merge(mut a: Seen, b: Seen) -> Seen {
        a.frames += b.frames;
        a.bytes += b.bytes;
        a.offsets = a.offsets.wrapping_add(b.offsets);
        a.bad += b.bad;
        for (k, n) in b.per_type {
            *a.per_type.entry(k).or_default() += n;
        }
        a.unnumbered += b.unnumbered;
        a
    }

    fn open(bytes: &[u8], set: &SchemaSet, defer_index: bool) -> DumpFile {
        let opts = OpenOptions {
            framing: Some(Framing::VarintDelimited),
            message_type: Some(set.message(T).expect("type")),
            index_cache: IndexCache::Off,
            defer_index,
            ..OpenOptions::default()
        };
        DumpFile::from_bytes("t.dump", bytes.to_vec(), opts)
    }

    /// `fold_all_views` on a dump whose index is deferred (walked in regions of 16 KiB, as a
    /// large dump is), against `fold_views` over the index built first: the same result, clean
    /// or damaged. A clean dump is folded while indexing (every view unnumbered); any damage,
    /// and it is folded over the finished index instead.
    #[test]
    fn folding_while_indexing_gives_what_folding_the_index_gives() {
        let set = SchemaSet::builtin();
        let decoder = FrameDecoder::new(set.pool().clone(), Some(set.message(T).expect("type")), 16);
        let cfg = WalGenConfig { seed: 5, total: Some(600), ..WalGenConfig::default() };
        let mut clean = Vec::new();
        for m in WalGenerator::new(set.pool(), cfg).take(600) {
            crate::dump::framing::write_frame(Framing::VarintDelimited, &m.response, &mut clean);
        }
        let mut garbage = clean.clone();
        garbage.splice(clean.len() / 3..clean.len() / 3, [0xffu8; 41]);
        let mut cut = clean.clone();
        cut.truncate(clean.len() - 7);
        let mut cases = vec![("clean", clean.clone(), Some(true)), ("garbage", garbage, Some(false))];
        cases.push(("truncated", cut, Some(false)));
        // Random damage: a flipped byte inside a payload can pass for data (then the dump is
        // clean to the index and counted while indexing), so either path may be taken.
        let mut rng = crate::sim::rng::SimRng::new(11);
        let mut rand = move |n: usize| rng.range(0, n as u64 - 1) as usize;
        for _ in 0..8 {
            let mut bytes = clean.clone();
            for _ in 0..1 + rand(4) {
                match rand(3) {
                    0 => {
                        let at = rand(bytes.len());
                        bytes[at] ^= 1 << rand(8);
                    }
                    1 => {
                        let at = rand(bytes.len());
                        let n = (1 + rand(8)).min(bytes.len() - at);
                        bytes.drain(at..at + n);
                    }
                    _ => {
                        let at = rand(bytes.len());
                        bytes.splice(at..at, (0..rand(64)).map(|_| rand(256) as u8));
                    }
                }
            }
            cases.push(("random damage", bytes, None));
        }
        // Random cases counted over the index, and while indexing.
        let mut paths = [0, 0];
        for (name, bytes, folded_while_indexing) in &cases {
            let indexed = open(bytes, &set, false);
            indexed.wait_indexed();
            let all = 0..indexed.frame_count();
            let expected = fold_views(&indexed, &decoder, all, Detail::Counts, Seen::default, add, merge);
            assert_eq!(expected.unnumbered, 0);
            assert!(expected.frames > 500, "{name}: {} frames", expected.frames);

            let deferred = open(bytes, &set, true).with_index_region(16 << 10);
            let got = fold_all_views(&deferred, &decoder, Detail::Counts, Seen::default, add, merge);
            let folded_while_indexing = folded_while_indexing.unwrap_or_else(|| {
                let clean = deferred.problems().is_empty();
                paths[usize::from(clean)] += 1;
                clean
            });
            let unnumbered = if folded_while_indexing { expected.frames } else { 0 };
            assert_eq!(got, Seen { unnumbered, ..expected }, "{name}");
            // The index is whole afterwards, as if it had been built on its own.
            assert_eq!(deferred.index().offsets(0..usize::MAX), indexed.index().offsets(0..usize::MAX));
            assert_eq!(deferred.problems(), indexed.problems(), "{name}");

            // An index already built (or started) is folded over.
            let again = fold_all_views(&indexed, &decoder, Detail::Counts, Seen::default, add, merge);
            assert_eq!(again, Seen { unnumbered: 0, ..got }, "{name}");
        }
        assert!(paths[0] > 0 && paths[1] > 0, "random damage took both paths: {paths:?}");
    }
}
