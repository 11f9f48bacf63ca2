//! One open file: what it is, the filter bar, the message list and the selected message.

use super::{browser, detail_view};
use crate::dump::Framing;
use crate::panes::command::{AppCommand, CommandSender};
use crate::panes::file::FileTab;
use eframe::egui;

/// Draws the tab. Only the `active` file takes the keyboard shortcuts (several may be on
/// screen side by side), and not while its save confirmation shows (Esc there cancels the
/// save; it must not also drop the selection). Reading the file another way ("Reopen") and
/// "Send..." (this message into a new composer) go out through `tx`. `detail_width` is the
/// list/detail divider as the operator dragged it (None: never), shared by every file tab and
/// remembered with the layout.
pub fn show(
    tab: &mut FileTab,
    ui: &mut egui::Ui,
    active: bool,
    tx: &CommandSender,
    detail_width: &mut Option<f32>,
) {
    // The tile's own rectangle, taken before a wide row (the filter bar) can widen `ui`: the
    // split must stay inside what is on screen.
    let tile = ui.max_rect();
    let active = active && tab.confirm_save.is_none();
    // After a save: the selection and scroll come back once the file is indexed that far.
    tab.poll_restore();
    let mut reopen = None;
    let mut send = None;
    let d = &tab.dump;
    let type_name = tab.decoder.message_type().map_or("(no type)".to_string(), |t| t.full_name().to_string());
    ui.horizontal_wrapped(|ui| {
        ui.label(format!(
            "{} | {} | {} framing ({:.0}% sure) | {} | {}",
            d.encoding.name(),
            walscope_core::fmt::bytes_exact(d.len()),
            d.framing,
            d.detection.confidence * 100.0,
            type_name,
            walscope_core::fmt::counted(d.frame_count() as u64, "frame")
        ))
        .on_hover_text(format!("{}\n{}", d.detection.reason, tab.why_type));
        let b = crate::widgets::look::named_button(
            ui,
            "Compare with…",
            &format!("Compare {} with…", tab.title()),
        )
        .on_hover_text("compare this dump, frame by frame, with another dump");
        if b.clicked() {
            tx.send(AppCommand::CompareWith(crate::panes::diff::CompareFrom::File(tab.path.clone())));
        }
        let problems = d.problems();
        if !problems.is_empty() {
            let text: Vec<String> = problems.iter().map(|p| p.reason.clone()).collect();
            // The rows of the list are the main way to them; this says how many there are.
            let n = walscope_core::fmt::counted(problems.len() as u64, "damaged range");
            ui.colored_label(ui.visuals().warn_fg_color, format!("⚠ {n} (rows in the list)"))
                .on_hover_text(text.join("\n"));
        }
    });
    if let Some(change) = tab.disk_change() {
        ui.horizontal_wrapped(|ui| {
            ui.colored_label(ui.visuals().error_fg_color, format!("Changed on disk: {change}"));
            let dirty = tab.session.is_dirty();
            let b = ui.add_enabled(!dirty, egui::Button::new("Reopen the file"));
            if b.on_disabled_hover_text("Save as, or undo the edits first").clicked() {
                reopen = Some(tab.read_as.clone());
            }
        });
    }
    // A manifest that lies or was set aside, in its own words (not by colour alone).
    if let Some(check) = tab.manifest.get(&tab.dump) {
        for line in check.lines() {
            ui.colored_label(ui.visuals().warn_fg_color, format!("manifest: {line}"));
        }
    }
    ui.collapsing("Read as...", |ui| {
        ui.horizontal(|ui| {
            ui.label("Framing:");
            let current = tab.read_as.framing.map_or("detect".to_string(), |f| f.name().to_string());
            egui::ComboBox::from_id_salt("framing").selected_text(current).show_ui(ui, |ui| {
                ui.selectable_value(&mut tab.read_as.framing, None, "detect");
                for f in Framing::ALL {
                    ui.selectable_value(&mut tab.read_as.framing, Some(f), f.name());
                }
            });
            let l = ui.label("Type:");
            let t = tab.read_as.type_name.get_or_insert_with(String::new);
            ui.add(egui::TextEdit::singleline(t).hint_text("detect").desired_width(300.0)).labelled_by(l.id);
            // Reopening drops unsaved edits: not while there are any.
            let dirty = tab.session.is_dirty();
            let b = ui.add_enabled(!dirty, egui::Button::new("Reopen"));
            if b.on_disabled_hover_text("Save or undo the edits first").clicked() {
                reopen = Some(tab.read_as.clone());
            }
        });
    });
    // Ctrl+F: to the filter. Esc: stop the running filter scan, else drop the selection.
    let (find, escape) = if active {
        ui.input_mut(|i| {
            (i.consume_key(egui::Modifiers::COMMAND, egui::Key::F), i.key_pressed(egui::Key::Escape))
        })
    } else {
        (false, false)
    };
    if escape && !ui.ctx().egui_wants_keyboard_input() {
        match &tab.scan {
            Some(s) if !s.is_done() => s.cancel(),
            _ => {
                tab.selected = None;
                tab.selected_damaged = None;
                tab.detail = None;
            }
        }
    }
    ui.horizontal(|ui| {
        let label = ui.label("Filter:");
        let r = ui
            .add(
                egui::TextEdit::singleline(&mut tab.filter_text)
                    .hint_text("type=Insert,vchannel=dml_0,tt=2026-11-30 00:12:00..,status=bad")
                    .desired_width(520.0),
            )
            .labelled_by(label.id)
            .on_hover_text("Ctrl+F to get here; Enter applies; Esc stops a running scan");
        if find {
            r.request_focus();
        }
        let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if ui.button("Apply filter").clicked() || enter {
            tab.apply_filter();
        }
        if tab.scan.is_some() && ui.button("Clear filter").clicked() {
            tab.filter_text.clear();
            tab.apply_filter();
        }
        if let Some(s) = &tab.scan {
            let stopped = if s.is_cancelled() { " (stopped)" } else { "" };
            // The damaged ranges the filter keeps (status=bad) are rows too: counted apart.
            let damaged = tab.list().damaged().len() as u64;
            let also = if damaged > 0 {
                format!(", and {}", walscope_core::fmt::counted(damaged, "damaged range"))
            } else {
                String::new()
            };
            // Chunks are frames, not messages: a message split in three is one message.
            let (chunks, messages) = s.chunk_counts();
            let logical = if chunks > 0 {
                format!(
                    " ({}: {} of {})",
                    walscope_core::fmt::counted((s.match_count() - chunks + messages) as u64, "message"),
                    walscope_core::fmt::counted(chunks as u64, "chunk"),
                    walscope_core::fmt::counted(messages as u64, "message")
                )
            } else {
                String::new()
            };
            ui.label(format!(
                "{} matching{logical} of {} scanned{also}{stopped}",
                walscope_core::fmt::counted(s.match_count() as u64, "frame"),
                walscope_core::fmt::count(s.scanned() as u64)
            ));
        }
    });
    if let Some(e) = &tab.filter_error {
        ui.colored_label(ui.visuals().error_fg_color, format!("filter: {e}"));
    }
    crate::panes::file::edit_bar::show(tab, ui, active);
    // The list keeps at least 40% of the width; the detail keeps the width it was dragged to,
    // whatever it shows (the divider never follows the content, nor an Esc that empties it).
    let bounds = egui::Rect::from_min_max(egui::pos2(tile.min.x, ui.cursor().min.y), tile.max);
    let mut picked = None;
    crate::widgets::split::left_right(
        ui,
        ui.scope_id().with("list_detail"),
        bounds,
        detail_width,
        tab,
        |ui, tab| {
            if !list_empty_state(tab, ui) {
                picked = browser::show(tab, ui);
            }
        },
        |ui, tab| detail(tab, ui, &mut send),
    );
    if let Some(item) = picked {
        tab.select_item(item);
    }
    if let Some(read_as) = reopen {
        tx.send(AppCommand::Reopen(tab.path.clone(), read_as));
    }
    if let Some((type_name, bytes)) = send {
        tx.send(AppCommand::SendMessage { type_name, bytes });
    }
}

