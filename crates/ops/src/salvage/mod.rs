//! Salvage of a failed Milvus primary's WAL (reference §1.4, §4, §8): the checkpoints the new
//! primary gives ([`checkpoint`], each asked by the new primary's name of the pchannel:
//! `pchannels`), the job that dumps one pchannel from its checkpoint into a
//! resumable dump ([`job`], with its dealings with the wire in `wire`), several pchannels at
//! once into one folder ([`set`]), the folder and its `salvage.json` ([`folder`]), and what a
//! salvage dump holds, read back from the file ([`report`]).
//!
//! Owns: the on-disk format replay reads: a folder's `salvage.json` ([`FolderManifest`]), each
//! dump's `DumpMessagesResponse` frames ([`RESPONSE_TYPE`]) and the job its manifest records
//! ([`SalvageRecord`]). Every salvage runs behind the one job handle of [`crate::jobs`].
//! Must never: call the new primary with anything but read-only methods, write the old
//! primary, or write a frame twice or out of order (a resume continues where the file ends).

pub mod checkpoint;
pub mod folder;
pub mod job;
mod pchannels;
pub mod report;
pub mod set;
mod wire;

pub use checkpoint::{Checkpoint, CheckpointProblem, CheckpointReport, Checkpoints};
pub use folder::{FolderManifest, Unfinished, find_unfinished};
pub use job::{
    RESPONSE_TYPE, SalvageError, SalvageHandle, SalvageOptions, SalvageOutcome, SalvageProgress,
    SalvageRecord, SalvageSpec, SalvageState,
};
pub use report::{DumpReport, analyze_dump};
pub use set::{RunOptions, SalvageSetRun, SalvageSetSpec, SetJob};
