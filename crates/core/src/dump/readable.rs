//! Whether anything in a dump could be read as the type it is read as: a frame that holds a
//! message, and whose message decodes. `inspect` and `export` fail (exit non-zero, and `export`
//! writes nothing) when nothing could: a file of zeros or one damaged throughout is not a dump
//! of empty frames that went well.
//!
//! Owns: that rule and its words. Must never: call a file unreadable that has one frame whose
//! message decodes, or an empty file (a dump of no frames is a dump).

use super::reader::DumpFile;
use super::view::{FrameDecoder, FrameStatus};
use crate::wal::Detail;
use std::ops::ControlFlow;

/// Why nothing in `dump` could be read as the decoder's type, in words; `None` when a frame
/// could (the scan stops at the first one: for an ordinary dump, the first frame), or when the
/// file is empty. Waits for the index.
pub fn nothing_readable(dump: &DumpFile, decoder: &FrameDecoder) -> Option<String> {
    dump.wait_indexed();
    if dump.is_empty() {
        return None;
    }
    let mut found = false;
    let read = |v: super::view::FrameView| {
        let holds_message =
            dump.frame_at(v.index, v.offset).is_some_and(|loc| !dump.message_bytes(&loc).1.is_empty());
        holds_message && !matches!(v.status, FrameStatus::Undecodable { .. })
    };
    let frames = dump.frame_count();
    let _ = super::scan::for_each_view(dump, decoder, 0..frames, Detail::Counts, read, |ok| {
        found |= ok;
        if found { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    });
    if found {
        return None;
    }
    let what =
        decoder.message_type().map_or_else(|| "protobuf messages".to_string(), |t| t.full_name().to_string());
    let problems = dump.problems();
    let damaged: u64 = problems.iter().map(|p| p.len).sum();
    let why = match (frames, problems.as_slice()) {
        (0, [only]) => only.reason.clone(),
        (0, _) => format!("no frames; {} damaged range(s) over {damaged} bytes", problems.len()),
        (n, _) => format!(
            "{n} frame(s), none holding a message that decodes; {} damaged range(s) over {damaged} bytes",
            problems.len()
        ),
    };
    Some(format!(
        "nothing in {} could be read as {what}: {why}. If the file holds something else, say what with --type and --framing",
        dump.path.display()
    ))
}
