//! Counts over time for a plot, kept for hours in bounded memory: one series per partition
//! (sub-task) and one per table, each at most `cap` points. When a series is full, its older
//! half is thinned to every other point, so recent polls stay at full resolution and older ones
//! get coarser (each halving doubles the time a point stands for).
//!
//! The values are rows synced as walscope saw them: SyncTool's `count` plus what earlier
//! SyncTool processes had counted (a restart resets `count`, the series goes on). Must never:
//! grow without bound, or drop the newest point.

use std::collections::BTreeMap;

/// One series of (wall-clock ms, rows) points, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Series {
    points: Vec<(u64, u64)>,
    cap: usize,
}

impl Series {
    pub fn new(cap: usize) -> Series {
        Series { points: Vec::new(), cap: cap.max(8) }
    }

    pub fn push(&mut self, at_ms: u64, value: u64) {
        if self.points.last().is_some_and(|(t, _)| *t >= at_ms) {
            if let Some(last) = self.points.last_mut() {
                last.1 = value;
            }
            return;
        }
        self.points.push((at_ms, value));
        if self.points.len() > self.cap {
            let half = self.points.len() / 2;
            let older: Vec<(u64, u64)> = self.points[..half].iter().copied().step_by(2).collect();
            self.points.splice(..half, older);
        }
    }

    pub fn points(&self) -> &[(u64, u64)] {
        &self.points
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
}

/// Every series of one SyncTool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trends {
    pub partitions: BTreeMap<(u32, u32), Series>,
    pub tables: BTreeMap<u32, Series>,
    cap: usize,
}

impl Trends {
    pub fn new(cap: usize) -> Trends {
        Trends { partitions: BTreeMap::new(), tables: BTreeMap::new(), cap }
    }

    /// One poll: rows per (tid, pid); partitions and tables no longer listed are forgotten.
    pub fn record(&mut self, at_ms: u64, rows: &[((u32, u32), u64)]) {
        let cap = self.cap;
        self.partitions.retain(|k, _| rows.iter().any(|(r, _)| r == k));
        self.tables.retain(|tid, _| rows.iter().any(|((t, _), _)| t == tid));
        let mut per_table: BTreeMap<u32, u64> = BTreeMap::new();
        for (key, v) in rows {
            self.partitions.entry(*key).or_insert_with(|| Series::new(cap)).push(at_ms, *v);
            *per_table.entry(key.0).or_default() += v;
        }
        for (tid, v) in per_table {
            self.tables.entry(tid).or_insert_with(|| Series::new(cap)).push(at_ms, v);
        }
    }

    pub fn partition(&self, tid: u32, pid: u32) -> Option<&Series> {
        self.partitions.get(&(tid, pid))
    }

    pub fn table(&self, tid: u32) -> Option<&Series> {
        self.tables.get(&tid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hours_of_polls_stay_bounded_and_keep_the_newest() {
        let mut s = Series::new(64);
        // Six hours of 2 s polls.
        for i in 0..10_800u64 {
            s.push(i * 2_000, i);
            assert!(s.len() <= 64);
        }
        let p = s.points();
        assert_eq!(p.last(), Some(&(10_799 * 2_000, 10_799)));
        assert_eq!(p.first().map(|x| x.0), Some(0), "the oldest point survives thinning");
        assert!(p.windows(2).all(|w| w[0].0 < w[1].0));
        // Recent points are dense, old ones sparse.
        let recent = p[p.len() - 2].0.abs_diff(p[p.len() - 1].0);
        let old = p[1].0 - p[0].0;
        assert!(old > 100 * recent, "old {old} recent {recent}");

        let mut t = Trends::new(16);
        t.record(0, &[((2, 0), 5), ((2, 1), 7), ((5, 0), 1)]);
        t.record(1_000, &[((2, 0), 6), ((2, 1), 9)]);
        assert_eq!(t.table(2).unwrap().points(), &[(0, 12), (1_000, 15)]);
        assert!(t.table(5).is_none() && t.partition(5, 0).is_none(), "a deleted task is forgotten");
    }
}
