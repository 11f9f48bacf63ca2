//! The append-only dump writer and its manifest.
//!
//! Data is fsynced before the manifest that describes it is replaced, so the manifest's frame
//! count and resume point are never ahead of the bytes on disk; a crash leaves a file that reads
//! up to its last complete frame. Writes and fsyncs happen on the writer's own thread
//! ([`super::writer_thread`]); appending only copies the frame into a batch. Must never:
//! rewrite a frame already written, or write the manifest in place.

use super::framing::{Framing, write_frame, write_frame_header};
use super::writer_thread::{Batch, DiskSide, Part, SyncRequest, write_manifest};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const MANIFEST_VERSION: u32 = 1;

/// Where a salvage can continue: the last message written, its last-confirmed id and timetick.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumePoint {
    pub message_id: String,
    /// WAL backend of the ids (RocksMQ, Pulsar, Kafka, Woodpecker).
    pub wal: String,
    pub last_confirmed_id: String,
    pub timetick: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    pub walscope_version: String,
    pub framing: String,
    pub message_type: String,
    pub source_endpoint: Option<String>,
    /// The method that produced the dump (`package.Service.Method`), when a call did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The request that produced the dump (e.g. DumpMessagesRequest as JSON).
    pub request: serde_json::Value,
    /// That request's exact bytes (base64), when they are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_base64: Option<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// Frames and bytes known to be on disk (fsynced).
    pub frames: u64,
    pub bytes: u64,
    pub resume: Option<ResumePoint>,
    pub complete: bool,
    /// What the job that wrote the dump needs to continue it and to say what it holds (a
    /// salvage: the checkpoint, whether already-replicated messages were skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<serde_json::Value>,
}

impl Manifest {
    pub fn new(
        framing: Framing,
        message_type: &str,
        source_endpoint: Option<String>,
        request: serde_json::Value,
    ) -> Self {
        Manifest {
            format_version: MANIFEST_VERSION,
            walscope_version: env!("CARGO_PKG_VERSION").to_string(),
            framing: framing.name().to_string(),
            message_type: message_type.to_string(),
            source_endpoint,
            method: None,
            request,
            request_base64: None,
            started_at: crate::time::now_rfc3339(),
            ended_at: None,
            frames: 0,
            bytes: 0,
            resume: None,
            complete: false,
            job: None,
        }
    }

    pub fn load(path: &Path) -> Result<Manifest, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: not a walscope manifest: {e}", path.display()))
    }
}

/// `FILE.manifest.json` beside `FILE`.
pub fn manifest_path(dump: &Path) -> PathBuf {
    let mut name = dump.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".manifest.json");
    dump.with_file_name(name)
}

/// When to fsync: after this many frames or this much time, whichever comes first, and on close.
#[derive(Debug, Clone, Copy)]
pub struct SyncPolicy {
    pub every_frames: u64,
    pub every: Duration,
}

impl Default for SyncPolicy {
    /// Time bounds what a crash can cost (half a second of stream, which a resume fetches
    /// again); the frame rule only caps a very fast stream. A sync every 1,000 frames was one
    /// per MiB of 1 KiB messages, and those fsyncs cost a 1 KiB salvage a quarter of its rate.
    fn default() -> Self {
        SyncPolicy { every_frames: 100_000, every: Duration::from_millis(500) }
    }
}

pub struct DumpWriter {
    /// Frames not yet handed to the disk side.
    batch: Batch,
    disk: DiskSide,
    framing: Framing,
    policy: SyncPolicy,
    /// The manifest as last handed to the disk side (written there once its data is fsynced).
    manifest: Manifest,
    frames: u64,
    bytes: u64,
    unsynced: u64,
    last_sync: Instant,
    pending_resume: Option<ResumePoint>,
    /// Bytes of the batch's messages handed over whole.
    shared: usize,
}

/// Bytes of frames gathered before they go to the disk side.
const BATCH: usize = 1 << 20;
/// Messages of at least this size are written from the caller's `Bytes`, smaller ones copied.
const SHARE_MIN: usize = 16 << 10;

