//! Dumps cut short while walscope reads them: `inspect` and `export` died of SIGBUS ("Bus
//! error", exit 135) and left temp files of up to 61 MB beside the output. Now the command ends
//! with an error in words (from what size to what, from which frame), prints or writes nothing
//! read past the cut, puts no output in place and leaves no temp file.
//!
//! Each case cuts the dump at a moment the command is known to be in the middle of reading it:
//! a command writing to a pipe is held by the pipe (the test reads a little, then cuts); one
//! writing a file is stopped (SIGSTOP) once its temp file exists and holds less than the whole
//! output, cut, and continued. No case depends on a sleep.

use super::util::*;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use walscope::dump::{DumpFile, OpenOptions};

/// About 16 MB of Milvus traffic: four chunks of rows and more, so a command held by a pipe at
/// its first chunk has not read the half of the file where the cut goes.
const MESSAGES: u64 = 8000;

struct Big {
    path: PathBuf,
    whole: Vec<u8>,
    /// Where each frame ends.
    ends: Vec<u64>,
}

impl Big {
    fn new(d: &Path) -> Big {
        let path = sample_dump(d, "big.dump", MESSAGES);
        let whole = std::fs::read(&path).unwrap();
        let dump = DumpFile::open(&path, OpenOptions::default()).unwrap();
        dump.wait_indexed();
        let ends = (0..dump.frame_count()).map(|i| dump.frame(i).unwrap().end()).collect();
        Big { path, whole, ends }
    }

    /// The dump whole again (between cases, while nothing reads it).
    fn restore(&self) {
        std::fs::write(&self.path, &self.whole).unwrap();
    }

    /// Cuts the dump 100 bytes into frame `k`; returns the new size.
    fn cut_in(&self, k: usize) -> u64 {
        let at = self.ends[k - 1] + 100;
        std::fs::OpenOptions::new().write(true).open(&self.path).unwrap().set_len(at).unwrap();
        at
    }

    /// The words every case must print: both sizes, and the first frame not read.
    fn words(&self, at: u64, k: usize) -> [String; 3] {
        [
            "changed while it was read".to_string(),
            format!("shrank from {} to {at} bytes", self.whole.len()),
            format!("frames from {k} on"),
        ]
    }
}

