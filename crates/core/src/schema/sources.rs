//! Reading schema sources from disk: `.proto` files through protox, and descriptor sets.
//! Turns protox's diagnostics into [`SchemaError`]s with file:line:column. Editions files go
//! through `editions` on the way in (a stand-in for protox, then the lowering).

use super::editions::{self, Edition, scan};
use super::{Origin, SchemaError, SchemaSet};
use miette::Diagnostic;
use prost::Message;
use prost_types::{FileDescriptorProto, FileDescriptorSet};
use protox::file::{FileResolver, GoogleFileResolver};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// The bundled well-known file `name` with its own imports, if it is one.
pub(super) fn well_known(name: &str) -> Option<Vec<FileDescriptorProto>> {
    if !name.starts_with("google/protobuf/") {
        return None;
    }
    GoogleFileResolver::new().open_file(name).ok()?;
    let mut c = protox::Compiler::with_file_resolver(GoogleFileResolver::new());
    c.include_imports(true);
    c.open_file(name).ok()?;
    Some(c.file_descriptor_set().file)
}

impl SchemaSet {
    /// Compiles `files` (paths on disk, or names relative to an include path) with the given
    /// include paths and merges the result. A file outside every include path brings its own
    /// directory as an extra include path.
    pub fn add_proto_files(
        &mut self,
        include_paths: &[PathBuf],
        files: &[PathBuf],
    ) -> Result<usize, SchemaError> {
        let mut includes: Vec<PathBuf> = include_paths.to_vec();
        for f in files {
            let under_include = includes.iter().any(|i| f.starts_with(i));
            if f.exists()
                && !under_include
                && let Some(parent) = f.parent()
            {
                let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
                if !includes.iter().any(|i| i == parent) {
                    includes.push(parent.to_path_buf());
                }
            }
        }
        let searched: Vec<String> = includes
            .iter()
            .map(|p| match std::fs::canonicalize(p) {
                Ok(abs) => abs.display().to_string(),
                Err(_) => format!("{} (does not exist)", p.display()),
            })
            .chain(["(bundled google/protobuf/*)".to_string()])
            .collect();
        // Editions sources reach protox as their proto3 stand-ins (schema/editions/scan.rs).
        let seen = Arc::new(Mutex::new(scan::Seen::default()));
        let mut compiler = protox::Compiler::with_file_resolver(scan::Resolver::new(&includes, seen.clone()));
        compiler.include_imports(true);
        // Source info gives the lowering's refusals their file:line; dropped before the pool.
        compiler.include_source_info(true);
        let seen = || seen.lock().unwrap_or_else(PoisonError::into_inner);
        for f in files {
            // A path on disk, or a name relative to an include path as in an import statement.
            if let Err(e) = compiler.open_file(f) {
                if let Some((file, label, line, column)) = seen().refused.take() {
                    return Err(editions::refuse(format!("{file}:{line}:{column}"), &label));
                }
                if e.is_file_not_found() && !f.exists() && e.to_string().contains("not in any") {
                    return Err(SchemaError::ProtoNotFound {
                        file: f.display().to_string(),
                        searched: searched.clone(),
                    });
                }
                let edition = e.file().and_then(|name| seen().editions.get(name).copied());
                return Err(convert(&e, &searched, edition));
            }
        }
        let encoded = compiler.encode_file_descriptor_set();
        let mut set = FileDescriptorSet::decode(encoded.as_slice())
            .map_err(|e| SchemaError::Other(format!("protox produced an unreadable descriptor set: {e}")))?;
        let origin = match files {
            [one] => Origin::ProtoFile(one.clone()),
            _ => Origin::ProtoFile(PathBuf::from(
                files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", "),
            )),
        };
        let stand_ins = seen().editions.clone();
        let lowered = editions::lower_files(&mut set.file, &encoded, &stand_ins, &origin)?;
        for f in &mut set.file {
            f.source_code_info = None;
        }
        // Well-known files compiled here are marked as such so they never conflict.
        let (wk, own): (Vec<_>, Vec<_>) =
            set.file.into_iter().partition(|f| f.name().starts_with("google/protobuf/"));
        self.add_files(wk, Origin::WellKnown)?;
        let added = self.add_files(own, origin)?;
        self.editions.extend(lowered);
        Ok(added)
    }

    /// Reads a FileDescriptorSet (`.protoset`, `.pb`, `.desc`), with or without its imports.
    pub fn add_descriptor_set(&mut self, path: &Path) -> Result<usize, SchemaError> {
        let bytes = std::fs::read(path)
            .map_err(|e| SchemaError::Io { path: path.to_path_buf(), reason: e.to_string() })?;
        self.add_descriptor_set_bytes(&bytes, Origin::DescriptorSet(path.to_path_buf()))
    }

    pub fn add_descriptor_set_bytes(&mut self, bytes: &[u8], origin: Origin) -> Result<usize, SchemaError> {
        let path = match &origin {
            Origin::DescriptorSet(p) => p.clone(),
            other => PathBuf::from(other.to_string()),
        };
        if bytes.starts_with(b"syntax") || bytes.starts_with(b"//") || bytes.starts_with(b"package") {
            return Err(SchemaError::NotADescriptorSet {
                path,
                reason: "this looks like .proto source text".into(),
            });
        }
        let set = FileDescriptorSet::decode(bytes)
            .map_err(|e| SchemaError::NotADescriptorSet { path: path.clone(), reason: e.to_string() })?;
        if set.file.is_empty() {
            return Err(SchemaError::NotADescriptorSet { path, reason: "it holds no files".into() });
        }
        if set.file.iter().any(|f| f.name().is_empty()) {
            return Err(SchemaError::NotADescriptorSet { path, reason: "a file in it has no name".into() });
        }
        let mut files = set.file;
        let lowered = editions::lower_files(&mut files, bytes, &HashMap::new(), &origin)?;
        let added = self.add_files(files, origin)?;
        self.editions.extend(lowered);
        Ok(added)
    }
}

