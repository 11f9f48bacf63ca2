//! The real-world schemas beside the built-in ones: `.proto` files laid out like the upstream
//! milvus-proto and OpenMLDB ones (written by us, in tests/fixtures/), loaded with the built-ins.
//! The user's definitions win, the built-in files they replace are set aside, the WAL types are
//! re-linked to the user's, and every sample dump decodes exactly as it does without them.

use crate::common;

use std::path::{Path, PathBuf};
use walscope::schema::{BuiltinUse, SchemaSet, SetAsideReason};

fn fixtures(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(dir)
}

/// The built-ins plus the upstream-layout Milvus files, loaded as an operator would: one
/// include path, the top file by its bare name.
fn with_upstream_milvus() -> SchemaSet {
    let dir = fixtures("milvus-upstream");
    let mut set = SchemaSet::builtin();
    set.add_proto_files(std::slice::from_ref(&dir), &[PathBuf::from("milvus.proto")]).unwrap();
    set
}

fn status<'a>(set: &'a SchemaSet, file: &str) -> &'a BuiltinUse {
    &set.builtin_files()
        .iter()
        .find(|f| f.file == file)
        .unwrap_or_else(|| panic!("no built-in {file}"))
        .status
}

#[test]
fn upstream_milvus_files_replace_the_builtin_ones_and_relink_the_wal_types() {
    let set = with_upstream_milvus();
    assert!(set.notices().is_empty(), "{:?}", set.notices());
    for (builtin, upstream) in [
        ("milvus/common.proto", "common.proto"),
        ("milvus/schema.proto", "schema.proto"),
        ("milvus/msg.proto", "msg.proto"),
        ("milvus/milvus.proto", "milvus.proto"),
    ] {
        match status(&set, builtin) {
            BuiltinUse::SetAside(SetAsideReason::Replaced { by }) => {
                assert!(by.iter().any(|(f, _)| f == upstream), "{builtin} replaced by {by:?}")
            }
            other => panic!("{builtin}: {other:?}"),
        }
    }
    match status(&set, "milvus/messages.proto") {
        BuiltinUse::Relinked { to, gaps } => {
            assert!(gaps.is_empty(), "{gaps:?}");
            let names: Vec<&str> = to.iter().map(|(f, _)| f.as_str()).collect();
            assert!(names.contains(&"common.proto") && names.contains(&"schema.proto"), "{names:?}");
        }
        other => panic!("messages.proto: {other:?}"),
    }
    assert_eq!(status(&set, "openmldb/data_sync.proto"), &BuiltinUse::InUse);
    // The WAL types now point at the user's definitions.
    let header = set.message("milvus.proto.messages.InsertMessageHeader").unwrap();
    assert_eq!(header.parent_file().name(), "milvus/messages.proto");
    let svc = set.pool().get_service_by_name("milvus.proto.milvus.MilvusService").unwrap();
    assert_eq!(svc.parent_file().name(), "milvus.proto");
    let builtin_methods = SchemaSet::builtin()
        .pool()
        .get_service_by_name("milvus.proto.milvus.MilvusService")
        .unwrap()
        .methods()
        .count();
    assert!(svc.methods().count() > builtin_methods + 5, "the full service: {}", svc.methods().count());
    assert!(svc.methods().any(|m| m.name() == "ShowCollections"));
}

#[test]
fn sample_dumps_decode_exactly_as_without_the_upstream_schema() {
    let builtin = SchemaSet::builtin();
    let upstream = with_upstream_milvus();
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/samples");
    let mut typed_bodies = 0;
    for entry in std::fs::read_dir(&samples).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "dump") {
            continue;
        }
        let a = common::decoded_wal_frames(&builtin, &path);
        let b = common::decoded_wal_frames(&upstream, &path);
        assert!(!a.is_empty(), "{}", path.display());
        assert_eq!(a, b, "{} decodes differently with the upstream schema", path.display());
        typed_bodies += b.iter().filter(|l| l.contains("| milvus.proto.msg.InsertRequest {")).count();
    }
    assert!(typed_bodies > 10, "Insert payloads decode typed ({typed_bodies})");
    // ... and typed by the user's definition, not a copy of ours.
    let insert = upstream.message("milvus.proto.msg.InsertRequest").unwrap();
    assert_eq!(insert.parent_file().name(), "msg.proto");
}

