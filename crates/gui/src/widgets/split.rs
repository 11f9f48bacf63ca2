//! A left | right split of a rectangle whose divider stays where the operator dragged it.
//!
//! Owns: laying out the two sides in fixed rectangles (each clipped to its own, so wide content
//! of one side never covers the other) and the drag of the divider. The right side's width is
//! the caller's (it decides where it is remembered); the split only clamps it for drawing.
//! Must never: size a side from its content (the layout would follow each frame's content), or
//! change the remembered width except on a drag.
//!
//! Why not `egui::Panel::right`: inside a tile its content can be wider than the panel's
//! maximum, and the panel then reports a rectangle that starts right of its real left edge, so
//! the list drawn after it covers the panel's left part (issue #38).

use eframe::egui::{self, Id, Rect, Sense, Ui, UiBuilder};

/// The narrowest either side gets.
pub const MIN_SIDE: f32 = 160.0;
/// The right side never takes more than this share of the width.
pub const MAX_RIGHT_SHARE: f32 = 0.6;
/// Its width when the operator never dragged the divider: this share of the width.
pub const DEFAULT_RIGHT_SHARE: f32 = 0.45;
/// Half the gap the divider sits in (and the width it is grabbed by).
const HALF_GAP: f32 = 3.0;

/// The right side's width drawn in `bounds` for a remembered `width` (None: never dragged).
pub fn right_width(bounds: Rect, width: Option<f32>) -> f32 {
    let total = bounds.width();
    let max = (total * MAX_RIGHT_SHARE).min(total - MIN_SIDE).max(0.0);
    let want = width.unwrap_or(total * DEFAULT_RIGHT_SHARE);
    want.clamp(MIN_SIDE.min(max), max)
}

/// Draws `left` and `right` side by side in `bounds` (a part of `ui`'s rectangle), both given
/// `state`, the right side `width` wide (see [`right_width`]); dragging the divider sets
/// `width`. Returns the two rectangles drawn into.
pub fn left_right<T>(
    ui: &mut Ui,
    id: Id,
    bounds: Rect,
    width: &mut Option<f32>,
    state: &mut T,
    left: impl FnOnce(&mut Ui, &mut T),
    right: impl FnOnce(&mut Ui, &mut T),
) -> (Rect, Rect) {
    let x = bounds.max.x - right_width(bounds, *width);
    let handle = Rect::from_x_y_ranges(x - HALF_GAP..=x + HALF_GAP, bounds.y_range());
    let drag = ui.interact(handle, id.with("divider"), Sense::drag());
    if drag.dragged()
        && let Some(p) = drag.interact_pointer_pos()
    {
        *width = Some(bounds.max.x - p.x);
    }
    if drag.hovered() || drag.dragged() {
        ui.ctx().set_cursor_icon(egui::CursorIcon::ResizeHorizontal);
    }
    // Clamped again: the pointer may have gone past either limit.
    let x = bounds.max.x - right_width(bounds, *width);
    let left_rect = Rect::from_min_max(bounds.min, egui::pos2(x - HALF_GAP, bounds.max.y));
    let right_rect = Rect::from_min_max(egui::pos2(x + HALF_GAP, bounds.min.y), bounds.max);
    let side = |ui: &mut Ui, rect: Rect, salt: &str| {
        let mut side = ui.new_child(
            UiBuilder::new()
                .id_salt(id.with(salt))
                .max_rect(rect)
                .layout(egui::Layout::top_down(egui::Align::Min)),
        );
        side.shrink_clip_rect(rect);
        side
    };
    left(&mut side(ui, left_rect, "left"), state);
    right(&mut side(ui, right_rect, "right"), state);
    let stroke = if drag.hovered() || drag.dragged() {
        ui.visuals().widgets.hovered.fg_stroke
    } else {
        ui.visuals().widgets.noninteractive.bg_stroke
    };
    ui.painter().vline(x, bounds.y_range(), stroke);
    ui.advance_cursor_after_rect(bounds);
    (left_rect, right_rect)
}
