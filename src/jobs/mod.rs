//! Long-running work off the UI thread and out of the CLI's way. Each job runs as a tokio task,
//! publishes a progress snapshot through a `watch` channel, stops on a cancellation token, and
//! returns a result. The jobs: salvage (checkpoint + DumpMessages into a resumable dump),
//! call_stream (any server stream into a dump, with a bounded ring for a live view), task_poll
//! (SyncTool's TaskStatus every few seconds, with rates).
//!
//! Must never: block a runtime worker on disk or CPU work for long, or leave its output in a
//! state the next run cannot continue from.

pub mod call_stream;
pub mod salvage;
pub mod task_poll;

pub use call_stream::{
    CallStreamHandle, CallStreamOutcome, CallStreamProgress, CallStreamSpec, CallStreamState,
};
pub use salvage::{SalvageError, SalvageHandle, SalvageOutcome, SalvageProgress, SalvageSpec, SalvageState};
