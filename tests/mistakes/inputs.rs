//! Inputs that are not regular files: FIFOs and process substitutions are read once, whole
//! (bounded), never reported as empty and never hang a command; an in-place edit of one is
//! refused before it is read.

use super::util::*;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// Runs `script` with bash (for `<(...)` process substitution) in `dir`, killed after 60 s.
fn bash(dir: &Path, script: &str) -> Output {
    let mut c = std::process::Command::new("bash");
    c.arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("WALSCOPE_CONFIG_DIR", dir.join(".config"))
        .env("WALSCOPE_CACHE_DIR", dir.join(".cache"))
        .env("W", bin());
    finish_within(&mut c, Duration::from_secs(60), script)
}

/// `inspect <(cat dump)` printed "frames: 0" with exit 0 (the pipe was read twice);
/// `export <(cat dump) --to dump` wrote an empty dump. Now a process substitution is read once:
/// every frame is there.
#[test]
fn a_process_substitution_is_read_once_and_whole() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sample_dump(d, "y.dump", 200);
    let o = bash(d, r#""$W" inspect <(cat y.dump)"#);
    no_panic(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("frames:  200,"), "{}", stdout(&o));
    let o = bash(d, r#""$W" inspect --stats <(cat y.dump)"#);
    assert!(stdout(&o).contains("matching frames: 200"), "{}", stdout(&o));
    let o = bash(d, r#""$W" export <(cat y.dump) --to dump --out copy.dump"#);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.join("copy.dump")).unwrap(), std::fs::read(d.join("y.dump")).unwrap());
    assert!(leftovers(d).is_empty());
}

/// `inspect`/`export` on a FIFO hung; `edit` on a FIFO hung and left a temp file. Now a FIFO is
/// read once (its writer sees it through), and an in-place edit of one is refused before it is
/// opened; `edit --out` reads it like any input.
#[cfg(unix)]
#[test]
fn a_fifo_never_hangs_a_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dump = sample_dump(d, "y.dump", 50);
    let fifo = d.join("pipe");
    mkfifo(&fifo);
    let feed = |bytes: Vec<u8>| {
        let f = fifo.clone();
        std::thread::spawn(move || std::fs::write(f, bytes))
    };
    let w = feed(std::fs::read(&dump).unwrap());
    let o = bash(d, r#""$W" inspect pipe --stats"#);
    let _ = w.join();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("matching frames: 50"), "{}", stdout(&o));

    let w = feed(std::fs::read(&dump).unwrap());
    let o = bash(d, r#""$W" export pipe --to jsonl --out rows.jsonl"#);
    let _ = w.join();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(d.join("rows.jsonl")).unwrap().lines().count(), 50);

    // In place: refused before the FIFO is opened (no writer is needed for the refusal).
    let before = snapshot(d);
    let o = bash(
        d,
        r#""$W" edit pipe --type DumpMessagesResponse --framing varint --set 'message.properties["_vc"]=x'"#,
    );
    failed_cleanly(&o, d, &before, "a FIFO (named pipe)");
    assert!(stderr(&o).contains("--out"), "{}", stderr(&o));

    // With --out the FIFO is an input like any other.
    let w = feed(std::fs::read(&dump).unwrap());
    let o = bash(
        d,
        r#""$W" edit pipe --type DumpMessagesResponse --framing varint --set 'message.properties["_vc"]=x' --out edited.dump"#,
    );
    let _ = w.join();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.join("edited.dump").exists());
    assert!(leftovers(d).is_empty());
}
