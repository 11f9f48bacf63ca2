//! Claims the README and docs/ make that no other test proved: the filters `collection=`, `text=` and
//! `status=encrypted` select exactly the frames they name; `decode --input hex|base64` reads
//! what `raw` reads; a password from an environment variable authenticates a call (and a
//! missing one says which variable); the Milvus database travels as the `dbname` header,
//! whether from `--db` or `-H`; a garbage manifest does not stop `inspect`; a truncated real
//! descriptor set is refused in words; DumpMessages leaves out TimeTick, CreateSegment, Flush
//! and rolled-back transactions; messages above 4 MiB pass under the 512 MiB limit, and a
//! lower `--max-message-size` refuses them naming the flag; a malformed OK answer is refused
//! in words by `call` and by the salvage's checkpoint fetch.

use std::path::Path;
use std::process::{Command, Output};
use walscope::dump::SyncPolicy;
use walscope::net::grpc::Auth;
use walscope::schema::SchemaSet;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig};
use walscope::sim::sample::write_milvus_dump;

fn walscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args(args)
        .env("WALSCOPE_INDEX_CACHE", "off")
        .output()
        .unwrap()
}

/// `walscope salvage` of `pchannel` with `primary` as both the old and the new primary (the demo
/// serves both roles), into `out`, with `extra` flags after.
fn salvage(primary: &str, cluster: &str, pchannel: &str, out: &Path, extra: &[&str]) -> Output {
    let out = out.to_str().expect("path");
    let mut args = vec!["salvage", "--new-primary", primary, "--old-primary", primary];
    args.extend(["--source-cluster-id", cluster, "--pchannel", pchannel, "--out", out]);
    args.extend_from_slice(extra);
    walscope(&args)
}

