//! The salvage pane, a guided flow after a forced failover: the new and old primary (profiles)
//! and the old primary's cluster id; its pchannels (from its replicate configuration, or typed);
//! every checkpoint fetched from the new primary and shown (message id per WAL backend, UTC) or
//! "no checkpoint" explained; an end time; whether to skip what the new primary already has; a
//! folder (unfinished dumps found there are offered for resuming); then one dump per pchannel in
//! parallel, each with its progress, cancel and resume; at the end, each dump's summary and
//! findings, "open" in the browser, and "Replay into the new primary..." (a replay pane on the
//! folder).
//!
//! Must never: reach a server or the folder itself (it sends commands), or start a set over a
//! folder that holds one (it offers to resume instead).

use crate::net::profile::ConnectionProfile;
use crate::panes::AppView;
use crate::panes::command::{AppCommand, CommandSender};
use crate::panes::salvage::SalvageState;
use eframe::egui;

pub fn show(st: &mut SalvageState, view: &AppView<'_>, ui: &mut egui::Ui, tx: &CommandSender) {
    let (id, profiles) = (st.id, view.profiles);
    let live = st.live_dumps(view);
    ui.heading("Salvage after a forced failover");
    ui.label(
        "Dumps the old primary's WAL tail from the new primary's salvage checkpoint, every pchannel at once.",
    );
    egui::Grid::new(("salvage_who", id)).num_columns(2).show(ui, |ui| {
        let l = ui.label("New primary (holds the checkpoints):");
        profile_combo(ui, ("new", id), &mut st.new_primary, profiles, l.id);
        ui.end_row();
        let l = ui.label("Old primary (its WAL is dumped):");
        profile_combo(ui, ("old", id), &mut st.old_primary, profiles, l.id);
        ui.end_row();
        let l = ui.label("Old primary's cluster id:");
        ui.add(egui::TextEdit::singleline(&mut st.cluster_id).hint_text("by-dev").desired_width(200.0))
            .labelled_by(l.id)
            .on_hover_text("its msgChannel.chanNamePrefix.cluster");
        ui.end_row();
    });
    ui.horizontal(|ui| {
        let l = ui.label("Pchannels (one a line):");
        ui.add(egui::TextEdit::multiline(&mut st.pchannels).desired_rows(3).desired_width(300.0))
            .labelled_by(l.id);
        ui.vertical(|ui| {
            if ui.button("Offer the old primary's pchannels").clicked() {
                tx.send(AppCommand::OfferPchannels(id));
            }
            if ui
                .add_enabled(!st.pchannel_list().is_empty(), egui::Button::new("Fetch checkpoints"))
                .clicked()
            {
                tx.send(AppCommand::FetchCheckpoints(id));
            }
        });
    });
    match &st.pchannel_note {
        Some(Ok(n)) => {
            ui.label(format!("{n} pchannels from the old primary's replicate configuration"));
        }
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().warn_fg_color, e.to_string());
        }
        None => {}
    }
    checkpoints(st, ui);
    ui.separator();
    ui.horizontal(|ui| {
        let l = ui.label("End (UTC date-time or raw timetick; empty: until stopped):");
        ui.add(
            egui::TextEdit::singleline(&mut st.end_time)
                .hint_text("2026-11-30 00:15:00")
                .desired_width(200.0),
        )
        .labelled_by(l.id);
        match st.end_timetick() {
            Ok(Some(t)) => ui.weak(format!("timetick {t} = {} UTC", walscope_core::time::format_timetick(t))),
            Ok(None) => ui.weak("runs until stopped"),
            Err(e) => ui.colored_label(ui.visuals().error_fg_color, e.to_string()),
        };
    });
    ui.checkbox(&mut st.skip_replicated, "Skip messages the new primary already has")
        .on_hover_text("A checkpoint's message id is the last confirmed id of the last replicated message, so a dump from it also holds messages the new primary got before the failover: those with _tt at or below the checkpoint's time_tick. On (the default), they are left out and the choice is recorded in each dump's manifest.");
    ui.horizontal(|ui| {
        let l = ui.label("Folder:");
        ui.add(egui::TextEdit::singleline(&mut st.folder).desired_width(420.0)).labelled_by(l.id);
        if ui.button("Look for unfinished dumps").clicked() {
            tx.send(AppCommand::LookInFolder(id));
        }
    });
    unfinished(st, ui, tx);
    crate::panes::salvage::rows::show(st, &live, ui, tx);
    // The set has finished: its folder can be replayed into the new primary.
    if !st.running && !st.ends.is_empty() {
        ui.separator();
        ui.horizontal(|ui| {
            let b = ui.button("Replay into the new primary...").on_hover_text(
                "Opens a replay pane on this folder and the new primary: plan first, nothing is sent until you confirm",
            );
            if b.clicked() {
                tx.send(AppCommand::NewReplay {
                    folder: Some(std::path::PathBuf::from(st.folder.trim())),
                    new_primary: Some(st.new_primary.clone()).filter(|n| !n.is_empty()),
                });
            }
            let b = ui
                .button("Timeline")
                .on_hover_text("Every pchannel of this folder on one time axis: transactions, DDL, gaps, damage");
            if b.clicked() {
                tx.send(AppCommand::NewTimeline { folder: Some(std::path::PathBuf::from(st.folder.trim())) });
            }
        });
    }
}

