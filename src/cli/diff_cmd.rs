//! `walscope diff A B`: two dumps frame by frame, or two messages field by field (a file of one
//! message, or one frame of a dump written `FILE#N`). Exit 0 identical, 1 different, 2 error
//! (as `diff`). Only reads.

use super::SchemaArgs;
use super::inspect::{DumpArgs, Opened, open};
use crate::diff::{
    Change, ChangeKind, DumpDiffControl, DumpDiffSummary, DumpSide, FramePair, MessageDiff, PairCounts,
    PairKind, diff_dumps, diff_frames,
};
use crate::dump::Framing;
use anyhow::{Context, Result, anyhow, bail};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How the command ended, for `main`'s exit code: 1 when the sides differ, 2 on an error
/// (already said on standard error).
#[derive(Debug)]
pub struct ExitWith(pub u8);

impl std::fmt::Display for ExitWith {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}", self.0)
    }
}

impl std::error::Error for ExitWith {}

#[derive(clap::Args, Debug, Clone)]
pub struct DiffArgs {
    /// The first side: a dump, a file of one message, or one frame of a dump (`FILE#N`).
    pub a: String,
    /// The second side, as A.
    pub b: String,
    /// Message type of both sides (default: chosen from the file names and contents, as
    /// `inspect` and `decode` do).
    #[arg(long = "type", value_name = "T")]
    pub type_name: Option<String>,
    /// varint, single, grpc, brpc, u32be or u32le (default: detected).
    #[arg(long, value_name = "F")]
    pub framing: Option<String>,
    /// One JSON object per line: one per difference (or per differing frame), then a summary
    /// line with "kind": "summary".
    #[arg(long)]
    pub jsonl: bool,
    /// Dumps: how many frames apart a frame may sit in A and B and still be matched.
    #[arg(long, value_name = "N", default_value_t = crate::diff::DEFAULT_WINDOW)]
    pub window: usize,
    /// Dumps: print the field changes of at most N changed frames (the rest are listed).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub show: usize,
    #[command(flatten)]
    pub schema: SchemaArgs,
}

