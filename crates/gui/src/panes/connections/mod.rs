//! The Connections pane: every profile (saved in profiles.json, and the in-memory ones `--demo`
//! adds) with its transport, endpoint and security; create, edit, duplicate, test and delete;
//! "Test" says how fast the server answered, its version where it has one, whether reflection
//! answers, or why it failed in words. Insecure profiles are marked.
//!
//! Owns: [`ConnectionsState`]. Must never: call the network or touch profiles.json itself (it
//! sends commands; jobs do), write demo profiles to disk, or hold a secret (profiles name where
//! their secret comes from).

pub mod profile_editor;
pub mod profile_form;

use crate::net::probe::ProbeReport;
use crate::net::profile::{ConnectionProfile, TransportKind};
use crate::panes::command::{AppCommand, CommandSender};
use crate::panes::connections::profile_form::{AuthChoice, ProfileForm, SecretChoice, TlsChoice};
use crate::panes::outcome::{JobError, JobOutput};
use eframe::egui;
use std::collections::HashMap;

/// The outcome of one test.
#[derive(Debug, Clone)]
pub enum CheckResult {
    Running,
    Done(Box<ProbeReport>),
}

impl CheckResult {
    /// The result as a label: plain when it answered, in the error colour when it did not.
    pub fn show(&self, ui: &mut egui::Ui) {
        let text = self.text();
        let colour =
            if text.starts_with("Failed") { ui.visuals().error_fg_color } else { ui.visuals().text_color() };
        ui.colored_label(colour, text);
    }

    /// In words: "OK: …" or "Failed: …".
    pub fn text(&self) -> String {
        match self {
            CheckResult::Running => "testing...".into(),
            CheckResult::Done(r) if r.ok() => {
                let reflection = match &r.reflection {
                    Some(Ok(s)) => format!("; reflection answers ({} services)", s.len()),
                    Some(Err(e)) => format!("; reflection: {e}"),
                    None => String::new(),
                };
                format!("OK: {}{reflection}", r.summary())
            }
            CheckResult::Done(r) => format!("Failed: {}", r.summary()),
        }
    }
}

#[derive(Default)]
pub struct ConnectionsState {
    /// Added by `--demo`; never saved.
    pub demo: Vec<ConnectionProfile>,
    /// From profiles.json, read by a job (None: not read yet).
    pub saved: Option<Result<Vec<ConnectionProfile>, JobError>>,
    /// A read of profiles.json was asked for.
    pub loading: bool,
    /// Test results by profile name.
    pub checks: HashMap<String, CheckResult>,
    /// The profile being created or edited.
    pub form: Option<ProfileForm>,
    /// The last "Test these settings" of the form (the unsaved settings: never a card's result).
    pub form_check: Option<CheckResult>,
    /// A profile whose deletion waits for "Delete" to be pressed again.
    pub confirm_delete: Option<String>,
    /// What the last save or delete said.
    pub note: Option<Result<String, JobError>>,
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

    fn names(&self) -> Vec<String> {
        self.profiles().into_iter().map(|(p, _)| p.name).collect()
    }

    /// Takes a finished job of this panel's (a read of profiles.json, a test, a save).
    pub fn take(&mut self, result: Result<JobOutput, JobError>) {
        match result {
            Ok(JobOutput::Profiles(p)) => self.saved = Some(Ok(p)),
            Ok(JobOutput::Probed(r)) => {
                self.checks.insert(r.profile.clone(), CheckResult::Done(r));
            }
            // Shown in the form only while it is open.
            Ok(JobOutput::FormProbed(r)) => {
                if self.form.is_some() {
                    self.form_check = Some(CheckResult::Done(r));
                }
            }
            Ok(JobOutput::ProfilesSaved { profiles, what }) => {
                self.saved = Some(Ok(profiles));
                self.note = Some(Ok(what));
            }
            Ok(_) => {}
            Err(e) => self.note = Some(Err(e)),
        }
    }
}

pub fn transport_name(t: TransportKind) -> &'static str {
    match t {
        TransportKind::Grpc => "gRPC",
        TransportKind::Brpc => "brpc",
        TransportKind::Http => "HTTP/JSON",
    }
}

impl super::Pane for ConnectionsState {
    fn title(&self, _view: &super::AppView<'_>) -> String {
        "Connections".into()
    }

