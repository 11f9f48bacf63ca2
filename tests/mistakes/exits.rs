//! Exit codes and pipes: `inspect` on a file damaged throughout exited 0; a pipe closed early
//! (`walscope schema list | head`) ended in a panic (exit 101); a misspelled subcommand
//! (`walscope decod x`) was taken for files to open and started the window.

use super::util::*;
use std::path::Path;
use std::process::{Output, Stdio};

/// Noise: bytes that are no dump of anything.
fn noise(len: usize) -> Vec<u8> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn inspect_fails_when_nothing_could_be_read_as_the_type() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("noise.bin"), noise(1 << 20)).unwrap();
    sample_dump(d, "good.dump", 30);
    std::fs::write(d.join("empty.dump"), b"").unwrap();
    let before = snapshot(d);
    let t = "milvus.proto.milvus.DumpMessagesResponse";
    for args in [
        vec!["inspect", "noise.bin"],
        vec!["inspect", "noise.bin", "--stats"],
        vec!["inspect", "noise.bin", "--jsonl"],
        vec!["inspect", "noise.bin", "--type", t],
        vec!["inspect", "noise.bin", "--type", t, "--framing", "grpc", "--limit", "1"],
    ] {
        let o = walscope(d, &args);
        failed_cleanly(&o, d, &before, "nothing in noise.bin could be read as");
        // What could be listed is listed all the same.
        if !args.contains(&"--jsonl") {
            assert!(stdout(&o).contains("damaged ranges:"), "{args:?}: {}", stdout(&o));
        }
    }
    // A dump, even with a filter that keeps nothing, and an empty file are not failures.
    for args in [
        vec!["inspect", "good.dump"],
        vec!["inspect", "good.dump", "--filter", "type=NoSuchType"],
        vec!["inspect", "good.dump", "--stats", "--limit", "0"],
        vec!["inspect", "empty.dump"],
    ] {
        let o = walscope(d, &args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
}

/// Runs walscope with standard output (and, `both`, standard error) on a pipe whose reading end
/// is closed before it starts: every write to it fails with EPIPE.
#[cfg(unix)]
fn run_into_closed_pipe(dir: &Path, args: &[&str], both: bool) -> Output {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: a two-int array for pipe(2) to fill.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    // SAFETY: both descriptors were just made by pipe(2) and are owned here alone.
    let (read, write) = unsafe { (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1])) };
    drop(read);
    let mut c = command(dir, args);
    if both {
        c.stderr(Stdio::from(write.try_clone().expect("dup")));
    } else {
        c.stderr(Stdio::piped());
    }
    c.stdout(Stdio::from(write));
    c.output().expect("run walscope")
}

/// `| head`: a reader that stops early ends the command quietly, never with a panic (101) or a
/// signal, for every command that prints (before: `schema list` panicked).
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sample_dump(d, "big.dump", 400);
    std::fs::write(d.join("kv.json"), r#"{"key": "k", "value": "v"}"#).unwrap();
    let kv = "milvus.proto.common.KeyValuePair";
    let o = walscope(d, &["encode", "--type", kv, "--from", "json", "--out", "kv.bin", "kv.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let commands: Vec<Vec<&str>> = vec![
        vec!["inspect", "big.dump"],
        vec!["inspect", "big.dump", "--jsonl"],
        vec!["inspect", "big.dump", "--stats"],
        vec!["export", "big.dump", "--to", "jsonl", "--out", "-"],
        vec!["schema", "list"],
        vec!["schema", "show", "milvus.proto.milvus.DumpMessagesResponse"],
        vec!["decode", "--type", kv, "kv.bin"],
        vec!["decode", "--type", kv, "--format", "json", "kv.bin"],
        vec!["history", "list"],
        vec!["--help"],
    ];
    for args in &commands {
        let o = run_into_closed_pipe(d, args, false);
        no_panic(&o);
        assert!(o.status.success(), "{args:?}: {:?} {}", o.status, stderr(&o));
        assert!(stderr(&o).is_empty(), "{args:?}: quietly, but said: {}", stderr(&o));
        // Standard error closed too (`2>&1 | head`): still no panic, no signal.
        let o = run_into_closed_pipe(d, args, true);
        assert!(o.status.code().is_some_and(|c| c != 101), "{args:?}, both closed: {:?}", o.status);
    }
}

/// `walscope decod x` is not two files for the window: refused, with the subcommand meant.
#[test]
fn a_misspelled_subcommand_is_an_error_never_a_window() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("x"), b"\x08\x01").unwrap();
    let before = snapshot(d);
    for (typo, meant) in
        [("decod", "decode"), ("inspetc", "inspect"), ("exprot", "export"), ("salvge", "salvage")]
    {
        // No display either way: a window that started anyway fails, it does not hang.
        let o =
            command(d, &[typo, "x"]).env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY").output().unwrap();
        failed_cleanly(
            &o,
            d,
            &before,
            &format!("no such file or subcommand '{typo}'; did you mean '{meant}'?"),
        );
        assert_eq!(o.status.code(), Some(2), "a usage error");
        assert!(!stderr(&o).contains("window"), "{}", stderr(&o));
    }
    let o = command(d, &["nothing-like-this.dump"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    failed_cleanly(
        &o,
        d,
        &before,
        "no such file or subcommand 'nothing-like-this.dump' (subcommands: decode",
    );
}
