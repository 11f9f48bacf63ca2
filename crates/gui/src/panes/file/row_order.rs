//! The order of the message list: by frame number (which is also file offset order) either
//! way, or by frame size, whose permutation a job computes ([`SizeSort::run`]) once the rows to
//! sort are all known and hands back as its result ([`RowOrder::take`]). Only columns that need
//! no decoding are sortable. Must never: sort on the UI thread, take a size order made for
//! another set of rows, or hold more than one `u32` per shown row.

use crate::dump::{DumpFile, ListRow, ListRows};
use std::sync::Arc;

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
    sorted: Option<Arc<Permutation>>,
    /// Which size order the list waits for: each new order (another column, other rows) is a
    /// new generation, so a late result for an old one is dropped.
    generation: u64,
}

/// A size order: the rows' permutation, both ways.
pub struct Permutation {
    to_unsorted: Vec<u32>,
    to_shown: Vec<u32>,
}

/// A size order to compute (a job runs it): the frames shown, in unsorted row order.
pub struct SizeSort {
    dump: Arc<DumpFile>,
    /// The frames listed, in unsorted order.
    base: Vec<usize>,
    /// The list's rows: those frames and the damaged ranges among them.
    list: ListRows,
    generation: u64,
}

/// A computed size order, for the generation it was asked for.
pub struct SizeOrder {
    generation: u64,
    permutation: Arc<Permutation>,
}

impl SizeSort {
    /// Sorts the rows by frame size (ties by row: stable). Reads every row's frame header.
    pub fn run(self) -> SizeOrder {
        let size = |row: usize| match self.list.row(row) {
            Some(ListRow::Frame(n)) => {
                self.base.get(n).and_then(|f| self.dump.frame(*f)).map_or(0, |l| l.header.total())
            }
            Some(ListRow::Damaged(d)) => self.list.damaged_range(d).map_or(0, |p| p.len),
            None => 0,
        };
        let mut keyed: Vec<(u64, u32)> = (0..self.list.len()).map(|row| (size(row), row as u32)).collect();
        keyed.sort_unstable();
        let to_unsorted: Vec<u32> = keyed.into_iter().map(|(_, row)| row).collect();
        let mut to_shown = vec![0u32; to_unsorted.len()];
        for (shown, row) in to_unsorted.iter().enumerate() {
            to_shown[*row as usize] = shown as u32;
        }
        SizeOrder {
            generation: self.generation,
            permutation: Arc::new(Permutation { to_unsorted, to_shown }),
        }
    }

    /// How many rows it sorts.
    pub fn rows(&self) -> usize {
        self.list.len()
    }
}

impl RowOrder {
    /// Whether rows show in a computed order (size) that is ready.
    fn permutation(&self) -> Option<Arc<Permutation>> {
        if self.column != SortColumn::Size {
            return None;
        }
        self.sorted.clone()
    }

    /// True while a size order is being computed.
    pub fn is_sorting(&self) -> bool {
        self.column == SortColumn::Size && self.permutation().is_none()
    }

    /// Sorts by `column`; the same column again flips the direction. `base` lists the frames to
    /// sort (every frame, or the filter's matches) and the list's rows (those frames and the
    /// damaged ranges among them: a damaged range sorts by its length, as a frame by its size).
    /// A size order is computed by the returned [`SizeSort`], which the app runs as a job; its
    /// result comes back through [`Self::take`].
    pub fn sort_by(
        &mut self,
        column: SortColumn,
        dump: Arc<DumpFile>,
        (base, list): (Vec<usize>, ListRows),
    ) -> Option<SizeSort> {
        if self.column == column {
            self.descending = !self.descending;
            return None;
        }
        self.column = column;
        self.descending = false;
        self.sorted = None;
        self.generation += 1;
        (column == SortColumn::Size).then(|| SizeSort { dump, base, list, generation: self.generation })
    }

    /// A size order came back: taken if it is the one the list waits for (else dropped: the
    /// rows or the column changed since it was asked for).
    pub fn take(&mut self, order: SizeOrder) -> bool {
        let wanted = self.column == SortColumn::Size && order.generation == self.generation;
        if wanted {
            self.sorted = Some(order.permutation);
        }
        wanted
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

    /// Back to frame number order, ascending (a size order still being computed is dropped
    /// when it comes back).
    pub fn reset(&mut self) {
        *self = RowOrder { generation: self.generation + 1, ..RowOrder::default() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(generation: u64, to_unsorted: Vec<u32>) -> SizeOrder {
        let mut to_shown = vec![0; to_unsorted.len()];
        for (shown, row) in to_unsorted.iter().enumerate() {
            to_shown[*row as usize] = shown as u32;
        }
        SizeOrder { generation, permutation: Arc::new(Permutation { to_unsorted, to_shown }) }
    }

    /// What `sort_by` would hand the job, without a dump: the generation it asks for.
    fn ask_size(o: &mut RowOrder) -> u64 {
        o.column = SortColumn::Size;
        o.descending = false;
        o.sorted = None;
        o.generation += 1;
        o.generation
    }

    #[test]
    fn a_size_order_is_taken_only_for_the_rows_it_was_asked_for() {
        let mut o = RowOrder::default();
        let first = ask_size(&mut o);
        assert!(o.is_sorting());
        // The filter changed (reset) and size order was asked again: the first result is late.
        o.reset();
        let second = ask_size(&mut o);
        assert!(!o.take(order(first, vec![1, 0, 2])), "a stale order was taken");
        assert!(o.is_sorting());
        assert!(o.take(order(second, vec![2, 0, 1])));
        assert_eq!(o.unsorted_row(0, 3), Some(2));
        assert_eq!(o.shown_row(2, 3), Some(0));
        // A reset drops a result still on its way.
        let third = ask_size(&mut o);
        o.reset();
        assert!(!o.take(order(third, vec![0, 1, 2])));
        assert_eq!(o.column, SortColumn::Number);
        assert_eq!(o.unsorted_row(0, 3), Some(0));
    }
}
