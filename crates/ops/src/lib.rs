//! walscope-ops: the operations an operator runs after a failover, over walscope-core: salvage
//! of the failed primary's WAL, replay into the new primary, and the jobs that run them
//! (progress, cancel, result), the same for the CLI and the window.
//!
//! Must never: draw anything (no egui), or reach a server but through `walscope_core::net`.

pub mod jobs;
pub mod replay;

// The core's modules under the names this crate's code uses (`crate::dump`, `crate::net`, ...).
use walscope_core::{atomic, codec, datasync, dump, net, schema, wal, wire};
#[cfg(test)]
use walscope_sim as sim;
