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
