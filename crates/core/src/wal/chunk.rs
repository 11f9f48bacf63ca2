//! Payloads split into chunks, as upstream Milvus writes them (`pkg/streaming/util/message/
//! chunk.go`): a payload larger than the WAL backend takes is cut into records that each copy
//! every property of the message and add `_ci` (the chunk's index, from 0) and `_ct` (how many
//! chunks, at least 2), both canonical decimals. The chunks of one message share its `_tt`, the
//! key that groups them (they may interleave with other traffic). A byte-identical repeat of a
//! chunk is a producer's retry and is dropped (the later copy is kept, as upstream keeps it);
//! the same index with other bytes, or a total that changes, is a broken log; a TimeTick ends
//! every unfinished group at or before its timetick. The logical message is the chunks'
//! payloads joined in index order, with chunk 0's id and properties less the two markers.
//!
//! Owns: reading the markers and grouping chunks ([`Grouper`], keyed by whatever names a frame
//! for the caller). Must never: join chunks of different timeticks, call a group whole before
//! every index is there, or allocate by a total read from the data (slots are sparse).

use super::base36::{parse_base36_u64, to_base36};
use prost_reflect::{DynamicMessage, MapKey, Value};
use std::collections::{BTreeMap, HashMap};

/// The chunk index property.
pub const INDEX_KEY: &str = "_ci";
/// The chunk total property.
pub const TOTAL_KEY: &str = "_ct";

/// Where one chunk sits in its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ChunkMark {
    /// From 0.
    pub index: u32,
    /// At least 2.
    pub total: u32,
    /// The message's timetick, which every chunk of it carries.
    pub tt: u64,
}

impl ChunkMark {
    /// `"chunk 2 of 3"` (counted from 1 for people).
    pub fn label(&self) -> String {
        format!("chunk {} of {}", self.index + 1, self.total)
    }
}

/// The chunk markers of a message with properties `get`: `None` when it has neither, an error
/// in words (upstream's "corrupted WAL payload chunk" cases) when they are malformed.
pub fn mark_of<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Option<Result<ChunkMark, String>> {
    let (index, total) = (get(INDEX_KEY), get(TOTAL_KEY));
    if index.is_none() && total.is_none() {
        return None;
    }
    Some(read_mark(index, total, get("_tt")))
}

fn read_mark(index: Option<&str>, total: Option<&str>, tt: Option<&str>) -> Result<ChunkMark, String> {
    let (Some(index), Some(total)) = (index, total) else {
        return Err(format!(
            "a chunk needs both {INDEX_KEY} and {TOTAL_KEY}: {INDEX_KEY}={} {TOTAL_KEY}={}",
            index.unwrap_or("(missing)"),
            total.unwrap_or("(missing)")
        ));
    };
    let (i, t) = (canonical(index), canonical(total));
    let (Some(i), Some(t)) = (i, t) else {
        return Err(format!(
            "chunk markers are not plain decimals: {INDEX_KEY}={index:?} {TOTAL_KEY}={total:?}"
        ));
    };
    if t < 2 || i >= t {
        return Err(format!(
            "chunk markers out of range: {INDEX_KEY}={i} {TOTAL_KEY}={t} (a total is at least 2, an index below it)"
        ));
    }
    let tt = tt.ok_or_else(|| "a chunk without _tt cannot be grouped".to_string())?;
    // Upstream groups by the exact text: a timetick written two ways is not one group.
    let parsed = parse_base36_u64(tt).map_err(|e| format!("a chunk's _tt: {e}"))?;
    if to_base36(parsed) != tt {
        return Err(format!("a chunk's _tt {tt:?} is not in canonical base 36"));
    }
    Ok(ChunkMark { index: i, total: t, tt: parsed })
}

/// A canonical non-negative decimal (no sign, no leading zero) that fits a u32.
fn canonical(s: &str) -> Option<u32> {
    let v: u32 = s.parse().ok()?;
    (v.to_string() == s).then_some(v)
}

/// What became of one pushed frame.
#[derive(Debug, PartialEq)]
pub enum Pushed<K> {
    /// Not a chunk: the caller reads it as it is.
    Plain,
    /// A chunk held until its group is whole.
    Held,
    /// A byte-identical repeat of a held chunk: the new copy replaces `dropped`.
    Duplicate { dropped: K },
    /// The last missing chunk arrived: the group, in index order.
    Complete(Group<K>),
    /// The group cannot be trusted (other bytes for a held index, a changed total); it is
    /// dropped with every chunk held for it.
    Broken { tt: u64, members: Vec<K>, reason: String },
    /// The markers themselves are malformed: the frame is not joinable.
    Malformed { reason: String },
}

/// A whole group: `members[i]` is chunk `i`.
#[derive(Debug, Clone, PartialEq)]
pub struct Group<K> {
    pub tt: u64,
    pub members: Vec<K>,
}

/// A group that never became whole (the dump ended, or a TimeTick passed it).
#[derive(Debug, Clone, PartialEq)]
pub struct Incomplete<K> {
    pub tt: u64,
    pub total: u32,
    /// The chunks there, by index.
    pub present: Vec<(u32, K)>,
}

