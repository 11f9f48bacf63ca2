//! OpenMLDB datasync semantics: sync points, sync-task records and their on-disk progress
//! files, and the health of sync sub-tasks read from successive TaskStatus polls (trouble in
//! words, table names, bounded count history). Protocol quirks of OpenMLDB live here and
//! nowhere else.
//!
//! Must never: write a `SyncPoint` without its `type` (both servers reject it, even for
//! `kSNAPSHOT` = 0), or guess a progress file's framing from content alone when its name says
//! which program wrote it.
//!
//! Depends on `wire` (framings), `schema`, `codec` and, for the SyncTool client, `net`; never
//! on `dump`, which reads datasync's files through this module.

pub mod client;
pub mod health;
pub mod progress;
pub mod status;
pub mod tables;
pub mod trend;

pub use client::{SyncMode, SyncToolClient, SyncToolError};
pub use health::{HealthConfig, HealthSummary, SubTaskHealth, SyncHealth, Trouble};
pub use progress::{ProgressFileKind, summarize_add_sync_task, sync_point_text};
pub use status::{SubTaskRow, SyncTaskHistory};
pub use tables::TableNames;
pub use trend::{Series, Trends};

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
    use crate::net::brpc::wire_method_name as canon;
    declared == wanted || canon(declared) == canon(wanted)
}

/// A `GeneralResponse`: Ok, or the refusal's code and message (both servers use -1).
/// (The shape is read by [`crate::net::body::general_response`], the one place that reads it.)
pub fn general_result(m: &prost_reflect::DynamicMessage) -> Result<(), (i32, String)> {
    match crate::net::body::general_response(m) {
        Some((code, msg)) if code != 0 => Err((code, msg)),
        _ => Ok(()),
    }
}
