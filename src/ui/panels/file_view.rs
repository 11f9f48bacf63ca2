//! One open file: what it is, the filter bar, the message list and the selected message.

use super::{browser, detail_view};
use crate::dump::Framing;
use crate::ui::file_tab::{FileTab, ReadAs};
use eframe::egui;

/// Draws the tab; returns a new way to read the file when the operator asks for one.
pub fn show(tab: &mut FileTab, ui: &mut egui::Ui) -> Option<ReadAs> {
    let mut reopen = None;
    let d = &tab.dump;
    let type_name = tab.decoder.message_type().map_or("(no type)".to_string(), |t| t.full_name().to_string());
    ui.horizontal_wrapped(|ui| {
        ui.label(format!(
            "{} | {} bytes | {} framing ({:.0}% sure) | {} | {} frames",
            d.encoding.name(),
            d.len(),
            d.framing,
            d.detection.confidence * 100.0,
            type_name,
            d.frame_count()
        ))
        .on_hover_text(format!("{}\n{}", d.detection.reason, tab.why_type));
        let problems = d.problems();
        if !problems.is_empty() {
            let text: Vec<String> = problems.iter().map(|p| p.reason.clone()).collect();
            ui.colored_label(ui.visuals().warn_fg_color, format!("{} damaged range(s)", problems.len()))
                .on_hover_text(text.join("\n"));
        }
    });
    ui.collapsing("Read as...", |ui| {
        ui.horizontal(|ui| {
            ui.label("Framing:");
            let current = tab.read_as.framing.map_or("detect".to_string(), |f| f.name().to_string());
            egui::ComboBox::from_id_salt("framing").selected_text(current).show_ui(ui, |ui| {
                ui.selectable_value(&mut tab.read_as.framing, None, "detect");
                for f in Framing::ALL {
                    ui.selectable_value(&mut tab.read_as.framing, Some(f), f.name());
                }
            });
            let l = ui.label("Type:");
            let t = tab.read_as.type_name.get_or_insert_with(String::new);
            ui.add(egui::TextEdit::singleline(t).hint_text("detect").desired_width(300.0)).labelled_by(l.id);
            if ui.button("Reopen").clicked() {
                reopen = Some(tab.read_as.clone());
            }
        });
    });
    ui.horizontal(|ui| {
        let label = ui.label("Filter:");
        let r = ui
            .add(
                egui::TextEdit::singleline(&mut tab.filter_text)
                    .hint_text("type=Insert,vchannel=dml_0,tt=2026-11-30 00:12:00..,status=bad")
                    .desired_width(520.0),
            )
            .labelled_by(label.id);
        let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if ui.button("Apply filter").clicked() || enter {
            tab.apply_filter();
        }
        if tab.scan.is_some() && ui.button("Clear filter").clicked() {
            tab.filter_text.clear();
            tab.apply_filter();
        }
        if let Some(s) = &tab.scan {
            ui.label(format!("{} matching of {} scanned", s.match_count(), s.scanned()));
        }
    });
    if let Some(e) = &tab.filter_error {
        ui.colored_label(ui.visuals().error_fg_color, format!("filter: {e}"));
    }
    edit_bar(tab, ui);
    egui::Panel::right("detail").resizable(true).default_size(ui.available_width() * 0.4).show(ui, |ui| {
        match tab.detail.as_mut() {
            Some(detail) => {
                let framing = if tab.dump.framing == crate::dump::Framing::Single {
                    "single"
                } else {
                    tab.dump.framing.name()
                };
                let root = tab.decoder.message_type().cloned();
                if let Some(req) = detail_view::show(detail, ui, (&tab.path, framing), root.as_ref()) {
                    let i = detail.index;
                    tab.request(i, req);
                }
            }
            None => {
                ui.label("Select a message to see its fields, bytes and JSON.");
            }
        }
    });
    egui::CentralPanel::default().show(ui, |ui| {
        if let Some(i) = browser::show(tab, ui) {
            tab.select(i);
        }
    });
    reopen
}

/// Unsaved edits: what changed, undo, redo, save. Ctrl+Z, Ctrl+Shift+Z and Ctrl+S work too.
fn edit_bar(tab: &mut FileTab, ui: &mut egui::Ui) {
    let (undo, redo, save) = ui.input_mut(|i| {
        (
            i.consume_key(egui::Modifiers::COMMAND, egui::Key::Z),
            i.consume_key(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::Z),
            i.consume_key(egui::Modifiers::COMMAND, egui::Key::S),
        )
    });
    if redo {
        tab.redo();
    } else if undo {
        tab.undo();
    }
    if !tab.session.is_dirty() && !tab.session.can_redo() {
        return;
    }
    ui.horizontal_wrapped(|ui| {
        let diff = tab.session.diff(&tab.dump);
        let parts: Vec<String> = diff
            .iter()
            .map(|(f, (at, old, new))| format!("frame {f}: bytes {at}..{} ({old} -> {new})", at + old))
            .collect();
        if diff.is_empty() {
            ui.label("No unsaved edits.");
        } else {
            ui.colored_label(ui.visuals().warn_fg_color, format!("Unsaved edits: {}", parts.join("; ")))
                .on_hover_text("Only these bytes (and the frames' length prefixes) change when saved.");
        }
        if ui.add_enabled(tab.session.can_undo(), egui::Button::new("Undo")).clicked() {
            tab.undo();
        }
        if ui.add_enabled(tab.session.can_redo(), egui::Button::new("Redo")).clicked() {
            tab.redo();
        }
        let can_save = tab.session.is_dirty() && tab.saving.is_none();
        if ui
            .add_enabled(can_save, egui::Button::new("Save"))
            .on_hover_text("Atomic replace; the previous file is kept as FILE.bak")
            .clicked()
            || (save && can_save)
        {
            tab.save();
        }
        if tab.saving.is_some() {
            ui.spinner();
            ui.label("saving");
        }
    });
}
