//! The generic call path over real loopback sockets: requests given as exact bytes reach the
//! server byte for byte (seen by a recording proxy between client and demo) over gRPC and brpc,
//! HTTP/JSON says it cannot; `net::connect` with a profile's TLS, credentials and database;
//! server streams to a sink, cancelled mid-way.

use crate::common;

use bytes::Bytes;
use std::time::Duration;
use walscope::net::profile::{AuthSettings, ConnectionProfile, SecretRef, TlsSettings, TransportKind};
use walscope::net::{
    CallOptions, CallRequest, StreamEnd, call_server_stream, call_unary, connect, find_method,
};
use walscope::schema::SchemaSet;
use walscope::sim::collector::CollectorConfig;
use walscope::sim::datasync::DatasyncDemo;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig, OLD_CLUSTER_ID};

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// `msg` encoded canonically, then an unknown field 99 (varint 1, its value written in a
/// non-canonical two-byte form): bytes no re-encoding would produce.
fn odd_bytes(canonical: Vec<u8>) -> Bytes {
    let mut b = canonical;
    b.extend_from_slice(&[0x98, 0x06, 0x81, 0x00]);
    Bytes::from(b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exact_request_bytes_reach_the_server() {
    let set = SchemaSet::shared_builtin();
    let demo = MilvusDemo::start(MilvusDemoConfig::default()).await.unwrap();
    let (via, seen) = common::recording_proxy(demo.addr()).await;
    let m = find_method(set.pool(), "MilvusService/GetReplicateInfo").unwrap();
    let msg = walscope::codec::from_json(
        &m.input(),
        &format!(
            r#"{{"source_cluster_id": "{OLD_CLUSTER_ID}", "target_pchannel": "by-dev-rootcoord-dml_0"}}"#
        ),
    )
    .unwrap();
    let bytes = odd_bytes(walscope::codec::encode(&msg));
    let t = connect(&ConnectionProfile::plain("p", TransportKind::Grpc, via)).await.unwrap();
    let out = call_unary(t.as_ref(), &m, &CallRequest::Bytes(bytes.clone()), &CallOptions::default())
        .await
        .unwrap();
    assert!(out.request_exact);
    assert_eq!(out.request, bytes);
    assert!(out.message.has_field_by_name("salvage_checkpoint"), "the demo understood the request");
    assert_eq!(out.body_error(), None);
    assert!(contains(&seen.lock().unwrap(), &bytes), "the exact bytes crossed the socket");

    let any = "127.0.0.1:0".parse().unwrap();
    let ds =
        DatasyncDemo::start(any, any, Duration::from_secs(30), CollectorConfig::default()).await.unwrap();
    let (via, seen) = common::recording_proxy(ds.synctool.addr()).await;
    let m = find_method(set.pool(), "openmldb.datasync.SyncTool/TaskStatus").unwrap();
    let bytes = odd_bytes(Vec::new());
    let t = connect(&ConnectionProfile::plain("p", TransportKind::Brpc, via.clone())).await.unwrap();
    let out = call_unary(t.as_ref(), &m, &CallRequest::Bytes(bytes.clone()), &CallOptions::default())
        .await
        .unwrap();
    assert!(out.request_exact && out.request == bytes);
    assert!(contains(&seen.lock().unwrap(), &bytes));

    // HTTP/JSON re-encodes: it says so, and the unknown field does not travel.
    let t = connect(&ConnectionProfile::plain("p", TransportKind::Http, via)).await.unwrap();
    let before = seen.lock().unwrap().len();
    let out = call_unary(t.as_ref(), &m, &CallRequest::Bytes(bytes.clone()), &CallOptions::default())
        .await
        .unwrap();
    assert!(!out.request_exact);
    let http = seen.lock().unwrap()[before..].to_vec();
    assert!(contains(&http, b"POST /openmldb.datasync.SyncTool/TaskStatus") && !contains(&http, &bytes));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_applies_tls_credentials_and_database() {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &rcgen::Issuer::from_params(&ca_params, &ca_key))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let auth = walscope::net::grpc::Auth::UserPassword { user: "root".into(), password: "Milvus".into() };
    let demo = MilvusDemo::start(MilvusDemoConfig {
        tls: Some((cert.pem().into_bytes(), key.serialize_pem().into_bytes())),
        auth: Some(auth),
        ..Default::default()
    })
    .await
    .unwrap();
    // SAFETY: this test's own variable, set before any thread reads it.
    unsafe { std::env::set_var("WALSCOPE_TEST_CALL_PW", "Milvus") };
    let profile = ConnectionProfile {
        tls: TlsSettings::CaFile { ca_file },
        auth: Some(AuthSettings::UserPassword {
            user: "root".into(),
            password: SecretRef::Env { var: "WALSCOPE_TEST_CALL_PW".into() },
        }),
        db_name: Some("analytics".into()),
        timeout_secs: Some(7),
        ..ConnectionProfile::plain("secured", TransportKind::Grpc, demo.addr().to_string())
    };
    let opts = profile.call_options();
    assert_eq!(opts.timeout, Some(Duration::from_secs(7)));
    assert_eq!(
        opts.metadata,
        vec![("dbname".to_string(), "analytics".to_string())],
        "no secret in the options"
    );
    let t = connect(&profile).await.unwrap();
    let set = SchemaSet::shared_builtin();
    let m = find_method(set.pool(), "MilvusService/GetVersion").unwrap();
    let out = call_unary(
        t.as_ref(),
        &m,
        &CallRequest::Message(prost_reflect::DynamicMessage::new(m.input())),
        &opts,
    )
    .await
    .unwrap();
    assert!(walscope::codec::to_json(&out.message, false).contains("walscope-demo"));
    // The database header went with the call: the demo has only `default`.
    let m = find_method(set.pool(), "MilvusService/Connect").unwrap();
    let out = call_unary(
        t.as_ref(),
        &m,
        &CallRequest::Message(prost_reflect::DynamicMessage::new(m.input())),
        &opts,
    )
    .await
    .unwrap();
    let words = out.body_error().expect("database not found, in the body");
    assert!(
        words.contains("code 800") && words.contains("database not found[database=analytics]"),
        "{words}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_streams_go_to_a_sink_and_stop_on_cancel() {
    let set = SchemaSet::shared_builtin();
    let demo = MilvusDemo::start(MilvusDemoConfig::default()).await.unwrap();
    let t =
        connect(&ConnectionProfile::plain("p", TransportKind::Grpc, demo.addr().to_string())).await.unwrap();
    let m = find_method(set.pool(), "milvus.proto.milvus.MilvusService.DumpMessages").unwrap();
    // From the salvage checkpoint, endless (no end timetick): only the cancel ends it.
    let info = find_method(set.pool(), "MilvusService/GetReplicateInfo").unwrap();
    let ask = walscope::codec::from_json(
        &info.input(),
        &format!(
            r#"{{"source_cluster_id": "{OLD_CLUSTER_ID}", "target_pchannel": "by-dev-rootcoord-dml_0"}}"#
        ),
    )
    .unwrap();
    let ckpt =
        call_unary(t.as_ref(), &info, &CallRequest::Message(ask), &CallOptions::default()).await.unwrap();
    let ckpt: serde_json::Value =
        serde_json::from_str(&walscope::codec::to_json(&ckpt.message, false)).unwrap();
    let json = serde_json::json!({"pchannel": "by-dev-rootcoord-dml_0", "start_message_id": ckpt["salvageCheckpoint"]["messageId"]});
    let req = walscope::codec::from_json(&m.input(), &json.to_string()).unwrap();
    let cancel = tokio_util::sync::CancellationToken::new();
    let (mut got, stopper) = (Vec::new(), cancel.clone());
    let summary = call_server_stream(
        t.as_ref(),
        &m,
        &CallRequest::Message(req.clone()),
        &CallOptions::default(),
        &cancel,
        |b| {
            got.push(b);
            if got.len() == 25 {
                stopper.cancel();
            }
            Ok(())
        },
    )
    .await;
    assert!(matches!(summary.end, StreamEnd::Cancelled), "{:?}", summary.end);
    assert_eq!(summary.count, 25);
    assert_eq!(summary.bytes, got.iter().map(|b| b.len() as u64).sum::<u64>());
    assert!(got.iter().all(|b| walscope::net::decode_reply(&m, b).is_ok()));
    // A sink that refuses stops the stream with its reason.
    let summary = call_server_stream(
        t.as_ref(),
        &m,
        &CallRequest::Message(req),
        &CallOptions::default(),
        &tokio_util::sync::CancellationToken::new(),
        |_| Err("disk full".to_string()),
    )
    .await;
    assert!(matches!(&summary.end, StreamEnd::Stopped(w) if w == "disk full"), "{:?}", summary.end);
    assert_eq!(summary.count, 0);
    // A unary method is not a stream.
    let unary = find_method(set.pool(), "MilvusService/GetVersion").unwrap();
    let fresh = tokio_util::sync::CancellationToken::new();
    let summary = call_server_stream(
        t.as_ref(),
        &unary,
        &CallRequest::Bytes(Bytes::new()),
        &CallOptions::default(),
        &fresh,
        |_| Ok(()),
    )
    .await;
    assert!(matches!(summary.end, StreamEnd::Failed(_)));
}
