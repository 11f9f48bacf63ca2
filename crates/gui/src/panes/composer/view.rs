//! The request composer pane: a profile, a method picked from every loaded schema, the request
//! as a form and as JSON, metadata and deadline, then Send (Ctrl+Enter) or Stop (Esc); the
//! reply with its status in words, headers, trailers and timing, decoded in the detail view, and
//! an error in an OK reply's body flagged; a stream's count, rate and newest messages, saved as
//! a dump as they arrive; the call history; copy as `walscope call` or grpcurl.
//!
//! Must never: send, connect or read the disk itself (it sends commands), or send a call that
//! changes a server before the operator confirmed what it will do.

use crate::net::profile::{ConnectionProfile, TransportKind};
use crate::panes::command::{AppCommand, CallSpec, CommandSender};
use crate::panes::composer::{ComposerState, Confirm, Response};
use crate::panes::file::detail::shell_quote;
use crate::panes::file::detail_view;
use crate::widgets::look;
use eframe::egui;
use prost_reflect::DescriptorPool;

/// What the pane needs besides its own state.
pub struct ComposerView<'a> {
    pub pool: &'a DescriptorPool,
    pub profiles: &'a [(ConnectionProfile, bool)],
    /// Whether this composer takes the keyboard shortcuts (the one last clicked).
    pub focused: bool,
}

pub fn show(st: &mut ComposerState, view: &ComposerView<'_>, ui: &mut egui::Ui, tx: &CommandSender) {
    let profile = view.profiles.iter().map(|(p, _)| p).find(|p| p.name == st.profile).cloned();
    ui.horizontal_wrapped(|ui| {
        profile_picker(st, view, ui);
        if let Some(p) = &profile
            && p.is_insecure()
        {
            ui.colored_label(ui.visuals().warn_fg_color, "INSECURE connection")
                .on_hover_text("plaintext to a host that is not this machine, or TLS without verification");
        }
    });
    method_picker(st, view.pool, ui);
    crate::panes::composer::transcript::open_row(st, ui, tx);
    ui.separator();
    let Some(method) = st.method_desc(view.pool) else {
        return;
    };
    request_editor(st, view.pool, ui);
    ui.horizontal(|ui| {
        let l = ui.label("Metadata (key: value a line):");
        ui.add(egui::TextEdit::multiline(&mut st.metadata).desired_rows(2).desired_width(260.0))
            .labelled_by(l.id);
        let l = ui.label("Deadline (s):");
        ui.add(egui::TextEdit::singleline(&mut st.deadline).hint_text("profile's").desired_width(60.0))
            .labelled_by(l.id);
    });
    let (send_key, stop_key) = if view.focused {
        ui.input_mut(|i| {
            (i.consume_key(egui::Modifiers::COMMAND, egui::Key::Enter), i.key_pressed(egui::Key::Escape))
        })
    } else {
        (false, false)
    };
    let busy = st.is_busy();
    ui.horizontal(|ui| {
        let send = ui.add_enabled(
            !busy && st.confirm.is_none(),
            look::primary_button(ui, "Send").shortcut_text("Ctrl+Enter"),
        );
        if send.clicked() || (send_key && !busy && st.confirm.is_none()) {
            ask_send(st, profile.as_ref(), &method, tx);
        }
        if ui.add_enabled(busy, egui::Button::new("Stop").shortcut_text("Esc")).clicked()
            || (stop_key && busy)
        {
            stop(st, tx);
        }
        if ui.button("Copy as walscope call").clicked() {
            ui.ctx().copy_text(walscope_command(st, profile.as_ref(), &method));
        }
        let grpc = profile.as_ref().is_none_or(|p| p.transport == TransportKind::Grpc);
        let copy = ui.add_enabled(grpc, egui::Button::new("Copy as grpcurl"));
        if copy.on_disabled_hover_text("grpcurl speaks gRPC only").clicked() {
            ui.ctx().copy_text(grpcurl_command(st, profile.as_ref(), &method));
        }
        ui.toggle_value(&mut st.show_history, "History");
    });
    if let Some(why) = &st.refused {
        ui.colored_label(ui.visuals().error_fg_color, format!("Not sent: {why}"));
    }
    confirm_box(st, profile.as_ref(), &method, ui, tx);
    if st.show_history {
        crate::panes::composer::history::show(st, view.pool, ui, tx);
    }
    ui.separator();
    crate::panes::composer::response::show(st, view.pool, ui, tx);
}

