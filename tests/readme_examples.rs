//! Runs the README's CLI examples exactly as written, in order, in an empty directory, with the
//! freshly built binary first on PATH. A README example that stops working fails the build.

use std::process::Command;

#[test]
fn readme_cli_examples_run_as_written() {
    let readme = include_str!("../README.md");
    let start = readme.find("```sh readme-examples\n").expect("README has the examples block");
    let body = &readme[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    let script = &body[..body.find("```").expect("block is closed")];
    assert!(script.lines().filter(|l| l.starts_with("walscope ")).count() >= 10);
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_walscope")).parent().unwrap().to_path_buf();
    let dir = tempfile::tempdir().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("bash")
        .arg("-euo")
        .arg("pipefail")
        .arg("-c")
        .arg(script)
        .current_dir(dir.path())
        .env("PATH", path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "README examples failed\nstdout:\n{stdout}\nstderr:\n{stderr}");
    // The examples did what their comments say.
    assert!(stdout.contains("offset: 1200"), "{stdout}");
    assert!(stdout.contains("status: \"REASSIGNING\""), "{stdout}");
    assert!(stdout.contains("offset: 43"), "{stdout}");
    assert!(stdout.contains("\"by-dev-rootcoord-dml_1_4491v0\""), "{stdout}");
    assert!(dir.path().join("sp.bin.bak").exists());
    assert_eq!(std::fs::read(dir.path().join("sp.bin.bak")).unwrap(), [0x08, 0x01, 0x20, 0xe8, 0x07]);
}
