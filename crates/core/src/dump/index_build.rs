//! Starting a dump's frame index: on a thread of its own (inline for a small file), from the
//! persisted index when one matches the file, or on the caller's thread with a fold over every
//! frame as the scan finds it ([`build_folding`], for whole-file statistics).
//!
//! A mapped file found cut short when the index is settled (its size now, or a read that met
//! zeros past its new end: see [`super::mapping`]) keeps only the frames that end by its new end,
//! and a problem says so in words; such an index is never cached.
//!
//! Owns: when and where the scan runs, and storing a fresh index in the cache. Must never: mark
//! the index done before the cache holds it (a process that exits at once leaves a whole cache
//! behind), hand back a fold that did not see every frame of the index exactly once, or list a
//! frame of a file cut short that does not end by its new end.

use super::framing::{Framing, read_header};
use super::index::{self, CacheUse, FrameFold, IndexShared, NoFold, Problem};
use super::index_cache::{self, FileKey};
use super::index_regions as regions;
use super::source::Source;
use prost_reflect::MessageDescriptor;
use std::sync::Arc;

/// What building one dump's index needs.
pub(crate) struct Plan {
    pub source: Arc<Source>,
    pub framing: Framing,
    pub desc: Option<MessageDescriptor>,
    /// Where the index is persisted, when it is.
    pub cache: Option<FileKey>,
    /// Bytes per region walked ahead on the other cores ([`regions::REGION`]; less in tests).
    pub region: usize,
}

/// Files up to this size are indexed on the opening thread.
const INLINE_INDEX: usize = 256 << 10;

/// Starts the scan on its own thread (the plan's source kept alive by it); a file of at most
/// [`INLINE_INDEX`] bytes without a cache key is scanned before this returns. With a cache
/// key, a persisted index of the same file state is used instead, and a fresh one is stored.
pub(crate) fn spawn(shared: &Arc<IndexShared>, plan: Plan) {
    if plan.source.bytes().len() <= INLINE_INDEX && plan.cache.is_none() {
        // A small file is indexed before its open returns: a thread would cost more than the
        // scan, and the caller's first wait would be a poll.
        load_or_scan(&plan, shared, &NoFold);
        return;
    }
    let s = shared.clone();
    let spawned = std::thread::Builder::new().name("walscope-index".into()).spawn(move || {
        load_or_scan(&plan, &s, &NoFold);
    });
    if let Err(e) = spawned {
        shared.add_problem(Problem {
            offset: 0,
            len: 0,
            truncated: false,
            reason: format!("cannot start indexing: {e}"),
        });
        shared.set_cache_use(CacheUse::NotCached);
        shared.mark_done();
    }
}

/// Builds the index on the calling thread (a deferred index waited for).
pub(crate) fn build(shared: &Arc<IndexShared>, plan: Plan) {
    load_or_scan(&plan, shared, &NoFold);
}

/// Builds the index on the calling thread (its region walkers on the other cores) and folds
/// every frame into `fold` the moment the walk finds it, so a whole-file statistic reads the
/// file once. Returns the fold only when it saw exactly the index's frames: a clean file, large
/// enough to be walked on every core, not loaded from the cache, not cancelled. Otherwise
/// (`None`) the index is built all the same and the caller folds over it.
pub(crate) fn build_folding<F: FrameFold>(shared: &Arc<IndexShared>, plan: Plan, fold: &F) -> Option<F::Acc> {
    let len = plan.source.bytes().len();
    let walked_on_every_core =
        plan.framing != Framing::Single && regions::walked_ahead(len, plan.region, index::workers());
    if !walked_on_every_core {
        // One core would fold it all: the index alone, then a fold on every core, is faster.
        load_or_scan(&plan, shared, &NoFold);
        return None;
    }
    let acc = load_or_scan(&plan, shared, fold)?;
    // Damage makes the walk take frames back and walk some twice: the fold no longer matches.
    (!shared.has_problems() && !shared.was_cancelled()).then_some(acc)
}

