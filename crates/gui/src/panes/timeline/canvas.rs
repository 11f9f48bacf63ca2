//! The lanes, painted: a UTC time axis with readable ticks, one band per pchannel with its
//! name, gaps and damaged ranges shaded (with words on hover), the frames as marks whose shape
//! and colour say their category (zoomed out: bins of counts, stacked by category),
//! transactions as bars (open ones outlined and marked ⚠), DDL as labelled diamonds, and the
//! replay plan's verdicts (✔ sent, ○ skipped, ✖ conflict). Wheel or pinch zooms about the
//! pointer, a drag pans, a click on a mark opens its frame, a click on a bin zooms into it.
//!
//! Must never: look at more than what is on screen (frames by binary search over the lane's
//! timeticks, bins from the per-block counts), or draw more shapes than the width allows
//! (marks, spans and verdicts closer than a pixel are drawn once).

use super::TimelineState;
use crate::panes::command::{AppCommand, CommandSender};
use crate::wal::TypeCategory;
use crate::widgets::look::Tone;
use eframe::egui::{self, Color32, Painter, Pos2, Rect, Sense, Shape, Stroke, pos2, vec2};
use std::path::PathBuf;
use walscope_core::fmt::counted;
use walscope_core::time::{format_millis_utc, format_timetick};
use walscope_ops::timeline::{Lane, Timeline, TxnEnd};

/// The column of lane names, left of the lanes.
const NAMES_W: f32 = 210.0;
/// The time axis above the lanes.
const AXIS_H: f32 = 28.0;
/// Zoomed in further than this many frames per pixel, single marks; else bins.
const MARKS_PER_PX: f32 = 0.7;
/// Pixels per bin when zoomed out.
const BIN_PX: f32 = 3.0;

/// The y of the frame marks in a lane's band.
pub(super) fn marks_y(r: Rect) -> f32 {
    r.top() + r.height() * 0.45
}

/// A category's colour, readable on either theme.
pub(super) fn colour(ui: &egui::Ui, c: TypeCategory) -> Color32 {
    let dark = ui.visuals().dark_mode;
    match c {
        TypeCategory::Insert => Tone::Good.color(ui),
        TypeCategory::Delete => Tone::Bad.color(ui),
        TypeCategory::Ddl if dark => Color32::from_rgb(200, 150, 255),
        TypeCategory::Ddl => Color32::from_rgb(120, 50, 190),
        TypeCategory::Txn => Tone::Info.color(ui),
        TypeCategory::Control => ui.visuals().weak_text_color(),
        TypeCategory::Other if dark => Color32::from_rgb(210, 160, 100),
        TypeCategory::Other => Color32::from_rgb(140, 90, 30),
    }
}

pub(super) fn txn_colour(ui: &egui::Ui, end: TxnEnd) -> Color32 {
    match end {
        TxnEnd::Committed => Tone::Info.color(ui).gamma_multiply(0.7),
        TxnEnd::RolledBack => Tone::Warn.color(ui).gamma_multiply(0.7),
        TxnEnd::Open => Tone::Bad.color(ui),
    }
}

/// A category's shape (not colour alone): insert ●, delete ✕, DDL ◆, txn ■, control |, other ○.
pub(super) fn shape(p: &Painter, c: TypeCategory, at: Pos2, s: f32, col: Color32) {
    match c {
        TypeCategory::Insert => {
            p.circle_filled(at, s, col);
        }
        TypeCategory::Delete => {
            let st = Stroke::new(1.8, col);
            p.line_segment([at + vec2(-s, -s), at + vec2(s, s)], st);
            p.line_segment([at + vec2(-s, s), at + vec2(s, -s)], st);
        }
        TypeCategory::Ddl => {
            let d = s + 1.0;
            let pts = vec![at + vec2(0.0, -d), at + vec2(d, 0.0), at + vec2(0.0, d), at + vec2(-d, 0.0)];
            p.add(Shape::convex_polygon(pts, col, Stroke::NONE));
        }
        TypeCategory::Txn => {
            p.rect_filled(Rect::from_center_size(at, vec2(2.0 * s, 2.0 * s)), 0.0, col);
        }
        TypeCategory::Control => {
            p.line_segment([at + vec2(0.0, -s), at + vec2(0.0, s)], Stroke::new(2.0, col));
        }
        TypeCategory::Other => {
            p.circle_stroke(at, s, Stroke::new(1.5, col));
        }
    }
}

/// What the pointer is nearest to: its words, and the frame a click opens (or the range a
/// click zooms into).
#[derive(Default)]
pub(super) struct Hover {
    pub(super) dist: f32,
    pub(super) words: Option<String>,
    pub(super) open: Option<(PathBuf, usize)>,
    pub(super) zoom: Option<(f64, f64)>,
}

impl Hover {
    pub(super) fn offer(
        &mut self,
        dist: f32,
        words: impl FnOnce() -> String,
        open: Option<(PathBuf, usize)>,
    ) {
        if self.words.is_none() || dist < self.dist {
            *self = Hover { dist, words: Some(words()), open, zoom: None };
        }
    }
}

