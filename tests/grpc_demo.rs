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

/// The client's first SETTINGS frame, read by a bare listener on loopback, offers 1 MiB DATA
/// frames (HTTP/2's default of 16 KiB made the demo frame a 64 KiB message five times).
#[tokio::test]
async fn the_client_offers_one_mebibyte_frames() {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let client = tokio::spawn(async move {
        let mut settings = GrpcSettings::new(addr);
        settings.connect_timeout = std::time::Duration::from_secs(5);
        let _ = GrpcTransport::connect(&settings).await;
    });
    let read = async {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut preface = [0u8; 24];
        sock.read_exact(&mut preface).await.unwrap();
        assert_eq!(&preface, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        // A frame header: 24-bit length, type (4 = SETTINGS), flags, stream id.
        let mut header = [0u8; 9];
        sock.read_exact(&mut header).await.unwrap();
        assert_eq!(header[3], 4, "the first frame after the preface is SETTINGS: {header:?}");
        let len = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
        let mut payload = vec![0u8; len];
        sock.read_exact(&mut payload).await.unwrap();
        // Entries of a 16-bit id and a 32-bit value; 5 is SETTINGS_MAX_FRAME_SIZE.
        payload
            .chunks_exact(6)
            .find(|e| u16::from_be_bytes([e[0], e[1]]) == 5)
            .map(|e| u32::from_be_bytes([e[2], e[3], e[4], e[5]]))
    };
    let max_frame = tokio::time::timeout(std::time::Duration::from_secs(10), read)
        .await
        .expect("the client's SETTINGS within 10 s");
    client.abort();
    assert_eq!(max_frame, Some(walscope::net::grpc::CLIENT_MAX_FRAME_BYTES));
    assert_eq!(walscope::net::grpc::CLIENT_MAX_FRAME_BYTES, 1 << 20);
}

/// GetReplicateInfo with a `target_pchannel` the cluster does not have (here the name an old
/// primary called `by-dev-old` would give its pchannel): upstream retries it until the caller's
/// deadline and never answers, so the demo does too, and walscope recognises that failure as
/// the wrong-pchannel refusal. A server that says the refusal in words ("salvage checkpoint can
/// only be read for RW channel") is recognised by them.
#[tokio::test]
async fn get_replicate_info_never_answers_for_a_pchannel_the_cluster_does_not_have() {
    use std::time::{Duration, Instant};
    use walscope::wal::replicate_info::PchannelRefusal;
    let demo = MilvusDemo::start(MilvusDemoConfig { wal: small_wal(), ..Default::default() }).await.unwrap();
    let set = SchemaSet::builtin();
    let t = GrpcTransport::connect(&GrpcSettings::new(demo.addr().to_string())).await.unwrap();
    let m = method(&set, "GetReplicateInfo");
    let opts = CallOptions { timeout: Some(Duration::from_millis(800)), ..Default::default() };
    for wrong in ["by-dev-old-rootcoord-dml_0", ""] {
        let req =
            request(&m, serde_json::json!({"source_cluster_id": OLD_CLUSTER_ID, "target_pchannel": wrong}));
        let started = Instant::now();
        let err = t.call_unary(&m, &req, &opts).await.expect_err("no answer for another cluster's pchannel");
        assert!(started.elapsed() >= Duration::from_millis(700), "it waited for the deadline: {err}");
        assert_eq!(err.pchannel_refusal(), Some(PchannelRefusal::NoAnswer), "{err}");
    }
    // Its own pchannel still answers at once.
    let own = request(
        &m,
        serde_json::json!({"source_cluster_id": OLD_CLUSTER_ID, "target_pchannel": "by-dev-rootcoord-dml_1"}),
    );
    assert!(t.call_unary(&m, &own, &opts).await.is_ok());

    let said = "code: STREAMING_CODE_INNER, cause: salvage checkpoint can only be read for RW channel";
    demo.set_faults(walscope::sim::milvus::Faults {
        fail: Some(("GetReplicateInfo".into(), tonic::Code::Unknown, said.into())),
        ..Default::default()
    });
    let err = t.call_unary(&m, &own, &opts).await.unwrap_err();
    assert_eq!(err.pchannel_refusal(), Some(PchannelRefusal::Said), "{err}");
    let text = err.to_string();
    assert!(text.contains(said) && text.contains("ITS pchannels"), "{text}");
    demo.shutdown().await;
}

/// DumpMessages refused for its privilege as upstream's stream interceptor words it
/// (privilege_interceptor.go: code PermissionDenied, "<privilege>: permission deny to <user> in
/// the `<db>` database"), with the Global privilege upstream requires of DumpMessages; a caller
/// without credentials is refused at authentication; the privileged user gets through.
#[tokio::test]
async fn dump_messages_permission_denied_is_worded_as_upstream() {
    use walscope::net::grpc::Auth;
    let admin = Auth::UserPassword { user: "root".into(), password: "Milvus".into() };
    let faults = walscope::sim::milvus::Faults { dump_privilege: Some(admin.clone()), ..Default::default() };
    let demo =
        MilvusDemo::start(MilvusDemoConfig { wal: small_wal(), faults, ..Default::default() }).await.unwrap();
    let set = SchemaSet::builtin();
    let m = method(&set, "DumpMessages");
    let p = "by-dev-rootcoord-dml_0";
    let first = WalGenerator::new(set.pool(), small_wal()).find(|g| g.pchannel == p).unwrap();
    let req = request(
        &m,
        serde_json::json!({"pchannel": p, "start_message_id": {"id": first.message_id, "WAL_name": "RocksMQ"},
        "end_timetick": first.timetick.to_string(), "include_start_message": true}),
    );
    let addr = demo.addr().to_string();
    let failure = |auth, db| dump_failure(&addr, auth, db, &m, &req);
    let alice = Auth::UserPassword { user: "alice".into(), password: "pw".into() };
    assert_eq!(
        failure(Some(alice.clone()), None).await,
        Some((
            "PERMISSION_DENIED".into(),
            "PrivilegeUpdateReplicateConfiguration: permission deny to alice in the `default` database"
                .into()
        ))
    );
    let (code, message) = failure(Some(alice), Some("db2")).await.unwrap();
    assert_eq!(code, "PERMISSION_DENIED");
    assert!(message.ends_with("permission deny to alice in the `db2` database"), "{message}");
    assert_eq!(failure(None, None).await.map(|(c, _)| c), Some("UNAUTHENTICATED".into()));
    assert_eq!(failure(Some(admin), None).await, None, "the privileged user dumps");
    demo.shutdown().await;
}

/// The code and message a DumpMessages call fails with (None when it streams to its end).
async fn dump_failure(
    addr: &str,
    auth: Option<walscope::net::grpc::Auth>,
    db: Option<&str>,
    m: &MethodDescriptor,
    req: &DynamicMessage,
) -> Option<(String, String)> {
    let mut s = GrpcSettings::new(addr.to_string());
    s.auth = auth;
    let t = GrpcTransport::connect(&s).await.unwrap();
    let opts = CallOptions {
        metadata: db.map(|d| ("dbname".to_string(), d.to_string())).into_iter().collect(),
        ..Default::default()
    };
    let err = match t.call_server_stream(m, req, &opts).await {
        Err(e) => Some(e),
        Ok(s) => s.messages.collect::<Vec<_>>().await.into_iter().find_map(Result::err),
    };
    match err {
        Some(NetError::Status { code, message, .. }) => Some((code, message)),
        Some(other) => panic!("unexpected {other}"),
        None => None,
    }
}

/// Every refused DumpMessages ends the stream as a gRPC error, before any frame: the reply's
/// `status` oneof member is never sent (upstream `internal/proxy/impl.go` returns the error).
#[tokio::test]
async fn dump_messages_refusals_are_grpc_errors_never_status_frames() {
    let demo = MilvusDemo::start(MilvusDemoConfig { wal: small_wal(), ..Default::default() }).await.unwrap();
    let set = SchemaSet::builtin();
    let m = method(&set, "DumpMessages");
    let p = "by-dev-rootcoord-dml_0";
    let first = WalGenerator::new(set.pool(), small_wal()).find(|g| g.pchannel == p).unwrap();
    let id = serde_json::json!({"id": first.message_id, "WAL_name": "RocksMQ"});
    let refused = [
        (serde_json::json!({"start_message_id": id}), "INVALID_ARGUMENT", "pchannel"),
        (serde_json::json!({"pchannel": "nope", "start_message_id": id}), "NOT_FOUND", "nope"),
        (serde_json::json!({"pchannel": p}), "INVALID_ARGUMENT", "start_message_id"),
        (
            serde_json::json!({"pchannel": p, "start_message_id": id, "start_timetick": "20", "end_timetick": "10"}),
            "INVALID_ARGUMENT",
            "end_timetick",
        ),
        (
            serde_json::json!({"pchannel": p, "start_message_id": {"id": "!!", "WAL_name": "RocksMQ"}}),
            "INVALID_ARGUMENT",
            "start_message_id",
        ),
    ];
    for (req, want, names) in refused {
        let req = request(&m, req);
        match dump_outcome(&demo.addr().to_string(), &m, &req).await {
            (0, Some(NetError::Status { code, message, .. })) => {
                assert_eq!(code, want, "{message}");
                assert!(message.contains(names), "{message}");
            }
            (frames, e) => panic!("{frames} frame(s), then {e:?}"),
        }
    }
    // Upstream's order: the window is judged before the id (both wrong: the window is named).
    let both = request(
        &m,
        serde_json::json!({"pchannel": p, "start_message_id": {"id": "!!", "WAL_name": "RocksMQ"},
            "start_timetick": "20", "end_timetick": "10"}),
    );
    match dump_outcome(&demo.addr().to_string(), &m, &both).await {
        (0, Some(NetError::Status { message, .. })) => assert!(message.contains("end_timetick"), "{message}"),
        other => panic!("{other:?}"),
    }
    // A stream that ends well: its frames, none of them a status.
    let ok = request(
        &m,
        serde_json::json!({"pchannel": p, "start_message_id": id, "include_start_message": true,
            "end_timetick": first.timetick.to_string()}),
    );
    let (frames, end) = dump_outcome(&demo.addr().to_string(), &m, &ok).await;
    assert!(frames >= 1 && end.is_none(), "{frames} frame(s), then {end:?}");
    demo.shutdown().await;
}

/// How many frames a DumpMessages call sent (none may carry a `status`), and how it ended.
async fn dump_outcome(addr: &str, m: &MethodDescriptor, req: &DynamicMessage) -> (usize, Option<NetError>) {
    let t = GrpcTransport::connect(&GrpcSettings::new(addr.to_string())).await.unwrap();
    let reply = match t.call_server_stream(m, req, &CallOptions::default()).await {
        Err(e) => return (0, Some(e)),
        Ok(r) => r,
    };
    let items: Vec<_> = reply.messages.take(1000).collect().await;
    let mut frames = 0;
    for item in items {
        match item {
            Ok(bytes) => {
                let frame = DynamicMessage::decode(m.output(), bytes.as_ref()).unwrap();
                assert!(!frame.has_field_by_name("status"), "a status frame was sent");
                frames += 1;
            }
            Err(e) => return (frames, Some(e)),
        }
    }
    (frames, None)
}