/// Loads the persisted index or scans (folding), stores a fresh one, and marks the index done.
/// `None` when the index came from the cache (nothing was folded).
fn load_or_scan<F: FrameFold>(plan: &Plan, s: &Arc<IndexShared>, fold: &F) -> Option<F::Acc> {
    let _settled = SettledOnUnwind(s);
    let len = plan.source.bytes().len();
    // A cached index longer than this open's bound is not used (it was stored under another).
    let cached = plan.cache.as_ref().and_then(index_cache::load).filter(|(o, _)| o.len() <= s.limit());
    if let Some((offsets, problems)) = cached {
        s.fill(offsets, problems, len as u64);
        cut_if_shrunk(plan, s);
        s.set_cache_use(CacheUse::Loaded);
        s.mark_done();
        return None;
    }
    // A large file is walked in regions on every core instead (see `index::scan`).
    let helper = (len < regions::MIN_FILE).then(|| warm_ahead(plan.source.clone(), s.clone())).flatten();
    let acc = index::scan(&plan.source, plan.framing, plan.desc.as_ref(), s, plan.region, fold);
    if let Some(h) = helper {
        let _ = h.join();
    }
    let cut = cut_if_shrunk(plan, s);
    // An index cut at its bound is not kept: it is not the file's whole index.
    let stored = match (&plan.cache, s.was_cancelled() || cut || s.is_capped()) {
        (Some(key), false) => s.with_all(|o, p| index_cache::store(key, o, p)).unwrap_or(false),
        _ => false,
    };
    s.set_cache_use(if stored { CacheUse::Stored } else { CacheUse::NotCached });
    s.mark_done();
    Some(acc)
}

/// A mapped file cut short since it was opened (one `fstat`, after the walk: the bytes it read
/// before were the file's own): drops the frames that do not end by its new end and the
/// problems past it, and says so. Returns whether the file was cut.
fn cut_if_shrunk(plan: &Plan, s: &IndexShared) -> bool {
    let Err(shrink) = plan.source.check() else {
        return false;
    };
    let mut frames = s.frames_before(shrink.now);
    let mut end = 0;
    while let Some(last) = frames.checked_sub(1).and_then(|i| s.offset(i)) {
        match read_header(plan.source.bytes(), last as usize, plan.framing) {
            Ok(h) if last + h.total() <= shrink.now => {
                end = last + h.total();
                break;
            }
            // The frame the cut went through.
            _ => frames -= 1,
        }
    }
    let problems_end = s.problems().iter().map(|p| p.offset + p.len).filter(|&e| e <= shrink.now).max();
    let from = end.max(problems_end.unwrap_or(0));
    s.cut(
        frames,
        shrink.now,
        Problem {
            offset: from,
            len: shrink.was.saturating_sub(from),
            truncated: true,
            reason: format!(
                "{} while it was being read; frames from {frames} on are not listed (open it again once whatever changed it has finished)",
                shrink
            ),
        },
    );
    true
}

/// Settles an index whose scan unwinds: the frames found so far stay listed (the scan
/// publishes them as it unwinds), a problem says where listing stopped, and the index is
/// marked done, so nobody waits on it for ever (the window's "indexing" row, `wait_indexed`).
/// The panic itself goes on to the scan's caller.
struct SettledOnUnwind<'a>(&'a IndexShared);

impl Drop for SettledOnUnwind<'_> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let s = self.0;
        s.add_problem(Problem {
            offset: s.scanned_bytes(),
            len: 0,
            truncated: false,
            reason: "indexing stopped here on an internal error (a panic in the frame scan): the frames \
                     after this offset are not listed; please report it with the file"
                .into(),
        });
        s.set_cache_use(CacheUse::NotCached);
        s.mark_done();
    }
}

/// Bytes the helper prepares per step, and how far it may run ahead of the scan: well inside
/// the last-level cache, so the lines it reads are still there when the scan arrives.
const WARM_STEP: usize = 1 << 20;
const WARM_AHEAD: usize = 8 << 20;

