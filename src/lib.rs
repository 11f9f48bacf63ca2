//! walscope: inspect, decode, edit and re-send protobuf write-ahead-log traffic.
//!
//! This crate is the `walscope` binary's CLI ([`cli`]: parse flags, call the library, print).
//! The work is in the crates below it, re-exported here under the names the CLI, the tests and
//! the benchmarks use: `walscope-core` (schema, wire, codec, dump, wal, datasync, net, atomic,
//! input), `walscope-ops` (salvage, replay, jobs), `walscope-sim` (sim, with the `demo` feature) and
//! `walscope-gui` (ui, with the `gui` feature).

pub mod cli;

pub use walscope_core::{atomic, codec, datasync, diff, dump, fmt, input, net, schema, time, wal, wire};
pub use walscope_ops::{jobs, replay, salvage, timeline};
#[cfg(feature = "demo")]
pub use walscope_sim as sim;

#[cfg(feature = "gui")]
pub use walscope_gui as ui;
