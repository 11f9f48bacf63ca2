//! `walscope schema list|show|export`.

use super::{SchemaAction, SchemaArgs};
use crate::schema::{SchemaSet, SymbolKind};
use anyhow::{Context, Result, bail};
use prost_reflect::{Cardinality, FieldDescriptor, Kind, MessageDescriptor};
use std::fmt::Write as _;

pub fn run(action: SchemaAction) -> Result<()> {
    match action {
        SchemaAction::List { filter, schema } => list(&schema, filter.as_deref()),
        SchemaAction::Show { name, schema } => {
            let set = schema.load()?;
            print!("{}", show(&set, &name)?);
            Ok(())
        }
        SchemaAction::Export { out, schema } => export(&schema, &out),
    }
}

fn list(schema: &SchemaArgs, filter: Option<&str>) -> Result<()> {
    let set = schema.load()?;
    let filter = filter.map(|f| f.to_ascii_lowercase());
    for (name, kind, file) in set.symbols() {
        if filter.as_ref().is_some_and(|f| !name.to_ascii_lowercase().contains(f)) {
            continue;
        }
        let kind = match kind {
            SymbolKind::Message => "message",
            SymbolKind::Enum => "enum",
            SymbolKind::Service => "service",
        };
        let origin = set.origin_of_file(&file).map(|o| o.to_string()).unwrap_or_default();
        println!("{kind:<8} {name:<64} {file} ({origin})");
    }
    Ok(())
}

/// A `.proto`-like rendering of one symbol.
pub fn show(set: &SchemaSet, name: &str) -> Result<String> {
    let pool = set.pool();
    let name = name.trim_start_matches('.');
    let mut s = String::new();
    if let Some(e) = pool.get_enum_by_name(name) {
        writeln!(s, "// {} ({})", e.parent_file().name(), origin(set, e.parent_file().name()))?;
        writeln!(s, "enum {} {{", e.full_name())?;
        for v in e.values() {
            writeln!(s, "  {} = {};", v.name(), v.number())?;
        }
        writeln!(s, "}}")?;
        return Ok(s);
    }
    if let Some(svc) = pool.get_service_by_name(name) {
        writeln!(s, "// {} ({})", svc.parent_file().name(), origin(set, svc.parent_file().name()))?;
        writeln!(s, "service {} {{", svc.full_name())?;
        for m in svc.methods() {
            let cs = if m.is_client_streaming() { "stream " } else { "" };
            let ss = if m.is_server_streaming() { "stream " } else { "" };
            writeln!(
                s,
                "  rpc {}({cs}{}) returns ({ss}{});",
                m.name(),
                m.input().full_name(),
                m.output().full_name()
            )?;
        }
        writeln!(s, "}}")?;
        return Ok(s);
    }
    let m = match set.message(name) {
        Ok(m) => m,
        Err(e) => bail!("{e}"),
    };
    writeln!(s, "// {} ({}), {}", m.parent_file().name(), origin(set, m.parent_file().name()), syntax(&m))?;
    writeln!(s, "message {} {{", m.full_name())?;
    let mut oneof_done = Vec::new();
    for f in m.fields() {
        if let Some(o) = f.containing_oneof().filter(|o| !o.is_synthetic()) {
            if oneof_done.contains(&o.name().to_string()) {
                continue;
            }
            oneof_done.push(o.name().to_string());
            writeln!(s, "  oneof {} {{", o.name())?;
            for f in o.fields() {
                writeln!(s, "    {}", field_line(&f))?;
            }
            writeln!(s, "  }}")?;
            continue;
        }
        writeln!(s, "  {}", field_line(&f))?;
    }
    writeln!(s, "}}")?;
    Ok(s)
}

fn syntax(m: &MessageDescriptor) -> &'static str {
    match m.parent_file().syntax() {
        prost_reflect::Syntax::Proto2 => "proto2",
        prost_reflect::Syntax::Proto3 => "proto3",
    }
}

fn origin(set: &SchemaSet, file: &str) -> String {
    set.origin_of_file(file).map(|o| o.to_string()).unwrap_or_default()
}

fn field_line(f: &FieldDescriptor) -> String {
    let ty = match f.kind() {
        Kind::Message(m) if f.is_map() => {
            let k = crate::codec::tree::type_label(&m.map_entry_key_field().kind());
            let v = crate::codec::tree::type_label(&m.map_entry_value_field().kind());
            return format!("map<{k}, {}> {} = {};", v.trim_start_matches("enum "), f.name(), f.number());
        }
        k => crate::codec::tree::type_label(&k).trim_start_matches("enum ").to_string(),
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
    format!("{label}{ty} {} = {};", f.name(), f.number())
}

fn export(schema: &SchemaArgs, out: &std::path::Path) -> Result<()> {
    use prost::Message;
    let set = schema.load()?;
    let fds = prost_types::FileDescriptorSet { file: set.pool().file_descriptor_protos().cloned().collect() };
    let bytes = fds.encode_to_vec();
    crate::dump::save::atomic_write(out, &bytes, true)
        .with_context(|| format!("cannot write {}", out.display()))?;
    eprintln!("wrote {} files ({} bytes) to {}", fds.file.len(), bytes.len(), out.display());
    Ok(())
}
