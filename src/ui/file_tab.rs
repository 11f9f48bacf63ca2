//! One open dump: the file, its decoder and row loader, the filter, the selection and the
//! decoded detail of the selected message.

use super::detail::FrameDetail;
use crate::codec::Edit;
use crate::dump::background::{FilterScan, RowLoader, Wake};
use crate::dump::edit_session::EditSession;
use crate::dump::filter::FrameFilter;
use crate::dump::view::FrameDecoder;
use crate::dump::{DumpFile, OpenOptions};
use crate::schema::SchemaSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};

/// A framing and/or message type chosen by hand (None: detect).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadAs {
    pub framing: Option<crate::dump::Framing>,
    pub type_name: Option<String>,
}

pub struct FileTab {
    pub path: PathBuf,
    pub dump: Arc<DumpFile>,
    pub decoder: Arc<FrameDecoder>,
    pub rows: RowLoader,
    /// Why this type was chosen (manifest, file name, detection).
    pub why_type: String,
    /// What the "Read as" controls hold (applied by reopening the file).
    pub read_as: ReadAs,
    pub filter_text: String,
    pub filter_error: Option<String>,
    pub scan: Option<FilterScan>,
    pub selected: Option<usize>,
    pub detail: Option<FrameDetail>,
    /// Unsaved edits, with undo and redo.
    pub session: EditSession,
    /// A save in progress (its result arrives here).
    pub saving: Option<mpsc::Receiver<Result<(), String>>>,
    wake: Wake,
}

impl FileTab {
    /// Opens a dump. Reads at most the 1 MiB detection sample; meant for a worker thread.
    pub fn open(path: &Path, set: &SchemaSet, wake: Wake) -> Result<FileTab, String> {
        Self::open_as(path, set, wake, &ReadAs::default())
    }

    /// Opens with the framing and/or type the operator chose instead of the detected ones.
    pub fn open_as(path: &Path, set: &SchemaSet, wake: Wake, read_as: &ReadAs) -> Result<FileTab, String> {
        let head = crate::dump::auto::read_head(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let (mut desc, mut framing, mut why_type) = crate::dump::auto::choose(path, &head, set);
        if let Some(t) = read_as.type_name.as_deref().filter(|t| !t.trim().is_empty()) {
            desc = Some(set.message(t.trim()).map_err(|e| e.to_string())?);
            why_type = "chosen by hand".into();
        }
        if read_as.framing.is_some() {
            framing = read_as.framing;
        }
        let opts = OpenOptions { framing, message_type: desc.clone(), ..OpenOptions::default() };
        let dump = Arc::new(DumpFile::open(path, opts).map_err(|e| e.to_string())?);
        let decoder = Arc::new(FrameDecoder::new(set.pool().clone(), desc, 8192));
        let rows = RowLoader::spawn(dump.clone(), decoder.clone(), wake.clone());
        Ok(FileTab {
            path: path.to_path_buf(),
            dump,
            decoder,
            rows,
            why_type,
            read_as: read_as.clone(),
            filter_text: String::new(),
            filter_error: None,
            scan: None,
            selected: None,
            detail: None,
            session: EditSession::default(),
            saving: None,
            wake,
        })
    }

    pub fn title(&self) -> String {
        self.path
            .file_name()
            .map_or_else(|| self.path.display().to_string(), |n| n.to_string_lossy().into_owned())
    }

    /// Rows shown: every frame, or the filter's matches so far.
    pub fn row_count(&self) -> usize {
        match &self.scan {
            Some(s) => s.match_count(),
            None => self.dump.frame_count(),
        }
    }

    /// Frame numbers of shown rows `range`.
    pub fn frames(&self, range: std::ops::Range<usize>) -> Vec<usize> {
        match &self.scan {
            Some(s) => s.matches(range),
            None => {
                let end = range.end.min(self.dump.frame_count());
                (range.start.min(end)..end).collect()
            }
        }
    }

    /// Applies the filter text: empty clears it; otherwise a background scan starts.
    pub fn apply_filter(&mut self) {
        self.scan = None;
        self.filter_error = None;
        if self.filter_text.trim().is_empty() {
            return;
        }
        match FrameFilter::parse(&self.filter_text) {
            Ok(f) => {
                self.scan =
                    Some(FilterScan::spawn(self.dump.clone(), self.decoder.clone(), f, self.wake.clone()))
            }
            Err(e) => self.filter_error = Some(e),
        }
    }

    /// Selects frame `i` and decodes it (one message: allowed on the UI thread).
    pub fn select(&mut self, i: usize) {
        self.selected = Some(i);
        self.detail = self
            .session
            .message(&self.dump, i)
            .and_then(|b| FrameDetail::build(&self.dump, &self.decoder, i, b));
    }

    /// Re-decodes the selected frame after its bytes changed, keeping the view and selection.
    fn refresh(&mut self, i: usize) {
        let keep = self.detail.as_ref().filter(|d| d.index == i).map(|d| (d.view, d.selected_node.clone()));
        self.select(i);
        if let (Some(d), Some((view, node))) = (self.detail.as_mut(), keep) {
            d.view = view;
            d.selected_node = node.clone();
            d.highlight = node.and_then(|n| d.span_of(&n));
        }
    }

    /// Sets field `path` of frame `i` to `value` (lossless). Refusals are shown at the field.
    pub fn apply_edit(&mut self, i: usize, path: &str, value: &str) {
        let result = match (self.decoder.message_type(), Edit::set(&format!("{path}={value}"))) {
            (None, _) => Err("choose a message type before editing".to_string()),
            (_, Err(e)) => Err(e),
            (Some(desc), Ok(edit)) => {
                self.session.apply(&self.dump, &desc.clone(), i, &edit).map_err(|e| e.to_string())
            }
        };
        match result {
            Ok(()) => self.refresh(i),
            Err(e) => {
                if let Some(d) = self.detail.as_mut() {
                    d.edit_error = Some(e);
                }
            }
        }
    }

    pub fn undo(&mut self) {
        if let Some(i) = self.session.undo(&self.dump) {
            self.refresh(i);
        }
    }

    pub fn redo(&mut self) {
        if let Some(i) = self.session.redo(&self.dump) {
            self.refresh(i);
        }
    }

    /// Writes the edits on a worker thread: atomic replace, previous version kept as FILE.bak.
    pub fn save(&mut self) {
        let (tx, rx) = mpsc::channel();
        let rendered = self.session.render(&self.dump);
        let (path, wake) = (self.path.clone(), self.wake.clone());
        let _ = std::thread::Builder::new().name("walscope-save".into()).spawn(move || {
            let result = rendered.and_then(|bytes| {
                crate::dump::save::atomic_write(&path, &bytes, true)
                    .map(|_| ())
                    .map_err(|e| format!("cannot save {}: {e}", path.display()))
            });
            let _ = tx.send(result);
            wake();
        });
        self.saving = Some(rx);
    }
}
