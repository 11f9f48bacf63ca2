//! The timeline's work: opening a timeline pane, reading its folder as a job (progress per
//! lane, cancel between lanes), and a clicked mark's frame opened in its dump and selected
//! once the file's tab is there.
//!
//! Must never: read the folder on the UI thread.

use crate::WalscopeApp;
use crate::jobs::JobOwner;
use crate::panes::PaneId;
use crate::panes::outcome::JobOutput;
use crate::panes::timeline::TimelineState;
use std::path::PathBuf;
use std::sync::Arc;
use walscope_ops::timeline::{LoadOptions, TimelineError, load};

impl WalscopeApp {
    /// Opens a timeline pane; with a folder, reads it at once. Returns its number.
    pub fn new_timeline(&mut self, folder: Option<PathBuf>) -> u64 {
        let id = self.panes.next_number();
        let mut st = TimelineState::new(id);
        let load_now = folder.is_some();
        st.folder = folder.map(|f| f.display().to_string()).unwrap_or_default();
        self.panes.insert(PaneId::Timeline(id), Box::new(st));
        self.layout.show_pane(PaneId::Timeline(id));
        if load_now {
            self.load_timeline(id);
        }
        id
    }

    /// Reads a timeline pane's folder as a job.
    pub(crate) fn load_timeline(&mut self, pane: u64) {
        let Some(st) = self.panes.get_mut::<TimelineState>(&PaneId::Timeline(pane)) else { return };
        let folder = st.folder.trim().to_string();
        if folder.is_empty() || st.loading.is_some() {
            return;
        }
        st.error = None;
        let dir = PathBuf::from(&folder);
        let label = format!("timeline of {folder}");
        let job = self.jobs.spawn_blocking(label, JobOwner::Pane(pane), move |ctx| {
            let mut progress = |done: usize, total: usize, pchannel: &str| {
                ctx.report(Some(done as f32 / total.max(1) as f32), format!("reading {pchannel}"));
                !ctx.cancel.is_cancelled()
            };
            let result = match load(&dir, &LoadOptions::default(), &mut progress) {
                Err(TimelineError::Cancelled) => return Err(crate::jobs::JobError::Cancelled),
                r => r.map(Arc::new).map_err(Arc::new),
            };
            Ok(JobOutput::Timeline { pane, result })
        });
        if let Some(st) = self.panes.get_mut::<TimelineState>(&PaneId::Timeline(pane)) {
            st.loading = Some(job);
        }
    }

    /// Opens `path` (or shows its tab) and selects `frame` once the tab is there.
    pub(crate) fn open_frame(&mut self, path: PathBuf, frame: usize) {
        let path = std::path::absolute(&path).unwrap_or(path);
        self.pending_frames.retain(|(p, _)| *p != path);
        self.pending_frames.push((path.clone(), frame));
        self.open(path);
        self.show_pending_frames();
    }

    /// Selects the frames waiting for their file's tab (called every frame; cheap when none).
    pub(crate) fn show_pending_frames(&mut self) {
        if self.pending_frames.is_empty() {
            return;
        }
        let mut left = Vec::new();
        for (path, frame) in std::mem::take(&mut self.pending_frames) {
            match self.tabs.iter().position(|t| t.path == path) {
                Some(i) => {
                    self.tabs[i].show_frame(frame);
                    self.active = i;
                    self.layout.show_pane(PaneId::File(path));
                }
                // Still opening: wait. Failed to open: its error is said; drop the wish.
                None if self.opening.contains(&path) => left.push((path, frame)),
                None => {}
            }
        }
        self.pending_frames = left;
    }
}
