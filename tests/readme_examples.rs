//! The documentation's commands and links, checked: the CLI examples of `docs/cli.md` and the
//! front page's first look (`README.md`) run exactly as written, in order, in an empty directory,
//! with the freshly built binary first on PATH; every relative link of `README.md` and `docs/`
//! leads to a file that exists (and to a heading that exists, when it names one); every test the
//! file contract (`docs/safety.md`) names still exists. An example that stops working, a page or
//! file moved without its links, or a test renamed without its sentence fails the build.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The front page.
const README: &str = include_str!("../README.md");
/// The CLI reference, which holds the examples.
const CLI_DOC: &str = include_str!("../docs/cli.md");

/// The ```sh TAG block of `doc` (named `name` in a failure).
fn doc_block(doc: &'static str, name: &str, tag: &str) -> &'static str {
    let start = doc.find(&format!("```sh {tag}\n")).unwrap_or_else(|| panic!("{name} has no {tag} block"));
    let body = &doc[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    &body[..body.find("```").expect("block is closed")]
}

/// Runs `script` with bash (-euo pipefail) in `dir`, the freshly built binary first on PATH;
/// fails the test unless it succeeds. Gives (stdout, stderr).
fn run_script(script: &str, dir: &Path) -> (String, String) {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_walscope")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "documented examples failed\nstdout:\n{stdout}\nstderr:\n{stderr}");
    (stdout, stderr)
}

#[test]
fn readme_cli_examples_run_as_written() {
    let script = doc_block(CLI_DOC, "docs/cli.md", "readme-examples");
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
        "only in A 0, only in B 0, changed 1, identical 199",
        "\"kind\":\"summary\",\"mode\":\"message\"",
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

/// The "real Milvus API beside the built-ins" block of `docs/cli.md`, run from the repository root
/// as the page says, with the freshly built binary first on PATH.
#[test]
fn readme_real_schema_examples_run_as_written() {
    let (stdout, stderr) = run_script(
        doc_block(CLI_DOC, "docs/cli.md", "readme-real-schemas"),
        Path::new(env!("CARGO_MANIFEST_DIR")),
    );
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

/// The front page's first look, run as written in an empty directory.
#[test]
fn readme_first_look_runs_as_written() {
    let script = doc_block(README, "README.md", "readme-tour");
    let dir = tempfile::tempdir().unwrap();
    let (stdout, _) = run_script(script, dir.path());
    // What the comments say, in order.
    let said = [
        "frames:  200, damaged ranges: 0",
        "Delete coll=",
        "per type:",
        "WAL_name: Pulsar (2)",
        "tid: 27",
        "offset: 1234",
        "different: only in A 50, only in B 0, changed 1, identical 149",
    ];
    let mut at = 0;
    for s in said {
        let found = stdout[at..].find(s).unwrap_or_else(|| panic!("no {s:?} after byte {at} of\n{stdout}"));
        at += found;
    }
    assert!(dir.path().join("0.progress.bak").exists(), "the edit keeps the old file");
}

/// Every Markdown page of the documentation: the front page and `docs/*.md`.
fn doc_pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    pages.sort();
    pages
}

/// The lines of `text` outside fenced code blocks.
fn prose_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The targets of the Markdown links of `line` (`[text](target)`), leaving out inline code.
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    let mut in_code = false;
    let bytes = line.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'`' => in_code = !in_code,
            b']' if !in_code && bytes.get(i + 1) == Some(&b'(') => {
                let rest = &line[i + 2..];
                targets.push(&rest[..rest.find(')').unwrap_or(rest.len())]);
            }
            _ => {}
        }
    }
    targets
}

