//! The frame index: where every frame starts, built by a scan that reads frame headers (and
//! the first key of each body) only, published in chunks so the first rows are usable at once.
//!
//! After a corrupt frame the scan resynchronises: it drops recent frames whose bodies fail a
//! full check (a corrupt length can swallow the frames after it), then looks byte by byte for
//! the next offset where a chain of valid frames starts, and records the skipped range. An
//! intact frame after a bad one is never lost. Costs 8 bytes of memory per frame. A large file
//! is walked on every core: the scan adopts regions other threads walked ahead of it
//! ([`super::index_regions`]) only where its own walk lands on them, so the index is the same.

use super::framing::{Framing, HeaderFault, read_header};
use super::index_cache::{self, FileKey};
use super::index_regions::{self as regions, Regions};
use super::validate::{FirstKeys, check_message, message_range};
use prost_reflect::MessageDescriptor;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

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
    pub fn frame_count(&self) -> usize {
        self.offsets.read().map(|o| o.len()).unwrap_or(0)
    }
    pub fn offset(&self, i: usize) -> Option<u64> {
        self.offsets.read().ok()?.get(i).copied()
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
    fn set_cache_use(&self, u: CacheUse) {
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
    fn publish(&self, batch: &mut Vec<u64>) {
        if let Ok(mut o) = self.offsets.write() {
            o.extend_from_slice(batch);
        }
        batch.clear();
    }
}

pub(super) struct Scan<'a> {
    pub(super) buf: &'a [u8],
    framing: Framing,
    desc: Option<&'a MessageDescriptor>,
    first_keys: FirstKeys,
}

impl Scan<'_> {
    /// Header fits and the body starts like a message: the per-frame cost while indexing.
    pub(super) fn quick(&self, pos: usize) -> Result<u64, HeaderFault> {
        let h = read_header(self.buf, pos, self.framing)?;
        let body = &self.buf[pos + h.header_len as usize..pos + h.total() as usize];
        let msg = &body[message_range(body, self.framing, &h)];
        if self.first_keys.plausible(msg) {
            Ok(h.total())
        } else {
            Err(HeaderFault::Invalid(format!("frame body does not start like a {}", self.type_name())))
        }
    }

    fn type_name(&self) -> String {
        self.desc.map_or_else(|| "protobuf message".to_string(), |d| d.full_name().to_string())
    }

    /// The whole frame at `pos` is valid; returns its length.
    fn full(&self, pos: usize) -> Option<u64> {
        let h = read_header(self.buf, pos, self.framing).ok()?;
        let body = &self.buf[pos + h.header_len as usize..pos + h.total() as usize];
        check_message(&body[message_range(body, self.framing, &h)], self.desc).ok()?;
        Some(h.total())
    }

    /// A resynchronisation point: a non-empty valid frame followed by CHAIN valid frames or EOF.
    pub(super) fn chain_starts_at(&self, pos: usize) -> bool {
        let mut p = pos;
        for i in 0..=CHAIN {
            if p == self.buf.len() {
                return i > 0;
            }
            match self.full(p) {
                Some(len) if i > 0 || len > 1 => p += len as usize,
                _ => return false,
            }
        }
        true
    }
}

/// Scans `buf` and publishes frames into `shared`; returns when done or cancelled.
pub fn build(buf: &[u8], framing: Framing, desc: Option<&MessageDescriptor>, shared: &IndexShared) {
    scan(buf, framing, desc, shared);
    shared.done.store(true, Ordering::Release);
}

fn scan(buf: &[u8], framing: Framing, desc: Option<&MessageDescriptor>, shared: &IndexShared) {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let _ = scan_in_regions(buf, framing, desc, shared, regions::REGION, workers);
}

