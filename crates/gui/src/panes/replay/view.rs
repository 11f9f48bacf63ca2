//! The replay pane: a salvage folder (typed, or picked with the desktop's dialog) replayed into
//! the new primary (a profile) through the public API. The operator chooses the policy for
//! keys the new primary already has (skip / upsert / stop), auto id (keep / new), a rate and a
//! batch size; "Plan" makes the dry run (the tables are in [`crate::panes::replay::plan`]); "Apply..."
//! opens a confirmation that says what will change and where, and only its "Apply" sends. Then
//! the apply's progress with a cancel, and at the end the verification per collection with
//! "Verify again". Failures are the library's typed errors, in words.
//!
//! Must never: reach a server or the folder itself (it sends commands), or send an apply
//! command without the operator's "Apply" in the confirmation.

use crate::net::profile::ConnectionProfile;
use crate::panes::AppView;
use crate::panes::command::{AppCommand, CommandSender};
use crate::panes::replay::{ReplayState, Stage, explain};
use eframe::egui;
use walscope_ops::replay::apply::{ApplyState, Verification};
use walscope_ops::replay::plan::{AutoIdChoice, Policy};

/// What each policy does, for its hover and the confirmation.
pub fn policy_words(p: Policy) -> &'static str {
    match p {
        Policy::Skip => {
            "skip: keep the new primary's rows; the dump's Inserts and Deletes of those keys are not sent"
        }
        Policy::Upsert => {
            "upsert: the dump's rows win; those Inserts are sent as Upserts and overwrite the new primary's rows"
        }
        Policy::Stop => "stop: apply nothing while any Insert key already exists on the new primary",
    }
}

pub fn auto_id_words(a: AutoIdChoice) -> &'static str {
    match a {
        AutoIdChoice::Keep => {
            "keep: send the old primary's keys (the collection needs allow_insert_auto_id=true); later Deletes then match"
        }
        AutoIdChoice::New => {
            "new: the new primary generates keys; Deletes in the dump of replayed rows cannot match and are not sent"
        }
    }
}

/// Green for "OK", in both themes (always with the word: never colour alone).
pub fn ok_colour(ui: &egui::Ui) -> egui::Color32 {
    if ui.visuals().dark_mode {
        egui::Color32::from_rgb(110, 200, 110)
    } else {
        egui::Color32::from_rgb(0, 120, 0)
    }
}

pub fn show(st: &mut ReplayState, view: &AppView<'_>, ui: &mut egui::Ui, tx: &CommandSender) {
    let (id, profiles) = (st.id, view.profiles);
    ui.heading("Replay a salvage into the new primary");
    ui.label(
        "Re-applies the salvaged WAL tail through the public API. Plan first: nothing is sent until you confirm.",
    );
    let editable = !st.busy() && st.stage != Stage::Confirming;
    ui.add_enabled_ui(editable, |ui| setup(st, profiles, ui, tx));
    ui.horizontal(|ui| {
        let plan = ui.add_enabled(editable, crate::widgets::look::primary_button(ui, "Plan"));
        if plan
            .on_hover_text(
                "Reads the dumps and asks the new primary (DescribeCollection, Query): nothing is sent",
            )
            .clicked()
        {
            tx.send(AppCommand::PlanReplay(id));
        }
        // It changes the new primary: red, and it only opens the confirmation.
        let apply = ui.add_enabled(st.can_apply(), crate::widgets::look::danger_button(ui, "Apply..."));
        if apply.on_disabled_hover_text(apply_blocked(st)).clicked() {
            st.stage = Stage::Confirming;
        }
        if st.stage == Stage::Planning {
            crate::widgets::look::busy(ui);
            ui.label("planning: reading the dumps and the new primary (nothing is sent)");
        }
    });
    if let Some(e) = &st.error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
    match &st.planned {
        None => {}
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().error_fg_color, format!("No plan: {}", explain(e)));
        }
        Some(Ok(p)) => {
            if st.stale() {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    "The folder, new primary or options changed since this plan was made: plan again before applying.",
                );
            }
            crate::panes::replay::plan::show(p, id, ui);
        }
    }
    progress(st, view, ui, tx);
    outcome(st, ui, tx);
    if st.stage == Stage::Confirming {
        confirm(st, ui, tx);
    }
}

