//! Milvus WAL semantics on top of the typed codec: message ids per WAL backend, timeticks (their
//! base-36 text; their wall time is [`crate::time`]'s), message types with their header and
//! body types, and the analysis of one dumped `common.ImmutableMessage` into what an operator
//! needs to see.
//!
//! Owns: the meaning of the `ImmutableMessage` property map and ids (reference
//! `milvus-wal.md` §3–§5), and Milvus's calls as `net` must know them ([`calls`]: which methods
//! write, what a reply's status says; [`replicate_info`]: a GetReplicateInfo refused for its
//! pchannel). Must never: panic on dumped data, treat an encrypted or
//! legacy payload as corruption, or talk to a server (that is the network layer's job).

pub mod analyze;
pub mod base36;
pub mod calls;
pub mod category;
pub mod chunk;
pub mod fast;
pub mod message_id;
pub mod reading;
pub mod replicate_info;
mod summary;
pub mod types;
pub mod versions;

#[cfg(test)]
mod tests;

pub use analyze::{Encryption, WalMessage, analyze, analyze_bytes, analyze_envelope, analyze_row};
pub use base36::{parse_base36_u64, to_base36};
pub use category::TypeCategory;
pub use chunk::ChunkMark;
pub use fast::{Detail, SummaryReader};
pub use message_id::{
    MessageIdParts, RenderedId, WalBackend, compare_message_ids, display_message_id, encode_message_id,
    message_id_parts, render_message_id,
};
pub use reading::reading_json;
pub use summary::RowFacts;
pub use types::{header_body_types, is_dumped_type, message_type_name, payload_body_type};
pub use versions::MilvusVersion;
