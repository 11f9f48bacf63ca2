//! The schemas panel: where the loaded types came from, a searchable list of messages, enums and
//! services with their definitions, and loading `.proto` files (with import paths) or descriptor
//! sets on a worker thread, with the loader's diagnostics shown as they are.

use super::command::CommandSender;
use super::{AppView, Pane, Placement};
use crate::jobs::JobOwner;
use crate::panes::command::AppCommand;
use crate::schema::{SchemaSet, SymbolKind};
use eframe::egui;
use std::path::PathBuf;
use std::sync::Arc;

/// What the panel keeps between frames.
#[derive(Default)]
pub struct SchemasState {
    pub search: String,
    pub selected: Option<String>,
    pub proto_file: String,
    pub import_paths: String,
    pub descriptor_set: String,
    /// The loaded types, listed once per pool.
    pub types: TypeIndex,
    /// Where to fetch schemas by reflection: host:port or a profile name.
    pub reflect_from: String,
    /// The last load's outcome: Ok(summary) or why nothing was loaded.
    pub last_load: Option<Result<String, LoadFailed>>,
}

/// Why a schema load or a reflection loaded nothing.
#[derive(Debug, thiserror::Error)]
pub enum LoadFailed {
    /// The address to reflect from holds a user name or password (the edge check's words).
    #[error("{0}")]
    Address(String),
    /// The profile's gRPC settings could not be made.
    #[error(transparent)]
    Settings(crate::net::NetError),
    /// The load or reflection job failed.
    #[error(transparent)]
    Job(#[from] crate::jobs::JobError),
}

/// The words for a finished load: how many types it added, and which built-in files it set
/// aside (the new pool is `new`, the one it replaces `old`).
pub fn loaded(old: &SchemaSet, new: &SchemaSet, what: &str) -> String {
    use crate::schema::BuiltinUse;
    let added = new.symbols().len().saturating_sub(old.symbols().len());
    let aside = |s: &SchemaSet, file: &str| {
        s.builtin_files().iter().any(|f| f.file == file && matches!(f.status, BuiltinUse::SetAside(_)))
    };
    let newly_aside: Vec<&str> = new
        .builtin_files()
        .iter()
        .filter(|f| aside(new, &f.file) && !aside(old, &f.file))
        .map(|f| f.file.as_str())
        .collect();
    let aside = if newly_aside.is_empty() {
        String::new()
    } else {
        format!("; yours replace the built-in {} (see Built-in files)", newly_aside.join(", "))
    };
    format!("{what}: {added} new types{aside} (files opened from now on use them)")
}

fn kind_word(kind: SymbolKind) -> &'static str {
    match kind {
        SymbolKind::Message => "message",
        SymbolKind::Enum => "enum",
        SymbolKind::Service => "service",
    }
}

/// The pool's types by name and by package, built once per pool: the panel draws every frame,
/// and a pool fetched from a server can hold thousands of types.
#[derive(Default)]
pub struct TypeIndex {
    of: Option<Arc<SchemaSet>>,
    names: Vec<(String, SymbolKind)>,
    packages: std::collections::BTreeMap<String, Vec<(String, SymbolKind)>>,
}

impl TypeIndex {
    fn refresh(&mut self, set: &Arc<SchemaSet>) {
        if self.of.as_ref().is_some_and(|o| Arc::ptr_eq(o, set)) {
            return;
        }
        self.names = set.symbols().into_iter().map(|(name, kind, _)| (name, kind)).collect();
        self.packages.clear();
        for (name, kind) in &self.names {
            let package = name.rsplit_once('.').map_or("(no package)", |(p, _)| p).to_string();
            self.packages.entry(package).or_default().push((name.clone(), *kind));
        }
        self.of = Some(set.clone());
    }
}