fn profile_picker(st: &mut ComposerState, view: &ComposerView<'_>, ui: &mut egui::Ui) {
    let l = ui.label("Profile:");
    let shown = if st.profile.is_empty() { "(choose a connection)".to_string() } else { st.profile.clone() };
    egui::ComboBox::from_id_salt(("composer_profile", st.id))
        .selected_text(shown)
        .show_ui(ui, |ui| {
            for (p, demo) in view.profiles {
                let kind = crate::panes::connections::transport_name(p.transport);
                let mark = if p.is_insecure() { " INSECURE" } else { "" };
                let demo = if *demo { " (demo)" } else { "" };
                ui.selectable_value(
                    &mut st.profile,
                    p.name.clone(),
                    format!("{}{demo} {kind} {}{mark}", p.name, p.endpoint),
                );
            }
        })
        .response
        .labelled_by(l.id);
    if view.profiles.is_empty() {
        ui.weak("No profiles: add one in the Connections panel.");
    }
}

fn method_picker(st: &mut ComposerState, pool: &DescriptorPool, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        let l = ui.label("Method:");
        ui.add(
            egui::TextEdit::singleline(&mut st.method_search)
                .hint_text("search: DumpMessages, TaskStatus, ...")
                .desired_width(260.0),
        )
        .labelled_by(l.id);
        match &st.method {
            Some(m) => ui.monospace(m),
            None => ui.weak("none chosen"),
        };
    });
    let needle = st.method_search.trim().to_ascii_lowercase();
    if needle.is_empty() {
        // No method yet: every loaded service up front, its methods one click away.
        if st.method.is_none() {
            service_tree(st, pool, ui);
        }
        return;
    }
    let mut chosen = None;
    let current = st.method.clone();
    let id = st.id;
    let matches = st.matching_methods(pool, &needle);
    egui::ScrollArea::vertical().id_salt(("methods", id)).max_height(140.0).show(ui, |ui| {
        for (full, short, streaming) in matches.iter().take(50) {
            let text = if *streaming { format!("{short} (server stream)") } else { short.clone() };
            if ui
                .selectable_label(current.as_deref() == Some(full.as_str()), text)
                .on_hover_text(full)
                .clicked()
            {
                chosen = Some(full.clone());
            }
        }
        if matches.len() > 50 {
            ui.weak("... more: narrow the search");
        }
        if matches.is_empty() {
            ui.weak(
                "No loaded method matches. Load its schema in the Schemas panel, or fetch it by reflection.",
            );
        }
    });
    if let Some(full) = chosen {
        st.set_method(pool, &full);
        st.method_search.clear();
    }
}

/// The loaded services and their methods (the search narrows them), for a composer with no
/// method chosen yet.
fn service_tree(st: &mut ComposerState, pool: &DescriptorPool, ui: &mut egui::Ui) {
    let id = st.id;
    let methods = st.matching_methods(pool, "").to_vec();
    if methods.is_empty() {
        crate::widgets::look::empty_state(
            ui,
            "No services are loaded.",
            "Load a schema in the Schemas pane (a .proto file or a descriptor set), or fetch one by reflection.",
        );
        return;
    }
    let mut chosen = None;
    // A method's service by its full name (two packages may both have a `DataService`).
    let service_of = |full: &str| full.rsplit_once('.').map_or(String::new(), |(s, _)| s.to_string());
    let count =
        methods.iter().map(|(full, _, _)| service_of(full)).collect::<std::collections::BTreeSet<_>>().len();
    ui.weak(format!(
        "{} in {}: pick one, or type part of its name above.",
        walscope_core::fmt::counted(methods.len() as u64, "method"),
        walscope_core::fmt::counted(count as u64, "service")
    ));
    egui::ScrollArea::vertical().id_salt(("services", id)).max_height(240.0).show(ui, |ui| {
        let mut i = 0;
        while i < methods.len() {
            let service = service_of(&methods[i].0);
            let end = methods[i..]
                .iter()
                .position(|(full, _, _)| service_of(full) != service)
                .map_or(methods.len(), |n| i + n);
            let short = methods[i].1.split_once('/').map_or("", |(s, _)| s);
            egui::CollapsingHeader::new(format!("{short} ({})", end - i))
                .id_salt(("service", id, &service))
                .default_open(count <= 3)
                .show(ui, |ui| {
                    for (full, short, streaming) in &methods[i..end] {
                        let name = short.split_once('/').map_or(short.as_str(), |(_, m)| m);
                        let text =
                            if *streaming { format!("{name} (server stream)") } else { name.to_string() };
                        if ui.selectable_label(false, text).on_hover_text(full).clicked() {
                            chosen = Some(full.clone());
                        }
                    }
                });
            i = end;
        }
    });
    if let Some(full) = chosen {
        st.set_method(pool, &full);
    }
}

