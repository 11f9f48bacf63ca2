//! The memory a million-frame index really takes, measured by the kernel rather than by the
//! index's own accounting: the process's anonymous memory (`/proc/self/smaps_rollup`) before and
//! after indexing. Alone in its test binary, so no other test allocates meanwhile.
#![cfg(target_os = "linux")]

use walscope::dump::{DumpFile, Framing, OpenOptions};

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

#[test]
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
