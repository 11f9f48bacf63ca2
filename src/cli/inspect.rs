//! `walscope inspect` and `walscope export`: list, filter, summarise and extract the frames of a
//! dump file of any size. A dump cut short while they read it ends them with an error in words
//! (from what size to what, from which frame): the rows before it stay printed, an output file
//! is not put in place, and its temp file is removed (see `crate::dump::mapping`).

use super::SchemaArgs;
use super::rows::for_each_row;
use crate::atomic::{Saved, check_output, is_stdio};
use crate::codec;
use crate::dump::filter::FrameFilter;
use crate::dump::view::{FrameDecoder, FrameStatus, FrameView};
use crate::dump::{
    DumpFile, DumpWriter, Framing, Manifest, NewDump, OpenOptions, SyncPolicy, TextEncoding, manifest_path,
};
use anyhow::{Context, Result, anyhow, bail};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Write;
use std::ops::ControlFlow;
use std::path::Path;

/// How to open a dump, as given on the command line.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DumpArgs {
    /// Message type of each frame (default: chosen from the file name and contents).
    #[arg(long = "type", value_name = "T")]
    pub type_name: Option<String>,
    /// varint, single, grpc, brpc, u32be or u32le (default: detected).
    #[arg(long, value_name = "F")]
    pub framing: Option<String>,
    /// raw, base64 or hex (default: detected).
    #[arg(long, value_name = "E")]
    pub encoding: Option<String>,
    /// Only frames matching, e.g. type=Insert,vchannel=dml_0,tt=FROM..TO,status=bad.
    #[arg(long, value_name = "SPEC")]
    pub filter: Option<String>,
    /// Read every row with the full analysis instead of the fast summary reader: the same
    /// output, several times slower (for comparisons and benchmarks).
    #[arg(long)]
    pub full_analysis: bool,
    /// JSON rows without the decoded `body` (the header stays): several times smaller and
    /// faster on dumps of vectors, for scripts that need only the envelope.
    #[arg(long)]
    pub no_body: bool,
    #[command(flatten)]
    pub schema: SchemaArgs,
}

pub struct Opened {
    pub dump: DumpFile,
    pub decoder: FrameDecoder,
    pub why_type: String,
    pub filter: FrameFilter,
    /// JSON rows leave the decoded body out (`--no-body`).
    pub no_body: bool,
}

pub fn open(file: &Path, args: &DumpArgs) -> Result<Opened> {
    open_with(file, args, false)
}

/// [`open`]; with `defer_index`, the index is built by the first whole-file fold or wait.
fn open_with(file: &Path, args: &DumpArgs, defer_index: bool) -> Result<Opened> {
    let set = args.schema.load()?;
    let framing = match &args.framing {
        Some(f) => Some(
            Framing::parse(f)
                .ok_or_else(|| anyhow!("--framing {f}: use varint, single, grpc, brpc, u32be or u32le"))?,
        ),
        None => None,
    };
    let encoding = match &args.encoding {
        Some(e) => {
            Some(TextEncoding::parse(e).ok_or_else(|| anyhow!("--encoding {e}: use raw, base64 or hex"))?)
        }
        None => None,
    };
    // Opened once: a stream (standard input, a FIFO) can be read only once.
    let source = crate::dump::source::Source::open(file)?;
    let (desc, name_framing, why_type) = match &args.type_name {
        Some(t) => (Some(set.message(t)?), None, "chosen with --type".to_string()),
        None => crate::dump::auto::choose(file, source.head(), &set),
    };
    let filter =
        FrameFilter::parse(args.filter.as_deref().unwrap_or("")).map_err(|e| anyhow!("--filter: {e}"))?;
    let opts = OpenOptions {
        framing: framing.or(name_framing),
        encoding,
        message_type: desc.clone(),
        defer_index,
        ..OpenOptions::default()
    };
    let dump = DumpFile::open_source(file, source, opts)?;
    let mut decoder = FrameDecoder::new(set.pool().clone(), desc, 4096);
    if args.full_analysis {
        decoder = decoder.without_fast_summaries();
    }
    Ok(Opened { dump, decoder, why_type, filter, no_body: args.no_body })
}

