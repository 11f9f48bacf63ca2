//! The lowering pass: an editions file rewritten as the proto3 or proto2 file that reads the same
//! bytes the same way, so prost-reflect (which knows only proto2 and proto3) can hold it.
//!
//! proto3 when the file needs nothing proto3 lacks (explicit presence becomes `proto3_optional`
//! with a synthetic oneof, `packed` is set on every packable repeated field); proto2 when it has
//! LEGACY_REQUIRED, DELIMITED, CLOSED enums, LEGACY_BEST_EFFORT JSON or extensions (then
//! implicit-presence fields become optional ones: the decoded view is the same). Must never:
//! change a field's number, name, type name or JSON name, or the order of anything.

use super::features::{
    CLOSED, DELIMITED, EXPLICIT, FeatureSet, LEGACY_BEST_EFFORT, LEGACY_REQUIRED, PACKED, RawEnum, RawField,
    RawFile, RawMessage,
};
use super::{Edition, Where};
use crate::schema::SchemaError;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FieldDescriptorProto, FileDescriptorProto, OneofDescriptorProto};

/// FileDescriptorProto / DescriptorProto field numbers, for source-info paths.
const FILE_MESSAGE: i32 = 4;
const MESSAGE_FIELD: i32 = 2;
const MESSAGE_NESTED: i32 = 3;

/// Rewrites `file` (an editions file; `raw` is the same file's features) in place.
pub(super) fn lower(
    file: &mut FileDescriptorProto,
    raw: &RawFile,
    edition: Edition,
    at: &Where,
) -> Result<(), SchemaError> {
    let top = FeatureSet::edition_defaults().with(raw.features());
    let mut proto2 = !file.extension.is_empty() || top.json_format == Some(LEGACY_BEST_EFFORT);
    for i in 0..file.enum_type.len() {
        proto2 |= enum_needs_proto2(top, raw.enum_type.get(i));
    }
    for (i, m) in file.message_type.iter().enumerate() {
        proto2 |= needs_proto2(m, raw.message_type.get(i), top);
    }
    let syntax = if proto2 { "proto2" } else { "proto3" };
    for (i, m) in file.message_type.iter_mut().enumerate() {
        let ctx = Ctx { edition, proto2, at };
        ctx.message(m, raw.message_type.get(i), top, vec![FILE_MESSAGE, i as i32])?;
    }
    for (i, f) in file.extension.iter_mut().enumerate() {
        let features = top.with(raw.extension.get(i).and_then(RawField::features));
        apply_proto2(f, features, false);
    }
    file.syntax = Some(syntax.into());
    Ok(())
}

/// A closed enum (proto2 enums are the closed ones), or one with legacy JSON.
fn enum_needs_proto2(parent: FeatureSet, raw: Option<&RawEnum>) -> bool {
    let f = parent.with(raw.and_then(RawEnum::features));
    f.enum_type == Some(CLOSED) || f.json_format == Some(LEGACY_BEST_EFFORT)
}

/// Whether anything in `m` (nested types included) has no proto3 equivalent.
fn needs_proto2(m: &DescriptorProto, raw: Option<&RawMessage>, parent: FeatureSet) -> bool {
    let here = parent.with(raw.and_then(RawMessage::features));
    if here.json_format == Some(LEGACY_BEST_EFFORT)
        || !m.extension.is_empty()
        || !m.extension_range.is_empty()
    {
        return true;
    }
    let is_entry = is_map_entry(m);
    for (i, f) in m.field.iter().enumerate() {
        let ff = field_features(here, raw, m, i);
        if ff.field_presence == Some(LEGACY_REQUIRED) || ff.json_format == Some(LEGACY_BEST_EFFORT) {
            return true;
        }
        if !is_entry && ff.message_encoding == Some(DELIMITED) && is_message(f) && !is_map_field(m, f) {
            return true;
        }
    }
    for i in 0..m.enum_type.len() {
        if enum_needs_proto2(here, raw.and_then(|r| r.enum_type.get(i))) {
            return true;
        }
    }
    m.nested_type
        .iter()
        .enumerate()
        .any(|(i, n)| needs_proto2(n, raw.and_then(|r| r.nested_type.get(i)), here))
}

/// A field's features: the message's, then its oneof's, then its own.
fn field_features(here: FeatureSet, raw: Option<&RawMessage>, m: &DescriptorProto, i: usize) -> FeatureSet {
    let oneof = m.field[i]
        .oneof_index
        .and_then(|o| raw.and_then(|r| r.oneof_decl.get(usize::try_from(o).ok()?)))
        .and_then(|o| o.features());
    let own = raw.and_then(|r| r.field.get(i)).and_then(RawField::features);
    here.with(oneof).with(own)
}

