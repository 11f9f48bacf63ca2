//! A sparkline: a sub-task's row count over the last polls, drawn in a small box so progress is
//! seen at a glance (a flat line is a stalled task). Draws only; the samples come from the poller.

use eframe::egui;

/// Draws `(time ms, count)` samples, oldest first, in a `size` box. Screen readers (and tests)
/// hear the span it covers and the rows gained.
pub fn show(ui: &mut egui::Ui, samples: &[(u64, u64)], size: egui::Vec2) -> egui::Response {
    let (rect, response) = ui.allocate_exact_size(size, egui::Sense::hover());
    let summary = describe(samples);
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Label, true, summary.clone()));
    let painter = ui.painter_at(rect);
    painter.rect_stroke(rect, 2.0, ui.visuals().widgets.noninteractive.bg_stroke, egui::StrokeKind::Inside);
    if let (Some(first), Some(last)) = (samples.first(), samples.last())
        && samples.len() >= 2
    {
        let (t0, t1) = (first.0 as f64, (last.0.max(first.0 + 1)) as f64);
        let lo = samples.iter().map(|s| s.1).min().unwrap_or(0) as f64;
        let hi = (samples.iter().map(|s| s.1).max().unwrap_or(0) as f64).max(lo + 1.0);
        let inner = rect.shrink(2.0);
        let points: Vec<egui::Pos2> = samples
            .iter()
            .map(|(t, c)| {
                let x = inner.left() + ((*t as f64 - t0) / (t1 - t0)) as f32 * inner.width();
                let y = inner.bottom() - ((*c as f64 - lo) / (hi - lo)) as f32 * inner.height();
                egui::pos2(x, y)
            })
            .collect();
        let moving = last.1 > first.1;
        let colour =
            if moving { egui::Color32::from_rgb(0x2e, 0xa0, 0x43) } else { ui.visuals().warn_fg_color };
        painter.add(egui::Shape::line(points, egui::Stroke::new(1.5, colour)));
    }
    response.on_hover_text(summary)
}

/// "+120 rows in 8 s" / "no new rows in 8 s" / "waiting for a second poll".
pub fn describe(samples: &[(u64, u64)]) -> String {
    match (samples.first(), samples.last()) {
        (Some(a), Some(b)) if samples.len() >= 2 => {
            let secs = (b.0.saturating_sub(a.0)) as f64 / 1000.0;
            let gained = b.1.saturating_sub(a.1);
            if gained == 0 {
                format!("no new rows in {secs:.0} s")
            } else {
                format!("+{gained} rows in {secs:.0} s")
            }
        }
        _ => "waiting for a second poll".into(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn describes_progress_and_stalls() {
        assert_eq!(super::describe(&[]), "waiting for a second poll");
        assert_eq!(super::describe(&[(0, 5), (2000, 5)]), "no new rows in 2 s");
        assert_eq!(super::describe(&[(0, 5), (2000, 9), (4000, 125)]), "+120 rows in 4 s");
    }
}
