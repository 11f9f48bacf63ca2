//! One open dump: the file, its decoder and row loader, the filter, the selection and the
//! decoded detail of the selected message. A file cut short or replaced on disk while it is open
//! is said in words ([`FileTab::disk_change`]); the tab keeps what it read, shows the frames
//! past the new end as unreadable, and never saves over a file replaced since it was opened.
//! Saving it is [`crate::panes::file::save`]'s.

pub mod browser;
pub mod chunk_group;
pub mod confirm_save;
pub mod detail;
pub mod detail_view;
pub mod edit_bar;
pub mod edit_plan;
pub mod field_edit;
pub mod field_editor;
pub mod row_order;
pub mod rows;
pub mod save;
pub mod view;

use crate::codec::EditOp;
use crate::dump::background::{FilterScan, RowLoader, Wake};
use crate::dump::edit_session::EditSession;
use crate::dump::filter::FrameFilter;
use crate::dump::view::FrameDecoder;
use crate::dump::{DumpFile, OpenOptions};
use crate::jobs::JobError;
use crate::panes::command::{AppCommand, CommandSender};
use crate::panes::file::detail::FrameDetail;
use crate::panes::file::edit_plan::EditRefused;
use crate::panes::file::field_edit::EditRequest;
use crate::panes::file::row_order::{RowOrder, SortColumn};
pub use crate::panes::file::save::SaveWork;
use crate::panes::file::save::{SaveAsk, ViewRestore};
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
    /// Counts the filters applied, so the list's rows are computed again for a new one.
    scan_generation: u64,
    /// The list's rows and what they were computed from (see [`rows`]).
    list_cache: std::sync::Mutex<Option<(rows::ListKey, Arc<crate::dump::ListRows>)>>,
    /// The selected frame (None while a damaged range or nothing is selected).
    pub selected: Option<usize>,
    /// The selected damaged range: its words and bytes are shown instead of a frame's.
    pub selected_damaged: Option<crate::dump::Problem>,
    pub detail: Option<FrameDetail>,
    /// Unsaved edits, with undo and redo.
    pub session: EditSession,
    /// Where the save in progress writes (the app runs it as a job).
    pub saving: Option<PathBuf>,
    /// Where this tab asks the app for work (a save, a size sort, a filter scan to watch): the
    /// app's sender once the tab is in the app (a tab made alone sends into a queue nobody reads).
    pub commands: CommandSender,
    /// A save asked for and not confirmed yet: the confirmation is showing.
    pub confirm_save: Option<SaveAsk>,
    /// What a save's reopening still has to put back (selection, scroll).
    pub(crate) restore: Option<ViewRestore>,
    /// Where the message list is scrolled to (kept across a save), and a scroll to apply once.
    pub scroll_y: f32,
    pub scroll_to: Option<f32>,
    /// A frame to bring into view once the list has that many rows (the timeline's click).
    pub reveal: Option<usize>,
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
    pub fn open(path: &Path, set: &SchemaSet, wake: Wake) -> Result<FileTab, JobError> {
        Self::open_as(path, set, wake, &ReadAs::default())
    }

    /// Opens with the framing and/or type the operator chose instead of the detected ones.
    pub fn open_as(path: &Path, set: &SchemaSet, wake: Wake, read_as: &ReadAs) -> Result<FileTab, JobError> {
        // Opened once: a FIFO or a device can be read only once.
        let source = crate::dump::source::Source::open(path)?;
        let (mut desc, mut framing, mut why_type) = crate::dump::auto::choose(path, source.head(), set);
        if let Some(t) = read_as.type_name.as_deref().filter(|t| !t.trim().is_empty()) {
            desc = Some(set.message(t.trim())?);
            why_type = "chosen by hand".into();
        }
        if read_as.framing.is_some() {
            framing = read_as.framing;
        }
        let opts = OpenOptions { framing, message_type: desc.clone(), ..OpenOptions::default() };
        let dump = Arc::new(DumpFile::open_source(path, source, opts)?);
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
            scan_generation: 0,
            list_cache: Default::default(),
            selected: None,
            selected_damaged: None,
            detail: None,
            session: EditSession::default(),
            saving: None,
            commands: CommandSender::default(),
            confirm_save: None,
            restore: None,
            scroll_y: 0.0,
            scroll_to: None,
            reveal: None,
            decode_as: Vec::new(),
            order: RowOrder::default(),
            diff_cache: None,
            wake,
        })
    }

    /// What happened to the file on disk since it was opened, in words, or `None`: cut short
    /// (then what is no longer readable), or replaced by another file (the tab still shows the
    /// one opened). The row loader looks once a second and wakes the window when it changes.
    pub fn disk_change(&self) -> Option<String> {
        if let Some(s) = self.dump.known_shrink() {
            let n = self.dump.first_frame_past(s.now);
            return Some(format!(
                "{} shrank from {} to {} bytes on disk after it was opened (something cut or rewrote it): frames from {n} on are past its new end and show as unreadable; the rows read before are kept. Reopen it once whatever changed it has finished.",
                self.title(),
                s.was,
                s.now
            ));
        }
        // Our own save replaces the file too: the tab is then read again from disk.
        (self.rows.replaced_on_disk() && self.saving.is_none()).then(|| {
            format!(
                "{} was replaced on disk after it was opened: this tab still shows the file as it was then, and Save is refused (it would write over the new file). Reopen it to see the new one.",
                self.title()
            )
        })
    }

    pub fn title(&self) -> String {
        self.path
            .file_name()
            .map_or_else(|| self.path.display().to_string(), |n| n.to_string_lossy().into_owned())
    }

    /// Sorts the list by a cheap column (again: the other way round). Size order waits until
    /// the rows are all known (indexing and filtering done), then sorts on a worker thread.
    pub fn sort_by(&mut self, column: SortColumn) -> Result<(), SortWaits> {
        let scanning = self.scan.as_ref().is_some_and(|s| !s.is_done());
        if column == SortColumn::Size && (!self.dump.index().is_done() || scanning) {
            return Err(SortWaits);
        }
        let (base, list) = if column == SortColumn::Size {
            (self.all_frames(), (*self.list()).clone())
        } else {
            (Vec::new(), Default::default())
        };
        if let Some(sort) = self.order.sort_by(column, self.dump.clone(), (base, list)) {
            self.ask(TabWork::Sort(sort));
        }
        Ok(())
    }

    /// Applies the filter text: empty clears it; otherwise a background scan starts.
    pub fn apply_filter(&mut self) {
        self.scan = None;
        self.scan_generation += 1;
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
                self.ask(TabWork::WatchScan(scan.watch()));
                self.scan = Some(scan);
            }
            Err(e) => self.filter_error = Some(e),
        }
    }

    /// Selects frame `i` and decodes it (one message: allowed on the UI thread). A frame past
    /// the end of a file cut short has no detail ([`FileTab::unreadable`] says why).
    pub fn select(&mut self, i: usize) {
        self.drop_pending_selection();
        self.selected = Some(i);
        self.selected_damaged = None;
        let bytes = self.session.message(&self.dump, i);
        // Checked after the copy (one `fstat`): bytes read past a cut are zeros, never shown.
        let _ = self.dump.check_unchanged();
        self.detail = bytes
            .filter(|_| self.unreadable(i).is_none())
            .and_then(|b| FrameDetail::build(&self.dump, &self.decoder, i, b, &self.decode_as));
        // A chunk is one slice of a message: its group is found by a job and shown with it.
        let chunk = self.decoder.view(&self.dump, i).and_then(|v| v.wal.as_ref().and_then(|w| w.chunk));
        if let (Some(d), Some(_)) = (self.detail.as_mut(), chunk) {
            d.chunk_group = Some(chunk_group::ChunkGroupView::pending(i));
            self.ask(TabWork::ChunkGroup(chunk_group::ChunkAsk {
                dump: self.dump.clone(),
                frame: i,
                pool: self.decoder.pool().clone(),
                frame_type: self.decoder.message_type().cloned(),
            }));
        }
    }

    /// The chunk group found for frame `view.frame`: shown if that frame is still the one shown.
    pub fn take_chunk_group(&mut self, view: chunk_group::ChunkGroupView) {
        if let Some(d) = self.detail.as_mut().filter(|d| d.index == view.frame) {
            d.chunk_group = Some(view);
        }
    }

    /// Why frame `i` cannot be shown, when the file was cut short before its end.
    pub fn unreadable(&self, i: usize) -> Option<String> {
        let loc = self.dump.frame(i)?;
        let s = self.dump.intact(&loc).err()?;
        Some(format!(
            "frame {i} (bytes {}..{}) is past the end of the file: {s} after it was opened",
            loc.offset,
            loc.end()
        ))
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
                    d.edit_error = Some(e.to_string());
                }
            }
        }
    }

    fn try_request(&mut self, i: usize, req: EditRequest) -> Result<(), EditRefused> {
        if self.saving.is_some() && !matches!(req, EditRequest::DecodeAs { .. }) {
            // The save writes a snapshot and then the tab is read again from disk.
            return Err(EditRefused::SaveRunning);
        }
        let root = self.decoder.message_type().cloned().ok_or(EditRefused::NoMessageType)?;
        let current = self.session.message(&self.dump, i).ok_or(EditRefused::NoFrame(i))?;
        let detail = self.detail.as_ref().filter(|d| d.index == i);
        match crate::panes::file::edit_plan::plan(self.decoder.pool(), &root, &current, detail, req)? {
            crate::panes::file::edit_plan::Planned::DecodeAs(node, desc) => {
                self.decode_as.retain(|(p, _)| *p != node);
                self.decode_as.push((node, desc));
                Ok(())
            }
            crate::panes::file::edit_plan::Planned::Edits(edits) => {
                Ok(self.session.apply_all(&self.dump, &root, i, &edits)?)
            }
        }
    }

    /// Undo, redo and save wait while a save runs (it writes a snapshot, then the tab is read
    /// again from disk) or its confirmation shows (what it shows is what is written). The menus
    /// and the edit bar ask these, so they agree. A save may be asked for without edits: the
    /// confirmation then says that nothing would change.
    pub fn can_undo(&self) -> bool {
        self.saving.is_none() && self.confirm_save.is_none() && self.session.can_undo()
    }
    pub fn can_redo(&self) -> bool {
        self.saving.is_none() && self.confirm_save.is_none() && self.session.can_redo()
    }
    pub fn can_save(&self) -> bool {
        self.saving.is_none() && self.confirm_save.is_none()
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

    /// Asks the app to run `work` for this file (it starts a job after the frame).
    pub(crate) fn ask(&self, work: TabWork) {
        self.commands.send(AppCommand::FileWork { path: self.path.clone(), work });
    }
}

/// Why the list is not sorted by size yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("sorting by size waits until indexing and filtering have finished")]
pub struct SortWaits;

/// Work a file tab asks the app to run as a job.
pub enum TabWork {
    Save(SaveWork),
    /// Computing the size order (see [`RowOrder::sort_by`]).
    Sort(row_order::SizeSort),
    /// A filter scan started (the library runs it; the status bar shows it).
    WatchScan(crate::dump::background::ScanWatch),
    /// Finding the chunk group of the selected chunk frame.
    ChunkGroup(chunk_group::ChunkAsk),
}

impl std::fmt::Debug for TabWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TabWork::Save(s) => write!(f, "Save({})", s.target.display()),
            TabWork::Sort(_) => write!(f, "Sort"),
            TabWork::WatchScan(_) => write!(f, "WatchScan"),
            TabWork::ChunkGroup(a) => write!(f, "ChunkGroup({})", a.frame),
        }
    }
}

/// `a.task[2]` moved by -1 is `a.task[1]`.
fn moved_path(node: &str, by: i64) -> Option<String> {
    let (list, rest) = node.rsplit_once('[')?;
    let i: i64 = rest.strip_suffix(']')?.parse().ok()?;
    Some(format!("{list}[{}]", i.checked_add(by)?))
}
