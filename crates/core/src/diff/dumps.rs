//! The dump diff: frames of two dumps aligned by WAL message id, else by timetick and content
//! hash, else by content hash alone, streamed over both indexes.
//!
//! Both dumps are read a chunk at a time (each chunk on every core, both sides at once) and
//! merged in frame order: a frame waits in a look-ahead window for its partner; one that has
//! waited [`DumpDiffControl::window`] frames is only on its side. Memory is the window's keys
//! and one chunk of views per side, whatever the dumps' size.

use super::{DiffError, DumpDiffSummary, FramePair, MessageDiff, PairKind, Side};
use crate::dump::DumpFile;
use crate::dump::view::FrameDecoder;
use crate::wal::Detail;
use rayon::prelude::*;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// One side of a dump diff: an opened dump and the decoder its frames are read with (as the
/// CLI's `inspect` and the window's dump tab hold them).
#[derive(Clone, Copy)]
pub struct DumpSide<'a> {
    pub dump: &'a DumpFile,
    pub decoder: &'a FrameDecoder,
}

/// How a dump diff is watched and stopped from another thread, and how far it looks ahead.
#[derive(Debug, Clone)]
pub struct DumpDiffControl {
    /// Set it to stop the diff: it ends with [`DiffError::Cancelled`] within a chunk of frames.
    pub cancel: Arc<AtomicBool>,
    /// Frames of A and B read so far, for a progress bar (out of both frame counts).
    pub frames_read: Arc<AtomicU64>,
    /// How many frames a frame may be out of place between A and B and still be matched (the
    /// look-ahead window, per side). Memory is bounded by this, not by the dumps' size.
    pub window: usize,
}

/// The default look-ahead: re-ordered ids within this many frames are matched.
pub const DEFAULT_WINDOW: usize = 65_536;

/// Frames read per side at a time.
const CHUNK: usize = 8192;

impl Default for DumpDiffControl {
    fn default() -> DumpDiffControl {
        DumpDiffControl { cancel: Arc::default(), frames_read: Arc::default(), window: DEFAULT_WINDOW }
    }
}

impl DumpDiffControl {
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// What frames are matched by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// The WAL message id as shown.
    Id(String),
    /// No id: the timetick and the content.
    Time(u64, u64),
    /// Neither: the content.
    Content(u64),
}

/// What the merge keeps of one frame.
#[derive(Debug, Clone)]
struct Info {
    index: u64,
    key: Key,
    /// The message bytes' hash and length: equal frames have equal ones.
    hash: u64,
    len: u64,
    type_name: String,
    collection: Option<i64>,
    timetick: Option<u64>,
}