impl<K> Incomplete<K> {
    /// The indices missing, from 0, in order (lazily: a total read from the data may be huge).
    pub fn missing(&self) -> impl Iterator<Item = u32> + '_ {
        let mut have = self.present.iter().map(|(i, _)| *i).peekable();
        (0..self.total).filter(move |i| {
            while have.next_if(|h| h < i).is_some() {}
            have.next_if_eq(i).is_none()
        })
    }

    /// How many chunks are missing.
    pub fn missing_count(&self) -> u32 {
        self.total.saturating_sub(self.present.len() as u32)
    }

    /// E.g. `"chunks 2, 3 of 4 missing"` (counted from 1, as the rows show them).
    pub fn missing_words(&self) -> String {
        let shown: Vec<String> = self.missing().take(8).map(|i| (i + 1).to_string()).collect();
        let n = self.missing_count();
        let more = if n > 8 { format!(" and {} more", n - 8) } else { String::new() };
        let noun = if n == 1 { "chunk" } else { "chunks" };
        format!("{noun} {}{more} of {} missing", shown.join(", "), self.total)
    }
}

struct Slot<K> {
    key: K,
    digest: u64,
    len: usize,
}

struct Run<K> {
    total: u32,
    slots: BTreeMap<u32, Slot<K>>,
}

/// Groups chunks by timetick as frames are pushed in WAL order.
pub struct Grouper<K> {
    runs: HashMap<u64, Run<K>>,
    ended: Vec<Incomplete<K>>,
}

impl<K> Default for Grouper<K> {
    fn default() -> Self {
        Grouper { runs: HashMap::new(), ended: Vec::new() }
    }
}

impl<K: Clone> Grouper<K> {
    /// Pushes frame `key`: its chunk mark (from [`mark_of`]), whether it is a TimeTick at
    /// `timetick_barrier`, and its payload (compared with a held chunk of the same index).
    pub fn push(
        &mut self,
        key: K,
        mark: Option<Result<ChunkMark, String>>,
        timetick_barrier: Option<u64>,
        payload: &[u8],
    ) -> Pushed<K> {
        let mark = match mark {
            None => {
                if let Some(tt) = timetick_barrier {
                    self.end_at_or_before(tt);
                }
                return Pushed::Plain;
            }
            Some(Err(reason)) => return Pushed::Malformed { reason },
            Some(Ok(m)) => m,
        };
        let digest = digest(payload);
        let run =
            self.runs.entry(mark.tt).or_insert_with(|| Run { total: mark.total, slots: BTreeMap::new() });
        if run.total != mark.total {
            let was = run.total;
            let mut members: Vec<K> = self
                .runs
                .remove(&mark.tt)
                .map(|r| r.slots.into_values().map(|s| s.key).collect())
                .unwrap_or_default();
            members.push(key);
            return Pushed::Broken {
                tt: mark.tt,
                members,
                reason: format!(
                    "the chunk total changed within timetick {} (from {was} to {})",
                    mark.tt, mark.total
                ),
            };
        }
        if let Some(held) = run.slots.get_mut(&mark.index) {
            if held.digest != digest || held.len != payload.len() {
                let members = self
                    .runs
                    .remove(&mark.tt)
                    .map(|r| r.slots.into_values().map(|s| s.key).chain(std::iter::once(key)).collect())
                    .unwrap_or_default();
                return Pushed::Broken {
                    tt: mark.tt,
                    members,
                    reason: format!("{} came twice with different bytes", mark.label()),
                };
            }
            let dropped = std::mem::replace(&mut held.key, key);
            return Pushed::Duplicate { dropped };
        }
        run.slots.insert(mark.index, Slot { key, digest, len: payload.len() });
        if run.slots.len() < run.total as usize {
            return Pushed::Held;
        }
        let run = self.runs.remove(&mark.tt).map(|r| r.slots.into_values().map(|s| s.key).collect());
        Pushed::Complete(Group { tt: mark.tt, members: run.unwrap_or_default() })
    }

    fn end_at_or_before(&mut self, tt: u64) {
        let gone: Vec<u64> = self.runs.keys().copied().filter(|t| *t <= tt).collect();
        for t in gone {
            if let Some(run) = self.runs.remove(&t) {
                self.ended.push(incomplete(t, run));
            }
        }
    }

    /// The groups a TimeTick ended since the last call.
    pub fn take_ended(&mut self) -> Vec<Incomplete<K>> {
        std::mem::take(&mut self.ended)
    }

    /// Whether a group is waiting for chunks.
    pub fn is_holding(&self) -> bool {
        !self.runs.is_empty()
    }

    /// Every group still unfinished at the end, by timetick.
    pub fn finish(mut self) -> Vec<Incomplete<K>> {
        let mut out = std::mem::take(&mut self.ended);
        let mut runs: Vec<(u64, Run<K>)> = self.runs.drain().collect();
        runs.sort_by_key(|(t, _)| *t);
        out.extend(runs.into_iter().map(|(t, r)| incomplete(t, r)));
        out
    }
}

fn incomplete<K>(tt: u64, run: Run<K>) -> Incomplete<K> {
    Incomplete { tt, total: run.total, present: run.slots.into_iter().map(|(i, s)| (i, s.key)).collect() }
}

/// A 64-bit digest of a chunk's bytes (a repeat is judged by it and the length).
fn digest(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// The logical message of a whole group: `head` (chunk 0's `ImmutableMessage`, its last copy)
/// with `payload` (every chunk's payload joined in index order) and without the markers.
pub fn assemble(head: &DynamicMessage, payload: Vec<u8>) -> DynamicMessage {
    let mut m = head.clone();
    m.set_field_by_name("payload", Value::Bytes(payload.into()));
    if let Some(Value::Map(props)) = m.get_field_by_name_mut("properties") {
        props.remove(&MapKey::String(INDEX_KEY.into()));
        props.remove(&MapKey::String(TOTAL_KEY.into()));
    }
    m
}

#[cfg(test)]
mod tests;
