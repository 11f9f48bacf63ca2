//! The message diff: both sides' typed trees walked together.

use super::{Change, ChangeKind, DiffError, MessageDiff, Side};
use crate::codec;
use prost_reflect::MessageDescriptor;

/// The differences between `a` and `b`, two encodings of `desc` (None: schema-less, fields by
/// number). Both must decode strictly as `desc`; a side that does not is
/// [`DiffError::Undecodable`].
pub fn diff_messages(desc: Option<&MessageDescriptor>, a: &[u8], b: &[u8]) -> Result<MessageDiff, DiffError> {
    let type_name = desc.map_or_else(|| "(no schema)".to_string(), |d| d.full_name().to_string());
    if let Some(d) = desc {
        for (side, bytes) in [(Side::A, a), (Side::B, b)] {
            if let Err(e) = codec::decode(d, bytes) {
                return Err(undecodable(side, d, e));
            }
        }
    }
    if a == b {
        return Ok(MessageDiff::with_edits(type_name, Vec::new(), Ok(Vec::new())));
    }
    let change = Change {
        path: String::new(),
        kind: ChangeKind::Changed,
        old: Some(crate::codec::tree::hex_preview(a)),
        new: Some(crate::codec::tree::hex_preview(b)),
        type_name: type_name.clone(),
        a_span: Some(0..a.len()),
        b_span: Some(0..b.len()),
        moved: None,
    };
    Ok(MessageDiff::new(type_name, vec![change]))
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
