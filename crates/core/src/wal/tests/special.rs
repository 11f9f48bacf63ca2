//! Messages that must be read without a panic and described honestly: encrypted, legacy,
//! unknown types, malformed properties and payloads, and random junk.

use super::*;
use crate::wal::{Encryption, analyze, analyze_bytes};

fn insert_header(pool: &DescriptorPool) -> DynamicMessage {
    let mut h = new_msg(pool, "milvus.proto.messages.InsertMessageHeader");
    h.set_field_by_name("collection_id", Value::I64(4491));
    h
}

#[test]
fn encrypted_payload_is_flagged_not_a_problem() {
    let pool = pool();
    let mut ch = new_msg(&pool, "milvus.proto.messages.CipherHeader");
    ch.set_field_by_name("ez_id", Value::I64(1));
    ch.set_field_by_name("collection_id", Value::I64(4491));
    ch.set_field_by_name("safe_key", Value::Bytes(vec![1, 2, 3].into()));
    ch.set_field_by_name("payload_bytes", Value::I64(100));
    let mut props = base_props(2, 1);
    props.push(("_h", b64(&insert_header(&pool))));
    props.push(("_ch", b64(&ch)));
    let garbage = vec![0xff, 0xfe, 0x07, 0x00, 0x9a, 0x13];
    let w = analyze(&pool, &immutable(&pool, &props, garbage));
    assert_eq!(w.encryption, Encryption::Encrypted { cipher_header: Some(ch) });
    assert!(w.body.is_none());
    assert!(w.problems.is_empty(), "{:?}", w.problems);
    assert!(matches!(&w.header, Some(Ok(_))));
    assert_eq!(w.summary(), format!("Insert (encrypted) coll=4491 vchannel={VC} tt={TT_TEXT}"));

    // Collection id from the cipher header when `_h` lacks it; a broken `_ch` is a problem but
    // the message stays encrypted.
    let mut props = base_props(3, 1);
    props.push(("_ch", "@@".into()));
    let w = analyze(&pool, &immutable(&pool, &props, vec![1, 2, 3]));
    assert_eq!(w.encryption, Encryption::Encrypted { cipher_header: None });
    assert!(w.body.is_none());
    assert_eq!(w.problems.len(), 1);
    assert!(w.problems[0].starts_with("_ch: not valid base64"), "{:?}", w.problems);
}

#[test]
fn legacy_message_is_opaque() {
    let pool = pool();
    let payload = vec![0xab; 120];
    let w = analyze(&pool, &immutable(&pool, &[], payload.clone()));
    assert!(w.legacy);
    assert_eq!((w.version, w.type_number, w.type_name.as_str()), (None, None, "legacy"));
    assert!(w.header.is_none() && w.body.is_none());
    assert!(w.problems.is_empty(), "{:?}", w.problems);
    assert_eq!(w.summary(), "legacy message (no _v), payload 120 bytes");

    let props = [("_t", "2".to_string()), ("_tt", crate::wal::to_base36(TT)), ("_h", "CAE=".into())];
    let w = analyze(&pool, &immutable(&pool, &props, payload));
    assert!(w.legacy && w.body.is_none());
    assert!(w.problems.is_empty(), "{:?}", w.problems);
    assert!(matches!(&w.header, Some(Err(e)) if e.contains("legacy")));
    assert_eq!(w.summary(), format!("legacy message (no _v), type Insert, payload 120 bytes tt={TT_TEXT}"));
}

#[test]
fn unknown_type_shows_the_raw_number() {
    let pool = pool();
    let mut props = base_props(4711, 2);
    props.push(("_h", "CAE=".into()));
    let w = analyze(&pool, &immutable(&pool, &props, vec![8, 1]));
    assert_eq!((w.type_number, w.type_name.as_str()), (Some(4711), "4711"));
    assert!(w.body.is_none());
    assert!(matches!(&w.header, Some(Err(e)) if e.contains("2 bytes")), "{:?}", w.header);
    assert!(w.problems.is_empty(), "{:?}", w.problems);
    assert_eq!(w.summary(), format!("type 4711 (unknown) vchannel={VC} tt={TT_TEXT}"));
}