fn setup(
    st: &mut ReplayState,
    profiles: &[(ConnectionProfile, bool)],
    ui: &mut egui::Ui,
    tx: &CommandSender,
) {
    let id = st.id;
    egui::Grid::new(("replay_setup", id)).num_columns(2).show(ui, |ui| {
        let l = ui.label("Salvage folder:");
        ui.horizontal(|ui| {
            ui.add(
                egui::TextEdit::singleline(&mut st.folder)
                    .hint_text("the folder with salvage.json")
                    .desired_width(420.0),
            )
            .labelled_by(l.id);
            if ui.button("Choose...").on_hover_text("Pick the folder with the desktop's dialog").clicked() {
                tx.send(AppCommand::PickReplayFolder(id));
            }
            let folder = st.folder.trim();
            let timeline = ui.add_enabled(!folder.is_empty(), egui::Button::new("Timeline")).on_hover_text(
                "Every pchannel of this folder on one time axis: transactions, DDL, gaps, and the plan",
            );
            if timeline.clicked() {
                tx.send(AppCommand::NewTimeline { folder: Some(std::path::PathBuf::from(folder)) });
            }
        });
        ui.end_row();
        let l = ui.label("New primary (receives the replay):");
        crate::panes::salvage::view::profile_combo(
            ui,
            ("replay_new", id),
            &mut st.new_primary,
            profiles,
            l.id,
        );
        ui.end_row();
        ui.label("Keys the new primary already has:");
        crate::widgets::look::segmented_explained(
            ui,
            &mut st.policy,
            &[Policy::Skip, Policy::Upsert, Policy::Stop]
                .map(|p| (p, policy_words(p).split(':').next().unwrap_or_default(), policy_words(p))),
        );
        ui.end_row();
        ui.label("Auto-id collections:");
        crate::widgets::look::segmented_explained(
            ui,
            &mut st.auto_id,
            &[
                (AutoIdChoice::Keep, "keep the old keys", auto_id_words(AutoIdChoice::Keep)),
                (AutoIdChoice::New, "new keys", auto_id_words(AutoIdChoice::New)),
            ],
        );
        ui.end_row();
        let l = ui.label("Rate (calls/s, 0: no limit):");
        ui.add(egui::DragValue::new(&mut st.rate).range(0.0..=100_000.0).speed(1.0)).labelled_by(l.id);
        ui.end_row();
        let l = ui.label("Rows per Insert/Upsert call:");
        ui.add(egui::DragValue::new(&mut st.batch).range(1..=100_000).speed(10.0)).labelled_by(l.id);
        ui.end_row();
    });
}

/// Why "Apply..." is not available now, in words.
fn apply_blocked(st: &ReplayState) -> String {
    match st.plan_ok() {
        _ if st.stage == Stage::Applying => "an apply is running".into(),
        None => "make a plan first".into(),
        Some(p) if !p.plan.can_apply() => {
            "the plan has problems (red, below): resolve them and plan again".into()
        }
        Some(p) if p.units_left() == 0 => "the journal records every unit of this plan as applied".into(),
        Some(_) if st.stale() => "the choices changed since the plan: plan again".into(),
        Some(_) if matches!(st.applied, Some(Ok(_))) => {
            "this plan was applied: Verify again, or plan again".into()
        }
        Some(_) => "wait for the current step".into(),
    }
}

