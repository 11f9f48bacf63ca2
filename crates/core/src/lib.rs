//! walscope-core: everything about bytes, schemas, files and sockets, with no window and no
//! jobs: built-in and user schemas ([`schema`]), schema-less wire decoding ([`wire`]), typed
//! decoding and lossless edits ([`codec`]), dump files of any size ([`dump`]), Milvus WAL
//! semantics ([`wal`]), OpenMLDB datasync ([`datasync`]), the network layer ([`net`]), and the
//! file contract every write keeps ([`atomic`], with [`input`] for what is read), wall-clock
//! time one way ([`time`]) and sizes and counts as an operator reads them ([`fmt`]).
//!
//! Must never: depend on egui or on the jobs of `walscope-ops` (the crate graph forbids both);
//! protocol quirks live in `wal` (Milvus) and `datasync` (OpenMLDB) only.

pub mod atomic;
pub mod codec;
pub mod datasync;
pub mod diff;
pub mod dump;
pub mod fmt;
pub mod input;
pub mod net;
pub mod schema;
pub mod time;
pub mod wal;
pub mod wire;

/// The demo data of the unit tests (`walscope-sim` is a dev-dependency: only external types,
/// such as a `DescriptorPool` or bytes, cross between it and this crate).
#[cfg(test)]
use walscope_sim as sim;
