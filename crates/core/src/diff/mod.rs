//! Structural diffs: two messages of one type field by field ([`diff_messages`]), two dump files
//! frame by frame ([`diff_dumps`]), and one frame of each on demand ([`diff_frames`]).
//!
//! A message diff walks both sides' typed trees ([`crate::codec::tree`]) together, so every
//! difference has a field path (`payload.fields_data[2].scalars.long_data.data[17]`,
//! `properties["_vc"]`, `#7` for an unknown field) and its byte ranges on both sides. Its
//! [`MessageDiff::to_edits`] turns it into the [`crate::codec::Edit`]s that make A into B.
//!
//! A dump diff streams over both indexes in frame order with a bounded look-ahead window: it
//! holds a window of frame keys, never a decoded message.
//!
//! Owns: the alignment rules (repeated fields by key or position with moves; frames by message
//! id, else timetick and content hash). Must never: write a file, panic on outside bytes, or
//! hold more than its window of frames of a dump in memory.

mod align;
mod dumps;
mod message;
mod values;

pub use align::KEY_FIELDS;
pub use dumps::{DEFAULT_WINDOW, DumpDiffControl, DumpSide, diff_dumps, diff_frames};
pub use message::diff_messages;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;

/// What happened to one field (or element, or map entry) between A and B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// Only in B.
    Added,
    /// Only in A.
    Removed,
    /// In both, with different values.
    Changed,
    /// An element of a repeated field, equal on both sides, at another place in B.
    Moved,
}

impl ChangeKind {
    /// `added`, `removed`, `changed`, `moved`: the word the CLI prints and `--jsonl` writes.
    pub fn label(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Changed => "changed",
            ChangeKind::Moved => "moved",
        }
    }
}

/// One difference between two messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The field path as `walscope edit` reads it: `task[2].status`, `properties["_vc"]`, `#7`
    /// for an unknown field (`#7[1]` for its second occurrence). Indexes of repeated fields are
    /// B's, except for a removed element (A's).
    pub path: String,
    pub kind: ChangeKind,
    /// A's value in words: a leaf's value, a sub-message's short summary, an unknown field's
    /// bytes in hex. None when added.
    pub old: Option<String>,
    /// B's value in words. None when removed.
    pub new: Option<String>,
    /// The field's type in words, as the typed tree says it (`int64`, `enum MsgType`,
    /// `milvus.proto.schema.FieldData`, `unknown varint`).
    pub type_name: String,
    /// A's bytes for this field, key through end of value (None when added).
    pub a_span: Option<Range<usize>>,
    /// B's bytes for this field (None when removed).
    pub b_span: Option<Range<usize>>,
    /// For a move: (index in A, index in B).
    pub moved: Option<(usize, usize)>,
}

/// The differences between two messages of one type, in B's field order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageDiff {
    /// The message type's full name, or `(no schema)` for a schema-less diff.
    pub type_name: String,
    pub changes: Vec<Change>,
    /// The edits that turn A into B, worked out during the walk (they need B's exact values,
    /// which `changes` holds only as previews); an error when a change cannot be an edit.
    #[serde(skip)]
    edits: Option<Result<Vec<crate::codec::Edit>, DiffError>>,
}

impl MessageDiff {
    /// A diff with these changes and no edits worked out (to_edits then says so).
    pub fn new(type_name: String, changes: Vec<Change>) -> MessageDiff {
        MessageDiff { type_name, changes, edits: None }
    }

    pub(crate) fn with_edits(
        type_name: String,
        changes: Vec<Change>,
        edits: Result<Vec<crate::codec::Edit>, DiffError>,
    ) -> MessageDiff {
        MessageDiff { type_name, changes, edits: Some(edits) }
    }

    /// True when A and B are the same message (byte-identical, or equal field by field).
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The edits ([`crate::codec::apply_edits`]) that turn A into B: a changed leaf is a `Set` of
    /// B's value, a removed field a `Clear`, an added one a `Set`; a repeated field whose
    /// elements were added, removed or moved is set whole from B. Applying them to A gives a
    /// message equal to B field by field (bytes A and B share stay A's). An unknown field that
    /// differs cannot be named by an edit: that is [`DiffError::NotAnEdit`].
    pub fn to_edits(&self) -> Result<Vec<crate::codec::Edit>, DiffError> {
        match &self.edits {
            Some(r) => r.clone(),
            None if self.changes.is_empty() => Ok(Vec::new()),
            None => Err(DiffError::NotAnEdit {
                path: String::new(),
                why: "this diff was not computed by diff_messages, so it has no values to set".into(),
            }),
        }
    }
}

