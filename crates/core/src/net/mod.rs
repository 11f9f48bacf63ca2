//! Talking to servers. One call model for every transport: unary and server-streaming calls on
//! `DynamicMessage` requests, answered with the raw bytes of each response message (so a dump
//! keeps exactly what the server sent) plus metadata and timing for display.
//!
//! Owns: the [`Transport`] trait and its implementations (gRPC through tonic, brpc baidu_std
//! over TCP, HTTP/1.1 + JSON); building one from a profile ([`connect()`]); the generic call path
//! ([`call`]: method lookup, exact-bytes requests, outcomes, errors in the body); failures in
//! words ([`failure`]); the connection test ([`probe`]); the call history on disk
//! ([`history`]); call transcripts ([`transcript`]); and the SyncTool client ([`synctool`]). Must never: block a thread while
//! waiting on the network, retry a call that may have had an effect, or reach an address the
//! user did not give.
//!
//! What a protocol's calls mean is the protocol's own module's: `net` asks `wal::calls`
//! (Milvus) and `datasync::calls` (OpenMLDB) for the method rules and name quirks ([`guard`],
//! the transports) and the errors in a reply's body ([`body`]); neither knows of `net`. The
//! jobs above it use it, never the other way round.

pub mod body;
pub mod brpc;
pub mod call;
pub mod connect;
pub mod edges;
pub mod failure;
pub mod grpc;
mod grpc_errors;
pub mod guard;
pub mod history;
pub mod http_json;
pub mod probe;
pub mod profile;
mod profile_errors;
pub mod reflection;
pub mod synctool;
mod tls;
pub mod tls_failure;
pub mod transcript;

pub use body::{ReplyHint, body_error, reply_hint};
pub use call::{
    CallError, CallOutcome, CallRequest, MessageSink, StreamEnd, StreamSummary, call_server_stream,
    call_unary, find_method,
};
pub use connect::{ConnectOptions, ProfileMetadata, connect, connect_with, grpc_settings};
pub use failure::FailureKind;
pub use probe::{ProbeReport, test_connection};
pub use synctool::{SyncToolClient, SyncToolError};

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use prost_reflect::{DynamicMessage, MethodDescriptor};
use std::time::Duration;

/// Per-call settings.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// Request metadata: gRPC headers, HTTP/1.1 headers over HTTP/JSON; brpc (baidu_std) has no
    /// headers and refuses a call with any (see [`edges`]).
    pub metadata: Vec<(String, String)>,
    /// Deadline for the whole call (for a stream: for its first message).
    pub timeout: Option<Duration>,
    /// brpc only: raw bytes sent after the message (SendData rows).
    pub attachment: Bytes,
}

/// What came back besides the message.
#[derive(Debug, Clone, Default)]
pub struct CallInfo {
    pub headers: Vec<(String, String)>,
    pub trailers: Vec<(String, String)>,
    pub elapsed: Duration,
    /// brpc only: the response attachment.
    pub attachment: Bytes,
}

#[derive(Debug)]
pub struct UnaryReply {
    /// The response message exactly as received.
    pub bytes: Bytes,
    pub message: DynamicMessage,
    pub info: CallInfo,
}

/// A server stream: each item is one response message as received.
pub struct StreamReply {
    pub messages: BoxStream<'static, Result<Bytes, NetError>>,
    pub headers: Vec<(String, String)>,
    /// The stream's trailers, filled when it ends (gRPC: with its status, also a failed one's);
    /// empty until then and for a transport that has none.
    pub trailers: TrailerSlot,
}

/// Where a stream leaves its trailers when it ends: the messages are a stream of their own, so
/// what comes after the last one is handed over beside them.
pub type TrailerSlot = std::sync::Arc<std::sync::Mutex<Option<Vec<(String, String)>>>>;

