//! The lowering seen through the pool: each feature becomes the proto2/proto3 equivalent that
//! prost-reflect reads the same way, each refusal is worded in editions terms with file:line,
//! and a proto3 file rewritten as edition 2023 with implicit presence decodes exactly as before.

use crate::schema::{Edition, SchemaError, SchemaSet};
use proptest::prelude::*;
use prost::Message;
use prost_reflect::{Cardinality, DynamicMessage, MessageDescriptor, Syntax};

fn load(src: &str) -> Result<SchemaSet, SchemaError> {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("x.proto"), src).expect("write");
    let mut set = SchemaSet::empty();
    set.add_proto_files(&[dir.path().to_path_buf()], &["x.proto".into()])?;
    Ok(set)
}

fn refusal(src: &str) -> String {
    match load(src) {
        Ok(_) => panic!("loaded: {src}"),
        Err(e) => {
            assert!(matches!(e, SchemaError::Editions { .. }), "{e:?}");
            let text = e.to_string();
            let said = text.replace(super::READS, "");
            assert!(!said.contains("syntax error") && !said.contains("proto3"), "{text}");
            text
        }
    }
}

const OPEN_FILE: &str = r#"edition = "2023";
package ed;
message Inner { int32 v = 1; }
message M {
  int32 explicit = 1;
  int32 implicit = 2 [features.field_presence = IMPLICIT];
  repeated int32 packed = 3;
  repeated int32 expanded = 4 [features.repeated_field_encoding = EXPANDED];
  Inner inner = 5;
  map<string, Inner> m = 6;
  oneof o { string s = 7; int64 i = 8; }
  Color color = 9;
}
enum Color { RED = 0; GREEN = 1; }
"#;

#[test]
fn an_open_file_becomes_proto3_with_explicit_presence_and_packing() {
    let set = load(OPEN_FILE).unwrap();
    assert_eq!(set.edition_of_file("x.proto"), Some(Edition::E2023));
    let m = set.message("ed.M").unwrap();
    assert_eq!(m.parent_file().syntax(), Syntax::Proto3);
    let f = |n| m.get_field_by_name(n).unwrap();
    assert!(f("explicit").supports_presence() && f("color").supports_presence());
    assert!(!f("implicit").supports_presence());
    assert!(f("packed").is_packed() && !f("expanded").is_packed());
    assert!(f("m").is_map() && !f("inner").is_group());
    // The real oneof is unchanged, the synthetic ones come after it.
    assert_eq!(m.oneofs().next().map(|o| o.name().to_string()), Some("o".into()));
    assert_eq!(f("s").containing_oneof().map(|o| o.name().to_string()), Some("o".into()));
    assert_eq!(f("explicit").containing_oneof().map(|o| o.is_synthetic()), Some(true));
}

#[test]
fn required_delimited_and_closed_make_a_proto2_file() {
    let set = load(
        r#"edition = "2024";
package ed;
message Inner { int32 v = 1; }
message M {
  int32 need = 1 [features.field_presence = LEGACY_REQUIRED];
  Inner parcel = 2 [features.message_encoding = DELIMITED];
  repeated Inner many = 3 [features.message_encoding = DELIMITED];
  map<string, Inner> m = 4 [features.message_encoding = DELIMITED];
  repeated int32 packed = 5;
  Closed c = 6;
  int32 implicit = 7 [features.field_presence = IMPLICIT];
}
enum Closed { option features.enum_type = CLOSED; ONE = 0; TWO = 2; }
"#,
    )
    .unwrap();
    assert_eq!(set.edition_of_file("x.proto"), Some(Edition::E2024));
    let m = set.message("ed.M").unwrap();
    assert_eq!(m.parent_file().syntax(), Syntax::Proto2);
    let f = |n| m.get_field_by_name(n).unwrap();
    assert_eq!(f("need").cardinality(), Cardinality::Required);
    assert!(f("parcel").is_group() && f("many").is_group());
    // Maps are never delimited: the entries stay length-prefixed.
    assert!(f("m").is_map() && !f("m").is_group());
    assert!(f("packed").is_packed());
    // DELIMITED bytes: field 2 as a group (start 0x13, end 0x14), read back the same.
    let bytes = [0x08, 0x01, 0x13, 0x08, 0x07, 0x14];
    let msg = DynamicMessage::decode(m.clone(), &bytes[..]).unwrap();
    assert_eq!(msg.encode_to_vec(), bytes);
    let inner = msg.get_field_by_name("parcel").unwrap();
    assert_eq!(inner.as_message().unwrap().get_field_by_name("v").unwrap().as_i32(), Some(7));
}

