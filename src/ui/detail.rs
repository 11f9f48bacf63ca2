//! The decoded selected message: typed tree with byte spans, the schema-less wire tree, JSON,
//! the WAL reading of it, and which bytes are highlighted.

use crate::codec::{self, tree::TypedNode};
use crate::dump::DumpFile;
use crate::dump::view::FrameDecoder;
use crate::wire::{self, DecodeOptions, Span};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DetailView {
    Tree,
    Hex,
    Wire,
    Json,
}

pub struct FrameDetail {
    pub index: usize,
    /// The message bytes (spans below are relative to these).
    pub bytes: Vec<u8>,
    /// Where the message starts in the file.
    pub file_offset: u64,
    pub type_name: String,
    pub tree: Vec<TypedNode>,
    /// The WAL payload decoded in place as its body type (spans point into `bytes`).
    pub payload: Option<(String, Vec<TypedNode>)>,
    pub wire: Vec<TypedNode>,
    pub json: String,
    pub error: Option<String>,
    pub wal_lines: Vec<(String, String)>,
    pub view: DetailView,
    /// The highlighted byte range (from a tree selection or a hex click).
    pub highlight: Option<Span>,
    /// Label path of the selected tree node.
    pub selected_node: Option<String>,
    /// The new value typed for the selected field, when it can be edited.
    pub edit_text: Option<String>,
    /// Why the last edit was refused, shown at the field.
    pub edit_error: Option<String>,
}

/// Bytes shown at most in the detail (a larger message is truncated, and says so).
pub const MAX_DETAIL_BYTES: usize = 16 << 20;

impl FrameDetail {
    /// Decodes `bytes`, the (possibly edited) message of frame `i`.
    pub fn build(dump: &DumpFile, decoder: &FrameDecoder, i: usize, bytes: Vec<u8>) -> Option<FrameDetail> {
        let loc = dump.frame(i)?;
        let (offset, _) = dump.message_bytes(&loc);
        let mut bytes = bytes;
        bytes.truncate(MAX_DETAIL_BYTES);
        let desc = decoder.message_type().cloned();
        let typed = wire::decode_with(&bytes, &DecodeOptions { schema: desc.clone(), ..Default::default() });
        let tree = codec::tree::build(desc.as_ref(), &bytes, &typed.root);
        let plain = wire::decode(&bytes);
        let wire = codec::tree::build(None, &bytes, &plain.root);
        let payload = payload_tree(&tree, &bytes);
        let (json, error, wal_lines) = match &desc {
            Some(d) => match codec::decode(d, &bytes) {
                Ok(m) => (codec::to_json(&m.message, true), None, wal_lines(&m.message)),
                Err(e) => (String::new(), Some(e.to_string()), Vec::new()),
            },
            None => (String::new(), plain.first_error().map(|e| e.to_string()), Vec::new()),
        };
        Some(FrameDetail {
            index: i,
            bytes,
            file_offset: offset,
            type_name: desc.map_or_else(|| "(no type: wire view)".into(), |d| d.full_name().to_string()),
            tree,
            payload,
            wire,
            json,
            error,
            wal_lines,
            view: DetailView::Tree,
            highlight: None,
            selected_node: None,
            edit_text: None,
            edit_error: None,
        })
    }

    /// Every tree shown in the Tree view: the message, then the decoded payload.
    pub fn all_nodes(&self) -> Vec<TypedNode> {
        let mut all = self.tree.clone();
        if let Some((_, p)) = &self.payload {
            all.extend(p.iter().cloned());
        }
        all
    }

    /// The message in the forms an operator pastes elsewhere.
    pub fn copy_forms(&self, file: &std::path::Path, framing: &str) -> Vec<(&'static str, String)> {
        use base64::Engine;
        let hex: String = self.bytes.iter().map(|b| format!("{b:02x}")).collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(&self.bytes);
        let command = format!(
            "walscope decode --framing {framing} --frame {} --type {} {}",
            self.index,
            self.type_name,
            shell_quote(&file.display().to_string())
        );
        vec![
            ("Copy JSON", self.json.clone()),
            ("Copy hex", hex),
            ("Copy base64", b64),
            ("Copy command", command),
        ]
    }

    /// The span of the node at label path `path`.
    pub fn span_of(&self, path: &str) -> Option<Span> {
        fn walk(nodes: &[TypedNode], prefix: &str, path: &str) -> Option<Span> {
            for n in nodes {
                let p = if prefix.is_empty() { n.label.clone() } else { format!("{prefix}.{}", n.label) };
                if p == path {
                    return Some(n.whole());
                }
                if path.starts_with(&p)
                    && let Some(s) = walk(&n.children, &p, path)
                {
                    return Some(s);
                }
            }
            None
        }
        walk(&self.all_nodes(), "", path)
    }

