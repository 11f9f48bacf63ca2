//! The typed tree: a schema-guided wire decoding rendered as named, typed nodes that keep the
//! byte spans of key, length prefix and value, so a hex view can highlight any of them.

/// A field type in words (the schema's: `int64`, `enum SyncType`, a message's full name).
pub use crate::schema::type_label;
use crate::wire::varint::zigzag_decode;
use crate::wire::{PackedValues, Span, WireContent, WireField, WireMessage};
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MessageDescriptor};

#[derive(Debug, Clone, PartialEq)]
pub struct TypedNode {
    /// `sync_point`, `task[2]`, `properties["_vc"]`, or `#7` for an unknown field.
    pub label: String,
    /// `int64`, `string`, `openmldb.datasync.SyncPoint`, `enum SyncType`, `unknown varint`…
    pub type_name: String,
    /// The rendered value of a leaf.
    pub value: Option<String>,
    pub key: Option<Span>,
    pub len_prefix: Option<Span>,
    pub value_span: Span,
    pub known: bool,
    pub children: Vec<TypedNode>,
}

impl TypedNode {
    /// Everything this node covers: key through end of value.
    pub fn whole(&self) -> Span {
        let start = self.key.as_ref().map_or(self.value_span.start, |k| k.start);
        start..self.value_span.end
    }
}

/// The nodes of `raw`, a `desc` message found at byte `at` of an enclosing buffer (a bytes
/// field decoded in place: a WAL payload as its body type), with every span shifted to the
/// enclosing buffer's offsets. Fails, saying where, when `raw` is not a valid `desc`.
pub fn build_at(
    desc: &MessageDescriptor,
    raw: &[u8],
    at: usize,
) -> Result<Vec<TypedNode>, super::CodecError> {
    super::decode(desc, raw)?;
    let opts = crate::wire::DecodeOptions { schema: Some(desc.clone()), ..Default::default() };
    let mut nodes = build(Some(desc), raw, &crate::wire::decode_with(raw, &opts).root);
    for n in &mut nodes {
        shift(n, at);
    }
    Ok(nodes)
}

fn shift(n: &mut TypedNode, by: usize) {
    for span in [n.key.as_mut(), n.len_prefix.as_mut(), Some(&mut n.value_span)].into_iter().flatten() {
        span.start += by;
        span.end += by;
    }
    for c in &mut n.children {
        shift(c, by);
    }
}

/// Builds the nodes of one message. `desc` None gives the schema-less view.
pub fn build(desc: Option<&MessageDescriptor>, buf: &[u8], wire: &WireMessage) -> Vec<TypedNode> {
    let mut out = Vec::new();
    let mut counts: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for f in &wire.fields {
        let fd = desc.and_then(|d| d.get_field(f.number));
        match fd {
            Some(fd) => known_field(&fd, buf, f, &mut counts, &mut out),
            None => out.push(unknown_field(buf, f)),
        }
    }
    if let Some(tail) = &wire.raw_tail {
        out.push(unparsed(buf, tail));
    }
    out
}

