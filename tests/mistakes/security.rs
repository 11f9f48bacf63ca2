//! Security at the edges: TLS asked of a transport that has none, headers and credentials that
//! went nowhere, a TLS failure sent the wrong way ("use brpc"), a gRPC call to a port that
//! answers HTTP/1.1 or nothing at all, a brpc call to a closed port. Real servers on 127.0.0.1:
//! the demo SyncTool and Milvus (TLS with certificates made here), and raw listeners.

use super::edges::*;
use super::util::*;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use walscope::net::profile::{ConnectionProfile, TlsSettings, TransportKind};

const STATUS: &str = "openmldb.datasync.SyncTool/TaskStatus";
const VERSION: &str = "milvus.proto.milvus.MilvusService/GetVersion";

/// `--tls`, `--cacert`, `--insecure` and `--cert/--key` with `--transport brpc` or `http` called
/// the SyncTool in PLAINTEXT and exited 0; so did a saved profile with TLS settings. Now refused
/// in words before any connection (a listener sees none), for flags, profiles and `tasks`.
#[test]
fn tls_on_brpc_or_http_is_refused_before_connecting() {
    let rt = runtime();
    let ds = datasync(&rt);
    let synctool = ds.synctool.addr().to_string();
    let watched = silent();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ca = Ca::new();
    let (cert, key) = ca.issue(&["walscope-client"], None);
    write(d, "ca.pem", &ca.pem);
    write(d, "client.pem", &cert);
    write(d, "client.key", &key);
    let before = snapshot(d);
    let flag_sets: [&[&str]; 4] = [
        &["--tls"],
        &["--cacert", "ca.pem"],
        &["--insecure"],
        &["--cert", "client.pem", "--key", "client.key"],
    ];
    for transport in ["brpc", "http"] {
        for flags in flag_sets {
            for addr in [&synctool, &watched.addr] {
                let mut args = vec!["call", addr.as_str(), STATUS, "--transport", transport, "-d", "{}"];
                args.extend_from_slice(flags);
                let o = walscope(d, &args);
                failed_cleanly(&o, d, &before, "refused before connecting");
                assert!(stdout(&o).is_empty(), "{args:?} answered: {}", stdout(&o));
                let err = stderr(&o);
                assert!(err.contains(flags[0]) && err.contains("plaintext"), "{args:?}: {err}");
            }
        }
    }
    // Saved profiles with TLS settings and an OpenMLDB transport: `call` and `tasks`.
    let ca_file = d.join("ca.pem").display().to_string();
    let client = (d.join("client.pem").display().to_string(), d.join("client.key").display().to_string());
    let profiles = serde_json::json!([
        {"name": "st-brpc", "transport": "brpc", "endpoint": synctool,
         "tls": {"mode": "ca_file", "ca_file": ca_file}},
        {"name": "st-http", "transport": "http", "endpoint": synctool, "tls": {"mode": "insecure"}},
        {"name": "st-system", "transport": "brpc", "endpoint": watched.addr, "tls": {"mode": "system"}},
        {"name": "st-mtls", "transport": "http", "endpoint": watched.addr, "client_cert": [client.0, client.1]},
    ]);
    std::fs::create_dir_all(d.join(".config")).unwrap();
    std::fs::write(d.join(".config/profiles.json"), serde_json::to_vec_pretty(&profiles).unwrap()).unwrap();
    for name in ["st-brpc", "st-http", "st-system", "st-mtls"] {
        let o = walscope(d, &["call", name, STATUS, "-d", "{}"]);
        failed_cleanly(&o, d, &before, "refused before connecting");
        assert!(stdout(&o).is_empty(), "{name}: {}", stdout(&o));
        let o = walscope(d, &["tasks", "status", "--endpoint", name]);
        failed_cleanly(&o, d, &before, "refused before connecting");
    }
    // The window and the jobs come through `net::connect`: the same refusal, in the same words.
    for transport in [TransportKind::Brpc, TransportKind::Http] {
        let p = ConnectionProfile {
            tls: TlsSettings::CaFile { ca_file: d.join("ca.pem") },
            ..ConnectionProfile::plain("window", transport, watched.addr.clone())
        };
        match rt.block_on(walscope::net::connect(&p)) {
            Ok(_) => panic!("{transport:?} with TLS connected in plaintext"),
            Err(e) => assert!(e.to_string().contains("refused before connecting"), "{e}"),
        }
    }
    assert_eq!(watched.accepted.load(Ordering::SeqCst), 0, "a refused call connected anyway");
}

