//! Decoding one frame for display: status, one-line summary and, for Milvus WAL dumps, the row
//! fields (id, type, vchannel, timetick, collection, rows). Decoded on demand through a bounded
//! LRU cache, so scrolling a million rows never holds a million decoded messages. A frame past
//! the end of a file cut short since it was opened is shown as unreadable, with the sizes,
//! never decoded from the zeros its mapping then holds (see [`super::mapping`]).

use super::reader::{DumpFile, FrameLoc};
use crate::codec;
use crate::wal::{self, Detail, RowFacts, SummaryReader, WalMessage};
use lru::LruCache;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, ReflectMessage};
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, PartialEq)]
pub enum FrameStatus {
    Ok,
    /// The payload is encrypted (`_ch`): expected, not damage.
    Encrypted,
    /// Decodes, but something inside is malformed (a bad property, a bad header).
    Warning(String),
    /// Does not decode as the chosen type; `offset` is absolute in the file.
    Undecodable {
        offset: u64,
        reason: String,
    },
}

impl FrameStatus {
    pub fn label(&self) -> &'static str {
        match self {
            FrameStatus::Ok => "ok",
            FrameStatus::Encrypted => "encrypted",
            FrameStatus::Warning(_) => "warning",
            FrameStatus::Undecodable { .. } => "bad",
        }
    }
    pub fn is_bad(&self) -> bool {
        matches!(self, FrameStatus::Undecodable { .. } | FrameStatus::Warning(_))
    }
}

/// The WAL columns of a row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WalRow {
    pub message_id: String,
    pub type_name: String,
    pub vchannel: String,
    pub timetick: Option<u64>,
    pub time: String,
    pub collection: Option<i64>,
    pub rows: Option<u64>,
    pub txn: Option<i64>,
    /// Set when the frame is one chunk of a larger payload.
    pub chunk: Option<crate::wal::ChunkMark>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FrameView {
    /// The frame's number, or [`super::reader::UNNUMBERED`] in a fold run while indexing.
    pub index: usize,
    pub offset: u64,
    pub size: u64,
    pub status: FrameStatus,
    pub summary: String,
    pub wal: Option<WalRow>,
}

/// Decodes frames of one dump as one type, remembering the last `capacity` results.
pub struct FrameDecoder {
    pool: DescriptorPool,
    message_type: Option<MessageDescriptor>,
    /// Reads list rows of WAL frames from the wire bytes; `None` for other types (and when
    /// turned off, to measure against or to check it).
    fast: Option<SummaryReader>,
    /// The type's compiled check, for decoding whole messages.
    full: Option<codec::MessageDecoder>,
    cache: Mutex<LruCache<usize, Arc<FrameView>>>,
}

impl FrameDecoder {
    pub fn new(
        pool: DescriptorPool,
        message_type: Option<MessageDescriptor>,
        capacity: usize,
    ) -> FrameDecoder {
        let cap = NonZeroUsize::new(capacity.max(1)).unwrap_or(NonZeroUsize::MIN);
        let fast = message_type.as_ref().and_then(|t| SummaryReader::new(&pool, t));
        let full = message_type.as_ref().map(codec::MessageDecoder::new);
        FrameDecoder { pool, message_type, fast, full, cache: Mutex::new(LruCache::new(cap)) }
    }

    /// Every row through the full analysis instead of the fast summary reader: the same
    /// views, several times slower (the baseline of the benchmarks and the check of the tests).
    pub fn without_fast_summaries(mut self) -> FrameDecoder {
        self.fast = None;
        self
    }

    /// Whether WAL rows are read by the fast summary reader.
    pub fn has_fast_summaries(&self) -> bool {
        self.fast.is_some()
    }

    /// The view of frame `i`, decoded now and not cached: for whole-file scans, which would
    /// only churn the cache (and may run on several threads at once).
    pub fn view_uncached(&self, dump: &DumpFile, i: usize) -> Option<FrameView> {
        Some(self.decode_view(dump, dump.frame(i)?, Detail::Full))
    }

