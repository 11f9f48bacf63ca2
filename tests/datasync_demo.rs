//! The brpc client against the demo SyncTool and DataCollector over loopback: every datasync
//! method, several calls in flight on one connection, the real rules, HTTP/JSON, and malformed
//! frames ending in errors, never hangs.

use crate::common;

use bytes::Bytes;
use prost_reflect::DynamicMessage;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use walscope::codec;
use walscope::net::brpc::BrpcTransport;
use walscope::net::brpc::codec::{RequestMeta, RpcMeta, encode_packet};
use walscope::net::http_json::HttpJsonTransport;
use walscope::net::{CallOptions, NetError, Transport};
use walscope::schema::SchemaSet;
use walscope::sim::collector::CollectorConfig;
use walscope::sim::datasync::DatasyncDemo;

async fn demo(check: Duration) -> DatasyncDemo {
    let any = "127.0.0.1:0".parse().unwrap();
    let cfg = CollectorConfig { batch_interval: Duration::from_millis(30), full_mode_batches: 4 };
    DatasyncDemo::start(any, any, check, cfg).await.unwrap()
}

fn method(name: &str) -> prost_reflect::MethodDescriptor {
    let set = SchemaSet::shared_builtin();
    let svc = set.pool().get_service_by_name("openmldb.datasync.SyncTool").unwrap();
    svc.methods().find(|m| m.name() == name).unwrap()
}

async fn call(t: &dyn Transport, name: &str, json: &str) -> Result<serde_json::Value, NetError> {
    let m = method(name);
    let req = codec::from_json(&m.input(), json).unwrap();
    let r = t.call_unary(&m, &req, &CallOptions::default()).await?;
    Ok(serde_json::from_str(&codec::to_json(&r.message, false)).unwrap())
}

async fn status(t: &dyn Transport) -> Vec<serde_json::Value> {
    let r = call(t, "TaskStatus", "{}").await.unwrap();
    r["task"].as_array().cloned().unwrap_or_default()
}

