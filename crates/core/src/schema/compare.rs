//! Field-by-field comparison of two descriptor pools over the messages and enums both define:
//! used to hold walscope's built-in schemas against the protos another Milvus client ships (the
//! official Rust SDK's, pymilvus's), so a gap or a clash is found by a test, not by an operator.
//!
//! Owns: what counts as a conflict (same number with another name or type, same name at another
//! number) and as a gap (a field or enum value the other side has and ours lacks), and their
//! wording. Must never: compare messages or enums only one side defines (ours is a trimmed
//! subset by design), or treat a field only ours has as a difference.

use prost_reflect::{DescriptorPool, EnumDescriptor, FieldDescriptor, Kind, MessageDescriptor};
use std::fmt;

/// One difference between ours and theirs, in words an operator can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    /// Both have field `number`, under other names or types.
    FieldConflict { message: String, number: u32, ours: String, theirs: String },
    /// Both have a field called `name`, at other numbers.
    FieldMoved { message: String, name: String, ours: u32, theirs: u32 },
    /// Theirs has the field, ours does not.
    MissingField { message: String, number: u32, theirs: String },
    /// Both have enum value `number`, under other names.
    ValueConflict { r#enum: String, number: i32, ours: String, theirs: String },
    /// Theirs has the enum value, ours does not.
    MissingValue { r#enum: String, number: i32, theirs: String },
}

impl Difference {
    pub fn is_conflict(&self) -> bool {
        matches!(
            self,
            Difference::FieldConflict { .. }
                | Difference::FieldMoved { .. }
                | Difference::ValueConflict { .. }
        )
    }

    /// The message or enum the difference is in, and the field or value number.
    pub fn place(&self) -> (&str, i64) {
        match self {
            Difference::FieldConflict { message, number, .. }
            | Difference::MissingField { message, number, .. } => (message, i64::from(*number)),
            Difference::FieldMoved { message, ours, .. } => (message, i64::from(*ours)),
            Difference::ValueConflict { r#enum, number, .. }
            | Difference::MissingValue { r#enum, number, .. } => (r#enum, i64::from(*number)),
        }
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::FieldConflict { message, number, ours, theirs } => {
                write!(f, "conflict: {message} field {number} is `{ours}` in ours and `{theirs}` in theirs")
            }
            Difference::FieldMoved { message, name, ours, theirs } => {
                write!(
                    f,
                    "conflict: {message} field `{name}` is number {ours} in ours and {theirs} in theirs"
                )
            }
            Difference::MissingField { message, number, theirs } => {
                write!(f, "gap: {message} field {number} `{theirs}` is missing from ours")
            }
            Difference::ValueConflict { r#enum, number, ours, theirs } => {
                write!(f, "conflict: {enum} value {number} is {ours} in ours and {theirs} in theirs", enum = r#enum)
            }
            Difference::MissingValue { r#enum, number, theirs } => {
                write!(f, "gap: {enum} value {number} {theirs} is missing from ours", enum = r#enum)
            }
        }
    }
}

/// A field as "type name" (`repeated int64 segment_ids`, `map<string, string> properties`,
/// `milvus.proto.common.Status status`): what both sides must agree on, in one string.
pub fn field_words(fd: &FieldDescriptor) -> String {
    format!("{} {}", type_words(fd), fd.name())
}

fn type_words(fd: &FieldDescriptor) -> String {
    if fd.is_map()
        && let Kind::Message(entry) = fd.kind()
    {
        let key = entry.map_entry_key_field();
        let value = entry.map_entry_value_field();
        return format!("map<{}, {}>", kind_words(&key.kind()), kind_words(&value.kind()));
    }
    let base = kind_words(&fd.kind());
    if fd.is_list() { format!("repeated {base}") } else { base }
}

fn kind_words(kind: &Kind) -> String {
    match kind {
        Kind::Message(m) => m.full_name().to_string(),
        Kind::Enum(e) => e.full_name().to_string(),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// Every difference between `ours` and `theirs` over the messages and enums (nested ones too)
/// that both define by full name, sorted by place. Map entry messages are compared through the
/// map field that owns them.
pub fn compare(ours: &DescriptorPool, theirs: &DescriptorPool) -> Vec<Difference> {
    let mut out = Vec::new();
    for their_msg in theirs.all_messages() {
        if their_msg.is_map_entry() {
            continue;
        }
        if let Some(our_msg) = ours.get_message_by_name(their_msg.full_name()) {
            compare_message(&our_msg, &their_msg, &mut out);
        }
    }
    for their_enum in theirs.all_enums() {
        if let Some(our_enum) = ours.get_enum_by_name(their_enum.full_name()) {
            compare_enum(&our_enum, &their_enum, &mut out);
        }
    }
    out.sort_by(|a, b| a.place().cmp(&b.place()));
    out
}

fn compare_message(ours: &MessageDescriptor, theirs: &MessageDescriptor, out: &mut Vec<Difference>) {
    let message = theirs.full_name().to_string();
    for tf in theirs.fields() {
        match ours.get_field(tf.number()) {
            Some(of) => {
                let (o, t) = (field_words(&of), field_words(&tf));
                if o != t {
                    out.push(Difference::FieldConflict {
                        message: message.clone(),
                        number: tf.number(),
                        ours: o,
                        theirs: t,
                    });
                }
            }
            None => match ours.get_field_by_name(tf.name()) {
                Some(of) => out.push(Difference::FieldMoved {
                    message: message.clone(),
                    name: tf.name().to_string(),
                    ours: of.number(),
                    theirs: tf.number(),
                }),
                None => out.push(Difference::MissingField {
                    message: message.clone(),
                    number: tf.number(),
                    theirs: field_words(&tf),
                }),
            },
        }
    }
}

fn compare_enum(ours: &EnumDescriptor, theirs: &EnumDescriptor, out: &mut Vec<Difference>) {
    let name = theirs.full_name().to_string();
    for tv in theirs.values() {
        // Enums may alias a number (allow_alias): any of our names for it will do.
        let our_names: Vec<String> =
            ours.values().filter(|v| v.number() == tv.number()).map(|v| v.name().to_string()).collect();
        if our_names.is_empty() {
            out.push(Difference::MissingValue {
                r#enum: name.clone(),
                number: tv.number(),
                theirs: tv.name().to_string(),
            });
        } else if !our_names.iter().any(|n| n == tv.name()) {
            out.push(Difference::ValueConflict {
                r#enum: name.clone(),
                number: tv.number(),
                ours: our_names.join("/"),
                theirs: tv.name().to_string(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(src: &str) -> DescriptorPool {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.proto"), src).unwrap();
        let fds = protox::compile(["t.proto"], [dir.path()]).unwrap();
        DescriptorPool::from_file_descriptor_set(fds).unwrap()
    }

    #[test]
    fn finds_conflicts_and_gaps_and_nothing_else() {
        let ours = pool(
            r#"syntax = "proto3"; package p;
            message M { int64 a = 1; string b = 2; int32 moved = 3; map<string, string> kv = 5; int32 ours_only = 9; }
            message OnlyOurs { int64 x = 1; }
            enum E { E0 = 0; E1 = 1; }"#,
        );
        let theirs = pool(
            r#"syntax = "proto3"; package p;
            message M { int64 a = 1; int64 b = 2; int32 moved = 4; map<string, int64> kv = 5; repeated string extra = 6; }
            message OnlyTheirs { int64 x = 1; }
            enum E { E0 = 0; E_ONE = 1; E2 = 2; }"#,
        );
        let diffs = compare(&ours, &theirs);
        let words: Vec<String> = diffs.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            words,
            [
                "conflict: p.E value 1 is E1 in ours and E_ONE in theirs",
                "gap: p.E value 2 E2 is missing from ours",
                "conflict: p.M field 2 is `string b` in ours and `int64 b` in theirs",
                "conflict: p.M field `moved` is number 3 in ours and 4 in theirs",
                "conflict: p.M field 5 is `map<string, string> kv` in ours and `map<string, int64> kv` in theirs",
                "gap: p.M field 6 `repeated string extra` is missing from ours",
            ],
            "{words:#?}"
        );
        assert_eq!(diffs.iter().filter(|d| d.is_conflict()).count(), 4);
        // The same pool against itself: nothing.
        assert!(compare(&theirs, &theirs).is_empty());
    }
}
