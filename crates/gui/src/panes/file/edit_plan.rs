//! What an editor request means as lossless edits, for any message shown in a
//! [`MessageDetail`]: a dump frame (the file tab stores the edits in its session) or a message
//! of the request composer (which applies them to its bytes). One place, so both editors agree.
//!
//! Must never: change bytes itself; it only plans.

use crate::codec::{Edit, EditOp, FieldPath};
use crate::embedded::{self, Embedded};
use crate::panes::file::detail::MessageDetail;
use crate::panes::file::field_edit::EditRequest;
use prost_reflect::{DescriptorPool, MessageDescriptor};

/// Why an edit request changes nothing (said at the field).
#[derive(Debug, thiserror::Error)]
pub enum EditRefused {
    #[error("no message type \"{0}\" is loaded")]
    NoType(String),
    #[error("select a message first")]
    NoMessage,
    #[error("decode as works on the message's own bytes fields")]
    NotOwnBytesField,
    #[error("decode as is for dump frames; here, edit the field")]
    DecodeAsHere,
    #[error(transparent)]
    Embed(#[from] crate::embedded::EmbedError),
    /// A field path that does not parse or resolve (the codec's words).
    #[error("{0}")]
    Path(String),
    #[error("{0} is not a message")]
    NotAMessage(String),
    #[error("the field moved; select it again")]
    Moved,
    #[error("select the field again")]
    SelectAgain,
    #[error("the JSON says what the message already holds: nothing to change")]
    NothingToChange,
    /// The codec (or the file tab's edit session) refused the edit.
    #[error(transparent)]
    Codec(#[from] crate::codec::CodecError),
    #[error("a save is running; edit again once it has finished")]
    SaveRunning,
    #[error("choose a message type before editing")]
    NoMessageType,
    #[error("there is no frame {0}")]
    NoFrame(usize),
}

/// What a request comes to.
pub enum Planned {
    /// Edits of the message's own bytes (edits inside a decoded bytes field are already turned
    /// into one edit of that field).
    Edits(Vec<Edit>),
    /// Show bytes field `node` decoded as `desc` from now on.
    DecodeAs(String, MessageDescriptor),
}

/// Plans `req` on the message of type `root` whose current bytes are `current`, as `detail`
/// shows it (its tree and decoded bytes fields locate the node; without one, paths are the
/// message's own).
pub fn plan(
    pool: &DescriptorPool,
    root: &MessageDescriptor,
    current: &[u8],
    detail: Option<&MessageDetail>,
    req: EditRequest,
) -> Result<Planned, EditRefused> {
    // Which message the node lives in: the message's own, or a bytes field decoded in place.
    let locate = |node: &str| -> Option<(Embedded, String)> {
        detail?.embedded.iter().find_map(|e| e.inner_path(node).map(|p| (e.clone(), p.to_string())))
    };
    match req {
        EditRequest::DecodeAs { node, type_name } => {
            let desc = pool
                .get_message_by_name(type_name.trim())
                .ok_or_else(|| EditRefused::NoType(type_name.trim().to_string()))?;
            let detail = detail.ok_or(EditRefused::NoMessage)?;
            let field = embedded::find(&detail.tree, &node).ok_or(EditRefused::NotOwnBytesField)?;
            Embedded::decode(&node, field, &detail.bytes, &desc, false)?;
            Ok(Planned::DecodeAs(node, desc))
        }
        EditRequest::Field { node, op } => {
            let (target, path) = locate(&node).map_or((None, node.clone()), |(e, p)| (Some(e), p));
            let edit = Edit { path: FieldPath::parse(&path).map_err(EditRefused::Path)?, op };
            outer_edits(current, target.as_ref(), &[edit]).map(Planned::Edits)
        }
        EditRequest::Json { node, json } => {
            let node = node.unwrap_or_default();
            let (target, inner) = locate(&node).map_or((None, node.clone()), |(e, p)| (Some(e), p));
            let desc = target.as_ref().map_or(root.clone(), |e| e.desc.clone());
            let msg_bytes = match &target {
                Some(e) => current.get(e.root.value_span.clone()).ok_or(EditRefused::Moved)?,
                None => current,
            };
            let edits = if inner.is_empty() {
                crate::codec::json_edit::edits_from_json(&desc, msg_bytes, &json)
            } else {
                let at = FieldPath::parse(&inner).map_err(EditRefused::Path)?;
                let (fd, _) = crate::codec::path::resolve(&desc, &at).map_err(EditRefused::Path)?;
                if fd.is_map() {
                    // A map entry's node spans the entry, not its value: set the value whole.
                    Ok(vec![Edit { path: at, op: EditOp::Set(json) }])
                } else {
                    let sub = match fd.kind() {
                        prost_reflect::Kind::Message(m) => m,
                        _ => return Err(EditRefused::NotAMessage(inner)),
                    };
                    let span = detail
                        .and_then(|d| d.node(&node))
                        .ok_or(EditRefused::SelectAgain)?
                        .value_span
                        .clone();
                    let sub_bytes = current.get(span).ok_or(EditRefused::Moved)?;
                    crate::codec::json_edit::edits_from_json_at(&sub, sub_bytes, &json, &at)
                }
            }?;
            if edits.is_empty() {
                return Err(EditRefused::NothingToChange);
            }
            outer_edits(current, target.as_ref(), &edits).map(Planned::Edits)
        }
    }
}

/// `edits` as edits of the message itself: inside the bytes field `target` decodes, that
/// field's bytes are edited as its type and set back, so the enclosing bytes change only there.
fn outer_edits(current: &[u8], target: Option<&Embedded>, edits: &[Edit]) -> Result<Vec<Edit>, EditRefused> {
    match target {
        None => Ok(edits.to_vec()),
        Some(e) => {
            let inner = current.get(e.root.value_span.clone()).ok_or(EditRefused::Moved)?;
            let new_inner = crate::codec::apply_edits(&e.desc, inner, edits)?;
            let hex = crate::codec::value::encode_hex(&new_inner);
            let path = FieldPath::parse(&e.field_path).map_err(EditRefused::Path)?;
            Ok(vec![Edit { path, op: EditOp::Set(format!("hex:{hex}")) }])
        }
    }
}