#[test]
fn upstream_openmldb_file_replaces_the_builtin_one() {
    let dir = fixtures("openmldb-upstream");
    let mut set = SchemaSet::builtin();
    set.add_proto_files(std::slice::from_ref(&dir), &[PathBuf::from("data_sync.proto")]).unwrap();
    assert!(matches!(
        status(&set, "openmldb/data_sync.proto"),
        BuiltinUse::SetAside(SetAsideReason::Replaced { .. })
    ));
    let svc = set.pool().get_service_by_name("openmldb.datasync.SyncTool").unwrap();
    assert!(
        svc.methods().any(|m| m.name() == "DelelteSyncTask"),
        "upstream's spelling is kept in the schema"
    );
    assert!(svc.methods().all(|m| m.name() != "DeleteSyncTask"));
    // The progress-file types still decode as before.
    set.message("openmldb.datasync.AddSyncTaskRequest").unwrap();
    assert_eq!(status(&set, "milvus/messages.proto"), &BuiltinUse::InUse);
}

const BIN: &str = env!("CARGO_BIN_EXE_walscope");

fn walscope(args: &[&str]) -> std::process::Output {
    std::process::Command::new(BIN).args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn cli_shows_the_full_service_and_sends_a_method_only_the_upstream_schema_has() {
    let dir = fixtures("milvus-upstream");
    let (dir, top) = (dir.to_str().unwrap(), dir.join("milvus.proto"));
    let load = ["--proto-path", dir, "--proto", top.to_str().unwrap()];
    let o = walscope(&[&["schema", "show", "milvus.proto.milvus.MilvusService"][..], &load].concat());
    let show = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(show.starts_with("// milvus.proto (proto file "), "{show}");
    for rpc in [
        "rpc ShowCollections(milvus.proto.milvus.ShowCollectionsRequest) returns (milvus.proto.milvus.ShowCollectionsResponse);",
        "rpc DumpMessages(milvus.proto.milvus.DumpMessagesRequest) returns (stream milvus.proto.milvus.DumpMessagesResponse);",
        "rpc Connect(",
    ] {
        assert!(show.contains(rpc), "{rpc} in\n{show}");
    }
    assert!(show.contains("\nbuilt-in files:\n"), "{show}");
    assert!(
        show.lines().any(|l| l.contains("milvus/common.proto")
            && l.contains("set aside: replaced by common.proto (proto file ")),
        "{show}"
    );
    assert!(
        show.lines()
            .any(|l| l.contains("milvus/messages.proto") && l.contains("in use, re-linked to common.proto")),
        "{show}"
    );
    let list =
        text(&walscope(&[&["schema", "list", "--filter", "ShowCollections"][..], &load].concat()).stdout);
    assert!(list.contains("message  milvus.proto.milvus.ShowCollectionsRequest"), "{list}");

    let rt = tokio::runtime::Runtime::new().unwrap();
    let demo = rt.block_on(walscope::sim::milvus::MilvusDemo::start(Default::default())).unwrap();
    let addr = demo.addr().to_string();
    // Without the upstream schema the method is unknown and nothing is sent.
    let o = walscope(&["call", &addr, "milvus.proto.milvus.MilvusService/ShowCollections", "-d", "{}"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("has no method ShowCollections"), "{}", text(&o.stderr));
    // With it the request is encoded and sent: the server answers for that very method.
    let o = walscope(
        &[
            &[
                "call",
                &addr,
                "milvus.proto.milvus.MilvusService/ShowCollections",
                "-d",
                r#"{"db_name": "default"}"#,
            ][..],
            &load,
        ]
        .concat(),
    );
    let err = text(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("UNIMPLEMENTED (12): unknown method milvus.proto.milvus.MilvusService/ShowCollections"),
        "the server saw the method: {err}"
    );
    // The methods both schemas know still work, typed by the upstream definitions.
    let o = walscope(&[&["call", &addr, "milvus.proto.milvus.MilvusService/GetVersion"][..], &load].concat());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["version"], "v2.6.20-walscope-demo");
}

#[test]
fn cli_deletes_a_sync_task_with_the_upstream_openmldb_schema() {
    let dir = fixtures("openmldb-upstream");
    let (dir, top) = (dir.to_str().unwrap(), dir.join("data_sync.proto"));
    let load = ["--proto-path", dir, "--proto", top.to_str().unwrap()];
    let rt = tokio::runtime::Runtime::new().unwrap();
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let demo = rt
        .block_on(walscope::sim::datasync::DatasyncDemo::start(
            any,
            any,
            std::time::Duration::from_secs(30),
            Default::default(),
        ))
        .unwrap();
    let addr = demo.synctool.addr().to_string();
    let show =
        text(&walscope(&[&["schema", "show", "openmldb.datasync.SyncTool"][..], &load].concat()).stdout);
    assert!(show.contains("rpc DelelteSyncTask("), "{show}");
    for transport in ["brpc", "http"] {
        let create = walscope(
            &[
                &["call", &addr, "openmldb.datasync.SyncTool/CreateSyncTask", "--transport", transport, "-d"]
                    [..],
                &[r#"{"db": "demo_db", "name": "orders", "mode": 2}"#],
                &load,
            ]
            .concat(),
        );
        assert!(create.status.success(), "{}", text(&create.stderr));
        // Asked for under either spelling, the request goes out as DeleteSyncTask, which the
        // server knows (it refuses `DelelteSyncTask` as brpc-java does).
        for name in ["DeleteSyncTask", "DelelteSyncTask"] {
            let o = walscope(
                &[
                    &[
                        "call",
                        &addr,
                        &format!("openmldb.datasync.SyncTool/{name}"),
                        "--transport",
                        transport,
                        "-d",
                    ][..],
                    &[r#"{"db": "demo_db", "name": "orders"}"#],
                    &load,
                ]
                .concat(),
            );
            assert!(o.status.success(), "{name} over {transport}: {}", text(&o.stderr));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            if name == "DeleteSyncTask" {
                assert_eq!(v["code"].as_i64().unwrap_or(0), 0, "{v}");
            } else {
                // The task is gone by now: the server says so, which proves it understood.
                assert_ne!(v["code"].as_i64().unwrap_or(0), 0, "{v}");
                assert!(
                    v["msg"].as_str().unwrap_or("").contains("orders") || v["msg"].as_str().is_some(),
                    "{v}"
                );
            }
        }
    }
}

/// The fixtures must stay a field-compatible superset of the built-ins (tests/fixtures/README.md):
/// every built-in message and enum of the four replaced files, field by field.
#[test]
fn fixtures_are_a_superset_of_every_builtin_type() {
    use prost_reflect::{Kind, MessageDescriptor};
    let builtin = SchemaSet::builtin();
    let upstream = with_upstream_milvus();
    let fields = |m: &MessageDescriptor| -> Vec<(u32, String, String, bool)> {
        m.fields()
            .map(|f| {
                let kind = match f.kind() {
                    Kind::Message(d) => d.full_name().to_string(),
                    Kind::Enum(e) => e.full_name().to_string(),
                    k => format!("{k:?}"),
                };
                (f.number(), f.name().to_string(), kind, f.is_list())
            })
            .collect()
    };
    let files = ["milvus/common.proto", "milvus/schema.proto", "milvus/msg.proto", "milvus/milvus.proto"];
    let mut checked = 0;
    for m in builtin.pool().all_messages().filter(|m| files.contains(&m.parent_file().name())) {
        let theirs = upstream
            .pool()
            .get_message_by_name(m.full_name())
            .unwrap_or_else(|| panic!("fixtures lack {}", m.full_name()));
        let theirs = fields(&theirs);
        for f in fields(&m) {
            assert!(
                theirs.contains(&f),
                "{}: field {f:?} differs or is missing in the fixtures",
                m.full_name()
            );
        }
        checked += 1;
    }
    for e in builtin.pool().all_enums().filter(|e| files.contains(&e.parent_file().name())) {
        let theirs = upstream
            .pool()
            .get_enum_by_name(e.full_name())
            .unwrap_or_else(|| panic!("fixtures lack {}", e.full_name()));
        for v in e.values() {
            assert_eq!(
                theirs.get_value(v.number()).map(|t| t.name().to_string()),
                Some(v.name().to_string()),
                "{}",
                e.full_name()
            );
        }
        checked += 1;
    }
    assert!(checked > 80, "{checked}");
}
