//! Protobuf editions: the fixtures in `tests/fixtures/editions/` (edition 2023, one file walscope
//! holds as proto3 and one it holds as proto2) and an edition 2024 file load from source and
//! from a descriptor set built by Google's protoc, and decode bytes protoc encoded to the
//! values protoc was given, re-encoding to the same bytes; the CLI decodes them; what walscope
//! does not read is refused in editions terms with file:line. protoc comes from the
//! `protoc-bin-vendored` crate at test time (`common::protoc`).

use crate::common::protoc::protoc;
use prost::Message;
use prost_reflect::{DynamicMessage, MessageDescriptor, Syntax, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use walscope::schema::{Edition, Origin, SchemaError, SchemaSet};

const BIN: &str = env!("CARGO_BIN_EXE_walscope");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/editions");

const ENTRY: &str = "walscope.editions.Entry";
const PARCEL: &str = "walscope.editions.Parcel";

const ENTRY_TEXT: &str = r#"
id: 7
amount: 0
memo: "rent"
packed_ticks: [1, 2, 300]
expanded_deltas: [-1, 5]
kind: KIND_CREDIT
note { text: "n" weight: 3 }
notes { key: "a" value { text: "x" weight: 1 } }
ledger_id: 99
cleared: true
"#;

const PARCEL_TEXT: &str = r#"
code: "P-1"
label { to: "Oslo" zones: [1, 2] }
history { to: "Bergen" }
history { to: "Tromso" zones: [9] }
status: STATUS_SENT
charge { id: 1 amount: 5 account: "acct" }
weight: 0
relabel { to: "Alta" }
"#;

/// A temp copy of the fixtures (never the repository's files).
fn fixtures() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in ["ledger.proto", "parcel.proto"] {
        std::fs::copy(Path::new(FIXTURES).join(f), dir.path().join(f)).unwrap();
    }
    dir
}

fn from_source(dir: &Path) -> SchemaSet {
    let mut set = SchemaSet::builtin();
    set.add_proto_files(&[dir.to_path_buf()], &[PathBuf::from("parcel.proto")]).unwrap();
    set
}

fn from_protoc_set(dir: &Path) -> SchemaSet {
    let bytes = protoc().descriptor_set(dir, "parcel.proto");
    let mut set = SchemaSet::builtin();
    set.add_descriptor_set_bytes(&bytes, Origin::DescriptorSet(dir.join("parcel.pb"))).unwrap();
    set
}

fn decode(desc: MessageDescriptor, bytes: &[u8]) -> DynamicMessage {
    let msg = DynamicMessage::decode(desc, bytes).unwrap();
    assert_eq!(msg.encode_to_vec(), bytes, "re-encodes to protoc's bytes");
    msg
}

fn get(m: &DynamicMessage, name: &str) -> Value {
    assert!(m.has_field_by_name(name), "{name} is set in {m:?}");
    m.get_field_by_name(name).unwrap().into_owned()
}

fn child(m: &DynamicMessage, name: &str) -> DynamicMessage {
    get(m, name).as_message().unwrap().clone()
}

/// Every value of ENTRY_TEXT, read back from protoc's bytes.
fn check_entry(set: &SchemaSet, bytes: &[u8]) {
    let desc = set.message(ENTRY).unwrap();
    assert_eq!(desc.parent_file().syntax(), Syntax::Proto3, "ledger.proto needs nothing proto3 lacks");
    let m = decode(desc, bytes);
    assert_eq!(get(&m, "id").as_i64(), Some(7));
    // Explicit presence: the zero was sent and is kept.
    assert_eq!(get(&m, "amount").as_i32(), Some(0));
    assert_eq!(get(&m, "memo").as_str(), Some("rent"));
    let ticks: Vec<i32> =
        get(&m, "packed_ticks").as_list().unwrap().iter().map(|v| v.as_i32().unwrap()).collect();
    assert_eq!(ticks, [1, 2, 300]);
    let deltas: Vec<i64> =
        get(&m, "expanded_deltas").as_list().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
    assert_eq!(deltas, [-1, 5]);
    assert_eq!(get(&m, "kind").as_enum_number(), Some(2));
    assert_eq!(get(&child(&m, "note"), "weight").as_i32(), Some(3));
    let notes = get(&m, "notes");
    let (key, note) = notes.as_map().unwrap().iter().next().unwrap();
    assert_eq!(key.as_str(), Some("a"));
    assert_eq!(get(note.as_message().unwrap(), "text").as_str(), Some("x"));
    assert_eq!(get(&m, "ledger_id").as_u64(), Some(99));
    assert!(!m.has_field_by_name("account"), "one member of the oneof");
    assert_eq!(get(&m, "cleared").as_bool(), Some(true));
    // The packed list is one length-prefixed record, the expanded one a record per value.
    assert!(bytes.windows(6).any(|w| w == [0x22, 0x04, 0x01, 0x02, 0xac, 0x02]));
    assert!(bytes.windows(4).any(|w| w == [0x28, 0x01, 0x28, 0x0a]));
}

