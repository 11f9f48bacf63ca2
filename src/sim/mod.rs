//! Realistic synthetic data: the Milvus WAL generator behind `walscope sample` (and, later, the
//! demo servers), and OpenMLDB progress records. Deterministic for a given seed.
//!
//! Must never: produce bytes our own decoders would not accept as real traffic (every message
//! follows the reference's rules), or depend on wall-clock time or global randomness.

pub mod milvus;
pub mod milvus_wal;
pub mod rng;
pub mod sample;
mod walbodies;
pub mod walgen;

pub use walgen::{GeneratedMessage, WalGenConfig, WalGenerator};
