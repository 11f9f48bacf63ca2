//! Streaming a server-streaming call into a dump file: every message's exact bytes go through
//! the dump writer (fsynced every N frames or T ms, the manifest never ahead of the data, the
//! source recorded in it: endpoint, method, request as JSON and as exact bytes), while only a
//! bounded ring of the latest messages stays in memory for a live view.
//!
//! Owns: the job ([`spawn`] → [`CallStreamHandle`]: a `watch` progress snapshot, a cancel
//! token, the ring, the result). Must never: hold more than the ring's bounds in memory
//! (however long the stream runs), keep the ring locked longer than one push or one copy of
//! its handles, or leave a file whose manifest claims frames it does not hold (cancelled or
//! failed, the dump is valid and marked incomplete).

use super::handle::JobHandle;
use crate::dump::{Framing, LazyDump, Manifest, SyncPolicy};
use crate::net::call::{MessageSink, call_server_stream_into};
use crate::net::{CallOptions, CallRequest, StreamEnd, StreamSummary, Transport};
use base64::Engine;
use bytes::Bytes;
use futures::future::BoxFuture;
use prost_reflect::MethodDescriptor;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// How much of the stream stays in memory: the latest `messages`, and no more than `bytes`.
#[derive(Debug, Clone, Copy)]
pub struct RingLimits {
    pub messages: usize,
    pub bytes: usize,
}

impl Default for RingLimits {
    fn default() -> Self {
        RingLimits { messages: 1_000, bytes: 64 << 20 }
    }
}

/// The latest messages of a stream, for a live view. Shared with the job; every method takes
/// the lock for one short step only.
#[derive(Debug)]
pub struct MessageRing {
    limits: RingLimits,
    inner: Mutex<RingInner>,
}

#[derive(Debug, Default)]
struct RingInner {
    /// (index in the stream, from 0; the message's bytes)
    items: VecDeque<(u64, Bytes)>,
    bytes: usize,
    seen: u64,
}

impl MessageRing {
    pub fn new(limits: RingLimits) -> MessageRing {
        MessageRing { limits, inner: Mutex::new(RingInner::default()) }
    }

    fn push(&self, message: Bytes) {
        let Ok(mut r) = self.inner.lock() else { return };
        let index = r.seen;
        r.seen += 1;
        r.bytes += message.len();
        r.items.push_back((index, message));
        while r.items.len() > self.limits.messages.max(1)
            || (r.bytes > self.limits.bytes && r.items.len() > 1)
        {
            if let Some((_, old)) = r.items.pop_front() {
                r.bytes -= old.len();
            }
        }
    }

    /// The kept messages, oldest first, with their index in the stream (cheap: the bytes are
    /// shared, not copied).
    pub fn snapshot(&self) -> Vec<(u64, Bytes)> {
        self.inner.lock().map(|r| r.items.iter().cloned().collect()).unwrap_or_default()
    }

    /// The newest `n` kept messages, oldest first.
    pub fn latest(&self, n: usize) -> Vec<(u64, Bytes)> {
        self.inner
            .lock()
            .map(|r| r.items.iter().skip(r.items.len().saturating_sub(n)).cloned().collect())
            .unwrap_or_default()
    }

    /// Messages kept now, and their bytes.
    pub fn kept(&self) -> (usize, usize) {
        self.inner.lock().map(|r| (r.items.len(), r.bytes)).unwrap_or_default()
    }

    /// Messages seen since the start.
    pub fn seen(&self) -> u64 {
        self.inner.lock().map(|r| r.seen).unwrap_or_default()
    }
}

pub struct CallStreamSpec {
    pub transport: Arc<dyn Transport>,
    pub method: MethodDescriptor,
    pub request: CallRequest,
    pub opts: CallOptions,
    pub out: PathBuf,
    pub framing: Framing,
    pub sync: SyncPolicy,
    pub ring: RingLimits,
    /// Each message also goes here (the CLI prints them); the stream waits for a slow reader.
    pub tap: Option<mpsc::Sender<Bytes>>,
    /// `out` may hold a dump already: it is moved aside as `.bak` when the first message
    /// arrives (else such a file is never touched, and the stream fails at its first message).
    pub replace_existing: bool,
}

