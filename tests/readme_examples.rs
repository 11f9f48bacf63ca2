//! Runs the README's CLI examples exactly as written, in order, in an empty directory, with the
//! freshly built binary first on PATH. A README example that stops working fails the build.

use std::process::Command;

/// The README's ```sh TAG block.
fn readme_block(tag: &str) -> &'static str {
    let readme = include_str!("../README.md");
    let start = readme.find(&format!("```sh {tag}\n")).unwrap_or_else(|| panic!("README has no {tag} block"));
    let body = &readme[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    &body[..body.find("```").expect("block is closed")]
}

/// Runs `script` with bash (-euo pipefail) in `dir`, the freshly built binary first on PATH;
/// fails the test unless it succeeds. Gives (stdout, stderr).
fn run_script(script: &str, dir: &std::path::Path) -> (String, String) {
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_walscope")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "README examples failed\nstdout:\n{stdout}\nstderr:\n{stderr}");
    (stdout, stderr)
}

#[test]
fn readme_cli_examples_run_as_written() {
    let script = readme_block("readme-examples");
    assert!(script.lines().filter(|l| l.starts_with("walscope ")).count() >= 10);
    let dir = tempfile::tempdir().unwrap();
    let (stdout, stderr) = run_script(script, dir.path());
    // The examples did what their comments say, in order.
    let said = [
        "offset: 1200",
        "status: \"REASSIGNING\"",
        "openmldb.datasync.Task",
        "frames:  200, damaged ranges: 0",
        "\"type\":\"Delete\"",
        "matching frames: 200",
        "resynchronised on the next valid frame",
        "\"version\": \"v2.6.20-walscope-demo\"",
        "\"salvageCheckpoint\": {",
        "file:    salvage.dump",
        " RUNNING ",
        "\"status\": \"RUNNING\"",
    ];
    let mut at = 0;
    for s in said {
        let found = stdout[at..].find(s).unwrap_or_else(|| panic!("no {s:?} after byte {at} of\n{stdout}"));
        at += found;
    }
    assert!(stderr.contains("exported ") && stderr.contains(" of 200 frames to deletes.dump"), "{stderr}");
    assert!(stdout.contains("skipped"), "the damaged range is listed: {stdout}");
    assert!(stdout.contains("offset: 1200"), "{stdout}");
    assert!(
        stdout.contains("conflicts: 2 key(s) already on the new primary"),
        "the replay plan finds the conflicts: {stdout}"
    );
    assert!(stdout.contains("verification: OK"), "the replay is verified: {stdout}");
    assert!(stderr.contains("nothing to send: the journal records every unit as applied"), "{stderr}");
    assert!(stdout.contains("status: \"REASSIGNING\""), "{stdout}");
    assert!(stdout.contains("offset: 43"), "{stdout}");
    assert!(stdout.contains("\"by-dev-rootcoord-dml_1_4491v0\""), "{stdout}");
    assert!(dir.path().join("sp.bin.bak").exists());
    assert_eq!(std::fs::read(dir.path().join("sp.bin.bak")).unwrap(), [0x08, 0x01, 0x20, 0xe8, 0x07]);
}

/// The README's "real Milvus API beside the built-ins" block, run from the repository root as the
/// README says, with the freshly built binary first on PATH.
#[test]
fn readme_real_schema_examples_run_as_written() {
    let (stdout, stderr) =
        run_script(readme_block("readme-real-schemas"), std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(stdout.contains("rpc ShowCollections(milvus.proto.milvus.ShowCollectionsRequest)"), "{stdout}");
    assert!(stdout.contains("set aside: replaced by common.proto (proto file milvus.proto)"), "{stdout}");
    assert!(
        stdout.contains(
            "in use, re-linked to common.proto, milvus.proto, schema.proto (proto file milvus.proto)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("rpc DelelteSyncTask("), "{stdout}");
    assert!(stderr.is_empty(), "no notice for a compatible upstream schema: {stderr}");
    // The inspect rows are those of the built-ins alone.
    let alone = Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args(["inspect", "assets/samples/milvus-100.dump", "--limit", "3"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let alone = String::from_utf8_lossy(&alone.stdout);
    assert!(alone.lines().count() >= 3);
    assert!(
        stdout.contains(alone.trim_end()),
        "inspect differs with the upstream schema:\n{alone}\nvs\n{stdout}"
    );
}
