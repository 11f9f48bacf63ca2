//! Schema-less (optionally schema-guided) protobuf wire decoding.
//!
//! Owns: turning arbitrary bytes into a [`WireMessage`] tree where every field carries the byte
//! spans of its key, length prefix and value, so any decoded claim can be traced to its bytes.
//! Must never: panic, recurse past [`DecodeOptions::max_depth`], allocate in proportion to a
//! length prefix it has not checked against the buffer, or throw away bytes it could not parse
//! (they stay as a raw tail with the offset of the first bad byte).

mod decode;
pub mod framing;
mod rules;
pub mod scan;
pub mod varint;

pub use decode::{decode, decode_with};
pub use framing::Framing;

use prost_reflect::MessageDescriptor;
use std::ops::Range;

/// Absolute byte range into the buffer that was decoded.
pub type Span = Range<usize>;

/// Default nesting limit: deep enough for any real schema, shallow enough for any stack.
pub const DEFAULT_MAX_DEPTH: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireType {
    Varint,
    Fixed64,
    Len,
    StartGroup,
    EndGroup,
    Fixed32,
}

impl WireType {
    pub fn from_bits(bits: u64) -> Option<Self> {
        Some(match bits {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::Len,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::Fixed32,
            _ => return None,
        })
    }
    pub fn bits(self) -> u8 {
        match self {
            WireType::Varint => 0,
            WireType::Fixed64 => 1,
            WireType::Len => 2,
            WireType::StartGroup => 3,
            WireType::EndGroup => 4,
            WireType::Fixed32 => 5,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            WireType::Varint => "varint",
            WireType::Fixed64 => "fixed64",
            WireType::Len => "length-delimited",
            WireType::StartGroup => "start-group",
            WireType::EndGroup => "end-group",
            WireType::Fixed32 => "fixed32",
        }
    }
}

/// One field occurrence on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct WireField {
    pub number: u32,
    pub wire_type: WireType,
    /// The tag varint.
    pub key: Span,
    /// The length varint of a length-delimited field.
    pub len_prefix: Option<Span>,
    /// The payload: varint bytes, fixed bytes, the bytes after the length prefix, or a group's
    /// contents (without its end-group key).
    pub value: Span,
    pub content: WireContent,
}

impl WireField {
    /// Key through end of value (for groups, through the end-group key).
    pub fn whole(&self) -> Span {
        let end = match &self.content {
            WireContent::Group { end_key, .. } => end_key.as_ref().map_or(self.value.end, |k| k.end),
            _ => self.value.end,
        };
        self.key.start..end
    }
}

/// What a field's payload was read as.
#[derive(Debug, Clone, PartialEq)]
pub enum WireContent {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    /// Length-delimited bytes that parse as a message (by schema, or by guess when `guessed`).
    Message {
        message: WireMessage,
        guessed: bool,
    },
    /// Length-delimited bytes that are printable UTF-8 (or a schema string field).
    Text,
    /// Packed repeated scalars; each element with its own span.
    Packed(PackedValues),
    /// Opaque bytes.
    Bytes,
    Group {
        message: WireMessage,
        end_key: Option<Span>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum PackedValues {
    Varint(Vec<(Span, u64)>),
    Fixed32(Vec<(Span, u32)>),
    Fixed64(Vec<(Span, u64)>),
}

impl PackedValues {
    pub fn len(&self) -> usize {
        match self {
            PackedValues::Varint(v) => v.len(),
            PackedValues::Fixed32(v) => v.len(),
            PackedValues::Fixed64(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn spans(&self) -> Vec<Span> {
        match self {
            PackedValues::Varint(v) => v.iter().map(|(s, _)| s.clone()).collect(),
            PackedValues::Fixed32(v) => v.iter().map(|(s, _)| s.clone()).collect(),
            PackedValues::Fixed64(v) => v.iter().map(|(s, _)| s.clone()).collect(),
        }
    }
}

/// The fields of one message (or the top-level buffer).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WireMessage {
    pub span: Span,
    pub fields: Vec<WireField>,
    /// Bytes from the first bad byte to the end of this message, kept raw.
    pub raw_tail: Option<Span>,
}

/// What was wrong, and at which byte.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at byte {offset}: {kind}")]
pub struct WireError {
    pub offset: usize,
    pub kind: WireErrorKind,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireErrorKind {
    #[error("the data ends inside a varint (truncated input)")]
    TruncatedVarint,
    #[error("varint longer than 10 bytes or overflowing 64 bits (corrupt data)")]
    VarintOverflow,
    #[error("field number {0} is outside 1..=536870911 (not protobuf, or the wrong offset)")]
    InvalidFieldNumber(u64),
    #[error("wire type {0} does not exist (not protobuf, or the wrong offset)")]
    InvalidWireType(u8),
    #[error("{needed}-byte fixed value but only {available} bytes remain (truncated input)")]
    TruncatedFixed { needed: usize, available: usize },
    #[error("length prefix says {declared} bytes but only {available} remain (truncated or corrupt frame)")]
    LengthOverrun { declared: u64, available: usize },
    #[error("end-group for field {0} without a matching start-group")]
    UnexpectedEndGroup(u32),
    #[error("group for field {0} is never closed")]
    UnterminatedGroup(u32),
    #[error("nesting deeper than {0} levels; the rest is kept as raw bytes")]
    TooDeep(usize),
    #[error("field {field} ({name}) is declared {expected} but encoded as {found}: wrong type?")]
    WrongWireType { field: u32, name: String, expected: &'static str, found: &'static str },
    #[error("field {field} ({name}) is a string but holds invalid UTF-8")]
    InvalidUtf8 { field: u32, name: String },
    #[error("packed field {field} ({name}) has {len} bytes, not a multiple of {unit}")]
    PackedLength { field: u32, name: String, len: usize, unit: usize },
}

/// How to decode.
#[derive(Debug, Clone)]
pub struct DecodeOptions {
    pub max_depth: usize,
    /// When set, known fields are read as their declared kinds and mismatches are errors;
    /// unknown fields fall back to the schema-less guesses.
    pub schema: Option<MessageDescriptor>,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions { max_depth: DEFAULT_MAX_DEPTH, schema: None }
    }
}

/// A decoded buffer: the tree plus every error found, in byte order.
#[derive(Debug, Clone, PartialEq)]
pub struct WireDecoding {
    pub root: WireMessage,
    pub errors: Vec<WireError>,
}

impl WireDecoding {
    pub fn first_error(&self) -> Option<&WireError> {
        self.errors.iter().min_by_key(|e| e.offset)
    }
    pub fn is_clean(&self) -> bool {
        self.errors.is_empty()
    }
}
