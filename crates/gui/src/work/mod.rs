//! The app's work for the panes, by subject: what a command starts as a job (calls, streams,
//! probes, SyncTool polls, salvage sets, replays, a file's save, the open dialog's listings) and the job bodies that call walscope-core and
//! walscope-ops.

mod call;
pub mod net;
mod open;
mod replay;
mod salvage;
pub mod save;
mod timeline;