fn ok(args: &[&str]) -> String {
    let out = walscope(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn rows(jsonl: &str) -> Vec<serde_json::Value> {
    jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v.get("frame").is_some())
        .collect()
}

#[test]
fn filters_select_exactly_the_frames_they_name() {
    let set = SchemaSet::builtin();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.dump");
    write_milvus_dump(set.pool(), &path, 1500, 9, SyncPolicy::default(), None).unwrap();
    let file = path.to_str().unwrap();
    let all = rows(&ok(&["inspect", file, "--jsonl"]));
    assert_eq!(all.len(), 1500);
    let pick = |spec: &str| -> Vec<u64> {
        rows(&ok(&["inspect", file, "--jsonl", "--filter", spec]))
            .iter()
            .map(|r| r["frame"].as_u64().unwrap())
            .collect()
    };
    let expect = |keep: &dyn Fn(&serde_json::Value) -> bool| -> Vec<u64> {
        all.iter().filter(|r| keep(r)).map(|r| r["frame"].as_u64().unwrap()).collect()
    };

    let by_collection = expect(&|r| r["collection"] == 4492);
    assert!(!by_collection.is_empty() && by_collection.len() < all.len());
    assert_eq!(pick("collection=4492"), by_collection);

    let by_text = expect(&|r| r["summary"].as_str().unwrap().to_lowercase().contains("rows=3 "));
    assert!(!by_text.is_empty());
    assert_eq!(pick("text=ROWS=3 "), by_text, "text= is a case-insensitive substring of the summary");

    let encrypted = expect(&|r| r["status"] == "encrypted");
    assert!(!encrypted.is_empty(), "the sample holds encrypted frames");
    assert_eq!(pick("status=encrypted"), encrypted);
    assert!(encrypted.iter().all(|i| all[*i as usize]["summary"].as_str().unwrap().contains("(encrypted)")));
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", file, "--stats", "--jsonl"])).unwrap();
    assert_eq!(stats["encrypted"], encrypted.len());

    let both = expect(&|r| r["collection"] == 4492 && r["type"] == "Insert");
    assert_eq!(pick("collection=4492,type=Insert"), both);
}

#[test]
fn decode_reads_hex_and_base64_input_as_raw() {
    let set = SchemaSet::builtin();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.dump");
    write_milvus_dump(set.pool(), &path, 20, 4, SyncPolicy::default(), None).unwrap();
    let raw = dir.path().join("frame.bin");
    let extract = ["export", path.to_str().unwrap(), "--to", "raw", "--filter", "type=Insert"];
    let out_dir = dir.path().join("raw");
    let mut args = extract.to_vec();
    args.extend(["--out", out_dir.to_str().unwrap()]);
    ok(&args);
    let first = std::fs::read_dir(&out_dir).unwrap().map(|e| e.unwrap().path()).min().unwrap();
    std::fs::copy(&first, &raw).unwrap();
    let bytes = std::fs::read(&raw).unwrap();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &bytes);
    let (hex_file, b64_file) = (dir.path().join("frame.hex"), dir.path().join("frame.b64"));
    std::fs::write(&hex_file, format!("{hex}\n")).unwrap();
    std::fs::write(&b64_file, format!("{b64}\n")).unwrap();
    let t = "milvus.proto.milvus.DumpMessagesResponse";
    let want = ok(&["decode", "--type", t, "--format", "json", raw.to_str().unwrap()]);
    assert!(want.contains("\"payload\""), "{want}");
    for (input, file) in [("hex", &hex_file), ("base64", &b64_file)] {
        let got = ok(&["decode", "--type", t, "--format", "json", "--input", input, file.to_str().unwrap()]);
        assert_eq!(got, want, "--input {input}");
    }
    let bad = walscope(&["decode", "--type", t, "--input", "hex", b64_file.to_str().unwrap()]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("hex"), "{}", String::from_utf8_lossy(&bad.stderr));
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// A demo Milvus that accepts only root / Milvus.
fn demo_with_password(rt: &tokio::runtime::Runtime) -> MilvusDemo {
    let auth = Auth::UserPassword { user: "root".into(), password: "Milvus".into() };
    rt.block_on(MilvusDemo::start(MilvusDemoConfig { auth: Some(auth), ..Default::default() })).unwrap()
}

#[test]
fn a_password_from_the_environment_authenticates_a_call() {
    let rt = runtime();
    let demo = demo_with_password(&rt);
    let addr = demo.addr().to_string();
    let call = |pw: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_walscope"));
        cmd.args(["call", &addr, "milvus.proto.milvus.MilvusService/GetVersion"]);
        cmd.args(["--user", "root", "--password-env", "WALSCOPE_TEST_PW"]).env_remove("WALSCOPE_TEST_PW");
        if let Some(pw) = pw {
            cmd.env("WALSCOPE_TEST_PW", pw);
        }
        cmd.output().unwrap()
    };
    let good = call(Some("Milvus"));
    assert!(good.status.success(), "{}", String::from_utf8_lossy(&good.stderr));
    assert!(String::from_utf8_lossy(&good.stdout).contains("walscope-demo"));
    let wrong = call(Some("nope"));
    assert!(!wrong.status.success());
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("UNAUTHENTICATED"),
        "{}",
        String::from_utf8_lossy(&wrong.stderr)
    );
    let unset = call(None);
    assert!(!unset.status.success());
    let text = String::from_utf8_lossy(&unset.stderr);
    assert!(text.contains("WALSCOPE_TEST_PW"), "the missing variable is named: {text}");
    rt.block_on(demo.shutdown());
}

#[test]
fn the_database_travels_as_the_dbname_header() {
    let rt = runtime();
    let demo = rt.block_on(MilvusDemo::start(MilvusDemoConfig::default())).unwrap();
    let addr = demo.addr().to_string();
    let connect = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["call", &addr, "milvus.proto.milvus.MilvusService/Connect", "-d", "{}"];
        args.extend_from_slice(extra);
        serde_json::from_str(&ok(&args)).unwrap()
    };
    let plain = connect(&[]);
    assert!(plain["status"].get("code").is_none(), "the default database is served: {plain}");
    for extra in [&["--db", "nosuch"][..], &["-H", "dbname:nosuch"]] {
        let other = connect(extra);
        assert_eq!(other["status"]["code"], 800, "{extra:?}: {other}");
        assert!(other["status"].to_string().contains("nosuch"), "{extra:?}: {other}");
    }
    rt.block_on(demo.shutdown());
}

#[test]
fn a_garbage_manifest_does_not_stop_inspect_and_a_resume_explains_it() {
    let set = SchemaSet::builtin();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.dump");
    write_milvus_dump(set.pool(), &path, 50, 2, SyncPolicy::default(), None).unwrap();
    let manifest = walscope::dump::manifest_path(&path);
    std::fs::write(&manifest, b"{\"format_version\": 1, \"frames\": \"lots\"").unwrap();
    let listed = ok(&["inspect", path.to_str().unwrap(), "--stats"]);
    assert!(listed.contains("matching frames: 50"), "{listed}");
    // A manifest that lies about the data: more frames than the file holds.
    let out = salvage("127.0.0.1:1", "x", "p", &path, &["--resume"]);
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("manifest") && text.contains(manifest.file_name().unwrap().to_str().unwrap()),
        "{text}"
    );
}

