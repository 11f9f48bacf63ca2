//! Lossless edits by field path. The original bytes are spliced, never re-encoded: only the
//! edited value and the length prefixes of the messages on its path change. Everything else
//! (field order, unknown fields, non-canonical varints, duplicate occurrences) stays
//! byte-identical. Fresh values are encoded canonically.

use super::path::{FieldPath, Segment, Selector};
use super::value::{parse_value, write_element, write_key, write_scalar};
use super::{CodecError, decode};
use crate::wire::varint::write_varint;
use crate::wire::{self, DecodeOptions, Span, WireContent, WireField, WireType};
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, Value};

#[derive(Debug, Clone, PartialEq)]
pub enum EditOp {
    /// Set a value (scalars as text, messages as JSON, whole lists as a JSON array).
    Set(String),
    /// Remove the field (or the selected element or map entry).
    Clear,
    /// Add an element at the end of a repeated field.
    Append(String),
    /// Move the selected element of a repeated field by this many places (negative: towards
    /// the front). The elements' bytes are swapped, never re-encoded.
    Move(i64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    pub path: FieldPath,
    pub op: EditOp,
}

impl Edit {
    /// `PATH=VALUE`, as `--set` takes it.
    pub fn set(spec: &str) -> Result<Edit, String> {
        let (p, v) = spec.split_once('=').ok_or_else(|| format!("\"{spec}\" is not PATH=VALUE"))?;
        Ok(Edit { path: FieldPath::parse(p.trim())?, op: EditOp::Set(v.to_string()) })
    }
    pub fn append(spec: &str) -> Result<Edit, String> {
        let (p, v) = spec.split_once('=').ok_or_else(|| format!("\"{spec}\" is not PATH=VALUE"))?;
        Ok(Edit { path: FieldPath::parse(p.trim())?, op: EditOp::Append(v.to_string()) })
    }
    pub fn clear(path: &str) -> Result<Edit, String> {
        Ok(Edit { path: FieldPath::parse(path.trim())?, op: EditOp::Clear })
    }
    /// `task[2]` moved by `by` places (-1: one up).
    pub fn move_by(path: &str, by: i64) -> Result<Edit, String> {
        Ok(Edit { path: FieldPath::parse(path.trim())?, op: EditOp::Move(by) })
    }
}

/// Applies `edits` in order to a message of type `desc`. The input must decode cleanly; the
/// output is re-decoded strictly before it is returned.
pub fn apply_edits(desc: &MessageDescriptor, bytes: &[u8], edits: &[Edit]) -> Result<Vec<u8>, CodecError> {
    decode(desc, bytes)?;
    let mut cur = bytes.to_vec();
    for e in edits {
        cur = edit_message(desc, &cur, &e.path.0, &e.op)
            .map_err(|m| CodecError::Edit(format!("{}: {m}", e.path)))?;
    }
    decode(desc, &cur).map_err(|e| {
        CodecError::Edit(format!("the edit produced invalid bytes ({e}); nothing was changed"))
    })?;
    Ok(cur)
}

type R<T> = Result<T, String>;

fn find_field(desc: &MessageDescriptor, name: &str) -> R<FieldDescriptor> {
    desc.get_field_by_name(name)
        .or_else(|| desc.get_field_by_json_name(name))
        .or_else(|| name.parse::<u32>().ok().and_then(|n| desc.get_field(n)))
        .ok_or_else(|| {
            let names: Vec<String> = desc.fields().map(|f| f.name().to_string()).collect();
            format!("{} has no field \"{name}\"; its fields: {}", desc.full_name(), names.join(", "))
        })
}

fn top_fields(desc: &MessageDescriptor, buf: &[u8]) -> R<Vec<WireField>> {
    let d = wire::decode_with(buf, &DecodeOptions { schema: Some(desc.clone()), ..Default::default() });
    if let Some(e) = d.first_error() {
        return Err(format!("cannot edit {}: {e}", desc.full_name()));
    }
    Ok(d.root.fields)
}

/// Applies non-overlapping replacements (an empty span inserts).
fn splice(buf: &[u8], mut reps: Vec<(Span, Vec<u8>)>) -> Vec<u8> {
    reps.sort_by_key(|(s, _)| (s.start, s.end));
    let mut out = Vec::with_capacity(buf.len() + 16);
    let mut pos = 0;
    for (span, bytes) in reps {
        out.extend_from_slice(&buf[pos..span.start]);
        out.extend_from_slice(&bytes);
        pos = span.end;
    }
    out.extend_from_slice(&buf[pos..]);
    out
}

fn with_len(body: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(body.len() + 5);
    write_varint(body.len() as u64, &mut v);
    v.extend_from_slice(body);
    v
}

/// Replacement for a nested message's bytes, keeping its key: a new length prefix for a
/// length-delimited field, bare contents for a group.
fn replace_sub(f: &WireField, new_sub: &[u8]) -> (Span, Vec<u8>) {
    match (&f.len_prefix, f.wire_type) {
        (Some(lp), _) => (lp.start..f.value.end, with_len(new_sub)),
        _ => (f.value.clone(), new_sub.to_vec()),
    }
}

fn sub_message(fd: &FieldDescriptor) -> R<MessageDescriptor> {
    match fd.kind() {
        Kind::Message(m) => Ok(m),
        k => Err(format!("{} is a {}, it has no fields inside", fd.name(), super::value::kind_name(&k))),
    }
}

/// Siblings of a oneof member, which setting the member must clear.
fn oneof_siblings(fd: &FieldDescriptor) -> Vec<u32> {
    fd.containing_oneof()
        .filter(|o| !o.is_synthetic())
        .map(|o| o.fields().map(|f| f.number()).filter(|n| *n != fd.number()).collect())
        .unwrap_or_default()
}

fn edit_message(desc: &MessageDescriptor, buf: &[u8], segs: &[Segment], op: &EditOp) -> R<Vec<u8>> {
    let seg = segs.first().ok_or("empty path")?;
    let fd = find_field(desc, &seg.field)?;
    let fields = top_fields(desc, buf)?;
    let occ: Vec<&WireField> = fields.iter().filter(|f| f.number == fd.number()).collect();
    let rest = &segs[1..];
    if fd.is_map() {
        edit_map(&fd, buf, &occ, seg, rest, op)
    } else if fd.is_list() {
        edit_list(&fd, buf, &occ, seg, rest, op)
    } else {
        if seg.selector.is_some() {
            return Err(format!("{} is not repeated and not a map; drop the [..]", fd.name()));
        }
        let mut reps: Vec<(Span, Vec<u8>)> = Vec::new();
        let siblings = oneof_siblings(&fd);
        let clear_siblings = |reps: &mut Vec<(Span, Vec<u8>)>| {
            for f in fields.iter().filter(|f| siblings.contains(&f.number)) {
                reps.push((f.whole(), Vec::new()));
            }
        };
        if !rest.is_empty() {
            let sub = sub_message(&fd)?;
            match occ.last() {
                Some(t) => {
                    let new_sub = edit_message(&sub, &buf[t.value.clone()], rest, op)?;
                    reps.push(replace_sub(t, &new_sub));
                }
                None => {
                    let new_sub = edit_message(&sub, &[], rest, op)?;
                    let mut bytes = Vec::new();
                    if fd.is_group() {
                        write_key(fd.number(), WireType::StartGroup, &mut bytes);
                        bytes.extend_from_slice(&new_sub);
                        write_key(fd.number(), WireType::EndGroup, &mut bytes);
                    } else {
                        write_key(fd.number(), WireType::Len, &mut bytes);
                        bytes.extend_from_slice(&with_len(&new_sub));
                    }
                    reps.push((buf.len()..buf.len(), bytes));
                    clear_siblings(&mut reps);
                }
            }
            return Ok(splice(buf, reps));
        }
        match op {
            EditOp::Set(text) => {
                let v = parse_value(&fd.kind(), text)?;
                match occ.last() {
                    Some(t) => {
                        if matches!(fd.kind(), Kind::Message(_)) {
                            // Earlier occurrences would merge into the new value.
                            for e in &occ[..occ.len() - 1] {
                                reps.push((e.whole(), Vec::new()));
                            }
                        }
                        reps.push(replace_value(&fd, t, &v));
                    }
                    None => {
                        let mut bytes = Vec::new();
                        write_element(&fd, &v, &mut bytes);
                        reps.push((buf.len()..buf.len(), bytes));
                        clear_siblings(&mut reps);
                    }
                }
            }
            EditOp::Clear => reps.extend(occ.iter().map(|f| (f.whole(), Vec::new()))),
            EditOp::Append(_) => return Err(format!("{} is not repeated; use --set", fd.name())),
            EditOp::Move(_) => {
                return Err(format!("{} is not repeated: there is nothing to reorder", fd.name()));
            }
        }
        Ok(splice(buf, reps))
    }
}

/// New value bytes for an existing occurrence, keeping its key bytes.
fn replace_value(fd: &FieldDescriptor, t: &WireField, v: &Value) -> (Span, Vec<u8>) {
    let mut bytes = Vec::new();
    if fd.is_group() {
        if let Value::Message(m) = v {
            bytes = super::encode(m);
        }
        return (t.value.clone(), bytes);
    }
    write_scalar(&fd.kind(), v, &mut bytes);
    let start = t.len_prefix.as_ref().map_or(t.value.start, |lp| lp.start);
    (start..t.value.end, bytes)
}

/// One element of a repeated field: an occurrence, or one value inside a packed occurrence.
struct Elem<'a> {
    occ: &'a WireField,
    packed: Option<Span>,
}