fn view_json(o: &Opened, v: &FrameView) -> serde_json::Value {
    let mut j = json!({"frame": v.index, "offset": v.offset, "size": v.size, "status": v.status.label(), "summary": v.summary});
    match &v.status {
        FrameStatus::Undecodable { offset, reason } => {
            j["problem"] = json!(reason);
            j["bad_byte"] = json!(offset);
        }
        FrameStatus::Warning(reason) => j["problem"] = json!(reason),
        _ => {}
    }
    if let Some(w) = &v.wal {
        j["id"] = json!(w.message_id);
        j["type"] = json!(w.type_name);
        j["vchannel"] = json!(w.vchannel);
        j["timetick"] = json!(w.timetick);
        j["time"] = json!(w.time);
        j["collection"] = json!(w.collection);
        j["rows"] = json!(w.rows);
        if let Some(t) = w.txn {
            j["txn"] = json!(t);
        }
    }
    if let Some(Ok(m)) = o.decoder.decode(&o.dump, v.index) {
        // The WAL reading's header and body as objects of their types (`jq '.body.num_rows'`);
        // `message` stays the frame as stored, payload and `_h` as base64.
        if let Some(imm) = crate::wal::reading::immutable_of(&m) {
            let w = match o.no_body {
                true => crate::wal::analyze_envelope(o.decoder.pool(), &imm),
                false => crate::wal::analyze(o.decoder.pool(), &imm),
            };
            let r = crate::wal::reading_json(&w);
            for key in ["header", "body", "chunk"] {
                if let Some(x) = r.get(key) {
                    j[key] = x.clone();
                }
            }
            if let Some(why) = r["payload"].get("not_decoded").filter(|_| !o.no_body) {
                j["body_not_decoded"] = why.clone();
            }
        }
        j["message"] = codec::to_json_value_or_error(&m);
    }
    j
}

