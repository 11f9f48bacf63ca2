//! Asks before a file with unsaved edits is closed: discard them, save first, or keep the file
//! open. Nothing the operator typed is dropped without being asked.
//! Must never: close or save the file itself (it sends `DiscardFile` or `AskSave`).

use crate::WalscopeApp;
use crate::panes::command::AppCommand;
use eframe::egui;

pub fn show(app: &mut WalscopeApp, ctx: &egui::Context) {
    let Some(path) = app.confirm_close.clone() else { return };
    let Some(i) = app.tabs.iter().position(|t| t.path == path) else {
        app.confirm_close = None;
        return;
    };
    let edited = app.tabs[i].session.edited_frames().len();
    let mut choice = None;
    egui::Modal::new(egui::Id::unique("confirm_close")).show(ctx, |ui| {
        ui.heading("Unsaved edits");
        ui.label(format!(
            "{} has unsaved edits in {}. Closing it now loses them.",
            path.display(),
            walscope_core::fmt::counted(edited as u64, "message")
        ));
        ui.horizontal(|ui| {
            if ui.button("Save, then keep it open").clicked() {
                choice = Some("save");
            }
            if ui.button("Discard edits and close").clicked() {
                choice = Some("discard");
            }
            if ui.button("Keep it open").clicked() || ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                choice = Some("keep");
            }
        });
    });
    match choice {
        // The save confirmation shows next: nothing is written before it is confirmed there.
        Some("save") => app.send(AppCommand::AskSave { path, save_as: false }),
        Some("discard") => app.send(AppCommand::DiscardFile(path)),
        Some(_) => {}
        None => return,
    }
    app.confirm_close = None;
}
