//! Salvage of several pchannels at once into one folder (see [`super::folder`]): the
//! checkpoints fetched in parallel from the new primary, then one salvage job per pchannel that
//! has one, all running in parallel, each with its own progress, cancel and result. A folder
//! is resumed whole ([`resume`]) or a dump at a time ([`resume_one`]) after a cancel, a failure
//! or a restart of the app; only the old primary is needed then (the checkpoints are in the
//! folder).
//!
//! The app and the CLI both start sets here. Must never: start over a folder that already holds
//! a salvage (resume it instead), or reach a server but the two profiles given.

use super::checkpoint::{Checkpoints, fetch_checkpoints, settings};
use super::folder::{
    ClusterRef, FOLDER_FORMAT_VERSION, FolderEntry, FolderManifest, Unfinished, dump_file_name,
    find_unfinished,
};
use super::job::{self as salvage, SalvageError, SalvageHandle, SalvageOptions, SalvageSpec};
use crate::dump::SyncPolicy;
use crate::net::ConnectOptions;
use crate::net::grpc::GrpcSettings;
use crate::net::profile::ConnectionProfile;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What to salvage, from where, into which folder.
#[derive(Debug, Clone)]
pub struct SalvageSetSpec {
    /// The promoted cluster, which holds the salvage checkpoints.
    pub new_primary: ConnectionProfile,
    /// The failed cluster, whose WAL is dumped.
    pub old_primary: ConnectionProfile,
    /// The old primary's cluster id.
    pub source_cluster_id: String,
    pub pchannels: Vec<String>,
    /// Stop each dump after this timetick (None: run until cancelled).
    pub end_timetick: Option<u64>,
    /// Leave out what the new primary already has (`_tt` ≤ each checkpoint's timetick).
    pub skip_replicated: bool,
    pub out_dir: PathBuf,
    pub run: RunOptions,
}

impl SalvageSetSpec {
    /// A spec with the defaults: no end, skip what is replicated, [`RunOptions::default`].
    pub fn new(
        new_primary: ConnectionProfile,
        old_primary: ConnectionProfile,
        source_cluster_id: &str,
        pchannels: Vec<String>,
        out_dir: &Path,
    ) -> SalvageSetSpec {
        SalvageSetSpec {
            new_primary,
            old_primary,
            source_cluster_id: source_cluster_id.into(),
            pchannels,
            end_timetick: None,
            skip_replicated: true,
            out_dir: out_dir.to_path_buf(),
            run: RunOptions::default(),
        }
    }
}

/// How each job runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Reconnects after a dropped stream, per run (only ever from the last written message).
    pub max_retries: u32,
    /// Deadline for each unary call and for the first message of each stream.
    pub timeout: Duration,
    pub connect: ConnectOptions,
    pub sync: SyncPolicy,
    /// Resuming: a new end timetick for the folder's unfinished dumps, recorded in
    /// `salvage.json` and in each dump's manifest (None: keep the folder's).
    pub end_timetick: Option<u64>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_retries: 5,
            timeout: Duration::from_secs(30),
            connect: ConnectOptions { connect_timeout: Duration::from_secs(10), ..Default::default() },
            sync: SyncPolicy::default(),
            end_timetick: None,
        }
    }
}

/// One running dump of a set.
pub struct SetJob {
    pub pchannel: String,
    pub file: PathBuf,
    pub handle: SalvageHandle,
}

/// A started (or resumed) set: the folder, what it holds, and the jobs now running.
pub struct SalvageSetRun {
    pub dir: PathBuf,
    pub manifest: FolderManifest,
    /// The checkpoints as fetched (None for a resumed set: they are in the manifest).
    pub checkpoints: Option<Checkpoints>,
    pub jobs: Vec<SetJob>,
}

impl SalvageSetRun {
    pub fn job(&self, pchannel: &str) -> Option<&SetJob> {
        self.jobs.iter().find(|j| j.pchannel == pchannel)
    }

    /// Cancels every job (each leaves a resumable dump).
    pub fn cancel_all(&self) {
        for j in &self.jobs {
            j.handle.cancel.cancel();
        }
    }

    /// Waits for every job; the folder manifest as it stands afterwards, and each result.
    pub async fn wait(
        self,
    ) -> (FolderManifest, Vec<(String, Result<salvage::SalvageOutcome, SalvageError>)>) {
        let mut results = Vec::new();
        for j in self.jobs {
            results.push((j.pchannel, j.handle.wait().await));
        }
        let mut manifest = FolderManifest::load(&self.dir).unwrap_or(self.manifest);
        manifest.refresh(&self.dir);
        (manifest, results)
    }
}

fn cluster_ref(p: &ConnectionProfile, version: Option<String>) -> ClusterRef {
    ClusterRef {
        endpoint: p.endpoint.clone(),
        profile: Some(p.name.clone()).filter(|n| *n != p.endpoint),
        version,
    }
}

fn grpc(profile: &ConnectionProfile, run: &RunOptions) -> Result<GrpcSettings, SalvageError> {
    Ok(settings(profile, &run.connect)?)
}

