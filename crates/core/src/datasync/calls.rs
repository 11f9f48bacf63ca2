//! OpenMLDB's calls as the network layer must know them: the delete RPC's two spellings, a
//! refusal in the body of a successful answer (a `GeneralResponse` with a non-zero code, as the
//! reply or its `response` field), and what each SyncTool or DataCollector call changes, in
//! words, before it is sent. `net` asks here (its transports, its call path, its guard and its
//! errors in the body); the SyncTool client reads refusals here too.
//!
//! Must never: call a reading call a change (TaskStatus without `clear_all` changes nothing),
//! or let `clear_all` through with a click: it deletes every sync task.

use prost_reflect::{DynamicMessage, Kind, MethodDescriptor, ReflectMessage, Value};

/// The word to type before `TaskStatus{clear_all}` is sent.
pub const CLEAR_ALL_WORD: &str = "clear all";

/// The protobuf package of OpenMLDB's datasync services (SyncTool, DataCollector).
const PACKAGE: &str = "openmldb.datasync.";

/// The method name a server answers to: OpenMLDB's released proto spells the delete RPC
/// `DelelteSyncTask`, while servers answer to `DeleteSyncTask` (which is what walscope sends).
pub fn wire_method_name(name: &str) -> &str {
    if name.eq_ignore_ascii_case("DelelteSyncTask") { "DeleteSyncTask" } else { name }
}

/// Whether the schema's method `declared` is the one an operator asked for as `wanted`: either
/// spelling of the delete RPC finds the method either way.
pub fn method_matches(declared: &str, wanted: &str) -> bool {
    declared == wanted || wire_method_name(declared) == wire_method_name(wanted)
}

/// `code` and `msg` of an OpenMLDB `GeneralResponse`, or of any message of that shape (an
/// integer `code` and a string `msg` field). None for other shapes.
pub fn general_response(msg: &DynamicMessage) -> Option<(i32, String)> {
    let d = msg.descriptor();
    let code_fd = d.get_field_by_name("code")?;
    let is_general = d.name() == "GeneralResponse"
        || d.get_field_by_name("msg").is_some_and(|f| f.kind() == Kind::String && !f.is_list());
    let integer = matches!(code_fd.kind(), Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 | Kind::Int64);
    if !is_general || !integer || code_fd.is_list() {
        return None;
    }
    let code = crate::codec::loose_integer(msg, "code").unwrap_or(0);
    let code = i32::try_from(code).unwrap_or(i32::MIN);
    Some((code, crate::codec::string_field(msg, "msg").unwrap_or_default()))
}

/// A refusal in the body of a successful answer: the non-zero `code` and its `msg` of a
/// `GeneralResponse` that is the reply, or else its `response` field. None when the server
/// said yes, or the reply has neither shape.
pub fn refusal(reply: &DynamicMessage) -> Option<(i32, String)> {
    let general = match general_response(reply) {
        Some(g) => g,
        None => {
            let fd = reply.descriptor().get_field_by_name("response")?;
            if fd.is_list() || !reply.has_field(&fd) {
                return None;
            }
            general_response(reply.get_field(&fd).as_message()?)?
        }
    };
    (general.0 != 0).then_some(general)
}

/// What a call to a SyncTool or a DataCollector changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncChange {
    /// DeleteSyncTask (either spelling): the table `db.name`'s partitions stop syncing.
    DeleteTask { table: String },
    /// TaskStatus with `clear_all`: every sync task is deleted.
    ClearAll,
    /// CreateSyncTask of the table `db.name`, writing to `dest`.
    CreateTask { table: String, dest: String },
    /// SendData: rows written to the task's destination, its sync point moved.
    SendData,
    /// AddSyncTask on a DataCollector.
    AssignTask,
}

impl SyncChange {
    /// What the call changes on `endpoint`, in words.
    pub fn words(&self, endpoint: &str) -> String {
        match self {
            SyncChange::DeleteTask { table } => {
                format!("deletes the sync task of table {table} on {endpoint}: its partitions stop syncing")
            }
            SyncChange::ClearAll => {
                format!("deletes EVERY sync task on {endpoint} (clear_all); nothing keeps syncing")
            }
            SyncChange::CreateTask { table, dest } => {
                format!("creates a sync task for table {table} on {endpoint}, writing to {dest}")
            }
            SyncChange::SendData => format!(
                "sends rows to the sync task on {endpoint}: they are written to its destination and its sync point moves"
            ),
            SyncChange::AssignTask => format!("assigns a sync task to the DataCollector at {endpoint}"),
        }
    }

    /// The word to type when a click is not enough (only for what cannot be undone at all).
    pub fn typed_word(&self) -> Option<&'static str> {
        matches!(self, SyncChange::ClearAll).then_some(CLEAR_ALL_WORD)
    }
}

/// What calling `method` with `request` changes, when it is an OpenMLDB datasync method that
/// changes something; None for a reading call or another service's method.
pub fn change_of(method: &MethodDescriptor, request: &DynamicMessage) -> Option<SyncChange> {
    if !method.parent_service().full_name().starts_with(PACKAGE) {
        return None;
    }
    let text = |f: &str| crate::codec::string_field(request, f).unwrap_or_default();
    let table = || format!("{}.{}", text("db"), text("name"));
    match wire_method_name(method.name()) {
        "DeleteSyncTask" => Some(SyncChange::DeleteTask { table: table() }),
        "TaskStatus" => request
            .get_field_by_name("clear_all")
            .is_some_and(|v| matches!(*v, Value::Bool(true)))
            .then_some(SyncChange::ClearAll),
        "CreateSyncTask" => Some(SyncChange::CreateTask { table: table(), dest: text("dest") }),
        "SendData" => Some(SyncChange::SendData),
        "AddSyncTask" => Some(SyncChange::AssignTask),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delete_rpc_is_found_and_sent_under_either_spelling() {
        assert_eq!(wire_method_name("DelelteSyncTask"), "DeleteSyncTask");
        assert_eq!(wire_method_name("TaskStatus"), "TaskStatus");
        assert!(method_matches("DelelteSyncTask", "DeleteSyncTask"));
        assert!(method_matches("DeleteSyncTask", "DelelteSyncTask"));
        assert!(!method_matches("DeleteSyncTask", "CreateSyncTask"));
    }
}
