//! Fields whose wire type changed between upstream versions under the same number, so one
//! descriptor cannot read every server's bytes. Today one: `milvus.proto.msg.ImportMsg` field 10,
//! `string idempotency_key` in milvus-proto master (9810b92, #633; our built-in) and `int64
//! version` in the milvus-proto that milvus-sdk-rust 3.0.3 ships. A WAL Import frame from either
//! line must decode.
//!
//! Owns: the table of such fields and the rule: when the bytes carry the field with the other
//! wire type, the message decodes as if the descriptor lacked that field, so its value is kept
//! as an unknown field (bytes unchanged, edits stay lossless), and [`note`] says why. Must
//! never: apply to any other message or field, or hide a wire-type mismatch it does not list.

use crate::wire::varint::read_varint;
use prost_reflect::{DescriptorPool, MessageDescriptor};
use prost_types::FileDescriptorSet;

/// (message, field number, the other definition in words).
const ALTERNATIVES: &[(&str, u32, &str)] = &[(
    "milvus.proto.msg.ImportMsg",
    10,
    "int64 version in the milvus-proto of milvus-sdk-rust 3.0.3 (the import task version: 0 legacy, 2 ImportTaskV2, 3 ReshardTask + ImportTaskV3)",
)];

/// Wire type of a field as a descriptor reads it (packed repeated scalars aside: not listed).
fn expected_wire_type(desc: &MessageDescriptor, number: u32) -> Option<u64> {
    use prost_reflect::Kind::*;
    let fd = desc.get_field(number)?;
    Some(match fd.kind() {
        _ if fd.is_list() || fd.is_map() => return None,
        Double | Fixed64 | Sfixed64 => 1,
        Float | Fixed32 | Sfixed32 => 5,
        String | Bytes | Message(_) => 2,
        _ => 0,
    })
}

/// The wire types field `number` appears with at the top level of `bytes` (None if the bytes
/// are not a well-formed run of fields: the strict decoder then says what is wrong).
fn wire_types_of(bytes: &[u8], number: u32) -> Option<Vec<u64>> {
    let (mut pos, end, mut out) = (0usize, bytes.len(), Vec::new());
    while pos < end {
        let (key, p) = read_varint(bytes, pos, end).ok()?;
        let (n, wt) = (key >> 3, key & 7);
        pos = match wt {
            0 => read_varint(bytes, p, end).ok()?.1,
            1 => p.checked_add(8)?,
            2 => {
                let (len, p) = read_varint(bytes, p, end).ok()?;
                p.checked_add(usize::try_from(len).ok()?)?
            }
            5 => p.checked_add(4)?,
            _ => return None,
        };
        if pos > end {
            return None;
        }
        if n == u64::from(number) {
            out.push(wt);
        }
    }
    Some(out)
}

/// The listed field of `desc` that `bytes` carry with the other wire type, and its words.
fn mismatch(desc: &MessageDescriptor, bytes: &[u8]) -> Option<(u32, &'static str)> {
    let &(_, number, words) = ALTERNATIVES.iter().find(|(m, _, _)| *m == desc.full_name())?;
    let expected = expected_wire_type(desc, number)?;
    let seen = wire_types_of(bytes, number)?;
    seen.iter().any(|wt| *wt != expected).then_some((number, words))
}

/// Why a field of this message shows as an unknown field, when it is a listed one carried with
/// the other wire type: for the detail view and `decode`'s output.
pub fn note(desc: &MessageDescriptor, bytes: &[u8]) -> Option<String> {
    let (number, words) = mismatch(desc, bytes)?;
    let ours = desc.get_field(number).map(|f| crate::schema::compare::field_words(&f)).unwrap_or_default();
    Some(format!(
        "field {number} is shown as an unknown field: it has the wire type of {words}, not of `{ours}` (milvus-proto master) that the schema has"
    ))
}

/// `desc` without the listed field, when `bytes` carry it with the other wire type: the
/// descriptor to decode them with. None when the bytes need no such help.
pub fn alternative(desc: &MessageDescriptor, bytes: &[u8]) -> Option<MessageDescriptor> {
    let (number, _) = mismatch(desc, bytes)?;
    // Only top-level messages are listed; a nested one would need its path walked.
    if desc.parent_message().is_some() {
        return None;
    }
    let file_name = desc.parent_file().name().to_string();
    let mut files: Vec<_> = desc.parent_pool().file_descriptor_protos().cloned().collect();
    let file = files.iter_mut().find(|f| f.name() == file_name)?;
    let msg = file.message_type.iter_mut().find(|m| m.name() == desc.name())?;
    msg.field.retain(|f| f.number() != number as i32);
    let pool = DescriptorPool::from_file_descriptor_set(FileDescriptorSet { file: files }).ok()?;
    pool.get_message_by_name(desc.full_name())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{MessageDecoder, decode};
    use crate::schema::SchemaSet;
    use crate::wire::varint::write_varint;

    /// ImportMsg with jobID 7 and field 10 as a string (master) or a varint (the SDK's).
    fn import_bytes(field10_varint: bool) -> Vec<u8> {
        let mut b = vec![0x48, 7]; // field 9 (jobID) = 7
        if field10_varint {
            b.push(10 << 3); // field 10, wire type 0
            write_varint(3, &mut b);
        } else {
            b.extend([(10 << 3) | 2, 3]);
            b.extend(b"key");
        }
        b
    }

    #[test]
    fn both_encodings_of_import_field_10_decode() {
        let set = SchemaSet::builtin();
        let desc = set.message("milvus.proto.msg.ImportMsg").unwrap();

        let master = import_bytes(false);
        let m = decode(&desc, &master).expect("string field 10 decodes").message;
        assert_eq!(m.get_field_by_name("idempotency_key").unwrap().as_str(), Some("key"));
        assert_eq!(m.unknown_fields().count(), 0);
        assert_eq!(note(&desc, &master), None);

        let sdk = import_bytes(true);
        for m in [
            decode(&desc, &sdk).expect("varint field 10 decodes").message,
            MessageDecoder::new(&desc).decode(&sdk).unwrap(),
        ] {
            assert_eq!(m.get_field_by_name("jobID").unwrap().as_i64(), Some(7));
            let unknown: Vec<_> = m.unknown_fields().collect();
            assert_eq!(unknown.len(), 1);
            assert_eq!(unknown[0].number(), 10);
            // The bytes are kept as they came.
            assert_eq!(crate::codec::encode(&m), sdk);
        }
        let words = note(&desc, &sdk).expect("a note");
        assert!(words.contains("field 10") && words.contains("int64 version"), "{words}");
    }

    #[test]
    fn other_mismatches_still_fail() {
        let set = SchemaSet::builtin();
        // Another field of ImportMsg with the wrong wire type (db_name as a varint).
        let desc = set.message("milvus.proto.msg.ImportMsg").unwrap();
        assert!(decode(&desc, &[2 << 3, 1]).is_err());
        // Field 10 of another message is not listed.
        let other = set.message("milvus.proto.msg.InsertRequest").unwrap();
        assert_eq!(alternative(&other, &[10 << 3, 1]), None);
    }
}
