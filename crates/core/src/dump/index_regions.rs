//! Speculative regions of the index scan. While the scan walks a large file frame by frame from
//! its start, workers on the other cores walk its later regions, each from the first offset in
//! the region where a chain of valid frames starts. The scan adopts a region's frames only when
//! its own walk lands exactly on that first frame: from a frame boundary the walk is determined,
//! so an adopted region holds exactly the frames the scan would have found itself. Everything
//! else (a region with no chain, one whose start the walk steps over, the frames after a fault
//! inside one) the scan walks itself, with its usual resynchronisation. A worker folds the
//! frames it walks (the scan's [`super::index::FrameFold`]); the fold of a region is kept only
//! with the region.
//!
//! A region ends early at a run of empty frames (the walk records the run: see
//! [`super::index_empty`]) and after [`REGION_FRAMES`] frames (the walk lists the rest itself),
//! so the regions held ahead of the walk (at most [`AHEAD`] + 2) cost at most 40 MiB of offsets,
//! whatever the file. A region the walk has already passed is not walked at all.
//!
//! Owns: splitting the file, the workers, handing regions over in file order. Must never: hand
//! over a region the walk has not landed on, or let the scan wait for one it has passed.

use super::index::{FrameFold, IndexShared, Scan};
use super::index_empty::{empty_run, find_start};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::thread::Scope;

/// Bytes per region: a few thousand frames, so finding where a region's chain starts costs
/// nothing beside walking it.
pub(super) const REGION: usize = 32 << 20;
/// Files below this are walked by the scan alone (with its prefetching helper).
pub(super) const MIN_FILE: usize = 4 * REGION;
/// Valid frames that must follow a region's candidate start before the full check is tried.
const QUICK_CHAIN: usize = 4;
/// The largest frame a candidate chain may hold. Inside a payload nearly any bytes read as a
/// length that fits the file, and following it touches pages far away (each a page fault); a
/// region of bigger frames is not adopted, only walked by the scan itself.
const SYNC_FRAME_MAX: u64 = 1 << 20;
/// The most frames one region holds (4 MiB of offsets; a region of 32 MiB reaches it only when
/// its frames average under 64 bytes): such a region ends there, and the walk lists the rest of
/// it itself.
const REGION_FRAMES: usize = 1 << 19;

/// The frames a worker found in one region: from `start`, the first frame of its chain, up to
/// `end`, the first offset at or past the region's end (or where a frame did not hold up), and
/// the scan's fold over them.
pub(super) struct Region<A> {
    pub start: usize,
    pub offsets: Vec<u64>,
    pub end: usize,
    pub acc: A,
}

/// The regions as the scan meets them, in file order.
pub(super) struct Regions<'a, A> {
    size: usize,
    count: usize,
    /// The first region the walk has not yet adopted or passed.
    next: usize,
    /// Regions adopted so far.
    pub adopted: usize,
    /// Region `next`, when it starts ahead of the walk.
    held: Option<Region<A>>,
    arrived: BTreeMap<usize, Option<Region<A>>>,
    results: Receiver<(usize, Option<Region<A>>)>,
    control: &'a Control,
}

/// What the scan and the workers share: the next region to take, the first one the scan has
/// not settled, and whether to stop.
#[derive(Default)]
pub(super) struct Control {
    taken: AtomicUsize,
    settled: AtomicUsize,
    stop: AtomicBool,
}

/// Regions a worker may run ahead of the scan: the offsets of regions walked but not adopted
/// are held in memory, so a scan held up (resynchronising after damage) must not let the
/// workers walk the whole file ahead of it.
const AHEAD: usize = 8;

impl<A> Regions<'_, A> {
    /// The region whose first frame is at `pos`, once the walk has reached it. Waits for the
    /// worker on it only when the walk is inside its bounds.
    pub fn at(&mut self, pos: usize) -> Option<Region<A>> {
        loop {
            if self.next >= self.count || pos < self.next * self.size {
                return None;
            }
            let region = match self.held.take() {
                Some(r) => Some(r),
                None => self.wait(self.next),
            };
            match region {
                Some(r) if r.start == pos => {
                    self.settle();
                    self.adopted += 1;
                    return Some(r);
                }
                Some(r) if r.start > pos => {
                    self.held = Some(r);
                    return None;
                }
                // No chain in the region, or the walk stepped over its start.
                _ => self.settle(),
            }
        }
    }

    fn settle(&mut self) {
        self.next += 1;
        self.control.settled.store(self.next, Ordering::Relaxed);
    }

    fn wait(&mut self, k: usize) -> Option<Region<A>> {
        loop {
            if let Some(r) = self.arrived.remove(&k) {
                return r;
            }
            match self.results.recv() {
                Ok((i, r)) => {
                    self.arrived.insert(i, r);
                }
                // Every worker has stopped (cancelled, or one panicked and stopped the others):
                // the walk goes on alone, and the scope passes the panic on when it ends.
                Err(_) => return None,
            }
        }
    }
}