/// The request: JSON on the left, the form (the message detail and its field editor) on the right.
fn request_editor(st: &mut ComposerState, pool: &DescriptorPool, ui: &mut egui::Ui) {
    let input = st.method_desc(pool).map(|m| m.input());
    ui.horizontal(|ui| {
        ui.strong("Request");
        if let Some(i) = &input {
            ui.monospace(i.full_name());
        }
        if ui.button("Template").on_hover_text("every field of the type, at its empty value").clicked() {
            st.template(pool);
        }
        if ui.button("Clear").clicked() {
            st.request.clear();
            st.refresh(pool);
        }
        ui.weak(format!("{} bytes", st.request.len()));
    });
    let mut edit = None;
    ui.columns(2, |cols| {
        let l = cols[0].label("As JSON (checked against the schema as you type):");
        let r = cols[0].add(
            egui::TextEdit::multiline(&mut st.json)
                .code_editor()
                .desired_rows(10)
                .desired_width(f32::INFINITY)
                .id_salt(("request_json", st.id)),
        );
        let r = r.labelled_by(l.id);
        if r.changed() {
            st.json_changed(pool);
        }
        if let Some(e) = &st.json_error {
            cols[0].colored_label(cols[0].visuals().error_fg_color, format!("Not applied: {e}"));
        }
        let ui = &mut cols[1];
        ui.label("As a form:");
        if let Some(d) = st.request_detail.as_mut() {
            if let Some(root) = &input
                && ui.button("Add a field / edit the whole message").clicked()
            {
                d.select_root(root);
            }
            ui.push_id(("request_detail", st.id), |ui| {
                edit = detail_view::show(d, ui, (std::path::Path::new("request"), "single"), input.as_ref());
            });
        }
    });
    if let Some(req) = edit {
        st.edit(pool, req);
    }
}

/// Send pressed: refuse what cannot go out, ask to confirm what changes a server, else send.
fn ask_send(
    st: &mut ComposerState,
    profile: Option<&ConnectionProfile>,
    method: &prost_reflect::MethodDescriptor,
    tx: &CommandSender,
) {
    st.refused = None;
    let Some(profile) = profile else {
        st.refused = Some("choose a connection profile first".into());
        return;
    };
    if st.json_error.is_some() {
        st.refused = Some("the JSON does not parse; fix it or clear it".into());
        return;
    }
    let request = match crate::codec::decode(&method.input(), &st.request) {
        Ok(d) => d.message,
        Err(e) => {
            st.refused = Some(format!("the request is not a valid {}: {e}", method.input().full_name()));
            return;
        }
    };
    match crate::net::guard::assess(method, &request, &profile.endpoint, &profile.confirm_methods) {
        Some(guard) => {
            st.confirm = Some(Confirm { guard, typed: String::new(), stream: method.is_server_streaming() })
        }
        None => send(st, profile, method, tx),
    }
}

fn send(
    st: &mut ComposerState,
    profile: &ConnectionProfile,
    method: &prost_reflect::MethodDescriptor,
    tx: &CommandSender,
) {
    let metadata = match st.metadata_pairs() {
        Ok(m) => m,
        Err(e) => {
            st.refused = Some(e.to_string());
            return;
        }
    };
    let deadline = match st.deadline() {
        Ok(d) => d,
        Err(e) => {
            st.refused = Some(e.to_string());
            return;
        }
    };
    st.confirm = None;
    tx.send(AppCommand::Call(Box::new(CallSpec {
        composer: st.id,
        profile: profile.clone(),
        method: method.full_name().to_string(),
        request: st.request.clone(),
        metadata,
        deadline,
        stream: method.is_server_streaming(),
    })));
}

fn stop(st: &mut ComposerState, tx: &CommandSender) {
    match &st.response {
        Response::Waiting { job, .. } => tx.send(AppCommand::CancelJob(*job)),
        Response::Stream(s) => tx.send(AppCommand::CancelJob(s.job)),
        _ => {}
    }
}