fn known_field(
    fd: &FieldDescriptor,
    buf: &[u8],
    f: &WireField,
    counts: &mut std::collections::HashMap<u32, usize>,
    out: &mut Vec<TypedNode>,
) {
    let kind = fd.kind();
    let next_label = |counts: &mut std::collections::HashMap<u32, usize>| {
        if fd.is_list() {
            let c = counts.entry(fd.number()).or_insert(0);
            *c += 1;
            format!("{}[{}]", fd.name(), *c - 1)
        } else {
            fd.name().to_string()
        }
    };
    if let WireContent::Packed(p) = &f.content {
        for (span, text) in packed_items(&kind, p) {
            out.push(TypedNode {
                label: next_label(counts),
                type_name: type_label(&kind),
                value: Some(text),
                key: None,
                len_prefix: None,
                value_span: span,
                known: true,
                children: Vec::new(),
            });
        }
        return;
    }
    let mut node = TypedNode {
        label: String::new(),
        type_name: type_label(&kind),
        value: None,
        key: Some(f.key.clone()),
        len_prefix: f.len_prefix.clone(),
        value_span: f.value.clone(),
        known: true,
        children: Vec::new(),
    };
    if fd.is_map() {
        let Kind::Message(entry) = &kind else { return };
        let key = DynamicMessage::decode(entry.clone(), &buf[f.value.clone()])
            .map(|m| m.get_field(&entry.map_entry_key_field()).into_owned())
            .ok();
        let key_text = key.as_ref().map_or_else(|| "?".to_string(), scalar_value_text);
        node.label = format!("{}[{}]", fd.name(), key_text);
        let vd = entry.map_entry_value_field();
        node.type_name = type_label(&vd.kind());
        if let WireContent::Message { message, .. } = &f.content {
            let inner = build(Some(entry), buf, message);
            if let Some(v) = inner.into_iter().find(|n| n.label == "value") {
                node.value = v.value;
                node.children = v.children;
            } else {
                node.value = Some("(default)".into());
            }
        }
        out.push(node);
        return;
    }
    node.label = next_label(counts);
    match (&kind, &f.content) {
        (Kind::Message(m), WireContent::Message { message, .. })
        | (Kind::Message(m), WireContent::Group { message, .. }) => {
            node.children = build(Some(m), buf, message);
            node.value = if node.children.is_empty() { Some("{}".into()) } else { None };
        }
        (_, content) => node.value = Some(scalar_text(&kind, buf, f, content)),
    }
    out.push(node);
}

/// The wire view: every field as its bytes say it is (number, wire type, raw value), from a
/// schema-less decode `wire`, named where `desc` knows the field number (`#2 sync_point`, the
/// schema's type beside the wire type) and, inside a nested message, by that field's message
/// type. Unlike [`build`], no value is read as the schema's type: this is what is on the wire.
pub fn wire_view(desc: Option<&MessageDescriptor>, buf: &[u8], wire: &WireMessage) -> Vec<TypedNode> {
    let mut out: Vec<TypedNode> = wire
        .fields
        .iter()
        .map(|f| {
            let Some(fd) = desc.and_then(|d| d.get_field(f.number)) else { return unknown_field(buf, f) };
            let kind = fd.kind();
            let mut node = raw_field(buf, f, kind.as_message());
            node.label = format!("#{} {}", f.number, fd.name());
            node.type_name = format!("{}, schema: {}", node.type_name, type_label(&kind));
            node.known = true;
            node
        })
        .collect();
    if let Some(tail) = &wire.raw_tail {
        out.push(unparsed(buf, tail));
    }
    out
}

fn unparsed(buf: &[u8], tail: &Span) -> TypedNode {
    TypedNode {
        label: "(unparsed)".into(),
        type_name: "raw bytes".into(),
        value: Some(hex_preview(&buf[tail.clone()])),
        key: None,
        len_prefix: None,
        value_span: tail.clone(),
        known: false,
        children: Vec::new(),
    }
}

fn unknown_field(buf: &[u8], f: &WireField) -> TypedNode {
    raw_field(buf, f, None)
}

