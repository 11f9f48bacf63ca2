//! Replaying a salvage into the new primary through the public Milvus API (reference
//! `milvus-replay.md`): the dumps of a salvage folder merged by `_tt`, transactions buffered to
//! their commit, what the new primary already has or cannot take skipped with a reason, the
//! new primary's schema and keys checked, then calls sent in order under a journal so nothing
//! is sent twice, and the result verified.
//!
//! Owns: the replay rules (which WAL message becomes which public call, and why one is
//! skipped), the conversion of WAL bodies into public requests, the plan, the journal and the
//! verification, and the job that runs the calls ([`apply`]: plan, apply under the journal,
//! verify; behind [`crate::jobs::handle`]). The salvage is read through [`crate::salvage`]'s
//! on-disk format.
//! Must never: send anything while planning (planning only reads: DescribeCollection, Query),
//! replay a message at or below its pchannel's checkpoint, split a transaction, or hold a
//! salvage's bodies in memory (units point at frames; bodies are read again when sent).

pub mod apply;
pub mod convert;
pub mod journal;
pub mod plan;
pub mod schema_check;
mod send;
pub mod simulate;
pub mod source;
pub mod target;
pub mod units;
pub mod wire_insert;

pub use journal::{Journal, SavedPlan};
pub use plan::{AutoIdChoice, CollectionPlan, Plan, PlanOptions, Policy, build_plan};
pub use source::Salvage;
pub use target::NewPrimary;
pub use units::{Op, SkipReason, Skipped, Unit};

use serde::{Deserialize, Serialize};

/// The database a request or WAL body names: `default` when it names none, as Milvus reads it.
pub fn database_name(db: &str) -> String {
    if db.is_empty() { "default".to_string() } else { db.to_string() }
}

/// A primary key as Milvus has them: Int64 or VarChar.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Pk {
    Int(i64),
    Str(String),
}

impl std::fmt::Display for Pk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pk::Int(v) => write!(f, "{v}"),
            Pk::Str(s) => write!(f, "{s:?}"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("{path}: {reason}")]
    File { path: String, reason: String },
    #[error("{path}: frame {frame} at byte {offset}: {reason}")]
    Frame { path: String, frame: u64, offset: u64, reason: String },
    #[error(transparent)]
    Net(#[from] crate::net::NetError),
    #[error("the new primary refused {call} on {collection}: {reason}")]
    Refused { call: String, collection: String, reason: String },
    #[error("{0}")]
    Plan(String),
    #[error("cancelled")]
    Cancelled,
    #[error(transparent)]
    Stopped(#[from] crate::jobs::handle::JobStopped),
}

#[cfg(test)]
mod tests;
