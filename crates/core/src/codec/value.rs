//! Field values at the byte level: encoding one field (key + value) canonically, and reading a
//! value typed by an operator (`--set PATH=VALUE`) as the field's kind.

use crate::wire::WireType;
use crate::wire::varint::{write_varint, zigzag_encode};
use base64::Engine;
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MapKey, Value};

pub fn wire_type_of(kind: &Kind) -> WireType {
    match kind {
        Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => WireType::Fixed64,
        Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => WireType::Fixed32,
        Kind::String | Kind::Bytes | Kind::Message(_) => WireType::Len,
        _ => WireType::Varint,
    }
}

pub fn write_key(number: u32, wt: WireType, out: &mut Vec<u8>) {
    write_varint((u64::from(number) << 3) | u64::from(wt.bits()), out);
}

/// The value bytes of one scalar (no key); strings and bytes carry their length prefix.
/// Messages are written by the caller, which knows how to encode them canonically.
pub fn write_scalar(kind: &Kind, v: &Value, out: &mut Vec<u8>) {
    match (kind, v) {
        (Kind::Double, Value::F64(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (Kind::Float, Value::F32(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (Kind::Int32, Value::I32(x)) => write_varint(i64::from(*x) as u64, out),
        (Kind::Int64, Value::I64(x)) => write_varint(*x as u64, out),
        (Kind::Uint32, Value::U32(x)) => write_varint(u64::from(*x), out),
        (Kind::Uint64, Value::U64(x)) => write_varint(*x, out),
        (Kind::Sint32, Value::I32(x)) => write_varint(zigzag_encode(i64::from(*x)) & 0xffff_ffff, out),
        (Kind::Sint64, Value::I64(x)) => write_varint(zigzag_encode(*x), out),
        (Kind::Fixed32, Value::U32(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (Kind::Fixed64, Value::U64(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (Kind::Sfixed32, Value::I32(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (Kind::Sfixed64, Value::I64(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (Kind::Bool, Value::Bool(x)) => out.push(u8::from(*x)),
        (Kind::Enum(_), Value::EnumNumber(x)) => write_varint(i64::from(*x) as u64, out),
        (Kind::String, Value::String(s)) => {
            write_varint(s.len() as u64, out);
            out.extend_from_slice(s.as_bytes());
        }
        (Kind::Bytes, Value::Bytes(b)) => {
            write_varint(b.len() as u64, out);
            out.extend_from_slice(b);
        }
        (Kind::Message(_), Value::Message(m)) => {
            let inner = super::encode(m);
            write_varint(inner.len() as u64, out);
            out.extend_from_slice(&inner);
        }
        // A value of the wrong kind is a programming error upstream; encode nothing rather
        // than guess, and let the strict re-decode after every edit catch it.
        _ => {}
    }
}

/// One element of `fd` with its key (for groups, start and end keys).
pub fn write_element(fd: &FieldDescriptor, v: &Value, out: &mut Vec<u8>) {
    let kind = fd.kind();
    if fd.is_group() {
        if let Value::Message(m) = v {
            write_key(fd.number(), WireType::StartGroup, out);
            out.extend_from_slice(&super::encode(m));
            write_key(fd.number(), WireType::EndGroup, out);
        }
        return;
    }
    write_key(fd.number(), wire_type_of(&kind), out);
    write_scalar(&kind, v, out);
}

/// One map entry (always both key and value, as every protobuf runtime writes them).
pub fn write_map_entry(fd: &FieldDescriptor, key: &MapKey, v: &Value, out: &mut Vec<u8>) {
    let Kind::Message(entry) = fd.kind() else { return };
    let (kd, vd) = (entry.map_entry_key_field(), entry.map_entry_value_field());
    let mut body = Vec::new();
    write_element(&kd, &Value::from(key.clone()), &mut body);
    write_element(&vd, v, &mut body);
    write_key(fd.number(), WireType::Len, out);
    write_varint(body.len() as u64, out);
    out.extend_from_slice(&body);
}

/// A whole field: every element of a list (packed when the field is packed), every entry of a
/// map in key order, or the single value.
pub fn write_field(fd: &FieldDescriptor, v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Map(map) => {
            let mut keys: Vec<&MapKey> = map.keys().collect();
            keys.sort_by(|a, b| map_key_order(a, b));
            for k in keys {
                write_map_entry(fd, k, &map[k], out);
            }
        }
        Value::List(items) if fd.is_packed() => {
            if items.is_empty() {
                return;
            }
            let kind = fd.kind();
            let mut body = Vec::new();
            for item in items {
                write_scalar(&kind, item, &mut body);
            }
            write_key(fd.number(), WireType::Len, out);
            write_varint(body.len() as u64, out);
            out.extend_from_slice(&body);
        }
        Value::List(items) => {
            for item in items {
                write_element(fd, item, out);
            }
        }
        single => write_element(fd, single, out),
    }
}

fn map_key_order(a: &MapKey, b: &MapKey) -> std::cmp::Ordering {
    match (a, b) {
        (MapKey::Bool(x), MapKey::Bool(y)) => x.cmp(y),
        (MapKey::I32(x), MapKey::I32(y)) => x.cmp(y),
        (MapKey::I64(x), MapKey::I64(y)) => x.cmp(y),
        (MapKey::U32(x), MapKey::U32(y)) => x.cmp(y),
        (MapKey::U64(x), MapKey::U64(y)) => x.cmp(y),
        (MapKey::String(x), MapKey::String(y)) => x.cmp(y),
        _ => std::cmp::Ordering::Equal,
    }
}

/// Reads an operator-typed value as `kind`. Messages take JSON; bytes take `hex:`, `0x` or
/// `base64:` prefixes, else the literal UTF-8; enums take a name or a number; strings may be
/// JSON-quoted to carry escapes.
pub fn parse_value(kind: &Kind, text: &str) -> Result<Value, String> {
    let t = text.trim();
    let int_err = |e: std::num::ParseIntError| format!("\"{text}\" is not a valid {}: {e}", kind_name(kind));
    Ok(match kind {
        Kind::Double => Value::F64(parse_float(t)?),
        Kind::Float => Value::F32(parse_float(t)? as f32),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
            let v = parse_signed(t).map_err(int_err)?;
            Value::I32(i32::try_from(v).map_err(|_| format!("{v} does not fit in {}", kind_name(kind)))?)
        }
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::I64(parse_signed(t).map_err(int_err)?),
        Kind::Uint32 | Kind::Fixed32 => {
            let v = parse_unsigned(t).map_err(int_err)?;
            Value::U32(u32::try_from(v).map_err(|_| format!("{v} does not fit in {}", kind_name(kind)))?)
        }
        Kind::Uint64 | Kind::Fixed64 => Value::U64(parse_unsigned(t).map_err(int_err)?),
        Kind::Bool => match t {
            "true" | "1" => Value::Bool(true),
            "false" | "0" => Value::Bool(false),
            _ => return Err(format!("\"{text}\" is not a bool (true or false)")),
        },
        Kind::String => {
            if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
                Value::String(
                    serde_json::from_str::<String>(t).map_err(|e| format!("bad quoted string: {e}"))?,
                )
            } else if (t.starts_with('"') || t.ends_with('"')) && t.matches('"').count() % 2 == 1 {
                // A lone quote at an end is almost always a quote left open (or closed, never
                // opened): storing it would put a literal `"` into the value unseen. Quotes that
                // pair up inside the text (`say "hi"`) are the text's own.
                return Err(format!(
                    "{t} has a quote at one end only: close it (\"...\", JSON escapes allowed) or remove \
                     it; a value that really starts or ends with a quote is typed JSON-quoted: \"\\\"...\""
                ));
            } else {
                Value::String(text.to_string())
            }
        }
        Kind::Bytes => Value::Bytes(parse_bytes(text)?.into()),
        Kind::Enum(e) => {
            if let Some(v) = e.get_value_by_name(t) {
                Value::EnumNumber(v.number())
            } else if let Ok(n) = t.parse::<i32>() {
                // A proto2 enum is closed: a reader treats a number it does not define as an
                // unknown field, so the value set would vanish. A proto3 (open) enum keeps it.
                if e.get_value(n).is_none() && is_closed(e) {
                    return Err(format!(
                        "{n} is not a value of {}, a closed (proto2) enum: a reader would drop it as an unknown field; use one of: {}",
                        e.full_name(),
                        defined_values(e)
                    ));
                }
                Value::EnumNumber(n)
            } else {
                let names: Vec<String> = e.values().map(|v| v.name().to_string()).collect();
                return Err(format!(
                    "\"{text}\" is not a value of {}; one of: {}",
                    e.full_name(),
                    names.join(", ")
                ));
            }
        }
        Kind::Message(m) => {
            let mut de = serde_json::Deserializer::from_str(t);
            let msg = DynamicMessage::deserialize(m.clone(), &mut de)
                .map_err(|e| format!("value for {} must be JSON: {e}", m.full_name()))?;
            if let Some(why) = undefined_closed_enum(&msg) {
                return Err(why);
            }
            Value::Message(msg)
        }
    })
}

/// A value as [`parse_value`] reads it back: messages as JSON, strings JSON-quoted, bytes as
/// `hex:…`, enums by name (by number when the number has no name), floats with `nan`/`inf`.
pub fn format_value(kind: &Kind, v: &Value) -> String {
    let float = |x: f64| {
        if x.is_nan() {
            "nan".to_string()
        } else if x.is_infinite() {
            if x > 0.0 { "inf".into() } else { "-inf".into() }
        } else {
            x.to_string()
        }
    };
    match (v, kind) {
        (Value::Message(m), _) => super::to_json(m, false),
        (Value::String(s), _) => super::tree::json_quote(s),
        (Value::Bytes(b), _) => format!("hex:{}", encode_hex(b)),
        (Value::EnumNumber(n), Kind::Enum(e)) => {
            e.get_value(*n).map_or_else(|| n.to_string(), |ev| ev.name().to_string())
        }
        (Value::F64(x), _) => float(*x),
        (Value::F32(x), _) => float(f64::from(*x)),
        (other, _) => super::tree::scalar_value_text(other),
    }
}

/// Whether `e` is closed: a proto2 enum (proto3 enums are open, and keep any number).
pub fn is_closed(e: &prost_reflect::EnumDescriptor) -> bool {
    e.parent_file().syntax() == prost_reflect::Syntax::Proto2
}

/// The first value in `msg` (at any depth) that is a number a closed enum does not define.
fn undefined_closed_enum(msg: &DynamicMessage) -> Option<String> {
    let fault = |kind: &Kind, v: &Value| -> Option<String> {
        match (kind, v) {
            (Kind::Enum(e), Value::EnumNumber(n)) if e.get_value(*n).is_none() && is_closed(e) => {
                Some(format!(
                    "{n} is not a value of {}, a closed (proto2) enum: a reader would drop it as an unknown field; use one of: {}",
                    e.full_name(),
                    defined_values(e)
                ))
            }
            (_, Value::Message(m)) => undefined_closed_enum(m),
            _ => None,
        }
    };
    msg.fields().find_map(|(fd, v)| {
        let kind = fd.kind();
        match v {
            Value::List(items) => items.iter().find_map(|x| fault(&kind, x)),
            Value::Map(entries) => {
                let value_kind = kind.as_message().map(|m| m.map_entry_value_field().kind())?;
                entries.values().find_map(|x| fault(&value_kind, x))
            }
            x => fault(&kind, x),
        }
    })
}

/// `NAME = number` for each value `e` defines.
fn defined_values(e: &prost_reflect::EnumDescriptor) -> String {
    e.values().map(|v| format!("{} = {}", v.name(), v.number())).collect::<Vec<_>>().join(", ")
}

pub fn kind_name(kind: &Kind) -> String {
    match kind {
        Kind::Message(m) => m.full_name().to_string(),
        Kind::Enum(e) => e.full_name().to_string(),
        k => format!("{k:?}").to_ascii_lowercase(),
    }
}

fn parse_signed(t: &str) -> Result<i64, std::num::ParseIntError> {
    match t.strip_prefix("-0x") {
        Some(h) => i64::from_str_radix(h, 16).map(|v| -v),
        None => match t.strip_prefix("0x") {
            Some(h) => i64::from_str_radix(h, 16),
            None => t.parse(),
        },
    }
}

fn parse_unsigned(t: &str) -> Result<u64, std::num::ParseIntError> {
    match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    }
}

fn parse_float(t: &str) -> Result<f64, String> {
    match t.to_ascii_lowercase().as_str() {
        "nan" => Ok(f64::NAN),
        "inf" | "infinity" => Ok(f64::INFINITY),
        "-inf" | "-infinity" => Ok(f64::NEG_INFINITY),
        _ => t.parse().map_err(|e| format!("\"{t}\" is not a number: {e}")),
    }
}

/// `hex:0a0b`, `0x0a0b`, `base64:CgE=`, or literal text.
pub fn parse_bytes(text: &str) -> Result<Vec<u8>, String> {
    if let Some(h) = text.strip_prefix("hex:").or_else(|| text.strip_prefix("0x")) {
        return decode_hex(h);
    }
    if let Some(b) = text.strip_prefix("base64:") {
        return base64::engine::general_purpose::STANDARD
            .decode(b.trim())
            .map_err(|e| format!("bad base64: {e}"));
    }
    Ok(text.as_bytes().to_vec())
}

/// Lowercase hex, two digits a byte, no separators (what `decode_hex` and `hex:` values read).
pub fn encode_hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

pub fn decode_hex(h: &str) -> Result<Vec<u8>, String> {
    let clean: String = h.chars().filter(|c| !c.is_whitespace()).collect();
    // Only ASCII hex digits may be sliced two bytes at a time (any other character may be
    // several bytes long).
    if let Some((i, c)) = clean.chars().enumerate().find(|(_, c)| !c.is_ascii_hexdigit()) {
        return Err(format!("bad hex at digit {i}: {c:?} is not a hex digit"));
    }
    if !clean.len().is_multiple_of(2) {
        return Err(format!("hex has an odd number of digits ({})", clean.len()));
    }
    (0..clean.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&clean[i..i + 2], 16).map_err(|_| format!("bad hex at digit {i}")))
        .collect()
}

/// A field's integer, read loosely (for the status fields of replies, whose schemas differ): any
/// integer or enum number, or text holding one (empty text: 0; other text: -1). None when the
/// message has no such field or it holds something else.
pub fn loose_integer(msg: &DynamicMessage, name: &str) -> Option<i64> {
    let v = msg.get_field_by_name(name)?;
    match v.as_ref() {
        Value::I32(n) => Some(i64::from(*n)),
        Value::I64(n) => Some(*n),
        Value::U32(n) => Some(i64::from(*n)),
        Value::U64(n) => i64::try_from(*n).ok(),
        Value::EnumNumber(n) => Some(i64::from(*n)),
        // Some schemas carry the code as text.
        Value::String(s) if s.is_empty() => Some(0),
        Value::String(s) => Some(s.trim().parse().unwrap_or(-1)),
        _ => None,
    }
}

/// A string field's text; None when the message has no such field or it is not a string.
pub fn string_field(msg: &DynamicMessage, name: &str) -> Option<String> {
    msg.get_field_by_name(name).and_then(|v| v.as_str().map(str::to_string))
}

#[cfg(test)]
mod hex_tests {
    /// Found by the lossless_edit fuzzer: a non-ASCII character in `hex:` used to panic on a
    /// slice through the middle of it.
    #[test]
    fn hex_with_a_non_ascii_character_is_refused_in_words() {
        let e = super::decode_hex("0\u{486}").expect_err("not hex");
        assert!(e.contains("bad hex at digit 1"), "{e}");
        assert_eq!(super::decode_hex("0a ff").expect("hex"), vec![0x0a, 0xff]);
        assert!(super::decode_hex("abc").expect_err("odd").contains("odd number"));
    }
}

#[cfg(test)]
mod string_tests {
    use super::*;

    #[test]
    fn a_quote_left_open_is_refused_and_paired_quotes_are_kept() {
        let e = parse_value(&Kind::String, "\"by-dev-rootcoord-dml_0_449v7").expect_err("half-quoted");
        assert!(e.contains("has a quote at one end only"), "{e}");
        assert!(parse_value(&Kind::String, "by-dev\"").is_err(), "closed, never opened");
        assert_eq!(parse_value(&Kind::String, "\"a\\\"b\""), Ok(Value::String("a\"b".into())));
        assert_eq!(parse_value(&Kind::String, "say \"hi\""), Ok(Value::String("say \"hi\"".into())));
        assert_eq!(parse_value(&Kind::String, "plain"), Ok(Value::String("plain".into())));
    }
}

#[cfg(test)]
mod enum_tests {
    use super::*;

    /// `--set mode=77` on a proto2 (closed) enum is refused in words naming the defined values,
    /// also inside a message given as JSON; a proto3 (open) enum keeps an undefined number.
    #[test]
    fn a_closed_enum_refuses_an_undefined_number_and_an_open_one_keeps_it() {
        let set = crate::schema::SchemaSet::builtin();
        let pool = set.pool();
        let closed = pool.get_enum_by_name("openmldb.datasync.SyncMode").expect("SyncMode");
        let open = pool.get_enum_by_name("milvus.proto.common.MsgType").expect("MsgType");
        assert!(is_closed(&closed) && !is_closed(&open));
        let e = parse_value(&Kind::Enum(closed.clone()), "77").expect_err("77 is not a SyncMode");
        assert!(e.contains("77 is not a value of openmldb.datasync.SyncMode"), "{e}");
        assert!(e.contains("kFull = 0, kIncrementalByTimestamp = 1, kFullAndContinuous = 2"), "{e}");
        assert_eq!(parse_value(&Kind::Enum(closed.clone()), "2"), Ok(Value::EnumNumber(2)));
        assert_eq!(parse_value(&Kind::Enum(closed), "kFull"), Ok(Value::EnumNumber(0)));
        assert_eq!(parse_value(&Kind::Enum(open), "77777"), Ok(Value::EnumNumber(77777)));
        let request = pool.get_message_by_name("openmldb.datasync.AddSyncTaskRequest").expect("request");
        let e = parse_value(&Kind::Message(request.clone()), r#"{"mode": 77}"#).expect_err("in JSON too");
        assert!(e.contains("closed (proto2) enum"), "{e}");
        assert!(parse_value(&Kind::Message(request), r#"{"mode": 1}"#).is_ok());
    }
}
