//! The rules of the house, checked (issue #37, item 7), so a broken one fails the suite instead
//! of waiting for a reader to notice:
//!
//! - **Crates point down.** From `cargo metadata --format-version 1 --no-deps`: walscope-core
//!   depends (as a normal dependency) on no egui crate, eframe, walscope-ops, walscope-gui or
//!   walscope-sim; walscope-ops on no egui crate, eframe, walscope-gui or walscope-sim;
//!   walscope-sim on no egui crate, eframe, walscope-ops or walscope-gui. (Dev-dependencies are
//!   free: the sample data is every crate's test fixture.)
//! - **Modules point one way.** In every crate of the workspace, the top-level modules (the
//!   `mod` items of `lib.rs`) form no cycle. An edge `a -> b` is a `crate::b` or `super::b` path
//!   that reaches `b` from a file of `a`, outside comments, strings and test-only items (`mod
//!   tests` and whatever `#[cfg(test)]` or `#[cfg(all(test, ...))]` marks).
//! - **Panes never do the work.** No file under `crates/gui/src/panes/` builds a transport, makes
//!   a call or spawns work (`tokio::spawn`, `GrpcTransport::connect`, `BrpcTransport::`,
//!   `HttpJsonTransport::`, `std::thread::spawn`, `call_unary`, `call_server_stream`): a pane asks
//!   for work through its commands, and a job does it (the job bodies live in
//!   `crates/gui/src/work/`); nor does it write a file (`atomic_write`, `fs::write`,
//!   `File::create`, `create_dir`).
//! - **Errors stay typed into the window.** No code of `crates/gui/src/` holds an error as a
//!   string (`Result<_, String>` in a signature or a field): words are made where they are drawn.
//!
//! Each check is also run once on a made-up input that breaks it (`the_checks_catch_*`), so a
//! check that cannot fail would fail here.

#[path = "house/source.rs"]
mod source;

