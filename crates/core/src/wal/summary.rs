//! The one-line description of a WAL message that lists and logs show, and the facts a list row
//! holds ([`RowFacts`]), which both the full analysis ([`WalMessage`]) and the fast summary
//! reader ([`super::fast::SummaryReader`]) produce.
//!
//! Owns: the wording and order of that line. Must never: hide that a message is encrypted,
//! legacy, of an unknown type, or has problems.

use super::analyze::WalMessage;
use crate::time::format_timetick;
use prost_reflect::Value;
use std::fmt::Write;

/// What a list row shows of one WAL message.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RowFacts {
    /// The id as shown (`"RocksMQ 1007"`), `"invalid id: …"`, or empty when there is none.
    pub id: String,
    pub type_number: Option<i32>,
    /// As [`WalMessage::type_name`].
    pub type_name: String,
    pub legacy: bool,
    pub encrypted: bool,
    pub payload_len: usize,
    pub txn_id: Option<i64>,
    pub collection_id: Option<i64>,
    pub rows: Option<u64>,
    pub vchannel: Option<String>,
    pub timetick: Option<u64>,
    pub problems: usize,
    /// Set when the payload is one chunk of several (see [`super::chunk`]).
    pub chunk: Option<super::chunk::ChunkMark>,
}

impl RowFacts {
    /// True when `_t` holds a number the schema does not name.
    pub fn is_unknown_type(&self) -> bool {
        self.type_number.is_some_and(|t| self.type_name == t.to_string())
    }

    /// E.g. `"Insert coll=4491 rows=1000 vchannel=by-dev-rootcoord-dml_0_4491v0 tt=2025-11-30
    /// 00:12:01.123"`, `"BeginTxn txn=77 vchannel=… tt=…"`, `"type 4711 (unknown) …"`,
    /// `"legacy message (no _v), payload 120 bytes"`.
    pub fn summary(&self) -> String {
        self.summary_at(self.timetick.map(format_timetick).as_deref())
    }

    /// [`RowFacts::summary`] with the timetick already formatted (rows show it twice).
    pub fn summary_at(&self, time: Option<&str>) -> String {
        // Writing to a String cannot fail; the results of write! are ignored for that reason.
        let mut s = String::with_capacity(112);
        if self.legacy {
            s.push_str("legacy message (no _v)");
            if self.type_number.is_some() {
                let _ = write!(s, ", type {}", self.type_name);
            }
            let _ = write!(s, ", payload {} bytes", self.payload_len);
        } else if self.is_unknown_type() {
            let _ = write!(s, "type {} (unknown)", self.type_name);
        } else if self.type_number.is_none() {
            s.push_str("Unknown (no readable _t)");
        } else {
            s.push_str(&self.type_name);
        }
        if self.encrypted {
            s.push_str(" (encrypted)");
        }
        if let Some(c) = &self.chunk {
            let _ = write!(s, " [{}]", c.label());
        }
        if let Some(id) = self.txn_id {
            let _ = write!(s, " txn={id}");
        }
        if let Some(c) = self.collection_id {
            let _ = write!(s, " coll={c}");
        }
        if let Some(r) = self.rows {
            let _ = write!(s, " rows={r}");
        }
        if let Some(vc) = &self.vchannel {
            let _ = write!(s, " vchannel={vc}");
        }
        if let Some(t) = time {
            let _ = write!(s, " tt={t}");
        }
        match self.problems {
            0 => {}
            1 => s.push_str(" [1 problem]"),
            n => {
                let _ = write!(s, " [{n} problems]");
            }
        }
        s
    }
}

impl WalMessage {
    pub fn row_facts(&self) -> RowFacts {
        RowFacts {
            id: match &self.id {
                Some(Ok(r)) => r.display.clone(),
                Some(Err(e)) => format!("invalid id: {e}"),
                None => String::new(),
            },
            type_number: self.type_number,
            type_name: self.type_name.clone(),
            legacy: self.legacy,
            encrypted: self.is_encrypted(),
            payload_len: self.payload_len,
            txn_id: self.txn.as_ref().and_then(|t| t.get_field_by_name("txn_id")).and_then(|v| match *v {
                Value::I64(id) => Some(id),
                _ => None,
            }),
            collection_id: self.collection_id,
            rows: self.rows,
            vchannel: self.vchannel.clone(),
            timetick: self.timetick,
            problems: self.problems.len(),
            chunk: self.chunk.as_ref().and_then(|c| c.as_ref().ok().copied()),
        }
    }

    /// See [`RowFacts::summary`].
    pub fn summary(&self) -> String {
        self.row_facts().summary()
    }
}
