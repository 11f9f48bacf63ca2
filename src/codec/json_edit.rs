//! Editing a whole message as JSON without re-encoding it: the edited JSON is compared with the
//! message field by field, and only fields whose values differ become [`Edit`]s, which the
//! lossless editor then splices in. Fields the JSON leaves as they were — and unknown fields,
//! which JSON cannot show — keep their exact bytes. Must never: turn an unchanged field into an
//! edit (that would re-encode bytes the operator did not touch).

use super::edit::{Edit, EditOp};
use super::path::{FieldPath, Segment};
use super::{CodecError, decode, from_json, to_json};
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, ReflectMessage, Value};

/// The edits that turn the message in `bytes` into the one `json` describes. Empty when the
/// JSON says the same thing as the bytes.
pub fn edits_from_json(
    desc: &prost_reflect::MessageDescriptor,
    bytes: &[u8],
    json: &str,
) -> Result<Vec<Edit>, CodecError> {
    edits_from_json_at(desc, bytes, json, &FieldPath(Vec::new()))
}

/// The same for a sub-message: `bytes` is the sub-message (of type `desc`) found at `at` in an
/// enclosing message, and the edits' paths start with `at`, ready for the enclosing message.
pub fn edits_from_json_at(
    desc: &prost_reflect::MessageDescriptor,
    bytes: &[u8],
    json: &str,
    at: &FieldPath,
) -> Result<Vec<Edit>, CodecError> {
    let old = decode(desc, bytes)?.message;
    let new = from_json(desc, json)?;
    let mut out = Vec::new();
    diff(&old, &new, &at.0, &mut out);
    Ok(out)
}

fn diff(old: &DynamicMessage, new: &DynamicMessage, prefix: &[Segment], out: &mut Vec<Edit>) {
    for fd in old.descriptor().fields() {
        let (had, has) = (old.has_field(&fd), new.has_field(&fd));
        if !had && !has {
            continue;
        }
        let (before, after) = (old.get_field(&fd), new.get_field(&fd));
        if had == has && before == after {
            continue;
        }
        let mut segs = prefix.to_vec();
        segs.push(Segment { field: fd.name().to_string(), selector: None });
        let path = FieldPath(segs.clone());
        if !has {
            out.push(Edit { path, op: EditOp::Clear });
            continue;
        }
        match (&*before, &*after) {
            // A sub-message present before and after: go inside, so its untouched fields stay.
            (Value::Message(a), Value::Message(b)) if had && !fd.is_list() && !fd.is_map() => {
                diff(a, b, &segs, out)
            }
            _ => out.push(Edit { path, op: EditOp::Set(value_text(&fd, new)) }),
        }
    }
}

/// The new value of `fd` as the editor's `Set` reads it: whole lists and maps and messages as
/// JSON, scalars as text.
fn value_text(fd: &FieldDescriptor, msg: &DynamicMessage) -> String {
    let v = msg.get_field(fd);
    if fd.is_list() || fd.is_map() || matches!(v.as_ref(), Value::Message(_)) {
        let mut only = DynamicMessage::new(msg.descriptor());
        only.set_field(fd, v.into_owned());
        let json: serde_json::Value = serde_json::from_str(&to_json(&only, false)).unwrap_or_default();
        return json.get(fd.json_name()).map(|j| j.to_string()).unwrap_or_default();
    }
    match (v.as_ref(), fd.kind()) {
        (Value::String(s), _) => serde_json::Value::String(s.clone()).to_string(),
        (Value::Bytes(b), _) => format!("hex:{}", b.iter().map(|x| format!("{x:02x}")).collect::<String>()),
        (Value::EnumNumber(n), Kind::Enum(e)) => {
            e.get_value(*n).map_or_else(|| n.to_string(), |ev| ev.name().to_string())
        }
        (Value::F64(x), _) => float_text(*x),
        (Value::F32(x), _) => float_text(f64::from(*x)),
        (other, _) => scalar(other),
    }
}

fn float_text(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        x.to_string()
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::I32(x) => x.to_string(),
        Value::I64(x) => x.to_string(),
        Value::U32(x) => x.to_string(),
        Value::U64(x) => x.to_string(),
        Value::EnumNumber(n) => n.to_string(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaSet;

    fn task_bytes() -> (prost_reflect::MessageDescriptor, Vec<u8>) {
        let set = SchemaSet::builtin();
        let desc = set.message("openmldb.datasync.AddSyncTaskRequest").expect("built-in type");
        let json = r#"{"tid": 7, "pid": 0, "mode": "kFullAndContinuous", "tabletEndpoint": "127.0.0.1:1",
            "syncPoint": {"type": "kBINLOG", "offset": "12"}, "token": "t1", "dest": "d"}"#;
        let msg = crate::codec::from_json(&desc, json).expect("valid JSON");
        let mut bytes = crate::codec::encode(&msg);
        // An unknown field the JSON cannot show, which must survive.
        bytes.extend_from_slice(&[0xf8, 0x3e, 0x05]);
        (desc, bytes)
    }

    #[test]
    fn only_changed_fields_become_edits_and_unknown_bytes_stay() {
        let (desc, bytes) = task_bytes();
        let old = decode(&desc, &bytes).expect("decodes").message;
        let mut json: serde_json::Value = serde_json::from_str(&to_json(&old, true)).expect("json");
        assert!(edits_from_json(&desc, &bytes, &json.to_string()).expect("same").is_empty());
        json["syncPoint"]["offset"] = "99".into();
        json["token"] = "t2".into();
        let edits = edits_from_json(&desc, &bytes, &json.to_string()).expect("edits");
        let paths: Vec<String> = edits.iter().map(|e| e.path.to_string()).collect();
        assert_eq!(paths, ["sync_point.offset", "token"]);
        let out = crate::codec::apply_edits(&desc, &bytes, &edits).expect("applies");
        assert!(out.ends_with(&[0xf8, 0x3e, 0x05]), "the unknown field is kept");
        let m = decode(&desc, &out).expect("decodes").message;
        let j: serde_json::Value = serde_json::from_str(&to_json(&m, false)).expect("json");
        assert_eq!(j["syncPoint"]["offset"], "99");
        assert_eq!(j["token"], "t2");
        assert_eq!(j["dest"], "d");
    }

    #[test]
    fn removed_fields_are_cleared_and_bad_json_names_its_line() {
        let (desc, bytes) = task_bytes();
        let old = decode(&desc, &bytes).expect("decodes").message;
        let mut json: serde_json::Value = serde_json::from_str(&to_json(&old, true)).expect("json");
        json.as_object_mut().expect("object").remove("dest");
        let edits = edits_from_json(&desc, &bytes, &json.to_string()).expect("edits");
        assert_eq!(edits.len(), 1);
        assert_eq!(edits[0].op, EditOp::Clear);
        let err = edits_from_json(&desc, &bytes, "{\n \"tid\": \"x\"\n}").expect_err("bad JSON");
        assert!(err.to_string().contains("line 2"), "{err}");
    }
}
