//! A hex view: file offsets, 16 bytes a row, an ASCII column, a highlighted range, and clicks
//! that report which byte was hit. Virtual: only visible rows are laid out.

use crate::wire::Span;
use eframe::egui;

const PER_ROW: usize = 16;

/// Draws `bytes` (which start at `base` in the file); returns the index of a clicked byte.
pub fn show(ui: &mut egui::Ui, bytes: &[u8], base: u64, highlight: Option<Span>) -> Option<usize> {
    let rows = bytes.len().div_ceil(PER_ROW);
    let row_h = ui.text_style_height(&egui::TextStyle::Monospace) + 2.0;
    let hl_bg = ui.visuals().selection.bg_fill;
    let mut clicked = None;
    let mut area = egui::ScrollArea::vertical().id_salt("hex").auto_shrink([false, false]);
    // Bring the highlighted bytes into view when the highlight changes.
    let id = ui.scope_id().with("hex_last_highlight");
    let last: Option<Span> = ui.data(|d| d.get_temp(id));
    if highlight != last {
        if let Some(h) = &highlight {
            // A row takes its height and the spacing below it; two rows above stay in view.
            let stride = row_h + ui.spacing().item_spacing.y;
            area = area.vertical_scroll_offset((h.start / PER_ROW).saturating_sub(2) as f32 * stride);
        }
        ui.data_mut(|d| d.insert_temp(id, highlight.clone()));
    }
    area.show_rows(ui, row_h, rows, |ui, range| {
        for r in range {
            ui.horizontal(|ui| {
                ui.spacing_mut().item_spacing.x = 4.0;
                ui.monospace(format!("{:08x}", base + (r * PER_ROW) as u64));
                let start = r * PER_ROW;
                let end = (start + PER_ROW).min(bytes.len());
                for (i, byte) in bytes.iter().enumerate().take(end).skip(start) {
                    let mut t = egui::RichText::new(format!("{byte:02x}")).monospace();
                    if highlight.as_ref().is_some_and(|h| h.contains(&i)) {
                        t = t.background_color(hl_bg);
                    }
                    let r = ui.add(egui::Label::new(t).sense(egui::Sense::click()));
                    // Screen readers (and tests) hear which byte this is, not just two hex digits.
                    r.widget_info(|| {
                        egui::WidgetInfo::labeled(egui::Role::Label, true, format!("byte {i}: {byte:02x}"))
                    });
                    if r.on_hover_text(format!("byte {i} (file offset {})", base + i as u64)).clicked() {
                        clicked = Some(i);
                    }
                }
                for _ in end..start + PER_ROW {
                    ui.monospace("  ");
                }
                let ascii: String = bytes[start..end]
                    .iter()
                    .map(|b| if b.is_ascii_graphic() || *b == b' ' { *b as char } else { '.' })
                    .collect();
                ui.monospace(ascii);
            });
        }
    });
    clicked
}
