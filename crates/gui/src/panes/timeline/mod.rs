//! One timeline pane's state: the salvage folder, the timeline the loading job read (or its
//! typed error), the time range on screen, the filters (collection, type), whether the replay
//! plan is overlaid, and what the pointer is over.
//!
//! Owns: [`TimelineState`] and the view's arithmetic (time ↔ x, zoom about a point, pan, fit).
//! Must never: read the folder or a dump (the app's job does; a click on a mark asks the app to
//! open its frame), or compute more per frame than the marks on screen (zoomed out it draws
//! bins, whose counts come from the timeline's per-block totals).

mod canvas;
mod overlays;
mod view;

use super::command::CommandSender;
use super::outcome::{JobOutput, JobResult};
use super::{AppView, Pane};
use crate::jobs::JobId;
use eframe::egui;
use std::sync::Arc;
use walscope_ops::timeline::{Filter, Timeline, TimelineError};

/// The narrowest range a view may show, in timeticks: a tenth of a millisecond.
const MIN_SPAN: f64 = (1u64 << 18) as f64 / 10.0;

pub struct TimelineState {
    pub id: u64,
    /// The salvage folder, as typed or given.
    pub folder: String,
    pub data: Option<Arc<Timeline>>,
    /// Why the folder could not be read (the library's own error, shown in words).
    pub error: Option<Arc<TimelineError>>,
    /// The loading job, while it runs.
    pub loading: Option<JobId>,
    /// The time range on screen, in timeticks (as f64: a range, not a frame's identity).
    pub from: f64,
    pub to: f64,
    pub filter: Filter,
    /// The replay plan's verdicts drawn over the lanes (when the folder holds a plan).
    pub show_plan: bool,
    /// The words of what the pointer is over (also the hover's text).
    pub hovered: Option<String>,
    /// Where the lanes were drawn last (for the view's arithmetic and the tests).
    pub canvas: Option<egui::Rect>,
    /// Where each lane was drawn last (its band, names excluded).
    pub lane_rects: Vec<egui::Rect>,
}

impl TimelineState {
    pub fn new(id: u64) -> TimelineState {
        TimelineState {
            id,
            folder: String::new(),
            data: None,
            error: None,
            loading: None,
            from: 0.0,
            to: 1.0,
            filter: Filter::default(),
            show_plan: true,
            hovered: None,
            canvas: None,
            lane_rects: Vec::new(),
        }
    }

    /// The whole salvage on screen, with a little room at either end.
    pub fn fit_all(&mut self) {
        let Some((a, b)) = self.data.as_ref().and_then(|t| t.span()) else { return };
        let pad = ((b - a) as f64 * 0.02).max(MIN_SPAN);
        self.from = a as f64 - pad;
        self.to = b as f64 + pad;
    }

    /// Zooms by `factor` (< 1: in) keeping the time at fraction `at` (0..1) of the width still.
    pub fn zoom(&mut self, factor: f64, at: f64) {
        let span = (self.to - self.from) * factor;
        let span = span.max(MIN_SPAN).min(self.whole_span() * 4.0);
        let pivot = self.from + (self.to - self.from) * at;
        self.from = pivot - span * at;
        self.to = self.from + span;
    }

    /// Moves the view by `fraction` of its width (positive: later).
    pub fn pan(&mut self, fraction: f64) {
        let d = (self.to - self.from) * fraction;
        self.from += d;
        self.to += d;
    }

    fn whole_span(&self) -> f64 {
        self.data.as_ref().and_then(|t| t.span()).map_or(1e18, |(a, b)| ((b - a) as f64).max(MIN_SPAN))
    }

    /// The x of timetick `tt` within `rect` (the lanes' band).
    pub fn x_of(&self, rect: egui::Rect, tt: f64) -> f32 {
        rect.left() + ((tt - self.from) / (self.to - self.from)) as f32 * rect.width()
    }

    /// The timetick at `x` within `rect`.
    pub fn tt_at(&self, rect: egui::Rect, x: f32) -> f64 {
        self.from + f64::from((x - rect.left()) / rect.width().max(1.0)) * (self.to - self.from)
    }

    /// Where a frame's mark is drawn when zoomed in (lane `lane`, place `i` in its columns):
    /// for the tests, which click it.
    pub fn point_of(&self, lane: usize, i: usize) -> Option<egui::Pos2> {
        let t = self.data.as_ref()?;
        let r = *self.lane_rects.get(lane)?;
        let tt = *t.lanes.get(lane)?.tt.get(i)?;
        Some(egui::pos2(self.x_of(r, tt as f64), canvas::marks_y(r)))
    }
}

impl Pane for TimelineState {
    fn title(&self, _view: &AppView<'_>) -> String {
        super::titled("Timeline", &self.folder)
    }

    fn draw(&mut self, ui: &mut egui::Ui, _view: &AppView<'_>, tx: &CommandSender) {
        view::show(self, ui, tx);
    }

    fn apply(&mut self, job: JobId, _label: &str, result: JobResult, _view: &AppView<'_>) {
        if self.loading == Some(job) {
            self.loading = None;
        }
        match result {
            Ok(JobOutput::Timeline { result: Ok(t), .. }) => {
                self.data = Some(t);
                self.error = None;
                self.filter = Filter::default();
                self.fit_all();
            }
            Ok(JobOutput::Timeline { result: Err(e), .. }) => self.error = Some(e),
            _ => {}
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