#[test]
fn a_truncated_real_descriptor_set_is_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full.pb");
    ok(&["schema", "export", "--out", full.to_str().unwrap()]);
    let bytes = std::fs::read(&full).unwrap();
    assert!(bytes.len() > 10_000, "a real descriptor set");
    let cut = dir.path().join("cut.pb");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = walscope(&["schema", "list", "--descriptor-set", cut.to_str().unwrap()]);
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("cut.pb"), "the file is named: {text}");
    assert!(!text.contains("panicked"), "{text}");
}

/// The HTTP/JSON client's limits against a server that answers badly: each is an error in
/// words, at once, never a hang or an allocation of what the server claims.
#[test]
fn the_http_json_client_refuses_bad_answers_in_words() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use walscope::net::http_json::HttpJsonTransport;
    use walscope::net::{CallOptions, Transport};
    let rt = runtime();
    let set = SchemaSet::builtin();
    let svc = set.pool().get_service_by_name("openmldb.datasync.SyncTool").unwrap();
    let method = svc.methods().find(|m| m.name() == "TaskStatus").unwrap();
    let request = prost_reflect::DynamicMessage::new(method.input());
    let long_head = format!("HTTP/1.1 200 OK\r\nX-Pad: {}\r\n\r\n{{}}", "a".repeat(70 * 1024));
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "a Content-Length that is no number",
            b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n{}".to_vec(),
            "bad Content-Length",
        ),
        (
            "a body claimed past the limit",
            b"HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\n{}".to_vec(),
            "exceeds",
        ),
        ("a head past the limit", long_head.into_bytes(), "HTTP head longer than"),
        (
            "a body cut short",
            b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"task\"".to_vec(),
            "connection closed inside the HTTP body",
        ),
        (
            "a head cut short",
            b"HTTP/1.1 200 OK\r\nContent-Le".to_vec(),
            "connection closed before the HTTP head ended",
        ),
    ];
    rt.block_on(async {
        for (what, answer, words) in cases {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let server = tokio::spawn(async move {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut buf = vec![0u8; 4096];
                let _ = s.read(&mut buf).await;
                let _ = s.write_all(&answer).await;
                let _ = s.shutdown().await;
            });
            let t = HttpJsonTransport::new(addr.to_string());
            let opts =
                CallOptions { timeout: Some(std::time::Duration::from_secs(10)), ..Default::default() };
            let started = std::time::Instant::now();
            let e = t.call_unary(&method, &request, &opts).await.expect_err(what).to_string();
            assert!(e.contains(words) && e.contains(&addr.to_string()), "{what}: {e}");
            assert!(started.elapsed() < std::time::Duration::from_secs(5), "{what}: answered at once");
            server.await.unwrap();
        }
    });
}