    /// The view of a frame already located (scans read many offsets at once), not cached. With
    /// `Detail::Counts`, for scans that read only the status and the WAL columns (statistics,
    /// filters without `text=`), a WAL row read by the fast summary reader gets no summary, time
    /// or id text, which were most of the work left per frame.
    pub fn view_of(&self, dump: &DumpFile, loc: FrameLoc, detail: Detail) -> FrameView {
        self.decode_view(dump, loc, detail)
    }

    pub fn message_type(&self) -> Option<&MessageDescriptor> {
        self.message_type.as_ref()
    }

    /// The schemas the frames are decoded with.
    pub fn pool(&self) -> &DescriptorPool {
        &self.pool
    }

    /// The view of frame `i` if it is already decoded (never decodes: safe on the UI thread).
    pub fn cached(&self, i: usize) -> Option<Arc<FrameView>> {
        self.cache.lock().ok()?.get(&i).cloned()
    }

    /// The view of frame `i`, from the cache or decoded now.
    pub fn view(&self, dump: &DumpFile, i: usize) -> Option<Arc<FrameView>> {
        if let Ok(mut c) = self.cache.lock()
            && let Some(v) = c.get(&i)
        {
            return Some(v.clone());
        }
        let v = Arc::new(self.decode_view(dump, dump.frame(i)?, Detail::Full));
        if let Ok(mut c) = self.cache.lock() {
            c.put(i, v.clone());
        }
        Some(v)
    }

    /// Decodes frame `i` as the chosen type (None: schema-less).
    pub fn decode(&self, dump: &DumpFile, i: usize) -> Option<Result<DynamicMessage, (u64, String)>> {
        let loc = dump.frame(i)?;
        let (start, bytes) = dump.message_bytes(&loc);
        let full = self.full.as_ref()?;
        let gone = |s| (loc.offset, past_end(s));
        if let Err(s) = dump.intact(&loc) {
            return Some(Err(gone(s)));
        }
        let decoded = full.decode(bytes).map_err(|e| match e {
            codec::CodecError::Malformed { offset, reason, .. } => (start + offset as u64, reason),
            other => (start, other.to_string()),
        });
        // Checked after the read too: a read that met the zeros of a cut is known by then.
        Some(dump.intact(&loc).map_err(gone).and(decoded))
    }

    /// The view of the frame at `loc`; a frame the file no longer holds whole is unreadable.
    fn decode_view(&self, dump: &DumpFile, loc: FrameLoc, detail: Detail) -> FrameView {
        let view = match dump.intact(&loc) {
            Ok(()) => self.decode_bytes(dump, loc, detail),
            Err(s) => return past_end_view(loc, s),
        };
        // Checked after the read too: a read that met the zeros of a cut is known by then.
        match dump.intact(&loc) {
            Ok(()) => view,
            Err(s) => past_end_view(loc, s),
        }
    }

    /// Drops the cached views of frames that do not end by byte `end` (the file was cut there:
    /// they may have been read from the zeros past its end before the cut was known).
    pub fn forget_past(&self, end: u64) {
        if let Ok(mut c) = self.cache.lock() {
            let gone: Vec<usize> =
                c.iter().filter(|(_, v)| v.offset + v.size > end).map(|(i, _)| *i).collect();
            for i in gone {
                c.pop(&i);
            }
        }
    }

    fn decode_bytes(&self, dump: &DumpFile, loc: FrameLoc, detail: Detail) -> FrameView {
        let (start, bytes) = dump.message_bytes(&loc);
        let mut view = FrameView {
            index: loc.index,
            offset: loc.offset,
            size: loc.header.total(),
            status: FrameStatus::Ok,
            summary: String::new(),
            wal: None,
        };
        let Some(desc) = &self.message_type else {
            let w = crate::wire::decode(bytes);
            view.summary =
                format!("{} bytes, {} top-level fields (no type chosen)", bytes.len(), w.root.fields.len());
            if let Some(e) = w.first_error() {
                view.status =
                    FrameStatus::Undecodable { offset: start + e.offset as u64, reason: e.kind.to_string() };
            }
            return view;
        };
        if let Some(facts) = self.fast.as_ref().and_then(|f| f.read_with(bytes, detail)) {
            apply_facts(facts, &mut view, detail);
            return view;
        }
        match codec::decode(desc, bytes) {
            Err(codec::CodecError::Malformed { offset, reason, .. }) => {
                view.status =
                    FrameStatus::Undecodable { offset: start + offset as u64, reason: reason.clone() };
                view.summary = format!("not a {}: {reason} at byte {}", desc.name(), start + offset as u64);
            }
            Err(e) => {
                view.status = FrameStatus::Undecodable { offset: start, reason: e.to_string() };
                view.summary = e.to_string();
            }
            Ok(d) => self.summarize(&d.message, &mut view),
        }
        view
    }

