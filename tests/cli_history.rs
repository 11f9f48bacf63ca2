//! `walscope call --history`, `history list|show|resend` and `call --save-dump`, the binary
//! against in-process demo servers on 127.0.0.1, each run with its own config directory.

use crate::common;

use std::path::Path;
use std::time::Duration;
use walscope::net::CallOptions;
use walscope::net::history::{HistoryEntry, HistoryStore};
use walscope::net::profile::TransportKind;
use walscope::sim::WalGenConfig;
use walscope::sim::collector::CollectorConfig;
use walscope::sim::datasync::DatasyncDemo;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig, OLD_CLUSTER_ID};

use crate::common::{succeeded as ok, walscope_in as run};

fn store(cfg: &Path) -> HistoryStore {
    HistoryStore::at(&cfg.join("history.jsonl"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_are_recorded_shown_and_resent_byte_for_byte() {
    let cfg = tempfile::tempdir().unwrap();
    let cfg = cfg.path();
    let demo = MilvusDemo::start(MilvusDemoConfig::default()).await.unwrap();
    let addr = demo.addr().to_string();
    let data = format!(
        r#"{{"source_cluster_id": "{OLD_CLUSTER_ID}", "target_pchannel": "by-dev-rootcoord-dml_0"}}"#
    );
    let (first, err) = ok(&run(
        cfg,
        &["call", &addr, "MilvusService/GetReplicateInfo", "-d", &data, "--history", "-H", "x-trace:7"],
        &[],
    )
    .await);
    assert!(err.contains("recorded as history entry 1"), "{err}");
    let e1 = store(cfg).get(1).unwrap().unwrap();
    assert_eq!(e1.method, "milvus.proto.milvus.MilvusService.GetReplicateInfo");
    assert_eq!(
        (e1.endpoint.as_str(), e1.transport, e1.profile.as_deref()),
        (addr.as_str(), TransportKind::Grpc, None)
    );
    assert_eq!(e1.metadata, vec![("x-trace".to_string(), "7".to_string())]);
    assert_eq!(e1.deadline_ms, Some(30_000));
    assert_eq!(e1.responses, 1);

    let (list, _) = ok(&run(cfg, &["history", "list"], &[]).await);
    assert!(list.contains("GetReplicateInfo") && list.contains(" ok"), "{list}");
    let (show, _) = ok(&run(cfg, &["history", "show", "1"], &[]).await);
    assert!(show.contains(r#""sourceClusterId": "by-dev-old""#), "{show}");
    let hex = walscope::codec::value::encode_hex(&e1.request);
    assert!(show.contains(&format!("request bytes ({}): {hex}", e1.request.len())), "{show}");

    // Sent again: the same answer, and the new entry holds the same bytes.
    let (again, err) = ok(&run(cfg, &["history", "resend", "1", "--history"], &[]).await);
    assert_eq!(again, first);
    assert!(err.contains("recorded as history entry 2"), "{err}");
    let e2 = store(cfg).get(2).unwrap().unwrap();
    assert_eq!(
        (e2.request.clone(), e2.metadata.clone(), e2.method.clone()),
        (e1.request.clone(), e1.metadata.clone(), e1.method.clone())
    );

    // Exact bytes no encoder would write (an unknown field, a non-canonical varint) go out as
    // they are, over brpc, through a proxy that records them.
    let any = "127.0.0.1:0".parse().unwrap();
    let ds =
        DatasyncDemo::start(any, any, Duration::from_secs(30), CollectorConfig::default()).await.unwrap();
    let odd = vec![0x98, 0x06, 0x81, 0x00];
    let opts = CallOptions { timeout: Some(Duration::from_secs(5)), ..Default::default() };
    let handmade = HistoryEntry::for_call(
        None,
        &ds.synctool.addr().to_string(),
        TransportKind::Brpc,
        "openmldb.datasync.SyncTool.TaskStatus",
        &odd,
        &opts,
    );
    let e3 = store(cfg).append(handmade).unwrap();
    let (via, seen) = common::recording_proxy(ds.synctool.addr()).await;
    let (out, _) =
        ok(&run(cfg, &["history", "resend", &e3.id.to_string(), "--endpoint", &via, "--history"], &[]).await);
    assert!(out.contains("{"), "{out}");
    assert!(
        seen.lock().unwrap().windows(odd.len()).any(|w| w == odd.as_slice()),
        "the bytes crossed the socket unchanged"
    );
    let e4 = store(cfg).get(e3.id + 1).unwrap().unwrap();
    assert_eq!(
        (e4.request.as_slice(), e4.endpoint.as_str(), e4.transport),
        (odd.as_slice(), via.as_str(), TransportKind::Brpc)
    );

    let (found, _) = ok(&run(cfg, &["history", "list", "--search", "taskstatus"], &[]).await);
    assert_eq!(found.lines().count(), 2, "{found}");
    let (last, _) = ok(&run(cfg, &["history", "list", "--limit", "1"], &[]).await);
    assert!(last.trim_start().starts_with(&(e3.id + 1).to_string()), "{last}");
    let o = run(cfg, &["history", "show", "99"], &[]).await;
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("no history entry 99"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_stay_out_of_the_history_and_profiles_are_named() {
    let cfg = tempfile::tempdir().unwrap();
    let cfg = cfg.path();
    let auth = walscope::net::grpc::Auth::UserPassword { user: "root".into(), password: "Milvus".into() };
    let demo =
        MilvusDemo::start(MilvusDemoConfig { auth: Some(auth.clone()), ..Default::default() }).await.unwrap();
    let profiles = format!(
        r#"[{{"name": "secured", "transport": "grpc", "endpoint": "{}", "db_name": "default",
             "auth": {{"kind": "user_password", "user": "root", "password": {{"from": "env", "var": "WALSCOPE_TEST_HIST_PW"}}}}}}]"#,
        demo.addr()
    );
    std::fs::write(cfg.join("profiles.json"), profiles).unwrap();
    let env = [("WALSCOPE_TEST_HIST_PW", "Milvus")];
    let (v, _) = ok(&run(cfg, &["call", "secured", "MilvusService/GetVersion", "--history"], &env).await);
    assert!(v.contains("walscope-demo"), "{v}");
    let text = std::fs::read_to_string(cfg.join("history.jsonl")).unwrap();
    assert!(
        !text.contains(&auth.header_value()) && !text.contains("Milvus\"") && !text.contains("authorization"),
        "{text}"
    );
    let e = store(cfg).get(1).unwrap().unwrap();
    assert_eq!(e.profile.as_deref(), Some("secured"));
    assert_eq!(e.metadata, vec![("dbname".to_string(), "default".to_string())]);
    // Re-sent through the profile, the credentials come from it again...
    ok(&run(cfg, &["history", "resend", "1"], &env).await);
    // ...and to the bare address, without them, the server says who is missing.
    let o = run(cfg, &["history", "resend", "1", "--endpoint", &demo.addr().to_string()], &[]).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("UNAUTHENTICATED"), "{err}");
    // An error in the body is said on stderr; the output stays the server's answer.
    let (out, err) = ok(&run(cfg, &["call", "secured", "MilvusService/Connect", "--db", "nope"], &env).await);
    assert!(
        out.contains("database not found") && err.contains("warning: the call succeeded at the transport"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn save_dump_writes_every_streamed_message() {
    let cfg = tempfile::tempdir().unwrap();
    let cfg = cfg.path();
    let demo = MilvusDemo::start(MilvusDemoConfig {
        wal: WalGenConfig { seed: 2, rows: (1, 1), total: None, ..Default::default() },
        ..Default::default()
    })
    .await
    .unwrap();
    let addr = demo.addr().to_string();
    let data = format!(
        r#"{{"source_cluster_id": "{OLD_CLUSTER_ID}", "target_pchannel": "by-dev-rootcoord-dml_0"}}"#
    );
    let (info, _) = ok(&run(cfg, &["call", &addr, "MilvusService/GetReplicateInfo", "-d", &data], &[]).await);
    let v: serde_json::Value = serde_json::from_str(&info).unwrap();
    let ckpt = &v["salvageCheckpoint"];
    let end = ckpt["timeTick"].as_str().unwrap().parse::<u64>().unwrap() + (400 << 18);
    let window =
        serde_json::json!({"pchannel": "by-dev-rootcoord-dml_0", "start_message_id": ckpt["messageId"],
        "end_timetick": end.to_string()})
        .to_string();
    let (printed, _) =
        ok(&run(cfg, &["call", &addr, "MilvusService/DumpMessages", "-d", &window], &[]).await);
    let n = serde_json::Deserializer::from_str(&printed).into_iter::<serde_json::Value>().count();
    assert!(n > 20, "{n}");

    let file = cfg.join("stream.dump");
    let f = file.to_str().unwrap();
    let (out, err) = ok(&run(
        cfg,
        &["call", &addr, "MilvusService/DumpMessages", "-d", &window, "--save-dump", f, "--history"],
        &[],
    )
    .await);
    assert_eq!(out, printed, "the messages are still printed, as without --save-dump");
    assert!(err.contains(&format!("wrote {n} frames")) && err.contains("complete"), "{err}");
    let (inspect, _) = ok(&run(cfg, &["inspect", f], &[]).await);
    assert!(inspect.contains(&format!("frames:  {n}, damaged ranges: 0")), "{inspect}");
    assert!(inspect.contains("type:    milvus.proto.milvus.DumpMessagesResponse (from"), "{inspect}");
    let e = store(cfg).get(1).unwrap().unwrap();
    assert_eq!(e.responses, n as u64);

    let quiet = cfg.join("quiet.dump");
    let (out, _) = ok(&run(
        cfg,
        &[
            "call",
            &addr,
            "MilvusService/DumpMessages",
            "-d",
            &window,
            "--save-dump",
            quiet.to_str().unwrap(),
            "--quiet",
        ],
        &[],
    )
    .await);
    assert!(out.is_empty(), "{out}");
    assert_eq!(std::fs::read(&quiet).unwrap(), std::fs::read(&file).unwrap());
    // An existing dump is refused before anything is called; a unary method, once called.
    let o = run(cfg, &["call", &addr, "MilvusService/GetVersion", "--save-dump", f], &[]).await;
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("already exists"));
    let unary = cfg.join("unary.dump");
    let o =
        run(cfg, &["call", &addr, "MilvusService/GetVersion", "--save-dump", unary.to_str().unwrap()], &[])
            .await;
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("is unary"));
    assert!(!unary.exists(), "a call that wrote no message creates no file");
}
