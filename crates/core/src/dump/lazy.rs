//! A dump that grows in place from a stream (a salvage, `call --save-dump`), opened only once
//! there is something to write into it.
//!
//! Such a dump is not written to a temp file: a crash or a cancel must leave a file that a
//! resume continues. So the contract's "temp file, then rename" is kept another way: it never
//! writes over an existing dump (the caller refuses one before any server is asked, unless the
//! operator said to replace it, and then the old dump and its manifest are moved aside as
//! `.bak`), and the file is not created, nor the old one moved, before the first frame arrives:
//! a stream that fails before its first message leaves every file as it was.
//!
//! Must never: truncate or move a dump before a frame is in hand, or open one that exists
//! without the operator's word.

use super::{DumpWriter, Framing, Manifest, ResumePoint, SyncPolicy, manifest_path};
use crate::atomic;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Whether `out` (or its manifest) already holds a dump.
pub fn holds_dump(out: &Path) -> bool {
    out.exists() || manifest_path(out).exists()
}

/// The words for a new dump refused over an existing one (`resume`: how to continue it instead).
pub fn exists_words(out: &Path, resume: &str) -> String {
    format!(
        "already holds a dump: nothing was written. {resume}add --force to start over (the old dump and its manifest are then kept as {} and {})",
        atomic::backup_path(out).display(),
        atomic::backup_path(&manifest_path(out)).display()
    )
}

/// A dump writer that exists from the first frame on.
pub enum LazyDump {
    /// Nothing written yet: the file is untouched (or absent).
    Pending {
        path: PathBuf,
        framing: Framing,
        manifest: Box<Manifest>,
        sync: SyncPolicy,
        replace: bool,
    },
    Open(Box<DumpWriter>),
}

impl LazyDump {
    /// A new dump at `path` in `framing`, created when the first frame comes; `replace` moves
    /// an existing one aside then (the caller has refused it otherwise).
    pub fn new(
        path: &Path,
        framing: Framing,
        manifest: Manifest,
        sync: SyncPolicy,
        replace: bool,
    ) -> LazyDump {
        LazyDump::Pending { path: path.to_path_buf(), framing, manifest: Box::new(manifest), sync, replace }
    }

    fn open(&mut self) -> io::Result<&mut DumpWriter> {
        if let LazyDump::Pending { path, framing, manifest, sync, replace } = self {
            if *replace {
                atomic::move_to_backup(&manifest_path(path))?;
                atomic::move_to_backup(path)?;
            } else if holds_dump(path) {
                // Created by someone else since the job was checked: still not ours to replace.
                return Err(io::Error::new(io::ErrorKind::AlreadyExists, exists_words(path, "")));
            }
            let w = DumpWriter::create(path, *framing, (**manifest).clone(), *sync)?;
            *self = LazyDump::Open(Box::new(w));
        }
        match self {
            LazyDump::Open(w) => Ok(w),
            LazyDump::Pending { .. } => Err(io::Error::other("the dump could not be opened")),
        }
    }

    pub fn manifest(&self) -> &Manifest {
        match self {
            LazyDump::Pending { manifest, .. } => manifest,
            LazyDump::Open(w) => w.manifest(),
        }
    }
    pub fn frames(&self) -> u64 {
        match self {
            LazyDump::Pending { .. } => 0,
            LazyDump::Open(w) => w.frames(),
        }
    }
    pub fn bytes(&self) -> u64 {
        match self {
            LazyDump::Pending { .. } => 0,
            LazyDump::Open(w) => w.bytes(),
        }
    }
    pub fn last_resume(&self) -> Option<&ResumePoint> {
        match self {
            LazyDump::Pending { .. } => None,
            LazyDump::Open(w) => w.last_resume(),
        }
    }
    pub fn set_job(&mut self, job: Option<serde_json::Value>) {
        match self {
            LazyDump::Pending { manifest, .. } => manifest.job = job,
            LazyDump::Open(w) => w.set_job(job),
        }
    }
    pub fn sync_if_due(&mut self) -> io::Result<()> {
        match self {
            LazyDump::Pending { .. } => Ok(()),
            LazyDump::Open(w) => w.sync_if_due(),
        }
    }
    pub fn sync(&mut self) -> io::Result<()> {
        match self {
            LazyDump::Pending { .. } => Ok(()),
            LazyDump::Open(w) => w.sync(),
        }
    }

    /// [`DumpWriter::append_bytes`], creating the dump first when this is its first frame.
    pub fn append_bytes(&mut self, message: bytes::Bytes, resume: Option<ResumePoint>) -> io::Result<()> {
        self.open()?.append_bytes(message, resume)
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

    /// Closes the dump. A stream that reached its end with nothing to write still leaves a
    /// complete, empty dump (the record that nothing was missing); one that stopped before any
    /// frame leaves no file at all. Returns the manifest and whether a file was written.
    pub fn finish(mut self, complete: bool) -> io::Result<(Manifest, bool)> {
        if let LazyDump::Pending { manifest, .. } = &mut self
            && !complete
        {
            manifest.ended_at = Some(crate::time::now_rfc3339());
            return Ok(((**manifest).clone(), false));
        }
        self.open()?;
        match self {
            LazyDump::Open(w) => Ok((w.finish(complete)?, true)),
            LazyDump::Pending { .. } => Err(io::Error::other("the dump could not be opened")),
        }
    }
}
