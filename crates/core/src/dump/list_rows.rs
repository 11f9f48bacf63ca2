//! The rows of a dump's message list: the frames shown (all of them, or a filter's matches)
//! and each damaged range as a row of its own at its place in the file, the way Wireshark
//! lists a malformed packet, so a damaged range is seen, selected and filtered like a frame
//! (`status=bad` keeps it).
//!
//! Owns: the mapping between a list row and what it shows, in O(log n) per row. Must never:
//! hold more than one entry per damaged range (a million-frame dump's rows are not stored), or
//! put a damaged row anywhere but between the frames around its bytes.

use super::index::Problem;
use super::reader::DumpFile;

/// What one row of the list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListRow {
    /// The `n`th frame shown (in the frames given to [`ListRows`]: every frame, or the
    /// filter's matches in file order).
    Frame(usize),
    /// The `n`th damaged range (in [`ListRows::damaged`]).
    Damaged(usize),
}

/// The rows: `frames` frames shown, and the damaged ranges among them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListRows {
    frames: usize,
    /// The damaged ranges in file order, each with how many shown frames come before it.
    damaged: Vec<(usize, Problem)>,
}

impl ListRows {
    /// Every frame of `dump`, and every damaged range it has so far.
    pub fn all(dump: &DumpFile) -> ListRows {
        let index = dump.index();
        let frames = index.frame_count();
        ListRows::with(frames, dump.problems(), |offset| index.frames_before(offset).min(frames))
    }

    /// The frames `shown` (frame numbers in file order: a filter's matches) and, when
    /// `with_damaged` (the filter keeps bad rows, or there is no filter), the damaged ranges.
    pub fn filtered(dump: &DumpFile, shown: &[usize], with_damaged: bool) -> ListRows {
        let problems = if with_damaged { dump.problems() } else { Vec::new() };
        let index = dump.index();
        ListRows::with(shown.len(), problems, |offset| {
            let before = index.frames_before(offset);
            shown.partition_point(|&f| f < before)
        })
    }

    /// `frames` rows of frames and the damaged ranges `problems`, each placed after
    /// `shown_before(its offset)` frames.
    pub fn with(frames: usize, mut problems: Vec<Problem>, shown_before: impl Fn(u64) -> usize) -> ListRows {
        problems.sort_by_key(|p| p.offset);
        let damaged = problems.into_iter().map(|p| (shown_before(p.offset).min(frames), p)).collect();
        ListRows { frames, damaged }
    }

    pub fn len(&self) -> usize {
        self.frames + self.damaged.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The damaged ranges, in file order.
    pub fn damaged(&self) -> impl ExactSizeIterator<Item = &Problem> {
        self.damaged.iter().map(|(_, p)| p)
    }

    /// Damaged range `n`.
    pub fn damaged_range(&self, n: usize) -> Option<&Problem> {
        self.damaged.get(n).map(|(_, p)| p)
    }

    /// The row of damaged range `n` (its place: after the frames before it, and after the
    /// damaged ranges before it).
    fn damaged_row(&self, n: usize) -> usize {
        self.damaged[n].0 + n
    }

    /// What row `row` shows; None past the end.
    pub fn row(&self, row: usize) -> Option<ListRow> {
        if row >= self.len() {
            return None;
        }
        // The first damaged range at or after `row`; the `n` before it shift the frames down.
        let n = self.first_damaged_at_or_after(row);
        if self.row_of_damaged(n) == Some(row) {
            Some(ListRow::Damaged(n))
        } else {
            Some(ListRow::Frame(row - n))
        }
    }

    /// The row showing frame `shown` (the `shown`th of the frames given).
    pub fn row_of_frame(&self, shown: usize) -> Option<usize> {
        (shown < self.frames).then(|| shown + self.damaged.partition_point(|(before, _)| *before <= shown))
    }

    /// The row showing damaged range `n`.
    pub fn row_of_damaged(&self, n: usize) -> Option<usize> {
        (n < self.damaged.len()).then(|| self.damaged_row(n))
    }

    /// The first damaged range whose row is `row` or later (their rows strictly increase,
    /// so a binary search finds it); the count of them when there is none.
    fn first_damaged_at_or_after(&self, row: usize) -> usize {
        let (mut lo, mut hi) = (0, self.damaged.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.damaged_row(mid) < row { lo = mid + 1 } else { hi = mid }
        }
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(offset: u64) -> Problem {
        Problem { offset, len: 1, truncated: false, reason: String::new() }
    }

    /// Every row, as a plain merge of frames and damaged ranges by place would list them.
    fn naive(frames: usize, befores: &[usize]) -> Vec<ListRow> {
        let mut sorted = befores.to_vec();
        sorted.sort();
        let mut out = Vec::new();
        let mut d = 0;
        for f in 0..=frames {
            while d < sorted.len() && sorted[d].min(frames) == f {
                out.push(ListRow::Damaged(d));
                d += 1;
            }
            if f < frames {
                out.push(ListRow::Frame(f));
            }
        }
        out
    }

    /// Against the plain merge, on random layouts (damaged ranges first, last, side by side,
    /// none, only): each row maps to what the merge lists, and back.
    #[test]
    fn rows_map_both_ways_as_a_plain_merge_lists_them() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        for _ in 0..2_000 {
            let frames = next(40);
            let befores: Vec<usize> = (0..next(6)).map(|_| next(frames + 2)).collect();
            let rows =
                ListRows::with(frames, befores.iter().map(|b| problem(*b as u64)).collect(), |o| o as usize);
            let want = naive(frames, &befores);
            assert_eq!(rows.len(), want.len());
            for (r, w) in want.iter().enumerate() {
                assert_eq!(rows.row(r), Some(*w), "row {r} of {frames} frames, damaged after {befores:?}");
                let back = match w {
                    ListRow::Frame(f) => rows.row_of_frame(*f),
                    ListRow::Damaged(d) => rows.row_of_damaged(*d),
                };
                assert_eq!(back, Some(r));
            }
            assert_eq!(rows.row(want.len()), None);
            assert_eq!(rows.row_of_frame(frames), None);
        }
    }

    /// The sample with 64 bytes of garbage after frame 19: the damaged range is row 20, between
    /// frames 19 and 20, with its bytes; a filter that keeps frames 5 and 30 puts it between them,
    /// and one that does not keep bad rows leaves it out.
    #[test]
    fn a_damaged_range_is_a_row_between_the_frames_around_it() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/samples/milvus-40-garbage.dump");
        let dump = DumpFile::open(std::path::Path::new(path), Default::default()).expect("the sample");
        dump.wait_indexed();
        let rows = ListRows::all(&dump);
        assert_eq!(rows.len(), 41);
        assert_eq!(rows.row(19), Some(ListRow::Frame(19)));
        assert_eq!(rows.row(20), Some(ListRow::Damaged(0)));
        assert_eq!(rows.row(21), Some(ListRow::Frame(20)));
        let bad = rows.damaged_range(0).expect("the damaged range");
        assert_eq!((bad.offset, bad.len), (34108, 64));
        let some = ListRows::filtered(&dump, &[5, 30], true);
        assert_eq!(
            (0..some.len()).map(|r| some.row(r).unwrap()).collect::<Vec<_>>(),
            [ListRow::Frame(0), ListRow::Damaged(0), ListRow::Frame(1)]
        );
        assert_eq!(ListRows::filtered(&dump, &[5, 30], false).len(), 2);
    }
}