fn elements<'a>(occ: &[&'a WireField]) -> Vec<Elem<'a>> {
    let mut out = Vec::new();
    for f in occ {
        match &f.content {
            WireContent::Packed(p) => {
                out.extend(p.spans().into_iter().map(|s| Elem { occ: f, packed: Some(s) }))
            }
            _ => out.push(Elem { occ: f, packed: None }),
        }
    }
    out
}

/// Rewrites a packed occurrence with element `skip` replaced by `with` (None removes it).
fn rewrite_packed(buf: &[u8], f: &WireField, target: &Span, with: Option<Vec<u8>>) -> (Span, Vec<u8>) {
    let mut body = Vec::new();
    body.extend_from_slice(&buf[f.value.start..target.start]);
    if let Some(w) = with {
        body.extend_from_slice(&w);
    }
    body.extend_from_slice(&buf[target.end..f.value.end]);
    if body.is_empty() {
        return (f.whole(), Vec::new());
    }
    let lp = f.len_prefix.clone().unwrap_or(f.value.start..f.value.start);
    (lp.start..f.value.end, with_len(&body))
}

fn resolve_index(i: i64, len: usize, name: &str) -> R<usize> {
    let idx = if i < 0 { len as i64 + i } else { i };
    if idx < 0 || idx as usize >= len {
        return Err(format!("{name}[{i}] is out of range: {name} has {len} elements"));
    }
    Ok(idx as usize)
}

