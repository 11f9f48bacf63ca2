//! Work on an open dump that must stay off the UI thread: decoding the rows about to be shown
//! (the row loader) and scanning every frame for a filter (the filter scan). Both run on their
//! own threads, publish what they have as they go, and stop when asked or when dropped. The
//! row loader also watches the file: once a second while idle, and around every batch, it asks
//! whether a mapped file was cut short (see [`super::mapping`]), forgets the rows it may have
//! read past the new end, and wakes the window to say so.

use super::filter::FrameFilter;
use super::reader::DumpFile;
use super::view::{FrameDecoder, FrameView};
use std::ops::{ControlFlow, Range};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

/// Called after new results are published (the UI passes `request_repaint`).
pub type Wake = Arc<dyn Fn() + Send + Sync>;

/// Decodes requested rows into the decoder's cache, newest request first.
pub struct RowLoader {
    tx: mpsc::Sender<Vec<usize>>,
    /// Whether the file's path names another file now (the loader looks once a second).
    replaced: Arc<AtomicBool>,
}

/// How often an idle row loader asks whether its file was cut short or replaced.
const WATCH: std::time::Duration = std::time::Duration::from_secs(1);

impl RowLoader {
    pub fn spawn(dump: Arc<DumpFile>, decoder: Arc<FrameDecoder>, wake: Wake) -> RowLoader {
        let (tx, rx) = mpsc::channel::<Vec<usize>>();
        let replaced = Arc::new(AtomicBool::new(false));
        let seen_replaced = replaced.clone();
        let _ = std::thread::Builder::new().name("walscope-rows".into()).spawn(move || {
            let mut watch = FileWatch { replaced: seen_replaced, cut_to: None };
            loop {
                let mut wanted = match rx.recv_timeout(WATCH) {
                    Ok(w) => w,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if watch.changed(&dump, &decoder) {
                            wake();
                        }
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                };
                // Only the latest request matters: the user has scrolled past the older ones.
                while let Ok(newer) = rx.try_recv() {
                    wanted = newer;
                }
                // Asked before the batch (a cut known, its frames read as errors) and after it
                // (a cut during the batch: what was read past the new end is forgotten).
                let mut decoded = watch.changed(&dump, &decoder);
                for i in wanted {
                    if decoder.cached(i).is_none() {
                        decoder.view(&dump, i);
                        decoded = true;
                    }
                }
                if watch.changed(&dump, &decoder) || decoded {
                    wake();
                }
            }
        });
        RowLoader { tx, replaced }
    }

    /// Whether the file's path named another file than the one open at the loader's last look
    /// (renamed over or deleted): the tab still shows the file as it was opened.
    pub fn replaced_on_disk(&self) -> bool {
        self.replaced.load(Ordering::Relaxed)
    }

    /// Asks for these rows; returns at once.
    pub fn request(&self, rows: Vec<usize>) {
        let _ = self.tx.send(rows);
    }
}

/// What the row loader last saw of its file on disk.
struct FileWatch {
    /// The size the file was cut to, once seen.
    cut_to: Option<u64>,
    replaced: Arc<AtomicBool>,
}

impl FileWatch {
    /// Whether the file was cut short (again) or replaced since the last look (one `fstat`, one
    /// `stat`). A new cut forgets the cached rows past the new end: they may have been read
    /// before it was known (rows read after it are read as errors).
    fn changed(&mut self, dump: &DumpFile, decoder: &FrameDecoder) -> bool {
        if !dump.is_mapped() {
            return false;
        }
        let cut_to = dump.check_unchanged().err().and_then(|_| dump.known_shrink()).map(|s| s.now);
        let replaced = dump.replaced_on_disk();
        let news = cut_to != self.cut_to || replaced != self.replaced.load(Ordering::Relaxed);
        if let Some(end) = cut_to.filter(|_| cut_to != self.cut_to) {
            decoder.forget_past(end);
        }
        self.cut_to = cut_to;
        self.replaced.store(replaced, Ordering::Relaxed);
        news
    }
}

/// Frames matching a filter, found by decoding every frame in the background.
pub struct FilterScan {
    pub filter: FrameFilter,
    matches: Arc<Mutex<Vec<usize>>>,
    /// The matches that are chunks, and their messages' timeticks (a group counts once).
    chunks: Arc<Mutex<(usize, std::collections::HashSet<u64>)>>,
    scanned: Arc<AtomicUsize>,
    done: Arc<AtomicBool>,
    cancel: Arc<AtomicBool>,
}

