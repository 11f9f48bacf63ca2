//! What the user names as an input: a regular file (mapped or read by its owner), `-` for
//! standard input, or a stream that can be read only once (a FIFO, a process substitution such
//! as `<(cat dump)`, a character device). A stream is read once, whole, into a buffer of at most
//! [`STREAM_LIMIT`] bytes, and never opened again: reading it twice would find it empty.
//!
//! Must never: hold more than the limit of a stream (it is refused above it, with the limit
//! named), or report a stream as empty because it was read before.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The most bytes read from a stream (standard input, a FIFO, a device) before it is refused.
pub const STREAM_LIMIT: u64 = 1 << 30;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "{} is {what} that gives more than {limit} bytes, the most walscope reads from a stream: save it to a file first and open that",
        path.display()
    )]
    TooLarge { path: PathBuf, what: &'static str, limit: u64 },
    #[error("{} is a folder: name a file", path.display())]
    Folder { path: PathBuf },
}

/// What kind of input a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A regular file: it can be mapped, and read again.
    File,
    /// Something that can be read only once; the words say what.
    Stream(&'static str),
}

/// What `path` is (`-` is standard input).
pub fn kind(path: &Path) -> Result<InputKind, InputError> {
    if crate::atomic::is_stdio(path) {
        return Ok(InputKind::Stream("standard input"));
    }
    let m = std::fs::metadata(path).map_err(|source| InputError::Io { path: path.to_path_buf(), source })?;
    if m.is_file() {
        Ok(InputKind::File)
    } else if m.is_dir() {
        Err(InputError::Folder { path: path.to_path_buf() })
    } else {
        Ok(InputKind::Stream(crate::atomic::output::describe(&m)))
    }
}

/// The whole of `path`: a file as it is, a stream read once up to [`STREAM_LIMIT`].
pub fn read_all(path: &Path) -> Result<Vec<u8>, InputError> {
    read_bounded(path, STREAM_LIMIT)
}

/// [`read_all`] with another limit for streams (tests).
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let io = |source| InputError::Io { path: path.to_path_buf(), source };
    match kind(path)? {
        InputKind::File => std::fs::read(path).map_err(io),
        InputKind::Stream(what) => {
            let mut buf = Vec::new();
            let read = if crate::atomic::is_stdio(path) {
                std::io::stdin().lock().take(limit + 1).read_to_end(&mut buf)
            } else {
                std::fs::File::open(path).and_then(|f| f.take(limit + 1).read_to_end(&mut buf))
            };
            read.map_err(io)?;
            if buf.len() as u64 > limit {
                return Err(InputError::TooLarge { path: path.to_path_buf(), what, limit });
            }
            Ok(buf)
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A FIFO is read once, whole; above the limit it is refused with the limit named.
    #[test]
    fn a_fifo_is_read_once_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(kind(&fifo).unwrap(), InputKind::Stream("a FIFO (named pipe)"));
        let writer = |n: usize| {
            let f = fifo.clone();
            std::thread::spawn(move || std::fs::write(f, vec![7u8; n]))
        };
        let w = writer(1000);
        assert_eq!(read_bounded(&fifo, 1000).unwrap(), vec![7u8; 1000]);
        w.join().unwrap().unwrap();
        let w = writer(1001);
        let e = read_bounded(&fifo, 1000).unwrap_err();
        assert!(e.to_string().contains("a FIFO (named pipe) that gives more than"), "{e}");
        let _ = w.join();
    }
}