impl CallStreamSpec {
    /// Varint-delimited frames, the default sync policy and ring, no tap.
    pub fn new(
        transport: Arc<dyn Transport>,
        method: MethodDescriptor,
        request: CallRequest,
        opts: CallOptions,
        out: PathBuf,
    ) -> CallStreamSpec {
        CallStreamSpec {
            transport,
            method,
            request,
            opts,
            out,
            framing: Framing::VarintDelimited,
            sync: SyncPolicy::default(),
            ring: RingLimits::default(),
            replace_existing: false,
            tap: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallStreamState {
    Opening,
    Streaming,
    Done,
    Cancelled,
    Failed(String),
}

#[derive(Debug, Clone)]
pub struct CallStreamProgress {
    pub count: u64,
    pub bytes: u64,
    /// Messages per second since the start.
    pub rate_per_s: f64,
    pub bytes_per_s: f64,
    pub elapsed: Duration,
    pub state: CallStreamState,
}

#[derive(Debug, Clone)]
pub struct CallStreamOutcome {
    /// The dump's final manifest (`complete` only when the server finished the stream).
    pub manifest: Manifest,
    /// The call: request sent, headers, count, bytes, how it ended (a failed stream is here,
    /// as [`StreamEnd::Failed`]; the file up to it is valid).
    pub summary: StreamSummary,
}

#[derive(Debug, thiserror::Error)]
pub enum CallStreamError {
    #[error("{path}: {reason}")]
    File { path: String, reason: String },
    #[error(transparent)]
    Stopped(#[from] super::handle::JobStopped),
}

/// A running call stream: the one job handle (see [`super::handle`]) and the ring of its
/// newest messages, for a live view.
pub struct CallStreamHandle {
    pub job: JobHandle<CallStreamProgress, CallStreamOutcome, CallStreamError>,
    pub ring: Arc<MessageRing>,
}

impl CallStreamHandle {
    pub async fn wait(self) -> Result<CallStreamOutcome, CallStreamError> {
        self.job.wait().await
    }
}

impl std::ops::Deref for CallStreamHandle {
    type Target = JobHandle<CallStreamProgress, CallStreamOutcome, CallStreamError>;
    fn deref(&self) -> &Self::Target {
        &self.job
    }
}

impl std::ops::DerefMut for CallStreamHandle {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.job
    }
}

/// Starts the job on the current runtime.
pub fn spawn(spec: CallStreamSpec) -> CallStreamHandle {
    let initial = CallStreamProgress {
        count: 0,
        bytes: 0,
        rate_per_s: 0.0,
        bytes_per_s: 0.0,
        elapsed: Duration::ZERO,
        state: CallStreamState::Opening,
    };
    let ring = Arc::new(MessageRing::new(spec.ring));
    let shared = ring.clone();
    let job = JobHandle::spawn(initial, move |tx, token| async move {
        let result = run(spec, &tx, &token, shared).await;
        if let Err(e) = &result {
            tx.send_modify(|p| p.state = CallStreamState::Failed(e.to_string()));
        }
        result
    });
    CallStreamHandle { job, ring }
}

/// The manifest of a dump made by a call: endpoint, method, request as JSON and exact bytes.
fn manifest(spec: &CallStreamSpec, request: &Bytes) -> Manifest {
    let json = crate::net::decode_request(&spec.method, request)
        .ok()
        .and_then(|m| serde_json::from_str(&crate::codec::to_json(&m, false)).ok())
        .unwrap_or(serde_json::Value::Null);
    let mut m = Manifest::new(
        spec.framing,
        spec.method.output().full_name(),
        Some(spec.transport.endpoint().to_string()),
        json,
    );
    m.method = Some(spec.method.full_name().to_string());
    m.request_base64 = Some(base64::engine::general_purpose::STANDARD.encode(request));
    m
}

struct DumpSink<'a> {
    writer: &'a mut LazyDump,
    ring: &'a MessageRing,
    tap: Option<mpsc::Sender<Bytes>>,
    progress: &'a watch::Sender<CallStreamProgress>,
    started: Instant,
    last_report: Instant,
    count: u64,
    bytes: u64,
    /// Why the file could not be written, when that stopped the stream.
    file_error: Option<String>,
}

impl DumpSink<'_> {
    fn report(&self, state: CallStreamState) {
        let elapsed = self.started.elapsed();
        let secs = elapsed.as_secs_f64().max(1e-3);
        self.progress.send_replace(CallStreamProgress {
            count: self.count,
            bytes: self.bytes,
            rate_per_s: self.count as f64 / secs,
            bytes_per_s: self.bytes as f64 / secs,
            elapsed,
            state,
        });
    }
}

impl MessageSink for DumpSink<'_> {
    fn accept(&mut self, message: Bytes) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            if let Err(e) = self.writer.append_bytes(message.clone(), None) {
                let reason = e.to_string();
                self.file_error = Some(reason.clone());
                return Err(reason);
            }
            self.count += 1;
            self.bytes += message.len() as u64;
            self.ring.push(message.clone());
            if let Some(tap) = &self.tap
                && tap.send(message).await.is_err()
            {
                self.tap = None; // the reader left; the dump goes on
            }
            if self.last_report.elapsed() >= Duration::from_millis(100) {
                self.report(CallStreamState::Streaming);
                self.last_report = Instant::now();
            }
            Ok(())
        })
    }
}