/// Packages, then their types, then each type's fields, values or methods; drawn only when open.
fn package_tree(set: &SchemaSet, index: &TypeIndex, selected: &mut Option<String>, ui: &mut egui::Ui) {
    for (package, types) in &index.packages {
        egui::CollapsingHeader::new(format!(
            "{package} ({})",
            walscope_core::fmt::counted(types.len() as u64, "type")
        ))
        .id_salt(package)
        .show(ui, |ui| {
            for (name, kind) in types {
                let short = name.rsplit('.').next().unwrap_or(name);
                let r = egui::CollapsingHeader::new(format!("{} {short}", kind_word(*kind)))
                    .id_salt(name)
                    .show(ui, |ui| members(set, name, ui));
                if r.header_response.clicked() {
                    *selected = Some(name.clone());
                }
            }
        });
    }
}

fn members(set: &SchemaSet, name: &str, ui: &mut egui::Ui) {
    let pool = set.pool();
    if let Some(m) = pool.get_message_by_name(name) {
        for f in m.fields() {
            let label = if f.is_map() {
                "map "
            } else if f.is_list() {
                "repeated "
            } else {
                ""
            };
            let t = crate::codec::tree::type_label(&f.kind());
            ui.monospace(format!("{} = {}: {label}{t}", f.name(), f.number()));
        }
    } else if let Some(e) = pool.get_enum_by_name(name) {
        for v in e.values() {
            ui.monospace(format!("{} = {}", v.name(), v.number()));
        }
    } else if let Some(s) = pool.get_service_by_name(name) {
        for m in s.methods() {
            let stream = |b: bool| if b { "stream " } else { "" };
            ui.monospace(format!(
                "{}({}{}) returns ({}{})",
                m.name(),
                stream(m.is_client_streaming()),
                m.input().name(),
                stream(m.is_server_streaming()),
                m.output().name()
            ));
        }
    }
}

/// Each built-in file and what became of it beside the user's schemas, and why any was set aside.
fn builtin_files(set: &SchemaSet, ui: &mut egui::Ui) {
    use crate::schema::BuiltinUse;
    let files = set.builtin_files();
    if files.is_empty() {
        return;
    }
    let aside = files.iter().filter(|f| matches!(f.status, BuiltinUse::SetAside(_))).count();
    let title = if aside == 0 {
        format!("Built-in files ({} in use)", files.len())
    } else {
        format!("Built-in files ({} in use, {aside} set aside)", files.len() - aside)
    };
    egui::CollapsingHeader::new(title).id_salt("builtin-files").show(ui, |ui| {
        for f in files {
            // The words say it; the colour only draws the eye to what was set aside.
            let colour = match f.status {
                BuiltinUse::InUse | BuiltinUse::Relinked { .. } => ui.visuals().text_color(),
                BuiltinUse::SetAside(_) => ui.visuals().warn_fg_color,
            };
            ui.horizontal_wrapped(|ui| {
                ui.monospace(&f.file);
                ui.colored_label(colour, f.status.to_string());
            });
        }
    });
    for notice in set.notices() {
        ui.colored_label(ui.visuals().warn_fg_color, format!("Note: {notice}"));
    }
}

impl Pane for SchemasState {
    fn title(&self, _view: &AppView<'_>) -> String {
        "Schemas".into()
    }

    fn placement(&self) -> Placement {
        Placement::Left
    }

