//! The diff pane: two messages, or two dumps, compared ("Compare with…" on a frame, a file tab,
//! a composer reply or a history entry; [`picker`] chooses the other side). For two messages:
//! the list of changes and both sides' trees and hex views side by side, in step
//! ([`message_view`]). For two dumps: the summary and a virtual list of the frame pairs, a
//! changed pair diffed on demand ([`dump_view`]).
//!
//! Owns: [`DiffState`] (what is compared, and the diff as its job returned it). Must never:
//! diff on the UI thread or read a file (the pane sends commands; the app runs the diffing as a
//! job in `work/diff.rs` and hands the result back through [`Pane::apply`]).

pub mod dump_view;
pub mod message_view;
pub mod picker;
pub mod sides;

use super::command::CommandSender;
use super::outcome::{JobError, JobOutput, JobResult};
use super::{AppView, Pane};
use crate::jobs::JobId;
use eframe::egui;
pub use message_view::{ChangeKind, ChangeRow, MessageCompare};
pub use sides::{CompareAsk, CompareFrom, Pick, Side};
use std::path::PathBuf;

/// Why two things could not be compared (the library's errors kept as they are).
#[derive(Debug, thiserror::Error)]
pub enum DiffFailed {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Dump(#[from] crate::dump::reader::DumpError),
    #[error(transparent)]
    Schema(#[from] crate::schema::SchemaError),
    #[error(transparent)]
    Input(#[from] walscope_core::input::InputError),
    #[error(
        "the two sides are messages of different types ({a} and {b}): only messages of one type are compared"
    )]
    TypesDiffer { a: String, b: String },
    #[error("a dump is compared with another dump, and a message with another message")]
    Mixed,
    #[error("frame {index} of {} cannot be read (past its end, or the file is not open any more)", path.display())]
    NoFrame { path: PathBuf, index: usize },
    #[error("{} is not open any more", path.display())]
    NotOpen { path: PathBuf },
    #[error("the composer's reply or history entry is gone (a new call replaced it)")]
    Gone,
    #[error(transparent)]
    Diff(#[from] walscope_core::diff::DiffError),
    #[error("stopped before the comparison was done")]
    Stopped,
    #[error(transparent)]
    Job(JobError),
}

/// What the pane shows.
pub enum Body {
    /// The job is comparing.
    Waiting,
    Messages(Box<MessageCompare>),
    Dumps(Box<dump_view::DumpCompare>),
    Failed(DiffFailed),
}

pub struct DiffState {
    pub id: u64,
    /// The two sides in words (the title and headings).
    pub a_label: String,
    pub b_label: String,
    pub body: Body,
}

impl DiffState {
    pub fn new(id: u64, a_label: String, b_label: String) -> DiffState {
        DiffState { id, a_label, b_label, body: Body::Waiting }
    }

    /// The message comparison shown (the dumps' opened pair, for two dumps).
    pub fn messages(&self) -> Option<&MessageCompare> {
        match &self.body {
            Body::Messages(m) => Some(m),
            Body::Dumps(d) => d.opened_messages(),
            _ => None,
        }
    }

    pub fn messages_mut(&mut self) -> Option<&mut MessageCompare> {
        match &mut self.body {
            Body::Messages(m) => Some(m),
            Body::Dumps(d) => d.opened_messages_mut(),
            _ => None,
        }
    }

    pub fn dumps(&self) -> Option<&dump_view::DumpCompare> {
        match &self.body {
            Body::Dumps(d) => Some(d),
            _ => None,
        }
    }

    pub fn dumps_mut(&mut self) -> Option<&mut dump_view::DumpCompare> {
        match &mut self.body {
            Body::Dumps(d) => Some(d),
            _ => None,
        }
    }
}

impl Pane for DiffState {
    fn title(&self, _view: &AppView<'_>) -> String {
        format!("Diff: {} | {}", short(&self.a_label), short(&self.b_label))
    }

    /// Beside the files: it needs the width of a file's list and detail.
    fn placement(&self) -> super::Placement {
        super::Placement::Files
    }

    fn draw(&mut self, ui: &mut egui::Ui, view: &AppView<'_>, tx: &CommandSender) {
        let id = self.id;
        ui.push_id(("diff", id), |ui| {
            ui.horizontal_wrapped(|ui| {
                ui.strong("A:");
                ui.label(&self.a_label);
                ui.strong("B:");
                ui.label(&self.b_label);
            });
            match &mut self.body {
                Body::Waiting => waiting(ui, view, id, tx),
                Body::Failed(e) => {
                    use crate::widgets::look::Tone;
                    ui.colored_label(Tone::Bad.color(ui), format!("{} Not compared: {e}", Tone::Bad.icon()));
                }
                Body::Messages(m) => message_view::show(m, ui),
                Body::Dumps(d) => dump_view::show(d, id, ui, view, tx),
            }
        });
    }

    fn apply(&mut self, _job: JobId, _label: &str, result: JobResult, _view: &AppView<'_>) {
        match result {
            Ok(JobOutput::MessagesDiffed { pair: None, result, .. }) => {
                self.body = match result {
                    Ok(m) => Body::Messages(m),
                    Err(e) => Body::Failed(e),
                };
            }
            Ok(JobOutput::MessagesDiffed { pair: Some(pair), result, .. }) => {
                if let Some(d) = self.dumps_mut() {
                    d.pair_diffed(pair, result);
                }
            }
            Ok(JobOutput::DumpsDiffed { result, .. }) => {
                self.body = match result {
                    Ok(d) => Body::Dumps(d),
                    Err(e) => Body::Failed(e),
                };
            }
            Ok(_) => {}
            Err(e) => {
                let failed = match e {
                    JobError::Cancelled => DiffFailed::Stopped,
                    e => DiffFailed::Job(e),
                };
                match &mut self.body {
                    Body::Dumps(d) => d.pair_failed(failed),
                    body => *body = Body::Failed(failed),
                }
            }
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// The comparison is running: its progress and a Stop.
fn waiting(ui: &mut egui::Ui, view: &AppView<'_>, pane: u64, tx: &CommandSender) {
    let owner = crate::jobs::JobOwner::Pane(pane);
    let job = view.jobs.iter().find(|j| j.owner == owner);
    ui.horizontal(|ui| {
        crate::widgets::look::busy(ui);
        let words = job.map(|j| j.progress().text).filter(|t| !t.is_empty());
        ui.label(words.unwrap_or_else(|| "comparing…".into()));
        if let Some(j) = job {
            if let Some(f) = j.progress().fraction {
                ui.add(egui::ProgressBar::new(f).desired_width(200.0).show_percentage());
            }
            if crate::widgets::look::secondary(ui, "Stop").clicked() {
                tx.send(super::command::AppCommand::CancelJob(j.id));
            }
        }
    });
}

/// A label cut to fit a tab.
fn short(s: &str) -> String {
    const MAX: usize = 28;
    match s.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}
