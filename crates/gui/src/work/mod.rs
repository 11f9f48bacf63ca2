//! The app's work for the panes, by subject: what a command starts as a job (calls, streams,
//! probes, SyncTool polls, salvage sets, replays, a file's save, the open dialog's listings, call transcripts) and the job bodies that call walscope-core and
//! walscope-ops.

mod call;
pub mod diff;
pub mod net;
mod open;
mod replay;
mod salvage;
pub mod save;
mod transcript;

pub(crate) use transcript::transcript_in;
mod timeline;
