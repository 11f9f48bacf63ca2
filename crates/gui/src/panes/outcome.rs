//! What a job hands back to the window: [`JobOutput`] when it did its work, a typed
//! [`JobError`] when it did not (the library's own error types, kept as they are so the panel
//! that shows one can say what happened and what to do), and the status bar's [`Notice`].
//!
//! Must never: flatten a library error into a string before it reaches the panel that shows it.

pub use crate::jobs::JobError;
use crate::panes::file::FileTab;
use crate::schema::SchemaSet;
use std::path::PathBuf;

/// A job of the window: what it made, or why it did not.
pub type JobResult = Result<JobOutput, JobError>;

impl From<crate::jobs::JobDone> for JobOutput {
    fn from(d: crate::jobs::JobDone) -> Self {
        JobOutput::Done(d.0)
    }
}

/// The pchannel names an old primary's replicate configuration lists.
pub type PchannelNames = Vec<String>;

/// A job's result, routed by the app to whoever asked.
pub enum JobOutput {
    /// The chunk group of a file tab's selected chunk frame.
    ChunkGroup { tab: PathBuf, view: crate::panes::file::chunk_group::ChunkGroupView },
    /// A file tab's size order, computed.
    SizeOrder { tab: PathBuf, order: Box<crate::panes::file::row_order::SizeOrder> },
    /// A file opened (read its head, detected its framing, started indexing).
    Opened { path: PathBuf, tab: Box<FileTab> },
    /// A save finished: what it did to `target` (the tab's own file, or a save-as copy), and
    /// the target read again from disk (None: nothing changed on disk, the tab stays as it is).
    Saved {
        tab: PathBuf,
        target: PathBuf,
        outcome: crate::atomic::Saved,
        reopened: Option<Result<Box<FileTab>, JobError>>,
    },
    /// A schema source loaded into a copy of the pool.
    Schemas { set: Box<SchemaSet>, summary: String },
    /// profiles.json as read.
    Profiles(Vec<crate::net::profile::ConnectionProfile>),
    /// A dashboard's poller, started once its SyncTool profile connected.
    Watching(Box<walscope_ops::jobs::task_poll::TaskPoller>),
    /// A connection test: what answered, or why nothing did.
    Probed(Box<crate::net::probe::ProbeReport>),
    /// A test of the profile form's unsaved settings.
    FormProbed(Box<crate::net::probe::ProbeReport>),
    /// profiles.json after a save or delete, and what was done.
    ProfilesSaved { profiles: Vec<crate::net::profile::ConnectionProfile>, what: String },
    /// A composer's unary call: the reply, or why there is none.
    /// `transcript`: the call's transcript, for "Save transcript" (None for a stream that did
    /// not open).
    Called {
        composer: u64,
        result: Result<Box<crate::net::call::CallOutcome>, crate::net::NetError>,
        transcript: Option<Box<crate::net::transcript::Transcript>>,
    },
    /// The call history, as a composer asked for it.
    History { composer: u64, entries: Vec<crate::net::history::HistoryEntry> },
    /// A composer's stream ended: how, or why its dump could not be written.
    Streamed {
        composer: u64,
        /// The stream's progress and newest messages as they ended (None: it never opened).
        tail: Option<crate::jobs::LiveStream>,
        summary: Result<crate::net::call::StreamSummary, walscope_ops::jobs::call_stream::CallStreamError>,
        /// The stream's transcript, for "Save transcript" (None when the dump failed).
        transcript: Option<Box<crate::net::transcript::Transcript>>,
    },
    /// The old primary's pchannels from its replicate configuration, for a salvage pane.
    Pchannels { pane: u64, result: Result<PchannelNames, crate::net::NetError> },
    /// The salvage checkpoints fetched from the new primary.
    Checkpoints {
        pane: u64,
        result: Result<walscope_ops::salvage::checkpoint::Checkpoints, crate::net::NetError>,
    },
    /// A salvage folder's unfinished dumps.
    Unfinished {
        pane: u64,
        result: Result<Vec<walscope_ops::salvage::folder::Unfinished>, walscope_ops::salvage::SalvageError>,
    },
    /// A salvage set (or a resumed dump) ended: how each dump ended, and its report.
    SalvageEnded { pane: u64, ends: Vec<crate::panes::salvage::DumpEnd> },
    /// A folder chosen with the desktop's dialog for a replay pane.
    ReplayFolder { pane: u64, folder: PathBuf },
    /// A salvage folder read into a timeline, or why it could not be.
    Timeline {
        pane: u64,
        result: Result<
            std::sync::Arc<walscope_ops::timeline::Timeline>,
            std::sync::Arc<walscope_ops::timeline::TimelineError>,
        >,
    },
    /// A replay's plan (nothing was sent), or why there is none.
    ReplayPlanned {
        pane: u64,
        result: Result<Box<walscope_ops::replay::apply::Planned>, walscope_ops::replay::ReplayError>,
    },
    /// A replay's apply ended: what was sent and the verification, or why it stopped.
    ReplayApplied {
        pane: u64,
        result: Box<Result<walscope_ops::replay::apply::ApplyOutcome, walscope_ops::replay::ReplayError>>,
    },
    /// A replay verified again.
    ReplayVerified {
        pane: u64,
        result: Result<walscope_ops::replay::apply::Verification, walscope_ops::replay::ReplayError>,
    },
    /// A dashboard's change went through SyncTool.
    TaskChanged(crate::datasync::TaskChange),
    /// A composer's stream dump was copied to `path`.
    StreamSaved { composer: u64, path: PathBuf },
    /// A composer's transcript was written to `path`.
    TranscriptSaved { composer: u64, path: PathBuf },
    /// A file opened by the app's Open path turned out to be a transcript: it opens in a
    /// composer instead of a tab.
    TranscriptFile { path: PathBuf, doc: Box<crate::net::transcript::Transcript> },
    /// A transcript read back for a composer, to fill it in and show the recorded reply.
    TranscriptOpened { composer: u64, path: PathBuf, doc: Box<crate::net::transcript::Transcript> },
    /// The open dialog's listing of what was typed (`generation`: which typing it answers).
    Completions { generation: u64, completions: crate::path_complete::Completions },
    /// The desktop's file dialog ended: a file, nothing chosen, or why it did not show.
    DesktopPicked(crate::desktop_dialog::Picked),
    /// Two messages diffed for diff pane `pane` (`pair`: the dump pair they are, when the pane
    /// compares dumps).
    MessagesDiffed {
        pane: u64,
        pair: Option<usize>,
        result: Result<Box<crate::panes::diff::MessageCompare>, crate::panes::diff::DiffFailed>,
    },
    /// Two dumps diffed for diff pane `pane`.
    DumpsDiffed {
        pane: u64,
        result: Result<Box<crate::panes::diff::dump_view::DumpCompare>, crate::panes::diff::DiffFailed>,
    },
    /// Anything else that only needs saying.
    Done(String),
}

