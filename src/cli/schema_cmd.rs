//! `walscope schema list|show|export`.

use super::{SchemaAction, SchemaArgs};
use crate::schema::{SchemaSet, SymbolKind};
use anyhow::{Context, Result};

pub fn run(action: SchemaAction) -> Result<()> {
    match action {
        SchemaAction::List { filter, schema } => list(&schema, filter.as_deref()),
        SchemaAction::Show { name, schema } => {
            let set = schema.load()?;
            out!("{}", crate::schema::describe(&set, &name)?)?;
            print_builtin_files(&set)
        }
        SchemaAction::Export { out, force, schema } => export(&schema, &out, force),
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
        let mut origin = set.origin_of_file(&file).map(|o| o.to_string()).unwrap_or_default();
        if let Some(edition) = set.edition_of_file(&file) {
            origin.push_str(&format!(", {edition}"));
        }
        outln!("{kind:<8} {name:<64} {file} ({origin})")?;
    }
    print_builtin_files(&set)
}

/// Each built-in file and what became of it, after a blank line (nothing when none is loaded).
fn print_builtin_files(set: &SchemaSet) -> Result<()> {
    let files = set.builtin_files();
    if files.is_empty() {
        return Ok(());
    }
    outln!("\nbuilt-in files:")?;
    let width = files.iter().map(|f| f.file.len()).max().unwrap_or(0);
    for f in files {
        outln!("  {:<width$}  {}", f.file, f.status)?;
    }
    Ok(())
}

fn export(schema: &SchemaArgs, out: &std::path::Path, force: bool) -> Result<()> {
    use prost::Message;
    let inputs: Vec<&std::path::Path> =
        schema.proto.iter().chain(&schema.descriptor_set).map(|p| p.as_path()).collect();
    crate::atomic::check_output(out, &inputs, force)?;
    let set = schema.load()?;
    let fds = prost_types::FileDescriptorSet { file: set.pool().file_descriptor_protos().cloned().collect() };
    let bytes = fds.encode_to_vec();
    let saved = crate::atomic::atomic_write(out, &bytes, true)
        .with_context(|| format!("cannot write {}", out.display()))?;
    match saved.backup() {
        _ if saved.is_unchanged() => {
            note!("{} already holds these descriptors: nothing written", out.display())
        }
        Some(b) => note!(
            "wrote {} files ({} bytes) to {} (its previous contents in {})",
            fds.file.len(),
            bytes.len(),
            out.display(),
            b.display()
        ),
        None => note!("wrote {} files ({} bytes) to {}", fds.file.len(), bytes.len(), out.display()),
    }
    Ok(())
}
