//! Failures for people: every [`NetError`] sorted into a few kinds an operator can act on
//! (nothing listens, TLS mismatch, credentials, deadline, wrong protocol, no such method, no
//! permission, the server's own error), each with an explanation and the next step.
//!
//! Owns: [`FailureKind`] and [`NetError::kind`]. The classification reads the error variants
//! first and the texts of the underlying libraries (tonic, hyper, rustls, the OS) only where a
//! variant carries no more structure; the tests in `tests/net_failures.rs` pin those texts
//! against real sockets. Must never: guess a kind from a word that also appears in other
//! failures when a structured field (a gRPC code, a brpc error number) says more.

use super::NetError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// Nothing listens at the address (connection refused).
    Refused,
    /// TLS on one side and not the other, or a certificate that is not trusted.
    Tls,
    /// Credentials missing or wrong.
    Auth,
    /// No answer in time.
    Timeout,
    /// Something answered, but not in the protocol spoken to it (gRPC to a brpc port, ...).
    WrongProtocol,
    /// The server has no such service or method (gRPC UNIMPLEMENTED, brpc 1001/1002, HTTP 404).
    NotFound,
    /// The credentials are fine but lack the privilege.
    PermissionDenied,
    /// The server answered the call with an error of its own.
    Server,
    /// Anything else (a bad request, a schema mismatch, a setting walscope cannot use).
    Other,
}

impl NetError {
    /// A GetReplicateInfo refused for its pchannel ([`crate::wal::replicate_info`]), whichever
    /// way the transport reported it.
    pub fn pchannel_refusal(&self) -> Option<crate::wal::replicate_info::PchannelRefusal> {
        use crate::wal::replicate_info::refusal_of;
        match self {
            NetError::Status { method, code, message, .. } => refusal_of(method, code, message),
            NetError::Timeout { method, .. } => refusal_of(method, "DEADLINE_EXCEEDED", ""),
            _ => None,
        }
    }

    /// The error's words without the command-line hint some carry (" (hint: ... --cacert ...)"):
    /// for a place that says its kind's [`FailureKind::words`] next to it (the window, a
    /// connection test's summary), which would otherwise say the same thing twice.
    pub fn words_without_hint(&self) -> String {
        strip_hint(&self.to_string())
    }
}

