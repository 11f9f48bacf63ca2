//! The field editor's state for the selected tree node: what the field is (resolved against the
//! schema), the value being typed in a form fit for its type, and the requests the panel hands
//! to the file tab. Owns no bytes of the file and applies nothing itself; every request goes
//! through the lossless codec in [`crate::panes::file::FileTab::request`].

use crate::codec::EditOp;
use crate::codec::path::{FieldPath, resolve};
use crate::codec::tree::TypedNode;
use crate::codec::value::{encode_hex, kind_name, parse_value};
use crate::embedded::Embedded;
use base64::Engine;
use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor, Value};

/// What the operator asked the editor to do to the selected message.
#[derive(Debug, Clone, PartialEq)]
pub enum EditRequest {
    /// One operation on the field at tree path `node`.
    Field { node: String, op: EditOp },
    /// The message at tree path `node` (None: the whole message) as edited JSON; only the
    /// fields that differ are rewritten.
    Json { node: Option<String>, json: String },
    /// Show bytes field `node` decoded as message type `type_name`.
    DecodeAs { node: String, type_name: String },
}

/// How a bytes value is typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BytesForm {
    #[default]
    Hex,
    Base64,
    Utf8,
}

#[derive(Default)]
pub struct FieldEditor {
    /// Tree path of the node.
    pub path: String,
    /// The schema field (None: an unknown field, a decoded root, unparsed bytes).
    pub field: Option<FieldDescriptor>,
    /// One element of a repeated field or one map entry, not the whole field.
    pub element: bool,
    /// The message type of a message node (sub-message, element, decoded root).
    pub message: Option<MessageDescriptor>,
    /// The value the edit box starts with, for fields that take a typed value.
    pub initial_text: Option<String>,
    /// The current value of a bytes field.
    pub bytes: Option<Vec<u8>>,
    pub bytes_form: BytesForm,
    /// The element to append to this node's list.
    pub append_text: String,
    /// An absent field of this message to add, and its value.
    pub add_field: String,
    pub add_value: String,
    /// The message's JSON while it is being edited.
    pub json: Option<String>,
    /// The type to decode a bytes field as.
    pub decode_as: String,
    /// Facts about the node kept from selection time, so drawing need not find it again:
    /// its value bytes, whether the schema knows it, and its children's labels.
    pub value_span: crate::wire::Span,
    pub known: bool,
    pub child_labels: Vec<String>,
    /// Why this leaf has no edit box (too large to edit inline, not valid UTF-8, …).
    pub not_inline: Option<ValueRefused>,
}

/// Why a value has no edit box, or why what was typed is not a value of the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueRefused {
    #[error("the value lies outside the shown bytes")]
    OutsideBytes,
    #[error("{0} bytes is too large to edit here; use Edit JSON on its message or `walscope edit --set`")]
    TooLarge(usize),
    /// A map entry whose bytes do not decode (the decoder's words).
    #[error("{0}")]
    MapEntry(String),
    #[error("this string is not valid UTF-8 ({0}); edit its bytes in the hex dump with the CLI")]
    StringNotUtf8(std::str::Utf8Error),
    #[error("this node has no schema field to edit")]
    NoField,
    /// What was typed as hex is not hex (the codec's words).
    #[error("{0}")]
    Hex(String),
    #[error("not base64: {0}")]
    Base64(base64::DecodeError),
    /// What was typed is not a value of the field's type (the codec's words).
    #[error("{0}")]
    Value(String),
    #[error("these bytes are not valid UTF-8; edit them as hex or base64")]
    BytesNotUtf8,
}

/// Values larger than this are not put in an edit box (they would cost every frame).
pub const MAX_INLINE_BYTES: usize = 64 << 10;

/// The leaf's value as it is in the bytes (not the tree's shortened preview). A map entry's
/// node covers the whole entry; its value is read out of it.
fn current_value(fd: &FieldDescriptor, node: &TypedNode, bytes: &[u8]) -> Result<Value, ValueRefused> {
    let raw = bytes.get(node.value_span.clone()).ok_or(ValueRefused::OutsideBytes)?;
    if raw.len() > MAX_INLINE_BYTES {
        return Err(ValueRefused::TooLarge(raw.len()));
    }
    if let Kind::Message(entry) = fd.kind()
        && fd.is_map()
    {
        let e = prost_reflect::DynamicMessage::decode(entry.clone(), raw)
            .map_err(|e| ValueRefused::MapEntry(e.to_string()))?;
        return Ok(e.get_field(&entry.map_entry_value_field()).into_owned());
    }
    match fd.kind() {
        Kind::String => std::str::from_utf8(raw)
            .map(|s| Value::String(s.to_string()))
            .map_err(ValueRefused::StringNotUtf8),
        Kind::Bytes => Ok(Value::Bytes(raw.to_vec().into())),
        // Numbers, enums and booleans: the tree's text is exact.
        _ => Ok(Value::String(node.value.clone().unwrap_or_default())),
    }
}

/// The edit box's starting text. Numbers, enums and booleans arrive as the tree's (exact) text,
/// enums shown as "kBINLOG (1)" and typed by name; real values (strings, map values) as
/// `parse_value` reads them back (strings JSON-quoted, so any character survives).
fn value_text(v: &Value, kind: &Kind) -> String {
    match (v, kind) {
        (Value::String(s), Kind::Enum(_)) => s.split(" (").next().unwrap_or(s).to_string(),
        (Value::String(s), k) if *k != Kind::String => s.clone(),
        (v, k) => crate::codec::value::format_value(k, v),
    }
}

