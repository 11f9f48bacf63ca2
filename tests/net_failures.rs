//! Every failure kind from a real socket on 127.0.0.1: a closed port, TLS against plaintext and
//! back, gRPC to the brpc SyncTool port and brpc/HTTP to the gRPC port, credentials missing and
//! wrong, an unknown method, a deadline; each error's text and its [`FailureKind`] (run with
//! `--nocapture` to see the texts).

use crate::common;

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use std::time::Duration;
use walscope::net::grpc::Auth;
use walscope::net::profile::{AuthSettings, ConnectionProfile, SecretRef, TlsSettings, TransportKind};
use walscope::net::{CallOptions, CallRequest, FailureKind, NetError, call_unary, connect, find_method};
use walscope::schema::SchemaSet;
use walscope::sim::collector::CollectorConfig;
use walscope::sim::datasync::DatasyncDemo;
use walscope::sim::milvus::{Faults, MilvusDemo, MilvusDemoConfig};

fn pki() -> (String, String, String) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let params = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    let cert = params.signed_by(&key, &Issuer::from_params(&ca_params, &ca_key)).unwrap();
    (ca.pem(), cert.pem(), key.serialize_pem())
}

/// Connect with the profile and make one call; the error.
async fn fail(p: &ConnectionProfile, method: &str, json: &str) -> NetError {
    let set = SchemaSet::shared_builtin();
    let m = find_method(set.pool(), method).unwrap();
    let req = CallRequest::Message(walscope::codec::from_json(&m.input(), json).unwrap());
    let mut opts = p.call_options();
    opts.timeout = opts.timeout.or(Some(Duration::from_secs(5)));
    let result = match connect(p).await {
        Err(e) => Err(e),
        Ok(t) => call_unary(t.as_ref(), &m, &req, &opts).await.map(|_| ()),
    };
    result.expect_err("this call must fail")
}

fn check(label: &str, e: &NetError, want: FailureKind) {
    println!("{label}: [{}] {e}", e.kind());
    assert_eq!(e.kind(), want, "{label}: {e}");
}

