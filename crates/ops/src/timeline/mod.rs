//! The timeline of a salvage folder: every pchannel's dump a lane on one time axis (timeticks,
//! shown as UTC by [`crate::time`]), each frame a compact columnar record (frame number,
//! timetick, type, collection, transaction, size), and what is derived from them: transactions
//! as spans from BeginTxn to CommitTxn (or RollbackTxn, or still open at the dump's end), DDL
//! markers, gaps in time, damaged ranges the dump index found, counts per type category in bins
//! of any time range, and the replay plan overlaid when the folder holds one.
//!
//! Owns: reading a folder into lanes ([`load`]), the derived spans and marks, the bins and
//! the filters. The CLI (`walscope timeline`) and the window's Timeline pane both read this.
//! Must never: draw (no egui), write anything, or hold a frame's bytes (a lane holds about 37
//! bytes a frame: a million frames are tens of megabytes).

mod bins;
mod derive;
mod load;
mod overlay;

pub use bins::Bin;
pub use derive::{GAP_FACTOR, GAP_MIN_MS};
pub use load::{LoadOptions, load};
pub use overlay::{PlanMark, PlanWhat};

use crate::time::timetick_to_millis;
use crate::wal::TypeCategory;
use std::ops::Range;
use std::path::PathBuf;

/// A column's "none" (no collection, no transaction).
pub const NONE: i64 = i64::MIN;

/// One pchannel's dump, its frames sorted by timetick (a frame whose timetick goes back is
/// placed by its timetick; `frame` keeps its number in the dump).
#[derive(Debug, Clone, Default)]
pub struct Lane {
    pub pchannel: String,
    pub path: PathBuf,
    /// Frames read (with a timetick); frames without one are counted in `untimed`.
    pub tt: Vec<u64>,
    pub frame: Vec<u32>,
    /// The type number (`_t`); -1 when it could not be read.
    pub ty: Vec<i32>,
    /// [`TypeCategory::index`] of `ty`.
    pub cat: Vec<u8>,
    /// Collection id, or [`NONE`].
    pub collection: Vec<i64>,
    /// Transaction id (`_tx`), or [`NONE`].
    pub txn: Vec<i64>,
    pub size: Vec<u32>,
    /// Frames in the dump that have no timetick (undecodable): not on the axis.
    pub untimed: u64,
    /// Per-category counts of each block of [`bins::BLOCK`] frames (for fast bins).
    pub(crate) blocks: Vec<[u32; 6]>,
    /// The lane's gap rule: jumps longer than this many milliseconds are gaps.
    pub gap_threshold_ms: u64,
}

impl Lane {
    pub fn len(&self) -> usize {
        self.tt.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tt.is_empty()
    }

    /// The frames (places in the lane's columns) with a timetick in `from..to`.
    pub fn range(&self, from: u64, to: u64) -> Range<usize> {
        let a = self.tt.partition_point(|&t| t < from);
        let b = self.tt.partition_point(|&t| t < to);
        a..b.max(a)
    }

    pub fn category(&self, i: usize) -> TypeCategory {
        TypeCategory::ALL[usize::from(self.cat[i]).min(5)]
    }

    /// Whether place `i` passes `filter`.
    pub fn keeps(&self, i: usize, filter: &Filter) -> bool {
        filter.collection.is_none_or(|c| self.collection[i] == c)
            && (filter.types.is_empty() || filter.types.contains(&self.ty[i]))
    }

    pub fn first_tt(&self) -> Option<u64> {
        self.tt.first().copied()
    }

    pub fn last_tt(&self) -> Option<u64> {
        self.tt.last().copied()
    }
}

/// Which frames count: one collection and/or some type numbers (empty: every type).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub collection: Option<i64>,
    pub types: Vec<i32>,
}

impl Filter {
    pub fn is_empty(&self) -> bool {
        self.collection.is_none() && self.types.is_empty()
    }
}

/// How a transaction ended in the dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnEnd {
    Committed,
    RolledBack,
    /// No CommitTxn or RollbackTxn before the dump's end.
    Open,
}

impl TxnEnd {
    pub fn name(self) -> &'static str {
        match self {
            TxnEnd::Committed => "committed",
            TxnEnd::RolledBack => "rolled back",
            TxnEnd::Open => "open",
        }
    }
}

/// A transaction on one lane: from its BeginTxn (or its first frame in the dump) to its
/// CommitTxn or RollbackTxn (or its last frame, when open).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnSpan {
    pub lane: usize,
    pub id: i64,
    pub begin_tt: u64,
    pub end_tt: u64,
    pub end: TxnEnd,
    /// Frames of the transaction in the dump (BeginTxn, bodies, its end).
    pub frames: u32,
    /// Whether its BeginTxn is in the dump (else it began before the dump's first frame).
    pub has_begin: bool,
    /// The first collection a body names, when any.
    pub collection: Option<i64>,
    /// The frame number of its first frame in the dump.
    pub first_frame: u32,
}

