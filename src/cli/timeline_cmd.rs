//! `walscope timeline DIR`: a salvage folder's history on one axis, for scripts (`--jsonl`: one
//! JSON object per line, each with a `"kind"`: `lane`, `txn`, `ddl`, `gap`, `damage`, `plan`,
//! `bin` with `--bins N`, and a closing `summary`) or as a short summary per lane. Times are UTC
//! in the one pattern beside the raw timetick. Read-only.
//!
//! Must never: write anything, or print a time in another zone or pattern.

use crate::fmt::counted;
use crate::time::format_timetick;
use crate::timeline::{Filter, LoadOptions, Timeline, load};
use crate::wal::TypeCategory;
use anyhow::{Result, anyhow};
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;

/// What `walscope timeline` was asked.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TimelineArgs {
    /// One JSON object per line (lanes, transactions, DDL, gaps, damage, plan, summary).
    #[arg(long)]
    pub jsonl: bool,
    /// Only frames, transactions and DDL of this collection id.
    #[arg(long, value_name = "ID")]
    pub collection: Option<i64>,
    /// Only frames of these types (names such as Insert, CreateCollection, or numbers);
    /// repeat or separate with commas.
    #[arg(long = "type", value_name = "T", value_delimiter = ',')]
    pub types: Vec<String>,
    /// Also N bins over the whole time range per lane, counts per type category (JSON only).
    #[arg(long, value_name = "N")]
    pub bins: Option<usize>,
    /// The gap rule's floor in milliseconds (default 1000; see docs/cli.md).
    #[arg(long, value_name = "MS")]
    pub gap_ms: Option<u64>,
}

fn at(tt: u64) -> Value {
    json!({"utc": format_timetick(tt), "tt": tt})
}

fn opt_at(tt: Option<u64>) -> Value {
    tt.map_or(Value::Null, at)
}

pub fn timeline(dir: &Path, args: &TimelineArgs) -> Result<()> {
    let options = LoadOptions { gap_min_ms: args.gap_ms };
    let t = load(dir, &options, &mut |_, _, _| true)?;
    let mut filter = Filter { collection: args.collection, types: Vec::new() };
    for name in &args.types {
        let n = t.type_number(name).ok_or_else(|| {
            anyhow!("--type {name}: not a WAL message type (use a name such as Insert or CreateCollection, or a number)")
        })?;
        filter.types.push(n);
    }
    let mut out = std::io::stdout().lock();
    if args.jsonl {
        jsonl(&mut out, &t, &filter, args.bins)?
    } else {
        human(&mut out, &t, &filter)?
    }
    out.flush()?;
    Ok(())
}

fn kept(t: &Timeline, lane: usize, filter: &Filter) -> u64 {
    let l = &t.lanes[lane];
    if filter.is_empty() {
        l.len() as u64
    } else {
        (0..l.len()).filter(|&i| l.keeps(i, filter)).count() as u64
    }
}

