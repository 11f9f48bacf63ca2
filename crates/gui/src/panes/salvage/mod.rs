//! One salvage pane's state: the two profiles and the old primary's cluster id, the pchannels
//! (offered from the old primary's replicate configuration, or typed), the checkpoints fetched
//! from the new primary, the end time, whether to skip what the new primary already has, the
//! folder, and one row per pchannel dump with its live progress, its outcome and its report.
//!
//! Owns: [`SalvageState`]. Must never: talk to a server or touch the folder itself (the panel
//! sends commands; the app runs the work as jobs). Its dumps' live progress is not held here:
//! the job registry holds it, read each frame through [`AppView::live_of`].

mod rows;
pub mod view;

use super::command::CommandSender;
use super::outcome::{JobError, JobOutput, JobResult};
use super::{AppView, Pane};
use crate::jobs::{JobId, LiveDump};
use eframe::egui;
use std::path::PathBuf;
use std::sync::Arc;
use walscope_ops::salvage::SalvageError;
use walscope_ops::salvage::checkpoint::Checkpoints;
use walscope_ops::salvage::folder::Unfinished;
use walscope_ops::salvage::report::DumpReport;

/// How one pchannel's dump ended, and what the file holds.
#[derive(Debug, Clone)]
pub struct DumpEnd {
    pub pchannel: String,
    pub file: PathBuf,
    /// How it ended (put in words where drawn), or why it failed.
    pub outcome: Result<DumpOutcome, Arc<SalvageError>>,
    pub resumable: bool,
    /// The file read back, or why it could not be.
    pub report: Option<Result<DumpReport, Arc<SalvageError>>>,
}

/// How a pchannel's dump ended when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpOutcome {
    /// Stopped: the dump can be resumed.
    Cancelled {
        frames: u64,
    },
    /// The server closed the stream before a message at the end time came.
    EndedBeforeEnd {
        frames: u64,
        bytes: u64,
    },
    Complete {
        frames: u64,
        bytes: u64,
    },
}

impl DumpOutcome {
    /// How it ended without its numbers, for a card whose report line states them.
    pub fn headline(&self) -> &'static str {
        match self {
            DumpOutcome::Cancelled { .. } => "cancelled: resumable",
            DumpOutcome::EndedBeforeEnd { .. } => {
                "complete (the server ended the stream before a message at the end time came: the old primary's WAL may hold nothing later)"
            }
            DumpOutcome::Complete { .. } => "complete",
        }
    }
}

impl std::fmt::Display for DumpOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use walscope_core::fmt::{bytes_exact, counted};
        match self {
            DumpOutcome::Cancelled { frames } => {
                write!(f, "cancelled after {}: resumable", counted(*frames, "frame"))
            }
            DumpOutcome::EndedBeforeEnd { frames, bytes } => write!(
                f,
                "complete: {}, {} (the server ended the stream before a message at the end time came: the old primary's WAL may hold nothing later)",
                counted(*frames, "frame"),
                bytes_exact(*bytes)
            ),
            DumpOutcome::Complete { frames, bytes } => {
                write!(f, "complete: {}, {}", counted(*frames, "frame"), bytes_exact(*bytes))
            }
        }
    }
}

/// Why the old primary's pchannels are not offered.
#[derive(Debug, thiserror::Error)]
pub enum PchannelsUnknown {
    #[error("old primary: {0}")]
    OldPrimary(crate::panes::refused::ProfileRefused),
    #[error("the old primary did not say its pchannels ({kind}: {0}); type or paste them", kind = .0.kind().words())]
    NotSaid(crate::net::NetError),
}

/// Why the salvage checkpoints were not fetched.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointsFailed {
    #[error("new primary: {0}")]
    NewPrimary(crate::panes::refused::ProfileRefused),
    #[error("{kind}: {0}", kind = .0.kind().words())]
    Net(crate::net::NetError),
}

/// The salvage's end is not a time (the time parser's words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EndNotATime(pub String);

pub struct SalvageState {
    pub id: u64,
    pub new_primary: String,
    pub old_primary: String,
    /// The old primary's cluster id (its msgChannel.chanNamePrefix.cluster).
    pub cluster_id: String,
    /// One a line (commas and spaces separate too).
    pub pchannels: String,
    /// How many pchannels the old primary's configuration named, or why none were offered.
    pub pchannel_note: Option<Result<usize, PchannelsUnknown>>,
    pub checkpoints: Option<Result<Checkpoints, CheckpointsFailed>>,
    /// UTC date-time or raw timetick; empty: until stopped.
    pub end_time: String,
    pub skip_replicated: bool,
    pub folder: String,
    /// Unfinished dumps found in the folder.
    pub unfinished: Option<Result<Vec<Unfinished>, SalvageError>>,
    pub ends: Vec<DumpEnd>,
    /// Why the last start or resume was refused, or failed before any dump began.
    pub error: Option<String>,
    pub running: bool,
}

