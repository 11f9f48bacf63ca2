//! Descriptor pools: the built-in schemas, `.proto` files with import paths, descriptor sets,
//! and the merge of several such sources into one pool.
//!
//! Owns: where every loaded file came from ([`Origin`]), so a conflict can name both sides, and
//! the explanations of every load failure ([`SchemaError`]). Must never: leave the pool half
//! changed after a failed load, or reach the network (reflection lives in `net/`).

mod builtin;
pub mod compare;
mod describe;
mod editions;
mod error;
mod load;
mod merge;
mod sources;

pub use describe::{describe, type_label};
pub use editions::Edition;
pub use error::SchemaError;
pub use merge::{BuiltinFileStatus, BuiltinUse, LinkBreak, SetAsideReason};

use prost_reflect::{DescriptorPool, MessageDescriptor};
use prost_types::FileDescriptorProto;
use std::collections::{BTreeSet, HashMap};
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
    /// The built-in files as embedded, before any is set aside or re-linked.
    builtin: Vec<FileDescriptorProto>,
    /// The user's files in load order, as accepted (definitions shared with an earlier source
    /// dropped in favour of a public import of it).
    loaded: Vec<(FileDescriptorProto, Origin)>,
    /// The user's files as given (source info aside), to recognise the same file loaded again.
    given: HashMap<String, FileDescriptorProto>,
    /// The files in the pool, as linked there, by name.
    files: HashMap<String, (FileDescriptorProto, Origin)>,
    builtin_status: Vec<BuiltinFileStatus>,
    /// The files loaded from editions sources (lowered to proto2/proto3 in the pool) and their
    /// edition.
    editions: HashMap<String, Edition>,
}

impl Default for SchemaSet {
    fn default() -> Self {
        Self::empty()
    }
}

impl SchemaSet {
    pub fn empty() -> Self {
        SchemaSet {
            pool: DescriptorPool::new(),
            builtin: Vec::new(),
            loaded: Vec::new(),
            given: HashMap::new(),
            files: HashMap::new(),
            builtin_status: Vec::new(),
            editions: HashMap::new(),
        }
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

    /// The edition a loaded file was written in, when it was an editions file (the pool holds
    /// it as the equivalent proto2 or proto3 file).
    pub fn edition_of_file(&self, name: &str) -> Option<Edition> {
        self.editions.get(name).copied()
    }

    /// What became of each built-in file once user schemas were loaded: in use, re-linked to
    /// the user's files, or set aside (and by what).
    pub fn builtin_files(&self) -> &[BuiltinFileStatus] {
        &self.builtin_status
    }

    /// One message per broken link between a built-in file and the user's definitions (with
    /// every built-in file that had to follow it aside): which symbol, both origins, what
    /// differs, what still works.
    pub fn notices(&self) -> Vec<String> {
        let broken = |s: &BuiltinFileStatus| match &s.status {
            BuiltinUse::SetAside(SetAsideReason::LinkBroken(b)) => Some(b.as_ref().clone()),
            _ => None,
        };
        let in_use: Vec<&str> = self
            .builtin_status
            .iter()
            .filter(|s| {
                !matches!(s.status, BuiltinUse::SetAside(_)) && !s.file.starts_with("google/protobuf/")
            })
            .map(|s| s.file.as_str())
            .collect();
        let mut out = Vec::new();
        for s in &self.builtin_status {
            let BuiltinUse::Relinked { gaps, .. } = &s.status else { continue };
            if gaps.is_empty() {
                continue;
            }
            out.push(format!(
                "built-in {} is re-linked to your definitions, which lack {} part(s) of the types it was written against: {}\n  these decode as unknown fields (kept byte for byte, shown untyped); everything else decodes typed",
                s.file,
                gaps.len(),
                gaps.join(", ")
            ));
        }
        for root in self.builtin_status.iter().filter_map(broken).filter(|b| !b.cascade) {
            // The files that went aside because this one did, transitively.
            let mut gone = vec![root.file.clone()];
            loop {
                let more: Vec<String> = self
                    .builtin_status
                    .iter()
                    .filter_map(broken)
                    .filter(|b| b.cascade && gone.contains(&b.builtin_definer) && !gone.contains(&b.file))
                    .map(|b| b.file)
                    .collect();
                if more.is_empty() {
                    break;
                }
                gone.extend(more);
            }
            let packages: BTreeSet<&str> = self
                .builtin
                .iter()
                .filter(|f| gone.contains(&f.name().to_string()))
                .map(|f| f.package())
                .collect();
            let followers = if gone.len() > 1 {
                let verb = if gone.len() == 2 { "needs" } else { "need" };
                format!(" (and with it {}, which {verb} it)", gone[1..].join(", "))
            } else {
                String::new()
            };
            let wal = if packages.contains("milvus.proto.messages") {
                "; until then dumps still list their WAL messages, but headers and payloads are not typed"
            } else {
                ""
            };
            out.push(format!(
                "built-in {}{followers} is set aside: {root}\n  still works: every type you loaded{}\n  not available: the built-in types of {}; to have them, load a {} that matches the built-in one{wal}",
                root.file,
                if in_use.is_empty() { String::new() } else { format!(", and the built-in {}", in_use.join(", ")) },
                packages.into_iter().collect::<Vec<_>>().join(", "),
                root.symbol,
            ));
        }
        out
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