/// brpc errors come back in words: 1001 (a SyncTool call to the DataCollector: unknown
/// service) and 1002 (a method the DataCollector does not have: unknown method), each with
/// what to check.
#[test]
fn brpc_errors_1001_and_1002_are_said_in_words() {
    use prost_reflect::DescriptorPool;
    use prost_types::{
        DescriptorProto, FileDescriptorProto, FileDescriptorSet, MethodDescriptorProto,
        ServiceDescriptorProto,
    };
    use walscope::net::brpc::BrpcTransport;
    use walscope::net::{CallOptions, Transport};
    use walscope::sim::collector::CollectorConfig;
    use walscope::sim::datasync::DatasyncDemo;
    let rt = runtime();
    let any = "127.0.0.1:0".parse().unwrap();
    let cfg = CollectorConfig { batch_interval: std::time::Duration::from_millis(30), full_mode_batches: 4 };
    let demo =
        rt.block_on(DatasyncDemo::start(any, any, std::time::Duration::from_millis(100), cfg)).unwrap();
    let collector = demo.collector.addr().to_string();
    // The DataCollector service as a client that believes it has a GetTaskInfo method.
    let file = FileDescriptorProto {
        name: Some("believed.proto".into()),
        package: Some("openmldb.datasync".into()),
        message_type: vec![DescriptorProto { name: Some("Empty".into()), ..Default::default() }],
        service: vec![ServiceDescriptorProto {
            name: Some("DataCollector".into()),
            method: vec![MethodDescriptorProto {
                name: Some("GetTaskInfo".into()),
                input_type: Some(".openmldb.datasync.Empty".into()),
                output_type: Some(".openmldb.datasync.Empty".into()),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let pool = DescriptorPool::from_file_descriptor_set(FileDescriptorSet { file: vec![file] }).unwrap();
    let believed =
        pool.get_service_by_name("openmldb.datasync.DataCollector").unwrap().methods().next().unwrap();
    let set = SchemaSet::builtin();
    let status = set.pool().get_service_by_name("openmldb.datasync.SyncTool").unwrap();
    let status = status.methods().find(|m| m.name() == "TaskStatus").unwrap();
    let t = BrpcTransport::new(collector);
    let opts = CallOptions { timeout: Some(std::time::Duration::from_secs(10)), ..Default::default() };
    rt.block_on(async {
        let e = t
            .call_unary(&status, &prost_reflect::DynamicMessage::new(status.input()), &opts)
            .await
            .unwrap_err();
        let e = e.to_string();
        assert!(e.contains("1001") && e.contains("unknown service") && e.contains("SyncTool"), "{e}");
        let e = t
            .call_unary(&believed, &prost_reflect::DynamicMessage::new(believed.input()), &opts)
            .await
            .unwrap_err();
        let e = e.to_string();
        assert!(e.contains("1002") && e.contains("unknown method") && e.contains("GetTaskInfo"), "{e}");
    });
}

/// DumpMessages never sends what the server keeps to itself: a WAL holding TimeTick,
/// CreateSegment, Flush and rolled-back transactions (BeginTxn, Insert, RollbackTxn), salvaged,
/// holds none of them and exactly every other message of the same span, byte for byte.
#[test]
fn dump_messages_leaves_out_bookkeeping_and_rolled_back_transactions() {
    use walscope::sim::{WalGenConfig, WalGenerator};
    let wal = WalGenConfig { seed: 7, rows: (1, 1), bookkeeping: true, ..Default::default() };
    let set = SchemaSet::builtin();
    let kinds = ["TimeTick", "CreateSegment", "Flush", "RollbackTxn"];
    let stream: Vec<_> = WalGenerator::new(set.pool(), wal.clone()).take(3000).collect();
    let pchannel = [
        "by-dev-rootcoord-dml_0",
        "by-dev-rootcoord-dml_1",
        "by-dev-rootcoord-dml_2",
        "by-dev-rootcoord-dml_3",
    ]
    .into_iter()
    .find(|p| kinds.iter().all(|k| stream.iter().any(|m| m.pchannel == *p && m.type_name == *k)))
    .expect("a pchannel whose WAL holds every kind");
    let own: Vec<_> = stream.iter().filter(|m| m.pchannel == pchannel).collect();
    // Which messages belong to a rolled-back transaction (BeginTxn up to its RollbackTxn).
    let mut rolled_back = vec![false; own.len()];
    let mut open = None;
    for (i, m) in own.iter().enumerate() {
        match m.type_name {
            "BeginTxn" => open = Some(i),
            "CommitTxn" => open = None,
            "RollbackTxn" => {
                if let Some(b) = open.take() {
                    rolled_back[b..=i].iter_mut().for_each(|r| *r = true);
                }
            }
            _ => {}
        }
    }
    assert!(rolled_back.iter().filter(|r| **r).count() >= 3, "a rolled-back transaction in the span");

    let rt = runtime();
    let demo = rt.block_on(MilvusDemo::start(MilvusDemoConfig { wal, ..Default::default() })).expect("demo");
    let addr = demo.addr().to_string();
    let dir = tempfile::tempdir().expect("dir");
    let out = dir.path().join("s.dump");
    let end = own.get(own.len() * 3 / 4).map(|m| m.timetick).expect("an end").to_string();
    let said = salvage(&addr, "by-dev-old", pchannel, &out, &["--end-timetick", &end, "--keep-replicated"]);
    assert!(said.status.success(), "{}", String::from_utf8_lossy(&said.stderr));
    let salvage = walscope::replay::Salvage::open(std::slice::from_ref(&out)).expect("open");
    let mut dumped: Vec<(String, Vec<u8>)> = Vec::new();
    salvage
        .for_each(0, |m| {
            let bytes = salvage.dumps[0].frame(m.offset, m.len).expect("frame").to_vec();
            dumped.push((m.type_name.clone(), bytes));
        })
        .expect("read");
    assert!(dumped.len() > 100, "{} frames", dumped.len());
    for (t, _) in &dumped {
        assert!(!kinds.contains(&t.as_str()), "the dump holds a {t}");
    }
    // A committed transaction keeps its BeginTxn and CommitTxn (upstream drops only RollbackTxn).
    for kept in ["BeginTxn", "CommitTxn"] {
        assert!(dumped.iter().any(|(t, _)| t == kept), "the dump holds no {kept}");
    }
    // Exactly the rest of the span, in order.
    let first = own.iter().position(|m| m.response == dumped[0].1).expect("the first frame is in the WAL");
    let want: Vec<&Vec<u8>> = own[first..]
        .iter()
        .zip(&rolled_back[first..])
        .filter(|(m, rb)| !**rb && !kinds.contains(&m.type_name))
        .map(|(m, _)| &m.response)
        .take(dumped.len())
        .collect();
    let got: Vec<&Vec<u8>> = dumped.iter().map(|(_, b)| b).collect();
    assert!(got == want, "the dump is not the WAL's span without the left-out messages");
    let skipped = own[first..first + want.len()].iter().filter(|m| kinds.contains(&m.type_name)).count();
    assert!(skipped > 0, "the span held messages to leave out");
    rt.block_on(demo.shutdown());
}

/// Messages above tonic's 4 MiB default go through under the 512 MiB limit walscope sets, and a
/// lower `--max-message-size` refuses them in words that name the flag.
#[test]
fn the_message_size_limit_is_512_mib_and_can_be_lowered() {
    use walscope::sim::{WalGenConfig, WalGenerator};
    // 9,000 rows of 128 floats: about 4.6 MB per Insert.
    let wal = WalGenConfig { seed: 2, rows: (9000, 9000), ..Default::default() };
    let set = SchemaSet::builtin();
    let pchannel = "by-dev-rootcoord-dml_1";
    let own: Vec<_> =
        WalGenerator::new(set.pool(), wal.clone()).filter(|m| m.pchannel == pchannel).take(9).collect();
    assert!(own.iter().any(|m| m.response.len() > 4 << 20), "the WAL holds messages above 4 MiB");
    let end = own[8].timetick.to_string();
    let rt = runtime();
    let demo = rt.block_on(MilvusDemo::start(MilvusDemoConfig { wal, ..Default::default() })).expect("demo");
    let addr = demo.addr().to_string();
    let dir = tempfile::tempdir().expect("dir");
    let salvage_into = |out: &str, extra: &[&str]| {
        let out = dir.path().join(out);
        let mut flags = vec!["--end-timetick", end.as_str(), "--retries", "0"];
        flags.extend_from_slice(extra);
        (salvage(&addr, "by-dev-old", pchannel, &out, &flags), out)
    };
    let (done, out) = salvage_into("big.dump", &[]);
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let big = std::fs::metadata(&out).expect("dump").len();
    assert!(big > 8 << 20, "the dump holds the large messages: {big} bytes");
    let (refused, _) = salvage_into("small.dump", &["--max-message-size", "4"]);
    let said = String::from_utf8_lossy(&refused.stderr).to_string();
    assert!(!refused.status.success(), "{said}");
    assert!(said.contains("raise --max-message-size"), "{said}");
    rt.block_on(demo.shutdown());
}

/// A server whose OK answer is not the response type: `call` says what was expected and where
/// the bytes stop making sense, and exits non-zero; the salvage's checkpoint fetch says the same
/// instead of guessing a checkpoint.
#[test]
fn a_malformed_reply_is_refused_in_words() {
    use walscope::sim::milvus::Faults;
    let rt = runtime();
    // A length-delimited field 1 that claims far more bytes than follow.
    let garbage = vec![0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x02];
    let faults =
        |m: &str| Faults { garbage_reply: Some((m.to_string(), garbage.clone())), ..Default::default() };
    let demo = rt
        .block_on(MilvusDemo::start(MilvusDemoConfig { faults: faults("GetVersion"), ..Default::default() }))
        .expect("demo");
    let addr = demo.addr().to_string();
    let out = walscope(&["call", &addr, "milvus.proto.milvus.MilvusService/GetVersion"]);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("GetVersionResponse"), "names the type it expected: {said}");
    assert!(!said.contains("panicked"), "{said}");
    demo.set_faults(faults("GetReplicateInfo"));
    let out = walscope(&[
        "call",
        &addr,
        "milvus.proto.milvus.MilvusService/GetReplicateInfo",
        "-d",
        r#"{"source_cluster_id": "by-dev-old", "target_pchannel": "by-dev-rootcoord-dml_0"}"#,
    ]);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("GetReplicateInfoResponse"), "{said}");
    let dir = tempfile::tempdir().expect("dir");
    let out = salvage(
        &addr,
        "by-dev-old",
        "by-dev-rootcoord-dml_0",
        &dir.path().join("s.dump"),
        &["--end-timetick", "1"],
    );
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("GetReplicateInfo"), "{said}");
    assert!(!said.contains("panicked"), "{said}");
    assert!(
        !dir.path().join("s.dump").exists()
            || std::fs::metadata(dir.path().join("s.dump")).map(|m| m.len()).unwrap_or(0) == 0,
        "nothing dumped from a guessed checkpoint"
    );
    rt.block_on(demo.shutdown());
}

/// A profile's password in the OS keyring (on Linux the kernel keyring, which needs no desktop
/// session): `call PROFILE` reads it when it connects and the demo accepts it; an entry that is
/// not there is named, with the keyring's own reason.
#[test]
fn a_password_from_the_keyring_authenticates_a_profile() {
    use walscope::net::profile::{AuthSettings, ConnectionProfile, ProfileStore, SecretRef, TransportKind};
    let rt = runtime();
    let demo = demo_with_password(&rt);
    // A login session has a session keyring (pam_keyinit); a test runner usually has none. This
    // thread joins a new one, as `keyctl session` does, and the walscope it starts inherits it.
    const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
    // SAFETY: keyctl(2) with a null name: join a new anonymous session keyring.
    let joined = unsafe {
        libc::syscall(libc::SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, std::ptr::null::<libc::c_char>())
    };
    if joined < 0 {
        let e = std::io::Error::last_os_error();
        // Container sandboxes (Docker's default seccomp profile) forbid keyctl(2) outright:
        // there is no kernel keyring to test against, which is not walscope's failure.
        if matches!(e.raw_os_error(), Some(libc::EPERM | libc::ENOSYS | libc::EACCES)) {
            eprintln!("skipped: this sandbox forbids the kernel keyring (keyctl: {e})");
            return;
        }
        panic!("keyctl(JOIN_SESSION_KEYRING): {e}");
    }
    let service = format!("walscope-test-{}", std::process::id());
    let entry = keyring::Entry::new(&service, "root").unwrap();
    entry.set_password("Milvus").expect("the kernel keyring takes a password");
    let dir = tempfile::tempdir().unwrap();
    let store = ProfileStore::at(&dir.path().join("profiles.json"));
    for (name, account) in [("keyed", "root"), ("unkeyed", "nobody")] {
        let mut p = ConnectionProfile::plain(name, TransportKind::Grpc, demo.addr().to_string());
        let password = SecretRef::Keyring { service: service.clone(), account: account.into() };
        p.auth = Some(AuthSettings::UserPassword { user: "root".into(), password });
        store.upsert(p).unwrap();
    }
    let call = |profile: &str| {
        Command::new(env!("CARGO_BIN_EXE_walscope"))
            .args(["call", profile, "milvus.proto.milvus.MilvusService/GetVersion"])
            .env("WALSCOPE_CONFIG_DIR", dir.path())
            .output()
            .unwrap()
    };
    let good = call("keyed");
    let _ = entry.delete_credential();
    assert!(good.status.success(), "{}", String::from_utf8_lossy(&good.stderr));
    assert!(String::from_utf8_lossy(&good.stdout).contains("walscope-demo"));
    let missing = call("unkeyed");
    assert!(!missing.status.success());
    let text = String::from_utf8_lossy(&missing.stderr);
    assert!(text.contains(&service) && text.contains("nobody"), "the entry is named: {text}");
    rt.block_on(demo.shutdown());
}
