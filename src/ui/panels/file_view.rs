//! One open file: what it is, the filter bar, the message list and the selected message.

use super::{browser, detail_view};
use crate::ui::file_tab::FileTab;
use eframe::egui;

pub fn show(tab: &mut FileTab, ui: &mut egui::Ui) {
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
    egui::Panel::right("detail").resizable(true).default_size(ui.available_width() * 0.4).show(ui, |ui| {
        match tab.detail.as_mut() {
            Some(detail) => detail_view::show(detail, ui),
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
}