/// [`scan`] with `workers` threads walking regions of `region` bytes ahead of it (see
/// [`regions`]); the result is the same for any region size and any number of workers.
/// Returns how many regions the walk adopted.
pub(crate) fn scan_in_regions(
    buf: &[u8],
    framing: Framing,
    desc: Option<&MessageDescriptor>,
    shared: &IndexShared,
    region: usize,
    workers: usize,
) -> usize {
    let scan = Scan { buf, framing, desc, first_keys: FirstKeys::new(desc) };
    let mut pending: Vec<u64> = Vec::with_capacity(CHUNK + KEEP_BACK);
    if framing == Framing::Single {
        if !buf.is_empty() {
            pending.push(0);
        }
        finish(shared, &mut pending, buf.len());
        return 0;
    }
    let control = regions::Control::default();
    std::thread::scope(|s| {
        let mut ahead = regions::spawn(s, &scan, shared, region, workers, &control);
        let pos = walk(&scan, shared, &mut pending, ahead.as_mut());
        finish(shared, &mut pending, pos.min(buf.len()));
        // Dropping the regions stops the workers; the scope then waits for them.
        ahead.map_or(0, |a| a.adopted)
    })
}

/// One frame more for the index; publishes when a chunk is full, keeping the last few back.
fn push(shared: &IndexShared, pending: &mut Vec<u64>, offset: u64) {
    pending.push(offset);
    if pending.len() >= CHUNK + KEEP_BACK {
        let keep = pending.split_off(pending.len() - KEEP_BACK);
        shared.publish(pending);
        *pending = keep;
    }
}

/// The walk from the start of the file: frame by frame, adopting a region walked ahead
/// whenever it lands on that region's first frame. Returns where it stopped.
fn walk(scan: &Scan, shared: &IndexShared, pending: &mut Vec<u64>, mut ahead: Option<&mut Regions>) -> usize {
    let len = scan.buf.len();
    let mut pos = 0usize;
    while pos < len {
        if shared.was_cancelled() {
            break;
        }
        if let Some(region) = ahead.as_deref_mut().and_then(|a| a.at(pos)) {
            for &offset in &region.offsets {
                push(shared, pending, offset);
            }
            pos = region.end;
            shared.scanned.store(pos as u64, Ordering::Relaxed);
            continue;
        }
        match scan.quick(pos) {
            Ok(total) => {
                push(shared, pending, pos as u64);
                pos += total as usize;
                if pending.len().is_multiple_of(4096) {
                    shared.scanned.store(pos as u64, Ordering::Relaxed);
                }
            }
            Err(fault) => {
                let mut bad = pos;
                // A corrupt length before this point may have swallowed good frames: take back
                // the recent frames whose bodies do not hold up.
                while let Some(&last) = pending.last() {
                    if scan.full(last as usize).is_some() {
                        break;
                    }
                    pending.pop();
                    bad = last as usize;
                }
                let next = (bad + 1..len).find(|p| scan.chain_starts_at(*p));
                let truncated = matches!(fault, HeaderFault::Truncated { .. }) && next.is_none();
                let end = next.unwrap_or(len);
                let reason = if truncated {
                    format!("truncated tail at byte {bad}: {fault}; {} bytes kept unread", end - bad)
                } else if next.is_some() {
                    format!(
                        "bytes {bad}..{end} skipped (damage noticed at byte {pos}: {fault}); resynchronised on the next valid frame"
                    )
                } else {
                    format!(
                        "bytes {bad}..{end} unreadable (damage noticed at byte {pos}: {fault}); no valid frame follows"
                    )
                };
                if let Ok(mut p) = shared.problems.write() {
                    p.push(Problem { offset: bad as u64, len: (end - bad) as u64, truncated, reason });
                }
                pos = end;
            }
        }
    }
    pos
}

/// Publishes the rest; `done` is set by the caller once the cache is written too, so a
/// process that exits as soon as the index is done leaves a complete cache behind.
fn finish(shared: &IndexShared, pending: &mut Vec<u64>, pos: usize) {
    shared.publish(pending);
    shared.scanned.store(pos as u64, Ordering::Relaxed);
}

/// Bytes the helper prepares per step, and how far it may run ahead of the scan: well inside
/// the last-level cache, so the lines it reads are still there when the scan arrives.
const WARM_STEP: usize = 1 << 20;
const WARM_AHEAD: usize = 8 << 20;