/// The right side: the selected message, or what to do to see one.
fn detail(tab: &mut FileTab, ui: &mut egui::Ui, send: &mut Option<(String, Vec<u8>)>) {
    match tab.detail.as_mut() {
        Some(detail) => {
            let framing = if tab.dump.framing == crate::dump::Framing::Single {
                "single"
            } else {
                tab.dump.framing.name()
            };
            let root = tab.decoder.message_type().cloned();
            ui.horizontal(|ui| {
                if let Some(t) = &root {
                    let b = ui.button("Send...").on_hover_text(
                        "open this message, exactly as shown (with its edits), in a request composer with a method that takes it",
                    );
                    if b.clicked() {
                        *send = Some((t.full_name().to_string(), detail.bytes.clone()));
                    }
                }
                let b = crate::widgets::look::named_button(ui, "Compare with…", "Compare this message with…")
                    .on_hover_text(
                    "compare this message, as shown (with its edits), with the frame as saved, another frame or a message file",
                );
                if b.clicked() {
                    let from = crate::panes::diff::CompareFrom::Frame { path: tab.path.clone(), index: detail.index };
                    tab.commands.send(AppCommand::CompareWith(from));
                }
            });
            if let Some(req) = detail_view::show(detail, ui, (&tab.path, framing), root.as_ref()) {
                let i = detail.index;
                tab.request(i, req);
            }
        }
        None => match (&tab.selected_damaged, tab.selected.and_then(|i| tab.unreadable(i))) {
            (Some(p), _) => damaged_detail(tab, p, ui),
            (None, Some(why)) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("Unreadable: {why}"));
            }
            (None, None) => crate::widgets::look::empty_state(
                ui,
                "No message selected.",
                "Select a message to see its fields, bytes and JSON.",
            ),
        },
    }
}