    /// The deepest tree node covering byte `at` (a click in the hex view).
    pub fn node_at(&self, at: usize) -> Option<(String, Span)> {
        fn walk(nodes: &[TypedNode], at: usize, path: String) -> Option<(String, Span)> {
            for n in nodes {
                let w = n.whole();
                if w.start <= at && at < w.end {
                    let p = if path.is_empty() { n.label.clone() } else { format!("{path}.{}", n.label) };
                    return walk(&n.children, at, p.clone()).or(Some((p, w)));
                }
            }
            None
        }
        // The payload's own tree is deeper than the message's `payload` leaf: prefer the
        // smallest span that holds the byte.
        let in_message = walk(&self.tree, at, String::new());
        let in_payload = self.payload.as_ref().and_then(|(_, p)| walk(p, at, String::new()));
        match (in_message, in_payload) {
            (Some(m), Some(p)) => Some(if p.1.len() <= m.1.len() { p } else { m }),
            (m, p) => m.or(p),
        }
    }
}

/// The WAL reading of a DumpMessagesResponse / ImmutableMessage, as label-value lines.
fn wal_lines(m: &prost_reflect::DynamicMessage) -> Vec<(String, String)> {
    use prost_reflect::ReflectMessage;
    let imm = match m.descriptor().full_name() {
        "milvus.proto.milvus.DumpMessagesResponse" => {
            m.get_field_by_name("message").and_then(|v| v.as_message().cloned())
        }
        "milvus.proto.common.ImmutableMessage" => Some(m.clone()),
        _ => None,
    };
    let Some(imm) = imm else { return Vec::new() };
    let w = crate::wal::analyze(crate::schema::SchemaSet::shared_builtin().pool(), &imm);
    let mut out = vec![("summary".to_string(), w.summary())];
    if let Some(Ok(id)) = &w.id {
        out.push(("message id".into(), format!("{} (raw {})", id.display, id.raw)));
    }
    if let Some(tt) = w.timetick {
        out.push(("timetick".into(), format!("{tt} = {} UTC", crate::wal::format_timetick(tt))));
    }
    if let Some(Ok(lc)) = &w.last_confirmed {
        out.push(("last confirmed".into(), lc.display.clone()));
    } else if w.last_confirmed_is_self {
        out.push(("last confirmed".into(), "this message (_lcs)".into()));
    }
    if let Some(Ok(h)) = &w.header {
        out.push((format!("header ({})", h.descriptor().name()), codec::to_json(h, false)));
    }
    match &w.body {
        Some(Ok(b)) => out.push(("body type".into(), b.descriptor().full_name().to_string())),
        Some(Err(e)) => out.push(("body".into(), e.clone())),
        None if w.is_encrypted() => {
            out.push(("body".into(), "encrypted (_ch): the payload is ciphertext, not damage".into()))
        }
        None => {}
    }
    for p in &w.problems {
        out.push(("problem".into(), p.clone()));
    }
    out
}

/// A WAL message's payload decoded as the body type its `_t`/`_v` name, with spans shifted into
/// the enclosing message's bytes so the hex view can highlight body fields too. None for
/// encrypted, legacy or unknown messages, and for anything that is not a WAL message.
fn payload_tree(tree: &[TypedNode], bytes: &[u8]) -> Option<(String, Vec<TypedNode>)> {
    // DumpMessagesResponse.message or a bare ImmutableMessage.
    let imm =
        tree.iter().find(|n| n.label == "message" && n.type_name == crate::wal::analyze::IMMUTABLE_MESSAGE);
    let fields: &[TypedNode] = imm.map_or(tree, |n| &n.children);
    let payload = fields.iter().find(|n| n.label == "payload" && n.known)?;
    let prop = |k: &str| {
        let label = format!("properties[\"{k}\"]");
        fields
            .iter()
            .find(|n| n.label == label)
            .and_then(|n| n.value.clone())
            .map(|v| v.trim_matches('"').to_string())
    };
    if prop("_ch").is_some() {
        return None;
    }
    let t: i32 = prop("_t")?.parse().ok()?;
    let v: u32 = prop("_v")?.parse().ok()?;
    let pool = crate::schema::SchemaSet::shared_builtin().pool();
    let (_, body) = crate::wal::header_body_types(pool, t, v);
    let body = body?;
    let span = payload.value_span.clone();
    let raw = bytes.get(span.clone())?;
    let d = wire::decode_with(raw, &DecodeOptions { schema: Some(body.clone()), ..Default::default() });
    let mut nodes = codec::tree::build(Some(&body), raw, &d.root);
    for n in &mut nodes {
        shift(n, span.start);
    }
    let label = format!("payload as {}", body.full_name());
    let root = TypedNode {
        label: "payload (decoded)".into(),
        type_name: body.full_name().to_string(),
        value: None,
        key: None,
        len_prefix: None,
        value_span: span,
        known: true,
        children: nodes,
    };
    Some((label, vec![root]))
}

fn shift(n: &mut TypedNode, by: usize) {
    let mv = |s: &mut Span| {
        s.start += by;
        s.end += by;
    };
    if let Some(k) = n.key.as_mut() {
        mv(k);
    }
    if let Some(l) = n.len_prefix.as_mut() {
        mv(l);
    }
    mv(&mut n.value_span);
    for c in &mut n.children {
        shift(c, by);
    }
}

/// Single-quotes `s` for a POSIX shell when it needs it.
fn shell_quote(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+:=@".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
