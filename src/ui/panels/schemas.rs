//! The schemas panel: where the loaded types came from, a searchable list of messages, enums and
//! services with their definitions, and loading `.proto` files (with import paths) or descriptor
//! sets on a worker thread, with the loader's diagnostics shown as they are.

use crate::schema::{SchemaSet, SymbolKind};
use crate::ui::WalscopeApp;
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
    /// The last load's outcome: Ok(summary) or Err(the loader's explanation).
    pub last_load: Option<Result<String, String>>,
    pub loading: Option<std::sync::mpsc::Receiver<Result<SchemaSet, String>>>,
}

impl SchemasState {
    /// Loads into a copy of `base` on a worker thread; the app swaps it in when done.
    fn start_load(
        &mut self,
        base: Arc<SchemaSet>,
        proto: Option<(PathBuf, Vec<PathBuf>)>,
        set: Option<PathBuf>,
    ) {
        let (tx, rx) = std::sync::mpsc::channel();
        let _ = std::thread::Builder::new().name("walscope-schemas".into()).spawn(move || {
            let mut next = (*base).clone();
            let result = match (proto, set) {
                (Some((file, includes)), _) => next.add_proto_files(&includes, &[file]),
                (None, Some(path)) => next.add_descriptor_set(&path),
                (None, None) => Ok(0),
            };
            let _ = tx.send(result.map(|_| next).map_err(|e| e.to_string()));
        });
        self.loading = Some(rx);
    }
}

/// Takes in a finished load. Never waits.
pub fn poll(app: &mut WalscopeApp) {
    let done = app.schemas_state.loading.as_ref().and_then(|rx| rx.try_recv().ok());
    if let Some(result) = done {
        app.schemas_state.loading = None;
        app.schemas_state.last_load = Some(match result {
            Ok(set) => {
                let added = set.symbols().len().saturating_sub(app.schemas.symbols().len());
                app.schemas = Arc::new(set);
                Ok(format!("loaded: {added} new types (files opened from now on use them)"))
            }
            Err(e) => Err(e),
        });
    }
}

pub fn show(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    ui.heading("Schemas");
    for (origin, files) in app.schemas.sources() {
        ui.collapsing(format!("{origin} ({} files)", files.len()), |ui| {
            for f in files {
                ui.monospace(f);
            }
        });
    }
    ui.separator();
    let st = &mut app.schemas_state;
    ui.horizontal(|ui| {
        let l = ui.label("Find type:");
        ui.add(egui::TextEdit::singleline(&mut st.search).desired_width(200.0)).labelled_by(l.id);
    });
    let needle = st.search.to_ascii_lowercase();
    egui::ScrollArea::vertical().id_salt("types").max_height(260.0).show(ui, |ui| {
        let mut shown = 0;
        for (name, kind, _) in app.schemas.symbols() {
            if !needle.is_empty() && !name.to_ascii_lowercase().contains(&needle) {
                continue;
            }
            shown += 1;
            if shown > 300 {
                ui.label("... more: narrow the search");
                break;
            }
            let k = match kind {
                SymbolKind::Message => "message",
                SymbolKind::Enum => "enum",
                SymbolKind::Service => "service",
            };
            let selected = st.selected.as_deref() == Some(name.as_str());
            if ui.selectable_label(selected, format!("{k} {name}")).clicked() {
                st.selected = Some(name.clone());
            }
        }
    });
    if let Some(name) = &st.selected {
        ui.separator();
        let text = crate::schema::describe(&app.schemas, name).unwrap_or_else(|e| e.to_string());
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
    let busy = st.loading.is_some();
    if ui.add_enabled(!busy && !st.proto_file.trim().is_empty(), egui::Button::new("Load .proto")).clicked() {
        let includes =
            st.import_paths.split(';').map(str::trim).filter(|p| !p.is_empty()).map(PathBuf::from).collect();
        let file = PathBuf::from(st.proto_file.trim());
        st.start_load(app.schemas.clone(), Some((file, includes)), None);
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
        st.start_load(app.schemas.clone(), None, Some(path));
    }
    if busy {
        ui.spinner();
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
}
