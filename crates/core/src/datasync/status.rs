//! TaskStatus read the way an operator needs it: one row per sub-task (tid, pid, status,
//! rows, sync point, collector, last update), and a short history of counts per sub-task so a
//! dashboard can show rows per second. There is no percentage in OpenMLDB; we do not invent one.

use super::progress::sync_point_text;
use prost_reflect::{DynamicMessage, ReflectMessage, Value};
use std::collections::{HashMap, VecDeque};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubTaskRow {
    pub tid: u32,
    pub pid: u32,
    pub status: String,
    /// Rows since this SyncTool process took the sub-task.
    pub count: u64,
    pub sync_point: String,
    pub data_collector: String,
    pub token: String,
    pub mode: String,
    pub dest: String,
    /// From `readableInfo`: `lastUpdateTime=<ms>`.
    pub last_update_ms: Option<u64>,
    pub progress_path: Option<String>,
}

fn get<'a>(m: &'a DynamicMessage, f: &str) -> Option<std::borrow::Cow<'a, Value>> {
    m.has_field_by_name(f).then(|| m.get_field_by_name(f)).flatten()
}

fn text(m: &DynamicMessage, f: &str) -> String {
    get(m, f).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// `lastUpdateTime=<ms>;progressPath=<path>` split on `;` then `=`, as the upstream helper does.
pub fn parse_readable_info(s: &str) -> HashMap<String, String> {
    s.split(';')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// Rows of a `TaskStatusResponse`, sorted by tid and pid.
pub fn rows(response: &DynamicMessage) -> Vec<SubTaskRow> {
    let tasks = get(response, "task").and_then(|v| v.as_list().map(<[Value]>::to_vec)).unwrap_or_default();
    let infos =
        get(response, "readableInfo").and_then(|v| v.as_list().map(<[Value]>::to_vec)).unwrap_or_default();
    let mut out: Vec<SubTaskRow> = tasks
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let t = t.as_message()?;
            let progress = get(t, "progress").and_then(|v| v.as_message().cloned());
            let info = infos.get(i).and_then(|v| v.as_str()).map(parse_readable_info).unwrap_or_default();
            let p = progress.as_ref();
            let num = |f: &str| p.and_then(|p| get(p, f)).and_then(|v| v.as_u32()).unwrap_or(0);
            let mode = p
                .and_then(|p| {
                    let fd = p.descriptor().get_field_by_name("mode")?;
                    let n = get(p, "mode")?.as_enum_number()?;
                    match fd.kind() {
                        prost_reflect::Kind::Enum(e) => {
                            Some(e.get_value(n).map_or(n.to_string(), |v| v.name().to_string()))
                        }
                        _ => None,
                    }
                })
                .unwrap_or_default();
            Some(SubTaskRow {
                tid: num("tid"),
                pid: num("pid"),
                status: text(t, "status"),
                count: get(t, "count").and_then(|v| v.as_u64()).unwrap_or(0),
                sync_point: p
                    .and_then(|p| get(p, "sync_point"))
                    .and_then(|v| v.as_message().map(sync_point_text))
                    .unwrap_or_else(|| "no sync point".into()),
                data_collector: text(t, "data_collector"),
                token: p.map(|p| text(p, "token")).unwrap_or_default(),
                mode,
                dest: p.map(|p| text(p, "dest")).unwrap_or_default(),
                last_update_ms: info.get("lastUpdateTime").and_then(|v| v.parse().ok()),
                progress_path: info.get("progressPath").cloned(),
            })
        })
        .collect();
    out.sort_by_key(|r| (r.tid, r.pid));
    out
}

/// The span a rate is measured over: short enough that a stop shows within a few polls.
pub const RATE_WINDOW_MS: u64 = 10_000;

/// Recent (time, count) samples per sub-task, for rates.
#[derive(Debug, Default)]
pub struct SyncTaskHistory {
    samples: HashMap<(u32, u32), VecDeque<(u64, u64)>>,
    keep: usize,
}

impl SyncTaskHistory {
    pub fn new(keep: usize) -> SyncTaskHistory {
        SyncTaskHistory { samples: HashMap::new(), keep: keep.max(2) }
    }

    /// Records one poll taken at `at_ms`; sub-tasks that vanished are forgotten.
    pub fn record(&mut self, rows: &[SubTaskRow], at_ms: u64) {
        self.samples.retain(|k, _| rows.iter().any(|r| (r.tid, r.pid) == *k));
        for r in rows {
            let q = self.samples.entry((r.tid, r.pid)).or_default();
            // A count that went down means SyncTool restarted: start the history again.
            if q.back().is_some_and(|(_, c)| *c > r.count) {
                q.clear();
            }
            q.push_back((at_ms, r.count));
            while q.len() > self.keep {
                q.pop_front();
            }
        }
    }