/// Every value of PARCEL_TEXT, read back from protoc's bytes.
fn check_parcel(set: &SchemaSet, bytes: &[u8]) {
    let desc = set.message(PARCEL).unwrap();
    assert_eq!(desc.parent_file().syntax(), Syntax::Proto2, "required, delimited and closed need proto2");
    assert!(desc.get_field_by_name("label").unwrap().is_group());
    let m = decode(desc, bytes);
    assert_eq!(get(&m, "code").as_str(), Some("P-1"));
    let label = child(&m, "label");
    assert_eq!(get(&label, "to").as_str(), Some("Oslo"));
    assert_eq!(get(&label, "zones").as_list().map(<[Value]>::len), Some(2));
    let history = get(&m, "history");
    let history = history.as_list().unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(get(history[1].as_message().unwrap(), "to").as_str(), Some("Tromso"));
    assert_eq!(get(&m, "status").as_enum_number(), Some(1));
    assert_eq!(get(&child(&m, "charge"), "amount").as_i32(), Some(5));
    // Implicit presence: protoc left the zero out, so nothing is there to show.
    assert!(!m.has_field_by_name("weight"));
    assert_eq!(get(&child(&m, "relabel"), "to").as_str(), Some("Alta"));
    // The delimited label: a start-group tag (2 << 3 | 3), not a length prefix.
    assert!(bytes.windows(2).any(|w| w == [0x13, 0x0a]));
}

#[test]
fn edition_2023_sources_decode_what_protoc_encoded() {
    let dir = fixtures();
    let p = protoc();
    assert!(p.version().starts_with("libprotoc 31."), "{}", p.version());
    let set = from_source(dir.path());
    assert_eq!(set.edition_of_file("parcel.proto"), Some(Edition::E2023));
    assert_eq!(set.edition_of_file("ledger.proto"), Some(Edition::E2023));
    check_entry(&set, &p.encode(dir.path(), "ledger.proto", ENTRY, ENTRY_TEXT));
    check_parcel(&set, &p.encode(dir.path(), "parcel.proto", PARCEL, PARCEL_TEXT));
}

#[test]
fn a_descriptor_set_protoc_built_from_editions_files_decodes_the_same() {
    let dir = fixtures();
    let p = protoc();
    let set = from_protoc_set(dir.path());
    assert_eq!(set.edition_of_file("parcel.proto"), Some(Edition::E2023));
    let entry = p.encode(dir.path(), "ledger.proto", ENTRY, ENTRY_TEXT);
    let parcel = p.encode(dir.path(), "parcel.proto", PARCEL, PARCEL_TEXT);
    check_entry(&set, &entry);
    check_parcel(&set, &parcel);
    // Source and set give one view of the same bytes.
    let source = from_source(dir.path());
    for (ty, bytes) in [(ENTRY, &entry), (PARCEL, &parcel)] {
        let a = DynamicMessage::decode(set.message(ty).unwrap(), bytes.as_slice()).unwrap();
        let b = DynamicMessage::decode(source.message(ty).unwrap(), bytes.as_slice()).unwrap();
        assert_eq!(serde_json::to_value(&a).unwrap(), serde_json::to_value(&b).unwrap(), "{ty}");
    }
}

#[test]
fn edition_2024_loads_from_source_and_from_protoc() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("v24.proto"),
        // A language feature too: walscope serves a stand-in for cpp_features.proto from source,
        // protoc puts its own in the set.
        "edition = \"2024\";\npackage v24;\nimport \"google/protobuf/cpp_features.proto\";\nmessage Point {\n  int32 x = 1;\n  int32 y = 2 [features.field_presence = IMPLICIT];\n  repeated uint32 tags = 3;\n  string label = 4 [features.(pb.cpp).string_type = VIEW];\n}\n",
    )
    .unwrap();
    let p = protoc();
    let bytes = p.encode(dir.path(), "v24.proto", "v24.Point", "x: 0 y: 4 tags: [5, 6] label: \"L\"");
    let mut source = SchemaSet::empty();
    source.add_proto_files(&[dir.path().to_path_buf()], &[PathBuf::from("v24.proto")]).unwrap();
    let mut from_set = SchemaSet::empty();
    from_set
        .add_descriptor_set_bytes(
            &p.descriptor_set(dir.path(), "v24.proto"),
            Origin::DescriptorSet("v24.pb".into()),
        )
        .unwrap();
    for set in [&source, &from_set] {
        assert_eq!(set.edition_of_file("v24.proto"), Some(Edition::E2024));
        let m = decode(set.message("v24.Point").unwrap(), &bytes);
        assert_eq!(get(&m, "x").as_i32(), Some(0), "explicit presence by default keeps the zero");
        assert_eq!(get(&m, "y").as_i32(), Some(4));
        assert_eq!(get(&m, "label").as_str(), Some("L"));
    }
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(BIN).args(args).output().expect("run walscope")
}