/// The confirmation: what the apply changes and where. Only its "Apply" sends.
fn confirm(st: &mut ReplayState, ui: &mut egui::Ui, tx: &CommandSender) {
    let Some(p) = st.plan_ok().cloned() else {
        st.stage = Stage::Planned;
        return;
    };
    let plan = &p.plan;
    let mut answer = None;
    let modal = egui::Modal::new(egui::Id::unique(("replay_confirm", st.id))).show(ui.ctx(), |ui| {
        ui.heading("Apply this replay?");
        ui.label(format!(
            "This sends {} ({} before batching) to {} ({}, database {}).",
            walscope_core::fmt::counted(p.units_left() as u64, "unit"),
            walscope_core::fmt::counted(plan.calls() as u64, "call"),
            st.new_primary,
            plan.endpoint,
            plan.db
        ));
        egui::Grid::new(("replay_confirm_grid", st.id)).striped(true).show(ui, |ui| {
            for h in ["collection", "rows inserted", "keys deleted", "rows upserted", "DDL"] {
                ui.strong(h);
            }
            ui.end_row();
            for c in plan.collections.values() {
                ui.monospace(&c.name);
                ui.monospace(match (c.conflicts.len(), plan.options.policy) {
                    (0, _) => c.insert_rows.to_string(),
                    (n, walscope_ops::replay::Policy::Upsert) => {
                        format!("{} ({n} already there: overwritten)", c.insert_rows)
                    }
                    (n, _) => format!("{} ({n} already there: not sent)", c.insert_rows),
                });
                ui.monospace(c.delete_keys.to_string());
                ui.monospace(c.upsert_rows.to_string());
                ui.label(if c.ddl.is_empty() { "-".to_string() } else { c.ddl.join(", ") });
                ui.end_row();
            }
        });
        for d in plan.collections.values().flat_map(|c| &c.differences) {
            ui.colored_label(ui.visuals().warn_fg_color, format!("{}: {}", d.collection, d.what));
        }
        // What the plan warned of (a collection dropped, another database left out) is said
        // again where the operator decides.
        for w in &plan.warnings {
            ui.colored_label(ui.visuals().warn_fg_color, format!("Warning: {w}"));
        }
        let conflicts: usize = plan.collections.values().map(|c| c.conflicts.len()).sum();
        ui.label(format!(
            "Policy for keys the new primary already has ({conflicts} found): {}",
            policy_words(plan.options.policy)
        ));
        ui.label(format!(
            "Rate: {}; at most {} per call. Every unit is journaled: a stop can be continued.",
            if st.rate > 0.0 { format!("{} calls/s", st.rate) } else { "no limit".into() },
            walscope_core::fmt::counted(st.batch as u64, "row")
        ));
        ui.strong("Nothing has been sent yet.");
        ui.horizontal(|ui| {
            if crate::widgets::look::secondary(ui, "Cancel").clicked() {
                answer = Some(false);
            }
            if crate::widgets::look::danger(ui, "Apply").clicked() {
                answer = Some(true);
            }
        });
    });
    if modal.should_close() && answer.is_none() {
        answer = Some(false);
    }
    match answer {
        Some(true) => tx.send(AppCommand::ApplyReplay(st.id)),
        Some(false) => st.stage = if st.applied.is_some() { Stage::Applied } else { Stage::Planned },
        None => {}
    }
}

fn progress(st: &ReplayState, view: &AppView<'_>, ui: &mut egui::Ui, tx: &CommandSender) {
    let Some(live) = st.live_apply(view) else { return };
    let p = live.progress.borrow().clone();
    ui.separator();
    let heading = ui.strong("Applying");
    // Brought into view once per apply: it appears below the plan, often under the fold.
    let key = egui::Id::unique(("replay_progress_shown", st.id));
    if ui.ctx().data(|d| d.get_temp::<Option<crate::jobs::JobId>>(key)) != Some(st.jobs.apply) {
        heading.scroll_to_me(Some(egui::Align::TOP));
        ui.ctx().data_mut(|d| d.insert_temp(key, st.jobs.apply));
    }
    let done = p.units_done + p.units_already;
    ui.horizontal_wrapped(|ui| {
        ui.add(
            egui::ProgressBar::new(done as f32 / p.units_total.max(1) as f32)
                .desired_width(260.0)
                .text(format!("{done}/{} units", p.units_total)),
        );
        ui.label(format!(
            "{}, {} of {}, {:.0} rows/s{}",
            walscope_core::fmt::counted(p.calls, "call"),
            walscope_core::fmt::count(p.rows),
            walscope_core::fmt::counted(p.rows_total, "row"),
            p.rows_per_s(),
            p.eta().map_or(String::new(), |e| format!(", about {} s left", e.as_secs()))
        ));
        if p.units_already > 0 {
            ui.weak(format!(
                "({} already applied by an earlier run)",
                walscope_core::fmt::counted(p.units_already as u64, "unit")
            ));
        }
    });
    ui.horizontal(|ui| {
        let state = match &p.state {
            ApplyState::Applying => match &p.current {
                Some(u) => format!("sending unit {u}"),
                None => "starting".into(),
            },
            ApplyState::Verifying => "verifying the new primary".into(),
            ApplyState::Done => "done".into(),
            ApplyState::Cancelled => "cancelled".into(),
            ApplyState::Failed(e) => format!("failed: {e}"),
        };
        ui.label(state);
        let cancel = ui.add_enabled(!live.cancel.is_cancelled(), egui::Button::new("Cancel the apply"));
        if cancel
            .on_hover_text("Stops after the unit being sent; the journal records what was applied")
            .clicked()
        {
            tx.send(AppCommand::CancelReplay(st.id));
        }
    });
}