/// Which side of a diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Side {
    A,
    B,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::A => "A",
            Side::B => "B",
        })
    }
}

/// What became of a frame of A or B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairKind {
    OnlyA,
    OnlyB,
    Changed,
    Identical,
}

impl PairKind {
    /// `only_a`, `only_b`, `changed`, `identical`.
    pub fn label(self) -> &'static str {
        match self {
            PairKind::OnlyA => "only_a",
            PairKind::OnlyB => "only_b",
            PairKind::Changed => "changed",
            PairKind::Identical => "identical",
        }
    }
}

/// A frame of A matched with a frame of B (or with nothing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FramePair {
    pub kind: PairKind,
    /// The frame's number in A (None: only in B).
    pub a: Option<u64>,
    /// The frame's number in B (None: only in A).
    pub b: Option<u64>,
    /// The WAL message type (`Insert`, `CreateCollection`…), else the frame's message type.
    pub type_name: String,
    /// The collection id, when the frame names one.
    pub collection: Option<String>,
    /// The WAL message id as shown (`RocksMQ 1007`), for a pair that differs and has one
    /// (identical pairs leave it out: its text for every frame would cost as much as the diff).
    pub message_id: Option<String>,
    pub timetick: Option<u64>,
}

/// Pairs of one kind, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairCounts {
    pub only_a: u64,
    pub only_b: u64,
    pub changed: u64,
    pub identical: u64,
}

impl PairCounts {
    pub fn add(&mut self, kind: PairKind) {
        match kind {
            PairKind::OnlyA => self.only_a += 1,
            PairKind::OnlyB => self.only_b += 1,
            PairKind::Changed => self.changed += 1,
            PairKind::Identical => self.identical += 1,
        }
    }

    /// Frames that differ: only on one side, or changed.
    pub fn different(&self) -> u64 {
        self.only_a + self.only_b + self.changed
    }
}

/// The outcome of a dump diff: the counts, all and by type and collection.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpDiffSummary {
    /// Frames read from each side.
    pub a_frames: u64,
    pub b_frames: u64,
    /// Damaged ranges in each file (their bytes are in no frame; see `inspect`).
    pub a_damaged: u64,
    pub b_damaged: u64,
    pub only_a: u64,
    pub only_b: u64,
    pub changed: u64,
    pub identical: u64,
    pub by_type: BTreeMap<String, PairCounts>,
    /// By collection id; frames without one are under `(none)`.
    pub by_collection: BTreeMap<String, PairCounts>,
}

impl DumpDiffSummary {
    /// True when every frame of A has an identical frame in B and back.
    pub fn is_identical(&self) -> bool {
        self.only_a == 0 && self.only_b == 0 && self.changed == 0
    }

    pub(crate) fn add(&mut self, pair: &FramePair) {
        let mut total = PairCounts::default();
        total.add(pair.kind);
        self.only_a += total.only_a;
        self.only_b += total.only_b;
        self.changed += total.changed;
        self.identical += total.identical;
        count(&mut self.by_type, &pair.type_name, pair.kind);
        count(&mut self.by_collection, pair.collection.as_deref().unwrap_or("(none)"), pair.kind);
    }
}

/// Counts `kind` under `key`, without allocating a key that is already there (the common case:
/// this runs for every frame of a dump).
fn count(map: &mut BTreeMap<String, PairCounts>, key: &str, kind: PairKind) {
    match map.get_mut(key) {
        Some(c) => c.add(kind),
        None => map.entry(key.to_string()).or_default().add(kind),
    }
}

/// Why a diff could not be made, in words: what, where, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiffError {
    #[error(
        "{side} is not a valid {type_name}: at byte {offset}: {reason} (check the message type, e.g. --type, or that the file holds one message)"
    )]
    Undecodable { side: Side, type_name: String, offset: usize, reason: String },
    #[error("{side} has no frame {index}: it has {count} frames (frames are numbered from 0)")]
    NoFrame { side: Side, index: u64, count: u64 },
    #[error("frame {index} of {side} cannot be read: {reason}")]
    Frame { side: Side, index: u64, reason: String },
    #[error("A holds {a} and B holds {b}: a diff compares messages of one type (give both the same --type)")]
    TypeMismatch { a: String, b: String },
    #[error("{side} changed while it was read: {reason} (diff it again once it is written)")]
    Dump { side: Side, reason: String },
    #[error("{path}: {why}")]
    NotAnEdit { path: String, why: String },
    #[error("the diff was stopped before it finished")]
    Cancelled,
}