/// `-H` and `--db` were not sent over HTTP/JSON, and `--user`/`--token-env` went nowhere, without
/// a word. Now headers go out as HTTP headers (the server sees them); credentials, which
/// SyncTool does not check and HTTP would carry in the clear, are refused; brpc, which has no
/// headers at all, refuses headers, the database header and credentials alike.
#[test]
fn headers_and_credentials_are_sent_or_refused_in_words() {
    let rt = runtime();
    let ds = datasync(&rt);
    let synctool = ds.synctool.addr().to_string();
    let (http, seen) = recording_http();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let before = snapshot(d);
    let o = walscope(
        d,
        &[
            "call",
            &http.addr,
            STATUS,
            "--transport",
            "http",
            "-H",
            "x-trace: abc-17",
            "--db",
            "demo_db",
            "-d",
            "{}",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let head = requests[0].to_ascii_lowercase();
    assert!(head.starts_with("post /openmldb.datasync.synctool/taskstatus http/1.1"), "{head}");
    assert!(head.contains("\r\nx-trace: abc-17\r\n") && head.contains("\r\ndbname: demo_db\r\n"), "{head}");

    let credentials: [&[&str]; 2] =
        [&["--user", "bob", "--password-env", "WS_PW"], &["--token-env", "WS_PW"]];
    for creds in credentials {
        for (transport, addr) in [("http", &http.addr), ("brpc", &synctool)] {
            let mut args = vec!["call", addr.as_str(), STATUS, "--transport", transport, "-d", "{}"];
            args.extend_from_slice(creds);
            let o = command(d, &args).env("WS_PW", "pw-never-sent").output().unwrap();
            failed_cleanly(&o, d, &before, "check no credentials");
            assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
        }
    }
    assert_eq!(seen.lock().unwrap().len(), 1, "a refused call reached the server");
    let headers: [&[&str]; 2] = [&["-H", "x-trace: abc-17"], &["--db", "demo_db"]];
    for h in headers {
        let mut args = vec!["call", synctool.as_str(), STATUS, "--transport", "brpc", "-d", "{}"];
        args.extend_from_slice(h);
        let o = walscope(d, &args);
        failed_cleanly(&o, d, &before, "baidu_std has no headers");
    }
    // A header HTTP/1.1 cannot carry is refused, and its value is not repeated.
    let o = walscope(
        d,
        &["call", &http.addr, STATUS, "--transport", "http", "-H", "content-length: 1", "-d", "{}"],
    );
    failed_cleanly(&o, d, &before, "written by walscope itself");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

/// A gRPC call over TLS to a server whose certificate is self-signed, of an unknown CA, for
/// another name or expired was reported by what the port answered a plaintext greeting with (a
/// Go server such as Milvus: HTTP/1.0 400), "speaks HTTP/1.1, not gRPC ... use --transport http
/// or brpc". Now each, and a server that wants a client certificate, is named as the TLS failure
/// it is, with the next step.
#[test]
fn tls_failures_are_named_with_the_next_step() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ca = Ca::new();
    write(d, "ca.pem", &ca.pem);
    let before = snapshot(d);
    // (what, the server's certificate and key, the CA its clients need, flags, the words)
    type Case<'a> = (&'a str, (String, String), Option<String>, &'a [&'a str], &'a [&'a str]);
    let cases: [Case; 5] = [
        ("self-signed", self_signed(), None, &["--tls"], &["self-signed", "--cacert FILE", "--insecure"]),
        (
            "unknown issuer",
            ca.issue(&["127.0.0.1"], None),
            None,
            &["--tls"],
            &["unknown issuer", "--cacert FILE", "--insecure"],
        ),
        (
            "name mismatch",
            ca.issue(&["db.example.com"], None),
            None,
            &["--cacert", "ca.pem"],
            &["name mismatch", "db.example.com", "--insecure"],
        ),
        (
            "expired",
            ca.issue(&["127.0.0.1"], Some((2020, 2021))),
            None,
            &["--cacert", "ca.pem"],
            &["expired on 2021-01-01", "clock"],
        ),
        (
            "protocol alert",
            ca.issue(&["127.0.0.1"], None),
            Some(Ca::new().pem),
            &["--cacert", "ca.pem"],
            &["protocol alert", "--cert FILE --key FILE"],
        ),
    ];
    for (label, identity, client_ca, flags, words) in cases {
        // Milvus (Go) answers a plaintext greeting on its TLS port with an HTTP/1.0 400; the
        // demo Milvus does mutual TLS.
        let (addr, demo) = match client_ca {
            None => (go_tls(&rt, &identity.0, &identity.1), None),
            Some(ca) => {
                let server = milvus(&rt, Some(identity), Some(ca));
                (server.addr().to_string(), Some(server))
            }
        };
        let mut args = vec!["call", addr.as_str(), VERSION, "--timeout", "5"];
        args.extend_from_slice(flags);
        let o = walscope(d, &args);
        let err = stderr(&o);
        failed_cleanly(&o, d, &before, "TLS handshake failed");
        for w in words {
            assert!(err.contains(w), "{label}: expected {w:?} in: {err}");
        }
        assert!(!err.contains("brpc") && !err.contains("not gRPC"), "{label}: {err}");
        if let Some(server) = demo {
            rt.block_on(server.shutdown());
        }
    }
}

/// A gRPC call to a port that answers HTTP/1 (as Python's http.server does: an HTML page with no
/// status line) said "INTERNAL: h2 protocol error: frame with invalid size"; to a listener that
/// says nothing, "CANCELLED: Timeout expired" after 30 s. Now both are named with the next step
/// (the silent one at the --timeout asked, plus a short look); a brpc or HTTP/JSON call to a
/// closed port gets the hint gRPC's gets.
#[test]
fn a_port_that_answers_http1_or_nothing_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let before = snapshot(d);
    for web in [http1(), html_only()] {
        let o = walscope(d, &["call", &web.addr, VERSION, "--timeout", "5"]);
        failed_cleanly(&o, d, &before, "answers HTTP/1.1, not gRPC (HTTP/2)");
        assert!(stderr(&o).contains("--transport http"), "{}", stderr(&o));
    }

    let quiet = silent();
    let started = Instant::now();
    let o = walscope(d, &["call", &quiet.addr, VERSION, "--timeout", "1"]);
    let took = started.elapsed();
    failed_cleanly(&o, d, &before, "accepted the connection but said nothing within 1 s");
    assert!(stderr(&o).contains("check the host and port"), "{}", stderr(&o));
    assert!(took < Duration::from_secs(8), "took {took:?}");

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap().to_string();
    drop(closed);
    let o = walscope(d, &["call", &addr, VERSION]);
    failed_cleanly(&o, d, &before, "nothing listens there");
    for transport in ["brpc", "http"] {
        let o = walscope(d, &["call", &addr, STATUS, "--transport", transport, "-d", "{}"]);
        failed_cleanly(&o, d, &before, "nothing listens there: check host and port");
    }
}
