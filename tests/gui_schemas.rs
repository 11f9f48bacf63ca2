//! The schemas panel, headless with egui_kittest: sources, search, a definition, and loading a
//! .proto file (a syntax error is explained with file:line:column; a good file adds its types).

use crate::common::gui::harness;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use std::time::{Duration, Instant};
use walscope::ui::WalscopeApp;

#[test]
fn browse_search_and_load_schemas() {
    let mut h = harness([1400.0, 1000.0], WalscopeApp::new());
    h.step();
    h.get_by_label("View").click();
    for _ in 0..5 {
        h.step();
    }
    h.get_by_label("Schemas panel").click();
    h.step();
    h.step();
    h.get_by_label_contains("built-in schema (");
    h.get_by_label("Find type:").click();
    h.get_by_label("Find type:").type_text("syncpoint");
    h.step();
    h.get_by_label("message openmldb.datasync.SyncPoint").click();
    h.step();
    h.step();
    h.get_by_label_contains("required SyncType type = 1;");

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.proto"), "syntax = \"proto3\";\nmessage A {\n  int32 x = ;\n}\n")
        .unwrap();
    std::fs::write(
        dir.path().join("good.proto"),
        "syntax = \"proto3\"; package mine; message Ping { string note = 1; }",
    )
    .unwrap();
    let load = |h: &mut Harness<'static, WalscopeApp>, file: &str| {
        h.state_mut().schemas_state.proto_file = dir.path().join(file).display().to_string();
        h.step();
        h.get_by_label("Load .proto").click();
        let start = Instant::now();
        loop {
            h.step();
            if h.state().schemas_state.last_load.is_some() {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "load never finished");
            std::thread::sleep(Duration::from_millis(10));
        }
        h.step();
    };
    load(&mut h, "bad.proto");
    h.get_by_label_contains("Not loaded:");
    h.get_by_label_contains("bad.proto:3:13: syntax error");
    load(&mut h, "good.proto");
    h.get_by_label_contains("loaded: 1 new types");
    assert!(h.state().schemas.message("mine.Ping").is_ok());

    // Editions: the window loads through the same library function, says what it refuses in
    // editions terms and lists a loaded editions file with its edition.
    std::fs::write(
        dir.path().join("ed_bad.proto"),
        "edition = \"2023\";\nmessage B {\n  int32 n = 1 [default = 3];\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("ed.proto"),
        "edition = \"2023\";\npackage ed;\nmessage Pong { int32 n = 1; repeated int32 r = 2; }\n",
    )
    .unwrap();
    load(&mut h, "ed_bad.proto");
    h.get_by_label_contains("Not loaded:");
    h.get_by_label_contains("ed_bad.proto:3:");
    h.get_by_label_contains("edition 2023: default values");
    load(&mut h, "ed.proto");
    h.get_by_label_contains("loaded: 1 new types");
    assert!(h.state().schemas.message("ed.Pong").is_ok());
    h.get_by_label_contains("ed.proto (1 file)").click();
    h.step();
    h.step();
    h.get_by_label("ed.proto (edition 2023)");
}