fn spawn(d: &Path, args: &[&str]) -> Child {
    command(d, args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

fn says(o: &Output, words: &[String]) {
    let err = stderr(o);
    for w in words {
        assert!(err.contains(w.as_str()), "expected {w:?} in: {err}");
    }
}

/// `inspect`, `inspect --jsonl`, `export --to jsonl --out -` and `export --to dump --out -`,
/// each held by its pipe after its first rows, the dump cut in the middle of a frame past the
/// rows read so far: the command fails in words, and what it printed is exactly what a whole
/// run prints for the frames before the cut, nothing read past it.
#[test]
fn a_dump_cut_under_a_command_writing_to_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let big = Big::new(d);
    let k = big.ends.len() * 5 / 8;
    let cases: [&[&str]; 4] = [
        &["inspect", "big.dump"],
        &["inspect", "big.dump", "--jsonl"],
        &["export", "big.dump", "--to", "jsonl", "--out", "-"],
        &["export", "big.dump", "--to", "dump", "--out", "-"],
    ];
    for args in cases {
        big.restore();
        let whole = walscope(d, args);
        assert!(whole.status.success(), "{args:?}: {}", stderr(&whole));
        let mut child = spawn(d, args);
        let mut first = vec![0u8; 16 << 10];
        child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
        let at = big.cut_in(k);
        let o = child.wait_with_output().unwrap();
        let printed = [first, o.stdout.clone()].concat();
        no_panic(&o);
        assert!(!o.status.success(), "{args:?}: exit 0 after the cut");
        says(&o, &big.words(at, k));
        assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
        if args.contains(&"dump") {
            // The frames before the cut, byte for byte (the dump is varint-delimited already).
            assert!(printed == big.whole[..big.ends[k - 1] as usize], "{args:?}: {} bytes", printed.len());
            continue;
        }
        // Rows (or JSON lines) of frames 0..k exactly as a whole run prints them.
        let rows = |out: &[u8]| -> Vec<String> {
            let text = String::from_utf8_lossy(out).into_owned();
            let is_row = |l: &&str| {
                l.starts_with("{\"frame\"")
                    || l.split_whitespace().next().is_some_and(|w| w.parse::<u64>().is_ok())
            };
            text.lines().filter(is_row).map(str::to_string).collect()
        };
        let (got, want) = (rows(&printed), rows(&whole.stdout));
        assert_eq!(want.len(), big.ends.len(), "{args:?}: a whole run lists every frame");
        assert!(got == want[..k], "{args:?}: {} rows printed, {k} wanted", got.len());
    }
}

/// `export --to jsonl` and `--to dump` into a file (new, or an existing one with --force),
/// stopped while writing its temp file, the dump cut, continued: it fails in words, the output
/// is absent or exactly as it was (no backup made), and no temp file is left.
#[cfg(unix)]
#[test]
fn a_dump_cut_under_an_export_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let big = Big::new(d);
    let k = big.ends.len() / 2;
    for (to, out) in [("jsonl", "out.jsonl"), ("dump", "out.dump")] {
        // How large the whole output is.
        big.restore();
        let whole = d.join(format!("whole.{to}"));
        let o = walscope(d, &["export", "big.dump", "--to", to, "--out", &whole.display().to_string()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let full = std::fs::metadata(&whole).unwrap().len();
        for p in [whole.clone(), walscope::dump::manifest_path(&whole)] {
            let _ = std::fs::remove_file(p);
        }
        for existing in [false, true] {
            let mut args = vec!["export", "big.dump", "--to", to, "--out", out];
            if existing {
                args.push("--force");
            }
            let reset = || {
                big.restore();
                for p in [d.join(out), walscope::dump::manifest_path(&d.join(out))] {
                    let _ = std::fs::remove_file(p);
                }
                if existing {
                    std::fs::write(d.join(out), b"the operator's own file").unwrap();
                }
                snapshot(d)
            };
            let (o, mut before, at) = cut_while_writing(d, &args, full, reset, &big, k);
            before.insert(PathBuf::from("big.dump"), checksum(&big.path).unwrap());
            failed_cleanly(&o, d, &before, "changed while it was read");
            says(&o, &big.words(at, k));
        }
    }
}

/// Runs `args` (after `reset`, which gives the files as they are before) and stops it once its
/// temp file exists and holds less than the whole output (`full` bytes, less the writers'
/// buffers: so it is still writing rows, before its last check), cuts the dump in frame `k`,
/// continues it and waits. Tries again when the command was too quick to be caught.
#[cfg(unix)]
fn cut_while_writing(
    d: &Path,
    args: &[&str],
    full: u64,
    reset: impl Fn() -> Snapshot,
    big: &Big,
    k: usize,
) -> (Output, Snapshot, u64) {
    for _ in 0..10 {
        let before = reset();
        let mut child = spawn(d, args);
        let pid = child.id() as libc::pid_t;
        let caught = loop {
            // Its temp file; or the output itself, growing (a build that writes in place).
            let temp = std::fs::read_dir(d).unwrap().flatten().find(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let growing =
                    Some(name.as_str()) == args.get(5).copied() && e.metadata().is_ok_and(|m| m.len() > 1000);
                (name.contains(".walscope-tmp-") && !name.contains("manifest")) || growing
            });
            if let Some(t) = temp {
                // SAFETY: our own child.
                unsafe { libc::kill(pid, libc::SIGSTOP) };
                if t.metadata().map_or(u64::MAX, |m| m.len()) + (4 << 20) < full {
                    break true;
                }
                // SAFETY: our own child.
                unsafe { libc::kill(pid, libc::SIGCONT) };
                break false;
            }
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            std::thread::yield_now();
        };
        if !caught {
            let _ = child.wait_with_output();
            continue;
        }
        let at = big.cut_in(k);
        // SAFETY: our own child.
        unsafe { libc::kill(pid, libc::SIGCONT) };
        return (child.wait_with_output().unwrap(), before, at);
    }
    panic!("{args:?} was never caught while writing its temp file");
}

type Snapshot = std::collections::BTreeMap<PathBuf, (u64, u64)>;

/// `inspect --stats`, stopped as soon as it has mapped the dump, the dump cut, continued: the
/// counts are not printed, the command fails in words.
#[cfg(target_os = "linux")]
#[test]
fn a_dump_cut_under_inspect_stats() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let big = Big::new(d);
    let k = big.ends.len() / 2;
    let mut child = spawn(d, &["inspect", "big.dump", "--stats"]);
    let pid = child.id() as libc::pid_t;
    let maps = format!("/proc/{pid}/maps");
    let name = big.path.canonicalize().unwrap().display().to_string();
    while !std::fs::read_to_string(&maps).unwrap_or_default().contains(&name) {
        assert!(child.try_wait().unwrap().is_none(), "it ended before it was caught");
        std::thread::yield_now();
    }
    // SAFETY: our own child.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let at = big.cut_in(k);
    // SAFETY: our own child.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let o = child.wait_with_output().unwrap();
    no_panic(&o);
    assert!(!o.status.success(), "exit 0 after the cut: {}", stdout(&o));
    says(&o, &big.words(at, k));
    assert!(!stdout(&o).contains("matching frames"), "counts printed: {}", stdout(&o));
}