/// A selected damaged range: where it is, why no frame could be read there, and its bytes in the
/// hex view (there is no tree: nothing decodes).
fn damaged_detail(tab: &FileTab, p: &crate::dump::Problem, ui: &mut egui::Ui) {
    use crate::widgets::look::Tone;
    let tone = if p.truncated { Tone::Warn } else { Tone::Bad };
    let end = p.offset + p.len;
    ui.colored_label(
        tone.color(ui),
        egui::RichText::new(format!(
            "⚠ Damaged range: bytes {}..{end} ({})",
            p.offset,
            walscope_core::fmt::bytes_exact(p.len)
        ))
        .strong(),
    );
    ui.add(egui::Label::new(&p.reason).wrap());
    ui.weak("No frame could be read here, so there is no tree: these are its bytes as they are in the file.");
    ui.separator();
    let bytes = tab.damaged_bytes(p);
    crate::widgets::hex::show(ui, bytes, p.offset, None);
}

/// Where the list would be empty, says why and what to do instead of drawing an empty table: a
/// filter with no match (clear it), or a dump with no frames. Returns whether it said so.
fn list_empty_state(tab: &mut FileTab, ui: &mut egui::Ui) -> bool {
    use crate::widgets::look::{empty_state, secondary};
    if tab.row_count() > 0 {
        return false;
    }
    match &tab.scan {
        Some(s) if s.is_done() => {
            let filter = tab.filter_text.trim().to_string();
            empty_state(
                ui,
                &format!("No message matches `{filter}`"),
                &format!(
                    "{} scanned. Clear the filter to see every message, or change it (Enter applies).",
                    walscope_core::fmt::counted(s.scanned() as u64, "frame")
                ),
            );
            if secondary(ui, "Clear the filter").clicked() {
                tab.filter_text.clear();
                tab.apply_filter();
            }
            true
        }
        None if tab.dump.index().is_done() => {
            let framing = tab.dump.framing;
            empty_state(
                ui,
                "This dump has no frames",
                &format!(
                    "{} read as {framing} framing, and no frame was found in them. If it holds frames of another framing, choose it under \"Read as...\" and reopen.",
                    walscope_core::fmt::bytes_exact(tab.dump.len())
                ),
            );
            true
        }
        _ => false,
    }
}