#[test]
fn malformed_header_is_a_problem_not_a_panic() {
    let pool = pool();
    let body = codec::encode(&new_msg(&pool, "milvus.proto.msg.InsertRequest"));
    let mut props = base_props(2, 1);
    props.push(("_h", "not*base64".into()));
    let w = analyze(&pool, &immutable(&pool, &props, body.clone()));
    assert!(matches!(&w.header, Some(Err(e)) if e.contains("base64")));
    assert_eq!(w.problems.len(), 1, "{:?}", w.problems);
    assert!(w.problems[0].starts_with("_h: not valid base64"), "{}", w.problems[0]);
    assert!(matches!(&w.body, Some(Ok(_))), "the body is still read");
    assert!(w.summary().ends_with("[1 problem]"), "{}", w.summary());

    // Valid base64, bad protobuf: collection_id (field 1) key, then the data ends.
    let mut props = base_props(2, 1);
    props.push(("_h", BASE64.encode([0x08])));
    let w = analyze(&pool, &immutable(&pool, &props, body.clone()));
    let want = "_h: not a valid milvus.proto.messages.InsertMessageHeader: at byte 1";
    assert!(w.problems.len() == 1 && w.problems[0].starts_with(want), "{:?}", w.problems);
    // Field 1 with the wrong wire type.
    let mut props = base_props(2, 1);
    props.push(("_h", BASE64.encode([0x0a, 0x01, 0x41])));
    let w = analyze(&pool, &immutable(&pool, &props, body));
    assert!(w.problems[0].contains("at byte 0"), "{:?}", w.problems);
}

#[test]
fn malformed_properties_and_payload_are_listed() {
    let pool = pool();
    let props = [
        ("_t", "two".to_string()),
        ("_v", "x".into()),
        ("_tt", "zz!".into()),
        ("_btt", "".into()),
        ("_wt", "-".into()),
        ("_lc", "r z".into()),
        ("_tx", "AAA".into()),
        ("_bh", BASE64.encode([0xff])),
        ("_rh", "%%%%".into()),
        ("_tc", BASE64.encode([0x0a, 0x05, 0x01])),
    ];
    let w = analyze(&pool, &immutable(&pool, &props, vec![0xff; 4]));
    assert_eq!(w.problems.len(), props.len(), "{:#?}", w.problems);
    for (key, _) in props {
        assert!(w.problems.iter().any(|p| p.starts_with(&format!("{key}:"))), "{key}: {:#?}", w.problems);
    }
    assert!(!w.legacy, "_v is present, just unreadable");
    assert_eq!(w.type_name, "Unknown");
    assert!(w.summary().starts_with("Unknown (no readable _t)"), "{}", w.summary());

    // A readable Insert whose payload is not an InsertRequest.
    let w = analyze(&pool, &immutable(&pool, &base_props(2, 1), vec![0x0a, 0x09, 0x01]));
    assert!(
        matches!(&w.body, Some(Err(e)) if e.starts_with("payload: not a valid milvus.proto.msg.InsertRequest"))
    );
    assert_eq!(w.problems.len(), 1);

    // Insert with a version-2 envelope: header read, body left alone, mismatch reported.
    let mut props = base_props(2, 2);
    props.push(("_h", b64(&insert_header(&pool))));
    let w = analyze(&pool, &immutable(&pool, &props, vec![1]));
    assert!(w.body.is_none() && matches!(&w.header, Some(Ok(_))));
    assert!(w.problems.len() == 1 && w.problems[0].contains("_v=1"), "{:?}", w.problems);
}

#[test]
fn ids_last_confirmed_and_flags() {
    let pool = pool();
    let mut props = base_props(2, 1);
    props.extend([
        ("_lc", "rs".to_string()),
        ("_lcs", String::new()),
        ("_np", String::new()),
        ("_pcl", String::new()),
        ("_ur", String::new()),
        ("_zz", "1".into()),
        ("_btt", crate::wal::to_base36(TT + 1)),
        ("_wt", "3".into()),
    ]);
    let mut m = immutable(&pool, &props, Vec::new());
    let w = analyze(&pool, &m);
    let lc = w.last_confirmed.as_ref().and_then(|r| r.as_ref().ok()).map(|r| r.display.as_str());
    assert_eq!(lc, Some("RocksMQ 1000")); // "rs" = 27 * 36 + 28
    assert!(w.last_confirmed_is_self);
    assert_eq!((w.barrier_timetick, w.wal_term), (Some(TT + 1), Some(3)));
    for f in [
        "_np (not persisted)",
        "_pcl (pchannel-level message)",
        "_ur (unsafe to replicate)",
        "unknown property _zz",
    ] {
        assert!(w.flags.iter().any(|g| g == f), "{f}: {:?}", w.flags);
    }

    // A Pulsar id: `_lc` uses the message's own backend.
    let mut id = new_msg(&pool, "milvus.proto.common.MessageID");
    id.set_field_by_name("id", Value::String("CAwQAw==".into()));
    id.set_field_by_name("WAL_name", Value::EnumNumber(2));
    m.set_field_by_name("id", Value::Message(id.clone()));
    let w = analyze(&pool, &m);
    let shown = w.id.as_ref().and_then(|r| r.as_ref().ok()).map(|r| r.display.as_str());
    assert_eq!(shown, Some("Pulsar 12/3/-1"));
    assert!(matches!(&w.last_confirmed, Some(Err(e)) if e.contains("Pulsar")));
    assert!(w.problems.iter().any(|p| p.starts_with("_lc: Pulsar")), "{:?}", w.problems);

    // A bad id is a problem; an Unknown backend is only unreadable, not wrong.
    id.set_field_by_name("id", Value::String("!!".into()));
    m.set_field_by_name("id", Value::Message(id.clone()));
    assert!(analyze(&pool, &m).problems.iter().any(|p| p.starts_with("id: Pulsar")));
    id.set_field_by_name("WAL_name", Value::EnumNumber(0));
    m.set_field_by_name("id", Value::Message(id));
    let w = analyze(&pool, &m);
    assert!(matches!(&w.id, Some(Err(_))) && w.problems.is_empty(), "{:?}", w.problems);
}

