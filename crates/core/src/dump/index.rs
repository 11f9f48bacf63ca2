//! The frame index: where every frame starts, built by a scan that reads frame headers (and
//! the first key of each body) only, published in chunks so the first rows are usable at once.
//!
//! After a corrupt frame the scan resynchronises: it drops recent frames whose bodies fail a
//! full check (a corrupt length can swallow the frames after it), then looks byte by byte for
//! the next offset where a chain of valid frames starts, and records the skipped range. An
//! intact frame after a bad one is never lost. A run of empty frames (zeros) is a damaged range,
//! not frames ([`super::index_empty`]). Costs 8 bytes of memory per frame, for at most
//! [`MAX_INDEXED_FRAMES`] frames (512 MiB): the frames past the bound are not listed, and a
//! problem says from which byte, so an absurd file never costs more. A large file
//! is walked on every core: the scan adopts regions other threads walked ahead of it
//! ([`super::index_regions`]) only where its own walk lands on them, so the index is the same.
//! Each thread can fold the frames it walks into a statistic as it finds them ([`FrameFold`]):
//! a whole-file count then reads the file once. Where the scan runs: [`super::index_build`].
//! A mapped file cut short while it is walked stops the walk where a read first met the zeros
//! past its new end (see [`super::mapping`]); the builder then drops what lies past the end.

use super::framing::{FrameHeader, Framing, HeaderFault, read_header};
use super::index_empty::{empty_run, find_start, run_problem};
use super::index_regions::{self as regions, Regions};
use super::mapping::Mapping;
use super::source::Source;
use super::validate::{FirstKeys, check_message, message_range};
use prost_reflect::MessageDescriptor;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};

/// A damaged byte range no frame covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub offset: u64,
    pub len: u64,
    /// `true` for a frame cut short by the end of the file.
    pub truncated: bool,
    pub reason: String,
}

/// Frames not yet published, so a late discovery of corruption can still take them back.
const KEEP_BACK: usize = 16;
/// Frames per published chunk.
const CHUNK: usize = 65_536;
/// Frames that must follow a resynchronisation candidate (or the end of the file).
const CHAIN: usize = 2;
/// The most frames one index lists: 2^26 offsets of 8 bytes, 512 MiB. A file with more frames
/// (tens of gigabytes of real messages, or an absurd file of tiny ones) is listed up to the
/// bound, and a problem names the byte from which the rest is not listed.
pub const MAX_INDEXED_FRAMES: usize = 1 << 26;

/// State shared between the indexing job and its readers.
#[derive(Default)]
pub struct IndexShared {
    offsets: RwLock<Vec<u64>>,
    problems: RwLock<Vec<Problem>>,
    scanned: AtomicU64,
    done: AtomicBool,
    cancel: AtomicBool,
    /// A [`CacheUse`] as a number, set once the index thread has finished with the cache.
    cache_use: AtomicU8,
    /// The most frames listed ([`MAX_INDEXED_FRAMES`] when 0).
    limit: AtomicUsize,
    /// The bound was reached: frames after the last listed one are not listed.
    capped: AtomicBool,
}

/// What the persisted index did for this open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheUse {
    /// Still indexing, or storing the new index.
    Pending,
    /// This file is not cached (small, text, or caching off); or the scan was cancelled.
    NotCached,
    /// The index came from the cache: no scan ran.
    Loaded,
    /// Scanned, and the index was written to the cache (or the write failed: only a cache).
    Stored,
}