impl SalvageState {
    pub fn new(id: u64) -> SalvageState {
        SalvageState {
            id,
            new_primary: String::new(),
            old_primary: String::new(),
            cluster_id: String::new(),
            pchannels: String::new(),
            pchannel_note: None,
            checkpoints: None,
            end_time: String::new(),
            skip_replicated: true,
            folder: String::new(),
            unfinished: None,
            ends: Vec::new(),
            error: None,
            running: false,
        }
    }

    /// The pchannels typed, in order, without repeats.
    pub fn pchannel_list(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in self.pchannels.split(|c: char| c == ',' || c.is_whitespace()).map(str::trim) {
            if !p.is_empty() && !out.iter().any(|o| o == p) {
                out.push(p.to_string());
            }
        }
        out
    }

    /// The end typed, as a timetick: None for "until stopped", or why it is not a time.
    pub fn end_timetick(&self) -> Result<Option<u64>, EndNotATime> {
        let t = self.end_time.trim();
        if t.is_empty() {
            return Ok(None);
        }
        crate::dump::filter::parse_time(t, true).map_err(EndNotATime)
    }

    /// The pchannels that have a checkpoint.
    pub fn ready_pchannels(&self) -> Vec<String> {
        match &self.checkpoints {
            Some(Ok(c)) => {
                c.reports.iter().filter(|r| r.result.is_ok()).map(|r| r.pchannel.clone()).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The dumps this pane's jobs are writing now, as the job registry holds them (a copy of
    /// the handles; never waits on the jobs).
    pub fn live_dumps(&self, view: &AppView<'_>) -> Vec<LiveDump> {
        view.live_of(self.id).iter().filter_map(|l| l.dumps()).flatten().cloned().collect()
    }

    /// Records how a pchannel's dump ended (replacing an earlier end of the same pchannel).
    pub fn ended(&mut self, end: DumpEnd) {
        self.ends.retain(|e| e.pchannel != end.pchannel);
        self.ends.push(end);
        self.ends.sort_by(|a, b| a.pchannel.cmp(&b.pchannel));
    }
}

impl Pane for SalvageState {
    /// "Salvage" and its folder's name, so two salvages' tabs are told apart.
    fn title(&self, _view: &AppView<'_>) -> String {
        super::titled("Salvage", &self.folder)
    }

    fn draw(&mut self, ui: &mut egui::Ui, view: &AppView<'_>, tx: &CommandSender) {
        let id = self.id;
        egui::Panel::bottom(egui::Id::unique(("salvage_actions", id)))
            .show(ui, |ui| ui.push_id(("salvage_actions", id), |ui| view::actions(self, ui, tx)));
        egui::ScrollArea::vertical()
            .id_salt(("salvage", id))
            .show(ui, |ui| ui.push_id(("salvage", id), |ui| view::show(self, view, ui, tx)));
    }

    /// The pchannels, checkpoints, unfinished dumps or ended dumps a job brought.
    fn apply(&mut self, _job: JobId, _label: &str, result: JobResult, view: &AppView<'_>) {
        let s = self;
        match result {
            Ok(JobOutput::Pchannels { result, .. }) => match result {
                Ok(p) => {
                    s.pchannel_note = Some(Ok(p.len()));
                    s.pchannels = p.join("\n");
                }
                Err(e) => s.pchannel_note = Some(Err(PchannelsUnknown::NotSaid(e))),
            },
            Ok(JobOutput::Checkpoints { result, .. }) => {
                s.checkpoints = Some(result.map_err(CheckpointsFailed::Net))
            }
            Ok(JobOutput::Unfinished { result, .. }) => s.unfinished = Some(result),
            Ok(JobOutput::SalvageEnded { ends, .. }) => {
                for e in ends {
                    s.ended(e);
                }
                // Another of its jobs (a resumed dump) may still run.
                s.running = !s.live_dumps(view).is_empty();
                s.unfinished = None;
            }
            Ok(_) => {}
            Err(JobError::Cancelled) => s.running = false,
            Err(e) => {
                s.error = Some(e.to_string());
                s.running = false;
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
