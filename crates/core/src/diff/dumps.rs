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
use crate::wire::scan;
use rayon::prelude::*;
use std::collections::{HashMap, VecDeque};
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

/// What frames are matched by: hashes (the bytes behind them are compared when a pair is made).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    /// The WAL message id (`MessageID`'s bytes, id and WAL name).
    Id(u64),
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
    /// The message bytes in the file.
    bytes: Range<usize>,
    type_name: String,
    collection: Option<i64>,
    timetick: Option<u64>,
}

/// A fast hash of bytes (FxHash's multiply-rotate over 8-byte words, then a final mix): keys
/// only need to be spread, and a collision only makes a pair whose bytes are then compared.
fn fast_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut x = [0u8; 8];
        x.copy_from_slice(w);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(x)).wrapping_mul(K);
    }
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    h = (h.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    // splitmix64's finaliser, so that nearby inputs land far apart.
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// Where the WAL message id sits in a frame: the `DumpMessagesResponse.message` field (when
/// frames are responses), then `ImmutableMessage.id`.
#[derive(Debug, Clone, Copy)]
struct IdPath {
    response_message: Option<u32>,
    id: u32,
}

impl IdPath {
    fn of(decoder: &FrameDecoder) -> Option<IdPath> {
        let t = decoder.message_type()?;
        let imm = decoder.pool().get_message_by_name(crate::wal::analyze::IMMUTABLE_MESSAGE)?;
        let id = imm.get_field_by_name("id")?.number();
        match t.full_name() {
            crate::wal::analyze::IMMUTABLE_MESSAGE => Some(IdPath { response_message: None, id }),
            crate::dump::auto::DUMP_RESPONSE => {
                Some(IdPath { response_message: Some(t.get_field_by_name("message")?.number()), id })
            }
            _ => None,
        }
    }

    /// The id's bytes (last occurrence, as a reader takes it), None when the frame has none.
    fn id_bytes<'b>(&self, frame: &'b [u8]) -> Option<&'b [u8]> {
        let imm = match self.response_message {
            Some(n) => scan::last_len(frame, n)?,
            None => frame,
        };
        scan::last_len(imm, self.id).filter(|b| !b.is_empty())
    }
}

