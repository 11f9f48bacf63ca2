//! The job registry: every piece of long work the window starts (opening a file, saving,
//! loading schemas, reflection, connection tests, calls, polling) is one [`Job`] here, with a
//! label, a progress snapshot, its typed [`live`] progress (a salvage's dumps, an apply, a
//! stream), a [`Pace`], a cancel token and a result. The status bar and the repaint logic
//! iterate it; the app drains finished jobs once per frame and applies their results.
//!
//! Owns: the one async runtime of the window (started on first use) and the jobs. Work the
//! library already runs on its own threads (indexing, filter scans) is registered as a
//! *watched* job: the registry reads its progress and can cancel it, the library does the work.
//! Must never: block the UI thread (a frame only reads snapshots and `try_recv`s), or let a
//! pane spawn work itself (panes send commands; the app starts jobs here).

mod error;
pub mod live;

pub use error::{FileFailed, JobError};
pub use live::{Live, LiveApply, LiveDump, LiveStream};

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

/// What a job's body gets: where to report progress, whether it is cancelled, how to wake the UI.
#[derive(Clone)]
pub struct JobCtx {
    pub progress: Arc<watch::Sender<JobProgress>>,
    /// The job's typed live progress (see [`live`]), for the pane that owns it.
    pub live: Arc<watch::Sender<Option<Live>>>,
    pub cancel: CancellationToken,
    pub wake: Wake,
}

impl JobCtx {
    /// Publishes progress and wakes the UI.
    pub fn report(&self, fraction: Option<f32>, text: impl Into<String>) {
        self.progress.send_replace(JobProgress { fraction, text: text.into() });
        (self.wake)();
    }

    /// Shares the job's typed live progress with its owner pane (the registry keeps the latest
    /// until the job ends) and wakes the UI.
    pub fn share(&self, live: Live) {
        self.live.send_replace(Some(live));
        (self.wake)();
    }
}

/// How often a job's numbers move, which sets how often the window redraws while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// Work under way (indexing, a scan, a call): redraw every so often.
    Working(Duration),
    /// Waiting between rounds (a poller between polls): no redraw on a timer (the rounds wake
    /// the window when they bring something new). The status bar shows it as waiting, not busy.
    Waiting(Duration),
}

impl Pace {
    pub fn repaint(self) -> Duration {
        match self {
            Pace::Working(d) | Pace::Waiting(d) => d,
        }
    }
}

/// A waiting job redraws at most this often (a poller asked to poll faster still redraws once
/// a second).
pub const WAITING_REPAINT: Duration = Duration::from_secs(1);

/// Spawned work's redraw rate: at most ten frames a second for its numbers.
const WORKING_REPAINT: Duration = Duration::from_millis(100);

/// Progress of work the library runs itself, read each frame: (progress, done).
pub type Probe = Box<dyn Fn() -> (JobProgress, bool) + Send>;

enum Source<T> {
    Spawned {
        progress: watch::Receiver<JobProgress>,
        live: watch::Receiver<Option<Live>>,
        result: oneshot::Receiver<JobResult<T>>,
    },
    Watched {
        probe: Probe,
        stop: Box<dyn Fn() + Send>,
    },
}

pub struct Job<T> {
    pub id: JobId,
    pub label: String,
    pub owner: JobOwner,
    pub cancel: CancellationToken,
    /// How often its numbers move (how often the window redraws while it runs).
    pub pace: Pace,
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

    /// True for a job waiting between rounds (a poller between polls), as opposed to work
    /// under way.
    pub fn is_waiting(&self) -> bool {
        matches!(self.pace, Pace::Waiting(_))
    }

    /// Its typed live progress, once its body shared one (never waits).
    pub fn live(&self) -> Option<Live> {
        match &self.source {
            Source::Spawned { live, .. } => live.borrow().clone(),
            Source::Watched { .. } => None,
        }
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
        self.register(label, owner, move |rt, ctx, result_tx| {
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
        })
    }

    /// Runs `body` on the runtime's blocking pool (file and CPU work). `body` checks
    /// `ctx.cancel` itself where it can stop early.
    pub fn spawn_blocking<F>(&mut self, label: impl Into<String>, owner: JobOwner, body: F) -> JobId
    where
        F: FnOnce(JobCtx) -> JobResult<T> + Send + 'static,
    {
        self.register(label, owner, move |rt, ctx, result_tx| {
            rt.spawn_blocking(move || {
                let r = if ctx.cancel.is_cancelled() { Err(JobError::Cancelled) } else { body(ctx.clone()) };
                let _ = result_tx.send(r);
                (ctx.wake)();
            });
        })
    }

