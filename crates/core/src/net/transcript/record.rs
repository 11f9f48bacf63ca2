//! Building a [`Transcript`]: from a call as it happens ([`Recorder`]: started before the call,
//! told of each stream message as it arrives, finished with the call's outcome), or from a
//! history entry ([`from_history`]) with what the history kept ([`Recorded`]: headers,
//! trailers, a small unary reply and timings, bounded so the history file stays bounded).
//!
//! Must never: copy a secret into a document (metadata values are redacted by the history's
//! rule, an address loses its user info), or fill a part that was not recorded (it is left
//! empty and said in `not_recorded`).

use super::{Detail, Message, Method, MethodKind, Pair, Request, Status, Target, Timing, Transcript};
use crate::net::call::{CallOutcome, StreamEnd, StreamSummary};
use crate::net::history::{HistoryEntry, HistoryOutcome};
use crate::net::profile::TransportKind;
use crate::net::{CallOptions, NetError, Transport};
use prost_reflect::{DescriptorPool, MessageDescriptor, MethodDescriptor};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// A unary reply larger than this is not kept in the history (its size and timing are).
pub const HISTORY_REPLY_LIMIT: usize = 64 * 1024;

/// The response header holding a gRPC error's google.rpc.Status.
const STATUS_DETAILS: &str = "grpc-status-details-bin";

impl Target {
    /// Where a call went, without the address's user info.
    pub fn new(profile: Option<&str>, endpoint: &str, transport: TransportKind) -> Target {
        Target {
            profile: profile.map(str::to_string),
            endpoint: crate::net::edges::without_userinfo(endpoint),
            transport,
        }
    }
}

impl Method {
    fn of(m: &MethodDescriptor) -> Method {
        Method {
            full_name: m.full_name().to_string(),
            kind: if m.is_server_streaming() { MethodKind::ServerStream } else { MethodKind::Unary },
            input_type: m.input().full_name().to_string(),
            output_type: m.output().full_name().to_string(),
        }
    }
}

/// What a transport puts on the wire besides the call's own metadata (a gRPC connection's
/// auth and database headers), then the call's: everything the server was sent.
pub fn sent_metadata(t: &dyn Transport, opts: &CallOptions) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = t.as_grpc().map(|g| g.headers().to_vec()).unwrap_or_default();
    all.extend(opts.metadata.iter().cloned());
    all
}

/// A call being recorded.
pub struct Recorder {
    target: Target,
    method: Method,
    input: MessageDescriptor,
    output: MessageDescriptor,
    request: Vec<u8>,
    metadata: Vec<Pair>,
    deadline_ms: Option<u64>,
    start_ms: u64,
    started: Instant,
    messages: Vec<Message>,
    body_error: Option<String>,
    /// Keep at most this many bytes of messages (None: all); the rest are counted.
    keep_bytes: Option<u64>,
    kept_bytes: u64,
    /// Messages past the bound: how many, and their bytes.
    dropped: (u64, u64),
}

impl Recorder {
    /// Starts the clock: call just before sending. `metadata` is everything sent (see
    /// [`sent_metadata`]); secret values are redacted here.
    pub fn start(
        target: Target,
        m: &MethodDescriptor,
        request: &[u8],
        metadata: &[(String, String)],
        deadline: Option<Duration>,
    ) -> Recorder {
        Recorder {
            target,
            method: Method::of(m),
            input: m.input(),
            output: m.output(),
            request: request.to_vec(),
            metadata: Pair::redacted(metadata),
            deadline_ms: deadline.map(ms),
            start_ms: crate::time::now_ms(),
            started: Instant::now(),
            messages: Vec::new(),
            body_error: None,
            keep_bytes: None,
            kept_bytes: 0,
            dropped: (0, 0),
        }
    }

    /// Keeps the messages of a stream only up to about `bytes` (the window holds a transcript
    /// in memory; a stream may run for hours): later ones are counted and said missing.
    pub fn keeping_at_most(mut self, bytes: u64) -> Recorder {
        self.keep_bytes = Some(bytes);
        self
    }

    /// A response message arrived now (its exact bytes).
    pub fn message(&mut self, bytes: &[u8]) {
        let len = bytes.len() as u64;
        if self.dropped.0 > 0 || self.keep_bytes.is_some_and(|max| self.kept_bytes + len > max) {
            self.dropped = (self.dropped.0 + 1, self.dropped.1 + len);
            return;
        }
        self.kept_bytes += len;
        self.message_at(bytes, self.started.elapsed());
    }