#[test]
fn refusals_name_the_edition_the_feature_and_the_line() {
    let text = refusal("edition = \"2025\";\nmessage M {}\n");
    assert!(text.starts_with("x.proto:1:11: edition 2025 is not one walscope reads"), "{text}");
    assert!(text.contains("editions 2023 and 2024"), "{text}");
    let text = refusal("edition = \"UNSTABLE\";\n");
    assert!(text.contains("edition UNSTABLE is not one walscope reads"), "{text}");

    let text = refusal("edition = \"2023\";\nmessage M {\n  int32 a = 1 [default = 4];\n}\n");
    assert!(text.starts_with("x.proto:3:"), "{text}");
    assert!(text.contains("edition 2023: default values") && text.contains("protoc -o"), "{text}");

    let text = refusal("edition = \"2023\";\nmessage M {\n  optional int32 a = 1;\n}\n");
    assert!(text.starts_with("x.proto:3:3: edition 2023: the label `optional`"), "{text}");

    let text = refusal("edition = \"2023\";\nmessage M {\n  required int32 a = 1;\n}\n");
    assert!(text.starts_with("x.proto:3:") && text.contains("LEGACY_REQUIRED"), "{text}");

    let text = refusal("edition = \"2024\";\nexport message M {}\n");
    assert!(text.starts_with("x.proto:2:1: edition 2024: the symbol visibility keywords"), "{text}");

    let text = refusal("edition = \"2024\";\noption features.enforce_naming_style = STYLE_LEGACY;\n");
    assert!(text.starts_with("x.proto:2:") && text.contains("features.enforce_naming_style"), "{text}");

    let text =
        refusal("edition = \"2023\";\nenum C {\n  option features.enum_type = CLOSED;\n  ONE = 1;\n}\n");
    assert!(
        text.starts_with("x.proto:4:") && text.contains("closed enum whose first value is not 0"),
        "{text}"
    );
}

#[test]
fn language_features_resolve_and_change_nothing() {
    let set = load(
        r#"edition = "2024";
package lang;
import "google/protobuf/cpp_features.proto";
import "google/protobuf/java_features.proto";
import "google/protobuf/go_features.proto";
option features.(pb.go).api_level = API_OPAQUE;
enum E { option features.(pb.java).large_enum = true; ZERO = 0; }
message L {
  string s = 1 [features.(pb.cpp).string_type = VIEW];
  E e = 2;
}
"#,
    )
    .unwrap();
    let m = set.message("lang.L").unwrap();
    assert_eq!(m.parent_file().syntax(), Syntax::Proto3);
    assert!(m.get_field_by_name("s").unwrap().supports_presence());
}

const PROTO3: &str = r#"syntax = "proto3";
package p;
enum Color { RED = 0; GREEN = 1; }
message Inner { int32 v = 1; }
message M {
  int32 a = 1; string s = 2; bytes b = 3; repeated int32 r = 4; Color c = 5; Inner inner = 6;
  map<string, int32> m = 7; oneof o { int64 x = 8; string y = 9; } optional int32 opt = 10;
  repeated string rs = 11; double d = 12; bool flag = 13;
}
"#;

fn as_edition_2023(proto3: &str) -> String {
    proto3
        .replace("syntax = \"proto3\";", "edition = \"2023\";\noption features.field_presence = IMPLICIT;")
        .replace("optional int32 opt = 10;", "int32 opt = 10 [features.field_presence = EXPLICIT];")
}

/// One field record on the wire: a tag and a value of the field's wire type, zeros included
/// (implicit presence must read an explicit zero as absent, as proto3 does).
fn record() -> impl Strategy<Value = Vec<u8>> {
    let varint = prop_oneof![Just(0u64), 1u64..300, Just(u64::MAX)];
    let text = "[a-z]{0,3}";
    prop_oneof![
        (prop::sample::select(vec![1u8, 4, 5, 8, 10, 13]), varint).prop_map(|(n, v)| {
            let mut out = vec![n << 3];
            prost::encoding::encode_varint(v, &mut out);
            out
        }),
        (prop::sample::select(vec![2u8, 3, 9, 11]), text).prop_map(|(n, s)| {
            let mut out = vec![n << 3 | 2, s.len() as u8];
            out.extend(s.bytes());
            out
        }),
        (0u8..3).prop_map(|v| if v == 0 { vec![0x32, 0] } else { vec![0x32, 2, 0x08, v] }),
        ("[a-z]{0,2}", 0u8..3).prop_map(|(k, v)| {
            let mut entry = vec![0x0a, k.len() as u8];
            entry.extend(k.bytes());
            entry.extend([0x10, v]);
            [vec![0x3a, entry.len() as u8], entry].concat()
        }),
        prop::collection::vec(0u8..100, 0..4).prop_map(|v| [vec![0x22, v.len() as u8], v].concat()),
        (any::<bool>()).prop_map(|z| if z {
            [vec![0x61], vec![0; 8]].concat()
        } else {
            [vec![0x61], 1.5f64.to_le_bytes().to_vec()].concat()
        }),
    ]
}

/// What a reader sees: the message as JSON (map entries sorted, fields without presence left
/// out at their default) and the length it re-encodes to.
fn view(desc: &MessageDescriptor, bytes: &[u8]) -> Option<(serde_json::Value, usize)> {
    let m = DynamicMessage::decode(desc.clone(), bytes).ok()?;
    Some((serde_json::to_value(&m).ok()?, m.encoded_len()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn implicit_presence_edition_2023_decodes_as_proto3(records in prop::collection::vec(record(), 0..12)) {
        thread_local! {
            static PAIR: (MessageDescriptor, MessageDescriptor) = (
                load(PROTO3).unwrap().message("p.M").unwrap(),
                load(&as_edition_2023(PROTO3)).unwrap().message("p.M").unwrap(),
            );
        }
        let bytes = records.concat();
        PAIR.with(|(p3, ed)| {
            assert_eq!(ed.parent_file().syntax(), Syntax::Proto3);
            prop_assert_eq!(view(p3, &bytes), view(ed, &bytes));
            Ok(())
        })?;
    }
}
