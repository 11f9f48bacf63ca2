//! What walscope does to your files, in one place: every write of a file the user has or asked
//! for (dumps, exports, edits, profiles.json, the history, manifests, the index cache) goes
//! through here. It depends on nothing else in the crate, so any module may use it.
//!
//! The contract (docs/safety.md, "What walscope does to your files", holds the same sentences):
//! - the new contents go to a temp file in the target's folder, are fsynced, and are renamed
//!   over the target only at the end: a failed, interrupted or panicking write leaves the
//!   target (and its backup) exactly as they were, and removes its temp file;
//! - a backup (`FILE.bak`) is made the same way: a hard link to the old file (no bytes copied,
//!   so a full disk cannot cut it short), or where links are refused a copy into a temp file
//!   that is fsynced and renamed; it replaces the previous backup only once it is whole;
//! - a write that would not change a byte writes nothing, keeps the backup, and says so
//!   ([`Saved::Unchanged`]);
//! - a replaced file keeps its owner, group and mode, and on Linux its extended attributes
//!   (ACLs, labels); the temp file is private (0600) until then, so a 0600 file is never
//!   readable by others on the way;
//! - a symlink is followed: the file it names is replaced, the link stays a link;
//! - only regular files are replaced: a directory, a FIFO or a device is refused;
//! - which outputs may be written at all (an existing one only when asked, never an input) is
//!   [`output`]'s to decide, before anything is opened for writing.
//!
//! Must never: leave the target truncated or half-written, overwrite the backup with a partial
//! or identical copy, or widen who may read a file.

mod meta;
pub mod output;
#[cfg(test)]
mod tests;

pub use output::{OutputError, check_output, is_stdio};

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Path of the backup kept beside `path`.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".bak");
    path.with_file_name(name)
}

/// What a save did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Saved {
    /// The file already held exactly these bytes: nothing was written, the backup is untouched.
    Unchanged,
    /// The file was replaced (or created); `backup` holds its previous contents when one was
    /// asked for and there was a previous file.
    Written { backup: Option<PathBuf> },
}

impl Saved {
    pub fn backup(&self) -> Option<&Path> {
        match self {
            Saved::Written { backup } => backup.as_deref(),
            Saved::Unchanged => None,
        }
    }
    pub fn is_unchanged(&self) -> bool {
        matches!(self, Saved::Unchanged)
    }
}

/// Replaces `path` with `bytes` atomically. With `keep_backup`, the previous contents are kept
/// as `FILE.bak`. Bytes equal to the file's write nothing ([`Saved::Unchanged`]).
pub fn atomic_write(path: &Path, bytes: &[u8], keep_backup: bool) -> io::Result<Saved> {
    let path = follow_link(path)?;
    if holds(&path, bytes)? {
        return Ok(Saved::Unchanged);
    }
    replace(&path, keep_backup, |f| f.write_all(bytes))
}

/// [`atomic_write`] of what `write` writes (buffered), so a file of any size is never held in
/// memory. When `write` fails or panics, `path` keeps what it had and the temp file is removed.
/// Output equal to the file's is found after the fact and nothing is renamed.
pub fn atomic_write_with(
    path: &Path,
    keep_backup: bool,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<Saved> {
    let path = follow_link(path)?;
    replace(&path, keep_backup, write)
}

/// Moves an existing `path` aside as `FILE.bak` (a rename: the old file whole, its owner and
/// mode with it), for a writer that must build its new file in place (a salvage dump grows where
/// a resume will find it). Returns the backup, or `None` when there was no file.
pub fn move_to_backup(path: &Path) -> io::Result<Option<PathBuf>> {
    let path = follow_link(path)?;
    match fs::symlink_metadata(&path) {
        Ok(_) => {
            let b = backup_path(&path);
            fs::rename(&path, &b)?;
            sync_dir(&folder_of(&path));
            Ok(Some(b))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The folder a file is in (`.` for a bare name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A temp file name beside `name` in `dir`, unique per save, also between two saves of the same
/// path in one process.
fn temp_path(dir: &Path, name: &std::ffi::OsStr) -> PathBuf {
    static SAVES: AtomicU64 = AtomicU64::new(0);
    let n = SAVES.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{}.walscope-tmp-{}-{n}", name.to_string_lossy(), std::process::id()))
}

/// Whether a temp file name is one of ours (tests look for leftovers with it).
pub fn is_temp_name(name: &str) -> bool {
    name.contains(".walscope-tmp-")
}

/// The file a symlink names (the link itself is left alone); any other path as it is.
fn follow_link(path: &Path) -> io::Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("{} is a symlink to a file that cannot be reached: {e}", path.display()),
            )
        }),
        _ => Ok(path.to_path_buf()),
    }
}

/// What is at `path` now: a regular file's metadata, nothing, or an error for anything else.
fn existing(path: &Path) -> io::Result<Option<fs::Metadata>> {
    match fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(Some(m)),
        Ok(m) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is {}, not a regular file: nothing was written",
                path.display(),
                output::describe(&m)
            ),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether the regular file at `path` holds exactly `bytes`.
