//! The dump diff: frames of two dumps aligned by WAL message id, else by timetick and content
//! hash, streamed over both indexes.

use super::{DiffError, DumpDiffSummary, FramePair, MessageDiff, PairKind, Side};
use crate::dump::DumpFile;
use crate::dump::view::FrameDecoder;
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

/// Diffs two dumps frame by frame: each pair (identical ones too) goes to `on_pair` as it is
/// found, roughly in A's order; the counts come back at the end. Waits for both indexes.
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
    for i in 0..na.max(nb) {
        if control.is_cancelled() {
            return Err(DiffError::Cancelled);
        }
        let bytes = |s: DumpSide<'_>| s.dump.frame(i).map(|l| s.dump.message_bytes(&l).1.to_vec());
        let (x, y) = (bytes(a), bytes(b));
        let kind = match (&x, &y) {
            (Some(x), Some(y)) if x == y => PairKind::Identical,
            (Some(_), Some(_)) => PairKind::Changed,
            (Some(_), None) => PairKind::OnlyA,
            _ => PairKind::OnlyB,
        };
        let pair = FramePair {
            kind,
            a: x.as_ref().map(|_| i as u64),
            b: y.as_ref().map(|_| i as u64),
            type_name: String::new(),
            collection: None,
            message_id: None,
            timetick: None,
        };
        summary.add(&pair);
        on_pair(pair);
        control.frames_read.fetch_add(2, Ordering::Relaxed);
    }
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
fn frame_bytes(s: DumpSide<'_>, side: Side, i: u64) -> Result<Vec<u8>, DiffError> {
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
