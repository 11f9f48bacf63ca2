//! The generic call path: find a method by the name a person types, send a request given as a
//! message or as exact bytes over any [`Transport`], and keep what came back (the exact
//! request bytes sent, the reply's exact bytes and its decoding, metadata, timing). Server
//! streams hand each message's exact bytes to a sink and end in a [`StreamSummary`] saying how
//! they ended; a cancel token stops them between messages.
//!
//! Owns: method lookup ([`find_method`]), [`CallRequest`], [`CallOutcome`], [`StreamSummary`].
//! Must never: re-encode a request given as bytes (where the transport can carry bytes), retry,
//! or keep a stream's messages (the sink decides what to keep).

use super::{CallOptions, NetError, Transport};
use bytes::Bytes;
use futures::StreamExt;
use futures::future::BoxFuture;
use prost_reflect::{DescriptorPool, DynamicMessage, MethodDescriptor, ServiceDescriptor};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error(
        "\"{spec}\" is not a method name: write SERVICE/METHOD or package.Service.Method, e.g. \
         milvus.proto.milvus.MilvusService/GetVersion"
    )]
    BadSpec { spec: String },
    #[error(
        "service {service} is not in the loaded schemas{close} (add --proto, --descriptor-set or --reflect)"
    )]
    NoService { service: String, close: String },
    #[error("\"{service}\" could be any of {candidates}: write the full name")]
    Ambiguous { service: String, candidates: String },
    #[error("{service} has no method {method}; it has: {methods}")]
    NoMethod { service: String, method: String, methods: String },
}

/// Finds a method by `pkg.Service/Method`, `Service/Method` (a short or partly qualified
/// service name, when only one service has it) or `pkg.Service.Method`. OpenMLDB's delete RPC
/// is found under either spelling (`DeleteSyncTask`, `DelelteSyncTask`).
pub fn find_method(pool: &DescriptorPool, spec: &str) -> Result<MethodDescriptor, CallError> {
    let spec = spec.trim().trim_start_matches('/');
    let bad = || CallError::BadSpec { spec: spec.to_string() };
    let (service, method) = match spec.rsplit_once('/') {
        Some(parts) => parts,
        None => spec.rsplit_once('.').ok_or_else(bad)?,
    };
    if service.is_empty() || method.is_empty() {
        return Err(bad());
    }
    let svc = find_service(pool, service)?;
    let found = svc
        .methods()
        .find(|m| m.name() == method)
        .or_else(|| svc.methods().find(|m| crate::datasync::calls::method_matches(m.name(), method)));
    found.ok_or_else(|| {
        let names: Vec<String> = svc.methods().map(|m| m.name().to_string()).collect();
        let close = close_names(method, names.iter().map(String::as_str));
        let methods = if close.is_empty() || close.len() == names.len() {
            names.join(", ")
        } else {
            format!("{} (closest: {})", names.join(", "), close.join(", "))
        };
        CallError::NoMethod { service: svc.full_name().to_string(), method: method.to_string(), methods }
    })
}

fn find_service(pool: &DescriptorPool, name: &str) -> Result<ServiceDescriptor, CallError> {
    if let Some(s) = pool.get_service_by_name(name) {
        return Ok(s);
    }
    let suffix = format!(".{name}");
    let matches: Vec<ServiceDescriptor> =
        pool.services().filter(|s| s.full_name().ends_with(&suffix)).collect();
    match matches.len() {
        1 => Ok(matches[0].clone()),
        0 => {
            let all: Vec<String> = pool.services().map(|s| s.full_name().to_string()).collect();
            let short = name.rsplit('.').next().unwrap_or(name);
            let close: Vec<String> = all
                .iter()
                .filter(|full| {
                    let n = full.rsplit('.').next().unwrap_or(full);
                    !close_names(short, std::iter::once(n)).is_empty()
                })
                .cloned()
                .collect();
            let close = if close.is_empty() {
                String::new()
            } else {
                format!("; did you mean {}?", close.join(", "))
            };
            Err(CallError::NoService { service: name.to_string(), close })
        }
        _ => Err(CallError::Ambiguous {
            service: name.to_string(),
            candidates: matches.iter().map(|s| s.full_name().to_string()).collect::<Vec<_>>().join(", "),
        }),
    }
}

/// Names that look like `wanted`: same letters ignoring case, one contains the other, or a few
/// edits apart.
fn close_names<'a>(wanted: &str, names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let w = wanted.to_ascii_lowercase();
    names
        .filter(|n| {
            let n = n.to_ascii_lowercase();
            n.contains(&w) || w.contains(&n) || edit_distance(&n, &w) <= (w.len() / 4).max(2)
        })
        .map(str::to_string)
        .collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb { prev } else { 1 + prev.min(cur).min(row[j]) };
            prev = cur;
        }
    }
    row[b.len()]
}

