//! An opened dump: the mapped bytes, the chosen framing (detected or forced), the frame index
//! being built in the background, and random access to any frame's bytes. Decoding lives in
//! `view`; this file never decodes more than the detection sample.

use super::detect::{Detection, detect};
use super::framing::{FrameHeader, Framing, read_header};
use super::index::{FrameFold, IndexShared, Problem};
use super::index_build::{self, Plan};
use super::index_cache::IndexCache;
use super::index_regions::REGION;
use super::source::{Source, TextEncoding, decode_text, sniff_text};
use super::validate::message_range;
use prost_reflect::MessageDescriptor;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Force a framing instead of detecting it.
    pub framing: Option<Framing>,
    /// Force a text encoding instead of sniffing it.
    pub encoding: Option<TextEncoding>,
    /// The message type of each frame, when known: sharpens detection and resynchronisation.
    pub message_type: Option<MessageDescriptor>,
    /// Whether the frame index is persisted and reused (large dumps, by default).
    pub index_cache: IndexCache,
    /// Leave the index unbuilt until it is first waited for ([`DumpFile::wait_indexed`]) or
    /// built by a whole-file fold ([`super::scan::fold_all_views`]), which then reads the file
    /// once for both. Until then the dump has no frames. For the CLI; the window never waits.
    pub defer_index: bool,
    /// List at most this many frames (never more than [`super::index::MAX_INDEXED_FRAMES`],
    /// the default): a tighter memory budget for the index, at 8 bytes a frame.
    pub max_frames: Option<usize>,
}

#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    #[error("{path}: cannot open: {reason}")]
    Open { path: PathBuf, reason: String },
    #[error(transparent)]
    Input(Box<crate::input::InputError>),
    /// The file changed on disk while it was read: what was read from it past `now` cannot be
    /// trusted. `frame` is the first frame that does not end by `now`.
    #[error(
        "{}: the file changed while it was read: it shrank from {was} to {now} bytes, so frames from {frame} on could not be read (the frames before were read whole). Open it again once whatever changed it has finished",
        path.display()
    )]
    Changed { path: PathBuf, was: u64, now: u64, frame: usize },
    #[error("{path}: {reason}")]
    Text { path: PathBuf, reason: String },
}

/// Where one frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameLoc {
    /// The frame's number, or [`UNNUMBERED`].
    pub index: usize,
    pub offset: u64,
    pub header: FrameHeader,
}

/// The number of a frame found before the frames ahead of it were counted (a fold that runs
/// while the index is built: see [`super::scan::fold_all_views`]).
pub const UNNUMBERED: usize = usize::MAX;

impl FrameLoc {
    pub fn end(&self) -> u64 {
        self.offset + self.header.total()
    }
}

pub struct DumpFile {
    pub path: PathBuf,
    pub(super) source: Arc<Source>,
    pub encoding: TextEncoding,
    pub framing: Framing,
    /// What detection concluded (also filled, with confidence 1.0, when the framing was forced).
    pub detection: Detection,
    pub message_type: Option<MessageDescriptor>,
    index: Arc<IndexShared>,
    /// How to build the index, while it is deferred ([`OpenOptions::defer_index`]).
    deferred: Mutex<Option<Plan>>,
}

impl DumpFile {
    /// Maps the file (or reads a stream once: see [`Source::open`]), settles encoding and
    /// framing, and starts indexing in the background.
    pub fn open(path: &Path, opts: OpenOptions) -> Result<DumpFile, DumpError> {
        let mapped = Source::open(path).map_err(|e| DumpError::Input(Box::new(e)))?;
        Self::open_source(path, mapped, opts)
    }

    /// [`DumpFile::open`] of a source already opened (whose head chose the type).
    pub fn open_source(path: &Path, mapped: Source, opts: OpenOptions) -> Result<DumpFile, DumpError> {
        let encoding = opts.encoding.unwrap_or_else(|| sniff_text(mapped.bytes()));
        let source = match encoding {
            TextEncoding::Raw => mapped,
            enc => {
                let decoded = decode_text(mapped.bytes(), enc);
                // Checked after the read: text cut short while it was decoded is not a dump.
                if let Err(s) = mapped.check() {
                    return Err(DumpError::Changed {
                        path: path.to_path_buf(),
                        was: s.was,
                        now: s.now,
                        frame: 0,
                    });
                }
                Source::Owned(decoded.map_err(|reason| DumpError::Text { path: path.to_path_buf(), reason })?)
            }
        };
        Ok(Self::from_source(path, Arc::new(source), encoding, opts))
    }

    /// Opens bytes already in memory (tests, pasted data).
    pub fn from_bytes(name: &str, bytes: Vec<u8>, opts: OpenOptions) -> DumpFile {
        Self::from_source(Path::new(name), Arc::new(Source::Owned(bytes)), TextEncoding::Raw, opts)
    }