    fn message_at(&mut self, bytes: &[u8], after: Duration) {
        let index = self.messages.len() as u64;
        let m = message(&self.output, index, bytes, Some((self.start_ms, after)));
        if self.body_error.is_none()
            && let Ok(d) = crate::codec::decode(&self.output, bytes)
        {
            self.body_error = crate::net::body_error(&d.message);
        }
        self.messages.push(m);
    }

    /// The transcript of a unary call.
    pub fn unary(mut self, result: &Result<CallOutcome, NetError>) -> Transcript {
        let transport = self.target.transport;
        let mut t = match result {
            Ok(o) => {
                self.request = o.request.to_vec();
                self.message_at(&o.reply, o.elapsed);
                let mut t = self.document(o.request_exact, Some(o.elapsed), o.elapsed);
                t.headers = Some(Pair::of(&o.headers));
                t.trailers = Some(Pair::of(&o.trailers));
                t.status.details = details(&o.headers, &o.trailers);
                t
            }
            Err(e) => {
                let total = self.started.elapsed();
                let mut t = self.document(true, None, total);
                t.status = failed(e, None);
                t
            }
        };
        unary_gaps(&mut t, transport, result.is_ok());
        t
    }

    /// The transcript of a server stream (the messages told to [`Recorder::message`]).
    pub fn stream(self, s: &StreamSummary) -> Transcript {
        let transport = self.target.transport;
        let exact = s.request_exact;
        let (dropped, dropped_bytes) = self.dropped;
        let mut t = self.document(exact, s.headers_after, s.elapsed);
        if dropped > 0 {
            t.not_recorded.push(format!(
                "response messages past the first {}: {dropped} more ({dropped_bytes} bytes) were received \
                 but not kept in this transcript (the stream's dump holds them all)",
                t.messages.len()
            ));
        }
        t.request.base64 = s.request.to_vec();
        t.request.size = s.request.len();
        t.headers = (s.headers_after.is_some() || !s.headers.is_empty()).then(|| Pair::of(&s.headers));
        t.trailers = s.trailers.as_deref().map(Pair::of);
        let body_error = t.status.body_error.take();
        t.status = match &s.end {
            StreamEnd::Completed => ok(transport, body_error, "completed"),
            StreamEnd::Cancelled => ended("cancelled", "stopped on this side", body_error),
            StreamEnd::Stopped(why) => ended("stopped", why, body_error),
            StreamEnd::Failed(e) => failed(e, Some("failed")),
        };
        if let Some(trailers) = &s.trailers {
            t.status.details = details(&s.headers, trailers);
        }
        if t.trailers.is_none() {
            t.not_recorded.push(match transport {
                TransportKind::Grpc => "trailers: the stream did not reach its end (cancelled, stopped, or \
                                       the connection failed before the server's status)"
                    .into(),
                _ => "trailers: this transport carries no server streams".into(),
            });
        }
        t
    }

    fn document(self, exact: bool, headers_after: Option<Duration>, total: Duration) -> Transcript {
        let first = self.messages.first().and_then(|m| m.offset_ms);
        let transport = self.target.transport;
        let request = request(&self.input, self.request, exact);
        Transcript {
            format: super::FORMAT.into(),
            version: super::VERSION,
            source: "call".into(),
            history_id: None,
            target: self.target,
            method: self.method,
            request,
            metadata: self.metadata,
            deadline_ms: self.deadline_ms,
            headers: None,
            messages: self.messages,
            trailers: None,
            status: ok(transport, self.body_error, ""),
            timing: Timing {
                start_utc: crate::time::format_millis_utc(self.start_ms),
                start_ms: self.start_ms,
                headers_ms: headers_after.map(ms),
                first_message_ms: first,
                total_ms: ms(total),
            },
            not_recorded: Vec::new(),
        }
    }
}

/// What each transport cannot hand over for a unary call, said plainly.
fn unary_gaps(t: &mut Transcript, transport: TransportKind, answered: bool) {
    match transport {
        TransportKind::Brpc => {
            t.headers = None;
            t.trailers = None;
            t.not_recorded.push(
                "headers and trailers: brpc (baidu_std) has none; its error code and text are the status"
                    .into(),
            );
        }
        TransportKind::Http => {
            t.trailers = None;
            t.not_recorded.push("trailers: HTTP/1.1 replies carry none".into());
        }
        TransportKind::Grpc => {}
    }
    if !answered {
        t.headers = None;
        t.trailers = None;
        t.not_recorded.push(
            "headers, trailers and status details of a failed call: walscope keeps its code and message"
                .into(),
        );
    }
}

