//! What a comparison compares: where "Compare with…" was asked ([`CompareFrom`]), the two sides
//! ([`Side`]) and the other side as the picker names it ([`Pick`]), which the app turns into a
//! side (a frame of an open file is read there, one message; a file on disk by the job).
//!
//! Must never: read a file (a side names it; the diff job reads it).

use std::path::PathBuf;

/// Where "Compare with…" was asked: what becomes side A.
#[derive(Debug, Clone, PartialEq)]
pub enum CompareFrom {
    /// Frame `index` of the open file `path`, as shown (with its unsaved edits).
    Frame { path: PathBuf, index: usize },
    /// The open file `path` as a whole dump.
    File(PathBuf),
    /// The reply a composer shows.
    Reply { composer: u64 },
    /// The request of a history entry, as a composer lists it.
    History { composer: u64, entry: u64 },
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum Side {
    /// A message held in memory: a frame as shown, a reply, a history entry's request.
    /// `type_name`: its message type (None: the other side's).
    Message { label: String, type_name: Option<String>, bytes: Vec<u8> },
    /// A file on disk holding one message (read by the job, as the other side's type).
    MessageFile { path: PathBuf },
    /// A whole dump file (opened and indexed by the job).
    Dump { path: PathBuf },
}

impl Side {
    /// The side in a few words, for the pane's title and headings.
    pub fn label(&self) -> String {
        match self {
            Side::Message { label, .. } => label.clone(),
            Side::MessageFile { path } | Side::Dump { path } => file_name(path),
        }
    }

    pub fn is_dump(&self) -> bool {
        matches!(self, Side::Dump { .. })
    }
}

/// The other side, as chosen in the picker.
#[derive(Debug, Clone, PartialEq)]
pub enum Pick {
    /// A side known already (an earlier reply, a history entry, an open dump, a frame as saved).
    Side(Side),
    /// Frame `index` of the open file `path`, as shown (with its unsaved edits).
    TabFrame { path: PathBuf, index: usize },
    /// A file on disk: a dump when side A is one, else a message file.
    Path(PathBuf),
}

/// "Compare A with B": the app opens a diff pane and starts the job.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareAsk {
    pub a: Side,
    pub b: Pick,
}

/// A file's name (its whole path when it has none).
pub fn file_name(path: &std::path::Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}
