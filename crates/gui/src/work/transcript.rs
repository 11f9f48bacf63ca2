//! The app's side of a composer's transcripts: writing the last call's transcript to a file
//! the operator chose ("Save transcript") and reading one back into a composer ("Open
//! transcript"), each in a job; the composer only asks (`AppCommand::SaveTranscript`,
//! `AppCommand::OpenTranscript`) and shows what came back. A file the app's Open path finds to
//! be a transcript ([`transcript_in`], asked by the open job) opens in a new composer.
//!
//! Must never: touch the disk on the UI thread, or write over an existing file the operator did
//! not tick "Replace an existing file" for (then the old one is kept as .bak).

use crate::WalscopeApp;
use crate::jobs::{FileFailed, JobOwner};
use crate::net::transcript::{FORMAT, Transcript};
use crate::panes::PaneId;
use crate::panes::composer::ComposerState;
use crate::panes::outcome::{JobError, JobOutput};
use std::path::{Path, PathBuf};

impl WalscopeApp {
    /// Writes `doc` to `to` atomically; an existing file is refused unless `replace`.
    pub(crate) fn save_transcript(
        &mut self,
        composer: u64,
        doc: Box<Transcript>,
        to: PathBuf,
        replace: bool,
    ) {
        let label = format!("saving the transcript {}", to.display());
        let job = self.jobs.spawn_blocking(label, JobOwner::Pane(composer), move |_| {
            let file = |reason| JobError::File { path: to.clone(), reason };
            crate::atomic::check_output(&to, &[], replace).map_err(|e| match e {
                crate::atomic::OutputError::Exists { path } => file(FileFailed::ExistsUnticked(path)),
                e => file(FileFailed::Refused(e)),
            })?;
            crate::atomic::atomic_write(&to, &doc.to_json(), true).map_err(|e| file(FileFailed::Save(e)))?;
            Ok(JobOutput::TranscriptSaved { composer, path: to })
        });
        if let Some(c) = self.panes.get_mut::<ComposerState>(&PaneId::Composer(composer)) {
            c.transcript.saving = Some(job);
        }
    }

    /// Reads the transcript at `path` into composer `composer` (a new one when None).
    pub(crate) fn open_transcript(&mut self, composer: Option<u64>, path: PathBuf) {
        let composer = match composer {
            Some(c) if self.panes.contains(&PaneId::Composer(c)) => c,
            _ => self.new_composer(None, None, Vec::new(), None),
        };
        let label = format!("opening the transcript {}", path.display());
        let job = self.jobs.spawn_blocking(label, JobOwner::Pane(composer), move |_| {
            let bytes = std::fs::read(&path)
                .map_err(|e| JobError::File { path: path.clone(), reason: FileFailed::Io(e) })?;
            let doc = Transcript::from_json(&bytes)
                .map_err(|source| JobError::Transcript { path: path.clone(), source })?;
            Ok(JobOutput::TranscriptOpened { composer, path, doc: Box::new(doc) })
        });
        if let Some(c) = self.panes.get_mut::<ComposerState>(&PaneId::Composer(composer)) {
            c.transcript.opening = Some(job);
        }
    }

    /// A transcript the app's Open path read (a file, the open dialog, a drop): a new composer.
    pub(crate) fn transcript_opened(&mut self, path: PathBuf, doc: Transcript) {
        let id = self.new_composer(None, None, Vec::new(), None);
        let pool = self.schemas.pool().clone();
        let profiles = self.connections.profiles();
        if let Some(c) = self.panes.get_mut::<ComposerState>(&PaneId::Composer(id)) {
            c.opened(doc, &path, &pool, &profiles);
        }
    }
}

/// The transcript `path` holds, when it is one (a regular file whose start names the transcript
/// format); None for anything else, which opens as a dump. Runs in the open job.
pub(crate) fn transcript_in(path: &Path) -> Result<Option<Box<Transcript>>, JobError> {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(None); // a FIFO or a device is read once, by the dump's reader
    }
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head));
    let looks = read.is_ok()
        && head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
        && head.windows(FORMAT.len()).any(|w| w == FORMAT.as_bytes());
    if !looks {
        return Ok(None);
    }
    let bytes = std::fs::read(path)
        .map_err(|e| JobError::File { path: path.to_path_buf(), reason: FileFailed::Io(e) })?;
    let doc = Transcript::from_json(&bytes)
        .map_err(|source| JobError::Transcript { path: path.to_path_buf(), source })?;
    Ok(Some(Box::new(doc)))
}
