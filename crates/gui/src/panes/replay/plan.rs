//! The replay pane's plan, in the CLI's words (`walscope replay`): where it goes and what it
//! sends, the problems that stop an apply and the warnings, one table per collection (calls
//! and rows per kind, DDL, skipped by reason, conflicts with their first keys, rows now and
//! expected after, schema differences with the blocking ones marked), the journal when the
//! plan continues an earlier apply, and every skipped frame grouped by reason (a virtual list
//! per reason; `_t=999` frames and incomplete transactions in front, in the error colour).
//!
//! Must never: change the plan or the pane's state (it only draws), or draw every skipped frame
//! of a long list (rows outside the view are not laid out).

use eframe::egui;
use walscope_core::time::format_timetick;
use walscope_ops::replay::apply::Planned;
use walscope_ops::replay::plan::CollectionPlan;
use walscope_ops::replay::units::{SkipReason, Skipped};

/// First conflicting keys shown in a table (all of them on hover).
const FIRST_KEYS: usize = 10;

pub fn show(p: &Planned, id: u64, ui: &mut egui::Ui) {
    let plan = &p.plan;
    ui.separator();
    ui.heading("Plan");
    ui.label(format!(
        "Replay plan for {} (database {}), made {}: {}, {} before batching. Planning sent nothing.",
        plan.endpoint,
        plan.db,
        walscope_core::time::shown_recorded(&plan.created_at),
        walscope_core::fmt::counted(plan.units.len() as u64, "unit"),
        walscope_core::fmt::counted(plan.calls() as u64, "call")
    ));
    ui.label(format!(
        "Policy for existing keys: {}. Auto id: {}.",
        super::view::policy_words(plan.options.policy),
        super::view::auto_id_words(plan.options.auto_id)
    ));
    if p.resumed {
        let uncertain = p.journal.uncertain.len();
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!(
                "Resumed: this plan comes from the journal of an earlier apply: {} of {} already applied{}. Apply continues with the {} left.",
                p.journal.done.len(),
                walscope_core::fmt::counted(plan.units.len() as u64, "unit"),
                if uncertain > 0 {
                    format!(", {uncertain} interrupted mid-unit (checked before it is sent again)")
                } else {
                    String::new()
                },
                p.units_left()
            ),
        );
    }
    for problem in &plan.problems {
        ui.colored_label(ui.visuals().error_fg_color, format!("PROBLEM (stops the apply): {problem}"));
    }
    for w in &plan.warnings {
        ui.colored_label(ui.visuals().warn_fg_color, format!("warning: {w}"));
    }
    egui::CollapsingHeader::new(walscope_core::fmt::counted(plan.dumps.len() as u64, "dump"))
        .id_salt(("replay_dumps", id))
        .show(ui, |ui| {
            egui::Grid::new(("replay_dumps_grid", id)).striped(true).show(ui, |ui| {
                for h in ["pchannel", "frames", "checkpoint (UTC)", "file"] {
                    ui.strong(h);
                }
                ui.end_row();
                for (path, pchannel, tt, frames) in &plan.dumps {
                    ui.monospace(pchannel);
                    ui.monospace(frames.to_string());
                    ui.monospace(tt.map_or("no checkpoint".to_string(), format_timetick));
                    ui.monospace(path);
                    ui.end_row();
                }
            });
        });
    // Side by side, wrapping: four collections fit a window's width.
    ui.with_layout(egui::Layout::left_to_right(egui::Align::Min).with_main_wrap(true), |ui| {
        for c in plan.collections.values() {
            collection(c, id, ui);
        }
    });
    skipped(&plan.skipped, id, ui);
}

/// Width of a collection's table.
const TABLE_WIDTH: f32 = 300.0;

/// Monospace text padded to the column's width: numbers line up on the right.
fn right(ui: &mut egui::Ui, text: egui::RichText) {
    ui.label(text);
}

/// A right-aligned monospace number in a grid cell.
fn number(ui: &mut egui::Ui, text: String) {
    right(ui, egui::RichText::new(format!("{text:>11}")).monospace());
}

fn collection(c: &CollectionPlan, id: u64, ui: &mut egui::Ui) {
    // The frame takes its parent's wrapping row layout: the table inside is a column.
    egui::Frame::group(ui.style()).show(ui, |ui| ui.vertical(|ui| collection_table(c, id, ui)));
}

