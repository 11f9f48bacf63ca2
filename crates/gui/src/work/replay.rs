//! The app's handlers for the replay pane: a pane opened (from the menu, or from a finished
//! salvage with its folder and new primary), a folder picked with the desktop's dialog, the
//! plan made (a job; nothing is sent), the plan applied after the operator confirmed (a job
//! that shares its live progress with the pane and stops between units when cancelled), and
//! the new primary verified again. Results go back to the pane with the library's typed errors.
//!
//! Must never: wait in a frame, build a transport or spawn a task outside the job registry, or
//! send anything to the new primary before the pane's confirmation was answered with "Apply".

use crate::WalscopeApp;
use crate::jobs::{JobCtx, JobOwner};
use crate::jobs::{Live, LiveApply};
use crate::net::ConnectOptions;
use crate::net::grpc::GrpcSettings;
use crate::panes::PaneId;
use crate::panes::outcome::{JobError, JobOutput};
use crate::panes::refused::ReplayRefused;
use crate::panes::replay::{ReplayState, Stage};
use std::path::PathBuf;
use std::time::Duration;
use walscope_ops::replay::apply::{self as replay, ApplyOptions, ApplyState, ReplaySpec};
use walscope_ops::replay::plan::PlanOptions;

impl WalscopeApp {
    /// Opens a replay pane on `folder` into `new_primary` (the demo's new primary when `--demo`
    /// runs and none is given).
    pub fn new_replay(&mut self, folder: Option<PathBuf>, new_primary: Option<String>) -> u64 {
        let id = self.panes.next_number();
        let mut r = ReplayState::new(id);
        r.folder = folder.map(|f| f.display().to_string()).unwrap_or_default();
        r.new_primary = new_primary.unwrap_or_else(|| {
            let names: Vec<String> = self.connections.profiles().into_iter().map(|(p, _)| p.name).collect();
            names.into_iter().find(|n| n == "demo-new-primary").unwrap_or_default()
        });
        self.panes.insert(PaneId::Replay(id), Box::new(r));
        self.layout.show_pane(crate::panes::PaneId::Replay(id));
        id
    }

    pub(crate) fn replay_mut(&mut self, pane: u64) -> Option<&mut ReplayState> {
        self.panes.get_mut(&PaneId::Replay(pane))
    }

    /// The new primary's settings and call timeout, from the pane's profile.
    fn replay_target(&self, pane: u64) -> Result<(GrpcSettings, Duration), ReplayRefused> {
        let r = self.panes.get::<ReplayState>(&PaneId::Replay(pane)).ok_or(ReplayRefused::NoSuchPane)?;
        let profile = self.profile(&r.new_primary).map_err(ReplayRefused::NewPrimary)?;
        let connect = ConnectOptions {
            connect_timeout: Duration::from_secs(10),
            metadata: crate::net::ProfileMetadata::Connection,
            ..Default::default()
        };
        let settings = crate::net::grpc_settings(&profile, &connect).map_err(|error| {
            ReplayRefused::Settings { profile: profile.name.clone(), error: Box::new(error) }
        })?;
        Ok((settings, Duration::from_secs(profile.timeout_secs.unwrap_or(30))))
    }

    fn replay_refused(&mut self, pane: u64, why: ReplayRefused) {
        if let Some(r) = self.replay_mut(pane) {
            r.error = Some(why.to_string());
        }
    }

    /// Shows the desktop's folder dialog off the UI thread; the chosen folder fills the pane.
    pub(crate) fn pick_replay_folder(&mut self, pane: u64) {
        self.jobs.spawn_blocking("choosing a salvage folder", JobOwner::Pane(pane), move |_| {
            match rfd::FileDialog::new().set_title("Choose a salvage folder").pick_folder() {
                Some(folder) => Ok(JobOutput::ReplayFolder { pane, folder }),
                None => Err(JobError::Cancelled),
            }
        });
    }