    fn draw(&mut self, ui: &mut egui::Ui, view: &super::AppView<'_>, tx: &CommandSender) {
        egui::ScrollArea::vertical()
            .id_salt("connections_panel")
            .show(ui, |ui| show(self, &view.profiles_file, ui, tx));
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// The pane; `store` is where profiles are saved (shown to the operator).
pub fn show(st: &mut ConnectionsState, store: &std::path::Path, ui: &mut egui::Ui, tx: &CommandSender) {
    if !st.loading {
        st.loading = true;
        tx.send(AppCommand::LoadProfiles);
    }
    ui.heading("Connections");
    ui.horizontal(|ui| {
        if ui.button("New profile").clicked() {
            st.form = Some(ProfileForm::default());
        }
        if ui.button("Reload saved profiles").clicked() {
            tx.send(AppCommand::LoadProfiles);
        }
        ui.weak(format!("saved in {}", store.display()));
    });
    match &st.note {
        Some(Ok(n)) => {
            ui.label(n);
        }
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().error_fg_color, e.to_string());
        }
        None => {}
    }
    if let Some(Err(e)) = &st.saved {
        ui.colored_label(ui.visuals().error_fg_color, format!("Saved profiles not loaded: {e}"));
    }
    let profiles = st.profiles();
    if profiles.is_empty() {
        ui.label("No connection profiles yet: press New profile.");
    }
    for (p, demo) in &profiles {
        egui::Frame::group(ui.style()).show(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                ui.strong(if *demo { format!("{} (demo)", p.name) } else { p.name.clone() });
                ui.label(transport_name(p.transport));
                ui.monospace(&p.endpoint);
                if p.is_insecure() {
                    ui.colored_label(ui.visuals().warn_fg_color, "INSECURE").on_hover_text(
                        "plaintext to a host that is not this machine, or TLS without verification",
                    );
                } else {
                    ui.label(security(p));
                }
            });
            ui.horizontal_wrapped(|ui| row_buttons(st, p, *demo, ui, tx));
            match st.result(&p.name) {
                None => {}
                Some(CheckResult::Running) => {
                    ui.horizontal(|ui| {
                        crate::widgets::look::busy(ui);
                        ui.label("testing...");
                    });
                }
                Some(r @ CheckResult::Done(_)) => r.show(ui),
            }
        });
    }
    let names = st.names();
    if let Some(form) = st.form.as_mut() {
        ui.separator();
        if let Some(action) = crate::panes::connections::profile_editor::show(form, &names, ui) {
            match action {
                crate::panes::connections::profile_editor::FormAction::Save(profile) => {
                    tx.send(AppCommand::SaveProfile { original: form.original.clone(), profile });
                    st.form = None;
                }
                crate::panes::connections::profile_editor::FormAction::Test(profile) => {
                    st.form_check = Some(CheckResult::Running);
                    tx.send(AppCommand::CheckForm(profile));
                }
                crate::panes::connections::profile_editor::FormAction::Cancel => st.form = None,
            }
        }
        // The test of these settings, right under the button that asked for it.
        match &st.form_check {
            None => {}
            Some(CheckResult::Running) => {
                ui.horizontal(|ui| {
                    crate::widgets::look::busy(ui);
                    ui.label("testing these settings...");
                });
            }
            Some(r @ CheckResult::Done(_)) => r.show(ui),
        }
    }
    if st.form.is_none() {
        st.form_check = None;
    }
}

fn security(p: &ConnectionProfile) -> String {
    use crate::net::profile::TlsSettings;
    let tls = match &p.tls {
        TlsSettings::Plaintext => "plaintext (loopback)",
        TlsSettings::System => "TLS",
        TlsSettings::CaFile { .. } => "TLS (own CA)",
        TlsSettings::Insecure => "TLS unverified",
    };
    let mtls = if p.client_cert.is_some() { ", client cert" } else { "" };
    let auth = if p.auth.is_some() { ", auth" } else { "" };
    format!("{tls}{mtls}{auth}")
}

fn row_buttons(
    st: &mut ConnectionsState,
    p: &ConnectionProfile,
    demo: bool,
    ui: &mut egui::Ui,
    tx: &CommandSender,
) {
    use crate::widgets::look::{self, named, named_button};
    // The card shows the profile's name: its buttons say only what they do (their accessible
    // names say whose).
    let running = matches!(st.result(&p.name), Some(CheckResult::Running));
    let test = ui.add_enabled_ui(!running, |ui| named_button(ui, "Test", &format!("Test {}", p.name)));
    if test.inner.clicked() {
        st.checks.insert(p.name.clone(), CheckResult::Running);
        tx.send(AppCommand::CheckProfile(p.clone()));
    }
    if named_button(ui, "Compose", &format!("Compose with {}", p.name)).clicked() {
        tx.send(AppCommand::NewComposer { profile: Some(p.name.clone()), method: None, request: Vec::new() });
    }
    if named_button(ui, "Duplicate", &format!("Duplicate {}", p.name)).clicked() {
        st.form = Some(ProfileForm::duplicate(p, &st.names()));
    }
    if demo {
        ui.weak("demo: not saved");
        return;
    }
    if named_button(ui, "Edit", &format!("Edit {}", p.name)).clicked() {
        st.form = Some(ProfileForm::from_profile(p));
    }
    if named(ui, look::danger_button(ui, "Delete"), &format!("⚠ Delete {}", p.name)).clicked() {
        st.confirm_delete = Some(p.name.clone());
    }
    // Asked in a modal over the window, never where the button was (a double click cannot
    // delete).
    if st.confirm_delete.as_deref() == Some(p.name.as_str()) {
        let what = format!(
            "This removes the profile {} ({}) from profiles.json. The server is not touched; the \
             profile's settings are gone unless you add it again.",
            p.name, p.endpoint
        );
        let c = crate::widgets::look::Confirm {
            title: "Delete this profile?",
            what: &what,
            action: "Delete the profile",
            typed_word: None,
        };
        let mut typed = String::new();
        match c.show(ui.ctx(), egui::Id::unique(("delete_profile", &p.name)), &mut typed) {
            crate::widgets::look::Answer::Open => {}
            crate::widgets::look::Answer::Confirmed => {
                tx.send(AppCommand::DeleteProfile(p.name.clone()));
                st.confirm_delete = None;
            }
            crate::widgets::look::Answer::Cancelled => st.confirm_delete = None,
        }
    }
}

/// The editor's choices, drawn by [`crate::panes::connections::profile_editor`].
pub(crate) fn tls_choices() -> [TlsChoice; 4] {
    TlsChoice::ALL
}

pub(crate) fn auth_label(a: AuthChoice) -> &'static str {
    match a {
        AuthChoice::None => "none",
        AuthChoice::UserPassword => "user + password",
        AuthChoice::Token => "token / API key",
    }
}

pub(crate) fn secret_label(s: SecretChoice) -> &'static str {
    match s {
        SecretChoice::Env => "environment variable",
        SecretChoice::Keyring => "OS keyring entry",
    }
}
