//! Bytes fields decoded in place as a message type: the WAL payload as its body type (found
//! from `_t`/`_v`), or any bytes field the operator asks to "decode as...". The decoded nodes'
//! spans are shifted into the enclosing message's bytes, so the hex view highlights them and a
//! hex click finds them. Must never: change bytes (edits inside go through the file tab, which
//! re-encodes only the edited field and sets the bytes field to the result).

use crate::codec::tree::TypedNode;
use prost_reflect::MessageDescriptor;

/// Why a bytes field cannot be shown decoded as a type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmbedError {
    #[error("the field lies outside the shown bytes")]
    OutsideBytes,
    /// The bytes are not a valid message of the type (the codec's words say where).
    #[error("{field} is not a {type_name}: {reason}")]
    NotA { field: String, type_name: String, reason: String },
}

/// One bytes field shown decoded.
#[derive(Clone)]
pub struct Embedded {
    /// Editor path of the bytes field in the enclosing message (`message.payload`).
    pub field_path: String,
    pub desc: MessageDescriptor,
    /// The node shown in the tree (label `payload (decoded as InsertRequest)`), its children the
    /// decoded fields.
    pub root: TypedNode,
    /// Whether walscope found it (the WAL payload) rather than the operator choosing it.
    pub automatic: bool,
}

impl Embedded {
    /// Decodes the value bytes of `node` (a bytes field at `field_path`) as `desc`. Fails when
    /// the bytes are not a valid `desc`, saying where.
    pub fn decode(
        field_path: &str,
        node: &TypedNode,
        bytes: &[u8],
        desc: &MessageDescriptor,
        automatic: bool,
    ) -> Result<Embedded, EmbedError> {
        let span = node.value_span.clone();
        let raw = bytes.get(span.clone()).ok_or(EmbedError::OutsideBytes)?;
        let children = crate::codec::tree::build_at(desc, raw, span.start).map_err(|e| EmbedError::NotA {
            field: field_path.to_string(),
            type_name: desc.full_name().to_string(),
            reason: e.to_string(),
        })?;
        // The whole field path: two decoded fields never share a label.
        let root = TypedNode {
            label: format!("{field_path} (decoded as {})", desc.name()),
            type_name: desc.full_name().to_string(),
            value: None,
            key: None,
            len_prefix: None,
            value_span: span,
            known: true,
            children,
        };
        Ok(Embedded { field_path: field_path.to_string(), desc: desc.clone(), root, automatic })
    }

    /// For a tree path inside this decoding: the path inside the decoded message ("" for the
    /// root itself). None when `tree_path` is not in it.
    pub fn inner_path<'a>(&self, tree_path: &'a str) -> Option<&'a str> {
        if tree_path == self.root.label {
            return Some("");
        }
        tree_path.strip_prefix(self.root.label.as_str())?.strip_prefix('.')
    }
}

/// The node at editor path `path` in `nodes` (labels joined by dots).
pub fn find<'a>(nodes: &'a [TypedNode], path: &str) -> Option<&'a TypedNode> {
    fn walk<'a>(nodes: &'a [TypedNode], prefix: &str, path: &str) -> Option<&'a TypedNode> {
        for n in nodes {
            let p = if prefix.is_empty() { n.label.clone() } else { format!("{prefix}.{}", n.label) };
            if p == path {
                return Some(n);
            }
            if path.starts_with(&p)
                && let Some(found) = walk(&n.children, &p, path)
            {
                return Some(found);
            }
        }
        None
    }
    walk(nodes, "", path)
}

/// The WAL payload of a DumpMessagesResponse or ImmutableMessage tree, decoded as the body type
/// its `_t`/`_v` name. None for encrypted, legacy or unknown messages and for non-WAL types.
pub fn wal_payload(tree: &[TypedNode], bytes: &[u8]) -> Option<Embedded> {
    let imm =
        tree.iter().find(|n| n.label == "message" && n.type_name == crate::wal::analyze::IMMUTABLE_MESSAGE);
    let (fields, prefix): (&[TypedNode], &str) = match imm {
        Some(n) => (&n.children, "message."),
        None => (tree, ""),
    };
    let payload = fields.iter().find(|n| n.label == "payload" && n.known)?;
    let body = crate::wal::payload_body_type(crate::schema::SchemaSet::shared_builtin().pool(), fields)?;
    Embedded::decode(&format!("{prefix}payload"), payload, bytes, &body, true).ok()
}
