//! The connection test against real servers on 127.0.0.1: the demo Milvus (version; reflection
//! on and off), the demo SyncTool (brpc and HTTP) and DataCollector, a dead port, TLS against a
//! plaintext server, the wrong protocol, and credentials refused.

use crate::common;

use std::time::Duration;
use walscope::net::grpc::Auth;
use walscope::net::probe::test_connection_within;
use walscope::net::profile::{ConnectionProfile, TlsSettings, TransportKind};
use walscope::net::{FailureKind, test_connection};
use walscope::schema::SchemaSet;
use walscope::sim::collector::CollectorConfig;
use walscope::sim::datasync::DatasyncDemo;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig};

fn p(t: TransportKind, ep: impl ToString) -> ConnectionProfile {
    ConnectionProfile::plain("probe", t, ep.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_say_what_answered_or_why_not() {
    let set = SchemaSet::shared_builtin();
    let pool = set.pool();
    let milvus = MilvusDemo::start(MilvusDemoConfig::default()).await.unwrap();
    let r = test_connection(&p(TransportKind::Grpc, milvus.addr()), pool).await;
    println!("milvus: {}", r.summary());
    assert!(r.ok(), "{r:?}");
    assert_eq!(r.server_version.as_deref(), Some("v2.6.20-walscope-demo"));
    assert!(r.latency.is_some() && !r.insecure);
    assert!(matches!(&r.reflection, Some(Err(e)) if e.starts_with("not served")), "{:?}", r.reflection);

    let reflecting =
        MilvusDemo::start(MilvusDemoConfig { reflection: true, ..Default::default() }).await.unwrap();
    let r = test_connection(&p(TransportKind::Grpc, reflecting.addr()), pool).await;
    println!("milvus with reflection: {} {:?}", r.summary(), r.reflection);
    let services = r.reflection.clone().unwrap().unwrap();
    assert!(services.contains(&"milvus.proto.milvus.MilvusService".to_string()), "{services:?}");
    assert!(!services.iter().any(|s| s.starts_with("grpc.reflection")));

    let any = "127.0.0.1:0".parse().unwrap();
    let ds =
        DatasyncDemo::start(any, any, Duration::from_secs(30), CollectorConfig::default()).await.unwrap();
    for t in [TransportKind::Brpc, TransportKind::Http] {
        let r = test_connection(&p(t, ds.synctool.addr()), pool).await;
        println!("synctool over {t:?}: {}", r.summary());
        assert!(r.ok(), "{r:?}");
        assert_eq!(r.answered.as_deref(), Some("SyncTool: 0 sub-tasks"));
        assert_eq!(r.server_version, None);
        assert!(r.reflection.is_none());
    }
    let r = test_connection(&p(TransportKind::Brpc, ds.collector.addr()), pool).await;
    println!("collector: {}", r.summary());
    assert!(r.ok() && r.answered.as_deref().unwrap_or("").contains("DataCollector"), "{r:?}");

    let (_held, dead) = common::refused_address();
    for t in [TransportKind::Grpc, TransportKind::Brpc, TransportKind::Http] {
        let r = test_connection(&p(t, dead), pool).await;
        println!("dead port over {t:?}: {}", r.summary());
        assert_eq!(r.failure.as_ref().map(|f| f.0), Some(FailureKind::Refused), "{r:?}");
        assert!(r.latency.is_none());
    }

    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(
        &ca_file,
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap().cert.pem(),
    )
    .unwrap();
    let tls =
        ConnectionProfile { tls: TlsSettings::CaFile { ca_file }, ..p(TransportKind::Grpc, milvus.addr()) };
    let r = test_connection(&tls, pool).await;
    println!("TLS to plaintext: {}", r.summary());
    assert_eq!(r.failure.as_ref().map(|f| f.0), Some(FailureKind::Tls), "{r:?}");

    let r = test_connection(&p(TransportKind::Grpc, ds.synctool.addr()), pool).await;
    println!("gRPC to SyncTool: {}", r.summary());
    assert_eq!(r.failure.as_ref().map(|f| f.0), Some(FailureKind::WrongProtocol), "{r:?}");
    let r = test_connection(&p(TransportKind::Brpc, milvus.addr()), pool).await;
    println!("brpc to Milvus: {}", r.summary());
    assert_eq!(r.failure.as_ref().map(|f| f.0), Some(FailureKind::WrongProtocol), "{r:?}");

    let auth = Auth::UserPassword { user: "root".into(), password: "Milvus".into() };
    let secured =
        MilvusDemo::start(MilvusDemoConfig { auth: Some(auth), ..Default::default() }).await.unwrap();
    let r = test_connection(&p(TransportKind::Grpc, secured.addr()), pool).await;
    println!("no credentials: {}", r.summary());
    assert_eq!(r.failure.as_ref().map(|f| f.0), Some(FailureKind::Auth), "{r:?}");
    assert!(r.summary().contains("credentials"), "{}", r.summary());

    // Bounded: a server that accepts and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_addr = silent.local_addr().unwrap();
    let _keep = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            held.push(s);
        }
    });
    let started = std::time::Instant::now();
    let r =
        test_connection_within(&p(TransportKind::Brpc, silent_addr), pool, Duration::from_millis(500)).await;
    println!("silent server: {} (after {:?})", r.summary(), started.elapsed());
    assert_eq!(r.failure.as_ref().map(|f| f.0), Some(FailureKind::Timeout), "{r:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
}
