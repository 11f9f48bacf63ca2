//! The Connections menu: saved profiles (profiles.json) and the in-memory ones `--demo` adds,
//! each with its transport and endpoint, and a "Check" that makes one harmless call in the
//! background (GetVersion for gRPC Milvus, TaskStatus for brpc/HTTP SyncTool) and shows the
//! answer and latency, or the error in words.
//!
//! Owns: [`ConnectionsState`]. Must never: call the network or read profiles.json itself (it
//! sends commands; jobs do), write demo profiles to disk, or show a secret.

use crate::net::profile::{ConnectionProfile, ProfileStore, TransportKind};
use crate::ui::WalscopeApp;
use crate::ui::command::AppCommand;
use crate::ui::outcome::{JobError, JobOutput};
use eframe::egui;
use std::collections::HashMap;

/// The outcome of one check, in words.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckResult {
    Running,
    Ok(String),
    Failed(String),
}

#[derive(Default)]
pub struct ConnectionsState {
    /// Added by `--demo`; never saved.
    pub demo: Vec<ConnectionProfile>,
    /// From profiles.json, read by a job (None: not read yet).
    pub saved: Option<Result<Vec<ConnectionProfile>, String>>,
    /// A read of profiles.json was asked for.
    pub loading: bool,
    /// Check results by profile name.
    pub checks: HashMap<String, CheckResult>,
}

impl ConnectionsState {
    /// Every profile shown: demo ones first, then the saved ones.
    pub fn profiles(&self) -> Vec<(ConnectionProfile, bool)> {
        let mut all: Vec<(ConnectionProfile, bool)> = self.demo.iter().map(|p| (p.clone(), true)).collect();
        if let Some(Ok(saved)) = &self.saved {
            all.extend(saved.iter().map(|p| (p.clone(), false)));
        }
        all
    }

    pub fn result(&self, name: &str) -> Option<CheckResult> {
        self.checks.get(name).cloned()
    }

    /// Takes a finished job of this panel's (a read of profiles.json, a check).
    pub fn take(&mut self, result: Result<JobOutput, JobError>) {
        match result {
            Ok(JobOutput::Profiles(p)) => self.saved = Some(Ok(p)),
            Ok(JobOutput::Check { profile, outcome }) => {
                let r = match outcome {
                    Ok(what) => CheckResult::Ok(what),
                    Err(e) => CheckResult::Failed(e),
                };
                self.checks.insert(profile, r);
            }
            Err(e) => self.saved = Some(Err(e.to_string())),
            Ok(_) => {}
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
        app.connections.loading = true;
        app.send(AppCommand::LoadProfiles);
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
            if ui.add_enabled(!running, egui::Button::new(format!("Check {}", p.name))).clicked() {
                app.connections.checks.insert(p.name.clone(), CheckResult::Running);
                app.send(AppCommand::CheckProfile(p.clone()));
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
    let load_error = app.connections.saved.as_ref().and_then(|r| r.as_ref().err().cloned());
    if let Some(e) = load_error {
        ui.colored_label(ui.visuals().error_fg_color, format!("Saved profiles not loaded: {e}"));
    }
    ui.separator();
    ui.label(format!("Saved profiles live in {}", ProfileStore::user().path().display()));
    ui.label("Add one by editing that file (a JSON list of profiles), then reload.");
    if ui.button("Reload saved profiles").clicked() {
        app.send(AppCommand::LoadProfiles);
    }
}
