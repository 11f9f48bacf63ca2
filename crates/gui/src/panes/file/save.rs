//! Saving one open file, the window's side of the file contract: a save is asked for (Ctrl+S,
//! Edit > Save, the edit bar), shown (the byte diff, the file replaced, where its backup goes)
//! and only then written, as a job; "Save as…" onto an existing file asks again, and onto the
//! file itself (or another name for it: a hard link, a symlink) is refused in words. After a
//! save the file is read again from disk, and the tab keeps its filter, selection, order and
//! scroll.
//!
//! Must never: write a file itself (it asks; the job in [`crate::work::save`] writes), ask
//! for a write before the operator clicked Save (or Replace) in the confirmation, or write onto
//! the file a tab is reading through another name.

use crate::atomic::output::{OutputError, check_output, same_file};
use crate::atomic::{Saved, backup_path};
use crate::dump::DumpFile;
use crate::panes::file::detail::DetailView;
use crate::panes::file::row_order::SortColumn;
use crate::panes::file::{FileTab, ReadAs, TabWork};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A save the operator asked for and has not confirmed (or cancelled) yet.
#[derive(Debug, Clone, Default)]
pub struct SaveAsk {
    /// Whether `FILE.bak` exists already (looked at once, when the confirmation opened).
    pub backup_exists: bool,
    /// The "Save as…" view, when it is shown instead of the plain save.
    pub save_as: Option<SaveAsView>,
}

/// "Save as…": what is typed, why the last try was refused, and an existing file it would
/// replace (asked about before anything is written).
#[derive(Debug, Clone, Default)]
pub struct SaveAsView {
    pub text: String,
    pub error: Option<SaveAsRefused>,
    pub replaces: Option<PathBuf>,
    /// Whether that file has a `.bak` already (which its own backup then replaces).
    pub replaces_backup: bool,
}

/// Where a "Save as…" may go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaveAsTarget {
    /// No file there yet.
    New,
    /// A file is there: writing replaces it, and it is kept as TARGET.bak.
    Replaces,
}

/// The selected frame's detail view (tree, hex…) and selected field.
type DetailPlace = (DetailView, Option<String>);

/// What the tab showed before a save, put back once the file is read again.
#[derive(Debug, Clone)]
pub struct ViewRestore {
    /// The selected frame (selected again once the index has reached it) and where its detail was.
    selected: Option<(usize, Option<DetailPlace>)>,
    scroll_y: f32,
    /// The list was sorted by size (computed again once the rows are all known), descending?
    size_order: Option<bool>,
}

impl FileTab {
    /// Ctrl+S, Edit > Save, the edit bar's Save: opens the confirmation. Nothing is written
    /// until its Save is clicked.
    pub fn ask_save(&mut self) {
        if self.saving.is_none() && self.confirm_save.is_none() {
            self.confirm_save =
                Some(SaveAsk { backup_exists: backup_path(&self.path).exists(), save_as: None });
        }
    }

    /// Opens the confirmation on its "Save as…" view, with a name beside this file suggested.
    pub fn ask_save_as(&mut self) {
        self.ask_save();
        if let Some(ask) = self.confirm_save.as_mut()
            && ask.save_as.is_none()
        {
            ask.save_as = Some(SaveAsView { text: suggested_copy_name(&self.path), ..Default::default() });
        }
    }

    /// The confirmation's Save: writes the edits over this file (atomic, the previous contents
    /// kept as FILE.bak) on a worker thread.
    pub fn save_confirmed(&mut self) {
        self.confirm_save = None;
        self.write_to(None);
    }

    /// Writes this file with its edits to `target` (checked with [`check_save_as`] and, when a
    /// file is there, confirmed); the tab then shows the copy. This file stays as it is.
    pub fn save_as_confirmed(&mut self, target: PathBuf) {
        self.confirm_save = None;
        self.write_to(Some(target));
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
        let in_place = target.is_none();
        let target = target.unwrap_or_else(|| self.path.clone());
        self.saving = Some(target.clone());
        self.ask(TabWork::Save(SaveWork {
            pending: self.session.pending(),
            dump: self.dump.clone(),
            target,
            read_as,
            in_place,
            had_edits: self.session.is_dirty(),
        }));
    }

