//! Editing a whole message as JSON without re-encoding it: the edited JSON is compared with the
//! message field by field, and only fields whose values differ become [`Edit`]s, which the
//! lossless editor then splices in. Fields the JSON leaves as they were — and unknown fields,
//! which JSON cannot show — keep their exact bytes. Must never: turn an unchanged field into an
//! edit (that would re-encode bytes the operator did not touch).

use super::edit::{Edit, EditOp};
use super::path::{FieldPath, Segment, Selector};
use super::value::format_value;
use super::{CodecError, decode, from_json, to_json};
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MapKey, ReflectMessage, Value};

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
        if had == has && same(&before, &after) {
            continue;
        }
        let at = |selector: Option<Selector>| {
            let mut segs = prefix.to_vec();
            segs.push(Segment { field: fd.name().to_string(), selector });
            segs
        };
        if !has {
            out.push(Edit { path: FieldPath(at(None)), op: EditOp::Clear });
            continue;
        }
        match (&*before, &*after) {
            // A sub-message present before and after: go inside, so its untouched fields stay.
            (Value::Message(a), Value::Message(b)) if had => diff(a, b, &at(None), out),
            // A list of the same length: element by element, so untouched elements stay.
            (Value::List(a), Value::List(b)) if a.len() == b.len() => {
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    if same(x, y) {
                        continue;
                    }
                    let segs = at(Some(Selector::Index(i as i64)));
                    match (x, y) {
                        (Value::Message(p), Value::Message(q)) => diff(p, q, &segs, out),
                        _ => out.push(Edit {
                            path: FieldPath(segs),
                            op: EditOp::Set(format_value(&fd.kind(), y)),
                        }),
                    }
                }
            }
            // A map: entry by entry.
            (Value::Map(a), Value::Map(b)) => {
                let value_kind = match fd.kind() {
                    Kind::Message(entry) => entry.map_entry_value_field().kind(),
                    k => k,
                };
                for (k, x) in a {
                    let segs = at(Some(map_selector(k)));
                    match (x, b.get(k)) {
                        (_, None) => out.push(Edit { path: FieldPath(segs), op: EditOp::Clear }),
                        (x, Some(y)) if same(x, y) => {}
                        (Value::Message(p), Some(Value::Message(q))) => {
                            // An entry's sub-paths address its value.
                            diff(p, q, &segs, out)
                        }
                        (_, Some(y)) => out.push(Edit {
                            path: FieldPath(segs),
                            op: EditOp::Set(format_value(&value_kind, y)),
                        }),
                    }
                }
                for (k, y) in b.iter().filter(|(k, _)| !a.contains_key(*k)) {
                    let segs = at(Some(map_selector(k)));
                    out.push(Edit { path: FieldPath(segs), op: EditOp::Set(format_value(&value_kind, y)) });
                }
            }
            _ => out.push(Edit { path: FieldPath(at(None)), op: EditOp::Set(value_text(&fd, new)) }),
        }
    }
}

/// Equal as the JSON shows them: known fields only (unknown fields cannot be in JSON, so
/// they never count as a change), floats by their bits, and any NaN equal to any NaN (JSON
/// cannot carry a NaN's payload, so re-reading one must not rewrite it).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        (Value::List(x), Value::List(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Value::Message(x), Value::Message(y)) => x
            .descriptor()
            .fields()
            .all(|fd| x.has_field(&fd) == y.has_field(&fd) && same(&x.get_field(&fd), &y.get_field(&fd))),
        _ => a == b,
    }
}

fn map_selector(k: &MapKey) -> Selector {
    match k {
        MapKey::String(s) => Selector::Key(s.clone()),
        MapKey::Bool(b) => Selector::Key(b.to_string()),
        MapKey::I32(x) => Selector::Index(i64::from(*x)),
        MapKey::I64(x) => Selector::Index(*x),
        MapKey::U32(x) => Selector::Index(i64::from(*x)),
        // A key above i64::MAX cannot be an index; as text it still parses as the key.
        MapKey::U64(x) => i64::try_from(*x).map_or_else(|_| Selector::Key(x.to_string()), Selector::Index),
    }
}

