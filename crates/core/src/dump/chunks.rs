//! Chunk groups in a dump file (see [`crate::wal::chunk`]): the chunk facts of a frame read
//! straight from its wire bytes (no copy of the payload), and the group a chunk belongs to,
//! found among the frames around it and joined when it is whole.
//!
//! Owns: finding a group's frames in a dump. Must never: read more than [`SEARCH_FRAMES`]
//! frames either side of the chunk asked about, or copy a payload before the group is whole.

use super::DumpFile;
use crate::wal::chunk::{ChunkMark, Grouper, Pushed, mark_of};
use crate::wire::scan::{Value, fields};

/// How far from a chunk its group is looked for, each way (upstream writes a group's chunks
/// one after the other; other writers' records may come between them).
pub const SEARCH_FRAMES: usize = 4096;

/// What a frame says about chunking, read from its wire bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameChunk<'a> {
    pub mark: Option<Result<ChunkMark, String>>,
    /// `_t` when it reads as a number.
    pub type_number: Option<i32>,
    /// `_tt` when it reads (a TimeTick's ends the groups before it).
    pub timetick: Option<u64>,
    pub payload: &'a [u8],
}

/// Reads `bytes`, a `DumpMessagesResponse` (`nested`) or an `ImmutableMessage`. None when it
/// is neither (the caller's strict decode says why).
pub fn frame_chunk(bytes: &[u8], nested: bool) -> Option<FrameChunk<'_>> {
    let imm = if nested { len_field(bytes, 2)? } else { bytes };
    let mut payload: &[u8] = &[];
    let (mut ci, mut ct, mut t, mut tt) = (None, None, None, None);
    for item in fields(imm) {
        match item.ok()? {
            (2, Value::Len(b)) => payload = b,
            (3, Value::Len(entry)) => {
                let (mut k, mut v) = ("", "");
                for f in fields(entry) {
                    match f.ok()? {
                        (1, Value::Len(b)) => k = std::str::from_utf8(b).ok()?,
                        (2, Value::Len(b)) => v = std::str::from_utf8(b).ok()?,
                        _ => {}
                    }
                }
                match k {
                    "_ci" => ci = Some(v),
                    "_ct" => ct = Some(v),
                    "_t" => t = Some(v),
                    "_tt" => tt = Some(v),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let get = |k: &str| match k {
        "_ci" => ci,
        "_ct" => ct,
        "_tt" => tt,
        _ => None,
    };
    Some(FrameChunk {
        mark: mark_of(get),
        type_number: t.and_then(|t| t.parse().ok()),
        timetick: tt.and_then(|t| crate::wal::parse_base36_u64(t).ok()),
        payload,
    })
}

fn len_field(bytes: &[u8], number: u32) -> Option<&[u8]> {
    fields(bytes).find_map(|f| match f {
        Ok((n, Value::Len(b))) if n == number => Some(b),
        _ => None,
    })
}

/// The group of one chunk, as found in its dump.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundGroup {
    pub mark: ChunkMark,
    /// Frame of each chunk by index (None: not found near the chunk asked about).
    pub members: Vec<Option<usize>>,
    /// Frames dropped as byte-identical repeats of a chunk.
    pub repeats: Vec<usize>,
    /// Why the group cannot be trusted, when it cannot (other bytes for one index, a changed
    /// total): its members are then the ones seen before that.
    pub broken: Option<String>,
    /// The joined payload, when every chunk is there and the group is not broken.
    pub payload: Option<Vec<u8>>,
}

impl FoundGroup {
    /// `"3 chunks: frames 10, 11, 13"` or `"chunks 2 of 3 missing (found: frames 10, 13)"`.
    pub fn describe(&self) -> String {
        let found: Vec<String> = self.members.iter().flatten().map(|f| f.to_string()).collect();
        let missing: Vec<String> = self
            .members
            .iter()
            .enumerate()
            .filter(|(_, m)| m.is_none())
            .map(|(i, _)| (i + 1).to_string())
            .collect();
        let mut s = if missing.is_empty() {
            format!("{} chunks: frames {}", self.members.len(), found.join(", "))
        } else {
            let noun = if missing.len() == 1 { "chunk" } else { "chunks" };
            format!(
                "{noun} {} of {} missing within {SEARCH_FRAMES} frames either side (found: frames {})",
                missing.join(", "),
                self.members.len(),
                if found.is_empty() { "none".to_string() } else { found.join(", ") }
            )
        };
        if !self.repeats.is_empty() {
            let r: Vec<String> = self.repeats.iter().map(|f| f.to_string()).collect();
            s.push_str(&format!("; repeated (dropped): frames {}", r.join(", ")));
        }
        if let Some(b) = &self.broken {
            s.push_str(&format!("; broken: {b}"));
        }
        s
    }
}

/// The group of the chunk in frame `i` of `dump` (whose frames are `DumpMessagesResponse`s when
/// `nested`), or None when frame `i` is not a chunk with readable markers.
pub fn find_group(dump: &DumpFile, i: usize, nested: bool) -> Option<FoundGroup> {
    let read = |f: usize| {
        let loc = dump.frame(f)?;
        let (_, bytes) = dump.message_bytes(&loc);
        frame_chunk(bytes, nested).map(|c| (c.mark, c.payload.len()))
    };
    let (Some(Ok(mark)), _) = read(i)? else { return None };
    let first = i.saturating_sub(SEARCH_FRAMES);
    let last = (i + SEARCH_FRAMES).min(dump.frame_count().saturating_sub(1));
    // One pass in WAL order over the frames of this timetick, as a reader of the log would.
    let mut grouper = Grouper::default();
    let mut found =
        FoundGroup { mark, members: Vec::new(), repeats: Vec::new(), broken: None, payload: None };
    let mut slots: std::collections::BTreeMap<u32, usize> = Default::default();
    for f in first..=last {
        let Some(loc) = dump.frame(f) else { break };
        let (_, bytes) = dump.message_bytes(&loc);
        let Some(c) = frame_chunk(bytes, nested) else { continue };
        let Some(Ok(m)) = &c.mark else { continue };
        if m.tt != mark.tt {
            continue;
        }
        match grouper.push(f, c.mark.clone(), None, c.payload) {
            Pushed::Held => {
                slots.insert(m.index, f);
            }
            Pushed::Duplicate { dropped } => {
                found.repeats.push(dropped);
                slots.insert(m.index, f);
            }
            Pushed::Complete(g) => {
                found.members = g.members.into_iter().map(Some).collect();
                if f >= i {
                    break;
                }
                // A whole group before the one asked about (the same timetick reused): keep looking.
                slots.clear();
            }
            Pushed::Broken { reason, .. } => {
                found.broken = Some(reason);
                break;
            }
            Pushed::Plain | Pushed::Malformed { .. } => {}
        }
    }
    if found.members.is_empty() || found.members.len() != mark.total as usize {
        found.members = (0..mark.total).map(|x| slots.get(&x).copied()).collect();
    }
    if found.broken.is_none() && found.members.iter().all(Option::is_some) {
        let mut payload = Vec::new();
        for f in found.members.iter().flatten() {
            let loc = dump.frame(*f)?;
            let (_, bytes) = dump.message_bytes(&loc);
            payload.extend_from_slice(frame_chunk(bytes, nested)?.payload);
        }
        // Bytes read past a cut are zeros: a file changed meanwhile gives no joined payload.
        if dump.check_unchanged().is_ok() {
            found.payload = Some(payload);
        }
    }
    Some(found)
}
