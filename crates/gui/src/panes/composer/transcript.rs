//! A composer's transcripts: "Save transcript" of the last call (the transcript the call's job
//! recorded, written by the app in `work/transcript.rs`), and "Open transcript": a transcript
//! read back fills the composer (profile, method, exact request bytes, metadata, deadline) and
//! shows the recorded reply, ready to send again (through the same confirmation as any call).
//!
//! Must never: read or write a file itself (it sends commands), or put a redacted secret back
//! into the metadata (the profile supplies credentials).

use super::{ComposerState, FailureView, Response, UnaryView};
use crate::jobs::JobId;
use crate::net::profile::ConnectionProfile;
use crate::net::transcript::{MethodKind, REDACTED, Transcript};
use crate::panes::command::{AppCommand, CommandSender};
use crate::panes::file::detail::{DetailSource, MessageDetail};
use crate::panes::outcome::{JobError, JobOutput, JobResult};
use eframe::egui;
use prost_reflect::DescriptorPool;
use std::path::PathBuf;

/// What the composer keeps for its transcripts.
#[derive(Default)]
pub struct TranscriptState {
    /// The last call's transcript (or the one opened), for "Save transcript".
    pub last: Option<Box<Transcript>>,
    pub save_as: String,
    /// "Replace an existing file": without it, a file already at `save_as` is refused.
    pub replace: bool,
    /// The save running, and what the last one said.
    pub saving: Option<JobId>,
    pub save_note: Option<Result<PathBuf, JobError>>,
    /// The path typed for "Open transcript", the read running, and what it said.
    pub open_path: String,
    pub opening: Option<JobId>,
    pub open_note: Option<Result<String, JobError>>,
}

/// "Open transcript": a path and the button, and what the last opening said.
pub fn open_row(st: &mut ComposerState, ui: &mut egui::Ui, tx: &CommandSender) {
    let t = &mut st.transcript;
    ui.horizontal(|ui| {
        let l = ui.label("Transcript file:");
        ui.add(
            egui::TextEdit::singleline(&mut t.open_path)
                .hint_text("a transcript .json saved by walscope")
                .desired_width(320.0),
        )
        .labelled_by(l.id);
        let open = ui.add_enabled(!t.open_path.trim().is_empty(), egui::Button::new("Open transcript"));
        if open.clicked() {
            t.open_note = None;
            tx.send(AppCommand::OpenTranscript { composer: Some(st.id), path: t.open_path.trim().into() });
        }
    });
    note(ui, t.open_note.as_ref().map(|r| r.as_ref().map(|w| w.to_string())));
}

/// "Save transcript" of the call shown, when there is one.
pub fn save_row(st: &mut ComposerState, ui: &mut egui::Ui, tx: &CommandSender) {
    let id = st.id;
    let t = &mut st.transcript;
    let Some(doc) = &t.last else { return };
    if t.save_as.is_empty() {
        let name = doc.method.full_name.rsplit('.').next().unwrap_or("call");
        let file = format!("{name}-{}.transcript.json", walscope_core::time::stamp(doc.timing.start_ms));
        // Said in full, so the operator sees where it goes (the working folder, not the disk's
        // root); asking for the folder is a cheap call, not a read of the disk.
        t.save_as = std::env::current_dir().unwrap_or_default().join(file).display().to_string();
    }
    ui.horizontal(|ui| {
        let l = ui.label("Save transcript as:");
        ui.add(egui::TextEdit::singleline(&mut t.save_as).desired_width(320.0)).labelled_by(l.id);
        let b = ui.add_enabled(!t.save_as.trim().is_empty(), egui::Button::new("Save transcript"));
        if b.on_hover_text("the whole call as one JSON document, secrets redacted").clicked() {
            t.save_note = None;
            tx.send(AppCommand::SaveTranscript {
                composer: id,
                doc: doc.clone(),
                to: t.save_as.trim().into(),
                replace: t.replace,
            });
        }
        ui.checkbox(&mut t.replace, "Replace an existing file")
            .on_hover_text("the file there now is kept as .bak");
    });
    note(ui, t.save_note.as_ref().map(|r| r.as_ref().map(|p| format!("saved {}", p.display()))));
}

fn note(ui: &mut egui::Ui, note: Option<Result<String, &JobError>>) {
    match note {
        Some(Ok(words)) => {
            ui.label(words);
        }
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().error_fg_color, e.to_string());
        }
        None => {}
    }
}

