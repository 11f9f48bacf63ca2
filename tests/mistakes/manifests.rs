//! Manifests that do not tell the truth: one that is not JSON, one of a future format version,
//! one that claims 5,000 frames (complete) over a file of 200, one that is a FIFO. Each was
//! silently ignored (or, the FIFO, hung `inspect`); now `inspect` says what is wrong in its
//! header (on standard error with `--jsonl`, in the object with `--stats --jsonl`), and so does
//! the window's file header.

use super::util::*;
use std::path::Path;
use std::time::Duration;
use walscope::dump::manifest_path;

/// The sample's manifest as JSON, changed by `change`, written back.
fn rewrite(dump: &Path, change: impl FnOnce(&mut serde_json::Value)) {
    let path = manifest_path(dump);
    let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    change(&mut m);
    std::fs::write(&path, m.to_string()).unwrap();
}

#[test]
fn a_manifest_that_lies_or_cannot_be_used_is_reported_by_inspect() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dump = sample_dump(d, "m.dump", 200);
    let original = std::fs::read(manifest_path(&dump)).unwrap();
    type Change = Box<dyn Fn(&Path)>;
    let cases: Vec<(&str, Change, &str)> = vec![
        (
            "claims more frames",
            Box::new(|p| rewrite(p, |m| m["frames"] = 5000.into())),
            "the manifest says 5,000 frames, complete; the file holds 200",
        ),
        (
            "claims another size",
            Box::new(|p| rewrite(p, |m| m["bytes"] = 17.into())),
            "the manifest says 17 bytes, complete; the file is",
        ),
        (
            "an incomplete one that leads its file",
            Box::new(|p| {
                rewrite(p, |m| {
                    m["complete"] = false.into();
                    m["frames"] = 300.into();
                })
            }),
            "the manifest says 300 frames were written (incomplete); the file holds only 200",
        ),
        (
            "future version",
            Box::new(|p| rewrite(p, |m| m["format_version"] = 7.into())),
            "the manifest is of format version 7, which this walscope does not read",
        ),
        (
            "not JSON",
            Box::new(|p| std::fs::write(manifest_path(p), "{ this is not json").unwrap()),
            "the manifest is not JSON",
        ),
        (
            "not a manifest",
            Box::new(|p| std::fs::write(manifest_path(p), "[1, 2, 3]").unwrap()),
            "the manifest is not a walscope manifest",
        ),
        (
            "an unknown type",
            Box::new(|p| rewrite(p, |m| m["message_type"] = "no.such.Type".into())),
            "the manifest names the type no.such.Type, which no loaded schema defines",
        ),
    ];
    for (name, change, words) in cases {
        std::fs::write(manifest_path(&dump), &original).unwrap();
        change(&dump);
        let before = snapshot(d);
        let o = walscope(d, &["inspect", "m.dump", "--limit", "3"]);
        no_panic(&o);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let header: String = stdout(&o)
            .lines()
            .take_while(|l| !l.trim_start().starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(header.contains(&format!("manifest: m.dump.manifest.json: {words}")), "{name}: {header}");
        let o = walscope(d, &["inspect", "m.dump", "--jsonl", "--limit", "3"]);
        assert!(stderr(&o).contains(words), "{name}, --jsonl: {}", stderr(&o));
        assert!(stdout(&o).lines().all(|l| l.contains("\"frame\"")), "{name}: the listing is rows only");
        let o = walscope(d, &["inspect", "m.dump", "--stats", "--jsonl"]);
        let stats: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stats JSON");
        let problems = stats["manifest_problems"].to_string();
        assert!(problems.contains(words), "{name}, --stats --jsonl: {stats}");
        let o = walscope(d, &["inspect", "m.dump", "--stats"]);
        assert!(stdout(&o).contains(words), "{name}, --stats: {}", stdout(&o));
        assert_eq!(snapshot(d), before, "{name}: inspect changed a file");
    }
    // The manifest as written says nothing.
    std::fs::write(manifest_path(&dump), &original).unwrap();
    let o = walscope(d, &["inspect", "m.dump", "--limit", "1"]);
    assert!(!stdout(&o).contains("manifest:") && !stderr(&o).contains("manifest"), "{}", stdout(&o));
}

/// A FIFO where the manifest would be: `inspect` blocked for ever reading it. Now it is set
/// aside, in words, and the dump is read.
#[cfg(unix)]
#[test]
fn a_manifest_that_is_a_fifo_is_set_aside_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dump = sample_dump(d, "f.dump", 50);
    std::fs::remove_file(manifest_path(&dump)).unwrap();
    mkfifo(&manifest_path(&dump));
    let o = finish_within(
        &mut command(d, &["inspect", "f.dump", "--limit", "1"]),
        Duration::from_secs(30),
        "inspect waited for the FIFO manifest",
    );
    no_panic(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("the manifest cannot be read (not a regular file)"), "{}", stdout(&o));
}

/// The window's file header says what `inspect` says.
#[cfg(feature = "gui")]
#[test]
fn the_window_shows_a_manifest_that_lies_in_the_file_header() {
    use super::common::gui::step_until;
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;
    use walscope::ui::WalscopeApp;
    let dir = tempfile::tempdir().unwrap();
    let dump = sample_dump(dir.path(), "w.dump", 200);
    rewrite(&dump, |m| m["frames"] = 5000.into());
    let mut h = Harness::builder()
        .with_size(eframe::egui::Vec2::new(1280.0, 800.0))
        .build_ui_state(|ui, app: &mut WalscopeApp| app.ui(ui), WalscopeApp::new());
    h.step();
    h.state_mut().open(dump.clone());
    step_until(&mut h, "the manifest's check in the header", |h| {
        h.query_by_label_contains("the manifest says 5,000 frames, complete; the file holds 200").is_some()
    });
}