fn holds(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    match existing(path)? {
        Some(m) if m.len() == bytes.len() as u64 => {
            let mut f = File::open(path)?;
            let mut buf = vec![0u8; (1 << 20).min(bytes.len().max(1))];
            let mut at = 0;
            while at < bytes.len() {
                let n = f.read(&mut buf)?;
                if n == 0 || buf[..n] != bytes[at..(at + n).min(bytes.len())] {
                    return Ok(false);
                }
                at += n;
            }
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Whether two files hold the same bytes (read in step, stopping at the first difference).
fn same_bytes(a: &Path, b: &Path) -> io::Result<bool> {
    let (mut fa, mut fb) = (io::BufReader::with_capacity(1 << 20, File::open(a)?), File::open(b)?);
    let mut other = vec![0u8; 1 << 20];
    loop {
        let chunk = io::BufRead::fill_buf(&mut fa)?;
        if chunk.is_empty() {
            return Ok(fb.read(&mut other[..1])? == 0);
        }
        let n = chunk.len().min(other.len());
        if fb.read_exact(&mut other[..n]).is_err() || chunk[..n] != other[..n] {
            return Ok(false);
        }
        io::BufRead::consume(&mut fa, n);
    }
}

fn replace(
    path: &Path,
    keep_backup: bool,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<Saved> {
    let old = existing(path)?;
    let tmp = temp_beside(path);
    let mut guard = TempFile(Some(tmp.clone()));
    let file = create_private(&tmp, old.is_none())?;
    let mut f = io::BufWriter::with_capacity(1 << 20, file);
    write(&mut f)?;
    let file = f.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    drop(file);
    let saved = put_in_place(&tmp, path, old.as_ref(), keep_backup)?;
    guard.0 = None;
    Ok(saved)
}

/// A temp file name in `path`'s folder, for a writer that builds a whole file before
/// [`commit_file`] puts it in place.
pub fn temp_beside(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_os_string()).unwrap_or_else(|| "out".into());
    temp_path(&folder_of(path), &name)
}

/// Creates an empty temp file beside `path` (private while `path` exists, whose mode it gets at
/// [`commit_file`]), for a writer that opens it by name.
pub fn create_temp_beside(path: &Path) -> io::Result<PathBuf> {
    let tmp = temp_beside(path);
    create_private(&tmp, existing(&follow_link(path)?)?.is_none())?;
    Ok(tmp)
}

/// Puts `tmp`, a finished and fsynced file made by [`temp_beside`], in place of `path`, as
/// [`atomic_write`] does: the old file's owner, mode and attributes copied onto it, its old
/// contents kept as `FILE.bak` when asked, nothing renamed when the bytes are the same. `tmp`
/// is gone afterwards, whatever the outcome.
pub fn commit_file(tmp: &Path, path: &Path, keep_backup: bool) -> io::Result<Saved> {
    let _guard = TempFile(Some(tmp.to_path_buf()));
    let path = follow_link(path)?;
    let old = existing(&path)?;
    put_in_place(tmp, &path, old.as_ref(), keep_backup)
}

/// The end of every save: metadata, the same-bytes check, the backup, the rename.
fn put_in_place(tmp: &Path, path: &Path, old: Option<&fs::Metadata>, keep_backup: bool) -> io::Result<Saved> {
    if let Some(m) = old {
        let f = fs::OpenOptions::new().write(true).open(tmp)?;
        meta::copy(path, m, &f)?;
        f.sync_all()?;
        if m.len() == f.metadata()?.len() && same_bytes(tmp, path)? {
            fs::remove_file(tmp)?;
            return Ok(Saved::Unchanged);
        }
    }
    let dir = folder_of(path);
    let backup = match (old, keep_backup) {
        (Some(_), true) => Some(keep_as_backup(path, &dir)?),
        _ => None,
    };
    fs::rename(tmp, path)?;
    sync_dir(&dir);
    Ok(Saved::Written { backup })
}

/// A new temp file: private (0600) when it will replace a file whose mode is then copied onto
/// it, else with the usual mode (0666 less the umask), as any new file.
fn create_private(tmp: &Path, new_file: bool) -> io::Result<File> {
    let mut o = fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(if new_file { 0o666 } else { 0o600 });
    }
    #[cfg(not(unix))]
    let _ = new_file;
    o.open(tmp)
}

/// Makes `FILE.bak` hold what `path` holds now, whole or not at all: a hard link renamed into
/// place (the same inode: owner, mode and bytes as they are), or a fsynced copy where the
/// filesystem refuses links.
fn keep_as_backup(path: &Path, dir: &Path) -> io::Result<PathBuf> {
    let b = backup_path(path);
    let tmp = temp_path(dir, b.file_name().unwrap_or_default());
    let mut guard = TempFile(Some(tmp.clone()));
    if fs::hard_link(path, &tmp).is_err() {
        let mut to = create_private(&tmp, false)?;
        io::copy(&mut File::open(path)?, &mut to)?;
        meta::copy(path, &fs::metadata(path)?, &to)?;
        to.sync_all()?;
    }
    fs::rename(&tmp, &b)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot keep the backup {}: {e}", b.display())))?;
    guard.0 = None;
    Ok(b)
}

/// Makes renames in `dir` durable (best effort: not every platform syncs a folder).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
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
