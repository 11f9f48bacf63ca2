//! The left sidebar (ux.md's layout): Connections (each profile with its last test's answer),
//! Schemas (what is loaded), Recent files and Salvage folders. A click opens what the line
//! names: the Connections or Schemas pane, the file, a replay of the folder.
//!
//! Owns: drawing those lists at a fixed width (long names are shortened, the whole on hover),
//! so nothing in it moves sideways as answers arrive. Must never: do the work itself (it sends
//! the commands the menus send), read the disk (whether a recent file is still there is
//! checked by a job), or size itself from its content.

use crate::WalscopeApp;
use crate::panes::PaneId;
use crate::panes::command::AppCommand;
use crate::widgets::look;
use eframe::egui;

/// Draws the sidebar's sections into `ui` (the left panel).
pub fn show(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    egui::ScrollArea::vertical().id_salt("sidebar").auto_shrink([false, false]).show(ui, |ui| {
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
        connections(app, ui);
        schemas(app, ui);
        recent(app, ui);
        salvages(app, ui);
    });
}

fn section(ui: &mut egui::Ui, title: &str, body: impl FnOnce(&mut egui::Ui)) {
    egui::CollapsingHeader::new(egui::RichText::new(title).strong())
        .id_salt(("sidebar", title))
        .default_open(true)
        .show(ui, body);
}

fn connections(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    use crate::panes::connections::CheckResult;
    if !app.connections.loading {
        app.connections.loading = true;
        app.send(AppCommand::LoadProfiles);
    }
    let profiles = app.connections.profiles();
    let mut open = false;
    section(ui, "Connections", |ui| {
        if profiles.is_empty() {
            open |= ui.link("No profiles yet: add one").clicked();
        }
        for (p, _) in &profiles {
            ui.horizontal(|ui| {
                // The badge first, at a fixed width: a longer answer never moves the name.
                let result = app.connections.result(&p.name);
                let (tone, word) = match &result {
                    None => (look::Tone::Neutral, "untested"),
                    Some(CheckResult::Running) => (look::Tone::Neutral, "testing"),
                    Some(r) if r.text().starts_with("OK") => (look::Tone::Info, "OK"),
                    Some(_) => (look::Tone::Bad, "failed"),
                };
                let text = result.as_ref().map_or_else(|| "not tested yet".to_string(), CheckResult::text);
                look::fixed_width(ui, 78.0, |ui| {
                    look::badge(ui, tone, word).on_hover_text(&text);
                });
                let r = ui.selectable_label(false, &p.name).on_hover_text(format!("{} — {text}", p.endpoint));
                open |= r.clicked();
            });
        }
    });
    if open {
        app.show_connections = true;
        app.layout.show_pane(PaneId::Connections);
    }
}

fn schemas(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    let mut open = false;
    section(ui, "Schemas", |ui| {
        for (origin, files) in app.schemas.sources() {
            let n = files.len();
            let r = ui
                .selectable_label(
                    false,
                    format!("{origin}: {}", walscope_core::fmt::counted(n as u64, "file")),
                )
                .on_hover_text(files.join("\n"));
            open |= r.clicked();
        }
    });
    if open {
        app.show_schemas = true;
        app.layout.show_pane(PaneId::Schemas);
    }
}

fn recent(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    if app.recent.wants_check() && !app.recent.paths().is_empty() {
        app.send(AppCommand::RefreshRecent);
    }
    let mut open = None;
    section(ui, "Recent files", |ui| {
        if app.recent.paths().is_empty() {
            ui.weak("No recent files: File > Open.");
        }
        for p in app.recent.paths() {
            let name =
                p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned());
            let folder = p.parent().map_or(String::new(), |f| f.display().to_string());
            let missing = app.recent.missing(p);
            let r = ui.add_enabled(
                missing.is_none(),
                egui::Button::selectable(false, format!("{name} — {folder}")),
            );
            let r = match &missing {
                Some(why) => r.on_disabled_hover_text(format!("Cannot open {}: {why}", p.display())),
                None => r.on_hover_text(p.display().to_string()),
            };
            if r.clicked() {
                open = Some(p.clone());
            }
        }
    });
    if let Some(p) = open {
        app.send(AppCommand::Open(p));
    }
}

fn salvages(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    let folders: Vec<std::path::PathBuf> = app
        .panes
        .ids()
        .iter()
        .filter_map(|id| app.panes.get::<crate::panes::salvage::SalvageState>(id))
        .map(|s| s.folder.trim())
        .filter(|f| !f.is_empty())
        .map(std::path::PathBuf::from)
        .collect();
    let mut replay = None;
    section(ui, "Salvage folders", |ui| {
        if folders.is_empty() {
            ui.weak("None yet: Connections > Salvage after a failover.");
        }
        for f in &folders {
            let r = ui
                .selectable_label(false, f.display().to_string())
                .on_hover_text(format!("{}\nClick: plan a replay of this folder", f.display()));
            if r.clicked() {
                replay = Some(f.clone());
            }
        }
    });
    if let Some(folder) = replay {
        app.send(AppCommand::NewReplay { folder: Some(folder), new_primary: None });
    }
}