pub fn inspect(file: &Path, args: &DumpArgs, jsonl: bool, stats: bool, limit: Option<usize>) -> Result<()> {
    // `--stats` counts every frame while the index finds it (the file read once, not twice).
    let o = open_with(file, args, stats)?;
    let stats = stats.then(|| count_frames(&o));
    o.dump.wait_indexed();
    let d = &o.dump;
    if stats.is_some() {
        // Counts of a file cut short are not printed as if they were whole.
        d.check_unchanged()?;
    }
    // Listed all the same (the damaged ranges say what the bytes are), then an error.
    let unreadable = crate::dump::readable::nothing_readable(d, &o.decoder);
    // A manifest that lies, or could not be used, is said before anything else.
    let manifest = crate::dump::manifest_check::check(d).map(|c| c.lines()).unwrap_or_default();
    // Block-buffered: stdout is line-buffered, a write per row.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let type_name = o.decoder.message_type().map_or("(none)".to_string(), |t| t.full_name().to_string());
    if !jsonl {
        writeln!(out, "file:    {} ({} bytes, {} encoding)", file.display(), d.len(), d.encoding.name())?;
        writeln!(
            out,
            "framing: {} (confidence {:.2}: {})",
            d.framing, d.detection.confidence, d.detection.reason
        )?;
        writeln!(out, "type:    {type_name} ({})", o.why_type)?;
        let capped =
            if d.index().is_capped() { " (the most the index lists: see the last range)" } else { "" };
        writeln!(out, "frames:  {}{capped}, damaged ranges: {}", d.frame_count(), d.problems().len())?;
        for line in &manifest {
            writeln!(out, "manifest: {line}")?;
        }
    } else {
        // Not a line of its own in the listing (readers take each line for a frame or a
        // damaged range); `--stats --jsonl` has it in its object too.
        for line in &manifest {
            note!("warning: manifest: {line}");
        }
    }
    if let Some(st) = stats {
        st.print(&mut out, jsonl, &manifest)?;
        out.flush()?;
        return unreadable.map_or(Ok(()), |why| Err(anyhow!(why)));
    }
    let mut problems = d.problems().into_iter().peekable();
    let mut shown = 0usize;
    if !jsonl {
        writeln!(out, "{:>8} {:>12} {:>8} {:<9} {:<22} summary", "#", "offset", "size", "status", "id")?;
    }
    // Rows are read (and, for --jsonl, rendered) on every core; written here in frame order.
    let render = |v: FrameView, keep: bool| {
        let json = (jsonl && keep).then(|| view_json(&o, &v).to_string());
        (v, keep, json)
    };
    let mut failed = None;
    let _ = for_each_row(&o, render, |(v, keep, json)| {
        let write = || -> Result<ControlFlow<()>> {
            if past_known_end(d, &v) {
                return Ok(ControlFlow::Break(()));
            }
            while let Some(p) = problems.next_if(|p| p.offset < v.offset) {
                if o.filter.keeps_damaged(&p.reason) {
                    print_problem(&mut out, &p, jsonl)?;
                }
            }
            if !keep {
                return Ok(ControlFlow::Continue(()));
            }
            if limit.is_some_and(|l| shown >= l) {
                // Nothing more is shown: the damaged ranges left are printed after the loop.
                return Ok(ControlFlow::Break(()));
            }
            shown += 1;
            if let Some(json) = json {
                writeln!(out, "{json}")?;
            } else {
                let status = match &v.status {
                    FrameStatus::Undecodable { offset, .. } => format!("bad@{offset}"),
                    s => s.label().to_string(),
                };
                let id = v.wal.as_ref().map_or("", |w| w.message_id.as_str());
                writeln!(
                    out,
                    "{:>8} {:>12} {:>8} {:<9} {id:<22} {}",
                    v.index, v.offset, v.size, status, v.summary
                )?;
            }
            Ok(ControlFlow::Continue(()))
        };
        write().unwrap_or_else(|e| {
            failed = Some(e);
            ControlFlow::Break(())
        })
    });
    if let Some(e) = failed {
        return Err(e);
    }
    for p in problems.filter(|p| o.filter.keeps_damaged(&p.reason)) {
        print_problem(&mut out, &p, jsonl)?;
    }
    out.flush()?;
    // After everything was read: a file cut short meanwhile makes the listing incomplete.
    d.check_unchanged()?;
    unreadable.map_or(Ok(()), |why| Err(anyhow!(why)))
}

/// Whether row `v` is past the end of a file known to have been cut short (an atomic load;
/// the caller's check after reading says so in words).
fn past_known_end(d: &DumpFile, v: &FrameView) -> bool {
    d.known_shrink().is_some_and(|s| v.offset + v.size > s.now)
}

/// `--stats`: every core counts its own frames (nothing is handed over per frame; on a first
/// look at a large dump, as the index finds them), then the counts are merged; the damaged
/// ranges are counted from the index.
fn count_frames(o: &Opened) -> Stats {
    let count = |mut st: Stats, v: FrameView| {
        if o.filter.matches(&v) {
            st.add(&v);
        }
        st
    };
    let d = &o.dump;
    let mut st = crate::dump::scan::fold_all_views(
        d,
        &o.decoder,
        o.filter.detail(),
        Stats::default,
        count,
        Stats::merge,
    );
    for p in d.problems() {
        st.problem(&p);
    }
    st
}

fn print_problem(out: &mut impl Write, p: &crate::dump::Problem, jsonl: bool) -> Result<()> {
    if jsonl {
        writeln!(
            out,
            "{}",
            json!({"damaged": {"offset": p.offset, "len": p.len, "truncated": p.truncated, "reason": p.reason}})
        )?;
    } else {
        let label = if p.truncated { "truncated" } else { "skipped" };
        writeln!(out, "{:>8} {:>12} {:>8} {:<9} {:<22} {}", "!", p.offset, p.len, label, "", p.reason)?;
    }
    Ok(())
}

