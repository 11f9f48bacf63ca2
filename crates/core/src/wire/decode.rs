//! The decoder behind [`super::decode`]. Recursion is bounded by `max_depth`; guesses about
//! length-delimited payloads are tried on a scratch error list and discarded when they fail.

use super::varint::{VarintFault, read_varint};
use super::*;
use prost_reflect::{FieldDescriptor, Kind};

/// Schema-less decode with default options.
pub fn decode(buf: &[u8]) -> WireDecoding {
    decode_with(buf, &DecodeOptions::default())
}

/// Decode `buf` as one message.
pub fn decode_with(buf: &[u8], opts: &DecodeOptions) -> WireDecoding {
    let mut ctx = Ctx { buf, max_depth: opts.max_depth, errors: Vec::new() };
    let (root, _) = ctx.message(0..buf.len(), 0, opts.schema.as_ref(), None);
    let mut errors = ctx.errors;
    errors.sort_by_key(|e| e.offset);
    WireDecoding { root, errors }
}

struct Ctx<'a> {
    buf: &'a [u8],
    max_depth: usize,
    errors: Vec<WireError>,
}

fn fault(f: VarintFault) -> WireErrorKind {
    match f {
        VarintFault::Truncated => WireErrorKind::TruncatedVarint,
        VarintFault::Overflow => WireErrorKind::VarintOverflow,
    }
}

/// How a schema field expects its length-delimited payload to be read.
enum LenAs {
    Message(MessageDescriptor),
    Text(FieldDescriptor),
    Bytes,
    Packed(FieldDescriptor, usize),
}

fn scalar_wire(kind: &Kind) -> (WireType, usize) {
    match kind {
        Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => (WireType::Fixed64, 8),
        Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => (WireType::Fixed32, 4),
        Kind::String | Kind::Bytes | Kind::Message(_) => (WireType::Len, 0),
        _ => (WireType::Varint, 0),
    }
}