    /// Plans the replay: reads the folder, asks the new primary (DescribeCollection, Query).
    pub(crate) fn plan_replay(&mut self, pane: u64) {
        let (settings, timeout) = match self.replay_target(pane) {
            Ok(t) => t,
            Err(e) => return self.replay_refused(pane, e),
        };
        let Some(r) = self.replay_mut(pane) else { return };
        let folder = r.folder.trim().to_string();
        if folder.is_empty() {
            return self.replay_refused(pane, ReplayRefused::NoFolder);
        }
        if r.busy() {
            return;
        }
        let spec = ReplaySpec {
            inputs: vec![PathBuf::from(&folder)],
            settings,
            timeout,
            options: PlanOptions { policy: r.policy, auto_id: r.auto_id, ..Default::default() },
        };
        r.planned_with = Some((folder, r.new_primary.clone()));
        r.error = None;
        r.planned = None;
        r.applied = None;
        r.verification = None;
        r.stage = Stage::Planning;
        let job = self.jobs.spawn("replay plan", JobOwner::Pane(pane), move |_| async move {
            let result = replay::plan(&spec).await.map(Box::new);
            Ok(JobOutput::ReplayPlanned { pane, result })
        });
        if let Some(r) = self.replay_mut(pane) {
            r.jobs.plan = Some(job);
        }
    }

    /// Applies the shown plan. Only ever sent by the confirmation's "Apply".
    pub(crate) fn apply_replay(&mut self, pane: u64) {
        let (settings, timeout) = match self.replay_target(pane) {
            Ok(t) => t,
            Err(e) => return self.replay_refused(pane, e),
        };
        let Some(r) = self.replay_mut(pane) else { return };
        let Some(planned) = r.plan_ok().cloned() else { return };
        if r.stage != Stage::Confirming || !planned.plan.can_apply() || r.stale() {
            return;
        }
        let options =
            ApplyOptions { rate: r.rate.max(0.0), batch_rows: r.batch.max(1), ..Default::default() };
        r.stage = Stage::Applying;
        r.applied = None;
        r.verification = None;
        r.error = None;
        let job =
            self.jobs.spawn_graceful("replay apply", JobOwner::Pane(pane), move |ctx: JobCtx| async move {
                let handle = replay::spawn_apply(&planned, settings, timeout, options);
                ctx.share(Live::Apply(LiveApply {
                    progress: handle.progress.clone(),
                    cancel: handle.cancel.clone(),
                }));
                // The status bar's numbers, and a cancel of the job stops the apply between units.
                let (mut rx, stop, c) = (handle.progress.clone(), handle.cancel.clone(), ctx.clone());
                let watcher = tokio::spawn(async move {
                    loop {
                        tokio::select! {
                            () = c.cancel.cancelled() => {
                                stop.cancel();
                                break;
                            }
                            changed = rx.changed() => {
                                if changed.is_err() {
                                    break;
                                }
                                let p = rx.borrow_and_update().clone();
                                let done = p.units_done + p.units_already;
                                let fraction = done as f32 / p.units_total.max(1) as f32;
                                let text = match p.state {
                                    ApplyState::Verifying => "replay: verifying".to_string(),
                                    _ => format!("replay: {done}/{} units, {} rows", p.units_total, p.rows),
                                };
                                c.report(Some(fraction), text);
                            }
                        }
                    }
                });
                let result = handle.wait().await;
                watcher.abort();
                Ok(JobOutput::ReplayApplied { pane, result: Box::new(result) })
            });
        if let Some(r) = self.replay_mut(pane) {
            r.jobs.apply = Some(job);
        }
    }

    /// Stops the running apply after the unit it is sending (the journal stays consistent).
    pub(crate) fn cancel_replay(&mut self, pane: u64) {
        let Some(r) = self.panes.get::<ReplayState>(&PaneId::Replay(pane)) else { return };
        // The job's watcher stops the apply between units.
        if let Some(job) = r.jobs.apply {
            self.jobs.cancel(job);
        }
    }

    /// Reads the new primary again: row counts and the sample keys of the shown plan.
    pub(crate) fn verify_replay(&mut self, pane: u64) {
        let (settings, timeout) = match self.replay_target(pane) {
            Ok(t) => t,
            Err(e) => return self.replay_refused(pane, e),
        };
        let Some(r) = self.replay_mut(pane) else { return };
        let Some(planned) = r.plan_ok().cloned() else { return };
        if r.busy() {
            return;
        }
        r.verifying = true;
        r.error = None;
        let job = self.jobs.spawn("replay verification", JobOwner::Pane(pane), move |_| async move {
            let result = replay::verify(&planned.plan, &settings, timeout).await;
            Ok(JobOutput::ReplayVerified { pane, result })
        });
        if let Some(r) = self.replay_mut(pane) {
            r.jobs.verify = Some(job);
        }
    }
}
