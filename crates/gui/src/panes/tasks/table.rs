//! The dashboard's table: sub-tasks grouped by table (tid and `db.table` where known), the table
//! row summing its partitions, then a row per partition: pid, mode, status badge, collector,
//! rows, rows/s, sync point, age of the last update, progress file (opened when it is on this
//! machine); a partition in trouble (FAILED, REASSIGNING, stalled or silent) has its whole row
//! washed in its tone, its status as an icon and a word, and below the table what it means and
//! what to do. A rate that no longer means anything (FAILED, SUCCESS) shows as "—", never as the
//! last number seen. Greyed while the SyncTool does not answer (the last good data).
//!
//! Must never: compute trouble itself (the poller's health module does).

use crate::datasync::Trouble;
use crate::datasync::health::SubTaskHealth;
use crate::panes::command::{AppCommand, CommandSender};
use crate::panes::tasks::{TasksState, age, badge};
use crate::widgets::look::{self, Tone};
use eframe::egui;
use walscope_ops::jobs::task_poll::TaskBoard;

pub fn show(st: &mut TasksState, board: &TaskBoard, stale: bool, ui: &mut egui::Ui, tx: &CommandSender) {
    if board.rows.is_empty() {
        ui.weak("No sync tasks on this SyncTool.");
        return;
    }
    // SyncTool's default check_period (the dashboard cannot read the server's setting).
    let check_period = std::time::Duration::from_secs(10);
    let mut tids: Vec<u32> = board.rows.iter().map(|r| r.tid).collect();
    tids.sort_unstable();
    tids.dedup();
    let grey = |ui: &mut egui::Ui| {
        if stale {
            ui.visuals_mut().override_text_color = Some(ui.visuals().weak_text_color());
        }
    };
    for tid in tids {
        let parts: Vec<usize> = (0..board.rows.len()).filter(|i| board.rows[*i].tid == tid).collect();
        let name = parts.iter().find_map(|i| board.health.get(*i).and_then(|h| h.table.clone()));
        let total: u64 =
            parts.iter().map(|i| board.health.get(*i).map_or(board.rows[*i].count, |h| h.total_rows)).sum();
        let rate: f64 = parts.iter().filter_map(|i| board.rates.get(*i).copied().flatten()).sum();
        let trouble: Vec<Option<(Tone, String)>> =
            parts.iter().map(|i| in_trouble(&board.rows[*i].status, board.health.get(*i))).collect();
        let troubled = trouble.iter().flatten().count();
        egui::Frame::group(ui.style()).show(ui, |ui| {
            grey(ui);
            ui.horizontal_wrapped(|ui| {
                ui.strong(match &name {
                    Some(n) => format!("{n} (tid {tid})"),
                    None => format!("tid {tid}"),
                });
                ui.label(format!(
                    "{}, {total} rows, {rate:.1} rows/s",
                    walscope_core::fmt::counted(parts.len() as u64, "partition")
                ));
                if troubled > 0 {
                    let worst = if trouble.iter().flatten().any(|(t, _)| *t == Tone::Bad) {
                        Tone::Bad
                    } else {
                        Tone::Warn
                    };
                    look::badge(
                        ui,
                        worst,
                        &format!("{} in trouble", walscope_core::fmt::counted(troubled as u64, "partition")),
                    );
                }
                if let Some(dest) =
                    parts.first().map(|i| board.rows[*i].dest.clone()).filter(|d| !d.is_empty())
                {
                    ui.weak(format!("to {dest}"));
                }
                match &name {
                    None => {
                        ui.weak(
                            "(delete from a composer with its db and name: the table's name is not known here)",
                        );
                    }
                    // Asks in a modal (never where this button was): see `actions::confirmations`.
                    Some(n) => {
                        if crate::widgets::look::danger(ui, &format!("Delete the task of tid {tid}")).clicked() {
                            st.confirm_delete = Some((tid, n.clone()));
                            st.clear_all_typed.clear();
                        }
                    }
                }
            });
            // Row 0 is the header; a partition in trouble is washed in its tone, the others striped.
            let fills: Vec<Option<Tone>> =
                trouble.iter().map(|t| t.as_ref().map(|(tone, _)| *tone)).collect();
            let grid = egui::Grid::new(("parts", st.id, tid)).with_row_color(move |row, style| {
                match row.checked_sub(1).and_then(|r| fills.get(r).copied().flatten()) {
                    Some(tone) => Some(tone.fill(&style.visuals)),
                    None => (row % 2 == 1).then_some(style.visuals.faint_bg_color),
                }
            });
            grid.show(ui, |ui| {
                for h in [
                    "pid",
                    "mode",
                    "status",
                    "collector",
                    "rows",
                    "rows/s",
                    "sync point",
                    "updated",
                    "progress file",
                ] {
                    ui.strong(h);
                }
                ui.end_row();
                for (k, i) in parts.iter().enumerate() {
                    let r = &board.rows[*i];
                    ui.monospace(r.pid.to_string());
                    ui.label(&r.mode);
                    match &trouble[k] {
                        Some((tone, word)) => {
                            look::badge(ui, *tone, word);
                        }
                        None => badge(ui, &r.status),
                    }
                    ui.monospace(&r.data_collector);
                    ui.monospace(board.health.get(*i).map_or(r.count, |h| h.total_rows).to_string());
                    ui.monospace(
                        board.rates.get(*i).copied().flatten().map_or("—".into(), |x| format!("{x:.1}")),
                    );
                    ui.monospace(&r.sync_point);
                    ui.label(board.health.get(*i).map_or("-".into(), age));
                    // No disk check in a frame: opening says so when the file is not on this machine.
                    match &r.progress_path {
                        Some(p) => {
                            let link = ui
                                .link(p)
                                .on_hover_text("open the progress file (when it is on this machine)");
                            if link.clicked() {
                                tx.send(AppCommand::Open(p.into()));
                            }
                        }
                        None => {
                            ui.label("-");
                        }
                    }
                    ui.end_row();
                }
            });
            for (k, i) in parts.iter().enumerate() {
                let Some(h) = board.health.get(*i) else { continue };
                // In its row's tone (red for FAILED), with its icon: not by colour alone.
                let tone = trouble[k].as_ref().map_or(Tone::Info, |(t, _)| *t);
                for t in &h.troubles {
                    let words = format!("{} pid {}: {}", tone.icon(), h.pid, t.label());
                    ui.colored_label(tone.color(ui), words);
                    ui.label(format!("What it means: {}.", t.meaning(check_period)));
                    ui.label(format!("What to do: {}", t.action()));
                }
            }
        });
    }
}
/// Whether a partition is in trouble, and then its tone and what its badge says: FAILED (red),
/// REASSIGNING, stalled, silent or reassigned again and again (amber), with the status word
/// first. A count reset alone is no trouble (nothing is lost); its line below the table says so.
pub fn in_trouble(status: &str, health: Option<&SubTaskHealth>) -> Option<(Tone, String)> {
    let troubles = health.map_or(&[][..], |h| h.troubles.as_slice());
    if status == "FAILED" || troubles.contains(&Trouble::Failed) {
        return Some((Tone::Bad, "FAILED".into()));
    }
    let warn = troubles.iter().find(|t| !matches!(t, Trouble::CountReset { .. }));
    // A word that does not change from poll to poll (the line below the table says for how
    // long): the status column keeps its width.
    match warn {
        Some(t) if t.is_stall() => Some((Tone::Warn, format!("{status}, stalled"))),
        Some(Trouble::Reassigned { .. }) => Some((Tone::Warn, format!("{status}, reassigned again"))),
        Some(_) => Some((Tone::Warn, status.to_string())),
        None if status == "REASSIGNING" => Some((Tone::Warn, status.to_string())),
        None => None,
    }
}