    fn from_source(path: &Path, source: Arc<Source>, encoding: TextEncoding, opts: OpenOptions) -> DumpFile {
        let desc = opts.message_type.clone();
        let detection = match opts.framing {
            Some(f) => Detection {
                framing: f,
                frames: 0,
                confidence: 1.0,
                reason: format!("{f} framing chosen by hand"),
            },
            None => detect(source.bytes(), desc.as_ref()),
        };
        let framing = detection.framing;
        let type_name = desc.as_ref().map_or("", |d| d.full_name());
        let cache = match source.is_mapped() && encoding == TextEncoding::Raw {
            true => opts.index_cache.key(path, source.bytes(), framing, type_name),
            false => None,
        };
        let plan = Plan { source: source.clone(), framing, desc: desc.clone(), cache, region: REGION };
        let limit = opts.max_frames.unwrap_or(super::index::MAX_INDEXED_FRAMES);
        let index = Arc::new(IndexShared::with_limit(limit));
        let deferred = match opts.defer_index {
            true => Some(plan),
            false => {
                index_build::spawn(&index, plan);
                None
            }
        };
        DumpFile {
            path: path.to_path_buf(),
            source,
            encoding,
            framing,
            detection,
            message_type: desc,
            index,
            deferred: Mutex::new(deferred),
        }
    }

    /// A deferred index walked ahead in regions of `region` bytes, so that a small dump takes
    /// the paths of a large one.
    #[cfg(test)]
    pub(crate) fn with_index_region(self, region: usize) -> DumpFile {
        if let Ok(mut plan) = self.deferred.lock()
            && let Some(p) = plan.as_mut()
        {
            p.region = region;
        }
        self
    }

    /// The index's plan, taken once: whoever takes it builds the index.
    fn take_deferred(&self) -> Option<Plan> {
        self.deferred.lock().ok()?.take()
    }

    /// Builds the deferred index on this thread, folding every frame into `fold` as it is
    /// found (see [`index_build::build_folding`]); `None` when the index was not deferred (it is
    /// then waited for) or the fold could not be trusted: the caller folds over the index.
    pub(crate) fn build_index_folding<F: FrameFold>(&self, fold: &F) -> Option<F::Acc> {
        match self.take_deferred() {
            Some(plan) => index_build::build_folding(&self.index, plan, fold),
            None => {
                self.wait_indexed();
                None
            }
        }
    }

    pub fn bytes(&self) -> &[u8] {
        self.source.bytes()
    }

    /// An error when the file is no longer what was opened: it shrank, or a read met zeros past
    /// its new end (see [`super::mapping`]), so that nothing derived from it is written or shown
    /// as if it were whole. One `fstat` of the mapped file: call it after reading, and the bytes
    /// read before it passes were the file's own. A stream read into memory never changes; a file
    /// replaced by rename keeps the one opened mapped and whole (see
    /// [`DumpFile::replaced_on_disk`]).
    pub fn check_unchanged(&self) -> Result<(), DumpError> {
        self.source.check().map_err(|s| self.changed(s))
    }
    pub fn len(&self) -> u64 {
        self.source.bytes().len() as u64
    }
    pub fn is_empty(&self) -> bool {
        self.source.bytes().is_empty()
    }
    pub fn index(&self) -> &IndexShared {
        &self.index
    }
    /// Frames indexed so far (grows while indexing runs).
    pub fn frame_count(&self) -> usize {
        self.index.frame_count()
    }
    pub fn problems(&self) -> Vec<Problem> {
        self.index.problems()
    }
    /// Blocks until indexing finishes (starting a deferred index). For the CLI and tests; the
    /// UI polls instead.
    pub fn wait_indexed(&self) {
        if let Some(plan) = self.take_deferred() {
            index_build::build(&self.index, plan);
        }
        while !self.index.is_done() {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    pub fn frame(&self, i: usize) -> Option<FrameLoc> {
        self.frame_at(i, self.index.offset(i)?)
    }

    /// Frame `i`, which the index says starts at `offset` (scans read many offsets at once).
    /// Only for offsets from the index: it checks the header, not that the frame fits the file.
    pub fn frame_at(&self, i: usize, offset: u64) -> Option<FrameLoc> {
        let header = read_header(self.bytes(), offset as usize, self.framing).ok()?;
        Some(FrameLoc { index: i, offset, header })
    }

    /// The frame's bytes including its header.
    pub fn frame_bytes(&self, loc: &FrameLoc) -> &[u8] {
        &self.bytes()[loc.offset as usize..loc.end() as usize]
    }

    /// The message inside the frame (for brpc, without meta and attachment) and its absolute
    /// offset in the (decoded) file.
    pub fn message_bytes(&self, loc: &FrameLoc) -> (u64, &[u8]) {
        let start = loc.offset as usize + loc.header.header_len as usize;
        let body = &self.bytes()[start..loc.end() as usize];
        let r = message_range(body, self.framing, &loc.header);
        ((start + r.start) as u64, &body[r])
    }
}

impl Drop for DumpFile {
    fn drop(&mut self) {
        // Nobody will read the rest of the index.
        self.index.cancel();
    }
}
