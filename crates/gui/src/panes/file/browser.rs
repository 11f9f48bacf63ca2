//! The message list: a virtual table over millions of frames. Only visible rows are looked at;
//! rows not decoded yet show "…" while the row loader decodes them in the background. A damaged
//! range is a row of its own between the frames around it: ⚠ and the word "damaged" in red (amber
//! for bytes cut short), its offset, length and why. Returns the row the user selected.

use crate::dump::Problem;
use crate::dump::view::FrameStatus;
use crate::panes::file::FileTab;
use crate::panes::file::row_order::SortColumn;
use crate::panes::file::rows::RowItem;
use crate::widgets::look::Tone;
use eframe::egui;
use egui_extras::{Column, TableBuilder};

pub fn show(tab: &mut FileTab, ui: &mut egui::Ui) -> Option<RowItem> {
    // Wider than its side of the split, the list scrolls sideways: no column is cut off unseen
    // (the summary's header was, beside a wide detail).
    egui::ScrollArea::horizontal()
        .id_salt("message_list_columns")
        .auto_shrink(false)
        .show(ui, |ui| table(tab, ui))
        .inner
}

fn table(tab: &mut FileTab, ui: &mut egui::Ui) -> Option<RowItem> {
    let rows = tab.row_count();
    let wal = tab.decoder.message_type().is_some_and(|t| t.full_name().starts_with("milvus."));
    let mut clicked = None;
    // Arrow keys move the selection through the shown rows.
    if (tab.selected.is_some() || tab.selected_damaged.is_some())
        && !ui.ctx().egui_wants_keyboard_input()
        && tab.confirm_save.is_none()
    {
        let (up, down) =
            ui.input(|i| (i.key_pressed(egui::Key::ArrowUp), i.key_pressed(egui::Key::ArrowDown)));
        // Only on a key press, and without listing the rows: a million of them cost a frame.
        if down {
            clicked = tab.neighbour(1);
        } else if up {
            clicked = tab.neighbour(-1);
        }
    }
    let mut sort = None;
    let mut wanted = Vec::new();
    let list_right = ui.max_rect().right();
    // Cells must not swallow the click that selects their row.
    ui.style_mut().interaction.selectable_labels = false;
    // One line per row, however long the summary: the full text is in the tooltip.
    ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
    // Not resizable: egui_extras 0.37's resize handles swallow clicks meant for the rows.
    let mut table = TableBuilder::new(ui)
        .striped(true)
        .sense(egui::Sense::click())
        .column(Column::initial(56.0))
        .column(Column::initial(76.0))
        .column(Column::initial(50.0))
        .column(Column::initial(72.0));
    if wal {
        table = table
            .column(Column::initial(130.0))
            .column(Column::initial(110.0))
            .column(Column::initial(200.0))
            .column(Column::initial(170.0));
    }
    table = table.column(Column::remainder().at_least(160.0).clip(true));
    // Back where it was before a save read the file again.
    if let Some(y) = tab.scroll_to.take() {
        table = table.vertical_scroll_offset(y);
    }
    // A frame opened from the timeline: in the middle of the list once its row exists.
    if let Some(r) = tab.reveal.filter(|&r| r < rows) {
        table = table.scroll_to_row(r, Some(egui::Align::Center));
        tab.reveal = None;
    }
    let headers: &[&str] = if wal {
        &["#", "offset", "size", "status", "id", "type", "vchannel", "time (UTC)", "summary"]
    } else {
        &["#", "offset", "size", "status", "summary"]
    };
    let order = (tab.order.column, tab.order.descending, tab.order.is_sorting());
    let scrolled = table
        .header(20.0, |mut h| {
            for name in headers {
                h.col(|ui| {
                    // Cheap columns sort: number (= offset order) and size; the rest needs decoding.
                    let column = match *name {
                        "#" | "offset" => Some(SortColumn::Number),
                        "size" => Some(SortColumn::Size),
                        _ => None,
                    };
                    match column {
                        Some(c) => {
                            let mark = match order {
                                _ if *name == "offset" => "",
                                (o, _, true) if o == c => " (sorting)",
                                (o, false, _) if o == c => " (asc)",
                                (o, true, _) if o == c => " (desc)",
                                _ => "",
                            };
                            if ui
                                .button(format!("{name}{mark}"))
                                .on_hover_text(format!("Sort by {name}"))
                                .clicked()
                            {
                                sort = Some(c);
                            }
                        }
                        None => {
                            ui.strong(*name);
                        }
                    }
                });
            }
        })
        .body(|body| {
            body.rows(18.0, rows, |mut row| {
                let Some(item) = tab.items(row.index()..row.index() + 1).pop() else { return };
                row.set_selected(tab.is_selected(&item));
                let frame = match item {
                    RowItem::Frame(f) => f,
                    RowItem::Damaged(p) => {
                        damaged_row(&mut row, &p, wal, list_right);
                        if row.response().clicked() {
                            clicked = Some(RowItem::Damaged(p));
                        }
                        return;
                    }
                };
                let view = tab.decoder.cached(frame);
                if view.is_none() {
                    wanted.push(frame);
                }
                row.col(|ui| {
                    ui.monospace(frame.to_string());
                });
                let loc = tab.dump.frame(frame);
                row.col(|ui| {
                    ui.monospace(loc.map_or(String::new(), |l| l.offset.to_string()));
                });
                row.col(|ui| {
                    ui.monospace(loc.map_or(String::new(), |l| l.header.total().to_string()));
                });
                let edited = tab.session.is_edited(frame);
                row.col(|ui| match view.as_ref().map(|v| &v.status) {
                    // The row's other columns show the file as it is on disk until saved.
                    _ if edited => {
                        ui.colored_label(ui.visuals().warn_fg_color, "edited")
                            .on_hover_text("unsaved edits; the other columns show the file as saved");
                    }
                    None => {
                        ui.label("...");
                    }
                    Some(FrameStatus::Ok) => {
                        ui.label("ok");
                    }
                    Some(FrameStatus::Encrypted) => {
                        ui.label("encrypted")
                            .on_hover_text("the payload is ciphertext (_ch); this is not damage");
                    }
                    Some(FrameStatus::Warning(w)) => {
                        ui.colored_label(ui.visuals().warn_fg_color, "warning").on_hover_text(w);
                    }
                    Some(FrameStatus::Undecodable { offset, reason }) => {
                        ui.colored_label(ui.visuals().error_fg_color, format!("BAD @{offset}"))
                            .on_hover_text(reason);
                    }
                });
                if wal {
                    let w = view.as_ref().and_then(|v| v.wal.clone()).unwrap_or_default();
                    for text in [w.message_id, w.type_name, w.vchannel, w.time] {
                        row.col(|ui| {
                            ui.label(&text).on_hover_text(&text);
                        });
                    }
                }
                row.col(|ui| {
                    let text = view.as_ref().map_or("...", |v| v.summary.as_str());
                    ui.label(text).on_hover_text(text);
                });
                let r = row.response();
                if r.clicked() {
                    clicked = Some(RowItem::Frame(frame));
                }
                r.context_menu(|ui| {
                    if ui.button("Compare with…").clicked() {
                        let from =
                            crate::panes::diff::CompareFrom::Frame { path: tab.path.clone(), index: frame };
                        tab.commands.send(crate::panes::command::AppCommand::CompareWith(from));
                        ui.close();
                    }
                });
            });
        });
    tab.scroll_y = scrolled.state.clamped_offset().y;
    if !wanted.is_empty() {
        tab.rows.request(wanted);
    }
    if let Some(c) = sort
        && let Err(e) = tab.sort_by(c)
    {
        tab.filter_error = Some(e.to_string());
    }
    clicked
}