impl IndexShared {
    /// An index that lists at most `max_frames` frames (never more than [`MAX_INDEXED_FRAMES`]).
    pub(super) fn with_limit(max_frames: usize) -> IndexShared {
        let s = IndexShared::default();
        s.limit.store(max_frames.clamp(1, MAX_INDEXED_FRAMES), Ordering::Relaxed);
        s
    }
    /// The most frames this index lists.
    pub fn limit(&self) -> usize {
        match self.limit.load(Ordering::Relaxed) {
            0 => MAX_INDEXED_FRAMES,
            n => n,
        }
    }
    /// Whether the file has more frames than the index lists (see [`MAX_INDEXED_FRAMES`]).
    pub fn is_capped(&self) -> bool {
        self.capped.load(Ordering::Acquire)
    }
    pub fn frame_count(&self) -> usize {
        self.offsets.read().map(|o| o.len()).unwrap_or(0)
    }
    pub fn offset(&self, i: usize) -> Option<u64> {
        self.offsets.read().ok()?.get(i).copied()
    }
    /// How many listed frames start before byte `offset`.
    pub fn frames_before(&self, offset: u64) -> usize {
        self.offsets.read().map_or(0, |o| o.partition_point(|&x| x < offset))
    }
    /// Offsets of frames `range` (clamped), for a visible page of rows.
    pub fn offsets(&self, range: std::ops::Range<usize>) -> Vec<u64> {
        match self.offsets.read() {
            Ok(o) => {
                let end = range.end.min(o.len());
                o[range.start.min(end)..end].to_vec()
            }
            Err(_) => Vec::new(),
        }
    }
    pub fn problems(&self) -> Vec<Problem> {
        self.problems.read().map(|p| p.clone()).unwrap_or_default()
    }
    /// How many damaged ranges are known so far, without copying them (a list asks every frame
    /// whether its rows changed).
    pub fn problem_count(&self) -> usize {
        self.problems.read().map_or(0, |p| p.len())
    }
    pub fn scanned_bytes(&self) -> u64 {
        self.scanned.load(Ordering::Relaxed)
    }
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
    pub fn cache_use(&self) -> CacheUse {
        match self.cache_use.load(Ordering::Acquire) {
            1 => CacheUse::NotCached,
            2 => CacheUse::Loaded,
            3 => CacheUse::Stored,
            _ => CacheUse::Pending,
        }
    }
    pub(super) fn set_cache_use(&self, u: CacheUse) {
        let n = match u {
            CacheUse::Pending => 0,
            CacheUse::NotCached => 1,
            CacheUse::Loaded => 2,
            CacheUse::Stored => 3,
        };
        self.cache_use.store(n, Ordering::Release);
    }
    pub fn was_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
    /// Heap bytes held by the index (what a million-frame file costs beyond its mapping).
    pub fn heap_bytes(&self) -> usize {
        let o = self.offsets.read().map(|o| o.capacity() * 8).unwrap_or(0);
        let p = self.problems.read().map(|p| p.iter().map(|x| 48 + x.reason.capacity()).sum()).unwrap_or(0);
        o + p
    }
    /// The index as loaded from the cache, whole.
    pub(super) fn fill(&self, offsets: Vec<u64>, problems: Vec<Problem>, len: u64) {
        if let (Ok(mut o), Ok(mut p)) = (self.offsets.write(), self.problems.write()) {
            *o = offsets;
            *p = problems;
        }
        self.scanned.store(len, Ordering::Relaxed);
    }
    pub(super) fn add_problem(&self, p: Problem) {
        if let Ok(mut all) = self.problems.write() {
            all.push(p);
        }
    }
    pub(super) fn has_problems(&self) -> bool {
        self.problems.read().map_or(true, |p| !p.is_empty())
    }
    /// Calls `f` with the whole index (to store it).
    pub(super) fn with_all<T>(&self, f: impl FnOnce(&[u64], &[Problem]) -> T) -> Option<T> {
        let (o, p) = (self.offsets.read().ok()?, self.problems.read().ok()?);
        Some(f(&o, &p))
    }
    /// Keeps the first `frames` frames and the problems that end by `end`, then adds `p` (a
    /// file cut short: what lies past its new end is not listed).
    pub(super) fn cut(&self, frames: usize, end: u64, p: Problem) {
        if let (Ok(mut o), Ok(mut all)) = (self.offsets.write(), self.problems.write()) {
            o.truncate(frames);
            all.retain(|q| q.offset.saturating_add(q.len) <= end);
            all.push(p);
        }
    }
    pub(super) fn mark_done(&self) {
        self.done.store(true, Ordering::Release);
    }
    /// Appends `batch` (the caller keeps the total within [`IndexShared::limit`]); the list
    /// grows by doubling, but never past the limit, so its memory stays within the bound.
    fn publish(&self, batch: &mut Vec<u64>) {
        if let Ok(mut o) = self.offsets.write() {
            let need = o.len() + batch.len();
            if need > o.capacity() {
                let grown = (o.capacity() * 2).max(need).min(self.limit().max(need));
                let more = grown - o.len();
                o.reserve_exact(more);
            }
            o.extend_from_slice(batch);
        }
        batch.clear();
    }
}