/// The type tree (package → type → fields) and schemas fetched by gRPC reflection from a real
/// demo Milvus on loopback; a dead server is explained.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn package_tree_and_reflection() {
    use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig};
    let addr = "127.0.0.1:0".parse().unwrap();
    let server =
        MilvusDemo::start(MilvusDemoConfig { addr, reflection: true, ..Default::default() }).await.unwrap();
    let endpoint = server.addr().to_string();
    tokio::task::spawn_blocking(move || {
        let mut h = harness([1400.0, 1000.0], WalscopeApp::new());
        h.step();
        h.state_mut().show_schemas = true;
        for _ in 0..5 {
            h.step();
        }
        // Package, then type, then its fields.
        h.get_by_label_contains("brpc.policy (").click();
        for _ in 0..10 {
            h.step();
        }
        h.get_by_label("message RpcMeta").click();
        for _ in 0..10 {
            h.step();
        }
        h.get_by_label("request = 1: brpc.policy.RpcRequestMeta");
        h.get_by_label_contains("message brpc.policy.RpcMeta {");

        let fetch = |h: &mut Harness<'static, WalscopeApp>, from: &str| {
            h.state_mut().schemas_state.reflect_from = from.to_string();
            h.state_mut().schemas_state.last_load = None;
            h.step();
            h.get_by_label("Fetch by reflection").click();
            let start = Instant::now();
            while h.state().schemas_state.last_load.is_none() {
                assert!(start.elapsed() < Duration::from_secs(30), "the fetch never finished");
                h.step();
                std::thread::sleep(Duration::from_millis(20));
            }
            h.step();
        };
        fetch(&mut h, &endpoint);
        assert!(
            matches!(h.state().schemas_state.last_load, Some(Ok(_))),
            "{:?}",
            h.state().schemas_state.last_load
        );
        h.get_by_label_contains(&format!(
            "server reflection at {endpoint}: milvus.proto.milvus.MilvusService"
        ));

        let (_held, dead) = crate::common::refused_address();
        let dead = dead.to_string();
        fetch(&mut h, &dead);
        h.get_by_label_contains("Not loaded:");
        h.get_by_label_contains(&dead);
    })
    .await
    .unwrap();
}

/// The upstream-layout Milvus files loaded beside the built-ins from the panel: the panel says
/// which built-in files are set aside and by what, and which are re-linked; a load whose types
/// break the link says so in one message.
#[test]
fn upstream_schemas_beside_the_builtins() {
    let mut h = harness([1400.0, 1400.0], WalscopeApp::new());
    h.step();
    h.state_mut().show_schemas = true;
    for _ in 0..5 {
        h.step();
    }
    h.get_by_label_contains("Built-in files (9 in use)").click();
    h.step();
    let load = |h: &mut Harness<'static, WalscopeApp>, dir: &std::path::Path, file: &str| {
        h.state_mut().schemas_state.proto_file = file.to_string();
        h.state_mut().schemas_state.import_paths = dir.display().to_string();
        h.state_mut().schemas_state.last_load = None;
        h.step();
        h.get_by_label("Load .proto").click();
        let start = Instant::now();
        while h.state().schemas_state.last_load.is_none() {
            assert!(start.elapsed() < Duration::from_secs(20), "load never finished");
            h.step();
            std::thread::sleep(Duration::from_millis(10));
        }
        for _ in 0..3 {
            h.step();
        }
    };
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/milvus-upstream");
    load(&mut h, &fixtures, "milvus.proto");
    assert!(
        matches!(h.state().schemas_state.last_load, Some(Ok(_))),
        "{:?}",
        h.state().schemas_state.last_load
    );
    h.get_by_label_contains("yours replace the built-in milvus/common.proto");
    h.get_by_label_contains("Built-in files (5 in use, 4 set aside)");
    h.get_by_label_contains("set aside: replaced by common.proto (proto file ");
    h.get_by_label_contains("in use, re-linked to common.proto");
    assert!(h.state().schemas.message("milvus.proto.messages.InsertMessageHeader").is_ok());

    // A Status that changes a field the WAL types rely on: one message naming both sides.
    let dir = tempfile::tempdir().unwrap();
    let common = std::fs::read_to_string(fixtures.join("common.proto")).unwrap();
    assert!(common.contains("int32 code = 3;"));
    std::fs::write(dir.path().join("common.proto"), common.replace("int32 code = 3;", "int64 code = 3;"))
        .unwrap();
    let mut h = harness([1400.0, 1400.0], WalscopeApp::new());
    h.step();
    h.state_mut().show_schemas = true;
    h.step();
    load(&mut h, dir.path(), "common.proto");
    let node = h.get_by_label_contains("Note: built-in milvus/");
    let notice = node.accesskit_node().label().or(node.accesskit_node().value()).unwrap_or_default();
    assert!(notice.contains("is set aside: it needs milvus.proto.common.Status as defined in built-in milvus/common.proto, but common.proto (proto file "), "{notice}");
    assert!(notice.contains("still works: every type you loaded"), "{notice}");
    h.get_by_label_contains("field 3 `code` is `int32` in the built-in and `int64` in common.proto");
}
