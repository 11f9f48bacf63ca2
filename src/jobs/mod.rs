//! Long-running work off the UI thread and out of the CLI's way. Each job runs as a tokio task,
//! publishes a progress snapshot through a `watch` channel, stops on a cancellation token, and
//! returns a result.
//!
//! Must never: block a runtime worker on disk or CPU work for long, or leave its output in a
//! state the next run cannot continue from.

pub mod salvage;
pub mod task_poll;

pub use salvage::{SalvageError, SalvageHandle, SalvageOutcome, SalvageProgress, SalvageSpec, SalvageState};
