//! One WAL message's reading as JSON, for scripts (`jq '.body.num_rows'`) and the window's
//! JSON view: the properties read (type, version, timetick as a number and as UTC, vchannel,
//! ids), the side headers, the header from `_h` and the body from the payload as JSON objects
//! of their types (keyed by the `.proto` field names: `num_rows`, `collection_id`), and what
//! could not be read.
//!
//! Owns: the names of that JSON's keys (a contract for scripts: add keys, never rename them).
//! Must never: drop a problem, or put a value in that the analysis did not read (an encrypted
//! or legacy payload has no `body`, and says why in `payload`).

use super::analyze::{Encryption, WalMessage};
use super::message_id::RenderedId;
use crate::codec;
use serde_json::{Map, Value, json};

/// The `ImmutableMessage` of `m` when it is one, or a `DumpMessagesResponse` carrying one: the
/// messages whose WAL reading walscope shows.
pub fn immutable_of(m: &prost_reflect::DynamicMessage) -> Option<prost_reflect::DynamicMessage> {
    use prost_reflect::ReflectMessage;
    match m.descriptor().full_name() {
        "milvus.proto.milvus.DumpMessagesResponse" => {
            m.get_field_by_name("message").and_then(|v| v.as_message().cloned())
        }
        super::analyze::IMMUTABLE_MESSAGE => Some(m.clone()),
        _ => None,
    }
}

/// The reading of `w` (from [`super::analyze`], which decodes the body) as a JSON object.
pub fn reading_json(w: &WalMessage) -> Value {
    let mut o = Map::new();
    o.insert("type".into(), json!(w.type_name));
    put(&mut o, "type_number", w.type_number.map(|t| json!(t)));
    put(&mut o, "version", w.version.map(|v| json!(v)));
    if w.legacy {
        o.insert("legacy".into(), json!(true));
    }
    put(&mut o, "id", w.id.as_ref().map(id_json));
    if let Some(tt) = w.timetick {
        o.insert("timetick".into(), json!(tt));
        o.insert("time_utc".into(), json!(crate::time::format_timetick(tt)));
    }
    put(&mut o, "barrier_timetick", w.barrier_timetick.map(|t| json!(t)));
    put(&mut o, "wal_term", w.wal_term.map(|t| json!(t)));
    put(&mut o, "vchannel", w.vchannel.as_ref().map(|v| json!(v)));
    put(&mut o, "last_confirmed", w.last_confirmed.as_ref().map(id_json));
    if w.last_confirmed_is_self {
        o.insert("last_confirmed_is_self".into(), json!(true));
    }
    put(&mut o, "collection_id", w.collection_id.map(|c| json!(c)));
    put(&mut o, "rows", w.rows.map(|r| json!(r)));
    for (key, side) in
        [("txn", &w.txn), ("broadcast", &w.broadcast), ("replicate", &w.replicate), ("trace", &w.trace)]
    {
        put(&mut o, key, side.as_ref().map(codec::to_json_value_proto_names));
    }
    match &w.chunk {
        Some(Ok(m)) => {
            o.insert("chunk".into(), json!({"index": m.index, "total": m.total, "tt": m.tt}));
        }
        Some(Err(e)) => {
            o.insert("chunk".into(), json!({ "error": e }));
        }
        None => {}
    }
    put(&mut o, "header", w.header.as_ref().map(decoded_json));
    put(&mut o, "body", w.body.as_ref().map(decoded_json));
    o.insert("payload".into(), payload_json(w));
    if !w.flags.is_empty() {
        o.insert("flags".into(), json!(w.flags));
    }
    if !w.problems.is_empty() {
        o.insert("problems".into(), json!(w.problems));
    }
    Value::Object(o)
}

fn put(o: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    if let Some(v) = v {
        o.insert(key.to_string(), v);
    }
}

fn id_json(id: &Result<RenderedId, String>) -> Value {
    match id {
        Ok(r) => json!({ "raw": r.raw, "display": r.display }),
        Err(e) => json!({ "error": e }),
    }
}

fn decoded_json(part: &Result<prost_reflect::DynamicMessage, String>) -> Value {
    match part {
        Ok(m) => codec::to_json_value_proto_names(m),
        Err(e) => json!({ "error": e }),
    }
}

/// What the payload is: its size, and why it has no `body` when it has none.
fn payload_json(w: &WalMessage) -> Value {
    let why = match (&w.encryption, w.legacy, &w.body) {
        _ if w.chunk.is_some() => {
            Some("one chunk of a larger payload (_ci/_ct): the body is read from the joined group")
        }
        (Encryption::Encrypted { .. }, _, _) => Some("encrypted (_ch is set): ciphertext, not protobuf"),
        (_, true, _) => Some("legacy: no _v, the old msgstream form"),
        (_, _, None) => Some("no body type known for this type and version"),
        _ => None,
    };
    match why {
        Some(why) => json!({ "bytes": w.payload_len, "not_decoded": why }),
        None => json!({ "bytes": w.payload_len }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaSet;

    /// Every frame of the sample dump: the reading's header and body are the JSON of the
    /// analysis' own messages, an encrypted frame has no body and says why, and the keys
    /// scripts use are where the docs say.
    #[test]
    fn the_sample_frames_read_as_json_with_header_and_body_objects() {
        let set = SchemaSet::builtin();
        let pool = set.pool();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/samples/milvus-100.dump");
        let dump =
            crate::dump::DumpFile::open(std::path::Path::new(path), Default::default()).expect("the sample");
        dump.wait_indexed();
        let (mut inserts, mut encrypted) = (0, 0);
        for i in 0..dump.frame_count() {
            let loc = dump.frame(i).expect("a frame");
            let (_, bytes) = dump.message_bytes(&loc);
            let resp = set.message("milvus.proto.milvus.DumpMessagesResponse").expect("type");
            let decoded = codec::decode(&resp, bytes).expect("decodes");
            let Some(imm) =
                decoded.message.get_field_by_name("message").and_then(|v| v.as_message().cloned())
            else {
                continue;
            };
            let w = super::super::analyze(pool, &imm);
            let j = reading_json(&w);
            assert_eq!(j["type"], json!(w.type_name));
            if let Some(Ok(body)) = &w.body {
                assert_eq!(j["body"], codec::to_json_value_proto_names(body));
            }
            if let Some(Ok(header)) = &w.header {
                assert!(j["header"].is_object(), "{j}");
                assert_eq!(j["header"], codec::to_json_value_proto_names(header));
            }
            if w.type_name == "Insert" && w.body.as_ref().is_some_and(|b| b.is_ok()) {
                inserts += 1;
                assert!(j["body"]["num_rows"].is_string() || j["body"]["num_rows"].is_number(), "{j}");
                assert!(j["time_utc"].as_str().is_some_and(|t| t.starts_with("20")), "{j}");
            }
            if w.is_encrypted() {
                encrypted += 1;
                assert!(j.get("body").is_none(), "{j}");
                assert!(j["payload"]["not_decoded"].as_str().is_some_and(|t| t.contains("encrypted")));
            }
        }
        assert!(
            inserts > 0 && encrypted > 0,
            "the sample has Inserts ({inserts}) and encrypted frames ({encrypted})"
        );
    }
}
