//! Two dumps compared: the summary (only in A, only in B, changed, identical; by type and by
//! collection), then the frame pairs in a virtual list (only the rows on screen are laid out;
//! each pair is a few numbers, its type and collection kept once each), filtered by kind.
//! Opening a changed pair asks for the diff of those two frames (a job) and shows it as two
//! messages ([`super::message_view`]).
//!
//! Owns: [`DumpCompare`]. Must never: read or diff frames itself (it sends `DiffPair`; the app
//! runs the job with the dumps held here), or hold a string per pair.

use super::DiffFailed;
use super::message_view::MessageCompare;
use crate::dump::DumpFile;
use crate::dump::view::FrameDecoder;
use crate::panes::AppView;
use crate::panes::command::{AppCommand, CommandSender};
use crate::widgets::look::{self, Tone};
use eframe::egui;
use std::sync::Arc;
use walscope_core::diff::{DumpDiffSummary, FramePair, PairCounts, PairKind};

/// No frame on that side.
const NONE: u32 = u32::MAX;

/// One pair, compact: frame numbers and the indexes of its type and collection names.
#[derive(Debug, Clone, Copy)]
pub struct PairRow {
    pub kind: PairKind,
    a: u32,
    b: u32,
    type_ix: u32,
    coll_ix: u32,
}

impl PairRow {
    pub fn a(&self) -> Option<usize> {
        (self.a != NONE).then_some(self.a as usize)
    }
    pub fn b(&self) -> Option<usize> {
        (self.b != NONE).then_some(self.b as usize)
    }
}

/// The pairs as a job collects them: each name kept once.
#[derive(Default)]
pub struct PairRows {
    pub rows: Vec<PairRow>,
    types: Vec<String>,
    collections: Vec<String>,
    type_ix: std::collections::HashMap<String, u32>,
    coll_ix: std::collections::HashMap<String, u32>,
}

impl PairRows {
    /// Takes one pair of the library's diff.
    pub fn push(&mut self, p: FramePair) {
        fn intern(
            name: String,
            all: &mut Vec<String>,
            ix: &mut std::collections::HashMap<String, u32>,
        ) -> u32 {
            if let Some(i) = ix.get(&name) {
                return *i;
            }
            let i = all.len() as u32;
            all.push(name.clone());
            ix.insert(name, i);
            i
        }
        let frame = |f: Option<u64>| f.and_then(|f| u32::try_from(f).ok()).unwrap_or(NONE);
        let type_ix = intern(p.type_name, &mut self.types, &mut self.type_ix);
        let coll_ix = intern(p.collection.unwrap_or_default(), &mut self.collections, &mut self.coll_ix);
        self.rows.push(PairRow { kind: p.kind, a: frame(p.a), b: frame(p.b), type_ix, coll_ix });
    }

    pub fn type_of(&self, r: &PairRow) -> &str {
        self.types.get(r.type_ix as usize).map_or("", String::as_str)
    }

    pub fn collection_of(&self, r: &PairRow) -> &str {
        self.collections.get(r.coll_ix as usize).map_or("", String::as_str)
    }
}

/// Which pairs the list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairFilter {
    Different,
    OnlyA,
    OnlyB,
    Changed,
    Identical,
    All,
}

impl PairFilter {
    fn keeps(self, k: PairKind) -> bool {
        match self {
            PairFilter::Different => k != PairKind::Identical,
            PairFilter::OnlyA => k == PairKind::OnlyA,
            PairFilter::OnlyB => k == PairKind::OnlyB,
            PairFilter::Changed => k == PairKind::Changed,
            PairFilter::Identical => k == PairKind::Identical,
            PairFilter::All => true,
        }
    }
}

/// A pair's kind: its icon and words, and its tone.
pub fn pair_words(k: PairKind) -> (&'static str, Tone) {
    match k {
        PairKind::OnlyA => ("- only in A", Tone::Bad),
        PairKind::OnlyB => ("+ only in B", Tone::Good),
        PairKind::Changed => ("~ changed", Tone::Warn),
        PairKind::Identical => ("✔ identical", Tone::Neutral),
    }
}

/// A pair opened: its diff coming, shown, or why not.
pub enum Opened {
    Waiting,
    Diffed(Box<MessageCompare>),
    Failed(DiffFailed),
}

/// An opened dump and its decoder (for the frame diffs a pair opens).
#[derive(Clone)]
pub struct DumpHandle {
    pub dump: Arc<DumpFile>,
    pub decoder: Arc<FrameDecoder>,
}