/// Starts the scan on its own thread over `source` (kept alive by the Arc); a file of at most
/// [`INLINE_INDEX`] bytes without a cache key is scanned before this returns. With a `cache`
/// key, a persisted index of the same file state is used instead, and a fresh one is stored.
pub fn spawn(
    source: Arc<super::source::Source>,
    framing: Framing,
    desc: Option<MessageDescriptor>,
    cache: Option<FileKey>,
) -> Arc<IndexShared> {
    let shared = Arc::new(IndexShared::default());
    if source.bytes().len() <= INLINE_INDEX && cache.is_none() {
        // A small file is indexed before its open returns: a thread would cost more than the
        // scan, and the caller's first wait would be a poll.
        load_or_scan(&source, framing, desc.as_ref(), cache.as_ref(), &shared);
        return shared;
    }
    let s = shared.clone();
    let spawned = std::thread::Builder::new()
        .name("walscope-index".into())
        .spawn(move || load_or_scan(&source, framing, desc.as_ref(), cache.as_ref(), &s));
    if let Err(e) = spawned {
        if let Ok(mut p) = shared.problems.write() {
            p.push(Problem {
                offset: 0,
                len: 0,
                truncated: false,
                reason: format!("cannot start indexing: {e}"),
            });
        }
        shared.set_cache_use(CacheUse::NotCached);
        shared.done.store(true, Ordering::Release);
    }
    shared
}

/// Files up to this size are indexed on the opening thread.
const INLINE_INDEX: usize = 256 << 10;

/// Loads the persisted index or scans, stores a fresh one, and marks the index done.
fn load_or_scan(
    source: &Arc<super::source::Source>,
    framing: Framing,
    desc: Option<&MessageDescriptor>,
    cache: Option<&FileKey>,
    s: &Arc<IndexShared>,
) {
    if let Some((offsets, problems)) = cache.and_then(index_cache::load) {
        if let (Ok(mut o), Ok(mut p)) = (s.offsets.write(), s.problems.write()) {
            *o = offsets;
            *p = problems;
        }
        s.scanned.store(source.bytes().len() as u64, Ordering::Relaxed);
        s.set_cache_use(CacheUse::Loaded);
        s.done.store(true, Ordering::Release);
        return;
    }
    // A large file is walked in regions on every core instead (see `scan`).
    let helper =
        (source.bytes().len() < regions::MIN_FILE).then(|| warm_ahead(source.clone(), s.clone())).flatten();
    scan(source.bytes(), framing, desc, s);
    if let Some(h) = helper {
        let _ = h.join();
    }
    if let (Some(key), false) = (cache, s.was_cancelled())
        && let (Ok(o), Ok(p)) = (s.offsets.read(), s.problems.read())
    {
        index_cache::store(key, &o, &p);
        s.set_cache_use(CacheUse::Stored);
    } else {
        s.set_cache_use(CacheUse::NotCached);
    }
    s.done.store(true, Ordering::Release);
}

/// The second core's share of indexing a mapped file. The scan reads one frame header, which
/// gives the next one's place: a chain of dependent reads, each a page fault or a cache miss.
/// A helper walks a little ahead reading every cache line (a sequential read, which the
/// hardware prefetches), so the scan finds the pages mapped and the lines cached.
fn warm_ahead(
    source: Arc<super::source::Source>,
    shared: Arc<IndexShared>,
) -> Option<std::thread::JoinHandle<()>> {
    let len = source.bytes().len();
    if !source.is_mapped() || len < 4 * WARM_STEP {
        return None;
    }
    let spawned = std::thread::Builder::new().name("walscope-prefetch".into()).spawn(move || {
        let bytes = source.bytes();
        let mut at = 0;
        while at < len && !shared.was_cancelled() {
            let scanned = shared.scanned_bytes() as usize;
            if scanned >= len {
                break;
            }
            if at > scanned + WARM_AHEAD {
                std::thread::sleep(std::time::Duration::from_micros(50));
                continue;
            }
            let n = WARM_STEP.min(len - at);
            let lines: u64 = bytes[at..at + n].iter().step_by(64).map(|b| u64::from(*b)).sum();
            std::hint::black_box(lines);
            at += n;
        }
    });
    spawned.ok()
}