fn edit_list(
    fd: &FieldDescriptor,
    buf: &[u8],
    occ: &[&WireField],
    seg: &Segment,
    rest: &[Segment],
    op: &EditOp,
) -> R<Vec<u8>> {
    let elems = elements(occ);
    let name = fd.name();
    let mut reps: Vec<(Span, Vec<u8>)> = Vec::new();
    match &seg.selector {
        Some(Selector::Key(k)) => {
            return Err(format!("{name} is a list; index it with a number, not \"{k}\""));
        }
        Some(Selector::Index(i)) => {
            let e = &elems[resolve_index(*i, elems.len(), name)?];
            if !rest.is_empty() {
                let sub = sub_message(fd)?;
                let new_sub = edit_message(&sub, &buf[e.occ.value.clone()], rest, op)?;
                reps.push(replace_sub(e.occ, &new_sub));
                return Ok(splice(buf, reps));
            }
            match op {
                EditOp::Set(text) => {
                    let v = parse_value(&fd.kind(), text)?;
                    match &e.packed {
                        Some(span) => {
                            let mut b = Vec::new();
                            write_scalar(&fd.kind(), &v, &mut b);
                            reps.push(rewrite_packed(buf, e.occ, span, Some(b)));
                        }
                        None => reps.push(replace_value(fd, e.occ, &v)),
                    }
                }
                EditOp::Clear => match &e.packed {
                    Some(span) => reps.push(rewrite_packed(buf, e.occ, span, None)),
                    None => reps.push((e.occ.whole(), Vec::new())),
                },
                EditOp::Append(_) => {
                    return Err(format!("append adds to the list itself: --append {name}=VALUE"));
                }
                EditOp::Move(by) => {
                    let from = resolve_index(*i, elems.len(), name)?;
                    let to = (from as i64).saturating_add(*by);
                    if to < 0 || to as usize >= elems.len() {
                        return Err(format!(
                            "{name}[{from}] cannot move {by:+} places: {name} has {} elements",
                            elems.len()
                        ));
                    }
                    return move_element(buf, &elems, from, to as usize, name);
                }
            }
        }
        None => {
            if !rest.is_empty() {
                return Err(format!(
                    "{name} is repeated: say which element, e.g. {name}[0].{}",
                    rest[0].field
                ));
            }
            match op {
                EditOp::Append(text) => {
                    let v = parse_value(&fd.kind(), text)?;
                    let last = occ.last();
                    let packed_last = last.filter(|f| matches!(f.content, WireContent::Packed(_)));
                    if let (Some(f), true) = (packed_last, is_packable(fd)) {
                        let mut body = buf[f.value.clone()].to_vec();
                        write_scalar(&fd.kind(), &v, &mut body);
                        let lp = f.len_prefix.clone().unwrap_or(f.value.start..f.value.start);
                        reps.push((lp.start..f.value.end, with_len(&body)));
                    } else {
                        let mut bytes = Vec::new();
                        if fd.is_packed() && last.is_none() {
                            let mut body = Vec::new();
                            write_scalar(&fd.kind(), &v, &mut body);
                            write_key(fd.number(), WireType::Len, &mut bytes);
                            bytes.extend_from_slice(&with_len(&body));
                        } else {
                            write_element(fd, &v, &mut bytes);
                        }
                        let at = last.map_or(buf.len(), |f| f.whole().end);
                        reps.push((at..at, bytes));
                    }
                }
                EditOp::Clear => reps.extend(occ.iter().map(|f| (f.whole(), Vec::new()))),
                EditOp::Set(text) => replace_whole_field(fd, buf, occ, text, &mut reps)?,
                EditOp::Move(_) => return Err(format!("say which element of {name} moves, e.g. {name}[0]")),
            }
        }
    }
    Ok(splice(buf, reps))
}

