//! The save confirmation: Ctrl+S, Edit > Save and the edit bar's Save open it. It shows the
//! byte diff (the same view as "Review changes"), the file that will be replaced and where its
//! current contents go (FILE.bak), and writes only when "Save" is clicked here. "Save as…"
//! writes a copy elsewhere: onto an existing file it asks again (that file is then kept as its
//! own .bak); onto this file, or another name for it, it refuses in words. A save that would
//! change no byte says so before and after.
//!
//! Must never: write anything itself; it only tells the tab what the operator confirmed.

use crate::atomic::backup_path;
use crate::panes::file::FileTab;
use crate::panes::file::edit_bar;
use crate::panes::file::save::{SaveAsTarget, SaveAsView, check_save_as};
use eframe::egui;
use std::path::PathBuf;

/// What the operator clicked.
enum Choice {
    Save,
    ShowSaveAs,
    Back,
    SaveCopy(PathBuf),
    Replace(PathBuf),
    /// Typed another name after being asked about an existing file.
    Retype,
    Cancel,
}

/// Shows the confirmation of the first of `tabs` that asked for one (`tabs`: every open file;
/// the others may not be written over by a "Save as").
pub fn show(tabs: &mut [FileTab], ctx: &egui::Context) {
    let Some(i) = tabs.iter().position(|t| t.confirm_save.is_some()) else { return };
    let others: Vec<PathBuf> =
        tabs.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, t)| t.path.clone()).collect();
    let tab = &mut tabs[i];
    let diff = tab.diff();
    let Some(mut ask) = tab.confirm_save.take() else { return };
    let path = tab.path.clone();
    let bak = backup_path(&path);
    let mut choice = None;
    egui::Modal::new(egui::Id::unique("confirm_save")).show(ctx, |ui| {
        let width = (ctx.content_rect().width() - 80.0).clamp(320.0, 960.0);
        ui.set_width(width);
        match ask.save_as.as_mut() {
            None if diff.is_empty() => {
                ui.heading(format!("Save {}?", tab.title()));
            }
            None => {
                ui.heading(format!("Save {}?", tab.title()));
                ui.label(format!(
                    "Replaces {} (written beside it, then renamed over it in one step).",
                    path.display()
                ));
                let kept = if ask.backup_exists {
                    format!(
                        "Its current contents are kept as {} (the backup there now is replaced).",
                        bak.display()
                    )
                } else {
                    format!("Its current contents are kept as {}.", bak.display())
                };
                ui.label(kept);
            }
            Some(view) => {
                ui.heading(format!("Save a copy of {} with these edits", tab.title()));
                ui.horizontal(|ui| {
                    let l = ui.label("Save as:");
                    let r = ui.add(egui::TextEdit::singleline(&mut view.text).desired_width(width - 80.0));
                    if r.labelled_by(l.id).changed() {
                        view.error = None;
                        if view.replaces.is_some() {
                            choice = Some(Choice::Retype);
                        }
                    }
                });
                ui.label(format!("{} stays as it is; the tab then shows the copy.", path.display()));
            }
        }
        ui.separator();
        if diff.is_empty() {
            let what = match ask.save_as {
                None => format!(
                    "No byte of {} would change: Save writes nothing, and {} stays as it is.",
                    path.display(),
                    bak.display()
                ),
                Some(_) => "No edits: the copy holds the file as it is.".to_string(),
            };
            ui.strong(what);
            ui.separator();
        } else {
            ui.label(format!("What changes: {}", edit_bar::summary(&diff)));
            // The diff ends each frame with a separator.
            egui::ScrollArea::vertical()
                .max_height((ctx.content_rect().height() * 0.45).max(120.0))
                .auto_shrink([false, true])
                .show(ui, |ui| edit_bar::byte_diff(tab, ui, &diff));
        }
        match ask.save_as.as_ref() {
            None => {
                ui.horizontal(|ui| {
                    if ui.button("Save").clicked() {
                        choice = Some(Choice::Save);
                    }
                    if ui.button("Save as…").clicked() {
                        choice = Some(Choice::ShowSaveAs);
                    }
                    if ui.button("Cancel").clicked() {
                        choice = Some(Choice::Cancel);
                    }
                });
            }
            Some(SaveAsView { replaces: Some(existing), replaces_backup, .. }) => {
                let old_bak = if *replaces_backup { " (the backup there now is replaced)" } else { "" };
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    format!(
                        "{} already exists. Replace it? Its current contents are kept as {}{old_bak}.",
                        existing.display(),
                        backup_path(existing).display()
                    ),
                );
                ui.horizontal(|ui| {
                    if ui.button("Replace it").clicked() {
                        choice = Some(Choice::Replace(existing.clone()));
                    }
                    if ui.button("Choose another name").clicked() {
                        choice = Some(Choice::Retype);
                    }
                    if ui.button("Cancel").clicked() {
                        choice = Some(Choice::Cancel);
                    }
                });
            }
            Some(view) => {
                if let Some(e) = &view.error {
                    ui.colored_label(ui.visuals().error_fg_color, format!("Not saved: {e}"));
                }
                ui.horizontal(|ui| {
                    if ui.button("Save copy").clicked() {
                        choice = Some(Choice::SaveCopy(PathBuf::from(view.text.trim())));
                    }
                    if ui.button("Back").clicked() {
                        choice = Some(Choice::Back);
                    }
                    if ui.button("Cancel").clicked() {
                        choice = Some(Choice::Cancel);
                    }
                });
            }
        }
        if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
            choice = Some(Choice::Cancel);
        }
    });
    match choice {
        None => tab.confirm_save = Some(ask),
        Some(Choice::Cancel) => {}
        Some(Choice::Save) => tab.save_confirmed(),
        Some(Choice::ShowSaveAs) => {
            tab.confirm_save = Some(ask);
            tab.ask_save_as();
        }
        Some(Choice::Back) => {
            ask.save_as = None;
            tab.confirm_save = Some(ask);
        }
        Some(Choice::Retype) => {
            if let Some(v) = ask.save_as.as_mut() {
                v.replaces = None;
            }
            tab.confirm_save = Some(ask);
        }
        Some(Choice::SaveCopy(target)) => match check_save_as(&path, &target, &others) {
            Ok(SaveAsTarget::New) => tab.save_as_confirmed(target),
            Ok(SaveAsTarget::Replaces) => {
                if let Some(v) = ask.save_as.as_mut() {
                    v.replaces_backup = backup_path(&target).exists();
                    v.replaces = Some(target);
                }
                tab.confirm_save = Some(ask);
            }
            Err(e) => {
                if let Some(v) = ask.save_as.as_mut() {
                    v.error = Some(e);
                }
                tab.confirm_save = Some(ask);
            }
        },
        // Looked at again: the file may have become something else while the question showed.
        Some(Choice::Replace(target)) => match check_save_as(&path, &target, &others) {
            Ok(_) => tab.save_as_confirmed(target),
            Err(e) => {
                if let Some(v) = ask.save_as.as_mut() {
                    v.replaces = None;
                    v.error = Some(e);
                }
                tab.confirm_save = Some(ask);
            }
        },
    }
}
