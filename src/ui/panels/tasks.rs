//! The sync-task dashboard: a SyncTool's sub-tasks polled in the background (status badge in
//! words and colour, rows, rows per second, sync point, collector, last update), and creating or
//! deleting a table's task. Calls run on the app's runtime; the panel only reads the latest board.

use crate::jobs::task_poll::{TaskBoard, TaskPoller};
use crate::net::Transport;
use crate::net::brpc::BrpcTransport;
use crate::net::http_json::HttpJsonTransport;
use crate::ui::WalscopeApp;
use eframe::egui;
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
    /// The outcome of the last create/delete, filled in by the runtime.
    pub last_action: Arc<Mutex<Option<String>>>,
}

impl TasksState {
    fn transport(&self) -> Arc<dyn Transport> {
        if self.http {
            Arc::new(HttpJsonTransport::new(self.endpoint.trim().to_string()))
        } else {
            Arc::new(BrpcTransport::new(self.endpoint.trim().to_string()))
        }
    }

    /// Starts (or restarts) polling the endpoint every two seconds.
    pub fn watch(&mut self, rt: &tokio::runtime::Handle) {
        self.poller = Some(TaskPoller::spawn(rt, self.transport(), Duration::from_secs(2), 30));
    }

    fn call(
        &self,
        rt: &tokio::runtime::Handle,
        method: &'static str,
        json: serde_json::Value,
        ctx: egui::Context,
    ) {
        let (t, out) = (self.transport(), self.last_action.clone());
        rt.spawn(async move {
            let text = match run_call(t.as_ref(), method, &json).await {
                Ok(m) => m,
                Err(e) => format!("{method} failed: {e}"),
            };
            if let Ok(mut o) = out.lock() {
                *o = Some(text);
            }
            ctx.request_repaint();
        });
    }
}

async fn run_call(t: &dyn Transport, method: &str, json: &serde_json::Value) -> Result<String, String> {
    let m = crate::datasync::synctool_method(method)?;
    let req = crate::codec::from_json(&m.input(), &json.to_string()).map_err(|e| e.to_string())?;
    let opts = crate::net::CallOptions { timeout: Some(Duration::from_secs(10)), ..Default::default() };
    let r = t.call_unary(&m, &req, &opts).await.map_err(|e| e.to_string())?;
    crate::datasync::general_result(&r.message)
        .map(|()| format!("{method}: done"))
        .map_err(|(code, msg)| format!("code {code}: {msg}"))
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
    let Some(rt) = app.runtime() else {
        ui.label("No network runtime: see the status bar.");
        return;
    };
    let st = &mut app.tasks;
    ui.heading("Sync tasks");
    ui.horizontal(|ui| {
        let l = ui.label("SyncTool:");
        ui.add(egui::TextEdit::singleline(&mut st.endpoint).hint_text("host:8848").desired_width(180.0))
            .labelled_by(l.id);
        ui.checkbox(&mut st.http, "HTTP/JSON");
        if ui.button("Watch").clicked() && !st.endpoint.trim().is_empty() {
            st.watch(&rt);
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
            st.call(&rt, "CreateSyncTask", json, ui.ctx().clone());
        }
        ui.checkbox(&mut st.confirm_delete, "I understand delete cannot be undone");
        if ui.add_enabled(ready && st.confirm_delete, egui::Button::new("Delete task")).clicked() {
            let json = serde_json::json!({"db": st.db.trim(), "name": st.table.trim()});
            st.call(&rt, "DeleteSyncTask", json, ui.ctx().clone());
            st.confirm_delete = false;
        }
    });
    if let Some(text) = st.last_action.lock().ok().and_then(|t| t.clone()) {
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
}
