//! The salvage job (reference §4, §8): read the salvage checkpoint from the NEW primary with
//! GetReplicateInfo, then DumpMessages on the OLD primary from that checkpoint into a dump file
//! (varint-delimited `DumpMessagesResponse` frames) with a manifest that records, per message,
//! where to resume.
//!
//! The checkpoint rule is CDC's: start at the checkpoint id inclusively and keep timeticks
//! greater than the checkpoint's (`include_start_message`, `start_timetick = tt + 1`). Resuming
//! (after a dropped stream, or from the manifest) restarts at the last written message's
//! last-confirmed id, inclusively, and skips locally up to and including that message, so
//! nothing is written twice and nothing is missed. Appends are buffered and fsynced every
//! `SyncPolicy` frames, short enough to do on the runtime's worker. Must never: append a message it cannot place
//! (no id or timetick), or retry in a way that could duplicate a frame.

use crate::dump::{DumpWriter, Framing, Manifest, ResumePoint, SyncPolicy};
use crate::net::grpc::{GrpcSettings, GrpcTransport};
use crate::net::{CallOptions, NetError, Transport};
use crate::schema::SchemaSet;
use crate::wal::{WalBackend, parse_base36_u64};
use futures::StreamExt;
use prost_reflect::{DynamicMessage, MessageDescriptor, MethodDescriptor, Value};
use serde_json::json;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub const RESPONSE_TYPE: &str = "milvus.proto.milvus.DumpMessagesResponse";

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
}

#[derive(Debug, Clone)]
pub struct SalvageOutcome {
    pub manifest: Manifest,
    /// Frames written by this run (the file may hold more from earlier runs).
    pub written: u64,
    pub cancelled: bool,
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
    #[error("the salvage task stopped abnormally: {0}")]
    Task(String),
}

pub struct SalvageHandle {
    pub progress: watch::Receiver<SalvageProgress>,
    pub cancel: CancellationToken,
    pub task: tokio::task::JoinHandle<Result<SalvageOutcome, SalvageError>>,
}

impl SalvageHandle {
    pub async fn wait(self) -> Result<SalvageOutcome, SalvageError> {
        self.task.await.map_err(|e| SalvageError::Task(e.to_string()))?
    }
}

/// Starts the job on the current runtime.
pub fn spawn(spec: SalvageSpec) -> SalvageHandle {
    let (tx, rx) = watch::channel(SalvageProgress {
        frames: 0,
        bytes: 0,
        rate_per_s: 0.0,
        last_timetick: 0,
        end_timetick: spec.end_timetick,
        last_message_id: None,
        elapsed: Duration::ZERO,
        state: SalvageState::Checkpoint,
    });
    let cancel = CancellationToken::new();
    let token = cancel.clone();
    let task = tokio::spawn(async move {
        let result = run(&spec, &tx, &token).await;
        if let Err(e) = &result {
            tx.send_modify(|p| p.state = SalvageState::Failed(e.to_string()));
        }
        result
    });
    SalvageHandle { progress: rx, cancel, task }
}

struct Types {
    info: MethodDescriptor,
    dump: MethodDescriptor,
    response: MessageDescriptor,
}

fn types(set: &SchemaSet) -> Result<Types, SalvageError> {
    let missing = |n: &str| SalvageError::Task(format!("built-in schema lacks {n}"));
    let svc = set
        .pool()
        .get_service_by_name("milvus.proto.milvus.MilvusService")
        .ok_or_else(|| missing("MilvusService"))?;
    let method = |n: &str| svc.methods().find(|m| m.name() == n).ok_or_else(|| missing(n));
    Ok(Types {
        info: method("GetReplicateInfo")?,
        dump: method("DumpMessages")?,
        response: set.message(RESPONSE_TYPE).map_err(|_| missing(RESPONSE_TYPE))?,
    })
}

/// Where to (re)start the stream, and which message must be seen before writing resumes.
struct Cursor {
    request: serde_json::Value,
    skip_through: Option<ResumePoint>,
}