/// A request: a message (encoded canonically once), or exact bytes sent as they are.
#[derive(Debug, Clone)]
pub enum CallRequest {
    Message(DynamicMessage),
    /// Sent byte for byte by gRPC and brpc; HTTP/JSON decodes them and sends JSON.
    Bytes(Bytes),
}

impl CallRequest {
    /// The bytes that go on the wire (for a message: its canonical encoding).
    pub fn to_bytes(&self) -> Bytes {
        match self {
            CallRequest::Message(m) => Bytes::from(crate::codec::encode(m)),
            CallRequest::Bytes(b) => b.clone(),
        }
    }
}

/// What a unary call sent and got.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The request bytes handed to the transport.
    pub request: Bytes,
    /// False when the transport could not send them as they are (HTTP/JSON sends JSON).
    pub request_exact: bool,
    /// The reply exactly as received (HTTP/JSON: the canonical encoding of its JSON).
    pub reply: Bytes,
    pub message: DynamicMessage,
    pub headers: Vec<(String, String)>,
    pub trailers: Vec<(String, String)>,
    /// brpc only: the response attachment.
    pub attachment: Bytes,
    pub elapsed: Duration,
}

impl CallOutcome {
    /// An error the server put in the body of its successful answer (see [`super::body_error`]).
    pub fn body_error(&self) -> Option<String> {
        super::body_error(&self.message)
    }

    /// What the reply means that its fields alone do not say (see [`super::reply_hint`]).
    pub fn hint(&self) -> Option<super::ReplyHint> {
        super::reply_hint(&self.message)
    }
}

/// One unary call.
pub async fn call_unary(
    t: &dyn Transport,
    m: &MethodDescriptor,
    req: &CallRequest,
    opts: &CallOptions,
) -> Result<CallOutcome, NetError> {
    if m.is_client_streaming() || m.is_server_streaming() {
        return Err(NetError::Unsupported(format!(
            "{} is {}-streaming: use the streaming call",
            m.full_name(),
            if m.is_client_streaming() { "client" } else { "server" }
        )));
    }
    let request = req.to_bytes();
    let started = Instant::now();
    let reply = t.call_unary_bytes(m, &request, opts).await?;
    Ok(CallOutcome {
        request,
        request_exact: t.sends_exact_bytes(),
        reply: reply.bytes,
        message: reply.message,
        headers: reply.info.headers,
        trailers: reply.info.trailers,
        attachment: reply.info.attachment,
        elapsed: started.elapsed(),
    })
}

/// How a server stream ended.
#[derive(Debug, Clone)]
pub enum StreamEnd {
    /// The server finished the stream.
    Completed,
    /// The cancel token fired.
    Cancelled,
    /// The call failed (to open, or in the middle).
    Failed(NetError),
    /// The sink refused a message (a full disk, a closed pipe), with its reason.
    Stopped(String),
}

/// What a server stream did.
#[derive(Debug, Clone)]
pub struct StreamSummary {
    pub request: Bytes,
    pub request_exact: bool,
    pub headers: Vec<(String, String)>,
    /// When the stream opened (its headers came), after the start; None when it never did.
    /// gRPC opens a stream with its first message, so this is that message's time there.
    pub headers_after: Option<Duration>,
    /// What the server sent after the last message (gRPC: the status's trailers), when the
    /// stream reached its end; None when it did not or the transport has none.
    pub trailers: Option<Vec<(String, String)>>,
    /// Messages handed to the sink, and their bytes.
    pub count: u64,
    pub bytes: u64,
    pub elapsed: Duration,
    pub end: StreamEnd,
}

/// Where a stream's messages go, one at a time, each as the exact bytes received. A sink may
/// wait (on a slow reader, say); the stream waits with it. An `Err` stops the stream.
pub trait MessageSink: Send {
    fn accept(&mut self, message: Bytes) -> BoxFuture<'_, Result<(), String>>;
}

/// A sink that never waits.
struct FnSink<F>(F);

impl<F: FnMut(Bytes) -> Result<(), String> + Send> MessageSink for FnSink<F> {
    fn accept(&mut self, message: Bytes) -> BoxFuture<'_, Result<(), String>> {
        let r = (self.0)(message);
        Box::pin(async move { r })
    }
}

