//! TLS failures in words: the rustls error inside a broken connection (however deep tonic,
//! hyper and tokio-rustls wrapped it) named for an operator, unknown issuer, self-signed, name
//! mismatch, expired or not yet valid, an alert from the server, a server that does not speak
//! TLS, with the next step (`--cacert FILE`, or `--insecure` and what it gives up).
//!
//! A certificate of an unknown issuer is looked at once more to tell a self-signed one from
//! one signed by a private CA ([`self_signed`]): a second TLS handshake that verifies nothing,
//! reads the server's certificate, and closes before a byte of application data.
//!
//! Must never: call a TLS failure a protocol mismatch ("use brpc"), quote anything but the
//! certificate's names and dates, or wait longer than the caller's bound.

use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{AlertDescription, CertificateError};
use std::error::Error;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The rustls error somewhere in `e`'s chain. `std::io::Error::source` skips the error it
/// wraps, so an I/O error is looked into as well.
pub fn find<'a>(e: &'a (dyn Error + 'static)) -> Option<&'a rustls::Error> {
    let mut node: Option<&'a (dyn Error + 'static)> = Some(e);
    let mut steps = 0;
    while let Some(n) = node {
        if let Some(r) = n.downcast_ref::<rustls::Error>() {
            return Some(r);
        }
        steps += 1;
        if steps > 32 {
            return None;
        }
        node = match n.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()) {
            Some(inner) => Some(inner as &(dyn Error + 'static)),
            None => n.source(),
        };
    }
    None
}

/// How the handshake failed, for the words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsProblem {
    UnknownIssuer,
    SelfSigned,
    NameMismatch,
    Expired,
    NotYetValid,
    OtherCertificate,
    /// The server sent an alert (it refused something of ours).
    Alert,
    /// What came back is not TLS.
    NotTls,
    /// No version or cipher in common.
    Incompatible,
    Other,
}

pub fn problem(e: &rustls::Error) -> TlsProblem {
    match e {
        rustls::Error::InvalidCertificate(c) => match c {
            CertificateError::UnknownIssuer => TlsProblem::UnknownIssuer,
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                TlsProblem::NameMismatch
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => TlsProblem::Expired,
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                TlsProblem::NotYetValid
            }
            _ => TlsProblem::OtherCertificate,
        },
        rustls::Error::AlertReceived(_) => TlsProblem::Alert,
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => TlsProblem::NotTls,
        rustls::Error::PeerIncompatible(_) => TlsProblem::Incompatible,
        _ => TlsProblem::Other,
    }
}

const INSECURE: &str = "--insecure skips the check: the traffic is still encrypted, but walscope \
    no longer knows it talks to the real server (anyone on the path could pose as it)";

fn utc(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(crate::time::format_secs_utc)
        .map_or_else(|| format!("{secs} (UNIX seconds)"), |t| format!("{t} UTC"))
}