/// A DDL message on one lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DdlMark {
    pub lane: usize,
    /// Its place in the lane's columns.
    pub at: usize,
    pub frame: u32,
    pub tt: u64,
    /// The type's name (`CreateCollection`), or its number when the schema does not name it.
    pub label: String,
    pub collection: Option<i64>,
}

/// A stretch of one lane's time with no frame, longer than the lane's gap rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    pub lane: usize,
    pub from_tt: u64,
    pub to_tt: u64,
    /// The frame before the gap.
    pub after_frame: u32,
}

impl Gap {
    pub fn millis(&self) -> u64 {
        timetick_to_millis(self.to_tt).saturating_sub(timetick_to_millis(self.from_tt))
    }
}

/// Bytes of one lane's dump the index could not read as frames, placed on the axis between the
/// timeticks of the frames around them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    pub lane: usize,
    pub offset: u64,
    pub len: u64,
    /// Cut short by the end of the file.
    pub truncated: bool,
    pub reason: String,
    /// The last frame before it, and the first after (None at either end).
    pub from_tt: Option<u64>,
    pub to_tt: Option<u64>,
}

/// A whole salvage folder, on one axis.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    pub dir: PathBuf,
    pub lanes: Vec<Lane>,
    /// Every transaction, by lane then begin.
    pub txns: Vec<TxnSpan>,
    pub ddl: Vec<DdlMark>,
    pub gaps: Vec<Gap>,
    pub damage: Vec<Damage>,
    /// The replay plan's verdicts, when the folder holds a saved plan (by lane, then timetick).
    pub plan: Vec<PlanMark>,
    /// The file the plan was read from.
    pub plan_file: Option<PathBuf>,
    /// Type number → name, for every type the schema names.
    pub type_names: std::collections::BTreeMap<i32, String>,
    /// Every collection id seen, sorted (made once at load: a view lists them every frame).
    pub collection_ids: Vec<i64>,
    /// Every type number seen, sorted.
    pub types_seen: Vec<i32>,
}

/// The totals of a timeline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub lanes: usize,
    pub frames: u64,
    pub first_tt: Option<u64>,
    pub last_tt: Option<u64>,
    pub txns: usize,
    pub open_txns: usize,
    pub ddl: usize,
    pub gaps: usize,
    pub damaged: usize,
    pub plan_marks: usize,
}

impl Timeline {
    /// The first and last timetick of every lane together.
    pub fn span(&self) -> Option<(u64, u64)> {
        let first = self.lanes.iter().filter_map(Lane::first_tt).min()?;
        let last = self.lanes.iter().filter_map(Lane::last_tt).max()?;
        Some((first, last))
    }

    pub fn summary(&self) -> Summary {
        let (first_tt, last_tt) = self.span().unzip();
        Summary {
            lanes: self.lanes.len(),
            frames: self.lanes.iter().map(|l| l.len() as u64).sum(),
            first_tt,
            last_tt,
            txns: self.txns.len(),
            open_txns: self.txns.iter().filter(|t| t.end == TxnEnd::Open).count(),
            ddl: self.ddl.len(),
            gaps: self.gaps.len(),
            damaged: self.damage.len(),
            plan_marks: self.plan.len(),
        }
    }

    /// The name of type number `t` (its number when unnamed).
    pub fn type_name(&self, t: i32) -> String {
        self.type_names.get(&t).cloned().unwrap_or_else(|| t.to_string())
    }

    /// The type number called `name` among the types seen (case-insensitive), or a number.
    pub fn type_number(&self, name: &str) -> Option<i32> {
        self.type_names
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(name))
            .map(|(t, _)| *t)
            .or_else(|| name.parse().ok())
    }

    /// Every collection id seen, sorted.
    pub fn collections(&self) -> Vec<i64> {
        self.collection_ids.clone()
    }

    /// The transactions that pass `filter` (by collection: a transaction whose bodies name it).
    pub fn txns_kept<'a>(&'a self, filter: &'a Filter) -> impl Iterator<Item = &'a TxnSpan> + 'a {
        self.txns.iter().filter(move |t| filter.collection.is_none_or(|c| t.collection == Some(c)))
    }

    /// The DDL markers that pass `filter`.
    pub fn ddl_kept<'a>(&'a self, filter: &'a Filter) -> impl Iterator<Item = &'a DdlMark> + 'a {
        self.ddl.iter().filter(move |d| self.lanes[d.lane].keeps(d.at, filter))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TimelineError {
    #[error("{path}: {reason}")]
    Folder { path: String, reason: String },
    #[error(transparent)]
    Dump(#[from] crate::dump::reader::DumpError),
    #[error("cancelled")]
    Cancelled,
}
