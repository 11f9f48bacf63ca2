//! Adding files to a [`SchemaSet`]: the checks a new source must pass (no file loaded twice with
//! other contents, no symbol defined twice differently, every import found) and the rebuild of
//! the pool in which the user's files and the built-in ones they leave in use live together.
//!
//! Must never: change the set when a load fails (work happens on a copy), or keep a built-in
//! file whose import now points at a definition it was not written for.

use super::merge::{
    self, BuiltinFileStatus, BuiltinUse, Compare, Def, LinkBreak, SetAsideReason, definition_difference,
    definitions, package_prefix,
};
use super::{Origin, SchemaError, SchemaSet, sources};
use prost_reflect::DescriptorPool;
use prost_types::FileDescriptorProto;
use std::collections::{BTreeSet, HashMap, HashSet};

impl SchemaSet {
    /// Adds files as one unit: either all of them join the pool or none does. A symbol the
    /// built-in schemas also define is taken from these files, and the built-in file defining it
    /// is set aside (see [`SchemaSet::builtin_files`]); a symbol another loaded source defines
    /// identically is shared, a different definition is refused.
    pub fn add_files(
        &mut self,
        files: Vec<FileDescriptorProto>,
        origin: Origin,
    ) -> Result<usize, SchemaError> {
        // prost-reflect panics (index out of bounds) on a file whose `syntax` it does not know
        // ("editions", "", anything else), so such files are refused here, before the pool.
        if let Some(f) = files.iter().find(|f| f.syntax() == "editions") {
            // Editions files are lowered on the way in (schema/editions); one that reaches here
            // came by a path that does not carry its features.
            return Err(SchemaError::Editions {
                location: format!("{} ({origin})", f.name()),
                message: "an editions file (syntax \"editions\") must be loaded from its .proto source or a descriptor set, where walscope reads its features".into(),
            });
        }
        if let Some(f) =
            files.iter().find(|f| !matches!(f.syntax.as_deref(), None | Some("proto2" | "proto3")))
        {
            return Err(SchemaError::Invalid {
                location: format!("{} ({origin})", f.name()),
                message: format!("syntax \"{}\" is not supported: {}", f.syntax(), super::editions::READS),
            });
        }
        let mut next = self.clone();
        let added = if origin == Origin::BuiltIn {
            let n = files.len();
            next.builtin.extend(files);
            n
        } else {
            next.accept(files, origin)?
        };
        next.rebuild()?;
        *self = next;
        Ok(added)
    }

