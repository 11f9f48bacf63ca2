//! Dump files of any size: memory-mapped reading with framing detection, a frame index built in
//! the background, random access by frame number, the append-only writer with its manifest,
//! and atomic saves with backup.
//!
//! Must never: read a whole large file into memory (only decoded text dumps are held), trust a
//! length prefix, or lose an intact frame that follows a damaged one.

pub mod auto;
pub mod background;
pub mod chunks;
pub mod detect;
pub mod edit_session;
pub mod filter;
pub mod framing;
pub mod index;
mod index_build;
pub mod index_cache;
mod index_empty;
mod index_regions;
mod intact;
pub mod lazy;
pub mod list_rows;
pub mod manifest_check;
pub mod mapping;
pub mod new_dump;
mod prefetch;
pub mod readable;
pub mod reader;
pub mod scan;
/// Atomic saves with a backup (the crate-wide [`crate::atomic`], under the name dumps knew it by).
pub mod save {
    pub use crate::atomic::{Saved, atomic_write, backup_path};
}
pub mod source;
pub mod validate;
pub mod view;
pub mod writer;
mod writer_thread;

pub use detect::Detection;
pub use framing::Framing;
pub use index::Problem;
pub use index_cache::IndexCache;
pub use lazy::LazyDump;
pub use list_rows::{ListRow, ListRows};
pub use mapping::Shrink;
pub use new_dump::NewDump;
pub use reader::{DumpFile, FrameLoc, OpenOptions};
pub use source::TextEncoding;
pub use writer::{DumpWriter, Manifest, ResumePoint, SyncPolicy, manifest_path};
