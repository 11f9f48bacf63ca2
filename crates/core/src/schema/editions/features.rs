//! The part of a descriptor that `prost-types` drops: the edition number (FileDescriptorProto
//! field 14) and the `features` option of every file, message, field, oneof and enum. Read from
//! the same bytes as the `prost-types` view, element for element in the same order, so the
//! lowering can walk both side by side.
//!
//! Must never: interpret anything beyond the six language-independent features that change how
//! bytes are read (the others only steer code generators and are ignored).

/// `google.protobuf.FeatureSet`: the numbers of each enum are descriptor.proto's.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub(crate) struct FeatureSet {
    #[prost(int32, optional, tag = "1")]
    pub field_presence: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub enum_type: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub repeated_field_encoding: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub utf8_validation: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub message_encoding: Option<i32>,
    #[prost(int32, optional, tag = "6")]
    pub json_format: Option<i32>,
}

/// FeatureSet.FieldPresence
pub(crate) const EXPLICIT: i32 = 1;
pub(crate) const LEGACY_REQUIRED: i32 = 3;
/// FeatureSet.EnumType
pub(crate) const OPEN: i32 = 1;
pub(crate) const CLOSED: i32 = 2;
/// FeatureSet.RepeatedFieldEncoding
pub(crate) const PACKED: i32 = 1;
/// FeatureSet.MessageEncoding
pub(crate) const LENGTH_PREFIXED: i32 = 1;
pub(crate) const DELIMITED: i32 = 2;
/// FeatureSet.JsonFormat
pub(crate) const ALLOW: i32 = 1;
pub(crate) const LEGACY_BEST_EFFORT: i32 = 2;
/// FeatureSet.Utf8Validation
pub(crate) const VERIFY: i32 = 2;

impl FeatureSet {
    /// The defaults of editions 2023 and 2024 (descriptor.proto's `edition_defaults`: 2024
    /// changes only `enforce_naming_style` and `default_symbol_visibility`, which do not touch
    /// the bytes, and language features).
    pub fn edition_defaults() -> Self {
        FeatureSet {
            field_presence: Some(EXPLICIT),
            enum_type: Some(OPEN),
            repeated_field_encoding: Some(PACKED),
            utf8_validation: Some(VERIFY),
            message_encoding: Some(LENGTH_PREFIXED),
            json_format: Some(ALLOW),
        }
    }

    /// `self` with every feature `child` sets replaced (a nested scope overrides its parent).
    pub fn with(self, child: Option<&FeatureSet>) -> Self {
        let Some(c) = child else { return self };
        FeatureSet {
            field_presence: c.field_presence.or(self.field_presence),
            enum_type: c.enum_type.or(self.enum_type),
            repeated_field_encoding: c.repeated_field_encoding.or(self.repeated_field_encoding),
            utf8_validation: c.utf8_validation.or(self.utf8_validation),
            message_encoding: c.message_encoding.or(self.message_encoding),
            json_format: c.json_format.or(self.json_format),
        }
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RawSet {
    #[prost(message, repeated, tag = "1")]
    pub file: Vec<RawFile>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RawFile {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(message, repeated, tag = "4")]
    pub message_type: Vec<RawMessage>,
    #[prost(message, repeated, tag = "5")]
    pub enum_type: Vec<RawEnum>,
    #[prost(message, repeated, tag = "7")]
    pub extension: Vec<RawField>,
    #[prost(message, optional, tag = "8")]
    pub options: Option<FileOptions>,
    #[prost(string, optional, tag = "12")]
    pub syntax: Option<String>,
    #[prost(int32, optional, tag = "14")]
    pub edition: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RawMessage {
    #[prost(message, repeated, tag = "2")]
    pub field: Vec<RawField>,
    #[prost(message, repeated, tag = "3")]
    pub nested_type: Vec<RawMessage>,
    #[prost(message, repeated, tag = "4")]
    pub enum_type: Vec<RawEnum>,
    #[prost(message, repeated, tag = "6")]
    pub extension: Vec<RawField>,
    #[prost(message, optional, tag = "7")]
    pub options: Option<MessageOptions>,
    #[prost(message, repeated, tag = "8")]
    pub oneof_decl: Vec<RawOneof>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RawField {
    #[prost(message, optional, tag = "8")]
    pub options: Option<FieldOptions>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RawOneof {
    #[prost(message, optional, tag = "2")]
    pub options: Option<OneofOptions>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RawEnum {
    #[prost(message, optional, tag = "3")]
    pub options: Option<EnumOptions>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct FileOptions {
    #[prost(message, optional, tag = "50")]
    pub features: Option<FeatureSet>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct MessageOptions {
    #[prost(message, optional, tag = "12")]
    pub features: Option<FeatureSet>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct FieldOptions {
    #[prost(message, optional, tag = "21")]
    pub features: Option<FeatureSet>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct OneofOptions {
    #[prost(message, optional, tag = "1")]
    pub features: Option<FeatureSet>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct EnumOptions {
    #[prost(message, optional, tag = "7")]
    pub features: Option<FeatureSet>,
}

impl RawFile {
    pub fn features(&self) -> Option<&FeatureSet> {
        self.options.as_ref()?.features.as_ref()
    }
}
impl RawMessage {
    pub fn features(&self) -> Option<&FeatureSet> {
        self.options.as_ref()?.features.as_ref()
    }
}
impl RawField {
    pub fn features(&self) -> Option<&FeatureSet> {
        self.options.as_ref()?.features.as_ref()
    }
}
impl RawOneof {
    pub fn features(&self) -> Option<&FeatureSet> {
        self.options.as_ref()?.features.as_ref()
    }
}
impl RawEnum {
    pub fn features(&self) -> Option<&FeatureSet> {
        self.options.as_ref()?.features.as_ref()
    }
}
