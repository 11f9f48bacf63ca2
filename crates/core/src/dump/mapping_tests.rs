//! The mapping's tests: files cut short and replaced under a live map, and a fault outside any
//! registered map, which must still kill the process.

use super::*;
use std::io::Write;

fn file_of(dir: &Path, len: usize) -> (std::path::PathBuf, Vec<u8>) {
    let path = dir.join("f.bin");
    let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8 + 1).collect();
    std::fs::File::create(&path).and_then(|mut f| f.write_all(&bytes)).expect("write");
    (path, bytes)
}

/// A mapped file cut short: reading past its new end reads zeros instead of killing the
/// process, the bytes before are the file's own, and the cut is known, with its sizes.
#[test]
fn a_file_cut_short_reads_zeros_past_its_end_and_says_so() {
    let dir = tempfile::tempdir().expect("dir");
    let (path, bytes) = file_of(dir.path(), 1 << 20);
    let m = Mapping::map(File::open(&path).expect("open")).expect("map");
    assert_eq!(m.check(), Ok(()));
    let cut = 300_001u64;
    std::fs::OpenOptions::new().write(true).open(&path).and_then(|f| f.set_len(cut)).expect("cut");
    let b = m.bytes();
    // The last page: a fault, absorbed.
    assert_eq!(b[b.len() - 1], 0);
    assert!(m.faulted());
    assert_eq!(&b[..cut as usize], &bytes[..cut as usize], "the bytes before the cut are intact");
    assert!(b[cut as usize..].iter().all(|&x| x == 0));
    assert_eq!(m.known_shrink(), Some(Shrink { was: 1 << 20, now: cut }));
    assert_eq!(m.check(), Err(Shrink { was: 1 << 20, now: cut }));
    assert_eq!(m.intact_len(), cut);
    assert_eq!(m.check().unwrap_err().to_string(), "the file shrank from 1048576 to 300001 bytes");
    // Another mapping of the same file, made after the cut, is whole and unfaulted.
    let again = Mapping::map(File::open(&path).expect("open")).expect("map");
    assert_eq!(again.check(), Ok(()));
    assert_eq!(again.bytes(), &bytes[..cut as usize]);
}

/// A file cut and not read past its end yet: only the size check knows; a file replaced
/// by rename stays whole in the map, and is known to be another file on disk.
#[test]
fn a_cut_is_seen_by_the_size_and_a_rename_leaves_the_map_whole() {
    let dir = tempfile::tempdir().expect("dir");
    let (path, bytes) = file_of(dir.path(), 64 << 10);
    let m = Mapping::map(File::open(&path).expect("open")).expect("map");
    std::fs::OpenOptions::new().write(true).open(&path).and_then(|f| f.set_len(1000)).expect("cut");
    assert_eq!(m.known_shrink(), None, "nothing read past the end, nothing asked");
    assert_eq!(m.check(), Err(Shrink { was: 64 << 10, now: 1000 }));
    assert!(!m.faulted());

    let path2 = dir.path().join("g.bin");
    std::fs::write(&path2, &bytes).expect("write");
    let m2 = Mapping::map(File::open(&path2).expect("open")).expect("map");
    assert!(!m2.replaced(&path2));
    let new = dir.path().join("g.new");
    std::fs::write(&new, b"short").expect("write");
    std::fs::rename(&new, &path2).expect("rename over");
    assert!(m2.replaced(&path2));
    assert_eq!(m2.check(), Ok(()), "the mapped inode is as it was");
    assert_eq!(m2.bytes(), &bytes[..]);
}

/// A SIGBUS that is not in a registered mapping still kills the process: run in a child
/// (this test binary again) that cuts a file mapped without registering it and reads it.
#[test]
fn a_fault_elsewhere_still_kills_the_process() {
    const CHILD: &str = "WALSCOPE_MAPPING_TEST_CHILD";
    if let Ok(dir) = std::env::var(CHILD) {
        let dir = Path::new(&dir);
        let (path, _) = file_of(dir, 1 << 16);
        // Ours is installed (and absorbs nothing here).
        let _ours = Mapping::map(File::open(&path).expect("open")).expect("map");
        let other = dir.join("other.bin");
        std::fs::write(&other, vec![7u8; 1 << 16]).expect("write");
        let f = File::open(&other).expect("open");
        // SAFETY: this child is meant to die of the fault.
        let raw = unsafe { Mmap::map(&f) }.expect("map");
        std::fs::OpenOptions::new().write(true).open(&other).and_then(|f| f.set_len(0)).expect("cut");
        let x = std::hint::black_box(raw[40_000]);
        println!("read {x}: survived");
        std::process::exit(0);
    }
    let dir = tempfile::tempdir().expect("dir");
    let exe = std::env::current_exe().expect("exe");
    let out = std::process::Command::new(exe)
        .args(["--exact", "dump::mapping::tests::a_fault_elsewhere_still_kills_the_process", "--nocapture"])
        .env(CHILD, dir.path())
        .output()
        .expect("run child");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGBUS), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("survived"));
}
