//! The built-in schemas against the protos the official Milvus clients ship, field by field
//! (`walscope::schema::compare`): the Rust SDK's `milvus-proto/proto/*.proto`, fetched from
//! crates.io at test time into a temporary Cargo project and compiled with protox (never copied
//! into the repository), and pymilvus's generated descriptors (scripts/pymilvus-descriptor-set.py).
//! In every message and enum both define: no conflict of number, name or type, and no field or
//! value of theirs missing from ours.
//!
//! Needs crates.io (and PyPI for pymilvus, through scripts/python-env.sh) the first time; without
//! them these tests fail with words, they never pass silently.

use crate::common;

use prost_reflect::DescriptorPool;
use std::path::{Path, PathBuf};
use std::process::Command;
use walscope::schema::SchemaSet;
use walscope::schema::compare::{Difference, compare};

const SDK_VERSION: &str = "3.0.3";

/// The one allowed difference, kept narrow (one message, one number, these two exact types):
/// `ImportMsg` field 10 is `string idempotency_key` in milvus-proto master (9810b92, #633) and our
/// built-in, `int64 version` in the SDK 3.0.3's milvus-proto. walscope decodes both: a varint in
/// field 10 is shown as an unknown field with a note (`walscope::wal::import_version_note`).
fn allowed(d: &Difference) -> bool {
    matches!(d, Difference::FieldConflict { message, number: 10, ours, theirs }
        if message == "milvus.proto.msg.ImportMsg"
            && ours == "string idempotency_key"
            && theirs == "int64 version")
}

/// Runs `cargo metadata` in a throwaway project that depends on the SDK, so cargo downloads it
/// from crates.io into its registry cache, and returns the SDK's `milvus-proto/proto` folder.
fn sdk_proto_dir(project: &Path) -> PathBuf {
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(
        project.join("Cargo.toml"),
        format!(
            "[package]\nname = \"walscope-sdk-probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
             [dependencies]\nmilvus-sdk-rust = \"={SDK_VERSION}\"\n\n[workspace]\n"
        ),
    )
    .unwrap();
    std::fs::write(project.join("src/lib.rs"), "").unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1"])
        .current_dir(project)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "could not fetch milvus-sdk-rust {SDK_VERSION} from crates.io (is the registry reachable? \
         this test needs it): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    let manifest = meta["packages"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "milvus-sdk-rust" && p["version"] == SDK_VERSION))
        .and_then(|p| p["manifest_path"].as_str())
        .unwrap_or_else(|| panic!("cargo metadata lists no milvus-sdk-rust {SDK_VERSION}"));
    let dir = Path::new(manifest).parent().unwrap().join("milvus-proto/proto");
    assert!(dir.is_dir(), "milvus-sdk-rust {SDK_VERSION} carries no {}", dir.display());
    dir
}

/// Every `.proto` of `dir`, compiled together with protox.
fn compile_dir(dir: &Path) -> DescriptorPool {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".proto"))
        .collect();
    files.sort();
    assert!(files.iter().any(|f| f == "milvus.proto"), "{files:?}");
    let fds = protox::compile(&files, [dir]).unwrap_or_else(|e| panic!("the SDK's protos compile: {e:?}"));
    DescriptorPool::from_file_descriptor_set(fds).unwrap()
}

/// Fails listing every difference but the allowed one, in words.
fn assert_agrees(theirs: &DescriptorPool, who: &str) {
    let builtin = SchemaSet::builtin();
    let diffs = compare(builtin.pool(), theirs);
    let shared =
        theirs.all_messages().filter(|m| builtin.pool().get_message_by_name(m.full_name()).is_some()).count();
    assert!(shared > 50, "only {shared} messages in common with {who}: not the schemas expected");
    let bad: Vec<String> = diffs.iter().filter(|d| !allowed(d)).map(|d| d.to_string()).collect();
    let conflicts = diffs.iter().filter(|d| d.is_conflict() && !allowed(d)).count();
    assert!(
        bad.is_empty(),
        "the built-in schemas differ from {who} in {} places ({conflicts} conflicts, {} gaps):\n{}",
        bad.len(),
        bad.len() - conflicts,
        bad.join("\n")
    );
}

#[test]
fn builtins_agree_with_the_official_rust_sdk_protos() {
    let dir = tempfile::tempdir().unwrap();
    let protos = sdk_proto_dir(&dir.path().join("probe"));
    let theirs = compile_dir(&protos);
    assert_agrees(&theirs, &format!("milvus-sdk-rust {SDK_VERSION}"));
}

#[test]
fn builtins_agree_with_pymilvus_descriptors() {
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("pymilvus.pb");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pymilvus-descriptor-set.py");
    let out =
        Command::new(common::venv_python()).arg(script).arg(&set).output().expect("the venv python runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let theirs = DescriptorPool::decode(std::fs::read(&set).unwrap().as_slice()).expect("a loadable set");
    let who = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("pymilvus").to_string();
    assert_agrees(&theirs, &who);
}

/// The exception is as narrow as it says: the same field with any other type, or another field
/// of ImportMsg, is still a difference.
#[test]
fn the_import_exception_is_narrow() {
    let conflict = |number, ours: &str, theirs: &str| Difference::FieldConflict {
        message: "milvus.proto.msg.ImportMsg".into(),
        number,
        ours: ours.into(),
        theirs: theirs.into(),
    };
    assert!(allowed(&conflict(10, "string idempotency_key", "int64 version")));
    assert!(!allowed(&conflict(10, "string idempotency_key", "int32 version")));
    assert!(!allowed(&conflict(9, "int64 jobID", "int64 version")));
    assert!(!allowed(&Difference::MissingField {
        message: "milvus.proto.msg.ImportMsg".into(),
        number: 10,
        theirs: "int64 version".into()
    }));
}
