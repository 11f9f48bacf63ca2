//! gRPC failures in words: the error chains tonic and hyper leave, the gRPC status codes with
//! hints for the ones an operator can act on, TLS failures named as such ([`super::tls_failure`]),
//! and a look at what answers on the port when a connection broke in a way the libraries do not
//! explain ([`diagnose`]: a TLS server spoken to in plaintext, a brpc or HTTP/1 port spoken to
//! in gRPC, a listener that says nothing at all).
//!
//! Must never: send anything but the HTTP/2 client greeting to find out (or, for a refused
//! certificate, a TLS handshake that sends no application data), call a TLS failure a wrong
//! protocol, or wait longer than the caller's bound.

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

/// A connection that could not be made, in words: a TLS failure named as one, else what
/// answers on the port, else the libraries' chain with a hint.
pub(super) async fn connect_failed(
    endpoint: &str,
    host_port: &str,
    tls: &TlsMode,
    client_cert: bool,
    within: Duration,
    (found, reason): (Option<rustls::Error>, String),
) -> NetError {
    let fail = |reason: String| NetError::Connect { endpoint: endpoint.to_string(), reason };
    if let Some(found) = found {
        return fail(tls_words(found, host_port, client_cert, within).await);
    }
    if !reason.to_ascii_lowercase().contains("refused")
        && let Some(d) = diagnose(endpoint, host_port, tls, within).await
    {
        return d;
    }
    let hint = connect_hint(&reason, tls);
    fail(format!("{reason}{hint}"))
}

