//! Outputs, backups, owners and modes: the file half of the catalogue (an export onto its
//! source, outputs that exist, a backup on a full disk, a save that changes nothing, a
//! service-owned 0600 file, standard output as `-`).

use super::util::*;
use std::path::Path;
use walscope::atomic::backup_path;
use walscope::dump::manifest_path;

/// `export y.dump --to dump --out y.dump` destroyed y.dump (Bus error, 0 bytes). Now refused
/// before anything is opened, also through a hard link or a symlink, for every kind of export.
#[test]
fn an_export_onto_its_source_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sample_dump(d, "y.dump", 40);
    std::fs::hard_link(d.join("y.dump"), d.join("hard.dump")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(d.join("y.dump"), d.join("soft.dump")).unwrap();
    let before = snapshot(d);
    for out in ["y.dump", "hard.dump", "soft.dump", "./y.dump"] {
        for to in ["dump", "jsonl"] {
            for force in [false, true] {
                let mut args = vec!["export", "y.dump", "--to", to, "--out", out];
                if force {
                    args.push("--force");
                }
                let o = walscope(d, &args);
                failed_cleanly(&o, d, &before, "is the input");
            }
        }
    }
    // The manifest of the source is an input too.
    let o = walscope(d, &["export", "y.dump", "--to", "jsonl", "--out", "y.dump.manifest.json", "--force"]);
    failed_cleanly(&o, d, &before, "is the input");
}

