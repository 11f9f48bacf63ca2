//! Lossless edits: a changed leaf rewrites only its own bytes and the length prefixes of the
//! messages above it; unknown fields, field order and non-canonical encodings survive.

use crate::common;

use common::hex;
use walscope::codec::{self, Edit};
use walscope::schema::SchemaSet;

fn ld(key: u8, body: &[u8]) -> Vec<u8> {
    assert!(body.len() < 128);
    let mut v = vec![key, body.len() as u8];
    v.extend_from_slice(body);
    v
}

/// A `Task` written the way no canonical encoder would: fields out of order, unknown fields at
/// two levels, a padded varint. `offset` is the sync point offset as varint bytes.
fn odd_task(offset: &[u8]) -> Vec<u8> {
    let mut sync_point = vec![0x08, 0x01, 0x20];
    sync_point.extend_from_slice(offset);
    let mut progress = ld(0x2a, &sync_point); // sync_point = 5
    progress.extend_from_slice(&[0x08, 0x07]); // tid = 7, after field 5
    progress.extend_from_slice(&[0x7d, 1, 2, 3, 4]); // unknown field 15, fixed32
    let mut t = ld(0x22, b"RUNNING"); // status = 4 first
    t.extend_from_slice(&[0x98, 0x06, 0x05]); // unknown field 99 = 5
    t.extend_from_slice(&[0x18, 0x85, 0x80, 0x00]); // count = 5, padded varint
    t.extend(ld(0x0a, &progress)); // progress = 1
    t.extend(ld(0x12, b"127.0.0.1:8888")); // data_collector = 2
    t
}

fn edit(type_name: &str, bytes: &[u8], spec: &str) -> Vec<u8> {
    let set = SchemaSet::builtin();
    let desc = set.message(type_name).unwrap();
    codec::apply_edits(&desc, bytes, &[Edit::set(spec).unwrap()]).unwrap()
}

#[test]
fn one_leaf_changes_only_itself_and_the_length_prefixes_above_it() {
    let before = odd_task(&[0xe8, 0x07]); // 1000
    let after = edit("openmldb.datasync.Task", &before, "progress.sync_point.offset=70000");
    let expected = odd_task(&[0xf0, 0xa2, 0x04]); // 70000, one byte longer
    assert_eq!(hex(&after), hex(&expected));
    // The byte diff: everything before progress's length prefix and after the offset is equal,
    // and exactly three places differ: progress length, sync_point length, the offset value.
    let progress_len_at = before.iter().position(|b| *b == 0x0a).unwrap() + 1;
    assert_eq!(before[..progress_len_at], after[..progress_len_at]);
    assert_eq!(after[progress_len_at], before[progress_len_at] + 1);
    assert_eq!(after[progress_len_at + 2], before[progress_len_at + 2] + 1, "sync_point length");
    assert_eq!(before[before.len() - 21..], after[after.len() - 21..], "tail untouched");
}

#[test]
fn same_length_edit_changes_only_the_value_bytes() {
    let before = odd_task(&[0xe8, 0x07]);
    let after = edit("openmldb.datasync.Task", &before, "progress.sync_point.offset=1001");
    let diffs: Vec<usize> = (0..before.len()).filter(|i| before[*i] != after[*i]).collect();
    assert_eq!(before.len(), after.len());
    assert_eq!(diffs.len(), 1, "only the low byte of the offset varint: {}", hex(&after));
}

#[test]
fn list_element_by_index_keeps_its_siblings() {
    let set = SchemaSet::builtin();
    let desc = set.message("openmldb.datasync.TaskStatusResponse").unwrap();
    let mut bytes = Vec::new();
    let tasks = [odd_task(&[0x01]), ld(0x22, b"INIT"), ld(0x22, b"FAILED")];
    for t in &tasks {
        bytes.extend(ld(0x12, t));
    }
    bytes.extend(ld(0x1a, b"lastUpdateTime=1")); // readableInfo
    let after = codec::apply_edits(&desc, &bytes, &[Edit::set("task[2].status=RUNNING").unwrap()]).unwrap();
    let mut expected = Vec::new();
    expected.extend(ld(0x12, &tasks[0]));
    expected.extend(ld(0x12, &tasks[1]));
    expected.extend(ld(0x12, &ld(0x22, b"RUNNING")));
    expected.extend(ld(0x1a, b"lastUpdateTime=1"));
    assert_eq!(hex(&after), hex(&expected));
    // Negative index counts from the end.
    let again = codec::apply_edits(&desc, &bytes, &[Edit::set("task[-1].status=RUNNING").unwrap()]).unwrap();
    assert_eq!(again, after);
}

