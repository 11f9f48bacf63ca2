//! What a salvage dump holds, read back from the file: frames, bytes, first and last timetick
//! (UTC), counts per message type, transactions that arrived as one opaque `Txn` (999) frame
//! with an empty body (servers before 2.6.20: their data is lost in this dump), encrypted
//! frames (`_ch`: ciphertext, not damage), gaps in the timeticks longer than a threshold, and
//! frames that go back in time; with the manifest: the checkpoint, the skip choice, and how many
//! frames the new primary already has. Every finding also comes as a sentence ([`DumpReport::notes`]).
//!
//! Must never: load a whole dump into memory (the file is mapped and read frame by frame), or
//! give up on a damaged frame (it is counted and named, and reading goes on where the framing
//! allows).

use super::job::{RESPONSE_TYPE, SalvageError, SalvageRecord};
use crate::dump::framing::{HeaderFault, read_header};
use crate::dump::{Framing, Manifest, manifest_path};
use crate::schema::SchemaSet;
use crate::time::{format_timetick, timetick_to_millis};
use crate::wal::{message_type_name, parse_base36_u64};
use prost_reflect::{DynamicMessage, MapKey, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A stretch of WAL time with no message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    /// The frame before the gap (0-based).
    pub after_frame: u64,
    pub from_timetick: u64,
    pub to_timetick: u64,
}

