//! The disk side of a [`super::DumpWriter`]: one thread per open writer that writes the
//! batches of frames it is handed, fsyncs them and only then replaces the manifest. The side
//! that receives a stream only copies frames into a batch, so no write and no fsync holds up
//! the stream unless the disk is several batches behind.
//!
//! Owns: the order data, fsync, manifest. Syncs asked for while earlier batches still wait are
//! merged into one after all of them (the latest manifest wins), so a disk slower than the
//! stream costs fewer fsyncs rather than a growing queue. Must never: write a manifest whose
//! counts are ahead of the bytes fsynced, or go on writing after a failed write.

use super::save::atomic_write;
use super::writer::Manifest;
use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

/// Batches waiting for the disk before the receiving side waits in turn (about 8 MiB of
/// small frames: several fsyncs' worth of a fast stream).
const QUEUE: usize = 8;

/// The manifest to write once everything handed over before it is fsynced, and who waits.
pub(super) struct SyncRequest {
    pub manifest: Manifest,
    pub done: Option<Sender<io::Result<()>>>,
}

/// Frames to write, in order: headers and copied messages back to back in `bytes`, and
/// messages handed over whole (a received `Bytes`, written from where it is: no copy).
#[derive(Default)]
pub(super) struct Batch {
    pub bytes: Vec<u8>,
    pub parts: Vec<Part>,
    pub sync: Option<SyncRequest>,
}

pub(super) enum Part {
    /// `bytes` up to this offset (from where the previous `Own` part ended).
    Own(usize),
    Shared(bytes::Bytes),
}

impl Batch {
    /// Marks everything in `bytes` so far as the next part.
    pub fn own_to_end(&mut self) {
        let end = self.bytes.len();
        match self.parts.last_mut() {
            Some(Part::Own(e)) => *e = end,
            _ => self.parts.push(Part::Own(end)),
        }
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.parts.clear();
        self.sync = None;
    }
}

pub(super) struct DiskSide {
    tx: Option<SyncSender<Batch>>,
    spares: Receiver<Batch>,
    failed: Arc<Mutex<Option<String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl DiskSide {
    pub fn start(file: File, manifest_path: PathBuf) -> io::Result<DiskSide> {
        let (tx, rx) = sync_channel::<Batch>(QUEUE);
        let (give_back, spares) = std::sync::mpsc::channel();
        let failed = Arc::new(Mutex::new(None));
        let record = failed.clone();
        let thread = std::thread::Builder::new()
            .name("walscope-dump-writer".into())
            .spawn(move || run(file, manifest_path, rx, give_back, record))?;
        Ok(DiskSide { tx: Some(tx), spares, failed, thread: Some(thread) })
    }

    /// An emptied batch back from the disk side (its buffers kept), or a new one.
    pub fn spare(&self, capacity: usize) -> Batch {
        self.spares
            .try_recv()
            .unwrap_or_else(|_| Batch { bytes: Vec::with_capacity(capacity), ..Batch::default() })
    }

    /// Hands a batch over; waits only when [`QUEUE`] batches are already waiting.
    pub fn send(&mut self, batch: Batch) -> io::Result<()> {
        let sent = match &self.tx {
            Some(tx) => tx.send(batch).is_ok(),
            None => false,
        };
        if sent { Ok(()) } else { Err(self.failure()) }
    }

    /// Waits for everything handed over to be written, and says how the disk side ended.
    pub fn close(&mut self) -> io::Result<()> {
        self.tx = None;
        if let Some(t) = self.thread.take()
            && t.join().is_err()
        {
            return Err(io::Error::other("the dump writer's thread panicked"));
        }
        match self.failed.lock().ok().and_then(|f| f.clone()) {
            Some(reason) => Err(io::Error::other(reason)),
            None => Ok(()),
        }
    }

    fn failure(&self) -> io::Error {
        let reason = self.failed.lock().ok().and_then(|f| f.clone());
        io::Error::other(reason.unwrap_or_else(|| "the dump writer has stopped".to_string()))
    }
}

impl Drop for DiskSide {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

fn run(
    mut file: File,
    manifest_path: PathBuf,
    rx: Receiver<Batch>,
    give_back: Sender<Batch>,
    failed: Arc<Mutex<Option<String>>>,
) {
    // Bytes written by this thread (from where the file was opened: only for the writeback hint).
    let mut written = file.metadata().map_or(0, |m| m.len());
    while let Ok(first) = rx.recv() {
        let mut sync: Option<SyncRequest> = None;
        let mut waiters = Vec::new();
        let mut next = Some(first);
        // What is already queued is written before one sync covers it all; no more than the
        // queue holds, so a stream faster than the disk still gets its syncs.
        let mut taken = 0;
        let mut result: io::Result<usize> = Ok(0);
        while let Some(mut batch) = next.take() {
            taken += 1;
            result = write_parts(&mut file, &batch);
            if let Ok(n) = result {
                start_writeback(&file, written, n);
                written += n as u64;
            }
            if let Some(mut s) = batch.sync.take() {
                waiters.extend(s.done.take());
                sync = Some(s);
            }
            batch.clear();
            let _ = give_back.send(batch);
            if result.is_err() || taken > QUEUE {
                break;
            }
            next = rx.try_recv().ok();
        }
        if result.is_ok()
            && let Some(s) = sync
        {
            result = file.sync_data().and_then(|()| write_manifest(&manifest_path, &s.manifest)).map(|()| 0);
        }
        let failure = result.as_ref().err().map(|e| e.to_string());
        for w in waiters {
            let _ = w.send(match &failure {
                None => Ok(()),
                Some(reason) => Err(io::Error::other(reason.clone())),
            });
        }
        if let Some(reason) = failure {
            if let Ok(mut f) = failed.lock() {
                *f = Some(reason);
            }
            // Dropping the queue makes every later hand-over fail with the reason.
            return;
        }
    }
}

/// Writes a batch's parts in order with as few calls as the platform allows; the bytes written.
fn write_parts(file: &mut File, batch: &Batch) -> io::Result<usize> {
    let mut slices = Vec::with_capacity(batch.parts.len());
    let mut at = 0;
    for part in &batch.parts {
        let slice: &[u8] = match part {
            Part::Own(end) => {
                let s = batch.bytes.get(at..*end).unwrap_or_default();
                at = *end;
                s
            }
            Part::Shared(b) => b,
        };
        if !slice.is_empty() {
            slices.push(io::IoSlice::new(slice));
        }
    }
    let total = slices.iter().map(|s| s.len()).sum();
    let mut rest = &mut slices[..];
    while !rest.is_empty() {
        // IOV_MAX is 1024 on Linux; larger calls fail rather than write less.
        let upto = rest.len().min(1024);
        let n = file.write_vectored(&rest[..upto])?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::WriteZero, "the disk took no more bytes"));
        }
        io::IoSlice::advance_slices(&mut rest, n);
    }
    Ok(total)
}

/// Asks the kernel to start writing a batch to the disk now, without waiting: by the next sync
/// most of it is already there, so a sync costs the last batch rather than everything since the
/// one before (a fast stream of big messages would otherwise wait for the disk at every sync).
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, len: usize) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (libc::off64_t::try_from(offset), libc::off64_t::try_from(len)) else {
        return;
    };
    // SAFETY: a plain syscall on a file descriptor this thread owns; it reads no memory of ours.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE);
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File, _offset: u64, _len: usize) {}

pub(super) fn write_manifest(path: &std::path::Path, manifest: &Manifest) -> io::Result<()> {
    let text = serde_json::to_vec_pretty(manifest).map_err(io::Error::other)?;
    atomic_write(path, &text, false).map(|_| ())
}
