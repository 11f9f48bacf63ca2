//! Talking to servers. One call model for every transport: unary and server-streaming calls on
//! `DynamicMessage` requests, answered with the raw bytes of each response message (so a dump
//! keeps exactly what the server sent) plus metadata and timing for display.
//!
//! Owns: the [`Transport`] trait and its implementations (gRPC through tonic, brpc baidu_std
//! over TCP, HTTP/1.1 + JSON). Must never: block a thread while waiting on the network, retry a
//! call that may have had an effect, or reach an address the user did not give.

pub mod brpc;
pub mod grpc;
pub mod http_json;
pub mod profile;
pub mod reflection;
mod tls;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use prost_reflect::{DynamicMessage, MethodDescriptor};
use std::time::Duration;

/// Per-call settings.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// Request metadata: gRPC headers; ignored by brpc.
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
}

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
    #[error("{0}")]
    Unsupported(String),
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