fn outcome(st: &ReplayState, ui: &mut egui::Ui, tx: &CommandSender) {
    if let Some(a) = &st.applied {
        ui.separator();
        match a {
            Ok(o) => {
                ui.horizontal_wrapped(|ui| {
                    let units = o.units_sent + o.units_already;
                    ui.add(
                        egui::ProgressBar::new(1.0)
                            .desired_width(260.0)
                            .text(format!("{units}/{units} units: done")),
                    );
                    ui.label(format!(
                        "Applied {} in {}, {}; {} already applied before.",
                        walscope_core::fmt::counted(o.units_sent as u64, "unit"),
                        walscope_core::fmt::counted(o.calls, "call"),
                        walscope_core::fmt::counted(o.rows, "row"),
                        walscope_core::fmt::counted(o.units_already as u64, "unit")
                    ))
                })
                .inner
            }
            Err(walscope_ops::replay::ReplayError::Cancelled) => ui.colored_label(
                ui.visuals().warn_fg_color,
                "Cancelled: the journal records what was applied; Apply again continues from there.",
            ),
            Err(e) => ui.colored_label(ui.visuals().error_fg_color, format!("Not applied: {}", explain(e))),
        };
    }
    if st.verification.is_none() && !st.verifying && !matches!(st.applied, Some(Ok(_))) {
        return;
    }
    match &st.verification {
        None => {}
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().error_fg_color, format!("Not verified: {}", explain(e)));
        }
        Some(Ok(v)) => verification(v, st.id, ui),
    }
    ui.horizontal(|ui| {
        if ui.add_enabled(!st.busy(), egui::Button::new("Verify again")).clicked() {
            tx.send(AppCommand::VerifyReplay(st.id));
        }
        if st.verifying {
            crate::widgets::look::busy(ui);
            ui.label("reading the new primary");
        }
    });
}

fn verification(v: &Verification, id: u64, ui: &mut egui::Ui) {
    if v.ok() {
        ui.colored_label(ok_colour(ui), egui::RichText::new("Verification: OK").strong());
    } else {
        ui.colored_label(ui.visuals().error_fg_color, egui::RichText::new("Verification: FAILED").strong());
    }
    egui::Grid::new(("replay_verification", id)).striped(true).show(ui, |ui| {
        for h in ["collection", "rows expected", "rows found", "sample keys", "result"] {
            ui.strong(h);
        }
        ui.end_row();
        let n = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
        for c in &v.collections {
            ui.monospace(&c.collection);
            ui.monospace(n(c.expected));
            ui.monospace(n(c.actual));
            ui.monospace(format!("{} read back, {} wrong", c.sampled, c.wrong.len()));
            if c.ok() {
                ui.colored_label(ok_colour(ui), format!("{}: OK", c.collection));
            } else {
                let mut why = Vec::new();
                if c.expected != c.actual {
                    why.push(format!("expected {} rows, found {}", n(c.expected), n(c.actual)));
                }
                for (k, want, got) in c.wrong.iter().take(5) {
                    why.push(format!(
                        "key {k}: expected {}, found {got}",
                        walscope_core::fmt::counted(*want, "row")
                    ));
                }
                if let Some(e) = &c.error {
                    why.push(format!("error: {e}"));
                }
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    format!("{}: WRONG ({})", c.collection, why.join("; ")),
                );
            }
            ui.end_row();
        }
    });
}