/// The second core's share of indexing a mapped file. The scan reads one frame header, which
/// gives the next one's place: a chain of dependent reads, each a page fault or a cache miss.
/// A helper walks a little ahead reading every cache line (a sequential read, which the
/// hardware prefetches), so the scan finds the pages mapped and the lines cached.
fn warm_ahead(source: Arc<Source>, shared: Arc<IndexShared>) -> Option<std::thread::JoinHandle<()>> {
    let len = source.bytes().len();
    if !source.is_mapped() || len < 4 * WARM_STEP {
        return None;
    }
    let spawned = std::thread::Builder::new().name("walscope-prefetch".into()).spawn(move || {
        let bytes = source.bytes();
        let mut at = 0;
        // Done also covers a scan that panicked: `scanned` then stays where it stopped.
        while at < len && !shared.was_cancelled() && !shared.is_done() && (at as u64) < source.intact_len() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dump::framing::{FrameHeader, write_frame};
    use crate::schema::SchemaSet;
    use crate::sim::{WalGenConfig, WalGenerator};

    /// A scan that panics (a fold here; any bug in the walk alike) leaves an index that is done,
    /// keeps the frames found before, and says where listing stopped, so a window showing
    /// "indexing" or a `wait_indexed` does not wait for ever; the panic still reaches the caller.
    #[test]
    fn a_scan_that_panics_leaves_the_index_done_and_explained() {
        /// Panics on the frame at or past `offset`, or, `in_merge`, when the walk adopts a
        /// region walked ahead.
        struct PanicAt {
            offset: u64,
            in_merge: bool,
        }
        impl FrameFold for PanicAt {
            type Acc = ();
            fn init(&self) {}
            fn frame(&self, (): (), offset: u64, _: FrameHeader) {
                assert!(self.in_merge || offset < self.offset, "the fold panics here");
            }
            fn merge(&self, (): (), (): ()) {
                assert!(!self.in_merge, "the merge panics here");
            }
        }
        let set = SchemaSet::builtin();
        let cfg = WalGenConfig { seed: 9, total: Some(600), ..WalGenConfig::default() };
        let mut bytes = Vec::new();
        for m in WalGenerator::new(set.pool(), cfg).take(600) {
            write_frame(Framing::VarintDelimited, &m.response, &mut bytes);
        }
        let at = bytes.len() as u64 / 2;
        let plan_of = |region| Plan {
            source: Arc::new(Source::Owned(bytes.clone())),
            framing: Framing::VarintDelimited,
            desc: set.message("milvus.proto.milvus.DumpMessagesResponse").ok(),
            cache: None,
            region,
        };
        let clean = Arc::new(IndexShared::default());
        load_or_scan(&plan_of(usize::MAX), &clean, &NoFold);
        let every = clean.offsets(0..usize::MAX);
        assert_eq!(every.len(), 600);
        for (region, in_merge, why) in [
            (usize::MAX, false, "one walk"),
            (8 << 10, false, "walked in regions"),
            (8 << 10, true, "a region's merge"),
        ] {
            if in_merge && index::workers() < 2 {
                continue; // one core: no region is walked ahead, so none is merged
            }
            let plan = plan_of(region);
            let shared = Arc::new(IndexShared::default());
            let fold = PanicAt { offset: at, in_merge };
            let scan = std::panic::AssertUnwindSafe(|| load_or_scan(&plan, &shared, &fold));
            assert!(std::panic::catch_unwind(scan).is_err(), "{why}: the panic reaches the caller");
            assert!(shared.is_done(), "{why}: the index is settled");
            assert_eq!(shared.cache_use(), CacheUse::NotCached, "{why}");
            let problems = shared.problems();
            let stopped = problems.iter().find(|p| p.reason.contains("internal error"));
            assert!(stopped.is_some(), "{why}: the stop is explained: {problems:?}");
            let listed = shared.offsets(0..usize::MAX);
            // The frames found before the panic are listed, exactly as a clean scan lists
            // them, and the problem stands where the last listed frame ends.
            assert!(!listed.is_empty() && every.starts_with(&listed), "{why}: {} listed", listed.len());
            let listed_end = every.get(listed.len()).copied().unwrap_or(bytes.len() as u64);
            assert_eq!(stopped.map(|p| p.offset), Some(listed_end), "{why}");
            if region == usize::MAX {
                let through_panic = every.iter().position(|&o| o >= at).map_or(600, |i| i + 1);
                assert_eq!(listed.len(), through_panic, "{why}: every frame up to the one that panicked");
            }
        }
    }
}
