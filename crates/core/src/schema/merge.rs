//! How user schemas and the built-in ones share one pool: the user's definition of a symbol
//! wins, the built-in file that also defines it is set aside as a whole, and built-in files that
//! import a set-aside file are re-linked to the user's definitions, after a field-by-field check
//! that the re-link keeps every type they need meaning what it meant.
//!
//! Owns: the per-file outcome ([`BuiltinFileStatus`]), the comparison of two definitions of one
//! symbol ([`definition_difference`]), and the re-linking of dependency lists. Must never: drop or
//! alter a file the user gave us (a user file that cannot be linked is an error, never set aside),
//! or link a built-in file to a definition that disagrees with the one it was written against.

use super::Origin;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FileDescriptorProto};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;

/// What became of one built-in file once the user's schemas were loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuiltinUse {
    /// In the pool as built.
    InUse,
    /// In the pool, its imports pointed at the user's files that now define what it needs.
    /// `gaps` lists what those definitions lack of the built-in ones it was written against
    /// (`milvus.proto.schema.ScalarField field 17 \`valid_data\``): such parts decode as unknown
    /// fields.
    Relinked { to: Vec<(String, Origin)>, gaps: Vec<String> },
    /// Not in the pool.
    SetAside(SetAsideReason),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetAsideReason {
    /// The user's files define its symbols (or a file of the same name).
    Replaced { by: Vec<(String, Origin)> },
    /// It needs a symbol from a set-aside built-in file, and the user's definition of that
    /// symbol is missing or differs.
    LinkBroken(Box<LinkBreak>),
}

/// Why a built-in file could not be re-linked: one symbol, both origins, what differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkBreak {
    /// The built-in file that could not be re-linked.
    pub file: String,
    /// The symbol it needs.
    pub symbol: String,
    /// The set-aside built-in file that defined that symbol for it.
    pub builtin_definer: String,
    /// The user's file (and its origin) that defines the symbol now, if any does.
    pub user_definer: Option<(String, Origin)>,
    /// What differs, in words (or that the symbol is missing, or that it depends on a file that
    /// was itself set aside).
    pub difference: String,
    /// The symbol's built-in definer was set aside for a broken link of its own: this file
    /// follows it, the cause is there.
    pub cascade: bool,
}

impl fmt::Display for LinkBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.user_definer {
            Some((file, origin)) => write!(
                f,
                "it needs {} as defined in built-in {}, but {file} ({origin}) defines it differently: {}",
                self.symbol, self.builtin_definer, self.difference
            ),
            None => write!(
                f,
                "it needs {} from built-in {}, which is set aside: {}",
                self.symbol, self.builtin_definer, self.difference
            ),
        }
    }
}

impl fmt::Display for BuiltinUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuiltinUse::InUse => write!(f, "in use"),
            BuiltinUse::Relinked { to, gaps } if gaps.is_empty() => {
                write!(f, "in use, re-linked to {}", file_list(to))
            }
            BuiltinUse::Relinked { to, gaps } => write!(
                f,
                "in use, re-linked to {}, which lack {} part(s) of the built-in types: {}",
                file_list(to),
                gaps.len(),
                gaps.join(", ")
            ),
            BuiltinUse::SetAside(SetAsideReason::Replaced { by }) => {
                write!(f, "set aside: replaced by {}", file_list(by))
            }
            BuiltinUse::SetAside(SetAsideReason::LinkBroken(b)) => write!(f, "set aside: {b}"),
        }
    }
}

fn file_list(files: &[(String, Origin)]) -> String {
    // Files of one source share an origin: name it once per source.
    let mut by_origin: Vec<(&Origin, Vec<&str>)> = Vec::new();
    for (file, origin) in files {
        match by_origin.iter_mut().find(|(o, _)| *o == origin) {
            Some((_, names)) => names.push(file),
            None => by_origin.push((origin, vec![file])),
        }
    }
    by_origin.iter().map(|(o, names)| format!("{} ({o})", names.join(", "))).collect::<Vec<_>>().join("; ")
}

/// One built-in file and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltinFileStatus {
    pub file: String,
    pub status: BuiltinUse,
}

