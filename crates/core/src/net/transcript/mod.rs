//! Call transcripts: one JSON document saying what exactly was said on the wire in one call
//! (`walscope call --transcript`, `history show --json`, the composer's "Save transcript"):
//! where it went, the method, the request (JSON and exact bytes), the metadata sent (secrets
//! redacted), the response headers, every response message (JSON, exact bytes, arrival time),
//! the trailers, the final status with its details, and timings. docs/formats.md describes it
//! field by field.
//!
//! Owns: the document ([`Transcript`] and its parts), reading one back with its faults said in
//! words ([`Transcript::from_json`]), and building one from a call or a history entry
//! ([`record`]). Must never: hold a secret (metadata values whose key the history calls secret
//! are replaced by [`REDACTED`], an address's user info is removed), or invent what was not
//! recorded (that is said in `not_recorded`).

pub mod record;

use super::profile::TransportKind;
use serde::{Deserialize, Serialize};

pub use record::{Recorded, Recorder};

/// The `format` field of every transcript.
pub const FORMAT: &str = "walscope-call-transcript";
/// The version this walscope writes and reads.
pub const VERSION: u32 = 1;
/// What stands in for a secret metadata value.
pub const REDACTED: &str = "(redacted)";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// Always [`FORMAT`]: says what the file is.
    pub format: String,
    pub version: u32,
    /// Where the document came from: `call` (recorded as it happened) or `history` (rebuilt
    /// from a history entry, `history_id`).
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_id: Option<u64>,
    pub target: Target,
    pub method: Method,
    pub request: Request,
    /// The metadata sent (gRPC headers, HTTP headers), secret values [`REDACTED`].
    pub metadata: Vec<Pair>,
    pub deadline_ms: Option<u64>,
    /// The response headers; None when not recorded.
    pub headers: Option<Vec<Pair>>,
    pub messages: Vec<Message>,
    /// The response trailers; None when not recorded (see `not_recorded`).
    pub trailers: Option<Vec<Pair>>,
    pub status: Status,
    pub timing: Timing,
    /// What this document lacks and why, in words (a transport that has no headers, a history
    /// entry older than the fields): never filled in by guesswork.
    pub not_recorded: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The saved profile used, if any (its name only: a profile's secrets are never copied).
    pub profile: Option<String>,
    /// The address, without user info.
    pub endpoint: String,
    pub transport: TransportKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MethodKind {
    Unary,
    ServerStream,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Method {
    /// `package.Service.Method`.
    pub full_name: String,
    pub kind: MethodKind,
    /// The request and response message types (empty when the method was not in the schemas).
    pub input_type: String,
    pub output_type: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The request decoded as the input type (None when it is not a valid one).
    pub json: Option<serde_json::Value>,
    /// The bytes handed to the transport, exactly.
    #[serde(with = "super::history::base64_bytes")]
    pub base64: Vec<u8>,
    pub size: usize,
    /// False when the transport could not send the bytes as they are (HTTP/JSON sends JSON).
    pub sent_exactly: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pair {
    pub key: String,
    pub value: String,
}

impl Pair {
    pub fn of(pairs: &[(String, String)]) -> Vec<Pair> {
        pairs.iter().map(|(k, v)| Pair { key: k.clone(), value: v.clone() }).collect()
    }

    /// The pairs with secret values [`REDACTED`] (the history's rule, [`super::history::is_secret_key`]).
    pub fn redacted(pairs: &[(String, String)]) -> Vec<Pair> {
        pairs
            .iter()
            .map(|(k, v)| Pair {
                key: k.clone(),
                value: if super::history::is_secret_key(k) { REDACTED.to_string() } else { v.clone() },
            })
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// 0-based, in arrival order.
    pub index: u64,
    /// The message decoded as the output type; None with `json_error` when it is not one.
    pub json: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_error: Option<String>,
    /// Exactly the bytes received.
    #[serde(with = "super::history::base64_bytes")]
    pub base64: Vec<u8>,
    pub size: usize,
    /// When it arrived, UTC `YYYY-MM-DD hh:mm:ss.mmm`, and ms after the call started.
    pub arrived_utc: Option<String>,
    pub offset_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// The code number: 0 for OK; a gRPC code, a brpc error code or an HTTP status; None for a
    /// failure that carried no code (refused connection, a deadline seen on this side).
    pub code: Option<i32>,
    /// Its name: `OK`, `UNAVAILABLE`, `HTTP 503`, a brpc code's words; or the failure kind.
    pub name: String,
    /// The server's message (empty on success), or the failure in words.
    pub message: String,
    /// Details decoded where their type is known (`grpc-status-details-bin`'s
    /// google.rpc.Status), else their type URL and bytes.
    pub details: Vec<Detail>,
    /// "OK at the transport, error in the body": a Milvus common.Status or an OpenMLDB
    /// GeneralResponse in a reply saying the call failed, in words.
    pub body_error: Option<String>,
    /// How a stream ended: `completed`, `cancelled`, `stopped: ...`, `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_end: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detail {
    pub type_url: String,
    pub json: Option<serde_json::Value>,
    #[serde(with = "super::history::base64_bytes")]
    pub base64: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timing {
    /// When the call started, UTC `YYYY-MM-DD hh:mm:ss.mmm`, and as ms since the epoch.
    pub start_utc: String,
    pub start_ms: u64,
    /// Ms from the start to the response headers and to the first message (None: none came,
    /// or not recorded).
    pub headers_ms: Option<u64>,
    pub first_message_ms: Option<u64>,
    pub total_ms: u64,
}

/// Why a file is not a transcript walscope can use, in words.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    #[error("not a JSON document: {0}")]
    NotJson(String),
    #[error("not a walscope call transcript (its \"format\" is {found}, not \"{FORMAT}\")")]
    NotTranscript { found: String },
    #[error("transcript version {0} is newer than this walscope reads ({VERSION}): update walscope")]
    Newer(u32),
    #[error("the transcript is damaged: {0}")]
    Damaged(String),
}

impl Transcript {
    /// The document as pretty JSON, ending with a newline.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).unwrap_or_default();
        out.push(b'\n');
        out
    }

    /// Reads a transcript back, checking what it says of itself (format, version, sizes of
    /// the bytes it holds).
    pub fn from_json(bytes: &[u8]) -> Result<Transcript, TranscriptError> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| TranscriptError::NotJson(e.to_string()))?;
        let format = value.get("format");
        if format.and_then(|f| f.as_str()) != Some(FORMAT) {
            let found = format.map_or_else(|| "missing".to_string(), |f| f.to_string());
            return Err(TranscriptError::NotTranscript { found });
        }
        match value.get("version").and_then(|v| v.as_u64()) {
            Some(v) if v > u64::from(VERSION) => {
                return Err(TranscriptError::Newer(u32::try_from(v).unwrap_or(u32::MAX)));
            }
            Some(_) => {}
            None => return Err(TranscriptError::Damaged("\"version\" is missing or not a number".into())),
        }
        let t: Transcript =
            serde_json::from_value(value).map_err(|e| TranscriptError::Damaged(e.to_string()))?;
        if t.request.base64.len() != t.request.size {
            return Err(TranscriptError::Damaged(format!(
                "the request's base64 holds {} bytes, its size says {}",
                t.request.base64.len(),
                t.request.size
            )));
        }
        for m in &t.messages {
            if m.base64.len() != m.size {
                return Err(TranscriptError::Damaged(format!(
                    "message {}'s base64 holds {} bytes, its size says {}",
                    m.index,
                    m.base64.len(),
                    m.size
                )));
            }
        }
        Ok(t)
    }

    /// The single reply of a unary call that succeeded, as its exact bytes.
    pub fn unary_reply(&self) -> Option<&[u8]> {
        match (self.method.kind, self.messages.as_slice()) {
            (MethodKind::Unary, [m]) => Some(&m.base64),
            _ => None,
        }
    }
}

/// Optional bytes as base64 text (a history entry's small unary reply).
pub(crate) mod opt_base64 {
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match b {
            Some(b) => s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(b)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        let Some(text) = Option::<String>::deserialize(d)? else { return Ok(None) };
        base64::engine::general_purpose::STANDARD.decode(text).map(Some).map_err(serde::de::Error::custom)
    }
}