/// `export --to dump`, `edit --out`, `sample`, `encode --out` and `schema export` overwrote an
/// existing output with no backup. Now each refuses without --force, and with it keeps `.bak`.
#[test]
fn an_existing_output_is_refused_without_force_and_kept_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sample_dump(d, "in.dump", 30);
    std::fs::write(d.join("kv.json"), r#"{"key": "k", "value": "v"}"#).unwrap();
    let kv = ["--type", "milvus.proto.common.KeyValuePair"];
    let o = walscope(d, &["encode", kv[0], kv[1], "--from", "json", "--out", "kv.bin", "kv.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let commands: Vec<(Vec<&str>, &str)> = vec![
        (vec!["export", "in.dump", "--to", "dump", "--out", "out.dump"], "out.dump"),
        (vec!["export", "in.dump", "--to", "jsonl", "--out", "out.jsonl"], "out.jsonl"),
        (vec!["edit", "kv.bin", kv[0], kv[1], "--set", "value=w", "--out", "edited.bin"], "edited.bin"),
        (vec!["sample", "--kind", "milvus-dump", "--messages", "10", "--out", "sample.dump"], "sample.dump"),
        (vec!["encode", kv[0], kv[1], "--from", "json", "--out", "enc.bin", "kv.json"], "enc.bin"),
        (vec!["schema", "export", "--out", "schemas.pb"], "schemas.pb"),
    ];
    for (args, out) in commands {
        let o = walscope(d, &args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let first = checksum(&d.join(out)).unwrap();
        // A second run over the output it made: refused, nothing changed.
        std::fs::write(d.join(out), b"the operator's own file").unwrap();
        let before = snapshot(d);
        let o = walscope(d, &args);
        failed_cleanly(&o, d, &before, "already exists");
        assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
        // With --force: replaced, the operator's file kept whole as .bak.
        let mut forced = args.clone();
        forced.push("--force");
        let o = walscope(d, &forced);
        assert!(o.status.success(), "{forced:?}: {}", stderr(&o));
        assert_eq!(std::fs::read(backup_path(&d.join(out))).unwrap(), b"the operator's own file", "{out}");
        if out != "sample.dump" && out != "schemas.pb" {
            assert_eq!(checksum(&d.join(out)).unwrap(), first, "{out} is what the first run made");
        }
        assert!(leftovers(d).is_empty());
    }
}

/// An edit that changes nothing "saved" and replaced FILE.bak with the current file, so the
/// real original was gone. Now it writes nothing and says so; the backup stays the original.
#[test]
fn a_save_that_changes_nothing_keeps_the_backup() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("kv.json"), r#"{"key": "k", "value": "original"}"#).unwrap();
    let kv = ["--type", "milvus.proto.common.KeyValuePair"];
    assert!(
        walscope(d, &["encode", kv[0], kv[1], "--from", "json", "--out", "kv.bin", "kv.json"])
            .status
            .success()
    );
    let original = std::fs::read(d.join("kv.bin")).unwrap();
    let o = walscope(d, &["edit", "kv.bin", kv[0], kv[1], "--set", "value=edited"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.join("kv.bin.bak")).unwrap(), original);
    let before = snapshot(d);
    let o = walscope(d, &["edit", "kv.bin", kv[0], kv[1], "--set", "value=edited"]);
    assert!(o.status.success(), "{}", stderr(&o));
    no_panic(&o);
    assert!(stderr(&o).contains("nothing written"), "{}", stderr(&o));
    assert_eq!(snapshot(d), before);
    assert_eq!(std::fs::read(d.join("kv.bin.bak")).unwrap(), original, "the backup is still the original");
}

/// With room for the new file but not for a copy of the old one (`ulimit -f` between the two
/// sizes), the previous `.bak` was replaced by a fragment. Now the backup is the old file
/// itself (a hard link: no byte written), and a write that fails leaves file and backup whole.
#[cfg(unix)]
#[test]
fn a_full_disk_never_costs_the_backup() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (big, big2) = ("x".repeat(100_000), "y".repeat(100_000));
    std::fs::write(d.join("kv.json"), format!(r#"{{"key": "k", "value": "{big}"}}"#)).unwrap();
    let kv = ["--type", "milvus.proto.common.KeyValuePair"];
    assert!(
        walscope(d, &["encode", kv[0], kv[1], "--from", "json", "--out", "kv.bin", "kv.json"])
            .status
            .success()
    );
    // A first edit makes a .bak of the original; both are large.
    let o = walscope(d, &["edit", "kv.bin", kv[0], kv[1], "--set", &format!("value={big2}")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let original_bak = checksum(&d.join("kv.bin.bak")).unwrap();
    let limited = |args: &[&str], blocks: u64| {
        let mut c = command(d, args);
        // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child before exec.
        unsafe {
            c.pre_exec(move || {
                let lim = libc::rlimit { rlim_cur: blocks * 512, rlim_max: blocks * 512 };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        };
        c.output().unwrap()
    };
    // Room for the small new file, not for a copy of the large current one (32 KiB).
    let current = checksum(&d.join("kv.bin")).unwrap();
    let o = limited(&["edit", "kv.bin", kv[0], kv[1], "--set", "value=second"], 64);
    no_panic(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        checksum(&d.join("kv.bin.bak")).unwrap(),
        current,
        "the backup is the file before this edit, whole"
    );
    assert_ne!(checksum(&d.join("kv.bin.bak")).unwrap(), original_bak);
    // A new file larger than the limit fails: file and backup exactly as they were.
    let before = snapshot(d);
    let o = limited(&["edit", "kv.bin", kv[0], kv[1], "--set", &format!("value={big}")], 64);
    failed_cleanly(&o, d, &before, "cannot write");
}

/// Editing a service-owned 0600 progress file as root left it root:root 0644 (the service can
/// no longer write it, anyone can read it); a 0444 file became 0644. Now owner, group and mode
/// survive, and the backup keeps them too.
#[cfg(unix)]
#[test]
fn an_edit_keeps_owner_group_and_mode() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = walscope(d, &["sample", "--kind", "datasync-progress", "--out", "0.progress"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let p = d.join("0.progress");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        std::os::unix::fs::chown(&p, Some(4321), Some(4321)).unwrap();
    }
    for mode in [0o600, 0o444] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        let before = std::fs::metadata(&p).unwrap();
        let offset = format!("sync_point.offset={}", 1000 + mode);
        let o = walscope(d, &["edit", "0.progress", "--set", &offset]);
        assert!(o.status.success(), "{}", stderr(&o));
        let after = std::fs::metadata(&p).unwrap();
        assert_eq!(after.mode() & 0o7777, mode);
        assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
        if root {
            assert_eq!(after.uid(), 4321, "the service still owns its file");
        }
        let bak = std::fs::metadata(backup_path(&p)).unwrap();
        assert_eq!((bak.mode() & 0o7777, bak.uid()), (mode, before.uid()));
    }
}

/// `-` is standard output for `export --out -` and `edit --out -`, and standard input for
/// `inspect -`; nothing is written beside the input.
#[test]
fn a_dash_is_standard_input_and_output() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dump = sample_dump(d, "in.dump", 25);
    let before = snapshot(d);
    let o = walscope(d, &["export", "in.dump", "--to", "jsonl", "--out", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 25);
    let o = walscope(d, &["export", "in.dump", "--to", "dump", "--out", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, std::fs::read(&dump).unwrap(), "the same frames, byte for byte");
    let o = walscope(
        d,
        &[
            "edit",
            "in.dump",
            "--framing",
            "varint",
            "--frame",
            "0",
            "--type",
            "DumpMessagesResponse",
            "--set",
            "message.properties[\"_vc\"]=ch",
            "--out",
            "-",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!o.stdout.is_empty());
    assert_eq!(snapshot(d), before);
    let mut c = command(d, &["inspect", "-", "--stats"]);
    c.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(&std::fs::read(&dump).unwrap()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("matching frames: 25"), "{}", stdout(&o));
    let _ = manifest_path(Path::new("in.dump"));
}
