//! Which outputs a command may write, decided before anything is opened for writing:
//! - an output that is one of the command's inputs (the same file: also through a hard link or
//!   a symlink) is refused, whatever else was asked;
//! - an output that already exists is refused unless the user asked to replace it (`--force`,
//!   or the window's confirmation); it is then kept as `FILE.bak` by the write itself;
//! - only regular files are outputs: a folder, a FIFO or a device is refused (`-` is how a
//!   command writes to standard output).
//!
//! Must never: open, create or touch the output. It only looks.

use super::backup_path;
use std::fs::Metadata;
use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error(
        "{} already exists: nothing was written. Add --force to replace it (its current contents are then kept as {})",
        path.display(),
        backup_path(path).display()
    )]
    Exists { path: PathBuf },
    #[error(
        "{} is the input {} (the same file): writing it would destroy what is being read; nothing was written. Choose another output",
        output.display(),
        input.display()
    )]
    IsInput { output: PathBuf, input: PathBuf },
    #[error("{} is {what}, not a regular file: nothing was written. Name a file (or - for standard output)", path.display())]
    NotAFile { path: PathBuf, what: &'static str },
    #[error("folder {} does not exist: nothing was written. Create it first or choose another", folder.display())]
    NoFolder { folder: PathBuf },
    #[error("cannot look at {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

/// Whether a path names standard input or output (`-`).
pub fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Checks that `out` may be written by a command reading `inputs`; `replace` is the user's
/// permission to replace an existing output (`--force`).
pub fn check_output(out: &Path, inputs: &[&Path], replace: bool) -> Result<(), OutputError> {
    let io_err = |source: io::Error| OutputError::Io { path: out.to_path_buf(), source };
    for input in inputs.iter().filter(|p| !is_stdio(p)) {
        if same_file(out, input).map_err(io_err)? {
            return Err(OutputError::IsInput { output: out.to_path_buf(), input: input.to_path_buf() });
        }
    }
    match std::fs::metadata(out) {
        Ok(m) if !m.is_file() => Err(OutputError::NotAFile { path: out.to_path_buf(), what: describe(&m) }),
        Ok(_) if !replace => Err(OutputError::Exists { path: out.to_path_buf() }),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if std::fs::symlink_metadata(out).is_ok() {
                // A link to nothing: writing it would create a file somewhere else.
                return Err(OutputError::NotAFile {
                    path: out.to_path_buf(),
                    what: "a symlink to a missing file",
                });
            }
            match out.parent().filter(|p| !p.as_os_str().is_empty()) {
                Some(folder) if !folder.is_dir() => {
                    Err(OutputError::NoFolder { folder: folder.to_path_buf() })
                }
                _ => Ok(()),
            }
        }
        Err(e) => Err(io_err(e)),
    }
}

/// Whether `a` and `b` are one file (the same device and inode, links followed). A path that
/// does not exist is no file.
pub fn same_file(a: &Path, b: &Path) -> io::Result<bool> {
    let (ma, mb) = match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        (Err(e), _) | (_, Err(e)) => return Err(e),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Ok(ma.dev() == mb.dev() && ma.ino() == mb.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = (ma, mb);
        Ok(std::fs::canonicalize(a)? == std::fs::canonicalize(b)?)
    }
}

/// What a path that is not a regular file is, in words.
pub fn describe(m: &Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}
