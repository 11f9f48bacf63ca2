//! One request composer: the method and profile chosen, the request (exact bytes, shown as a
//! form through the message detail and field editor, and as JSON checked against the schema,
//! kept in step), metadata, deadline, and what came back (a unary reply in the detail view, a
//! stream's live tail, or the failure in words). Several may be open; each is a pane.
//!
//! Owns: [`ComposerState`]. Must never: send anything itself (the panel sends a command; the
//! app runs the call as a job), or change request bytes the operator did not edit (a request
//! taken from a file or the history keeps its exact bytes until an edit).

mod history;
mod replies;
mod response;
pub mod transcript;
pub mod view;

use super::command::{AppCommand, CommandSender};
use super::outcome::{JobError, JobOutput, JobResult};
use super::{AppView, Pane};
use crate::jobs::{JobId, LiveStream};
use crate::net::call::{CallOutcome, StreamSummary};
use crate::net::guard::Guard;
use crate::net::history::HistoryEntry;
use crate::panes::file::detail::{DetailSource, MessageDetail};
use crate::panes::file::edit_plan::{self, Planned};
use crate::panes::file::field_edit::EditRequest;
use eframe::egui;
use prost_reflect::{DescriptorPool, MessageDescriptor, MethodDescriptor};
pub use replies::KeptReply;
use std::time::Instant;

/// A reply shown: the outcome and its decoded detail.
pub struct UnaryView {
    pub outcome: CallOutcome,
    pub detail: MessageDetail,
    /// "OK at the transport, error in the body".
    pub body_error: Option<String>,
    /// What the reply means that its fields alone do not say (only a salvage checkpoint).
    pub hint: Option<crate::net::ReplyHint>,
}

/// A stream being received, or received.
pub struct StreamView {
    pub job: JobId,
    /// The stream's progress and newest messages, once open: taken from the job registry (the
    /// job's live progress) while it runs, kept after it ended so its tail stays shown.
    pub live: Option<LiveStream>,
    /// The dump every message is written to as it arrives.
    pub path: std::path::PathBuf,
    /// A message of the tail selected (its number and detail).
    pub selected: Option<(u64, MessageDetail)>,
    /// How it ended: the call's summary, or why the dump could not be written.
    pub summary: Option<Result<StreamSummary, StreamFailed>>,
    /// What "Save as dump" is typing, and what the last save said.
    pub save_as: String,
    /// "Replace an existing file": without it, a file already at `save_as` is refused.
    pub save_replace: bool,
    /// Where the last "Save as dump" wrote, or why it did not.
    pub save_note: Option<Result<std::path::PathBuf, JobError>>,
}

/// Why a composer's stream ended without a summary.
#[derive(Debug, thiserror::Error)]
pub enum StreamFailed {
    /// The stream's dump could not be written, or the call failed (the job's library error).
    #[error(transparent)]
    Stream(walscope_ops::jobs::call_stream::CallStreamError),
    /// The job did not run the stream (no connection, no runtime, ...).
    #[error(transparent)]
    Job(JobError),
}

/// A call that did not get an answer, said for a person.
pub struct FailureView {
    pub kind: crate::net::FailureKind,
    pub error: String,
    /// A GetReplicateInfo refused for its pchannel, explained (core's
    /// `wal::replicate_info`, the same words the CLI prints).
    pub explanation: Option<String>,
}

impl FailureView {
    /// A failure that is not the server's (stopped, a job that broke).
    fn other(error: String) -> FailureView {
        FailureView { kind: crate::net::FailureKind::Other, error, explanation: None }
    }

    fn of(e: &crate::net::NetError) -> FailureView {
        FailureView {
            kind: e.kind(),
            error: e.words_without_hint(),
            explanation: e.pchannel_refusal().map(|r| r.words()),
        }
    }
}

pub enum Response {
    None,
    /// A unary call is out.
    Waiting {
        job: JobId,
        since: Instant,
    },
    Unary(Box<UnaryView>),
    Stream(Box<StreamView>),
    Failed(FailureView),
}

/// A call waiting for the operator to confirm what it will change.
pub struct Confirm {
    pub guard: Guard,
    pub typed: String,
    pub stream: bool,
}

/// A method as the picker lists it: full name, `Service/Method`, server-streaming.
pub type MethodEntry = (String, String, bool);

/// Why a composer's call is not sent: what was typed beside the request is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendRefused {
    #[error("metadata line {0}: write key: value")]
    MetadataLine(usize),
    #[error("deadline \"{0}\" is not a number of seconds")]
    Deadline(String),
}