/// Turns a protox error into our wording, with file:line:column where protox has a span.
/// An error in a file read through the editions stand-in (`edition`) is worded in editions
/// terms, and never called a syntax error.
fn convert(e: &protox::Error, searched: &[String], edition: Option<Edition>) -> SchemaError {
    let text = e.to_string();
    let location = first_location(e);
    if let Some(import) = quoted_after(&text, "import '") {
        let importer = e.file().unwrap_or("?").to_string();
        let at = location.as_ref().map(|(_, l, c)| format!(" (at {importer}:{l}:{c})")).unwrap_or_default();
        return SchemaError::ImportNotFound { importer, import, at, searched: searched.to_vec() };
    }
    if e.is_file_not_found() {
        let file = quoted_after(&text, "file '")
            .or_else(|| quoted_after(&text, "path '"))
            .unwrap_or_else(|| text.clone());
        return SchemaError::ProtoNotFound { file, searched: searched.to_vec() };
    }
    let file = e.file().unwrap_or("?").to_string();
    let message = detail(e);
    if let Some(edition) = edition {
        let location = match location {
            Some((_, line, column)) => format!("{file}:{line}:{column}"),
            None => file,
        };
        return SchemaError::Editions { location, message: editions::reword(&message, edition) };
    }
    match location {
        Some((_, line, column)) if e.is_parse() => SchemaError::Syntax { file, line, column, message },
        Some((_, line, column)) => {
            SchemaError::Invalid { location: format!("{file}:{line}:{column}"), message }
        }
        None if e.is_parse() => SchemaError::Syntax { file, line: 0, column: 0, message },
        None => SchemaError::Invalid { location: file, message },
    }
}

/// The parser's own message, including nested diagnostics (a parse error may carry several).
fn detail(e: &protox::Error) -> String {
    let mut parts = vec![e.to_string()];
    if let Some(related) = e.related() {
        for r in related.take(3) {
            parts.push(r.to_string());
        }
    }
    if let Some(help) = e.help() {
        parts.push(format!("help: {help}"));
    }
    parts.dedup();
    parts.join("; ")
}

/// (file, 1-based line, 1-based column) of the first labelled span, searching related
/// diagnostics too.
fn first_location(e: &protox::Error) -> Option<(String, usize, usize)> {
    fn from_diag(d: &dyn Diagnostic, file: &str) -> Option<(String, usize, usize)> {
        let src = d.source_code()?;
        let label = d.labels()?.next()?;
        let span = src.read_span(label.inner(), 0, 0).ok()?;
        Some((file.to_string(), span.line() + 1, span.column() + 1))
    }
    let file = e.file().unwrap_or("?");
    if let Some(loc) = from_diag(e, file) {
        return Some(loc);
    }
    for r in e.related()? {
        if let Some(loc) = from_diag(r, file) {
            return Some(loc);
        }
    }
    None
}

fn quoted_after(text: &str, prefix: &str) -> Option<String> {
    let start = text.find(prefix)? + prefix.len();
    let end = text[start..].find('\'')? + start;
    Some(text[start..end].to_string())
}
