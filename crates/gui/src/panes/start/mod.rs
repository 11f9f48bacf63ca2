//! What the window shows with no file open: what walscope is, how to open a file, the CLI.
//! Must never: open the file itself (it sends `Open` or `OpenDemoCopy`).

use crate::CLI_USAGE;
use crate::panes::command::{AppCommand, CommandSender};
use crate::widgets::look;
use eframe::egui;

/// Draws the start page: `path` is the path typed in its box, `types` how many types the
/// schemas hold.
pub fn show(path: &mut String, types: usize, ui: &mut egui::Ui, tx: &CommandSender) {
    ui.heading("walscope");
    ui.label("Inspect, decode, edit and re-send protobuf write-ahead-log traffic: Milvus WAL dumps and OpenMLDB datasync records.");
    ui.label(format!("{} built-in types are loaded (Milvus, OpenMLDB datasync, brpc meta).", types));
    ui.separator();
    ui.label("Drop a dump file on this window, or open one by path:");
    ui.horizontal(|ui| {
        let label = ui.label("Path:");
        let r = ui
            .add(egui::TextEdit::singleline(path).hint_text("/path/to/dump").desired_width(420.0))
            .labelled_by(label.id);
        // Enter in the box opens, as the button does (a single-line box loses focus on Enter).
        let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if (look::primary(ui, "Open").clicked() || enter) && !path.trim().is_empty() {
            tx.send(AppCommand::Open(std::path::PathBuf::from(path.trim())));
        }
        if look::secondary(ui, "Browse…").on_hover_text("the open dialog (Ctrl+O)").clicked() {
            tx.send(AppCommand::ShowOpenDialog);
        }
    });
    // A copy in a temp folder, never a file of the repository: saving edits there is harmless.
    let b = ui.button("Open a copy of the sample Milvus dump");
    if b.on_hover_text("written into a temp folder that goes when walscope closes").clicked() {
        tx.send(AppCommand::OpenDemoCopy);
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