pub(super) struct Scan<'a> {
    pub(super) buf: &'a [u8],
    pub(super) framing: Framing,
    desc: Option<&'a MessageDescriptor>,
    first_keys: FirstKeys,
    /// The mapping `buf` is, when it is one: a read past the file's new end stops the walk.
    mapping: Option<&'a Mapping>,
}

impl Scan<'_> {
    /// Where the file's own bytes end, as far as is known: a read met zeros from there on
    /// (the file was cut short), or the buffer's end.
    #[inline]
    pub(super) fn intact_end(&self) -> usize {
        self.mapping.map_or(self.buf.len(), |m| m.intact_len() as usize)
    }

    /// Header fits and the body starts like a message: the per-frame cost while indexing.
    pub(super) fn quick(&self, pos: usize) -> Result<FrameHeader, HeaderFault> {
        let h = read_header(self.buf, pos, self.framing)?;
        let body = &self.buf[pos + h.header_len as usize..pos + h.total() as usize];
        let msg = &body[message_range(body, self.framing, &h)];
        if self.first_keys.plausible(msg) {
            Ok(h)
        } else {
            Err(HeaderFault::Invalid(format!("frame body does not start like a {}", self.type_name())))
        }
    }

    fn type_name(&self) -> String {
        self.desc.map_or_else(|| "protobuf message".to_string(), |d| d.full_name().to_string())
    }

    /// The whole frame at `pos` is valid; returns its header.
    fn full(&self, pos: usize) -> Option<FrameHeader> {
        let h = read_header(self.buf, pos, self.framing).ok()?;
        let body = &self.buf[pos + h.header_len as usize..pos + h.total() as usize];
        check_message(&body[message_range(body, self.framing, &h)], self.desc).ok()?;
        Some(h)
    }

    /// A resynchronisation point: a valid frame with a body followed by CHAIN valid frames or
    /// EOF. (Never an empty frame first: zeros would resynchronise anywhere.)
    pub(super) fn chain_starts_at(&self, pos: usize) -> bool {
        let mut p = pos;
        for i in 0..=CHAIN {
            if p == self.buf.len() {
                return i > 0;
            }
            match self.full(p) {
                Some(h) if i > 0 || h.body_len > 0 => p += h.total() as usize,
                _ => return false,
            }
        }
        true
    }
}

/// Work done on each frame the moment the scan finds it, while its bytes are still in the
/// core's caches: a whole-file statistic then reads the file once instead of twice (once for
/// the index, once for the statistic). Each thread folds the frames it walks into its own
/// accumulator; accumulators are merged in no particular order.
pub(crate) trait FrameFold: Sync {
    type Acc: Send;
    fn init(&self) -> Self::Acc;
    /// A frame starts at `offset` with `header`, and fits the file.
    fn frame(&self, acc: Self::Acc, offset: u64, header: FrameHeader) -> Self::Acc;
    fn merge(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc;
}

/// The index alone.
pub(crate) struct NoFold;

impl FrameFold for NoFold {
    type Acc = ();
    fn init(&self) {}
    #[inline]
    fn frame(&self, (): (), _: u64, _: FrameHeader) {}
    fn merge(&self, (): (), (): ()) {}
}

/// Scans `source` into `shared` on every core, walking ahead in regions of `region` bytes.
pub(super) fn scan<F: FrameFold>(
    source: &Source,
    framing: Framing,
    desc: Option<&MessageDescriptor>,
    shared: &IndexShared,
    region: usize,
    fold: &F,
) -> F::Acc {
    let scan = Scan::new(source.bytes(), framing, desc, source.mapping());
    scan_with(&scan, shared, region, workers(), fold).1
}

impl<'a> Scan<'a> {
    fn new(
        buf: &'a [u8],
        framing: Framing,
        desc: Option<&'a MessageDescriptor>,
        mapping: Option<&'a Mapping>,
    ) -> Scan<'a> {
        Scan { buf, framing, desc, first_keys: FirstKeys::new(desc), mapping }
    }
}

