//! The order of the message list: by frame number (which is also file offset order) either
//! way, or by frame size, whose permutation is computed on a worker thread once the rows to
//! sort are all known. Only columns that need no decoding are sortable. Must never: sort on the
//! UI thread, or hold more than one `u32` per shown row.

use crate::dump::background::Wake;
use crate::dump::{DumpFile, ListRow, ListRows};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortColumn {
    /// Frame number; file offset order is the same.
    #[default]
    Number,
    Size,
}

#[derive(Default)]
pub struct RowOrder {
    pub column: SortColumn,
    pub descending: bool,
    /// For size order: row → position in the unsorted rows, ascending by size, and its
    /// inverse. None while it is computed (the list keeps number order meanwhile).
    sorted: Arc<Mutex<Option<Arc<Permutation>>>>,
}

struct Permutation {
    to_unsorted: Vec<u32>,
    to_shown: Vec<u32>,
}

impl RowOrder {
    /// Whether rows show in a computed order (size) that is ready.
    fn permutation(&self) -> Option<Arc<Permutation>> {
        if self.column != SortColumn::Size {
            return None;
        }
        self.sorted.lock().ok()?.clone()
    }

    /// True while a size order is being computed.
    pub fn is_sorting(&self) -> bool {
        self.column == SortColumn::Size && self.permutation().is_none()
    }

    /// Sorts by `column`; the same column again flips the direction. `base` lists the frames to
    /// sort (every frame, or the filter's matches) and the list's rows (those frames and the
    /// damaged ranges among them: a damaged range sorts by its length, as a frame by its size).
    /// A size order is computed by the returned work, which the caller runs off the UI thread
    /// (the app runs it as a job).
    pub fn sort_by(
        &mut self,
        column: SortColumn,
        dump: Arc<DumpFile>,
        (base, list): (Vec<usize>, ListRows),
        wake: Wake,
    ) -> Option<Box<dyn FnOnce() + Send>> {
        if self.column == column {
            self.descending = !self.descending;
            return None;
        }
        self.column = column;
        self.descending = false;
        self.sorted = Arc::default();
        if column == SortColumn::Size {
            let slot = self.sorted.clone();
            return Some(Box::new(move || {
                let size = |row: usize| match list.row(row) {
                    Some(ListRow::Frame(n)) => {
                        base.get(n).and_then(|f| dump.frame(*f)).map_or(0, |l| l.header.total())
                    }
                    Some(ListRow::Damaged(d)) => list.damaged_range(d).map_or(0, |p| p.len),
                    None => 0,
                };
                let mut keyed: Vec<(u64, u32)> = (0..list.len()).map(|row| (size(row), row as u32)).collect();
                keyed.sort_unstable();
                let to_unsorted: Vec<u32> = keyed.into_iter().map(|(_, row)| row).collect();
                let mut to_shown = vec![0u32; to_unsorted.len()];
                for (shown, row) in to_unsorted.iter().enumerate() {
                    to_shown[*row as usize] = shown as u32;
                }
                if let Ok(mut s) = slot.lock() {
                    *s = Some(Arc::new(Permutation { to_unsorted, to_shown }));
                }
                wake();
            }));
        }
        None
    }

    /// The unsorted row shown at `row` out of `count`.
    pub fn unsorted_row(&self, row: usize, count: usize) -> Option<usize> {
        if row >= count {
            return None;
        }
        let r = if self.descending { count - 1 - row } else { row };
        match self.permutation() {
            Some(p) if p.to_unsorted.len() == count => p.to_unsorted.get(r).map(|x| *x as usize),
            _ => Some(r),
        }
    }

    /// Where unsorted row `unsorted` is shown (the inverse of [`Self::unsorted_row`]).
    pub fn shown_row(&self, unsorted: usize, count: usize) -> Option<usize> {
        if unsorted >= count {
            return None;
        }
        let r = match self.permutation() {
            Some(p) if p.to_shown.len() == count => *p.to_shown.get(unsorted)? as usize,
            _ => unsorted,
        };
        Some(if self.descending { count - 1 - r } else { r })
    }

    /// Back to frame number order, ascending.
    pub fn reset(&mut self) {
        *self = RowOrder::default();
    }
}
