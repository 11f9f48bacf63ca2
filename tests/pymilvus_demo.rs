//! The official Python SDK against the demo Milvus over 127.0.0.1: pymilvus (pinned by
//! scripts/python-env.sh) connects, reads the salvage checkpoint and dumps the WAL tail, and it
//! receives exactly the messages, bytes and order, that `walscope salvage` writes for the same
//! pchannel and window. Also: the schemas the demo encodes with agree with pymilvus's generated
//! descriptors on every message of the SDK's connect and salvage paths.
//! And the SDK creates, fills, queries and drops a collection on the demo.
//!
//! Needs the venv python (`WALSCOPE_PYTHON`, else scripts/python-env.sh, which installs from
//! PyPI the first time); without it these tests fail, they never pass silently.

use crate::common;

use prost_reflect::{DescriptorPool, MessageDescriptor};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use walscope::dump::framing::read_header;
use walscope::dump::{Framing, SyncPolicy};
use walscope::net::grpc::GrpcSettings;
use walscope::salvage::job::{self as salvage, SalvageSpec};
use walscope::schema::SchemaSet;
use walscope::sim::WalGenConfig;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig, OLD_CLUSTER_ID, SESSION_IDENTIFIER};

/// Pulsar ids: the backend whose message id encoding is the least trivial.
use common::salvage::{CHECKPOINT_INDEX, PCHANNEL};
/// About this many messages in the window.
const MESSAGES: usize = 150;
const PYMILVUS_VERSION: &str = "3.0.2";

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts").join(name)
}

/// This suite's WAL: small messages of one or two rows.
fn wal() -> WalGenConfig {
    WalGenConfig { rows: (1, 2), ..common::walgen::small_wal(23) }
}

/// The end timetick of a window of about `n` messages after the demo's checkpoint, ending on a
/// whole transaction, and how many messages it holds.
fn window(n: usize) -> (u64, usize) {
    let window = common::salvage::window_of(wal(), n);
    (window.last().map_or(0, |m| m.timetick), window.len())
}

/// The bodies of a varint-delimited file, in order.
fn frames(buf: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < buf.len() {
        let h = read_header(buf, pos, Framing::VarintDelimited).expect("a whole frame");
        let start = pos + h.header_len as usize;
        out.push(&buf[start..start + h.body_len as usize]);
        pos += h.total() as usize;
    }
    out
}