/// The failure in words with the next step. `self_signed` is what [`self_signed`] found (for
/// an unknown issuer); `client_cert` whether a client certificate was offered.
pub fn words(e: &rustls::Error, self_signed: Option<bool>, client_cert: bool) -> String {
    let p = match problem(e) {
        TlsProblem::UnknownIssuer if self_signed == Some(true) => TlsProblem::SelfSigned,
        p => p,
    };
    match (p, e) {
        (TlsProblem::SelfSigned, _) => format!(
            "TLS handshake failed: the server's certificate is self-signed (it names itself as its \
             issuer), so nothing this connection trusts vouches for it (hint: if it is the \
             certificate you expect, give it as the CA with --cacert FILE; {INSECURE})"
        ),
        (TlsProblem::UnknownIssuer, _) => format!(
            "TLS handshake failed: the server's certificate is signed by a CA this connection does \
             not trust (unknown issuer; a private CA, or a missing intermediate certificate) \
             (hint: give the CA that signed it with --cacert FILE; {INSECURE})"
        ),
        (TlsProblem::NameMismatch, rustls::Error::InvalidCertificate(c)) => format!(
            "TLS handshake failed: the server's certificate is not issued for the name dialled \
             (name mismatch: {c}) (hint: connect by a name or address the certificate lists, or \
             have it reissued for this one; {INSECURE})"
        ),
        (TlsProblem::Expired, rustls::Error::InvalidCertificate(c)) => {
            let when = match c {
                CertificateError::ExpiredContext { not_after, .. } => {
                    format!(" on {}", utc(not_after.as_secs()))
                }
                _ => String::new(),
            };
            format!(
                "TLS handshake failed: the server's certificate expired{when} (hint: renew the \
                 server's certificate, and check this machine's clock; {INSECURE})"
            )
        }
        (TlsProblem::NotYetValid, rustls::Error::InvalidCertificate(c)) => {
            let when = match c {
                CertificateError::NotValidYetContext { not_before, .. } => {
                    format!(" before {}", utc(not_before.as_secs()))
                }
                _ => String::new(),
            };
            format!(
                "TLS handshake failed: the server's certificate is not valid yet{when} (hint: check \
                 the clocks of this machine and of the server; {INSECURE})"
            )
        }
        (TlsProblem::OtherCertificate, rustls::Error::InvalidCertificate(c)) => format!(
            "TLS handshake failed: the server's certificate was rejected: {c} (hint: check the \
             server's certificate; {INSECURE})"
        ),
        (TlsProblem::Alert, rustls::Error::AlertReceived(a)) => alert_words(*a, client_cert),
        (TlsProblem::NotTls, _) => format!(
            "TLS handshake failed: the server answered the TLS greeting with something that is \
             not TLS ({e}) (hint: it may serve plaintext: try --plaintext, or check the port)"
        ),
        (TlsProblem::Incompatible, _) => format!(
            "TLS handshake failed: the server and walscope share no TLS version or cipher ({e}) \
             (hint: walscope speaks TLS 1.2 and 1.3 with current ciphers; check the server's TLS \
             settings)"
        ),
        _ => format!("TLS handshake failed: {e} (hint: check the server's TLS settings)"),
    }
}

fn alert_words(a: AlertDescription, client_cert: bool) -> String {
    let next = match a {
        AlertDescription::CertificateRequired => {
            "the server requires a client certificate (mutual TLS): give one with --cert FILE --key FILE"
        }
        AlertDescription::HandshakeFailure if !client_cert => {
            "the server may require a client certificate (--cert FILE --key FILE), or share no \
             cipher with walscope"
        }
        AlertDescription::BadCertificate
        | AlertDescription::UnknownCA
        | AlertDescription::CertificateUnknown
        | AlertDescription::DecryptError
        | AlertDescription::AccessDenied
        | AlertDescription::HandshakeFailure => {
            "the server did not accept the client certificate: give one (--cert, --key) signed by \
             the CA the server trusts for clients"
        }
        AlertDescription::ProtocolVersion | AlertDescription::InsufficientSecurity => {
            "no TLS version or cipher in common: walscope speaks TLS 1.2 and 1.3; check the \
             server's TLS settings"
        }
        AlertDescription::UnrecognisedName => {
            "the server does not know the name dialled (SNI): connect by the name it serves"
        }
        _ => "check the server's TLS settings and its log",
    };
    format!("TLS handshake failed: the server refused it with the protocol alert {a:?} (hint: {next})")
}

/// Whether the server at `host:port` presents a self-signed certificate: a handshake that
/// verifies nothing and sends no application data, then [`is_self_signed`]. None when it cannot
/// tell within `within`.
pub async fn self_signed(host: &str, port: u16, within: Duration) -> Option<bool> {
    let work = async {
        let config = Arc::new(super::tls::insecure_client_config(None).ok()?);
        let tcp = tokio::net::TcpStream::connect((host, port)).await.ok()?;
        let name = ServerName::try_from(host.to_string()).ok()?;
        let tls = tokio_rustls::TlsConnector::from(config).connect(name.clone(), tcp).await.ok()?;
        let leaf: CertificateDer<'static> =
            tls.get_ref().1.peer_certificates()?.first()?.clone().into_owned();
        drop(tls);
        is_self_signed(&leaf, &name)
    };
    tokio::time::timeout(within, work).await.ok().flatten()
}

