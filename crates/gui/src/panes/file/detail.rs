//! A decoded message, wherever it came from (a dump frame, a request being composed, a reply):
//! typed tree with byte spans, the schema-less wire tree, JSON, the WAL reading of it, and which
//! bytes are highlighted. The detail view and the field editor draw and edit any of them.

use crate::codec::{self, tree::TypedNode};
use crate::dump::DumpFile;
use crate::dump::view::FrameDecoder;
use crate::embedded::{self, Embedded};
use crate::panes::file::field_edit::FieldEditor;
use crate::wire::{self, DecodeOptions, Span};
use prost_reflect::MessageDescriptor;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DetailView {
    Tree,
    Hex,
    Wire,
    Json,
}

/// Where a shown message lives, for its heading and the command line that reproduces it.
#[derive(Debug, Clone, PartialEq)]
pub enum DetailSource {
    /// Frame `index` of a dump file, starting at `file_offset`.
    Frame { index: usize, file_offset: u64 },
    /// A message held in memory (the composer's request, a reply), named for the heading.
    Message { label: String },
}

pub struct MessageDetail {
    /// The frame number for a dump frame (0 otherwise; see `source`).
    pub index: usize,
    /// The message bytes (spans below are relative to these).
    pub bytes: Vec<u8>,
    /// Where the message starts in its file (0 when it is not in a file).
    pub file_offset: u64,
    pub source: DetailSource,
    pub type_name: String,
    pub tree: Vec<TypedNode>,
    /// Bytes fields decoded in place: the WAL payload as its body type, and whatever the
    /// operator chose with "Decode as" (spans point into `bytes`).
    pub embedded: Vec<Embedded>,
    pub wire: Vec<TypedNode>,
    pub json: String,
    /// For a WAL message: its reading as JSON (`wal::reading_json`: properties read, header
    /// and body decoded), which the JSON view shows first.
    pub wal_json: Option<String>,
    /// The JSON view shows the WAL reading (true) or the message as stored (false).
    pub json_reading: bool,
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
    /// Everything else the field editor holds for the selected node.
    pub editor: FieldEditor,
    /// The JSON being edited in the JSON view (None: not editing).
    pub json_edit: Option<String>,
    /// Tree paths whose long child lists show more than the first few: how many.
    pub expanded: std::collections::HashMap<String, usize>,
    /// For a chunk frame: its group, as a job found it (None: not a chunk).
    pub chunk_group: Option<crate::panes::file::chunk_group::ChunkGroupView>,
}

/// The detail of a dump frame (the name the file view knows it by).
pub type FrameDetail = MessageDetail;

/// Bytes shown at most in the detail (a larger message is truncated, and says so).
pub const MAX_DETAIL_BYTES: usize = 16 << 20;

impl MessageDetail {
    /// Decodes `bytes`, the (possibly edited) message of frame `i`. `decode_as` are the bytes
    /// fields the operator asked to see decoded (editor path, type); those that do not decode
    /// in this message are left out.
    pub fn build(
        dump: &DumpFile,
        decoder: &FrameDecoder,
        i: usize,
        bytes: Vec<u8>,
        decode_as: &[(String, MessageDescriptor)],
    ) -> Option<MessageDetail> {
        let loc = dump.frame(i)?;
        let (offset, _) = dump.message_bytes(&loc);
        let source = DetailSource::Frame { index: i, file_offset: offset };
        Some(Self::of(decoder.pool(), decoder.message_type(), bytes, decode_as, source))
    }

    /// Decodes any message: `bytes` as `desc` (None: the wire view only), with the WAL reading
    /// when it is one, from `pool`'s types.
    pub fn of(
        pool: &prost_reflect::DescriptorPool,
        desc: Option<&MessageDescriptor>,
        bytes: Vec<u8>,
        decode_as: &[(String, MessageDescriptor)],
        source: DetailSource,
    ) -> MessageDetail {
        let (i, offset) = match &source {
            DetailSource::Frame { index, file_offset } => (*index, *file_offset),
            DetailSource::Message { .. } => (0, 0),
        };
        let mut bytes = bytes;
        bytes.truncate(MAX_DETAIL_BYTES);
        let desc = desc.cloned();
        let typed = wire::decode_with(&bytes, &DecodeOptions { schema: desc.clone(), ..Default::default() });
        let tree = codec::tree::build(desc.as_ref(), &bytes, &typed.root);
        let plain = wire::decode(&bytes);
        // The wire as it is, named where the schema knows a field number.
        let wire = codec::tree::wire_view(desc.as_ref(), &bytes, &plain.root);
        let mut embedded: Vec<Embedded> = embedded::wal_payload(&tree, &bytes).into_iter().collect();
        for (path, desc) in decode_as {
            if let Some(node) = embedded::find(&tree, path)
                && let Ok(e) = Embedded::decode(path, node, &bytes, desc, false)
            {
                embedded.retain(|x| x.field_path != *path);
                embedded.push(e);
            }
        }
        let (json, error, (wal_lines, wal_json)) = match &desc {
            Some(d) => match codec::decode(d, &bytes) {
                Ok(m) => (codec::to_json(&m.message, true), None, wal_lines(pool, &m.message)),
                Err(e) => (String::new(), Some(e.to_string()), (Vec::new(), None)),
            },
            None => (String::new(), plain.first_error().map(|e| e.to_string()), (Vec::new(), None)),
        };
        MessageDetail {
            index: i,
            bytes,
            file_offset: offset,
            source,
            type_name: desc.map_or_else(|| "(no type: wire view)".into(), |d| d.full_name().to_string()),
            tree,
            embedded,
            wire,
            json,
            json_reading: wal_json.is_some(),
            wal_json,
            error,
            wal_lines,
            view: DetailView::Tree,
            highlight: None,
            selected_node: None,
            edit_text: None,
            edit_error: None,
            editor: FieldEditor::default(),
            json_edit: None,
            expanded: Default::default(),
            chunk_group: None,
        }
    }

