//! Typed decoding and encoding with prost-reflect `DynamicMessage`: bytes, proto3 JSON and
//! protobuf text format in both directions, a typed tree with byte spans, and lossless edits.
//!
//! Owns: the rule that bytes we did not edit stay byte-identical ([`edit`]) and the canonical
//! encoding (field-number order, map entries sorted by key) used for fresh values. Must never:
//! re-encode a whole message to apply an edit, or accept bytes that fail a strict re-decode.

pub mod compat;
pub mod edit;
pub mod json_edit;
pub mod path;
pub mod template;
pub mod tree;
pub mod value;

pub use edit::{Edit, EditOp, apply_edits};
pub use path::FieldPath;
pub use template::template_json;
pub use value::{loose_integer, string_field};

use crate::wire::{self, DecodeOptions, WireDecoding};
use miette::Diagnostic;
use prost::Message;
use prost_reflect::{DynamicMessage, MessageDescriptor, ReflectMessage, SerializeOptions};

#[derive(Debug, Clone, thiserror::Error)]
pub enum CodecError {
    #[error("not a valid {type_name}: at byte {offset}: {reason}")]
    Malformed { type_name: String, offset: usize, reason: String },
    #[error("JSON for {type_name} at line {line} column {column}: {reason}")]
    Json { type_name: String, line: usize, column: usize, reason: String },
    #[error("text format for {type_name} at line {line} column {column}: {reason}")]
    Text { type_name: String, line: usize, column: usize, reason: String },
    #[error("{0}")]
    Edit(String),
}

/// A typed decode that keeps the wire tree beside the message, so every value has its bytes.
#[derive(Debug, Clone)]
pub struct Decoded {
    pub message: DynamicMessage,
    pub wire: WireDecoding,
}

/// Decodes `bytes` as `desc`, strictly: the first byte that does not fit the type is an error
/// with its offset. Unknown fields are kept.
pub fn decode(desc: &MessageDescriptor, bytes: &[u8]) -> Result<Decoded, CodecError> {
    // A field upstream re-typed under the same number (compat.rs): read as an unknown field.
    let alt = compat::alternative(desc, bytes);
    let desc = alt.as_ref().unwrap_or(desc);
    let opts = DecodeOptions { schema: Some(desc.clone()), ..DecodeOptions::default() };
    let wire = wire::decode_with(bytes, &opts);
    if let Some(e) = wire.first_error() {
        return Err(CodecError::Malformed {
            type_name: desc.full_name().to_string(),
            offset: e.offset,
            reason: e.kind.to_string(),
        });
    }
    let message = DynamicMessage::decode(desc.clone(), bytes).map_err(|e| CodecError::Malformed {
        type_name: desc.full_name().to_string(),
        offset: 0,
        reason: e.to_string(),
    })?;
    Ok(Decoded { message, wire })
}

/// [`decode`] for callers that need only the message (printing it as JSON or text): the same
/// answer without the wire tree, which for a big message (a span per packed value) costs more
/// memory than the message itself. The compiled check decides first; bytes it refuses (bad
/// ones, and the few good ones it leaves to the slow path) go through [`decode`] for its answer
/// and its words.
pub fn decode_message(desc: &MessageDescriptor, bytes: &[u8]) -> Result<DynamicMessage, CodecError> {
    MessageDecoder::new(desc).decode(bytes)
}

/// [`decode_message`] for many messages of one type (the frames of a dump): the type's check
/// is compiled once, not per message.
#[derive(Debug)]
pub struct MessageDecoder {
    desc: MessageDescriptor,
    rules: wire::scan::Rules,
    ty: wire::scan::TypeId,
}

impl MessageDecoder {
    pub fn new(desc: &MessageDescriptor) -> MessageDecoder {
        let mut rules = wire::scan::Rules::default();
        let ty = rules.add(desc);
        MessageDecoder { desc: desc.clone(), rules, ty }
    }

    /// See [`decode_message`].
    pub fn decode(&self, bytes: &[u8]) -> Result<DynamicMessage, CodecError> {
        if self.rules.accepts(self.ty, bytes)
            && let Ok(message) = DynamicMessage::decode(self.desc.clone(), bytes)
        {
            return Ok(message);
        }
        decode(&self.desc, bytes).map(|d| d.message)
    }
}

