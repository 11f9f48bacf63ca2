//! Work on an open dump that must stay off the UI thread: decoding the rows about to be shown
//! (the row loader) and scanning every frame for a filter (the filter scan). Both run on their
//! own threads, publish what they have as they go, and stop when asked or when dropped.

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
}

impl RowLoader {
    pub fn spawn(dump: Arc<DumpFile>, decoder: Arc<FrameDecoder>, wake: Wake) -> RowLoader {
        let (tx, rx) = mpsc::channel::<Vec<usize>>();
        let _ = std::thread::Builder::new().name("walscope-rows".into()).spawn(move || {
            while let Ok(mut wanted) = rx.recv() {
                // Only the latest request matters: the user has scrolled past the older ones.
                while let Ok(newer) = rx.try_recv() {
                    wanted = newer;
                }
                let mut decoded = false;
                for i in wanted {
                    if decoder.cached(i).is_none() {
                        decoder.view(&dump, i);
                        decoded = true;
                    }
                }
                if decoded {
                    wake();
                }
            }
        });
        RowLoader { tx }
    }

    /// Asks for these rows; returns at once.
    pub fn request(&self, rows: Vec<usize>) {
        let _ = self.tx.send(rows);
    }
}

/// Frames matching a filter, found by decoding every frame in the background.
pub struct FilterScan {
    pub filter: FrameFilter,
    matches: Arc<Mutex<Vec<usize>>>,
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
            scanned: Arc::default(),
            done: Arc::default(),
            cancel: Arc::default(),
        };
        let (matches, scanned, done, cancel) =
            (scan.matches.clone(), scan.scanned.clone(), scan.done.clone(), scan.cancel.clone());
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
                let keep = |v: FrameView| filter.matches(&v).then_some(v.index);
                let _ = super::scan::for_each_view(&dump, &decoder, i..end, filter.detail(), keep, |m| {
                    batch.extend(m);
                    ControlFlow::Continue(())
                });
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
    /// Frame numbers of matches `range` (clamped).
    pub fn matches(&self, range: Range<usize>) -> Vec<usize> {
        match self.matches.lock() {
            Ok(m) => m[range.start.min(m.len())..range.end.min(m.len())].to_vec(),
            Err(_) => Vec::new(),
        }
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