/// Two dumps compared.
pub struct DumpCompare {
    pub summary: DumpDiffSummary,
    pub pairs: PairRows,
    pub a: DumpHandle,
    pub b: DumpHandle,
    pub filter: PairFilter,
    /// The rows the filter keeps (indexes into `pairs.rows`), made when the filter changes.
    shown: Vec<u32>,
    /// The pair selected in the list.
    pub selected: Option<usize>,
    /// The pair whose frames are shown compared.
    pub opened: Option<(usize, Opened)>,
}

impl DumpCompare {
    pub fn new(summary: DumpDiffSummary, pairs: PairRows, a: DumpHandle, b: DumpHandle) -> DumpCompare {
        // Identical dumps show every pair; otherwise what differs comes first.
        let filter = if summary.is_identical() { PairFilter::All } else { PairFilter::Different };
        let mut d =
            DumpCompare { summary, pairs, a, b, filter, shown: Vec::new(), selected: None, opened: None };
        d.set_filter(filter);
        d
    }

    pub fn set_filter(&mut self, filter: PairFilter) {
        self.filter = filter;
        self.shown = (0..self.pairs.rows.len() as u32)
            .filter(|i| filter.keeps(self.pairs.rows[*i as usize].kind))
            .collect();
    }

    /// The pairs the filter keeps, in order.
    pub fn shown(&self) -> impl Iterator<Item = &PairRow> {
        self.shown.iter().map(|i| &self.pairs.rows[*i as usize])
    }

    pub fn shown_len(&self) -> usize {
        self.shown.len()
    }

    pub fn opened_messages(&self) -> Option<&MessageCompare> {
        match &self.opened {
            Some((_, Opened::Diffed(m))) => Some(m),
            _ => None,
        }
    }

    pub fn opened_messages_mut(&mut self) -> Option<&mut MessageCompare> {
        match &mut self.opened {
            Some((_, Opened::Diffed(m))) => Some(m),
            _ => None,
        }
    }

    /// The diff of pair `pair` came back (kept only if that pair is still the one opened).
    pub fn pair_diffed(&mut self, pair: usize, result: Result<Box<MessageCompare>, DiffFailed>) {
        if let Some((p, o)) = &mut self.opened
            && *p == pair
        {
            *o = match result {
                Ok(m) => Opened::Diffed(m),
                Err(e) => Opened::Failed(e),
            };
        }
    }

    /// The pair's job failed or was stopped.
    pub fn pair_failed(&mut self, e: DiffFailed) {
        if let Some((_, o @ Opened::Waiting)) = &mut self.opened {
            *o = Opened::Failed(e);
        }
    }
}

/// Draws the comparison of two dumps.
pub fn show(d: &mut DumpCompare, pane: u64, ui: &mut egui::Ui, _view: &AppView<'_>, tx: &CommandSender) {
    if let Some((pair, opened)) = &mut d.opened {
        let pair = *pair;
        let mut back = false;
        ui.horizontal(|ui| {
            back = look::secondary(ui, "Back to the pairs").clicked();
            if let Some(r) = d.pairs.rows.get(pair) {
                ui.label(format!(
                    "pair {}: frame {} of A and frame {} of B | {}",
                    walscope_core::fmt::count(pair as u64),
                    frame_words(r.a()),
                    frame_words(r.b()),
                    d.pairs.type_of(r)
                ));
            }
        });
        match opened {
            Opened::Waiting => {
                ui.horizontal(|ui| {
                    look::busy(ui);
                    ui.label("comparing the two frames…");
                });
            }
            Opened::Failed(e) => {
                ui.colored_label(Tone::Bad.color(ui), format!("{} Not compared: {e}", Tone::Bad.icon()));
            }
            Opened::Diffed(m) => super::message_view::show(m, ui),
        }
        if back {
            d.opened = None;
        }
        return;
    }
    summary(d, ui);
    ui.horizontal(|ui| {
        ui.label("Show:");
        let mut f = d.filter;
        let s = &d.summary;
        let changed = look::segmented(
            ui,
            &mut f,
            &[
                (PairFilter::Different, &format!("Different ({})", count(s.only_a + s.only_b + s.changed))),
                (PairFilter::OnlyA, &format!("Only in A ({})", count(s.only_a))),
                (PairFilter::OnlyB, &format!("Only in B ({})", count(s.only_b))),
                (PairFilter::Changed, &format!("Changed ({})", count(s.changed))),
                (PairFilter::Identical, &format!("Identical ({})", count(s.identical))),
                (PairFilter::All, "All"),
            ],
        );
        if changed {
            d.set_filter(f);
        }
    });
    if d.shown.is_empty() {
        look::empty_state(ui, "No pair of this kind.", "Choose another kind above.");
        return;
    }
    if let Some(i) = pair_list(d, ui) {
        d.selected = Some(i);
        if d.pairs.rows.get(i).is_some_and(|r| r.kind == PairKind::Changed) {
            d.opened = Some((i, Opened::Waiting));
            tx.send(AppCommand::DiffPair { pane, pair: i });
        }
    }
}

