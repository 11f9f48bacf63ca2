//! Security at the edges: what each transport can carry, checked before anything connects, so
//! a setting the operator gave is either honoured or refused in words, never silently dropped.
//!
//! - TLS and client certificates are gRPC's only. brpc baidu_std and SyncTool's HTTP/1.1 side
//!   run in plaintext here (OpenMLDB's servers serve no TLS on that port), so a profile or
//!   flags asking for TLS on them are refused: calling in plaintext would send what the operator
//!   meant to protect in the clear.
//! - Credentials are gRPC's only too. baidu_std has no place for them that both brpc C++ and
//!   brpc-java read the same way (request-meta field 7 differs between them), brpc-java's HTTP
//!   side reads no `authorization` header, and neither SyncTool nor DataCollector checks any:
//!   a password would go unencrypted to a server that ignores it, so it is refused.
//! - Headers (`-H`, the database header): gRPC metadata, HTTP/1.1 headers over HTTP/JSON;
//!   baidu_std has no headers at all, so a brpc call with any is refused.
//! - An address never holds credentials (`user:password@host`): it would be echoed in errors,
//!   written to the history and shown by `history list`. Such an address is refused with a
//!   pointer to `--user`/`--password-env`, and the history writer strips user info from any
//!   entry whatever the caller passes.
//!
//! Must never: quote a secret back (the words name the setting, never its value; an address
//! with user info is shown by the host and port after the `@` only).

use super::NetError;
use super::profile::{ConnectionProfile, TlsSettings, TransportKind};

/// The user info of an address (`user:password` in `user:password@host:port`, also after a
/// scheme such as `grpc://` or `http://`), if it has any.
///
/// Everything before the last `@` counts: an address here is `host:port` and never has a path,
/// while a password may well hold a `/`, `?` or `#` (which would end a URL's authority early).
pub fn userinfo(endpoint: &str) -> Option<&str> {
    let rest = endpoint.split_once("://").map_or(endpoint, |(_, r)| r);
    rest.rsplit_once('@').map(|(info, _)| info)
}

/// The address without its user info (`grpc://bob:pw@h:1` becomes `grpc://h:1`).
pub fn without_userinfo(endpoint: &str) -> String {
    let Some(info) = userinfo(endpoint) else { return endpoint.to_string() };
    let (scheme, rest) = match endpoint.split_once("://") {
        Some((s, r)) => (format!("{s}://"), r),
        None => (String::new(), endpoint),
    };
    let rest = rest.strip_prefix(info).and_then(|r| r.strip_prefix('@')).unwrap_or(rest);
    format!("{scheme}{rest}")
}

/// Refuses an address that holds user info, in words that do not repeat it.
pub fn check_endpoint(endpoint: &str) -> Result<(), String> {
    if userinfo(endpoint).is_none() {
        return Ok(());
    }
    Err(format!(
        "the address of {} holds a user name or password before \"@\"; walscope never takes \
         credentials in an address (they would be echoed, and stored in the call history): write \
         the address as host:port and give the credentials with --user U --password-env VAR (or \
         --token-env VAR), or in a profile's auth (an environment variable or a keyring entry)",
        without_userinfo(endpoint)
    ))
}

fn transport_name(t: TransportKind) -> &'static str {
    match t {
        TransportKind::Grpc => "gRPC",
        TransportKind::Brpc => "brpc (baidu_std)",
        TransportKind::Http => "HTTP/JSON",
    }
}

/// What `profile` asks for that its transport cannot carry, in words; checked by
/// [`super::connect_with`] before anything connects.
pub fn check_profile(profile: &ConnectionProfile) -> Result<(), NetError> {
    check_endpoint(&profile.endpoint).map_err(NetError::Unsupported)?;
    if profile.transport == TransportKind::Grpc {
        return Ok(());
    }
    let name = transport_name(profile.transport);
    let tls = match &profile.tls {
        TlsSettings::Plaintext => None,
        TlsSettings::System => Some("TLS verified against the system's roots (--tls)".to_string()),
        TlsSettings::CaFile { ca_file } => {
            Some(format!("TLS verified against {} (--cacert)", ca_file.display()))
        }
        TlsSettings::Insecure => Some("TLS without verification (--insecure)".to_string()),
    };
    let refuse = |what: String| {
        Err(NetError::Unsupported(format!(
            "{name} to {}: {what}; refused before connecting",
            profile.endpoint
        )))
    };
    if let Some(tls) = tls {
        return refuse(format!(
            "this connection asks for {tls} (or its profile's \"tls\"), but walscope speaks {name} \
             in plaintext only (OpenMLDB's SyncTool and DataCollector serve no TLS on that port), \
             so the call would go unencrypted. Choose --plaintext (a profile with TLS mode \
             plaintext) if this network may see the traffic, or reach the server through a TLS \
             tunnel (stunnel, ssh -L) and call the tunnel's local end"
        ));
    }
    if profile.client_cert.is_some() {
        return refuse(format!(
            "this connection names a client certificate (--cert/--key, or its profile's \
             \"client_cert\"), which is for mutual TLS; {name} here speaks plaintext only (no TLS), \
             so it would never be presented. Drop --cert/--key"
        ));
    }
    if profile.auth.is_some() {
        return refuse(
            "this connection carries credentials (--user/--password-env or --token-env, or its \
             profile's \"auth\"), but SyncTool and DataCollector check no credentials: baidu_std has \
             no place for them that brpc C++ and brpc-java read alike, and brpc-java's HTTP side \
             reads no authorization header. walscope does not send a password unencrypted to a \
             server that ignores it: drop the credentials for this server"
                .to_string(),
        );
    }
    if profile.transport == TransportKind::Brpc {
        let names = header_names(&profile.call_options().metadata);
        if !names.is_empty() {
            return refuse(no_headers_words(&names));
        }
    }
    Ok(())
}

/// The names of `metadata`, for words (a name is shown only when it is a plain token; the
/// values never are).
pub fn header_names(metadata: &[(String, String)]) -> String {
    metadata
        .iter()
        .map(|(k, _)| if is_token(k) { k.as_str() } else { "(a header whose name is not valid)" })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why a brpc call cannot carry headers.
pub fn no_headers_words(names: &str) -> String {
    format!(
        "baidu_std has no headers, so {names} (-H or --db, or the profile's \"headers\" and \
         \"db_name\") cannot go with a brpc call. Drop them, or use --transport http, which sends \
         them as HTTP headers"
    )
}

/// An HTTP token (RFC 9110 `tchar`s): what a header name may be.
pub fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_info_is_found_and_removed_without_being_repeated() {
        for (ep, info, bare) in [
            ("bob:hunter2@127.0.0.1:19530", Some("bob:hunter2"), "127.0.0.1:19530"),
            ("grpc://bob:hunter2@h:1", Some("bob:hunter2"), "grpc://h:1"),
            ("http://a@b@h:1/x", Some("a@b"), "http://h:1/x"),
            ("127.0.0.1:19530", None, "127.0.0.1:19530"),
            ("bob:hun/ter2?#@h:1", Some("bob:hun/ter2?#"), "h:1"),
        ] {
            assert_eq!(userinfo(ep), info, "{ep}");
            assert_eq!(without_userinfo(ep), bare, "{ep}");
            match check_endpoint(ep) {
                Ok(()) => assert!(info.is_none()),
                Err(words) => {
                    let info = info.expect("refused only with user info");
                    assert!(!words.contains(info) && words.contains("--password-env"), "{words}");
                    assert!(words.contains(bare), "{words}");
                }
            }
        }
    }
}