/// One server-streaming call; `sink` gets each message's exact bytes. Stops between messages
/// when `cancel` fires (and while waiting for the next one).
pub async fn call_server_stream(
    t: &dyn Transport,
    m: &MethodDescriptor,
    req: &CallRequest,
    opts: &CallOptions,
    cancel: &CancellationToken,
    sink: impl FnMut(Bytes) -> Result<(), String> + Send,
) -> StreamSummary {
    call_server_stream_into(t, m, req, opts, cancel, &mut FnSink(sink)).await
}

/// [`call_server_stream`] with a sink that may wait.
pub async fn call_server_stream_into(
    t: &dyn Transport,
    m: &MethodDescriptor,
    req: &CallRequest,
    opts: &CallOptions,
    cancel: &CancellationToken,
    sink: &mut dyn MessageSink,
) -> StreamSummary {
    let request = req.to_bytes();
    let started = Instant::now();
    let mut summary = StreamSummary {
        request: request.clone(),
        request_exact: t.sends_exact_bytes(),
        headers: Vec::new(),
        headers_after: None,
        trailers: None,
        count: 0,
        bytes: 0,
        elapsed: Duration::ZERO,
        end: StreamEnd::Completed,
    };
    let mut trailers_slot = None;
    let end = 'run: {
        if !m.is_server_streaming() || m.is_client_streaming() {
            break 'run StreamEnd::Failed(NetError::Unsupported(format!(
                "{} is not a server-streaming method",
                m.full_name()
            )));
        }
        let opened = tokio::select! {
            biased; // a cancel wins over an answer that is also ready
            _ = cancel.cancelled() => break 'run StreamEnd::Cancelled,
            r = t.call_server_stream_bytes(m, &request, opts) => r,
        };
        let mut reply = match opened {
            Ok(r) => r,
            Err(e) => break 'run StreamEnd::Failed(e),
        };
        summary.headers = std::mem::take(&mut reply.headers);
        summary.headers_after = Some(started.elapsed());
        trailers_slot = Some(reply.trailers.clone());
        loop {
            let next = tokio::select! {
                biased; // a cancel wins over a message that is also ready
                _ = cancel.cancelled() => break 'run StreamEnd::Cancelled,
                n = reply.messages.next() => n,
            };
            let bytes = match next {
                None => break 'run StreamEnd::Completed,
                Some(Err(e)) => break 'run StreamEnd::Failed(e),
                Some(Ok(b)) => b,
            };
            let len = bytes.len() as u64;
            // A sink that takes the message at once has it, cancel or not; one that waits (a
            // slow reader) is given up on when the cancel comes.
            let accepted = tokio::select! {
                biased;
                r = sink.accept(bytes) => r,
                _ = cancel.cancelled() => break 'run StreamEnd::Cancelled,
            };
            if let Err(reason) = accepted {
                break 'run StreamEnd::Stopped(reason);
            }
            summary.count += 1;
            summary.bytes += len;
        }
    };
    summary.end = end;
    summary.trailers = trailers_slot.and_then(|slot| slot.lock().ok().and_then(|mut held| held.take()));
    summary.elapsed = started.elapsed();
    summary
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaSet;

    #[test]
    fn methods_by_every_spelling() {
        let set = SchemaSet::shared_builtin();
        let pool = set.pool();
        let full = "milvus.proto.milvus.MilvusService.GetVersion";
        for spec in [
            "milvus.proto.milvus.MilvusService/GetVersion",
            "/milvus.proto.milvus.MilvusService/GetVersion",
            "MilvusService/GetVersion",
            "milvus.MilvusService/GetVersion",
            "milvus.proto.milvus.MilvusService.GetVersion",
            "MilvusService.GetVersion",
        ] {
            assert_eq!(find_method(pool, spec).unwrap().full_name(), full, "{spec}");
        }
        for spec in [
            "openmldb.datasync.SyncTool/DelelteSyncTask",
            "SyncTool/DeleteSyncTask",
            "SyncTool.DeleteSyncTask",
        ] {
            assert_eq!(find_method(pool, spec).unwrap().name(), "DeleteSyncTask", "{spec}");
        }
        let e = find_method(pool, "SyncTool/TaskStatu").unwrap_err().to_string();
        assert!(e.contains("has no method TaskStatu") && e.contains("(closest: TaskStatus)"), "{e}");
        let e = find_method(pool, "SyncTool/Nope").unwrap_err().to_string();
        assert!(e.contains("it has: CreateSyncTask, DeleteSyncTask, TaskStatus, SendData"), "{e}");
        let e = find_method(pool, "MilvusServise/GetVersion").unwrap_err().to_string();
        assert!(e.contains("did you mean milvus.proto.milvus.MilvusService?"), "{e}");
        assert!(matches!(find_method(pool, "GetVersion"), Err(CallError::BadSpec { .. })));
    }
}
