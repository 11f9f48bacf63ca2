//! Indexing and summarising a ~1 GiB dump of one million frames, each beside a baseline taken
//! in the same run: a plain sequential read of the same file. The ratios are what we report;
//! absolute times depend on the machine.
//!
//! The file is generated once into the temp directory (WALSCOPE_BENCH_FRAMES overrides the
//! frame count) and reused while its manifest matches.

mod common;

use common::{T, bench_file, frames_wanted};
use criterion::{Criterion, criterion_group, criterion_main};
use std::io::Read;
use std::ops::ControlFlow;
use std::path::Path;
use std::time::{Duration, Instant};
use walscope::dump::view::FrameDecoder;
use walscope::dump::{DumpFile, Framing, IndexCache, OpenOptions, scan};
use walscope::schema::SchemaSet;

fn sequential_read(path: &Path) -> u64 {
    let mut f = std::fs::File::open(path).expect("open");
    let mut buf = vec![0u8; 8 << 20];
    let mut acc = 0u64;
    loop {
        let n = f.read(&mut buf).expect("read");
        if n == 0 {
            break;
        }
        acc = acc.wrapping_add(u64::from(buf[n - 1])).wrapping_add(n as u64);
    }
    acc
}

fn open_indexed(path: &Path, set: &SchemaSet) -> DumpFile {
    open_with_cache(path, set, IndexCache::Off)
}

fn open_with_cache(path: &Path, set: &SchemaSet, index_cache: IndexCache) -> DumpFile {
    let opts = OpenOptions {
        framing: Some(Framing::VarintDelimited),
        message_type: Some(set.message(T).expect("type")),
        index_cache,
        ..Default::default()
    };
    let d = DumpFile::open(path, opts).expect("open dump");
    d.wait_indexed();
    d
}

/// Every row as `inspect --stats` reads it: the fast summary reader on every core.
fn summarise_all(d: &DumpFile, set: &SchemaSet) -> usize {
    let decoder = FrameDecoder::new(set.pool().clone(), Some(set.message(T).expect("type")), 1024);
    let mut total = 0;
    let _ = scan::for_each_view(
        d,
        &decoder,
        0..d.frame_count(),
        walscope::wal::Detail::Full,
        |v| v.summary.len(),
        |n| {
            total += n;
            ControlFlow::Continue(())
        },
    );
    total
}

/// What `inspect --stats` does on a first look: each frame counted the moment the index finds
/// it (`while_indexing` false: the index built first, then every frame counted over it).
fn count_frames(path: &Path, set: &SchemaSet, while_indexing: bool) -> u64 {
    let desc = set.message(T).expect("type");
    let opts = OpenOptions {
        framing: Some(Framing::VarintDelimited),
        message_type: Some(desc.clone()),
        index_cache: IndexCache::Off,
        defer_index: while_indexing,
        ..Default::default()
    };
    let d = DumpFile::open(path, opts).expect("open dump");
    let decoder = FrameDecoder::new(set.pool().clone(), Some(desc), 1024);
    let count =
        |n: u64, v: walscope::dump::view::FrameView| n + u64::from(v.wal.is_some_and(|w| w.rows.is_some()));
    let detail = walscope::wal::Detail::Counts;
    if while_indexing {
        scan::fold_all_views(&d, &decoder, detail, || 0, count, |a, b| a + b)
    } else {
        d.wait_indexed();
        scan::fold_views(&d, &decoder, 0..d.frame_count(), detail, || 0, count, |a, b| a + b)
    }
}

/// The baseline: every row through the full analysis on one core, as before the fast reader.
fn summarise_all_full(d: &DumpFile, set: &SchemaSet) -> usize {
    let decoder = FrameDecoder::new(set.pool().clone(), Some(set.message(T).expect("type")), 1024)
        .without_fast_summaries();
    (0..d.frame_count()).filter_map(|i| decoder.view_uncached(d, i)).map(|v| v.summary.len()).sum()
}

fn time<F: FnMut()>(mut f: F, runs: usize) -> Duration {
    let mut v: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    v.sort();
    v[runs / 2]
}

fn benches(c: &mut Criterion) {
    let path = bench_file();
    let set = SchemaSet::builtin();
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let mut g = c.benchmark_group(format!("dump_{}_frames_{}MiB", frames_wanted(), size >> 20));
    g.sample_size(10);
    g.bench_function("baseline_sequential_read", |b| b.iter(|| sequential_read(&path)));
    g.bench_function("index_build", |b| b.iter(|| open_indexed(&path, &set).frame_count()));
    g.finish();

    // Decoding everything takes long; measure it (and its baseline) as medians of 3 runs.
    let read = time(
        || {
            sequential_read(&path);
        },
        5,
    );
    let index = time(|| drop(open_indexed(&path, &set)), 5);
    let cache_dir = tempfile::tempdir().expect("temp dir");
    let cached = || IndexCache::At { dir: cache_dir.path().to_path_buf(), min_bytes: 0 };
    drop(open_with_cache(&path, &set, cached()));
    let reopen = time(|| drop(open_with_cache(&path, &set, cached())), 5);
    let d = open_indexed(&path, &set);
    let heap = d.index().heap_bytes();
    let decode = time(
        || {
            summarise_all(&d, &set);
        },
        3,
    );
    let (mut after, mut during) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        // Alternating, so that both see the same machine.
        let t = Instant::now();
        let a = count_frames(&path, &set, false);
        after.push(t.elapsed());
        let t = Instant::now();
        let b = count_frames(&path, &set, true);
        during.push(t.elapsed());
        assert_eq!(a, b, "the same count either way");
    }
    let (after, during) =
        (after.iter().min().copied().unwrap_or_default(), during.iter().min().copied().unwrap_or_default());
    let full = time(
        || {
            summarise_all_full(&d, &set);
        },
        1,
    );
    println!("\n== walscope dump benchmark: {} frames, {} MiB ==", d.frame_count(), size >> 20);
    println!("sequential read (baseline): {:>9.3} s", read.as_secs_f64());
    println!(
        "index build:                {:>9.3} s   = {:.2}x the sequential read",
        index.as_secs_f64(),
        index.as_secs_f64() / read.as_secs_f64()
    );
    println!(
        "reopen with stored index:   {:>9.3} s   = {:.2}x the sequential read",
        reopen.as_secs_f64(),
        reopen.as_secs_f64() / read.as_secs_f64()
    );
    println!(
        "summarise all (fast):       {:>9.3} s   = {:.2}x the sequential read ({:.0} frames/s)",
        decode.as_secs_f64(),
        decode.as_secs_f64() / read.as_secs_f64(),
        d.frame_count() as f64 / decode.as_secs_f64()
    );
    println!(
        "first look, counted after indexing: {:>6.3} s   = {:.2}x the sequential read",
        after.as_secs_f64(),
        after.as_secs_f64() / read.as_secs_f64()
    );
    println!(
        "first look, counted while indexing: {:>6.3} s   = {:.2}x the sequential read, {:.2}x faster (inspect --stats)",
        during.as_secs_f64(),
        during.as_secs_f64() / read.as_secs_f64(),
        after.as_secs_f64() / during.as_secs_f64()
    );
    println!(
        "summarise all (full, 1 core): {:>7.3} s   = {:.2}x the fast reader ({:.0} frames/s)",
        full.as_secs_f64(),
        full.as_secs_f64() / decode.as_secs_f64(),
        d.frame_count() as f64 / full.as_secs_f64()
    );
    println!("index memory beyond the mapping: {:.1} MiB", heap as f64 / (1 << 20) as f64);
}

criterion_group!(dump, benches);
criterion_main!(dump);