/// The pane's action bar, at its foot whatever the form above holds (the checkpoints' table
/// arriving never moves "Start salvage" away from the pointer): start, cancel all, and why
/// the last start was refused.
pub fn actions(st: &mut SalvageState, ui: &mut egui::Ui, tx: &CommandSender) {
    let id = st.id;
    let ready = !st.ready_pchannels().is_empty() && !st.folder.trim().is_empty() && st.end_timetick().is_ok();
    ui.horizontal_wrapped(|ui| {
        let start =
            ui.add_enabled(ready && !st.running, crate::widgets::look::primary_button(ui, "Start salvage"));
        if start
            .on_disabled_hover_text("fetch the checkpoints, choose a folder, and let the current salvage end")
            .clicked()
        {
            tx.send(AppCommand::StartSalvage(id));
        }
        if st.running && ui.button("Cancel all").clicked() {
            tx.send(AppCommand::CancelPane(id));
        }
        if let Some(e) = &st.error {
            ui.colored_label(ui.visuals().error_fg_color, format!("Not started: {e}"));
        }
    });
}

pub(crate) fn profile_combo(
    ui: &mut egui::Ui,
    salt: (&str, u64),
    value: &mut String,
    profiles: &[(ConnectionProfile, bool)],
    label: egui::Id,
) {
    let shown = if value.is_empty() { "(choose)".to_string() } else { value.clone() };
    let combo = egui::ComboBox::from_id_salt(salt).selected_text(shown).show_ui(ui, |ui| {
        for (p, _) in profiles.iter().filter(|(p, _)| p.transport == crate::net::profile::TransportKind::Grpc)
        {
            let mark = if p.is_insecure() { " INSECURE" } else { "" };
            ui.selectable_value(value, p.name.clone(), format!("{} {}{mark}", p.name, p.endpoint));
        }
    });
    // Named by its label for screen readers (and found by it in tests).
    combo.response.labelled_by(label);
}

fn checkpoints(st: &SalvageState, ui: &mut egui::Ui) {
    match &st.checkpoints {
        None => {}
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().error_fg_color, format!("Checkpoints not fetched: {e}"));
        }
        Some(Ok(c)) => {
            if let Some(v) = &c.new_primary_version {
                ui.weak(format!("new primary runs Milvus {v}"));
            }
            egui::Grid::new(("checkpoints", st.id)).striped(true).show(ui, |ui| {
                for h in ["pchannel", "checkpoint message id", "timetick (UTC)"] {
                    ui.strong(h);
                }
                ui.end_row();
                for r in &c.reports {
                    ui.monospace(&r.pchannel);
                    match &r.result {
                        Ok(k) => {
                            ui.monospace(&k.message_id_display)
                                .on_hover_text(format!("raw id {} (WAL {})", k.message_id, k.wal));
                            ui.monospace(format!("{} = {}", k.time_tick, k.time_utc));
                        }
                        Err(_) => {
                            ui.colored_label(ui.visuals().warn_fg_color, "no checkpoint");
                            ui.weak("why: below");
                        }
                    }
                    ui.end_row();
                }
            });
            // The reasons wrap under the table: a grid cell would cut them at the pane's edge,
            // and they say what to do (a wrong cluster id, a pchannel the new primary lacks).
            for r in &c.reports {
                if let Err(e) = &r.result {
                    ui.label(format!("{}: {e}", r.pchannel));
                }
            }
        }
    }
}

fn unfinished(st: &SalvageState, ui: &mut egui::Ui, tx: &CommandSender) {
    match &st.unfinished {
        None => {}
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().error_fg_color, format!("Folder not read: {e}"));
        }
        Some(Ok(u)) if u.is_empty() => {
            ui.weak("No unfinished dumps in this folder.");
        }
        Some(Ok(u)) => {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!("{} here, from an earlier run: resume them (each continues after its last complete frame)", walscope_core::fmt::counted(u.len() as u64, "unfinished dump")),
            );
            for d in u {
                ui.horizontal(|ui| {
                    ui.monospace(&d.pchannel);
                    ui.label(format!("{} frames", d.frames));
                    if let Some(e) = &d.last_error {
                        ui.colored_label(ui.visuals().error_fg_color, e);
                    }
                });
            }
            if ui.add_enabled(!st.running, egui::Button::new("Resume the folder")).clicked() {
                tx.send(AppCommand::ResumeSalvage { pane: st.id, pchannel: None });
            }
        }
    }
}
