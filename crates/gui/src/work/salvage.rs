//! The app's handlers for the salvage pane: the old primary's pchannels, the checkpoints, a set
//! of dumps started (one job per pchannel, in parallel), one dump or a whole folder resumed,
//! unfinished dumps looked for, and each finished dump read back for its report. The jobs share
//! each dump's progress with the pane through its live slot.
//!
//! Must never: wait in a frame, or start over a folder that holds a salvage (it is resumed).

use crate::WalscopeApp;
use crate::jobs::{JobOwner, Live, LiveDump};
use crate::net::profile::ConnectionProfile;
use crate::panes::PaneId;
use crate::panes::outcome::JobOutput;
use crate::panes::salvage::{CheckpointsFailed, DumpEnd, DumpOutcome, PchannelsUnknown, SalvageState};
use std::path::PathBuf;
use std::sync::Arc;
use walscope_ops::salvage::set::{self as salvage_set, RunOptions, SalvageSetRun, SalvageSetSpec, SetJob};

impl WalscopeApp {
    /// Opens a salvage pane, with the demo's old and new primaries chosen when `--demo` runs.
    pub fn new_salvage(&mut self) -> u64 {
        let id = self.panes.next_number();
        let mut s = SalvageState::new(id);
        let names: Vec<String> = self.connections.profiles().into_iter().map(|(p, _)| p.name).collect();
        if names.iter().any(|n| n == "demo-new-primary") && names.iter().any(|n| n == "demo-old-primary") {
            s.new_primary = "demo-new-primary".into();
            s.old_primary = "demo-old-primary".into();
            #[cfg(feature = "demo")]
            {
                s.cluster_id = crate::demo::OLD_CLUSTER_ID.into();
            }
        }
        s.folder = self
            .salvage_dir()
            .join(format!("salvage-{}", walscope_core::time::stamp(walscope_core::time::now_ms())))
            .display()
            .to_string();
        self.panes.insert(PaneId::Salvage(id), Box::new(s));
        self.layout.show_pane(crate::panes::PaneId::Salvage(id));
        id
    }

    /// Where new salvage folders are offered: `<config dir>/walscope/salvage/`.
    pub fn salvage_dir(&self) -> PathBuf {
        self.streams_dir().with_file_name("salvage")
    }

    pub(crate) fn profile(
        &self,
        name: &str,
    ) -> Result<ConnectionProfile, crate::panes::refused::ProfileRefused> {
        use crate::panes::refused::ProfileRefused;
        self.connections.profiles().into_iter().map(|(p, _)| p).find(|p| p.name == name).ok_or_else(|| {
            if name.is_empty() {
                ProfileRefused::NoneChosen
            } else {
                ProfileRefused::NoSuchProfile(name.to_string())
            }
        })
    }

    fn salvage_mut(&mut self, pane: u64) -> Option<&mut SalvageState> {
        self.panes.get_mut(&PaneId::Salvage(pane))
    }

    pub(crate) fn offer_pchannels(&mut self, pane: u64) {
        let Some(s) = self.panes.get::<SalvageState>(&PaneId::Salvage(pane)) else { return };
        let (old, cluster) = (s.old_primary.clone(), s.cluster_id.trim().to_string());
        let old = match self.profile(&old) {
            Ok(p) => p,
            Err(e) => return self.salvage_note(pane, Err(PchannelsUnknown::OldPrimary(e))),
        };
        self.jobs.spawn(format!("pchannels of {}", old.name), JobOwner::Pane(pane), move |_| async move {
            let run = RunOptions::default();
            let cluster = Some(cluster.as_str()).filter(|c| !c.is_empty());
            let result = walscope_ops::salvage::checkpoint::pchannels_from_configuration(
                &old,
                cluster,
                &run.connect,
                run.timeout,
            )
            .await;
            Ok(JobOutput::Pchannels { pane, result })
        });
    }

