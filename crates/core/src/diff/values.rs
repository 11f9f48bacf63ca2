//! B's exact values for the edits a diff turns into (the changes show previews only), and the
//! list of edits being gathered.

use super::DiffError;
use crate::codec::path::FieldPath;
use crate::codec::tree::TypedNode;
use crate::codec::value::format_value;
use crate::codec::{Edit, EditOp};
use prost_reflect::{DynamicMessage, FieldDescriptor, Value};

/// A value of field `fd` as an edit's `Set` reads it back ([`format_value`]: messages as JSON,
/// strings quoted, bytes as `hex:`).
pub(super) fn exact_text(fd: &FieldDescriptor, v: &Value) -> String {
    format_value(&fd.kind(), v)
}

/// The elements of repeated field `fd` in `msg`, each as [`exact_text`] writes it: a whole
/// list is set by clearing it and appending these (a `Set` of a JSON array would not do for
/// every type: a `FieldMask`'s JSON is a string, not an object with `paths`).
pub(super) fn list_items(fd: &FieldDescriptor, msg: &DynamicMessage) -> Vec<String> {
    let v = msg.get_field(fd);
    v.as_list().map_or_else(Vec::new, |l| l.iter().map(|x| exact_text(fd, x)).collect())
}

/// The value of map entry `entry` (a node of field `fd` in `buf`) as [`exact_text`] writes it.
pub(super) fn map_value_text(fd: &FieldDescriptor, buf: &[u8], entry: &TypedNode) -> Option<String> {
    let entry_desc = fd.kind().as_message()?.clone();
    let m = DynamicMessage::decode(entry_desc.clone(), buf.get(entry.value_span.clone())?).ok()?;
    let vf = entry_desc.map_entry_value_field();
    Some(format_value(&vf.kind(), &m.get_field(&vf)))
}

/// The edits of a diff, in the order they apply, or why they cannot be made.
#[derive(Default)]
pub(super) struct EditSink {
    edits: Vec<Edit>,
    refused: Option<DiffError>,
}

impl EditSink {
    fn push(&mut self, path: &str, op: EditOp) {
        match FieldPath::parse(path) {
            Ok(p) => self.edits.push(Edit { path: p, op }),
            Err(why) => self.refuse(path, &why),
        }
    }

    /// B's value for `path`; None when B's value could not be read exactly.
    pub(super) fn set(&mut self, path: &str, value: Option<String>) {
        match value {
            Some(v) => self.push(path, EditOp::Set(v)),
            None => self.refuse(path, "B's value could not be read exactly"),
        }
    }

    pub(super) fn clear(&mut self, path: &str) {
        self.push(path, EditOp::Clear);
    }

    /// A whole list set to `items` (None: B's list could not be read).
    pub(super) fn set_list(&mut self, path: &str, items: Option<Vec<String>>) {
        let Some(items) = items else {
            return self.refuse(path, "B's list could not be read exactly");
        };
        self.push(path, EditOp::Clear);
        for item in items {
            self.push(path, EditOp::Append(item));
        }
    }

    /// The first change that cannot be an edit is the reason given.
    pub(super) fn refuse(&mut self, path: &str, why: &str) {
        if self.refused.is_none() {
            self.refused = Some(DiffError::NotAnEdit { path: path.to_string(), why: why.to_string() });
        }
    }

    pub(super) fn finish(self) -> Result<Vec<Edit>, DiffError> {
        match self.refused {
            Some(e) => Err(e),
            None => Ok(self.edits),
        }
    }
}
