//! One replay pane's state: the salvage folder and the new primary (a profile), the plan's
//! options (policy for keys the new primary already has, auto id, rate, batch), the plan as
//! the planning job returned it (or its typed error), whether the confirmation is open, the
//! apply's live progress while it runs, how it ended, and the last verification.
//!
//! Owns: [`ReplayState`]. Must never: talk to a server or read the folder itself (the panel
//! sends commands; the app runs the work as jobs and hands the results back here), or hold a
//! salvage's bodies (the plan points at frames).

pub mod plan;
pub mod view;

use super::command::CommandSender;
use super::outcome::{JobError, JobOutput, JobResult};
use super::{AppView, Pane};
use crate::jobs::{JobId, LiveApply};
use eframe::egui;
use std::sync::Arc;
use walscope_ops::replay::ReplayError;
use walscope_ops::replay::apply::{ApplyOutcome, Planned, Verification};
use walscope_ops::replay::plan::{AutoIdChoice, Policy};

/// Where the pane is in its flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Choosing the folder, the new primary and the options.
    Setup,
    Planning,
    /// A plan is shown (or its error).
    Planned,
    /// The operator is asked to confirm what the apply will change.
    Confirming,
    Applying,
    /// The apply ended (done, cancelled or failed).
    Applied,
}

pub struct ReplayState {
    pub id: u64,
    /// The salvage folder (with salvage.json), as typed or picked.
    pub folder: String,
    /// The new primary's profile name.
    pub new_primary: String,
    pub policy: Policy,
    pub auto_id: AutoIdChoice,
    /// Calls per second at most (0: as fast as the server answers).
    pub rate: f64,
    /// Rows per Insert/Upsert call at most.
    pub batch: usize,
    pub stage: Stage,
    /// The plan, or why there is none (the library's own error, shown in words).
    pub planned: Option<Result<Arc<Planned>, ReplayError>>,
    /// How the last apply ended.
    pub applied: Option<Result<ApplyOutcome, ReplayError>>,
    /// The last verification (from the apply, or "Verify again").
    pub verification: Option<Result<Verification, ReplayError>>,
    pub verifying: bool,
    /// Why the last command was refused before any job started (no profile, no folder).
    pub error: Option<String>,
    /// The folder and profile the shown plan was made for.
    pub planned_with: Option<(String, String)>,
    /// The jobs this pane started last, by what they do (their results are told apart by id).
    pub jobs: ReplayJobs,
}

impl ReplayState {
    pub fn new(id: u64) -> ReplayState {
        ReplayState {
            id,
            folder: String::new(),
            new_primary: String::new(),
            policy: Policy::Skip,
            auto_id: AutoIdChoice::Keep,
            rate: 0.0,
            batch: 1000,
            stage: Stage::Setup,
            planned: None,
            applied: None,
            verification: None,
            verifying: false,
            error: None,
            planned_with: None,
            jobs: ReplayJobs::default(),
        }
    }

    /// The plan shown, when planning succeeded.
    pub fn plan_ok(&self) -> Option<&Arc<Planned>> {
        self.planned.as_ref().and_then(|p| p.as_ref().ok())
    }

    /// Whether "Apply..." may be pressed: a plan without problems, with units left, made with
    /// what the pane shows now, and no apply running or being confirmed.
    pub fn can_apply(&self) -> bool {
        self.plan_ok().is_some_and(|p| p.plan.can_apply() && p.units_left() > 0)
            && !self.stale()
            && !matches!(self.applied, Some(Ok(_)))
            && matches!(self.stage, Stage::Planned | Stage::Applied)
    }

    /// The shown plan was made for another folder, profile or options than those now chosen.
    pub fn stale(&self) -> bool {
        let Some(p) = self.plan_ok() else { return false };
        let o = &p.plan.options;
        // A plan from a journal keeps the options it was applied with.
        let options = !p.resumed && (o.policy != self.policy || o.auto_id != self.auto_id);
        options
            || self
                .planned_with
                .as_ref()
                .is_some_and(|(f, n)| f.trim() != self.folder.trim() || *n != self.new_primary)
    }

