//! The one-line description of a [`WalMessage`] that lists and logs show.
//!
//! Owns: the wording and order of that line. Must never: hide that a message is encrypted,
//! legacy, of an unknown type, or has problems.

use super::analyze::WalMessage;
use super::timetick::format_timetick;
use prost_reflect::Value;

impl WalMessage {
    /// E.g. `"Insert coll=4491 rows=1000 vchannel=by-dev-rootcoord-dml_0_4491v0 tt=2025-11-30
    /// 00:12:01.123"`, `"BeginTxn txn=77 vchannel=… tt=…"`, `"type 4711 (unknown) …"`,
    /// `"legacy message (no _v), payload 120 bytes"`.
    pub fn summary(&self) -> String {
        let mut s = if self.legacy {
            let mut s = "legacy message (no _v)".to_string();
            if self.type_number.is_some() {
                s.push_str(&format!(", type {}", self.type_name));
            }
            s.push_str(&format!(", payload {} bytes", self.payload_len));
            s
        } else if self.is_unknown_type() {
            format!("type {} (unknown)", self.type_name)
        } else if self.type_number.is_none() {
            "Unknown (no readable _t)".to_string()
        } else {
            self.type_name.clone()
        };
        if self.is_encrypted() {
            s.push_str(" (encrypted)");
        }
        if let Some(txn) = self.txn.as_ref().and_then(|t| t.get_field_by_name("txn_id"))
            && let Value::I64(id) = txn.as_ref()
        {
            s.push_str(&format!(" txn={id}"));
        }
        if let Some(c) = self.collection_id {
            s.push_str(&format!(" coll={c}"));
        }
        if let Some(r) = self.rows {
            s.push_str(&format!(" rows={r}"));
        }
        if let Some(vc) = &self.vchannel {
            s.push_str(&format!(" vchannel={vc}"));
        }
        if let Some(tt) = self.timetick {
            s.push_str(&format!(" tt={}", format_timetick(tt)));
        }
        match self.problems.len() {
            0 => {}
            1 => s.push_str(" [1 problem]"),
            n => s.push_str(&format!(" [{n} problems]")),
        }
        s
    }
}