    /// Rows per second over the last [`RATE_WINDOW_MS`] of samples (or the last two samples,
    /// when polls are further apart), so a sub-task that stops shows it within the window, not
    /// after the whole kept history; None until two samples exist.
    pub fn rate(&self, tid: u32, pid: u32) -> Option<f64> {
        let q = self.samples.get(&(tid, pid))?;
        let (t1, c1) = *q.back()?;
        let newest_first = q.iter().rev().skip(1);
        let mut start = None;
        for &(t, c) in newest_first {
            if start.is_some() && t1.saturating_sub(t) > RATE_WINDOW_MS {
                break;
            }
            start = Some((t, c));
        }
        let (t0, c0) = start?;
        (t1 > t0).then(|| c1.saturating_sub(c0) as f64 * 1000.0 / (t1 - t0) as f64)
    }

    /// The rate the dashboard shows for `row`: none for a sub-task that no longer moves by its
    /// status (FAILED is never retried, SUCCESS is done), whatever its last samples say.
    pub fn shown_rate(&self, row: &SubTaskRow) -> Option<f64> {
        match row.status.as_str() {
            "FAILED" | "SUCCESS" => None,
            _ => self.rate(row.tid, row.pid),
        }
    }

    /// The kept counts of one sub-task, oldest first (for sparklines).
    pub fn counts(&self, tid: u32, pid: u32) -> Vec<(u64, u64)> {
        self.samples.get(&(tid, pid)).map(|q| q.iter().copied().collect()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaSet;

    #[test]
    fn rows_and_rates() {
        let set = SchemaSet::builtin();
        let desc = set.message("openmldb.datasync.TaskStatusResponse").unwrap();
        let m = crate::codec::from_json(
            &desc,
            r#"{"task": [{"progress": {"tid": 2, "pid": 1, "mode": "kFull", "syncPoint": {"type": "kBINLOG", "offset": "77"}, "token": "t"}, "count": "10", "status": "RUNNING", "dataCollector": "h:1"},
                         {"progress": {"tid": 2, "pid": 0}, "count": "0", "status": "INIT"}],
                "readableInfo": ["lastUpdateTime=1000;progressPath=/p/2/1.progress", "lastUpdateTime=2000;progressPath=/p/2/0.progress"]}"#,
        )
        .unwrap();
        let r = rows(&m);
        assert_eq!((r[0].tid, r[0].pid, r[0].status.as_str()), (2, 0, "INIT"));
        assert_eq!(r[1].sync_point, "binlog offset=77");
        assert_eq!(r[1].last_update_ms, Some(1000));
        assert_eq!(r[1].progress_path.as_deref(), Some("/p/2/1.progress"));
        assert_eq!(r[1].mode, "kFull");
        let mut h = SyncTaskHistory::new(5);
        h.record(&r, 0);
        assert_eq!(h.rate(2, 1), None);
        let mut later = r.clone();
        later[1].count = 30;
        h.record(&later, 2000);
        assert_eq!(h.rate(2, 1), Some(10.0));
        later[1].count = 5;
        h.record(&later, 3000);
        assert_eq!(h.rate(2, 1), None, "a restart resets the history");
    }

    /// A sub-task that stops shows 0 rows/s once the window has passed, not an average over
    /// the whole history; a FAILED one shows no rate at all.
    #[test]
    fn rates_follow_the_recent_window_and_failed_has_none() {
        let row = |count: u64, status: &str| SubTaskRow {
            tid: 1,
            pid: 0,
            count,
            status: status.to_string(),
            ..Default::default()
        };
        let mut h = SyncTaskHistory::new(100);
        for i in 0..=30u64 {
            h.record(&[row(i * 20, "RUNNING")], i * 1000);
        }
        assert_eq!(h.rate(1, 0), Some(20.0));
        // Stopped at 600 rows: after the window, 0 (the whole history would still say ~14).
        for i in 31..=41u64 {
            h.record(&[row(600, "RUNNING")], i * 1000);
        }
        assert_eq!(h.rate(1, 0), Some(0.0));
        h.record(&[row(600, "FAILED")], 42_000);
        assert_eq!(h.shown_rate(&row(600, "FAILED")), None);
        assert_eq!(h.shown_rate(&row(600, "RUNNING")), Some(0.0));
        // Polls further apart than the window: the last two samples.
        let mut sparse = SyncTaskHistory::new(10);
        sparse.record(&[row(0, "RUNNING")], 0);
        sparse.record(&[row(300, "RUNNING")], 30_000);
        assert_eq!(sparse.rate(1, 0), Some(10.0));
    }
}