/// A damaged range's row: no frame number (it is no frame), its offset and length, ⚠ and a word
/// (whatever the colour) in the tone of what happened (red: bytes that are no frame; amber: a
/// frame cut short), and why. In a WAL dump the why runs across the id, type, vchannel and time
/// columns, which a damaged range has none of, so it is read without scrolling to the summary.
fn damaged_row(row: &mut egui_extras::TableRow<'_, '_>, p: &Problem, wal: bool, list_right: f32) {
    let (tone, word) = if p.truncated { (Tone::Warn, "cut short") } else { (Tone::Bad, "damaged") };
    row.col(|ui| {
        ui.colored_label(tone.color(ui), "⚠");
    });
    row.col(|ui| {
        ui.monospace(p.offset.to_string());
    });
    row.col(|ui| {
        ui.monospace(p.len.to_string());
    });
    row.col(|ui| {
        ui.colored_label(tone.color(ui), format!("⚠ {word}"))
            .on_hover_text("bytes no frame covers: select the row to see them");
    });
    // Painted, not laid out (a cell's content would widen its column), from `left`, `width`
    // wide, in the last of the cells it covers: each cell paints its background (a selected
    // row's) over whatever the cells before it drew.
    let why = |ui: &mut egui::Ui, left: f32, width: f32| {
        let cell = ui.max_rect();
        let font = egui::TextStyle::Body.resolve(ui.style());
        let mut job = egui::text::LayoutJob::simple_singleline(p.reason.clone(), font, tone.color(ui));
        job.wrap = egui::text::TextWrapping::truncate_at_width(width);
        let galley = ui.painter().layout_job(job);
        let at = egui::pos2(left, cell.center().y - galley.size().y / 2.0);
        // Never past the list (the detail is there) nor above or below what the list shows.
        let visible = ui.clip_rect();
        let span = egui::Rect::from_x_y_ranges(left..=(left + width).min(list_right), visible.y_range());
        // Its own clip (`with_clip_rect` would keep the cell's).
        let mut painter = ui.painter().clone();
        painter.set_clip_rect(span);
        painter.galley(at, galley, tone.color(ui));
        // Read by screen readers (and tests) as the row's text; the whole of it on hover.
        let r = ui.interact(
            span.intersect(cell.expand2(egui::vec2(width, 0.0))),
            ui.scope_id().with("why"),
            egui::Sense::hover(),
        );
        r.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Label, true, &p.reason));
        r.on_hover_text(&p.reason);
    };
    if wal {
        let mut left = 0.0;
        row.col(|ui| left = ui.max_rect().left());
        row.col(|_| {});
        row.col(|_| {});
        row.col(|ui| {
            let width = ui.max_rect().right() - left;
            why(ui, left, width);
        });
        row.col(|_| {});
    } else {
        row.col(|ui| {
            let cell = ui.max_rect();
            why(ui, cell.left(), cell.width());
        });
    }
}
