//! Long-running work off the UI thread and out of the CLI's way. Each job runs as a tokio task,
//! publishes a progress snapshot through a `watch` channel, stops on a cancellation token, and
//! returns a result. The jobs: salvage (checkpoint + DumpMessages into a resumable dump),
//! salvage sets (several pchannels in parallel into one folder, with its `salvage.json`, and
//! their checkpoints and result analysis), call_stream (any server stream into a dump, with a
//! bounded ring for a live view), task_poll (SyncTool's TaskStatus every few seconds, with rates
//! and the health of every sub-task).
//!
//! Must never: block a runtime worker on disk or CPU work for long, or leave its output in a
//! state the next run cannot continue from.

pub mod call_stream;
pub mod checkpoint;
pub mod handle;
pub mod replay;
pub mod salvage;
pub mod salvage_folder;
pub mod salvage_report;
pub mod salvage_set;
mod salvage_wire;
pub mod task_poll;

pub use call_stream::{
    CallStreamHandle, CallStreamOutcome, CallStreamProgress, CallStreamSpec, CallStreamState,
};
pub use checkpoint::{Checkpoint, CheckpointProblem, CheckpointReport, Checkpoints};
pub use salvage::{
    SalvageError, SalvageHandle, SalvageOptions, SalvageOutcome, SalvageProgress, SalvageSpec, SalvageState,
};
pub use salvage_folder::{FolderManifest, Unfinished, find_unfinished};
pub use salvage_report::{DumpReport, analyze_dump};
pub use salvage_set::{RunOptions, SalvageSetRun, SalvageSetSpec, SetJob};
