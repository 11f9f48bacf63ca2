//! The dashboard's table: sub-tasks grouped by table (tid and `db.table` where known), the table
//! row summing its partitions, then a row per partition: pid, mode, status badge, collector,
//! rows, rows/s, sync point, age of the last update, progress file (opened when it is on this
//! machine); a troubled partition highlighted with what it means and what to do. Greyed while the
//! SyncTool does not answer (the last good data).
//!
//! Must never: compute trouble itself (the poller's health module does).

use crate::panes::command::{AppCommand, CommandSender};
use crate::panes::tasks::{TasksState, age, badge};
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
        let troubled =
            parts.iter().filter(|i| board.health.get(**i).is_some_and(|h| !h.troubles.is_empty())).count();
        egui::Frame::group(ui.style()).show(ui, |ui| {
            grey(ui);
            ui.horizontal_wrapped(|ui| {
                ui.strong(match &name {
                    Some(n) => format!("{n} (tid {tid})"),
                    None => format!("tid {tid}"),
                });
                ui.label(format!("{} partition(s), {total} rows, {rate:.1} rows/s", parts.len()));
                if troubled > 0 {
                    ui.colored_label(
                        ui.visuals().warn_fg_color,
                        format!("{troubled} partition(s) in trouble"),
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
            egui::Grid::new(("parts", st.id, tid)).striped(true).show(ui, |ui| {
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
                for i in &parts {
                    let r = &board.rows[*i];
                    ui.monospace(r.pid.to_string());
                    ui.label(&r.mode);
                    badge(ui, &r.status);
                    ui.monospace(&r.data_collector);
                    ui.monospace(board.health.get(*i).map_or(r.count, |h| h.total_rows).to_string());
                    ui.monospace(
                        board.rates.get(*i).copied().flatten().map_or("-".into(), |x| format!("{x:.1}")),
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
            for i in &parts {
                let Some(h) = board.health.get(*i) else { continue };
                for t in &h.troubles {
                    ui.colored_label(ui.visuals().warn_fg_color, format!("pid {}: {}", h.pid, t.label()));
                    ui.label(format!("What it means: {}.", t.meaning(check_period)));
                    ui.label(format!("What to do: {}", t.action()));
                }
            }
        });
    }
}
