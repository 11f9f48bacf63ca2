//! One open dump: the file, its decoder and row loader, the filter, the selection and the
//! decoded detail of the selected message.

use super::detail::FrameDetail;
use super::field_edit::EditRequest;
use super::row_order::{RowOrder, SortColumn};
use crate::codec::EditOp;
use crate::dump::background::{FilterScan, RowLoader, Wake};
use crate::dump::edit_session::EditSession;
use crate::dump::filter::FrameFilter;
use crate::dump::view::FrameDecoder;
use crate::dump::{DumpFile, OpenOptions};
use crate::schema::SchemaSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One edited frame and its changed window: (frame, (start, old length, new length)).
pub type FrameChange = (usize, (usize, usize, usize));

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
    /// What is wrong with the file's manifest, checked once the index is done.
    pub manifest: crate::dump::manifest_check::ManifestWatch,
    /// What the "Read as" controls hold (applied by reopening the file).
    pub read_as: ReadAs,
    pub filter_text: String,
    pub filter_error: Option<String>,
    pub scan: Option<FilterScan>,
    pub selected: Option<usize>,
    pub detail: Option<FrameDetail>,
    /// Unsaved edits, with undo and redo.
    pub session: EditSession,
    /// Where the save in progress writes (the app runs it as a job).
    pub saving: Option<PathBuf>,
    /// Work this tab asked for, taken by the app after the frame (see [`FileTab::take_work`]).
    work: Vec<TabWork>,
    /// What is typed in "Save as", and why the last save-as was refused.
    pub save_as_text: String,
    pub save_as_error: Option<String>,
    /// What saving would change, for the session version it was computed at.
    diff_cache: Option<(u64, Vec<FrameChange>)>,
    /// The order of the list (number either way, or size).
    pub order: RowOrder,
    /// Bytes fields shown decoded as a type the operator chose (editor path, type); kept while
    /// browsing, so every message's field of that name shows decoded.
    pub decode_as: Vec<(String, prost_reflect::MessageDescriptor)>,
    wake: Wake,
}

impl FileTab {
    /// Opens a dump. Reads at most the 1 MiB detection sample; meant for a worker thread.
    pub fn open(path: &Path, set: &SchemaSet, wake: Wake) -> Result<FileTab, String> {
        Self::open_as(path, set, wake, &ReadAs::default())
    }

