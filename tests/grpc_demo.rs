//! GrpcTransport against the demo Milvus over 127.0.0.1: unary calls, DumpMessages, statuses.

use futures::StreamExt;
use prost_reflect::{DynamicMessage, MethodDescriptor};
use walscope::net::grpc::{GrpcSettings, GrpcTransport};
use walscope::net::{CallOptions, NetError, Transport};
use walscope::schema::SchemaSet;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig, OLD_CLUSTER_ID, SESSION_IDENTIFIER};
use walscope::sim::{WalGenConfig, WalGenerator};

fn method(set: &SchemaSet, name: &str) -> MethodDescriptor {
    let svc = set.pool().get_service_by_name("milvus.proto.milvus.MilvusService").expect("service");
    svc.methods().find(|m| m.name() == name).expect("method")
}

fn request(m: &MethodDescriptor, v: serde_json::Value) -> DynamicMessage {
    DynamicMessage::deserialize(m.input(), v).expect("request JSON")
}

fn small_wal() -> WalGenConfig {
    WalGenConfig { seed: 3, rows: (1, 2), total: None, ..Default::default() }
}

#[tokio::test]
async fn unary_calls_against_the_demo() {
    let demo = MilvusDemo::start(MilvusDemoConfig { wal: small_wal(), ..Default::default() }).await.unwrap();
    let set = SchemaSet::builtin();
    let t = GrpcTransport::connect(&GrpcSettings::new(demo.addr().to_string())).await.unwrap();
    let m = method(&set, "GetVersion");
    let reply = t.call_unary(&m, &request(&m, serde_json::json!({})), &CallOptions::default()).await.unwrap();
    let json = walscope::codec::to_json(&reply.message, false);
    assert!(json.contains("v2.6.20-walscope-demo"), "{json}");

    let m = method(&set, "GetReplicateInfo");
    let req = request(
        &m,
        serde_json::json!({"source_cluster_id": OLD_CLUSTER_ID, "target_pchannel": "by-dev-rootcoord-dml_2"}),
    );
    let reply = t.call_unary(&m, &req, &CallOptions::default()).await.unwrap();
    let json = walscope::codec::to_json(&reply.message, false);
    assert!(json.contains("salvageCheckpoint") && json.contains("Kafka"), "{json}");

    let req = request(
        &m,
        serde_json::json!({"source_cluster_id": "nobody", "target_pchannel": "by-dev-rootcoord-dml_2"}),
    );
    let reply = t.call_unary(&m, &req, &CallOptions::default()).await.unwrap();
    assert_eq!(walscope::codec::to_json(&reply.message, false), "{}");
    demo.shutdown().await;
}

/// Connect as the proxy answers it (what SDKs call first), CheckHealth, and UNIMPLEMENTED with
/// the method's name for what the demo does not serve.
#[tokio::test]
async fn connect_health_and_unserved_methods() {
    let demo = MilvusDemo::start(MilvusDemoConfig { wal: small_wal(), ..Default::default() }).await.unwrap();
    let set = SchemaSet::builtin();
    let t = GrpcTransport::connect(&GrpcSettings::new(demo.addr().to_string())).await.unwrap();
    let m = method(&set, "Connect");
    let req = request(&m, serde_json::json!({"client_info": {"sdk_type": "Python", "sdk_version": "3.0.2"}}));
    let json = |reply: &DynamicMessage| -> serde_json::Value {
        serde_json::from_str(&walscope::codec::to_json(reply, false)).unwrap()
    };
    for db in [None, Some("default")] {
        let opts = CallOptions {
            metadata: db.map(|d| ("dbname".to_string(), d.to_string())).into_iter().collect(),
            ..Default::default()
        };
        let reply = json(&t.call_unary(&m, &req, &opts).await.unwrap().message);
        assert_eq!(reply["identifier"], SESSION_IDENTIFIER.to_string(), "{reply}");
        assert_eq!(reply["serverInfo"]["buildTags"], "v2.6.20-walscope-demo", "{reply}");
        assert_eq!(reply["status"], serde_json::json!({}), "{reply}");
    }
    assert_ne!(SESSION_IDENTIFIER, 0);
    let opts = CallOptions { metadata: vec![("dbname".into(), "nope".into())], ..Default::default() };
    let reply = json(&t.call_unary(&m, &req, &opts).await.unwrap().message);
    assert_eq!(reply["status"]["code"], 800, "{reply}");
    assert_eq!(reply["status"]["reason"], "database not found[database=nope]", "{reply}");
    assert!(reply.get("identifier").is_none(), "{reply}");

    let m = method(&set, "CheckHealth");
    let reply = t.call_unary(&m, &request(&m, serde_json::json!({})), &CallOptions::default()).await.unwrap();
    assert_eq!(json(&reply.message)["isHealthy"], true);

    let m = method(&set, "UpdateReplicateConfiguration");
    let err =
        t.call_unary(&m, &request(&m, serde_json::json!({})), &CallOptions::default()).await.unwrap_err();
    match &err {
        NetError::Status { code, numeric, message, .. } => {
            assert_eq!((code.as_str(), *numeric), ("UNIMPLEMENTED", 12));
            assert!(message.contains("MilvusService/UpdateReplicateConfiguration"), "{message}");
        }
        other => panic!("unexpected {other}"),
    }
    demo.shutdown().await;
}

#[tokio::test]
async fn dump_messages_streams_the_wal_and_rejects_bad_ids() {
    let demo = MilvusDemo::start(MilvusDemoConfig { wal: small_wal(), ..Default::default() }).await.unwrap();
    let set = SchemaSet::builtin();
    let t = GrpcTransport::connect(&GrpcSettings::new(demo.addr().to_string())).await.unwrap();
    let m = method(&set, "DumpMessages");
    let p = "by-dev-rootcoord-dml_0";
    let expected: Vec<_> =
        WalGenerator::new(set.pool(), small_wal()).filter(|g| g.pchannel == p).take(40).collect();
    // Start after message 9, end at message 39's timetick: messages 10..=39.
    let req = request(
        &m,
        serde_json::json!({"pchannel": p, "start_message_id": {"id": expected[9].message_id, "WAL_name": "RocksMQ"},
        "end_timetick": expected[39].timetick.to_string()}),
    );
    let reply = t.call_server_stream(&m, &req, &CallOptions::default()).await.unwrap();
    let got: Vec<_> = reply.messages.map(|r| r.unwrap()).collect().await;
    assert_eq!(got.len(), 30);
    for (g, e) in got.iter().zip(&expected[10..]) {
        assert_eq!(g.as_ref(), e.response.as_slice());
    }

    let bad = request(
        &m,
        serde_json::json!({"pchannel": p, "start_message_id": {"id": "not base 36!", "WAL_name": "RocksMQ"}}),
    );
    let err = match t.call_server_stream(&m, &bad, &CallOptions::default()).await {
        Err(e) => e,
        Ok(s) => s.messages.collect::<Vec<_>>().await.into_iter().find_map(Result::err).expect("an error"),
    };
    match &err {
        NetError::Status { code, message, .. } => {
            assert_eq!(code, "INVALID_ARGUMENT");
            assert!(message.contains("invalid start_message_id"), "{message}");
        }
        other => panic!("unexpected {other}"),
    }
    demo.shutdown().await;
}
