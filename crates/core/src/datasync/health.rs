//! The health of sync sub-tasks, read from successive TaskStatus polls (reference §4.2, §4.3):
//! per sub-task the age of its last update (`readableInfo`'s lastUpdateTime), its progress
//! file, its table's name where known, and **trouble**: INIT for too long (SyncTool never checks
//! INIT: a silent stall), count and sync point standing still with the heartbeat still moving
//! (a zero-row heartbeat moves lastUpdateTime) or without it, reassigned more than once (each
//! reassignment gives a new token), FAILED (never retried), and a count that went down (SyncTool
//! restarted: count lives in memory). Each trouble says what it means and what to do; a summary
//! counts them ("2 of 9 partitions stalled"). Rows for a plot are kept in [`super::trend`].
//!
//! Owns: the meaning of a poll sequence. Must never: call a sub-task troubled from one poll
//! alone where it takes two to know (a stall, a reset), or invent progress OpenMLDB does not
//! report (there is no percentage).

use super::status::SubTaskRow;
use super::tables::TableNames;
use super::trend::Trends;
use std::collections::HashMap;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HealthConfig {
    /// INIT longer than this is trouble.
    pub init_after: Duration,
    /// No rows and no sync-point move for this long, while the collector still reports, is a
    /// stall.
    pub stall_after: Duration,
    /// The longest a working DataCollector goes between two reports (SendData rounds come 1 s
    /// apart with data, 5 s apart at the binlog's end or after an RPC failure, and a round
    /// with no rows is still sent: reference §3.1). A RUNNING sub-task with no report (no rows,
    /// no sync-point move, no lastUpdateTime move) for longer than this, over two polls or
    /// more, is silent: flagged at once, not after `stall_after`.
    pub report_every: Duration,
    /// SyncTool's `sync_task.check_period` (10 s by default): a RUNNING sub-task silent for
    /// twice this is reassigned.
    pub check_period: Duration,
    /// A count reset stays listed this long after it was seen.
    pub reset_shown_for: Duration,
    /// Points per plotted series.
    pub trend_points: usize,
}

impl Default for HealthConfig {
    fn default() -> Self {
        HealthConfig {
            init_after: Duration::from_secs(60),
            stall_after: Duration::from_secs(60),
            report_every: Duration::from_secs(5),
            check_period: Duration::from_secs(10),
            reset_shown_for: Duration::from_secs(600),
            trend_points: 512,
        }
    }
}

/// Something wrong with a sub-task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trouble {
    /// INIT (no data yet) for this long.
    LongInit {
        for_ms: u64,
    },
    /// RUNNING, count and sync point unchanged this long; `heartbeat`: lastUpdateTime still moves.
    Stalled {
        for_ms: u64,
        heartbeat: bool,
    },
    /// Reassigned this many times (new tokens seen) since walscope started watching.
    Reassigned {
        times: u32,
    },
    Failed,
    /// REASSIGNING (SyncTool is handing it to a DataCollector again) for this long.
    Reassigning {
        for_ms: u64,
    },
    /// `count` went down: SyncTool restarted.
    CountReset {
        from: u64,
        to: u64,
    },
}

fn secs(ms: u64) -> String {
    match ms / 1000 {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s => format!("{:.1} h", s as f64 / 3600.0),
    }
}

impl Trouble {
    /// A short name for a table cell.
    pub fn label(&self) -> String {
        match self {
            Trouble::LongInit { for_ms } => format!("INIT for {}", secs(*for_ms)),
            Trouble::Stalled { for_ms, heartbeat: true } => {
                format!("no rows for {} (heartbeat moves)", secs(*for_ms))
            }
            Trouble::Stalled { for_ms, heartbeat: false } => format!("silent for {}", secs(*for_ms)),
            Trouble::Reassigned { times } => format!("reassigned {times} times"),
            Trouble::Failed => "FAILED".into(),
            Trouble::Reassigning { for_ms } => format!("REASSIGNING for {}", secs(*for_ms)),
            Trouble::CountReset { from, to } => format!("count reset {from} to {to}"),
        }
    }