fn request(input: &MessageDescriptor, bytes: Vec<u8>, exact: bool) -> Request {
    let json =
        crate::codec::decode(input, &bytes).ok().map(|d| crate::codec::to_json_value_or_error(&d.message));
    Request { json, size: bytes.len(), base64: bytes, sent_exactly: exact }
}

fn message(output: &MessageDescriptor, index: u64, bytes: &[u8], at: Option<(u64, Duration)>) -> Message {
    let (json, json_error) = match crate::codec::decode(output, bytes) {
        Ok(d) => (Some(crate::codec::to_json_value_or_error(&d.message)), None),
        Err(e) => (None, Some(format!("not a valid {}: {e}", output.full_name()))),
    };
    let arrived = at.map(|(start, after)| start.saturating_add(ms(after)));
    Message {
        index,
        json,
        json_error,
        base64: bytes.to_vec(),
        size: bytes.len(),
        arrived_utc: arrived.map(crate::time::format_millis_utc),
        offset_ms: at.map(|(_, after)| ms(after)),
    }
}

fn ok(transport: TransportKind, body_error: Option<String>, end: &str) -> Status {
    let (code, name) = match transport {
        TransportKind::Http => (200, "HTTP 200"),
        _ => (0, "OK"),
    };
    Status {
        code: Some(code),
        name: name.into(),
        message: String::new(),
        details: Vec::new(),
        body_error,
        stream_end: (!end.is_empty()).then(|| end.to_string()),
    }
}

fn ended(name: &str, why: &str, body_error: Option<String>) -> Status {
    Status {
        code: None,
        name: name.into(),
        message: why.into(),
        details: Vec::new(),
        body_error,
        stream_end: Some(format!("{name}: {why}")),
    }
}

/// A failure: a status the server sent (gRPC code, brpc error code, HTTP status) with its
/// number; any other failure by its kind, with no number.
fn failed(e: &NetError, stream_end: Option<&str>) -> Status {
    let (code, name, message) = match e {
        NetError::Status { code, numeric, message, .. } => (Some(*numeric), code.clone(), message.clone()),
        e => (None, e.kind().label().to_string(), e.to_string()),
    };
    Status {
        code,
        name,
        message,
        details: Vec::new(),
        body_error: None,
        stream_end: stream_end.map(str::to_string),
    }
}

/// A google.rpc.Status, as `grpc-status-details-bin` carries it.
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
    #[prost(message, repeated, tag = "3")]
    details: Vec<prost_types::Any>,
}

/// The details a reply's headers or trailers carry, decoded where their type is known.
fn details(headers: &[(String, String)], trailers: &[(String, String)]) -> Vec<Detail> {
    use base64::Engine;
    let mut out = Vec::new();
    for (_, v) in headers.iter().chain(trailers).filter(|(k, _)| k.eq_ignore_ascii_case(STATUS_DETAILS)) {
        let engine = base64::engine::general_purpose::STANDARD;
        let Ok(bytes) = engine.decode(v.trim()) else { continue };
        let json = <RpcStatus as prost::Message>::decode(bytes.as_slice()).ok().map(|s| {
            let details: Vec<serde_json::Value> = s
                .details
                .iter()
                .map(|a| serde_json::json!({"type_url": a.type_url, "base64": engine.encode(&a.value)}))
                .collect();
            serde_json::json!({"code": s.code, "message": s.message, "details": details})
        });
        out.push(Detail { type_url: "type.googleapis.com/google.rpc.Status".into(), json, base64: bytes });
    }
    out
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// What the history keeps of a call beyond the request and the outcome, so `history show
/// --json` can say it: headers, trailers, a unary reply up to [`HISTORY_REPLY_LIMIT`] bytes,
/// and when headers and the first message came. Absent in entries written before these fields.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recorded {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Vec<(String, String)>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trailers: Option<Vec<(String, String)>>,
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "reply_base64")]
    #[serde(with = "super::opt_base64")]
    pub reply: Option<Vec<u8>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_message_ms: Option<u64>,
}