    /// After a save, this tab (the file read again) takes over what `old` showed: the filter
    /// (applied again), the selected frame and its view, the order, fields decoded as a chosen
    /// type, and the scroll. Frames and rows that need the index wait for it ([`Self::poll_restore`]).
    pub fn keep_view_of(&mut self, old: &FileTab) {
        self.filter_text = old.filter_text.clone();
        if old.scan.is_some() {
            self.apply_filter();
        }
        self.decode_as = old.decode_as.clone();
        self.order.descending = old.order.descending && old.order.column == SortColumn::Number;
        let view = old.detail.as_ref().map(|d| (d.view, d.selected_node.clone()));
        self.restore = Some(ViewRestore {
            selected: old.selected.map(|i| (i, view)),
            scroll_y: old.scroll_y,
            size_order: (old.order.column == SortColumn::Size).then_some(old.order.descending),
        });
        self.poll_restore();
    }

    /// Puts back what [`Self::keep_view_of`] kept, as far as the index and the filter have got;
    /// called every frame the tab is drawn, until everything is back (a click on another row
    /// first drops the rest).
    pub fn poll_restore(&mut self) {
        let Some(mut r) = self.restore.take() else { return };
        let indexed = self.dump.index().is_done();
        if let Some((i, view)) = r.selected.take() {
            if self.dump.frame(i).is_some() {
                self.select(i);
                let root = self.decoder.message_type().cloned();
                if let (Some(d), Some((v, node))) = (self.detail.as_mut(), view) {
                    d.view = v;
                    if let Some(n) = node {
                        d.select_node(&n, root.as_ref());
                    }
                }
            } else if !indexed {
                r.selected = Some((i, view));
            }
        }
        let rows_known = indexed && self.scan.as_ref().is_none_or(|s| s.is_done());
        if !rows_known {
            self.restore = Some(r);
            return;
        }
        if let Some(descending) = r.size_order.take() {
            // Sorting by size starts a job; its order shows once computed.
            if self.sort_by(SortColumn::Size).is_ok() {
                self.order.descending = descending;
            }
        }
        self.scroll_to = Some(r.scroll_y);
        if r.selected.is_some() {
            self.restore = Some(r);
        }
    }

    /// Shows frame `i` (a mark clicked on the timeline): selected once the index has reached
    /// it, and scrolled into view.
    pub fn show_frame(&mut self, i: usize) {
        self.restore =
            Some(ViewRestore { selected: Some((i, None)), scroll_y: self.scroll_y, size_order: None });
        self.reveal = Some(i);
        self.poll_restore();
    }

    /// A click on a row: whatever a restore still had to select is dropped.
    pub(crate) fn drop_pending_selection(&mut self) {
        if let Some(r) = self.restore.as_mut() {
            r.selected = None;
        }
    }
}

/// Why "Save as…" may not write where it was asked (said as "Not saved: ...").
#[derive(Debug, Clone, thiserror::Error)]
pub enum SaveAsRefused {
    #[error("type where to save the copy")]
    NoTarget,
    #[error("cannot look at {}: {source}", target.display())]
    CannotLook { target: PathBuf, source: Arc<std::io::Error> },
    #[error("that is this file: use Save to replace it (its current contents are kept as {})", backup.display())]
    ThisFile { backup: PathBuf },
    #[error(
        "{} is this file under another name (a hard link to {}): writing it would replace the file this tab reads. Choose another name, or use Save",
        target.display(),
        this.display()
    )]
    ThisFileElsewhere { target: PathBuf, this: PathBuf },
    #[error("{} is open in another tab; close it first or choose another name", .0.display())]
    OpenElsewhere(PathBuf),
    #[error("{} is {what}, not a regular file; name a file", path.display())]
    NotAFile { path: PathBuf, what: &'static str },
    #[error("folder {} does not exist; create it first or choose another", folder.display())]
    NoFolder { folder: PathBuf },
    /// Another refusal of the file contract.
    #[error(transparent)]
    Output(Arc<OutputError>),
}