impl DumpWriter {
    /// Creates (or truncates) `path` and writes an empty manifest beside it.
    pub fn create(
        path: &Path,
        framing: Framing,
        manifest: Manifest,
        policy: SyncPolicy,
    ) -> io::Result<DumpWriter> {
        let file = File::create(path)?;
        write_manifest(&manifest_path(path), &manifest)?;
        DumpWriter::with_file(file, path, framing, manifest, policy, 0, 0)
    }

    /// Reopens a dump to continue it: frames written after the manifest's last update are cut
    /// off (their messages will be fetched again from the resume point), so nothing is doubled.
    pub fn resume(path: &Path, policy: SyncPolicy) -> Result<DumpWriter, String> {
        let manifest = Manifest::load(&manifest_path(path))?;
        let framing = Framing::parse(&manifest.framing)
            .ok_or_else(|| format!("manifest names an unknown framing \"{}\"", manifest.framing))?;
        let file =
            OpenOptions::new().write(true).open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let on_disk = file.metadata().map_err(|e| e.to_string())?.len();
        if on_disk < manifest.bytes {
            return Err(format!(
                "{}: holds {on_disk} bytes but its manifest says {}: the file was cut; cannot resume safely",
                path.display(),
                manifest.bytes
            ));
        }
        file.set_len(manifest.bytes).map_err(|e| e.to_string())?;
        file.sync_all().map_err(|e| e.to_string())?;
        let (frames, bytes) = (manifest.frames, manifest.bytes);
        let mut file = file;
        use std::io::Seek;
        file.seek(io::SeekFrom::End(0)).map_err(|e| e.to_string())?;
        let mut w = DumpWriter::with_file(file, path, framing, manifest, policy, frames, bytes)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        w.pending_resume = w.manifest.resume.clone();
        w.manifest.complete = false;
        w.manifest.ended_at = None;
        Ok(w)
    }

    fn with_file(
        file: File,
        path: &Path,
        framing: Framing,
        manifest: Manifest,
        policy: SyncPolicy,
        frames: u64,
        bytes: u64,
    ) -> io::Result<DumpWriter> {
        Ok(DumpWriter {
            batch: Batch { bytes: Vec::with_capacity(BATCH), ..Batch::default() },
            disk: DiskSide::start(file, manifest_path(path))?,
            framing,
            policy,
            manifest,
            frames,
            bytes,
            unsynced: 0,
            last_sync: Instant::now(),
            pending_resume: None,
            shared: 0,
        })
    }

