//! The checks every case of the catalogue makes: what each file holds before and after
//! (checksums), the exit code, leftovers, the words, and no panic.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary under test; `WALSCOPE_TEST_BIN` runs the catalogue against another build (an
/// older release, to show each case failed before it was fixed).
pub fn bin() -> String {
    std::env::var("WALSCOPE_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_walscope").to_string())
}

/// Runs the binary with a private config and cache directory (never the user's).
pub fn walscope(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().expect("run walscope")
}

/// The command [`walscope`] runs, to add stdin or a limit.
pub fn command(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args)
        .current_dir(dir)
        .env("WALSCOPE_CONFIG_DIR", dir.join(".config"))
        .env("WALSCOPE_CACHE_DIR", dir.join(".cache"))
        .stdin(Stdio::null());
    c
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A checksum of a file's bytes (or `None` when it does not exist).
pub fn checksum(path: &Path) -> Option<(u64, u64)> {
    let bytes = std::fs::read(path).ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    Some((bytes.len() as u64, h.finish()))
}

/// Every regular file under `dir` (but the private config and cache) with its checksum.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, u64)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name == ".config" || name == ".cache" {
                continue;
            }
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => {
                    if let Some(c) = checksum(&p) {
                        out.insert(p.strip_prefix(dir).unwrap_or(&p).to_path_buf(), c);
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// Temp files of walscope's saves left anywhere under `dir`.
pub fn leftovers(dir: &Path) -> Vec<PathBuf> {
    snapshot(dir).into_keys().filter(|p| p.to_string_lossy().contains(".walscope-tmp-")).collect()
}

/// The checks every failed command must pass: it failed (not by a panic), said `words`, and
/// left every file under `dir` as `before` and no temp file.
pub fn failed_cleanly(o: &Output, dir: &Path, before: &BTreeMap<PathBuf, (u64, u64)>, words: &str) {
    let err = stderr(o);
    assert!(!o.status.success(), "expected a failure, got success; stderr: {err}");
    no_panic(o);
    assert!(err.contains(words), "expected the words {words:?} in: {err}");
    assert_eq!(&snapshot(dir), before, "files changed; stderr: {err}");
    assert!(leftovers(dir).is_empty(), "temp files left: {:?}", leftovers(dir));
}

/// Never a panic: no exit code 101, no "panicked" in the output, no signal.
pub fn no_panic(o: &Output) {
    let err = stderr(o);
    assert!(!err.contains("panicked"), "panicked: {err}");
    assert_ne!(o.status.code(), Some(101), "exit 101 (a panic): {err}");
    assert!(o.status.code().is_some(), "killed by a signal ({:?}): {err}", o.status);
}

/// A realistic Milvus dump of `messages` messages (with its manifest) at `dir/name`.
pub fn sample_dump(dir: &Path, name: &str, messages: u64) -> PathBuf {
    let p = dir.join(name);
    let set = walscope::schema::SchemaSet::builtin();
    walscope::sim::sample::write_milvus_dump(
        set.pool(),
        &p,
        messages,
        3,
        walscope::dump::SyncPolicy::default(),
        None,
    )
    .expect("sample dump");
    p
}

/// Makes a FIFO at `path`.
#[cfg(unix)]
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().expect("utf-8 path")).expect("no NUL");
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
}

/// Runs `c` (stdout and stderr captured) and waits for it at most `limit`: a command still
/// running then is killed and the test fails with `what` and what it printed. A hang is a
/// failure of its own, never a test that waits for ever.
pub fn finish_within(c: &mut Command, limit: std::time::Duration, what: &str) -> Output {
    let mut child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let started = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().expect("output");
            panic!("{what}: still running after {limit:?}; stderr: {}", stderr(&o));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}
