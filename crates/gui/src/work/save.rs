//! Writing a file tab's save: the edits as they were when the save was confirmed, rendered and
//! written atomically (the previous version kept as TARGET.bak), in a job. The file pane only
//! asks for it ([`crate::panes::file::SaveWork`] through `AppCommand::FileWork`).
//!
//! Must never: run on the UI thread, or write over a file that was replaced on disk after the
//! tab opened it.

use crate::atomic::Saved;
use crate::jobs::FileFailed;
use crate::panes::file::SaveWork;

/// Renders the file and writes it atomically, the previous version kept as TARGET.bak. Bytes
/// equal to the target's write nothing ([`Saved::Unchanged`]).
pub fn save(work: &SaveWork) -> Result<Saved, FileFailed> {
    if work.target == work.dump.path && work.dump.replaced_on_disk() {
        return Err(FileFailed::ReplacedOnDisk(work.target.clone()));
    }
    // Refused when the file was cut short meanwhile (see `PendingEdits::render`).
    let bytes = work.pending.render(&work.dump).map_err(FileFailed::Render)?;
    crate::atomic::atomic_write(&work.target, &bytes, true).map_err(FileFailed::Save)
}