impl Recorded {
    /// What a unary answer gave (response headers with secret-looking keys dropped).
    pub fn of_unary(o: &CallOutcome) -> Recorded {
        let clean = |p: &[(String, String)]| -> Vec<(String, String)> {
            p.iter().filter(|(k, _)| !crate::net::history::is_secret_key(k)).cloned().collect()
        };
        Recorded {
            headers: Some(clean(&o.headers)),
            trailers: Some(clean(&o.trailers)),
            reply: (o.reply.len() <= HISTORY_REPLY_LIMIT).then(|| o.reply.to_vec()),
            headers_ms: Some(ms(o.elapsed)),
            first_message_ms: Some(ms(o.elapsed)),
        }
    }

    /// What a stream gave besides its messages (never kept: a dump holds them).
    pub fn of_stream(s: &StreamSummary) -> Recorded {
        Recorded {
            headers: s.headers_after.map(|_| s.headers.clone()),
            headers_ms: s.headers_after.map(ms),
            ..Recorded::default()
        }
    }
}

/// The transcript of a recorded call: what the history kept, and the rest said missing.
pub fn from_history(e: &HistoryEntry, pool: &DescriptorPool) -> Transcript {
    let found = crate::net::find_method(pool, &e.method).ok();
    let mut gaps = Vec::new();
    let method = match &found {
        Some(m) => Method::of(m),
        None => {
            gaps.push(format!("method types: {} is not in the loaded schemas", e.method));
            Method {
                full_name: e.method.clone(),
                kind: if e.responses > 1 { MethodKind::ServerStream } else { MethodKind::Unary },
                input_type: String::new(),
                output_type: String::new(),
            }
        }
    };
    let request = match &found {
        Some(m) => request(&m.input(), e.request.clone(), true),
        None => Request { json: None, size: e.request.len(), base64: e.request.clone(), sent_exactly: true },
    };
    gaps.push("secret metadata: the history drops it, so it is absent here, not redacted".into());
    let r = &e.recorded;
    let mut messages = Vec::new();
    match (&r.reply, &found) {
        (Some(bytes), Some(m)) => {
            let at = r.first_message_ms.map(|after| (e.time_ms, Duration::from_millis(after)));
            messages.push(message(&m.output(), 0, bytes, at));
        }
        (Some(bytes), None) => messages.push(Message {
            index: 0,
            json: None,
            json_error: Some("the method is not in the loaded schemas".into()),
            base64: bytes.clone(),
            size: bytes.len(),
            arrived_utc: None,
            offset_ms: r.first_message_ms,
        }),
        (None, _) if e.responses > 0 => gaps.push(format!(
            "response messages: the history keeps only their count and size ({} message(s), {} bytes){}",
            e.responses,
            e.response_bytes,
            if method.kind == MethodKind::ServerStream {
                "; a stream's messages are in its dump (--save-dump)"
            } else {
                "; a unary reply is kept only up to 64 KiB, and only by walscope versions that record it"
            }
        )),
        (None, _) => {}
    }
    if r.headers.is_none() {
        gaps.push("headers: not recorded in this history entry".into());
    }
    if r.trailers.is_none() {
        gaps.push("trailers: not recorded in this history entry".into());
    }
    let status = match &e.outcome {
        HistoryOutcome::Ok => ok(e.transport, None, ""),
        HistoryOutcome::BodyError { words } => ok(e.transport, Some(words.clone()), ""),
        HistoryOutcome::TransportError { kind, words } => {
            gaps.push("status code number: the history keeps a failure's kind and words".into());
            Status {
                code: None,
                name: kind.clone(),
                message: words.clone(),
                details: Vec::new(),
                body_error: None,
                stream_end: None,
            }
        }
        HistoryOutcome::Incomplete { words } => ended("incomplete", words, None),
    };
    Transcript {
        format: super::FORMAT.into(),
        version: super::VERSION,
        source: "history".into(),
        history_id: Some(e.id),
        target: Target::new(e.profile.as_deref(), &e.endpoint, e.transport),
        method,
        request,
        metadata: Pair::redacted(&e.metadata),
        deadline_ms: e.deadline_ms,
        headers: r.headers.as_ref().map(|h| Pair::of(h)),
        messages,
        trailers: r.trailers.as_ref().map(|h| Pair::of(h)),
        status: Status { details: details(r.headers.as_deref().unwrap_or(&[]), &[]), ..status },
        timing: Timing {
            start_utc: crate::time::format_millis_utc(e.time_ms),
            start_ms: e.time_ms,
            headers_ms: r.headers_ms,
            first_message_ms: r.first_message_ms,
            total_ms: e.elapsed_ms,
        },
        not_recorded: gaps,
    }
}
