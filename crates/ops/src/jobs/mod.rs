//! Long-running work off the UI thread and out of the CLI's way, behind one job handle
//! ([`handle`]: a progress snapshot through a `watch` channel, a cancellation token, a typed
//! result, rate and ETA helpers) that every job returns: a salvage ([`crate::salvage`]), a
//! replay's apply ([`crate::replay::apply`]) and the two generic jobs kept here: call_stream
//! (any server stream into a dump, with a bounded ring for a live view) and task_poll
//! (SyncTool's TaskStatus every few seconds, with rates and the health of every sub-task).
//!
//! Must never: block a runtime worker on disk or CPU work for long, leave its output in a state
//! the next run cannot continue from, or depend on `salvage` or `replay` (they use the handle,
//! never the other way round).

pub mod call_stream;
pub mod handle;
pub mod task_poll;

pub use call_stream::{
    CallStreamHandle, CallStreamOutcome, CallStreamProgress, CallStreamSpec, CallStreamState,
};
