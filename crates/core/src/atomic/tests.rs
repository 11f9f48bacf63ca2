use super::*;

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into())
        .collect();
    v.sort();
    v
}

#[test]
fn replaces_and_keeps_backup() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.bin");
    assert_eq!(atomic_write(&p, b"one", true).unwrap(), Saved::Written { backup: None });
    let saved = atomic_write(&p, b"two", true).unwrap();
    let b = saved.backup().unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"two");
    assert_eq!(fs::read(b).unwrap(), b"one");
    assert_eq!(names(dir.path()), ["x.bin", "x.bin.bak"]);
}

/// A save that changes no byte writes nothing: the file keeps its inode and time, and the
/// backup still holds the real original (not a copy of the current file).
#[test]
fn a_save_that_changes_nothing_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.bin");
    atomic_write(&p, b"original", true).unwrap();
    atomic_write(&p, b"edited", true).unwrap();
    let before = fs::metadata(&p).unwrap();
    assert_eq!(atomic_write(&p, b"edited", true).unwrap(), Saved::Unchanged);
    let streamed = atomic_write_with(&p, true, |w| w.write_all(b"edited")).unwrap();
    assert_eq!(streamed, Saved::Unchanged);
    assert_eq!(fs::read(backup_path(&p)).unwrap(), b"original");
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let after = fs::metadata(&p).unwrap();
        assert_eq!((before.ino(), before.mtime_nsec()), (after.ino(), after.mtime_nsec()));
    }
    assert_eq!(names(dir.path()), ["x.bin", "x.bin.bak"]);
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
    assert_eq!(names(dir.path()), ["x.idx"]);
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
        Err(io::Error::other("row 7 cannot be written"))
    });
    assert_eq!(failed.unwrap_err().to_string(), "row 7 cannot be written");
    assert_eq!(fs::read(&p).unwrap(), b"old");
    assert_eq!(names(dir.path()), ["x.jsonl"]);
    // A writer that panics halfway (a bug while rendering rows) leaves no temp file either.
    let panicked = std::panic::catch_unwind(|| {
        atomic_write_with(&p, true, |w| {
            w.write_all(&[b'x'; 3 << 20])?;
            panic!("the renderer panics");
        })
    });
    assert!(panicked.is_err());
    assert_eq!(fs::read(&p).unwrap(), b"old");
    assert_eq!(names(dir.path()), ["x.jsonl"]);
    // And one that succeeds writes every byte it was given, past the buffer's size.
    atomic_write_with(&p, false, |w| (0..3u8).try_for_each(|i| w.write_all(&[b'a' + i; 1 << 20]))).unwrap();
    let got = fs::read(&p).unwrap();
    assert_eq!((got.len(), got[0], got[(2 << 20) + 5]), (3 << 20, b'a', b'c'));
}

/// Owner, group and mode survive a replacement; a 0444 file stays 0444 and a 0600 file is
/// never readable by others, not even its backup.
#[cfg(unix)]
#[test]
fn mode_survives_and_the_backup_is_the_old_inode() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    for mode in [0o600, 0o444, 0o640, 0o755] {
        let p = dir.path().join(format!("f{mode:o}"));
        atomic_write(&p, b"one", false).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
        let before = fs::metadata(&p).unwrap();
        let saved = atomic_write(&p, b"two!", true).unwrap();
        let after = fs::metadata(&p).unwrap();
        assert_eq!(after.mode() & 0o7777, mode, "mode of {}", p.display());
        assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
        let bak = fs::metadata(saved.backup().unwrap()).unwrap();
        assert_eq!((bak.ino(), bak.mode() & 0o7777), (before.ino(), mode));
    }
}

/// `user.*` extended attributes (and ACLs, stored the same way) come along, where the
/// filesystem has them.
#[cfg(target_os = "linux")]
#[test]
fn extended_attributes_survive() {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("tagged");
    atomic_write(&p, b"one", false).unwrap();
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    let (name, value) = (c"user.walscope.test", b"kept");
    // SAFETY: valid C strings and a live buffer.
    let set = unsafe { libc::setxattr(c.as_ptr(), name.as_ptr(), value.as_ptr().cast(), value.len(), 0) };
    if set != 0 {
        eprintln!("skipped: this filesystem takes no user.* attributes ({})", io::Error::last_os_error());
        return;
    }
    atomic_write(&p, b"two", true).unwrap();
    let mut buf = [0u8; 16];
    // SAFETY: as above.
    let n = unsafe { libc::getxattr(c.as_ptr(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    assert_eq!(&buf[..n.max(0) as usize], value);
}

/// A symlink is followed: the file it names gets the new bytes and the link stays a link.
#[cfg(unix)]
#[test]
fn a_symlink_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    let link = dir.path().join("link");
    atomic_write(&real, b"one", false).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    atomic_write(&link, b"two", false).unwrap();
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(fs::read(&real).unwrap(), b"two");
}

/// Only regular files are replaced: a FIFO (or a device) named as the target is refused, and
/// nothing is created beside it.
#[cfg(unix)]
#[test]
fn a_fifo_is_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let e = atomic_write(&fifo, b"x", true).unwrap_err();
    assert!(e.to_string().contains("a FIFO (named pipe), not a regular file"), "{e}");
    assert_eq!(names(dir.path()), ["pipe"]);
    let e = check_output(&fifo, &[], true).unwrap_err();
    assert!(matches!(e, OutputError::NotAFile { .. }), "{e}");
}

/// The output rules: an input is never an output (also through a hard link or a symlink); an
/// existing output needs the user's word; a missing folder is named.
#[cfg(unix)]
#[test]
fn outputs_are_checked_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.dump");
    fs::write(&input, b"data").unwrap();
    let hard = dir.path().join("hard.dump");
    fs::hard_link(&input, &hard).unwrap();
    let soft = dir.path().join("soft.dump");
    std::os::unix::fs::symlink(&input, &soft).unwrap();
    for out in [&input, &hard, &soft] {
        let e = check_output(out, &[&input], true).unwrap_err();
        assert!(matches!(e, OutputError::IsInput { .. }), "{}: {e}", out.display());
        assert!(e.to_string().contains("the same file"), "{e}");
    }
    let other = dir.path().join("other.dump");
    check_output(&other, &[&input], false).unwrap();
    fs::write(&other, b"old").unwrap();
    let e = check_output(&other, &[&input], false).unwrap_err();
    assert!(e.to_string().contains("already exists") && e.to_string().contains("--force"), "{e}");
    check_output(&other, &[&input], true).unwrap();
    let e = check_output(&dir.path().join("no/such/out"), &[], false).unwrap_err();
    assert!(matches!(e, OutputError::NoFolder { .. }), "{e}");
    let e = check_output(dir.path(), &[], true).unwrap_err();
    assert!(e.to_string().contains("is a folder"), "{e}");
    assert_eq!(fs::read(&other).unwrap(), b"old");
}

/// Moving a file aside keeps it whole as the backup (the same inode) and leaves no file at the
/// path; nothing there is no error.
#[test]
fn move_to_backup_renames() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.dump");
    assert_eq!(move_to_backup(&p).unwrap(), None);
    fs::write(&p, b"complete salvage").unwrap();
    let b = move_to_backup(&p).unwrap().unwrap();
    assert_eq!(fs::read(b).unwrap(), b"complete salvage");
    assert!(!p.exists());
}