impl std::fmt::Debug for JobOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JobOutput::Opened { path, .. } => write!(f, "Opened({})", path.display()),
            JobOutput::SizeOrder { tab, .. } => write!(f, "SizeOrder({})", tab.display()),
            JobOutput::ChunkGroup { view, .. } => write!(f, "ChunkGroup({})", view.frame),
            JobOutput::Saved { target, .. } => write!(f, "Saved({})", target.display()),
            JobOutput::Schemas { summary, .. } => write!(f, "Schemas({summary})"),
            JobOutput::Profiles(p) => write!(f, "Profiles({})", p.len()),
            JobOutput::Watching(_) => write!(f, "Watching"),
            JobOutput::Probed(r) => write!(f, "Probed({})", r.profile),
            JobOutput::FormProbed(r) => write!(f, "FormProbed({})", r.profile),
            JobOutput::ProfilesSaved { what, .. } => write!(f, "ProfilesSaved({what})"),
            JobOutput::Called { composer, .. } => write!(f, "Called({composer})"),
            JobOutput::History { entries, .. } => write!(f, "History({})", entries.len()),
            JobOutput::Pchannels { pane, .. } => write!(f, "Pchannels({pane})"),
            JobOutput::Checkpoints { pane, .. } => write!(f, "Checkpoints({pane})"),
            JobOutput::Unfinished { pane, .. } => write!(f, "Unfinished({pane})"),
            JobOutput::SalvageEnded { pane, .. } => write!(f, "SalvageEnded({pane})"),
            JobOutput::ReplayFolder { pane, .. } => write!(f, "ReplayFolder({pane})"),
            JobOutput::Timeline { pane, .. } => write!(f, "Timeline({pane})"),
            JobOutput::ReplayPlanned { pane, .. } => write!(f, "ReplayPlanned({pane})"),
            JobOutput::ReplayApplied { pane, .. } => write!(f, "ReplayApplied({pane})"),
            JobOutput::ReplayVerified { pane, .. } => write!(f, "ReplayVerified({pane})"),
            JobOutput::Streamed { composer, .. } => write!(f, "Streamed({composer})"),
            JobOutput::StreamSaved { path, .. } => write!(f, "StreamSaved({})", path.display()),
            JobOutput::TranscriptSaved { path, .. } => write!(f, "TranscriptSaved({})", path.display()),
            JobOutput::TranscriptFile { path, .. } => write!(f, "TranscriptFile({})", path.display()),
            JobOutput::TranscriptOpened { path, .. } => write!(f, "TranscriptOpened({})", path.display()),
            JobOutput::TaskChanged(c) => write!(f, "TaskChanged({})", c.method()),
            JobOutput::Completions { generation, .. } => write!(f, "Completions({generation})"),
            JobOutput::DesktopPicked(p) => write!(f, "DesktopPicked({})", p.is_ok()),
            JobOutput::MessagesDiffed { pane, pair, .. } => write!(f, "MessagesDiffed({pane}, {pair:?})"),
            JobOutput::DumpsDiffed { pane, .. } => write!(f, "DumpsDiffed({pane})"),
            JobOutput::Done(s) => write!(f, "Done({s})"),
        }
    }
}

/// The status bar's last word: a result (plain) or an error (in the error colour).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub text: String,
    pub is_error: bool,
}

impl Notice {
    pub fn info(text: impl Into<String>) -> Notice {
        Notice { text: text.into(), is_error: false }
    }
    pub fn error(text: impl Into<String>) -> Notice {
        Notice { text: text.into(), is_error: true }
    }
}
