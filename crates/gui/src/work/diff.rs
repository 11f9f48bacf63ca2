//! The diff pane's work, run as jobs: two messages diffed (a file on disk read first) and both
//! decoded for the pane; two dumps opened (or the open tabs' taken) and diffed frame by frame,
//! with progress and a stop; one pair of frames of two dumps diffed on demand. The library does
//! the diffing (`walscope_core::diff`); this turns its answer into what the pane shows.
//!
//! Must never: run on the UI thread, or hold a string per frame pair (see `PairRows`).

use crate::dump::DumpFile;
use crate::dump::view::FrameDecoder;
use crate::jobs::JobCtx;
use crate::panes::diff::dump_view::{DumpCompare, DumpHandle, PairRows};
use crate::panes::diff::{ChangeKind, ChangeRow, DiffFailed, MessageCompare, Side};
use crate::panes::file::detail::{DetailSource, MessageDetail};
use crate::schema::SchemaSet;
use walscope_core::diff::{self as lib, DumpDiffControl, DumpSide};

/// A side's message as read: its bytes, its type's name (if it has one) and its label.
struct Read {
    bytes: Vec<u8>,
    type_name: Option<String>,
    label: String,
}

/// Reads a side's message (a file on disk here, in the job).
fn message_of(side: Side) -> Result<Read, DiffFailed> {
    match side {
        Side::Message { label, type_name, bytes } => Ok(Read { bytes, type_name, label }),
        Side::MessageFile { path } => {
            let bytes =
                std::fs::read(&path).map_err(|source| DiffFailed::Read { path: path.clone(), source })?;
            Ok(Read { bytes, type_name: None, label: crate::panes::diff::sides::file_name(&path) })
        }
        Side::Dump { .. } => Err(DiffFailed::Mixed),
    }
}

/// Diffs two messages: of A's type (or B's), schema-less when neither has one.
pub fn messages(set: &SchemaSet, a: Side, b: Side) -> Result<Box<MessageCompare>, DiffFailed> {
    let Read { bytes: xa, type_name: ta, label: la } = message_of(a)?;
    let Read { bytes: xb, type_name: tb, label: lb } = message_of(b)?;
    if let (Some(x), Some(y)) = (&ta, &tb)
        && x != y
    {
        return Err(DiffFailed::TypesDiffer { a: x.clone(), b: y.clone() });
    }
    let desc = match ta.or(tb) {
        Some(t) => Some(set.message(&t)?),
        None => None,
    };
    let diff = lib::diff_messages(desc.as_ref(), &xa, &xb)?;
    let pool = set.pool();
    let da = MessageDetail::of(pool, desc.as_ref(), xa, &[], DetailSource::Message { label: la });
    let db = MessageDetail::of(pool, desc.as_ref(), xb, &[], DetailSource::Message { label: lb });
    Ok(Box::new(MessageCompare::new(da, db, rows(diff))))
}

/// The library's changes as the pane lists them.
fn rows(diff: lib::MessageDiff) -> Vec<ChangeRow> {
    diff.changes
        .into_iter()
        .map(|c| ChangeRow {
            kind: c.kind,
            old: match (c.kind, c.moved) {
                (ChangeKind::Moved, Some((from, to))) => Some(format!("at [{from}] in A, [{to}] in B")),
                _ => c.old,
            },
            new: if c.kind == ChangeKind::Moved { None } else { c.new },
            path: c.path,
            type_name: c.type_name,
            a_span: c.a_span,
            b_span: c.b_span,
            tree_path: String::new(),
        })
        .collect()
}

/// Opens a dump for a diff as a file tab would (its framing and type detected), without a row
/// loader: the diff reads frames itself.
pub fn open_dump(path: &std::path::Path, set: &SchemaSet) -> Result<DumpHandle, DiffFailed> {
    let source = crate::dump::source::Source::open(path)?;
    let (desc, framing, _) = crate::dump::auto::choose(path, source.head(), set);
    let opts = crate::dump::OpenOptions { framing, message_type: desc.clone(), ..Default::default() };
    let dump = std::sync::Arc::new(DumpFile::open_source(path, source, opts)?);
    let decoder = std::sync::Arc::new(FrameDecoder::new(set.pool().clone(), desc, 8192));
    Ok(DumpHandle { dump, decoder })
}

/// Pairs between two progress reports (and stop checks).
const REPORT_EVERY: u64 = 4096;

/// Diffs two dumps frame by frame (each opened here unless the window has it open already).
pub fn dumps(
    ctx: &JobCtx,
    set: &SchemaSet,
    (a, pa): (Option<DumpHandle>, std::path::PathBuf),
    (b, pb): (Option<DumpHandle>, std::path::PathBuf),
) -> Result<Box<DumpCompare>, DiffFailed> {
    ctx.report(None, "opening the dumps");
    let a = match a {
        Some(h) => h,
        None => open_dump(&pa, set)?,
    };
    let b = match b {
        Some(h) => h,
        None => open_dump(&pb, set)?,
    };
    ctx.report(None, "indexing the dumps");
    let control = DumpDiffControl::default();
    let total = (a.dump.frame_count() + b.dump.frame_count()).max(1) as f32;
    let mut pairs = PairRows::default();
    let mut n = 0u64;
    let summary = lib::diff_dumps(
        DumpSide { dump: &a.dump, decoder: &a.decoder },
        DumpSide { dump: &b.dump, decoder: &b.decoder },
        &control,
        |p| {
            pairs.push(p);
            n += 1;
            if n.is_multiple_of(REPORT_EVERY) {
                if ctx.cancel.is_cancelled() {
                    control.cancel();
                }
                let read = control.frames_read.load(std::sync::atomic::Ordering::Relaxed) as f32;
                let words = format!("comparing: {} pairs", walscope_core::fmt::count(n));
                ctx.report(Some((read / total).min(1.0)), words);
            }
        },
    );
    let summary = match summary {
        Err(lib::DiffError::Cancelled) => return Err(DiffFailed::Stopped),
        other => other?,
    };
    Ok(Box::new(DumpCompare::new(summary, pairs, a, b)))
}

/// Diffs frame `ia` of A with frame `ib` of B, both decoded for the pane.
pub fn pair(a: &DumpHandle, ia: usize, b: &DumpHandle, ib: usize) -> Result<Box<MessageCompare>, DiffFailed> {
    let diff = lib::diff_frames(
        DumpSide { dump: &a.dump, decoder: &a.decoder },
        ia as u64,
        DumpSide { dump: &b.dump, decoder: &b.decoder },
        ib as u64,
    )?;
    let detail = |h: &DumpHandle, i: usize| -> Result<MessageDetail, DiffFailed> {
        let loc =
            h.dump.frame(i).ok_or_else(|| DiffFailed::NoFrame { path: h.dump.path.clone(), index: i })?;
        let bytes = h.dump.message_bytes(&loc).1.to_vec();
        MessageDetail::build(&h.dump, &h.decoder, i, bytes, &[])
            .ok_or_else(|| DiffFailed::NoFrame { path: h.dump.path.clone(), index: i })
    };
    Ok(Box::new(MessageCompare::new(detail(a, ia)?, detail(b, ib)?, rows(diff))))
}