impl FieldEditor {
    /// The editor of a whole message of type `root` (`len` bytes) whose top-level fields are
    /// `labels`.
    pub fn for_root(root: &MessageDescriptor, labels: Vec<String>, len: usize) -> FieldEditor {
        FieldEditor {
            message: Some(root.clone()),
            known: true,
            value_span: 0..len,
            child_labels: labels,
            ..Default::default()
        }
    }

    /// Works out what `node` (at tree path `path`) is. `root` is the type of the whole message.
    pub fn for_node(
        path: &str,
        node: &TypedNode,
        bytes: &[u8],
        root: Option<&MessageDescriptor>,
        embedded: &[Embedded],
    ) -> FieldEditor {
        let mut ed = FieldEditor {
            path: path.to_string(),
            value_span: node.value_span.clone(),
            known: node.known,
            child_labels: node.children.iter().map(|c| c.label.clone()).collect(),
            ..Default::default()
        };
        let (desc, inner) = match embedded.iter().find_map(|e| e.inner_path(path).map(|p| (e, p))) {
            Some((e, p)) => (Some(e.desc.clone()), p.to_string()),
            None => (root.cloned(), path.to_string()),
        };
        let Some(desc) = desc else { return ed };
        if inner.is_empty() {
            ed.message = Some(desc);
            return ed;
        }
        let Ok(Ok((fd, element))) = FieldPath::parse(&inner).map(|p| resolve(&desc, &p)) else { return ed };
        let kind = value_kind(&fd);
        if let Kind::Message(m) = &kind
            && (element || !fd.is_list())
        {
            ed.message = Some(m.clone());
        }
        let leaf = !matches!(kind, Kind::Message(_)) && (element || !fd.is_list());
        if leaf && node.known {
            match current_value(&fd, node, bytes) {
                Ok(v) => {
                    if let Value::Bytes(b) = &v {
                        ed.initial_text = Some(render_bytes(b, BytesForm::Hex));
                        ed.bytes = Some(b.to_vec());
                    } else {
                        ed.initial_text = Some(value_text(&v, &kind));
                    }
                }
                Err(why) => ed.not_inline = Some(why),
            }
        }
        ed.element = element;
        ed.field = Some(fd);
        ed
    }

    /// The kind of value the edit box takes (a map entry's value kind for an entry).
    pub fn kind(&self) -> Option<Kind> {
        self.field.as_ref().map(value_kind)
    }

    /// The typed text as the codec's `Set` reads it, or why it is not a valid value.
    pub fn value_for(&self, text: &str) -> Result<String, ValueRefused> {
        let kind = self.kind().ok_or(ValueRefused::NoField)?;
        if kind == Kind::Bytes {
            let b = parse_bytes_form(text, self.bytes_form)?;
            return Ok(format!("hex:{}", encode_hex(&b)));
        }
        parse_value(&kind, text).map(|_| text.to_string()).map_err(ValueRefused::Value)
    }

    /// Switches how a bytes value is typed, rewriting the box in the new form.
    pub fn set_bytes_form(&mut self, form: BytesForm, text: &mut String) -> Result<(), ValueRefused> {
        let current = parse_bytes_form(text, self.bytes_form)?;
        if form == BytesForm::Utf8 && std::str::from_utf8(&current).is_err() {
            return Err(ValueRefused::BytesNotUtf8);
        }
        *text = render_bytes(&current, form);
        self.bytes_form = form;
        Ok(())
    }

    /// The allowed range of a number field, for the hint beside its box.
    pub fn range_hint(&self) -> Option<String> {
        let k = self.kind()?;
        let r = match k {
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => format!("{}..{}", i32::MIN, i32::MAX),
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => format!("{}..{}", i64::MIN, i64::MAX),
            Kind::Uint32 | Kind::Fixed32 => format!("0..{}", u32::MAX),
            Kind::Uint64 | Kind::Fixed64 => format!("0..{}", u64::MAX),
            Kind::Float | Kind::Double => "a decimal number, nan, inf or -inf".into(),
            _ => return None,
        };
        Some(format!("{}: {r}", kind_name(&k)))
    }

    /// Fields that can be added to this message node: the singular ones it does not hold yet,
    /// and every list and map (a new element or entry).
    pub fn addable_fields(&self) -> Vec<FieldDescriptor> {
        let Some(m) = &self.message else { return Vec::new() };
        m.fields()
            .filter(|f| f.is_list() || f.is_map() || !self.child_labels.iter().any(|l| l == f.name()))
            .collect()
    }
}

/// A map field's entries are edited through their value; everything else by its own kind.
pub fn value_kind(fd: &FieldDescriptor) -> Kind {
    match fd.kind() {
        Kind::Message(entry) if fd.is_map() => entry.map_entry_value_field().kind(),
        k => k,
    }
}

pub fn render_bytes(b: &[u8], form: BytesForm) -> String {
    match form {
        BytesForm::Hex => encode_hex(b),
        BytesForm::Base64 => base64::engine::general_purpose::STANDARD.encode(b),
        BytesForm::Utf8 => String::from_utf8_lossy(b).into_owned(),
    }
}

fn parse_bytes_form(text: &str, form: BytesForm) -> Result<Vec<u8>, ValueRefused> {
    match form {
        BytesForm::Hex => crate::codec::value::decode_hex(text).map_err(ValueRefused::Hex),
        BytesForm::Base64 => {
            base64::engine::general_purpose::STANDARD.decode(text.trim()).map_err(ValueRefused::Base64)
        }
        BytesForm::Utf8 => Ok(text.as_bytes().to_vec()),
    }
}
