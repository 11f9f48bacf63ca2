//! Counts per type category in N bins over a time range, fast enough to compute for every
//! drawn frame over a million frames: each bin's bounds are found by binary search over the
//! lane's sorted timeticks, and the frames between are counted from per-block totals (blocks
//! of [`BLOCK`] frames, counted once at load), only the partial blocks at a bin's ends frame by
//! frame. With a filter, every frame in the range is looked at (still one pass).
//!
//! Must never: allocate per frame.

use super::{Filter, Lane};
use crate::wal::TypeCategory;

/// Frames per precounted block.
pub const BLOCK: usize = 64;

/// One bin: frames per [`TypeCategory`] (indexed by [`TypeCategory::index`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bin {
    pub counts: [u32; 6],
}

impl Bin {
    pub fn total(&self) -> u32 {
        self.counts.iter().sum()
    }

    pub fn count(&self, c: TypeCategory) -> u32 {
        self.counts[c.index()]
    }

    /// The category with the most frames (ties: the first in legend order), None when empty.
    pub fn main(&self) -> Option<TypeCategory> {
        let (i, n) = self.counts.iter().enumerate().max_by_key(|&(i, n)| (*n, std::cmp::Reverse(i)))?;
        (*n > 0).then(|| TypeCategory::ALL[i])
    }
}

/// Per-block category totals of a category column.
pub(crate) fn blocks_of(cat: &[u8]) -> Vec<[u32; 6]> {
    cat.chunks(BLOCK)
        .map(|b| {
            let mut c = [0u32; 6];
            for &x in b {
                c[usize::from(x).min(5)] += 1;
            }
            c
        })
        .collect()
}

impl Lane {
    /// Counts of places `a..b` by category, from the block totals where whole blocks lie.
    fn count_places(&self, a: usize, b: usize, out: &mut [u32; 6]) {
        let one_by_one = |r: std::ops::Range<usize>, out: &mut [u32; 6]| {
            for &c in &self.cat[r] {
                out[usize::from(c).min(5)] += 1;
            }
        };
        let (first_block, last_block) = (a.div_ceil(BLOCK), b / BLOCK);
        if first_block >= last_block {
            one_by_one(a..b, out);
            return;
        }
        one_by_one(a..first_block * BLOCK, out);
        for blk in &self.blocks[first_block..last_block] {
            for (o, n) in out.iter_mut().zip(blk) {
                *o += n;
            }
        }
        one_by_one(last_block * BLOCK..b, out);
    }

    /// `n` bins of equal time over `from..to` (timeticks), counting the frames that pass
    /// `filter`. Every frame in the range is in exactly one bin.
    pub fn bins(&self, from: u64, to: u64, n: usize, filter: &Filter) -> Vec<Bin> {
        let mut out = vec![Bin::default(); n];
        if n == 0 || to <= from {
            return out;
        }
        let width = u128::from(to - from);
        let edge = |k: usize| from + (width * k as u128 / n as u128) as u64;
        let mut a = self.tt.partition_point(|&t| t < from);
        for (k, bin) in out.iter_mut().enumerate() {
            let end = if k + 1 == n { to } else { edge(k + 1) };
            // Bins are consecutive: search only what is left.
            let b = a + self.tt[a..].partition_point(|&t| t < end);
            if filter.is_empty() {
                self.count_places(a, b, &mut bin.counts);
            } else {
                for i in a..b {
                    if self.keeps(i, filter) {
                        bin.counts[usize::from(self.cat[i]).min(5)] += 1;
                    }
                }
            }
            a = b;
        }
        out
    }
}