impl Ctx<'_> {
    fn err(&mut self, offset: usize, kind: WireErrorKind) {
        self.errors.push(WireError { offset, kind });
    }

    /// Parses fields in `range`. With `group = Some(n)`, stops at the end-group key for `n` and
    /// returns its span.
    fn message(
        &mut self,
        range: Span,
        depth: usize,
        schema: Option<&MessageDescriptor>,
        group: Option<u32>,
    ) -> (WireMessage, Option<Span>) {
        let mut msg = WireMessage { span: range.clone(), fields: Vec::new(), raw_tail: None };
        let mut pos = range.start;
        let end = range.end;
        while pos < end {
            let key_start = pos;
            let (key, after_key) = match read_varint(self.buf, pos, end) {
                Ok(v) => v,
                Err(f) => {
                    self.err(key_start, fault(f));
                    msg.raw_tail = Some(key_start..end);
                    return (msg, None);
                }
            };
            let number = key >> 3;
            let Some(wire_type) = WireType::from_bits(key & 7) else {
                self.err(key_start, WireErrorKind::InvalidWireType((key & 7) as u8));
                msg.raw_tail = Some(key_start..end);
                return (msg, None);
            };
            if number == 0 || number > 536_870_911 {
                self.err(key_start, WireErrorKind::InvalidFieldNumber(number));
                msg.raw_tail = Some(key_start..end);
                return (msg, None);
            }
            let number = number as u32;
            if wire_type == WireType::EndGroup {
                if group == Some(number) {
                    msg.span = range.start..key_start;
                    return (msg, Some(key_start..after_key));
                }
                self.err(key_start, WireErrorKind::UnexpectedEndGroup(number));
                msg.raw_tail = Some(key_start..end);
                return (msg, None);
            }
            let field_desc = schema.and_then(|s| s.get_field(number));
            match self.field(key_start..after_key, number, wire_type, end, depth, field_desc) {
                Some(field) => {
                    pos = field.whole().end;
                    msg.fields.push(field);
                }
                None => {
                    msg.raw_tail = Some(key_start..end);
                    return (msg, None);
                }
            }
        }
        // An unterminated group is reported by the caller, at its key.
        (msg, None)
    }

    #[allow(clippy::too_many_arguments)]
    fn field(
        &mut self,
        key: Span,
        number: u32,
        wire_type: WireType,
        end: usize,
        depth: usize,
        desc: Option<FieldDescriptor>,
    ) -> Option<WireField> {
        let key_start = key.start;
        let pos = key.end;
        if let Some(d) = &desc {
            self.check_wire_type(key_start, d, wire_type);
        }
        let mut field = WireField {
            number,
            wire_type,
            key,
            len_prefix: None,
            value: pos..pos,
            content: WireContent::Bytes,
        };
        match wire_type {
            WireType::Varint => match read_varint(self.buf, pos, end) {
                Ok((v, next)) => {
                    field.value = pos..next;
                    field.content = WireContent::Varint(v);
                }
                Err(f) => {
                    self.err(pos, fault(f));
                    return None;
                }
            },
            WireType::Fixed64 | WireType::Fixed32 => {
                let n = if wire_type == WireType::Fixed64 { 8 } else { 4 };
                if end - pos < n {
                    self.err(pos, WireErrorKind::TruncatedFixed { needed: n, available: end - pos });
                    return None;
                }
                let b = &self.buf[pos..pos + n];
                field.value = pos..pos + n;
                field.content = if n == 8 {
                    WireContent::Fixed64(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
                } else {
                    WireContent::Fixed32(u32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
                };
            }
            WireType::Len => {
                let (len, start) = match read_varint(self.buf, pos, end) {
                    Ok(v) => v,
                    Err(f) => {
                        self.err(pos, fault(f));
                        return None;
                    }
                };
                let available = end - start;
                if len > available as u64 {
                    self.err(pos, WireErrorKind::LengthOverrun { declared: len, available });
                    return None;
                }
                field.len_prefix = Some(pos..start);
                field.value = start..start + len as usize;
                field.content = self.len_content(field.value.clone(), number, depth, desc);
            }
            WireType::StartGroup => {
                if depth >= self.max_depth {
                    self.err(key_start, WireErrorKind::TooDeep(self.max_depth));
                    return None;
                }
                let sub = desc.as_ref().and_then(|d| match d.kind() {
                    Kind::Message(m) => Some(m),
                    _ => None,
                });
                let (message, end_key) = self.message(pos..end, depth + 1, sub.as_ref(), Some(number));
                if end_key.is_none() {
                    if message.raw_tail.is_none() {
                        self.err(key_start, WireErrorKind::UnterminatedGroup(number));
                    }
                    return None;
                }
                field.value = message.span.clone();
                field.content = WireContent::Group { message, end_key };
            }
            WireType::EndGroup => {
                self.err(key_start, WireErrorKind::UnexpectedEndGroup(number));
                return None;
            }
        }
        Some(field)
    }

    fn check_wire_type(&mut self, at: usize, d: &FieldDescriptor, found: WireType) {
        let (expected, _) = scalar_wire(&d.kind());
        let expected = if d.is_group() { WireType::StartGroup } else { expected };
        let packed_ok = d.is_list()
            && d.kind().wire_type() != prost::encoding::WireType::LengthDelimited
            && !matches!(d.kind(), Kind::Message(_));
        if found == expected || (packed_ok && found == WireType::Len) {
            return;
        }
        self.err(
            at,
            WireErrorKind::WrongWireType {
                field: d.number(),
                name: d.name().to_string(),
                expected: expected.name(),
                found: found.name(),
            },
        );
    }

    fn len_content(
        &mut self,
        value: Span,
        number: u32,
        depth: usize,
        desc: Option<FieldDescriptor>,
    ) -> WireContent {
        let how = desc.map(|d| match d.kind() {
            Kind::Message(m) => LenAs::Message(m),
            Kind::String => LenAs::Text(d),
            Kind::Bytes => LenAs::Bytes,
            k => {
                let (_, unit) = scalar_wire(&k);
                LenAs::Packed(d, unit)
            }
        });
        match how {
            Some(LenAs::Message(m)) => {
                if depth >= self.max_depth {
                    self.err(value.start, WireErrorKind::TooDeep(self.max_depth));
                    return WireContent::Bytes;
                }
                let (message, _) = self.message(value, depth + 1, Some(&m), None);
                WireContent::Message { message, guessed: false }
            }
            Some(LenAs::Text(d)) => {
                if let Err(e) = std::str::from_utf8(&self.buf[value.clone()]) {
                    self.err(
                        value.start + e.valid_up_to(),
                        WireErrorKind::InvalidUtf8 { field: number, name: d.name().to_string() },
                    );
                    return WireContent::Bytes;
                }
                WireContent::Text
            }
            Some(LenAs::Bytes) => WireContent::Bytes,
            Some(LenAs::Packed(d, unit)) => match self.packed(value.clone(), unit) {
                Some(p) => WireContent::Packed(p),
                None => {
                    let len = value.len();
                    self.err(
                        value.start,
                        WireErrorKind::PackedLength {
                            field: number,
                            name: d.name().to_string(),
                            len,
                            unit: unit.max(1),
                        },
                    );
                    WireContent::Bytes
                }
            },
            None => self.guess(value, depth),
        }
    }

    /// Packed scalars of `unit` bytes each (0 = varints). None when the bytes do not fit.
    fn packed(&self, value: Span, unit: usize) -> Option<PackedValues> {
        let bytes = &self.buf[value.clone()];
        match unit {
            4 if bytes.len().is_multiple_of(4) => Some(PackedValues::Fixed32(
                bytes
                    .chunks_exact(4)
                    .enumerate()
                    .map(|(i, c)| {
                        let s = value.start + i * 4;
                        (s..s + 4, u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    })
                    .collect(),
            )),
            8 if bytes.len().is_multiple_of(8) => Some(PackedValues::Fixed64(
                bytes
                    .chunks_exact(8)
                    .enumerate()
                    .map(|(i, c)| {
                        let s = value.start + i * 8;
                        let mut a = [0u8; 8];
                        a.copy_from_slice(c);
                        (s..s + 8, u64::from_le_bytes(a))
                    })
                    .collect(),
            )),
            0 => {
                let mut out = Vec::new();
                let mut pos = value.start;
                while pos < value.end {
                    let (v, next) = read_varint(self.buf, pos, value.end).ok()?;
                    out.push((pos..next, v));
                    pos = next;
                }
                Some(PackedValues::Varint(out))
            }
            _ => None,
        }
    }

    /// Schema-less reading of a length-delimited payload: printable text, then a message,
    /// then packed floats or varints, else bytes.
    fn guess(&mut self, value: Span, depth: usize) -> WireContent {
        let bytes = &self.buf[value.clone()];
        if bytes.is_empty() {
            return WireContent::Bytes;
        }
        if looks_like_text(bytes) {
            return WireContent::Text;
        }
        if depth >= self.max_depth {
            // Too deep to look inside: a hard limit that stays reported through every guess
            // above it, so a hostile 10,000-level nest is an error and not a silent blob.
            self.err(value.start, WireErrorKind::TooDeep(self.max_depth));
            return WireContent::Bytes;
        }
        let mark = self.errors.len();
        let (message, _) = self.message(value.clone(), depth + 1, None, None);
        let only_depth = self.errors[mark..].iter().all(|e| matches!(e.kind, WireErrorKind::TooDeep(_)));
        if message.raw_tail.is_none() && only_depth {
            return WireContent::Message { message, guessed: true };
        }
        self.errors.truncate(mark);
        if bytes.len().is_multiple_of(4)
            && bytes.chunks_exact(4).all(plausible_f32)
            && let Some(p) = self.packed(value.clone(), 4)
        {
            return WireContent::Packed(p);
        }
        if let Some(p) = self.packed(value, 0)
            && p.len() > 1
        {
            return WireContent::Packed(p);
        }
        WireContent::Bytes
    }
}

fn looks_like_text(bytes: &[u8]) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.chars().all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t')),
        Err(_) => false,
    }
}

fn plausible_f32(c: &[u8]) -> bool {
    let f = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    f == 0.0 || (f.is_finite() && f.abs() > 1e-20 && f.abs() < 1e20)
}
