//! Milvus's calls as the network layer must know them: which `MilvusService` methods only read
//! and what the others change, in words, before they are sent (`UpdateReplicateConfiguration`
//! with `force_promote` cannot be undone at all), and the `common.Status` every reply carries
//! in (or as) its body, read into words, and what a reply means that its fields alone do not say
//! ([`ReplyHint`]: a GetReplicateInfo answer with only `salvage_checkpoint`). `net` asks here
//! (its guard, its errors in the body and the hints).
//!
//! Must never: call a reading method a change (an operator asked to confirm every call stops
//! reading the question), call a reply an error for a status that says success, or hint at
//! trouble in a reply that is what the server should send.

use prost_reflect::{DynamicMessage, Kind, MethodDescriptor, ReflectMessage, Value};

/// The word to type before a force-promote is sent.
pub const FORCE_PROMOTE_WORD: &str = "force promote";

/// Milvus's status message.
pub const MILVUS_STATUS: &str = "milvus.proto.common.Status";

const MILVUS_SERVICE: &str = "milvus.proto.milvus.MilvusService";

const REPLICATE_INFO_RESPONSE: &str = "milvus.proto.milvus.GetReplicateInfoResponse";

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

/// What a reply means that its fields alone do not say, for the operator reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyHint {
    /// GetReplicateInfo answered with `salvage_checkpoint` and no `checkpoint`: normal on a
    /// primary (upstream `Proxy.GetReplicateInfo` leaves `checkpoint` nil unless the cluster is
    /// a live CDC secondary), and exactly what a force-promoted new primary sends. The official
    /// Rust SDK 3.0.3 requires `checkpoint` and fails on this reply.
    SalvageCheckpointOnly,
}

impl ReplyHint {
    /// A few words for a badge.
    pub fn title(self) -> &'static str {
        match self {
            ReplyHint::SalvageCheckpointOnly => "Only salvage_checkpoint: normal on a primary",
        }
    }

    /// What the reply means and what to do with it.
    pub fn words(self) -> &'static str {
        match self {
            ReplyHint::SalvageCheckpointOnly => {
                "This reply has a salvage_checkpoint and no checkpoint. That is normal on a primary, \
                 and a force-promoted new primary always answers this way: checkpoint is the live CDC \
                 position, which only a cluster still replicating as a secondary has. \
                 salvage_checkpoint is what a salvage needs: dump the old primary's WAL from it \
                 (pchannel, message_id, time_tick). SDKs that require checkpoint fail on this reply: \
                 the official Rust SDK 3.0.3's get_replicate_info errors \"replicate info response \
                 has no checkpoint\". Read it with walscope (salvage, or this composer), pymilvus or \
                 grpcurl instead."
            }
        }
    }
}

/// The hint a reply calls for, if any (None for every reply of another type).
pub fn reply_hint(reply: &DynamicMessage) -> Option<ReplyHint> {
    if reply.descriptor().full_name() != REPLICATE_INFO_RESPONSE {
        return None;
    }
    let set = |name: &str| reply.descriptor().get_field_by_name(name).is_some_and(|f| reply.has_field(&f));
    (set("salvage_checkpoint") && !set("checkpoint")).then_some(ReplyHint::SalvageCheckpointOnly)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaSet;

    fn reply(json: &str) -> DynamicMessage {
        let set = SchemaSet::shared_builtin();
        crate::codec::from_json(&set.message(REPLICATE_INFO_RESPONSE).unwrap(), json).unwrap()
    }

    const CHECKPOINT: &str = r#"{"cluster_id": "by-dev-old", "pchannel": "by-dev-rootcoord-dml_0",
        "message_id": {"id": "ru", "WAL_name": "RocksMQ"}, "time_tick": "470809973908570179"}"#;

    /// Only a reply with salvage_checkpoint and no checkpoint gets the hint: not an empty one
    /// (no checkpoint for that cluster: nothing to salvage from), not a secondary's (both), and
    /// not another method's reply.
    #[test]
    fn a_reply_with_only_the_salvage_checkpoint_is_explained() {
        let only = reply(&format!(r#"{{"salvage_checkpoint": {CHECKPOINT}}}"#));
        let hint = reply_hint(&only).expect("a hint");
        assert_eq!(hint, ReplyHint::SalvageCheckpointOnly);
        let words = hint.words();
        for needle in ["normal on a primary", "force-promoted", "salvage_checkpoint is what a salvage needs"]
        {
            assert!(words.contains(needle), "{needle}: {words}");
        }
        assert!(
            words.contains("Rust SDK 3.0.3") && words.contains("replicate info response has no checkpoint")
        );
        assert_eq!(reply_hint(&reply("{}")), None);
        let both = reply(&format!(r#"{{"checkpoint": {CHECKPOINT}, "salvage_checkpoint": {CHECKPOINT}}}"#));
        assert_eq!(reply_hint(&both), None);
        assert_eq!(reply_hint(&reply(&format!(r#"{{"checkpoint": {CHECKPOINT}}}"#))), None);
        let set = SchemaSet::shared_builtin();
        let other = crate::codec::from_json(&set.message(MILVUS_STATUS).unwrap(), "{}").unwrap();
        assert_eq!(reply_hint(&other), None);
    }
}
