//! The dashboard's calls that change the SyncTool: create a table's task (database, table, mode
//! 0 full / 1 incremental from a start time picked on a calendar / 2 full then continuous,
//! destination), validated before it is sent, the refusal shown in words; and `clear_all`
//! (deletes every task), sent only after the words are typed. Deleting one table's task is on its
//! row (see `tasks_table`).
//!
//! Must never: send anything itself (it sends commands).

use crate::datasync::TaskChange;
use crate::panes::command::{AppCommand, CommandSender};
use crate::panes::tasks::{CLEAR_ALL_WORD, TasksState};
use crate::widgets::look::{self, Answer, Confirm};
use eframe::egui;
use walscope_ops::jobs::task_poll::TaskBoard;

pub fn show(st: &mut TasksState, board: &TaskBoard, ui: &mut egui::Ui, tx: &CommandSender) {
    ui.strong("Create a sync task");
    ui.horizontal_wrapped(|ui| {
        let l = ui.label("Database:");
        ui.add(egui::TextEdit::singleline(&mut st.db).desired_width(100.0)).labelled_by(l.id);
        let l = ui.label("Table:");
        ui.add(egui::TextEdit::singleline(&mut st.table).desired_width(100.0)).labelled_by(l.id);
        let l = ui.label("Destination:");
        ui.add(
            egui::TextEdit::singleline(&mut st.dest).hint_text("/data/offline/orders").desired_width(200.0),
        )
        .labelled_by(l.id);
    });
    ui.horizontal_wrapped(|ui| {
        ui.label("Mode:");
        look::segmented(
            ui,
            &mut st.mode,
            &[(0, "0 full"), (1, "1 incremental from a time"), (2, "2 full + continuous")],
        );
    });
    if st.mode == 1 {
        start_time(st, ui);
    }
    ui.horizontal(|ui| {
        if ui.add_enabled(st.confirm_create.is_none(), look::primary_button(ui, "Create task")).clicked() {
            match st.create_request() {
                Ok(req) => {
                    st.form_error = None;
                    let target = st.watched.clone().unwrap_or_default();
                    let what = format!(
                        "This creates a sync task for {}.{} on {target}, writing its rows to {}.",
                        st.db.trim(),
                        st.table.trim(),
                        st.dest.trim()
                    );
                    st.confirm_create = Some((what, req));
                }
                Err(e) => st.form_error = Some(e),
            }
        }
        if let Some(e) = &st.form_error {
            ui.colored_label(ui.visuals().error_fg_color, format!("Not sent: {e}"));
        }
    });
    confirmations(st, board, ui, tx);
    match &st.last_action {
        Some(Ok(change)) => {
            ui.label(super::done_words(change));
        }
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().error_fg_color, e.to_string());
        }
        None => {}
    }
    ui.separator();
    let clear = look::danger_button(ui, "Delete every task (clear_all)...");
    if ui.add_enabled(!board.rows.is_empty(), clear).clicked() {
        st.show_clear_all = true;
        st.clear_all_typed.clear();
    }
}

/// The modals that stand between a click and a call that changes the SyncTool: create (says
/// what it creates), delete one table's task and clear_all (each with a word to type: neither
/// can be undone). Drawn over the window, never where the first click was.
fn confirmations(st: &mut TasksState, board: &TaskBoard, ui: &mut egui::Ui, tx: &CommandSender) {
    let id = st.id;
    let target = st.watched.clone().unwrap_or_default();
    if let Some((what, change)) = st.confirm_create.clone() {
        let c =
            Confirm { title: "Create this sync task?", what: &what, action: "Create it", typed_word: None };
        match c.show(ui.ctx(), egui::Id::unique(("create_task", id)), &mut st.clear_all_typed) {
            Answer::Open => {}
            Answer::Confirmed => {
                tx.send(AppCommand::TaskCall { dashboard: id, change });
                st.confirm_create = None;
            }
            Answer::Cancelled => st.confirm_create = None,
        }
    }
    if let Some((tid, name)) = st.confirm_delete.clone() {
        let (db, table) =
            name.split_once('.').map_or((String::new(), name.clone()), |(d, t)| (d.into(), t.into()));
        let parts = board.rows.iter().filter(|r| r.tid == tid).count();
        let what = format!(
            "This deletes the sync task of {name} (tid {tid}) on {target}: {} stop and SyncTool forgets \
             their progress. It cannot be undone; creating the task again starts over.",
            walscope_core::fmt::counted(parts as u64, "partition")
        );
        let c = Confirm {
            title: "Delete this sync task?",
            what: &what,
            action: "Delete the task",
            typed_word: Some(&table),
        };
        match c.show(ui.ctx(), egui::Id::unique(("delete_task", id)), &mut st.clear_all_typed) {
            Answer::Open => {}
            Answer::Confirmed => {
                tx.send(AppCommand::TaskCall { dashboard: id, change: TaskChange::Delete { db, table } });
                st.confirm_delete = None;
            }
            Answer::Cancelled => st.confirm_delete = None,
        }
    }
    if st.show_clear_all {
        let what = format!(
            "This deletes EVERY sync task on {target} ({}). It cannot be undone.",
            walscope_core::fmt::counted(board.rows.len() as u64, "sub-task")
        );
        let c = Confirm {
            title: "Delete every sync task?",
            what: &what,
            action: "Delete every task",
            typed_word: Some(CLEAR_ALL_WORD),
        };
        match c.show(ui.ctx(), egui::Id::unique(("clear_all", id)), &mut st.clear_all_typed) {
            Answer::Open => {}
            Answer::Confirmed => {
                tx.send(AppCommand::TaskCall { dashboard: id, change: TaskChange::ClearAll });
                st.show_clear_all = false;
            }
            Answer::Cancelled => st.show_clear_all = false,
        }
    }
}

/// Mode 1's start time: a date on a calendar and a UTC time of day, kept as text the request
/// reads (`YYYY-MM-DD HH:MM:SS`).
fn start_time(st: &mut TasksState, ui: &mut egui::Ui) {
    let (mut date, mut h, mut m, mut s) = parse(&st.start_time);
    ui.horizontal(|ui| {
        ui.label("Start (UTC): skip rows older than");
        ui.add(egui_extras::DatePickerButton::new(&mut date).id_salt("start_date"));
        ui.add(egui::DragValue::new(&mut h).range(0..=23).suffix(" h"));
        ui.add(egui::DragValue::new(&mut m).range(0..=59).suffix(" min"));
        ui.add(egui::DragValue::new(&mut s).range(0..=59).suffix(" s"));
    });
    st.start_time = format!("{date} {h:02}:{m:02}:{s:02}");
}

fn parse(text: &str) -> (walscope_core::time::Date, i8, i8, i8) {
    let (d, t) = text.trim().split_once(' ').unwrap_or((text.trim(), "00:00:00"));
    let date = walscope_core::time::parse_date(d).unwrap_or_else(walscope_core::time::today);
    let mut parts = t.split(':').map(|p| p.parse::<i8>().unwrap_or(0));
    (date, parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}