/// Runs a script with the venv python off the runtime's workers (the demo serves on them).
async fn run_python(args: Vec<String>) -> serde_json::Value {
    let python = common::venv_python();
    let what = args[0].clone();
    let out = tokio::task::spawn_blocking(move || Command::new(&python).args(&args).output())
        .await
        .unwrap()
        .expect("the venv python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what} failed: {}\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("no JSON summary ({e}): {stdout}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pymilvus_salvage_receives_what_walscope_dumps() {
    let (end, count) = window(MESSAGES);
    let config = MilvusDemoConfig { wal: wal(), checkpoint_index: CHECKPOINT_INDEX, ..Default::default() };
    let demo = MilvusDemo::start(config).await.expect("demo starts");
    let addr = demo.addr().to_string();
    let dir = tempfile::tempdir().unwrap();

    // walscope's own salvage, as `walscope salvage` runs it.
    let dump = dir.path().join("walscope.dump");
    let spec = SalvageSpec {
        new_primary: GrpcSettings::new(&addr),
        old_primary: GrpcSettings::new(&addr),
        source_cluster_id: OLD_CLUSTER_ID.into(),
        pchannel: PCHANNEL.into(),
        out: dump.clone(),
        end_timetick: end,
        resume: false,
        max_retries: 0,
        timeout: Duration::from_secs(30),
        sync: SyncPolicy { every_frames: 1000, every: Duration::from_secs(5) },
    };
    let outcome = salvage::spawn(spec).wait().await.expect("walscope salvage");
    assert_eq!(outcome.written as usize, count);

    // The same salvage through pymilvus, then a method the demo does not serve.
    let sdk_out = dir.path().join("pymilvus.frames");
    let summary = run_python(vec![
        script("pymilvus-salvage.py").display().to_string(),
        format!("http://{addr}"),
        OLD_CLUSTER_ID.into(),
        PCHANNEL.into(),
        end.to_string(),
        sdk_out.display().to_string(),
        "list_collections".into(),
    ])
    .await;
    demo.shutdown().await;

    assert_eq!(summary["pymilvus"], PYMILVUS_VERSION);
    // MilvusClient's connect is one Connect; every later call carries the identifier it returned.
    let rpcs: Vec<&str> = summary["rpcs"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
    assert_eq!(rpcs, ["Connect", "GetReplicateInfo", "DumpMessages", "ShowCollections"]);
    assert_eq!(summary["identifiers"], serde_json::json!([SESSION_IDENTIFIER.to_string()]));
    let ckpt = &summary["checkpoint"];
    assert_eq!(ckpt["cluster_id"], OLD_CLUSTER_ID);
    assert_eq!(ckpt["pchannel"], PCHANNEL);
    assert_eq!(ckpt["message_id"]["wal_name"], "Pulsar");

    let ours = std::fs::read(&dump).unwrap();
    let theirs = std::fs::read(&sdk_out).unwrap();
    let (ours_f, theirs_f) = (frames(&ours), frames(&theirs));
    assert!(count >= 100, "window too small: {count}");
    assert_eq!(summary["messages"], count);
    assert_eq!(theirs_f.len(), ours_f.len(), "message count: pymilvus vs walscope");
    if let Some(i) = (0..ours_f.len()).find(|&i| ours_f[i] != theirs_f[i]) {
        panic!(
            "message {i} differs: pymilvus got {} bytes, walscope wrote {}",
            theirs_f[i].len(),
            ours_f[i].len()
        );
    }
    assert!(theirs == ours);

    assert_eq!(summary["unserved"]["code"], "UNIMPLEMENTED");
    let details = summary["unserved"]["details"].as_str().unwrap();
    assert!(details.contains("milvus.proto.milvus.MilvusService/ShowCollections"), "{details}");
}

/// Field name, number, kind and cardinality, by number.
fn fields(m: &MessageDescriptor) -> Vec<(u32, String, String, String)> {
    let mut v: Vec<_> = m
        .fields()
        .map(|f| {
            let kind = match f.kind() {
                prost_reflect::Kind::Message(d) => d.full_name().to_string(),
                prost_reflect::Kind::Enum(e) => e.full_name().to_string(),
                k => format!("{k:?}"),
            };
            (f.number(), f.name().to_string(), kind, format!("{:?}", f.cardinality()))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn builtin_schema_matches_pymilvus_descriptors() {
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("pymilvus.pb");
    let out = Command::new(common::venv_python())
        .arg(script("pymilvus-descriptor-set.py"))
        .arg(&set)
        .output()
        .expect("the venv python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some(format!("pymilvus {PYMILVUS_VERSION}").as_str()));
    let n: usize = lines.next().and_then(|l| l.strip_suffix(" files")).and_then(|n| n.parse().ok()).unwrap();
    let names: Vec<&str> = lines.collect();
    assert_eq!(names.len(), n);
    assert!(names.contains(&"milvus.proto") && names.contains(&"common.proto"), "{names:?}");

    let theirs = DescriptorPool::decode(std::fs::read(&set).unwrap().as_slice()).expect("a loadable set");
    let builtin = SchemaSet::builtin();
    let ours = builtin.pool();
    // Everything the demo encodes or decodes for the SDK's connect and salvage calls.
    for name in [
        "milvus.ConnectRequest",
        "milvus.ConnectResponse",
        "milvus.CheckHealthResponse",
        "milvus.GetVersionResponse",
        "milvus.GetReplicateInfoRequest",
        "milvus.GetReplicateInfoResponse",
        "milvus.DumpMessagesRequest",
        "milvus.DumpMessagesResponse",
        "common.ClientInfo",
        "common.ServerInfo",
        "common.Status",
        "common.MessageID",
        "common.ImmutableMessage",
        "common.ReplicateCheckpoint",
    ] {
        let full = format!("milvus.proto.{name}");
        let t = theirs.get_message_by_name(&full).unwrap_or_else(|| panic!("pymilvus lacks {full}"));
        let o = ours.get_message_by_name(&full).unwrap_or_else(|| panic!("the built-in schemas lack {full}"));
        assert_eq!(fields(&o), fields(&t), "{full}: built-in vs pymilvus {PYMILVUS_VERSION}");
    }
    for e in
        ["milvus.proto.common.WALName", "milvus.proto.common.ErrorCode", "milvus.proto.milvus.QuotaState"]
    {
        let values = |p: &DescriptorPool| -> Vec<(i32, String)> {
            let mut v: Vec<_> =
                p.get_enum_by_name(e).unwrap().values().map(|v| (v.number(), v.name().to_string())).collect();
            v.sort();
            v
        };
        assert_eq!(values(ours), values(&theirs), "{e}: built-in vs pymilvus {PYMILVUS_VERSION}");
    }
}

/// The descriptor set extracted from the SDK's generated modules, written to `dir`.
fn pymilvus_descriptor_set(dir: &Path) -> PathBuf {
    let set = dir.join("pymilvus.pb");
    let out = Command::new(common::venv_python())
        .arg(script("pymilvus-descriptor-set.py"))
        .arg(&set)
        .output()
        .expect("the venv python runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    set
}

/// The real Milvus API as the SDK ships it, loaded beside the built-ins: it wins over our
/// trimmed copies, the WAL types re-link to it (what it lacks of ours is said), `schema show`
/// lists the whole service, `call` sends a method only it has, and sample dumps still decode
/// with their payloads typed.
#[test]
fn pymilvus_descriptor_set_loads_beside_the_builtins() {
    let dir = tempfile::tempdir().unwrap();
    let pb = pymilvus_descriptor_set(dir.path());
    let mut set = SchemaSet::builtin();
    set.add_descriptor_set(&pb).unwrap();
    let status = |file: &str| set.builtin_files().iter().find(|f| f.file == file).unwrap().status.clone();
    use walscope::schema::{BuiltinUse, SetAsideReason};
    for file in ["milvus/common.proto", "milvus/schema.proto", "milvus/msg.proto", "milvus/milvus.proto"] {
        assert!(matches!(status(file), BuiltinUse::SetAside(SetAsideReason::Replaced { .. })), "{file}");
    }
    let BuiltinUse::Relinked { to, gaps } = status("milvus/messages.proto") else {
        panic!("messages.proto: {:?}", status("milvus/messages.proto"))
    };
    assert!(to.iter().any(|(f, _)| f == "common.proto"), "{to:?}");
    // pymilvus 3.0.2 predates a few parts our built-ins carry (the UUID data type, the
    // row-level security and shard-split MsgTypes, FieldSchema's type tree the WAL schema
    // reaches): said, not hidden, not fatal; a type only a missing field needs (TypeSchema) is
    // not needed.
    let mut want = vec!["milvus.proto.common.MsgType value 120 `SplitShard`".to_string()];
    for (n, name) in [
        "CreateRowPolicy",
        "DropRowPolicy",
        "ListRowPolicies",
        "UpdateRowPolicy",
        "SetRLSPrincipalTags",
        "GetRLSPrincipalTags",
        "ListRLSPrincipals",
        "DeleteRLSPrincipalTags",
    ]
    .iter()
    .enumerate()
    {
        want.push(format!("milvus.proto.common.MsgType value {} `{name}`", 2400 + n));
    }
    want.push("milvus.proto.schema.FieldSchema field 18 `type_schema`".into());
    want.push("milvus.proto.schema.FieldSchema field 19 `element_nullable`".into());
    want.push("milvus.proto.schema.DataType value 31 `UUID`".into());
    assert_eq!(gaps, want, "{gaps:?}");
    let notices = set.notices().join("\n");
    assert!(
        notices.contains("built-in milvus/messages.proto is re-linked to your definitions, which lack"),
        "{notices}"
    );
    let svc = set.pool().get_service_by_name("milvus.proto.milvus.MilvusService").unwrap();
    assert!(svc.methods().count() > 100, "the whole service: {}", svc.methods().count());

    // Sample dumps: typed payloads, by the SDK's types.
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/samples/milvus-100.dump");
    let builtin = common::decoded_wal_frames(&SchemaSet::builtin(), &samples);
    let upstream = common::decoded_wal_frames(&set, &samples);
    assert_eq!(builtin.len(), upstream.len());
    let typed = upstream.iter().filter(|l| l.contains("| milvus.proto.msg.InsertRequest {")).count();
    assert!(typed > 10, "Insert payloads decode typed ({typed})");
    let same = builtin.iter().zip(&upstream).filter(|(a, b)| a == b).count();
    assert_eq!(same, builtin.len(), "every frame decodes as with the built-ins");
    assert_eq!(set.message("milvus.proto.msg.InsertRequest").unwrap().parent_file().name(), "msg.proto");

    // The CLI: the whole service, and a method only the SDK's schema has, sent to the demo.
    let bin = env!("CARGO_BIN_EXE_walscope");
    let pb = pb.to_str().unwrap();
    let show = Command::new(bin)
        .args(["schema", "show", "milvus.proto.milvus.MilvusService", "--descriptor-set", pb])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(show.status.success(), "{}", String::from_utf8_lossy(&show.stderr));
    assert!(text.contains("rpc ShowCollections(milvus.proto.milvus.ShowCollectionsRequest)"), "{text}");
    assert!(text.contains("rpc CreateCollection("), "{text}");
    assert!(
        text.lines().any(|l| l.contains("milvus/milvus.proto")
            && l.contains("set aside: replaced by milvus.proto (descriptor set ")),
        "{text}"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let demo = rt.block_on(MilvusDemo::start(MilvusDemoConfig::default())).unwrap();
    let addr = demo.addr().to_string();
    let call = Command::new(bin)
        // (HasCollection is served since the demo keeps collections: ShowCollections is not.)
        .args(["call", &addr, "milvus.proto.milvus.MilvusService/ShowCollections", "-d"])
        .arg(r#"{"db_name": "default"}"#)
        .args(["--descriptor-set", pb])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&call.stderr);
    assert!(!call.status.success());
    assert!(
        err.contains("unknown method milvus.proto.milvus.MilvusService/ShowCollections"),
        "the server got it: {err}"
    );
    let call = Command::new(bin)
        .args([
            "call",
            &addr,
            "milvus.proto.milvus.MilvusService/Connect",
            "-d",
            "{}",
            "--descriptor-set",
            pb,
        ])
        .output()
        .unwrap();
    assert!(call.status.success(), "{}", String::from_utf8_lossy(&call.stderr));
    let v: serde_json::Value = serde_json::from_slice(&call.stdout).unwrap();
    assert_eq!(v["identifier"], SESSION_IDENTIFIER.to_string());
}

/// The SDK's collection calls against the demo's in-memory collections: create from a schema,
/// describe, insert (a key twice gives two rows), query, count(*), delete by ids and by filter,
/// upsert, a refused insert (wrong dim) as a MilvusException with the server's code, drop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pymilvus_collections_on_the_demo() {
    let demo =
        MilvusDemo::start(MilvusDemoConfig { wal: wal(), ..Default::default() }).await.expect("demo starts");
    let addr = demo.addr().to_string();
    let summary =
        run_python(vec![script("pymilvus-collections.py").display().to_string(), format!("http://{addr}")])
            .await;
    demo.shutdown().await;
    assert_eq!(summary["pymilvus"], PYMILVUS_VERSION);
    assert_eq!(summary["has"], true, "{summary}");
    assert_eq!(
        summary["fields"],
        serde_json::json!([["id", "5"], ["embedding", "101"], ["title", "21"]]),
        "{summary}"
    );
    assert_eq!(summary["insert"], 3, "{summary}");
    assert_eq!(
        summary["query"],
        serde_json::json!([[1, "book 1"], [3, "book 3"], [3, "book 3 again"]]),
        "{summary}"
    );
    assert_eq!(summary["count"], 4, "{summary}");
    assert_eq!(summary["delete_ids"], 1, "{summary}");
    assert_eq!(summary["after"], serde_json::json!([{"id": 1, "title": "upserted"}]), "{summary}");
    assert_eq!(summary["count_after"], 1, "{summary}");
    let refused = summary["refused"].as_str().unwrap_or_default();
    assert!(refused.contains("code=1100") && refused.contains("is not equal to schema dim (4)"), "{summary}");
    assert_eq!(summary["has_after_drop"], false, "{summary}");
    let rpcs: Vec<&str> = summary["rpcs"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
    for rpc in
        ["CreateCollection", "DescribeCollection", "Insert", "Query", "Delete", "Upsert", "DropCollection"]
    {
        assert!(rpcs.contains(&rpc), "{rpcs:?}");
    }
}