fn grpc(endpoint: String) -> ConnectionProfile {
    ConnectionProfile::plain("t", TransportKind::Grpc, endpoint)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_failure_kind_from_real_sockets() {
    let (_held, closed) = common::refused_address();
    let closed = closed.to_string();
    const VERSION: &str = "milvus.proto.milvus.MilvusService/GetVersion";
    const STATUS: &str = "openmldb.datasync.SyncTool/TaskStatus";
    for transport in [TransportKind::Grpc, TransportKind::Brpc, TransportKind::Http] {
        let method = if transport == TransportKind::Grpc { VERSION } else { STATUS };
        let e = fail(&ConnectionProfile::plain("t", transport, closed.clone()), method, "{}").await;
        check(&format!("{transport:?} to a closed port"), &e, FailureKind::Refused);
    }

    let plain = MilvusDemo::start(MilvusDemoConfig::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = pki();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca).unwrap();
    let tls_profile = |endpoint: String, tls: TlsSettings| ConnectionProfile { tls, ..grpc(endpoint) };
    let e = fail(
        &tls_profile(plain.addr().to_string(), TlsSettings::CaFile { ca_file: ca_file.clone() }),
        VERSION,
        "{}",
    )
    .await;
    check("TLS (CA file) to a plaintext server", &e, FailureKind::Tls);
    let e = fail(&tls_profile(plain.addr().to_string(), TlsSettings::Insecure), VERSION, "{}").await;
    check("TLS (no verification) to a plaintext server", &e, FailureKind::Tls);

    let tls = MilvusDemo::start(MilvusDemoConfig {
        tls: Some((cert.into_bytes(), key.into_bytes())),
        ..Default::default()
    })
    .await
    .unwrap();
    let e = fail(&grpc(tls.addr().to_string()), VERSION, "{}").await;
    check("plaintext to a TLS server", &e, FailureKind::Tls);
    let e = fail(&tls_profile(tls.addr().to_string(), TlsSettings::System), VERSION, "{}").await;
    check("TLS with an untrusted certificate", &e, FailureKind::Tls);

    let any = "127.0.0.1:0".parse().unwrap();
    let ds =
        DatasyncDemo::start(any, any, Duration::from_secs(30), CollectorConfig::default()).await.unwrap();
    let e = fail(&grpc(ds.synctool.addr().to_string()), VERSION, "{}").await;
    check("gRPC to the brpc SyncTool port", &e, FailureKind::WrongProtocol);
    let brpc = |ep: String| ConnectionProfile::plain("t", TransportKind::Brpc, ep);
    let e = fail(&brpc(plain.addr().to_string()), STATUS, "{}").await;
    check("brpc to the gRPC port", &e, FailureKind::WrongProtocol);
    let e = fail(&ConnectionProfile::plain("t", TransportKind::Http, plain.addr().to_string()), STATUS, "{}")
        .await;
    check("HTTP/JSON to the gRPC port", &e, FailureKind::WrongProtocol);
    let e = fail(&brpc(ds.collector.addr().to_string()), STATUS, "{}").await;
    check("SyncTool call to the DataCollector (brpc 1001)", &e, FailureKind::NotFound);
    let e = fail(&brpc(ds.synctool.addr().to_string()), "openmldb.datasync.DataCollector/AddSyncTask", "{}")
        .await;
    check("DataCollector call to the SyncTool (brpc-java 2001)", &e, FailureKind::NotFound);
    let e = fail(
        &ConnectionProfile::plain("t", TransportKind::Http, ds.synctool.addr().to_string()),
        "openmldb.datasync.DataCollector/AddSyncTask",
        "{}",
    )
    .await;
    check("HTTP/JSON to an unknown SyncTool path (404)", &e, FailureKind::NotFound);
    let e = fail(&grpc(plain.addr().to_string()), "MilvusService/UpdateReplicateConfiguration", "{}").await;
    check("an unimplemented gRPC method", &e, FailureKind::NotFound);

    let auth = Auth::UserPassword { user: "root".into(), password: "Milvus".into() };
    let secured =
        MilvusDemo::start(MilvusDemoConfig { auth: Some(auth), ..Default::default() }).await.unwrap();
    let e = fail(&grpc(secured.addr().to_string()), VERSION, "{}").await;
    check("no credentials", &e, FailureKind::Auth);
    // SAFETY: this test's own variable, set before any thread reads it.
    unsafe { std::env::set_var("WALSCOPE_TEST_FAILURES_PW", "wrong") };
    let wrong = ConnectionProfile {
        auth: Some(AuthSettings::UserPassword {
            user: "root".into(),
            password: SecretRef::Env { var: "WALSCOPE_TEST_FAILURES_PW".into() },
        }),
        ..grpc(secured.addr().to_string())
    };
    let e = fail(&wrong, VERSION, "{}").await;
    check("wrong password", &e, FailureKind::Auth);
    let unset = ConnectionProfile {
        auth: Some(AuthSettings::Token {
            token: SecretRef::Env { var: "WALSCOPE_TEST_FAILURES_UNSET".into() },
        }),
        ..grpc(secured.addr().to_string())
    };
    let e = fail(&unset, VERSION, "{}").await;
    check("a secret that cannot be read", &e, FailureKind::Auth);

    let slow = MilvusDemo::start(MilvusDemoConfig {
        faults: Faults { replicate_info_delay: Some(Duration::from_secs(5)), ..Default::default() },
        ..Default::default()
    })
    .await
    .unwrap();
    let p = ConnectionProfile { timeout_secs: Some(1), ..grpc(slow.addr().to_string()) };
    let e = fail(&p, "MilvusService/GetReplicateInfo", "{}").await;
    check("a deadline", &e, FailureKind::Timeout);
    // A refusal in the body is no transport error: the call succeeds and the body says why.
    let set = SchemaSet::shared_builtin();
    let m = find_method(set.pool(), "openmldb.datasync.SyncTool/CreateSyncTask").unwrap();
    let req = CallRequest::Message(walscope::codec::from_json(&m.input(), r#"{"db": "demo_db"}"#).unwrap());
    let t = connect(&brpc(ds.synctool.addr().to_string())).await.unwrap();
    let outcome = call_unary(t.as_ref(), &m, &req, &CallOptions::default()).await.unwrap();
    let words = outcome.body_error().expect("an error in the body");
    println!("a refusal in the body: {words}");
    assert!(words.starts_with("the server refused: code -1: "), "{words}");
}
