//! A request template from the schema: every field of a message with its type's empty value,
//! nested messages filled the same way (a few levels down, never round a cycle), as proto3 JSON
//! an operator fills in. The composer's "Template" button writes it.
//!
//! Must never: invent values that mean something (it uses the zero of each type, the first enum
//! value, empty lists and maps).

use prost_reflect::{Kind, MessageDescriptor};
use serde_json::{Map, Value, json};

/// How deep nested messages are filled.
const DEPTH: usize = 3;

/// The template of `desc` as pretty JSON.
pub fn template_json(desc: &MessageDescriptor) -> String {
    let v = template_value(desc, 0, &mut Vec::new());
    serde_json::to_string_pretty(&v).unwrap_or_else(|_| "{}".into())
}

fn template_value(desc: &MessageDescriptor, depth: usize, path: &mut Vec<String>) -> Value {
    if desc.full_name().starts_with("google.protobuf.") {
        return well_known(desc.full_name());
    }
    let mut out = Map::new();
    path.push(desc.full_name().to_string());
    let mut oneofs: Vec<String> = Vec::new();
    for f in desc.fields() {
        // One member of each oneof: setting two would be refused.
        if let Some(o) = f.containing_oneof().filter(|o| !o.is_synthetic()) {
            if oneofs.iter().any(|n| n == o.name()) {
                continue;
            }
            oneofs.push(o.name().to_string());
        }
        let v = if f.is_map() {
            json!({})
        } else if f.is_list() {
            json!([])
        } else {
            match f.kind() {
                Kind::Message(m) if depth + 1 >= DEPTH || path.contains(&m.full_name().to_string()) => {
                    json!({})
                }
                Kind::Message(m) => template_value(&m, depth + 1, path),
                k => scalar(&k),
            }
        };
        out.insert(f.json_name().to_string(), v);
    }
    path.pop();
    Value::Object(out)
}

fn scalar(kind: &Kind) -> Value {
    match kind {
        Kind::Bool => json!(false),
        Kind::String | Kind::Bytes => json!(""),
        // Proto3 JSON writes 64-bit integers as strings.
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 | Kind::Uint64 | Kind::Fixed64 => json!("0"),
        Kind::Float | Kind::Double => json!(0.0),
        Kind::Enum(e) => e.values().next().map_or(json!(0), |v| json!(v.name())),
        _ => json!(0),
    }
}

fn well_known(name: &str) -> Value {
    match name {
        "google.protobuf.Timestamp" => json!("1970-01-01T00:00:00Z"),
        "google.protobuf.Duration" => json!("0s"),
        "google.protobuf.FieldMask" => json!(""),
        "google.protobuf.Struct" => json!({}),
        "google.protobuf.ListValue" => json!([]),
        "google.protobuf.Value" => Value::Null,
        n if n.ends_with("Value") => Value::Null,
        _ => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use crate::schema::SchemaSet;

    #[test]
    fn a_template_parses_back_as_its_type() {
        let set = SchemaSet::builtin();
        for name in [
            "milvus.proto.milvus.DumpMessagesRequest",
            "milvus.proto.milvus.GetReplicateInfoRequest",
            "openmldb.datasync.AddSyncTaskRequest",
            "milvus.proto.msg.InsertRequest",
        ] {
            let d = set.message(name).unwrap();
            let t = super::template_json(&d);
            crate::codec::from_json(&d, &t).unwrap_or_else(|e| panic!("{name}: {e}\n{t}"));
        }
        let d = set.message("milvus.proto.milvus.GetReplicateInfoRequest").unwrap();
        let t = super::template_json(&d);
        assert!(t.contains("\"sourceClusterId\": \"\"") && t.contains("\"targetPchannel\": \"\""), "{t}");
    }
}
