//! The rows of a file tab's message list: the frames shown (every frame, or the filter's
//! matches) and each damaged range as a row of its own between the frames around its bytes (the
//! way Wireshark lists a malformed packet), in the chosen order; selecting a row of either kind
//! and moving the selection with the arrow keys.
//!
//! Owns: the mapping from a shown row to what it shows, through [`ListRows`] (O(log n) per row,
//! one entry per damaged range), kept until the frames, the matches or the damaged ranges change.
//! Must never: list every row (a million frames cost a frame), or show a damaged range a filter
//! would not keep (`status=bad` keeps them; `type=Insert` does not).

use super::FileTab;
use crate::dump::{ListRow, ListRows, Problem};
use std::sync::Arc;

/// What one row of the list shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowItem {
    /// Frame number `n`.
    Frame(usize),
    /// Bytes no frame covers: where, how long, and why.
    Damaged(Problem),
}

/// What the list's rows were computed from: when any of it changes they are computed again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListKey {
    frames: usize,
    damaged: usize,
    indexed: bool,
    scan: u64,
    matches: usize,
    scanned: bool,
}

impl FileTab {
    fn list_key(&self) -> ListKey {
        let index = self.dump.index();
        ListKey {
            frames: index.frame_count(),
            damaged: index.problem_count(),
            indexed: index.is_done(),
            scan: self.scan_generation,
            matches: self.scan.as_ref().map_or(0, |s| s.match_count()),
            scanned: self.scan.as_ref().is_some_and(|s| s.is_done()),
        }
    }

    /// The list's rows before sorting: frames and the damaged ranges the filter keeps.
    pub fn list(&self) -> Arc<ListRows> {
        let key = self.list_key();
        if let Ok(cache) = self.list_cache.lock()
            && let Some((k, rows)) = cache.as_ref()
            && *k == key
        {
            return rows.clone();
        }
        let index = self.dump.index();
        let rows = Arc::new(match &self.scan {
            None => ListRows::all(&self.dump),
            Some(s) => {
                let kept =
                    self.dump.problems().into_iter().filter(|p| s.filter.keeps_damaged(&p.reason)).collect();
                ListRows::with(s.match_count(), kept, |offset| s.matches_before(index.frames_before(offset)))
            }
        });
        if let Ok(mut cache) = self.list_cache.lock() {
            *cache = Some((key, rows.clone()));
        }
        rows
    }

    /// Rows shown: every frame, or the filter's matches so far, and the damaged ranges kept.
    pub fn row_count(&self) -> usize {
        self.list().len()
    }

    /// What shown rows `range` hold, in the chosen order.
    pub fn items(&self, range: std::ops::Range<usize>) -> Vec<RowItem> {
        let list = self.list();
        let count = list.len();
        range
            .filter_map(|row| self.order.unsorted_row(row, count))
            .filter_map(|r| self.item(&list, r))
            .collect()
    }

    /// Frame numbers of shown rows `range`, in the chosen order (damaged rows left out).
    pub fn frames(&self, range: std::ops::Range<usize>) -> Vec<usize> {
        self.items(range)
            .into_iter()
            .filter_map(|i| match i {
                RowItem::Frame(f) => Some(f),
                RowItem::Damaged(_) => None,
            })
            .collect()
    }

    /// What unsorted row `row` holds.
    fn item(&self, list: &ListRows, row: usize) -> Option<RowItem> {
        match list.row(row)? {
            ListRow::Frame(n) => self.nth_frame(n).map(RowItem::Frame),
            ListRow::Damaged(d) => list.damaged_range(d).cloned().map(RowItem::Damaged),
        }
    }

    /// The frame number of the `n`th frame shown (every frame, or the `n`th match).
    pub(crate) fn nth_frame(&self, n: usize) -> Option<usize> {
        match &self.scan {
            Some(s) => s.matches(n..n + 1).first().copied(),
            None => (n < self.dump.frame_count()).then_some(n),
        }
    }

    /// Frame numbers of every frame row before sorting (what a size sort orders).
    pub(crate) fn all_frames(&self) -> Vec<usize> {
        match &self.scan {
            Some(s) => s.matches(0..s.match_count()),
            None => (0..self.dump.frame_count()).collect(),
        }
    }

    /// The unsorted row of what is selected, if it is shown.
    fn selected_row(&self, list: &ListRows) -> Option<usize> {
        if let Some(p) = &self.selected_damaged {
            let n = list.damaged().position(|q| q.offset == p.offset)?;
            return list.row_of_damaged(n);
        }
        let frame = self.selected?;
        let shown = match &self.scan {
            Some(s) => s.position(frame)?,
            None => frame,
        };
        list.row_of_frame(shown)
    }

    /// Whether `item` is what is selected.
    pub fn is_selected(&self, item: &RowItem) -> bool {
        match item {
            RowItem::Frame(f) => self.selected_damaged.is_none() && self.selected == Some(*f),
            RowItem::Damaged(p) => self.selected_damaged.as_ref().is_some_and(|q| q.offset == p.offset),
        }
    }

    /// What is shown `delta` rows away from the selection (arrow keys), without listing the rows.
    pub fn neighbour(&self, delta: i64) -> Option<RowItem> {
        let list = self.list();
        let count = list.len();
        let row = self.order.shown_row(self.selected_row(&list)?, count)? as i64 + delta;
        if row < 0 {
            return None;
        }
        self.items(row as usize..row as usize + 1).into_iter().next()
    }

    /// Selects what a row holds: a frame (decoded), or a damaged range (its words and bytes).
    pub fn select_item(&mut self, item: RowItem) {
        match item {
            RowItem::Frame(f) => self.select(f),
            RowItem::Damaged(p) => {
                self.drop_pending_selection();
                self.selected = None;
                self.detail = None;
                self.selected_damaged = Some(p);
            }
        }
    }

    /// The bytes of a damaged range, as far as the file still has them.
    pub fn damaged_bytes(&self, p: &Problem) -> &[u8] {
        let bytes = self.dump.bytes();
        let start = (p.offset as usize).min(bytes.len());
        let end = (p.offset.saturating_add(p.len) as usize).min(bytes.len());
        &bytes[start..end]
    }
}
