//! The language feature files editions sources import (`google/protobuf/cpp_features.proto`,
//! `java_features.proto`, `go_features.proto`), which protox does not bundle. Their features
//! only steer code generators, never the bytes, so walscope serves minimal stand-ins written
//! here (the same packages, extension numbers, field names and enum values as protobuf 31's
//! files) just so `features.(pb.cpp).string_type = VIEW` and the like resolve. One exception:
//! the bundled descriptor.proto (prost-reflect's) predates `pb.go`'s number 1002 and lets
//! FeatureSet be extended only at 1000, 1001 and 9995-9999, so the Go stand-in uses 9995; no
//! language feature's value is ever read.
//!
//! Must never: win over a file of the same name in an include path.

/// The stand-in for the language feature file `name`, if it is one.
pub(crate) fn stand_in(name: &str) -> Option<&'static str> {
    match name {
        "google/protobuf/cpp_features.proto" => Some(CPP),
        "google/protobuf/java_features.proto" => Some(JAVA),
        "google/protobuf/go_features.proto" => Some(GO),
        _ => None,
    }
}

const CPP: &str = r#"syntax = "proto2";
package pb;
import "google/protobuf/descriptor.proto";
extend google.protobuf.FeatureSet { optional CppFeatures cpp = 1000; }
message CppFeatures {
  optional bool legacy_closed_enum = 1;
  enum StringType { STRING_TYPE_UNKNOWN = 0; VIEW = 1; CORD = 2; STRING = 3; }
  optional StringType string_type = 2;
  optional bool enum_name_uses_string_view = 3;
}
"#;

const JAVA: &str = r#"syntax = "proto2";
package pb;
import "google/protobuf/descriptor.proto";
extend google.protobuf.FeatureSet { optional JavaFeatures java = 1001; }
message JavaFeatures {
  optional bool legacy_closed_enum = 1;
  enum Utf8Validation { UTF8_VALIDATION_UNKNOWN = 0; DEFAULT = 1; VERIFY = 2; }
  optional Utf8Validation utf8_validation = 2;
  optional bool large_enum = 3;
  optional bool use_old_outer_classname_default = 4;
  message NestInFileClassFeature {
    enum NestInFileClass { NEST_IN_FILE_CLASS_UNKNOWN = 0; NO = 1; YES = 2; }
  }
  optional NestInFileClassFeature.NestInFileClass nest_in_file_class = 5;
}
"#;

const GO: &str = r#"syntax = "proto2";
package pb;
import "google/protobuf/descriptor.proto";
extend google.protobuf.FeatureSet { optional GoFeatures go = 9995; }
message GoFeatures {
  optional bool legacy_unmarshal_json_enum = 1;
  enum APILevel { API_LEVEL_UNSPECIFIED = 0; API_OPEN = 1; API_HYBRID = 2; API_OPAQUE = 3; }
  optional APILevel api_level = 2;
  enum StripEnumPrefix {
    STRIP_ENUM_PREFIX_UNSPECIFIED = 0;
    STRIP_ENUM_PREFIX_KEEP = 1;
    STRIP_ENUM_PREFIX_GENERATE_BOTH = 2;
    STRIP_ENUM_PREFIX_STRIP = 3;
  }
  optional StripEnumPrefix strip_enum_prefix = 3;
}
"#;
