//! gRPC failures in words: the error chains tonic and hyper leave, the gRPC status codes with
//! hints for the ones an operator can act on, and a look at what answers on the port when a
//! connection broke in a way the libraries do not explain ([`diagnose`]: a TLS server spoken
//! to in plaintext, a brpc or HTTP/1 port spoken to in gRPC).
//!
//! Must never: send anything but the HTTP/2 client greeting to find out, or wait longer than
//! the caller's bound.

use super::NetError;
use super::grpc::TlsMode;
use prost_reflect::MethodDescriptor;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::{Code, Status};

/// The error and all its causes on one line: tonic's top-level text alone says nothing.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

pub(super) fn connect_hint(reason: &str, tls: &TlsMode) -> String {
    let r = reason.to_ascii_lowercase();
    let hint = if r.contains("refused") {
        "nothing listens there: check host and port (Milvus's default is 19530) and that the server runs"
    } else if r.contains("certificate") || r.contains("unknownissuer") || r.contains("invalid peer") {
        "the server's certificate is not trusted: pass its CA with --cacert FILE, or --insecure to skip verification"
    } else if *tls != TlsMode::Plaintext
        && (r.contains("corrupt") || r.contains("invalidcontenttype") || r.contains("record"))
    {
        "the server does not seem to speak TLS: try --plaintext"
    } else if *tls == TlsMode::Plaintext && (r.contains("closed") || r.contains("frame") || r.contains("h2"))
    {
        "the server may require TLS: try --cacert FILE or --insecure"
    } else if r.contains("timed out") || r.contains("elapsed") {
        "no answer in time: check the address, firewalls, and whether the host is up"
    } else {
        return String::new();
    };
    format!(" (hint: {hint})")
}

/// The canonical upper-case name of a gRPC code, as grpcurl and the Go client print it.
pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// A gRPC status as a [`NetError`], with a hint for the codes an operator can act on.
pub fn status_error(method: &MethodDescriptor, status: &Status) -> NetError {
    let name = method.name();
    let hint = match status.code() {
        Code::DeadlineExceeded if name == "GetReplicateInfo" => {
            " (hint: Milvus 2.6.9 to 2.6.18 can hang in GetReplicateInfo until the deadline \
             (milvus#50344, fixed in 2.6.19); upgrade the new primary or read the checkpoint elsewhere)"
        }
        Code::DeadlineExceeded => " (hint: raise --timeout, or check that the server is not overloaded)",
        Code::Unauthenticated => {
            " (hint: the server requires credentials: --user U --password-env VAR, or a token)"
        }
        Code::PermissionDenied => " (hint: the user lacks the privilege for this call)",
        Code::Unimplemented if name == "DumpMessages" || name == "GetReplicateInfo" => {
            " (hint: the server predates this RPC; DumpMessages and salvage checkpoints need Milvus 2.6.14+)"
        }
        Code::Unimplemented => {
            " (hint: the server does not offer this method; check service and method names)"
        }
        // tonic says OUT_OF_RANGE for a message above its decoding limit, grpc-go RESOURCE_EXHAUSTED.
        Code::ResourceExhausted | Code::OutOfRange if status.message().contains("message length") => {
            " (hint: a message exceeds the size limit; raise --max-message-size)"
        }
        Code::Unavailable => {
            " (hint: the server is unreachable or restarting; check address and TLS settings)"
        }
        _ => "",
    };
    // A status made on this side from a broken connection says only "transport error" or
    // "h2 protocol error"; its causes say what happened.
    let message = match std::error::Error::source(status) {
        Some(cause) => {
            let chain = error_chain(cause);
            if status.message().contains(&chain) {
                status.message().to_string()
            } else {
                format!("{}: {chain}", status.message())
            }
        }
        None => status.message().to_string(),
    };
    NetError::Status {
        method: method.full_name().to_string(),
        code: code_name(status.code()).to_string(),
        numeric: status.code() as i32,
        message,
        hint: hint.to_string(),
    }
}

