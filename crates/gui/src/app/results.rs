//! The way back: each finished job's typed result goes to its owner once per frame, before
//! drawing: a file opened or saved to the file list, schemas to the pool and the Schemas pane,
//! profiles to the Connections pane, anything a pane started to that pane ([`crate::panes::Pane::apply`],
//! by `JobOwner::Pane`); every ended job is remembered for the Jobs pane.
//!
//! Must never: wait, or tell jobs apart by their labels (the owner says where a result goes).

use crate::WalscopeApp;
use crate::jobs::JobOwner;
use crate::panes::JobEnd;
use crate::panes::file::FileTab;
use crate::panes::outcome::{JobError, JobOutput, Notice};
use std::path::PathBuf;
use std::sync::Arc;

impl WalscopeApp {
    /// Takes in finished jobs and applies their results. Never waits.
    pub fn take_results(&mut self) {
        for f in self.jobs.finished() {
            // A listing of the open dialog is a glance at a folder, not work to look back on.
            if let (JobOwner::OpenDialog, Ok(JobOutput::Completions { .. })) = (&f.owner, &f.result) {
                self.open_dialog_result(f.result);
                continue;
            }
            let how = match &f.result {
                Ok(JobOutput::Done(t)) if !t.is_empty() => JobEnd::Done(Some(t.clone())),
                Ok(JobOutput::TaskChanged(c)) => JobEnd::Done(Some(crate::panes::tasks::done_words(c))),
                Ok(_) => JobEnd::Done(None),
                Err(JobError::Cancelled) => JobEnd::Stopped,
                Err(e) => JobEnd::Failed(e.to_string()),
            };
            self.ended_jobs.push(crate::panes::EndedJob { id: f.id, label: f.label.clone(), how });
            if self.ended_jobs.len() > 200 {
                self.ended_jobs.remove(0);
            }
            match (f.owner, f.result) {
                (JobOwner::File(path), Ok(JobOutput::Opened { mut tab, .. })) => {
                    self.opening.retain(|p| *p != path);
                    self.open_dialog.opened(&path);
                    self.recent.push(path.clone());
                    self.watch_indexing(&tab);
                    match self.tabs.iter().position(|t| t.path == path) {
                        Some(i) => self.active = i,
                        None => {
                            tab.commands = self.sender();
                            self.tabs.push(*tab);
                            self.active = self.tabs.len() - 1;
                        }
                    }
                }
                (JobOwner::File(path), Ok(JobOutput::TranscriptFile { doc, .. })) => {
                    self.opening.retain(|p| *p != path);
                    self.open_dialog.opened(&path);
                    self.recent.push(path.clone());
                    self.transcript_opened(path, *doc);
                }
                (_, Ok(JobOutput::Opened { path, mut tab })) => {
                    // The demo's own copy: its path was not known when the job started.
                    if !self.tabs.iter().any(|t| t.path == path) {
                        self.recent.push(path.clone());
                        self.watch_indexing(&tab);
                        tab.commands = self.sender();
                        self.tabs.push(*tab);
                        self.active = self.tabs.len() - 1;
                    }
                }
                (_, Ok(JobOutput::ChunkGroup { tab, view })) => {
                    if let Some(t) = self.tabs.iter_mut().find(|t| t.path == tab) {
                        t.take_chunk_group(view);
                    }
                }
                (_, Ok(JobOutput::SizeOrder { tab, order })) => {
                    if let Some(t) = self.tabs.iter_mut().find(|t| t.path == tab) {
                        t.order.take(*order);
                    }
                }
                (_, Ok(JobOutput::Saved { tab, target, outcome, reopened })) => {
                    self.saved(tab, target, outcome, reopened)
                }
                (JobOwner::Schemas, Ok(JobOutput::Schemas { set, summary })) => {
                    self.schemas_state.last_load =
                        Some(Ok(crate::panes::schemas::loaded(&self.schemas, &set, &summary)));
                    self.schemas = Arc::new(*set);
                }
                (JobOwner::Schemas, Err(e)) => self.schemas_state.last_load = Some(Err(e.into())),
                (JobOwner::Connections, r) => self.connections.take(r),
                (JobOwner::OpenDialog, r) => self.open_dialog_result(r),
                (JobOwner::Pane(n), r) => {
                    let watching = matches!(r, Ok(JobOutput::Watching(_)));
                    let profiles = self.connections.profiles();
                    let id = match n {
                        crate::panes::tasks::TASKS_DASHBOARD => Some(crate::panes::PaneId::Tasks),
                        n => self.panes.ids().into_iter().find(|p| p.number() == Some(n)),
                    };
                    if let Some(id) = id
                        && let (view, Some(p), _) = self.view_and_pane(&id, &profiles)
                    {
                        p.apply(f.id, &f.label, r, &view);
                    }
                    if watching {
                        self.watching(n);
                    }
                }
                (_, Ok(JobOutput::Done(text))) => {
                    if !text.is_empty() {
                        self.notice = Some(Notice::info(text));
                    }
                }
                (owner, Err(JobError::Cancelled)) => {
                    if let JobOwner::File(p) = owner {
                        self.opening.retain(|x| *x != p);
                        self.open_dialog.failed(&p, "stopped".into());
                        self.tab_job_ended(&p);
                    }
                }
                (owner, Err(e)) => {
                    if let JobOwner::File(p) = &owner {
                        self.opening.retain(|x| x != p);
                        self.tab_job_ended(p);
                        if self.open_failed(p, &e) {
                            continue;
                        }
                    }
                    self.notice = Some(Notice::error(format!("{}: {e}", f.label)));
                }
                // A result whose owner is gone (its pane was closed): the job did its work.
                (_, Ok(_)) => self.notice = Some(Notice::info(format!("{}: done", f.label))),
            }
        }
    }

