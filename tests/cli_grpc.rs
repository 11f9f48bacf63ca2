//! `walscope call` and `walscope salvage` end to end: the binary against an in-process demo
//! Milvus on 127.0.0.1.

use std::process::{Command, Output};
use walscope::sim::WalGenConfig;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig, OLD_CLUSTER_ID};

async fn run(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_walscope")).args(args).output().unwrap()
    })
    .await
    .unwrap()
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_prints_json_for_unary_and_streaming_methods() {
    let demo = MilvusDemo::start(MilvusDemoConfig {
        wal: WalGenConfig { seed: 2, rows: (1, 1), total: None, ..Default::default() },
        ..Default::default()
    })
    .await
    .unwrap();
    let addr = demo.addr().to_string();
    let out =
        run(strings(&["call", &addr, "milvus.proto.milvus.MilvusService/GetVersion", "--plaintext"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], "v2.6.20-walscope-demo");

    let data = format!(
        r#"{{"source_cluster_id": "{OLD_CLUSTER_ID}", "target_pchannel": "by-dev-rootcoord-dml_0"}}"#
    );
    let out = run(strings(&["call", &addr, "MilvusService/GetReplicateInfo", "-d", &data])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ckpt = &v["salvageCheckpoint"];
    assert_eq!(ckpt["clusterId"], OLD_CLUSTER_ID);

    // A bounded stream: from the checkpoint up to a timetick a little later.
    let end = ckpt["timeTick"].as_str().unwrap().parse::<u64>().unwrap() + (40 << 18);
    let data =
        serde_json::json!({"pchannel": "by-dev-rootcoord-dml_0", "start_message_id": ckpt["messageId"],
        "end_timetick": end.to_string()})
        .to_string();
    let out =
        run(strings(&["call", &addr, "milvus.proto.milvus.MilvusService/DumpMessages", "-d", &data])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let docs: Vec<serde_json::Value> =
        serde_json::Deserializer::from_slice(&out.stdout).into_iter().map(|d| d.unwrap()).collect();
    assert!(!docs.is_empty());
    assert!(docs.iter().all(|d| d["message"]["properties"]["_tt"].is_string()));

    let out = run(strings(&[
        "call",
        &addr,
        "milvus.proto.milvus.MilvusService/DumpMessages",
        "-d",
        r#"{"pchannel": "by-dev-rootcoord-dml_0", "start_message_id": {"id": "??"}}"#,
    ]))
    .await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("INVALID_ARGUMENT") && err.contains("invalid start_message_id"), "{err}");
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn salvage_writes_a_complete_dump_with_manifest() {
    let demo = MilvusDemo::start(MilvusDemoConfig {
        wal: WalGenConfig { seed: 4, rows: (1, 1), total: None, ..Default::default() },
        ..Default::default()
    })
    .await
    .unwrap();
    let addr = demo.addr().to_string();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tail.dump");
    // The demo WAL starts at a fixed time; end 2 s of synthetic time later.
    let end = (walscope::sim::walgen::START_MS + 2_000) << 18;
    let out = run(strings(&[
        "salvage",
        "--new-primary",
        &addr,
        "--old-primary",
        &addr,
        "--source-cluster-id",
        OLD_CLUSTER_ID,
        "--pchannel",
        "by-dev-rootcoord-dml_2",
        "--out",
        file.to_str().unwrap(),
        "--end-timetick",
        &end.to_string(),
    ]))
    .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("complete"), "{err}");
    let manifest = walscope::dump::Manifest::load(&walscope::dump::manifest_path(&file)).unwrap();
    assert!(manifest.complete && manifest.frames > 10, "{manifest:?}");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), manifest.bytes);

    let out = run(strings(&[
        "salvage",
        "--new-primary",
        &addr,
        "--old-primary",
        &addr,
        "--source-cluster-id",
        "nobody",
        "--pchannel",
        "by-dev-rootcoord-dml_2",
        "--out",
        dir.path().join("x").to_str().unwrap(),
    ]))
    .await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no salvage checkpoint"));
    demo.shutdown().await;
}

/// GetReplicateInfo asked with a pchannel that is not the cluster's (the old primary's name):
/// the server never answers (upstream retries until the deadline), and `walscope call` and
/// `walscope salvage` say what went wrong and what to ask instead, where the operator meets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pchannel_the_new_primary_does_not_have_is_explained() {
    let demo = MilvusDemo::start(MilvusDemoConfig {
        wal: WalGenConfig { seed: 2, rows: (1, 1), total: None, ..Default::default() },
        ..Default::default()
    })
    .await
    .unwrap();
    let addr = demo.addr().to_string();
    let wrong = "by-dev-old-rootcoord-dml_0";
    let data = format!(r#"{{"source_cluster_id": "{OLD_CLUSTER_ID}", "target_pchannel": "{wrong}"}}"#);
    let out =
        run(strings(&["call", &addr, "MilvusService/GetReplicateInfo", "-d", &data, "--timeout", "1"])).await;
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{said}");
    for needle in ["NEW primary", "ITS pchannels", "pymilvus's docstring says the opposite; it is wrong"] {
        assert!(said.contains(needle), "{needle}: {said}");
    }

    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("s.dump");
    let out = run(strings(&[
        "salvage",
        "--new-primary",
        &addr,
        "--old-primary",
        &addr,
        "--source-cluster-id",
        OLD_CLUSTER_ID,
        "--pchannel",
        wrong,
        "--out",
        dump.to_str().unwrap(),
        "--timeout",
        "1",
        "--retries",
        "0",
    ]))
    .await;
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{said}");
    assert!(said.contains(&format!("{wrong} is not one of the new primary's pchannels")), "{said}");
    assert!(said.contains("by-dev-rootcoord-dml_0") && said.contains("ITS pchannels"), "{said}");
    demo.shutdown().await;
}
