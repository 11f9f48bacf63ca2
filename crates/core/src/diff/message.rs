//! The message diff: both sides' typed trees walked together, field group by field group, each
//! difference with its path, values in words, byte ranges, and the edit that makes it.
//!
//! Must never: compare previews (a long string or bytes value is shown cut short): values are
//! compared by their bytes or their exact decoded value.

use super::align::{Step, align, key_field};
use super::values::{EditSink, exact_text, list_items, map_value_text};
use super::{Change, ChangeKind, DiffError, MessageDiff, Side};
use crate::codec::{self, tree, tree::TypedNode};
use crate::wire::{self, DecodeOptions};
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MessageDescriptor};

/// The differences between `a` and `b`, two encodings of `desc` (None: schema-less, fields by
/// number). Both must decode strictly as `desc`; a side that does not is
/// [`DiffError::Undecodable`].
///
/// Rules: fields are matched by name (unknown ones by number, occurrence by occurrence, and
/// compared by bytes); a single field's last occurrence is its value (as protobuf reads it);
/// map entries by key; repeated fields by key where the element type has one (see
/// [`super::KEY_FIELDS`]: the first of `field_id`, `fieldID`, `id`, `ID`, `key`, `name`
/// the element has, when no key repeats), else by position, an element equal to one elsewhere
/// being a move. Nested messages are compared field by field.
pub fn diff_messages(desc: Option<&MessageDescriptor>, a: &[u8], b: &[u8]) -> Result<MessageDiff, DiffError> {
    let type_name = desc.map_or_else(|| "(no schema)".to_string(), |d| d.full_name().to_string());
    let trees = |side: Side, bytes: &[u8]| -> Result<Vec<TypedNode>, DiffError> {
        match desc {
            Some(d) => {
                codec::decode(d, bytes).map_err(|e| undecodable(side, d, e))?;
                let opts = DecodeOptions { schema: Some(d.clone()), ..DecodeOptions::default() };
                Ok(tree::build(Some(d), bytes, &wire::decode_with(bytes, &opts).root))
            }
            None => {
                let w = wire::decode(bytes);
                if let Some(e) = w.first_error() {
                    return Err(DiffError::Undecodable {
                        side,
                        type_name: "protobuf message".into(),
                        offset: e.offset,
                        reason: e.kind.to_string(),
                    });
                }
                Ok(tree::build(None, bytes, &w.root))
            }
        }
    };
    let ta = trees(Side::A, a)?;
    let tb = trees(Side::B, b)?;
    if a == b {
        return Ok(MessageDiff::with_edits(type_name, Vec::new(), Ok(Vec::new())));
    }
    let mut walk = Walk { a, b, changes: Vec::new(), edits: EditSink::default() };
    walk.message(desc, &ta, &tb, 0..b.len(), "", true);
    let Walk { changes, edits, .. } = walk;
    Ok(MessageDiff::with_edits(type_name, changes, edits.finish()))
}

pub(super) fn undecodable(side: Side, desc: &MessageDescriptor, e: codec::CodecError) -> DiffError {
    match e {
        codec::CodecError::Malformed { type_name, offset, reason } => {
            DiffError::Undecodable { side, type_name, offset, reason }
        }
        other => DiffError::Undecodable {
            side,
            type_name: desc.full_name().to_string(),
            offset: 0,
            reason: other.to_string(),
        },
    }
}

/// The field a node belongs to: the label up to its `[`.
fn group_name(n: &TypedNode) -> &str {
    match n.label.find('[') {
        Some(at) if !n.label.starts_with('#') => &n.label[..at],
        _ => &n.label,
    }
}

fn join(prefix: &str, label: &str) -> String {
    if prefix.is_empty() { label.to_string() } else { format!("{prefix}.{label}") }
}

/// A sub-message or a leaf in words: a leaf's value, else `{N fields, M bytes}`.
fn words(n: &TypedNode) -> String {
    match &n.value {
        Some(v) => v.clone(),
        None => format!("{{{} fields, {} bytes}}", n.children.len(), n.value_span.len()),
    }
}

struct Walk<'a> {
    a: &'a [u8],
    b: &'a [u8],
    changes: Vec<Change>,
    edits: EditSink,
}

