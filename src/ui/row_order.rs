//! The order of the message list: by frame number (which is also file offset order) either
//! way, or by frame size, whose permutation is computed on a worker thread once the rows to
//! sort are all known. Only columns that need no decoding are sortable. Must never: sort on the
//! UI thread, or hold more than one `u32` per shown row.

use crate::dump::DumpFile;
use crate::dump::background::Wake;
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
    /// For size order: row → position in the unsorted rows, ascending by size. None while it
    /// is computed (the list keeps number order meanwhile).
    sorted: Arc<Mutex<Option<Arc<Vec<u32>>>>>,
    /// How many rows the permutation was built for.
    built_for: usize,
}

impl RowOrder {
    /// Whether rows show in a computed order (size) that is ready.
    fn permutation(&self) -> Option<Arc<Vec<u32>>> {
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
    /// sort (every frame, or the filter's matches) and is only read on the worker thread.
    pub fn sort_by(&mut self, column: SortColumn, dump: Arc<DumpFile>, base: Vec<usize>, wake: Wake) {
        if self.column == column {
            self.descending = !self.descending;
            return;
        }
        self.column = column;
        self.descending = false;
        self.sorted = Arc::default();
        self.built_for = base.len();
        if column == SortColumn::Size {
            let slot = self.sorted.clone();
            let _ = std::thread::Builder::new().name("walscope-sort".into()).spawn(move || {
                let size = |f: usize| dump.frame(f).map_or(0, |l| l.header.total());
                let mut keyed: Vec<(u64, u32)> =
                    base.iter().enumerate().map(|(row, f)| (size(*f), row as u32)).collect();
                keyed.sort_unstable();
                let perm: Vec<u32> = keyed.into_iter().map(|(_, row)| row).collect();
                if let Ok(mut s) = slot.lock() {
                    *s = Some(Arc::new(perm));
                }
                wake();
            });
        }
    }

    /// The unsorted row shown at `row` out of `count`.
    pub fn unsorted_row(&self, row: usize, count: usize) -> Option<usize> {
        if row >= count {
            return None;
        }
        let r = if self.descending { count - 1 - row } else { row };
        match self.permutation() {
            Some(p) if p.len() == count => p.get(r).map(|x| *x as usize),
            _ => Some(r),
        }
    }

    /// Where unsorted row `unsorted` is shown (the inverse of [`Self::unsorted_row`]).
    pub fn shown_row(&self, unsorted: usize, count: usize) -> Option<usize> {
        if unsorted >= count {
            return None;
        }
        let r = match self.permutation() {
            Some(p) if p.len() == count => p.iter().position(|x| *x as usize == unsorted)?,
            _ => unsorted,
        };
        Some(if self.descending { count - 1 - r } else { r })
    }

    /// The size order was built for this many rows; a grown list needs a new one.
    pub fn is_stale(&self, count: usize) -> bool {
        self.column == SortColumn::Size && self.built_for != count
    }

    /// Back to frame number order, ascending.
    pub fn reset(&mut self) {
        *self = RowOrder::default();
    }
}