/// One field as its bytes say; a nested message's fields named by `nested` when it is known.
fn raw_field(buf: &[u8], f: &WireField, nested: Option<&MessageDescriptor>) -> TypedNode {
    let (type_name, value, children) = match &f.content {
        WireContent::Varint(v) => ("varint".to_string(), Some(v.to_string()), Vec::new()),
        WireContent::Fixed32(v) => {
            ("fixed32".into(), Some(format!("0x{v:08x} ({})", f32::from_bits(*v))), Vec::new())
        }
        WireContent::Fixed64(v) => {
            ("fixed64".into(), Some(format!("0x{v:016x} ({})", f64::from_bits(*v))), Vec::new())
        }
        WireContent::Text => ("string?".into(), Some(quote(&buf[f.value.clone()])), Vec::new()),
        WireContent::Bytes => ("bytes".into(), Some(hex_preview(&buf[f.value.clone()])), Vec::new()),
        WireContent::Message { message, guessed } => {
            let t = if *guessed { "message?" } else { "message" };
            (t.into(), None, wire_view(nested, buf, message))
        }
        WireContent::Group { message, .. } => ("group".into(), None, wire_view(nested, buf, message)),
        WireContent::Packed(p) => {
            let items: Vec<String> = match p {
                PackedValues::Varint(v) => v.iter().map(|(_, x)| x.to_string()).collect(),
                PackedValues::Fixed32(v) => v.iter().map(|(_, x)| f32::from_bits(*x).to_string()).collect(),
                PackedValues::Fixed64(v) => v.iter().map(|(_, x)| x.to_string()).collect(),
            };
            ("packed?".into(), Some(preview_list(&items)), Vec::new())
        }
    };
    TypedNode {
        label: format!("#{}", f.number),
        type_name,
        value,
        key: Some(f.key.clone()),
        len_prefix: f.len_prefix.clone(),
        value_span: f.value.clone(),
        known: false,
        children,
    }
}

fn varint_text(kind: &Kind, v: u64) -> String {
    match kind {
        Kind::Int32 => ((v as i64) as i32).to_string(),
        Kind::Int64 => (v as i64).to_string(),
        Kind::Uint32 => (v as u32).to_string(),
        Kind::Sint32 | Kind::Sint64 => zigzag_decode(v).to_string(),
        Kind::Bool => (v != 0).to_string(),
        Kind::Enum(e) => {
            let n = (v as i64) as i32;
            match e.get_value(n) {
                Some(ev) => format!("{} ({n})", ev.name()),
                None => format!("{n} (not a value of {})", e.name()),
            }
        }
        _ => v.to_string(),
    }
}

fn fixed32_text(kind: &Kind, v: u32) -> String {
    match kind {
        Kind::Float => f32::from_bits(v).to_string(),
        Kind::Sfixed32 => (v as i32).to_string(),
        _ => v.to_string(),
    }
}

fn fixed64_text(kind: &Kind, v: u64) -> String {
    match kind {
        Kind::Double => f64::from_bits(v).to_string(),
        Kind::Sfixed64 => (v as i64).to_string(),
        _ => v.to_string(),
    }
}

fn packed_items(kind: &Kind, p: &PackedValues) -> Vec<(Span, String)> {
    match p {
        PackedValues::Varint(v) => v.iter().map(|(s, x)| (s.clone(), varint_text(kind, *x))).collect(),
        PackedValues::Fixed32(v) => v.iter().map(|(s, x)| (s.clone(), fixed32_text(kind, *x))).collect(),
        PackedValues::Fixed64(v) => v.iter().map(|(s, x)| (s.clone(), fixed64_text(kind, *x))).collect(),
    }
}

fn scalar_text(kind: &Kind, buf: &[u8], f: &WireField, content: &WireContent) -> String {
    match content {
        WireContent::Varint(v) => varint_text(kind, *v),
        WireContent::Fixed32(v) => fixed32_text(kind, *v),
        WireContent::Fixed64(v) => fixed64_text(kind, *v),
        WireContent::Text => quote(&buf[f.value.clone()]),
        _ => hex_preview(&buf[f.value.clone()]),
    }
}

fn quote(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    if s.chars().count() > 200 {
        let cut: String = s.chars().take(200).collect();
        format!("{}… ({} bytes)", json_quote(&cut), bytes.len())
    } else {
        json_quote(&s)
    }
}