impl Walk<'_> {
    fn bytes_a(&self, n: &TypedNode) -> &[u8] {
        self.a.get(n.whole()).unwrap_or(&[])
    }
    fn bytes_b(&self, n: &TypedNode) -> &[u8] {
        self.b.get(n.whole()).unwrap_or(&[])
    }

    fn push(&mut self, path: String, kind: ChangeKind, a: Option<&TypedNode>, b: Option<&TypedNode>) {
        let type_name = b.or(a).map(|n| n.type_name.clone()).unwrap_or_default();
        self.changes.push(Change {
            path,
            kind,
            old: a.map(words),
            new: b.map(words),
            type_name,
            a_span: a.map(TypedNode::whole),
            b_span: b.map(TypedNode::whole),
            moved: None,
        });
    }

    /// The nodes of one message on both sides. `b_msg` is the message's bytes in B (for the
    /// exact values edits need); `edit` is false under a field that is set whole.
    fn message(
        &mut self,
        desc: Option<&MessageDescriptor>,
        a: &[TypedNode],
        b: &[TypedNode],
        b_msg: std::ops::Range<usize>,
        prefix: &str,
        edit: bool,
    ) {
        // Groups in B's order, then those only in A.
        let mut names: Vec<&str> = Vec::new();
        for n in b.iter().chain(a) {
            let g = group_name(n);
            if !names.contains(&g) {
                names.push(g);
            }
        }
        let mut b_value: Option<Option<DynamicMessage>> = None;
        let body = desc.and_then(|d| payload_body(d, a, b));
        for name in names {
            let ga: Vec<&TypedNode> = a.iter().filter(|n| group_name(n) == name).collect();
            let gb: Vec<&TypedNode> = b.iter().filter(|n| group_name(n) == name).collect();
            let same =
                ga.len() == gb.len() && ga.iter().zip(&gb).all(|(x, y)| self.bytes_a(x) == self.bytes_b(y));
            if same {
                continue;
            }
            let known = ga.iter().chain(&gb).all(|n| n.known);
            let fd = desc.filter(|_| known).and_then(|d| d.get_field_by_name(name));
            let Some(fd) = fd else {
                self.unknown(name, &ga, &gb, prefix, edit);
                continue;
            };
            if b_value.is_none() {
                let bytes = self.b.get(b_msg.clone());
                b_value = Some(desc.zip(bytes).and_then(|(d, x)| DynamicMessage::decode(d.clone(), x).ok()));
            }
            let msg = b_value.as_ref().and_then(Option::as_ref);
            if let Some(body) = body.as_ref().filter(|_| name == "payload")
                && self.payload(&fd, &ga, &gb, msg, prefix, edit, body)
            {
                continue;
            }
            if fd.is_map() {
                self.map(&fd, &ga, &gb, prefix, edit);
            } else if fd.is_list() {
                self.list(&fd, &ga, &gb, msg, prefix, edit);
            } else {
                self.single(&fd, &ga, &gb, msg, prefix, edit);
            }
        }
    }

    /// A WAL payload that both sides carry as the same body type: compared field by field as
    /// that type (`message.payload.fields_data[2]...`), the byte ranges those of the whole
    /// frame; its edit sets the payload's bytes whole. False when a side is not a valid body.
    #[allow(clippy::too_many_arguments)]
    fn payload(
        &mut self,
        fd: &FieldDescriptor,
        a: &[&TypedNode],
        b: &[&TypedNode],
        b_msg: Option<&DynamicMessage>,
        prefix: &str,
        edit: bool,
        body: &MessageDescriptor,
    ) -> bool {
        let (Some(x), Some(y)) = (a.last(), b.last()) else { return false };
        let (Some(pa), Some(pb)) = (embedded_tree(body, self.a, x), embedded_tree(body, self.b, y)) else {
            return false;
        };
        let path = join(prefix, fd.name());
        if edit {
            self.edits.set(&path, b_msg.map(|m| exact_text(fd, &m.get_field(fd))));
        }
        let before = self.changes.len();
        self.message(Some(body), &pa, &pb, y.value_span.clone(), &path, false);
        if self.changes.len() == before {
            // Other bytes, the same fields (an encoding only): still a change of the payload.
            self.push(path, ChangeKind::Changed, Some(x), Some(y));
        }
        true
    }

    /// Occurrences of an unknown field (or unparsed bytes), compared one by one by bytes.
    fn unknown(&mut self, name: &str, a: &[&TypedNode], b: &[&TypedNode], prefix: &str, edit: bool) {
        let numbered = a.len() > 1 || b.len() > 1;
        for k in 0..a.len().max(b.len()) {
            let path = join(prefix, &if numbered { format!("{name}[{k}]") } else { name.to_string() });
            let (x, y) = (a.get(k).copied(), b.get(k).copied());
            let kind = match (x, y) {
                (Some(x), Some(y)) if self.bytes_a(x) == self.bytes_b(y) => continue,
                (Some(x), Some(y)) if !x.children.is_empty() && !y.children.is_empty() => {
                    // Schema-less sub-messages: their fields by number.
                    self.message(None, &x.children, &y.children, y.value_span.clone(), &path, false);
                    self.edits.refuse(&path, "an unknown field cannot be set by name");
                    continue;
                }
                (Some(_), Some(_)) => ChangeKind::Changed,
                (Some(_), None) => ChangeKind::Removed,
                _ => ChangeKind::Added,
            };
            if edit {
                self.edits.refuse(
                    &path,
                    "an unknown field cannot be set by name: the schema has no field of that number",
                );
            }
            self.push(path, kind, x, y);
        }
    }

    fn single(
        &mut self,
        fd: &FieldDescriptor,
        a: &[&TypedNode],
        b: &[&TypedNode],
        b_msg: Option<&DynamicMessage>,
        prefix: &str,
        edit: bool,
    ) {
        let path = join(prefix, fd.name());
        match (a.last(), b.last()) {
            (Some(x), Some(y)) => {
                if let Kind::Message(m) = fd.kind() {
                    self.message(Some(&m), &x.children, &y.children, y.value_span.clone(), &path, edit);
                    return;
                }
                if self.bytes_a(x) == self.bytes_b(y) {
                    return;
                }
                let new = b_msg.map(|m| exact_text(fd, &m.get_field(fd)));
                let old_exact = exact_of(fd, self.a, x);
                if old_exact.is_some() && old_exact == new {
                    // The same value encoded differently (a non-canonical varint): no change.
                    return;
                }
                if edit {
                    self.edits.set(&path, new);
                }
                self.push(path, ChangeKind::Changed, Some(x), Some(y));
            }
            (None, Some(y)) => {
                if edit {
                    self.edits.set(&path, b_msg.map(|m| exact_text(fd, &m.get_field(fd))));
                }
                self.push(path, ChangeKind::Added, None, Some(y));
            }
            (Some(x), None) => {
                if edit {
                    self.edits.clear(&path);
                }
                self.push(path, ChangeKind::Removed, Some(x), None);
            }
            (None, None) => {}
        }
    }

    fn map(&mut self, fd: &FieldDescriptor, a: &[&TypedNode], b: &[&TypedNode], prefix: &str, edit: bool) {
        let value_kind = fd.kind().as_message().map(|e| e.map_entry_value_field().kind());
        let mut labels: Vec<&str> = Vec::new();
        for n in b.iter().chain(a) {
            if !labels.contains(&n.label.as_str()) {
                labels.push(&n.label);
            }
        }
        for label in labels {
            let x = a.iter().rev().find(|n| n.label == label).copied();
            let y = b.iter().rev().find(|n| n.label == label).copied();
            let path = join(prefix, label);
            match (x, y) {
                (Some(x), Some(y)) => {
                    if self.bytes_a(x) == self.bytes_b(y) {
                        continue;
                    }
                    if let Some(Kind::Message(m)) = &value_kind {
                        // The entry's value node: its children are the value message's fields.
                        let sub = entry_value_bytes(fd, self.b, y);
                        self.message(Some(m), &x.children, &y.children, sub, &path, edit);
                        continue;
                    }
                    let new = map_value_text(fd, self.b, y);
                    if new.is_some() && new == map_value_text(fd, self.a, x) {
                        continue;
                    }
                    if edit {
                        self.edits.set(&path, new);
                    }
                    self.push(path, ChangeKind::Changed, Some(x), Some(y));
                }
                (None, Some(y)) => {
                    if edit {
                        self.edits.set(&path, map_value_text(fd, self.b, y));
                    }
                    self.push(path, ChangeKind::Added, None, Some(y));
                }
                (Some(x), None) => {
                    if edit {
                        self.edits.clear(&path);
                    }
                    self.push(path, ChangeKind::Removed, Some(x), None);
                }
                (None, None) => {}
            }
        }
    }

    fn list(
        &mut self,
        fd: &FieldDescriptor,
        a: &[&TypedNode],
        b: &[&TypedNode],
        b_msg: Option<&DynamicMessage>,
        prefix: &str,
        edit: bool,
    ) {
        let elem = fd.kind().as_message().cloned();
        let key = elem.as_ref().and_then(key_field);
        let steps = align(self.a, a, self.b, b, key.as_deref());
        let whole = edit && !steps.iter().all(|s| s.in_place());
        if whole {
            let path = join(prefix, fd.name());
            self.edits.set_list(&path, b_msg.map(|m| list_items(fd, m)));
        }
        let name = fd.name();
        for step in steps {
            match step {
                Step::Same(..) => {}
                Step::Pair(i, j) => {
                    let path = join(prefix, &format!("{name}[{j}]"));
                    let (x, y) = (a[i], b[j]);
                    if let Some(m) = &elem {
                        self.message(
                            Some(m),
                            &x.children,
                            &y.children,
                            y.value_span.clone(),
                            &path,
                            !whole && edit,
                        );
                        continue;
                    }
                    if same_scalar(x, y) {
                        // One value, encoded differently (packed on one side only).
                        continue;
                    }
                    if !whole && edit {
                        let new = b_msg.and_then(|m| {
                            let v = m.get_field(fd);
                            v.as_list().and_then(|l| l.get(j)).map(|v| exact_text(fd, v))
                        });
                        self.edits.set(&path, new);
                    }
                    self.push(path, ChangeKind::Changed, Some(x), Some(y));
                }
                Step::Moved(i, j) => {
                    let path = join(prefix, &format!("{name}[{j}]"));
                    self.push(path, ChangeKind::Moved, Some(a[i]), Some(b[j]));
                    if let Some(c) = self.changes.last_mut() {
                        c.moved = Some((i, j));
                    }
                }
                Step::Added(j) => {
                    self.push(join(prefix, &format!("{name}[{j}]")), ChangeKind::Added, None, Some(b[j]))
                }
                Step::Removed(i) => {
                    self.push(join(prefix, &format!("{name}[{i}]")), ChangeKind::Removed, Some(a[i]), None)
                }
            }
        }
    }
}