/// Whether "Save as…" may write `target` for the tab showing `this`, with `open_elsewhere`
/// open in other tabs. Looks only; the refusals are typed, put in words where drawn.
pub fn check_save_as(
    this: &Path,
    target: &Path,
    open_elsewhere: &[PathBuf],
) -> Result<SaveAsTarget, SaveAsRefused> {
    if target.as_os_str().is_empty() {
        return Err(SaveAsRefused::NoTarget);
    }
    let look =
        |e: std::io::Error| SaveAsRefused::CannotLook { target: target.to_path_buf(), source: Arc::new(e) };
    if same_file(target, this).map_err(look)? {
        let same_name = match (std::fs::canonicalize(target), std::fs::canonicalize(this)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        return Err(if same_name {
            SaveAsRefused::ThisFile { backup: backup_path(this) }
        } else {
            SaveAsRefused::ThisFileElsewhere { target: target.to_path_buf(), this: this.to_path_buf() }
        });
    }
    for p in open_elsewhere {
        if p == target || same_file(target, p).map_err(look)? {
            return Err(SaveAsRefused::OpenElsewhere(p.clone()));
        }
    }
    match check_output(target, &[this], false) {
        Ok(()) => Ok(SaveAsTarget::New),
        Err(OutputError::Exists { .. }) => Ok(SaveAsTarget::Replaces),
        Err(OutputError::NotAFile { path, what }) => Err(SaveAsRefused::NotAFile { path, what }),
        Err(OutputError::NoFolder { folder }) => Err(SaveAsRefused::NoFolder { folder }),
        Err(e) => Err(SaveAsRefused::Output(Arc::new(e))),
    }
}

/// `dir/name.edited.ext` beside the file.
pub fn suggested_copy_name(path: &Path) -> String {
    let stem = path.file_stem().map_or("copy".into(), |s| s.to_string_lossy().into_owned());
    let name = match path.extension() {
        Some(ext) => format!("{stem}.edited.{}", ext.to_string_lossy()),
        None => format!("{stem}.edited"),
    };
    path.with_file_name(name).display().to_string()
}

/// A save: the edits as they were when it was confirmed, and where they go. The pane only asks;
/// the job that writes it is [`crate::work::save`].
pub struct SaveWork {
    pub(crate) pending: crate::dump::edit_session::PendingEdits,
    pub(crate) dump: Arc<DumpFile>,
    pub target: PathBuf,
    /// How to read the written file again.
    pub read_as: ReadAs,
    /// Over the tab's own file (not a save-as).
    pub in_place: bool,
    /// Whether the tab had edits (a save of none that changes no byte needs no reading again).
    pub had_edits: bool,
}

impl SaveWork {
    /// Whether the tab must read the file again after `outcome`: not when nothing was written
    /// over its own file and it had no edits (what it shows is what is on disk).
    pub fn needs_reopen(&self, outcome: &Saved) -> bool {
        !(outcome.is_unchanged() && self.in_place && !self.had_edits)
    }
}

/// What the status bar says about a finished save of the tab showing `tab_path` to `target`.
pub fn outcome_words(tab_path: &Path, target: &Path, outcome: &Saved) -> String {
    let bak = backup_path(target);
    match outcome {
        Saved::Unchanged => format!(
            "nothing written: {} already holds exactly these bytes ({} untouched)",
            target.display(),
            bak.display()
        ),
        Saved::Written { backup: Some(b) } if target == tab_path => {
            format!("saved {} (its previous contents are in {})", target.display(), b.display())
        }
        Saved::Written { backup: Some(b) } => format!(
            "saved {} (the file that was there is kept as {}; {} is unchanged)",
            target.display(),
            b.display(),
            tab_path.display()
        ),
        Saved::Written { backup: None } => {
            format!("saved {} (a new file; {} is unchanged)", target.display(), tab_path.display())
        }
    }
}