    /// The heading line of the detail view.
    pub fn heading(&self) -> String {
        match &self.source {
            DetailSource::Frame { index, file_offset } => format!(
                "frame {index} | {} | {} bytes at file offset {file_offset}",
                self.type_name,
                self.bytes.len()
            ),
            DetailSource::Message { label } => {
                format!("{label} | {} | {} bytes", self.type_name, self.bytes.len())
            }
        }
    }

    /// Selects the node at tree path `path`: highlights its bytes and prepares its editor.
    pub fn select_node(&mut self, path: &str, root: Option<&MessageDescriptor>) {
        let Some(node) = self.node(path).cloned() else { return };
        self.highlight = Some(node.whole());
        self.selected_node = Some(path.to_string());
        self.edit_error = None;
        self.editor = FieldEditor::for_node(path, &node, &self.bytes, root, &self.embedded);
        self.edit_text = self.editor.initial_text.clone();
    }

    /// Selects the message as a whole (its root): the editor then offers its absent fields to
    /// add and its JSON to edit. `root` is the message's type.
    pub fn select_root(&mut self, root: &MessageDescriptor) {
        self.highlight = None;
        self.selected_node = Some(String::new());
        self.edit_error = None;
        self.editor = FieldEditor::for_root(
            root,
            self.tree.iter().map(|n| n.label.clone()).collect(),
            self.bytes.len(),
        );
        self.edit_text = None;
    }

    /// The labels of [`Self::copy_forms`], in order.
    pub const COPY_LABELS: [&'static str; 4] = ["Copy JSON", "Copy hex", "Copy base64", "Copy command"];

    /// The node at tree path `path`, in the message or a decoded bytes field. No copying.
    pub fn node(&self, path: &str) -> Option<&TypedNode> {
        embedded::find(&self.tree, path).or_else(|| {
            self.embedded.iter().find_map(|e| embedded::find(std::slice::from_ref(&e.root), path))
        })
    }

    /// The message in the forms an operator pastes elsewhere. `file` and `framing` say where
    /// a dump frame lives (ignored for a message held in memory: its command decodes its hex).
    pub fn copy_forms(&self, file: &std::path::Path, framing: &str) -> Vec<(&'static str, String)> {
        use base64::Engine;
        let hex = codec::value::encode_hex(&self.bytes);
        let b64 = base64::engine::general_purpose::STANDARD.encode(&self.bytes);
        let command = match &self.source {
            DetailSource::Frame { index, .. } => format!(
                "walscope decode --framing {framing} --frame {index} --type {} {}",
                self.type_name,
                shell_quote(&file.display().to_string())
            ),
            DetailSource::Message { .. } => {
                format!("echo {hex} | walscope decode --input hex --type {} -", self.type_name)
            }
        };
        vec![
            ("Copy JSON", self.json.clone()),
            ("Copy hex", hex),
            ("Copy base64", b64),
            ("Copy command", command),
        ]
    }

    /// The span of the node at label path `path`.
    pub fn span_of(&self, path: &str) -> Option<Span> {
        self.node(path).map(TypedNode::whole)
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
        // A decoded bytes field is deeper than the message's bytes leaf: prefer the smallest
        // span that holds the byte.
        // Decoded fields first, so a tie goes to them.
        let embedded =
            self.embedded.iter().filter_map(|e| walk(std::slice::from_ref(&e.root), at, String::new()));
        embedded.chain(walk(&self.tree, at, String::new())).min_by_key(|(_, span)| span.len())
    }
}

/// The WAL reading of `m` (an `ImmutableMessage`, or a `DumpMessagesResponse` holding one): its
/// lines for the detail's head, and the whole reading as JSON for the JSON view.
fn wal_lines(
    pool: &prost_reflect::DescriptorPool,
    m: &prost_reflect::DynamicMessage,
) -> (Vec<(String, String)>, Option<String>) {
    use prost_reflect::ReflectMessage;
    let Some(imm) = crate::wal::reading::immutable_of(m) else { return (Vec::new(), None) };
    let w = crate::wal::analyze(pool, &imm);
    let json = serde_json::to_string_pretty(&crate::wal::reading_json(&w)).ok();
    let mut out = vec![("summary".to_string(), w.summary())];
    if let Some(Ok(id)) = &w.id {
        out.push(("message id".into(), format!("{} (raw {})", id.display, id.raw)));
    }
    if let Some(tt) = w.timetick {
        out.push(("timetick".into(), format!("{tt} = {} UTC", walscope_core::time::format_timetick(tt))));
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
        None if w.chunk.is_some() => out.push((
            "body".into(),
            "one chunk of a split payload (_ci/_ct): read from the joined message below".into(),
        )),
        None => {}
    }
    for p in &w.problems {
        out.push(("problem".into(), p.clone()));
    }
    (out, json)
}

/// Single-quotes `s` for a POSIX shell when it needs it.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+:=@".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