pub struct ComposerState {
    pub id: u64,
    /// The profile to send with (its name).
    pub profile: String,
    pub method_search: String,
    /// The chosen method's full name (`pkg.Service.Method`).
    pub method: Option<String>,
    /// The request exactly as it will be sent.
    pub request: Vec<u8>,
    pub request_detail: Option<MessageDetail>,
    /// The request as JSON, edited freely; applied when it parses.
    pub json: String,
    pub json_error: Option<String>,
    /// One `key: value` a line.
    pub metadata: String,
    /// Seconds; empty: the profile's.
    pub deadline: String,
    pub confirm: Option<Confirm>,
    pub response: Response,
    pub history_search: String,
    pub history: Option<Result<Vec<HistoryEntry>, JobError>>,
    pub show_history: bool,
    /// A call ended since the history was read: the list is read again when shown.
    pub history_stale: bool,
    /// Why the last send was refused before it left (no profile, no method, bad metadata).
    pub refused: Option<String>,
    /// The methods matching the search, for the search text and schema they were found in (the
    /// list is not rebuilt every frame).
    pub method_matches: Option<(String, usize, Vec<MethodEntry>)>,
    /// The last call's transcript, its save, and opening one.
    pub transcript: transcript::TranscriptState,
    /// The last unary replies received here, oldest first (the last is the one shown), for
    /// "Compare with…".
    pub replies: Vec<KeptReply>,
    /// Replies received so far (numbers the kept ones).
    replies_seen: u64,
}

impl ComposerState {
    pub fn new(id: u64) -> ComposerState {
        ComposerState {
            id,
            profile: String::new(),
            method_search: String::new(),
            method: None,
            request: Vec::new(),
            request_detail: None,
            json: String::new(),
            json_error: None,
            metadata: String::new(),
            deadline: String::new(),
            confirm: None,
            response: Response::None,
            history_search: String::new(),
            history: None,
            show_history: false,
            history_stale: false,
            refused: None,
            method_matches: None,
            transcript: Default::default(),
            replies: Vec::new(),
            replies_seen: 0,
        }
    }

    pub fn title(&self) -> String {
        match &self.method {
            Some(m) => format!("Composer: {}", m.rsplit('.').next().unwrap_or(m)),
            None => "Composer".into(),
        }
    }

    /// The chosen method, looked up in `pool`.
    pub fn method_desc(&self, pool: &DescriptorPool) -> Option<MethodDescriptor> {
        let full = self.method.as_deref()?;
        let (svc, name) = full.rsplit_once('.')?;
        pool.get_service_by_name(svc)?.methods().find(|m| m.name() == name)
    }

    fn input(&self, pool: &DescriptorPool) -> Option<MessageDescriptor> {
        self.method_desc(pool).map(|m| m.input())
    }

    /// Chooses a method. The request is kept when it is still a valid message of the new input
    /// type (exact bytes), else it starts empty.
    pub fn set_method(&mut self, pool: &DescriptorPool, full_name: &str) {
        self.method = Some(full_name.to_string());
        if let Some(input) = self.input(pool)
            && crate::codec::decode(&input, &self.request).is_err()
        {
            self.request.clear();
        }
        self.response = Response::None;
        self.confirm = None;
        self.transcript.last = None;
        self.refresh(pool);
    }

    /// Takes a request from elsewhere (a dump frame, the history): its exact bytes.
    pub fn load(&mut self, pool: &DescriptorPool, method: &str, request: Vec<u8>) {
        self.method = Some(method.to_string());
        self.request = request;
        self.response = Response::None;
        self.confirm = None;
        self.transcript.last = None;
        self.refresh(pool);
    }

    /// Decodes the request again for the form, the detail and the JSON.
    pub fn refresh(&mut self, pool: &DescriptorPool) {
        let input = self.input(pool);
        let keep = self.request_detail.as_ref().map(|d| (d.view, d.selected_node.clone()));
        let source = DetailSource::Message { label: "request".into() };
        let mut detail = MessageDetail::of(pool, input.as_ref(), self.request.clone(), &[], source);
        if let Some((view, node)) = keep {
            detail.view = view;
            if let Some(n) = node {
                detail.select_node(&n, input.as_ref());
            }
        }
        self.json = match input.as_ref().map(|d| crate::codec::decode(d, &self.request)) {
            Some(Ok(m)) => {
                self.json_error = None;
                crate::codec::to_json(&m.message, true)
            }
            Some(Err(e)) => {
                self.json_error =
                    Some(format!("the request bytes are not a valid message of this type: {e}"));
                String::new()
            }
            None => String::new(),
        };
        self.request_detail = Some(detail);
    }