#[test]
fn the_cli_decodes_with_an_editions_proto_or_its_descriptor_set() {
    let dir = fixtures();
    let p = protoc();
    let input = dir.path().join("parcel.bin");
    std::fs::write(&input, p.encode(dir.path(), "parcel.proto", PARCEL, PARCEL_TEXT)).unwrap();
    let set = dir.path().join("parcel.pb");
    std::fs::write(&set, p.descriptor_set(dir.path(), "parcel.proto")).unwrap();
    let (d, i, s) = (dir.path().to_str().unwrap(), input.to_str().unwrap(), set.to_str().unwrap());
    for schema in [&["--proto-path", d, "--proto", "parcel.proto"][..], &["--descriptor-set", s][..]] {
        let out = run(&[&["decode", "--type", "Parcel", "--format", "json"], schema, &[i]].concat());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{schema:?}: {}", String::from_utf8_lossy(&out.stderr));
        for want in ["\"P-1\"", "\"Oslo\"", "\"Tromso\"", "STATUS_SENT", "\"Alta\"", "\"acct\""] {
            assert!(stdout.contains(want), "{schema:?} lacks {want}: {stdout}");
        }
    }
    // `schema list` says which files were editions.
    let out =
        run(&["schema", "list", "--filter", "editions.parcel", "--proto-path", d, "--proto", "parcel.proto"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("parcel.proto (proto file parcel.proto, edition 2023)"), "{stdout}");
    // `schema show` says the edition, how it is read, and which fields are delimited.
    let out = run(&["schema", "show", "walscope.editions.Parcel", "--descriptor-set", s]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("parcel.proto (descriptor set "), "{stdout}");
    assert!(stdout.contains("), edition 2023 (read as proto2)\n"), "{stdout}");
    assert!(stdout.contains("  required string code = 1;\n"), "{stdout}");
    assert!(stdout.contains("  walscope.editions.Parcel.Label label = 2 [delimited];\n"), "{stdout}");
    // A refusal reaches the operator in the same words, with file:line.
    std::fs::write(
        dir.path().join("bad.proto"),
        "edition = \"2023\";\npackage bad;\nmessage B {\n  int32 n = 1 [default = 3];\n}\n",
    )
    .unwrap();
    let out = run(&["decode", "--type", "B", "--proto-path", d, "--proto", "bad.proto", i]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("bad.proto:4:") && stderr.contains("edition 2023: default values"), "{stderr}");
    assert!(!stderr.contains("syntax error"), "{stderr}");
}

/// A one-file FileDescriptorSet declaring `syntax = "editions"` and the given edition number.
fn editions_set(edition: u32) -> Vec<u8> {
    let ld = |n: u8, b: &[u8]| [&[n << 3 | 2, b.len() as u8][..], b].concat();
    let mut edition_field = vec![14 << 3];
    prost::encoding::encode_varint(u64::from(edition), &mut edition_field);
    ld(1, &[ld(1, b"future.proto"), ld(12, b"editions"), edition_field].concat())
}

#[test]
fn an_edition_walscope_does_not_read_is_refused_by_name() {
    for (number, name) in [(1002, "edition 1002"), (9999, "edition UNSTABLE"), (0x7FFF_FFFF, "edition MAX")] {
        let mut set = SchemaSet::builtin();
        let before = set.symbols().len();
        let err = set
            .add_descriptor_set_bytes(&editions_set(number), Origin::DescriptorSet("f.pb".into()))
            .unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, SchemaError::Editions { .. }), "{err:?}");
        assert!(text.starts_with("future.proto (descriptor set f.pb): "), "{text}");
        assert!(text.contains(&format!("{name} is not one walscope reads")), "{text}");
        assert!(text.contains("editions 2023 and 2024"), "{text}");
        assert_eq!(set.symbols().len(), before, "nothing loaded");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.proto"), "// next year's\nedition = \"2025\";\nmessage F {}\n")
        .unwrap();
    let err =
        SchemaSet::empty().add_proto_files(&[dir.path().to_path_buf()], &["f.proto".into()]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "f.proto:2:11: edition 2025 is not one walscope reads: walscope reads proto2, proto3 and editions 2023 and 2024"
    );
}