/// Whether two scalar nodes hold the same value as the tree reads it (a preview cut short, as a
/// long string's, does not tell).
fn same_scalar(x: &TypedNode, y: &TypedNode) -> bool {
    match (&x.value, &y.value) {
        (Some(u), Some(v)) => u == v && !u.contains('…'),
        _ => false,
    }
}

/// The exact value of a single scalar node, as [`exact_text`] writes it.
fn exact_of(fd: &FieldDescriptor, buf: &[u8], n: &TypedNode) -> Option<String> {
    let parent = fd.parent_message().clone();
    let m = DynamicMessage::decode(parent, buf.get(n.whole())?).ok()?;
    Some(exact_text(fd, &m.get_field(fd)))
}

/// The bytes of a map entry's value message in `buf` (its `value` field), for decoding it.
fn entry_value_bytes(fd: &FieldDescriptor, buf: &[u8], entry: &TypedNode) -> std::ops::Range<usize> {
    let Some(entry_desc) = fd.kind().as_message().cloned() else { return 0..0 };
    let span = entry.value_span.clone();
    let Some(bytes) = buf.get(span.clone()) else { return 0..0 };
    let opts = DecodeOptions { schema: Some(entry_desc.clone()), ..DecodeOptions::default() };
    let w = wire::decode_with(bytes, &opts);
    let value_no = entry_desc.map_entry_value_field().number();
    w.root
        .fields
        .iter()
        .rev()
        .find(|f| f.number == value_no)
        .map_or(0..0, |f| span.start + f.value.start..span.start + f.value.end)
}

/// The body type of an ImmutableMessage's payload when both sides name the same one (`_t`,
/// `_v`) and neither is encrypted (`_ch`); None otherwise, and for any other type.
fn payload_body(desc: &MessageDescriptor, a: &[TypedNode], b: &[TypedNode]) -> Option<MessageDescriptor> {
    if desc.full_name() != crate::wal::analyze::IMMUTABLE_MESSAGE {
        return None;
    }
    let pool = desc.parent_pool();
    let body = crate::wal::payload_body_type(pool, a)?;
    (crate::wal::payload_body_type(pool, b).as_ref() == Some(&body)).then_some(body)
}

/// The nodes of a bytes field's value decoded as `body`, with spans in the whole buffer; None
/// when the bytes are not a valid `body`.
fn embedded_tree(body: &MessageDescriptor, buf: &[u8], n: &TypedNode) -> Option<Vec<TypedNode>> {
    tree::build_at(body, buf.get(n.value_span.clone())?, n.value_span.start).ok()
}