async fn wait_for<F: Fn(&[serde_json::Value]) -> bool>(
    t: &dyn Transport,
    what: &str,
    f: F,
) -> Vec<serde_json::Value> {
    let start = Instant::now();
    loop {
        let s = status(t).await;
        if f(&s) {
            return s;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "timed out waiting for {what}: {s:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_progress_status_delete_over_brpc() {
    let d = demo(Duration::from_secs(30)).await;
    let t = BrpcTransport::new(d.synctool.addr().to_string());
    let r = call(
        &t,
        "CreateSyncTask",
        r#"{"db": "demo_db", "name": "orders", "mode": "kFullAndContinuous", "dest": "hdfs:///s/orders"}"#,
    )
    .await
    .unwrap();
    assert_eq!(r["code"], 0, "{r}");
    let tasks = wait_for(&t, "both partitions RUNNING with rows", |s| {
        s.len() == 2
            && s.iter().all(|t| t["status"] == "RUNNING" && t["count"].as_str().unwrap_or("0") != "0")
    })
    .await;
    assert_eq!(tasks[0]["progress"]["desEndpoint"], d.synctool.addr().to_string());
    assert_eq!(tasks[0]["dataCollector"], d.collector.addr().to_string());
    // The sync point has moved from the snapshot into the binlog.
    wait_for(&t, "binlog sync points", |s| s.iter().all(|t| t["progress"]["syncPoint"]["type"] == "kBINLOG"))
        .await;
    let info = call(&t, "TaskStatus", "{}").await.unwrap();
    assert!(info["readableInfo"][0].as_str().unwrap().starts_with("lastUpdateTime="));
    assert!(
        info["readableInfo"][0]
            .as_str()
            .unwrap()
            .contains("progressPath=/tmp/sync_task_progress/2/0.progress")
    );

    let again =
        call(&t, "CreateSyncTask", r#"{"db": "demo_db", "name": "orders", "mode": 2}"#).await.unwrap();
    assert_eq!(again["msg"], "sync task already exists(creating or created)");
    let mem = call(&t, "CreateSyncTask", r#"{"db": "demo_db", "name": "cache", "mode": 0}"#).await.unwrap();
    assert_eq!(mem["msg"], "only SSD and HDD are supported");
    let no_mode = call(&t, "CreateSyncTask", r#"{"db": "demo_db", "name": "users"}"#).await.unwrap();
    assert_eq!(no_mode["msg"], "mode is required");

    let del = call(&t, "DeleteSyncTask", r#"{"db": "demo_db", "name": "orders"}"#).await.unwrap();
    assert_eq!(del["code"], 0);
    assert!(status(&t).await.is_empty());
    // The collector learns on its next SendData (delete_task) and drops its sub-tasks.
    let start = Instant::now();
    while d.collector.task_count() > 0 {
        assert!(start.elapsed() < Duration::from_secs(10), "collector kept its tasks");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_mode_succeeds_and_clear_all_empties() {
    let d = demo(Duration::from_secs(30)).await;
    let t = BrpcTransport::new(d.synctool.addr().to_string());
    call(&t, "CreateSyncTask", r#"{"db": "demo_db", "name": "users", "mode": "kFull"}"#).await.unwrap();
    // Mode 0: every partition finishes, then the whole task disappears from TaskStatus.
    wait_for(&t, "mode-0 task to finish", |s| s.is_empty()).await;
    call(&t, "CreateSyncTask", r#"{"db": "demo_db", "name": "clicks", "mode": 2}"#).await.unwrap();
    assert_eq!(status(&t).await.len(), 4);
    let r = call(&t, "TaskStatus", r#"{"clear_all": true}"#).await.unwrap();
    assert!(r.get("task").is_none(), "clear_all answers an empty list: {r}");
    assert!(status(&t).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_subtask_is_reassigned_with_a_new_token() {
    let d = demo(Duration::from_millis(100)).await;
    let t = BrpcTransport::new(d.synctool.addr().to_string());
    call(&t, "CreateSyncTask", r#"{"db": "demo_db", "name": "users", "mode": 2}"#).await.unwrap();
    let running = wait_for(&t, "RUNNING", |s| s.len() == 1 && s[0]["status"] == "RUNNING").await;
    let token = running[0]["progress"]["token"].clone();
    d.collector.paused.store(true, std::sync::atomic::Ordering::Relaxed);
    wait_for(&t, "a new token after reassignment", |s| s[0]["progress"]["token"] != token).await;
    d.collector.paused.store(false, std::sync::atomic::Ordering::Relaxed);
    wait_for(&t, "RUNNING again with rows", |s| s[0]["status"] == "RUNNING").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_calls_in_flight_on_one_connection() {
    let d = demo(Duration::from_secs(30)).await;
    let t = BrpcTransport::new(d.synctool.addr().to_string());
    let before = d.synctool.connections_accepted();
    let calls = (0..64).map(|i| {
        let t = &t;
        async move {
            let r = call(t, "DeleteSyncTask", &format!(r#"{{"db": "demo_db", "name": "missing_{i}"}}"#))
                .await
                .unwrap();
            (i, r["msg"].as_str().unwrap().to_string())
        }
    });
    for (i, msg) in futures::future::join_all(calls).await {
        assert_eq!(
            msg,
            format!("table demo_db.missing_{i} not found"),
            "answer {i} went to the right caller"
        );
    }
    assert_eq!(d.synctool.connections_accepted() - before, 1, "the 64 calls shared one connection");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_data_rules_and_wire_names() {
    let d = demo(Duration::from_secs(30)).await;
    let t = BrpcTransport::new(d.synctool.addr().to_string());
    call(&t, "CreateSyncTask", r#"{"db": "demo_db", "name": "users", "mode": 2}"#).await.unwrap();
    let m = method("SendData");
    let send = |json: &str, rows: &'static [u8]| {
        let req = codec::from_json(&m.input(), json).unwrap();
        let opts = CallOptions { attachment: Bytes::from_static(rows), ..Default::default() };
        let (t, m) = (&t, &m);
        async move { t.call_unary(m, &req, &opts).await.map(|r| codec::to_json(&r.message, false)) }
    };
    let bad_token = send(
        r#"{"tid": 3, "pid": 0, "token": "nope", "count": "1", "startPoint": {"type": "kSNAPSHOT"}}"#,
        b"row",
    )
    .await
    .unwrap();
    assert!(bad_token.contains("token mismatch"), "{bad_token}");
    let unknown = send(r#"{"tid": 99, "pid": 0, "token": "x"}"#, b"").await.unwrap();
    assert!(unknown.contains("can't find sync task") && unknown.contains("\"deleteTask\":true"), "{unknown}");

    // The released proto's typo is rejected the way brpc-java rejects it.
    let raw = t.call_raw("openmldb.datasync.SyncTool", "DeleteSyncTask", b"", b"", None).await;
    assert!(raw.is_ok(), "the real name works");
    let short = t.call_raw("SyncTool", "TaskStatus", b"", b"", None).await.unwrap_err();
    assert!(matches!(short, NetError::Status { numeric: 2001, .. }), "{short}");
    let typo = typo_call(&d.synctool.addr().to_string()).await;
    assert_eq!(typo.0, 2001);
    assert!(typo.1.contains("method=DelelteSyncTask"), "{}", typo.1);
    // Our client never sends the typo, whatever the loaded .proto says.
    assert_eq!(walscope::datasync::calls::wire_method_name("DelelteSyncTask"), "DeleteSyncTask");
}

/// Sends `DelelteSyncTask` with hand-made bytes (our client would correct the name).
async fn typo_call(addr: &str) -> (i32, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let meta = RpcMeta {
        request: Some(RequestMeta {
            service_name: "openmldb.datasync.SyncTool".into(),
            method_name: "DelelteSyncTask".into(),
            ..Default::default()
        }),
        correlation_id: 7,
        ..Default::default()
    };
    s.write_all(&encode_packet(&meta, b"", b"")).await.unwrap();
    let mut buf = bytes::BytesMut::new();
    loop {
        if let Some(p) = walscope::net::brpc::codec::take_packet(&mut buf).unwrap() {
            assert_eq!(p.meta.correlation_id, 7);
            let r = p.meta.response.unwrap();
            return (r.error_code, r.error_text);
        }
        assert!(s.read_buf(&mut buf).await.unwrap() > 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_json_fallback() {
    let d = demo(Duration::from_secs(30)).await;
    let h = HttpJsonTransport::new(d.synctool.addr().to_string());
    let r = call(&h, "CreateSyncTask", r#"{"db": "demo_db", "name": "users", "mode": 2}"#).await.unwrap();
    assert_eq!(r["code"], 0);
    assert_eq!(status(&h).await.len(), 1);
    // Rows cannot travel over HTTP.
    let m = method("SendData");
    let req = codec::from_json(&m.input(), "{}").unwrap();
    let opts = CallOptions { attachment: Bytes::from_static(b"row"), ..Default::default() };
    assert!(matches!(h.call_unary(&m, &req, &opts).await, Err(NetError::Unsupported(_))));
    // Content-Type is required, as brpc-java requires it.
    let mut s = tokio::net::TcpStream::connect(d.synctool.addr()).await.unwrap();
    s.write_all(b"POST /openmldb.datasync.SyncTool/TaskStatus HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}")
        .await
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    assert!(
        out.starts_with("HTTP/1.1 400") && out.contains("Content-Type must be application/json"),
        "{out}"
    );
}

/// A peer that answers every connection with `reply` bytes.
async fn bad_peer(reply: Vec<u8>) -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let reply = reply.clone();
            tokio::spawn(async move {
                let mut b = [0u8; 1024];
                let _ = s.read(&mut b).await;
                let _ = s.write_all(&reply).await;
                tokio::time::sleep(Duration::from_secs(30)).await;
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_frames_end_in_errors_not_hangs() {
    let mut huge = b"PRPC".to_vec();
    huge.extend_from_slice(&(65u32 << 20).to_be_bytes());
    huge.extend_from_slice(&0u32.to_be_bytes());
    let mut meta_over = b"PRPC".to_vec();
    meta_over.extend_from_slice(&4u32.to_be_bytes());
    meta_over.extend_from_slice(&9u32.to_be_bytes());
    for (reply, expect) in [
        (b"HTTP/1.1 400 Bad\r\n\r\n".to_vec(), "not baidu_std"),
        (huge, "exceeds the 67108864-byte limit"),
        (meta_over, "meta size 9 exceeds body size 4"),
    ] {
        let addr = bad_peer(reply).await;
        let t = BrpcTransport::new(addr);
        let started = Instant::now();
        let e = t
            .call_raw("openmldb.datasync.SyncTool", "TaskStatus", b"", b"", Some(Duration::from_secs(10)))
            .await
            .unwrap_err();
        assert!(e.to_string().contains(expect), "{e}");
        assert!(started.elapsed() < Duration::from_secs(5), "answered promptly");
    }
    // A dead port is a clear connect error.
    let dead = BrpcTransport::new("127.0.0.1:1");
    let e = dead.call_raw("s", "m", b"", b"", None).await.unwrap_err();
    assert!(matches!(e, NetError::Connect { .. }), "{e}");
    // The demo server drops a connection that sends garbage instead of hanging on it.
    let d = demo(Duration::from_secs(30)).await;
    let mut s = tokio::net::TcpStream::connect(d.synctool.addr()).await.unwrap();
    s.write_all(b"XRPC\0\0\0\0\0\0\0\0").await.unwrap();
    let mut b = [0u8; 16];
    let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut b)).await.unwrap().unwrap();
    assert_eq!(n, 0, "connection closed");
    let _: Option<DynamicMessage> = None;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_poller_reports_rows_and_rates() {
    use std::sync::Arc;
    use walscope::jobs::task_poll::TaskPoller;
    let d = demo(Duration::from_secs(30)).await;
    let t = BrpcTransport::new(d.synctool.addr().to_string());
    call(&t, "CreateSyncTask", r#"{"db": "demo_db", "name": "orders", "mode": 2}"#).await.unwrap();
    let transport: Arc<dyn Transport> = Arc::new(BrpcTransport::new(d.synctool.addr().to_string()));
    let poller =
        TaskPoller::spawn(&tokio::runtime::Handle::current(), transport, Duration::from_millis(50), 10);
    let mut rx = poller.subscribe();
    let start = Instant::now();
    loop {
        rx.changed().await.unwrap();
        let b = rx.borrow().clone();
        assert!(b.error.is_none(), "{:?}", b.error);
        if b.rows.len() == 2 && b.rates.iter().all(|r| r.is_some_and(|x| x > 0.0)) {
            assert_eq!(b.history.len(), 2);
            assert!(b.history[0].len() >= 2);
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no rates: {b:?}");
    }
    poller.cancel();
    // A dead SyncTool is reported on the board, not a panic or a hang.
    let dead: Arc<dyn Transport> = Arc::new(BrpcTransport::new("127.0.0.1:1"));
    let p = TaskPoller::spawn(&tokio::runtime::Handle::current(), dead, Duration::from_millis(50), 10);
    let mut rx = p.subscribe();
    rx.changed().await.unwrap();
    assert!(rx.borrow().error.as_deref().is_some_and(|e| e.contains("cannot connect")));
}

/// The one SyncTool client, over both transports: create, see the rows, refusals typed with
/// code and words, delete, clear_all; a transport failure keeps its kind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn synctool_client_over_brpc_and_http() {
    use std::sync::Arc;
    use walscope::datasync::SyncMode;
    use walscope::net::{SyncToolClient, SyncToolError};
    let d = demo(Duration::from_secs(30)).await;
    let ep = d.synctool.addr().to_string();
    let opts = CallOptions { timeout: Some(Duration::from_secs(5)), ..Default::default() };
    let brpc = SyncToolClient::new(Arc::new(BrpcTransport::new(ep.clone())), opts.clone());
    let http = SyncToolClient::new(Arc::new(HttpJsonTransport::new(ep.clone())), opts.clone());
    brpc.create_sync_task("demo_db", "orders", SyncMode::FullAndContinuous, None, "/tmp/o").await.unwrap();
    http.create_sync_task("demo_db", "users", SyncMode::IncrementalByTimestamp, Some(17), "/tmp/u")
        .await
        .unwrap();
    match brpc.create_sync_task("demo_db", "orders", SyncMode::Full, None, "/tmp/o").await {
        Err(SyncToolError::Refused { method: "CreateSyncTask", code: -1, msg }) => {
            assert!(msg.contains("already exists"), "{msg}")
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    let e = http.create_sync_task("demo_db", "cache", SyncMode::Full, None, "/tmp/c").await.unwrap_err();
    assert!(e.to_string().starts_with("CreateSyncTask refused by SyncTool (code -1): "), "{e}");
    let (rows, reply) = http.task_status().await.unwrap();
    assert_eq!(rows.len(), 3, "orders has 2 partitions, users 1: {rows:?}");
    assert_eq!(reply.get_field_by_name("task").unwrap().as_list().unwrap().len(), 3);
    assert!(rows.iter().any(|r| r.mode == "kIncrementalByTimestamp"));
    brpc.delete_sync_task("demo_db", "orders").await.unwrap();
    assert_eq!(brpc.task_status().await.unwrap().0.len(), 1);
    let e = brpc.delete_sync_task("demo_db", "orders").await.unwrap_err();
    assert!(e.to_string().contains("no sync task for demo_db.orders"), "{e}");
    brpc.clear_all().await.unwrap();
    assert!(http.task_status().await.unwrap().0.is_empty());

    let (_held, dead) = common::refused_address();
    let dead = dead.to_string();
    let gone = SyncToolClient::new(Arc::new(BrpcTransport::new(dead)), opts);
    let e = gone.task_status().await.unwrap_err();
    assert_eq!(e.kind(), Some(walscope::net::FailureKind::Refused), "{e}");
    assert!(e.to_string().starts_with("TaskStatus on 127.0.0.1:"), "{e}");
}