pub(super) fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// [`scan`] of bytes in memory with `workers` threads (see [`scan_with`]).
#[cfg(test)]
pub(crate) fn scan_in_regions<F: FrameFold>(
    buf: &[u8],
    framing: Framing,
    desc: Option<&MessageDescriptor>,
    shared: &IndexShared,
    region: usize,
    workers: usize,
    fold: &F,
) -> (usize, F::Acc) {
    scan_with(&Scan::new(buf, framing, desc, None), shared, region, workers, fold)
}

/// [`scan`] with `workers` threads walking regions of `region` bytes ahead of it (see
/// [`regions`]); the result is the same for any region size and any number of workers.
/// Returns how many regions the walk adopted, and `fold` over the frames the walk walked or
/// adopted (every frame of the index, unless a damaged range took some back: see
/// [`super::index_build::build_folding`]).
fn scan_with<F: FrameFold>(
    scan: &Scan,
    shared: &IndexShared,
    region: usize,
    workers: usize,
    fold: &F,
) -> (usize, F::Acc) {
    let (buf, framing) = (scan.buf, scan.framing);
    let mut pending =
        Pending { shared, offsets: Vec::with_capacity(CHUNK + KEEP_BACK), published: 0, end: 0 };
    if framing == Framing::Single {
        let mut acc = fold.init();
        if !buf.is_empty() {
            pending.offsets.push(0);
            let header = FrameHeader { header_len: 0, body_len: buf.len() as u64, meta_len: 0 };
            acc = fold.frame(acc, 0, header);
        }
        pending.finish(buf.len());
        return (0, acc);
    }
    let control = regions::Control::default();
    std::thread::scope(|s| {
        let mut ahead = regions::spawn(s, scan, shared, region, workers, &control, fold);
        let (pos, acc) = walk(scan, shared, &mut pending, ahead.as_mut(), fold);
        pending.finish(pos.min(buf.len()));
        // Dropping the regions stops the workers; the scope then waits for them.
        (ahead.map_or(0, |a| a.adopted), acc)
    })
}

/// The frames found and not yet published. A scan that unwinds (a bug in the walk or a fold)
/// publishes them on its way out and says how far they reach, so the index keeps every frame
/// found and the problem its builder records stands where listing really stopped.
struct Pending<'a> {
    shared: &'a IndexShared,
    offsets: Vec<u64>,
    /// Frames published so far.
    published: usize,
    /// Every byte before this is in a listed frame or in a recorded problem.
    end: usize,
}

impl Pending<'_> {
    /// One frame more for the index; publishes when a chunk is full, keeping the last few back.
    fn push(&mut self, offset: u64) {
        self.offsets.push(offset);
        if self.offsets.len() >= CHUNK + KEEP_BACK {
            let keep = self.offsets.split_off(self.offsets.len() - KEEP_BACK);
            self.published += self.offsets.len();
            self.shared.publish(&mut self.offsets);
            self.offsets = keep;
        }
    }

    /// Publishes every frame found so far: none of them can be taken back any more.
    fn flush(&mut self) {
        self.published += self.offsets.len();
        self.shared.publish(&mut self.offsets);
    }

    /// Frames the index may still take before its bound.
    fn room(&self) -> usize {
        self.shared.limit().saturating_sub(self.published + self.offsets.len())
    }

    /// The bound is reached at `pos`, with bytes left: says so, and from where.
    fn cap(&mut self, pos: usize, len: usize) {
        let limit = self.shared.limit();
        self.shared.capped.store(true, Ordering::Release);
        self.shared.add_problem(Problem {
            offset: pos as u64,
            len: (len - pos) as u64,
            truncated: false,
            reason: format!(
                "not listed: the index lists at most {limit} frames ({} of memory); the {} bytes from byte {pos} on are not read. To read them, copy them into a file of their own (tail -c +{} FILE > rest.dump) and open that",
                crate::fmt::bytes(limit as u64 * 8),
                len - pos,
                pos + 1
            ),
        });
    }

    /// Publishes the rest; `done` is set by the caller once the cache is written too, so a
    /// process that exits as soon as the index is done leaves a complete cache behind.
    fn finish(&mut self, pos: usize) {
        self.flush();
        self.end = pos;
        self.shared.scanned.store(pos as u64, Ordering::Relaxed);
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.finish(self.end);
        }
    }
}