/// Element `from` of a list moved to place `to` by rotating the bytes between them: every
/// element keeps its own bytes, and the enclosing length does not change. Elements of one
/// packed run move inside it; an element cannot leave its packed run.
fn move_element(buf: &[u8], elems: &[Elem<'_>], from: usize, to: usize, name: &str) -> R<Vec<u8>> {
    let span = |e: &Elem<'_>| e.packed.clone().unwrap_or_else(|| e.occ.whole());
    let (lo, hi) = (from.min(to), from.max(to));
    let same_run = |e: &Elem<'_>| match (&e.packed, &elems[from].packed) {
        (None, None) => true,
        (Some(_), Some(_)) => std::ptr::eq(e.occ, elems[from].occ),
        _ => false,
    };
    if !elems[lo..=hi].iter().all(same_run) {
        return Err(format!(
            "{name}[{from}] and {name}[{to}] are encoded differently (packed and unpacked); set the whole list as JSON to reorder them"
        ));
    }
    let window = span(&elems[lo]).start..span(&elems[hi]).end;
    let mut parts: Vec<&[u8]> = Vec::with_capacity(hi - lo + 1);
    let mut gaps: Vec<&[u8]> = Vec::with_capacity(hi - lo);
    for (k, e) in elems[lo..=hi].iter().enumerate() {
        parts.push(&buf[span(e)]);
        if k + lo < hi {
            gaps.push(&buf[span(e).end..span(&elems[k + lo + 1]).start]);
        }
    }
    // Bytes between elements (other fields interleaved) stay where they are.
    let moved = parts.remove(from - lo);
    parts.insert(to - lo, moved);
    let mut out = Vec::with_capacity(window.len());
    for (k, part) in parts.iter().enumerate() {
        out.extend_from_slice(part);
        if let Some(g) = gaps.get(k) {
            out.extend_from_slice(g);
        }
    }
    Ok(splice(buf, vec![(window, out)]))
}

/// A whole repeated or map field set from JSON: every occurrence goes, the new encoding takes
/// the place of the first one.
fn replace_whole_field(
    fd: &FieldDescriptor,
    buf: &[u8],
    occ: &[&WireField],
    text: &str,
    reps: &mut Vec<(Span, Vec<u8>)>,
) -> R<()> {
    let v = parse_list(fd, text)?;
    let mut bytes = Vec::new();
    super::value::write_field(fd, &v, &mut bytes);
    let at = occ.first().map_or(buf.len(), |f| f.key.start);
    reps.extend(occ.iter().map(|f| (f.whole(), Vec::new())));
    reps.push((at..at, bytes));
    Ok(())
}

/// A JSON array (or object, for maps) as the whole value of `fd`, read through the parent.
fn parse_list(fd: &FieldDescriptor, text: &str) -> R<Value> {
    let json = format!("{{\"{}\": {text}}}", fd.json_name());
    let msg = DynamicMessage::deserialize(
        fd.parent_message().clone(),
        &mut serde_json::Deserializer::from_str(&json),
    )
    .map_err(|e| {
        format!(
            "value for {} must be JSON ({}): {e}",
            fd.name(),
            if fd.is_map() { "an object" } else { "an array" }
        )
    })?;
    Ok(msg.get_field(fd).into_owned())
}