    /// Opens with the framing and/or type the operator chose instead of the detected ones.
    pub fn open_as(path: &Path, set: &SchemaSet, wake: Wake, read_as: &ReadAs) -> Result<FileTab, String> {
        // Opened once: a FIFO or a device can be read only once.
        let source = crate::dump::source::Source::open(path).map_err(|e| e.to_string())?;
        let (mut desc, mut framing, mut why_type) = crate::dump::auto::choose(path, source.head(), set);
        if let Some(t) = read_as.type_name.as_deref().filter(|t| !t.trim().is_empty()) {
            desc = Some(set.message(t.trim()).map_err(|e| e.to_string())?);
            why_type = "chosen by hand".into();
        }
        if read_as.framing.is_some() {
            framing = read_as.framing;
        }
        let opts = OpenOptions { framing, message_type: desc.clone(), ..OpenOptions::default() };
        let dump = Arc::new(DumpFile::open_source(path, source, opts).map_err(|e| e.to_string())?);
        let decoder = Arc::new(FrameDecoder::new(set.pool().clone(), desc, 8192));
        let rows = RowLoader::spawn(dump.clone(), decoder.clone(), wake.clone());
        Ok(FileTab {
            path: path.to_path_buf(),
            dump,
            decoder,
            rows,
            why_type,
            manifest: Default::default(),
            read_as: read_as.clone(),
            filter_text: String::new(),
            filter_error: None,
            scan: None,
            selected: None,
            detail: None,
            session: EditSession::default(),
            saving: None,
            work: Vec::new(),
            save_as_text: String::new(),
            save_as_error: None,
            decode_as: Vec::new(),
            order: RowOrder::default(),
            diff_cache: None,
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

    /// Frame numbers of shown rows `range`, in the chosen order.
    pub fn frames(&self, range: std::ops::Range<usize>) -> Vec<usize> {
        let count = self.row_count();
        if self.order.column == SortColumn::Number && !self.order.descending {
            return self.unsorted(range);
        }
        range
            .filter_map(|row| self.order.unsorted_row(row, count))
            .filter_map(|r| self.unsorted(r..r + 1).first().copied())
            .collect()
    }

    /// Frame numbers of rows `range` before sorting (every frame, or the filter's matches).
    fn unsorted(&self, range: std::ops::Range<usize>) -> Vec<usize> {
        match &self.scan {
            Some(s) => s.matches(range),
            None => {
                let end = range.end.min(self.dump.frame_count());
                (range.start.min(end)..end).collect()
            }
        }
    }

    /// The frame shown `delta` rows away from `frame` (arrow keys), without listing the rows.
    pub fn neighbour(&self, frame: usize, delta: i64) -> Option<usize> {
        let count = self.row_count();
        let unsorted = match &self.scan {
            Some(s) => s.position(frame)?,
            None => frame,
        };
        let row = self.order.shown_row(unsorted, count)? as i64 + delta;
        if row < 0 {
            return None;
        }
        self.frames(row as usize..row as usize + 1).first().copied()
    }

    /// Sorts the list by a cheap column (again: the other way round). Size order waits until
    /// the rows are all known (indexing and filtering done), then sorts on a worker thread.
    pub fn sort_by(&mut self, column: SortColumn) -> Result<(), String> {
        let scanning = self.scan.as_ref().is_some_and(|s| !s.is_done());
        if column == SortColumn::Size && (!self.dump.index().is_done() || scanning) {
            return Err("sorting by size waits until indexing and filtering have finished".into());
        }
        let base = if column == SortColumn::Size { self.unsorted(0..self.row_count()) } else { Vec::new() };
        if let Some(sort) = self.order.sort_by(column, self.dump.clone(), base, self.wake.clone()) {
            self.work.push(TabWork::Sort(sort));
        }
        Ok(())
    }

    /// Applies the filter text: empty clears it; otherwise a background scan starts.
    pub fn apply_filter(&mut self) {
        self.scan = None;
        // A new set of rows: the size order no longer fits it.
        if self.order.column == SortColumn::Size {
            self.order.reset();
        }
        self.filter_error = None;
        if self.filter_text.trim().is_empty() {
            return;
        }
        match FrameFilter::parse(&self.filter_text) {
            Ok(f) => {
                let scan = FilterScan::spawn(self.dump.clone(), self.decoder.clone(), f, self.wake.clone());
                self.work.push(TabWork::WatchScan(scan.watch()));
                self.scan = Some(scan);
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
            .and_then(|b| FrameDetail::build(&self.dump, &self.decoder, i, b, &self.decode_as));
    }

    /// Re-decodes the selected frame after its bytes changed, keeping the view and selection.
    fn refresh(&mut self, i: usize) {
        let keep = self.detail.as_ref().filter(|d| d.index == i).map(|d| (d.view, d.selected_node.clone()));
        self.select(i);
        let root = self.decoder.message_type().cloned();
        if let (Some(d), Some((view, node))) = (self.detail.as_mut(), keep) {
            d.view = view;
            if let Some(n) = node {
                d.select_node(&n, root.as_ref());
            }
        }
    }

    /// Sets field `path` of frame `i` to `value` (lossless). Refusals are shown at the field.
    pub fn apply_edit(&mut self, i: usize, path: &str, value: &str) {
        self.request(i, EditRequest::Field { node: path.to_string(), op: EditOp::Set(value.to_string()) });
    }

    /// Carries out what the field editor asked for on frame `i`. Edits are lossless and one
    /// undo step each; a refusal is shown at the field and changes nothing.
    pub fn request(&mut self, i: usize, req: EditRequest) {
        // A moved element stays selected at its new place.
        let moved = match &req {
            EditRequest::Field { node, op: EditOp::Move(by) } => moved_path(node, *by),
            _ => None,
        };
        match self.try_request(i, req) {
            Ok(()) if moved.is_some() => {
                self.refresh(i);
                let root = self.decoder.message_type().cloned();
                if let (Some(d), Some(p)) = (self.detail.as_mut(), moved) {
                    d.select_node(&p, root.as_ref());
                }
            }
            Ok(()) => self.refresh(i),
            Err(e) => {
                if let Some(d) = self.detail.as_mut() {
                    d.edit_error = Some(e);
                }
            }
        }
    }

    fn try_request(&mut self, i: usize, req: EditRequest) -> Result<(), String> {
        if self.saving.is_some() && !matches!(req, EditRequest::DecodeAs { .. }) {
            // The save writes a snapshot and then the tab is read again from disk.
            return Err("a save is running; edit again once it has finished".into());
        }
        let root = self.decoder.message_type().cloned().ok_or("choose a message type before editing")?;
        let current = self.session.message(&self.dump, i).ok_or(format!("there is no frame {i}"))?;
        let detail = self.detail.as_ref().filter(|d| d.index == i);
        match super::edit_plan::plan(self.decoder.pool(), &root, &current, detail, req)? {
            super::edit_plan::Planned::DecodeAs(node, desc) => {
                self.decode_as.retain(|(p, _)| *p != node);
                self.decode_as.push((node, desc));
                Ok(())
            }
            super::edit_plan::Planned::Edits(edits) => {
                self.session.apply_all(&self.dump, &root, i, &edits).map_err(|e| e.to_string())
            }
        }
    }

    /// Undo, redo and save wait while a save runs (it writes a snapshot, then the tab is read
    /// again from disk). The menus and the edit bar ask these, so they agree.
    pub fn can_undo(&self) -> bool {
        self.saving.is_none() && self.session.can_undo()
    }
    pub fn can_redo(&self) -> bool {
        self.saving.is_none() && self.session.can_redo()
    }
    pub fn can_save(&self) -> bool {
        self.saving.is_none() && self.session.is_dirty()
    }

    pub fn undo(&mut self) {
        if self.can_undo()
            && let Some(i) = self.session.undo(&self.dump)
        {
            self.refresh(i);
        }
    }

    pub fn redo(&mut self) {
        if self.can_redo()
            && let Some(i) = self.session.redo(&self.dump)
        {
            self.refresh(i);
        }
    }

    /// What saving would change, frame by frame (see `EditSession::diff`); computed once per
    /// change of the edits, not every frame.
    pub fn diff(&mut self) -> Vec<FrameChange> {
        let v = self.session.version();
        match &self.diff_cache {
            Some((at, d)) if *at == v => d.clone(),
            _ => {
                let d = self.session.diff(&self.dump);
                self.diff_cache = Some((v, d.clone()));
                d
            }
        }
    }

    /// Writes the edits on a worker thread: atomic replace, previous version kept as FILE.bak.
    pub fn save(&mut self) {
        self.write_to(None);
    }

    /// Writes the file with its edits to `target` instead (atomic; an existing target is kept
    /// as TARGET.bak); the tab then shows the new file. The original stays as it was.
    /// `open_elsewhere` are files open in other tabs, which it refuses to write over.
    pub fn save_as(&mut self, target: PathBuf, open_elsewhere: &[PathBuf]) -> Result<(), String> {
        if target.as_os_str().is_empty() {
            return Err("type where to save the copy".into());
        }
        let is = |p: &Path| match (std::fs::canonicalize(&target), std::fs::canonicalize(p)) {
            (Ok(a), Ok(b)) => a == b,
            _ => target == p,
        };
        if is(&self.path) {
            return Err("that is this file: use Save to replace it (a .bak is kept)".into());
        }
        if let Some(p) = open_elsewhere.iter().find(|p| is(p)) {
            return Err(format!(
                "{} is open in another tab; close it first or choose another name",
                p.display()
            ));
        }
        if target.is_dir() {
            return Err(format!("{} is a directory; name a file", target.display()));
        }
        let parent = target.parent().filter(|p| !p.as_os_str().is_empty());
        if let Some(dir) = parent
            && !dir.is_dir()
        {
            return Err(format!(
                "folder {} does not exist; create it first or choose another",
                dir.display()
            ));
        }
        self.write_to(Some(target));
        Ok(())
    }

    fn write_to(&mut self, target: Option<PathBuf>) {
        // Rendering reads the whole file: in a job, from a snapshot of the edits.
        let read_as = match &target {
            // A copy without a manifest reads the same as this tab does.
            Some(_) => ReadAs {
                framing: Some(self.dump.framing),
                type_name: self.decoder.message_type().map(|d| d.full_name().to_string()),
            },
            None => self.read_as.clone(),
        };
        let target = target.unwrap_or_else(|| self.path.clone());
        self.saving = Some(target.clone());
        self.work.push(TabWork::Save(SaveWork {
            pending: self.session.pending(),
            dump: self.dump.clone(),
            target,
            read_as,
        }));
    }

    /// The work queued since the last call (the app starts a job for each).
    pub fn take_work(&mut self) -> Vec<TabWork> {
        std::mem::take(&mut self.work)
    }
}

/// Work a file tab asks the app to run as a job.
pub enum TabWork {
    Save(SaveWork),
    /// Computing the size order (see [`RowOrder::sort_by`]).
    Sort(Box<dyn FnOnce() + Send>),
    /// A filter scan started (the library runs it; the status bar shows it).
    WatchScan(crate::dump::background::ScanWatch),
}

impl std::fmt::Debug for TabWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TabWork::Save(s) => write!(f, "Save({})", s.target.display()),
            TabWork::Sort(_) => write!(f, "Sort"),
            TabWork::WatchScan(_) => write!(f, "WatchScan"),
        }
    }
}

/// A save: the edits as they were when it was asked for, and where they go.
pub struct SaveWork {
    pending: crate::dump::edit_session::PendingEdits,
    dump: Arc<DumpFile>,
    pub target: PathBuf,
    /// How to read the written file again.
    pub read_as: ReadAs,
}

impl SaveWork {
    /// Renders the file and writes it atomically, the previous version kept as TARGET.bak.
    pub fn run(&self) -> Result<(), String> {
        let bytes = self.pending.render(&self.dump)?;
        crate::dump::save::atomic_write(&self.target, &bytes, true)
            .map(|_| ())
            .map_err(|e| format!("cannot save: {e}"))
    }
}

/// `a.task[2]` moved by -1 is `a.task[1]`.
fn moved_path(node: &str, by: i64) -> Option<String> {
    let (list, rest) = node.rsplit_once('[')?;
    let i: i64 = rest.strip_suffix(']')?.parse().ok()?;
    Some(format!("{list}[{}]", i.checked_add(by)?))
}