/// A top-level or nested definition found by full name.
#[derive(Clone, Copy)]
pub(super) enum Def<'a> {
    Message(&'a DescriptorProto),
    Enum(&'a EnumDescriptorProto),
    Service(&'a prost_types::ServiceDescriptorProto),
}

/// Every definition of a file by full name (nested ones included).
pub(super) fn definitions(file: &FileDescriptorProto) -> Vec<(String, Def<'_>)> {
    fn walk<'a>(prefix: &str, msg: &'a DescriptorProto, out: &mut Vec<(String, Def<'a>)>) {
        let name = format!("{prefix}{}", msg.name());
        out.push((name.clone(), Def::Message(msg)));
        for n in &msg.nested_type {
            walk(&format!("{name}."), n, out);
        }
        for e in &msg.enum_type {
            out.push((format!("{name}.{}", e.name()), Def::Enum(e)));
        }
    }
    let prefix = package_prefix(file);
    let mut out = Vec::new();
    for m in &file.message_type {
        walk(&prefix, m, &mut out);
    }
    for e in &file.enum_type {
        out.push((format!("{prefix}{}", e.name()), Def::Enum(e)));
    }
    for s in &file.service {
        out.push((format!("{prefix}{}", s.name()), Def::Service(s)));
    }
    out
}

pub(super) fn package_prefix(file: &FileDescriptorProto) -> String {
    if file.package().is_empty() { String::new() } else { format!("{}.", file.package()) }
}

/// How strictly two definitions of one symbol are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Compare {
    /// The same definition (source info and derived JSON names aside): two user sources.
    Identical,
    /// Every field and enum value that both have agrees in number, name, type and label;
    /// `theirs` may add more, and may lack some of ours (see [`missing_parts`]): a built-in
    /// type and the upstream schema it was trimmed from, of another version.
    Superset,
}

/// `None` when the two definitions agree under `mode`, else the first difference in words.
/// `theirs_file` names the second file in the wording.
pub(super) fn definition_difference(
    ours: Def<'_>,
    theirs: Def<'_>,
    theirs_file: &str,
    mode: Compare,
) -> Option<String> {
    match (ours, theirs) {
        (Def::Message(a), Def::Message(b)) => {
            let fields = message_difference(a, b, theirs_file, mode == Compare::Identical);
            match mode {
                Compare::Superset => fields,
                Compare::Identical if normalized(a) == normalized(b) => None,
                Compare::Identical => fields.or_else(|| {
                    let extra: Vec<String> = b
                        .field
                        .iter()
                        .filter(|f| !a.field.iter().any(|x| x.number() == f.number()))
                        .map(|f| format!("{} `{}`", f.number(), f.name()))
                        .collect();
                    if extra.is_empty() {
                        Some("the nested types or options differ".to_string())
                    } else {
                        Some(format!("{theirs_file} has more fields: {}", extra.join(", ")))
                    }
                }),
            }
        }
        (Def::Enum(a), Def::Enum(b)) => {
            let values = enum_difference(a, b, theirs_file, mode == Compare::Identical);
            match mode {
                Compare::Superset => values,
                Compare::Identical if a == b => None,
                Compare::Identical => values.or_else(|| {
                    Some(if a.value.len() != b.value.len() {
                        format!("{theirs_file} has {} values, the other {}", b.value.len(), a.value.len())
                    } else {
                        "the options differ".to_string()
                    })
                }),
            }
        }
        (Def::Service(a), Def::Service(b)) => {
            if a == b {
                return None;
            }
            let names = |s: &prost_types::ServiceDescriptorProto| {
                s.method.iter().map(|m| m.name().to_string()).collect::<BTreeSet<_>>()
            };
            let (na, nb) = (names(a), names(b));
            let only_a: Vec<_> = na.difference(&nb).cloned().collect();
            let only_b: Vec<_> = nb.difference(&na).cloned().collect();
            if mode == Compare::Superset && only_a.is_empty() {
                return None;
            }
            if only_a.is_empty() && only_b.is_empty() {
                Some("the same methods, with different request, response or streaming types".into())
            } else {
                Some(format!(
                    "methods only in the first: [{}]; only in {theirs_file}: [{}]",
                    only_a.join(", "),
                    only_b.join(", ")
                ))
            }
        }
        _ => Some(format!("it is a {} in one and a {} in {theirs_file}", kind(ours), kind(theirs))),
    }
}

/// The fields (or enum values) of `ours` that `theirs` does not have, by number: with `theirs`
/// they decode as unknown fields (or bare numbers), losslessly but untyped.
pub(super) fn missing_parts(ours: Def<'_>, theirs: Def<'_>) -> Vec<String> {
    match (ours, theirs) {
        (Def::Message(a), Def::Message(b)) => a
            .field
            .iter()
            .filter(|f| !b.field.iter().any(|t| t.number() == f.number()))
            .map(|f| format!("field {} `{}`", f.number(), f.name()))
            .collect(),
        (Def::Enum(a), Def::Enum(b)) => a
            .value
            .iter()
            .filter(|v| !b.value.iter().any(|t| t.number() == v.number()))
            .map(|v| format!("value {} `{}`", v.number(), v.name()))
            .collect(),
        _ => Vec::new(),
    }
}

/// A message without what compilers fill in differently for the same source (JSON names).
fn normalized(m: &DescriptorProto) -> DescriptorProto {
    let mut m = m.clone();
    fn clear(m: &mut DescriptorProto) {
        for f in m.field.iter_mut().chain(m.extension.iter_mut()) {
            f.json_name = None;
        }
        for n in &mut m.nested_type {
            clear(n);
        }
    }
    clear(&mut m);
    m
}

fn kind(d: Def<'_>) -> &'static str {
    match d {
        Def::Message(_) => "message",
        Def::Enum(_) => "enum",
        Def::Service(_) => "service",
    }
}

/// The first field of `ours` that `theirs` lacks or gives another name, type or label. Fields
/// only `theirs` has are not differences (an upstream schema is a superset of ours).
fn message_difference(
    ours: &DescriptorProto,
    theirs: &DescriptorProto,
    theirs_file: &str,
    missing_counts: bool,
) -> Option<String> {
    for f in &ours.field {
        let Some(t) = theirs.field.iter().find(|t| t.number() == f.number()) else {
            if !missing_counts {
                continue;
            }
            return Some(format!("field {} `{}` is missing in {theirs_file}", f.number(), f.name()));
        };
        if t.name() != f.name() {
            return Some(format!(
                "field {} is `{}` in the built-in and `{}` in {theirs_file}",
                f.number(),
                f.name(),
                t.name()
            ));
        }
        let (ft, tt) = (field_type(f), field_type(t));
        if ft != tt {
            return Some(format!(
                "field {} `{}` is {ft} in the built-in and {tt} in {theirs_file}",
                f.number(),
                f.name()
            ));
        }
    }
    None
}

fn enum_difference(
    ours: &EnumDescriptorProto,
    theirs: &EnumDescriptorProto,
    theirs_file: &str,
    missing_counts: bool,
) -> Option<String> {
    for v in &ours.value {
        match theirs.value.iter().find(|t| t.number() == v.number()) {
            None if !missing_counts => {}
            None => return Some(format!("value {} `{}` is missing in {theirs_file}", v.number(), v.name())),
            Some(t) if t.name() != v.name() => {
                return Some(format!(
                    "value {} is `{}` in the built-in and `{}` in {theirs_file}",
                    v.number(),
                    v.name(),
                    t.name()
                ));
            }
            Some(_) => {}
        }
    }
    None
}

/// `repeated int64`, `milvus.proto.common.Status`, ... as a field is declared.
fn field_type(f: &FieldDescriptorProto) -> String {
    let label = if f.label() == Label::Repeated { "repeated " } else { "" };
    let ty = match f.r#type() {
        Type::Message | Type::Enum | Type::Group => f.type_name().trim_start_matches('.').to_string(),
        other => other.as_str_name().trim_start_matches("TYPE_").to_ascii_lowercase(),
    };
    format!("`{label}{ty}`")
}

/// Every type name a file refers to (fields, extensions, methods), without the leading dot.
pub(super) fn references(file: &FileDescriptorProto) -> BTreeSet<String> {
    fn fields(fs: &[FieldDescriptorProto], out: &mut BTreeSet<String>) {
        for f in fs {
            for name in [f.type_name(), f.extendee()] {
                if !name.is_empty() {
                    out.insert(name.trim_start_matches('.').to_string());
                }
            }
        }
    }
    fn walk(m: &DescriptorProto, out: &mut BTreeSet<String>) {
        fields(&m.field, out);
        fields(&m.extension, out);
        for n in &m.nested_type {
            walk(n, out);
        }
    }
    let mut out = BTreeSet::new();
    for m in &file.message_type {
        walk(m, &mut out);
    }
    fields(&file.extension, &mut out);
    for s in &file.service {
        for m in &s.method {
            out.insert(m.input_type().trim_start_matches('.').to_string());
            out.insert(m.output_type().trim_start_matches('.').to_string());
        }
    }
    out
}

/// The types a message definition refers to through its fields, nested types included.
pub(super) fn message_references(m: &DescriptorProto) -> BTreeSet<String> {
    let file = FileDescriptorProto { message_type: vec![m.clone()], ..Default::default() };
    references(&file)
}

/// Rewrites `file`'s imports: every import in `removed` goes, and each file in `add` comes in
/// (once, after the imports kept). Public imports keep their public mark where they stay; the
/// added ones are public when `public`, so importers of `file` still see what it re-exports.
pub(super) fn relink(
    file: &mut FileDescriptorProto,
    removed: &HashSet<String>,
    add: &[String],
    public: bool,
) {
    let old_public: HashSet<String> =
        file.public_dependency.iter().filter_map(|i| file.dependency.get(*i as usize).cloned()).collect();
    let mut deps: Vec<String> = file.dependency.iter().filter(|d| !removed.contains(*d)).cloned().collect();
    let mut new_public: HashSet<String> = old_public.into_iter().filter(|d| deps.contains(d)).collect();
    for a in add {
        if !deps.contains(a) && a != file.name() {
            deps.push(a.clone());
            if public {
                new_public.insert(a.clone());
            }
        }
    }
    file.public_dependency =
        deps.iter().enumerate().filter(|(_, d)| new_public.contains(*d)).map(|(i, _)| i as i32).collect();
    file.weak_dependency.clear();
    file.dependency = deps;
}

/// Symbols of a set of files, full name → file name.
pub(super) fn symbol_owners<'a>(
    files: impl Iterator<Item = &'a FileDescriptorProto>,
) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for f in files {
        for (name, _) in definitions(f) {
            out.entry(name).or_insert_with(|| f.name().to_string());
        }
    }
    out
}