pub async fn run(
    spec: &SalvageSpec,
    progress: &watch::Sender<SalvageProgress>,
    cancel: &CancellationToken,
) -> Result<SalvageOutcome, SalvageError> {
    let set = SchemaSet::builtin();
    let t = types(&set)?;
    let path_text = spec.out.display().to_string();
    let file_err = |reason: String| SalvageError::File { path: path_text.clone(), reason };
    let (mut writer, base_request) = if spec.resume {
        let w = DumpWriter::resume(&spec.out, spec.sync)
            .map_err(|reason| SalvageError::Resume { path: path_text.clone(), reason })?;
        let request = w.manifest().request.clone();
        (w, request)
    } else {
        let request = checkpoint_request(spec, &t).await?;
        let endpoint = Some(spec.old_primary.endpoint.clone());
        let manifest = Manifest::new(Framing::VarintDelimited, RESPONSE_TYPE, endpoint, request.clone());
        let w = DumpWriter::create(&spec.out, Framing::VarintDelimited, manifest, spec.sync)
            .map_err(|e| file_err(e.to_string()))?;
        (w, request)
    };
    let end_timetick = base_request.get("end_timetick").and_then(json_u64).unwrap_or(0);
    let mut cursor = Cursor { request: base_request.clone(), skip_through: writer.manifest().resume.clone() };
    if let Some(r) = &cursor.skip_through {
        cursor.request = restart_request(&base_request, r);
    }
    let old = GrpcTransport::connect(&spec.old_primary).await?;
    let started = Instant::now();
    let (start_frames, mut written, mut retries) = (writer.frames(), 0u64, 0u32);
    let mut last = cursor.skip_through.clone();
    let mut last_report = Instant::now();
    let report = |writer: &DumpWriter, last: &Option<ResumePoint>, state: SalvageState| {
        let elapsed = started.elapsed();
        let new_frames = writer.frames() - start_frames;
        progress.send_replace(SalvageProgress {
            frames: writer.frames(),
            bytes: writer.bytes(),
            rate_per_s: new_frames as f64 / elapsed.as_secs_f64().max(1e-3),
            last_timetick: last.as_ref().map_or(0, |r| r.timetick),
            end_timetick,
            last_message_id: last.as_ref().map(|r| r.message_id.clone()),
            elapsed,
            state,
        });
    };
    report(&writer, &last, SalvageState::Dumping);
    let outcome = 'stream: loop {
        let request = DynamicMessage::deserialize(t.dump.input(), cursor.request.clone())
            .map_err(|e| SalvageError::Task(format!("stored request is not a DumpMessagesRequest: {e}")))?;
        let opts = CallOptions { metadata: Vec::new(), timeout: Some(spec.timeout), ..Default::default() };
        let failure = match old.call_server_stream(&t.dump, &request, &opts).await {
            Err(e) => e,
            Ok(reply) => {
                let mut messages = reply.messages;
                loop {
                    let next = tokio::select! {
                        _ = cancel.cancelled() => break 'stream true,
                        n = messages.next() => n,
                    };
                    let bytes = match next {
                        None => break 'stream false,
                        Some(Err(e)) => break e,
                        Some(Ok(b)) => b,
                    };
                    let Some(point) = place(&t.response, &bytes, &old)? else { continue };
                    if let Some(skip) = &cursor.skip_through {
                        if point.message_id == skip.message_id {
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
                        }
                        continue;
                    }
                    writer.append(&bytes, Some(point.clone())).map_err(|e| file_err(e.to_string()))?;
                    written += 1;
                    last = Some(point);
                    if last_report.elapsed() >= Duration::from_millis(100) {
                        report(&writer, &last, SalvageState::Dumping);
                        last_report = Instant::now();
                    }
                }
            }
        };
        if !retriable(&failure) || retries >= spec.max_retries {
            // What is on disk stays valid and resumable.
            let _ = writer.sync();
            return Err(failure.into());
        }
        retries += 1;
        report(&writer, &last, SalvageState::Reconnecting { attempt: retries, reason: failure.to_string() });
        tokio::time::sleep(Duration::from_millis(100 * u64::from(retries))).await;
        if let Some(r) = &last {
            cursor = Cursor { request: restart_request(&base_request, r), skip_through: Some(r.clone()) };
        }
    };
    let cancelled = outcome;
    let manifest = writer.finish(!cancelled).map_err(|e| file_err(e.to_string()))?;
    report_final(progress, &manifest, if cancelled { SalvageState::Cancelled } else { SalvageState::Done });
    Ok(SalvageOutcome { manifest, written, cancelled })
}

fn report_final(progress: &watch::Sender<SalvageProgress>, m: &Manifest, state: SalvageState) {
    progress.send_modify(|p| {
        p.frames = m.frames;
        p.bytes = m.bytes;
        p.state = state;
    });
}

/// A dropped connection or a restarting server; never an answer about the request itself.
fn retriable(e: &NetError) -> bool {
    match e {
        NetError::Status { code, message, .. } => {
            code == "UNAVAILABLE"
                || (code == "UNKNOWN" && message.contains("transport"))
                || code == "CANCELLED"
        }
        NetError::Connect { .. } | NetError::Timeout { .. } | NetError::Protocol { .. } => true,
        _ => false,
    }
}

fn json_u64(v: &serde_json::Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

/// The stored request restarted at a resume point: its last-confirmed id, inclusively.
fn restart_request(base: &serde_json::Value, r: &ResumePoint) -> serde_json::Value {
    let mut req = base.clone();
    req["start_message_id"] = json!({"id": r.last_confirmed_id, "WAL_name": wal_enum_name(&r.wal)});
    req["include_start_message"] = json!(true);
    req
}

fn wal_enum_name(backend_name: &str) -> &'static str {
    match backend_name {
        "RocksMQ" => "RocksMQ",
        "Pulsar" => "Pulsar",
        "Kafka" => "Kafka",
        "Woodpecker" => "WoodPecker",
        _ => "Unknown",
    }
}

