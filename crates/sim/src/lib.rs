//! Realistic synthetic data and demo servers: the Milvus WAL generator behind `walscope sample`,
//! OpenMLDB progress records, a demo Milvus (alone, or as an old and a new primary after a
//! forced failover: [`milvus::pair`]) and a demo SyncTool + DataCollector on loopback, each with
//! fault switches; the whole demo of `walscope demo` and `--demo` is started one way
//! ([`demo::Demo::start`]). Deterministic for a given seed.
//!
//! Must never: produce bytes our own decoders would not accept as real traffic (every message
//! follows the reference's rules), or depend on wall-clock time or global randomness.

pub mod collector;
pub mod datasync;
pub mod demo;
pub mod milvus;
pub mod rng;
pub mod sample;
pub mod synctool;
mod synctool_state;
pub mod walgen;

pub use walgen::{GeneratedMessage, WalGenConfig, WalGenerator};

// The core's modules under the names this crate's code uses (`crate::dump`, `crate::net`, ...).
use walscope_core::{codec, dump, net, schema, time, wal, wire};