/// Canonical encoding: fields in number order (unknown fields in their place), packed where the
/// schema says so, map entries sorted by key. Deterministic across runs.
pub fn encode(msg: &DynamicMessage) -> Vec<u8> {
    enum Item<'a> {
        Known(prost_reflect::FieldDescriptor, &'a prost_reflect::Value),
        Unknown(&'a prost_reflect::UnknownField),
    }
    let mut items: Vec<(u32, Item)> = msg
        .fields()
        .map(|(fd, v)| (fd.number(), Item::Known(fd, v)))
        .chain(msg.unknown_fields().map(|u| (u.number(), Item::Unknown(u))))
        .collect();
    items.sort_by_key(|(n, _)| *n);
    let mut out = Vec::new();
    for (_, item) in items {
        match item {
            Item::Known(fd, v) => value::write_field(&fd, v, &mut out),
            Item::Unknown(u) => u.encode(&mut out),
        }
    }
    out
}

/// Proto3 JSON mapping (lowerCamelCase names, 64-bit integers as strings). Fields come in
/// schema order and map entries sorted by key, so the same message always prints the same.
pub fn to_json(msg: &DynamicMessage, pretty: bool) -> String {
    let mut out = Vec::new();
    match write_json(msg, pretty, &mut out) {
        // serde_json writes UTF-8 only.
        Ok(()) => {
            String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
        }
        Err(e) => format!("{{\"error\": {:?}}}", e.to_string()),
    }
}

/// The JSON tree [`to_json`] prints (map entries sorted), for embedding in a larger document
/// without printing and parsing it again.
pub fn to_json_value(msg: &DynamicMessage) -> Result<serde_json::Value, serde_json::Error> {
    let mut value = msg.serialize_with_options(serde_json::value::Serializer, &SerializeOptions::new())?;
    sort_maps(&mut value, &msg.descriptor());
    Ok(value)
}

/// The JSON tree of `msg` keyed by the `.proto` file's own field names (`num_rows`, not
/// `numRows`), as scripts over WAL readings address them (`jq '.body.num_rows'`); otherwise
/// the proto3 mapping of [`to_json_value`]. A message the mapping refuses gives
/// `{"error": "..."}`.
pub fn to_json_value_proto_names(msg: &DynamicMessage) -> serde_json::Value {
    let opts = SerializeOptions::new().use_proto_field_name(true);
    match msg.serialize_with_options(serde_json::value::Serializer, &opts) {
        Ok(mut value) => {
            sort_maps_keyed(&mut value, &msg.descriptor(), true);
            value
        }
        Err(e) => serde_json::json!({ "error": e.to_string() }),
    }
}

/// [`to_json_value`], or, for a message the JSON mapping refuses (a FieldMask path with no
/// lowerCamelCase form, a Timestamp out of range), `{"error": "..."}` with the reason: the
/// tree [`to_json`]'s text holds either way, for a row of a JSON-lines listing.
pub fn to_json_value_or_error(msg: &DynamicMessage) -> serde_json::Value {
    to_json_value(msg).unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }))
}

/// [`to_json`]'s text, written to `out` as it is printed (the pretty text of one 25 MiB
/// InsertRequest is 214 MB: built first as a string, it cost a third of the decode's time).
/// The JSON tree is still built whole: it sorts map entries, and it prints every float as the
/// f64 it widens to, which a serializer writing straight from the message would not.
pub fn write_json(msg: &DynamicMessage, pretty: bool, out: &mut impl std::io::Write) -> std::io::Result<()> {
    let value = to_json_value(msg).map_err(std::io::Error::other)?;
    let written = if pretty {
        serde_json::to_writer_pretty(&mut *out, &value)
    } else {
        serde_json::to_writer(&mut *out, &value)
    };
    written.map_err(std::io::Error::other)
}

/// Sorts the entries of every map field (prost-reflect keeps maps in hash order).
fn sort_maps(value: &mut serde_json::Value, desc: &MessageDescriptor) {
    sort_maps_keyed(value, desc, false)
}