    fn salvage_note(&mut self, pane: u64, note: Result<usize, PchannelsUnknown>) {
        if let Some(s) = self.salvage_mut(pane) {
            s.pchannel_note = Some(note);
        }
    }

    pub(crate) fn fetch_checkpoints(&mut self, pane: u64) {
        let Some(s) = self.panes.get::<SalvageState>(&PaneId::Salvage(pane)) else { return };
        let (new, old, cluster, pchannels) = (
            s.new_primary.clone(),
            s.old_primary.clone(),
            s.cluster_id.trim().to_string(),
            s.pchannel_list(),
        );
        let (new, old) = match (self.profile(&new), self.profile(&old)) {
            (Ok(n), o) => (n, o.ok()),
            (Err(e), _) => {
                if let Some(s) = self.salvage_mut(pane) {
                    s.checkpoints = Some(Err(CheckpointsFailed::NewPrimary(e)));
                }
                return;
            }
        };
        if let Some(s) = self.salvage_mut(pane) {
            s.checkpoints = None;
        }
        self.jobs.spawn("salvage checkpoints", JobOwner::Pane(pane), move |_| async move {
            let run = RunOptions::default();
            // The new primary's profile says how long to wait: a GetReplicateInfo for a pchannel
            // it does not have gets no answer until then.
            let timeout = new.timeout_secs.map_or(run.timeout, std::time::Duration::from_secs);
            let result = walscope_ops::salvage::checkpoint::fetch_checkpoints(
                &new,
                old.as_ref(),
                &cluster,
                &pchannels,
                &run.connect,
                timeout,
            )
            .await;
            Ok(JobOutput::Checkpoints { pane, result })
        });
    }

    pub(crate) fn look_in_folder(&mut self, pane: u64) {
        let Some(s) = self.panes.get::<SalvageState>(&PaneId::Salvage(pane)) else { return };
        let dir = PathBuf::from(s.folder.trim());
        self.jobs.spawn_blocking("looking for unfinished dumps", JobOwner::Pane(pane), move |_| {
            let result = if walscope_ops::salvage::folder::FolderManifest::path(&dir).exists() {
                walscope_ops::salvage::folder::find_unfinished(&dir)
            } else {
                Ok(Vec::new())
            };
            Ok(JobOutput::Unfinished { pane, result })
        });
    }

    pub(crate) fn start_salvage(&mut self, pane: u64) {
        let Some(s) = self.panes.get::<SalvageState>(&PaneId::Salvage(pane)) else { return };
        let end = s.end_timetick();
        let (new, old) = (self.profile(&s.new_primary), self.profile(&s.old_primary));
        let spec = match (new, old, end) {
            (Ok(new), Ok(old), Ok(end)) => {
                let mut spec = SalvageSetSpec::new(
                    new,
                    old,
                    s.cluster_id.trim(),
                    s.ready_pchannels(),
                    s.folder.trim().as_ref(),
                );
                spec.end_timetick = end;
                spec.skip_replicated = s.skip_replicated;
                spec
            }
            (Err(e), _, _) => return self.salvage_error(pane, format!("new primary: {e}")),
            (_, Err(e), _) => return self.salvage_error(pane, format!("old primary: {e}")),
            (_, _, Err(e)) => return self.salvage_error(pane, format!("end: {e}")),
        };
        if spec.pchannels.is_empty() {
            return self
                .salvage_error(pane, "no pchannel has a checkpoint: fetch the checkpoints first".into());
        }
        self.begin(pane);
        self.jobs.spawn_graceful("salvage", JobOwner::Pane(pane), move |ctx| async move {
            let run = salvage_set::start(spec).await?;
            run_set(pane, run, ctx).await
        });
    }