pub(super) fn utc(tt: u64) -> String {
    format!("{} UTC", format_timetick(tt))
}

pub(super) fn show(st: &mut TimelineState, t: &Timeline, ui: &mut egui::Ui, tx: &CommandSender) {
    let size = ui.available_size().max(vec2(300.0, 120.0));
    let (outer, resp) = ui.allocate_exact_size(size, Sense::click_and_drag());
    resp.widget_info(|| {
        egui::WidgetInfo::labeled(
            egui::Role::Canvas,
            true,
            "Timeline lanes: drag to pan, turn the wheel to zoom, click a mark to open its frame",
        )
    });
    let band = Rect::from_min_max(pos2(outer.left() + NAMES_W, outer.top() + AXIS_H), outer.max);
    st.canvas = Some(band);
    if resp.dragged() {
        st.pan(-f64::from(resp.drag_delta().x / band.width().max(1.0)));
    }
    let pointer = resp.hover_pos();
    if let Some(p) = pointer {
        let (scroll, pinch) = ui.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
        let at = f64::from(((p.x - band.left()) / band.width().max(1.0)).clamp(0.0, 1.0));
        if scroll != 0.0 {
            st.zoom((-f64::from(scroll) / 200.0).exp(), at);
        }
        if pinch != 1.0 {
            st.zoom(1.0 / f64::from(pinch), at);
        }
    }
    let painter = ui.painter_at(outer);
    axis(st, ui, &painter, outer, band);
    let n = t.lanes.len().max(1);
    let lane_h = (band.height() / n as f32).clamp(40.0, 120.0);
    st.lane_rects.clear();
    let mut hover = Hover::default();
    // Marks or bins for every lane alike, so the lanes read the same way.
    let (from, to) = (st.from.max(0.0) as u64, st.to.max(0.0).ceil() as u64);
    let most = t.lanes.iter().map(|l| l.range(from, to).len()).max().unwrap_or(0);
    let single = (most as f32) <= band.width() * MARKS_PER_PX;
    for (k, lane) in t.lanes.iter().enumerate() {
        let r = Rect::from_min_size(
            pos2(band.left(), band.top() + k as f32 * lane_h),
            vec2(band.width(), lane_h),
        );
        st.lane_rects.push(r);
        if k % 2 == 0 {
            painter.rect_filled(r, 0.0, ui.visuals().faint_bg_color);
        }
        painter
            .line_segment([r.left_bottom(), r.right_bottom()], ui.visuals().widgets.noninteractive.bg_stroke);
        let names =
            Rect::from_min_max(pos2(outer.left() + 4.0, r.top()), pos2(band.left() - 6.0, r.bottom()));
        ui.put(names, egui::Label::new(egui::RichText::new(&lane.pchannel).strong()).truncate())
            .on_hover_text(format!(
                "{}\n{}; {}",
                lane.pchannel,
                counted(lane.len() as u64, "frame"),
                lane.path.display()
            ));
        let pointer = pointer.filter(|p| r.contains(*p));
        super::overlays::lane_shading(st, t, k, r, ui, &painter, pointer, &mut hover);
        frames(st, lane, single, r, ui, &painter, pointer, &mut hover);
        super::overlays::spans_and_ddl(st, t, k, r, ui, &painter, pointer, &mut hover);
        if st.show_plan && !t.plan.is_empty() {
            super::overlays::plan(st, t, k, r, ui, &painter, pointer, &mut hover);
        }
    }
    st.hovered = hover.words.clone();
    if let Some(words) = &hover.words {
        let mut text = words.clone();
        if hover.open.is_some() {
            text.push_str("\nClick: open it in its dump");
        } else if hover.zoom.is_some() {
            text.push_str("\nClick: zoom into it");
        }
        resp.clone().on_hover_text_at_pointer(text);
    }
    if resp.clicked() {
        if let Some((path, frame)) = hover.open {
            tx.send(AppCommand::OpenFrame { path, frame });
        } else if let Some((a, b)) = hover.zoom {
            (st.from, st.to) = (a, b);
        }
    }
}

