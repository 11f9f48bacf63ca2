//! Choosing how to read a file nobody described: what its walscope manifest says (when it can
//! be read and is of a known version: see [`super::manifest_check`]), an OpenMLDB
//! progress file by its name, a Milvus dump when its frames decode as `DumpMessagesResponse`,
//! otherwise schema-less.

use super::detect::detect;
use super::framing::Framing;
use crate::datasync::{ADD_SYNC_TASK_REQUEST, ProgressFileKind};
use crate::schema::SchemaSet;
use prost_reflect::MessageDescriptor;
use std::path::Path;

pub const DUMP_RESPONSE: &str = "milvus.proto.milvus.DumpMessagesResponse";

/// The message type (and, when the name says so, the framing) to read `path` with, and why.
pub fn choose(
    path: &Path,
    head: &[u8],
    set: &SchemaSet,
) -> (Option<MessageDescriptor>, Option<Framing>, String) {
    // Only a manifest that can be vouched for chooses (one set aside is reported by
    // `manifest_check::check`, not used).
    if let super::manifest_check::ManifestRead::Usable(m) = super::manifest_check::read(path)
        && let Ok(d) = set.message(&m.message_type)
    {
        let why = format!("from {}", super::writer::manifest_path(path).display());
        return (Some(d), Framing::parse(&m.framing), why);
    }
    if let Some(kind) = ProgressFileKind::from_path(path)
        && let Ok(d) = set.message(ADD_SYNC_TASK_REQUEST)
    {
        return (Some(d), Some(kind.framing()), kind.describe().to_string());
    }
    if let Ok(d) = set.message(DUMP_RESPONSE) {
        let det = detect(head, Some(&d));
        // A damaged dump still shows its type in the frames before the damage.
        if det.confidence >= 0.5 || det.frames >= 3 {
            return (Some(d), None, format!("Milvus dump: {}", det.reason));
        }
    }
    (
        None,
        None,
        "no built-in type fits; showing the schema-less wire view (choose a type with --type)".into(),
    )
}