    /// Opening `path` failed: a folder shows the open dialog inside it (whatever route named
    /// it: a drop, the start page, the command line); a file opened from the dialog has the
    /// words said there. True when the dialog said it (the status bar then does not).
    fn open_failed(&mut self, path: &std::path::Path, e: &JobError) -> bool {
        if let JobError::Input(walscope_core::input::InputError::Folder { path: folder }) = e {
            self.show_open_dialog(Some(folder.clone()));
            self.open_dialog.error = Some(e.to_string());
            return true;
        }
        self.open_dialog.failed(path, e.to_string())
    }

    /// A file's save or sort job ended without its result: the tab may edit again.
    fn tab_job_ended(&mut self, path: &std::path::Path) {
        if let Some(t) = self.tabs.iter_mut().find(|t| t.path == path) {
            t.saving = None;
        }
    }

    /// Shows the new file's indexing in the status bar, with a cancel.
    fn watch_indexing(&mut self, tab: &FileTab) {
        let dump = tab.dump.clone();
        if dump.index().is_done() {
            return;
        }
        let (d, stop) = (dump.clone(), dump.clone());
        let probe = Box::new(move || {
            let idx = d.index();
            let fraction = idx.scanned_bytes() as f32 / d.len().max(1) as f32;
            let progress = crate::jobs::JobProgress {
                fraction: Some(fraction),
                text: format!("indexing {} frames", d.frame_count()),
            };
            (progress, idx.is_done())
        });
        let label = format!("indexing {}", tab.title());
        let owner = JobOwner::File(tab.path.clone());
        let every = crate::jobs::Pace::Working(std::time::Duration::from_millis(100));
        self.jobs.watch(label, owner, every, probe, Box::new(move || stop.index().cancel()));
    }

    /// A save finished: the status bar says what it did (written, with the backup; or nothing,
    /// when no byte changed). The tab is replaced by the file read again from disk (after a
    /// save-as, by the copy; the original was not touched), keeping its filter, selection,
    /// order and scroll.
    fn saved(
        &mut self,
        tab_path: PathBuf,
        target: PathBuf,
        outcome: crate::atomic::Saved,
        reopened: Option<Result<Box<FileTab>, JobError>>,
    ) {
        let words = crate::panes::file::save::outcome_words(&tab_path, &target, &outcome);
        self.notice = Some(Notice::info(&words));
        let Some(i) = self.tabs.iter().position(|t| t.path == tab_path) else { return };
        self.tabs[i].saving = None;
        match reopened {
            None => {}
            Some(Ok(mut tab)) => {
                tab.keep_view_of(&self.tabs[i]);
                if target != tab_path {
                    self.recent.push(target.clone());
                }
                self.watch_indexing(&tab);
                tab.commands = self.sender();
                self.tabs[i] = *tab;
            }
            Some(Err(e)) => {
                // Written, but not readable as before: the old view would show what is gone.
                self.discard_tab(i);
                self.notice = Some(Notice::error(format!("{words}; reading it again failed: {e}")));
            }
        }
    }
}