/// The new value of `fd` as the editor's `Set` reads it: whole lists and maps and messages as
/// JSON, scalars as text.
fn value_text(fd: &FieldDescriptor, msg: &DynamicMessage) -> String {
    let v = msg.get_field(fd);
    if fd.is_list() || fd.is_map() {
        let mut only = DynamicMessage::new(msg.descriptor());
        only.set_field(fd, v.into_owned());
        let json: serde_json::Value = serde_json::from_str(&to_json(&only, false)).unwrap_or_default();
        return json.get(fd.json_name()).map(|j| j.to_string()).unwrap_or_default();
    }
    format_value(&fd.kind(), &v)
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

    /// Unknown fields inside list elements are not a change, and one changed element is
    /// edited alone; a NaN stays the NaN it was.
    #[test]
    fn lists_edit_element_by_element_and_unknown_fields_are_not_changes() {
        let set = SchemaSet::builtin();
        let desc = set.message("openmldb.datasync.TaskStatusResponse").expect("built-in type");
        // task[0] and task[1], each with an unknown field 15 = 5 (0x78 0x05).
        let task = |status: &[u8]| {
            let mut t = vec![0x22, status.len() as u8];
            t.extend_from_slice(status);
            t.extend_from_slice(&[0x78, 0x05]);
            let mut f = vec![0x12, t.len() as u8];
            f.extend(t);
            f
        };
        let mut bytes = task(b"RUNNING");
        bytes.extend(task(b"FAILED"));
        let old = decode(&desc, &bytes).expect("decodes").message;
        let json = to_json(&old, false);
        assert!(edits_from_json(&desc, &bytes, &json).expect("same").is_empty());
        let edits = edits_from_json(&desc, &bytes, &json.replace("FAILED", "SUCCESS")).expect("edits");
        let paths: Vec<String> = edits.iter().map(|e| e.path.to_string()).collect();
        assert_eq!(paths, ["task[1].status"]);
        let out = crate::codec::apply_edits(&desc, &bytes, &edits).expect("applies");
        assert_eq!(out.windows(2).filter(|w| *w == [0x78, 0x05]).count(), 2, "both unknown fields kept");

        let doubles = set.message("milvus.proto.schema.DoubleArray").expect("built-in type");
        let nan = [0x0a, 0x08, 0x01, 0, 0, 0, 0, 0, 0xf8, 0x7f]; // a NaN with a payload
        let m = decode(&doubles, &nan).expect("decodes").message;
        assert!(edits_from_json(&doubles, &nan, &to_json(&m, false)).expect("same").is_empty());
    }

    #[test]
    fn map_entries_change_one_by_one() {
        let set = SchemaSet::builtin();
        let desc = set.message("milvus.proto.common.ImmutableMessage").expect("built-in type");
        let msg = crate::codec::from_json(&desc, r#"{"properties": {"_t": "1", "_v": "2", "a\tb": "x"}}"#)
            .expect("valid JSON");
        let bytes = crate::codec::encode(&msg);
        let json = r#"{"properties": {"_t": "1", "_v": "3", "a\tb": "x", "new": "n"}}"#;
        let edits = edits_from_json(&desc, &bytes, json).expect("edits");
        let paths: Vec<String> = edits.iter().map(|e| e.path.to_string()).collect();
        assert_eq!(paths, [r#"properties["_v"]"#, r#"properties["new"]"#]);
        let out = crate::codec::apply_edits(&desc, &bytes, &edits).expect("applies");
        let j: serde_json::Value =
            serde_json::from_str(&to_json(&decode(&desc, &out).expect("decodes").message, false))
                .expect("json");
        assert_eq!(j["properties"]["_v"], "3");
        assert_eq!(j["properties"]["a\tb"], "x");
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