#[derive(Debug, Clone, thiserror::Error)]
pub enum NetError {
    #[error("cannot connect to {endpoint}: {reason}")]
    Connect { endpoint: String, reason: String },
    #[error("{method} failed: {code} ({numeric}): {message}{hint}")]
    Status { method: String, code: String, numeric: i32, message: String, hint: String },
    #[error("{method}: no answer within {after:?}")]
    Timeout { method: String, after: Duration },
    #[error("{endpoint}: protocol error: {reason}")]
    Protocol { endpoint: String, reason: String },
    #[error("{method}: the response is not a valid {type_name}: {reason}")]
    Decode { method: String, type_name: String, reason: String },
    #[error("{method}: the request is not a valid {type_name}: {reason}")]
    Request { method: String, type_name: String, reason: String },
    #[error("{0}")]
    Unsupported(String),
    /// A connection profile that cannot be used as it is (a secret that cannot be read).
    #[error("profile \"{profile}\": {reason}")]
    Profile { profile: String, reason: String },
}

/// One way of reaching a server. Panels and jobs use only this.
pub trait Transport: Send + Sync {
    /// `host:port` (or URL) as the user gave it.
    fn endpoint(&self) -> &str;

    fn call_unary<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: &'a DynamicMessage,
        opts: &'a CallOptions,
    ) -> BoxFuture<'a, Result<UnaryReply, NetError>>;

    fn call_server_stream<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: &'a DynamicMessage,
        opts: &'a CallOptions,
    ) -> BoxFuture<'a, Result<StreamReply, NetError>>;

    /// A unary call whose request is `request` exactly, byte for byte (a history entry sent
    /// again, a captured request). gRPC and brpc carry the bytes as given. The default, for
    /// transports that cannot carry bytes (HTTP/JSON), decodes them as the method's input type
    /// and sends that message: unknown fields and the exact encoding are lost (see
    /// [`Transport::sends_exact_bytes`]).
    fn call_unary_bytes<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: &'a Bytes,
        opts: &'a CallOptions,
    ) -> BoxFuture<'a, Result<UnaryReply, NetError>> {
        Box::pin(async move {
            let message = decode_request(method, request)?;
            self.call_unary(method, &message, opts).await
        })
    }

    /// The server-streaming counterpart of [`Transport::call_unary_bytes`], with the same default.
    fn call_server_stream_bytes<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: &'a Bytes,
        opts: &'a CallOptions,
    ) -> BoxFuture<'a, Result<StreamReply, NetError>> {
        Box::pin(async move {
            let message = decode_request(method, request)?;
            self.call_server_stream(method, &message, opts).await
        })
    }

    /// True when request bytes reach the server exactly as given (false for HTTP/JSON, which
    /// re-encodes them as JSON).
    fn sends_exact_bytes(&self) -> bool {
        true
    }

    /// The gRPC connection behind this transport, for what only gRPC has (reflection, the
    /// insecure-TLS warning). None for brpc and HTTP/JSON.
    fn as_grpc(&self) -> Option<&grpc::GrpcTransport> {
        None
    }
}

/// Decodes request bytes as the method's input type (for transports that cannot send bytes).
pub fn decode_request(method: &MethodDescriptor, bytes: &[u8]) -> Result<DynamicMessage, NetError> {
    crate::codec::decode(&method.input(), bytes).map(|d| d.message).map_err(|e| NetError::Request {
        method: method.full_name().to_string(),
        type_name: method.input().full_name().to_string(),
        reason: e.to_string(),
    })
}

/// Decodes a response as the method's output type.
pub fn decode_reply(method: &MethodDescriptor, bytes: &[u8]) -> Result<DynamicMessage, NetError> {
    crate::codec::decode(&method.output(), bytes).map(|d| d.message).map_err(|e| NetError::Decode {
        method: method.full_name().to_string(),
        type_name: method.output().full_name().to_string(),
        reason: e.to_string(),
    })
}

/// The answer of a transport that carries unary calls only, asked for a stream.
pub(crate) fn unary_only<'a>(
    method: &MethodDescriptor,
    why: &str,
) -> BoxFuture<'a, Result<StreamReply, NetError>> {
    let e = NetError::Unsupported(format!("{}: {why}", method.full_name()));
    Box::pin(async move { Err(e) })
}