/// The anchors GitHub gives the headings of a page: lower case, spaces as hyphens, punctuation
/// dropped, a repeated heading numbered.
fn anchors(page: &str) -> Vec<String> {
    let mut anchors = Vec::new();
    let mut times: std::collections::HashMap<String, usize> = Default::default();
    for line in prose_lines(page) {
        let level = line.bytes().take_while(|b| *b == b'#').count();
        if level == 0 || level > 6 || !line[level..].starts_with(' ') {
            continue;
        }
        let slug: String = line[level..]
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c),
                _ => None,
            })
            .collect();
        let before = times.entry(slug.clone()).or_default();
        anchors.push(if *before == 0 { slug } else { format!("{slug}-{before}") });
        *before += 1;
    }
    anchors
}

#[test]
fn every_link_of_the_documentation_leads_somewhere() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in doc_pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for line in prose_lines(&text) {
            for target in link_targets(line) {
                if target.starts_with("http://") || target.starts_with("https://") {
                    continue;
                }
                checked += 1;
                let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
                let dest = if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
                if !dest.exists() {
                    broken.push(format!("{}: {target}: no such file", page.display()));
                    continue;
                }
                if !anchor.is_empty() && dest.extension().is_some_and(|e| e == "md") {
                    let headings = anchors(&std::fs::read_to_string(&dest).unwrap());
                    if !headings.iter().any(|h| h == anchor) {
                        broken.push(format!("{}: {target}: no heading #{anchor} there", page.display()));
                    }
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} links found: is the link reader broken?");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    let page = "# A frame's way: socket → dump → screen\n```sh\n# not a heading\n```\n## `dump_index`\n## Jobs\n## Jobs\n";
    assert_eq!(anchors(page), ["a-frames-way-socket--dump--screen", "dump_index", "jobs", "jobs-1"]);
    let line = "see [a](b.md#c), `[not](a link)` and [`x`](../y/)";
    assert_eq!(link_targets(line), ["b.md#c", "../y/"]);
}

/// Every `.rs` file under `root`/`dir`, as (its path's components below `root`, without `.rs`;
/// its text).
fn sources(root: &Path, dir: &Path, out: &mut Vec<(Vec<String>, String)>) {
    for entry in std::fs::read_dir(root.join(dir)).unwrap() {
        let path = entry.unwrap().path();
        let below = path.strip_prefix(root).unwrap().to_path_buf();
        if path.is_dir() {
            sources(root, &below, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let stem = below.with_extension("");
            let parts = stem.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            out.push((parts, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The file contract names, for each rule, the test that checks it (`mistakes::files::NAME`,
/// `atomic::tests::NAME`, a module such as `dump::index_cache`): each must still be there, as a
/// function in a file under its module, or as that module's file.
#[test]
fn every_test_the_file_contract_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["tests", "crates", "src"] {
        sources(root, Path::new(dir), &mut files);
    }
    let safety = std::fs::read_to_string(root.join("docs/safety.md")).unwrap();
    let mut named = 0;
    let mut missing = Vec::new();
    for line in prose_lines(&safety) {
        for span in line.split('`').skip(1).step_by(2) {
            let segments: Vec<&str> = span.split("::").collect();
            let is_path = segments.len() > 1
                && segments.iter().all(|s| {
                    *s == "*"
                        || (!s.is_empty()
                            && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
                });
            if !is_path {
                continue;
            }
            named += 1;
            let path: Vec<&str> = segments.into_iter().filter(|s| *s != "*" && *s != "tests").collect();
            let item = path[path.len() - 1];
            let module = path.len().checked_sub(2).map(|i| path[i]);
            let under = |parts: &Vec<String>| module.is_none_or(|m| parts.iter().any(|p| p == m));
            let found = files.iter().any(|(parts, text)| {
                under(parts)
                    && (parts.last().is_some_and(|p| p == item) || text.contains(&format!("fn {item}(")))
            });
            if !found {
                missing.push(span.to_string());
            }
        }
    }
    assert!(named >= 40, "only {named} test names found in docs/safety.md");
    assert!(missing.is_empty(), "docs/safety.md names tests that do not exist: {missing:?}");
}