/// Runs the diff; an error is written here (the exit code is 2, not `main`'s 1).
pub fn diff(args: &DiffArgs) -> Result<()> {
    match run(args) {
        Ok(false) => Ok(()),
        Ok(true) => Err(ExitWith(1).into()),
        Err(e) if is_broken_pipe(&e) => Err(e),
        Err(e) => {
            note!("error: {e:#}");
            Err(ExitWith(2).into())
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

/// One side as given: a file, or frame N of one (`FILE#N`, when FILE exists and FILE#N does not).
fn side(text: &str) -> (PathBuf, Option<u64>) {
    if !Path::new(text).exists()
        && let Some((file, n)) = text.rsplit_once('#')
        && let Ok(n) = n.parse::<u64>()
        && Path::new(file).exists()
    {
        return (PathBuf::from(file), Some(n));
    }
    (PathBuf::from(text), None)
}

fn open_side(path: &Path, args: &DiffArgs, name: &str) -> Result<Opened> {
    if !path.exists() {
        bail!("{name}: {} does not exist (give a file, or FILE#N for frame N of a dump)", path.display());
    }
    let dump_args = DumpArgs {
        type_name: args.type_name.clone(),
        framing: args.framing.clone(),
        schema: args.schema.clone(),
        ..DumpArgs::default()
    };
    open(path, &dump_args).with_context(|| format!("{name}: {}", path.display()))
}

/// Whether `o` is one message (a file of one, not a dump of frames).
fn is_single(o: &Opened) -> bool {
    o.dump.framing == Framing::Single
}

/// True when the sides differ.
fn run(args: &DiffArgs) -> Result<bool> {
    let ((pa, fa), (pb, fb)) = (side(&args.a), side(&args.b));
    let (oa, ob) = (open_side(&pa, args, "A")?, open_side(&pb, args, "B")?);
    let sa = DumpSide { dump: &oa.dump, decoder: &oa.decoder };
    let sb = DumpSide { dump: &ob.dump, decoder: &ob.decoder };
    let message_mode = fa.is_some() || fb.is_some() || (is_single(&oa) && is_single(&ob));
    if !message_mode {
        if is_single(&oa) != is_single(&ob) {
            let (one, many) = if is_single(&oa) { ("A", "B") } else { ("B", "A") };
            bail!(
                "{one} is one message and {many} is a dump: compare a frame of {many} with {one} by naming it FILE#N (frame N, from 0)"
            );
        }
        readable(&oa, "A")?;
        readable(&ob, "B")?;
        return dumps(args, &oa, &ob);
    }
    let d = diff_frames(sa, fa.unwrap_or(0), sb, fb.unwrap_or(0)).map_err(|e| anyhow!("{e}"))?;
    print_message_diff(&d, args.jsonl, &[("A", &args.a), ("B", &args.b)])?;
    Ok(!d.is_empty())
}

/// Refuses a file in which no frame could be read: garbage, or the wrong framing or type.
fn readable(o: &Opened, name: &str) -> Result<()> {
    o.dump.wait_indexed();
    if o.dump.frame_count() == 0 && !o.dump.is_empty() {
        bail!(
            "{name}: {} holds no readable frame ({} bytes, {} damaged ranges): is it a dump? Look with `walscope inspect {}`, or give --framing and --type",
            o.dump.path.display(),
            o.dump.len(),
            o.dump.problems().len(),
            o.dump.path.display()
        );
    }
    Ok(())
}

fn span(s: &Option<std::ops::Range<usize>>) -> String {
    s.as_ref().map_or_else(|| "-".to_string(), |r| format!("{}..{}", r.start, r.end))
}

/// One change as a line: `changed  task[2].status: "RUNNING" → "FAILED"  (string; A 12..21, B 12..20)`.
fn change_line(c: &Change) -> String {
    let what = match c.kind {
        ChangeKind::Changed => {
            format!("{} → {}", c.old.as_deref().unwrap_or(""), c.new.as_deref().unwrap_or(""))
        }
        ChangeKind::Added => c.new.clone().unwrap_or_default(),
        ChangeKind::Removed => c.old.clone().unwrap_or_default(),
        ChangeKind::Moved => match c.moved {
            Some((i, j)) => format!("from [{i}] in A to [{j}] in B: {}", c.new.as_deref().unwrap_or("")),
            None => c.new.clone().unwrap_or_default(),
        },
    };
    format!(
        "{:<8} {}: {what}  ({}; A bytes {}, B bytes {})",
        c.kind.label(),
        if c.path.is_empty() { "(message)" } else { &c.path },
        c.type_name,
        span(&c.a_span),
        span(&c.b_span)
    )
}

fn print_message_diff(d: &MessageDiff, jsonl: bool, sides: &[(&str, &String)]) -> Result<()> {
    if jsonl {
        for c in &d.changes {
            let mut j = serde_json::to_value(c)?;
            j["kind"] = json!(c.kind.label());
            outln!("{j}")?;
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for c in &d.changes {
            *counts.entry(c.kind.label()).or_default() += 1;
        }
        outln!(
            "{}",
            json!({"kind": "summary", "mode": "message", "type": d.type_name, "identical": d.is_empty(),
                   "differences": d.changes.len(), "by_kind": counts, "a": sides[0].1, "b": sides[1].1})
        )?;
        return Ok(());
    }
    if d.is_empty() {
        outln!("identical: {} and {} are the same {}", sides[0].1, sides[1].1, d.type_name)?;
        return Ok(());
    }
    outln!(
        "{} differences between {} (A) and {} (B), type {}:",
        d.changes.len(),
        sides[0].1,
        sides[1].1,
        d.type_name
    )?;
    for c in &d.changes {
        outln!("  {}", change_line(c))?;
    }
    Ok(())
}

fn pair_json(p: &FramePair) -> serde_json::Value {
    let mut j = serde_json::to_value(p).unwrap_or_else(|e| json!({"error": e.to_string()}));
    j["kind"] = json!(p.kind.label());
    j
}

fn pair_line(p: &FramePair) -> String {
    let frame = |s: &str, i: Option<u64>| i.map_or_else(String::new, |i| format!("{s}#{i}"));
    let frames = match (p.a, p.b) {
        (Some(_), Some(_)) => format!("{} ↔ {}", frame("A", p.a), frame("B", p.b)),
        _ => format!("{}{}", frame("A", p.a), frame("B", p.b)),
    };
    let mut s = format!("{:<9} {frames:<20} {}", p.kind.label(), p.type_name);
    if let Some(id) = &p.message_id {
        s.push_str(&format!(" id={id}"));
    }
    if let Some(c) = &p.collection {
        s.push_str(&format!(" coll={c}"));
    }
    if let Some(t) = p.timetick {
        s.push_str(&format!(" tt={}", crate::time::format_timetick(t)));
    }
    s
}

fn dumps(args: &DiffArgs, oa: &Opened, ob: &Opened) -> Result<bool> {
    let sa = DumpSide { dump: &oa.dump, decoder: &oa.decoder };
    let sb = DumpSide { dump: &ob.dump, decoder: &ob.decoder };
    let control = DumpDiffControl { window: args.window, ..DumpDiffControl::default() };
    let mut shown = 0usize;
    let mut failed: Option<anyhow::Error> = None;
    let summary = diff_dumps(sa, sb, &control, |p| {
        if p.kind == PairKind::Identical || failed.is_some() {
            return;
        }
        let r = print_pair(args, sa, sb, &p, &mut shown);
        if let Err(e) = r {
            // A closed pipe: stop printing (the diff itself runs to its end for the exit code).
            failed = Some(e);
        }
    })
    .map_err(|e| anyhow!("{e}"))?;
    if let Some(e) = failed {
        return Err(e);
    }
    print_summary(args, &summary)?;
    Ok(!summary.is_identical())
}

fn print_pair(
    args: &DiffArgs,
    sa: DumpSide<'_>,
    sb: DumpSide<'_>,
    p: &FramePair,
    shown: &mut usize,
) -> Result<()> {
    if args.jsonl {
        outln!("{}", pair_json(p))?;
        return Ok(());
    }
    outln!("{}", pair_line(p))?;
    if let (PairKind::Changed, Some(a), Some(b)) = (p.kind, p.a, p.b) {
        if *shown < args.show {
            *shown += 1;
            match diff_frames(sa, a, sb, b) {
                Ok(d) => {
                    for c in &d.changes {
                        outln!("            {}", change_line(c))?;
                    }
                }
                Err(e) => outln!("            (cannot compare the fields: {e})")?,
            }
        } else if *shown == args.show {
            *shown += 1;
            outln!(
                "            (field changes of further frames: walscope diff {}#{a} {}#{b}, or --show N)",
                args.a,
                args.b
            )?;
        }
    }
    Ok(())
}

fn counts_json(c: &PairCounts) -> serde_json::Value {
    json!({"only_a": c.only_a, "only_b": c.only_b, "changed": c.changed, "identical": c.identical})
}

fn print_summary(args: &DiffArgs, s: &DumpDiffSummary) -> Result<()> {
    if args.jsonl {
        let by = |m: &BTreeMap<String, PairCounts>| -> serde_json::Map<String, serde_json::Value> {
            m.iter().map(|(k, v)| (k.clone(), counts_json(v))).collect()
        };
        outln!(
            "{}",
            json!({"kind": "summary", "mode": "dumps", "a": args.a, "b": args.b, "identical": s.is_identical(),
                   "a_frames": s.a_frames, "b_frames": s.b_frames, "a_damaged": s.a_damaged, "b_damaged": s.b_damaged,
                   "only_a": s.only_a, "only_b": s.only_b, "changed": s.changed, "identical_frames": s.identical,
                   "by_type": by(&s.by_type), "by_collection": by(&s.by_collection)})
        )?;
        return Ok(());
    }
    outln!()?;
    outln!("A: {} ({} frames{})", args.a, s.a_frames, damaged(s.a_damaged))?;
    outln!("B: {} ({} frames{})", args.b, s.b_frames, damaged(s.b_damaged))?;
    let verdict = if s.is_identical() { "identical" } else { "different" };
    outln!(
        "{verdict}: only in A {}, only in B {}, changed {}, identical {}",
        s.only_a,
        s.only_b,
        s.changed,
        s.identical
    )?;
    for (title, m) in [("by type", &s.by_type), ("by collection", &s.by_collection)] {
        let differing: Vec<_> = m.iter().filter(|(_, c)| c.different() > 0).collect();
        if differing.is_empty() {
            continue;
        }
        outln!("{title}:")?;
        for (k, c) in differing {
            outln!(
                "  {k:<28} only in A {:>6}  only in B {:>6}  changed {:>6}  identical {:>6}",
                c.only_a,
                c.only_b,
                c.changed,
                c.identical
            )?;
        }
    }
    Ok(())
}

fn damaged(n: u64) -> String {
    if n == 0 { String::new() } else { format!(", {n} damaged ranges: see walscope inspect") }
}
