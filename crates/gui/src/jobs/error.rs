//! Why a job did not do its work: [`JobError`], the library's own errors kept typed, so the
//! pane that shows one says what happened (the words are made where it is drawn).
//!
//! Must never: turn an error into a string before it reaches the window's edge.

use std::sync::Arc;

/// What went wrong with a file a job read or wrote (the path is [`JobError::File`]'s).
#[derive(Debug, thiserror::Error)]
pub enum FileFailed {
    /// The system's words (a folder not created, a sample not copied).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The file contract refuses the target (an input, not a regular file, no folder, ...).
    #[error(transparent)]
    Refused(#[from] crate::atomic::OutputError),
    /// The target exists and replacing it was not ticked.
    #[error(
        "{} already exists: nothing was written. Tick \"Replace an existing file\" to replace it (the old one is then kept as .bak)",
        .0.display()
    )]
    ExistsUnticked(std::path::PathBuf),
    /// A file to copy could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read { path: std::path::PathBuf, source: std::io::Error },
    /// The tab's file was replaced on disk after it was opened: saving would write over the new one.
    #[error(
        "{} was replaced on disk after it was opened: saving would write the file as it was opened, with your edits, over the new one. Use Save as to keep the edits in another file, or reopen it",
        .0.display()
    )]
    ReplacedOnDisk(std::path::PathBuf),
    /// The edits could not be rendered (the file was cut short meanwhile: the library's words).
    #[error("{0}")]
    Render(String),
    /// The atomic write failed.
    #[error("cannot save: {0}")]
    Save(std::io::Error),
}

/// Why a job did not do its work: the library's own error, kept typed so the pane that shows
/// it can say what happened (the words are made where it is drawn).
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    Net(#[from] crate::net::NetError),
    #[error(transparent)]
    Schema(#[from] crate::schema::SchemaError),
    #[error(transparent)]
    Profile(#[from] crate::net::profile::ProfileError),
    #[error(transparent)]
    History(#[from] crate::net::history::HistoryError),
    #[error(transparent)]
    Reflection(#[from] crate::net::reflection::ReflectionError),
    #[error(transparent)]
    Call(#[from] crate::net::call::CallError),
    #[error(transparent)]
    Input(#[from] walscope_core::input::InputError),
    #[error(transparent)]
    Dump(#[from] crate::dump::reader::DumpError),
    #[error(transparent)]
    Salvage(#[from] walscope_ops::salvage::SalvageError),
    /// A SyncTool answered a dashboard's call with a refusal.
    #[error("{method} was refused: {error}")]
    SyncToolRefused { method: &'static str, error: crate::net::SyncToolError },
    /// A server did not answer in time.
    #[error("{endpoint}: no answer within {secs} s")]
    NoAnswer { endpoint: String, secs: u64 },
    /// A file could not be opened, read or written.
    #[error("{path}: {reason}")]
    File { path: std::path::PathBuf, reason: FileFailed },
    /// A file that is not a transcript walscope can read (the library's words).
    #[error("{}: {source}", path.display())]
    Transcript {
        path: std::path::PathBuf,
        #[source]
        source: crate::net::transcript::TranscriptError,
    },
    /// The window's runtime could not start.
    #[error("cannot start the network runtime: {0}")]
    NoRuntime(Arc<std::io::Error>),
    /// The job's task ended without handing back a result.
    #[error("the job ended without a result (it panicked?)")]
    Panicked,
    #[error("stopped")]
    Cancelled,
}
