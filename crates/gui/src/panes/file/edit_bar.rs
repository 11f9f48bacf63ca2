//! Unsaved edits of one file: what changed (a byte diff against the original, frame by frame),
//! undo, redo, save and save as. Ctrl+Z, Ctrl+Shift+Z and Ctrl+S work too. Save and Save as…
//! only open the confirmation ([`crate::panes::file::confirm_save`]), which shows the same byte diff and
//! writes when the operator says so.

use crate::panes::file::{FileTab, FrameChange};
use eframe::egui;

/// Bytes of context shown around a change, and changed frames listed at most.
const CONTEXT: usize = 8;
const MAX_FRAMES_SHOWN: usize = 20;
const MAX_CHANGED_SHOWN: usize = 256;

pub fn show(tab: &mut FileTab, ui: &mut egui::Ui, active: bool) {
    // Only the active file's shortcuts, and not while a text box has the keyboard (Ctrl+Z there
    // undoes typing). Shift+Z first: consume_key ignores an extra Shift.
    let keys = active && !ui.ctx().egui_wants_keyboard_input();
    let (redo, undo, save) = if keys {
        ui.input_mut(|i| {
            let redo = i.consume_key(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::Z);
            let undo = !redo && i.consume_key(egui::Modifiers::COMMAND, egui::Key::Z);
            (redo, undo, i.consume_key(egui::Modifiers::COMMAND, egui::Key::S))
        })
    } else {
        (false, false, false)
    };
    if redo {
        tab.redo();
    } else if undo {
        tab.undo();
    }
    if save {
        // With or without edits: the confirmation says what would change (perhaps nothing).
        tab.ask_save();
    }
    if !tab.session.is_dirty() && !tab.session.can_redo() {
        return;
    }
    let diff = tab.diff();
    ui.horizontal_wrapped(|ui| {
        if diff.is_empty() {
            ui.label("No unsaved edits.");
        } else {
            ui.colored_label(ui.visuals().warn_fg_color, format!("Unsaved edits: {}", summary(&diff)))
                .on_hover_text("Only these bytes (and the frames' length prefixes) change when saved.");
        }
        if ui.add_enabled(tab.can_undo(), egui::Button::new("Undo")).clicked() {
            tab.undo();
        }
        if ui.add_enabled(tab.can_redo(), egui::Button::new("Redo")).clicked() {
            tab.redo();
        }
        if tab.confirm_save.is_some() {
            ui.label("Saving: confirm or cancel in the dialog.");
        } else {
            let can_save = tab.can_save();
            let save = egui::Button::new("Save");
            let hint = "Shows what changes first; writes only when you confirm (the previous file is kept as FILE.bak)";
            if ui.add_enabled(can_save, save).on_hover_text(hint).clicked() {
                tab.ask_save();
            }
            let b = ui.add_enabled(can_save, egui::Button::new("Save as…"));
            if b.on_hover_text("Write a copy with these edits elsewhere; this file stays as it is").clicked() {
                tab.ask_save_as();
            }
        }
        if tab.saving.is_some() {
            crate::widgets::look::busy(ui);
            ui.label("saving");
        }
    });
    if diff.is_empty() {
        return;
    }
    ui.collapsing("Review changes (byte diff)", |ui| byte_diff(tab, ui, &diff));
}

/// Each edited frame's changed window in one line ("frame 0: bytes 12..14 (2 -> 3)").
pub(crate) fn summary(diff: &[FrameChange]) -> String {
    let mut parts: Vec<String> = diff
        .iter()
        .take(MAX_FRAMES_SHOWN)
        .map(|(f, (at, old, new))| format!("frame {f}: bytes {at}..{} ({old} -> {new})", at + old))
        .collect();
    if diff.len() > MAX_FRAMES_SHOWN {
        parts.push(format!("and {} more frames", diff.len() - MAX_FRAMES_SHOWN));
    }
    parts.join("; ")
}

/// Old and new bytes of each changed window, with a little context: bytes that went are red in
/// "before", bytes that came are green in "after" (a byte-level diff, so a grown length prefix
/// and a changed string show as what they are, not as one long changed run).
pub(crate) fn byte_diff(tab: &FileTab, ui: &mut egui::Ui, diff: &[FrameChange]) {
    let (old_c, new_c) = (ui.visuals().error_fg_color, egui::Color32::from_rgb(0x2e, 0xa0, 0x43));
    let weak = ui.visuals().weak_text_color();
    let mono = egui::FontId::monospace(12.0);
    // Room for the "frame N before" column; the bytes wrap in the rest.
    let width = (ui.available_width() - 140.0).max(200.0);
    for (frame, (at, old_len, new_len)) in diff.iter().take(MAX_FRAMES_SHOWN) {
        let Some(loc) = tab.dump.frame(*frame) else { continue };
        let old = tab.dump.message_bytes(&loc).1;
        let Some(new) = tab.session.message(&tab.dump, *frame) else { continue };
        let from = at.saturating_sub(CONTEXT);
        let old_w = &old[from..(at + old_len + CONTEXT).min(old.len())];
        let new_w = &new[from..(at + new_len + CONTEXT).min(new.len())];
        if old_w.len() + new_w.len() > 2 * MAX_CHANGED_SHOWN {
            ui.label(format!(
                "frame {frame}: {old_len} bytes at {at} became {new_len} bytes (too long to show byte by byte)"
            ));
            continue;
        }
        let ops = similar::capture_diff_slices(similar::Algorithm::Myers, old_w, new_w);
        let (mut before, mut after) = (egui::text::LayoutJob::default(), egui::text::LayoutJob::default());
        before.wrap.max_width = width;
        after.wrap.max_width = width;
        let (mut gone, mut came) = (0usize, 0usize);
        for op in &ops {
            let (tag, o, n) = op.as_tag_tuple();
            let changed = tag != similar::DiffTag::Equal;
            if changed {
                gone += o.len();
                came += n.len();
            }
            for b in &old_w[o] {
                let c = if changed { old_c } else { weak };
                before.append(&format!("{b:02x} "), 0.0, egui::TextFormat::simple(mono.clone(), c));
            }
            for b in &new_w[n] {
                let c = if changed { new_c } else { weak };
                after.append(&format!("{b:02x} "), 0.0, egui::TextFormat::simple(mono.clone(), c));
            }
        }
        ui.label(format!(
            "frame {frame}, message bytes from {from}: {} out, {came} in",
            walscope_core::fmt::counted(gone as u64, "byte")
        ));
        ui.horizontal_top(|ui| {
            ui.monospace(format!("frame {frame} before"));
            ui.add(egui::Label::new(before).wrap());
        });
        ui.horizontal_top(|ui| {
            ui.monospace(format!("frame {frame} after"));
            ui.add(egui::Label::new(after).wrap());
        });
        ui.separator();
    }
    if diff.len() > MAX_FRAMES_SHOWN {
        ui.label(format!("… and {} more edited frames", diff.len() - MAX_FRAMES_SHOWN));
    }
}