    /// The JSON box changed: when it parses as the input type, it becomes the request (its
    /// canonical encoding); otherwise the reason, with line and column, shows at the box.
    pub fn json_changed(&mut self, pool: &DescriptorPool) {
        let Some(input) = self.input(pool) else { return };
        let text = if self.json.trim().is_empty() { "{}" } else { self.json.as_str() };
        match crate::codec::from_json(&input, text) {
            Ok(m) => {
                let bytes = crate::codec::encode(&m);
                self.json_error = None;
                if bytes != self.request {
                    self.request = bytes;
                    let json = std::mem::take(&mut self.json);
                    self.refresh(pool);
                    // Keep what is being typed (its spacing, its zero values).
                    self.json = json;
                }
            }
            Err(e) => self.json_error = Some(e.to_string()),
        }
    }

    /// Fills the JSON box with every field of the input type at its empty value.
    pub fn template(&mut self, pool: &DescriptorPool) {
        if let Some(input) = self.input(pool) {
            self.json = crate::codec::template_json(&input);
            self.json_changed(pool);
        }
    }

    /// Carries out an edit asked in the request's form (lossless: only that field's bytes change).
    pub fn edit(&mut self, pool: &DescriptorPool, req: EditRequest) {
        let Some(input) = self.input(pool) else { return };
        let result = edit_plan::plan(pool, &input, &self.request, self.request_detail.as_ref(), req)
            .and_then(|p| match p {
                Planned::Edits(edits) => Ok(crate::codec::apply_edits(&input, &self.request, &edits)?),
                Planned::DecodeAs(..) => Err(edit_plan::EditRefused::DecodeAsHere),
            });
        match result {
            Ok(bytes) => {
                self.request = bytes;
                self.refresh(pool);
            }
            Err(e) => {
                if let Some(d) = self.request_detail.as_mut() {
                    d.edit_error = Some(e.to_string());
                }
            }
        }
    }

    /// The metadata lines as pairs, or the line that is not `key: value`.
    pub fn metadata_pairs(&self) -> Result<Vec<(String, String)>, SendRefused> {
        let mut out = Vec::new();
        for (n, line) in self.metadata.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (k, v) = line.split_once(':').ok_or(SendRefused::MetadataLine(n + 1))?;
            out.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        Ok(out)
    }

    /// The deadline typed, if any.
    pub fn deadline(&self) -> Result<Option<std::time::Duration>, SendRefused> {
        match self.deadline.trim() {
            "" => Ok(None),
            t => t
                .parse::<f64>()
                .ok()
                .filter(|s| *s > 0.0)
                .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
                .map(Some)
                .ok_or_else(|| SendRefused::Deadline(t.to_string())),
        }
    }

    pub fn is_busy(&self) -> bool {
        match &self.response {
            Response::Waiting { .. } => true,
            Response::Stream(s) => s.summary.is_none(),
            _ => false,
        }
    }
}

impl ComposerState {
    /// The methods whose full name contains `needle` (lower case), found once per search text
    /// and schema set.
    pub fn matching_methods(&mut self, pool: &DescriptorPool, needle: &str) -> &[MethodEntry] {
        let services = pool.services().len();
        let fresh = self.method_matches.as_ref().is_some_and(|(n, s, _)| n == needle && *s == services);
        if !fresh {
            let found = all_methods(pool)
                .into_iter()
                .filter(|(full, _, _)| full.to_ascii_lowercase().contains(needle))
                .collect();
            self.method_matches = Some((needle.to_string(), services, found));
        }
        self.method_matches.as_ref().map_or(&[], |(_, _, m)| m.as_slice())
    }
}

