//! The job registry: every piece of long work the window starts (opening a file, saving,
//! loading schemas, reflection, connection tests, calls, polling) is one [`Job`] here, with a
//! label, a progress snapshot, a cancel token and a result. The status bar and the repaint logic
//! iterate it; the app drains finished jobs once per frame and applies their results.
//!
//! Owns: the one async runtime of the window (started on first use) and the jobs. Work the
//! library already runs on its own threads (indexing, filter scans) is registered as a
//! *watched* job: the registry reads its progress and can cancel it, the library does the work.
//! Must never: block the UI thread (a frame only reads snapshots and `try_recv`s), or let a
//! pane spawn work itself (panes send commands; the app starts jobs here).

use crate::dump::background::Wake;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

pub type JobId = u64;

/// Where a job's result goes, and which pane shows it running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobOwner {
    App,
    File(std::path::PathBuf),
    Schemas,
    Connections,
    /// The open dialog (its listings, the desktop's dialog).
    OpenDialog,
    /// A pane opened by number (a composer, a salvage, a replay, a dashboard: `PaneId::number`).
    Pane(u64),
}

/// How far a job is, in numbers and words.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobProgress {
    /// 0..=1 when the end is known.
    pub fraction: Option<f32>,
    pub text: String,
}

/// A job's result: what it made (`T`, the window's typed outputs), or why it did not.
pub type JobResult<T> = Result<T, JobError>;

/// What a watched job (work the library runs itself) hands back when it is done: its last words.
pub struct JobDone(pub String);

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
    /// The window's runtime could not start.
    #[error("cannot start the network runtime: {0}")]
    NoRuntime(Arc<std::io::Error>),
    /// The job's task ended without handing back a result.
    #[error("the job ended without a result (it panicked?)")]
    Panicked,
    #[error("stopped")]
    Cancelled,
}

/// What a job's body gets: where to report progress, whether it is cancelled, how to wake the UI.
#[derive(Clone)]
pub struct JobCtx {
    pub progress: Arc<watch::Sender<JobProgress>>,
    pub cancel: CancellationToken,
    pub wake: Wake,
}

impl JobCtx {
    /// Publishes progress and wakes the UI.
    pub fn report(&self, fraction: Option<f32>, text: impl Into<String>) {
        self.progress.send_replace(JobProgress { fraction, text: text.into() });
        (self.wake)();
    }
}

/// A watched job that redraws this seldom or more seldom is waiting between rounds, not busy
/// (see [`Job::is_waiting`]).
pub const WAITING_REPAINT: Duration = Duration::from_secs(1);

/// Progress of work the library runs itself, read each frame: (progress, done).
pub type Probe = Box<dyn Fn() -> (JobProgress, bool) + Send>;

enum Source<T> {
    Spawned { progress: watch::Receiver<JobProgress>, result: oneshot::Receiver<JobResult<T>> },
    Watched { probe: Probe, stop: Box<dyn Fn() + Send> },
}

pub struct Job<T> {
    pub id: JobId,
    pub label: String,
    pub owner: JobOwner,
    pub cancel: CancellationToken,
    /// How often the window redraws while this job runs (its numbers move).
    pub repaint: Duration,
    source: Source<T>,
}