/// Counts `key` without allocating a key that is already there (the common case).
fn bump(counts: &mut BTreeMap<String, u64>, key: &str) {
    match counts.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            counts.insert(key.to_string(), 1);
        }
    }
}

#[derive(Default)]
struct Stats {
    frames: u64,
    bytes: u64,
    bad: u64,
    encrypted: u64,
    per_type: BTreeMap<String, u64>,
    per_vchannel: BTreeMap<String, u64>,
    tt: Option<(u64, u64)>,
    damaged: u64,
    damaged_bytes: u64,
    /// Frames that are chunks of a larger payload, and their groups by timetick: the total and
    /// the indices seen (a repeat counts once).
    chunk_frames: u64,
    chunk_groups: BTreeMap<u64, (u32, std::collections::BTreeSet<u32>)>,
}

impl Stats {
    fn add(&mut self, v: &FrameView) {
        self.frames += 1;
        self.bytes += v.size;
        if v.status.is_bad() {
            self.bad += 1;
        }
        if v.status == FrameStatus::Encrypted {
            self.encrypted += 1;
        }
        if let Some(w) = &v.wal {
            if let Some(c) = &w.chunk {
                self.chunk_frames += 1;
                let g = self.chunk_groups.entry(c.tt).or_insert((c.total, Default::default()));
                g.1.insert(c.index);
            }
            bump(&mut self.per_type, &w.type_name);
            if !w.vchannel.is_empty() {
                bump(&mut self.per_vchannel, &w.vchannel);
            }
            if let Some(t) = w.timetick {
                self.tt = Some(self.tt.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
            }
        }
    }

    /// Both counts in one (each scan worker counts its own frames).
    fn merge(mut self, other: Stats) -> Stats {
        self.frames += other.frames;
        self.bytes += other.bytes;
        self.bad += other.bad;
        self.encrypted += other.encrypted;
        for (map, theirs) in
            [(&mut self.per_type, other.per_type), (&mut self.per_vchannel, other.per_vchannel)]
        {
            for (k, n) in theirs {
                *map.entry(k).or_insert(0) += n;
            }
        }
        self.tt = match (self.tt, other.tt) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (x, y) => x.or(y),
        };
        self.damaged += other.damaged;
        self.damaged_bytes += other.damaged_bytes;
        self.chunk_frames += other.chunk_frames;
        for (tt, (total, seen)) in other.chunk_groups {
            self.chunk_groups.entry(tt).or_insert((total, Default::default())).1.extend(seen);
        }
        self
    }

    /// Logical messages: every frame that is not a chunk, plus one per chunk group.
    fn messages(&self) -> u64 {
        self.frames - self.chunk_frames + self.chunk_groups.len() as u64
    }

    /// The chunk groups that are not whole: (timetick, total, the indices missing, from 0,
    /// at most 8 of them).
    fn incomplete_groups(&self) -> Vec<(u64, u32, Vec<u32>)> {
        self.chunk_groups
            .iter()
            .filter(|(_, (total, seen))| seen.len() < *total as usize)
            .map(|(tt, (total, seen))| {
                (*tt, *total, (0..*total).filter(|i| !seen.contains(i)).take(8).collect())
            })
            .collect()
    }

    fn problem(&mut self, p: &crate::dump::Problem) {
        self.damaged += 1;
        self.damaged_bytes += p.len;
    }

