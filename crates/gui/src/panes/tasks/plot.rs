//! The dashboard's plot: rows synced over time since the dashboard started watching, one line
//! per table (or, for a chosen table, per partition), with the values under the pointer. The
//! series come from the poller, which keeps hours of them in bounded memory.
//!
//! Must never: keep points of its own (it draws the poller's series each frame).

use crate::panes::tasks::TasksState;
use eframe::egui;
use egui_plot::{Legend, Line, Plot, PlotPoints};
use walscope_ops::jobs::task_poll::TaskBoard;

pub fn show(st: &mut TasksState, board: &TaskBoard, ui: &mut egui::Ui) {
    if board.trends.tables.is_empty() {
        return;
    }
    let name = |tid: u32| {
        board
            .health
            .iter()
            .find(|h| h.tid == tid)
            .and_then(|h| h.table.clone())
            .unwrap_or_else(|| format!("tid {tid}"))
    };
    ui.horizontal_wrapped(|ui| {
        ui.label("Plot:");
        ui.selectable_value(&mut st.plot_table, None, "every table");
        for tid in board.trends.tables.keys() {
            ui.selectable_value(&mut st.plot_table, Some(*tid), format!("partitions of {}", name(*tid)));
        }
    });
    // Seconds since the first point shown, so the axis reads as elapsed time.
    let lines: Vec<(String, Vec<(u64, u64)>)> = match st.plot_table {
        None => board.trends.tables.iter().map(|(tid, s)| (name(*tid), s.points().to_vec())).collect(),
        Some(t) => board
            .trends
            .partitions
            .iter()
            .filter(|((tid, _), _)| *tid == t)
            .map(|((_, pid), s)| (format!("{} pid {pid}", name(t)), s.points().to_vec()))
            .collect(),
    };
    let t0 = lines.iter().filter_map(|(_, p)| p.first().map(|x| x.0)).min().unwrap_or(0);
    Plot::new(("rows_plot", st.id))
        .height(180.0)
        .legend(Legend::default())
        .allow_scroll(false)
        .label_formatter(|pos| {
            Some(match pos {
                egui_plot::HoverPosition::NearDataPoint { plot_name, position, .. } => {
                    format!("{plot_name}\n{:.0} s: {:.0} rows", position.x, position.y)
                }
                egui_plot::HoverPosition::Elsewhere { position } => format!("{:.0} s", position.x),
            })
        })
        .show(ui, |plot| {
            for (label, points) in lines {
                let pts: PlotPoints<'_> = points
                    .iter()
                    .map(|(ms, v)| [(ms.saturating_sub(t0)) as f64 / 1000.0, *v as f64])
                    .collect();
                plot.line(Line::new(label, pts));
            }
        });
}