    /// The manifest as last handed to disk (its counts are durable once that sync is done).
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
    pub fn frames(&self) -> u64 {
        self.frames
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Replaces the manifest's request (a resume given a new end: written with the next sync).
    pub fn set_request(&mut self, request: serde_json::Value) {
        self.manifest.request = request;
    }

    /// Replaces the manifest's `job` record (written with the next sync).
    pub fn set_job(&mut self, job: Option<serde_json::Value>) {
        self.manifest.job = job;
    }

    /// Where a salvage would continue now: the resume point of the last message appended
    /// with one (before the first, the manifest's when resuming).
    pub fn last_resume(&self) -> Option<&ResumePoint> {
        self.pending_resume.as_ref()
    }

    /// Appends one message; `resume` is where a salvage could continue after it. Never waits
    /// for the disk unless it is several batches behind; the policy's syncs happen on the
    /// writer's thread.
    pub fn append(&mut self, message: &[u8], resume: Option<ResumePoint>) -> io::Result<()> {
        self.append_at(message, resume, Instant::now())
    }

    /// [`DumpWriter::append`] of a message received as `Bytes`: a large one is written from
    /// where it is, so a stream's big messages are never copied on the receiving side.
    pub fn append_bytes(&mut self, message: bytes::Bytes, resume: Option<ResumePoint>) -> io::Result<()> {
        self.append_bytes_at(message, resume, Instant::now())
    }

    /// [`DumpWriter::append_bytes`] for a stream's hot loop: the resume point is lent rather
    /// than given (swapped with the writer's last one, so the caller gets buffers back to fill
    /// for the next message; what it then holds is stale), and `now` is the caller's clock
    /// reading for this message (the time rule of the policy is judged by it).
    pub fn append_bytes_lent(
        &mut self,
        message: bytes::Bytes,
        point: &mut ResumePoint,
        now: Instant,
    ) -> io::Result<()> {
        match &mut self.pending_resume {
            Some(pending) => std::mem::swap(pending, point),
            None => self.pending_resume = Some(std::mem::take(point)),
        }
        self.append_bytes_at(message, None, now)
    }

    fn append_at(&mut self, message: &[u8], resume: Option<ResumePoint>, now: Instant) -> io::Result<()> {
        let before = self.batch.bytes.len();
        write_frame(self.framing, message, &mut self.batch.bytes);
        self.batch.own_to_end();
        self.counted((self.batch.bytes.len() - before) as u64, resume, now)
    }

    fn append_bytes_at(
        &mut self,
        message: bytes::Bytes,
        resume: Option<ResumePoint>,
        now: Instant,
    ) -> io::Result<()> {
        if message.len() < SHARE_MIN {
            // Cheaper copied: a kept `Bytes` keeps the receive buffer it came in from being reused.
            return self.append_at(&message, resume, now);
        }
        let before = self.batch.bytes.len();
        write_frame_header(self.framing, message.len(), &mut self.batch.bytes);
        self.batch.own_to_end();
        let framed = (self.batch.bytes.len() - before + message.len()) as u64;
        self.shared += message.len();
        self.batch.parts.push(Part::Shared(message));
        self.counted(framed, resume, now)
    }

    fn counted(&mut self, framed: u64, resume: Option<ResumePoint>, now: Instant) -> io::Result<()> {
        self.frames += 1;
        self.bytes += framed;
        self.unsynced += 1;
        if resume.is_some() {
            self.pending_resume = resume;
        }
        // A `now` read before the last sync counts as no time passed (saturating).
        if self.unsynced >= self.policy.every_frames
            || now.duration_since(self.last_sync) >= self.policy.every
        {
            self.request_sync(None)
        } else if self.batch.bytes.len() + self.shared >= BATCH {
            self.hand_over(None)
        } else {
            Ok(())
        }
    }

    /// Asks for a sync when frames wait and the policy's time has passed (for a writer whose
    /// source went quiet: the time rule still holds).
    pub fn sync_if_due(&mut self) -> io::Result<()> {
        if self.unsynced > 0 && self.last_sync.elapsed() >= self.policy.every {
            self.request_sync(None)?;
        }
        Ok(())
    }

    /// Makes everything appended durable, then records it in the manifest; returns when both
    /// are on disk.
    pub fn sync(&mut self) -> io::Result<()> {
        let (done, wait) = std::sync::mpsc::channel();
        self.request_sync(Some(done))?;
        wait.recv().unwrap_or_else(|_| Err(io::Error::other("the dump writer stopped before syncing")))
    }

    fn request_sync(&mut self, done: Option<std::sync::mpsc::Sender<io::Result<()>>>) -> io::Result<()> {
        self.manifest.frames = self.frames;
        self.manifest.bytes = self.bytes;
        self.manifest.resume = self.pending_resume.clone();
        self.unsynced = 0;
        self.last_sync = Instant::now();
        self.hand_over(Some(SyncRequest { manifest: self.manifest.clone(), done }))
    }

    fn hand_over(&mut self, sync: Option<SyncRequest>) -> io::Result<()> {
        let mut batch = std::mem::replace(&mut self.batch, self.disk.spare(BATCH));
        batch.sync = sync;
        self.shared = 0;
        self.disk.send(batch)
    }

    /// Syncs and closes; `complete` says the source had nothing more to give.
    pub fn finish(mut self, complete: bool) -> io::Result<Manifest> {
        self.manifest.complete = complete;
        self.manifest.ended_at = Some(crate::time::now_rfc3339());
        self.sync()?;
        self.disk.close()?;
        Ok(self.manifest.clone())
    }
}

impl Drop for DumpWriter {
    /// A writer dropped without `finish` (an error, a cancelled job) still writes what it
    /// holds, as a buffered file would; its manifest stays at the last sync.
    fn drop(&mut self) {
        if !self.batch.parts.is_empty() {
            let _ = self.hand_over(None);
        }
    }
}
