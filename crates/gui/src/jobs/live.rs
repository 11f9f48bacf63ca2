//! What a long job shows while it runs, typed: a salvage's dumps (one per pchannel), a replay's
//! apply, a composer's stream. A job body shares it once through [`super::JobCtx::share`]; the
//! registry holds the latest per job and drops it with the job; a pane reads its own jobs' live
//! progress through [`crate::panes::AppView::live_of`].
//!
//! Owns: the live types (receivers of the library's progress, never the work itself). Must
//! never: hold a job's result (that goes to its owner once, as a `JobOutput`), or be written by a
//! pane (a pane reads it; stopping goes through a command).

use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use walscope_ops::jobs::call_stream::{CallStreamProgress, MessageRing};
use walscope_ops::replay::apply::ApplyProgress;
use walscope_ops::salvage::job::SalvageProgress;

/// A running job's typed live progress.
#[derive(Clone)]
pub enum Live {
    /// A salvage set's (or resumed dump's) dumps being written.
    Salvage(Vec<LiveDump>),
    /// A replay's apply.
    Apply(LiveApply),
    /// A composer's server stream, once open.
    Stream(LiveStream),
}

/// A dump being written by a salvage job.
#[derive(Clone)]
pub struct LiveDump {
    pub pchannel: String,
    pub file: PathBuf,
    pub progress: watch::Receiver<SalvageProgress>,
    /// Stops this pchannel's dump alone (the app does, on the pane's command).
    pub cancel: CancellationToken,
}

/// A replay's apply running.
#[derive(Clone)]
pub struct LiveApply {
    pub progress: watch::Receiver<ApplyProgress>,
    /// Read to show that a stop was asked (stopping goes through the app).
    pub cancel: CancellationToken,
}

/// A composer's stream being received: its progress and the ring of its newest messages.
#[derive(Clone)]
pub struct LiveStream {
    pub progress: watch::Receiver<CallStreamProgress>,
    pub ring: Arc<MessageRing>,
}

impl Live {
    pub fn dumps(&self) -> Option<&[LiveDump]> {
        match self {
            Live::Salvage(d) => Some(d),
            _ => None,
        }
    }

    pub fn apply(&self) -> Option<&LiveApply> {
        match self {
            Live::Apply(a) => Some(a),
            _ => None,
        }
    }

    pub fn stream(&self) -> Option<&LiveStream> {
        match self {
            Live::Stream(s) => Some(s),
            _ => None,
        }
    }
}