fn is_message(f: &FieldDescriptorProto) -> bool {
    f.r#type() == Type::Message || f.r#type() == Type::Group
}

fn is_map_entry(m: &DescriptorProto) -> bool {
    m.options.as_ref().is_some_and(|o| o.map_entry())
}

/// A map field: repeated, of a nested map-entry type (maps are never delimited).
fn is_map_field(m: &DescriptorProto, f: &FieldDescriptorProto) -> bool {
    f.label() == Label::Repeated
        && m.nested_type.iter().any(|n| is_map_entry(n) && f.type_name().rsplit('.').next() == Some(n.name()))
}

fn packable(f: &FieldDescriptorProto) -> bool {
    !matches!(f.r#type(), Type::String | Type::Bytes | Type::Message | Type::Group)
}

struct Ctx<'a> {
    edition: Edition,
    proto2: bool,
    at: &'a Where<'a>,
}

impl Ctx<'_> {
    fn message(
        &self,
        m: &mut DescriptorProto,
        raw: Option<&RawMessage>,
        parent: FeatureSet,
        path: Vec<i32>,
    ) -> Result<(), SchemaError> {
        let here = parent.with(raw.and_then(RawMessage::features));
        let entry = is_map_entry(m);
        let mut synthetic: Vec<(usize, String)> = Vec::new();
        for i in 0..m.field.len() {
            let ff = field_features(here, raw, m, i);
            let map = is_map_field(m, &m.field[i]);
            let f = &m.field[i];
            if f.proto3_optional() {
                // Only a .proto source read through the proto3 stand-in gets here.
                let mut p = path.clone();
                p.extend([MESSAGE_FIELD, i as i32]);
                return Err(self.at.error(
                    &p,
                    self.edition,
                    &format!(
                        "the label `optional` on field {} is not allowed in editions: a field has presence by default (features.field_presence = EXPLICIT); remove the label",
                        f.name()
                    ),
                ));
            }
            let f = &mut m.field[i];
            if self.proto2 {
                apply_proto2(f, ff, entry || map);
            } else {
                if f.label() == Label::Repeated && packable(f) {
                    f.options.get_or_insert_default().packed =
                        Some(ff.repeated_field_encoding == Some(PACKED));
                }
                let singular = f.label() != Label::Repeated && f.oneof_index.is_none() && !is_message(f);
                if !entry && singular && ff.field_presence == Some(EXPLICIT) {
                    synthetic.push((i, f.name().to_string()));
                }
            }
        }
        for (i, name) in synthetic {
            let oneof = synthetic_name(m, &name);
            m.oneof_decl.push(OneofDescriptorProto { name: Some(oneof), options: None });
            let f = &mut m.field[i];
            f.proto3_optional = Some(true);
            f.oneof_index = Some((m.oneof_decl.len() - 1) as i32);
        }
        for (i, n) in m.nested_type.iter_mut().enumerate() {
            let mut p = path.clone();
            p.extend([MESSAGE_NESTED, i as i32]);
            self.message(n, raw.and_then(|r| r.nested_type.get(i)), here, p)?;
        }
        for (i, f) in m.extension.iter_mut().enumerate() {
            let ff = here.with(raw.and_then(|r| r.extension.get(i)).and_then(RawField::features));
            apply_proto2(f, ff, false);
        }
        Ok(())
    }
}

/// A field of a file lowered to proto2: required, group and packed made explicit.
fn apply_proto2(f: &mut FieldDescriptorProto, ff: FeatureSet, in_map: bool) {
    if f.label() == Label::Repeated && packable(f) {
        f.options.get_or_insert_default().packed = Some(ff.repeated_field_encoding == Some(PACKED));
    }
    if f.label() != Label::Repeated && f.oneof_index.is_none() && ff.field_presence == Some(LEGACY_REQUIRED) {
        f.set_label(Label::Required);
    }
    if !in_map && f.r#type() == Type::Message && ff.message_encoding == Some(DELIMITED) {
        f.set_type(Type::Group);
    }
}

/// protoc's name for a synthetic oneof: `_name`, with `X` in front until it is unique.
fn synthetic_name(m: &DescriptorProto, field: &str) -> String {
    let mut name = format!("_{field}");
    while m.field.iter().any(|f| f.name() == name) || m.oneof_decl.iter().any(|o| o.name() == name) {
        name.insert(0, 'X');
    }
    name
}
