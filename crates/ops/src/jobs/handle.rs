//! The one job handle every long-running operation returns (a salvage, a call stream, a replay's
//! apply): a progress snapshot to read at any time, a token to cancel it, and its typed result.
//! The CLI draws the progress with indicatif, the window with its job registry; both stop a job
//! the same way and get the same result.
//!
//! Must never: lose a result (a job that panics or is aborted ends with its error type's
//! [`From<JobStopped>`] value, in words).

use std::future::Future;
use std::time::Duration;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// A job that ended without a result of its own: it panicked or its task was aborted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the job stopped abnormally: {0}")]
pub struct JobStopped(pub String);

/// A running job: progress `P`, result `R` or error `E`.
pub struct JobHandle<P, R, E> {
    pub progress: watch::Receiver<P>,
    pub cancel: CancellationToken,
    pub task: tokio::task::JoinHandle<Result<R, E>>,
}

impl<P, R, E> JobHandle<P, R, E>
where
    P: Send + Sync + 'static,
    R: Send + 'static,
    E: From<JobStopped> + Send + 'static,
{
    /// Starts `run` on the current runtime with `initial` progress; `run` gets the sender to
    /// publish progress on and the token that cancels it.
    pub fn spawn<F, Fut>(initial: P, run: F) -> Self
    where
        F: FnOnce(watch::Sender<P>, CancellationToken) -> Fut + Send + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
    {
        let (tx, progress) = watch::channel(initial);
        let cancel = CancellationToken::new();
        let task = tokio::spawn(run(tx, cancel.clone()));
        JobHandle { progress, cancel, task }
    }

    /// Waits for the result.
    pub async fn wait(self) -> Result<R, E> {
        outcome(self.task.await)
    }
}

/// A job's result from its joined task: a panicked or aborted task is [`JobStopped`].
pub fn outcome<R, E: From<JobStopped>>(joined: Result<Result<R, E>, tokio::task::JoinError>) -> Result<R, E> {
    joined.map_err(|e| E::from(JobStopped(e.to_string())))?
}

/// Items per second over `elapsed` (0 before any time has passed).
pub fn rate(count: u64, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64().max(1e-3)
}

/// Time left to reach `total` from `done` at `per_second` (None when it cannot be told).
pub fn eta(done: f64, total: f64, per_second: f64) -> Option<Duration> {
    if per_second <= 0.0 || total <= done {
        return (total <= done && per_second > 0.0).then_some(Duration::ZERO);
    }
    Duration::try_from_secs_f64((total - done) / per_second).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error, PartialEq)]
    enum E {
        #[error(transparent)]
        Stopped(#[from] JobStopped),
    }

    #[tokio::test]
    async fn a_job_reports_progress_stops_on_cancel_and_a_panic_is_an_error() {
        let h: JobHandle<u32, u32, E> = JobHandle::spawn(0, |tx, cancel| async move {
            tx.send_replace(1);
            cancel.cancelled().await;
            Ok(7)
        });
        let mut p = h.progress.clone();
        p.wait_for(|v| *v == 1).await.unwrap();
        h.cancel.cancel();
        assert_eq!(h.wait().await, Ok(7));
        let h: JobHandle<u32, u32, E> = JobHandle::spawn(0, |_, _| async move { panic!("boom") });
        let e = h.wait().await.unwrap_err();
        assert!(e.to_string().contains("the job stopped abnormally"), "{e}");
    }

    #[test]
    fn rate_and_eta() {
        assert_eq!(rate(10, Duration::from_secs(2)), 5.0);
        assert_eq!(eta(5.0, 10.0, 5.0), Some(Duration::from_secs(1)));
        assert_eq!(eta(10.0, 10.0, 5.0), Some(Duration::ZERO));
        assert_eq!(eta(5.0, 10.0, 0.0), None);
    }
}
