//! What a composer keeps for "Compare with…": its last unary replies, numbered as they came,
//! and the history entries as last read.
//!
//! Must never: keep more than [`KEPT_REPLIES`] replies (a composer may run for days).

use super::ComposerState;
use crate::net::history::HistoryEntry;

/// A reply kept for "Compare with…".
#[derive(Debug, Clone)]
pub struct KeptReply {
    /// `reply 3 (GetReplicateInfo)`.
    pub label: String,
    /// The reply's message type.
    pub type_name: Option<String>,
    pub bytes: Vec<u8>,
}

impl KeptReply {
    /// The reply as one side of a comparison.
    pub fn side(&self) -> crate::panes::diff::Side {
        crate::panes::diff::Side::Message {
            label: self.label.clone(),
            type_name: self.type_name.clone(),
            bytes: self.bytes.clone(),
        }
    }
}

/// Replies a composer keeps for comparing.
pub const KEPT_REPLIES: usize = 20;

impl ComposerState {
    /// The history entries as last read (none when not read, or the reading failed).
    pub fn history_entries(&self) -> &[HistoryEntry] {
        match &self.history {
            Some(Ok(e)) => e,
            _ => &[],
        }
    }

    /// Keeps a reply for "Compare with…" (the last [`KEPT_REPLIES`]).
    pub fn keep_reply(&mut self, type_name: Option<String>, bytes: Vec<u8>) {
        self.replies_seen += 1;
        let method = self.method.as_deref().map_or("", |m| m.rsplit('.').next().unwrap_or(m));
        let label = format!("reply {} ({method})", self.replies_seen);
        self.replies.push(KeptReply { label, type_name, bytes });
        if self.replies.len() > KEPT_REPLIES {
            self.replies.remove(0);
        }
    }
}