impl Gap {
    pub fn duration(&self) -> Duration {
        Duration::from_millis(
            timetick_to_millis(self.to_timetick).saturating_sub(timetick_to_millis(self.from_timetick)),
        )
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct DumpReport {
    pub file: PathBuf,
    pub frames: u64,
    pub bytes: u64,
    pub first_timetick: Option<u64>,
    pub last_timetick: Option<u64>,
    /// Frames per type name (raw number when the schema does not name it).
    pub types: BTreeMap<String, u64>,
    /// Frames of type `Txn` (999) whose body is empty: transactions whose data is lost here.
    pub opaque_txn_frames: Vec<u64>,
    pub encrypted_frames: u64,
    pub gaps: Vec<Gap>,
    /// Frames whose timetick is below the previous frame's.
    pub backwards: u64,
    /// Frames that are not a readable DumpMessagesResponse, with why (first 20).
    pub undecodable: Vec<(u64, String)>,
    pub undecodable_count: u64,
    /// Bytes after the last complete frame.
    pub truncated_tail: u64,
    pub manifest: Option<Manifest>,
    pub record: Option<SalvageRecord>,
    /// Frames at or below the checkpoint's timetick (already on the new primary; kept only
    /// when the salvage did not skip them).
    pub replicated_frames: u64,
    pub notes: Vec<String>,
}

impl DumpReport {
    pub fn first_utc(&self) -> Option<String> {
        self.first_timetick.map(|t| format!("{} UTC", format_timetick(t)))
    }

    pub fn last_utc(&self) -> Option<String> {
        self.last_timetick.map(|t| format!("{} UTC", format_timetick(t)))
    }

    /// True when something in the dump needs the operator's attention.
    pub fn has_findings(&self) -> bool {
        !self.opaque_txn_frames.is_empty() || self.undecodable_count > 0 || self.truncated_tail > 0
    }
}

#[derive(Debug, Clone, Copy)]
pub struct AnalyzeOptions {
    /// Gaps in WAL time longer than this are listed.
    pub gap: Duration,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions { gap: Duration::from_secs(60) }
    }
}

fn prop(m: &DynamicMessage, k: &str) -> Option<String> {
    match m.get_field_by_name("properties").as_deref() {
        Some(Value::Map(map)) => {
            map.get(&MapKey::String(k.into())).and_then(|v| v.as_str().map(str::to_string))
        }
        _ => None,
    }
}

/// Reads the dump at `path` (varint-delimited DumpMessagesResponse frames) and its manifest.
/// Blocking: call it from a worker thread (`spawn_blocking`).
pub fn analyze_dump(path: &Path, options: AnalyzeOptions) -> Result<DumpReport, SalvageError> {
    let file_err = |reason: String| SalvageError::File { path: path.display().to_string(), reason };
    let file = std::fs::File::open(path).map_err(|e| file_err(e.to_string()))?;
    let len = file.metadata().map_err(|e| file_err(e.to_string()))?.len();
    // Mapped through the dump mapping, so a dump cut short under the report reads as zeros
    // there (never a crash) and is caught by the check after the walk.
    let map = if len == 0 {
        None
    } else {
        Some(crate::dump::mapping::Mapping::map(file).map_err(|e| file_err(e.to_string()))?)
    };
    let buf: &[u8] = map.as_ref().map_or(&[], |m| &m.bytes()[..len as usize]);
    let set = SchemaSet::shared_builtin();
    let desc = set.message(RESPONSE_TYPE).map_err(|e| SalvageError::Task(e.to_string()))?;
    let manifest = Manifest::load(&manifest_path(path)).ok();
    let record = manifest.as_ref().and_then(SalvageRecord::of);
    let ckpt_tt = record.as_ref().and_then(|r| r.checkpoint.as_ref().map(|c| c.time_tick));
    let mut r = DumpReport { file: path.to_path_buf(), bytes: len, ..Default::default() };
    let (mut pos, mut prev_tt) = (0usize, None::<u64>);
    while pos < buf.len() {
        let header = match read_header(buf, pos, Framing::VarintDelimited) {
            Ok(h) => h,
            Err(HeaderFault::Truncated { .. }) => {
                r.truncated_tail = (buf.len() - pos) as u64;
                break;
            }
            Err(HeaderFault::Invalid(why)) => {
                r.undecodable_count += 1;
                r.undecodable.push((r.frames, format!("offset {pos}: {why}; the rest is not read")));
                break;
            }
        };
        let body = &buf[pos + header.header_len as usize..pos + header.total() as usize];
        pos += header.total() as usize;
        let index = r.frames;
        r.frames += 1;
        let message = DynamicMessage::decode(desc.clone(), body)
            .ok()
            .and_then(|f| f.get_field_by_name("message").and_then(|v| v.as_message().cloned()));
        let Some(m) = message else {
            r.undecodable_count += 1;
            if r.undecodable.len() < 20 {
                r.undecodable.push((index, "not a DumpMessagesResponse with a message".into()));
            }
            continue;
        };
        let t = prop(&m, "_t").and_then(|t| t.parse::<i32>().ok());
        let name =
            t.map_or("Unknown".to_string(), |n| message_type_name(set.pool(), n).unwrap_or(n.to_string()));
        *r.types.entry(name).or_default() += 1;
        let payload_len =
            m.get_field_by_name("payload").and_then(|v| v.as_bytes().map(|b| b.len())).unwrap_or(0);
        if t == Some(999) && payload_len == 0 {
            r.opaque_txn_frames.push(index);
        }
        if prop(&m, "_ch").is_some() {
            r.encrypted_frames += 1;
        }
        let Some(tt) = prop(&m, "_tt").and_then(|v| parse_base36_u64(&v).ok()) else { continue };
        r.first_timetick.get_or_insert(tt);
        r.last_timetick = Some(tt);
        if ckpt_tt.is_some_and(|c| tt <= c) {
            r.replicated_frames += 1;
        }
        if let Some(p) = prev_tt {
            if tt < p {
                r.backwards += 1;
            } else if timetick_to_millis(tt) - timetick_to_millis(p) > options.gap.as_millis() as u64 {
                r.gaps.push(Gap { after_frame: index - 1, from_timetick: p, to_timetick: tt });
            }
        }
        prev_tt = Some(tt);
    }
    if let Some(Err(shrink)) = map.as_ref().map(|m| m.check()) {
        return Err(file_err(format!(
            "the dump changed while it was read: {shrink}; nothing of it is reported"
        )));
    }
    r.manifest = manifest;
    r.record = record;
    r.notes = notes(&r, options);
    Ok(r)
}

fn notes(r: &DumpReport, options: AnalyzeOptions) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(a), Some(b)) = (r.first_utc(), r.last_utc()) {
        out.push(format!("{} frames, {}, from {a} to {b}", r.frames, crate::fmt::bytes_exact(r.bytes)));
    } else {
        out.push(format!("{} frames, {}", r.frames, crate::fmt::bytes_exact(r.bytes)));
    }
    if !r.opaque_txn_frames.is_empty() {
        out.push(format!(
            "{} transaction(s) arrived as one Txn (_t=999) frame with an empty body (frame {}): their data is lost \
             in this dump; dump again from a fixed server (Milvus {}+)",
            r.opaque_txn_frames.len(),
            r.opaque_txn_frames.iter().take(5).map(u64::to_string).collect::<Vec<_>>().join(", "),
            crate::wal::versions::TXN_DUMP_FIXED_IN
        ));
    }
    if r.encrypted_frames > 0 {
        out.push(format!(
            "{} encrypted frame(s) (_ch): their payload is ciphertext, kept as sent; replaying them needs the cluster's key",
            r.encrypted_frames
        ));
    }
    for g in r.gaps.iter().take(5) {
        out.push(format!(
            "no message for {:.1} s after frame {} ({} to {} UTC)",
            g.duration().as_secs_f64(),
            g.after_frame,
            format_timetick(g.from_timetick),
            format_timetick(g.to_timetick)
        ));
    }
    if r.gaps.len() > 5 {
        out.push(format!("{} more gaps longer than {:?}", r.gaps.len() - 5, options.gap));
    }
    if r.backwards > 0 {
        out.push(format!("{} frame(s) go back in time (timetick below the previous frame's)", r.backwards));
    }
    if r.undecodable_count > 0 {
        out.push(format!("{} frame(s) cannot be read as DumpMessagesResponse", r.undecodable_count));
    }
    if r.truncated_tail > 0 {
        out.push(format!(
            "{} byte(s) after the last complete frame: a run was cut; resuming trims them",
            r.truncated_tail
        ));
    }
    if let Some(rec) = &r.record {
        match (rec.skip_replicated, r.replicated_frames) {
            (true, _) => out.push("messages the new primary already has were skipped".into()),
            (false, n) => out.push(format!(
                "{n} frame(s) at or before the checkpoint are kept: the new primary already has them"
            )),
        }
        if rec.ended_before_end {
            out.push(
                "the server closed the stream while the end time was still in the future (its scanner \
                 stopped): resume later to continue"
                    .into(),
            );
        }
    }
    match &r.manifest {
        Some(m) if m.complete => {}
        Some(m) => out.push(format!("not complete: {} frames confirmed; resume to continue", m.frames)),
        None => out.push("no manifest beside the dump".into()),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dump::framing::write_frame;
    use crate::wal::to_base36;
    use serde_json::json;

    fn frame(t: u32, tt_ms: u64, payload: &[u8], extra: &[(&str, &str)]) -> Vec<u8> {
        let set = SchemaSet::shared_builtin();
        let mut props = serde_json::Map::new();
        props.insert("_t".into(), json!(t.to_string()));
        props.insert("_v".into(), json!("2"));
        props.insert("_tt".into(), json!(to_base36(tt_ms << 18)));
        for (k, v) in extra {
            props.insert((*k).into(), json!(v));
        }
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD.encode(payload);
        let v = json!({"message": {"id": {"id": "a", "WAL_name": "RocksMQ"}, "payload": b64, "properties": props}});
        let m = DynamicMessage::deserialize(set.message(RESPONSE_TYPE).unwrap(), v).unwrap();
        let mut out = Vec::new();
        write_frame(Framing::VarintDelimited, &crate::codec::encode(&m), &mut out);
        out
    }

    #[test]
    fn opaque_transactions_encrypted_frames_gaps_and_a_cut_tail() {
        let t0 = 1_795_997_520_000u64;
        let mut bytes = frame(2, t0, b"x", &[]);
        bytes.extend(frame(999, t0 + 10, b"", &[("_tx", "")]));
        bytes.extend(frame(2, t0 + 20, b"secret", &[("_ch", "")]));
        bytes.extend(frame(3, t0 + 95_020, b"y", &[]));
        bytes.extend(frame(3, t0 + 95_000, b"z", &[]));
        bytes.extend([0x20, 1, 2]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.dump");
        std::fs::write(&path, &bytes).unwrap();
        let r = analyze_dump(&path, AnalyzeOptions::default()).unwrap();
        assert_eq!(r.frames, 5);
        assert_eq!(r.types.get("Insert"), Some(&2));
        assert_eq!(r.types.get("Txn"), Some(&1));
        assert_eq!(r.opaque_txn_frames, vec![1]);
        assert_eq!(r.encrypted_frames, 1);
        assert_eq!(r.gaps.len(), 1);
        assert_eq!(r.gaps[0].after_frame, 2);
        assert_eq!(r.gaps[0].duration(), Duration::from_secs(95));
        assert_eq!(r.backwards, 1);
        assert_eq!(r.truncated_tail, 3);
        assert_eq!(r.first_utc().as_deref(), Some("2026-11-30 00:12:00.000 UTC"));
        let notes = r.notes.join("\n");
        for want in [
            "data is lost",
            "2.6.20",
            "ciphertext",
            "no message for 95.0 s",
            "go back in time",
            "was cut",
            "no manifest",
        ] {
            assert!(notes.contains(want), "{want}: {notes}");
        }
        assert!(r.has_findings());
    }
}
