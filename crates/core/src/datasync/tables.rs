//! Table names for sync tasks. TaskStatus names a task only by its tid; the table (`db.table`)
//! is known where walscope created the task: [`TableNames::remember`] keeps the table and the
//! `dest` it was created with, and the first TaskStatus that shows a new tid with that `dest`
//! binds the two. The map is kept in `<config dir>/walscope/sync_tables.json`, so the names
//! survive a restart; names can also be given outright ([`TableNames::name_tid`], e.g. a demo's
//! tables).
//!
//! Must never: guess a name from anything but an exact `dest` match or an explicit binding.

use super::status::SubTaskRow;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A task walscope created: its table and where it writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedTask {
    pub db: String,
    pub table: String,
    pub dest: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableNames {
    /// Tasks created by walscope, not yet seen in a TaskStatus.
    pub created: Vec<CreatedTask>,
    /// tid → `db.table`.
    pub tids: BTreeMap<u32, String>,
}

impl TableNames {
    /// Notes a task just created (before its tid is known).
    pub fn remember(&mut self, db: &str, table: &str, dest: &str) {
        let name = format!("{db}.{table}");
        self.tids.retain(|_, n| *n != name);
        self.created.retain(|c| !(c.db == db && c.table == table));
        self.created.push(CreatedTask { db: db.into(), table: table.into(), dest: dest.into() });
    }

    pub fn name_tid(&mut self, tid: u32, name: &str) {
        self.tids.insert(tid, name.into());
    }

    /// Binds new tids of one poll to remembered tasks by their `dest`; true when one was bound.
    pub fn learn(&mut self, rows: &[SubTaskRow]) -> bool {
        let mut changed = false;
        for r in rows {
            if self.tids.contains_key(&r.tid) || r.dest.is_empty() {
                continue;
            }
            if let Some(i) = self.created.iter().position(|c| c.dest == r.dest) {
                let c = self.created.remove(i);
                self.tids.insert(r.tid, format!("{}.{}", c.db, c.table));
                changed = true;
            }
        }
        changed
    }

    /// `db.table` of a tid, when known.
    pub fn name(&self, tid: u32) -> Option<&str> {
        self.tids.get(&tid).map(String::as_str)
    }

    /// `sync_tables.json` in walscope's configuration directory `config_dir`.
    pub fn path_in(config_dir: &Path) -> PathBuf {
        config_dir.join("sync_tables.json")
    }

    /// The map at `path`; empty when the file does not exist or cannot be read.
    pub fn load(path: &Path) -> TableNames {
        std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        crate::atomic::atomic_write(path, &text, false).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_created_task_is_named_by_its_dest() {
        let row = |tid, dest: &str| SubTaskRow {
            tid,
            pid: 0,
            status: "INIT".into(),
            count: 0,
            sync_point: String::new(),
            data_collector: String::new(),
            token: String::new(),
            mode: String::new(),
            dest: dest.into(),
            last_update_ms: None,
            progress_path: None,
        };
        let mut n = TableNames::default();
        n.remember("db", "orders", "/hdfs/orders");
        assert!(!n.learn(&[row(7, "/hdfs/other")]));
        assert!(n.learn(&[row(9, "/hdfs/orders")]));
        assert_eq!(n.name(9), Some("db.orders"));
        assert_eq!(n.name(7), None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w").join("sync_tables.json");
        n.save(&path).unwrap();
        assert_eq!(TableNames::load(&path), n);
    }
}