/// What answered the HTTP/2 client greeting on a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peer {
    /// An HTTP/2 server (its SETTINGS frame came back): the failure was something else.
    Http2,
    /// A TLS record came back: the server wants TLS.
    Tls,
    /// `HTTP/1.x ...`: a web server, or SyncTool's HTTP/JSON.
    Http1,
    /// `PRPC...`: a brpc server.
    Brpc,
    /// The server closed or reset the connection without a byte: not HTTP/2 (a brpc port, say).
    Closed,
    /// Something else, or nothing in time.
    Unknown,
}

/// The HTTP/2 connection preface and an empty SETTINGS frame: what every gRPC client sends
/// first, so a gRPC server answers it and any other server shows what it is.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

/// Sends the HTTP/2 greeting in plaintext to `host_port` on a fresh connection and reads what
/// comes back (at most `within`).
pub async fn sniff(host_port: &str, within: Duration) -> Peer {
    let work = async {
        let mut s = tokio::net::TcpStream::connect(host_port).await.ok()?;
        s.write_all(PREFACE).await.ok()?;
        let mut buf = [0u8; 16];
        let mut n = 0;
        while n < 9 {
            match s.read(&mut buf[n..]).await {
                Ok(0) | Err(_) => break,
                Ok(k) => n += k,
            }
            if buf[..n].starts_with(b"\x15\x03") || buf[..n].starts_with(b"\x16\x03") {
                break;
            }
        }
        Some(buf[..n].to_vec())
    };
    let got = match tokio::time::timeout(within, work).await {
        Ok(Some(b)) => b,
        _ => return Peer::Unknown,
    };
    if got.is_empty() {
        Peer::Closed
    } else if got.len() >= 2 && (got[0] == 0x15 || got[0] == 0x16) && got[1] == 0x03 {
        Peer::Tls
    } else if got.starts_with(b"HTTP/") {
        Peer::Http1
    } else if got.starts_with(b"PRPC") {
        Peer::Brpc
    } else if got.len() >= 9 && got[3] == 0x04 {
        Peer::Http2
    } else {
        Peer::Unknown
    }
}

/// A connection that broke under a call or at connect, explained by what answers on the port;
/// None when the port answers like a gRPC server (the original error stands).
pub async fn diagnose(endpoint: &str, host_port: &str, tls: &TlsMode, within: Duration) -> Option<NetError> {
    let peer = sniff(host_port, within).await;
    let plaintext = *tls == TlsMode::Plaintext;
    let (protocol, reason) = match peer {
        Peer::Tls if plaintext => (
            false,
            "the server speaks TLS (it answered the plaintext HTTP/2 greeting with a TLS alert) \
             (hint: connect with TLS: --tls, --cacert FILE or --insecure)",
        ),
        Peer::Http1 => (
            true,
            "the server speaks HTTP/1.1, not gRPC (HTTP/2): an OpenMLDB SyncTool or a web server? \
             (hint: use --transport http or brpc for SyncTool)",
        ),
        Peer::Brpc => (true, "the server speaks brpc baidu_std, not gRPC (hint: use --transport brpc)"),
        Peer::Closed => (
            true,
            "the server closed the connection on the HTTP/2 greeting: it does not speak gRPC (a brpc \
             port such as OpenMLDB SyncTool or DataCollector? hint: use --transport brpc)",
        ),
        _ => return None,
    };
    Some(if protocol {
        NetError::Protocol { endpoint: endpoint.to_string(), reason: reason.to_string() }
    } else {
        NetError::Connect { endpoint: endpoint.to_string(), reason: reason.to_string() }
    })
}

/// True for a status tonic made on this side from a broken connection (it has a cause), as
/// opposed to one the server sent.
pub fn is_local_transport_failure(status: &Status) -> bool {
    std::error::Error::source(status).is_some()
        && matches!(status.code(), Code::Unknown | Code::Internal | Code::Cancelled | Code::Unavailable)
        && !status.message().contains("Timeout expired")
}