impl<A> Drop for Regions<'_, A> {
    fn drop(&mut self) {
        self.control.stop.store(true, Ordering::Relaxed);
    }
}

/// Whether a file of `len` bytes is walked in regions of `size` on `workers` threads: at least
/// four regions, and a core to spare.
pub(super) fn walked_ahead(len: usize, size: usize, workers: usize) -> bool {
    size > 0 && len >= size.saturating_mul(4) && workers >= 2
}

/// Starts `workers` threads on `scope` for a file of at least four `size`-byte regions
/// (region 0 is the scan's own), each folding the frames it walks into `fold`; `None` for a
/// smaller file or a single core.
pub(super) fn spawn<'scope, F: FrameFold>(
    scope: &'scope Scope<'scope, '_>,
    scan: &'scope Scan<'scope>,
    shared: &'scope IndexShared,
    size: usize,
    workers: usize,
    control: &'scope Control,
    fold: &'scope F,
) -> Option<Regions<'scope, F::Acc>> {
    let len = scan.buf.len();
    if !walked_ahead(len, size, workers) {
        return None;
    }
    let count = len.div_ceil(size);
    let (tx, results) = channel();
    control.taken.store(1, Ordering::Relaxed);
    control.settled.store(1, Ordering::Relaxed);
    for _ in 0..workers {
        let tx = tx.clone();
        let spawned =
            std::thread::Builder::new().name("walscope-index-region".into()).spawn_scoped(scope, move || {
                let _stop = StopOthersOnPanic(&control.stop);
                loop {
                    let k = control.taken.fetch_add(1, Ordering::Relaxed);
                    let stopped = || control.stop.load(Ordering::Relaxed) || shared.was_cancelled();
                    if k >= count || stopped() {
                        break;
                    }
                    while k > control.settled.load(Ordering::Relaxed) + AHEAD {
                        if stopped() {
                            return;
                        }
                        std::thread::sleep(std::time::Duration::from_micros(200));
                    }
                    let (from, to) = (k * size, ((k + 1) * size).min(len));
                    // The walk is past this region already (it stepped over zeros or damage):
                    // nobody would adopt it.
                    let passed = || shared.scanned_bytes() as usize >= to;
                    let region = match passed() {
                        true => None,
                        false => walk_region(scan, from, to, &|| stopped() || passed(), fold),
                    };
                    if tx.send((k, region)).is_err() {
                        break;
                    }
                }
            });
        if spawned.is_err() {
            break;
        }
    }
    Some(Regions { size, count, next: 1, adopted: 0, held: None, arrived: BTreeMap::new(), results, control })
}

/// Stops every worker when the one holding it panics (in the scan's fold, say): otherwise the
/// others would wait for the scan to settle the region the panicking one never sent, while the
/// scan waits for that region, and the panic would never reach the caller.
struct StopOthersOnPanic<'a>(&'a AtomicBool);

impl Drop for StopOthersOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// The frames of `from..to`, from the first offset where a chain of valid frames starts.
fn walk_region<F: FrameFold>(
    scan: &Scan,
    from: usize,
    to: usize,
    stop: &dyn Fn() -> bool,
    fold: &F,
) -> Option<Region<F::Acc>> {
    // Zeros where the file was cut short hold no frame: the search stops there.
    let start = find_start(
        scan,
        from,
        to.min(scan.intact_end()),
        |p| quick_chain(scan, p) && scan.chain_starts_at(p),
        stop,
    )?;
    let mut offsets = Vec::new();
    let mut acc = fold.init();
    let mut pos = start;
    while pos < to && offsets.len() < REGION_FRAMES {
        if offsets.len() % 4096 == 4095 && (stop() || pos >= scan.intact_end()) {
            return None;
        }
        match scan.quick(pos) {
            // The walk records a run of empty frames itself.
            Ok(header) if header.body_len == 0 && empty_run(scan, pos).is_some() => break,
            Ok(header) => {
                offsets.push(pos as u64);
                acc = fold.frame(acc, pos as u64, header);
                pos += header.total() as usize;
            }
            Err(_) => break,
        }
    }
    Some(Region { start, offsets, end: pos, acc })
}

