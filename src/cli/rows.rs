//! The rows of a listing or an export, in frame order, each read with no more than it needs:
//! what the filter tests for a row it drops, everything a row shows for a row it keeps.
//!
//! Owns: choosing how each stretch of rows is read. Must never: hand out a kept row read with
//! less than [`Detail::Full`], or change which rows a filter keeps.

use super::inspect::Opened;
use crate::dump::view::FrameView;
use crate::wal::Detail;
use std::ops::ControlFlow;

/// Rows per stretch: how often [`for_each_row`] decides again how to read the rows.
const STRETCH: usize = 1 << 17;

/// Every frame's view, in frame order, with whether the filter keeps it, `map`ped on every
/// core. A kept row is read in full (the summary, time and id it shows). With a filter, each row
/// is read with what the filter needs and read again in full only when it is kept, which
/// suits a filter that keeps few rows; after a stretch of rows mostly kept, the next stretch
/// is read in full at once (reading most rows twice costs more than reading all in full).
pub(super) fn for_each_row<T: Send>(
    o: &Opened,
    map: impl Fn(FrameView, bool) -> T + Sync,
    each: impl FnMut(T) -> ControlFlow<()>,
) -> ControlFlow<()> {
    for_each_row_in(o, STRETCH, map, each).0
}

/// [`for_each_row`] in stretches of `stretch` rows; also says how many stretches were read in
/// full at once.
fn for_each_row_in<T: Send>(
    o: &Opened,
    stretch: usize,
    map: impl Fn(FrameView, bool) -> T + Sync,
    mut each: impl FnMut(T) -> ControlFlow<()>,
) -> (ControlFlow<()>, usize) {
    let d = &o.dump;
    let narrow = if o.filter.is_empty() { Detail::Full } else { o.filter.detail() };
    let (mut detail, mut read_in_full) = (narrow, 0);
    let mut start = 0;
    while start < d.frame_count() {
        let rows = start..(start + stretch).min(d.frame_count());
        let len = rows.len();
        let read = |v: FrameView| {
            let keep = o.filter.matches(&v);
            let full = match (keep, detail) {
                (true, Detail::Counts) => {
                    d.frame_at(v.index, v.offset).map(|loc| o.decoder.view_of(d, loc, Detail::Full))
                }
                _ => None,
            };
            (keep, map(full.unwrap_or(v), keep))
        };
        let mut kept = 0;
        let flow = crate::dump::scan::for_each_view(d, &o.decoder, rows, detail, read, |(keep, row)| {
            kept += usize::from(keep);
            each(row)
        });
        if flow.is_break() {
            return (flow, read_in_full);
        }
        read_in_full += usize::from(detail == Detail::Full && narrow != Detail::Full);
        detail = if kept * 2 > len { Detail::Full } else { narrow };
        start += len;
    }
    (ControlFlow::Continue(()), read_in_full)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::inspect::{DumpArgs, open};
    use crate::dump::SyncPolicy;
    use crate::dump::filter::FrameFilter;
    use crate::schema::SchemaSet;
    use crate::sim::sample::write_milvus_dump;

    /// Whatever the stretches and however they are read, the rows are those of reading every
    /// row in full and filtering: the same rows kept, each in full, in order; a filter that
    /// keeps a middle run of rows has stretches read both ways, and a stop stops.
    #[test]
    fn rows_are_those_of_reading_every_row_in_full() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("d.dump");
        let set = SchemaSet::builtin();
        write_milvus_dump(set.pool(), &path, 3000, 7, SyncPolicy::default(), None).expect("sample dump");
        let mut o = open(&path, &DumpArgs::default()).expect("open");
        o.dump.wait_indexed();
        let every: Vec<FrameView> = (0..o.dump.frame_count())
            .filter_map(|i| o.decoder.view(&o.dump, i).map(|v| (*v).clone()))
            .collect();
        assert_eq!(every.len(), 3000);
        let tt =
            |i: usize| every[i].wal.as_ref().and_then(|w| w.timetick).expect("a WAL row with a timetick");
        let middle = FrameFilter { tt_from: Some(tt(1000)), tt_to: Some(tt(2000)), ..FrameFilter::default() };
        let inserts = FrameFilter::parse("type=Insert").expect("filter");
        let deletes = FrameFilter::parse("type=Delete").expect("filter");
        for (filter, read_in_full) in
            [(middle, true), (inserts, true), (deletes, false), (FrameFilter::default(), false)]
        {
            let want: Vec<(bool, FrameView)> = every.iter().map(|v| (filter.matches(v), v.clone())).collect();
            o.filter = filter.clone();
            for stretch in [64, 333, 5000] {
                let mut got = Vec::new();
                let (flow, full) = for_each_row_in(
                    &o,
                    stretch,
                    |v, keep| (keep, v),
                    |row| {
                        got.push(row);
                        ControlFlow::Continue(())
                    },
                );
                assert!(flow.is_continue());
                let (kept, want_kept) = (got.iter().filter(|r| r.0), want.iter().filter(|r| r.0));
                assert!(kept.eq(want_kept), "{filter:?}, stretches of {stretch}: the kept rows differ");
                assert!(got.iter().map(|r| (r.0, r.1.index)).eq(want.iter().map(|r| (r.0, r.1.index))));
                if stretch < 1000 {
                    assert_eq!(
                        full > 0,
                        read_in_full,
                        "{filter:?}, stretches of {stretch}: {full} read in full"
                    );
                }
            }
        }
        let mut seen = 0;
        let (flow, _) = for_each_row_in(
            &o,
            64,
            |_, _| (),
            |()| {
                seen += 1;
                if seen == 100 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
            },
        );
        assert!(flow.is_break() && seen == 100);
    }
}