/// Takes the results of the composer's transcript jobs; hands any other back.
pub fn apply(
    c: &mut ComposerState,
    job: crate::jobs::JobId,
    result: JobResult,
    pool: &DescriptorPool,
    profiles: &[(ConnectionProfile, bool)],
) -> Option<JobResult> {
    if c.transcript.saving == Some(job) {
        c.transcript.saving = None;
        c.transcript.save_note = match result {
            Ok(JobOutput::TranscriptSaved { path, .. }) => Some(Ok(path)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        };
        return None;
    }
    if c.transcript.opening == Some(job) {
        c.transcript.opening = None;
        match result {
            Ok(JobOutput::TranscriptOpened { path, doc, .. }) => c.opened(*doc, &path, pool, profiles),
            Ok(_) => {}
            Err(e) => c.transcript.open_note = Some(Err(e)),
        }
        return None;
    }
    Some(result)
}

impl ComposerState {
    /// Fills the composer from a transcript and shows its recorded reply.
    pub fn opened(
        &mut self,
        doc: Transcript,
        path: &std::path::Path,
        pool: &DescriptorPool,
        profiles: &[(ConnectionProfile, bool)],
    ) {
        let target = &doc.target;
        let mut words = format!(
            "Opened {}: {} to {} over {}, recorded {} UTC. The reply below is the recorded one; \
             Send sends the same request bytes again.",
            path.display(),
            doc.method.full_name,
            target.endpoint,
            crate::panes::connections::transport_name(target.transport),
            doc.timing.start_utc
        );
        let by_name =
            target.profile.as_ref().filter(|n| profiles.iter().any(|(p, _)| &p.name == *n)).cloned();
        let by_endpoint = || {
            profiles
                .iter()
                .find(|(p, _)| {
                    p.transport == target.transport
                        && crate::net::edges::without_userinfo(&p.endpoint) == target.endpoint
                })
                .map(|(p, _)| p.name.clone())
        };
        match by_name.or_else(by_endpoint) {
            Some(name) => self.profile = name,
            None => words.push_str(" Its target is not a saved connection profile: choose one to send."),
        }
        self.load(pool, &doc.method.full_name, doc.request.base64.clone());
        let method = self.method_desc(pool);
        if method.is_none() {
            words.push_str(" Its method is not in the loaded schemas: load them to send.");
        }
        let profile_keys: Vec<String> = profiles
            .iter()
            .find(|(p, _)| p.name == self.profile)
            .map(|(p, _)| p.call_options().metadata.into_iter().map(|(k, _)| k).collect())
            .unwrap_or_default();
        self.metadata = doc
            .metadata
            .iter()
            .filter(|p| p.value != REDACTED && !profile_keys.iter().any(|k| k.eq_ignore_ascii_case(&p.key)))
            .map(|p| format!("{}: {}", p.key, p.value))
            .collect::<Vec<_>>()
            .join("\n");
        self.deadline = doc.deadline_ms.map(|ms| format!("{}", ms as f64 / 1000.0)).unwrap_or_default();
        self.response = recorded_reply(&doc, method.as_ref(), pool, &mut words);
        self.transcript.open_note = Some(Ok(words));
        self.transcript.last = Some(Box::new(doc));
    }
}

/// The recorded answer as the composer shows a live one.
fn recorded_reply(
    doc: &Transcript,
    method: Option<&prost_reflect::MethodDescriptor>,
    pool: &DescriptorPool,
    words: &mut String,
) -> Response {
    let s = &doc.status;
    if s.code.is_some_and(|c| c != 0 && c != 200) || s.code.is_none() {
        let code = s.code.map_or_else(String::new, |c| format!(" ({c})"));
        return Response::Failed(FailureView::other(format!("recorded: {}{code}: {}", s.name, s.message)));
    }
    if doc.method.kind == MethodKind::ServerStream {
        words.push_str(&format!(
            " A stream of {} was recorded.",
            walscope_core::fmt::counted(doc.messages.len() as u64, "message")
        ));
        return Response::None;
    }
    let (Some(reply), Some(m)) = (doc.unary_reply(), method) else { return Response::None };
    let Ok(message) = crate::net::decode_reply(m, reply) else { return Response::None };
    let pairs = |p: &Option<Vec<crate::net::transcript::Pair>>| -> Vec<(String, String)> {
        p.iter().flatten().map(|p| (p.key.clone(), p.value.clone())).collect()
    };
    let outcome = crate::net::call::CallOutcome {
        request: doc.request.base64.clone().into(),
        request_exact: doc.request.sent_exactly,
        reply: reply.to_vec().into(),
        message,
        headers: pairs(&doc.headers),
        trailers: pairs(&doc.trailers),
        attachment: Default::default(),
        elapsed: std::time::Duration::from_millis(doc.timing.total_ms),
    };
    let source = DetailSource::Message { label: "recorded reply".into() };
    let detail = MessageDetail::of(pool, Some(&m.output()), reply.to_vec(), &[], source);
    let (body_error, hint) = (outcome.body_error(), outcome.hint());
    Response::Unary(Box::new(UnaryView { outcome, detail, body_error, hint }))
}