/// [`sort_maps`] over JSON keyed by the proto field names (`proto_names`) or the JSON names.
fn sort_maps_keyed(value: &mut serde_json::Value, desc: &MessageDescriptor, proto_names: bool) {
    use prost_reflect::Kind;
    if desc.full_name().starts_with("google.protobuf.") {
        return; // well-known types have their own JSON shapes
    }
    let Some(obj) = value.as_object_mut() else { return };
    for fd in desc.fields() {
        let key = if proto_names { fd.name() } else { fd.json_name() };
        let Some(v) = obj.get_mut(key) else { continue };
        let Kind::Message(m) = fd.kind() else { continue };
        if fd.is_map() {
            let numeric = !matches!(m.map_entry_key_field().kind(), Kind::String | Kind::Bool);
            let Some(map) = v.as_object_mut() else { continue };
            let mut entries: Vec<(String, serde_json::Value)> = std::mem::take(map).into_iter().collect();
            if numeric {
                entries.sort_by_key(|(k, _)| (k.parse::<i128>().unwrap_or(0), k.clone()));
            } else {
                entries.sort_by(|a, b| a.0.cmp(&b.0));
            }
            let vd = m.map_entry_value_field();
            for (k, mut e) in entries {
                if let Kind::Message(vm) = vd.kind() {
                    sort_maps_keyed(&mut e, &vm, proto_names);
                }
                map.insert(k, e);
            }
        } else if let Some(items) = v.as_array_mut() {
            items.iter_mut().for_each(|i| sort_maps_keyed(i, &m, proto_names));
        } else {
            sort_maps_keyed(v, &m, proto_names);
        }
    }
}

pub fn from_json(desc: &MessageDescriptor, text: &str) -> Result<DynamicMessage, CodecError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let msg = DynamicMessage::deserialize(desc.clone(), &mut de).map_err(|e| CodecError::Json {
        type_name: desc.full_name().to_string(),
        line: e.line(),
        column: e.column(),
        reason: e.to_string(),
    })?;
    de.end().map_err(|e| CodecError::Json {
        type_name: desc.full_name().to_string(),
        line: e.line(),
        column: e.column(),
        reason: e.to_string(),
    })?;
    Ok(msg)
}

/// Protobuf text format. Unknown fields are left out (text format cannot read them back).
pub fn to_text(msg: &DynamicMessage) -> String {
    let opts = prost_reflect::text_format::FormatOptions::new().pretty(true).skip_unknown_fields(true);
    msg.to_text_format_with_options(&opts)
}

/// [`to_text`]'s text, written to `out` as it is printed rather than built as one string first
/// (for a 25 MiB InsertRequest that string is hundreds of MB). prost-reflect's `{:#}` prints
/// with the same options: pretty, unknown fields and defaults left out, `Any` expanded.
pub fn write_text(msg: &DynamicMessage, out: &mut impl std::io::Write) -> std::io::Result<()> {
    write!(out, "{msg:#}")
}

pub fn from_text(desc: &MessageDescriptor, text: &str) -> Result<DynamicMessage, CodecError> {
    DynamicMessage::parse_text_format(desc.clone(), text).map_err(|e| {
        let (line, column) =
            e.labels().and_then(|mut l| l.next()).map(|l| line_col(text, l.offset())).unwrap_or((0, 0));
        CodecError::Text { type_name: desc.full_name().to_string(), line, column, reason: e.to_string() }
    })
}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Number of unknown fields anywhere in the message (JSON and text cannot carry them).
pub fn count_unknown(msg: &DynamicMessage) -> usize {
    let mut n = msg.unknown_fields().count();
    for (_, v) in msg.fields() {
        n += count_unknown_value(v);
    }
    n
}

fn count_unknown_value(v: &prost_reflect::Value) -> usize {
    match v {
        prost_reflect::Value::Message(m) => count_unknown(m),
        prost_reflect::Value::List(l) => l.iter().map(count_unknown_value).sum(),
        prost_reflect::Value::Map(m) => m.values().map(count_unknown_value).sum(),
        _ => 0,
    }
}

