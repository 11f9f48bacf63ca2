//! TLS with a test CA (rcgen) and Milvus-style auth, against the demo over 127.0.0.1.

use prost_reflect::{DynamicMessage, MethodDescriptor};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use std::path::PathBuf;
use walscope::net::grpc::{Auth, GrpcSettings, GrpcTransport, TlsMode};
use walscope::net::{CallOptions, NetError, Transport};
use walscope::schema::SchemaSet;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig};

fn get_version(set: &SchemaSet) -> MethodDescriptor {
    let svc = set.pool().get_service_by_name("milvus.proto.milvus.MilvusService").unwrap();
    svc.methods().find(|m| m.name() == "GetVersion").unwrap()
}

/// A CA, and a server certificate for 127.0.0.1 signed by it: (ca pem, cert pem, key pem).
fn test_pki() -> (String, String, String) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let params = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
    let cert = params.signed_by(&key, &Issuer::from_params(&ca_params, &ca_key)).unwrap();
    (ca.pem(), cert.pem(), key.serialize_pem())
}

async fn version(t: &GrpcTransport, set: &SchemaSet) -> Result<String, NetError> {
    let m = get_version(set);
    let reply = t.call_unary(&m, &DynamicMessage::new(m.input()), &CallOptions::default()).await?;
    Ok(walscope::codec::to_json(&reply.message, false))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_needs_the_ca_or_an_explicit_insecure() {
    let (ca, cert, key) = test_pki();
    let dir = tempfile::tempdir().unwrap();
    let ca_file: PathBuf = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca).unwrap();
    let config = MilvusDemoConfig { tls: Some((cert.into_bytes(), key.into_bytes())), ..Default::default() };
    let demo = MilvusDemo::start(config).await.unwrap();
    let set = SchemaSet::builtin();
    let addr = demo.addr().to_string();

    let mut s = GrpcSettings::new(&addr);
    s.tls = TlsMode::CaFile(ca_file);
    let t = GrpcTransport::connect(&s).await.expect("connects with the CA");
    assert!(!t.is_insecure());
    assert!(version(&t, &set).await.unwrap().contains("demo"));

    s.tls = TlsMode::SystemRoots;
    let refused = match GrpcTransport::connect(&s).await {
        Err(e) => e.to_string(),
        Ok(t) => version(&t, &set).await.expect_err("must not trust an unknown CA").to_string(),
    };
    assert!(refused.to_lowercase().contains("certificate") || refused.contains("UnknownIssuer"), "{refused}");

    s.tls = TlsMode::Insecure;
    let t = GrpcTransport::connect(&s).await.expect("skip-verification connects");
    assert!(t.is_insecure());
    assert!(version(&t, &set).await.unwrap().contains("demo"));

    s.tls = TlsMode::Plaintext;
    let plain = match GrpcTransport::connect(&s).await {
        Err(e) => Err(e),
        Ok(t) => version(&t, &set).await,
    };
    assert!(plain.is_err(), "plaintext must not talk to a TLS server");
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_required_gives_unauthenticated_without_the_header() {
    let auth = Auth::UserPassword { user: "root".into(), password: "Milvus".into() };
    let demo =
        MilvusDemo::start(MilvusDemoConfig { auth: Some(auth.clone()), ..Default::default() }).await.unwrap();
    let set = SchemaSet::builtin();
    let mut s = GrpcSettings::new(demo.addr().to_string());
    let t = GrpcTransport::connect(&s).await.unwrap();
    match version(&t, &set).await {
        Err(NetError::Status { code, hint, .. }) => {
            assert_eq!(code, "UNAUTHENTICATED");
            assert!(hint.contains("--user"), "{hint}");
        }
        other => panic!("expected UNAUTHENTICATED, got {other:?}"),
    }
    s.auth = Some(Auth::UserPassword { user: "root".into(), password: "wrong".into() });
    let t = GrpcTransport::connect(&s).await.unwrap();
    assert!(
        matches!(version(&t, &set).await, Err(NetError::Status { code, .. }) if code == "UNAUTHENTICATED")
    );
    s.auth = Some(auth);
    let t = GrpcTransport::connect(&s).await.unwrap();
    assert!(version(&t, &set).await.unwrap().contains("demo"));
    demo.shutdown().await;
}

/// A client certificate signed by a CA of its own: (client ca pem, cert pem, key pem).
fn client_pki() -> (String, String, String) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let params = CertificateParams::new(vec!["walscope-client".to_string()]).unwrap();
    let cert = params.signed_by(&key, &Issuer::from_params(&ca_params, &ca_key)).unwrap();
    (ca.pem(), cert.pem(), key.serialize_pem())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_needs_the_client_certificate() {
    let (ca, cert, key) = test_pki();
    let (client_ca, client_cert, client_key) = client_pki();
    let (_, stranger_cert, stranger_key) = client_pki();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let ca_file = write("ca.pem", &ca);
    let config = MilvusDemoConfig {
        tls: Some((cert.into_bytes(), key.into_bytes())),
        client_ca: Some(client_ca.into_bytes()),
        ..Default::default()
    };
    let demo = MilvusDemo::start(config).await.unwrap();
    let set = SchemaSet::builtin();
    let mut s = GrpcSettings::new(demo.addr().to_string());
    s.tls = TlsMode::CaFile(ca_file);

    s.client_cert = Some((write("client.pem", &client_cert), write("client.key", &client_key)));
    let t = GrpcTransport::connect(&s).await.expect("connects with the client certificate");
    assert!(version(&t, &set).await.unwrap().contains("demo"), "answered over mutual TLS");

    for (what, cert) in [
        ("no client certificate", None),
        (
            "a certificate of another CA",
            Some((write("s.pem", &stranger_cert), write("s.key", &stranger_key))),
        ),
    ] {
        s.client_cert = cert;
        let refused = match GrpcTransport::connect(&s).await {
            Err(e) => e.to_string(),
            Ok(t) => version(&t, &set).await.expect_err(what).to_string(),
        };
        // The server ends the handshake (a CertificateRequired or DecryptError alert, or the
        // connection closed when the alert loses the race): the call fails, it never answers.
        assert!(refused.contains("GetVersion failed") || refused.contains("connect"), "{what}: {refused}");
    }
    demo.shutdown().await;
}
