//! Every built-in message type: generated instances survive bytes -> DynamicMessage -> bytes
//! byte-for-byte, and JSON and text format back to equal messages.

use crate::common;

use common::{Rng, random_message};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use walscope::codec;
use walscope::schema::SchemaSet;

#[test]
fn every_builtin_type_round_trips() {
    let set = SchemaSet::builtin();
    let mut tested = 0;
    let nonempty = std::cell::Cell::new(0usize);
    for desc in set.pool().all_messages() {
        if desc.is_map_entry() || desc.full_name().starts_with("google.protobuf.") {
            continue;
        }
        tested += 1;
        let mut runner =
            TestRunner::new(Config { cases: 64, failure_persistence: None, ..Config::default() });
        let result = runner.run(&any::<u64>(), |seed| {
            let mut rng = Rng(seed);
            let Some(m0) = random_message(&desc, &mut rng, 0) else { return Ok(()) };
            let b1 = codec::encode(&m0);
            if b1.len() > 4 {
                nonempty.set(nonempty.get() + 1);
            }
            let d1 = codec::decode(&desc, &b1).map_err(|e| TestCaseError::fail(e.to_string()))?;
            // Without the wire tree, the same message.
            let alone = codec::decode_message(&desc, &b1).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&alone, &d1.message);
            let b2 = codec::encode(&d1.message);
            prop_assert_eq!(&b1, &b2, "bytes -> message -> bytes changed {}", desc.full_name());
            let json = codec::to_json(&d1.message, false);
            let from_json =
                codec::from_json(&desc, &json).map_err(|e| TestCaseError::fail(format!("{e}\n{json}")))?;
            prop_assert_eq!(&from_json, &d1.message, "JSON round trip of {}: {}", desc.full_name(), json);
            prop_assert_eq!(codec::encode(&from_json), b1.clone());
            let text = codec::to_text(&d1.message);
            // `decode --format text` writes the text as it prints it: the same bytes, and no
            // trailing whitespace (the command used to trim it).
            let mut written = Vec::new();
            codec::write_text(&d1.message, &mut written).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(String::from_utf8(written).unwrap_or_default(), text.clone());
            prop_assert_eq!(text.trim_end(), text.as_str());
            let from_text =
                codec::from_text(&desc, &text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert_eq!(&from_text, &d1.message, "text round trip of {}: {}", desc.full_name(), text);
            prop_assert_eq!(codec::encode(&from_text), b1);
            Ok(())
        });
        if let Err(e) = result {
            panic!("{}: {e}", desc.full_name());
        }
    }
    assert!(tested > 150, "only {tested} built-in message types found");
    // The generator must produce real content, or the round trips prove nothing.
    assert!(nonempty.get() > tested * 8, "only {} non-trivial instances", nonempty.get());
}

#[test]
fn canonical_encoding_sorts_map_entries() {
    let set = SchemaSet::builtin();
    let desc = set.message("milvus.proto.common.ImmutableMessage").unwrap();
    let json = r#"{"properties": {"_v": "2", "_t": "2", "_vc": "ch"}}"#;
    let m = codec::from_json(&desc, json).unwrap();
    let a = codec::encode(&m);
    for _ in 0..5 {
        let again = codec::from_json(&desc, json).unwrap();
        assert_eq!(codec::encode(&again), a);
    }
    let decoded = codec::decode(&desc, &a).unwrap();
    let keys: Vec<String> = decoded
        .wire
        .root
        .fields
        .iter()
        .map(|f| {
            let entry = &a[f.value.clone()];
            String::from_utf8_lossy(&entry[2..2 + entry[1] as usize]).into_owned()
        })
        .collect();
    assert_eq!(keys, ["_t", "_v", "_vc"]);
}

#[test]
fn proto2_presence_is_kept() {
    let set = SchemaSet::builtin();
    let desc = set.message("openmldb.datasync.SyncPoint").unwrap();
    let m = codec::from_json(&desc, r#"{"type": "kSNAPSHOT"}"#).unwrap();
    assert_eq!(codec::encode(&m), vec![0x08, 0x00]);
    let m = codec::from_text(&desc, "type: kSNAPSHOT").unwrap();
    assert_eq!(codec::encode(&m), vec![0x08, 0x00]);
    let d = codec::decode(&desc, &[0x08, 0x00]).unwrap();
    assert_eq!(codec::encode(&d.message), vec![0x08, 0x00]);
}

/// Written text leaves unknown fields out, as `to_text` does.
#[test]
fn written_text_leaves_unknown_fields_out_as_to_text_does() {
    let set = SchemaSet::builtin();
    let desc = set.message("milvus.proto.common.ImmutableMessage").unwrap();
    let m = codec::from_json(&desc, r#"{"payload": "AAE=", "properties": {"_t": "2"}}"#).unwrap();
    let mut bytes = codec::encode(&m);
    bytes.extend_from_slice(&[0xb8, 0x3e, 0x07]); // field 999, varint 7
    let d = codec::decode(&desc, &bytes).unwrap().message;
    assert_eq!(codec::count_unknown(&d), 1);
    let mut written = Vec::new();
    codec::write_text(&d, &mut written).unwrap();
    let written = String::from_utf8(written).unwrap();
    assert_eq!(written, codec::to_text(&d));
    assert!(written.contains("payload") && !written.contains("999"), "{written}");
}

/// `decode_message` answers as `decode` does on damaged bytes too: every cut of a generated
/// InsertRequest, and every byte of it replaced by 0xff, gives the same message or the same
/// error, word for word.
#[test]
fn decode_message_answers_as_decode_on_damaged_bytes() {
    let set = SchemaSet::builtin();
    let desc = set.message("milvus.proto.msg.InsertRequest").unwrap();
    let mut rng = Rng(11);
    let msg =
        (0..50).find_map(|_| random_message(&desc, &mut rng, 0).filter(|m| codec::encode(m).len() > 40));
    let bytes = codec::encode(&msg.expect("a non-trivial InsertRequest"));
    let mut variants: Vec<Vec<u8>> = (0..bytes.len()).map(|n| bytes[..n].to_vec()).collect();
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] = 0xff;
        variants.push(b);
    }
    for b in &variants {
        let full = codec::decode(&desc, b).map(|d| d.message).map_err(|e| e.to_string());
        let alone = codec::decode_message(&desc, b).map_err(|e| e.to_string());
        assert_eq!(alone, full, "{b:02x?}");
    }
}
