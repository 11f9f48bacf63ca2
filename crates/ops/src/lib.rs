//! walscope-ops: the operations an operator runs after a failover, over walscope-core: salvage
//! of the failed primary's WAL ([`salvage`]), replay into the new primary ([`replay`]), and the
//! one job handle that runs them and the other long jobs ([`jobs`]: progress, cancel, result),
//! the same for the CLI and the window; and a salvage folder's history on one time axis
//! ([`timeline`]).
//!
//! Dependencies point one way: `replay` reads what `salvage` wrote; both run behind `jobs`'
//! handle; `jobs` knows neither.
//! Must never: draw anything (no egui), or reach a server but through `walscope_core::net`.

pub mod jobs;
pub mod replay;
pub mod salvage;
pub mod timeline;

// The core's modules under the names this crate's code uses (`crate::dump`, `crate::net`, ...).
use walscope_core::{atomic, codec, datasync, dump, fmt, net, schema, time, wal, wire};
#[cfg(test)]
use walscope_sim as sim;
