//! The sync-task poller: TaskStatus every few seconds, rows per sub-task, a short history of
//! counts for rates and sparklines, and the health of every sub-task ([`crate::datasync::health`]:
//! trouble in words, a summary, table names, hours of counts per table and partition in
//! bounded memory). Publishes snapshots through a watch channel; the UI reads the latest one
//! each frame. The interval can be changed and polling paused or asked for at once while it
//! runs. Polling has no side effects, so cancelling is just stopping.
//!
//! Must never: send anything but TaskStatus (never with `clear_all`).

use crate::datasync::health::{HealthConfig, HealthSummary, SubTaskHealth, SyncHealth};
use crate::datasync::status::{SubTaskRow, SyncTaskHistory};
use crate::datasync::{TableNames, Trends};
use crate::net::SyncToolClient;
use crate::net::{CallOptions, Transport};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};

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
    /// The health of each row (same order as `rows`).
    pub health: Vec<SubTaskHealth>,
    pub summary: HealthSummary,
    /// Rows synced over time, per table and per partition, for a plot.
    pub trends: Trends,
    /// The interval now in force, and whether polling is paused.
    pub interval: Duration,
    pub paused: bool,
}

impl TaskBoard {
    /// Whether `other` shows anything this board does not: rows, rates, health (ages
    /// included), the summary, the error, the interval or a pause. The poll count, the time of
    /// the last poll and the kept samples alone are not a change on screen: a window waiting on
    /// a SyncTool with nothing moving redraws only when something it shows moved.
    pub fn shows_the_same_as(&self, other: &TaskBoard) -> bool {
        self.rows == other.rows
            && self.rates == other.rates
            && self.health == other.health
            && self.summary == other.summary
            && self.error == other.error
            && self.interval == other.interval
            && self.paused == other.paused
    }
}

/// How the poller runs.
#[derive(Debug, Clone)]
pub struct PollerConfig {
    pub every: Duration,
    /// Samples kept per sub-task for rates and sparklines.
    pub keep: usize,
    pub health: HealthConfig,
    /// Table names known from the start (a demo's tables, walscope's earlier tasks).
    pub names: TableNames,
    /// Where the table names are kept between runs (loaded at start, saved when they change).
    pub names_file: Option<PathBuf>,
}

impl Default for PollerConfig {
    fn default() -> Self {
        PollerConfig {
            every: Duration::from_secs(2),
            keep: 30,
            health: HealthConfig::default(),
            names: TableNames::default(),
            names_file: None,
        }
    }
}

enum Command {
    Every(Duration),
    Pause(bool),
    Now,
    Remember { db: String, table: String, dest: String },
}

pub struct TaskPoller {
    board: watch::Receiver<TaskBoard>,
    commands: mpsc::UnboundedSender<Command>,
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
        Self::spawn_with(rt, transport, PollerConfig { every, keep, ..Default::default() })
    }

    /// [`TaskPoller::spawn`] with health thresholds, table names and where to keep them.
    pub fn spawn_with(
        rt: &tokio::runtime::Handle,
        transport: Arc<dyn Transport>,
        config: PollerConfig,
    ) -> TaskPoller {
        let initial = TaskBoard { interval: config.every, ..Default::default() };
        let (tx, board) = watch::channel(initial);
        let (commands, mut rx) = mpsc::unbounded_channel();
        let task = rt.spawn(async move {
            let mut every = config.every;
            let client = |every: Duration| {
                let timeout = every.max(Duration::from_secs(1)) * 2;
                SyncToolClient::new(
                    transport.clone(),
                    CallOptions { timeout: Some(timeout), ..CallOptions::default() },
                )
            };
            let mut sync_tool = client(every);
            let mut names = config.names.clone();
            if let Some(path) = &config.names_file {
                let saved = TableNames::load(path);
                names.created.extend(saved.created);
                names.tids.extend(saved.tids);
            }
            let mut health = SyncHealth::new(config.health, names);
            let mut history = SyncTaskHistory::new(config.keep);
            let (mut polls, mut paused) = (0, false);
            loop {
                let mut board = tx.borrow().clone();
                (board.interval, board.paused) = (every, paused);
                if !paused {
                    let result =
                        sync_tool.task_status().await.map(|(rows, _)| rows).map_err(|e| e.to_string());
                    polls += 1;
                    let now = crate::time::now_ms();
                    board.polls = polls;
                    match result {
                        Ok(r) => {
                            history.record(&r, now);
                            let before = health.names.clone();
                            (board.health, board.summary) = health.observe(&r, now);
                            if health.names != before {
                                save_names(&config.names_file, &health.names);
                            }
                            board.trends = health.trends().clone();
                            board.rates = r.iter().map(|x| history.shown_rate(x)).collect();
                            board.history = r.iter().map(|x| history.counts(x.tid, x.pid)).collect();
                            board.rows = r;
                            board.updated_ms = Some(now);
                            board.error = None;
                        }
                        Err(e) => board.error = Some(e),
                    }
                }
                if tx.send(board).is_err() {
                    return;
                }
                let wait = tokio::time::sleep(every);
                tokio::pin!(wait);
                loop {
                    tokio::select! {
                        _ = &mut wait, if !paused => break,
                        c = rx.recv() => match c {
                            None => return,
                            Some(Command::Now) => break,
                            Some(Command::Every(d)) => {
                                every = d.max(Duration::from_millis(100));
                                sync_tool = client(every);
                                break;
                            }
                            Some(Command::Pause(p)) => {
                                paused = p;
                                break;
                            }
                            Some(Command::Remember { db, table, dest }) => {
                                health.names.remember(&db, &table, &dest);
                                save_names(&config.names_file, &health.names);
                            }
                        },
                    }
                }
            }
        });
        TaskPoller { board, commands, task }
    }

    /// The latest board (cheap; never waits).
    pub fn board(&self) -> TaskBoard {
        self.board.borrow().clone()
    }

    /// A receiver to await changes on (tests, the CLI).
    pub fn subscribe(&self) -> watch::Receiver<TaskBoard> {
        self.board.clone()
    }

    /// Polls every `every` from now on (and once at once).
    pub fn set_interval(&self, every: Duration) {
        let _ = self.commands.send(Command::Every(every));
    }

    /// Stops polling (the board keeps the last poll) or goes on (with a poll at once).
    pub fn set_paused(&self, paused: bool) {
        let _ = self.commands.send(Command::Pause(paused));
    }

    /// Polls at once.
    pub fn poll_now(&self) {
        let _ = self.commands.send(Command::Now);
    }

    /// Notes a task walscope just created, so its tid gets the table's name (by its `dest`).
    pub fn remember_table(&self, db: &str, table: &str, dest: &str) {
        let _ =
            self.commands.send(Command::Remember { db: db.into(), table: table.into(), dest: dest.into() });
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

fn save_names(path: &Option<PathBuf>, names: &TableNames) {
    if let Some(p) = path {
        // The names are a convenience: a read-only config dir must not stop the dashboard.
        let _ = names.save(p);
    }
}

impl Drop for TaskPoller {
    fn drop(&mut self) {
        self.task.abort();
    }
}
