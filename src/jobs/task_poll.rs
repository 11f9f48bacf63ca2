//! The sync-task poller: TaskStatus every few seconds, rows per sub-task, and a short history
//! of counts for rates and sparklines. Publishes snapshots through a watch channel; the UI reads
//! the latest one each frame. Polling has no side effects, so cancelling is just stopping.

use crate::datasync::SyncToolClient;
use crate::datasync::status::{SubTaskRow, SyncTaskHistory};
use crate::net::{CallOptions, Transport};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;

/// What the dashboard shows.
#[derive(Debug, Clone, Default)]
pub struct TaskBoard {
    pub rows: Vec<SubTaskRow>,
    /// Rows per second for each row, when two polls exist.
    pub rates: Vec<Option<f64>>,
    /// (ms, count) samples for each row, oldest first.
    pub history: Vec<Vec<(u64, u64)>>,
    pub polls: u64,
    /// Wall-clock ms of the last successful poll.
    pub updated_ms: Option<u64>,
    /// The last failure, kept until a poll succeeds.
    pub error: Option<String>,
}

pub struct TaskPoller {
    board: watch::Receiver<TaskBoard>,
    task: tokio::task::JoinHandle<()>,
}

impl TaskPoller {
    /// Starts polling `transport` (a SyncTool) every `every` on `rt`.
    pub fn spawn(
        rt: &tokio::runtime::Handle,
        transport: Arc<dyn Transport>,
        every: Duration,
        keep: usize,
    ) -> TaskPoller {
        let (tx, board) = watch::channel(TaskBoard::default());
        let timeout = every.max(Duration::from_secs(1)) * 2;
        let client =
            SyncToolClient::new(transport, CallOptions { timeout: Some(timeout), ..CallOptions::default() });
        let task = rt.spawn(async move {
            let mut history = SyncTaskHistory::new(keep);
            let mut polls = 0;
            loop {
                let result = client.task_status().await.map(|(rows, _)| rows).map_err(|e| e.to_string());
                polls += 1;
                let now =
                    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
                let mut board = tx.borrow().clone();
                board.polls = polls;
                match result {
                    Ok(r) => {
                        history.record(&r, now);
                        board.rates = r.iter().map(|x| history.rate(x.tid, x.pid)).collect();
                        board.history = r.iter().map(|x| history.counts(x.tid, x.pid)).collect();
                        board.rows = r;
                        board.updated_ms = Some(now);
                        board.error = None;
                    }
                    Err(e) => board.error = Some(e),
                }
                if tx.send(board).is_err() {
                    return;
                }
                tokio::time::sleep(every).await;
            }
        });
        TaskPoller { board, task }
    }

    /// The latest board (cheap; never waits).
    pub fn board(&self) -> TaskBoard {
        self.board.borrow().clone()
    }

    /// A receiver to await changes on (tests, the CLI).
    pub fn subscribe(&self) -> watch::Receiver<TaskBoard> {
        self.board.clone()
    }

    pub fn cancel(&self) {
        self.task.abort();
    }

    /// Something that stops the poller from elsewhere (the job registry's cancel button).
    pub fn canceller(&self) -> impl Fn() + Send + 'static {
        let handle = self.task.abort_handle();
        move || handle.abort()
    }
}

impl Drop for TaskPoller {
    fn drop(&mut self) {
        self.task.abort();
    }
}
