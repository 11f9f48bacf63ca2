//! The Connections menu: saved profiles (profiles.json) and the in-memory ones `--demo` adds,
//! each with its transport and endpoint, and a "Check" that makes one harmless call in the
//! background (GetVersion for gRPC Milvus, TaskStatus for brpc/HTTP SyncTool) and shows the
//! answer and latency, or the error in words.
//!
//! Owns: [`ConnectionsState`]. Must never: call the network or read profiles.json on the UI
//! thread, write demo profiles to disk, or show a secret.

use crate::net::Transport;
use crate::net::brpc::BrpcTransport;
use crate::net::grpc::GrpcTransport;
use crate::net::http_json::HttpJsonTransport;
use crate::net::profile::{ConnectionProfile, ProfileStore, TransportKind};
use crate::ui::WalscopeApp;
use eframe::egui;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The outcome of one check, in words.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckResult {
    Running,
    Ok(String),
    Failed(String),
}

/// profiles.json as loaded by the worker: None until it is read.
pub type SavedProfiles = Arc<Mutex<Option<Result<Vec<ConnectionProfile>, String>>>>;

#[derive(Default)]
pub struct ConnectionsState {
    /// Added by `--demo`; never saved.
    pub demo: Vec<ConnectionProfile>,
    /// From profiles.json, loaded on a worker thread (None: not loaded yet).
    pub saved: SavedProfiles,
    loading: bool,
    /// Check results by profile name.
    pub checks: Arc<Mutex<HashMap<String, CheckResult>>>,
}

impl ConnectionsState {
    /// Reads the user's profiles.json on a worker thread.
    pub fn load(&mut self, wake: crate::dump::background::Wake) {
        self.loading = true;
        let out = self.saved.clone();
        let _ = std::thread::Builder::new().name("walscope-profiles".into()).spawn(move || {
            let store = ProfileStore::user();
            let r = store.load().map_err(|e| e.to_string());
            if let Ok(mut o) = out.lock() {
                *o = Some(r);
            }
            wake();
        });
    }

    /// Every profile shown: demo ones first, then the saved ones.
    pub fn profiles(&self) -> Vec<(ConnectionProfile, bool)> {
        let mut all: Vec<(ConnectionProfile, bool)> = self.demo.iter().map(|p| (p.clone(), true)).collect();
        if let Ok(s) = self.saved.lock()
            && let Some(Ok(saved)) = s.as_ref()
        {
            all.extend(saved.iter().map(|p| (p.clone(), false)));
        }
        all
    }

    pub fn result(&self, name: &str) -> Option<CheckResult> {
        self.checks.lock().ok().and_then(|c| c.get(name).cloned())
    }

    /// Starts a check of `profile` on `rt`; its result shows up in [`Self::result`].
    pub fn check(
        &self,
        rt: &tokio::runtime::Handle,
        profile: ConnectionProfile,
        wake: crate::dump::background::Wake,
    ) {
        let checks = self.checks.clone();
        if let Ok(mut c) = checks.lock() {
            c.insert(profile.name.clone(), CheckResult::Running);
        }
        rt.spawn(async move {
            let started = Instant::now();
            let r = match tokio::time::timeout(Duration::from_secs(10), check(&profile)).await {
                Ok(Ok(what)) => CheckResult::Ok(format!("{what} in {} ms", started.elapsed().as_millis())),
                Ok(Err(e)) => CheckResult::Failed(e),
                Err(_) => {
                    CheckResult::Failed("no answer within 10 s; is the server up and the port right?".into())
                }
            };
            if let Ok(mut c) = checks.lock() {
                c.insert(profile.name.clone(), r);
            }
            wake();
        });
    }
}