fn collection_table(c: &CollectionPlan, id: u64, ui: &mut egui::Ui) {
    ui.set_width(TABLE_WIDTH);
    ui.horizontal(|ui| {
        ui.strong(format!("Collection {}", c.name));
        if !c.on_new_primary {
            ui.colored_label(ui.visuals().warn_fg_color, "(not on the new primary yet)");
        }
        if let Some(pk) = &c.primary_key {
            ui.weak(format!("primary key {pk}"));
        }
    });
    egui::Grid::new(("replay_collection", id, &c.name)).striped(true).num_columns(3).show(ui, |ui| {
        ui.label("");
        for h in ["calls", "rows / keys"] {
            right(ui, egui::RichText::new(format!("{h:>11}")).monospace().strong());
        }
        ui.end_row();
        for (what, calls, rows) in [
            ("inserts", c.inserts, c.insert_rows),
            ("deletes", c.deletes, c.delete_keys),
            ("upserts", c.upserts, c.upsert_rows),
        ] {
            ui.label(what);
            number(ui, calls.to_string());
            number(ui, rows.to_string());
            ui.end_row();
        }
    });
    // The words below the numbers: their own grid, so long values do not widen the columns.
    egui::Grid::new(("replay_collection_words", id, &c.name)).striped(true).num_columns(2).show(ui, |ui| {
        ui.label("DDL");
        ui.label(if c.ddl.is_empty() { "none".to_string() } else { c.ddl.join(", ") });
        ui.end_row();
        ui.label("skipped");
        let skipped: Vec<String> = c.skipped.iter().map(|(r, n)| format!("{r} {n}")).collect();
        ui.label(if skipped.is_empty() { "none".to_string() } else { skipped.join(", ") });
        ui.end_row();
        ui.label("conflicts");
        if c.conflicts.is_empty() {
            ui.label("none");
        } else {
            let first: Vec<String> = c.conflicts.iter().take(FIRST_KEYS).map(|k| k.to_string()).collect();
            let all: Vec<String> = c.conflicts.iter().map(|k| k.to_string()).collect();
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!(
                    "{} already on the new primary: {}{}",
                    walscope_core::fmt::counted(c.conflicts.len() as u64, "key"),
                    first.join(", "),
                    if c.conflicts.len() > FIRST_KEYS { ", ..." } else { "" }
                ),
            )
            .on_hover_text(all.join(", "));
        }
        ui.end_row();
        ui.label("rows");
        let n = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
        ui.monospace(format!("{} now → {} expected after", n(c.count_before), n(c.expected_after)));
        ui.end_row();
    });
    for d in &c.differences {
        if d.blocking {
            ui.colored_label(ui.visuals().error_fg_color, format!("schema: {} [stops the apply]", d.what));
        } else {
            ui.colored_label(ui.visuals().warn_fg_color, format!("schema: {}", d.what));
        }
    }
    for n in &c.notes {
        ui.weak(format!("note: {n}"));
    }
}

/// Whether a reason means data is missing from the salvage (shown first, in the error colour).
fn grave(r: SkipReason) -> bool {
    matches!(r, SkipReason::OpaqueTxn | SkipReason::IncompleteTxn)
}

fn skipped(all: &[Skipped], id: u64, ui: &mut egui::Ui) {
    if all.is_empty() {
        ui.label("No frame is skipped.");
        return;
    }
    ui.strong(format!("Skipped {}:", walscope_core::fmt::counted(all.len() as u64, "message")));
    let mut reasons: Vec<(SkipReason, Vec<&Skipped>)> = Vec::new();
    for s in all {
        match reasons.iter_mut().find(|(r, _)| *r == s.reason) {
            Some((_, v)) => v.push(s),
            None => reasons.push((s.reason, vec![s])),
        }
    }
    // The ones that lose data first, then the rest in the reasons' order.
    reasons.sort_by_key(|(r, _)| (!grave(*r), *r));
    for (reason, frames) in reasons {
        let title = format!(
            "{} skipped: {}",
            walscope_core::fmt::counted(frames.len() as u64, "frame"),
            reason.describe()
        );
        let header = if grave(reason) {
            egui::RichText::new(title).color(ui.visuals().error_fg_color).strong()
        } else {
            egui::RichText::new(title)
        };
        egui::CollapsingHeader::new(header)
            .id_salt(("replay_skipped", id, reason))
            .default_open(grave(reason))
            .show(ui, |ui| rows(&frames, id, reason, ui));
    }
}

/// A reason's frames: only the rows in view are laid out.
fn rows(frames: &[&Skipped], id: u64, reason: SkipReason, ui: &mut egui::Ui) {
    let height = ui.text_style_height(&egui::TextStyle::Monospace);
    egui::ScrollArea::vertical()
        .id_salt(("replay_skipped_rows", id, reason))
        .max_height(220.0)
        .auto_shrink([false, true])
        .show_rows(ui, height, frames.len(), |ui, range| {
            for s in &frames[range] {
                let line = format!(
                    "{} {} {} at {}{}{}",
                    s.pchannel,
                    s.message_id,
                    s.type_name,
                    format_timetick(s.tt),
                    s.collection.as_ref().map_or(String::new(), |c| format!(" ({c})")),
                    s.detail.as_ref().map_or(String::new(), |d| format!(": {d}"))
                );
                ui.add(egui::Label::new(egui::RichText::new(line).monospace()).truncate())
                    .on_hover_text(format!("raw timetick {}", s.tt));
            }
        });
}