    /// What it means.
    pub fn meaning(&self, check_period: Duration) -> String {
        let twice = secs(2 * check_period.as_millis() as u64);
        match self {
            Trouble::LongInit { for_ms } => format!(
                "no data has arrived in {} since the task was created, and SyncTool never checks INIT \
                 sub-tasks, so nothing will reassign it: a silent stall",
                secs(*for_ms)
            ),
            Trouble::Stalled { for_ms, heartbeat: true } => format!(
                "no rows and no sync-point move for {}, but the DataCollector still reports (zero-row \
                 heartbeats move lastUpdateTime): either the table has had no writes, or the collector is \
                 stuck reading it",
                secs(*for_ms)
            ),
            Trouble::Stalled { for_ms, heartbeat: false } => format!(
                "nothing reported for {}: SyncTool reassigns a RUNNING sub-task silent for {twice} \
                 (2 x check_period); if it stays silent the collector is down or cannot reach SyncTool",
                secs(*for_ms)
            ),
            Trouble::Reassigned { times } => format!(
                "reassigned {times} times (a new token each time): its collector keeps going quiet, or the \
                 partition's leader keeps moving"
            ),
            Trouble::Failed => "the reassignment failed (no living DataCollector on the leader's host, or \
                 AddSyncTask refused) or the progress file could not be written; SyncTool never retries it"
                .into(),
            Trouble::Reassigning { .. } => format!(
                "SyncTool found it silent for {twice} (2 x check_period) and is handing it to a \
                 DataCollector again: it becomes RUNNING with a new token, or FAILED when no collector takes it"
            ),
            Trouble::CountReset { from, to } => format!(
                "count went from {from} to {to}: SyncTool restarted (count lives in its memory); the sync \
                 point is what carries progress"
            ),
        }
    }

    /// What to do.
    pub fn action(&self) -> &'static str {
        match self {
            Trouble::LongInit { .. } => {
                "Check that the DataCollector on the partition leader's host runs and has the task \
                 (<collector_datadir>/<tid>-<pid>); if it never got AddSyncTask, delete and re-create the task."
            }
            Trouble::Stalled { heartbeat: true, .. } => {
                "Check whether the table still gets writes; if it does, read the DataCollector's log for \
                 binlog read errors."
            }
            Trouble::Stalled { heartbeat: false, .. } => {
                "Check that the DataCollector on the leader's host runs and can reach SyncTool \
                 (the task's des_endpoint)."
            }
            Trouble::Reassigned { .. } => {
                "Look at the collector's host and log, and whether the partition's leadership keeps changing."
            }
            Trouble::Failed => {
                "Fix the collector, then restart SyncTool (it recovers every sub-task as RUNNING) or delete \
                 and re-create the task (rows may be duplicated: there is no resume point)."
            }
            Trouble::Reassigning { .. } => {
                "Wait a check period; if it stays REASSIGNING or turns FAILED, check the DataCollector on \
                 the partition leader's host and its log."
            }
            Trouble::CountReset { .. } => {
                "Nothing is lost by the reset itself: check that the sync point keeps moving. The plot carries \
                 counts across restarts."
            }
        }
    }

    /// A stall of any kind (for the summary).
    pub fn is_stall(&self) -> bool {
        matches!(self, Trouble::LongInit { .. } | Trouble::Stalled { .. })
    }
}

/// One sub-task as the dashboard shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SubTaskHealth {
    pub tid: u32,
    pub pid: u32,
    /// `db.table`, when known.
    pub table: Option<String>,
    pub status: String,
    pub count: u64,
    /// Rows synced as walscope saw them, carried across SyncTool restarts.
    pub total_rows: u64,
    pub sync_point: String,
    /// Now minus readableInfo's lastUpdateTime.
    pub last_update_age_ms: Option<u64>,
    pub progress_path: Option<String>,
    pub dest: String,
    pub reassignments: u32,
    pub restarts: u32,
    pub troubles: Vec<Trouble>,
}

/// "2 of 9 partitions stalled, 1 failed".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HealthSummary {
    pub partitions: usize,
    pub stalled: usize,
    pub failed: usize,
    pub reassigned: usize,
    /// Sub-tasks REASSIGNING now.
    pub reassigning: usize,
    pub restarted: usize,
    pub text: String,
}

#[derive(Debug, Clone)]
struct Track {
    status: String,
    status_since: u64,
    count: u64,
    sync_point: String,
    moved_at: u64,
    last_update_ms: Option<u64>,
    update_moved_at: u64,
    /// Polls in a row in which nothing moved (count, sync point, lastUpdateTime, status).
    quiet_polls: u32,
    token: String,
    reassignments: u32,
    restarts: u32,
    reset: Option<(u64, u64, u64)>,
    carried: u64,
}

/// Successive polls of one SyncTool, read for trouble.
#[derive(Debug, Clone)]
pub struct SyncHealth {
    pub config: HealthConfig,
    pub names: TableNames,
    tracks: HashMap<(u32, u32), Track>,
    trends: Trends,
}

impl SyncHealth {
    pub fn new(config: HealthConfig, names: TableNames) -> SyncHealth {
        SyncHealth { trends: Trends::new(config.trend_points), config, names, tracks: HashMap::new() }
    }

    pub fn trends(&self) -> &Trends {
        &self.trends
    }

