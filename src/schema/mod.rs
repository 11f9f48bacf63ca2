//! Descriptor pools: the built-in schemas, `.proto` files with import paths, descriptor sets,
//! and the merge of several such sources into one pool.
//!
//! Owns: where every loaded file came from ([`Origin`]), so a conflict can name both sides, and
//! the explanations of every load failure ([`SchemaError`]). Must never: leave the pool half
//! changed after a failed load, or reach the network (reflection lives in `net/`).

mod builtin;
mod describe;
mod error;
mod sources;

pub use describe::describe;
pub use error::SchemaError;

use prost_reflect::{DescriptorPool, MessageDescriptor};
use prost_types::{DescriptorProto, FileDescriptorProto};
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;

/// Where a file of the pool came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    BuiltIn,
    WellKnown,
    ProtoFile(PathBuf),
    DescriptorSet(PathBuf),
    Reflection(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::BuiltIn => write!(f, "built-in schema"),
            Origin::WellKnown => write!(f, "bundled well-known types"),
            Origin::ProtoFile(p) => write!(f, "proto file {}", p.display()),
            Origin::DescriptorSet(p) => write!(f, "descriptor set {}", p.display()),
            Origin::Reflection(e) => write!(f, "server reflection at {e}"),
        }
    }
}

/// A kind of top-level or nested symbol, for listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SymbolKind {
    Message,
    Enum,
    Service,
}

/// The merged pool plus the provenance of each file and symbol.
#[derive(Clone)]
pub struct SchemaSet {
    pool: DescriptorPool,
    files: HashMap<String, (FileDescriptorProto, Origin)>,
    symbols: HashMap<String, String>,
}

impl Default for SchemaSet {
    fn default() -> Self {
        Self::empty()
    }
}

impl SchemaSet {
    pub fn empty() -> Self {
        SchemaSet { pool: DescriptorPool::new(), files: HashMap::new(), symbols: HashMap::new() }
    }

    /// Every built-in schema (Milvus, OpenMLDB datasync, brpc meta) and the well-known types.
    pub fn builtin() -> Self {
        let mut set = Self::empty();
        // The embedded set is compiled by build.rs; failing here is a build defect, not input.
        let files = builtin::files();
        if let Err(e) = set.add_files(files, Origin::BuiltIn) {
            panic!("embedded built-in schemas are inconsistent: {e}");
        }
        set
    }