/// Every method of every loaded service, as (full name, `Service/Method`, streaming), sorted.
pub fn all_methods(pool: &DescriptorPool) -> Vec<MethodEntry> {
    let mut out: Vec<MethodEntry> = pool
        .services()
        .flat_map(|s| {
            s.methods()
                .filter(|m| !m.is_client_streaming())
                .map(|m| {
                    (m.full_name().to_string(), format!("{}/{}", s.name(), m.name()), m.is_server_streaming())
                })
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort();
    out
}

/// The method to preselect for a message of type `type_name`: one whose request it is
/// (a Milvus or OpenMLDB service first), if any.
pub fn method_for_request(pool: &DescriptorPool, type_name: &str) -> Option<String> {
    let mut candidates: Vec<String> = pool
        .services()
        .flat_map(|s| {
            s.methods()
                .filter(|m| m.input().full_name() == type_name)
                .map(|m| m.full_name().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    candidates
        .sort_by_key(|m| (!m.starts_with("milvus.proto.milvus.") && !m.starts_with("openmldb."), m.clone()));
    candidates.into_iter().next()
}

impl Pane for ComposerState {
    /// The method's name, marked when its profile is insecure.
    fn title(&self, view: &AppView<'_>) -> String {
        let insecure = view.profiles.iter().any(|(p, _)| p.name == self.profile && p.is_insecure());
        if insecure { format!("{} (INSECURE)", self.title()) } else { self.title() }
    }

    fn draw(&mut self, ui: &mut egui::Ui, view: &AppView<'_>, tx: &CommandSender) {
        let id = self.id;
        let rect = ui.max_rect();
        let pressed = ui
            .input(|i| i.pointer.any_pressed() && i.pointer.interact_pos().is_some_and(|p| rect.contains(p)));
        if pressed && view.focused_composer != Some(id) {
            tx.send(AppCommand::FocusComposer(id));
        }
        if let Response::Stream(s) = &mut self.response
            && s.live.is_none()
        {
            s.live = view.live(s.job).and_then(|l| l.stream().cloned());
        }
        let cv = view::ComposerView {
            pool: view.schemas.pool(),
            profiles: view.profiles,
            focused: view.focused_composer == Some(id) || pressed,
        };
        egui::ScrollArea::vertical()
            .id_salt(("composer", id))
            .show(ui, |ui| ui.push_id(("composer", id), |ui| view::show(self, &cv, ui, tx)));
    }

    /// Its reply, history, or failure. A call's result counts only if it is the call the
    /// composer is waiting for (`job`): a call overtaken by another (a new method, a history
    /// entry opened) is dropped; the history has it.
    fn apply(&mut self, job: JobId, _label: &str, result: JobResult, view: &AppView<'_>) {
        let pool = view.schemas.pool();
        let Some(result) = transcript::apply(self, job, result, pool, view.profiles) else { return };
        let c = self;
        let current = match &c.response {
            Response::Waiting { job: j, .. } => Some(*j),
            Response::Stream(s) => Some(s.job),
            _ => None,
        };
        // A call overtaken by another (a new method, a history entry opened, a second Send)
        // says nothing here.
        let for_this_call = current == Some(job);
        if matches!(result, Ok(JobOutput::Called { .. } | JobOutput::Streamed { .. })) {
            // Recorded in the history by the job, whether or not it is still shown here.
            c.history_stale = true;
            if !for_this_call {
                return;
            }
        }
        match result {
            Ok(JobOutput::Called { result: Ok(outcome), transcript, .. }) => {
                c.transcript.last = transcript;
                let desc = c.method_desc(pool).map(|m| m.output());
                let source = DetailSource::Message { label: "reply".into() };
                let detail = MessageDetail::of(pool, desc.as_ref(), outcome.reply.to_vec(), &[], source);
                c.keep_reply(desc.as_ref().map(|d| d.full_name().to_string()), outcome.reply.to_vec());
                let (body_error, hint) = (outcome.body_error(), outcome.hint());
                c.response =
                    Response::Unary(Box::new(UnaryView { outcome: *outcome, detail, body_error, hint }));
            }
            Ok(JobOutput::Called { result: Err(e), transcript, .. }) => {
                c.transcript.last = transcript;
                c.response = Response::Failed(FailureView::of(&e));
            }
            Ok(JobOutput::History { entries, .. }) => c.history = Some(Ok(entries)),
            Ok(JobOutput::Streamed { summary, tail, transcript, .. }) => {
                c.transcript.last = transcript;
                if let Response::Stream(s) = &mut c.response {
                    // The job may end before the pane drew once with it running.
                    if s.live.is_none() {
                        s.live = tail;
                    }
                    s.summary = Some(summary.map_err(StreamFailed::Stream));
                }
            }
            Ok(JobOutput::StreamSaved { path, .. }) => {
                if let Response::Stream(s) = &mut c.response {
                    s.save_note = Some(Ok(path));
                }
            }
            Ok(_) => {}
            Err(JobError::Cancelled) => {
                if for_this_call && matches!(c.response, Response::Waiting { .. }) {
                    c.response = Response::Failed(FailureView::other("stopped before an answer came".into()));
                }
            }
            Err(e) => match &mut c.response {
                Response::Stream(s) if for_this_call => s.summary = Some(Err(StreamFailed::Job(e))),
                Response::Stream(s) => s.save_note = Some(Err(e)),
                Response::Waiting { .. } if for_this_call => {
                    c.response = Response::Failed(FailureView::other(e.to_string()));
                }
                _ => c.history = Some(Err(e)),
            },
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