/// What a TLS server says right after the handshake. Under TLS 1.3 a server that refuses the
/// client's certificate (mutual TLS) says so only after the client's part is done, and a call
/// already on its way may see only a broken pipe; a fresh handshake that presents the same
/// certificate (or none), verifies nothing and sends no application data hears the alert.
pub async fn refusal_after_handshake(
    host: &str,
    port: u16,
    client_cert: Option<(&Path, &Path)>,
    within: Duration,
) -> Option<rustls::Error> {
    use tokio::io::AsyncReadExt;
    let config = Arc::new(super::tls::insecure_client_config(client_cert).ok()?);
    let work = async {
        let tcp = tokio::net::TcpStream::connect((host, port)).await.ok()?;
        let name = ServerName::try_from(host.to_string()).ok()?;
        let mut tls = match tokio_rustls::TlsConnector::from(config).connect(name, tcp).await {
            Ok(t) => t,
            Err(e) => return find(&e).cloned(),
        };
        let mut byte = [0u8; 1];
        match tls.read(&mut byte).await {
            Err(e) => find(&e).cloned(),
            Ok(_) => None,
        }
    };
    tokio::time::timeout(within, work).await.ok().flatten()
}

/// True when `cert` vouches for itself: taken as its own trust anchor, it is no longer of an
/// unknown issuer (its issuer is its subject and its own key signed it). A name or a date that
/// does not fit is another matter, and says nothing against it.
pub fn is_self_signed(cert: &CertificateDer<'static>, name: &ServerName<'static>) -> Option<bool> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.clone()).ok()?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .ok()?;
    let verdict = verifier.verify_server_cert(cert, &[], name, &[], rustls::pki_types::UnixTime::now());
    Some(match verdict {
        Ok(_) => true,
        Err(rustls::Error::InvalidCertificate(c)) => !matches!(
            c,
            CertificateError::UnknownIssuer
                | CertificateError::BadSignature
                | CertificateError::UnsupportedSignatureAlgorithmForPublicKeyContext { .. }
                | CertificateError::Other(_)
        ),
        Err(_) => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_through_io_errors_and_named() {
        let inner = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, inner);
        #[derive(Debug)]
        struct Wrap(std::io::Error);
        impl std::fmt::Display for Wrap {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("transport error")
            }
        }
        impl Error for Wrap {
            fn source(&self) -> Option<&(dyn Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = Wrap(io);
        let found = find(&e).expect("found under the I/O error");
        assert_eq!(problem(found), TlsProblem::UnknownIssuer);
        let w = words(found, Some(true), false);
        assert!(w.contains("self-signed") && w.contains("--cacert") && w.contains("--insecure"), "{w}");
        let w = words(found, None, false);
        assert!(w.contains("unknown issuer") && !w.contains("brpc"), "{w}");
        let alert = rustls::Error::AlertReceived(AlertDescription::CertificateRequired);
        assert!(words(&alert, None, false).contains("--cert FILE --key FILE"));
    }

    #[test]
    fn self_signed_is_told_from_signed_by_a_ca_of_the_same_name() {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
        let name = ServerName::try_from("127.0.0.1").unwrap();
        let other = ServerName::try_from("db.example.com").unwrap();
        let key = KeyPair::generate().unwrap();
        let params = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
        let own = params.self_signed(&key).unwrap().der().clone();
        assert_eq!(is_self_signed(&own, &name), Some(true));
        assert_eq!(is_self_signed(&own, &other), Some(true), "a name that does not fit says nothing");
        // rcgen gives every certificate the same subject: a leaf whose issuer's name is its own,
        // signed by another key, is not self-signed.
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let leaf = params.signed_by(&key, &Issuer::from_params(&ca, &ca_key)).unwrap().der().clone();
        assert_eq!(is_self_signed(&leaf, &name), Some(false));
    }
}