    /// The apply running now, as the job registry holds it (a copy of the handles; never waits
    /// on the job).
    pub fn live_apply(&self, view: &AppView<'_>) -> Option<LiveApply> {
        let apply = self.jobs.apply?;
        view.live(apply).and_then(|l| l.apply().cloned())
    }

    /// True while a job of this pane is at work (planning, applying, verifying).
    pub fn busy(&self) -> bool {
        matches!(self.stage, Stage::Planning | Stage::Applying) || self.verifying
    }
}

/// A typed replay error in words, with what to do next.
pub fn explain(e: &ReplayError) -> String {
    let hint = match e {
        ReplayError::File { .. } => {
            "check the folder: it must be a salvage folder (with salvage.json) or hold dumps"
        }
        ReplayError::Frame { .. } => "the dump is damaged at that frame: open it in the browser to look",
        ReplayError::Net(_) => "check the new primary's profile (Connections) and that it is reachable",
        ReplayError::Refused { .. } => {
            "the new primary said no: check the user's privileges and the collection's schema there"
        }
        ReplayError::Plan(_) => "",
        ReplayError::Cancelled | ReplayError::Stopped(_) => {
            "the journal records what was applied; Apply again continues from there"
        }
    };
    if hint.is_empty() { e.to_string() } else { format!("{e} ({hint})") }
}

/// The jobs a replay pane started last: a plan, an apply, a verification.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplayJobs {
    pub plan: Option<JobId>,
    pub apply: Option<JobId>,
    pub verify: Option<JobId>,
}

impl Pane for ReplayState {
    /// "Replay" and its folder's name, so two replays' tabs are told apart.
    fn title(&self, _view: &AppView<'_>) -> String {
        super::titled("Replay", &self.folder)
    }

    /// Not while an apply runs (it is cancelled in the pane, on purpose).
    fn closable(&self) -> bool {
        self.stage != Stage::Applying
    }

    fn draw(&mut self, ui: &mut egui::Ui, view: &AppView<'_>, tx: &CommandSender) {
        let id = self.id;
        egui::ScrollArea::vertical()
            .id_salt(("replay", id))
            .show(ui, |ui| ui.push_id(("replay", id), |ui| view::show(self, view, ui, tx)));
    }

    /// The folder picked, the plan, the apply's end or the verification a job brought.
    fn apply(&mut self, job: JobId, label: &str, result: JobResult, _view: &AppView<'_>) {
        let r = self;
        match result {
            Ok(JobOutput::ReplayFolder { folder, .. }) => r.folder = folder.display().to_string(),
            Ok(JobOutput::ReplayPlanned { result, .. }) => {
                if let Ok(p) = &result
                    && p.resumed
                {
                    // A plan from a journal keeps its options: show them.
                    r.policy = p.plan.options.policy;
                    r.auto_id = p.plan.options.auto_id;
                }
                r.planned = Some(result.map(std::sync::Arc::from));
                r.stage = Stage::Planned;
            }
            Ok(JobOutput::ReplayApplied { result, .. }) => {
                if let Ok(o) = &*result
                    && let Some(v) = &o.verification
                {
                    r.verification = Some(Ok(v.clone()));
                }
                r.applied = Some(*result);
                r.stage = Stage::Applied;
            }
            Ok(JobOutput::ReplayVerified { result, .. }) => {
                r.verification = Some(result);
                r.verifying = false;
            }
            Ok(_) => {}
            Err(e) => {
                if !matches!(e, JobError::Cancelled) {
                    r.error = Some(format!("{label}: {e}"));
                }
                let which = Some(job);
                if which == r.jobs.plan && r.stage == Stage::Planning {
                    r.stage = Stage::Setup;
                } else if which == r.jobs.apply && r.stage == Stage::Applying {
                    r.stage = Stage::Applied;
                } else if which == r.jobs.verify {
                    r.verifying = false;
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