    fn draw(&mut self, ui: &mut egui::Ui, view: &AppView<'_>, tx: &CommandSender) {
        egui::ScrollArea::vertical().id_salt("schemas_panel").show(ui, |ui| show(self, view, ui, tx));
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

fn show(st: &mut SchemasState, view: &AppView<'_>, ui: &mut egui::Ui, tx: &CommandSender) {
    let schemas = view.schemas;
    ui.heading("Schemas");
    for (origin, files) in schemas.sources() {
        ui.collapsing(
            format!("{origin} ({})", walscope_core::fmt::counted(files.len() as u64, "file")),
            |ui| {
                for f in files {
                    // An editions file is held lowered to proto2/proto3: say what it was.
                    match schemas.edition_of_file(&f) {
                        Some(edition) => ui.monospace(format!("{f} ({edition})")),
                        None => ui.monospace(f),
                    };
                }
            },
        );
    }
    builtin_files(schemas, ui);
    ui.separator();
    st.types.refresh(schemas);
    ui.horizontal(|ui| {
        let l = ui.label("Find type:");
        ui.add(egui::TextEdit::singleline(&mut st.search).desired_width(200.0)).labelled_by(l.id);
    });
    let needle = st.search.to_ascii_lowercase();
    // The type list takes what the loaders below leave of the pane.
    // (Inside the pane's scroll area the available height is unbounded: use what is visible.)
    let below = if st.selected.is_some() { 600.0 } else { 380.0 };
    let list_height = (ui.clip_rect().height() - below).max(160.0);
    egui::ScrollArea::vertical().id_salt("types").max_height(list_height).show(ui, |ui| {
        if needle.is_empty() {
            package_tree(schemas, &st.types, &mut st.selected, ui);
            return;
        }
        let mut shown = 0;
        for (name, kind) in &st.types.names {
            if !name.to_ascii_lowercase().contains(&needle) {
                continue;
            }
            shown += 1;
            if shown > 300 {
                ui.label("... more: narrow the search");
                break;
            }
            let selected = st.selected.as_deref() == Some(name.as_str());
            if ui.selectable_label(selected, format!("{} {name}", kind_word(*kind))).clicked() {
                st.selected = Some(name.clone());
            }
        }
    });
    if let Some(name) = &st.selected {
        ui.separator();
        let text = crate::schema::describe(schemas, name).unwrap_or_else(|e| e.to_string());
        egui::ScrollArea::vertical().id_salt("definition").max_height(220.0).show(ui, |ui| {
            ui.monospace(text);
        });
    }
    ui.separator();
    ui.label("Load a .proto file");
    ui.horizontal(|ui| {
        let l = ui.label("File:");
        ui.add(egui::TextEdit::singleline(&mut st.proto_file).desired_width(200.0)).labelled_by(l.id);
    });
    ui.horizontal(|ui| {
        let l = ui.label("Import paths (separate with ;):");
        ui.add(egui::TextEdit::singleline(&mut st.import_paths).desired_width(140.0)).labelled_by(l.id);
    });
    let busy = view.jobs.iter().any(|j| j.owner == JobOwner::Schemas);
    let mut commands = Vec::new();
    if ui.add_enabled(!busy && !st.proto_file.trim().is_empty(), egui::Button::new("Load .proto")).clicked() {
        let includes =
            st.import_paths.split(';').map(str::trim).filter(|p| !p.is_empty()).map(PathBuf::from).collect();
        let file = PathBuf::from(st.proto_file.trim());
        commands.push(AppCommand::LoadSchemas { proto: Some((file, includes)), descriptor_set: None });
    }
    ui.horizontal(|ui| {
        let l = ui.label("Descriptor set:");
        ui.add(egui::TextEdit::singleline(&mut st.descriptor_set).desired_width(200.0)).labelled_by(l.id);
    });
    if ui
        .add_enabled(!busy && !st.descriptor_set.trim().is_empty(), egui::Button::new("Load descriptor set"))
        .clicked()
    {
        let path = PathBuf::from(st.descriptor_set.trim());
        commands.push(AppCommand::LoadSchemas { proto: None, descriptor_set: Some(path) });
    }
    ui.horizontal(|ui| {
        let l = ui.label("Server (host:port or profile):");
        ui.add(
            egui::TextEdit::singleline(&mut st.reflect_from)
                .hint_text("127.0.0.1:19530")
                .desired_width(160.0),
        )
        .labelled_by(l.id);
    });
    let fetch = ui
        .add_enabled(!busy && !st.reflect_from.trim().is_empty(), egui::Button::new("Fetch by reflection"))
        .on_hover_text(
            "gRPC server reflection (v1, then v1alpha): the server's services and every file they import",
        );
    if fetch.clicked() {
        commands.push(AppCommand::Reflect(st.reflect_from.trim().to_string()));
    }
    if busy {
        crate::widgets::look::busy(ui);
    }
    match &st.last_load {
        Some(Ok(m)) => {
            ui.label(m);
        }
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().error_fg_color, format!("Not loaded:\n{e}"));
        }
        None => {}
    }
    for c in commands {
        tx.send(c);
    }
}
