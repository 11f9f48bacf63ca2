//! What the timeline derives from the lanes' columns: transactions as spans, DDL markers, gaps.
//!
//! The gap rule: on each lane, a jump between two successive frames' times is a gap when it is
//! longer than both [`GAP_MIN_MS`] (one second; [`super::LoadOptions::gap_min_ms`] changes it)
//! and [`GAP_FACTOR`] times the lane's median spacing between successive frames that are not in
//! the same millisecond. A lane that writes every few milliseconds thus shows a pause of a
//! second; a lane that writes once a minute shows only pauses of twenty minutes and more.
//!
//! Must never: read a dump (everything here is in the columns).

use super::{DdlMark, Gap, LoadOptions, NONE, Timeline, TxnEnd, TxnSpan};
use crate::time::timetick_to_millis;
use crate::wal::TypeCategory;
use crate::wal::category::{BEGIN_TXN, COMMIT_TXN, ROLLBACK_TXN};
use std::collections::HashMap;

/// The gap rule's floor, in milliseconds.
pub const GAP_MIN_MS: u64 = 1000;
/// The gap rule's factor over the lane's median spacing.
pub const GAP_FACTOR: u64 = 20;

pub(super) fn derive(t: &mut Timeline, options: &LoadOptions) {
    let floor = options.gap_min_ms.unwrap_or(GAP_MIN_MS);
    for k in 0..t.lanes.len() {
        txns(t, k);
        ddl(t, k);
        gaps(t, k, floor);
    }
    t.txns.sort_by_key(|s| (s.lane, s.begin_tt, s.id));
}

fn txns(t: &mut Timeline, k: usize) {
    let lane = &t.lanes[k];
    let mut open: HashMap<i64, usize> = HashMap::new();
    let mut spans: Vec<TxnSpan> = Vec::new();
    for i in 0..lane.len() {
        let (id, ty, tt) = (lane.txn[i], lane.ty[i], lane.tt[i]);
        if id == NONE {
            continue;
        }
        let s = *open.entry(id).or_insert_with(|| {
            spans.push(TxnSpan {
                lane: k,
                id,
                begin_tt: tt,
                end_tt: tt,
                end: TxnEnd::Open,
                frames: 0,
                has_begin: false,
                collection: None,
                first_frame: lane.frame[i],
            });
            spans.len() - 1
        });
        let span = &mut spans[s];
        span.frames += 1;
        span.end_tt = span.end_tt.max(tt);
        span.first_frame = span.first_frame.min(lane.frame[i]);
        if span.collection.is_none() && lane.collection[i] != NONE {
            span.collection = Some(lane.collection[i]);
        }
        match ty {
            BEGIN_TXN => {
                span.has_begin = true;
                span.begin_tt = span.begin_tt.min(tt);
            }
            COMMIT_TXN | ROLLBACK_TXN => {
                span.end = if ty == COMMIT_TXN { TxnEnd::Committed } else { TxnEnd::RolledBack };
                // A later transaction may reuse the id: it starts a new span.
                open.remove(&id);
            }
            _ => {}
        }
    }
    t.txns.extend(spans);
}

fn ddl(t: &mut Timeline, k: usize) {
    let lane = &t.lanes[k];
    let ddl = TypeCategory::Ddl.index() as u8;
    for i in (0..lane.len()).filter(|&i| lane.cat[i] == ddl) {
        let ty = lane.ty[i];
        t.ddl.push(DdlMark {
            lane: k,
            at: i,
            frame: lane.frame[i],
            tt: lane.tt[i],
            label: t.type_names.get(&ty).cloned().unwrap_or_else(|| ty.to_string()),
            collection: (lane.collection[i] != NONE).then_some(lane.collection[i]),
        });
    }
}

fn gaps(t: &mut Timeline, k: usize, floor: u64) {
    let lane = &mut t.lanes[k];
    let ms: Vec<u64> = lane.tt.iter().map(|&tt| timetick_to_millis(tt)).collect();
    let mut steps: Vec<u64> = ms.windows(2).map(|w| w[1] - w[0]).filter(|&d| d > 0).collect();
    let median = if steps.is_empty() {
        0
    } else {
        let mid = steps.len() / 2;
        *steps.select_nth_unstable(mid).1
    };
    let threshold = floor.max(median.saturating_mul(GAP_FACTOR));
    lane.gap_threshold_ms = threshold;
    for i in 1..ms.len() {
        if ms[i] - ms[i - 1] > threshold {
            t.gaps.push(Gap {
                lane: k,
                from_tt: lane.tt[i - 1],
                to_tt: lane.tt[i],
                after_frame: lane.frame[i - 1],
            });
        }
    }
}
