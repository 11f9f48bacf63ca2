//! Loading schemas from .proto files and descriptor sets, and the wording of every failure.

use prost::Message;
use std::path::{Path, PathBuf};
use walscope::schema::{BuiltinUse, Origin, SchemaError, SchemaSet, SetAsideReason};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

fn descriptor_set(dir: &Path, file: &str, with_imports: bool) -> Vec<u8> {
    let mut c = protox::Compiler::new([dir]).unwrap();
    c.include_imports(with_imports);
    c.open_file(file).unwrap();
    c.file_descriptor_set().encode_to_vec()
}

#[test]
fn proto_files_with_import_paths_and_well_known_types() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("lib");
    write(&lib, "acme/common.proto", "syntax = \"proto3\"; package acme; message Ref { string id = 1; }");
    let main = write(
        dir.path(),
        "svc/main.proto",
        "syntax = \"proto3\"; package acme.svc;\nimport \"acme/common.proto\";\nimport \"google/protobuf/timestamp.proto\";\nmessage Req { acme.Ref ref = 1; google.protobuf.Timestamp at = 2; }",
    );
    let mut set = SchemaSet::builtin();
    set.add_proto_files(std::slice::from_ref(&lib), std::slice::from_ref(&main)).unwrap();
    let req = set.message("acme.svc.Req").unwrap();
    assert_eq!(req.fields().count(), 2);
    assert_eq!(
        set.origin_of_file("svc/main.proto").or(set.origin_of_file("main.proto")),
        Some(&Origin::ProtoFile(main))
    );
    // The built-in types are still there beside the new ones.
    set.message("openmldb.datasync.SyncPoint").unwrap();
}

#[test]
fn unresolved_import_names_the_file_and_every_path_searched() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    std::fs::create_dir_all(&b).unwrap();
    write(
        &a,
        "top.proto",
        "syntax = \"proto3\";\npackage t;\nimport \"deps/missing.proto\";\nmessage M {}\n",
    );
    let err = SchemaSet::empty().add_proto_files(&[a.clone(), b.clone()], &["top.proto".into()]).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, SchemaError::ImportNotFound { .. }), "{text}");
    assert!(text.contains("top.proto: import \"deps/missing.proto\" not found"), "{text}");
    assert!(text.contains("top.proto:3:1") || text.contains("top.proto:3:"), "line of the import: {text}");
    let a = std::fs::canonicalize(&a).unwrap();
    let b = std::fs::canonicalize(&b).unwrap();
    assert!(text.contains(&a.display().to_string()) && text.contains(&b.display().to_string()), "{text}");
    assert!(text.contains("bundled google/protobuf"), "{text}");
    assert!(text.contains("--proto-path"), "says what to do: {text}");
}

#[test]
fn missing_proto_file_lists_search_paths() {
    let dir = tempfile::tempdir().unwrap();
    let err =
        SchemaSet::empty().add_proto_files(&[dir.path().to_path_buf()], &["nope.proto".into()]).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("\"nope.proto\" not found"), "{text}");
    assert!(text.contains(&std::fs::canonicalize(dir.path()).unwrap().display().to_string()), "{text}");
}

#[test]
fn syntax_error_gives_file_line_column_and_the_parser_message() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "bad.proto", "syntax = \"proto3\";\npackage t;\n\nmessage A {\n  int32 x = ;\n}\n");
    let err =
        SchemaSet::empty().add_proto_files(&[dir.path().to_path_buf()], &["bad.proto".into()]).unwrap_err();
    let text = err.to_string();
    match &err {
        SchemaError::Syntax { file, line, column, message } => {
            assert_eq!(file, "bad.proto");
            assert_eq!((*line, *column), (5, 13), "{text}");
            assert!(message.contains("expected an integer"), "{message}");
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
    assert!(text.starts_with("bad.proto:5:13: syntax error: "), "{text}");
}

#[test]
fn semantic_error_gives_location() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "sem.proto", "syntax = \"proto3\";\npackage t;\nmessage A {\n  Nope x = 1;\n}\n");
    let err =
        SchemaSet::empty().add_proto_files(&[dir.path().to_path_buf()], &["sem.proto".into()]).unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("sem.proto:4:3: "), "{text}");
    assert!(text.contains("Nope"), "{text}");
}

#[test]
fn a_user_definition_of_a_builtin_symbol_wins_and_sets_the_builtin_file_aside() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "clash.proto",
        "syntax = \"proto2\"; package openmldb.datasync; message SyncPoint { optional int32 x = 1; }",
    );
    let mut set = SchemaSet::builtin();
    set.add_proto_files(&[], std::slice::from_ref(&p)).unwrap();
    // The user's SyncPoint is the one in the pool; the built-in file went as a whole.
    assert_eq!(set.message("openmldb.datasync.SyncPoint").unwrap().fields().count(), 1);
    assert!(set.pool().get_message_by_name("openmldb.datasync.Task").is_none());
    let status = set.builtin_files().iter().find(|f| f.file == "openmldb/data_sync.proto").unwrap();
    match &status.status {
        BuiltinUse::SetAside(SetAsideReason::Replaced { by }) => {
            assert_eq!(by, &vec![("clash.proto".to_string(), Origin::ProtoFile(p.clone()))]);
        }
        other => panic!("expected set aside, got {other:?}"),
    }
    let text = status.status.to_string();
    assert!(text.starts_with("set aside: replaced by clash.proto (proto file "), "{text}");
    // The other built-in files stay in use, untouched.
    let milvus = set.builtin_files().iter().find(|f| f.file == "milvus/messages.proto").unwrap();
    assert_eq!(milvus.status, BuiltinUse::InUse);
    set.message("milvus.proto.messages.InsertMessageHeader").unwrap();
}

