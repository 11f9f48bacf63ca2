//! One salvage pane's state: the two profiles and the old primary's cluster id, the pchannels
//! (offered from the old primary's replicate configuration, or typed), the checkpoints fetched
//! from the new primary, the end time, whether to skip what the new primary already has, the
//! folder, and one row per pchannel dump with its live progress, its outcome and its report.
//!
//! Owns: [`SalvageState`]. Must never: talk to a server or touch the folder itself (the panel
//! sends commands; the app runs the work as jobs and hands each dump's progress back here).

mod rows;
pub mod view;

use super::command::CommandSender;
use super::outcome::{JobError, JobOutput, JobResult};
use super::{AppView, Pane};
use crate::jobs::JobId;
use eframe::egui;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use walscope_ops::salvage::checkpoint::Checkpoints;
use walscope_ops::salvage::folder::Unfinished;
use walscope_ops::salvage::job::SalvageProgress;
use walscope_ops::salvage::report::DumpReport;

/// A dump being written: what the salvage job shares with the pane.
#[derive(Clone)]
pub struct LiveDump {
    pub pchannel: String,
    pub file: PathBuf,
    pub progress: watch::Receiver<SalvageProgress>,
    pub cancel: CancellationToken,
}

/// Where a running set's jobs appear once started (filled by the job, read by the pane).
pub type LiveSlot = Arc<Mutex<Vec<LiveDump>>>;

/// How one pchannel's dump ended, and what the file holds.
#[derive(Debug, Clone)]
pub struct DumpEnd {
    pub pchannel: String,
    pub file: PathBuf,
    /// In words: "complete: 4,120 frames", "cancelled: resumable", or the failure.
    pub outcome: Result<String, String>,
    pub resumable: bool,
    pub report: Option<Result<DumpReport, String>>,
}

pub struct SalvageState {
    pub id: u64,
    pub new_primary: String,
    pub old_primary: String,
    /// The old primary's cluster id (its msgChannel.chanNamePrefix.cluster).
    pub cluster_id: String,
    /// One a line (commas and spaces separate too).
    pub pchannels: String,
    pub pchannel_note: Option<Result<String, String>>,
    pub checkpoints: Option<Result<Checkpoints, String>>,
    /// UTC date-time or raw timetick; empty: until stopped.
    pub end_time: String,
    pub skip_replicated: bool,
    pub folder: String,
    /// Unfinished dumps found in the folder.
    pub unfinished: Option<Result<Vec<Unfinished>, String>>,
    /// The dumps running now, as the jobs share them.
    pub live: LiveSlot,
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
            live: Arc::default(),
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
    pub fn end_timetick(&self) -> Result<Option<u64>, String> {
        let t = self.end_time.trim();
        if t.is_empty() {
            return Ok(None);
        }
        crate::dump::filter::parse_time(t, true)
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

    /// The live dumps now (a copy of the handles; never waits on the jobs).
    pub fn live_dumps(&self) -> Vec<LiveDump> {
        self.live.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Records how a pchannel's dump ended (replacing an earlier end of the same pchannel).
    pub fn ended(&mut self, end: DumpEnd) {
        if let Ok(mut l) = self.live.lock() {
            l.retain(|d| d.pchannel != end.pchannel);
        }
        self.ends.retain(|e| e.pchannel != end.pchannel);
        self.ends.push(end);
        self.ends.sort_by(|a, b| a.pchannel.cmp(&b.pchannel));
    }
}

impl Pane for SalvageState {
    fn title(&self, _view: &AppView<'_>) -> String {
        "Salvage".into()
    }

    fn draw(&mut self, ui: &mut egui::Ui, view: &AppView<'_>, tx: &CommandSender) {
        let id = self.id;
        egui::ScrollArea::vertical()
            .id_salt(("salvage", id))
            .show(ui, |ui| ui.push_id(("salvage", id), |ui| view::show(self, view.profiles, ui, tx)));
    }

    /// The pchannels, checkpoints, unfinished dumps or ended dumps a job brought.
    fn apply(&mut self, _job: JobId, _label: &str, result: JobResult, _view: &AppView<'_>) {
        let s = self;
        match result {
            Ok(JobOutput::Pchannels { result, .. }) => match result {
                Ok(p) => {
                    s.pchannel_note = Some(Ok(format!(
                        "{} pchannels from the old primary's replicate configuration",
                        p.len()
                    )));
                    s.pchannels = p.join("\n");
                }
                Err(e) => {
                    s.pchannel_note = Some(Err(format!(
                        "the old primary did not say its pchannels ({}: {e}); type or paste them",
                        e.kind().words()
                    )))
                }
            },
            Ok(JobOutput::Checkpoints { result, .. }) => {
                s.checkpoints = Some(result.map_err(|e| format!("{}: {e}", e.kind().words())))
            }
            Ok(JobOutput::Unfinished { result, .. }) => {
                s.unfinished = Some(result.map_err(|e| e.to_string()))
            }
            Ok(JobOutput::SalvageEnded { ends, .. }) => {
                for e in ends {
                    s.ended(e);
                }
                s.running = !s.live_dumps().is_empty();
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