/// What [`connect_failed`] needs of an error, taken before any wait (the error need not be
/// `Sync`): the TLS failure in its chain, and the whole chain in words.
pub(super) fn facts(e: &(dyn std::error::Error + 'static)) -> (Option<rustls::Error>, String) {
    (super::tls_failure::find(e).cloned(), error_chain(e))
}

/// The words for a TLS failure; an unknown issuer is looked at once more to tell a self-signed
/// certificate.
pub(super) async fn tls_words(
    r: rustls::Error,
    host_port: &str,
    client_cert: bool,
    within: Duration,
) -> String {
    use super::tls_failure::{TlsProblem, problem, self_signed, words};
    let signed_by_itself = if problem(&r) == TlsProblem::UnknownIssuer {
        match host_port.rsplit_once(':') {
            Some((host, port)) => match port.parse::<u16>() {
                Ok(port) => self_signed(host.trim_matches(['[', ']']), port, within).await,
                Err(_) => None,
            },
            None => None,
        }
    } else {
        None
    };
    words(&r, signed_by_itself, client_cert)
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
    // A pchannel GetReplicateInfo cannot read (refused in words, or retried until the deadline).
    let refusal = crate::wal::replicate_info::refusal_of(name, code_name(status.code()), status.message());
    let refused;
    let hint = match status.code() {
        _ if refusal.is_some() => {
            refused = format!(" (hint: {})", refusal.map(|r| r.words()).unwrap_or_default());
            refused.as_str()
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
    /// The connection was accepted and nothing came back in time.
    Silent,
    /// Something else, or no connection in time.
    Unknown,
}

/// The HTTP/2 connection preface and an empty SETTINGS frame: what every gRPC client sends
/// first, so a gRPC server answers it and any other server shows what it is.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

/// Sends the HTTP/2 greeting in plaintext to `host_port` on a fresh connection and reads what
/// comes back (at most `within` for the connection, and as long again for the answer).
pub async fn sniff(host_port: &str, within: Duration) -> Peer {
    let connected = tokio::time::timeout(within, tokio::net::TcpStream::connect(host_port)).await;
    let Ok(Ok(mut s)) = connected else { return Peer::Unknown };
    let read = async {
        s.write_all(PREFACE).await.ok()?;
        let mut buf = [0u8; 16]; // enough for "<!DOCTYPE html" too
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
    let got = match tokio::time::timeout(within, read).await {
        Ok(Some(b)) => b,
        Ok(None) => return Peer::Unknown,
        Err(_) => return Peer::Silent,
    };
    if got.is_empty() {
        Peer::Closed
    } else if got.len() >= 2 && (got[0] == 0x15 || got[0] == 0x16) && got[1] == 0x03 {
        Peer::Tls
    } else if got.starts_with(b"HTTP/") || is_html(&got) {
        // An HTTP/1 server may answer a request line it cannot parse in HTTP/0.9 style, with an
        // HTML page and no status line (Python's http.server does, for "PRI * HTTP/2.0").
        Peer::Http1
    } else if got.starts_with(b"PRPC") {
        Peer::Brpc
    } else if got.len() >= 9 && got[3] == 0x04 {
        Peer::Http2
    } else {
        Peer::Unknown
    }
}

fn is_html(got: &[u8]) -> bool {
    let text = String::from_utf8_lossy(got).to_ascii_lowercase();
    let text = text.trim_start();
    text.starts_with("<!doctype html") || text.starts_with("<html") || text.starts_with("<head")
}

/// A call that got no answer within `after`: when the port says nothing even to the HTTP/2
/// greeting (which a gRPC server answers at once), that is the failure; else None (the server
/// is gRPC and only slow: the deadline stands).
pub async fn silent(endpoint: &str, host_port: &str, after: Duration) -> Option<NetError> {
    let within = after.clamp(Duration::from_millis(500), Duration::from_secs(3));
    match sniff(host_port, within).await {
        Peer::Silent => Some(NetError::Protocol {
            endpoint: endpoint.to_string(),
            reason: format!(
                "the server accepted the connection but said nothing within {} (a gRPC server \
                 answers the HTTP/2 greeting at once): it does not speak gRPC, or it is hung \
                 (hint: check the host and port, and that the process listening there is alive; \
                 raise --timeout only for a server known to be slow to answer)",
                seconds(after)
            ),
        }),
        Peer::Http1 | Peer::Brpc | Peer::Closed => {
            diagnose(endpoint, host_port, &TlsMode::Plaintext, within).await
        }
        _ => None,
    }
}

fn seconds(d: Duration) -> String {
    format!("{} s", (d.as_secs_f64() * 10.0).round() / 10.0)
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
             (hint: connect with TLS: --tls, --cacert FILE or --insecure)"
                .to_string(),
        ),
        Peer::Http2 if !plaintext => (
            false,
            "the server speaks plaintext gRPC (it answered the HTTP/2 greeting without TLS), so the \
             TLS handshake failed (hint: --plaintext, if this network may see the traffic)"
                .to_string(),
        ),
        Peer::Http1 => (
            true,
            "the server answers HTTP/1.1, not gRPC (HTTP/2): an OpenMLDB SyncTool or a web server? \
             (hint: use --transport http or brpc for SyncTool; check the port for Milvus, whose \
             default is 19530)"
                .to_string(),
        ),
        Peer::Brpc => {
            (true, "the server speaks brpc baidu_std, not gRPC (hint: use --transport brpc)".to_string())
        }
        // A TLS server may also close on a plaintext greeting: only without TLS does a close
        // say "not gRPC".
        Peer::Closed if plaintext => (
            true,
            "the server closed the connection on the HTTP/2 greeting: it does not speak gRPC (a brpc \
             port such as OpenMLDB SyncTool or DataCollector? hint: use --transport brpc)"
                .to_string(),
        ),
        Peer::Silent => (
            true,
            format!(
                "the server accepted the connection but said nothing within {} (a gRPC server \
                 answers the HTTP/2 greeting at once): it does not speak gRPC, or it is hung \
                 (hint: check the host and port)",
                seconds(within)
            ),
        ),
        _ => return None,
    };
    Some(if protocol {
        NetError::Protocol { endpoint: endpoint.to_string(), reason }
    } else {
        NetError::Connect { endpoint: endpoint.to_string(), reason }
    })
}

/// True for a status tonic made on this side from a broken connection (it has a cause), as
/// opposed to one the server sent.
pub fn is_local_transport_failure(status: &Status) -> bool {
    let message = status.message();
    (std::error::Error::source(status).is_some() || message.contains("h2 protocol error"))
        && matches!(status.code(), Code::Unknown | Code::Internal | Code::Cancelled | Code::Unavailable)
        && !message.contains("Timeout expired")
}

/// True for tonic's own deadline ("Timeout expired", as CANCELLED), which says nothing of why.
pub fn is_local_timeout(status: &Status) -> bool {
    status.code() == Code::Cancelled && status.message().contains("Timeout expired")
}