#[test]
fn map_entry_by_key_and_new_entries() {
    let mut props = Vec::new();
    props.extend(ld(0x1a, &[ld(0x0a, b"_vc"), ld(0x12, b"old-ch")].concat()));
    props.extend(ld(0x1a, &[ld(0x0a, b"_t"), ld(0x12, b"2")].concat()));
    let mut msg = ld(0x12, b"PAYLOAD");
    msg.extend(&props);
    msg.extend_from_slice(&[0xa0, 0x06, 0x01]); // unknown 100
    let after =
        edit("milvus.proto.common.ImmutableMessage", &msg, "properties[\"_vc\"]=by-dev-rootcoord-dml_0");
    let mut expected = ld(0x12, b"PAYLOAD");
    expected.extend(ld(0x1a, &[ld(0x0a, b"_vc"), ld(0x12, b"by-dev-rootcoord-dml_0")].concat()));
    expected.extend(ld(0x1a, &[ld(0x0a, b"_t"), ld(0x12, b"2")].concat()));
    expected.extend_from_slice(&[0xa0, 0x06, 0x01]);
    assert_eq!(hex(&after), hex(&expected));
    let added = edit("milvus.proto.common.ImmutableMessage", &msg, "properties[\"_v\"]=2");
    assert!(added.starts_with(&msg), "a new entry is appended, old bytes stay");
    let set = SchemaSet::builtin();
    let desc = set.message("milvus.proto.common.ImmutableMessage").unwrap();
    let json = codec::to_json(&codec::decode(&desc, &added).unwrap().message, false);
    assert!(json.contains(r#""_v":"2""#), "{json}");
    let removed = codec::apply_edits(&desc, &msg, &[Edit::clear("properties[\"_t\"]").unwrap()]).unwrap();
    assert_eq!(removed.len(), msg.len() - 9, "the whole 9-byte entry goes");
    assert!(removed.starts_with(&msg[..9 + 13]), "bytes before it stay");
}

#[test]
fn missing_parents_are_created_and_proto2_presence_respected() {
    let after = edit("openmldb.datasync.Task", &[], "progress.sync_point.type=kSNAPSHOT");
    assert_eq!(after, vec![0x0a, 0x04, 0x2a, 0x02, 0x08, 0x00]);
    let sp = edit("openmldb.datasync.SyncPoint", &[], "type=kSNAPSHOT");
    assert_eq!(sp, vec![0x08, 0x00]);
}

#[test]
fn packed_elements_append_and_oneof() {
    let set = SchemaSet::builtin();
    let desc = set.message("milvus.proto.msg.InsertRequest").unwrap();
    // timestamps = 10, packed uint64: [1, 2, 3]; an unknown field before it.
    let mut bytes = vec![0xf8, 0x07, 0x09];
    bytes.extend(ld(0x52, &[1, 2, 3]));
    let after = codec::apply_edits(&desc, &bytes, &[Edit::set("timestamps[1]=300").unwrap()]).unwrap();
    let mut expected = vec![0xf8, 0x07, 0x09];
    expected.extend(ld(0x52, &[1, 0xac, 0x02, 3]));
    assert_eq!(hex(&after), hex(&expected));
    let appended = codec::apply_edits(&desc, &bytes, &[Edit::append("timestamps=4").unwrap()]).unwrap();
    let mut expected = vec![0xf8, 0x07, 0x09];
    expected.extend(ld(0x52, &[1, 2, 3, 4]));
    assert_eq!(hex(&appended), hex(&expected));
    let removed = codec::apply_edits(&desc, &bytes, &[Edit::clear("timestamps[0]").unwrap()]).unwrap();
    let mut expected = vec![0xf8, 0x07, 0x09];
    expected.extend(ld(0x52, &[2, 3]));
    assert_eq!(hex(&removed), hex(&expected));

    // Setting one member of a oneof removes the other.
    let resp = set.message("milvus.proto.milvus.DumpMessagesResponse").unwrap();
    let with_message = ld(0x12, &ld(0x12, b"x"));
    let after =
        codec::apply_edits(&resp, &with_message, &[Edit::set("status.reason=boom").unwrap()]).unwrap();
    let json = codec::to_json(&codec::decode(&resp, &after).unwrap().message, false);
    assert_eq!(json, r#"{"status":{"reason":"boom"}}"#);
}

#[test]
fn edit_errors_explain_themselves() {
    let set = SchemaSet::builtin();
    let desc = set.message("openmldb.datasync.TaskStatusResponse").unwrap();
    let bytes = ld(0x12, &ld(0x22, b"INIT"));
    let err =
        |spec: &str| codec::apply_edits(&desc, &bytes, &[Edit::set(spec).unwrap()]).unwrap_err().to_string();
    assert!(err("task[5].status=X").contains("out of range: task has 1 elements"));
    assert!(err("task.status=X").contains("say which element"));
    assert!(err("nosuch=1").contains("has no field \"nosuch\"; its fields: response, task, readableInfo"));
    assert!(err("task[0].count=abc").contains("not a valid uint64"));
    assert!(err("task[0].progress.mode=kNope").contains("one of: kFull"));
    // Truncated input is refused before any edit, naming the offset.
    let e = codec::apply_edits(&desc, &bytes[..3], &[Edit::set("task[0].status=X").unwrap()]).unwrap_err();
    assert!(e.to_string().contains("at byte 1"), "{e}");
}

#[test]
fn whole_repeated_and_map_fields_from_json() {
    let set = SchemaSet::builtin();
    let desc = set.message("milvus.proto.msg.InsertRequest").unwrap();
    let mut bytes = vec![0xf8, 0x07, 0x09];
    bytes.extend(ld(0x52, &[1, 2, 3]));
    bytes.extend(ld(0x22, b"coll"));
    let after =
        codec::apply_edits(&desc, &bytes, &[Edit::set("timestamps=[\"7\", \"8\"]").unwrap()]).unwrap();
    let mut expected = vec![0xf8, 0x07, 0x09];
    expected.extend(ld(0x52, &[7, 8]));
    expected.extend(ld(0x22, b"coll"));
    assert_eq!(hex(&after), hex(&expected));

    let imm = set.message("milvus.proto.common.ImmutableMessage").unwrap();
    let mut msg = ld(0x1a, &[ld(0x0a, b"_t"), ld(0x12, b"2")].concat());
    msg.extend(ld(0x12, b"P"));
    let after =
        codec::apply_edits(&imm, &msg, &[Edit::set("properties={\"_v\": \"2\", \"_t\": \"3\"}").unwrap()])
            .unwrap();
    let mut expected = ld(0x1a, &[ld(0x0a, b"_t"), ld(0x12, b"3")].concat());
    expected.extend(ld(0x1a, &[ld(0x0a, b"_v"), ld(0x12, b"2")].concat()));
    expected.extend(ld(0x12, b"P"));
    assert_eq!(hex(&after), hex(&expected), "sorted entries where the old ones stood");
    let e = codec::apply_edits(&desc, &bytes, &[Edit::set("timestamps=[1,").unwrap()]).unwrap_err();
    assert!(e.to_string().contains("must be JSON (an array)"), "{e}");
}

/// Reordering swaps the elements' own bytes: odd encodings inside an element move with it, the
/// field between two elements stays put, and a packed run reorders inside itself.
#[test]
fn moving_list_elements_keeps_each_elements_bytes() {
    let set = SchemaSet::builtin();
    let status = set.message("openmldb.datasync.TaskStatusResponse").unwrap();
    let (a, b) = (odd_task(&[0x81, 0x00]), odd_task(&[0x02]));
    let mut resp = ld(0x12, &a); // task[0]
    resp.extend(ld(0x0a, &[0x08, 0x00])); // response = 1, between the tasks
    resp.extend(ld(0x12, &b)); // task[1]
    let moved = codec::apply_edits(&status, &resp, &[Edit::move_by("task[1]", -1).unwrap()]).unwrap();
    let mut want = ld(0x12, &b);
    want.extend(ld(0x0a, &[0x08, 0x00]));
    want.extend(ld(0x12, &a));
    assert_eq!(hex(&moved), hex(&want));
    let back = codec::apply_edits(&status, &moved, &[Edit::move_by("task[0]", 1).unwrap()]).unwrap();
    assert_eq!(back, resp);
    let err = codec::apply_edits(&status, &resp, &[Edit::move_by("task[1]", 1).unwrap()]).unwrap_err();
    assert!(err.to_string().contains("cannot move +1 places"), "{err}");

    let longs = set.message("milvus.proto.schema.LongArray").unwrap();
    let packed = [0x0a, 0x04, 0x01, 0x96, 0x01, 0x03]; // data = [1, 150, 3]
    let out = codec::apply_edits(&longs, &packed, &[Edit::move_by("data[0]", 2).unwrap()]).unwrap();
    assert_eq!(out, [0x0a, 0x04, 0x96, 0x01, 0x03, 0x01]);
}