/// One harmless call; what the server said, in words.
async fn check(p: &ConnectionProfile) -> Result<String, String> {
    let opts = crate::net::CallOptions { timeout: Some(Duration::from_secs(5)), ..Default::default() };
    match p.transport {
        TransportKind::Grpc => {
            let settings = p.grpc_settings()?;
            let t = GrpcTransport::connect(&settings).await.map_err(|e| e.to_string())?;
            let opts = crate::net::CallOptions { metadata: settings.metadata(), ..opts };
            let m = crate::schema::SchemaSet::shared_builtin()
                .pool()
                .get_service_by_name("milvus.proto.milvus.MilvusService")
                .and_then(|s| s.methods().find(|m| m.name() == "GetVersion"))
                .ok_or("the built-in schemas lack MilvusService/GetVersion")?;
            let req = prost_reflect::DynamicMessage::new(m.input());
            let r = t.call_unary(&m, &req, &opts).await.map_err(|e| e.to_string())?;
            let version = r.message.get_field_by_name("version").and_then(|v| v.as_str().map(str::to_string));
            Ok(format!("Milvus {} answered GetVersion", version.unwrap_or_else(|| "(no version)".into())))
        }
        TransportKind::Brpc | TransportKind::Http => {
            let t: Box<dyn Transport> = if p.transport == TransportKind::Brpc {
                Box::new(BrpcTransport::new(p.endpoint.clone()))
            } else {
                Box::new(HttpJsonTransport::new(p.endpoint.clone()))
            };
            let m = crate::datasync::synctool_method("TaskStatus")?;
            let req = prost_reflect::DynamicMessage::new(m.input());
            match t.call_unary(&m, &req, &opts).await {
                Ok(r) => {
                    let n = r.message.get_field_by_name("task").and_then(|v| v.as_list().map(<[_]>::len));
                    Ok(format!("SyncTool answered TaskStatus: {} sub-task(s)", n.unwrap_or(0)))
                }
                // A brpc server without the SyncTool service (a DataCollector) still answered.
                Err(crate::net::NetError::Status { numeric: 1001 | 1002, message, .. }) => Ok(format!(
                    "brpc server answered, but it is not a SyncTool (a DataCollector?): {message}"
                )),
                Err(e) => Err(e.to_string()),
            }
        }
    }
}

fn transport_name(t: TransportKind) -> &'static str {
    match t {
        TransportKind::Grpc => "gRPC",
        TransportKind::Brpc => "brpc",
        TransportKind::Http => "HTTP/JSON",
    }
}

/// The menu's contents.
pub fn menu(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    if !app.connections.loading {
        let wake = app.wake();
        app.connections.load(wake);
    }
    let profiles = app.connections.profiles();
    if profiles.is_empty() {
        ui.label("No connection profiles yet.");
    }
    egui::Grid::new("connections").striped(true).show(ui, |ui| {
        for (p, demo) in &profiles {
            ui.label(if *demo { format!("{} (demo)", p.name) } else { p.name.clone() });
            ui.label(transport_name(p.transport));
            ui.monospace(&p.endpoint);
            if p.is_insecure() {
                ui.colored_label(ui.visuals().warn_fg_color, "INSECURE");
            } else {
                ui.label("");
            }
            let result = app.connections.result(&p.name);
            let running = result == Some(CheckResult::Running);
            if ui.add_enabled(!running, egui::Button::new(format!("Check {}", p.name))).clicked()
                && let Some(rt) = app.runtime()
            {
                let wake = app.wake();
                app.connections.check(&rt, p.clone(), wake);
            }
            match result {
                None => ui.label(""),
                Some(CheckResult::Running) => ui.spinner(),
                Some(CheckResult::Ok(s)) => ui.label(format!("OK: {s}")),
                Some(CheckResult::Failed(e)) => {
                    ui.colored_label(ui.visuals().error_fg_color, format!("Failed: {e}"))
                }
            };
            ui.end_row();
        }
    });
    let load_error =
        app.connections.saved.lock().ok().and_then(|s| s.as_ref().and_then(|r| r.as_ref().err().cloned()));
    if let Some(e) = load_error {
        ui.colored_label(ui.visuals().error_fg_color, format!("Saved profiles not loaded: {e}"));
    }
    ui.separator();
    ui.label(format!("Saved profiles live in {}", ProfileStore::user().path().display()));
    ui.label("Add one by editing that file (a JSON list of profiles), then reload.");
    if ui.button("Reload saved profiles").clicked() {
        let wake = app.wake();
        app.connections.load(wake);
    }
}