/// The time axis: ticks at a round step (about one per 110 px), labelled in UTC, with the
/// day and "UTC" in the corner.
fn axis(st: &TimelineState, ui: &egui::Ui, p: &Painter, outer: Rect, band: Rect) {
    const STEPS_MS: [u64; 24] = [
        1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000,
        300_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 86_400_000,
    ];
    let ms = |tt: f64| tt / f64::from(1u32 << 18);
    let (a, b) = (ms(st.from), ms(st.to));
    let want = (b - a) / f64::from((band.width() / 110.0).max(1.0));
    let step = STEPS_MS.iter().copied().find(|&s| s as f64 >= want).unwrap_or(86_400_000);
    let text = ui.visuals().text_color();
    let grid = ui.visuals().widgets.noninteractive.bg_stroke;
    let font = egui::FontId::monospace(11.0);
    let first = (a.max(0.0) as u64).div_ceil(step) * step;
    let day = format_millis_utc(a.max(0.0) as u64);
    p.text(
        pos2(outer.left() + 4.0, outer.top() + 6.0),
        egui::Align2::LEFT_TOP,
        format!("{} UTC", &day[..10]),
        font.clone(),
        text,
    );
    let mut tick = first;
    for _ in 0..200 {
        if tick as f64 > b {
            break;
        }
        let x = st.x_of(band, (tick << 18) as f64);
        p.line_segment([pos2(x, band.top() - 6.0), pos2(x, band.bottom())], grid);
        let full = format_millis_utc(tick);
        let label = match step {
            s if s >= 86_400_000 => full[..10].to_string(),
            s if s >= 1000 => full[11..19].to_string(),
            _ => full[11..23].to_string(),
        };
        p.text(pos2(x + 3.0, outer.top() + 6.0), egui::Align2::LEFT_TOP, label, font.clone(), text);
        tick += step;
    }
}

#[allow(clippy::too_many_arguments)]
fn frames(
    st: &TimelineState,
    lane: &Lane,
    single: bool,
    r: Rect,
    ui: &egui::Ui,
    p: &Painter,
    pointer: Option<Pos2>,
    hover: &mut Hover,
) {
    let (from, to) = (st.from.max(0.0) as u64, st.to.max(0.0).ceil() as u64);
    let range = lane.range(from, to);
    let y = marks_y(r);
    if single {
        let mut last_x = f32::NEG_INFINITY;
        let mut last_cat = u8::MAX;
        for i in range {
            if !lane.keeps(i, &st.filter) {
                continue;
            }
            let x = st.x_of(r, lane.tt[i] as f64);
            // Marks of one category closer than a pixel are one mark.
            if x - last_x < 1.0 && lane.cat[i] == last_cat {
                continue;
            }
            (last_x, last_cat) = (x, lane.cat[i]);
            let c = lane.category(i);
            shape(p, c, pos2(x, y), 4.0, colour(ui, c));
            if let Some(q) = pointer {
                let dist = (q - pos2(x, y)).length();
                if dist < 7.0 {
                    let words = || frame_words(lane, i);
                    hover.offer(dist, words, Some((lane.path.clone(), lane.frame[i] as usize)));
                }
            }
        }
        return;
    }
    let n = (r.width() / BIN_PX).max(1.0) as usize;
    let bins = lane.bins(from, to, n, &st.filter);
    let max = bins.iter().map(|b| b.total()).max().unwrap_or(0).max(1);
    let (base, tall) = (r.top() + r.height() * 0.68, r.height() * 0.55);
    let scale = tall / (1.0 + max as f32).ln();
    let w = r.width() / n as f32;
    for (b, bin) in bins.iter().enumerate() {
        let total = bin.total();
        if total == 0 {
            continue;
        }
        let x = r.left() + b as f32 * w;
        let h = (1.0 + total as f32).ln() * scale;
        let mut top = base;
        for c in TypeCategory::ALL {
            let part = bin.count(c);
            if part == 0 {
                continue;
            }
            let seg = h * part as f32 / total as f32;
            p.rect_filled(
                Rect::from_min_max(pos2(x, top - seg), pos2(x + (w - 0.5).max(1.0), top)),
                0.0,
                colour(ui, c),
            );
            top -= seg;
        }
        if let Some(q) = pointer
            && q.x >= x
            && q.x < x + w
        {
            let span = (st.to - st.from) / n as f64;
            let (a, z) = (st.from + span * b as f64, st.from + span * (b + 1) as f64);
            let counts: Vec<String> = TypeCategory::ALL
                .iter()
                .filter(|c| bin.count(**c) > 0)
                .map(|c| format!("{} {}", bin.count(*c), c.name()))
                .collect();
            let words = format!(
                "{} from {} to {}: {}",
                counted(total as u64, "frame"),
                utc(a.max(0.0) as u64),
                utc(z.max(0.0) as u64),
                counts.join(", ")
            );
            if hover.words.is_none() {
                *hover = Hover { dist: 100.0, words: Some(words), open: None, zoom: Some((a, z)) };
            }
        }
    }
}

fn frame_words(lane: &Lane, i: usize) -> String {
    let mut w = format!("{} frame {}", lane.pchannel, lane.frame[i]);
    w.push_str(&format!("\ntype {} ({})", lane.ty[i], lane.category(i).name()));
    if lane.collection[i] != walscope_ops::timeline::NONE {
        w.push_str(&format!(", collection {}", lane.collection[i]));
    }
    if lane.txn[i] != walscope_ops::timeline::NONE {
        w.push_str(&format!(", txn {}", lane.txn[i]));
    }
    w.push_str(&format!("\n{} (timetick {}), {} bytes", utc(lane.tt[i]), lane.tt[i], lane.size[i]));
    w
}
