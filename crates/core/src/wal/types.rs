//! Milvus WAL message types (`_t`): names, and which header and body protobuf types a message of
//! a given type and version (`_v`) carries (reference §3.3, §3.4), plus which types DumpMessages
//! sends at all (§4).
//!
//! Owns: the version-1 body table (the only irregular part; everything else follows the
//! `<Name>MessageHeader` / `<Name>MessageBody` naming rule). Must never: guess a type for a number
//! the schema does not name; callers show such numbers raw.

use prost_reflect::{DescriptorPool, MessageDescriptor};

/// Full name of the `_t` enum.
pub const MESSAGE_TYPE_ENUM: &str = "milvus.proto.messages.MessageType";
const MESSAGES_PKG: &str = "milvus.proto.messages";

/// Version-1 types and their bodies, which predate the streaming service and are still the old
/// milvus-proto `msg.*` request types.
const V1_BODIES: &[(&str, &str)] = &[
    ("TimeTick", "milvus.proto.msg.TimeTickMsg"),
    ("Insert", "milvus.proto.msg.InsertRequest"),
    ("Delete", "milvus.proto.msg.DeleteRequest"),
    ("CreateCollection", "milvus.proto.msg.CreateCollectionRequest"),
    ("DropCollection", "milvus.proto.msg.DropCollectionRequest"),
    ("CreatePartition", "milvus.proto.msg.CreatePartitionRequest"),
    ("DropPartition", "milvus.proto.msg.DropPartitionRequest"),
    ("Import", "milvus.proto.msg.ImportMsg"),
];

/// The enum name of type number `t`, if the schema knows it.
pub fn message_type_name(pool: &DescriptorPool, t: i32) -> Option<String> {
    let e = pool.get_enum_by_name(MESSAGE_TYPE_ENUM)?;
    e.get_value(t).map(|v| v.name().to_string())
}

/// The `_v` Milvus writes for type `t`: 1 for the `msg.*`-bodied types, 2 for every other type
/// the schema names, `None` for numbers it does not know.
pub fn expected_version(pool: &DescriptorPool, t: i32) -> Option<u32> {
    let name = message_type_name(pool, t)?;
    if name == "Unknown" {
        return None;
    }
    Some(if V1_BODIES.iter().any(|(n, _)| *n == name) { 1 } else { 2 })
}

/// Header type (from `_h`) and body type (from the payload) of a message of type `t` and format
/// version `version`. Version 0 (legacy, no `_v`) has neither: its payload is the old msgstream
/// form. A version that does not match the type (say Insert at `_v` 2) gets the header but no
/// body, since the body format is what the version changes.
pub fn header_body_types(
    pool: &DescriptorPool,
    t: i32,
    version: u32,
) -> (Option<MessageDescriptor>, Option<MessageDescriptor>) {
    let Some(name) = message_type_name(pool, t) else { return (None, None) };
    if version == 0 {
        return (None, None);
    }
    let header = pool.get_message_by_name(&format!("{MESSAGES_PKG}.{name}MessageHeader"));
    let v1_body = V1_BODIES.iter().find(|(n, _)| *n == name).map(|(_, b)| *b);
    let body = match (version, v1_body) {
        (1, Some(body)) => pool.get_message_by_name(body),
        (1, None) => None,
        (_, Some(_)) => None,
        (_, None) => pool.get_message_by_name(&format!("{MESSAGES_PKG}.{name}MessageBody")),
    };
    (header, body)
}

