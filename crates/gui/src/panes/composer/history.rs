//! The call history in a composer: every call made (here or with `walscope call --history`),
//! searchable, with its time, method, profile and outcome; open one to edit and re-send it
//! (its exact request bytes come back).
//!
//! Must never: read the history file itself (it asks the app, a job reads it).

use crate::panes::command::{AppCommand, CommandSender};
use crate::panes::composer::ComposerState;
use eframe::egui;
use prost_reflect::DescriptorPool;

pub fn show(st: &mut ComposerState, pool: &DescriptorPool, ui: &mut egui::Ui, tx: &CommandSender) {
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.horizontal(|ui| {
            ui.strong("History");
            let l = ui.label("Search:");
            let r = ui
                .add(egui::TextEdit::singleline(&mut st.history_search).desired_width(200.0))
                .labelled_by(l.id);
            let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            // A call made since the list was read is in the file now: read it again (the old
            // list stays shown meanwhile).
            if ui.button("Search history").clicked() || enter || st.history.is_none() || st.history_stale {
                st.history_stale = false;
                if st.history.is_none() {
                    st.history = Some(Ok(Vec::new()));
                }
                tx.send(AppCommand::LoadHistory { composer: st.id, search: st.history_search.clone() });
            }
        });
        let mut open = None;
        match &st.history {
            None => {}
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("History not read: {e}"));
            }
            Some(Ok(entries)) if entries.is_empty() => {
                ui.weak("No calls recorded (yet).");
            }
            Some(Ok(entries)) => {
                egui::ScrollArea::vertical().id_salt(("history", st.id)).max_height(180.0).show(ui, |ui| {
                    egui::Grid::new(("history_grid", st.id)).striped(true).show(ui, |ui| {
                        for e in entries.iter().rev().take(200) {
                            ui.monospace(walscope_core::time::format_millis_utc(e.time_ms));
                            ui.monospace(e.method.rsplit('.').next().unwrap_or(&e.method));
                            ui.label(e.profile.clone().unwrap_or_else(|| e.endpoint.clone()));
                            ui.label(e.outcome.words());
                            if ui.button(format!("Open #{}", e.id)).clicked() {
                                open = Some(e.clone());
                            }
                            let name = format!("Compare #{} with…", e.id);
                            if crate::widgets::look::named_button(ui, "Compare…", &name)
                                .on_hover_text("compare this request with another entry's or the composer's")
                                .clicked()
                            {
                                let from =
                                    crate::panes::diff::CompareFrom::History { composer: st.id, entry: e.id };
                                tx.send(AppCommand::CompareWith(from));
                            }
                            ui.end_row();
                        }
                    });
                });
            }
        }
        if let Some(e) = open {
            if let Some(p) = e.profile.clone() {
                st.profile = p;
            }
            st.metadata = e.metadata.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join("\n");
            st.deadline = e.deadline_ms.map(|ms| format!("{}", ms as f64 / 1000.0)).unwrap_or_default();
            st.load(pool, &e.method, e.request.clone());
        }
    });
}
