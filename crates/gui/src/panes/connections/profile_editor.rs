//! The form that creates or edits one connection profile: transport, endpoint, TLS mode and
//! files, credentials by reference, headers, database, timeout, the methods to confirm. The
//! reason a save is refused shows at the field.
//!
//! Must never: ask for a secret itself (only where it comes from), or save what does not
//! validate.

use crate::net::profile::{ConnectionProfile, TransportKind};
use crate::panes::connections::profile_form::{AuthChoice, ProfileForm, SecretChoice};
use crate::panes::connections::{auth_label, secret_label, tls_choices};
use eframe::egui;

pub enum FormAction {
    Save(ConnectionProfile),
    Test(ConnectionProfile),
    Cancel,
}

/// Draws the form; `names` are every profile's name (a new name must not be taken).
pub fn show(f: &mut ProfileForm, names: &[String], ui: &mut egui::Ui) -> Option<FormAction> {
    let mut action = None;
    let error_at = |f: &ProfileForm, field: &str| {
        f.error.as_ref().filter(|(at, _)| *at == field).map(|(_, e)| e.clone())
    };
    ui.strong(match &f.original {
        Some(n) => format!("Edit profile {n}"),
        None => "New profile".to_string(),
    });
    egui::Grid::new("profile_form").num_columns(3).show(ui, |ui| {
        let row = |ui: &mut egui::Ui,
                   label: &str,
                   field: &str,
                   f: &mut ProfileForm,
                   widget: &mut dyn FnMut(&mut egui::Ui, &mut ProfileForm, egui::Id)| {
            let l = ui.label(label);
            widget(ui, f, l.id);
            match error_at(f, field) {
                Some(e) => ui.colored_label(ui.visuals().error_fg_color, e),
                None => ui.label(""),
            };
            ui.end_row();
        };
        row(ui, "Name:", "name", f, &mut |ui, f, id| {
            ui.add(egui::TextEdit::singleline(&mut f.name).desired_width(220.0)).labelled_by(id);
        });
        row(ui, "Transport:", "transport", f, &mut |ui, f, _| {
            crate::widgets::look::segmented(
                ui,
                &mut f.transport,
                &[
                    (TransportKind::Grpc, "gRPC (Milvus)"),
                    (TransportKind::Brpc, "brpc (OpenMLDB)"),
                    (TransportKind::Http, "HTTP/JSON (SyncTool)"),
                ],
            );
        });
        row(ui, "Endpoint (host:port):", "endpoint", f, &mut |ui, f, id| {
            ui.add(
                egui::TextEdit::singleline(&mut f.endpoint).hint_text("127.0.0.1:19530").desired_width(220.0),
            )
            .labelled_by(id);
        });
        row(ui, "TLS:", "TLS", f, &mut |ui, f, id| {
            egui::ComboBox::from_id_salt("tls_mode")
                .selected_text(f.tls.label())
                .show_ui(ui, |ui| {
                    for c in tls_choices() {
                        ui.selectable_value(&mut f.tls, c, c.label());
                    }
                })
                .response
                .labelled_by(id);
        });
        if f.tls == crate::panes::connections::profile_form::TlsChoice::CaFile {
            row(ui, "CA file (PEM):", "CA file", f, &mut |ui, f, id| {
                ui.add(egui::TextEdit::singleline(&mut f.ca_file).desired_width(260.0)).labelled_by(id);
            });
        }
        row(ui, "Client certificate (mutual TLS):", "client certificate", f, &mut |ui, f, id| {
            ui.add(egui::TextEdit::singleline(&mut f.cert_file).hint_text("cert.pem").desired_width(180.0))
                .labelled_by(id);
            let l = ui.label("key:");
            ui.add(egui::TextEdit::singleline(&mut f.key_file).hint_text("key.pem").desired_width(140.0))
                .labelled_by(l.id);
        });
        row(ui, "Auth:", "auth", f, &mut |ui, f, id| {
            egui::ComboBox::from_id_salt("auth_kind")
                .selected_text(auth_label(f.auth))
                .show_ui(ui, |ui| {
                    for a in [AuthChoice::None, AuthChoice::UserPassword, AuthChoice::Token] {
                        ui.selectable_value(&mut f.auth, a, auth_label(a));
                    }
                })
                .response
                .labelled_by(id);
        });
        if f.auth == AuthChoice::UserPassword {
            row(ui, "User:", "user", f, &mut |ui, f, id| {
                ui.add(egui::TextEdit::singleline(&mut f.user).desired_width(160.0)).labelled_by(id);
            });
        }
        if f.auth != AuthChoice::None {
            row(ui, "Secret comes from:", "secret", f, &mut |ui, f, id| {
                egui::ComboBox::from_id_salt("secret_from")
                    .selected_text(secret_label(f.secret))
                    .show_ui(ui, |ui| {
                        for s in [SecretChoice::Env, SecretChoice::Keyring] {
                            ui.selectable_value(&mut f.secret, s, secret_label(s));
                        }
                    })
                    .response
                    .labelled_by(id);
                match f.secret {
                    SecretChoice::Env => {
                        let l = ui.label("variable:");
                        ui.add(
                            egui::TextEdit::singleline(&mut f.secret_env)
                                .hint_text("MILVUS_PASSWORD")
                                .desired_width(160.0),
                        )
                        .labelled_by(l.id);
                    }
                    SecretChoice::Keyring => {
                        let l = ui.label("service:");
                        ui.add(egui::TextEdit::singleline(&mut f.keyring_service).desired_width(120.0))
                            .labelled_by(l.id);
                        let l = ui.label("account:");
                        ui.add(egui::TextEdit::singleline(&mut f.keyring_account).desired_width(120.0))
                            .labelled_by(l.id);
                    }
                }
            });
        }
        row(ui, "Headers (key: value a line):", "headers", f, &mut |ui, f, id| {
            ui.add(egui::TextEdit::multiline(&mut f.headers).desired_rows(2).desired_width(260.0))
                .labelled_by(id);
        });
        row(ui, "Database (Milvus dbname):", "database", f, &mut |ui, f, id| {
            ui.add(egui::TextEdit::singleline(&mut f.database).hint_text("default").desired_width(160.0))
                .labelled_by(id);
        });
        row(ui, "Timeout (s):", "timeout", f, &mut |ui, f, id| {
            ui.add(egui::TextEdit::singleline(&mut f.timeout_secs).hint_text("30").desired_width(60.0))
                .labelled_by(id);
        });
        row(ui, "Also confirm these methods (a line each):", "confirm", f, &mut |ui, f, id| {
            ui.add(egui::TextEdit::multiline(&mut f.confirm_methods).desired_rows(2).desired_width(260.0))
                .labelled_by(id);
        });
    });
    ui.horizontal(|ui| {
        if ui.button("Save profile").clicked() {
            match f.to_profile(names) {
                Ok(p) => action = Some(FormAction::Save(p)),
                Err(e) => f.error = Some(e),
            }
        }
        if ui.button("Test these settings").clicked() {
            // A test needs no unique name: it is not saved.
            let others: Vec<String> = Vec::new();
            match f.to_profile(&others) {
                Ok(p) => {
                    f.error = None;
                    action = Some(FormAction::Test(p));
                }
                Err(e) => f.error = Some(e),
            }
        }
        if ui.button("Cancel").clicked() {
            action = Some(FormAction::Cancel);
        }
    });
    if let Some((field, e)) = &f.error {
        ui.colored_label(ui.visuals().error_fg_color, format!("Not saved: {field}: {e}"));
    }
    action
}
