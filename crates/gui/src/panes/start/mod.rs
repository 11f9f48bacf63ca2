//! What the window shows with no file open: what walscope is, how to open a file, the CLI.

use crate::{CLI_USAGE, WalscopeApp};
use eframe::egui;

pub fn show(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    ui.heading("walscope");
    ui.label("Inspect, decode, edit and re-send protobuf write-ahead-log traffic: Milvus WAL dumps and OpenMLDB datasync records.");
    ui.label(format!(
        "{} built-in types are loaded (Milvus, OpenMLDB datasync, brpc meta).",
        app.schemas.symbols().len()
    ));
    ui.separator();
    ui.label("Drop a dump file on this window, or open one by path:");
    ui.horizontal(|ui| {
        ui.add(
            egui::TextEdit::singleline(&mut app.open_path).hint_text("/path/to/dump").desired_width(420.0),
        );
        if ui.button("Open").clicked() && !app.open_path.trim().is_empty() {
            let p = std::path::PathBuf::from(app.open_path.trim());
            app.send(crate::panes::command::AppCommand::Open(p));
        }
    });
    // A copy in a temp folder, never a file of the repository: saving edits there is harmless.
    let b = ui.button("Open a copy of the sample Milvus dump");
    if b.on_hover_text("written into a temp folder that goes when walscope closes").clicked() {
        app.send(crate::panes::command::AppCommand::OpenDemoCopy);
    }
    ui.separator();
    ui.label("Everything also works headless:");
    egui::Grid::new("cli").striped(true).show(ui, |ui| {
        for (cmd, what) in CLI_USAGE {
            ui.monospace(*cmd);
            ui.label(*what);
            ui.end_row();
        }
    });
}
