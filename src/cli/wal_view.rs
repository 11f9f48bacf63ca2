//! `walscope decode` of a WAL message (an `ImmutableMessage`, or a `DumpMessagesResponse`
//! carrying one): the reading after the message in each format. `tree` and `text` add lines
//! (text format's as `#` comments, which `encode --from text` skips); `json` adds a top-level
//! `wal` key holding [`crate::wal::reading_json`], which `encode --from json` checks and drops.
//!
//! Must never: change the message's own output (its bytes still round-trip through `encode`),
//! or accept an edit made under `wal` as if it were encoded.

use super::render::print_tree;
use crate::codec::{self, tree};
use crate::wal::{WalMessage, reading_json};
use crate::wire;
use anyhow::{Result, bail};
use base64::Engine;
use prost_reflect::{DescriptorPool, DynamicMessage, ReflectMessage};
use std::io::Write;

/// The key the reading sits under in `decode --format json`.
pub const WAL_KEY: &str = "wal";

/// The reading of `m`, when it is a WAL message.
pub fn reading(pool: &DescriptorPool, m: &DynamicMessage) -> Option<WalMessage> {
    crate::wal::reading::immutable_of(m).map(|imm| crate::wal::analyze(pool, &imm))
}

/// The label-value lines of a reading: what an operator reads first.
fn lines(w: &WalMessage) -> Vec<(String, String)> {
    let mut out = vec![(
        "type".to_string(),
        match w.type_number {
            Some(n) => format!(
                "{} ({n}), version {}",
                w.type_name,
                w.version.map_or("none".into(), |v| v.to_string())
            ),
            None => w.type_name.clone(),
        },
    )];
    if let Some(Ok(id)) = &w.id {
        out.push(("message id".into(), format!("{} (raw {})", id.display, id.raw)));
    }
    if let Some(tt) = w.timetick {
        out.push(("timetick".into(), format!("{tt} = {} UTC", crate::time::format_timetick(tt))));
    }
    if let Some(vc) = &w.vchannel {
        out.push(("vchannel".into(), vc.clone()));
    }
    match (&w.last_confirmed, w.last_confirmed_is_self) {
        (Some(Ok(lc)), _) => out.push(("last confirmed".into(), lc.display.clone())),
        (_, true) => out.push(("last confirmed".into(), "this message (_lcs)".into())),
        _ => {}
    }
    if let Some(c) = w.collection_id {
        out.push(("collection id".into(), c.to_string()));
    }
    if let Some(r) = w.rows {
        out.push(("rows".into(), r.to_string()));
    }
    if let Some(txn) = &w.txn {
        out.push(("transaction".into(), codec::to_json(txn, false)));
    }
    if let Some(Ok(c)) = &w.chunk {
        out.push(("chunk".into(), format!("{} of the message at timetick {}", c.label(), c.tt)));
    }
    let body_note =
        reading_json(w)["payload"].get("not_decoded").and_then(|v| v.as_str()).map(str::to_string);
    out.push((
        "payload".into(),
        match body_note {
            Some(why) => format!("{} bytes, not decoded: {why}", w.payload_len),
            None => format!("{} bytes", w.payload_len),
        },
    ));
    out.extend(w.flags.iter().map(|f| ("flag".to_string(), f.clone())));
    out.extend(w.problems.iter().map(|p| ("problem".to_string(), p.clone())));
    out
}

/// The header (from `_h`) and body (from the payload) as typed trees, after the message's.
pub fn print_tree_reading(w: &WalMessage, imm: &DynamicMessage, out: &mut impl Write) -> Result<()> {
    writeln!(out, "WAL reading")?;
    for (k, v) in lines(w) {
        writeln!(out, "  {k:<15} {v}")?;
    }
    let header_bytes = imm
        .get_field_by_name("properties")
        .and_then(|p| p.as_map().and_then(|m| m.get(&prost_reflect::MapKey::String("_h".into())).cloned()))
        .and_then(|v| v.as_str().and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok()));
    if let (Some(Ok(h)), Some(bytes)) = (&w.header, header_bytes) {
        writeln!(out, "  header (_h) as {} ({} bytes)", h.descriptor().full_name(), bytes.len())?;
        print_typed(&h.descriptor(), &bytes, out)?;
    }
    if let Some(Ok(b)) = &w.body {
        let payload =
            imm.get_field_by_name("payload").and_then(|v| v.as_bytes().cloned()).unwrap_or_default();
        writeln!(out, "  payload as {} ({} bytes)", b.descriptor().full_name(), payload.len())?;
        print_typed(&b.descriptor(), &payload, out)?;
    }
    Ok(())
}

fn print_typed(desc: &prost_reflect::MessageDescriptor, bytes: &[u8], out: &mut impl Write) -> Result<()> {
    let d =
        wire::decode_with(bytes, &wire::DecodeOptions { schema: Some(desc.clone()), ..Default::default() });
    let nodes = tree::build(Some(desc), bytes, &d.root);
    print_tree(&nodes, 2, true, out)?;
    Ok(())
}

/// The reading as text-format comments (`encode --from text` skips them).
pub fn print_text_reading(w: &WalMessage, out: &mut impl Write) -> Result<()> {
    writeln!(out, "# WAL reading (comments: encode --from text ignores them)")?;
    for (k, v) in lines(w) {
        writeln!(out, "# {k}: {v}")?;
    }
    for (what, part) in [("header (_h)", &w.header), ("payload", &w.body)] {
        if let Some(Ok(m)) = part {
            writeln!(out, "# {what} as {}:", m.descriptor().full_name())?;
            for line in codec::to_text(m).lines() {
                writeln!(out, "#   {line}")?;
            }
        }
    }
    Ok(())
}

/// The message's JSON with its reading under [`WAL_KEY`].
pub fn json_with_reading(m: &DynamicMessage, w: &WalMessage) -> serde_json::Value {
    let mut j = codec::to_json_value_or_error(m);
    if let Some(o) = j.as_object_mut() {
        o.insert(WAL_KEY.into(), reading_json(w));
    }
    j
}

/// For `encode --from json`: `text` without the reading `decode` added, and that reading to
/// check against the encoded message ([`check_reading`]). The text is returned as it was when
/// it has no such key (so parse errors keep their line and column).
pub fn split_reading(
    desc: &prost_reflect::MessageDescriptor,
    text: &str,
) -> (String, Option<serde_json::Value>) {
    if desc.get_field_by_name(WAL_KEY).is_some() || !text.contains("\"wal\"") {
        return (text.to_string(), None);
    }
    let Ok(serde_json::Value::Object(mut o)) = serde_json::from_str::<serde_json::Value>(text) else {
        return (text.to_string(), None);
    };
    match o.remove(WAL_KEY) {
        Some(w) => (serde_json::Value::Object(o).to_string(), Some(w)),
        None => (text.to_string(), None),
    }
}

/// Refuses a `wal` reading that is not the reading of `msg`: it is read-only, and an edit
/// made there would otherwise be dropped without a word.
pub fn check_reading(pool: &DescriptorPool, msg: &DynamicMessage, given: &serde_json::Value) -> Result<()> {
    let Some(w) = reading(pool, msg) else {
        bail!(
            "the JSON has a \"{WAL_KEY}\" key, which {} does not have: remove it",
            msg.descriptor().full_name()
        );
    };
    if reading_json(&w) != *given {
        bail!(
            "the \"{WAL_KEY}\" object is walscope's reading of the message and is read-only; it differs from the message's own fields (an edit there is not encoded): edit the message's fields (`payload` as base64, `properties`), or delete \"{WAL_KEY}\""
        );
    }
    Ok(())
}