/// The walk from the start of the file: frame by frame, adopting a region walked ahead
/// whenever it lands on that region's first frame. Returns where it stopped, and `fold` over
/// the frames it walked or adopted.
fn walk<F: FrameFold>(
    scan: &Scan,
    shared: &IndexShared,
    pending: &mut Pending,
    mut ahead: Option<&mut Regions<F::Acc>>,
    fold: &F,
) -> (usize, F::Acc) {
    let len = scan.buf.len();
    let mut pos = 0usize;
    let mut acc = fold.init();
    while pos < len {
        if shared.was_cancelled() || pos >= scan.intact_end() {
            break;
        }
        if pending.room() == 0 {
            pending.cap(pos, len);
            break;
        }
        if let Some(region) = ahead.as_deref_mut().and_then(|a| a.at(pos)) {
            // A region past the bound is listed up to it; the fold then covers frames the index
            // does not list, and is dropped for the problem the bound records (see
            // `index_build::build_folding`).
            let take = region.offsets.len().min(pending.room());
            for &offset in &region.offsets[..take] {
                pending.push(offset);
            }
            pos = region.offsets.get(take).map_or(region.end, |&o| o as usize);
            pending.end = pos;
            acc = fold.merge(acc, region.acc);
            shared.scanned.store(pos as u64, Ordering::Relaxed);
            continue;
        }
        let quick = scan.quick(pos);
        if let Ok(h) = &quick
            && h.body_len == 0
            && let Some((end, frames)) = empty_run(scan, pos)
        {
            // The frames before a run are not taken back by damage after it.
            pending.flush();
            shared.add_problem(run_problem(scan, pos, end, frames));
            pos = end;
            pending.end = pos;
            shared.scanned.store(pos as u64, Ordering::Relaxed);
            continue;
        }
        match quick {
            Ok(header) => {
                pending.push(pos as u64);
                let start = pos as u64;
                pos += header.total() as usize;
                pending.end = pos;
                acc = fold.frame(acc, start, header);
                if pending.offsets.len().is_multiple_of(4096) {
                    shared.scanned.store(pos as u64, Ordering::Relaxed);
                }
            }
            Err(fault) => {
                let mut bad = pos;
                // A corrupt length before this point may have swallowed good frames: take back
                // the recent frames whose bodies do not hold up.
                while let Some(&last) = pending.offsets.last() {
                    if scan.full(last as usize).is_some() {
                        break;
                    }
                    pending.offsets.pop();
                    bad = last as usize;
                    pending.end = bad;
                }
                // Zeros where the file was cut short hold no frame: the search stops there.
                let next = find_start(
                    scan,
                    bad + 1,
                    len.min(scan.intact_end()),
                    |p| scan.chain_starts_at(p),
                    || shared.was_cancelled(),
                );
                let truncated = matches!(fault, HeaderFault::Truncated { .. }) && next.is_none();
                let end = next.unwrap_or(len);
                let reason = if truncated {
                    format!("truncated tail at byte {bad}: {fault}; {} bytes kept unread", end - bad)
                } else {
                    // The fault may lie past the range: a corrupt length at `bad` reads as a
                    // frame that runs on, and only the next header, at `pos`, fails; then the
                    // range is what was taken back, and the words say how it was found.
                    let found = if (bad..end).contains(&pos) {
                        format!("at byte {pos}: {fault}")
                    } else {
                        format!(
                            "not a frame: read as frames, they run on to byte {pos}, where {fault}; traced back to byte {bad}"
                        )
                    };
                    match next {
                        Some(_) => format!(
                            "bytes {bad}..{end} skipped ({found}); resynchronised on the next valid frame, at byte {end}"
                        ),
                        None => format!("bytes {bad}..{end} unreadable ({found}); no valid frame follows"),
                    }
                };
                if let Ok(mut p) = shared.problems.write() {
                    p.push(Problem { offset: bad as u64, len: (end - bad) as u64, truncated, reason });
                }
                pos = end;
                pending.end = pos;
                shared.scanned.store(pos as u64, Ordering::Relaxed);
            }
        }
    }
    (pos, acc)
}