/// prost's own encoder, for comparison in tests and for callers that need prost semantics.
pub fn encode_with_prost(msg: &DynamicMessage) -> Vec<u8> {
    msg.encode_to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaSet;

    /// What `to_json` printed when it built a string: the JSON tree, maps sorted.
    fn through_a_string(msg: &DynamicMessage, pretty: bool) -> String {
        let mut v = msg
            .serialize_with_options(serde_json::value::Serializer, &SerializeOptions::new())
            .expect("tree");
        sort_maps(&mut v, &msg.descriptor());
        if pretty { serde_json::to_string_pretty(&v) } else { serde_json::to_string(&v) }.expect("prints")
    }

    #[test]
    fn json_written_out_is_the_text_the_string_held() {
        let set = SchemaSet::builtin();
        let insert = set.message("milvus.proto.msg.InsertRequest").expect("type");
        let msg = from_json(
            &insert,
            r#"{"shardName": "by-dev-rootcoord-dml_0_4491v0", "collection_name": "ord\"ers\u00e9\u2028",
                "collectionID": "9223372036854775807", "timestamps": ["18446744073709551615", "0"],
                "rowIDs": ["-9223372036854775808"], "num_rows": "2",
                "fields_data": [
                  {"type": "FloatVector", "field_name": "v", "field_id": "101", "is_dynamic": true,
                   "vectors": {"dim": "4", "float_vector": {"data": [0.1, -0.0, 1e-45, 3.4e38, "NaN", "Infinity", "-Infinity", 123456.78]}}},
                  {"type": "VarChar", "field_name": "t", "scalars": {"string_data": {"data": ["", "a\nb", "\u0001"]}}},
                  {"type": "BinaryVector", "vectors": {"dim": "16", "binary_vector": "AP8="}},
                  {"type": "Double", "scalars": {"double_data": {"data": [2.5e-308, 1.7976931348623157e308, 0.30000000000000004]}}}
                ]}"#,
        )
        .expect("sample InsertRequest");
        for pretty in [false, true] {
            let mut written = Vec::new();
            write_json(&msg, pretty, &mut written).expect("writes");
            assert_eq!(
                String::from_utf8(written).expect("UTF-8"),
                through_a_string(&msg, pretty),
                "pretty: {pretty}"
            );
            assert_eq!(to_json(&msg, pretty), through_a_string(&msg, pretty), "pretty: {pretty}");
        }
        // A float prints as the f64 it widens to, as it always has.
        assert!(to_json(&msg, false).contains("[0.10000000149011612,-0.0,"), "{}", to_json(&msg, false));

        // Map entries come sorted by key.
        let imm = set.message("milvus.proto.common.ImmutableMessage").expect("type");
        let msg = from_json(
            &imm,
            r#"{"payload": "AAE=", "properties": {"_v": "1", "_tt": "ab", "_t": "2", "_lc": "x"}}"#,
        )
        .expect("sample ImmutableMessage");
        let text = to_json(&msg, false);
        assert_eq!(text, through_a_string(&msg, false));
        assert!(text.contains(r#"{"_lc":"x","_t":"2","_tt":"ab","_v":"1"}"#), "{text}");
    }

    /// A message the JSON mapping refuses: the tree for a JSON-lines row says why, as the text
    /// of `to_json` does, rather than `null`.
    #[test]
    fn a_message_json_refuses_says_why_as_a_tree_and_as_text() {
        let set = SchemaSet::builtin();
        let header = set.message("milvus.proto.messages.AlterCollectionMessageHeader").expect("type");
        let mut msg = DynamicMessage::new(header);
        let mask = msg.get_field_by_name_mut("update_mask").expect("update_mask");
        if let prost_reflect::Value::Message(m) = mask {
            let paths = m.descriptor().get_field_by_name("paths").expect("paths");
            m.set_field(&paths, prost_reflect::Value::List(vec![prost_reflect::Value::String("a_B".into())]));
        }
        let refused = to_json_value(&msg).expect_err("a path with no lowerCamelCase form");
        let tree = to_json_value_or_error(&msg);
        assert_eq!(tree, serde_json::json!({ "error": refused.to_string() }));
        let text: serde_json::Value = serde_json::from_str(&to_json(&msg, false)).expect("JSON");
        assert_eq!(text, tree);
    }
}
