//! The sync-task dashboard: a SyncTool's sub-tasks polled in the background (status badge in
//! words and colour, rows, rows per second, sync point, collector, last update), and creating or
//! deleting a table's task. Calls run on the app's runtime; the panel only reads the latest board.

use crate::jobs::task_poll::{TaskBoard, TaskPoller};
use crate::ui::WalscopeApp;
use crate::ui::command::AppCommand;
use crate::ui::outcome::{JobError, JobOutput};
use eframe::egui;

#[derive(Default)]
pub struct TasksState {
    pub endpoint: String,
    pub http: bool,
    pub poller: Option<TaskPoller>,
    pub db: String,
    pub table: String,
    pub mode: u8,
    pub dest: String,
    pub confirm_delete: bool,
    /// The outcome of the last create/delete.
    pub last_action: Option<String>,
}

impl TasksState {
    /// Takes a finished call of the dashboard's.
    pub fn take(&mut self, result: Result<JobOutput, JobError>) {
        self.last_action = match result {
            Ok(JobOutput::Done(text)) => Some(text),
            Ok(_) => None,
            Err(JobError::Cancelled) => None,
            Err(e) => Some(e.to_string()),
        };
    }
}

fn badge(ui: &mut egui::Ui, status: &str) {
    // Colour and word together: nothing is told by colour alone.
    let color = match status {
        "RUNNING" => egui::Color32::from_rgb(60, 170, 90),
        "SUCCESS" => egui::Color32::from_rgb(70, 130, 220),
        "REASSIGNING" => egui::Color32::from_rgb(220, 160, 40),
        "FAILED" => egui::Color32::from_rgb(220, 70, 70),
        _ => egui::Color32::GRAY,
    };
    ui.colored_label(color, status);
}

pub fn show(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    let mut commands = Vec::new();
    let st = &mut app.tasks;
    ui.heading("Sync tasks");
    ui.horizontal(|ui| {
        let l = ui.label("SyncTool:");
        ui.add(egui::TextEdit::singleline(&mut st.endpoint).hint_text("host:8848").desired_width(180.0))
            .labelled_by(l.id);
        ui.checkbox(&mut st.http, "HTTP/JSON");
        if ui.button("Watch").clicked() && !st.endpoint.trim().is_empty() {
            commands.push(AppCommand::WatchTasks);
        }
    });
    ui.horizontal(|ui| {
        let l = ui.label("Database:");
        ui.add(egui::TextEdit::singleline(&mut st.db).desired_width(90.0)).labelled_by(l.id);
        let l = ui.label("Table:");
        ui.add(egui::TextEdit::singleline(&mut st.table).desired_width(90.0)).labelled_by(l.id);
    });
    ui.horizontal(|ui| {
        ui.label("Mode:");
        ui.selectable_value(&mut st.mode, 0, "0 full");
        ui.selectable_value(&mut st.mode, 1, "1 incremental");
        ui.selectable_value(&mut st.mode, 2, "2 full + continuous");
        let l = ui.label("Destination:");
        ui.add(egui::TextEdit::singleline(&mut st.dest).desired_width(140.0)).labelled_by(l.id);
    });
    let ready = st.poller.is_some() && !st.db.trim().is_empty() && !st.table.trim().is_empty();
    ui.horizontal(|ui| {
        if ui.add_enabled(ready, egui::Button::new("Create task")).clicked() {
            let json = serde_json::json!({"db": st.db.trim(), "name": st.table.trim(), "mode": st.mode, "dest": st.dest.trim()});
            commands.push(AppCommand::TaskCall { method: "CreateSyncTask", request: json });
        }
        ui.checkbox(&mut st.confirm_delete, "I understand delete cannot be undone");
        if ui.add_enabled(ready && st.confirm_delete, egui::Button::new("Delete task")).clicked() {
            let json = serde_json::json!({"db": st.db.trim(), "name": st.table.trim()});
            commands.push(AppCommand::TaskCall { method: "DeleteSyncTask", request: json });
            st.confirm_delete = false;
        }
    });
    if let Some(text) = &st.last_action {
        ui.label(text);
    }
    ui.separator();
    let board: TaskBoard = st.poller.as_ref().map(|p| p.board()).unwrap_or_default();
    if let Some(e) = &board.error {
        ui.colored_label(ui.visuals().error_fg_color, format!("Error: {e}"));
    }
    if st.poller.is_some() {
        ui.label(format!("{} sub-task(s), poll {}", board.rows.len(), board.polls));
    }
    egui::Grid::new("tasks").striped(true).show(ui, |ui| {
        for h in ["tid/pid", "status", "rows", "rows/s", "recent rows", "sync point", "collector"] {
            ui.strong(h);
        }
        ui.end_row();
        for (i, r) in board.rows.iter().enumerate() {
            ui.monospace(format!("{}/{}", r.tid, r.pid));
            badge(ui, &r.status);
            ui.monospace(r.count.to_string());
            ui.monospace(board.rates.get(i).copied().flatten().map_or("-".into(), |x| format!("{x:.1}")));
            let history = board.history.get(i).map_or(&[][..], |h| h.as_slice());
            crate::ui::widgets::sparkline::show(ui, history, egui::vec2(120.0, 18.0));
            ui.label(&r.sync_point);
            ui.label(&r.data_collector);
            ui.end_row();
        }
    });
    for c in commands {
        app.send(c);
    }
}