    /// Checks a user source against what is loaded and queues it for the rebuild.
    fn accept(&mut self, files: Vec<FileDescriptorProto>, origin: Origin) -> Result<usize, SchemaError> {
        let mut fresh: Vec<FileDescriptorProto> = Vec::new();
        for file in files {
            let name = file.name().to_string();
            if fresh.iter().any(|f| f.name() == name) {
                continue;
            }
            if let Some((existing, first)) = self.files.get(&name) {
                // The bundled well-known types are one set whoever brings them; a file already
                // loaded is compared as it was given, before any definition was shared.
                let given = self.given.get(&name).unwrap_or(existing);
                if super::strip(given) == super::strip(&file) || name.starts_with("google/protobuf/") {
                    continue;
                }
                if *first != Origin::BuiltIn {
                    return Err(SchemaError::ConflictingFile {
                        file: name,
                        first: Box::new(first.clone()),
                        second: Box::new(origin),
                    });
                }
                // A built-in file of the same name: the user's wins (the rebuild sets ours aside).
            }
            fresh.push(file);
        }
        for f in &fresh {
            self.given.insert(f.name().to_string(), super::strip(f));
        }
        for i in 0..fresh.len() {
            let (earlier, rest) = fresh.split_at_mut(i);
            share_identical(&self.loaded, earlier, &mut rest[0], &origin)?;
        }
        let aside: HashSet<&str> = self.builtin.iter().map(|f| f.name()).collect();
        let mut well_known: Vec<FileDescriptorProto> = Vec::new();
        for file in &fresh {
            for dep in &file.dependency {
                let known = self.files.contains_key(dep)
                    || aside.contains(dep.as_str())
                    || fresh.iter().chain(&well_known).any(|f| f.name() == dep);
                if known {
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
        let added = fresh.len();
        self.loaded.extend(well_known.into_iter().map(|f| (f, Origin::WellKnown)));
        self.loaded.extend(fresh.into_iter().map(|f| (f, origin.clone())));
        Ok(added)
    }

    /// Recomputes the pool from the built-in files and the user's: which built-in files are set
    /// aside, which are re-linked, and the pool itself.
    fn rebuild(&mut self) -> Result<(), SchemaError> {
        let user_owner = merge::symbol_owners(self.loaded.iter().map(|(f, _)| f));
        let user_origin: HashMap<&str, &Origin> = self.loaded.iter().map(|(f, o)| (f.name(), o)).collect();
        let with_origin = |files: &BTreeSet<String>| -> Vec<(String, Origin)> {
            files
                .iter()
                .map(|f| (f.clone(), user_origin.get(f.as_str()).map_or(Origin::BuiltIn, |o| (*o).clone())))
                .collect()
        };
        let mut aside: HashMap<String, SetAsideReason> = HashMap::new();
        for b in &self.builtin {
            let mut by: BTreeSet<String> = BTreeSet::new();
            if user_origin.contains_key(b.name()) {
                by.insert(b.name().to_string());
            }
            for (symbol, _) in definitions(b) {
                if let Some(u) = user_owner.get(&symbol) {
                    by.insert(u.clone());
                }
            }
            if !by.is_empty() {
                aside.insert(b.name().to_string(), SetAsideReason::Replaced { by: with_origin(&by) });
            }
        }
        let linker = Linker::new(&self.builtin, &self.loaded);
        // Setting one file aside can break the files that import it: repeat until nothing moves.
        let relinked: HashMap<String, Plan> = loop {
            let mut relinked = HashMap::new();
            let mut broken = Vec::new();
            for b in self.builtin.iter().filter(|b| !aside.contains_key(b.name())) {
                match linker.plan(b, &aside) {
                    Ok(plan) if plan.targets.is_empty() => {}
                    Ok(plan) => {
                        relinked.insert(b.name().to_string(), plan);
                    }
                    Err(e) => broken.push((b.name().to_string(), e)),
                }
            }
            let done = broken.is_empty();
            for (name, e) in broken {
                aside.insert(name, SetAsideReason::LinkBroken(e));
            }
            if done {
                break relinked;
            }
        };
        let removed: HashSet<String> = aside.keys().cloned().collect();
        let mut active: Vec<(FileDescriptorProto, Origin)> = Vec::new();
        for (file, origin) in &self.loaded {
            let mut file = file.clone();
            let plan = linker.plan(&file, &aside).map_err(|e| SchemaError::Invalid {
                location: format!("{} ({origin})", file.name()),
                message: format!("cannot link it to the loaded schemas: {e}"),
            })?;
            if file.dependency.iter().any(|d| removed.contains(d)) {
                merge::relink(&mut file, &removed, &plan.targets.into_iter().collect::<Vec<_>>(), false);
            }
            active.push((file, origin.clone()));
        }
        let mut status = Vec::new();
        for b in &self.builtin {
            let name = b.name().to_string();
            if let Some(reason) = aside.get(&name) {
                status.push(BuiltinFileStatus { file: name, status: BuiltinUse::SetAside(reason.clone()) });
                continue;
            }
            let mut file = b.clone();
            let use_ = match relinked.get(&name) {
                Some(plan) => {
                    merge::relink(
                        &mut file,
                        &removed,
                        &plan.targets.iter().cloned().collect::<Vec<_>>(),
                        false,
                    );
                    BuiltinUse::Relinked { to: with_origin(&plan.targets), gaps: plan.gaps.clone() }
                }
                None => BuiltinUse::InUse,
            };
            let origin =
                if name.starts_with("google/protobuf/") { Origin::WellKnown } else { Origin::BuiltIn };
            active.push((file, origin));
            status.push(BuiltinFileStatus { file: name, status: use_ });
        }
        let mut pool = DescriptorPool::new();
        pool.add_file_descriptor_protos(active.iter().map(|(f, _)| f.clone())).map_err(|e| {
            let origin = e
                .file()
                .and_then(|f| active.iter().find(|(a, _)| a.name() == f))
                .map(|(f, o)| format!("{} ({o})", f.name()));
            SchemaError::Invalid {
                location: origin.unwrap_or_else(|| "loaded schemas".into()),
                message: e.to_string(),
            }
        })?;
        self.pool = pool;
        self.files = active.into_iter().map(|(f, o)| (f.name().to_string(), (f, o))).collect();
        self.builtin_status = status;
        Ok(())
    }
}

/// Drops from `file` every top-level definition that an already loaded user file (or an earlier
/// file of the same source) defines identically, importing that file publicly instead; refuses a
/// different definition with both origins and what differs.
fn share_identical(
    loaded: &[(FileDescriptorProto, Origin)],
    earlier: &[FileDescriptorProto],
    file: &mut FileDescriptorProto,
    origin: &Origin,
) -> Result<(), SchemaError> {
    let owners: Vec<(&FileDescriptorProto, &Origin)> =
        loaded.iter().map(|(f, o)| (f, o)).chain(earlier.iter().map(|f| (f, origin))).collect();
    let mut index: HashMap<String, (usize, Def<'_>)> = HashMap::new();
    for (i, (f, _)) in owners.iter().enumerate() {
        for (name, def) in definitions(f) {
            index.entry(name).or_insert((i, def));
        }
    }
    let prefix = package_prefix(file);
    let file_name = file.name().to_string();
    let mut shared_from: Vec<String> = Vec::new();
    let conflict = |symbol: String, owner: usize, difference: String| SchemaError::DuplicateSymbol {
        symbol,
        first_file: owners[owner].0.name().to_string(),
        first_origin: Box::new(owners[owner].1.clone()),
        second_file: file_name.clone(),
        second_origin: Box::new(origin.clone()),
        difference,
    };
    let mut drop_messages = Vec::new();
    let mut drop_enums = Vec::new();
    let mut drop_services = Vec::new();
    {
        let tops = file
            .message_type
            .iter()
            .map(|m| (m.name(), Def::Message(m)))
            .chain(file.enum_type.iter().map(|e| (e.name(), Def::Enum(e))))
            .chain(file.service.iter().map(|s| (s.name(), Def::Service(s))));
        for (short, def) in tops {
            let full = format!("{prefix}{short}");
            let Some((owner, theirs)) = index.get(&full) else { continue };
            let owner_name = owners[*owner].0.name();
            if let Some(d) = definition_difference(*theirs, def, &file_name, Compare::Identical) {
                return Err(conflict(full, *owner, d));
            }
            if !shared_from.iter().any(|s| s == owner_name) {
                shared_from.push(owner_name.to_string());
            }
            match def {
                Def::Message(_) => drop_messages.push(short.to_string()),
                Def::Enum(_) => drop_enums.push(short.to_string()),
                Def::Service(_) => drop_services.push(short.to_string()),
            }
        }
    }
    file.message_type.retain(|m| !drop_messages.iter().any(|d| d == m.name()));
    file.enum_type.retain(|e| !drop_enums.iter().any(|d| d == e.name()));
    file.service.retain(|s| !drop_services.iter().any(|d| d == s.name()));
    // What is left must be new everywhere, nested names included.
    for (name, _) in definitions(file) {
        if let Some((owner, _)) = index.get(&name) {
            return Err(conflict(
                name,
                *owner,
                "one defines it nested in another type, the other not".into(),
            ));
        }
    }
    merge::relink(file, &HashSet::new(), &shared_from, true);
    Ok(())
}

/// How one file is pointed at the user's definitions: the files it imports instead, and what
/// those lack of the definitions it was written against.
#[derive(Default)]
struct Plan {
    targets: BTreeSet<String>,
    gaps: Vec<String>,
}

/// Plans how a file that imports set-aside built-in files is pointed at the user's definitions.
struct Linker<'a> {
    /// Every built-in definition: full name → (defining file, definition).
    builtin: HashMap<String, (&'a str, Def<'a>)>,
    /// Every user definition: full name → (defining file, its origin, definition).
    user: HashMap<String, (&'a str, &'a Origin, Def<'a>)>,
}

impl<'a> Linker<'a> {
    fn new(builtin: &'a [FileDescriptorProto], user: &'a [(FileDescriptorProto, Origin)]) -> Self {
        let mut b = HashMap::new();
        for f in builtin {
            for (name, def) in definitions(f) {
                b.entry(name).or_insert((f.name(), def));
            }
        }
        let mut u = HashMap::new();
        for (f, o) in user {
            for (name, def) in definitions(f) {
                u.entry(name).or_insert((f.name(), o, def));
            }
        }
        Linker { builtin: b, user: u }
    }

    /// The user files `file` must import instead of its set-aside imports (empty when it
    /// imports none), or why it cannot be linked.
    fn plan(
        &self,
        file: &FileDescriptorProto,
        aside: &HashMap<String, SetAsideReason>,
    ) -> Result<Plan, Box<LinkBreak>> {
        let mut plan = Plan::default();
        if !file.dependency.iter().any(|d| aside.contains_key(d)) {
            return Ok(plan);
        }
        let mut checked = HashSet::new();
        for symbol in merge::references(file) {
            self.check(file.name(), &symbol, aside, &mut checked, &mut plan)?;
        }
        Ok(plan)
    }

    /// Checks that `symbol`, if a set-aside built-in file defined it, has a user definition
    /// keeping its meaning, and so do the set-aside types it refers to in turn.
    fn check(
        &self,
        file: &str,
        symbol: &str,
        aside: &HashMap<String, SetAsideReason>,
        checked: &mut HashSet<String>,
        plan: &mut Plan,
    ) -> Result<(), Box<LinkBreak>> {
        if !checked.insert(symbol.to_string()) {
            return Ok(());
        }
        let Some(&(definer, ours)) = self.builtin.get(symbol) else { return Ok(()) };
        let Some(reason) = aside.get(definer) else { return Ok(()) };
        let brk = |user_definer, difference| LinkBreak {
            file: file.to_string(),
            symbol: symbol.to_string(),
            builtin_definer: definer.to_string(),
            user_definer,
            difference,
            cascade: false,
        };
        if let SetAsideReason::LinkBroken(_) = reason {
            return Err(Box::new(LinkBreak {
                cascade: true,
                ..brk(None, "that file could not be re-linked either".into())
            }));
        }
        let Some(&(user_file, origin, theirs)) = self.user.get(symbol) else {
            let by = match reason {
                SetAsideReason::Replaced { by } => {
                    by.iter().map(|(f, o)| format!("{f} ({o})")).collect::<Vec<_>>().join(", ")
                }
                SetAsideReason::LinkBroken(_) => String::new(),
            };
            return Err(Box::new(brk(None, format!("the files that replaced it ({by}) do not define it"))));
        };
        if let Some(d) = definition_difference(ours, theirs, user_file, Compare::Superset) {
            return Err(Box::new(brk(Some((user_file.to_string(), origin.clone())), d)));
        }
        plan.targets.insert(user_file.to_string());
        for part in merge::missing_parts(ours, theirs) {
            plan.gaps.push(format!("{symbol} {part}"));
        }
        if let Def::Message(m) = ours {
            // Only through the fields the user's definition has too: a field it lacks is a gap
            // (kept as an unknown field), so the type that field would need is not needed.
            let mut kept = m.clone();
            if let Def::Message(t) = theirs {
                kept.field.retain(|f| t.field.iter().any(|u| u.number() == f.number()));
            }
            for next in merge::message_references(&kept) {
                self.check(file, &next, aside, checked, plan)?;
            }
        }
        Ok(())
    }
}