    /// Continues the folder's unfinished dumps: one (`pchannel`) or all of them.
    pub(crate) fn resume_salvage(&mut self, pane: u64, pchannel: Option<String>) {
        let Some(s) = self.panes.get::<SalvageState>(&PaneId::Salvage(pane)) else { return };
        let dir = PathBuf::from(s.folder.trim());
        let old = match self.profile(&s.old_primary) {
            Ok(p) => p,
            Err(e) => return self.salvage_error(pane, format!("old primary: {e}")),
        };
        self.begin(pane);
        self.jobs.spawn_graceful("resuming salvage", JobOwner::Pane(pane), move |ctx| async move {
            let run_opts = RunOptions::default();
            let run = match &pchannel {
                None => salvage_set::resume(&dir, &old, &run_opts).await,
                Some(p) => (|| {
                    let u = walscope_ops::salvage::folder::find_unfinished(&dir)?
                        .into_iter()
                        .find(|u| u.pchannel == *p)
                        .ok_or_else(|| walscope_ops::salvage::SalvageError::Resume {
                            path: dir.display().to_string(),
                            reason: format!("{p} is complete or not in this folder"),
                        })?;
                    let job = salvage_set::resume_one(&dir, &u, &old, &run_opts)?;
                    let manifest = walscope_ops::salvage::folder::FolderManifest::load(&dir)?;
                    Ok(SalvageSetRun { dir: dir.clone(), manifest, checkpoints: None, jobs: vec![job] })
                })(),
            }?;
            run_set(pane, run, ctx).await
        });
    }

    fn begin(&mut self, pane: u64) {
        if let Some(s) = self.salvage_mut(pane) {
            s.error = None;
            s.running = true;
        }
    }

    fn salvage_error(&mut self, pane: u64, e: String) {
        if let Some(s) = self.salvage_mut(pane) {
            s.error = Some(e);
        }
    }
}

/// Shares a started set's dumps as the job's live progress, stops them when the job is
/// cancelled, waits for each and reads it back.
async fn run_set(
    pane: u64,
    run: SalvageSetRun,
    ctx: crate::jobs::JobCtx,
) -> crate::panes::outcome::JobResult {
    let dumps = run
        .jobs
        .iter()
        .map(|SetJob { pchannel, file, handle }| LiveDump {
            pchannel: pchannel.clone(),
            file: file.clone(),
            progress: handle.progress.clone(),
            cancel: handle.cancel.clone(),
        })
        .collect();
    ctx.share(Live::Salvage(dumps));
    let cancels: Vec<_> = run.jobs.iter().map(|j| j.handle.cancel.clone()).collect();
    let cancel = ctx.cancel.clone();
    let watcher = tokio::spawn(async move {
        cancel.cancelled().await;
        for c in cancels {
            c.cancel();
        }
    });
    let files: Vec<(String, PathBuf)> =
        run.jobs.iter().map(|j| (j.pchannel.clone(), j.file.clone())).collect();
    let (_, results) = run.wait().await;
    watcher.abort();
    let mut ends = Vec::new();
    for (pchannel, result) in results {
        let file = files.iter().find(|(p, _)| *p == pchannel).map(|(_, f)| f.clone()).unwrap_or_default();
        let (outcome, resumable) = match result {
            Ok(o) if o.cancelled => (Ok(DumpOutcome::Cancelled { frames: o.manifest.frames }), true),
            // The server closed the stream before a message at the end time: the WAL holds
            // nothing later (a crashed primary's tail stops), or the stream was cut short.
            Ok(o) if o.ended_before_end => (
                Ok(DumpOutcome::EndedBeforeEnd { frames: o.manifest.frames, bytes: o.manifest.bytes }),
                false,
            ),
            Ok(o) => {
                (Ok(DumpOutcome::Complete { frames: o.manifest.frames, bytes: o.manifest.bytes }), false)
            }
            Err(e) => (Err(Arc::new(e)), true),
        };
        let f = file.clone();
        let report = tokio::task::spawn_blocking(move || {
            walscope_ops::salvage::report::analyze_dump(&f, Default::default()).map_err(Arc::new)
        })
        .await
        .ok()
        .filter(|_| file.exists());
        ends.push(DumpEnd { pchannel, file, outcome, resumable, report });
    }
    Ok(JobOutput::SalvageEnded { pane, ends })
}
