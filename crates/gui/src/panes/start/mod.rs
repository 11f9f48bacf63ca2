//! What the window shows with no file open: what walscope is, how to open a file, the CLI.
//! Must never: open the file itself (it sends `Open` or `OpenDemoCopy`).

use crate::CLI_USAGE;
use crate::panes::command::{AppCommand, CommandSender};
use eframe::egui;

/// Draws the start page: `open_path` is the path typed (shared with File > Open path),
/// `types` how many types the schemas hold.
pub fn show(open_path: &mut String, types: usize, ui: &mut egui::Ui, tx: &CommandSender) {
    ui.heading("walscope");
    ui.label("Inspect, decode, edit and re-send protobuf write-ahead-log traffic: Milvus WAL dumps and OpenMLDB datasync records.");
    ui.label(format!("{} built-in types are loaded (Milvus, OpenMLDB datasync, brpc meta).", types));
    ui.separator();
    ui.label("Drop a dump file on this window, or open one by path:");
    ui.horizontal(|ui| {
        ui.add(egui::TextEdit::singleline(open_path).hint_text("/path/to/dump").desired_width(420.0));
        if ui.button("Open").clicked() && !open_path.trim().is_empty() {
            let p = std::path::PathBuf::from(open_path.trim());
            tx.send(AppCommand::Open(p));
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
