//! A dump written whole before it is put in place (an export, a sample): the frames and the
//! manifest go to temp files beside the target, and only a finished dump replaces what was there
//! (kept as `FILE.bak` and `FILE.manifest.json.bak`). A salvage is not written this way: its dump
//! grows in place, where a resume finds it, and is never an existing file (see `walscope_ops::salvage::job`).
//!
//! Must never: leave a temp file behind (dropped uncommitted, both are removed), or touch the
//! target before [`NewDump::commit`].

use super::writer::manifest_path;
use crate::atomic::{self, Saved};
use std::io;
use std::path::{Path, PathBuf};

pub struct NewDump {
    out: PathBuf,
    tmp: PathBuf,
    committed: bool,
}

impl NewDump {
    /// Reserves a temp file beside `out` for the new dump (its manifest goes beside the temp).
    pub fn beside(out: &Path) -> io::Result<NewDump> {
        let tmp = atomic::create_temp_beside(out)?;
        Ok(NewDump { out: out.to_path_buf(), tmp, committed: false })
    }

    /// Where to write the dump (with [`super::DumpWriter::create`]).
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// Puts the finished dump, then its manifest, in place; with `keep_backup`, what they
    /// replace is kept as `.bak`. Returns what happened to the dump.
    pub fn commit(mut self, keep_backup: bool) -> io::Result<Saved> {
        self.committed = true;
        let saved = atomic::commit_file(&self.tmp, &self.out, keep_backup)?;
        let (tmp_manifest, manifest) = (manifest_path(&self.tmp), manifest_path(&self.out));
        if tmp_manifest.exists() {
            atomic::commit_file(&tmp_manifest, &manifest, keep_backup)?;
        }
        Ok(saved)
    }
}

impl Drop for NewDump {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
            let _ = std::fs::remove_file(manifest_path(&self.tmp));
        }
    }
}
