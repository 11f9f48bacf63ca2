//! OpenMLDB datasync semantics: sync points, sync-task records and their on-disk progress
//! files, the calls and their quirks ([`calls`]: the delete RPC's two spellings, refusals in
//! the body, what each call changes), and the health of sync sub-tasks read from successive
//! TaskStatus polls (trouble in words, table names, bounded count history). Protocol quirks of
//! OpenMLDB live here and nowhere else.
//!
//! Must never: write a `SyncPoint` without its `type` (both servers reject it, even for
//! `kSNAPSHOT` = 0), or guess a progress file's framing from content alone when its name says
//! which program wrote it.
//!
//! Depends on `wire` (framings), `schema`, `codec` and `atomic`; never on `net`, whose
//! transports, guard and SyncTool client ([`crate::net::synctool`]) ask here, nor on `dump`,
//! which reads datasync's files and summarises its records through this module ([`summary`]).

pub mod calls;
pub mod health;
pub mod progress;
pub mod status;
pub mod tables;
pub mod trend;

pub use health::{HealthConfig, HealthSummary, SubTaskHealth, SyncHealth, Trouble};
pub use progress::{ProgressFileKind, summarize_add_sync_task, sync_point_text};
pub use status::{SubTaskRow, SyncTaskHistory};
pub use tables::TableNames;
pub use trend::{Series, Trends};

/// Full names of the types this module reads.
pub const ADD_SYNC_TASK_REQUEST: &str = "openmldb.datasync.AddSyncTaskRequest";
pub const SYNC_POINT: &str = "openmldb.datasync.SyncPoint";

/// One line for a datasync record a dump holds (an `AddSyncTaskRequest`: which partition, from
/// where, to where); None for a message of another type.
pub fn summary(msg: &prost_reflect::DynamicMessage) -> Option<String> {
    use prost_reflect::ReflectMessage;
    (msg.descriptor().full_name() == ADD_SYNC_TASK_REQUEST).then(|| summarize_add_sync_task(msg))
}

/// A SyncTool method from the built-in schemas (`DeleteSyncTask` under its wire name).
pub fn synctool_method(name: &str) -> Result<prost_reflect::MethodDescriptor, String> {
    let set = crate::schema::SchemaSet::shared_builtin();
    let svc = set
        .pool()
        .get_service_by_name("openmldb.datasync.SyncTool")
        .ok_or("the built-in schemas lack openmldb.datasync.SyncTool")?;
    svc.methods().find(|m| m.name() == name).ok_or_else(|| format!("SyncTool has no method {name}"))
}

/// CreateSyncTask's `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    /// Snapshot, then the binlog up to its current end; then the task finishes.
    Full = 0,
    /// Like `FullAndContinuous`, skipping rows older than `start_ts`.
    IncrementalByTimestamp = 1,
    /// Snapshot, then follow the binlog forever.
    FullAndContinuous = 2,
}

impl SyncMode {
    pub fn from_number(n: u8) -> Option<SyncMode> {
        match n {
            0 => Some(SyncMode::Full),
            1 => Some(SyncMode::IncrementalByTimestamp),
            2 => Some(SyncMode::FullAndContinuous),
            _ => None,
        }
    }
}

/// One change to a SyncTool's tasks, as the window's dashboard asks for it and
/// [`crate::net::synctool::SyncToolClient`] sends it: typed from the form to the call, never
/// built as JSON and parsed back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskChange {
    /// CreateSyncTask for one table; `start_ts` (ms) only with [`SyncMode::IncrementalByTimestamp`].
    Create { db: String, table: String, mode: SyncMode, start_ts: Option<u64>, dest: String },
    /// DeleteSyncTask for one table.
    Delete { db: String, table: String },
    /// DESTRUCTIVE: TaskStatus with `clear_all` (every task deleted).
    ClearAll,
}

impl TaskChange {
    /// The SyncTool method the change is sent as (`clear_all` goes as TaskStatus).
    pub fn method(&self) -> &'static str {
        match self {
            TaskChange::Create { .. } => "CreateSyncTask",
            TaskChange::Delete { .. } => "DeleteSyncTask",
            TaskChange::ClearAll => "TaskStatus",
        }
    }
}