impl<T> Job<T> {
    /// The latest progress (never waits).
    pub fn progress(&self) -> JobProgress {
        match &self.source {
            Source::Spawned { progress, .. } => progress.borrow().clone(),
            Source::Watched { probe, .. } => probe().0,
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// True for work the library runs itself that redraws rarely (every second or more
    /// seldom: a poller between polls), as opposed to work under way.
    pub fn is_waiting(&self) -> bool {
        matches!(self.source, Source::Watched { .. }) && self.repaint >= WAITING_REPAINT
    }
}

/// A finished job, handed to the app once.
pub struct Finished<T> {
    pub id: JobId,
    pub label: String,
    pub owner: JobOwner,
    pub result: JobResult<T>,
}

/// The window's jobs; `T` is what a job hands back when it did its work.
pub struct JobRegistry<T> {
    runtime: Option<Arc<tokio::runtime::Runtime>>,
    runtime_error: Option<Arc<std::io::Error>>,
    jobs: Vec<Job<T>>,
    next: JobId,
    wake: Wake,
}

impl<T: From<JobDone> + Send + 'static> JobRegistry<T> {
    pub fn new(wake: Wake) -> JobRegistry<T> {
        JobRegistry { runtime: None, runtime_error: None, jobs: Vec::new(), next: 1, wake }
    }

    /// The window's runtime, started on first use; None (with the reason in
    /// [`Self::runtime_error`]) when it cannot start.
    pub fn handle(&mut self) -> Option<tokio::runtime::Handle> {
        if self.runtime.is_none() && self.runtime_error.is_none() {
            match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("walscope-rt")
                .enable_all()
                .build()
            {
                Ok(rt) => self.runtime = Some(Arc::new(rt)),
                Err(e) => self.runtime_error = Some(Arc::new(e)),
            }
        }
        self.runtime.as_ref().map(|rt| rt.handle().clone())
    }

    pub fn runtime_error(&self) -> Option<JobError> {
        self.runtime_error.clone().map(JobError::NoRuntime)
    }

    pub fn wake(&self) -> Wake {
        self.wake.clone()
    }

    fn ids(&mut self) -> JobId {
        let id = self.next;
        self.next += 1;
        id
    }

    /// Runs `body` on the runtime; cancelling drops it wherever it is waiting (for calls that
    /// leave nothing half done). Its result (or a runtime that could not start) reaches the
    /// app through [`Self::finished`].
    pub fn spawn<F, Fut>(&mut self, label: impl Into<String>, owner: JobOwner, body: F) -> JobId
    where
        F: FnOnce(JobCtx) -> Fut,
        Fut: Future<Output = JobResult<T>> + Send + 'static,
    {
        self.spawn_with(label, owner, true, body)
    }

    /// Like [`Self::spawn`], but a cancel only sets `ctx.cancel`: the body stops where it is
    /// safe (a stream closes its dump so the file stays whole) and returns its own result.
    pub fn spawn_graceful<F, Fut>(&mut self, label: impl Into<String>, owner: JobOwner, body: F) -> JobId
    where
        F: FnOnce(JobCtx) -> Fut,
        Fut: Future<Output = JobResult<T>> + Send + 'static,
    {
        self.spawn_with(label, owner, false, body)
    }

    fn spawn_with<F, Fut>(&mut self, label: impl Into<String>, owner: JobOwner, abort: bool, body: F) -> JobId
    where
        F: FnOnce(JobCtx) -> Fut,
        Fut: Future<Output = JobResult<T>> + Send + 'static,
    {
        let (ctx, progress, result_rx, result_tx) = self.parts();
        let id = self.ids();
        match self.handle() {
            Some(rt) => {
                let fut = body(ctx.clone());
                let (cancel, wake) = (ctx.cancel.clone(), ctx.wake.clone());
                rt.spawn(async move {
                    let r = if abort {
                        tokio::select! {
                            r = fut => r,
                            () = cancel.cancelled() => Err(JobError::Cancelled),
                        }
                    } else {
                        fut.await
                    };
                    let _ = result_tx.send(r);
                    wake();
                });
            }
            None => {
                let why = self
                    .runtime_error
                    .clone()
                    .unwrap_or_else(|| Arc::new(std::io::Error::other("no runtime")));
                let _ = result_tx.send(Err(JobError::NoRuntime(why)));
            }
        }
        let cancel = ctx.cancel.clone();
        self.jobs.push(Job {
            id,
            label: label.into(),
            owner,
            cancel,
            repaint: Duration::from_millis(100),
            source: Source::Spawned { progress, result: result_rx },
        });
        id
    }

    /// Runs `body` on the runtime's blocking pool (file and CPU work). `body` checks
    /// `ctx.cancel` itself where it can stop early.
    pub fn spawn_blocking<F>(&mut self, label: impl Into<String>, owner: JobOwner, body: F) -> JobId
    where
        F: FnOnce(JobCtx) -> JobResult<T> + Send + 'static,
    {
        let (ctx, progress, result_rx, result_tx) = self.parts();
        let id = self.ids();
        match self.handle() {
            Some(rt) => {
                let c = ctx.clone();
                rt.spawn_blocking(move || {
                    let r = if c.cancel.is_cancelled() { Err(JobError::Cancelled) } else { body(c.clone()) };
                    let _ = result_tx.send(r);
                    (c.wake)();
                });
            }
            None => {
                let why = self
                    .runtime_error
                    .clone()
                    .unwrap_or_else(|| Arc::new(std::io::Error::other("no runtime")));
                let _ = result_tx.send(Err(JobError::NoRuntime(why)));
            }
        }
        self.jobs.push(Job {
            id,
            label: label.into(),
            owner,
            cancel: ctx.cancel,
            repaint: Duration::from_millis(100),
            source: Source::Spawned { progress, result: result_rx },
        });
        id
    }

    /// Registers work the library runs on its own: `probe` says how far it is and whether it
    /// is done, `stop` cancels it; the window redraws every `repaint` while it runs. Dropped
    /// from the list once done.
    pub fn watch(
        &mut self,
        label: impl Into<String>,
        owner: JobOwner,
        repaint: Duration,
        probe: Probe,
        stop: Box<dyn Fn() + Send>,
    ) -> JobId {
        let id = self.ids();
        self.jobs.push(Job {
            id,
            label: label.into(),
            owner,
            cancel: CancellationToken::new(),
            repaint,
            source: Source::Watched { probe, stop },
        });
        id
    }

    /// How soon the window should draw again for the running jobs' numbers, if at all.
    pub fn next_repaint(&self) -> Option<Duration> {
        self.jobs.iter().map(|j| j.repaint).min()
    }

    #[allow(clippy::type_complexity)]
    fn parts(
        &self,
    ) -> (JobCtx, watch::Receiver<JobProgress>, oneshot::Receiver<JobResult<T>>, oneshot::Sender<JobResult<T>>)
    {
        let (ptx, prx) = watch::channel(JobProgress::default());
        let (rtx, rrx) = oneshot::channel();
        let ctx =
            JobCtx { progress: Arc::new(ptx), cancel: CancellationToken::new(), wake: self.wake.clone() };
        (ctx, prx, rrx, rtx)
    }

    /// Asks a job to stop. Its result (usually `Cancelled`) still arrives.
    pub fn cancel(&mut self, id: JobId) {
        if let Some(j) = self.jobs.iter().find(|j| j.id == id) {
            j.cancel.cancel();
            if let Source::Watched { stop, .. } = &j.source {
                stop();
            }
        }
    }

    /// Cancels every job of `owner` (a pane closing).
    pub fn cancel_owner(&mut self, owner: &JobOwner) {
        let ids: Vec<JobId> = self.jobs.iter().filter(|j| j.owner == *owner).map(|j| j.id).collect();
        for id in ids {
            self.cancel(id);
        }
    }

    /// The jobs still running, oldest first.
    pub fn running(&self) -> &[Job<T>] {
        &self.jobs
    }

    pub fn running_for(&self, owner: &JobOwner) -> impl Iterator<Item = &Job<T>> {
        self.jobs.iter().filter(move |j| j.owner == *owner)
    }

    pub fn is_busy(&self) -> bool {
        !self.jobs.is_empty()
    }

    /// Takes the jobs that have ended since the last call. Never waits.
    pub fn finished(&mut self) -> Vec<Finished<T>> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.jobs.len() {
            let done = match &mut self.jobs[i].source {
                Source::Spawned { result, .. } => match result.try_recv() {
                    Ok(r) => Some(r),
                    Err(oneshot::error::TryRecvError::Empty) => None,
                    Err(oneshot::error::TryRecvError::Closed) => Some(Err(JobError::Panicked)),
                },
                Source::Watched { probe, .. } => {
                    let (p, done) = probe();
                    done.then(|| Ok(T::from(JobDone(p.text))))
                }
            };
            match done {
                Some(result) => {
                    let j = self.jobs.remove(i);
                    out.push(Finished { id: j.id, label: j.label, owner: j.owner, result });
                }
                None => i += 1,
            }
        }
        out
    }
}

/// How long the way out waits for what dropping the jobs sets off (see [`JobRegistry`]'s drop).
const EXIT_GRACE: Duration = Duration::from_secs(2);

impl<T> Drop for JobRegistry<T> {
    /// Every job is cancelled and its task dropped where it waits: the network is never waited
    /// for. What dropping a task sets off still finishes, for up to [`EXIT_GRACE`]: a salvage's
    /// dump writer hands over the frames it holds and its thread writes them and closes the
    /// file, so a window opened again at once finds no thread of the old one still writing.
    fn drop(&mut self) {
        for j in &self.jobs {
            j.cancel.cancel();
        }
        if let Some(rt) = self.runtime.take()
            && let Ok(rt) = Arc::try_unwrap(rt)
        {
            rt.shutdown_timeout(EXIT_GRACE);
        }
    }
}