fn read_infos(s: DumpSide<'_>, ids: Option<IdPath>, range: Range<usize>) -> Vec<Info> {
    let offsets = s.dump.index().offsets(range.clone());
    let start = range.start;
    let base = s.dump.bytes().as_ptr() as usize;
    range
        .into_par_iter()
        .with_min_len(64)
        .filter_map(|i| {
            let loc = s.dump.frame_at(i, *offsets.get(i - start)?)?;
            let bytes = s.dump.message_bytes(&loc).1;
            let at = bytes.as_ptr() as usize - base;
            let id = ids.and_then(|p| p.id_bytes(bytes)).map(fast_hash);
            let view = s.decoder.view_of(s.dump, loc, Detail::Counts);
            let (type_name, collection, timetick) = match view.wal {
                Some(w) => (w.type_name, w.collection, w.timetick),
                None => (
                    s.decoder
                        .message_type()
                        .map_or_else(|| "(no type)".to_string(), |d| d.name().to_string()),
                    None,
                    None,
                ),
            };
            let key = match (id, timetick) {
                (Some(id), _) => Key::Id(id),
                (None, Some(t)) => Key::Time(t, fast_hash(bytes)),
                (None, None) => Key::Content(fast_hash(bytes)),
            };
            Some(Info { index: i as u64, key, bytes: at..at + bytes.len(), type_name, collection, timetick })
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
        self.order.push_back((info.index, info.key));
        self.by_key.entry(info.key).or_default().push_back(info);
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

/// A pair, its WAL message id read for a pair that differs (the only ones shown by id; reading
/// the id's text for every frame would cost as much as the rest of the diff).
fn pair_of(kind: PairKind, a: Option<(Info, DumpSide<'_>)>, b: Option<(Info, DumpSide<'_>)>) -> FramePair {
    let (ia, ib) = (a.as_ref().map(|(i, _)| i.index), b.as_ref().map(|(i, _)| i.index));
    let Some((x, side)) = b.or(a) else {
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
    let message_id = match (kind, x.key) {
        (PairKind::Identical, _) | (_, Key::Time(..) | Key::Content(_)) => None,
        (_, Key::Id(_)) => usize::try_from(x.index)
            .ok()
            .and_then(|i| side.decoder.view_uncached(side.dump, i))
            .and_then(|v| v.wal)
            .map(|w| w.message_id)
            .filter(|id| !id.is_empty()),
    };
    FramePair {
        kind,
        a: ia,
        b: ib,
        type_name: x.type_name,
        collection: x.collection.map(|c| c.to_string()),
        message_id,
        timetick: x.timetick,
    }
}

/// A frame of A (`is_a`) or B arrives: the pair it makes with a frame waiting on the other
/// side, or it waits. A pair is identical when its message bytes are.
fn arrive(
    info: Info,
    is_a: bool,
    (pa, pb): (&mut Pending, &mut Pending),
    (sa, sb): (DumpSide<'_>, DumpSide<'_>),
) -> Option<FramePair> {
    let (mine, theirs) = if is_a { (pa, pb) } else { (pb, pa) };
    let Some(other) = theirs.take(&info.key) else {
        mine.put(info);
        return None;
    };
    let (x, y) = if is_a { (info, other) } else { (other, info) };
    let same = sa.dump.bytes().get(x.bytes.clone()) == sb.dump.bytes().get(y.bytes.clone());
    let kind = if same { PairKind::Identical } else { PairKind::Changed };
    Some(pair_of(kind, Some((x, sa)), Some((y, sb))))
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
    let (ids_a, ids_b) = (IdPath::of(a.decoder), IdPath::of(b.decoder));
    let (mut pa, mut pb) = (Pending::default(), Pending::default());
    let mut emit = |pair: FramePair, summary: &mut DumpDiffSummary| {
        summary.add(&pair);
        on_pair(pair);
    };
    // Chunk k+1 is read (on every core) while chunk k is merged here: the merge is the one part
    // that cannot be shared out, so it runs beside the reading.
    let read = |start: usize| -> Option<(Vec<Info>, Vec<Info>)> {
        if start >= na.max(nb) {
            return None;
        }
        let ra = start.min(na)..(start + CHUNK).min(na);
        let rb = start.min(nb)..(start + CHUNK).min(nb);
        Some(rayon::join(|| read_infos(a, ids_a, ra), || read_infos(b, ids_b, rb)))
    };
    let mut start = 0;
    let mut current = read(0);
    while let Some((xa, xb)) = current.take() {
        if control.is_cancelled() {
            return Err(DiffError::Cancelled);
        }
        for (side, s) in [(Side::A, a), (Side::B, b)] {
            s.dump.check_unchanged().map_err(|e| DiffError::Dump { side, reason: e.to_string() })?;
        }
        control.frames_read.fetch_add((xa.len() + xb.len()) as u64, Ordering::Relaxed);
        let mut next = None;
        rayon::in_place_scope(|scope| {
            scope.spawn(|_| next = read(start + CHUNK));
            let (mut ia, mut ib) = (xa.into_iter(), xb.into_iter());
            loop {
                let (x, y) = (ia.next(), ib.next());
                if x.is_none() && y.is_none() {
                    break;
                }
                if let Some(p) = x.and_then(|i| arrive(i, true, (&mut pa, &mut pb), (a, b))) {
                    emit(p, &mut summary);
                }
                if let Some(p) = y.and_then(|i| arrive(i, false, (&mut pa, &mut pb), (a, b))) {
                    emit(p, &mut summary);
                }
            }
        });
        start += CHUNK;
        let before = (start as u64).saturating_sub(window);
        pa.expire(before, |i| emit(pair_of(PairKind::OnlyA, Some((i, a)), None), &mut summary));
        pb.expire(before, |i| emit(pair_of(PairKind::OnlyB, None, Some((i, b))), &mut summary));
        current = next;
    }
    pa.expire(u64::MAX, |i| emit(pair_of(PairKind::OnlyA, Some((i, a)), None), &mut summary));
    pb.expire(u64::MAX, |i| emit(pair_of(PairKind::OnlyB, None, Some((i, b))), &mut summary));
    Ok(summary)
}

/// The message diff of frame `ia` of A and frame `ib` of B (the frame-level diff a pair opens).
/// Waits for both indexes.
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
    s.dump.wait_indexed();
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
