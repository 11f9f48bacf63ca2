//! Deciding whether a frame body is a plausible message: the cheap first-key check used while
//! indexing, and the full check used by resynchronisation and autodetection.

use super::framing::{FrameHeader, Framing};
use crate::wire::{self, DecodeOptions, WireType, varint::read_varint};
use prost_reflect::MessageDescriptor;

/// The part of a frame body that is the message: everything, except for brpc frames, where the
/// meta comes first and the attachment last.
pub fn message_range(body: &[u8], framing: Framing, header: &FrameHeader) -> std::ops::Range<usize> {
    if framing != Framing::Brpc {
        return 0..body.len();
    }
    let meta_len = (header.meta_len as usize).min(body.len());
    let attachment = brpc_attachment_size(&body[..meta_len]).min(body.len() - meta_len);
    meta_len..body.len() - attachment
}

/// RpcMeta.attachment_size (field 5), 0 when absent or unreadable.
pub fn brpc_attachment_size(meta: &[u8]) -> usize {
    let d = wire::decode(meta);
    d.root
        .fields
        .iter()
        .rev()
        .find_map(|f| match (f.number, &f.content) {
            (5, wire::WireContent::Varint(v)) => Some(*v as usize),
            _ => None,
        })
        .unwrap_or(0)
}

/// Cheap: does the body start like a message of `desc`? Reads at most one key.
pub fn first_key_plausible(body: &[u8], desc: Option<&MessageDescriptor>) -> bool {
    FirstKeys::new(desc).plausible(body)
}

/// [`first_key_plausible`] with the type's fields looked up once: the index asks it of every
/// frame of a file.
pub struct FirstKeys {
    /// By field number: the wire types a first key of that field may have.
    dense: Vec<Option<Accepts>>,
    desc: Option<MessageDescriptor>,
}

#[derive(Clone, Copy)]
struct Accepts {
    expected: WireType,
    list: bool,
    group: bool,
}

impl Accepts {
    fn of(fd: &prost_reflect::FieldDescriptor) -> Accepts {
        Accepts {
            expected: crate::codec::value::wire_type_of(&fd.kind()),
            list: fd.is_list(),
            group: fd.is_group(),
        }
    }
    fn allows(self, wt: WireType) -> bool {
        wt == self.expected
            || (self.list && wt == WireType::Len)
            || (self.group && wt == WireType::StartGroup)
    }
}

impl FirstKeys {
    pub fn new(desc: Option<&MessageDescriptor>) -> FirstKeys {
        let mut dense = Vec::new();
        if let Some(d) = desc {
            for fd in d.fields().filter(|f| f.number() < 256) {
                let n = fd.number() as usize;
                if dense.len() <= n {
                    dense.resize(n + 1, None);
                }
                dense[n] = Some(Accepts::of(&fd));
            }
        }
        FirstKeys { dense, desc: desc.cloned() }
    }

    pub fn plausible(&self, body: &[u8]) -> bool {
        if body.is_empty() {
            return true;
        }
        let Ok((key, _)) = read_varint(body, 0, body.len().min(5)) else { return false };
        let Some(wt) = WireType::from_bits(key & 7) else { return false };
        let number = key >> 3;
        if number == 0 || wt == WireType::EndGroup {
            return false;
        }
        let accepts = match self.dense.get(number as usize) {
            Some(a) => *a,
            None => self.desc.as_ref().and_then(|d| d.get_field(number as u32)).map(|fd| Accepts::of(&fd)),
        };
        // With a schema, a first field it does not know is suspicious but legal; keep it.
        accepts.is_none_or(|a| a.allows(wt))
    }
}

/// Full: the message part decodes cleanly (as `desc` when given). Returns the first bad
/// offset within `message` on failure.
pub fn check_message(message: &[u8], desc: Option<&MessageDescriptor>) -> Result<(), (usize, String)> {
    let opts = DecodeOptions { schema: desc.cloned(), ..Default::default() };
    let d = wire::decode_with(message, &opts);
    match d.first_error() {
        Some(e) => Err((e.offset, e.kind.to_string())),
        None => Ok(()),
    }
}
