//! File / View / Help menus.

use crate::ui::WalscopeApp;
use eframe::egui;

pub fn show(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| {
            if ui.button("Open file...").clicked() {
                app.pick_file();
                ui.close();
            }
            ui.label("Open path:");
            let r = ui.add(
                egui::TextEdit::singleline(&mut app.open_path)
                    .hint_text("/path/to/dump")
                    .desired_width(320.0),
            );
            let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if (ui.button("Open").clicked() || enter) && !app.open_path.trim().is_empty() {
                let p = std::path::PathBuf::from(app.open_path.trim());
                app.open(p);
                ui.close();
            }
            if let Some(tab) = app.tabs.get(app.active)
                && ui.button(format!("Close {}", tab.title())).clicked()
            {
                app.tabs.remove(app.active);
                app.active = app.active.min(app.tabs.len().saturating_sub(1));
                ui.close();
            }
        });
        ui.menu_button("View", |ui| {
            ui.checkbox(&mut app.show_schemas, "Schemas panel");
            ui.checkbox(&mut app.show_tasks, "Sync tasks panel");
            // Words, not the emoji egui's own theme buttons use (not every font has them).
            let current = ui.ctx().options(|o| o.theme_preference);
            for (pref, name) in [
                (egui::ThemePreference::System, "Theme: follow the system"),
                (egui::ThemePreference::Light, "Theme: light"),
                (egui::ThemePreference::Dark, "Theme: dark"),
            ] {
                if ui.selectable_label(current == pref, name).clicked() {
                    ui.ctx().set_theme(pref);
                }
            }
        });
        ui.menu_button("Help", |ui| {
            ui.label("walscope: inspect and repair protobuf WAL traffic.");
            ui.label("Drop a dump file on the window, or use File > Open path.");
        });
    });
}