async fn run(
    spec: CallStreamSpec,
    progress: &watch::Sender<CallStreamProgress>,
    cancel: &CancellationToken,
    ring: Arc<MessageRing>,
) -> Result<CallStreamOutcome, CallStreamError> {
    let path = spec.out.display().to_string();
    let file_err = |reason: String| CallStreamError::File { path: path.clone(), reason };
    let request_bytes = spec.request.to_bytes();
    // Created at the first message: a call that fails before it leaves every file as it was.
    let mut writer = LazyDump::new(
        &spec.out,
        spec.framing,
        manifest(&spec, &request_bytes),
        spec.sync,
        spec.replace_existing,
    );
    let request = CallRequest::Bytes(request_bytes);
    let started = Instant::now();
    let mut sink = DumpSink {
        writer: &mut writer,
        ring: &ring,
        tap: spec.tap.clone(),
        progress,
        started,
        last_report: started,
        count: 0,
        bytes: 0,
        file_error: None,
    };
    sink.report(CallStreamState::Streaming);
    let summary = call_server_stream_into(
        spec.transport.as_ref(),
        &spec.method,
        &request,
        &spec.opts,
        cancel,
        &mut sink,
    )
    .await;
    let state = match &summary.end {
        StreamEnd::Completed => CallStreamState::Done,
        StreamEnd::Cancelled => CallStreamState::Cancelled,
        StreamEnd::Failed(e) => CallStreamState::Failed(e.to_string()),
        StreamEnd::Stopped(why) => CallStreamState::Failed(why.clone()),
    };
    let file_error = sink.file_error.take();
    sink.report(state);
    drop(sink);
    if let Some(reason) = file_error {
        let _ = writer.sync(); // keep what is on disk described
        return Err(file_err(reason));
    }
    let complete = matches!(summary.end, StreamEnd::Completed);
    let (manifest, _) = writer.finish(complete).map_err(|e| file_err(e.to_string()))?;
    Ok(CallStreamOutcome { manifest, summary })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_latest_within_both_bounds() {
        let ring = MessageRing::new(RingLimits { messages: 3, bytes: 10 });
        for i in 0..5u8 {
            ring.push(Bytes::from(vec![i; 2]));
        }
        let kept: Vec<u64> = ring.snapshot().iter().map(|(i, _)| *i).collect();
        assert_eq!(kept, vec![2, 3, 4]);
        assert_eq!(ring.seen(), 5);
        ring.push(Bytes::from(vec![9; 9]));
        assert_eq!(ring.kept(), (1, 9), "the byte bound drops the older ones, never the newest");
        assert_eq!(ring.latest(5)[0].0, 5);
    }
}