/// Fetches every checkpoint, writes `salvage.json`, and starts one job per pchannel that has a
/// checkpoint. A folder that already holds a salvage with dumps is refused: resume it instead.
pub async fn start(spec: SalvageSetSpec) -> Result<SalvageSetRun, SalvageError> {
    let dir = spec.out_dir.clone();
    let dir_text = dir.display().to_string();
    if spec.pchannels.is_empty() {
        return Err(SalvageError::Task(
            "no pchannels to salvage: name them, or take them from the old primary".into(),
        ));
    }
    // A folder whose salvage never got to dump anything (no checkpoint anywhere) may start over.
    let dumped = |m: &FolderManifest| m.pchannels.iter().any(|e| e.file.is_some());
    if FolderManifest::path(&dir).exists() && FolderManifest::load(&dir).map_or(true, |m| dumped(&m)) {
        return Err(SalvageError::File {
            path: dir_text,
            reason: "already holds a salvage (salvage.json): resume it, or choose another folder".into(),
        });
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| SalvageError::File { path: dir_text, reason: e.to_string() })?;
    let new_settings = grpc(&spec.new_primary, &spec.run)?;
    let old_settings = grpc(&spec.old_primary, &spec.run)?;
    let checkpoints = fetch_checkpoints(
        &spec.new_primary,
        Some(&spec.old_primary),
        &spec.source_cluster_id,
        &spec.pchannels,
        &spec.run.connect,
        spec.run.timeout,
    )
    .await?;
    let entries = checkpoints
        .reports
        .iter()
        .map(|r| FolderEntry {
            pchannel: r.pchannel.clone(),
            checkpoint: r.result.as_ref().ok().cloned(),
            no_checkpoint: r.result.as_ref().err().map(|e| e.to_string()),
            file: r.result.is_ok().then(|| dump_file_name(&r.pchannel)),
            complete: false,
            frames: 0,
            bytes: 0,
            last_error: None,
            ended_before_end: false,
        })
        .collect();
    let manifest = FolderManifest {
        format_version: FOLDER_FORMAT_VERSION,
        walscope_version: env!("CARGO_PKG_VERSION").into(),
        created_at: crate::time::now_rfc3339(),
        updated_at: crate::time::now_rfc3339(),
        new_primary: cluster_ref(&spec.new_primary, checkpoints.new_primary_version.clone()),
        old_primary: cluster_ref(&spec.old_primary, None),
        source_cluster_id: spec.source_cluster_id.clone(),
        end_timetick: spec.end_timetick,
        skip_replicated: spec.skip_replicated,
        pchannels: entries,
    };
    manifest.save(&dir)?;
    let mut jobs = Vec::new();
    for e in &manifest.pchannels {
        let (Some(file), Some(ckpt)) = (&e.file, &e.checkpoint) else { continue };
        let out = dir.join(file);
        let job = SalvageSpec {
            new_primary: new_settings.clone(),
            old_primary: old_settings.clone(),
            source_cluster_id: spec.source_cluster_id.clone(),
            pchannel: e.pchannel.clone(),
            out: out.clone(),
            end_timetick: spec.end_timetick.unwrap_or(0),
            resume: false,
            max_retries: spec.run.max_retries,
            timeout: spec.run.timeout,
            sync: spec.run.sync,
        };
        let options = SalvageOptions {
            skip_replicated: spec.skip_replicated,
            checkpoint: Some(ckpt.clone()),
            folder: Some(dir.clone()),
            replace_existing: false,
        };
        jobs.push(SetJob {
            pchannel: e.pchannel.clone(),
            file: out,
            handle: salvage::spawn_with(job, options),
        });
    }
    Ok(SalvageSetRun { dir, manifest, checkpoints: Some(checkpoints), jobs })
}

/// Continues one unfinished dump of the folder (from its manifest; a dump never created starts
/// from its stored checkpoint). Only the old primary is called.
pub fn resume_one(
    dir: &Path,
    unfinished: &Unfinished,
    old_primary: &ConnectionProfile,
    run: &RunOptions,
) -> Result<SetJob, SalvageError> {
    let folder = FolderManifest::load(dir)?;
    let old = grpc(old_primary, run)?;
    let job = SalvageSpec {
        new_primary: GrpcSettings::new(folder.new_primary.endpoint.clone()),
        old_primary: old,
        source_cluster_id: folder.source_cluster_id.clone(),
        pchannel: unfinished.pchannel.clone(),
        out: unfinished.file.clone(),
        end_timetick: folder.end_timetick.unwrap_or(0),
        resume: unfinished.started,
        max_retries: run.max_retries,
        timeout: run.timeout,
        sync: run.sync,
    };
    let options = SalvageOptions {
        skip_replicated: folder.skip_replicated,
        checkpoint: Some(unfinished.checkpoint.clone()),
        folder: Some(dir.to_path_buf()),
        replace_existing: false,
    };
    Ok(SetJob {
        pchannel: unfinished.pchannel.clone(),
        file: unfinished.file.clone(),
        handle: salvage::spawn_with(job, options),
    })
}

/// Continues every unfinished dump of the folder (see [`find_unfinished`]).
pub async fn resume(
    dir: &Path,
    old_primary: &ConnectionProfile,
    run: &RunOptions,
) -> Result<SalvageSetRun, SalvageError> {
    let mut manifest = FolderManifest::load(dir)?;
    let unfinished = find_unfinished(dir)?;
    if let Some(end) = run.end_timetick.filter(|e| Some(*e) != manifest.end_timetick) {
        if unfinished.is_empty() {
            return Err(SalvageError::Resume {
                path: dir.display().to_string(),
                reason: format!(
                    "every dump is complete (end timetick {}); --end-timetick {end} cannot extend a finished salvage: start a new one into another folder",
                    manifest.end_timetick.map_or("none".to_string(), |e| e.to_string())
                ),
            });
        }
        manifest.end_timetick = Some(end);
        manifest.save(dir)?;
    }
    let mut jobs = Vec::new();
    for u in unfinished {
        jobs.push(resume_one(dir, &u, old_primary, run)?);
    }
    Ok(SalvageSetRun { dir: dir.to_path_buf(), manifest, checkpoints: None, jobs })
}
