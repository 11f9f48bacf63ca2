//! A `.proto`-like rendering of one message, enum or service, with the file and source it came
//! from: what `walscope schema show` prints and the schemas panel displays.

use super::{SchemaError, SchemaSet};
use prost_reflect::{Cardinality, FieldDescriptor, Kind, MessageDescriptor};
use std::fmt::Write as _;

// `writeln!` into a String cannot fail, hence the `let _ =` below.

/// A `.proto`-like rendering of one symbol.
pub fn describe(set: &SchemaSet, name: &str) -> Result<String, SchemaError> {
    let pool = set.pool();
    let name = name.trim_start_matches('.');
    let mut s = String::new();
    if let Some(e) = pool.get_enum_by_name(name) {
        let _ = writeln!(s, "// {} ({})", e.parent_file().name(), origin(set, e.parent_file().name()));
        let _ = writeln!(s, "enum {} {{", e.full_name());
        for v in e.values() {
            let _ = writeln!(s, "  {} = {};", v.name(), v.number());
        }
        let _ = writeln!(s, "}}");
        return Ok(s);
    }
    if let Some(svc) = pool.get_service_by_name(name) {
        let _ = writeln!(s, "// {} ({})", svc.parent_file().name(), origin(set, svc.parent_file().name()));
        let _ = writeln!(s, "service {} {{", svc.full_name());
        for m in svc.methods() {
            let cs = if m.is_client_streaming() { "stream " } else { "" };
            let ss = if m.is_server_streaming() { "stream " } else { "" };
            let _ = writeln!(
                s,
                "  rpc {}({cs}{}) returns ({ss}{});",
                m.name(),
                m.input().full_name(),
                m.output().full_name()
            );
        }
        let _ = writeln!(s, "}}");
        return Ok(s);
    }
    let m = set.message(name)?;
    // An editions file is held lowered: say both what it was and how it is read.
    let syntax = match set.edition_of_file(m.parent_file().name()) {
        Some(edition) => format!("{edition} (read as {})", syntax(&m)),
        None => syntax(&m).to_string(),
    };
    let _ = writeln!(s, "// {} ({}), {syntax}", m.parent_file().name(), origin(set, m.parent_file().name()));
    let _ = writeln!(s, "message {} {{", m.full_name());
    let mut oneof_done = Vec::new();
    for f in m.fields() {
        if let Some(o) = f.containing_oneof().filter(|o| !o.is_synthetic()) {
            if oneof_done.contains(&o.name().to_string()) {
                continue;
            }
            oneof_done.push(o.name().to_string());
            let _ = writeln!(s, "  oneof {} {{", o.name());
            for f in o.fields() {
                let _ = writeln!(s, "    {}", field_line(&f));
            }
            let _ = writeln!(s, "  }}");
            continue;
        }
        let _ = writeln!(s, "  {}", field_line(&f));
    }
    let _ = writeln!(s, "}}");
    Ok(s)
}

fn syntax(m: &MessageDescriptor) -> &'static str {
    match m.parent_file().syntax() {
        prost_reflect::Syntax::Proto2 => "proto2",
        prost_reflect::Syntax::Proto3 => "proto3",
    }
}

/// A field type in words: `int64`, `enum SyncType`, or a message's full name (the typed tree's
/// node types and the `.proto`-like rendering both say it so).
pub fn type_label(kind: &Kind) -> String {
    match kind {
        Kind::Message(m) => m.full_name().to_string(),
        Kind::Enum(e) => format!("enum {}", e.name()),
        k => format!("{k:?}").to_ascii_lowercase(),
    }
}

fn origin(set: &SchemaSet, file: &str) -> String {
    set.origin_of_file(file).map(|o| o.to_string()).unwrap_or_default()
}

fn field_line(f: &FieldDescriptor) -> String {
    let ty = match f.kind() {
        Kind::Message(m) if f.is_map() => {
            let k = type_label(&m.map_entry_key_field().kind());
            let v = type_label(&m.map_entry_value_field().kind());
            return format!("map<{k}, {}> {} = {};", v.trim_start_matches("enum "), f.name(), f.number());
        }
        k => type_label(&k).trim_start_matches("enum ").to_string(),
    };
    let label = match f.cardinality() {
        Cardinality::Repeated => "repeated ",
        Cardinality::Required => "required ",
        Cardinality::Optional
            if f.supports_presence()
                && f.containing_oneof().is_none_or(|o| o.is_synthetic())
                && !matches!(f.kind(), Kind::Message(_)) =>
        {
            "optional "
        }
        Cardinality::Optional => "",
    };
    // A group (proto2) or DELIMITED field (editions) is sent between start/end tags.
    let delimited = if f.is_group() { " [delimited]" } else { "" };
    format!("{label}{ty} {} = {}{delimited};", f.name(), f.number())
}