use source::{blank_comments_and_strings, mod_declarations, rust_files, strip_test_items, test_only_files};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Package → the packages it must never depend on as a normal dependency (besides every egui
/// crate and eframe, which none of them may use).
const NEVER: &[(&str, &[&str])] = &[
    ("walscope-core", &["walscope-ops", "walscope-gui", "walscope-sim"]),
    ("walscope-ops", &["walscope-gui", "walscope-sim"]),
    ("walscope-sim", &["walscope-ops", "walscope-gui"]),
];

/// The crates whose top-level modules must form no cycle: (name, source folder, root file).
const CRATES: &[(&str, &str, &str)] = &[
    ("walscope-core", "crates/core/src", "lib.rs"),
    ("walscope-ops", "crates/ops/src", "lib.rs"),
    ("walscope-sim", "crates/sim/src", "lib.rs"),
    ("walscope", "src", "lib.rs"),
];
const GUI: (&str, &str, &str) = ("walscope-gui", "crates/gui/src", "lib.rs");

/// What a pane's file must never name.
const PANES_NEVER: &[&str] = &[
    "tokio::spawn",
    "GrpcTransport::connect",
    "BrpcTransport::",
    "HttpJsonTransport::",
    "std::thread::spawn",
    "call_unary",
    "call_server_stream",
    // A pane never writes a file (a save, a copy, a profile): it asks, a job in work/ writes.
    "atomic_write",
    "fs::write",
    "File::create",
    "create_dir",
];

#[test]
fn crates_depend_only_downwards() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(ROOT)
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
    let names: Vec<&str> =
        meta["packages"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
    for (package, _) in NEVER {
        assert!(names.contains(package), "{package} is not in the workspace: {names:?}");
    }
    let broken = forbidden_dependencies(&meta);
    assert!(broken.is_empty(), "dependencies against the house's rules:\n{}", broken.join("\n"));
}

#[test]
fn no_module_cycle_in_core_ops_sim_or_the_binary() {
    let mut found = Vec::new();
    for &(name, src, root) in CRATES {
        let graph = module_graph(&Path::new(ROOT).join(src), root);
        assert!(graph.modules.len() > 1 || name == "walscope", "{name}: no modules found in {src}");
        found.extend(cycles(&graph).into_iter().map(|c| format!("{name}: {c}")));
    }
    assert!(found.is_empty(), "module cycles:\n{}", found.join("\n"));
}

#[test]
fn no_module_cycle_in_the_app() {
    let (name, src, root) = GUI;
    let graph = module_graph(&Path::new(ROOT).join(src), root);
    let found: Vec<String> = cycles(&graph).into_iter().map(|c| format!("{name}: {c}")).collect();
    assert!(found.is_empty(), "module cycles:\n{}", found.join("\n"));
}

#[test]
fn panes_never_build_a_transport_call_or_spawn() {
    let gui = Path::new(ROOT).join("crates/gui/src");
    let dir = gui.join("panes");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    assert!(!files.is_empty(), "no pane files under {}", dir.display());
    let mut found = Vec::new();
    for f in &files {
        let code = blank_comments_and_strings(&std::fs::read_to_string(f).unwrap());
        found.extend(
            pane_violations(&code).into_iter().map(|(line, what)| {
                format!("{}:{line}: {what}", f.strip_prefix(ROOT).unwrap_or(f).display())
            }),
        );
    }
    assert!(found.is_empty(), "panes doing a job's work:\n{}", found.join("\n"));
}

#[test]
fn the_window_holds_no_error_as_a_string() {
    let mut files = Vec::new();
    rust_files(&Path::new(ROOT).join(GUI.1), &mut files);
    assert!(!files.is_empty(), "no files under {}", GUI.1);
    let mut found = Vec::new();
    for f in &files {
        let code = blank_comments_and_strings(&std::fs::read_to_string(f).unwrap());
        let rel = f.strip_prefix(ROOT).unwrap_or(f).display().to_string();
        found.extend(string_errors(&code).into_iter().map(|line| format!("{rel}:{line}")));
    }
    assert!(found.is_empty(), "errors held as strings (type them; words where drawn):\n{}", found.join("\n"));
    // The check itself fails on what it looks for, and only on that.
    let sample = "fn a() -> Result<(), String> {}\nfn b() -> Result<Vec<u8>, Refused> {}\n// Result<u8, String>\nx: Option<Result<String, String>>,\n";
    assert_eq!(string_errors(&blank_comments_and_strings(sample)), [1, 4]);
}

/// The lines (1-based) where a `Result<` ends its type list with `String>` (as `grep
/// "Result<.*String>"` finds them).
fn string_errors(code: &str) -> Vec<usize> {
    code.lines()
        .enumerate()
        .filter(|(_, line)| line.find("Result<").is_some_and(|at| line[at..].contains("String>")))
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn the_checks_catch_a_forbidden_dependency() {
    let meta = serde_json::json!({"packages": [
        {"name": "walscope-core", "dependencies": [
            {"name": "prost", "kind": null},
            {"name": "walscope-sim", "kind": "dev"},
            {"name": "egui_extras", "kind": null},
        ]},
        {"name": "walscope-ops", "dependencies": [{"name": "walscope-gui", "kind": null}]},
        {"name": "walscope-sim", "dependencies": [{"name": "walscope-core", "kind": null}]},
    ]});
    assert_eq!(
        forbidden_dependencies(&meta),
        ["walscope-core depends on egui_extras", "walscope-ops depends on walscope-gui"]
    );
}

#[test]
fn the_checks_catch_a_module_cycle_and_a_pane_at_work() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("lib.rs", "pub mod a;\nmod b;\nmod c;\n#[cfg(test)]\nmod d;\n");
    write("a/mod.rs", "mod inner;\n// crate::c in a comment is no edge\nconst S: &str = \"crate::c\";\n");
    write("a/inner.rs", "use super::super::b::X;\n");
    write("b.rs", "use crate::{c::Y, a};\n");
    write("c.rs", "#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n");
    write("d.rs", "use crate::a;\n");
    let graph = module_graph(dir.path(), "lib.rs");
    assert_eq!(graph.modules, ["a", "b", "c"].map(String::from).into());
    assert_eq!(cycles(&graph), ["a -> b (a/inner.rs) -> a (b.rs)"]);
    let code = blank_comments_and_strings(
        "// tokio::spawn\nlet s = \"call_unary\";\ntokio::spawn(async {});\ncrate::atomic::atomic_write(p, b, true)?;\nstd::fs::write(p, b)?;\n",
    );
    assert_eq!(pane_violations(&code), [(3, "tokio::spawn"), (4, "atomic_write"), (5, "fs::write")]);
}

/// `PACKAGE depends on DEP` for every normal dependency the house forbids.
fn forbidden_dependencies(meta: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for p in meta["packages"].as_array().into_iter().flatten() {
        let name = p["name"].as_str().unwrap_or_default();
        let Some((_, never)) = NEVER.iter().find(|(n, _)| *n == name) else { continue };
        for d in p["dependencies"].as_array().into_iter().flatten() {
            let dep = d["name"].as_str().unwrap_or_default();
            let normal = d["kind"].is_null();
            if normal && (dep.starts_with("egui") || dep == "eframe" || never.contains(&dep)) {
                out.push(format!("{name} depends on {dep}"));
            }
        }
    }
    out
}

/// The pane rule's violations in blanked code: (line, what it names).
fn pane_violations(code: &str) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    for (i, line) in code.lines().enumerate() {
        out.extend(PANES_NEVER.iter().filter(|w| line.contains(*w)).map(|w| (i + 1, *w)));
    }
    out
}

/// A crate's top-level modules and, per edge `a -> b`, the first file (relative to the source
/// folder) that makes it.
struct Graph {
    modules: BTreeSet<String>,
    edges: BTreeMap<(String, String), String>,
}