/// The hash of a frame's message bytes (std's SipHash: fast enough, and no new dependency).
fn content_hash(bytes: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

fn read_infos(s: DumpSide<'_>, range: Range<usize>) -> Vec<Info> {
    let offsets = s.dump.index().offsets(range.clone());
    let start = range.start;
    range
        .into_par_iter()
        .with_min_len(64)
        .filter_map(|i| {
            let loc = s.dump.frame_at(i, *offsets.get(i - start)?)?;
            let bytes = s.dump.message_bytes(&loc).1;
            let hash = content_hash(bytes);
            let len = bytes.len() as u64;
            let view = s.decoder.view_of(s.dump, loc, Detail::Full);
            let (key, type_name, collection, timetick) = match view.wal {
                Some(w) => {
                    let key = if !w.message_id.is_empty() && !w.message_id.starts_with("invalid") {
                        Key::Id(w.message_id)
                    } else if let Some(t) = w.timetick {
                        Key::Time(t, hash)
                    } else {
                        Key::Content(hash)
                    };
                    (key, w.type_name, w.collection, w.timetick)
                }
                None => {
                    let t = s
                        .decoder
                        .message_type()
                        .map_or_else(|| "(no type)".to_string(), |d| d.name().to_string());
                    (Key::Content(hash), t, None, None)
                }
            };
            Some(Info { index: i as u64, key, hash, len, type_name, collection, timetick })
        })
        .collect()
}

/// Frames of one side waiting for their partner, oldest first.
#[derive(Default)]
struct Pending {
    by_key: HashMap<Key, VecDeque<Info>>,
    /// (index, key) in arrival order; entries already matched are skipped when met.
    order: VecDeque<(u64, Key)>,
}

impl Pending {
    fn take(&mut self, key: &Key) -> Option<Info> {
        let q = self.by_key.get_mut(key)?;
        let found = q.pop_front();
        if q.is_empty() {
            self.by_key.remove(key);
        }
        found
    }

    fn put(&mut self, info: Info) {
        self.order.push_back((info.index, info.key.clone()));
        self.by_key.entry(info.key.clone()).or_default().push_back(info);
    }

    /// Frames that arrived before index `before` and are still waiting: no partner came.
    fn expire(&mut self, before: u64, mut out: impl FnMut(Info)) {
        while let Some((index, _)) = self.order.front() {
            if *index >= before {
                break;
            }
            let Some((index, key)) = self.order.pop_front() else { break };
            let Some(q) = self.by_key.get_mut(&key) else { continue };
            if q.front().is_some_and(|i| i.index == index) {
                if let Some(info) = q.pop_front() {
                    out(info);
                }
                if q.is_empty() {
                    self.by_key.remove(&key);
                }
            }
        }
    }
}

fn pair_of(kind: PairKind, a: Option<&Info>, b: Option<&Info>) -> FramePair {
    let Some(x) = b.or(a) else {
        return FramePair {
            kind,
            a: None,
            b: None,
            type_name: String::new(),
            collection: None,
            message_id: None,
            timetick: None,
        };
    };
    FramePair {
        kind,
        a: a.map(|i| i.index),
        b: b.map(|i| i.index),
        type_name: x.type_name.clone(),
        collection: x.collection.map(|c| c.to_string()),
        message_id: match &x.key {
            Key::Id(id) => Some(id.clone()),
            _ => None,
        },
        timetick: x.timetick,
    }
}

/// A frame of A (`is_a`) or B arrives: the pair it makes with a frame waiting on the other
/// side, or it waits.
fn arrive(info: Info, is_a: bool, pa: &mut Pending, pb: &mut Pending) -> Option<FramePair> {
    let (mine, theirs) = if is_a { (pa, pb) } else { (pb, pa) };
    let Some(other) = theirs.take(&info.key) else {
        mine.put(info);
        return None;
    };
    let (x, y) = if is_a { (&info, &other) } else { (&other, &info) };
    let kind = if x.hash == y.hash && x.len == y.len { PairKind::Identical } else { PairKind::Changed };
    Some(pair_of(kind, Some(x), Some(y)))
}

/// Diffs two dumps frame by frame: each pair (identical ones too) goes to `on_pair` as it is
/// found, roughly in frame order (a frame only on one side once its window has passed); the
/// counts come back at the end. Waits for both indexes first. Frames are matched by WAL
/// message id; frames without one by timetick and content; others by content alone (so a
/// changed frame without an id is one only in A and one only in B).
pub fn diff_dumps(
    a: DumpSide<'_>,
    b: DumpSide<'_>,
    control: &DumpDiffControl,
    mut on_pair: impl FnMut(FramePair),
) -> Result<DumpDiffSummary, DiffError> {
    a.dump.wait_indexed();
    b.dump.wait_indexed();
    let (na, nb) = (a.dump.frame_count(), b.dump.frame_count());
    let mut summary = DumpDiffSummary {
        a_frames: na as u64,
        b_frames: nb as u64,
        a_damaged: a.dump.problems().len() as u64,
        b_damaged: b.dump.problems().len() as u64,
        ..DumpDiffSummary::default()
    };
    let window = control.window.max(1) as u64;
    let (mut pa, mut pb) = (Pending::default(), Pending::default());
    let mut emit = |pair: FramePair, summary: &mut DumpDiffSummary| {
        summary.add(&pair);
        on_pair(pair);
    };
    let mut start = 0;
    while start < na.max(nb) {
        if control.is_cancelled() {
            return Err(DiffError::Cancelled);
        }
        let ra = start.min(na)..(start + CHUNK).min(na);
        let rb = start.min(nb)..(start + CHUNK).min(nb);
        let (xa, xb) = rayon::join(|| read_infos(a, ra), || read_infos(b, rb));
        for (side, s) in [(Side::A, a), (Side::B, b)] {
            s.dump.check_unchanged().map_err(|e| DiffError::Dump { side, reason: e.to_string() })?;
        }
        control.frames_read.fetch_add((xa.len() + xb.len()) as u64, Ordering::Relaxed);
        let (mut ia, mut ib) = (xa.into_iter(), xb.into_iter());
        loop {
            let (x, y) = (ia.next(), ib.next());
            if x.is_none() && y.is_none() {
                break;
            }
            if let Some(p) = x.and_then(|i| arrive(i, true, &mut pa, &mut pb)) {
                emit(p, &mut summary);
            }
            if let Some(p) = y.and_then(|i| arrive(i, false, &mut pa, &mut pb)) {
                emit(p, &mut summary);
            }
        }
        start += CHUNK;
        let before = (start as u64).saturating_sub(window);
        pa.expire(before, |i| emit(pair_of(PairKind::OnlyA, Some(&i), None), &mut summary));
        pb.expire(before, |i| emit(pair_of(PairKind::OnlyB, None, Some(&i)), &mut summary));
    }
    pa.expire(u64::MAX, |i| emit(pair_of(PairKind::OnlyA, Some(&i), None), &mut summary));
    pb.expire(u64::MAX, |i| emit(pair_of(PairKind::OnlyB, None, Some(&i)), &mut summary));
    Ok(summary)
}

/// The message diff of frame `ia` of A and frame `ib` of B (the frame-level diff a pair opens).
pub fn diff_frames(a: DumpSide<'_>, ia: u64, b: DumpSide<'_>, ib: u64) -> Result<MessageDiff, DiffError> {
    let ta = a.decoder.message_type();
    let tb = b.decoder.message_type();
    if let (Some(x), Some(y)) = (ta, tb)
        && x.full_name() != y.full_name()
    {
        return Err(DiffError::TypeMismatch { a: x.full_name().to_string(), b: y.full_name().to_string() });
    }
    let xa = frame_bytes(a, Side::A, ia)?;
    let xb = frame_bytes(b, Side::B, ib)?;
    super::diff_messages(ta.or(tb), &xa, &xb)
}

/// The message bytes of frame `i`, copied (a mapped file may be cut while we diff).
pub(crate) fn frame_bytes(s: DumpSide<'_>, side: Side, i: u64) -> Result<Vec<u8>, DiffError> {
    let count = s.dump.frame_count() as u64;
    let loc = usize::try_from(i).ok().and_then(|i| s.dump.frame(i)).ok_or(DiffError::NoFrame {
        side,
        index: i,
        count,
    })?;
    let bytes = s.dump.message_bytes(&loc).1.to_vec();
    s.dump.check_unchanged().map_err(|e| DiffError::Dump { side, reason: e.to_string() })?;
    Ok(bytes)
}
