//! The timeline pane's controls: the folder and "Read", zoom (−, +, "Fit all"), the filters
//! (collection, type), the plan overlay's toggle, the legend (shape, colour and word for every
//! type category), and the summary line; then the lanes ([`super::canvas`]).
//!
//! Must never: read a file (a command asks the app).

use super::TimelineState;
use super::canvas;
use crate::panes::command::{AppCommand, CommandSender};
use crate::wal::TypeCategory;
use eframe::egui;
use walscope_core::fmt::{count, counted};
use walscope_core::time::format_timetick;
use walscope_ops::timeline::TxnEnd;

pub(super) fn show(st: &mut TimelineState, ui: &mut egui::Ui, tx: &CommandSender) {
    ui.horizontal(|ui| {
        let l = ui.label("Salvage folder:");
        let edit = ui.add(
            egui::TextEdit::singleline(&mut st.folder)
                .hint_text("a salvage folder (salvage.json) or a folder of .dump files")
                .desired_width(380.0),
        );
        let edit = edit.labelled_by(l.id);
        let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        match st.loading {
            Some(job) => {
                crate::widgets::look::busy(ui);
                if crate::widgets::look::secondary(ui, "Cancel").clicked() {
                    tx.send(AppCommand::CancelJob(job));
                }
            }
            None => {
                let read = ui.add_enabled(
                    !st.folder.trim().is_empty(),
                    crate::widgets::look::primary_button(ui, "Read"),
                );
                if read
                    .on_hover_text("Read every dump of the folder (a job: progress in the status bar)")
                    .clicked()
                    || enter
                {
                    tx.send(AppCommand::LoadTimeline(st.id));
                }
            }
        }
    });
    if let Some(e) = &st.error {
        ui.colored_label(crate::widgets::look::Tone::Bad.color(ui), format!("✖ Cannot read the folder: {e}"));
    }
    let Some(t) = st.data.clone() else {
        if st.loading.is_none() && st.error.is_none() {
            crate::widgets::look::empty_state(
                ui,
                "No timeline yet",
                "Type a salvage folder and press Read: every pchannel becomes a lane on one UTC time axis.",
            );
        }
        return;
    };
    ui.horizontal(|ui| {
        if ui.button("−").on_hover_text("Zoom out (or turn the wheel over the lanes)").clicked() {
            st.zoom(2.0, 0.5);
        }
        if ui.button("+").on_hover_text("Zoom in (or turn the wheel over the lanes)").clicked() {
            st.zoom(0.5, 0.5);
        }
        if ui.button("Fit all").on_hover_text("The whole salvage on screen").clicked() {
            st.fit_all();
        }
        ui.separator();
        let collections = t.collection_ids.iter().copied();
        let shown = st
            .filter
            .collection
            .map_or_else(|| "every collection".to_string(), |c| format!("collection {c}"));
        let l = ui.label("Show:");
        let combo = egui::ComboBox::from_id_salt(("timeline_collection", st.id))
            .selected_text(shown)
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut st.filter.collection, None, "every collection");
                for c in collections {
                    ui.selectable_value(&mut st.filter.collection, Some(c), format!("collection {c}"));
                }
            });
        combo.response.labelled_by(l.id);
        let seen = t.types_seen.iter().copied();
        let ty = st.filter.types.first().copied();
        let shown = ty.map_or_else(|| "every type".to_string(), |n| t.type_name(n));
        let mut chosen = ty;
        let l = ui.label("of");
        let combo =
            egui::ComboBox::from_id_salt(("timeline_type", st.id)).selected_text(shown).show_ui(ui, |ui| {
                ui.selectable_value(&mut chosen, None, "every type");
                for n in seen {
                    ui.selectable_value(&mut chosen, Some(n), t.type_name(n));
                }
            });
        combo.response.labelled_by(l.id);
        st.filter.types = chosen.into_iter().collect();
        ui.separator();
        ui.add_enabled(!t.plan.is_empty(), egui::Checkbox::new(&mut st.show_plan, "Replay plan"))
            .on_hover_text("The saved replay plan's verdicts: sent, skipped (and why), conflicts")
            .on_disabled_hover_text("No saved replay plan in this folder (an apply saves replay-plan.json)");
    });
    legend(ui, !t.plan.is_empty() && st.show_plan);
    let s = t.summary();
    let range = format!(
        "{} .. {} UTC",
        format_timetick(st.from.max(0.0) as u64),
        format_timetick(st.to.max(0.0) as u64)
    );
    let open = t.txns.iter().filter(|x| x.end == TxnEnd::Open).count();
    ui.weak(format!(
        "{}, {}; {} ({open} open), {} DDL, {}, {}. Showing {range}",
        counted(s.lanes as u64, "lane"),
        counted(s.frames, "frame"),
        counted(s.txns as u64, "transaction"),
        count(s.ddl as u64),
        counted(s.gaps as u64, "gap"),
        counted(s.damaged as u64, "damaged range")
    ));
    canvas::show(st, &t, ui, tx);
}

/// The legend: each category's shape and colour with its word; then spans, gaps and damage.
fn legend(ui: &mut egui::Ui, plan: bool) {
    ui.horizontal_wrapped(|ui| {
        for c in TypeCategory::ALL {
            let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
            canvas::shape(ui.painter(), c, rect.center(), 4.5, canvas::colour(ui, c));
            ui.label(c.name());
        }
        ui.separator();
        let (rect, _) = ui.allocate_exact_size(egui::vec2(18.0, 12.0), egui::Sense::hover());
        ui.painter().rect_filled(
            rect.shrink2(egui::vec2(0.0, 3.0)),
            1.0,
            canvas::txn_colour(ui, TxnEnd::Committed),
        );
        ui.label("transaction");
        ui.label("⚠ open transaction");
        let (rect, _) = ui.allocate_exact_size(egui::vec2(18.0, 12.0), egui::Sense::hover());
        ui.painter().rect_filled(rect, 0.0, ui.visuals().weak_text_color().gamma_multiply(0.25));
        ui.label("gap");
        ui.label("⚠ damaged");
        if plan {
            ui.separator();
            ui.label("✔ sent  ○ skipped  ✖ conflict");
        }
    });
}