/// GetReplicateInfo on the new primary, turned into the DumpMessagesRequest for the old one.
async fn checkpoint_request(spec: &SalvageSpec, t: &Types) -> Result<serde_json::Value, SalvageError> {
    let new = GrpcTransport::connect(&spec.new_primary).await?;
    let req = DynamicMessage::deserialize(
        t.info.input(),
        json!({"source_cluster_id": spec.source_cluster_id, "target_pchannel": spec.pchannel}),
    )
    .map_err(|e| SalvageError::Task(e.to_string()))?;
    let opts = CallOptions { timeout: Some(spec.timeout), ..Default::default() };
    let reply = new.call_unary(&t.info, &req, &opts).await?;
    let no_checkpoint = || SalvageError::NoCheckpoint {
        endpoint: spec.new_primary.endpoint.clone(),
        cluster: spec.source_cluster_id.clone(),
        pchannel: spec.pchannel.clone(),
    };
    let ckpt = match reply.message.get_field_by_name("salvage_checkpoint") {
        Some(v) if reply.message.has_field_by_name("salvage_checkpoint") => v.as_message().cloned(),
        _ => None,
    }
    .ok_or_else(no_checkpoint)?;
    let id = ckpt.get_field_by_name("message_id").and_then(|v| v.as_message().cloned());
    let Some(id) = id
        .filter(|m| m.get_field_by_name("id").and_then(|v| v.as_str().map(|s| !s.is_empty())) == Some(true))
    else {
        return Err(no_checkpoint());
    };
    let pchannel =
        ckpt.get_field_by_name("pchannel").and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let tt = ckpt.get_field_by_name("time_tick").and_then(|v| v.as_u64()).unwrap_or(0);
    let id_json: serde_json::Value = serde_json::from_str(&crate::codec::to_json(&id, false))
        .map_err(|e| SalvageError::Task(e.to_string()))?;
    Ok(json!({
        "pchannel": if pchannel.is_empty() { spec.pchannel.clone() } else { pchannel },
        "start_message_id": id_json,
        // CDC keeps only timeticks above the checkpoint's (reference §4).
        "start_timetick": (tt + 1).to_string(),
        "end_timetick": spec.end_timetick.to_string(),
        "include_start_message": true,
    }))
}

/// The resume point of one received frame; None for a success `status` frame (skipped).
fn place(
    response: &MessageDescriptor,
    bytes: &[u8],
    from: &GrpcTransport,
) -> Result<Option<ResumePoint>, SalvageError> {
    let bad = |reason: String| SalvageError::Protocol { endpoint: from.endpoint().to_string(), reason };
    let msg = DynamicMessage::decode(response.clone(), bytes)
        .map_err(|e| bad(format!("not a DumpMessagesResponse: {e}")))?;
    if msg.has_field_by_name("status") {
        let status = msg.get_field_by_name("status").and_then(|v| v.as_message().cloned());
        let code =
            status.as_ref().and_then(|s| s.get_field_by_name("code")).and_then(|v| v.as_i32()).unwrap_or(0);
        if code == 0 {
            return Ok(None);
        }
        let reason = status
            .as_ref()
            .and_then(|s| s.get_field_by_name("reason"))
            .and_then(|v| v.as_str().map(str::to_string));
        return Err(bad(format!("error status {code}: {}", reason.unwrap_or_default())));
    }
    let m = msg
        .get_field_by_name("message")
        .and_then(|v| v.as_message().cloned())
        .ok_or_else(|| bad("frame without message".into()))?;
    let id = m
        .get_field_by_name("id")
        .and_then(|v| v.as_message().cloned())
        .ok_or_else(|| bad("message without id".into()))?;
    let id_text = id.get_field_by_name("id").and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let wal = id.get_field_by_name("WAL_name").and_then(|v| v.as_enum_number()).unwrap_or(0);
    let props = m.get_field_by_name("properties");
    let prop = |k: &str| -> Option<String> {
        match props.as_deref() {
            Some(Value::Map(map)) => {
                map.get(&prost_reflect::MapKey::String(k.into())).and_then(|v| v.as_str().map(str::to_string))
            }
            _ => None,
        }
    };
    if id_text.is_empty() {
        return Err(bad("message without id".into()));
    }
    let tt_text = prop("_tt").ok_or_else(|| bad(format!("message {id_text} has no _tt")))?;
    let timetick = parse_base36_u64(&tt_text).map_err(|e| bad(format!("message {id_text}: _tt: {e}")))?;
    let last_confirmed_id = match prop("_lc") {
        Some(lc) if prop("_lcs").is_none() && !lc.is_empty() => lc,
        _ => id_text.clone(),
    };
    Ok(Some(ResumePoint {
        message_id: id_text,
        wal: WalBackend::from_number(wal).name().to_string(),
        last_confirmed_id,
        timetick,
    }))
}