fn count(n: u64) -> String {
    walscope_core::fmt::count(n)
}

fn frame_words(f: Option<usize>) -> String {
    f.map_or_else(|| "none".to_string(), |f| f.to_string())
}

/// The counts: all, by type, by collection.
fn summary(d: &DumpCompare, ui: &mut egui::Ui) {
    let s = &d.summary;
    ui.horizontal_wrapped(|ui| {
        if s.is_identical() {
            look::badge(ui, Tone::Info, "identical");
        } else {
            look::badge(ui, Tone::Warn, "different");
        }
        ui.label(format!(
            "A: {} | B: {} | only in A: {} | only in B: {} | changed: {} | identical: {}",
            walscope_core::fmt::counted(s.a_frames, "frame"),
            walscope_core::fmt::counted(s.b_frames, "frame"),
            count(s.only_a),
            count(s.only_b),
            count(s.changed),
            count(s.identical)
        ));
        if s.a_damaged + s.b_damaged > 0 {
            ui.colored_label(
                Tone::Warn.color(ui),
                format!(
                    "⚠ damaged ranges: {} in A, {} in B (their bytes are in no frame)",
                    count(s.a_damaged),
                    count(s.b_damaged)
                ),
            );
        }
    });
    ui.columns(2, |cols| {
        counts_table(&mut cols[0], "By type", &s.by_type);
        counts_table(&mut cols[1], "By collection", &s.by_collection);
    });
}

fn counts_table(ui: &mut egui::Ui, title: &str, counts: &std::collections::BTreeMap<String, PairCounts>) {
    egui::CollapsingHeader::new(format!("{title} ({})", counts.len()))
        .id_salt(title)
        .default_open(true)
        .show(ui, |ui| {
            // Its own scroll both ways: a narrow pane never draws one table over the other.
            egui::ScrollArea::both().id_salt(title).max_height(110.0).show(ui, |ui| {
                egui::Grid::new(title).striped(true).num_columns(5).show(ui, |ui| {
                    for h in ["", "only in A", "only in B", "changed", "identical"] {
                        ui.strong(h);
                    }
                    ui.end_row();
                    for (name, c) in counts {
                        ui.label(if name.is_empty() { "(none)" } else { name });
                        for n in [c.only_a, c.only_b, c.changed, c.identical] {
                            ui.monospace(count(n));
                        }
                        ui.end_row();
                    }
                });
            });
        });
}

/// The pairs the filter keeps, only those on screen laid out. Returns the pair clicked.
fn pair_list(d: &DumpCompare, ui: &mut egui::Ui) -> Option<usize> {
    use egui_extras::{Column, TableBuilder};
    let mut clicked = None;
    ui.weak("Click a changed pair to compare its two frames.");
    // Wider than the pane, the list scrolls sideways (as the browser's): no column cut off unseen.
    egui::ScrollArea::horizontal().id_salt("pairs_columns").auto_shrink(false).show(ui, |ui| {
        ui.push_id("pairs", |ui| {
            ui.style_mut().interaction.selectable_labels = false;
            ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
            TableBuilder::new(ui)
                .striped(true)
                .sense(egui::Sense::click())
                .column(Column::exact(110.0))
                .column(Column::exact(90.0))
                .column(Column::exact(90.0))
                .column(Column::exact(220.0))
                .column(Column::remainder().at_least(120.0).clip(true))
                .header(20.0, |mut h| {
                    for name in ["pair", "frame in A", "frame in B", "type", "collection"] {
                        h.col(|ui| {
                            ui.strong(name);
                        });
                    }
                })
                .body(|body| {
                    body.rows(18.0, d.shown.len(), |mut row| {
                        let Some(&i) = d.shown.get(row.index()) else { return };
                        let i = i as usize;
                        let r = &d.pairs.rows[i];
                        row.set_selected(d.selected == Some(i));
                        let (words, tone) = pair_words(r.kind);
                        row.col(|ui| {
                            ui.colored_label(tone.color(ui), words);
                        });
                        row.col(|ui| {
                            ui.monospace(frame_words(r.a()));
                        });
                        row.col(|ui| {
                            ui.monospace(frame_words(r.b()));
                        });
                        row.col(|ui| {
                            ui.label(d.pairs.type_of(r));
                        });
                        row.col(|ui| {
                            ui.label(d.pairs.collection_of(r));
                        });
                        if row.response().clicked() {
                            clicked = Some(i);
                        }
                    });
                });
        });
    });
    clicked
}