    /// Reads one poll taken at wall-clock `now_ms`; sub-tasks no longer listed are forgotten.
    pub fn observe(&mut self, rows: &[SubTaskRow], now_ms: u64) -> (Vec<SubTaskHealth>, HealthSummary) {
        self.names.learn(rows);
        self.tracks.retain(|k, _| rows.iter().any(|r| (r.tid, r.pid) == *k));
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let first_seen = !self.tracks.contains_key(&(r.tid, r.pid));
            let t = self.tracks.entry((r.tid, r.pid)).or_insert_with(|| Track {
                status: r.status.clone(),
                status_since: now_ms,
                count: r.count,
                sync_point: r.sync_point.clone(),
                moved_at: now_ms,
                last_update_ms: r.last_update_ms,
                update_moved_at: now_ms,
                quiet_polls: 0,
                token: r.token.clone(),
                reassignments: 0,
                restarts: 0,
                reset: None,
                carried: 0,
            });
            if !first_seen {
                step(t, r, now_ms);
            }
            let troubles = troubles(t, r, now_ms, &self.config);
            out.push(SubTaskHealth {
                tid: r.tid,
                pid: r.pid,
                table: self.names.name(r.tid).map(str::to_string),
                status: r.status.clone(),
                count: r.count,
                total_rows: t.carried + r.count,
                sync_point: r.sync_point.clone(),
                last_update_age_ms: r.last_update_ms.map(|u| now_ms.saturating_sub(u)),
                progress_path: r.progress_path.clone(),
                dest: r.dest.clone(),
                reassignments: t.reassignments,
                restarts: t.restarts,
                troubles,
            });
        }
        let totals: Vec<((u32, u32), u64)> = out.iter().map(|h| ((h.tid, h.pid), h.total_rows)).collect();
        self.trends.record(now_ms, &totals);
        let summary = summarize(&out);
        (out, summary)
    }
}

/// Folds one poll's row into the track.
fn step(t: &mut Track, r: &SubTaskRow, now: u64) {
    let moved = r.count != t.count
        || r.sync_point != t.sync_point
        || r.last_update_ms != t.last_update_ms
        || r.status != t.status;
    t.quiet_polls = if moved { 0 } else { t.quiet_polls.saturating_add(1) };
    if r.token != t.token {
        t.reassignments += 1;
        t.token = r.token.clone();
    }
    if r.count < t.count {
        t.restarts += 1;
        t.reset = Some((t.count, r.count, now));
        t.carried += t.count;
        t.moved_at = now;
    } else if r.count != t.count || r.sync_point != t.sync_point {
        t.moved_at = now;
    }
    t.count = r.count;
    t.sync_point = r.sync_point.clone();
    if r.last_update_ms != t.last_update_ms {
        t.last_update_ms = r.last_update_ms;
        t.update_moved_at = now;
    }
    if r.status != t.status {
        t.status = r.status.clone();
        t.status_since = now;
    }
}

fn troubles(t: &Track, r: &SubTaskRow, now: u64, c: &HealthConfig) -> Vec<Trouble> {
    let mut out = Vec::new();
    let ms = |d: Duration| d.as_millis() as u64;
    match r.status.as_str() {
        "INIT" if now.saturating_sub(t.status_since) >= ms(c.init_after) => {
            out.push(Trouble::LongInit { for_ms: now.saturating_sub(t.status_since) })
        }
        "RUNNING" => {
            let still = now.saturating_sub(t.moved_at.max(t.status_since));
            // Measured on walscope's clock (when a move was seen), never SyncTool's, which
            // may be set differently.
            let silent = now.saturating_sub(t.update_moved_at.max(t.moved_at).max(t.status_since));
            if t.quiet_polls >= 2 && silent > ms(c.report_every) {
                out.push(Trouble::Stalled { for_ms: silent, heartbeat: false });
            } else if still >= ms(c.stall_after) {
                let heartbeat = t.update_moved_at > t.moved_at.max(t.status_since);
                out.push(Trouble::Stalled { for_ms: still, heartbeat });
            }
        }
        "FAILED" => out.push(Trouble::Failed),
        // Not moving while it lasts: a row the summary must count, or it would say "moving".
        "REASSIGNING" => out.push(Trouble::Reassigning { for_ms: now.saturating_sub(t.status_since) }),
        _ => {}
    }
    if t.reassignments >= 2 {
        out.push(Trouble::Reassigned { times: t.reassignments });
    }
    if let Some((from, to, at)) = t.reset
        && now.saturating_sub(at) <= ms(c.reset_shown_for)
    {
        out.push(Trouble::CountReset { from, to });
    }
    out
}

