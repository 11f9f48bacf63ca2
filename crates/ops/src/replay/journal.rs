//! The journal of a replay, `replay.journal` beside the dumps: one JSON line per event, fsynced
//! before the next call — `start` before a unit's first call, `done` after its last — under a
//! header naming the plan it belongs to. The plan itself is saved beside it
//! (`replay-plan.json`) when the first apply starts, so a resume or a second run uses the same
//! conflicts and expectations rather than ones computed over its own writes. A plan goes to one
//! database: those of other databases than `default` have their own pair of files
//! (`replay.<db>.journal`, `replay-plan.<db>.json`), so each database replays on its own.
//!
//! Must never: record a unit as done before the new primary acknowledged its every call, or
//! rewrite a line (the file is only appended to).

use super::ReplayError;
use super::plan::Plan;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum Entry {
    Header {
        journal: u32,
        plan: String,
        endpoint: String,
        at: String,
    },
    Start {
        unit: String,
        at: String,
        /// Rows per call the unit is sent with (`--batch`): a resume of an Insert whose keys
        /// cannot be read back counts its calls in the same batches.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        batch: Option<usize>,
    },
    Done {
        unit: String,
        calls: u64,
        rows: u64,
        at: String,
    },
}

/// What a journal says happened.
#[derive(Debug, Default, Clone)]
pub struct JournalState {
    pub plan: Option<String>,
    pub endpoint: Option<String>,
    pub done: HashSet<String>,
    /// Started, not done: the process stopped in the middle of it.
    pub uncertain: HashSet<String>,
    /// The rows per call an uncertain unit was being sent with, when the journal says.
    pub batch: std::collections::HashMap<String, usize>,
    pub lines: usize,
}

pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
}

/// `base` + `.<db>` + `ext` for databases other than `default` (the name kept to what is safe
/// in a file name).
fn file_for(dir: &Path, base: &str, ext: &str, db: &str) -> PathBuf {
    if db.is_empty() || db == "default" {
        return dir.join(format!("{base}{ext}"));
    }
    let safe: String =
        db.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    dir.join(format!("{base}.{safe}{ext}"))
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> ReplayError {
    ReplayError::File { path: path.display().to_string(), reason: e.to_string() }
}

impl Journal {
    /// The journal of the replay into database `db`.
    pub fn path_in(dir: &Path, db: &str) -> PathBuf {
        file_for(dir, "replay", ".journal", db)
    }

    /// Reads a journal; a missing file is an empty state. A cut last line (the process died
    /// writing it) is ignored; any other bad line is an error naming it.
    pub fn read(dir: &Path, db: &str) -> Result<JournalState, ReplayError> {
        let path = Self::path_in(dir, db);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(JournalState::default()),
            Err(e) => return Err(io_err(&path, e)),
        };
        let mut st = JournalState::default();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let entry: Entry = match serde_json::from_str(line) {
                Ok(e) => e,
                Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => break,
                Err(e) => return Err(io_err(&path, format!("line {}: {e}", i + 1))),
            };
            st.lines += 1;
            match entry {
                Entry::Header { plan, endpoint, .. } => {
                    st.plan = Some(plan);
                    st.endpoint = Some(endpoint);
                }
                Entry::Start { unit, batch, .. } => {
                    if let Some(b) = batch {
                        st.batch.insert(unit.clone(), b);
                    }
                    st.uncertain.insert(unit);
                }
                Entry::Done { unit, .. } => {
                    st.uncertain.remove(&unit);
                    st.batch.remove(&unit);
                    st.done.insert(unit);
                }
            }
        }
        Ok(st)
    }

    /// Opens the journal for appending, writing the header when it is new.
    pub fn open(dir: &Path, plan: &Plan) -> Result<Journal, ReplayError> {
        let path = Self::path_in(dir, &plan.db);
        let existing = std::fs::read(&path).unwrap_or_default();
        // A line cut by a crash would fuse with the next one: cut it off first.
        let whole = existing.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        if whole < existing.len() {
            let f = std::fs::OpenOptions::new().write(true).open(&path).map_err(|e| io_err(&path, e))?;
            f.set_len(whole as u64).map_err(|e| io_err(&path, e))?;
        }
        let fresh = Self::read(dir, &plan.db)?.plan.is_none();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| io_err(&path, e))?;
        let mut j = Journal { path, file };
        if fresh {
            j.write(&Entry::Header {
                journal: 1,
                plan: plan.fingerprint.clone(),
                endpoint: plan.endpoint.clone(),
                at: crate::time::now_rfc3339(),
            })?;
        }
        Ok(j)
    }

    pub fn write(&mut self, e: &Entry) -> Result<(), ReplayError> {
        let mut line = serde_json::to_vec(e).map_err(|e| io_err(&self.path, e))?;
        line.push(b'\n');
        self.file.write_all(&line).map_err(|e| io_err(&self.path, e))?;
        self.file.sync_data().map_err(|e| io_err(&self.path, e))
    }

    pub fn start(&mut self, unit: &str, batch: usize) -> Result<(), ReplayError> {
        self.write(&Entry::Start {
            unit: unit.to_string(),
            at: crate::time::now_rfc3339(),
            batch: Some(batch),
        })
    }

    pub fn done(&mut self, unit: &str, calls: u64, rows: u64) -> Result<(), ReplayError> {
        self.write(&Entry::Done { unit: unit.to_string(), calls, rows, at: crate::time::now_rfc3339() })
    }
}

/// The plan an apply started with, saved beside the journal.
pub struct SavedPlan;

impl SavedPlan {
    pub fn path_in(dir: &Path, db: &str) -> PathBuf {
        file_for(dir, "replay-plan", ".json", db)
    }

    pub fn save(dir: &Path, plan: &Plan) -> Result<(), ReplayError> {
        let path = Self::path_in(dir, &plan.db);
        let bytes = serde_json::to_vec(plan).map_err(|e| io_err(&path, e))?;
        crate::atomic::atomic_write(&path, &bytes, false).map(drop).map_err(|e| io_err(&path, e))
    }

    pub fn load(dir: &Path, db: &str) -> Result<Option<Plan>, ReplayError> {
        let path = Self::path_in(dir, db);
        match std::fs::read(&path) {
            Ok(b) => {
                let mut plan: Plan = serde_json::from_slice(&b)
                    .map_err(|e| io_err(&path, format!("not a replay plan: {e}")))?;
                // Plans saved before `new_ids` was recorded say it by leaving the key out.
                for c in plan.collections.values_mut() {
                    c.new_ids |= c.primary_key.as_ref().is_some_and(|pk| c.drop_columns.contains(pk));
                }
                // Plans saved before the schema update time was recorded say it by leaving it out.
                let unchecked: Vec<String> = plan
                    .collections
                    .iter()
                    .filter(|(_, c)| c.on_new_primary && c.schema_updated.is_none())
                    .map(|(n, _)| n.clone())
                    .collect();
                if !unchecked.is_empty() {
                    plan.warnings.push(format!(
                        "this plan, saved by an earlier walscope, records no schema update time of {}: whether their schema changed on the new primary since the plan could not be checked",
                        unchecked.join(", ")
                    ));
                }
                Ok(Some(plan))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(&path, e)),
        }
    }
}
