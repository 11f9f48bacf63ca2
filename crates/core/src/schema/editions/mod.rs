//! Protobuf editions (2023, 2024): files declared with `edition = "…"` in source, or with
//! `syntax = "editions"` in a descriptor set, lowered to the proto2 or proto3 file that decodes
//! the same bytes the same way (see `lower`), because prost-reflect and protox read only proto2
//! and proto3. The wording of every editions refusal lives here: it names the edition, the
//! feature and the file:line, never "syntax error" or "proto3".
//!
//! Must never: accept an edition it cannot read faithfully, or touch a proto2/proto3 file.

mod features;
mod language;
mod lower;
pub(crate) mod scan;
#[cfg(test)]
mod tests;

use super::{Origin, SchemaError};
use prost::Message;
use prost_types::{FileDescriptorProto, SourceCodeInfo};
use std::collections::HashMap;

/// The editions walscope reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Edition {
    E2023,
    E2024,
}

/// Said in every refusal of an edition.
pub(crate) const READS: &str = "walscope reads proto2, proto3 and editions 2023 and 2024";

impl Edition {
    pub fn label(self) -> &'static str {
        match self {
            Edition::E2023 => "2023",
            Edition::E2024 => "2024",
        }
    }

    /// From the string of an `edition = "…";` statement.
    pub(crate) fn from_label(s: &str) -> Option<Self> {
        match s {
            "2023" => Some(Edition::E2023),
            "2024" => Some(Edition::E2024),
            _ => None,
        }
    }

    /// From FileDescriptorProto.edition (descriptor.proto's `Edition` enum), or its name.
    fn from_number(n: Option<i32>) -> Result<Self, String> {
        match n {
            Some(1000) => Ok(Edition::E2023),
            Some(1001) => Ok(Edition::E2024),
            None | Some(0) => Err("UNKNOWN (the file names none)".into()),
            Some(900) => Err("LEGACY".into()),
            Some(998) => Err("PROTO2 (as an edition)".into()),
            Some(999) => Err("PROTO3 (as an edition)".into()),
            Some(9999) => Err("UNSTABLE".into()),
            Some(0x7FFF_FFFF) => Err("MAX".into()),
            Some(n @ (1 | 2 | 99997..=99999)) => Err(format!("{n} (a test-only edition)")),
            Some(n) => Err(n.to_string()),
        }
    }
}

impl std::fmt::Display for Edition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "edition {}", self.label())
    }
}

/// The refusal of an edition walscope does not read.
pub(crate) fn refuse(location: String, label: &str) -> SchemaError {
    SchemaError::Editions { location, message: format!("edition {label} is not one walscope reads: {READS}") }
}

/// Where in a file an element is, for errors: file:line:column when the file carries source
/// info, else the file and where it came from.
pub(crate) struct Where<'a> {
    file: &'a str,
    origin: &'a Origin,
    info: Option<&'a SourceCodeInfo>,
}

impl Where<'_> {
    fn location(&self, path: &[i32]) -> String {
        let span = self.info.and_then(|i| i.location.iter().find(|l| l.path == path)).map(|l| &l.span);
        match span {
            Some(s) if s.len() >= 2 => format!("{}:{}:{}", self.file, s[0] + 1, s[1] + 1),
            _ => format!("{} ({})", self.file, self.origin),
        }
    }

    fn error(&self, path: &[i32], edition: Edition, message: &str) -> SchemaError {
        SchemaError::Editions { location: self.location(path), message: format!("{edition}: {message}") }
    }
}

/// Lowers every editions file of `files` in place: those declaring `syntax = "editions"` and
/// those read from source through the proto3 stand-in (`stand_ins`). `encoded` is the
/// FileDescriptorSet `files` was decoded from (the features live only there). Returns each
/// editions file with its edition.
pub(crate) fn lower_files(
    files: &mut [FileDescriptorProto],
    encoded: &[u8],
    stand_ins: &HashMap<String, Edition>,
    origin: &Origin,
) -> Result<Vec<(String, Edition)>, SchemaError> {
    let editions = |f: &FileDescriptorProto| f.syntax() == "editions" || stand_ins.contains_key(f.name());
    if !files.iter().any(editions) {
        return Ok(Vec::new());
    }
    let raw = features::RawSet::decode(encoded).map_err(|e| SchemaError::Invalid {
        location: origin.to_string(),
        message: format!("cannot read the editions features of this descriptor set: {e}"),
    })?;
    let mut out = Vec::new();
    for (i, file) in files.iter_mut().enumerate() {
        if !editions(file) {
            continue;
        }
        let raw = raw.file.get(i).cloned().unwrap_or_default();
        let edition = match stand_ins.get(file.name()) {
            Some(e) => *e,
            None => Edition::from_number(raw.edition)
                .map_err(|label| refuse(format!("{} ({origin})", file.name()), &label))?,
        };
        let name = file.name().to_string();
        let info = file.source_code_info.clone();
        let at = Where { file: &name, origin, info: info.as_ref() };
        lower::lower(file, &raw, edition, &at)?;
        out.push((name, edition));
    }
    Ok(out)
}

/// A protox error on a file read through the proto3 stand-in, said in editions terms: what the
/// stand-in cannot carry, and what to do instead.
pub(crate) fn reword(message: &str, edition: Edition) -> String {
    let instead = "a descriptor set built by protoc keeps it: `protoc -o x.pb --include_imports x.proto`, then --descriptor-set x.pb";
    let text = if message.contains("default values are not allowed") {
        format!(
            "default values ([default = …]) are not read from editions .proto sources by walscope: its .proto reader (protox 0.10) has no editions mode; {instead}"
        )
    } else if message.contains("first value for proto3 enums must be 0") {
        format!(
            "a closed enum whose first value is not 0 is not read from editions .proto sources by walscope; {instead}"
        )
    } else if message.contains("required fields are not allowed") {
        "the label `required` is not allowed in editions; use features.field_presence = LEGACY_REQUIRED"
            .into()
    } else if message.contains("groups are not allowed") {
        "group fields are not allowed in editions; use a message field with features.message_encoding = DELIMITED".into()
    } else if let Some(f) = ["enforce_naming_style", "default_symbol_visibility"]
        .into_iter()
        .find(|f| message.contains(&format!("'features.{f}'")))
    {
        format!(
            "features.{f} (new in edition 2024) is not supported by walscope's .proto reader (protox 0.10); it changes no bytes on the wire: remove it, or load a descriptor set built by protoc (`protoc --experimental_editions -o x.pb --include_imports x.proto`)"
        )
    } else if message.contains("found 'export'") || message.contains("found 'local'") {
        "the symbol visibility keywords `export` and `local` (edition 2024) are not supported by walscope's .proto reader (protox 0.10): remove them, or load a descriptor set built by protoc (`protoc --experimental_editions -o x.pb --include_imports x.proto`)".into()
    } else {
        message.replace("proto3 syntax", "editions").replace("proto3", "editions")
    };
    format!("{edition}: {text}")
}
