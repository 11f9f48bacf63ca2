//! What the lanes carry besides the frames: gaps and damaged ranges shaded (words on hover),
//! transactions as bars (open ones outlined and marked ⚠), DDL as labelled diamonds, and the
//! replay plan's verdicts (✔ sent, ○ skipped, ✖ conflict).
//!
//! Must never: draw more than the width allows (bars and verdicts closer than a pixel, or
//! labels closer than a label's width, are drawn once).

use super::TimelineState;
use super::canvas::{Hover, colour, shape, txn_colour, utc};
use crate::wal::TypeCategory;
use crate::widgets::look::Tone;
use eframe::egui::{self, Painter, Pos2, Rect, Stroke, pos2, vec2};
use walscope_ops::timeline::{Timeline, TxnEnd};

#[allow(clippy::too_many_arguments)]
pub(super) fn lane_shading(
    st: &TimelineState,
    t: &Timeline,
    k: usize,
    r: Rect,
    ui: &egui::Ui,
    p: &Painter,
    pointer: Option<Pos2>,
    hover: &mut Hover,
) {
    let lane = &t.lanes[k];
    let gap_fill = ui.visuals().weak_text_color().gamma_multiply(0.25);
    for g in t.gaps.iter().filter(|g| g.lane == k) {
        let (x0, x1) = (st.x_of(r, g.from_tt as f64), st.x_of(r, g.to_tt as f64));
        if x1 < r.left() || x0 > r.right() {
            continue;
        }
        let area = Rect::from_x_y_ranges(x0.max(r.left())..=x1.min(r.right()), r.y_range());
        p.rect_filled(area, 0.0, gap_fill);
        let secs = g.millis() as f64 / 1000.0;
        if area.width() > 70.0 {
            p.text(
                area.center_bottom() - vec2(0.0, 3.0),
                egui::Align2::CENTER_BOTTOM,
                format!("gap {secs:.1} s"),
                egui::FontId::proportional(11.0),
                ui.visuals().text_color(),
            );
        }
        if pointer.is_some_and(|q| area.contains(q)) {
            let words = || {
                format!(
                    "Gap of {secs:.1} s on {}: no frame between {} and {} (gaps are jumps longer than {} ms on this lane)",
                    lane.pchannel,
                    utc(g.from_tt),
                    utc(g.to_tt),
                    lane.gap_threshold_ms
                )
            };
            hover.offer(50.0, words, None);
        }
    }
    let bad = Tone::Bad.color(ui);
    for d in t.damage.iter().filter(|d| d.lane == k) {
        let from = d.from_tt.or(lane.first_tt()).unwrap_or(0) as f64;
        let to = d.to_tt.or(lane.last_tt()).unwrap_or(0) as f64;
        let (x0, x1) = (st.x_of(r, from), st.x_of(r, to));
        let mid = (x0 + x1) / 2.0;
        let area = Rect::from_x_y_ranges((x0.min(mid - 4.0))..=(x1.max(mid + 4.0)), r.y_range());
        if area.right() < r.left() || area.left() > r.right() {
            continue;
        }
        p.rect_filled(area, 0.0, bad.gamma_multiply(0.25));
        p.text(
            pos2(mid, r.top() + 2.0),
            egui::Align2::CENTER_TOP,
            "⚠",
            egui::FontId::proportional(13.0),
            bad,
        );
        if pointer.is_some_and(|q| area.expand(3.0).contains(q)) {
            let what =
                if d.truncated { "cut short at the end of the file" } else { "not readable as frames" };
            let words = || {
                format!(
                    "Damaged: {} at offset {} of {} {what}: {}",
                    walscope_core::fmt::bytes_exact(d.len),
                    d.offset,
                    lane.pchannel,
                    d.reason
                )
            };
            hover.offer(1.0, words, None);
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn spans_and_ddl(
    st: &TimelineState,
    t: &Timeline,
    k: usize,
    r: Rect,
    ui: &egui::Ui,
    p: &Painter,
    pointer: Option<Pos2>,
    hover: &mut Hover,
) {
    let (lo, hi) = (t.txns.partition_point(|s| s.lane < k), t.txns.partition_point(|s| s.lane <= k));
    let (y0, y1) = (r.top() + r.height() * 0.74, r.top() + r.height() * 0.86);
    let mut last_end = [f32::NEG_INFINITY; 3];
    for s in &t.txns[lo..hi] {
        if (s.begin_tt as f64) > st.to || (s.end_tt as f64) < st.from {
            continue;
        }
        if st.filter.collection.is_some_and(|c| s.collection != Some(c)) {
            continue;
        }
        let (x0, x1) =
            (st.x_of(r, s.begin_tt as f64).max(r.left()), st.x_of(r, s.end_tt as f64).min(r.right()));
        let x1 = x1.max(x0 + 2.0);
        let slot = s.end as usize;
        let open = s.end == TxnEnd::Open;
        let bar = Rect::from_x_y_ranges(x0..=x1, y0..=y1);
        if x1 <= last_end[slot] + 1.0 && !open {
            continue;
        }
        last_end[slot] = x1;
        if open {
            p.rect_stroke(bar, 0.0, Stroke::new(1.5, txn_colour(ui, s.end)), egui::StrokeKind::Inside);
            p.text(
                // Beside the bar's end, or before it when the lane ends there.
                if x1 + 50.0 < r.right() { pos2(x1 + 2.0, y0 - 2.0) } else { pos2(x0 - 2.0, y0 - 2.0) },
                if x1 + 50.0 < r.right() { egui::Align2::LEFT_TOP } else { egui::Align2::RIGHT_TOP },
                "⚠ open",
                egui::FontId::proportional(11.0),
                txn_colour(ui, s.end),
            );
        } else {
            p.rect_filled(bar, 1.0, txn_colour(ui, s.end));
        }
        if pointer.is_some_and(|q| bar.expand(2.0).contains(q)) {
            let words = || {
                let began = if s.has_begin { "" } else { " (its BeginTxn is before the dump)" };
                let coll = s.collection.map_or_else(String::new, |c| format!(", collection {c}"));
                format!(
                    "Transaction {} on {}: {}, {}{coll}\n{} .. {}{began}",
                    s.id,
                    t.lanes[k].pchannel,
                    s.end.name(),
                    walscope_core::fmt::counted(s.frames as u64, "frame"),
                    utc(s.begin_tt),
                    utc(s.end_tt)
                )
            };
            hover.offer(20.0, words, Some((t.lanes[k].path.clone(), s.first_frame as usize)));
        }
    }
    let lane = &t.lanes[k];
    let y = r.top() + 10.0;
    let mut last_label = f32::NEG_INFINITY;
    let col = colour(ui, TypeCategory::Ddl);
    for d in t.ddl.iter().filter(|d| d.lane == k) {
        if (d.tt as f64) < st.from || (d.tt as f64) > st.to || !lane.keeps(d.at, &st.filter) {
            continue;
        }
        let x = st.x_of(r, d.tt as f64);
        shape(p, TypeCategory::Ddl, pos2(x, y), 4.5, col);
        if x - last_label > 150.0 {
            let label = match d.collection {
                Some(c) => format!("{} {c}", d.label),
                None => d.label.clone(),
            };
            p.text(
                pos2(x + 7.0, y),
                egui::Align2::LEFT_CENTER,
                label,
                egui::FontId::proportional(11.0),
                ui.visuals().text_color(),
            );
            last_label = x;
        }
        if let Some(q) = pointer {
            let dist = (q - pos2(x, y)).length();
            if dist < 8.0 {
                let words = || {
                    let coll = d.collection.map_or_else(String::new, |c| format!(", collection {c}"));
                    format!("{}{coll} on {}\n{} (frame {})", d.label, lane.pchannel, utc(d.tt), d.frame)
                };
                hover.offer(dist, words, Some((lane.path.clone(), d.frame as usize)));
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn plan(
    st: &TimelineState,
    t: &Timeline,
    k: usize,
    r: Rect,
    ui: &egui::Ui,
    p: &Painter,
    pointer: Option<Pos2>,
    hover: &mut Hover,
) {
    use walscope_ops::timeline::PlanWhat;
    let from = st.from.max(0.0) as u64;
    let lo = t.plan.partition_point(|m| (m.lane, m.tt) < (k, from));
    let y = r.bottom() - 7.0;
    let mut last = [f32::NEG_INFINITY; 3];
    for m in t.plan[lo..].iter().take_while(|m| m.lane == k && (m.tt as f64) <= st.to) {
        let x = st.x_of(r, m.tt as f64);
        let (slot, glyph, col) = match m.what {
            PlanWhat::Sent { .. } => (0, "✔", Tone::Good.color(ui)),
            PlanWhat::Skipped { .. } => (1, "○", ui.visuals().weak_text_color()),
            PlanWhat::Conflict { .. } => (2, "✖", Tone::Bad.color(ui)),
        };
        if x - last[slot] < 6.0 {
            continue;
        }
        last[slot] = x;
        p.text(pos2(x, y), egui::Align2::CENTER_CENTER, glyph, egui::FontId::proportional(11.0), col);
        if let Some(q) = pointer {
            let dist = (q - pos2(x, y)).length();
            if dist < 7.0 {
                let words = || format!("Replay plan, {} at {}: {}", m.message_id, utc(m.tt), m.what.words());
                hover.offer(dist, words, None);
            }
        }
    }
}