/// A string in JSON quotes and escapes.
pub fn json_quote(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// Up to 32 bytes of hex, then the total length.
pub fn hex_preview(bytes: &[u8]) -> String {
    let shown: Vec<String> = bytes.iter().take(32).map(|b| format!("{b:02x}")).collect();
    if bytes.len() > 32 {
        format!("{}… ({} bytes)", shown.join(" "), bytes.len())
    } else if bytes.is_empty() {
        "(empty)".into()
    } else {
        format!("{} ({} bytes)", shown.join(" "), bytes.len())
    }
}

fn preview_list(items: &[String]) -> String {
    if items.len() > 16 {
        format!("[{}, … {} values]", items[..16].join(", "), items.len())
    } else {
        format!("[{}]", items.join(", "))
    }
}

/// A decoded scalar as an operator reads it (strings quoted).
pub fn scalar_value_text(v: &prost_reflect::Value) -> String {
    use prost_reflect::Value;
    match v {
        Value::Bool(x) => x.to_string(),
        Value::I32(x) => x.to_string(),
        Value::I64(x) => x.to_string(),
        Value::U32(x) => x.to_string(),
        Value::U64(x) => x.to_string(),
        Value::F32(x) => x.to_string(),
        Value::F64(x) => x.to_string(),
        // JSON quoting, which field paths read back (`properties["a\tb"]`).
        Value::String(s) => json_quote(s),
        Value::Bytes(b) => hex_preview(b),
        Value::EnumNumber(n) => n.to_string(),
        Value::Message(m) => prost_reflect::ReflectMessage::descriptor(m).full_name().to_string(),
        Value::List(l) => format!("[{} values]", l.len()),
        Value::Map(m) => format!("{{{} entries}}", m.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaSet;

    fn find<'a>(nodes: &'a [TypedNode], label: &str) -> &'a TypedNode {
        nodes.iter().find(|n| n.label == label).unwrap_or_else(|| {
            panic!("no node {label} in {:?}", nodes.iter().map(|n| &n.label).collect::<Vec<_>>())
        })
    }

    /// The wire view names what the schema knows, at every depth, keeps the wire's own reading
    /// of each value, and leaves a field the schema lacks as its number.
    #[test]
    fn the_wire_view_names_known_fields_and_keeps_the_wire_reading() {
        let set = SchemaSet::builtin();
        let task = set.message("openmldb.datasync.Task").expect("Task");
        let msg = crate::codec::from_json(
            &task,
            r#"{"progress": {"tid": 7, "sync_point": {"type": "kBINLOG", "offset": 42}}, "status": "RUNNING"}"#,
        )
        .expect("a Task");
        let mut bytes = prost::Message::encode_to_vec(&msg);
        bytes.extend_from_slice(&[0xb8, 0x3e, 0x05]); // field 999, varint 5: not in the schema
        let plain = crate::wire::decode(&bytes);
        let nodes = wire_view(Some(&task), &bytes, &plain.root);

        let status = find(&nodes, "#4 status");
        assert!(status.known && status.type_name.ends_with("schema: string"), "{status:?}");
        let progress = find(&nodes, "#1 progress");
        let tid = find(&progress.children, "#1 tid");
        assert_eq!((tid.type_name.as_str(), tid.value.as_deref()), ("varint, schema: uint32", Some("7")));
        let sync_point =
            progress.children.iter().find(|n| n.label.ends_with(" sync_point")).expect("sync_point");
        let offset = find(&sync_point.children, "#4 offset");
        assert_eq!(offset.value.as_deref(), Some("42"));
        // An enum on the wire is its number, not its name.
        assert_eq!(find(&sync_point.children, "#1 type").value.as_deref(), Some("1"));
        let unknown = find(&nodes, "#999");
        assert!(!unknown.known && unknown.value.as_deref() == Some("5"), "{unknown:?}");
        // Without a schema, only numbers: the view a file of unknown type gets.
        let bare = wire_view(None, &bytes, &plain.root);
        assert!(bare.iter().all(|n| !n.known && n.label.starts_with('#') && !n.label.contains(' ')));
        assert_eq!(bare, build(None, &bytes, &plain.root));
    }
}
