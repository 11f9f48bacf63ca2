//! The salvage job (reference §4, §8): read the salvage checkpoint from the NEW primary with
//! GetReplicateInfo, then DumpMessages on the OLD primary from that checkpoint into a dump file
//! (varint-delimited `DumpMessagesResponse` frames) with a manifest that records, per message,
//! where to resume.
//!
//! The checkpoint's id is the last *confirmed* id of the last replicated message, so a dump from
//! it also holds messages the new primary already has (`_tt` ≤ the checkpoint's `time_tick`).
//! By default ([`SalvageOptions::skip_replicated`]) they are left out by CDC's rule: start at the
//! checkpoint id inclusively and keep timeticks greater than the checkpoint's
//! (`include_start_message`, `start_timetick = tt + 1`, judged per transaction by its commit),
//! and any plain frame at or below it that still arrives is dropped here; the choice is recorded
//! in the manifest (`job`). Resuming
//! (after a dropped stream, or from the manifest) restarts at the last written message's
//! last-confirmed id, inclusively, and skips locally up to and including that message, so
//! nothing is written twice and nothing is missed (a server before 2.6.20 ignores the inclusive
//! start; a first message past the last written one in WAL order then shows that nothing was
//! skipped). Appends are buffered and fsynced every `SyncPolicy` frames, short enough to do on
//! the runtime's worker. Failures are said in words: UNIMPLEMENTED names the old primary's
//! version, PERMISSION_DENIED the privilege, DEADLINE_EXCEEDED the timeout, and where the
//! stream stopped relative to the end timetick. Must never: append a message it cannot place
//! (no id or timetick), or retry in a way that could duplicate a frame.

use super::checkpoint::{Checkpoint, CheckpointProblem};
use super::wire::{
    FramePlacer, explain_dump, fetch_checkpoint, json_u64, restart_request, retriable, wal_number,
};
use crate::dump::lazy::{LazyDump, exists_words, holds_dump};
use crate::dump::{DumpWriter, Framing, Manifest, ResumePoint, SyncPolicy};
use crate::jobs::handle::{JobHandle, JobStopped};
use crate::net::grpc::{GrpcSettings, GrpcTransport};
use crate::net::{CallOptions, FailureKind, NetError, Transport};
use crate::schema::SchemaSet;
use crate::wal::{WalBackend, compare_message_ids};
use futures::StreamExt;
use prost_reflect::{DynamicMessage, MethodDescriptor};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub const RESPONSE_TYPE: &str = "milvus.proto.milvus.DumpMessagesResponse";

/// How long a stream may stay quiet before the job reports and syncs what it holds.
const QUIET_TICK: Duration = Duration::from_millis(250);

#[derive(Debug, Clone)]
pub struct SalvageSpec {
    pub new_primary: GrpcSettings,
    pub old_primary: GrpcSettings,
    pub source_cluster_id: String,
    /// A pchannel of the new primary; the checkpoint names the old primary's pchannel.
    pub pchannel: String,
    pub out: PathBuf,
    /// Stop after this timetick (0: run until cancelled).
    pub end_timetick: u64,
    /// Continue `out` from its manifest instead of starting over.
    pub resume: bool,
    /// Reconnects after a dropped stream, per run.
    pub max_retries: u32,
    /// Deadline for GetReplicateInfo and for the first message of each stream.
    pub timeout: Duration,
    pub sync: SyncPolicy,
}

/// What [`SalvageSpec`] does not say (kept apart so existing specs stay as they are).
#[derive(Debug, Clone)]
pub struct SalvageOptions {
    /// Leave out the messages the new primary already has (`_tt` ≤ the checkpoint's
    /// `time_tick`). Default true. A resumed dump keeps the choice its manifest records.
    pub skip_replicated: bool,
    /// The checkpoint, when already fetched (a salvage set fetches them all first); else the
    /// job asks the new primary.
    pub checkpoint: Option<Checkpoint>,
    /// The salvage folder whose `salvage.json` this dump belongs to: updated when the run ends.
    pub folder: Option<PathBuf>,
    /// A new salvage over an existing dump: move the old one aside as `.bak` (when the first
    /// frame arrives) instead of refusing (`--force`).
    pub replace_existing: bool,
}