    /// The statistics; `manifest`, what is wrong with the manifest, goes into the JSON object
    /// (the text form has it in the header).
    fn print(&self, out: &mut impl Write, as_json: bool, manifest: &[String]) -> Result<()> {
        let range = self.tt.map(|(a, b)| {
            json!({"from": a, "to": b, "from_time": crate::time::format_timetick(a), "to_time": crate::time::format_timetick(b)})
        });
        if as_json {
            let incomplete: Vec<serde_json::Value> = self
                .incomplete_groups()
                .into_iter()
                .map(|(tt, total, missing)| json!({"tt": tt, "total": total, "missing": missing}))
                .collect();
            let mut j = json!({"frames": self.frames, "messages": self.messages(),
                "chunks": {"frames": self.chunk_frames, "groups": self.chunk_groups.len(), "incomplete": incomplete},
                "bytes": self.bytes, "bad": self.bad, "encrypted": self.encrypted,
                "damaged_ranges": self.damaged, "damaged_bytes": self.damaged_bytes,
                "per_type": self.per_type, "per_vchannel": self.per_vchannel, "timetick": range});
            if !manifest.is_empty() {
                j["manifest_problems"] = json!(manifest);
            }
            writeln!(out, "{j}")?;
            return Ok(());
        }
        writeln!(
            out,
            "matching frames: {} ({} bytes), bad: {}, encrypted: {}",
            self.frames, self.bytes, self.bad, self.encrypted
        )?;
        writeln!(out, "damaged ranges:  {} ({} bytes)", self.damaged, self.damaged_bytes)?;
        if self.chunk_frames > 0 {
            let incomplete = self.incomplete_groups();
            writeln!(
                out,
                "messages:        {} logical ({} split into {}, {} not whole in the dump)",
                self.messages(),
                self.chunk_groups.len(),
                crate::fmt::counted(self.chunk_frames, "chunk"),
                incomplete.len()
            )?;
            for (tt, total, missing) in incomplete {
                let shown: Vec<String> = missing.iter().map(|i| (i + 1).to_string()).collect();
                writeln!(
                    out,
                    "  incomplete at timetick {tt}: of {total} chunks, missing {}",
                    shown.join(", ")
                )?;
            }
        }
        if let Some((a, b)) = self.tt {
            writeln!(
                out,
                "timetick range:  {a}..{b} ({} .. {} UTC)",
                crate::time::format_timetick(a),
                crate::time::format_timetick(b)
            )?;
        }
        if !self.per_type.is_empty() {
            writeln!(out, "per type:")?;
            for (t, n) in &self.per_type {
                writeln!(out, "  {t:<24} {n:>10}")?;
            }
        }
        if !self.per_vchannel.is_empty() {
            writeln!(out, "per vchannel:")?;
            for (t, n) in &self.per_vchannel {
                writeln!(out, "  {t:<40} {n:>10}")?;
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// One JSON object per frame (summary, WAL columns, decoded message).
    Jsonl,
    /// A new varint-delimited dump with a manifest; message bytes copied exactly.
    Dump,
    /// A directory with one file per message (the message bytes only).
    Raw,
}

pub fn export(file: &Path, args: &DumpArgs, to: ExportFormat, out: &Path, force: bool) -> Result<()> {
    let to_stdout = is_stdio(out);
    // The dump and the manifest beside it are both read.
    let inputs = [file, &manifest_path(file)];
    // Every output is checked before the input is even opened: an output that is an input, or
    // one that exists without --force, is refused with nothing written.
    match (to, to_stdout) {
        (ExportFormat::Raw, true) => {
            bail!("--to raw writes a folder of files: name the folder with --out DIR")
        }
        (ExportFormat::Raw, false) => check_raw_folder(out, force)?,
        (_, true) => {}
        (ExportFormat::Jsonl, false) => check_output(out, &inputs, force)?,
        (ExportFormat::Dump, false) => {
            check_output(out, &inputs, force)?;
            check_output(&manifest_path(out), &inputs, force)?;
        }
    }
    let o = open(file, args)?;
    o.dump.wait_indexed();
    let d = &o.dump;
    if let Some(why) = crate::dump::readable::nothing_readable(d, &o.decoder) {
        bail!("nothing was written: {why}");
    }
    for line in crate::dump::manifest_check::check(d).map(|c| c.lines()).unwrap_or_default() {
        note!("warning: manifest: {line}");
    }
    let progress = Progress::new(d.frame_count());
    let exported = match to {
        ExportFormat::Jsonl if to_stdout => {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            let n = write_jsonl(&o, &mut w, &progress)?;
            w.flush()?;
            d.check_unchanged()?;
            n
        }
        ExportFormat::Jsonl => export_jsonl(&o, out, &progress)?,
        ExportFormat::Dump if to_stdout => {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            let (mut frames, mut ends) = (Vec::new(), Vec::new());
            let selected = selected_frames(&o);
            for part in selected.chunks(crate::dump::scan::CHUNK) {
                // Copied, then checked (one `fstat` a chunk): only frames still in the file go
                // out; the first past its end ends the export with the error.
                frames.clear();
                ends.clear();
                for loc in part.iter().filter_map(|&i| d.frame(i)) {
                    let message = d.message_bytes(&loc).1;
                    crate::dump::framing::write_frame(Framing::VarintDelimited, message, &mut frames);
                    ends.push((loc, frames.len()));
                }
                let _ = d.check_unchanged();
                let mut from = 0;
                for &(loc, to) in &ends {
                    intact(d, &loc)?;
                    w.write_all(&frames[from..to])?;
                    from = to;
                    progress.tick();
                }
            }
            w.flush()?;
            d.check_unchanged()?;
            selected.len()
        }
        ExportFormat::Dump => {
            let selected = selected_frames(&o);
            let type_name = o.decoder.message_type().map_or(String::new(), |t| t.full_name().to_string());
            let manifest = Manifest::new(
                Framing::VarintDelimited,
                &type_name,
                Some(format!("file://{}", file.display())),
                json!({"export_of": file.display().to_string(), "filter": args.filter}),
            );
            let new =
                NewDump::beside(out).with_context(|| format!("cannot write beside {}", out.display()))?;
            let mut w =
                DumpWriter::create(new.path(), Framing::VarintDelimited, manifest, SyncPolicy::default())?;
            for &i in &selected {
                if let Some(loc) = d.frame(i) {
                    intact(d, &loc).with_context(|| format!("nothing was written to {}", out.display()))?;
                    w.append(d.message_bytes(&loc).1, None)?;
                }
                progress.tick();
            }
            w.finish(true)?;
            d.check_unchanged().with_context(|| format!("nothing was written to {}", out.display()))?;
            let saved = new.commit(true).with_context(|| format!("cannot write {}", out.display()))?;
            report_saved(out, &saved);
            selected.len()
        }
        ExportFormat::Raw => {
            let selected = selected_frames(&o);
            std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
            for &i in &selected {
                if let Some(loc) = d.frame(i) {
                    let p = out.join(format!("frame-{i:07}.bin"));
                    // Copied, then checked against the file's size now (one `fstat`): a frame
                    // that ends by it is the file's own; one past it is never written.
                    let bytes = d.message_bytes(&loc).1.to_vec();
                    let _ = d.check_unchanged();
                    intact(d, &loc).with_context(|| {
                        format!(
                            "the frames before frame {i} are in {}; no later frame was written",
                            out.display()
                        )
                    })?;
                    crate::atomic::atomic_write(&p, &bytes, true)
                        .with_context(|| format!("cannot write {}", p.display()))?;
                }
                progress.tick();
            }
            d.check_unchanged()?;
            selected.len()
        }
    };
    progress.finish();
    note!(
        "exported {exported} of {} frames to {}",
        d.frame_count(),
        if to_stdout { "standard output".into() } else { out.display().to_string() }
    );
    if to == ExportFormat::Dump && !to_stdout {
        note!("manifest: {}", manifest_path(out).display());
    }
    Ok(())
}

/// `Ok` when frame `loc` is still in the file; otherwise the file's change in words.
fn intact(d: &DumpFile, loc: &crate::dump::FrameLoc) -> Result<()> {
    if d.intact(loc).is_err() {
        d.check_unchanged()?;
    }
    Ok(())
}

/// `--to raw` writes into a folder: a new one, an empty one, or (with --force) one whose files
/// of the same names are then kept as `.bak`.
fn check_raw_folder(out: &Path, force: bool) -> Result<()> {
    match std::fs::metadata(out) {
        Ok(m) if !m.is_dir() => bail!("{} exists and is not a folder: nothing was written", out.display()),
        Ok(_) => {
            let full = std::fs::read_dir(out)?.next().is_some();
            if full && !force {
                bail!(
                    "folder {} is not empty: nothing was written. Add --force to write into it (files of the same names are then kept as .bak)",
                    out.display()
                );
            }
            Ok(())
        }
        Err(_) => Ok(()),
    }
}

/// What a save said about the file it replaced.
fn report_saved(out: &Path, saved: &Saved) {
    match saved {
        Saved::Unchanged => note!("{} already holds these bytes: nothing written", out.display()),
        Saved::Written { backup: Some(b) } => note!("its previous contents are in {}", b.display()),
        Saved::Written { backup: None } => {}
    }
}

/// The export's progress bar: shown on a terminal once the export has run for a second.
struct Progress {
    bar: indicatif::ProgressBar,
    started: std::time::Instant,
    shown: std::sync::atomic::AtomicBool,
}

impl Progress {
    fn new(frames: usize) -> Progress {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(frames as u64),
            indicatif::ProgressDrawTarget::hidden(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "exporting [{bar:30}] {pos}/{len} frames, {per_sec}, {eta} left",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        Progress { bar, started: std::time::Instant::now(), shown: false.into() }
    }

    fn tick(&self) {
        self.bar.inc(1);
        use std::sync::atomic::Ordering::Relaxed;
        if !self.shown.load(Relaxed)
            && self.started.elapsed() >= std::time::Duration::from_secs(1)
            && std::io::IsTerminal::is_terminal(&std::io::stderr())
            && !self.shown.swap(true, Relaxed)
        {
            self.bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The frames the filter keeps, in order (read with only what the filter needs).
fn selected_frames(o: &Opened) -> Vec<usize> {
    let d = &o.dump;
    let mut selected = Vec::new();
    let keep = |v: FrameView| o.filter.matches(&v).then_some(v.index);
    let detail = o.filter.detail();
    let _ = crate::dump::scan::for_each_view(d, &o.decoder, 0..d.frame_count(), detail, keep, |i| {
        selected.extend(i);
        ControlFlow::Continue(())
    });
    selected
}

/// The rows the filter keeps as JSON lines, rendered on every core and streamed to a new
/// file in frame order (never the whole export in memory); `out` is replaced atomically, its
/// old contents kept as `FILE.bak`. Returns how many rows were written.
fn export_jsonl(o: &Opened, out: &Path, progress: &Progress) -> Result<usize> {
    let mut exported = 0;
    let saved = crate::atomic::atomic_write_with(out, true, |w| {
        exported = write_jsonl(o, w, progress).map_err(std::io::Error::other)?;
        // A file that changed under the export makes it worthless: not put in place.
        o.dump.check_unchanged().map_err(std::io::Error::other)
    })
    .with_context(|| format!("cannot write {}", out.display()))?;
    report_saved(out, &saved);
    Ok(exported)
}

/// The rows the filter keeps, as JSON lines into `w`; how many.
fn write_jsonl(o: &Opened, w: &mut dyn Write, progress: &Progress) -> Result<usize> {
    let mut exported = 0;
    let render = |v: FrameView, keep: bool| {
        let json = keep.then(|| view_json(o, &v).to_string());
        (v.offset + v.size, json)
    };
    let mut written = Ok(());
    let _ = for_each_row(o, render, |(end, line)| {
        progress.tick();
        // Past the end of a file cut short: nothing more is written (the caller says why).
        if o.dump.known_shrink().is_some_and(|s| end > s.now) {
            return ControlFlow::Break(());
        }
        if let Some(line) = line {
            exported += 1;
            written = writeln!(w, "{line}");
        }
        match &written {
            Ok(()) => ControlFlow::Continue(()),
            Err(_) => ControlFlow::Break(()),
        }
    });
    written?;
    Ok(exported)
}