fn map_key(kind: &Kind, sel: &Selector) -> R<MapKey> {
    // A quoted key is already the string itself (the path read its JSON escapes): read again
    // as a value, a key that starts and ends with a quote would be taken for JSON.
    if let (Kind::String, Selector::Key(k)) = (kind, sel) {
        return Ok(MapKey::String(k.clone()));
    }
    let text = match sel {
        Selector::Index(n) => n.to_string(),
        Selector::Key(k) => k.clone(),
    };
    let v = parse_value(kind, &text)?;
    v.into_map_key().ok_or_else(|| format!("\"{text}\" cannot be a map key"))
}

fn entry_key(entry: &MessageDescriptor, bytes: &[u8]) -> Option<Value> {
    let m = DynamicMessage::decode(entry.clone(), bytes).ok()?;
    Some(m.get_field(&entry.map_entry_key_field()).into_owned())
}

fn edit_map(
    fd: &FieldDescriptor,
    buf: &[u8],
    occ: &[&WireField],
    seg: &Segment,
    rest: &[Segment],
    op: &EditOp,
) -> R<Vec<u8>> {
    let entry = sub_message(fd)?;
    let name = fd.name();
    let mut reps: Vec<(Span, Vec<u8>)> = Vec::new();
    let Some(sel) = &seg.selector else {
        if !rest.is_empty() {
            return Err(format!("{name} is a map: pick an entry, e.g. {name}[\"key\"]"));
        }
        match op {
            EditOp::Clear => reps.extend(occ.iter().map(|f| (f.whole(), Vec::new()))),
            EditOp::Set(text) => replace_whole_field(fd, buf, occ, text, &mut reps)?,
            EditOp::Append(_) => return Err(format!("{name} is a map: use --set {name}[\"key\"]=VALUE")),
            EditOp::Move(_) => return Err(format!("{name} is a map: its entries have no order to change")),
        }
        return Ok(splice(buf, reps));
    };
    let key = map_key(&entry.map_entry_key_field().kind(), sel)?;
    let key_value = Value::from(key.clone());
    let matching: Vec<&&WireField> = occ
        .iter()
        .filter(|f| entry_key(&entry, &buf[f.value.clone()]).as_ref() == Some(&key_value))
        .collect();
    let value_seg = Segment { field: "value".into(), selector: None };
    let mut sub_path = vec![value_seg];
    sub_path.extend_from_slice(rest);
    match (op, rest.is_empty()) {
        (EditOp::Clear, true) => {
            if matching.is_empty() {
                return Err(format!("{name} has no entry {key_value:?}"));
            }
            reps.extend(matching.iter().map(|f| (f.whole(), Vec::new())));
        }
        (EditOp::Append(_), true) => return Err(format!("{name} is a map: use --set {name}[..]=VALUE")),
        (EditOp::Move(_), true) => {
            return Err(format!("{name} is a map: its entries have no order to change"));
        }
        _ => match matching.last() {
            Some(t) => {
                let new_entry = edit_message(&entry, &buf[t.value.clone()], &sub_path, op)?;
                reps.push(replace_sub(t, &new_entry));
            }
            None => {
                let mut key_only = Vec::new();
                write_element(&entry.map_entry_key_field(), &key_value, &mut key_only);
                let body = edit_message(&entry, &key_only, &sub_path, op)?;
                let mut bytes = Vec::new();
                write_key(fd.number(), WireType::Len, &mut bytes);
                bytes.extend_from_slice(&with_len(&body));
                reps.push((buf.len()..buf.len(), bytes));
            }
        },
    }
    Ok(splice(buf, reps))
}

fn is_packable(fd: &FieldDescriptor) -> bool {
    fd.is_list() && !matches!(fd.kind(), Kind::String | Kind::Bytes | Kind::Message(_))
}

/// The changed window between two byte strings, from their common prefix and suffix:
/// (start, old length, new length); None when equal.
pub fn changed_window(old: &[u8], new: &[u8]) -> Option<(usize, usize, usize)> {
    if old == new {
        return None;
    }
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = old.iter().rev().zip(new.iter().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    Some((prefix, old.len() - prefix - suffix, new.len() - prefix - suffix))
}