fn module_graph(src: &Path, root_file: &str) -> Graph {
    let root =
        strip_test_items(&blank_comments_and_strings(&std::fs::read_to_string(src.join(root_file)).unwrap()));
    let modules: BTreeSet<String> = mod_declarations(&root).into_iter().collect();
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let test_files = test_only_files(&files);
    let mut edges = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(src).unwrap();
        if rel == Path::new(root_file) || test_files.iter().any(|t| file.starts_with(t)) {
            continue;
        }
        // The module path of the file: `a/b.rs` is a::b, `a/mod.rs` is a, `a.rs` is a.
        let mut path: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
        let last = path.pop().unwrap();
        if last != "mod.rs" {
            path.push(last.trim_end_matches(".rs").to_string());
        }
        let Some(from) = path.first().filter(|m| modules.contains(*m)) else { continue };
        let code = strip_test_items(&blank_comments_and_strings(&std::fs::read_to_string(file).unwrap()));
        for to in reached_top_modules(&code, path.len()) {
            if to != *from && modules.contains(&to) {
                edges.entry((from.clone(), to)).or_insert_with(|| rel.display().to_string());
            }
        }
    }
    Graph { modules, edges }
}

/// Every cycle among the top-level modules (one per strongly connected component), as
/// `a -> b (file) -> a (file)`.
fn cycles(g: &Graph) -> Vec<String> {
    let next =
        |m: &str| -> Vec<String> { g.edges.keys().filter(|(a, _)| a == m).map(|(_, b)| b.clone()).collect() };
    let reaches = |from: &str, to: &str| {
        let (mut seen, mut todo) = (BTreeSet::new(), vec![from.to_string()]);
        while let Some(m) = todo.pop() {
            if m == to {
                return true;
            }
            if seen.insert(m.clone()) {
                todo.extend(next(&m));
            }
        }
        false
    };
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for m in &g.modules {
        if done.contains(m) {
            continue;
        }
        let scc: BTreeSet<String> =
            g.modules.iter().filter(|o| reaches(m, o) && reaches(o, m)).cloned().collect();
        done.extend(scc.iter().cloned());
        if scc.len() < 2 {
            continue;
        }
        // The shortest way from the component's first module back to it, with the file of
        // every step.
        let mut parent: BTreeMap<String, String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([m.clone()]);
        let mut last = None;
        while let Some(u) = queue.pop_front() {
            if let Some(v) = next(&u).into_iter().filter(|v| scc.contains(v)).find(|v| v == m) {
                last = Some((u, v));
                break;
            }
            for v in next(&u).into_iter().filter(|v| scc.contains(v) && *v != *m) {
                if !parent.contains_key(&v) {
                    parent.insert(v.clone(), u.clone());
                    queue.push_back(v);
                }
            }
        }
        let (mut at, _) = last.expect("a module of a cycle has a way back to itself");
        let mut way = vec![m.clone(), at.clone()];
        while at != *m {
            at = parent[&at].clone();
            way.push(at.clone());
        }
        way.reverse();
        let mut text = m.clone();
        for pair in way.windows(2) {
            text.push_str(&format!(" -> {} ({})", pair[1], g.edges[&(pair[0].clone(), pair[1].clone())]));
        }
        let rest: Vec<&String> = scc.iter().filter(|x| !way.contains(x)).collect();
        if !rest.is_empty() {
            text.push_str(&format!(
                "; also in this cycle: {}",
                rest.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        out.push(text);
    }
    out
}

/// The top-level modules a file `depth` modules deep names: `crate::x`, `crate::{x, y::z}`,
/// and `super::` chains that climb to the crate root (`depth` of them).
fn reached_top_modules(code: &str, depth: usize) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let b = code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if (i > 0 && ident(b[i - 1])) || !code.is_char_boundary(i) {
            i += 1;
            continue;
        }
        if code[i..].starts_with("crate::") {
            i += "crate::".len();
            names_after(&code[i..], &mut out);
        } else if code[i..].starts_with("super::") {
            let mut n = 0;
            while code[i..].starts_with("super::") {
                n += 1;
                i += "super::".len();
            }
            if n == depth {
                names_after(&code[i..], &mut out);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The first name of a path's tail (`x::y` gives x), or of each part of a group
/// (`{x, y::z}` gives x and y).
fn names_after(tail: &str, out: &mut BTreeSet<String>) {
    let word = |t: &str| -> String { t.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let tail = tail.trim_start();
    let Some(group) = tail.strip_prefix('{') else {
        let name = word(tail);
        if !name.is_empty() {
            out.insert(name);
        }
        return;
    };
    let (mut depth, mut part_start) = (0usize, true);
    for (j, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => part_start = true,
            c if part_start && depth == 0 && (c.is_alphanumeric() || c == '_') => {
                out.insert(word(&group[j..]));
                part_start = false;
            }
            _ => {}
        }
    }
}
