//! A salvage folder: one `<pchannel>.dump` (with its `.manifest.json`) per pchannel, and the
//! folder manifest `salvage.json` listing them: format version, both clusters, the source
//! cluster id, every pchannel with its checkpoint (or why it has none), the end timetick, the
//! skip choice, and per dump its file, whether it is complete and how many frames and bytes it
//! holds.
//!
//! The dump manifests are the truth; `salvage.json` is refreshed from them whenever a job of
//! the folder ends ([`record_run`]), one writer at a time, by atomic replace. [`find_unfinished`]
//! reads both, so a folder left by a crash or a closed app can be resumed.
//! Must never: write a dump or its manifest (the salvage job does), or write `salvage.json` in
//! place.

use super::checkpoint::Checkpoint;
use super::job::{SalvageError, SalvageRecord};
use crate::dump::save::atomic_write;
use crate::dump::{Manifest, manifest_path};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const FOLDER_MANIFEST: &str = "salvage.json";
pub const FOLDER_FORMAT_VERSION: u32 = 1;

/// One of the two clusters, as far as a folder needs it (never a secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterRef {
    pub endpoint: String,
    /// The saved profile's name, when the salvage was started from one.
    pub profile: Option<String>,
    pub version: Option<String>,
}

/// One pchannel of the folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FolderEntry {
    pub pchannel: String,
    pub checkpoint: Option<Checkpoint>,
    /// Why there is no checkpoint (and so no dump).
    pub no_checkpoint: Option<String>,
    /// The dump's file name inside the folder.
    pub file: Option<String>,
    pub complete: bool,
    pub frames: u64,
    pub bytes: u64,
    /// The last run's failure, until a run ends without one.
    pub last_error: Option<String>,
    #[serde(default)]
    pub ended_before_end: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FolderManifest {
    pub format_version: u32,
    pub walscope_version: String,
    pub created_at: String,
    pub updated_at: String,
    pub new_primary: ClusterRef,
    pub old_primary: ClusterRef,
    pub source_cluster_id: String,
    pub end_timetick: Option<u64>,
    pub skip_replicated: bool,
    pub pchannels: Vec<FolderEntry>,
}

impl FolderManifest {
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(FOLDER_MANIFEST)
    }

    pub fn load(dir: &Path) -> Result<FolderManifest, SalvageError> {
        let path = Self::path(dir);
        let file_err = |reason: String| SalvageError::File { path: path.display().to_string(), reason };
        let text = std::fs::read_to_string(&path).map_err(|e| file_err(e.to_string()))?;
        let m: FolderManifest = serde_json::from_str(&text)
            .map_err(|e| file_err(format!("not a walscope salvage folder: {e}")))?;
        if m.format_version > FOLDER_FORMAT_VERSION {
            return Err(file_err(format!(
                "format version {} is newer than this walscope reads ({FOLDER_FORMAT_VERSION})",
                m.format_version
            )));
        }
        Ok(m)
    }

    pub fn save(&self, dir: &Path) -> Result<(), SalvageError> {
        let path = Self::path(dir);
        let text = serde_json::to_vec_pretty(self).map_err(|e| SalvageError::Task(e.to_string()))?;
        atomic_write(&path, &text, false)
            .map(drop)
            .map_err(|e| SalvageError::File { path: path.display().to_string(), reason: e.to_string() })
    }

    /// Each dump's state from its own manifest (a dump not yet created counts as empty).
    pub fn refresh(&mut self, dir: &Path) {
        for e in &mut self.pchannels {
            let Some(file) = &e.file else { continue };
            match Manifest::load(&manifest_path(&dir.join(file))) {
                Ok(m) => {
                    e.complete = m.complete;
                    e.frames = m.frames;
                    e.bytes = m.bytes;
                    e.ended_before_end = SalvageRecord::of(&m).is_some_and(|r| r.ended_before_end);
                }
                Err(_) => (e.complete, e.frames, e.bytes) = (false, 0, 0),
            }
        }
        self.updated_at = crate::time::now_rfc3339();
    }
}

/// The dump file name for a pchannel: `<pchannel>.dump`, with anything but letters, digits,
/// `-`, `_` and `.` replaced by `_`.
pub fn dump_file_name(pchannel: &str) -> String {
    let safe: String = pchannel
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
        .collect();
    format!("{}.dump", safe.trim_start_matches('.'))
}

static REFRESH: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// After a run of the dump `out` in folder `dir` ended: every entry refreshed from its dump
/// manifest, `error` recorded for `out`'s entry. Runs of several dumps ending together take
/// turns, and each reads every dump manifest, so the last write holds every ended run.
pub async fn record_run(dir: &Path, out: &Path, error: Option<String>) {
    let (dir, out) = (dir.to_path_buf(), out.to_path_buf());
    let _ = tokio::task::spawn_blocking(move || {
        let _turn = REFRESH.lock().unwrap_or_else(|p| p.into_inner());
        let Ok(mut m) = FolderManifest::load(&dir) else { return };
        m.refresh(&dir);
        let name = out.file_name().map(|n| n.to_string_lossy().to_string());
        if let Some(e) = m.pchannels.iter_mut().find(|e| e.file.is_some() && e.file == name) {
            e.last_error = error;
        }
        let _ = m.save(&dir);
    })
    .await;
}

/// A dump of the folder that has not finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfinished {
    pub pchannel: String,
    pub file: PathBuf,
    pub checkpoint: Checkpoint,
    /// False when the dump was never created (its run must start, not resume).
    pub started: bool,
    pub frames: u64,
    pub bytes: u64,
    /// Timetick of the last message on disk.
    pub last_timetick: Option<u64>,
    pub last_error: Option<String>,
}

/// The folder's dumps that are not complete, from `salvage.json` and each dump manifest.
pub fn find_unfinished(dir: &Path) -> Result<Vec<Unfinished>, SalvageError> {
    let m = FolderManifest::load(dir)?;
    let mut out = Vec::new();
    for e in &m.pchannels {
        let (Some(file), Some(checkpoint)) = (&e.file, &e.checkpoint) else { continue };
        let path = dir.join(file);
        let dump = Manifest::load(&manifest_path(&path)).ok().filter(|_| path.exists());
        if dump.as_ref().is_some_and(|d| d.complete) {
            continue;
        }
        out.push(Unfinished {
            pchannel: e.pchannel.clone(),
            file: path,
            checkpoint: checkpoint.clone(),
            started: dump.is_some(),
            frames: dump.as_ref().map_or(0, |d| d.frames),
            bytes: dump.as_ref().map_or(0, |d| d.bytes),
            last_timetick: dump.as_ref().and_then(|d| d.resume.as_ref().map(|r| r.timetick)),
            last_error: e.last_error.clone(),
        });
    }
    Ok(out)
}
