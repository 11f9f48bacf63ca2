//! The salvage dump's file, opened only once there is something to write into it.
//!
//! A salvage's dump grows in place (not in a temp file): a crash or a cancel must leave a file
//! that `--resume` continues. So the contract's "temp file, then rename" is kept another way: a
//! new salvage never writes over an existing dump (it is refused before any server is asked,
//! unless the operator said to replace it, and then the old dump and its manifest are moved aside
//! as `.bak`), and the file is not created, nor the old one moved, before the first frame
//! arrives: a salvage whose old primary cannot be reached leaves every file as it was.
//!
//! Must never: truncate or move a dump before a frame is in hand, or open one that exists
//! without the operator's word.

use crate::atomic;
use crate::dump::{DumpWriter, Framing, Manifest, ResumePoint, SyncPolicy, manifest_path};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Whether `out` (or its manifest) already holds a dump.
pub fn holds_dump(out: &Path) -> bool {
    out.exists() || manifest_path(out).exists()
}

/// The words for a new salvage refused over an existing dump.
pub fn exists_words(out: &Path) -> String {
    format!(
        "already holds a dump: nothing was written. Continue it with --resume, or add --force to start over (the old dump and its manifest are then kept as {} and {})",
        atomic::backup_path(out).display(),
        atomic::backup_path(&manifest_path(out)).display()
    )
}

/// A dump writer that exists from the first frame on.
pub(super) enum SalvageOut {
    /// Nothing written yet: the file is untouched (or absent).
    Pending {
        path: PathBuf,
        manifest: Box<Manifest>,
        sync: SyncPolicy,
        replace: bool,
    },
    Open(Box<DumpWriter>),
}

impl SalvageOut {
    /// A new dump at `path`, created when the first frame comes; `replace` moves an existing one
    /// aside then (the caller has refused it otherwise).
    pub fn new(path: &Path, manifest: Manifest, sync: SyncPolicy, replace: bool) -> SalvageOut {
        SalvageOut::Pending { path: path.to_path_buf(), manifest: Box::new(manifest), sync, replace }
    }

    fn open(&mut self) -> io::Result<&mut DumpWriter> {
        if let SalvageOut::Pending { path, manifest, sync, replace } = self {
            if *replace {
                atomic::move_to_backup(&manifest_path(path))?;
                atomic::move_to_backup(path)?;
            } else if holds_dump(path) {
                // Created by someone else since the job was checked: still not ours to replace.
                return Err(io::Error::new(io::ErrorKind::AlreadyExists, exists_words(path)));
            }
            let w = DumpWriter::create(path, Framing::VarintDelimited, (**manifest).clone(), *sync)?;
            *self = SalvageOut::Open(Box::new(w));
        }
        match self {
            SalvageOut::Open(w) => Ok(w),
            SalvageOut::Pending { .. } => Err(io::Error::other("the dump could not be opened")),
        }
    }

    pub fn manifest(&self) -> &Manifest {
        match self {
            SalvageOut::Pending { manifest, .. } => manifest,
            SalvageOut::Open(w) => w.manifest(),
        }
    }
    pub fn frames(&self) -> u64 {
        match self {
            SalvageOut::Pending { .. } => 0,
            SalvageOut::Open(w) => w.frames(),
        }
    }
    pub fn bytes(&self) -> u64 {
        match self {
            SalvageOut::Pending { .. } => 0,
            SalvageOut::Open(w) => w.bytes(),
        }
    }
    pub fn last_resume(&self) -> Option<&ResumePoint> {
        match self {
            SalvageOut::Pending { .. } => None,
            SalvageOut::Open(w) => w.last_resume(),
        }
    }
    pub fn set_job(&mut self, job: Option<serde_json::Value>) {
        match self {
            SalvageOut::Pending { manifest, .. } => manifest.job = job,
            SalvageOut::Open(w) => w.set_job(job),
        }
    }
    pub fn sync_if_due(&mut self) -> io::Result<()> {
        match self {
            SalvageOut::Pending { .. } => Ok(()),
            SalvageOut::Open(w) => w.sync_if_due(),
        }
    }
    pub fn sync(&mut self) -> io::Result<()> {
        match self {
            SalvageOut::Pending { .. } => Ok(()),
            SalvageOut::Open(w) => w.sync(),
        }
    }

    /// [`DumpWriter::append_bytes_lent`], creating the dump first when this is its first frame.
    pub fn append_bytes_lent(
        &mut self,
        message: bytes::Bytes,
        point: &mut ResumePoint,
        now: Instant,
    ) -> io::Result<()> {
        self.open()?.append_bytes_lent(message, point, now)
    }

    /// Closes the dump. A salvage that reached its end with nothing to write still leaves a
    /// complete, empty dump (the record that nothing was missing); one that stopped before any
    /// frame leaves no file at all. Returns the manifest and whether a file was written.
    pub fn finish(mut self, complete: bool) -> io::Result<(Manifest, bool)> {
        if let SalvageOut::Pending { manifest, .. } = &mut self
            && !complete
        {
            manifest.ended_at = Some(crate::dump::writer::now_text());
            return Ok(((**manifest).clone(), false));
        }
        self.open()?;
        match self {
            SalvageOut::Open(w) => Ok((w.finish(complete)?, true)),
            SalvageOut::Pending { .. } => Err(io::Error::other("the dump could not be opened")),
        }
    }
}