fn summarize(rows: &[SubTaskHealth]) -> HealthSummary {
    let any = |h: &SubTaskHealth, f: fn(&Trouble) -> bool| h.troubles.iter().any(f);
    let n = rows.len();
    let stalled = rows.iter().filter(|h| any(h, Trouble::is_stall)).count();
    let failed = rows.iter().filter(|h| any(h, |t| *t == Trouble::Failed)).count();
    let reassigned = rows.iter().filter(|h| any(h, |t| matches!(t, Trouble::Reassigned { .. }))).count();
    let restarted = rows.iter().filter(|h| any(h, |t| matches!(t, Trouble::CountReset { .. }))).count();
    let reassigning = rows.iter().filter(|h| any(h, |t| matches!(t, Trouble::Reassigning { .. }))).count();
    let found: Vec<(usize, &str)> = [
        (stalled, "stalled"),
        (failed, "failed"),
        (reassigning, "reassigning"),
        (reassigned, "reassigned repeatedly"),
    ]
    .into_iter()
    .filter(|(k, _)| *k > 0)
    .collect();
    let partitions = crate::fmt::counted(n as u64, "partition");
    let mut text = match found.split_first() {
        _ if n == 0 => "no sync tasks".to_string(),
        None if n == 1 => "1 partition moving".to_string(),
        None => format!("all {partitions} moving"),
        Some(((k, word), rest)) => {
            let mut t = format!("{k} of {partitions} {word}");
            for (k, word) in rest {
                t.push_str(&format!(", {k} {word}"));
            }
            t
        }
    };
    if restarted > 0 {
        text.push_str("; SyncTool restarted (counts reset)");
    }
    HealthSummary { partitions: n, stalled, failed, reassigned, reassigning, restarted, text }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pid: u32, count: u64, last_update_ms: u64) -> SubTaskRow {
        SubTaskRow {
            tid: 3,
            pid,
            status: "RUNNING".into(),
            count,
            sync_point: format!("binlog offset={count}"),
            last_update_ms: Some(last_update_ms),
            ..Default::default()
        }
    }

    /// Polls every 2 s: partition 0 keeps moving, partition 1's collector goes quiet at 10 s,
    /// partition 2 sends zero-row heartbeats only. The quiet one is flagged within two polls
    /// of the report it missed, and from that poll on the summary says what its row says; the
    /// heartbeat one only after `stall_after`; the moving one never.
    #[test]
    fn a_silent_partition_is_flagged_within_two_polls_and_the_summary_agrees() {
        let mut h = SyncHealth::new(HealthConfig::default(), TableNames::default());
        let mut first_flagged = None;
        for poll in 0..=20u64 {
            let now = 1_000_000 + poll * 2_000;
            let quiet_from = 1_000_000 + 10_000;
            let rows = [
                row(0, poll * 40, now - 500),
                row(1, (now.min(quiet_from) - 1_000_000) / 50, now.min(quiet_from) - 500),
                row(2, 7, now - 700),
            ];
            let (health, summary) = h.observe(&rows, now);
            let silent =
                health[1].troubles.iter().any(|t| matches!(t, Trouble::Stalled { heartbeat: false, .. }));
            if silent && first_flagged.is_none() {
                first_flagged = Some(now);
            }
            assert!(health[0].troubles.is_empty(), "poll {poll}: {:?}", health[0].troubles);
            assert!(
                health[2].troubles.is_empty(),
                "poll {poll}: a heartbeat before stall_after is no trouble"
            );
            // The summary never contradicts a row.
            let troubled = health.iter().filter(|x| x.troubles.iter().any(Trouble::is_stall)).count();
            assert_eq!(summary.stalled, troubled, "poll {poll}: {}", summary.text);
            if troubled > 0 {
                assert!(summary.text.contains("of 3 partitions stalled"), "{}", summary.text);
            } else {
                assert_eq!(summary.text, "all 3 partitions moving");
            }
        }
        // Last report seen at 10 s; silent once more than report_every (5 s) has passed with two
        // quiet polls: the poll at 16 s, well before the 60 s stall_after.
        let flagged = first_flagged.expect("the quiet partition is flagged") - 1_000_000;
        assert!((15_000..=18_000).contains(&flagged), "flagged at {flagged} ms");
    }

    /// One quiet poll is never enough, however long the gap: two polls are needed to know.
    #[test]
    fn one_quiet_poll_alone_is_no_trouble() {
        let mut h = SyncHealth::new(HealthConfig::default(), TableNames::default());
        h.observe(&[row(0, 10, 1_000)], 1_000);
        let (health, _) = h.observe(&[row(0, 10, 1_000)], 30_000);
        assert!(health[0].troubles.is_empty(), "{:?}", health[0].troubles);
        let (health, _) = h.observe(&[row(0, 10, 1_000)], 32_000);
        assert!(matches!(health[0].troubles[..], [Trouble::Stalled { heartbeat: false, .. }]));
    }
}
