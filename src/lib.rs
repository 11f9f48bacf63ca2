//! walscope: inspect, decode, edit and re-send protobuf write-ahead-log traffic.
//!
//! The core library (everything but `ui`) builds and tests without a display; the CLI and the
//! GUI are two faces on the same functions.

pub mod atomic;
pub mod cli;
pub mod codec;
pub mod datasync;
pub mod dump;
pub mod input;
pub mod jobs;
pub mod net;
pub mod replay;
pub mod schema;
pub mod sim;
pub mod wal;
pub mod wire;

#[cfg(feature = "gui")]
pub mod ui;