fn confirm_box(
    st: &mut ComposerState,
    profile: Option<&ConnectionProfile>,
    method: &prost_reflect::MethodDescriptor,
    ui: &mut egui::Ui,
    tx: &CommandSender,
) {
    let Some(c) = st.confirm.as_mut() else { return };
    // A modal over the window: never where "Send" was, so a double click cannot confirm.
    let what = format!(
        "This call changes the server{}: it {}.",
        profile.map_or(String::new(), |p| format!(" {} ({})", p.name, p.endpoint)),
        c.guard.what
    );
    let modal = look::Confirm {
        title: "Send this call?",
        what: &what,
        action: "Send it",
        typed_word: c.guard.typed_word,
    };
    let answer = modal.show(ui.ctx(), egui::Id::unique(("composer_confirm", st.id)), &mut c.typed);
    let (go, cancel) = (answer == look::Answer::Confirmed, answer == look::Answer::Cancelled);
    if cancel {
        st.confirm = None;
    } else if go && let Some(p) = profile {
        // What goes out must be what was confirmed: the request, profile or method may have
        // changed while the box was open.
        let now = crate::codec::decode(&method.input(), &st.request)
            .ok()
            .and_then(|d| crate::net::guard::assess(method, &d.message, &p.endpoint, &p.confirm_methods));
        match now {
            Some(g) if st.confirm.as_ref().is_some_and(|c| c.guard == g) => send(st, p, method, tx),
            Some(g) => {
                st.confirm =
                    Some(Confirm { guard: g, typed: String::new(), stream: method.is_server_streaming() });
                st.refused = Some("the call changed since you confirmed it: read the box again".into());
            }
            None => send(st, p, method, tx),
        }
    }
}

/// `walscope call` with this request, through the profile.
pub fn walscope_command(
    st: &ComposerState,
    profile: Option<&ConnectionProfile>,
    m: &prost_reflect::MethodDescriptor,
) -> String {
    let target = profile.map_or("ENDPOINT".to_string(), |p| p.name.clone());
    let json = compact_json(st);
    let mut cmd = format!(
        "walscope call {} {}/{} -d {}",
        shell_quote(&target),
        m.parent_service().full_name(),
        m.name(),
        shell_quote(&json)
    );
    for (k, v) in st.metadata_pairs().unwrap_or_default() {
        cmd.push_str(&format!(" -H {}", shell_quote(&format!("{k}:{v}"))));
    }
    if let Ok(Some(d)) = st.deadline() {
        cmd.push_str(&format!(" --timeout {}", d.as_secs_f64()));
    }
    cmd
}

/// The same call for grpcurl (gRPC profiles).
pub fn grpcurl_command(
    st: &ComposerState,
    profile: Option<&ConnectionProfile>,
    m: &prost_reflect::MethodDescriptor,
) -> String {
    use crate::net::profile::TlsSettings;
    let mut cmd = String::from("grpcurl");
    match profile.map(|p| &p.tls) {
        None | Some(TlsSettings::Plaintext) => cmd.push_str(" -plaintext"),
        Some(TlsSettings::Insecure) => cmd.push_str(" -insecure"),
        Some(TlsSettings::CaFile { ca_file }) => {
            cmd.push_str(&format!(" -cacert {}", shell_quote(&ca_file.display().to_string())))
        }
        Some(TlsSettings::System) => {}
    }
    if let Some(p) = profile {
        for (k, v) in &p.headers {
            cmd.push_str(&format!(" -H {}", shell_quote(&format!("{k}: {v}"))));
        }
        if let Some(db) = &p.db_name {
            cmd.push_str(&format!(" -H {}", shell_quote(&format!("dbname: {db}"))));
        }
    }
    for (k, v) in st.metadata_pairs().unwrap_or_default() {
        cmd.push_str(&format!(" -H {}", shell_quote(&format!("{k}: {v}"))));
    }
    let endpoint = profile.map_or("HOST:PORT".to_string(), |p| p.endpoint.clone());
    cmd.push_str(&format!(
        " -d {} {} {}/{}",
        shell_quote(&compact_json(st)),
        endpoint,
        m.parent_service().full_name(),
        m.name()
    ));
    cmd
}

fn compact_json(st: &ComposerState) -> String {
    serde_json::from_str::<serde_json::Value>(&st.json).map(|v| v.to_string()).unwrap_or_else(|_| "{}".into())
}