#[test]
fn two_user_sources_defining_one_symbol_identically_merge_and_differently_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "one.proto", "syntax = \"proto3\"; package dup; message X { int64 id = 1; }");
    write(
        dir.path(),
        "two.proto",
        "syntax = \"proto3\"; package dup; message X { int64 id = 1; }\nmessage Y { X x = 1; }",
    );
    write(dir.path(), "three.proto", "syntax = \"proto3\"; package dup; message X { string id = 1; }");
    write(
        dir.path(),
        "uses_two.proto",
        "syntax = \"proto3\"; package use2; import \"two.proto\"; message Z { dup.X x = 1; dup.Y y = 2; }",
    );
    let [s1, s2, s3, s4] = ["one.proto", "two.proto", "three.proto", "uses_two.proto"].map(|f| {
        let out = dir.path().join(f.replace(".proto", ".pb"));
        std::fs::write(&out, descriptor_set(dir.path(), f, true)).unwrap();
        out
    });
    let mut set = SchemaSet::empty();
    set.add_descriptor_set(&s1).unwrap();
    // Identical: accepted, one X, and two.proto's own Y still sees it.
    set.add_descriptor_set(&s2).unwrap();
    assert_eq!(set.message("dup.X").unwrap().parent_file().name(), "one.proto");
    assert_eq!(
        set.message("dup.Y").unwrap().get_field(1).unwrap().kind().as_message().unwrap().full_name(),
        "dup.X"
    );
    // A file importing two.proto still reaches X through it.
    set.add_descriptor_set(&s4).unwrap();
    assert_eq!(set.message("use2.Z").unwrap().fields().count(), 2);
    // Different: refused with both origins and what differs, and the set is unchanged.
    let err = set.add_descriptor_set(&s3).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, SchemaError::DuplicateSymbol { .. }), "{text}");
    assert!(text.contains(&format!("defined in one.proto (descriptor set {})", s1.display())), "{text}");
    assert!(text.contains(&format!("in three.proto (descriptor set {})", s3.display())), "{text}");
    assert!(
        text.contains("differs: field 1 `id` is `int64` in the built-in and `string` in three.proto"),
        "{text}"
    );
    assert_eq!(set.message("dup.X").unwrap().get_field(1).unwrap().kind(), prost_reflect::Kind::Int64);
}

#[test]
fn a_builtin_file_whose_dependency_is_replaced_is_relinked_or_set_aside_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    // Milvus: replace milvus/common.proto's Status with a copy that changes one field's type.
    write(
        dir.path(),
        "common.proto",
        &std::fs::read_to_string("proto/milvus/common.proto")
            .unwrap()
            .replace("int32 code = 3;", "string code = 3;"),
    );
    let mut set = SchemaSet::builtin();
    set.add_proto_files(&[dir.path().to_path_buf()], &["common.proto".into()]).unwrap();
    let notices = set.notices();
    assert!(!notices.is_empty(), "a changed field type must be reported");
    let all = notices.join("\n");
    assert!(all.contains("milvus.proto.common.Status"), "{all}");
    assert!(all.contains("built-in milvus/common.proto"), "{all}");
    assert!(all.contains("common.proto (proto file "), "{all}");
    assert!(all.contains("field 3 `code` is `int32` in the built-in and `string` in common.proto"), "{all}");
    assert!(all.contains("still works: every type you loaded"), "{all}");
    // The user's types load; the WAL types that needed the old Status are set aside.
    assert_eq!(
        set.message("milvus.proto.common.Status").unwrap().get_field(3).unwrap().kind(),
        prost_reflect::Kind::String
    );
    assert!(set.pool().get_message_by_name("milvus.proto.messages.InsertMessageHeader").is_none());
    set.message("openmldb.datasync.SyncPoint").unwrap();
}

