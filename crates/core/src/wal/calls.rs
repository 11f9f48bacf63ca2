//! Milvus's calls as the network layer must know them: which `MilvusService` methods only read
//! and what the others change, in words, before they are sent (`UpdateReplicateConfiguration`
//! with `force_promote` cannot be undone at all), and the `common.Status` every reply carries
//! in (or as) its body, read into words. `net` asks here (its guard and its errors in the body).
//!
//! Must never: call a reading method a change (an operator asked to confirm every call stops
//! reading the question), or call a reply an error for a status that says success.

use prost_reflect::{DynamicMessage, Kind, MethodDescriptor, ReflectMessage, Value};

/// The word to type before a force-promote is sent.
pub const FORCE_PROMOTE_WORD: &str = "force promote";

/// Milvus's status message.
pub const MILVUS_STATUS: &str = "milvus.proto.common.Status";

const MILVUS_SERVICE: &str = "milvus.proto.milvus.MilvusService";

/// Milvus methods that only read (by prefix; everything else on MilvusService writes something).
const READING: &[&str] = &[
    "Get",
    "Describe",
    "Show",
    "List",
    "Has",
    "Query",
    "Search",
    "HybridSearch",
    "Check",
    "Dump",
    "Connect",
    "Select",
    "Calc",
    "Run",
    "AllocTimestamp",
];

/// What a call to Milvus changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MilvusChange {
    /// UpdateReplicateConfiguration with `force_promote`: the cluster becomes a primary.
    ForcePromote,
    /// UpdateReplicateConfiguration: the cluster's replicate configuration is replaced.
    ReplicateConfiguration,
    /// Any other writing method, by name.
    Writes(String),
}

impl MilvusChange {
    /// What the call changes on `endpoint`, in words.
    pub fn words(&self, endpoint: &str) -> String {
        match self {
            MilvusChange::ForcePromote => format!(
                "FORCE-PROMOTES the cluster at {endpoint} to a primary and replaces its replicate configuration; the old primary's unreplicated writes are left behind"
            ),
            MilvusChange::ReplicateConfiguration => {
                format!("replaces the replicate configuration of the cluster at {endpoint}")
            }
            MilvusChange::Writes(name) => format!("{name} changes the cluster at {endpoint}"),
        }
    }

    /// The word to type when a click is not enough (only for what cannot be undone at all).
    pub fn typed_word(&self) -> Option<&'static str> {
        matches!(self, MilvusChange::ForcePromote).then_some(FORCE_PROMOTE_WORD)
    }
}

/// What calling `method` with `request` changes, when it is a `MilvusService` method that
/// writes; None for a reading method or another service's.
pub fn change_of(method: &MethodDescriptor, request: &DynamicMessage) -> Option<MilvusChange> {
    if method.parent_service().full_name() != MILVUS_SERVICE {
        return None;
    }
    let name = method.name();
    if name == "UpdateReplicateConfiguration" {
        let force =
            request.get_field_by_name("force_promote").is_some_and(|v| matches!(*v, Value::Bool(true)));
        return Some(if force { MilvusChange::ForcePromote } else { MilvusChange::ReplicateConfiguration });
    }
    (!READING.iter().any(|p| name.starts_with(p))).then(|| MilvusChange::Writes(name.to_string()))
}

/// What a reply's Milvus status says: None when the reply carries none; else success, or the
/// error in words. The status is the reply itself or its `status` field (absent: the default,
/// success).
pub fn reply_status(reply: &DynamicMessage) -> Option<Result<(), String>> {
    status_of(reply).map(|s| match status_error(&s) {
        Some(words) => Err(words),
        None => Ok(()),
    })
}

fn status_of(msg: &DynamicMessage) -> Option<DynamicMessage> {
    if msg.descriptor().full_name() == MILVUS_STATUS {
        return Some(msg.clone());
    }
    let fd = msg.descriptor().get_field_by_name("status")?;
    match fd.kind() {
        Kind::Message(m) if m.full_name() == MILVUS_STATUS && !fd.is_list() => {
            msg.get_field(&fd).as_message().cloned()
        }
        _ => None,
    }
}

fn status_error(s: &DynamicMessage) -> Option<String> {
    let code = crate::codec::loose_integer(s, "code").unwrap_or(0);
    let (error_code, error_name) = match s.descriptor().get_field_by_name("error_code") {
        Some(fd) => {
            let n = s.get_field(&fd).as_enum_number().unwrap_or(0);
            let name = match fd.kind() {
                Kind::Enum(e) => e.get_value(n).map_or_else(|| n.to_string(), |v| v.name().to_string()),
                _ => n.to_string(),
            };
            (n, name)
        }
        None => (0, "Success".to_string()),
    };
    if code == 0 && error_code == 0 {
        return None;
    }
    let reason = crate::codec::string_field(s, "reason").filter(|r| !r.is_empty());
    let detail =
        crate::codec::string_field(s, "detail").filter(|d| !d.is_empty() && Some(d) != reason.as_ref());
    let mut words = format!("Milvus answered with an error status: code {code}, error_code {error_name}");
    match reason {
        Some(r) => words.push_str(&format!(": {r}")),
        None => words.push_str(" (no reason given)"),
    }
    if let Some(d) = detail {
        words.push_str(&format!(" (detail: {d})"));
    }
    Some(words)
}