/// The body type of the payload of an ImmutableMessage whose field nodes are `fields` (its
/// typed tree), from its `_t` and `_v` properties. None when it is encrypted (`_ch`), names no
/// type or version, or the pair has no body type (see [`header_body_types`]).
pub fn payload_body_type(
    pool: &DescriptorPool,
    fields: &[crate::codec::tree::TypedNode],
) -> Option<MessageDescriptor> {
    let prop = |key: &str| {
        let label = format!("properties[\"{key}\"]");
        let node = fields.iter().rev().find(|n| n.label == label)?;
        node.value.as_deref().map(|v| v.trim_matches('"').to_string())
    };
    if prop("_ch").is_some() {
        return None;
    }
    let t: i32 = prop("_t")?.parse().ok()?;
    let v: u32 = prop("_v")?.parse().ok()?;
    header_body_types(pool, t, v).1
}

/// Whether DumpMessages sends messages of type `t`: everything but the self-controlled types
/// (TimeTick, CreateSegment, Flush; upstream's RecoveryBarrier has no confirmed number yet) and
/// RollbackTxn.
pub fn is_dumped_type(t: i32) -> bool {
    !matches!(t, 1 | 4 | 10 | 902)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaSet;

    #[test]
    fn names_versions_and_types() {
        let set = SchemaSet::builtin();
        let pool = set.pool();
        assert_eq!(message_type_name(pool, 2).as_deref(), Some("Insert"));
        assert_eq!(message_type_name(pool, 999).as_deref(), Some("Txn"));
        assert_eq!(message_type_name(pool, 4711), None);
        assert_eq!(expected_version(pool, 2), Some(1));
        assert_eq!(expected_version(pool, 900), Some(2));
        assert_eq!(expected_version(pool, 0), None);
        assert_eq!(expected_version(pool, 4711), None);

        let names = |t, v| {
            let (h, b) = header_body_types(pool, t, v);
            (h.map(|d| d.full_name().to_string()), b.map(|d| d.full_name().to_string()))
        };
        let (h, b) = names(2, 1);
        assert_eq!(h.as_deref(), Some("milvus.proto.messages.InsertMessageHeader"));
        assert_eq!(b.as_deref(), Some("milvus.proto.msg.InsertRequest"));
        let (h, b) = names(2, 2);
        assert_eq!(h.as_deref(), Some("milvus.proto.messages.InsertMessageHeader"));
        assert_eq!(b, None);
        let (h, b) = names(900, 2);
        assert_eq!(h.as_deref(), Some("milvus.proto.messages.BeginTxnMessageHeader"));
        assert_eq!(b.as_deref(), Some("milvus.proto.messages.BeginTxnMessageBody"));
        assert_eq!(names(900, 1), (Some("milvus.proto.messages.BeginTxnMessageHeader".into()), None));
        assert_eq!(names(2, 0), (None, None));
        assert_eq!(names(4711, 2), (None, None));
        assert_eq!(names(0, 2), (None, None)); // Unknown has no header or body type
        // The newer types (upstream master): row-level security, snapshots, manifests.
        for (t, name) in [
            (47, "AlterRLSMetadata"),
            (48, "DropRLSMetadata"),
            (39, "RestoreSnapshot"),
            (40, "CreateSnapshot"),
            (41, "DropSnapshot"),
            (42, "BatchUpdateManifest"),
            (43, "RefreshExternalCollection"),
            (44, "DropSnapshotsByCollection"),
        ] {
            assert_eq!(message_type_name(pool, t).as_deref(), Some(name));
            assert_eq!(expected_version(pool, t), Some(2));
            let (h, b) = header_body_types(pool, t, 2);
            let (h, b) = (h.unwrap(), b.unwrap());
            assert_eq!(h.name(), format!("{name}MessageHeader"));
            assert_eq!(b.name(), format!("{name}MessageBody"));
            // Their headers carry fields now (they were empty messages).
            assert!(h.fields().next().is_some(), "{name}");
        }
    }

    #[test]
    fn dumped_types() {
        for t in [1, 4, 10, 902] {
            assert!(!is_dumped_type(t), "{t}");
        }
        for t in [0, 2, 3, 5, 9, 11, 37, 700, 800, 900, 901, 999, 4711] {
            assert!(is_dumped_type(t), "{t}");
        }
    }
}