fn jsonl(out: &mut impl Write, t: &Timeline, filter: &Filter, bins: Option<usize>) -> Result<()> {
    let mut line = |v: Value| writeln!(out, "{v}");
    let pch = |k: usize| t.lanes[k].pchannel.clone();
    for (k, l) in t.lanes.iter().enumerate() {
        line(json!({
            "kind": "lane", "lane": k, "pchannel": l.pchannel, "file": l.path.display().to_string(),
            "frames": kept(t, k, filter), "untimed": l.untimed,
            "first": opt_at(l.first_tt()), "last": opt_at(l.last_tt()), "gap_rule_ms": l.gap_threshold_ms,
        }))?;
    }
    for s in t.txns_kept(filter) {
        line(json!({
            "kind": "txn", "pchannel": pch(s.lane), "txn": s.id, "end": s.end.name(), "begin": at(s.begin_tt),
            "until": at(s.end_tt), "frames": s.frames, "has_begin": s.has_begin, "collection": s.collection,
            "first_frame": s.first_frame,
        }))?;
    }
    for d in t.ddl_kept(filter) {
        line(json!({
            "kind": "ddl", "pchannel": pch(d.lane), "type": d.label, "at": at(d.tt), "frame": d.frame,
            "collection": d.collection,
        }))?;
    }
    for g in &t.gaps {
        line(json!({
            "kind": "gap", "pchannel": pch(g.lane), "from": at(g.from_tt), "to": at(g.to_tt), "ms": g.millis(),
            "after_frame": g.after_frame,
        }))?;
    }
    for d in &t.damage {
        line(json!({
            "kind": "damage", "pchannel": pch(d.lane), "offset": d.offset, "len": d.len, "truncated": d.truncated,
            "reason": d.reason, "from": opt_at(d.from_tt), "to": opt_at(d.to_tt),
        }))?;
    }
    for m in &t.plan {
        line(json!({
            "kind": "plan", "pchannel": pch(m.lane), "verdict": m.what.kind(), "at": at(m.tt),
            "message_id": m.message_id, "collection": m.collection, "words": m.what.words(),
        }))?;
    }
    if let (Some(n), Some((from, to))) = (bins, t.span()) {
        for l in &t.lanes {
            let width = (to + 1 - from) as u128;
            for (b, bin) in l.bins(from, to + 1, n, filter).iter().enumerate() {
                let edge = |b: usize| from + (width * b as u128 / n as u128) as u64;
                let counts: serde_json::Map<String, Value> =
                    TypeCategory::ALL.iter().map(|c| (c.name().to_string(), json!(bin.count(*c)))).collect();
                line(json!({
                    "kind": "bin", "pchannel": l.pchannel, "bin": b, "from": at(edge(b)), "to": at(edge(b + 1)),
                    "total": bin.total(), "counts": counts,
                }))?;
            }
        }
    }
    let s = t.summary();
    line(json!({
        "kind": "summary", "lanes": s.lanes, "frames": (0..t.lanes.len()).map(|k| kept(t, k, filter)).sum::<u64>(),
        "first": opt_at(s.first_tt), "last": opt_at(s.last_tt), "txns": t.txns_kept(filter).count(),
        "open_txns": s.open_txns, "ddl": t.ddl_kept(filter).count(), "gaps": s.gaps, "damaged": s.damaged,
        "plan": t.plan_file.as_ref().map(|p| p.display().to_string()), "plan_marks": s.plan_marks,
    }))?;
    Ok(())
}

fn human(out: &mut impl Write, t: &Timeline, filter: &Filter) -> Result<()> {
    let s = t.summary();
    let when =
        |tt: Option<u64>| tt.map_or_else(|| "-".to_string(), |tt| format!("{} UTC", format_timetick(tt)));
    writeln!(
        out,
        "{}: {}, {}, {} .. {}",
        t.dir.display(),
        counted(s.lanes as u64, "lane"),
        counted(s.frames, "frame"),
        when(s.first_tt),
        when(s.last_tt)
    )?;
    for (k, l) in t.lanes.iter().enumerate() {
        let txns: Vec<_> = t.txns_kept(filter).filter(|x| x.lane == k).collect();
        let open = txns.iter().filter(|x| x.end == crate::timeline::TxnEnd::Open).count();
        let ddl = t.ddl_kept(filter).filter(|d| d.lane == k).count();
        let gaps: Vec<_> = t.gaps.iter().filter(|g| g.lane == k).collect();
        let damage = t.damage.iter().filter(|d| d.lane == k).count();
        writeln!(
            out,
            "  {}: {}, {} .. {}",
            l.pchannel,
            counted(kept(t, k, filter), "frame"),
            when(l.first_tt()),
            when(l.last_tt())
        )?;
        writeln!(
            out,
            "    {} ({open} open), {ddl} DDL, {} over {} ms, {}",
            counted(txns.len() as u64, "transaction"),
            counted(gaps.len() as u64, "gap"),
            l.gap_threshold_ms,
            counted(damage as u64, "damaged range")
        )?;
        for g in gaps.iter().take(5) {
            writeln!(
                out,
                "    gap: {} .. {} ({} ms)",
                format_timetick(g.from_tt),
                format_timetick(g.to_tt),
                g.millis()
            )?;
        }
    }
    if let Some(p) = &t.plan_file {
        writeln!(
            out,
            "replay plan {}: {} on the lanes",
            p.display(),
            counted(s.plan_marks as u64, "verdict")
        )?;
    }
    Ok(())
}
