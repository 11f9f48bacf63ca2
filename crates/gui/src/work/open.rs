//! The app's side of the open dialog ([`crate::shell::open_dialog`]): showing it where the
//! operator most likely looks next, listing what is typed, opening what was chosen (its result
//! goes back to the dialog) and the desktop's own dialog, each read or shown in a job.
//!
//! Must never: read a folder or show the desktop's dialog on the UI thread (a folder on a hung
//! mount blocks; the desktop's dialog blocks until closed).

use crate::WalscopeApp;
use crate::jobs::JobOwner;
use crate::panes::outcome::JobOutput;
use std::path::{Path, PathBuf};

impl WalscopeApp {
    /// Shows the open dialog in `folder`, else in the folder of the file in front, of the last
    /// file opened, or the working folder.
    pub fn show_open_dialog(&mut self, folder: Option<PathBuf>) {
        let cwd = std::env::current_dir().unwrap_or_default();
        let near = |p: &Path| p.parent().map(Path::to_path_buf);
        let folder = folder
            .or_else(|| self.tabs.get(self.active).and_then(|t| near(&t.path)))
            .or_else(|| self.recent.paths().first().and_then(|p| near(p)))
            .unwrap_or_else(|| cwd.clone());
        let mut text = folder.display().to_string();
        if !text.ends_with(std::path::MAIN_SEPARATOR) {
            text.push(std::path::MAIN_SEPARATOR);
        }
        self.open_dialog.show_at(text, cwd);
    }

    /// Lists the folders and files `text` names, for the open dialog.
    pub(crate) fn complete_path(&mut self, text: String, cwd: PathBuf, generation: u64) {
        let label = format!("listing {text}");
        self.jobs.spawn_blocking(label, JobOwner::OpenDialog, move |_| {
            let completions = crate::path_complete::complete(&text, &cwd);
            Ok(JobOutput::Completions { generation, completions })
        });
    }

    /// Opens a file chosen in the open dialog; the dialog waits for it, then closes or says why
    /// it did not open.
    pub(crate) fn open_from_dialog(&mut self, path: PathBuf) {
        let path = std::path::absolute(&path).unwrap_or(path);
        if self.tabs.iter().any(|t| t.path == path) {
            self.open_dialog.close();
        } else {
            self.open_dialog.waiting = Some(path.clone());
        }
        self.open(path);
    }

    /// Shows the desktop's file dialog off the UI thread (it blocks while open); the chosen
    /// file opens from the open dialog, and why no dialog showed is said there.
    pub fn pick_file(&mut self) {
        let Some(pick) = self.desktop_dialog.clone() else {
            let none = Err(crate::desktop_dialog::DesktopDialogError::NoDisplay);
            self.open_dialog.desktop_ended(&none);
            return;
        };
        self.jobs.spawn_blocking("the desktop's file dialog", JobOwner::OpenDialog, move |_| {
            Ok(JobOutput::DesktopPicked(pick()))
        });
    }

    /// What the open dialog's jobs found.
    pub(crate) fn open_dialog_result(&mut self, result: crate::panes::outcome::JobResult) {
        match result {
            Ok(JobOutput::Completions { generation, completions }) => {
                self.open_dialog.take_completions(generation, completions);
            }
            Ok(JobOutput::DesktopPicked(picked)) => {
                self.open_dialog.desktop_ended(&picked);
                if let Ok(Some(path)) = picked {
                    self.open_from_dialog(path);
                }
            }
            Ok(_) => {}
            Err(e) => {
                self.open_dialog.desktop_running = false;
                self.open_dialog.error = Some(e.to_string());
            }
        }
    }
}
