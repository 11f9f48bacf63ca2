//! Chunk groups in a dump file (see [`crate::wal::chunk`]): the chunk facts of a frame read
//! straight from its wire bytes (no copy of the payload), and the group a chunk belongs to,
//! found among the frames around it and joined when it is whole.
//!
//! Owns: finding a group's frames in a dump. Must never: read more than [`SEARCH_FRAMES`]
//! frames either side of the chunk asked about, or copy a payload before the group is whole.

use super::DumpFile;
use crate::wal::chunk::{ChunkMark, Grouper, Pushed, mark_of};
use crate::wire::scan::{StringMap, Value, fields, first_len};

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
    let imm = if nested { first_len(bytes, 2)? } else { bytes };
    let mut payload: &[u8] = &[];
    let mut props = StringMap::default();
    for item in fields(imm) {
        match item.ok()? {
            (2, Value::Len(b)) => payload = b,
            (3, Value::Len(entry)) => props.insert_entry(entry)?,
            _ => {}
        }
    }
    let get = |k: &str| props.get(k).and_then(|v| std::str::from_utf8(v).ok());
    Some(FrameChunk {
        mark: mark_of(get),
        type_number: get("_t").and_then(|t| t.parse().ok()),
        timetick: get("_tt").and_then(|t| crate::wal::parse_base36_u64(t).ok()),
        payload,
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
    let chunk_at = |f: usize| dump.frame(f).and_then(|loc| frame_chunk(dump.message_bytes(&loc).1, nested));
    let Some(Ok(mark)) = chunk_at(i)?.mark else { return None };
    let first = i.saturating_sub(SEARCH_FRAMES);
    let last = (i + SEARCH_FRAMES).min(dump.frame_count().saturating_sub(1));
    // One pass in WAL order over the frames of this timetick, as a reader of the log would.
    let mut grouper = Grouper::default();
    let mut found =
        FoundGroup { mark, members: Vec::new(), repeats: Vec::new(), broken: None, payload: None };
    let mut slots: std::collections::BTreeMap<u32, usize> = Default::default();
    for f in first..=last {
        let Some(c) = chunk_at(f) else { continue };
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
            Pushed::Complete(g) if g.members.contains(&i) => {
                found.members = g.members.into_iter().map(Some).collect();
                break;
            }
            // A whole group without the chunk asked about (its timetick reused): keep looking.
            Pushed::Complete(_) => slots.clear(),
            Pushed::Broken { reason, .. } => {
                found.broken = Some(reason);
                break;
            }
            Pushed::Plain | Pushed::Malformed { .. } => {}
        }
    }
    if found.members.is_empty() {
        found.members = (0..mark.total).map(|x| slots.get(&x).copied()).collect();
    }
    if found.broken.is_none() && found.members.iter().all(Option::is_some) {
        let mut payload = Vec::new();
        for f in found.members.iter().flatten() {
            payload.extend_from_slice(chunk_at(*f)?.payload);
        }
        // Bytes read past a cut are zeros: a file changed meanwhile gives no joined payload.
        if dump.check_unchanged().is_ok() {
            found.payload = Some(payload);
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec;
    use crate::schema::SchemaSet;

    /// A varint-delimited dump of DumpMessagesResponse frames: (`_ci`, `_ct`, `_tt`, payload).
    fn dump_of(dir: &std::path::Path, frames: &[(&str, &str, &str, &[u8])]) -> DumpFile {
        use base64::Engine;
        let set = SchemaSet::builtin();
        let desc = set.message("milvus.proto.milvus.DumpMessagesResponse").expect("built in");
        let mut out = Vec::new();
        for (ci, ct, tt, payload) in frames {
            let payload = base64::engine::general_purpose::STANDARD.encode(payload);
            let json = format!(
                r#"{{"message": {{"id": {{"id": "rz"}}, "payload": "{payload}", "properties": {{"_t": "2", "_v": "1", "_tt": "{tt}", "_ci": "{ci}", "_ct": "{ct}"}}}}}}"#
            );
            let bytes = codec::encode(&codec::from_json(&desc, &json).expect("frame JSON"));
            crate::dump::framing::write_frame(crate::dump::Framing::VarintDelimited, &bytes, &mut out);
        }
        let path = dir.join("chunks.dump");
        std::fs::write(&path, out).expect("write the dump");
        let dump = DumpFile::open(&path, Default::default()).expect("open");
        dump.wait_indexed();
        dump
    }

    #[test]
    fn the_group_found_is_the_one_holding_the_chunk_asked_about() {
        let dir = tempfile::tempdir().expect("tempdir");
        // Timetick 2s written twice: a whole group, then one missing its chunk 2.
        let dump =
            dump_of(dir.path(), &[("0", "2", "2s", b"ab"), ("1", "2", "2s", b"cd"), ("0", "2", "2s", b"xy")]);
        let whole = find_group(&dump, 0, true).expect("a chunk");
        assert_eq!(whole.members, vec![Some(0), Some(1)]);
        assert_eq!(whole.payload.as_deref(), Some(&b"abcd"[..]));
        let cut = find_group(&dump, 2, true).expect("a chunk");
        assert_eq!(cut.members, vec![Some(2), None], "{}", cut.describe());
        assert_eq!(cut.payload, None);
        assert!(cut.describe().starts_with("chunk 2 of 2 missing"), "{}", cut.describe());
    }
}
