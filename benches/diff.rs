//! Diffing two dumps of one million frames (`walscope diff A B`) that differ in 1% of frames,
//! beside `inspect --stats` on one of them (the same library calls the CLI makes) in the same
//! run: the ratio is the figure; the target is 3x or less.
//!
//! A is the shared bench file (see `common`); B is A with every hundredth frame edited (a
//! property added), written once beside it and reused while its manifest matches. Both runs
//! open their files fresh, as the commands do: the index is part of the work.

mod common;

use common::{T, bench_file, frames_wanted};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use walscope::codec::{Edit, apply_edits};
use walscope::diff::{DumpDiffControl, DumpDiffSummary, DumpSide, PairKind, diff_dumps};
use walscope::dump::view::{FrameDecoder, FrameView};
use walscope::dump::{
    DumpFile, DumpWriter, Framing, IndexCache, Manifest, OpenOptions, SyncPolicy, manifest_path, scan,
};
use walscope::schema::SchemaSet;

/// Every this many frames, B's frame differs from A's.
const EVERY: usize = 100;

fn open(path: &Path, set: &SchemaSet, defer_index: bool) -> (DumpFile, FrameDecoder) {
    let desc = set.message(T).expect("type");
    let opts = OpenOptions {
        framing: Some(Framing::VarintDelimited),
        message_type: Some(desc.clone()),
        index_cache: IndexCache::Off,
        defer_index,
        ..Default::default()
    };
    let d = DumpFile::open(path, opts).expect("open dump");
    (d, FrameDecoder::new(set.pool().clone(), Some(desc), 1024))
}

/// B: A with frames 0, 100, 200… edited losslessly (a `bench` property added).
fn b_file(a: &Path, set: &SchemaSet) -> PathBuf {
    let n = frames_wanted();
    let path = std::env::temp_dir().join(format!("walscope-bench-diff-b-{n}.dump"));
    if Manifest::load(&manifest_path(&path)).is_ok_and(|m| m.complete && m.frames == n) {
        return path;
    }
    let (d, _) = open(a, set, false);
    d.wait_indexed();
    let desc = set.message(T).expect("type");
    let edit = Edit::set("message.properties[\"bench\"]=changed").expect("edit");
    let manifest =
        Manifest::new(Framing::VarintDelimited, T, Some("bench".into()), serde_json::json!({"frames": n}));
    let policy = SyncPolicy { every_frames: 100_000, every: Duration::from_secs(60) };
    let mut w = DumpWriter::create(&path, Framing::VarintDelimited, manifest, policy).expect("create B");
    for i in 0..d.frame_count() {
        let loc = d.frame(i).expect("frame");
        let bytes = d.message_bytes(&loc).1;
        if i % EVERY == 0 {
            let edited = apply_edits(&desc, bytes, std::slice::from_ref(&edit)).expect("edit a frame");
            w.append(&edited, None).expect("write B");
        } else {
            w.append(bytes, None).expect("write B");
        }
    }
    w.finish(true).expect("finish B");
    path
}

/// `inspect --stats`: opened with the index deferred, every frame counted (by type and
/// vchannel, with the timetick range) while the index finds it.
fn stats(path: &Path, set: &SchemaSet) -> u64 {
    #[derive(Default)]
    struct Counts {
        frames: u64,
        per_type: BTreeMap<String, u64>,
        per_vchannel: BTreeMap<String, u64>,
        tt: (u64, u64),
    }
    let (d, decoder) = open(path, set, true);
    let add = |mut c: Counts, v: FrameView| {
        c.frames += 1;
        if let Some(w) = &v.wal {
            *c.per_type.entry(w.type_name.clone()).or_default() += 1;
            *c.per_vchannel.entry(w.vchannel.clone()).or_default() += 1;
            if let Some(t) = w.timetick {
                c.tt = (c.tt.0.min(t), c.tt.1.max(t));
            }
        }
        c
    };
    let merge = |mut a: Counts, b: Counts| {
        a.frames += b.frames;
        for (k, v) in b.per_type {
            *a.per_type.entry(k).or_default() += v;
        }
        for (k, v) in b.per_vchannel {
            *a.per_vchannel.entry(k).or_default() += v;
        }
        a
    };
    scan::fold_all_views(&d, &decoder, walscope::wal::Detail::Counts, Counts::default, add, merge).frames
}

/// `walscope diff A B`: both opened (indexes built in the background), then diffed.
fn diff(a: &Path, b: &Path, set: &SchemaSet) -> DumpDiffSummary {
    let (da, xa) = open(a, set, false);
    let (db, xb) = open(b, set, false);
    let mut differing = 0u64;
    let summary = diff_dumps(
        DumpSide { dump: &da, decoder: &xa },
        DumpSide { dump: &db, decoder: &xb },
        &DumpDiffControl::default(),
        |p| differing += u64::from(p.kind != PairKind::Identical),
    )
    .expect("diff");
    assert_eq!(differing, summary.only_a + summary.only_b + summary.changed);
    summary
}

fn main() {
    let set = SchemaSet::builtin();
    let a = bench_file();
    let b = b_file(&a, &set);
    let size = std::fs::metadata(&a).map(|m| m.len()).unwrap_or(0);
    // Warm both files into the page cache, as the second of any two runs would find them.
    let _ = stats(&b, &set);
    let (mut base, mut ours) = (Vec::new(), Vec::new());
    let mut summary = DumpDiffSummary::default();
    let mut frames = 0;
    for _ in 0..3 {
        // Alternating, so that both see the same machine.
        let t = Instant::now();
        frames = stats(&a, &set);
        base.push(t.elapsed());
        let t = Instant::now();
        summary = diff(&a, &b, &set);
        ours.push(t.elapsed());
    }
    let (base, ours) =
        (base.iter().min().copied().unwrap_or_default(), ours.iter().min().copied().unwrap_or_default());
    let n = frames_wanted();
    assert_eq!(frames, n);
    assert_eq!(summary.changed, n.div_ceil(EVERY as u64), "{summary:?}");
    assert_eq!(summary.identical, n - summary.changed);
    assert_eq!((summary.only_a, summary.only_b), (0, 0));
    println!(
        "\n== walscope diff benchmark: two dumps of {n} frames, {} MiB each, 1% of frames changed ==",
        size >> 20
    );
    println!("inspect --stats on A (baseline): {:>8.3} s", base.as_secs_f64());
    println!(
        "diff A B:                        {:>8.3} s   = {:.2}x inspect --stats (target: 3x or less)",
        ours.as_secs_f64(),
        ours.as_secs_f64() / base.as_secs_f64()
    );
    println!(
        "pairs: {} changed, {} identical, {} only in A, {} only in B",
        summary.changed, summary.identical, summary.only_a, summary.only_b
    );
}