    /// The built-in set, built once per process (protocol code looks types up on every call).
    pub fn shared_builtin() -> &'static SchemaSet {
        static SHARED: std::sync::OnceLock<SchemaSet> = std::sync::OnceLock::new();
        SHARED.get_or_init(SchemaSet::builtin)
    }

    pub fn pool(&self) -> &DescriptorPool {
        &self.pool
    }

    pub fn origin_of_file(&self, name: &str) -> Option<&Origin> {
        self.files.get(name).map(|(_, o)| o)
    }

    /// Adds files as one unit: either all of them join the pool or none does.
    pub fn add_files(
        &mut self,
        files: Vec<FileDescriptorProto>,
        origin: Origin,
    ) -> Result<usize, SchemaError> {
        let mut fresh: Vec<FileDescriptorProto> = Vec::new();
        for file in files {
            let name = file.name().to_string();
            if let Some((existing, first)) = self.files.get(&name) {
                if strip(existing) == strip(&file) {
                    continue;
                }
                return Err(SchemaError::ConflictingFile {
                    file: name,
                    first: Box::new(first.clone()),
                    second: Box::new(origin),
                });
            }
            if fresh.iter().any(|f| f.name() == name) {
                continue;
            }
            fresh.push(file);
        }
        // Symbols first: prost-reflect would also refuse, but could not say where each came from.
        let mut new_symbols: HashMap<String, String> = HashMap::new();
        for file in &fresh {
            for symbol in file_symbols(file) {
                let other = self
                    .symbols
                    .get(&symbol)
                    .map(|f| (f.clone(), self.files.get(f).map(|(_, o)| o.clone())))
                    .or_else(|| new_symbols.get(&symbol).map(|f| (f.clone(), Some(origin.clone()))));
                if let Some((first_file, first_origin)) = other {
                    return Err(SchemaError::DuplicateSymbol {
                        symbol,
                        first_file,
                        first_origin: Box::new(first_origin.unwrap_or(Origin::BuiltIn)),
                        second_file: file.name().to_string(),
                        second_origin: Box::new(origin),
                    });
                }
                new_symbols.insert(symbol, file.name().to_string());
            }
        }
        let mut well_known = Vec::new();
        for file in &fresh {
            for dep in &file.dependency {
                let known = self.files.contains_key(dep) || fresh.iter().any(|f| f.name() == dep);
                if known || well_known.iter().any(|f: &FileDescriptorProto| f.name() == dep) {
                    continue;
                }
                match sources::well_known(dep) {
                    Some(mut files) => {
                        files.retain(|f| !self.files.contains_key(f.name()));
                        well_known.extend(files);
                    }
                    None => {
                        return Err(SchemaError::MissingDependency {
                            origin: Box::new(origin),
                            file: file.name().to_string(),
                            dependency: dep.clone(),
                        });
                    }
                }
            }
        }
        let mut pool = self.pool.clone();
        let all: Vec<FileDescriptorProto> = well_known.iter().cloned().chain(fresh.iter().cloned()).collect();
        pool.add_file_descriptor_protos(all).map_err(|e| SchemaError::Invalid {
            location: e.file().map_or_else(|| origin.to_string(), |f| format!("{f} ({origin})")),
            message: e.to_string(),
        })?;
        self.pool = pool;
        let added = fresh.len();
        for (files, o) in [(well_known, Origin::WellKnown), (fresh, origin)] {
            for f in files {
                for s in file_symbols(&f) {
                    self.symbols.insert(s, f.name().to_string());
                }
                self.files.insert(f.name().to_string(), (f, o.clone()));
            }
        }
        Ok(added)
    }

    /// Looks a message type up by full name (a leading dot is allowed); on failure suggests
    /// the closest names.
    pub fn message(&self, name: &str) -> Result<MessageDescriptor, SchemaError> {
        let name = name.trim_start_matches('.');
        if let Some(m) = self.pool.get_message_by_name(name) {
            return Ok(m);
        }
        // A short name that is unique across packages is accepted too: `SyncPoint`.
        let matches: Vec<MessageDescriptor> = self
            .pool
            .all_messages()
            .filter(|m| m.name() == name || m.full_name().ends_with(&format!(".{name}")))
            .collect();
        if matches.len() == 1 {
            return Ok(matches[0].clone());
        }
        let hint = if matches.len() > 1 {
            let names: Vec<String> = matches.iter().map(|m| m.full_name().to_string()).collect();
            format!(": ambiguous, could be {}", names.join(", "))
        } else {
            let lower = name.to_ascii_lowercase();
            let mut close: Vec<String> = self
                .pool
                .all_messages()
                .map(|m| m.full_name().to_string())
                .filter(|n| {
                    let n = n.to_ascii_lowercase();
                    let last = n.rsplit('.').next().unwrap_or(&n).to_string();
                    n.contains(&lower) || lower.contains(&last) || edit_distance(&last, &lower) <= 2
                })
                .collect();
            close.sort();
            close.truncate(5);
            if close.is_empty() { String::new() } else { format!("; did you mean {}?", close.join(", ")) }
        };
        Err(SchemaError::UnknownType { name: name.to_string(), hint })
    }

    /// Where the loaded files came from: each source with its files, sorted.
    pub fn sources(&self) -> Vec<(Origin, Vec<String>)> {
        let mut out: Vec<(Origin, Vec<String>)> = Vec::new();
        for (name, (_, origin)) in &self.files {
            match out.iter_mut().find(|(o, _)| o == origin) {
                Some((_, files)) => files.push(name.clone()),
                None => out.push((origin.clone(), vec![name.clone()])),
            }
        }
        for (_, files) in &mut out {
            files.sort();
        }
        out.sort_by_key(|(o, _)| o.to_string());
        out
    }

    /// Every symbol, sorted, with its kind and defining file.
    pub fn symbols(&self) -> Vec<(String, SymbolKind, String)> {
        let mut out: Vec<(String, SymbolKind, String)> = Vec::new();
        for m in self.pool.all_messages() {
            if m.is_map_entry() {
                continue;
            }
            out.push((m.full_name().into(), SymbolKind::Message, m.parent_file().name().into()));
        }
        for e in self.pool.all_enums() {
            out.push((e.full_name().into(), SymbolKind::Enum, e.parent_file().name().into()));
        }
        for s in self.pool.services() {
            out.push((s.full_name().into(), SymbolKind::Service, s.parent_file().name().into()));
        }
        out.sort();
        out
    }
}

/// Compares files without source info, which differs between compilers for the same schema.
fn strip(f: &FileDescriptorProto) -> FileDescriptorProto {
    let mut f = f.clone();
    f.source_code_info = None;
    f
}

fn file_symbols(file: &FileDescriptorProto) -> Vec<String> {
    fn walk(prefix: &str, msg: &DescriptorProto, out: &mut Vec<String>) {
        let name = format!("{prefix}{}", msg.name());
        for n in &msg.nested_type {
            walk(&format!("{name}."), n, out);
        }
        for e in &msg.enum_type {
            out.push(format!("{name}.{}", e.name()));
        }
        out.push(name);
    }
    let prefix = if file.package().is_empty() { String::new() } else { format!("{}.", file.package()) };
    let mut out = Vec::new();
    for m in &file.message_type {
        walk(&prefix, m, &mut out);
    }
    for e in &file.enum_type {
        out.push(format!("{prefix}{}", e.name()));
    }
    for s in &file.service {
        out.push(format!("{prefix}{}", s.name()));
    }
    out
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The embedded FileDescriptorSet of every built-in schema, encoded (for reflection servers
/// and `schema export`).
pub fn builtin_descriptor_set() -> &'static [u8] {
    builtin::DESCRIPTOR_SET
}