/// A cheap first test of a candidate start: frame headers and first keys only.
fn quick_chain(scan: &Scan, mut pos: usize) -> bool {
    for _ in 0..QUICK_CHAIN {
        if pos >= scan.buf.len() {
            return true;
        }
        match scan.quick(pos) {
            Ok(h) if h.total() > 0 && h.total() <= SYNC_FRAME_MAX => pos += h.total() as usize,
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::framing::FrameHeader;
    use super::super::index::{FrameFold, IndexShared, Problem, scan_in_regions};
    use crate::dump::Framing;
    use crate::schema::SchemaSet;
    use crate::sim::{WalGenConfig, WalGenerator};

    fn dump(frames: usize) -> Vec<u8> {
        let set = SchemaSet::builtin();
        let cfg = WalGenConfig { seed: 3, total: Some(frames as u64), ..WalGenConfig::default() };
        let mut out = Vec::new();
        for m in WalGenerator::new(set.pool(), cfg).take(frames) {
            crate::dump::framing::write_frame(Framing::VarintDelimited, &m.response, &mut out);
        }
        out
    }

    /// The offsets of the frames the scan folded, in the order the threads merged them.
    struct Folded;

    impl FrameFold for Folded {
        type Acc = Vec<u64>;
        fn init(&self) -> Vec<u64> {
            Vec::new()
        }
        fn frame(&self, mut acc: Vec<u64>, offset: u64, _: FrameHeader) -> Vec<u64> {
            acc.push(offset);
            acc
        }
        fn merge(&self, mut a: Vec<u64>, b: Vec<u64>) -> Vec<u64> {
            a.extend(b);
            a
        }
    }

    /// The index of `buf`, how many regions were adopted, and the offsets folded.
    fn index(buf: &[u8], region: usize, workers: usize) -> ((Vec<u64>, Vec<Problem>), usize, Vec<u64>) {
        let set = SchemaSet::builtin();
        let desc = set.message("milvus.proto.milvus.DumpMessagesResponse").ok();
        let shared = IndexShared::default();
        let (adopted, mut folded) =
            scan_in_regions(buf, Framing::VarintDelimited, desc.as_ref(), &shared, region, workers, &Folded);
        folded.sort_unstable();
        ((shared.offsets(0..usize::MAX), shared.problems()), adopted, folded)
    }

    /// An index bounded to `limit` frames lists the file's first `limit` frames, whether the
    /// walk alone or regions walked ahead found them, holds no more than their offsets, and a
    /// problem says from which byte the rest is not listed.
    #[test]
    fn the_bound_lists_the_first_frames_and_says_where_it_stops() {
        let buf = dump(1500);
        let ((all, _), _, _) = index(&buf, 0, 1);
        let set = SchemaSet::builtin();
        let desc = set.message("milvus.proto.milvus.DumpMessagesResponse").ok();
        for limit in [1, 100, 1499, 1500] {
            for (region, workers) in [(0, 1), (4096, 2), (10_007, 3)] {
                let shared = IndexShared::with_limit(limit);
                scan_in_regions(
                    &buf,
                    Framing::VarintDelimited,
                    desc.as_ref(),
                    &shared,
                    region,
                    workers,
                    &Folded,
                );
                let why = format!("limit {limit}, regions of {region} bytes, {workers} workers");
                assert_eq!(shared.offsets(0..usize::MAX), all[..limit], "{why}");
                let problems = shared.problems();
                if limit == all.len() {
                    assert!(!shared.is_capped() && problems.is_empty(), "{why}: {problems:?}");
                    continue;
                }
                assert!(shared.is_capped(), "{why}");
                assert!(
                    matches!(&problems[..], [p] if p.offset == all[limit] && p.reason.contains(&format!("at most {limit} frames"))),
                    "{why}: {problems:?}"
                );
                assert!(shared.heap_bytes() <= limit * 8 + 1024, "{why}: {} bytes", shared.heap_bytes());
            }
        }
        // Past a few chunks the list grows by doubling: never beyond the bound.
        let tiny: Vec<u8> = [2u8, 8, 1].repeat(300_000);
        let limit = 200_000;
        for (region, workers) in [(0, 1), (65_536, 2)] {
            let shared = IndexShared::with_limit(limit);
            scan_in_regions(&tiny, Framing::VarintDelimited, None, &shared, region, workers, &Folded);
            assert_eq!(shared.frame_count(), limit);
            assert!(shared.is_capped());
            assert!(
                shared.heap_bytes() <= limit * 8 + 1024,
                "{} bytes for {limit} frames",
                shared.heap_bytes()
            );
        }
    }

    /// A fold that panics on a frame a worker walks: the panic reaches the caller of the scan,
    /// which never hangs waiting for the region that worker did not send.
    #[test]
    fn a_panicking_fold_reaches_the_caller() {
        struct PanicAt(u64);
        impl FrameFold for PanicAt {
            type Acc = ();
            fn init(&self) {}
            fn frame(&self, (): (), offset: u64, _: FrameHeader) {
                assert_ne!(offset, self.0, "the fold panics here");
            }
            fn merge(&self, (): (), (): ()) {}
        }
        let buf = dump(1500);
        let ((offsets, _), _, _) = index(&buf, 0, 1);
        let at = offsets[offsets.len() / 4];
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let set = SchemaSet::builtin();
            let desc = set.message("milvus.proto.milvus.DumpMessagesResponse").ok();
            let shared = IndexShared::default();
            let scan = std::panic::AssertUnwindSafe(|| {
                scan_in_regions(&buf, Framing::VarintDelimited, desc.as_ref(), &shared, 4096, 2, &PanicAt(at))
            });
            let _ = tx.send(std::panic::catch_unwind(scan).is_err());
        });
        let outcome = rx.recv_timeout(std::time::Duration::from_secs(60));
        assert_eq!(outcome, Ok(true), "the scan neither panicked nor returned within a minute");
    }

    /// Damaged files of every kind, damage on and beside region edges: the regions walked ahead
    /// change nothing in the index, whatever their size and however many workers walk them.
    #[test]
    fn regions_give_the_same_index_as_the_walk_alone() {
        let clean = dump(1500);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = move |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let mut cases = vec![("clean", clean.clone())];
        let mut flipped = clean.clone();
        for _ in 0..6 {
            let at = rand(flipped.len());
            flipped[at] ^= 0xa5;
        }
        cases.push(("bytes flipped", flipped));
        let mut garbage = clean.clone();
        for edge in [3 * 4096, 7 * 10_007, 2 * 65_536 + 1] {
            let junk: Vec<u8> = (0..97).map(|_| rand(256) as u8).collect();
            garbage.splice(edge..edge, junk);
        }
        cases.push(("garbage on region edges", garbage));
        let mut huge = clean.clone();
        let at = clean.len() / 2;
        let mut prefix = Vec::new();
        crate::wire::varint::write_varint(1u64 << 62, &mut prefix);
        huge.splice(at..at, prefix);
        cases.push(("a huge length", huge));
        let mut cut = clean.clone();
        cut.truncate(clean.len() - 11);
        cases.push(("truncated tail", cut));
        // Zeros read as empty frames: a run of them is one damaged range, wherever it falls.
        let mut zeros = clean.clone();
        let ((frames, _), _, _) = index(&clean, 0, 1);
        let at = frames[frames.len() / 3] as usize;
        zeros.splice(at..at, std::iter::repeat_n(0u8, 20_000));
        cases.push(("zeros inside", zeros));
        let mut preallocated = clean.clone();
        preallocated.extend(std::iter::repeat_n(0u8, 30_000));
        cases.push(("a zero-filled tail", preallocated));
        for (name, buf) in &cases {
            let (expected, none, folded) = index(buf, 0, 1);
            assert_eq!(none, 0);
            if expected.1.is_empty() {
                assert_eq!(folded, expected.0, "{name}: folded frames, the walk alone");
            }
            match *name {
                "clean" => assert!(expected.1.is_empty() && expected.0.len() == 1500, "{:?}", expected.1),
                // A flipped byte inside a payload can pass for data.
                "bytes flipped" => {}
                "zeros inside" | "a zero-filled tail" => {
                    assert_eq!(expected.0.len(), 1500, "{name}: every frame listed, no empty one");
                    assert!(
                        matches!(&expected.1[..], [p] if p.reason.contains("bytes of zeros")),
                        "{name}: one range of zeros: {:?}",
                        expected.1
                    );
                }
                _ => assert!(!expected.1.is_empty(), "{name}: the damage shows"),
            }
            for region in [4096, 10_007, 65_536] {
                for workers in [2, 3] {
                    let (got, adopted, folded) = index(buf, region, workers);
                    assert_eq!(got, expected, "{name}: regions of {region} bytes, {workers} workers");
                    // Where nothing was damaged, the fold saw each frame of the index once.
                    if got.1.is_empty() {
                        assert_eq!(folded, got.0, "{name}: folded frames, regions of {region} bytes");
                    }
                    // Most regions are adopted; otherwise this test would prove nothing.
                    assert!(
                        adopted * region * 2 > buf.len(),
                        "{name}: {adopted} regions of {region} adopted"
                    );
                }
            }
        }
    }
}
