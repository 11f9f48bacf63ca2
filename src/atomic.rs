//! Atomic saves: write a temp file beside the target, fsync, keep `FILE.bak`, rename over.
//! Everything that replaces a file the user has (dumps, profiles.json, the history) goes
//! through here; it depends on nothing else in the crate, so any module may use it.
//! Must never: leave the target truncated or half-written, or overwrite the backup with a
//! file that did not exist.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Path of the backup kept beside `path`.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".bak");
    path.with_file_name(name)
}

/// Replaces `path` with `bytes` atomically. With `keep_backup`, the previous contents are
/// first copied to `FILE.bak`. Returns the backup path when one was written.
pub fn atomic_write(path: &Path, bytes: &[u8], keep_backup: bool) -> std::io::Result<Option<PathBuf>> {
    atomic_write_with(path, keep_backup, |f| f.write_all(bytes))
}

/// [`atomic_write`] of what `write` writes (buffered), so a file of any size is never held in
/// memory. When `write` fails or panics, `path` keeps what it had and the temp file is removed.
pub fn atomic_write_with(
    path: &Path,
    keep_backup: bool,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<Option<PathBuf>> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    // Unique per save, also between two saves of the same path in one process.
    static SAVES: AtomicU64 = AtomicU64::new(0);
    let n = SAVES.fetch_add(1, Ordering::Relaxed);
    let tmp = &dir.join(format!(".{name}.walscope-tmp-{}-{n}", std::process::id()));
    let mut guard = TempFile(Some(tmp.clone()));
    (|| {
        let mut f = std::io::BufWriter::with_capacity(1 << 20, File::create(tmp)?);
        write(&mut f)?;
        let f = f.into_inner().map_err(std::io::IntoInnerError::into_error)?;
        f.sync_all()?;
        drop(f);
        let mut backup = None;
        if keep_backup && path.exists() {
            let b = backup_path(path);
            fs::copy(path, &b)?;
            File::open(&b)?.sync_all()?;
            backup = Some(b);
        }
        fs::rename(tmp, path)?;
        guard.0 = None;
        // Make the rename itself durable.
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(backup)
    })()
}

/// The temp file of a save, removed unless it was renamed over the target (then `None`):
/// after a failed write, and after a panic in the caller's writing too.
struct TempFile(Option<PathBuf>);

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_keeps_backup() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.bin");
        assert_eq!(atomic_write(&p, b"one", true).unwrap(), None);
        let b = atomic_write(&p, b"two", true).unwrap().unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(fs::read(&b).unwrap(), b"one");
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("walscope-tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    /// Two saves of one path at once in one process (two opens of a dump storing its index)
    /// each write their own temp file: both succeed, and the file is one of them whole.
    #[test]
    fn two_saves_of_one_path_at_once_do_not_share_a_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.idx");
        let both_writing = std::sync::Barrier::new(2);
        let results = std::thread::scope(|s| {
            let save = |byte: u8| {
                let (p, both_writing) = (&p, &both_writing);
                s.spawn(move || {
                    atomic_write_with(p, false, |w| {
                        w.write_all(&[byte; 1000])?;
                        both_writing.wait();
                        Ok(())
                    })
                })
            };
            let (a, b) = (save(b'a'), save(b'b'));
            [a.join().unwrap(), b.join().unwrap()]
        });
        assert!(results.iter().all(Result::is_ok), "{results:?}");
        let got = fs::read(&p).unwrap();
        assert!(got == vec![b'a'; 1000] || got == vec![b'b'; 1000]);
        let names: Vec<_> =
            fs::read_dir(dir.path()).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("x.idx")]);
    }

    /// A writer that fails part way (a row that cannot be rendered, a full disk) leaves the
    /// old file whole and no temp file behind.
    #[test]
    fn a_failed_streamed_write_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.jsonl");
        atomic_write(&p, b"old", false).unwrap();
        let failed = atomic_write_with(&p, true, |w| {
            w.write_all(&[b'x'; 3 << 20])?;
            Err(std::io::Error::other("row 7 cannot be written"))
        });
        assert_eq!(failed.unwrap_err().to_string(), "row 7 cannot be written");
        assert_eq!(fs::read(&p).unwrap(), b"old");
        let names: Vec<_> =
            fs::read_dir(dir.path()).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("x.jsonl")]);
        // A writer that panics halfway (a bug while rendering rows) leaves no temp file either.
        let panicked = std::panic::catch_unwind(|| {
            atomic_write_with(&p, true, |w| {
                w.write_all(&[b'x'; 3 << 20])?;
                panic!("the renderer panics");
            })
        });
        assert!(panicked.is_err());
        assert_eq!(fs::read(&p).unwrap(), b"old");
        let names: Vec<_> =
            fs::read_dir(dir.path()).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("x.jsonl")]);
        // And one that succeeds writes every byte it was given, past the buffer's size.
        atomic_write_with(&p, false, |w| (0..3u8).try_for_each(|i| w.write_all(&[b'a' + i; 1 << 20])))
            .unwrap();
        let got = fs::read(&p).unwrap();
        assert_eq!((got.len(), got[0], got[(2 << 20) + 5]), (3 << 20, b'a', b'c'));
    }
}
