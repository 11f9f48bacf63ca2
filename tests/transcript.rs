//! Call transcripts from the CLI (`call --transcript`, `history show --json`), the binary
//! against in-process demo servers on 127.0.0.1 behind a proxy that keeps every byte each way:
//! every part of the document is there, secrets are not, the base64 bytes are the bytes on the
//! wire, an existing file is not overwritten silently, and a damaged transcript is refused in
//! words. The window's half of the round trip is in `gui_composer_transcript`.

use crate::common;

use base64::Engine;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use walscope::net::transcript::{Transcript, TranscriptError};
use walscope::sim::WalGenConfig;
use walscope::sim::collector::CollectorConfig;
use walscope::sim::datasync::DatasyncDemo;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig, OLD_CLUSTER_ID};

use crate::common::{succeeded as ok, walscope_in as run};

fn b64(v: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(v.as_str().expect("base64 text")).expect("base64")
}

fn holds(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// `YYYY-MM-DD hh:mm:ss.mmm`, the one UTC pattern.
fn is_utc(v: &Value) -> bool {
    let t = v.as_str().unwrap_or("");
    t.len() == 23 && walscope::time::parse_utc(&format!("{}T{}Z", &t[..10], &t[11..])).is_some()
}

fn replicate_info_request() -> String {
    format!(r#"{{"source_cluster_id": "{OLD_CLUSTER_ID}", "target_pchannel": "by-dev-rootcoord-dml_0"}}"#)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unary_transcript_has_every_part_the_wire_bytes_and_no_secret() {
    let cfg = tempfile::tempdir().unwrap();
    let cfg = cfg.path();
    let auth = walscope::net::grpc::Auth::UserPassword { user: "root".into(), password: "Milvus".into() };
    let demo =
        MilvusDemo::start(MilvusDemoConfig { auth: Some(auth.clone()), ..Default::default() }).await.unwrap();
    let (via, sent, back) = common::recording_proxy_both(demo.addr()).await;
    let profiles = format!(
        r#"[{{"name": "secured", "transport": "grpc", "endpoint": "{via}", "db_name": "default",
             "auth": {{"kind": "user_password", "user": "root", "password": {{"from": "env", "var": "WALSCOPE_TEST_TR_PW"}}}}}}]"#
    );
    std::fs::write(cfg.join("profiles.json"), profiles).unwrap();
    let file = cfg.join("call.transcript.json");
    let data = replicate_info_request();
    let (printed, err) = ok(&run(
        cfg,
        &[
            "call",
            "secured",
            "MilvusService/GetReplicateInfo",
            "-d",
            &data,
            "-H",
            "x-api-token: hunter2",
            "-H",
            "x-trace: 7",
            "--transcript",
            file.to_str().unwrap(),
        ],
        &[("WALSCOPE_TEST_TR_PW", "Milvus")],
    )
    .await);
    assert!(err.contains("wrote the call's transcript to"), "{err}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("hunter2") && !text.contains(&auth.header_value()), "a secret in:\n{text}");
    let t = read(&file);
    assert_eq!(t["format"], "walscope-call-transcript");
    assert_eq!(t["version"], 1);
    assert_eq!(t["source"], "call");
    assert_eq!(t["target"], serde_json::json!({"profile": "secured", "endpoint": via, "transport": "grpc"}));
    assert_eq!(t["method"]["full_name"], "milvus.proto.milvus.MilvusService.GetReplicateInfo");
    assert_eq!(t["method"]["kind"], "unary");
    assert_eq!(t["method"]["input_type"], "milvus.proto.milvus.GetReplicateInfoRequest");
    assert_eq!(t["request"]["json"]["sourceClusterId"], OLD_CLUSTER_ID);
    let request = b64(&t["request"]["base64"]);
    assert_eq!(t["request"]["size"], request.len());
    assert!(!request.is_empty() && holds(&sent.lock().unwrap(), &request), "the request bytes went out");
    let meta: Vec<(String, String)> = t["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["key"].as_str().unwrap().into(), p["value"].as_str().unwrap().into()))
        .collect();
    for (k, v) in [("authorization", "(redacted)"), ("x-api-token", "(redacted)"), ("x-trace", "7")] {
        assert!(meta.contains(&(k.to_string(), v.to_string())), "{k} in {meta:?}");
    }
    assert!(t["deadline_ms"].as_u64().is_some());
    assert!(t["headers"].as_array().is_some_and(|h| !h.is_empty()), "{}", t["headers"]);
    let messages = t["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1);
    let reply = b64(&messages[0]["base64"]);
    assert_eq!(messages[0]["size"], reply.len());
    assert!(holds(&back.lock().unwrap(), &reply), "the reply bytes are the bytes the server sent");
    assert_eq!(messages[0]["json"], serde_json::from_str::<Value>(&printed).unwrap());
    assert!(is_utc(&messages[0]["arrived_utc"]), "{}", messages[0]["arrived_utc"]);
    assert!(messages[0]["offset_ms"].as_u64().unwrap() <= t["timing"]["total_ms"].as_u64().unwrap());
    assert_eq!(t["status"]["code"], 0);
    assert_eq!(t["status"]["name"], "OK");
    assert_eq!(t["status"]["body_error"], Value::Null);
    assert!(is_utc(&t["timing"]["start_utc"]), "{}", t["timing"]);
    assert!(t["timing"]["first_message_ms"].as_u64().is_some());
    // The trailers apart from the headers: the status the server ended the call with.
    let trailer_keys: Vec<&str> =
        t["trailers"].as_array().unwrap().iter().map(|p| p["key"].as_str().unwrap()).collect();
    assert!(trailer_keys.contains(&"grpc-status"), "{}", t["trailers"]);
    assert!(!t["headers"].to_string().contains("grpc-status"), "{}", t["headers"]);
    assert!(!t["not_recorded"].to_string().contains("trailers"), "{}", t["not_recorded"]);
    // It reads back as the library's type.
    let doc = Transcript::from_json(text.as_bytes()).unwrap();
    assert_eq!((doc.request.base64.clone(), doc.unary_reply().map(<[u8]>::to_vec)), (request, Some(reply)));

    // A failed call has its transcript too: the status with its code and the server's words.
    let failed = cfg.join("failed.json");
    let o =
        run(cfg, &["call", &via, "MilvusService/GetVersion", "--transcript", failed.to_str().unwrap()], &[])
            .await;
    assert!(!o.status.success());
    let t = read(&failed);
    assert_eq!(
        (t["status"]["code"].as_i64(), t["status"]["name"].as_str()),
        (Some(16), Some("UNAUTHENTICATED"))
    );
    assert!(t["messages"].as_array().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_transcript_keeps_every_message_with_its_bytes_and_time() {
    let cfg = tempfile::tempdir().unwrap();
    let cfg = cfg.path();
    let demo = MilvusDemo::start(MilvusDemoConfig {
        wal: WalGenConfig { seed: 2, rows: (1, 1), total: None, ..Default::default() },
        ..Default::default()
    })
    .await
    .unwrap();
    let (via, sent, back) = common::recording_proxy_both(demo.addr()).await;
    let data = replicate_info_request();
    let (info, _) = ok(&run(cfg, &["call", &via, "MilvusService/GetReplicateInfo", "-d", &data], &[]).await);
    let v: Value = serde_json::from_str(&info).unwrap();
    let ckpt = &v["salvageCheckpoint"];
    let end = ckpt["timeTick"].as_str().unwrap().parse::<u64>().unwrap() + (200 << 18);
    let window =
        serde_json::json!({"pchannel": "by-dev-rootcoord-dml_0", "start_message_id": ckpt["messageId"],
        "end_timetick": end.to_string()})
        .to_string();
    let file = cfg.join("stream.json");
    let (printed, _) = ok(&run(
        cfg,
        &["call", &via, "MilvusService/DumpMessages", "-d", &window, "--transcript", file.to_str().unwrap()],
        &[],
    )
    .await);
    let printed: Vec<Value> =
        serde_json::Deserializer::from_str(&printed).into_iter::<Value>().map(Result::unwrap).collect();
    assert!(printed.len() > 5, "{}", printed.len());
    let t = read(&file);
    assert_eq!(t["method"]["kind"], "server_stream");
    assert!(holds(&sent.lock().unwrap(), &b64(&t["request"]["base64"])));
    let messages = t["messages"].as_array().unwrap();
    assert_eq!(messages.len(), printed.len());
    let back = back.lock().unwrap().clone();
    let mut last = 0;
    for (i, (m, p)) in messages.iter().zip(&printed).enumerate() {
        assert_eq!((&m["index"], &m["json"]), (&Value::from(i), p), "message {i}");
        assert!(holds(&back, &b64(&m["base64"])), "message {i}'s bytes are the bytes the server sent");
        assert!(is_utc(&m["arrived_utc"]));
        let at = m["offset_ms"].as_u64().unwrap();
        assert!(at >= last, "arrival offsets never go back");
        last = at;
    }
    assert_eq!(t["status"]["code"], 0);
    assert_eq!(t["status"]["stream_end"], "completed");
    assert!(t["headers"].is_array(), "{t}");
    assert!(t["trailers"].to_string().contains("grpc-status"), "the stream's trailers: {}", t["trailers"]);
    assert!(
        t["timing"]["headers_ms"].as_u64().is_some() && t["timing"]["first_message_ms"].as_u64().is_some()
    );
    // --save-dump writes its own file: the two are one or the other.
    let o = run(
        cfg,
        &[
            "call",
            &via,
            "MilvusService/DumpMessages",
            "-d",
            &window,
            "--transcript",
            "x.json",
            "--save-dump",
            "x.dump",
        ],
        &[],
    )
    .await;
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("cannot be used with"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_show_json_prints_the_same_document() {
    let cfg = tempfile::tempdir().unwrap();
    let cfg = cfg.path();
    let demo = MilvusDemo::start(MilvusDemoConfig::default()).await.unwrap();
    let addr = demo.addr().to_string();
    let file = cfg.join("t.json");
    let data = replicate_info_request();
    ok(&run(
        cfg,
        &[
            "call",
            &addr,
            "MilvusService/GetReplicateInfo",
            "-d",
            &data,
            "-H",
            "x-trace: 7",
            "--history",
            "--transcript",
            file.to_str().unwrap(),
        ],
        &[],
    )
    .await);
    let saved = read(&file);
    let (out, _) = ok(&run(cfg, &["history", "show", "1", "--json"], &[]).await);
    let shown: Value = serde_json::from_str(&out).unwrap();
    let keys = |v: &Value| {
        let mut k = v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        k.sort();
        k
    };
    let mut expected = keys(&saved);
    expected.push("history_id".into());
    expected.sort();
    assert_eq!(keys(&shown), expected);
    assert_eq!((&shown["source"], &shown["history_id"]), (&Value::from("history"), &Value::from(1)));
    for part in ["target", "method", "request", "metadata", "headers", "deadline_ms"] {
        assert_eq!(shown[part], saved[part], "{part}");
    }
    assert_eq!(shown["messages"][0]["base64"], saved["messages"][0]["base64"]);
    assert_eq!(shown["messages"][0]["json"], saved["messages"][0]["json"]);
    assert_eq!((&shown["status"]["code"], &shown["status"]["name"]), (&Value::from(0), &Value::from("OK")));
    assert!(Transcript::from_json(out.as_bytes()).is_ok());

    // An entry written before headers and replies were recorded: what is missing is said.
    let old = r#"{"id":2,"time_ms":1764461521000,"profile":null,"endpoint":"127.0.0.1:1","transport":"grpc","method":"milvus.proto.milvus.MilvusService.GetVersion","request_base64":"","metadata":[],"deadline_ms":null,"outcome":{"result":"ok"},"elapsed_ms":3,"responses":1,"response_bytes":20}"#;
    let mut history = std::fs::read_to_string(cfg.join("history.jsonl")).unwrap();
    history.push_str(old);
    history.push('\n');
    std::fs::write(cfg.join("history.jsonl"), history).unwrap();
    let (out, _) = ok(&run(cfg, &["history", "show", "2", "--json"], &[]).await);
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert!(shown["messages"].as_array().unwrap().is_empty() && shown["headers"].is_null());
    let gaps = shown["not_recorded"].to_string();
    assert!(gaps.contains("response messages") && gaps.contains("headers: not recorded"), "{gaps}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_existing_transcript_is_kept_unless_forced_and_then_backed_up() {
    let cfg = tempfile::tempdir().unwrap();
    let cfg = cfg.path();
    let demo = MilvusDemo::start(MilvusDemoConfig::default()).await.unwrap();
    let addr = demo.addr().to_string();
    let file = cfg.join("t.json");
    std::fs::write(&file, b"an earlier report\n").unwrap();
    let before = std::fs::read(&file).unwrap();
    let f = file.to_str().unwrap();
    let o = run(cfg, &["call", &addr, "MilvusService/GetVersion", "--transcript", f], &[]).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), before, "not a byte changed");
    ok(&run(cfg, &["call", &addr, "MilvusService/GetVersion", "--transcript", f, "--force"], &[]).await);
    assert_eq!(std::fs::read(cfg.join("t.json.bak")).unwrap(), before);
    assert!(Transcript::from_json(&std::fs::read(&file).unwrap()).is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brpc_fills_what_it_has_and_says_what_it_has_not() {
    let cfg = tempfile::tempdir().unwrap();
    let cfg = cfg.path();
    let any = "127.0.0.1:0".parse().unwrap();
    let ds =
        DatasyncDemo::start(any, any, Duration::from_secs(30), CollectorConfig::default()).await.unwrap();
    let file = cfg.join("b.json");
    let addr = ds.synctool.addr().to_string();
    ok(&run(
        cfg,
        &[
            "call",
            &addr,
            "SyncTool/TaskStatus",
            "--transport",
            "brpc",
            "--transcript",
            file.to_str().unwrap(),
        ],
        &[],
    )
    .await);
    let t = read(&file);
    assert_eq!((&t["target"]["transport"], &t["status"]["code"]), (&Value::from("brpc"), &Value::from(0)));
    assert!(t["headers"].is_null() && t["trailers"].is_null());
    assert!(t["not_recorded"].to_string().contains("brpc (baidu_std) has none"), "{}", t["not_recorded"]);
    assert_eq!(t["messages"].as_array().unwrap().len(), 1);
}

#[test]
fn a_damaged_transcript_is_refused_in_words() {
    let words = |bytes: &[u8]| Transcript::from_json(bytes).unwrap_err().to_string();
    assert!(words(b"{\"format\": ").starts_with("not a JSON document"), "{}", words(b"{"));
    assert_eq!(
        words(br#"{"frames": []}"#),
        "not a walscope call transcript (its \"format\" is missing, not \"walscope-call-transcript\")"
    );
    let good = good_transcript();
    let mut v: Value = serde_json::from_slice(&good).unwrap();
    v["version"] = 7.into();
    assert!(words(v.to_string().as_bytes()).contains("version 7 is newer"));
    let mut v: Value = serde_json::from_slice(&good).unwrap();
    v["request"]["base64"] = "not base64!".into();
    assert!(words(v.to_string().as_bytes()).starts_with("the transcript is damaged: "));
    let mut v: Value = serde_json::from_slice(&good).unwrap();
    v["request"]["size"] = 99.into();
    assert!(words(v.to_string().as_bytes()).contains("the request's base64 holds 2 bytes, its size says 99"));
    assert!(Transcript::from_json(&good).is_ok());
    assert!(matches!(Transcript::from_json(b"[]"), Err(TranscriptError::NotTranscript { .. })));
}

/// A small valid transcript, built by the library.
pub fn good_transcript() -> Vec<u8> {
    use walscope::net::profile::TransportKind;
    use walscope::net::transcript::{Recorder, Target};
    let set = walscope::schema::SchemaSet::shared_builtin();
    let m = walscope::net::find_method(set.pool(), "SyncTool/TaskStatus").unwrap();
    let target = Target::new(None, "127.0.0.1:1", TransportKind::Brpc);
    let rec = Recorder::start(target, &m, &[0x08, 0x01], &[], None);
    let e = walscope::net::NetError::Timeout { method: m.full_name().into(), after: Duration::from_secs(1) };
    rec.unary(&Err(e)).to_json()
}

/// The window keeps a stream's transcript in memory: past its bound, messages are counted and
/// said missing, never silently dropped.
#[test]
fn a_bounded_stream_transcript_says_what_it_left_out() {
    use walscope::net::call::{StreamEnd, StreamSummary};
    use walscope::net::profile::TransportKind;
    use walscope::net::transcript::{Recorder, Target};
    let set = walscope::schema::SchemaSet::shared_builtin();
    let m = walscope::net::find_method(set.pool(), "MilvusService/DumpMessages").unwrap();
    let target = Target::new(Some("p"), "bob:pw@127.0.0.1:1", TransportKind::Grpc);
    let mut rec = Recorder::start(target, &m, b"", &[("authorization".into(), "c2VjcmV0".into())], None)
        .keeping_at_most(10);
    for _ in 0..3 {
        rec.message(&[0x0a, 0x00, 0x0a, 0x00, 0x0a, 0x00]); // 6 bytes each: only the first fits
    }
    let summary = StreamSummary {
        request: Default::default(),
        request_exact: true,
        headers: vec![],
        headers_after: Some(Duration::from_millis(3)),
        trailers: None,
        count: 3,
        bytes: 18,
        elapsed: Duration::from_millis(9),
        end: StreamEnd::Completed,
    };
    let t = rec.stream(&summary);
    assert_eq!(t.messages.len(), 1);
    assert!(
        t.not_recorded.iter().any(|w| w.contains("past the first 1: 2 more (12 bytes)")),
        "{:?}",
        t.not_recorded
    );
    assert_eq!(t.target.endpoint, "127.0.0.1:1", "no user info");
    let text = String::from_utf8(t.to_json()).unwrap();
    assert!(!text.contains("c2VjcmV0") && text.contains("(redacted)"), "{text}");
}
