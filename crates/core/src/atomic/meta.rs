//! Who may read a file survives its replacement: owner, group, mode (with setuid/setgid/sticky
//! bits) and, on Linux, extended attributes (POSIX ACLs, security labels, `user.*` tags) are
//! copied from the file being replaced onto its new contents before the rename.
//!
//! Must never: leave a replacement readable by more people than the original, or drop a
//! `user.*` attribute silently (an attribute of a privileged namespace that this process may
//! not set is left to the filesystem's default, as `cp -a` does).

use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

/// Copies `old`'s owner, group, mode and extended attributes (read from `from`) onto `to`.
pub(super) fn copy(from: &Path, old: &Metadata, to: &File) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let ours = to.metadata()?;
        if (ours.uid(), ours.gid()) != (old.uid(), old.gid()) {
            std::os::unix::fs::fchown(to, Some(old.uid()), Some(old.gid())).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "cannot keep the owner {}:{} of {} ({e}): nothing was written; run as that user or as root",
                        old.uid(),
                        old.gid(),
                        from.display()
                    ),
                )
            })?;
        }
        // After the owner: changing an owner clears setuid/setgid.
        to.set_permissions(std::fs::Permissions::from_mode(old.mode() & 0o7777))?;
    }
    #[cfg(not(unix))]
    to.set_permissions(old.permissions())?;
    #[cfg(target_os = "linux")]
    xattrs::copy(from, to)?;
    Ok(())
}

#[cfg(target_os = "linux")]
mod xattrs {
    use std::ffi::CString;
    use std::fs::File;
    use std::io;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::AsRawFd;
    use std::path::Path;

    /// Lists, reads and sets every attribute. A filesystem without attributes has none to copy.
    pub fn copy(from: &Path, to: &File) -> io::Result<()> {
        let path = CString::new(from.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path with a NUL byte"))?;
        let Some(names) = list(&path)? else { return Ok(()) };
        for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
            let Ok(cname) = CString::new(name) else { continue };
            let Some(value) = get(&path, &cname)? else { continue };
            // SAFETY: `cname` is NUL-terminated; `value` is a live buffer of its length.
            let r = unsafe {
                libc::fsetxattr(to.as_raw_fd(), cname.as_ptr(), value.as_ptr().cast(), value.len(), 0)
            };
            if r != 0 && name.starts_with(b"user.") {
                let e = io::Error::last_os_error();
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "cannot keep the attribute {} of {} ({e}): nothing was written",
                        String::from_utf8_lossy(name),
                        from.display()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The NUL-separated attribute names, or `None` where the filesystem has no attributes.
    fn list(path: &CString) -> io::Result<Option<Vec<u8>>> {
        for _ in 0..4 {
            // SAFETY: a size query with a null buffer.
            let n = unsafe { libc::listxattr(path.as_ptr(), std::ptr::null_mut(), 0) };
            if n < 0 {
                return unsupported(io::Error::last_os_error());
            }
            if n == 0 {
                return Ok(None);
            }
            let mut buf = vec![0u8; n as usize];
            // SAFETY: `buf` is a live buffer of the length given.
            let m = unsafe { libc::listxattr(path.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
            if m >= 0 {
                buf.truncate(m as usize);
                return Ok(Some(buf));
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::ERANGE) {
                return unsupported(e);
            }
            // The list grew between the two calls: ask again.
        }
        Err(io::Error::other("the attribute list keeps changing"))
    }

    fn get(path: &CString, name: &CString) -> io::Result<Option<Vec<u8>>> {
        for _ in 0..4 {
            // SAFETY: a size query with a null buffer.
            let n = unsafe { libc::getxattr(path.as_ptr(), name.as_ptr(), std::ptr::null_mut(), 0) };
            if n < 0 {
                // Gone since it was listed, or not ours to read: nothing to copy.
                return Ok(None);
            }
            let mut buf = vec![0u8; n as usize];
            // SAFETY: `buf` is a live buffer of the length given.
            let m =
                unsafe { libc::getxattr(path.as_ptr(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
            if m >= 0 {
                buf.truncate(m as usize);
                return Ok(Some(buf));
            }
            if io::Error::last_os_error().raw_os_error() != Some(libc::ERANGE) {
                return Ok(None);
            }
        }
        Ok(None)
    }

    fn unsupported(e: io::Error) -> io::Result<Option<Vec<u8>>> {
        match e.raw_os_error() {
            Some(libc::ENOTSUP) | Some(libc::ENOSYS) => Ok(None),
            _ => Err(e),
        }
    }
}