#[test]
fn analyze_bytes_rejects_non_messages_and_survives_junk() {
    let pool = pool();
    let e = analyze_bytes(&pool, &[0xff, 0xff]).map(|w| w.summary()).unwrap_err();
    assert!(e.contains("ImmutableMessage") && e.contains("byte 0"), "{e}");
    assert!(analyze_bytes(&pool, &[]).is_ok());

    // A small deterministic fuzz: random properties and payloads for every known key and many
    // types. Nothing may panic; everything must produce a summary.
    let keys =
        ["_t", "_v", "_tt", "_btt", "_wt", "_lc", "_lcs", "_vc", "_h", "_bh", "_tx", "_ch", "_rh", "_tc"];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..400 {
        let mut props: Vec<(&str, String)> = Vec::new();
        for key in keys {
            let r = next();
            if r % 3 == 0 {
                continue;
            }
            let bytes: Vec<u8> = (0..(r >> 8) % 12).map(|_| next() as u8).collect();
            let value = match (key, r % 4) {
                ("_t", _) => {
                    [2, 3, 5, 900, 999, 4711, (r >> 20) as i32 % 1000][(r >> 4) as usize % 7].to_string()
                }
                ("_v", 0) => "0".into(),
                ("_v", _) => ((r >> 4) % 3).to_string(),
                (_, 0) => String::from_utf8_lossy(&bytes).into_owned(),
                _ => BASE64.encode(&bytes),
            };
            props.push((key, value));
        }
        let payload: Vec<u8> = (0..next() % 40).map(|_| next() as u8).collect();
        let w = analyze(&pool, &immutable(&pool, &props, payload));
        assert!(!w.summary().is_empty(), "round {round}");
    }
}

/// A WAL Import frame decodes whether its ImportMsg field 10 is milvus-proto master's string
/// (`idempotency_key`) or the SDK 3.0.3 milvus-proto's varint (`version`): the second is kept
/// as an unknown field with a note, never a problem, in the full and the list-row reading.
#[test]
fn import_frames_decode_with_either_field_10() {
    let pool = pool();
    let header = new_msg(&pool, "milvus.proto.messages.ImportMessageHeader");
    let mut props = base_props(11, 1);
    props.push(("_h", b64(&header)));
    let string_10 = vec![0x48, 7, (10 << 3) | 2, 1, b'k'];
    let varint_10 = vec![0x48, 7, 10 << 3, 3];
    for (payload, unknown) in [(string_10, 0), (varint_10, 1)] {
        let msg = immutable(&pool, &props, payload);
        let w = analyze(&pool, &msg);
        assert!(w.problems.is_empty(), "{:?}", w.problems);
        let Some(Ok(body)) = &w.body else { panic!("no body: {:?}", w.body) };
        assert_eq!(body.descriptor().full_name(), "milvus.proto.msg.ImportMsg");
        assert_eq!(body.get_field_by_name("jobID").unwrap().as_i64(), Some(7));
        assert_eq!(body.unknown_fields().count(), unknown);
        let noted = w.flags.iter().any(|f| f.contains("field 10 is shown as an unknown field"));
        assert_eq!(noted, unknown == 1, "{:?}", w.flags);
        let row = crate::wal::analyze_row(&pool, &msg);
        assert!(row.problems.is_empty(), "{:?}", row.problems);
    }
}