impl FilterScan {
    pub fn spawn(
        dump: Arc<DumpFile>,
        decoder: Arc<FrameDecoder>,
        filter: FrameFilter,
        wake: Wake,
    ) -> FilterScan {
        let scan = FilterScan {
            filter: filter.clone(),
            matches: Arc::default(),
            chunks: Arc::default(),
            scanned: Arc::default(),
            done: Arc::default(),
            cancel: Arc::default(),
        };
        let (matches, scanned, done, cancel) =
            (scan.matches.clone(), scan.scanned.clone(), scan.done.clone(), scan.cancel.clone());
        let chunks = scan.chunks.clone();
        let _ = std::thread::Builder::new().name("walscope-filter".into()).spawn(move || {
            let mut i = 0;
            let mut batch = Vec::new();
            loop {
                if cancel.load(Ordering::Relaxed) {
                    break;
                }
                let indexed = dump.frame_count();
                if i >= indexed {
                    if dump.index().is_done() && i >= dump.frame_count() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    continue;
                }
                // One chunk of the indexed frames at a time, on every core, in order.
                let end = indexed.min(i + super::scan::CHUNK);
                let keep = |v: FrameView| {
                    filter.matches(&v).then(|| (v.index, v.wal.as_ref().and_then(|w| w.chunk).map(|c| c.tt)))
                };
                let mut chunk_tts = Vec::new();
                let _ = super::scan::for_each_view(&dump, &decoder, i..end, filter.detail(), keep, |m| {
                    if let Some((index, tt)) = m {
                        batch.push(index);
                        chunk_tts.extend(tt);
                    }
                    ControlFlow::Continue(())
                });
                if let Ok(mut c) = chunks.lock() {
                    c.0 += chunk_tts.len();
                    c.1.extend(chunk_tts);
                }
                i = end;
                if let Ok(mut m) = matches.lock() {
                    m.append(&mut batch);
                }
                scanned.store(i, Ordering::Relaxed);
                wake();
            }
            if let Ok(mut m) = matches.lock() {
                m.append(&mut batch);
            }
            scanned.store(i, Ordering::Relaxed);
            done.store(true, Ordering::Release);
            wake();
        });
        scan
    }

    pub fn match_count(&self) -> usize {
        self.matches.lock().map(|m| m.len()).unwrap_or(0)
    }
    /// Of the matches: how many are chunks, and of how many messages.
    pub fn chunk_counts(&self) -> (usize, usize) {
        self.chunks.lock().map(|c| (c.0, c.1.len())).unwrap_or((0, 0))
    }
    /// Frame numbers of matches `range` (clamped).
    pub fn matches(&self, range: Range<usize>) -> Vec<usize> {
        match self.matches.lock() {
            Ok(m) => m[range.start.min(m.len())..range.end.min(m.len())].to_vec(),
            Err(_) => Vec::new(),
        }
    }
    /// How many matches come before frame `frame` (they are in frame order): where a damaged
    /// range at that frame's place goes among them.
    pub fn matches_before(&self, frame: usize) -> usize {
        self.matches.lock().map_or(0, |m| m.partition_point(|&f| f < frame))
    }
    /// The row of frame `frame` among the matches (they are in frame order).
    pub fn position(&self, frame: usize) -> Option<usize> {
        self.matches.lock().ok()?.binary_search(&frame).ok()
    }
    pub fn scanned(&self) -> usize {
        self.scanned.load(Ordering::Relaxed)
    }
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// A handle that reads this scan's progress and can stop it, for whoever shows it.
    pub fn watch(&self) -> ScanWatch {
        ScanWatch {
            matches: self.matches.clone(),
            scanned: self.scanned.clone(),
            done: self.done.clone(),
            cancel: self.cancel.clone(),
        }
    }
}

/// A filter scan's progress, readable from anywhere (the status bar), with a stop.
#[derive(Clone)]
pub struct ScanWatch {
    matches: Arc<Mutex<Vec<usize>>>,
    scanned: Arc<AtomicUsize>,
    done: Arc<AtomicBool>,
    cancel: Arc<AtomicBool>,
}

impl ScanWatch {
    pub fn scanned(&self) -> usize {
        self.scanned.load(Ordering::Relaxed)
    }
    pub fn match_count(&self) -> usize {
        self.matches.lock().map(|m| m.len()).unwrap_or(0)
    }
    /// Done, or stopped (a stopped scan ends at its next frame).
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Drop for FilterScan {
    fn drop(&mut self) {
        self.cancel();
    }
}