/// `text` without its " (hint: ...)" parts (parentheses inside a hint are kept with it).
pub fn strip_hint(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(" (hint: ") {
        out.push_str(&rest[..at]);
        let mut depth = 0usize;
        let mut end = rest.len();
        for (i, c) in rest[at + 1..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = at + 1 + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

impl FailureKind {
    /// A short name for lists and logs.
    pub fn label(self) -> &'static str {
        match self {
            FailureKind::Refused => "refused",
            FailureKind::Tls => "TLS",
            FailureKind::Auth => "authentication",
            FailureKind::Timeout => "timeout",
            FailureKind::WrongProtocol => "wrong protocol",
            FailureKind::NotFound => "not found",
            FailureKind::PermissionDenied => "permission denied",
            FailureKind::Server => "server error",
            FailureKind::Other => "other",
        }
    }

    /// What it means, and what to do next.
    pub fn words(self) -> &'static str {
        match self {
            FailureKind::Refused => {
                "Nothing listens at that address. Check the host and port (Milvus 19530, SyncTool \
                 8848, DataCollector 8888 by default) and that the server is running."
            }
            FailureKind::Tls => {
                "TLS does not match: the server speaks TLS and the profile does not (or the other \
                 way round), its certificate is not trusted, or it wants a client certificate \
                 (mutual TLS) that was not given or that it does not trust. Switch TLS on or off as \
                 the server is set up, give the CA that signed its certificate, or give a client \
                 certificate and key (--cert, --key) signed by the CA it trusts."
            }
            FailureKind::Auth => {
                "The server wants credentials and did not accept the ones sent (or none were \
                 sent). Set the user and password or token in the profile and check the secret's \
                 source (environment variable or keyring)."
            }
            FailureKind::Timeout => {
                "No answer in time. The server may be overloaded, the address may lead nowhere \
                 (a firewall drops packets), or the call takes longer: raise the timeout."
            }
            FailureKind::WrongProtocol => {
                "Something answers at that address but not in this protocol: gRPC is Milvus, brpc \
                 (baidu_std) or HTTP/JSON is OpenMLDB SyncTool and DataCollector. Choose the \
                 profile's transport to match the server."
            }
            FailureKind::NotFound => {
                "The server does not offer this service or method: check the names, the server's \
                 version, and that this is the server you meant (a DataCollector is not a \
                 SyncTool)."
            }
            FailureKind::PermissionDenied => {
                "The credentials were accepted but lack the privilege for this call: use a user \
                 with the right role."
            }
            FailureKind::Server => {
                "The server received the call and answered with an error of its own: read its \
                 message; the request may be wrong or the server may be unwell."
            }
            FailureKind::Other => "See the message for details.",
        }
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

impl NetError {
    /// The kind of failure, for people (see [`FailureKind::words`]).
    pub fn kind(&self) -> FailureKind {
        match self {
            NetError::Connect { reason, .. } => from_text(reason).unwrap_or(FailureKind::Other),
            NetError::Timeout { .. } => FailureKind::Timeout,
            NetError::Protocol { .. } => FailureKind::WrongProtocol,
            NetError::Status { code, numeric, message, .. } => status_kind(code, *numeric, message),
            NetError::Decode { .. } | NetError::Request { .. } | NetError::Unsupported(_) => {
                FailureKind::Other
            }
            NetError::Profile { .. } => FailureKind::Auth,
        }
    }
}

/// gRPC codes by name; brpc codes by number (as `code` they carry words like "ENOSERVICE: ...");
/// HTTP statuses as "HTTP n".
fn status_kind(code: &str, numeric: i32, message: &str) -> FailureKind {
    if let Some(http) = code.strip_prefix("HTTP ") {
        return match http.trim().parse::<u16>().unwrap_or(0) {
            401 => FailureKind::Auth,
            403 => FailureKind::PermissionDenied,
            404 => FailureKind::NotFound,
            408 | 504 => FailureKind::Timeout,
            _ => FailureKind::Server,
        };
    }
    match code {
        "UNAUTHENTICATED" => FailureKind::Auth,
        "PERMISSION_DENIED" => FailureKind::PermissionDenied,
        "UNIMPLEMENTED" => FailureKind::NotFound,
        "DEADLINE_EXCEEDED" => FailureKind::Timeout,
        // A connection that failed under a call: tonic reports it as a status.
        "UNAVAILABLE" | "UNKNOWN" | "INTERNAL" | "CANCELLED" => {
            from_text(message).unwrap_or(FailureKind::Server)
        }
        c if c.chars().all(|ch| ch.is_ascii_uppercase() || ch == '_') => FailureKind::Server,
        // brpc: 1001 unknown service, 1002 unknown method; brpc-java says 2001 "Fail to find
        // service=..., method=..." for both.
        _ => match numeric {
            1001 | 1002 => FailureKind::NotFound,
            2001 if message.contains("Fail to find") => FailureKind::NotFound,
            1008 => FailureKind::Timeout,
            1009 | 1010 => FailureKind::Refused,
            _ => FailureKind::Server,
        },
    }
}

/// Kinds the underlying libraries only say in words (a transport error's text).
fn from_text(text: &str) -> Option<FailureKind> {
    let t = text.to_ascii_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| t.contains(w));
    Some(if any(&["connection refused", "os error 111", "os error 61", "os error 10061"]) {
        FailureKind::Refused
    } else if any(&[
        "certificate",
        "unknownissuer",
        "invalidcontenttype",
        "corrupt message",
        "corruptmessage",
        "tls handshake",
        "received corrupt",
        "wrong version number",
        "handshake",
        "alert",
    ]) {
        FailureKind::Tls
    } else if any(&["timed out", "timeout expired", "deadline", "elapsed", "no answer within"]) {
        FailureKind::Timeout
    } else if any(&[
        "h2 protocol error",
        "http2 error",
        "frame with invalid size",
        "invalid http version",
        "wrong magic",
        "not a prpc",
        "frame",
        "protocol error",
    ]) {
        FailureKind::WrongProtocol
    } else {
        return None;
    })
}

#[cfg(test)]
mod hint_tests {
    use super::strip_hint;

    #[test]
    fn hints_are_cut_with_their_own_parentheses_and_nothing_else() {
        assert_eq!(
            strip_hint(
                "cannot connect to h:1: refused (os error 111) (hint: nothing listens (Milvus 19530)) then"
            ),
            "cannot connect to h:1: refused (os error 111) then"
        );
        assert_eq!(strip_hint("no hint (at all)"), "no hint (at all)");
        assert_eq!(strip_hint("a (hint: x) b (hint: y)"), "a b");
        assert_eq!(strip_hint("cut short (hint: never closed"), "cut short");
    }
}
