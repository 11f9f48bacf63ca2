//! The memory a million-frame index really takes, measured by the kernel rather than by the
//! index's own accounting: the process's anonymous memory (`/proc/self/smaps_rollup`) before and
//! after indexing; and the index's bound (a file with more frames than the index may list costs
//! the bound and no more; a file of zeros costs nothing beyond its own mapped pages). The
//! measurements are of the whole process, so they run alone: the test below starts this test
//! binary again with only [`measured_alone`] selected, and that runs them one after the other.
#![cfg(target_os = "linux")]

use walscope::dump::{DumpFile, Framing, IndexCache, OpenOptions};

/// Runs [`measured_alone`] in a process of its own, so no other test allocates while memory is
/// measured.
#[test]
fn the_index_memory_as_the_kernel_counts_it() {
    crate::common::run_alone("index_memory::measured_alone");
}

/// Both measurements, one after the other, in a process running nothing else (started by
/// [`the_index_memory_as_the_kernel_counts_it`]; on its own it does nothing).
#[test]
#[ignore = "run alone by the_index_memory_as_the_kernel_counts_it"]
fn measured_alone() {
    if !crate::common::alone() {
        return;
    }
    a_million_frame_index_takes_what_it_says_and_under_64_mib();
    the_index_holds_no_more_than_its_bound_and_nothing_for_zeros();
}

/// Anonymous (heap and stack, not file-backed) memory of this process, in bytes.
fn anonymous_bytes() -> u64 {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup").expect("smaps_rollup");
    let kb: u64 = text
        .lines()
        .find(|l| l.starts_with("Anonymous:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .expect("an Anonymous line");
    kb * 1024
}

fn a_million_frame_index_takes_what_it_says_and_under_64_mib() {
    let frame = [0x08u8, 0x0a, 0x02, 0x08, 0x01, 0x12, 0x02, b'o', b'k'];
    let mut bytes = Vec::with_capacity(frame.len() * 1_000_000);
    for _ in 0..1_000_000 {
        bytes.extend_from_slice(&frame);
    }
    // The file's bytes are already counted; what grows from here is the index.
    let before = anonymous_bytes();
    let d = DumpFile::from_bytes(
        "m",
        bytes,
        OpenOptions { framing: Some(Framing::VarintDelimited), ..Default::default() },
    );
    d.wait_indexed();
    let after = anonymous_bytes();
    assert_eq!(d.frame_count(), 1_000_000);
    let grown = after.saturating_sub(before);
    let claimed = d.index().heap_bytes() as u64;
    assert!(grown < 64 << 20, "indexing a million frames grew anonymous memory by {grown} bytes");
    // The index's own figure is what the kernel sees, within the allocator's slack.
    assert!(grown <= claimed * 2 + (4 << 20), "the kernel saw {grown} bytes, the index says {claimed}");
}

fn the_index_holds_no_more_than_its_bound_and_nothing_for_zeros() {
    // A million frames, indexed with a bound of 100,000: the index holds 100,000 offsets, says
    // where it stopped, and grows memory by about 800 KB (the million would take 8 MB).
    let frame = [0x08u8, 0x0a, 0x02, 0x08, 0x01, 0x12, 0x02, b'o', b'k'];
    let bytes = frame.repeat(1_000_000);
    let before = anonymous_bytes();
    let opts = OpenOptions {
        framing: Some(Framing::VarintDelimited),
        max_frames: Some(100_000),
        ..Default::default()
    };
    let d = DumpFile::from_bytes("m", bytes, opts);
    d.wait_indexed();
    let grown = anonymous_bytes().saturating_sub(before);
    assert_eq!(d.frame_count(), 100_000);
    assert!(d.index().is_capped());
    let problems = d.problems();
    assert!(
        matches!(&problems[..], [p] if p.offset == 900_000 && p.reason.contains("the index lists at most 100000 frames")),
        "{problems:?}"
    );
    assert!(d.index().heap_bytes() <= 100_000 * 8 + 1024, "{} bytes", d.index().heap_bytes());
    assert!(grown < 3 << 20, "a 100,000-frame index grew anonymous memory by {grown} bytes");
    drop(d);

    // 64 MiB of zeros from a file: no frames, one damaged range, and no index to speak of.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zeros.bin");
    std::fs::File::create(&path).unwrap().set_len(64 << 20).unwrap();
    let before = anonymous_bytes();
    let d =
        DumpFile::open(&path, OpenOptions { index_cache: IndexCache::Off, ..Default::default() }).unwrap();
    d.wait_indexed();
    let grown = anonymous_bytes().saturating_sub(before);
    assert_eq!(d.frame_count(), 0);
    assert_eq!(d.problems().len(), 1, "{:?}", d.problems());
    assert!(d.problems()[0].reason.starts_with("no frames: 67108864 bytes of zeros"), "{:?}", d.problems());
    assert!(grown < 8 << 20, "64 MiB of zeros grew anonymous memory by {grown} bytes");
}