    fn summarize(&self, msg: &DynamicMessage, view: &mut FrameView) {
        if let Some(summary) = crate::datasync::summary(msg) {
            view.summary = summary;
            return;
        }
        let name = msg.descriptor().full_name().to_string();
        let immutable = match name.as_str() {
            "milvus.proto.milvus.DumpMessagesResponse" => {
                if let Some(m) = msg.get_field_by_name("message").filter(|_| msg.has_field_by_name("message"))
                {
                    m.as_message().cloned()
                } else if msg.has_field_by_name("status") {
                    let s = msg.get_field_by_name("status").and_then(|s| s.as_message().cloned());
                    view.summary = s
                        .map_or_else(|| "status".into(), |s| format!("status {}", codec::to_json(&s, false)));
                    return;
                } else {
                    view.summary = "empty response".into();
                    return;
                }
            }
            "milvus.proto.common.ImmutableMessage" => Some(msg.clone()),
            _ => None,
        };
        match immutable {
            Some(imm) => {
                let w = wal::analyze_row(&self.pool, &imm);
                apply_wal(&w, view);
            }
            None => view.summary = generic_summary(msg),
        }
    }
}

/// Why a frame past the end of a file cut short is not shown.
fn past_end(s: crate::dump::Shrink) -> String {
    format!("past the end of the file: {s} after it was opened; this frame is no longer in it")
}

/// The view of a frame the file no longer holds whole.
fn past_end_view(loc: FrameLoc, s: crate::dump::Shrink) -> FrameView {
    let reason = past_end(s);
    FrameView {
        index: loc.index,
        offset: loc.offset,
        size: loc.header.total(),
        status: FrameStatus::Undecodable { offset: loc.offset, reason: reason.clone() },
        summary: reason,
        wal: None,
    }
}

fn apply_wal(w: &WalMessage, view: &mut FrameView) {
    apply_facts(w.row_facts(), view, Detail::Full);
    if !w.problems.is_empty() {
        view.status = FrameStatus::Warning(w.problems.join("; "));
    }
}

/// The view's columns from `f`; with `Detail::Counts` no summary and no formatted time.
fn apply_facts(f: RowFacts, view: &mut FrameView, detail: Detail) {
    let time = f.timetick.filter(|_| detail == Detail::Full).map(crate::time::format_timetick);
    if detail == Detail::Full {
        view.summary = f.summary_at(time.as_deref());
    }
    if f.encrypted {
        view.status = FrameStatus::Encrypted;
    }
    view.wal = Some(WalRow {
        message_id: f.id,
        type_name: f.type_name,
        vchannel: f.vchannel.unwrap_or_default(),
        timetick: f.timetick,
        time: time.unwrap_or_default(),
        collection: f.collection_id,
        rows: f.rows,
        txn: f.txn_id,
        chunk: f.chunk,
    });
}

/// `Type: a=1 b="x" c={…}` over the first few set fields.
fn generic_summary(msg: &DynamicMessage) -> String {
    let mut parts = Vec::new();
    for (fd, v) in msg.fields().take(5) {
        parts.push(format!("{}={}", fd.name(), codec::tree::scalar_value_text(v)));
    }
    let unknown = msg.unknown_fields().count();
    if unknown > 0 {
        parts.push(format!("+{unknown} unknown"));
    }
    format!("{}: {}", msg.descriptor().name(), parts.join(" "))
}
