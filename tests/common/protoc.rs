//! Google's `protoc`, fetched at test time from the `protoc-bin-vendored` crate (never copied
//! into the repository): a throwaway Cargo project depends on it, `cargo metadata` says where
//! Cargo unpacked it, and the binary for this platform is run from there (or from a copy in the
//! temp dir when the unpacked file lost its exec bit).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The `protoc-bin-vendored` release the tests use (it carries protoc 31.1).
pub const VENDORED: &str = "3.2.0";

pub struct Protoc {
    pub bin: PathBuf,
    /// protoc's bundled `google/protobuf/*.proto`.
    pub include: PathBuf,
}

/// protoc, fetched once per test process.
pub fn protoc() -> &'static Protoc {
    static PROTOC: OnceLock<Protoc> = OnceLock::new();
    PROTOC.get_or_init(|| fetch().unwrap_or_else(|e| panic!("fetching protoc: {e}")))
}

fn platform() -> Result<&'static str, String> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Ok("linux-x86_64"),
        ("linux", "aarch64") => Ok("linux-aarch_64"),
        ("macos", "x86_64") => Ok("macos-x86_64"),
        ("macos", "aarch64") => Ok("macos-aarch_64"),
        (os, arch) => Err(format!("protoc-bin-vendored has no protoc for {os}/{arch}")),
    }
}

fn fetch() -> Result<Protoc, String> {
    // Kept for the whole process: the binary may be copied into it.
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?.keep();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"protoc-fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n[lib]\npath = \"lib.rs\"\n[dependencies]\nprotoc-bin-vendored = \"={VENDORED}\"\n[workspace]\n"
        ),
    )
    .map_err(|e| e.to_string())?;
    std::fs::write(dir.join("lib.rs"), "").map_err(|e| e.to_string())?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1"])
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    let want = format!("protoc-bin-vendored-{}", platform()?);
    let manifest = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == want.as_str())
        .and_then(|p| p["manifest_path"].as_str())
        .ok_or_else(|| format!("{want} is not in cargo metadata's packages"))?;
    let root = Path::new(manifest).parent().ok_or("manifest path has no parent")?;
    let shipped = root.join("bin").join("protoc");
    let bin = if runs(&shipped) {
        shipped
    } else {
        let copy = dir.join("protoc");
        std::fs::copy(&shipped, &copy).map_err(|e| format!("copy {}: {e}", shipped.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| e.to_string())?;
        }
        copy
    };
    Ok(Protoc { bin, include: root.join("include") })
}

fn runs(bin: &Path) -> bool {
    Command::new(bin).arg("--version").output().is_ok_and(|o| o.status.success())
}

impl Protoc {
    /// `protoc --version`, e.g. "libprotoc 31.1".
    pub fn version(&self) -> String {
        let out = Command::new(&self.bin).arg("--version").output().expect("protoc runs");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Runs protoc with `-I dir -I include` and `args` in `dir`; panics with its stderr on failure.
    pub fn run(&self, dir: &Path, args: &[&str], stdin: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut child = Command::new(&self.bin)
            .arg(format!("-I{}", dir.display()))
            .arg(format!("-I{}", self.include.display()))
            .args(args)
            .current_dir(dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("protoc starts");
        child.stdin.take().expect("stdin").write_all(stdin).expect("write protoc's stdin");
        let out = child.wait_with_output().expect("protoc ends");
        assert!(out.status.success(), "protoc {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }

    /// `protoc --encode=TYPE file` of a text-format message.
    pub fn encode(&self, dir: &Path, file: &str, ty: &str, text: &str) -> Vec<u8> {
        self.run(dir, &["--experimental_editions", &format!("--encode={ty}"), file], text.as_bytes())
    }

    /// `protoc -o OUT --include_imports file`: the descriptor set's bytes.
    pub fn descriptor_set(&self, dir: &Path, file: &str) -> Vec<u8> {
        let out = dir.join("protoc-set.pb");
        let o = out.display().to_string();
        self.run(dir, &["--experimental_editions", "--include_imports", "-o", &o, file], b"");
        std::fs::read(out).expect("protoc wrote the set")
    }
}
