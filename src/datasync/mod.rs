//! OpenMLDB datasync semantics: sync points, sync-task records and their on-disk progress
//! files. Protocol quirks of OpenMLDB live here and nowhere else.
//!
//! Must never: write a `SyncPoint` without its `type` (both servers reject it, even for
//! `kSNAPSHOT` = 0), or guess a progress file's framing from content alone when its name says
//! which program wrote it.

pub mod progress;
pub mod status;

pub use progress::{ProgressFileKind, summarize_add_sync_task, sync_point_text};
pub use status::{SubTaskRow, SyncTaskHistory};

/// Full names of the types this module reads.
pub const ADD_SYNC_TASK_REQUEST: &str = "openmldb.datasync.AddSyncTaskRequest";
pub const SYNC_POINT: &str = "openmldb.datasync.SyncPoint";

/// A SyncTool method from the built-in schemas (`DeleteSyncTask` under its wire name).
pub fn synctool_method(name: &str) -> Result<prost_reflect::MethodDescriptor, String> {
    let set = crate::schema::SchemaSet::shared_builtin();
    let svc = set
        .pool()
        .get_service_by_name("openmldb.datasync.SyncTool")
        .ok_or("the built-in schemas lack openmldb.datasync.SyncTool")?;
    svc.methods().find(|m| m.name() == name).ok_or_else(|| format!("SyncTool has no method {name}"))
}

/// Whether the schema's method `declared` is the one an operator asked for as `wanted`. OpenMLDB's
/// released proto spells the delete RPC `DelelteSyncTask` while servers answer to
/// `DeleteSyncTask` (which is what walscope sends): either name finds the method either way.
pub fn method_matches(declared: &str, wanted: &str) -> bool {
    let canon = |n: &str| {
        if n.eq_ignore_ascii_case("DelelteSyncTask") { "DeleteSyncTask".to_string() } else { n.to_string() }
    };
    declared == wanted || canon(declared) == canon(wanted)
}

/// A `GeneralResponse`: Ok, or the refusal's code and message (both servers use -1).
pub fn general_result(m: &prost_reflect::DynamicMessage) -> Result<(), (i32, String)> {
    let code = m.get_field_by_name("code").and_then(|v| v.as_i32()).unwrap_or(0);
    let msg = m.get_field_by_name("msg").and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    if code == 0 { Ok(()) } else { Err((code, msg)) }
}
