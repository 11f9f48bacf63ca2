//! The servers the security cases talk to: the demo Milvus (plain, or TLS with a certificate
//! made here by rcgen) and the demo SyncTool/DataCollector on a runtime of their own, and raw
//! loopback listeners that answer HTTP/1.1, stay silent, or record the HTTP requests they get.
#![allow(dead_code)]

use rcgen::{BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use walscope::sim::collector::CollectorConfig;
use walscope::sim::datasync::DatasyncDemo;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig};

/// A runtime for the in-process demo servers while the binary under test runs.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime")
}

/// The demo SyncTool and DataCollector on free ports.
pub fn datasync(rt: &tokio::runtime::Runtime) -> DatasyncDemo {
    let any: SocketAddr = "127.0.0.1:0".parse().expect("address");
    rt.block_on(DatasyncDemo::start(any, any, Duration::from_secs(30), CollectorConfig::default()))
        .expect("demo SyncTool")
}

/// The demo Milvus: plaintext, or TLS with (certificate PEM, key PEM), optionally wanting a
/// client certificate of `client_ca`.
pub fn milvus(
    rt: &tokio::runtime::Runtime,
    tls: Option<(String, String)>,
    client_ca: Option<String>,
) -> MilvusDemo {
    let config = MilvusDemoConfig {
        tls: tls.map(|(c, k)| (c.into_bytes(), k.into_bytes())),
        client_ca: client_ca.map(String::into_bytes),
        ..Default::default()
    };
    rt.block_on(MilvusDemo::start(config)).expect("demo Milvus")
}

/// A TLS server that answers a plaintext greeting as Go's crypto/tls does (Milvus is written in
/// Go): "HTTP/1.0 400 Bad Request ... Client sent an HTTP request to an HTTPS server". A TLS
/// client goes through the handshake (and is refused by its own verification, or gets nothing
/// more: this server has nothing to say after it).
pub fn go_tls(rt: &tokio::runtime::Runtime, cert_pem: &str, key_pem: &str) -> String {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use tokio::io::AsyncWriteExt;
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(cert_pem.as_bytes()).collect::<Result<_, _>>().expect("certificate");
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).expect("key");
    let config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .expect("server certificate");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).expect("bind");
    let addr = listener.local_addr().expect("address").to_string();
    rt.spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let mut first = [0u8; 1];
                if !matches!(s.peek(&mut first).await, Ok(1)) {
                    return;
                }
                if first[0] == 0x16 {
                    let _ = acceptor.accept(s).await;
                } else {
                    let _ = s
                        .write_all(
                            b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n",
                        )
                        .await;
                }
            });
        }
    });
    addr
}

/// A certificate authority made here.
pub struct Ca {
    pub pem: String,
    params: CertificateParams,
    key: KeyPair,
}

impl Ca {
    pub fn new() -> Ca {
        let key = KeyPair::generate().expect("key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name = named("walscope test CA");
        let pem = params.self_signed(&key).expect("CA").pem();
        Ca { pem, params, key }
    }

    /// A certificate for `names` signed by this CA, valid between the given years (None: the
    /// default, valid now): (certificate PEM, key PEM).
    pub fn issue(&self, names: &[&str], years: Option<(i32, i32)>) -> (String, String) {
        let key = KeyPair::generate().expect("key");
        let mut params =
            CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).expect("params");
        params.distinguished_name = named(names.first().copied().unwrap_or("walscope test"));
        if let Some((from, to)) = years {
            params.not_before = rcgen::date_time_ymd(from, 1, 1);
            params.not_after = rcgen::date_time_ymd(to, 1, 1);
        }
        let cert = params.signed_by(&key, &Issuer::from_params(&self.params, &self.key)).expect("cert");
        (cert.pem(), key.serialize_pem())
    }
}

fn named(common_name: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, common_name);
    dn
}

/// A self-signed certificate for 127.0.0.1: (certificate PEM, key PEM).
pub fn self_signed() -> (String, String) {
    let key = KeyPair::generate().expect("key");
    let params = CertificateParams::new(vec!["127.0.0.1".to_string()]).expect("params");
    (params.self_signed(&key).expect("cert").pem(), key.serialize_pem())
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

/// A raw listener on 127.0.0.1; every accepted connection is counted and handed to `serve` on
/// a thread of its own.
pub struct Listener {
    pub addr: String,
    pub accepted: Arc<AtomicUsize>,
}

fn listen(serve: impl Fn(TcpStream) + Send + Sync + 'static) -> Listener {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("address").to_string();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    let serve = Arc::new(serve);
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            count.fetch_add(1, Ordering::SeqCst);
            let serve = serve.clone();
            std::thread::spawn(move || serve(s));
        }
    });
    Listener { addr, accepted }
}

/// Reads an HTTP request head (and a body of its Content-Length), at most 64 KiB.
fn read_request(s: &mut TcpStream) -> String {
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while buf.len() < 64 * 1024 {
        let text = String::from_utf8_lossy(&buf).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string())
                })
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            if body.len() >= length {
                return text;
            }
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// A web server: answers whatever comes (a gRPC client's HTTP/2 greeting too) with an HTTP/1.1
/// 400, as nginx or SyncTool's HTTP side would.
pub fn http1() -> Listener {
    listen(|mut s| {
        let mut first = [0u8; 256];
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let _ = s.read(&mut first);
        let _ = s.write_all(
            b"HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\nConnection: close\r\n\r\nBad Request",
        );
    })
}

/// A web server that answers the HTTP/2 greeting as Python's `http.server` does: an error page
/// in HTTP/0.9 style, with no status line (its request line names a version it does not know).
pub fn html_only() -> Listener {
    listen(|mut s| {
        let mut first = [0u8; 256];
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let _ = s.read(&mut first);
        let _ = s.write_all(b"<!DOCTYPE HTML>\n<html lang=\"en\">\n<head><title>Error response</title></head>\n<body><p>Error code: 505</p></body></html>\n");
    })
}

/// A listener that accepts and never says a word (a hung process, a firewall's tarpit).
pub fn silent() -> Listener {
    listen(|mut s| {
        let mut sink = [0u8; 4096];
        let _ = s.set_read_timeout(Some(Duration::from_secs(60)));
        while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
    })
}

/// An HTTP/JSON SyncTool stand-in that records every request it gets and answers TaskStatus.
pub fn recording_http() -> (Listener, Arc<Mutex<Vec<String>>>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let l = listen(move |mut s| {
        let request = read_request(&mut s);
        log.lock().expect("log").push(request);
        let body = r#"{"response":{"code":0}}"#;
        let _ = s.write_all(
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
    });
    (l, seen)
}