    /// Lists a spawned job and has `start` run it on the runtime with its context and the
    /// sender of its result; a runtime that cannot start is the job's result, in words.
    fn register<S>(&mut self, label: impl Into<String>, owner: JobOwner, start: S) -> JobId
    where
        S: FnOnce(tokio::runtime::Handle, JobCtx, oneshot::Sender<JobResult<T>>),
    {
        let (ctx, (progress, live), result_rx, result_tx) = self.parts();
        let id = self.ids();
        match self.handle() {
            Some(rt) => start(rt, ctx.clone(), result_tx),
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
            pace: Pace::Working(WORKING_REPAINT),
            source: Source::Spawned { progress, live, result: result_rx },
        });
        id
    }

    /// Registers work the library runs on its own: `probe` says how far it is and whether it
    /// is done, `stop` cancels it; the window redraws at its `pace` while it runs. Dropped
    /// from the list once done.
    pub fn watch(
        &mut self,
        label: impl Into<String>,
        owner: JobOwner,
        pace: Pace,
        probe: Probe,
        stop: Box<dyn Fn() + Send>,
    ) -> JobId {
        let id = self.ids();
        self.jobs.push(Job {
            id,
            label: label.into(),
            owner,
            cancel: CancellationToken::new(),
            pace,
            source: Source::Watched { probe, stop },
        });
        id
    }

    /// How soon the window should draw again for the running jobs' numbers, if at all. A
    /// waiting job is not drawn on a timer: what it waits on wakes the window when it brings
    /// something new.
    pub fn next_repaint(&self) -> Option<Duration> {
        self.jobs.iter().filter(|j| !j.is_waiting()).map(|j| j.pace.repaint()).min()
    }

    #[allow(clippy::type_complexity)]
    fn parts(
        &self,
    ) -> (
        JobCtx,
        (watch::Receiver<JobProgress>, watch::Receiver<Option<Live>>),
        oneshot::Receiver<JobResult<T>>,
        oneshot::Sender<JobResult<T>>,
    ) {
        let (ptx, prx) = watch::channel(JobProgress::default());
        let (ltx, lrx) = watch::channel(None);
        let (rtx, rrx) = oneshot::channel();
        let ctx = JobCtx {
            progress: Arc::new(ptx),
            live: Arc::new(ltx),
            cancel: CancellationToken::new(),
            wake: self.wake.clone(),
        };
        (ctx, (prx, lrx), rrx, rtx)
    }

    /// The typed live progress of `owner`'s running jobs, oldest first.
    pub fn live_of(&self, owner: &JobOwner) -> Vec<Live> {
        live_of(&self.jobs, owner)
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

/// The typed live progress of `owner`'s jobs among `jobs`, oldest first.
pub fn live_of<T>(jobs: &[Job<T>], owner: &JobOwner) -> Vec<Live> {
    jobs.iter().filter(|j| j.owner == *owner).filter_map(Job::live).collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    struct Out;
    impl From<JobDone> for Out {
        fn from(_: JobDone) -> Out {
            Out
        }
    }

    fn wait_until(
        reg: &mut JobRegistry<Out>,
        what: &str,
        mut done: impl FnMut(&mut JobRegistry<Out>) -> bool,
    ) {
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while !done(reg) {
            assert!(std::time::Instant::now() < until, "{what}: not within 10 s");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn live_progress_is_held_by_the_registry_until_the_job_ends() {
        let mut reg: JobRegistry<Out> = JobRegistry::new(Arc::new(|| {}));
        let owner = JobOwner::Pane(7);
        let (go_tx, go_rx) = oneshot::channel::<()>();
        let id = reg.spawn("salvage", owner.clone(), move |ctx| async move {
            ctx.share(Live::Salvage(Vec::new()));
            let _ = go_rx.await;
            Ok(Out)
        });
        wait_until(&mut reg, "the live progress", |r| !r.live_of(&owner).is_empty());
        assert!(reg.running()[0].live().is_some_and(|l| l.dumps().is_some()));
        assert!(reg.live_of(&JobOwner::Pane(8)).is_empty(), "another pane's job");
        let _ = go_tx.send(());
        let mut ended = Vec::new();
        wait_until(&mut reg, "the end", |r| {
            ended.extend(r.finished().into_iter().map(|f| f.id));
            !ended.is_empty()
        });
        assert_eq!(ended, vec![id]);
        assert!(reg.live_of(&owner).is_empty(), "kept after the job ended");
    }

    #[test]
    fn a_waiting_job_is_told_by_its_pace_not_by_its_repaint_rate() {
        let mut reg: JobRegistry<Out> = JobRegistry::new(Arc::new(|| {}));
        let never = || (JobProgress::default(), false);
        reg.watch(
            "poller",
            JobOwner::Pane(1),
            Pace::Waiting(Duration::from_secs(2)),
            Box::new(never),
            Box::new(|| {}),
        );
        reg.watch(
            "slow scan",
            JobOwner::App,
            Pace::Working(Duration::from_secs(3)),
            Box::new(never),
            Box::new(|| {}),
        );
        let waiting: Vec<bool> = reg.running().iter().map(Job::is_waiting).collect();
        assert_eq!(waiting, vec![true, false]);
        // The waiting one is not drawn on a timer: only the working one is.
        assert_eq!(reg.next_repaint(), Some(Duration::from_secs(3)));
    }
}