impl Default for SalvageOptions {
    fn default() -> Self {
        SalvageOptions { skip_replicated: true, checkpoint: None, folder: None, replace_existing: false }
    }
}

/// What a salvage dump's manifest records about the job (`Manifest::job`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SalvageRecord {
    pub kind: String,
    pub source_cluster_id: String,
    pub new_primary: String,
    pub checkpoint: Option<Checkpoint>,
    pub skip_replicated: bool,
    /// The server ended the stream (OK) while the end time was still in the future.
    #[serde(default)]
    pub ended_before_end: bool,
}

impl SalvageRecord {
    pub fn of(m: &Manifest) -> Option<SalvageRecord> {
        m.job
            .as_ref()
            .and_then(|j| serde_json::from_value(j.clone()).ok())
            .filter(|r: &SalvageRecord| r.kind == "salvage")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SalvageState {
    Checkpoint,
    Dumping,
    Reconnecting { attempt: u32, reason: String },
    Done,
    Cancelled,
    Failed(String),
}

#[derive(Debug, Clone)]
pub struct SalvageProgress {
    pub frames: u64,
    pub bytes: u64,
    pub rate_per_s: f64,
    pub last_timetick: u64,
    pub end_timetick: u64,
    pub last_message_id: Option<String>,
    pub elapsed: Duration,
    pub state: SalvageState,
    /// Where the window starts: the checkpoint's timetick (0 until known).
    pub start_timetick: u64,
    /// The first timetick this run wrote (for the ETA).
    pub run_first_timetick: u64,
    /// Frames dropped here as already replicated (`_tt` ≤ the checkpoint's).
    pub skipped: u64,
}

impl SalvageProgress {
    /// How far toward the end timetick, 0..=1; None without an end or a first message.
    pub fn fraction(&self) -> Option<f64> {
        if self.end_timetick == 0 || self.last_timetick == 0 || self.end_timetick <= self.start_timetick {
            return None;
        }
        let done = self.last_timetick.saturating_sub(self.start_timetick) as f64;
        Some((done / (self.end_timetick - self.start_timetick) as f64).clamp(0.0, 1.0))
    }

    /// Time left at this run's pace through the timeticks; None without an end or a pace.
    pub fn eta(&self) -> Option<Duration> {
        if self.end_timetick == 0
            || self.run_first_timetick == 0
            || self.last_timetick <= self.run_first_timetick
        {
            return None;
        }
        let pace =
            (self.last_timetick - self.run_first_timetick) as f64 / self.elapsed.as_secs_f64().max(1e-3);
        let left = self.end_timetick.saturating_sub(self.last_timetick) as f64 / pace;
        Duration::try_from_secs_f64(left).ok()
    }
}

#[derive(Debug, Clone)]
pub struct SalvageOutcome {
    pub manifest: Manifest,
    /// Frames written by this run (the file may hold more from earlier runs).
    pub written: u64,
    pub cancelled: bool,
    /// The server ended the stream (OK) while the end time was still in the future: its
    /// scanner or channel closed, so the dump may stop short of the end (see [`SalvageRecord`]).
    pub ended_before_end: bool,
    /// Times this run reconnected after a dropped stream.
    pub reconnects: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum SalvageError {
    #[error(transparent)]
    Net(#[from] NetError),
    #[error(
        "{endpoint} has no salvage checkpoint for source cluster \"{cluster}\" on pchannel {pchannel}: \
         check the cluster id (the old primary's msgChannel.chanNamePrefix.cluster) and that the new primary was force-promoted"
    )]
    NoCheckpoint { endpoint: String, cluster: String, pchannel: String },
    #[error("{path}: {reason}")]
    File { path: String, reason: String },
    #[error("cannot resume {path}: {reason}")]
    Resume { path: String, reason: String },
    #[error("{endpoint} sent a message walscope cannot place: {reason}")]
    Protocol { endpoint: String, reason: String },
    #[error(transparent)]
    Checkpoint(Box<CheckpointProblem>),
    /// DumpMessages failed for good; `words` says why and what to do.
    #[error("DumpMessages on {endpoint}: {words}")]
    Dump {
        endpoint: String,
        words: String,
        #[source]
        source: Box<NetError>,
    },
    #[error("the salvage task stopped abnormally: {0}")]
    Task(String),
    #[error(transparent)]
    Stopped(#[from] JobStopped),
}

impl From<CheckpointProblem> for SalvageError {
    fn from(p: CheckpointProblem) -> Self {
        SalvageError::Checkpoint(Box::new(p))
    }
}

impl SalvageError {
    /// The failure kind, when the network said no (for the same words as every other call).
    pub fn kind(&self) -> Option<FailureKind> {
        match self {
            SalvageError::Net(e) => Some(e.kind()),
            SalvageError::Dump { source, .. } => Some(source.kind()),
            SalvageError::Checkpoint(p) => match p.as_ref() {
                CheckpointProblem::Net { source, .. } => Some(source.kind()),
                CheckpointProblem::Timeout { .. } => Some(FailureKind::Timeout),
                CheckpointProblem::TooOld { .. } => Some(FailureKind::NotFound),
                _ => None,
            },
            _ => None,
        }
    }
}

/// A running salvage (see [`crate::jobs::handle`]).
pub type SalvageHandle = JobHandle<SalvageProgress, SalvageOutcome, SalvageError>;

/// The job's result from its joined task (a panicked or aborted task is a `Task` error).
pub fn outcome_of(
    joined: Result<Result<SalvageOutcome, SalvageError>, tokio::task::JoinError>,
) -> Result<SalvageOutcome, SalvageError> {
    crate::jobs::handle::outcome(joined)
}

/// Starts the job on the current runtime, skipping what the new primary already has.
pub fn spawn(spec: SalvageSpec) -> SalvageHandle {
    spawn_with(spec, SalvageOptions::default())
}

/// [`spawn`] with the options a spec does not carry.
pub fn spawn_with(spec: SalvageSpec, options: SalvageOptions) -> SalvageHandle {
    let initial = SalvageProgress {
        frames: 0,
        bytes: 0,
        rate_per_s: 0.0,
        last_timetick: 0,
        end_timetick: spec.end_timetick,
        last_message_id: None,
        elapsed: Duration::ZERO,
        state: SalvageState::Checkpoint,
        start_timetick: options.checkpoint.as_ref().map_or(0, |c| c.time_tick),
        run_first_timetick: 0,
        skipped: 0,
    };
    JobHandle::spawn(initial, move |tx, token| async move {
        let result = run_with(&spec, &options, &tx, &token).await;
        if let Err(e) = &result {
            tx.send_modify(|p| p.state = SalvageState::Failed(e.to_string()));
        }
        if let Some(dir) = &options.folder {
            let error = result.as_ref().err().map(|e| e.to_string());
            super::folder::record_run(dir, &spec.out, error).await;
        }
        result
    })
}

struct Types {
    dump: MethodDescriptor,
    placer: FramePlacer,
}

fn types(set: &SchemaSet) -> Result<Types, SalvageError> {
    let missing = |n: &str| SalvageError::Task(format!("built-in schema lacks {n}"));
    let svc = set
        .pool()
        .get_service_by_name("milvus.proto.milvus.MilvusService")
        .ok_or_else(|| missing("MilvusService"))?;
    let method = |n: &str| svc.methods().find(|m| m.name() == n).ok_or_else(|| missing(n));
    Ok(Types {
        dump: method("DumpMessages")?,
        placer: FramePlacer::new(&set.message(RESPONSE_TYPE).map_err(|_| missing(RESPONSE_TYPE))?),
    })
}

/// Where to (re)start the stream, and which message must be seen before writing resumes.
struct Cursor {
    request: serde_json::Value,
    skip_through: Option<ResumePoint>,
}

/// Runs the job with the default options (see [`run_with`]).
pub async fn run(
    spec: &SalvageSpec,
    progress: &watch::Sender<SalvageProgress>,
    cancel: &CancellationToken,
) -> Result<SalvageOutcome, SalvageError> {
    run_with(spec, &SalvageOptions::default(), progress, cancel).await
}

pub async fn run_with(
    spec: &SalvageSpec,
    options: &SalvageOptions,
    progress: &watch::Sender<SalvageProgress>,
    cancel: &CancellationToken,
) -> Result<SalvageOutcome, SalvageError> {
    let set = SchemaSet::shared_builtin();
    let t = types(set)?;
    let path_text = spec.out.display().to_string();
    let file_err = |reason: String| SalvageError::File { path: path_text.clone(), reason };
    let (mut writer, base_request, mut record) = if spec.resume {
        if !holds_dump(&spec.out) {
            return Err(SalvageError::Resume {
                path: path_text.clone(),
                reason: "there is no dump to resume (no frame was ever written to it): start the salvage again without --resume".into(),
            });
        }
        let mut w = DumpWriter::resume(&spec.out, spec.sync)
            .map_err(|reason| SalvageError::Resume { path: path_text.clone(), reason })?;
        let mut request = w.manifest().request.clone();
        new_end(&mut request, spec.end_timetick, w.manifest())
            .map_err(|reason| SalvageError::Resume { path: path_text.clone(), reason })?;
        w.set_request(request.clone());
        // Dumps made before the choice was recorded skipped by the request's start timetick.
        let record = SalvageRecord::of(w.manifest()).unwrap_or_else(|| SalvageRecord {
            kind: "salvage".into(),
            source_cluster_id: spec.source_cluster_id.clone(),
            new_primary: spec.new_primary.endpoint.clone(),
            checkpoint: None,
            skip_replicated: request.get("start_timetick").and_then(json_u64).unwrap_or(0) > 0,
            ended_before_end: false,
        });
        (LazyDump::Open(Box::new(w)), request, record)
    } else {
        // Refused before any server is asked: a re-run must never cost the dump it repeats.
        if !options.replace_existing && holds_dump(&spec.out) {
            return Err(file_err(exists_words(&spec.out, "Continue it with --resume, or ")));
        }
        let checkpoint = match &options.checkpoint {
            Some(c) => c.clone(),
            None => fetch_checkpoint(spec).await?,
        };
        let request = checkpoint.dump_request(spec.end_timetick, options.skip_replicated);
        let endpoint = Some(spec.old_primary.endpoint.clone());
        let mut manifest = Manifest::new(Framing::VarintDelimited, RESPONSE_TYPE, endpoint, request.clone());
        let record = SalvageRecord {
            kind: "salvage".into(),
            source_cluster_id: spec.source_cluster_id.clone(),
            new_primary: spec.new_primary.endpoint.clone(),
            checkpoint: Some(checkpoint),
            skip_replicated: options.skip_replicated,
            ended_before_end: false,
        };
        manifest.job = serde_json::to_value(&record).ok();
        // The file is created (or the old one moved aside) only when the first frame arrives.
        (
            LazyDump::new(&spec.out, Framing::VarintDelimited, manifest, spec.sync, options.replace_existing),
            request,
            record,
        )
    };
    let end_timetick = base_request.get("end_timetick").and_then(json_u64).unwrap_or(0);
    let start_timetick = record.checkpoint.as_ref().map_or_else(
        || base_request.get("start_timetick").and_then(json_u64).unwrap_or(0).saturating_sub(1),
        |c| c.time_tick,
    );
    // Plain frames at or below this are already on the new primary.
    let skip_at = record.skip_replicated.then_some(start_timetick).filter(|t| *t > 0);
    let mut cursor = Cursor { request: base_request.clone(), skip_through: writer.manifest().resume.clone() };
    if let Some(r) = &cursor.skip_through {
        cursor.request = restart_request(&base_request, r);
    }
    let old = GrpcTransport::connect(&spec.old_primary).await?;
    let started = Instant::now();
    let (start_frames, mut written, mut retries) = (writer.frames(), 0u64, 0u32);
    let mut last_report = Instant::now();
    let (mut run_first, mut skipped) = (0u64, 0u64);
    let report = |writer: &LazyDump, state: SalvageState, first: u64, skipped: u64| {
        // The last message written (or, resuming, the manifest's): where a restart begins.
        let last = writer.last_resume();
        let elapsed = started.elapsed();
        let new_frames = writer.frames() - start_frames;
        progress.send_replace(SalvageProgress {
            frames: writer.frames(),
            bytes: writer.bytes(),
            rate_per_s: new_frames as f64 / elapsed.as_secs_f64().max(1e-3),
            last_timetick: last.map_or(0, |r| r.timetick),
            end_timetick,
            last_message_id: last.map(|r| r.message_id.clone()),
            elapsed,
            state,
            start_timetick,
            run_first_timetick: first,
            skipped,
        });
    };
    report(&writer, SalvageState::Dumping, run_first, skipped);
    // Filled by each placed frame and swapped into the writer: one set of buffers per job.
    let mut point = ResumePoint::default();
    let outcome = 'stream: loop {
        let request = DynamicMessage::deserialize(t.dump.input(), cursor.request.clone())
            .map_err(|e| SalvageError::Task(format!("stored request is not a DumpMessagesRequest: {e}")))?;
        let opts = CallOptions { metadata: Vec::new(), timeout: Some(spec.timeout), ..Default::default() };
        let failure = match old.call_server_stream(&t.dump, &request, &opts).await {
            Err(e) => e,
            Ok(reply) => {
                let mut messages = reply.messages;
                let mut last_message = Instant::now();
                // Made once per stream: a timer and a cancellation waiter built per message
                // cost more than the message's own bookkeeping.
                let mut quiet = tokio::time::interval(QUIET_TICK);
                quiet.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                quiet.reset();
                let cancelled = cancel.cancelled();
                tokio::pin!(cancelled);
                loop {
                    let next = tokio::select! {
                        biased;
                        _ = &mut cancelled => break 'stream true,
                        n = messages.next() => n,
                        // A quiet stream still reports, and makes what it holds durable; one
                        // quiet for the whole timeout has stalled (the call's own deadline
                        // covers only its first message).
                        _ = quiet.tick() => {
                            if last_message.elapsed() < QUIET_TICK {
                                continue;
                            }
                            writer.sync_if_due().map_err(|e| file_err(e.to_string()))?;
                            report(&writer, SalvageState::Dumping, run_first, skipped);
                            if last_message.elapsed() >= spec.timeout {
                                break NetError::Timeout { method: t.dump.name().to_string(), after: spec.timeout };
                            }
                            continue;
                        }
                    };
                    let bytes = match next {
                        None => break 'stream false,
                        Some(Err(e)) => break e,
                        Some(Ok(b)) => b,
                    };
                    // One clock reading per message serves the quiet check, the writer's time
                    // rule and the report's.
                    let now = Instant::now();
                    last_message = now;
                    let Some(in_txn) = t.placer.place(&bytes, &old, &mut point)? else { continue };
                    if let Some(skip) = &cursor.skip_through {
                        let backend = WalBackend::from_number(wal_number(&skip.wal));
                        let past = compare_message_ids(backend, &point.message_id, &skip.message_id)
                            == Some(std::cmp::Ordering::Greater);
                        if point.message_id == skip.message_id {
                            cursor.skip_through = None;
                            continue;
                        } else if past && skip.last_confirmed_id == skip.message_id {
                            // The server started after the id (no inclusive start before
                            // 2.6.20): this is the first message after the last written one.
                            cursor.skip_through = None;
                        } else if point.timetick > skip.timetick {
                            return Err(SalvageError::Resume {
                                path: path_text.clone(),
                                reason: format!(
                                    "the stream passed timetick {} without the last written message {}: \
                                     the old primary's WAL no longer holds it; start a new dump",
                                    skip.timetick, skip.message_id
                                ),
                            });
                        } else {
                            continue;
                        }
                    }
                    if skip_at.is_some_and(|at| point.timetick <= at) && !in_txn {
                        skipped += 1;
                        continue;
                    }
                    if run_first == 0 {
                        run_first = point.timetick;
                    }
                    writer.append_bytes_lent(bytes, &mut point, now).map_err(|e| file_err(e.to_string()))?;
                    written += 1;
                    if now.duration_since(last_report) >= Duration::from_millis(100) {
                        report(&writer, SalvageState::Dumping, run_first, skipped);
                        last_report = now;
                    }
                }
            }
        };
        if !retriable(&failure) || retries >= spec.max_retries {
            // What is on disk stays valid and resumable.
            let _ = writer.sync();
            report(&writer, SalvageState::Dumping, run_first, skipped); // then marked failed
            let at = writer.last_resume().map_or(0, |r| r.timetick);
            return Err(explain_dump(spec, failure, at, end_timetick).await);
        }
        retries += 1;
        let state = SalvageState::Reconnecting { attempt: retries, reason: failure.to_string() };
        report(&writer, state, run_first, skipped);
        tokio::time::sleep(Duration::from_millis(100 * u64::from(retries))).await;
        if let Some(r) = writer.last_resume() {
            cursor = Cursor { request: restart_request(&base_request, r), skip_through: Some(r.clone()) };
        }
    };
    let cancelled = outcome;
    // A server reaching the end closes the stream without sending the message past it, so a
    // normal end looks like any OK end; only an end time still in the future proves the server
    // closed the stream before it (its scanner or channel closed).
    let ended_before_end = !cancelled
        && end_timetick != 0
        && crate::time::timetick_to_millis(end_timetick) > crate::time::now_ms();
    if ended_before_end != record.ended_before_end {
        record.ended_before_end = ended_before_end;
        writer.set_job(serde_json::to_value(&record).ok());
    }
    // The last report may be up to 100 ms of stream old: the final one carries where the
    // dump really ends (a finished job must not show the fraction of its last report).
    report(&writer, SalvageState::Dumping, run_first, skipped);
    let (manifest, _) = writer.finish(!cancelled).map_err(|e| file_err(e.to_string()))?;
    report_final(progress, &manifest, if cancelled { SalvageState::Cancelled } else { SalvageState::Done });
    Ok(SalvageOutcome { manifest, written, cancelled, ended_before_end, reconnects: retries })
}

/// A resume given an end timetick (`end`, 0 for none) that differs from the one the dump was
/// started with: applied to the request (and so recorded in the manifest) while the dump can
/// still honour it, refused in words when it cannot.
fn new_end(request: &mut serde_json::Value, end: u64, m: &Manifest) -> Result<(), String> {
    let was = request.get("end_timetick").and_then(json_u64).unwrap_or(0);
    if end == 0 || end == was {
        return Ok(());
    }
    if m.complete {
        return Err(format!(
            "the dump is complete (it ended at end timetick {}); --end-timetick {end} cannot extend a finished salvage: start a new one into another file",
            if was == 0 { "none".to_string() } else { was.to_string() }
        ));
    }
    let written = m.resume.as_ref().map_or(0, |r| r.timetick);
    if written > end {
        return Err(format!(
            "the dump already holds messages up to timetick {written}, past --end-timetick {end}: give a later end, or none to keep the dump's own ({})",
            if was == 0 { "none".to_string() } else { was.to_string() }
        ));
    }
    request["end_timetick"] = serde_json::json!(end.to_string());
    Ok(())
}

fn report_final(progress: &watch::Sender<SalvageProgress>, m: &Manifest, state: SalvageState) {
    progress.send_modify(|p| {
        p.frames = m.frames;
        p.bytes = m.bytes;
        p.state = state;
    });
}