#[test]
fn descriptor_sets_with_and_without_imports() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "dep.proto", "syntax = \"proto3\"; package d; message Dep { int32 v = 1; }");
    write(
        dir.path(),
        "use.proto",
        "syntax = \"proto3\"; package u; import \"dep.proto\"; import \"google/protobuf/duration.proto\"; message Use { d.Dep dep = 1; google.protobuf.Duration wait = 2; }",
    );
    let full = dir.path().join("full.protoset");
    std::fs::write(&full, descriptor_set(dir.path(), "use.proto", true)).unwrap();
    let mut set = SchemaSet::empty();
    set.add_descriptor_set(&full).unwrap();
    set.message("u.Use").unwrap();

    // Without imports: the missing user dependency is named; well-known ones come bundled.
    let bare = dir.path().join("bare.desc");
    std::fs::write(&bare, descriptor_set(dir.path(), "use.proto", false)).unwrap();
    let err = SchemaSet::empty().add_descriptor_set(&bare).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, SchemaError::MissingDependency { ref dependency, .. } if dependency == "dep.proto"),
        "{text}"
    );
    assert!(
        text.contains(&format!("descriptor set {}: \"use.proto\" imports \"dep.proto\"", bare.display())),
        "{text}"
    );
    assert!(text.contains("--include_imports"), "{text}");
    // Loading the dependency first makes the bare set load.
    let dep_set = dir.path().join("dep.pb");
    std::fs::write(&dep_set, descriptor_set(dir.path(), "dep.proto", false)).unwrap();
    let mut set = SchemaSet::empty();
    set.add_descriptor_set(&dep_set).unwrap();
    set.add_descriptor_set(&bare).unwrap();
    assert_eq!(set.message("u.Use").unwrap().fields().count(), 2);
}

#[test]
fn not_a_descriptor_set_and_unknown_types() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "x.pb", "syntax = \"proto3\";");
    let text = SchemaSet::empty().add_descriptor_set(&src).unwrap_err().to_string();
    assert!(text.contains("not a protobuf descriptor set (this looks like .proto source text)"), "{text}");
    let junk = dir.path().join("junk.pb");
    std::fs::write(&junk, [0xff, 0xff, 0xff]).unwrap();
    let text = SchemaSet::empty().add_descriptor_set(&junk).unwrap_err().to_string();
    assert!(text.contains("not a protobuf descriptor set"), "{text}");
    let text = SchemaSet::empty().add_descriptor_set(&dir.path().join("absent.pb")).unwrap_err().to_string();
    assert!(text.contains("absent.pb: cannot read"), "{text}");

    let set = SchemaSet::builtin();
    let text = set.message("SyncPiont").unwrap_err().to_string();
    assert!(text.contains("unknown type \"SyncPiont\"; did you mean openmldb.datasync.SyncPoint?"), "{text}");
    assert_eq!(set.message("SyncPoint").unwrap().full_name(), "openmldb.datasync.SyncPoint");
    assert_eq!(set.message(".milvus.proto.common.MessageID").unwrap().name(), "MessageID");
}

#[test]
fn builtin_schemas_have_the_upstream_names_and_numbers() {
    let set = SchemaSet::builtin();
    let pool = set.pool();
    let field = |m: &str, f: &str| {
        pool.get_message_by_name(m)
            .unwrap_or_else(|| panic!("{m}"))
            .get_field_by_name(f)
            .unwrap_or_else(|| panic!("{m}.{f}"))
            .number()
    };
    assert_eq!(field("milvus.proto.common.ImmutableMessage", "properties"), 3);
    assert_eq!(field("milvus.proto.milvus.DumpMessagesResponse", "message"), 2);
    assert_eq!(field("milvus.proto.msg.InsertRequest", "fields_data"), 13);
    assert_eq!(field("milvus.proto.messages.TxnContext", "keepalive_milliseconds"), 2);
    assert_eq!(field("openmldb.datasync.Task", "progress"), 1);
    assert_eq!(field("brpc.policy.RpcMeta", "correlation_id"), 4);
    assert!(pool.get_message_by_name("brpc.policy.RpcRequestMeta").unwrap().get_field(7).is_none());
    let svc = pool.get_service_by_name("openmldb.datasync.SyncTool").unwrap();
    assert!(svc.methods().any(|m| m.name() == "DeleteSyncTask"));
    let milvus = pool.get_service_by_name("milvus.proto.milvus.MilvusService").unwrap();
    assert!(milvus.methods().any(|m| m.name() == "DumpMessages" && m.is_server_streaming()));
    let mt = pool.get_enum_by_name("milvus.proto.messages.MessageType").unwrap();
    for (name, n) in [("Insert", 2), ("AlterReplicateConfig", 800), ("BeginTxn", 900), ("Txn", 999)] {
        assert_eq!(mt.get_value_by_name(name).unwrap().number(), n);
    }
    for t in [
        "Insert",
        "Delete",
        "CreateCollection",
        "Flush",
        "BeginTxn",
        "TruncateCollection",
        "CreateIndex",
        "DropDatabase",
    ] {
        assert!(
            pool.get_message_by_name(&format!("milvus.proto.messages.{t}MessageHeader")).is_some(),
            "{t}"
        );
    }
    for t in [
        "Flush",
        "ManualFlush",
        "CreateSegment",
        "BeginTxn",
        "CommitTxn",
        "RollbackTxn",
        "Txn",
        "AlterCollection",
        "AlterReplicateConfig",
        "CreateIndex",
        "DropIndex",
        "CreateDatabase",
    ] {
        assert!(pool.get_message_by_name(&format!("milvus.proto.messages.{t}MessageBody")).is_some(), "{t}");
    }
    assert_eq!(
        pool.get_message_by_name("openmldb.datasync.SyncPoint").unwrap().parent_file().syntax(),
        prost_reflect::Syntax::Proto2
    );
}
