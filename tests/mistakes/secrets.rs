//! Secrets are never echoed or stored: a password pasted into profiles.json, a header without
//! its colon, an address with `user:password@` in it. Every command is run over real servers,
//! then every message walscope printed and every file it wrote (config dir, history, cache,
//! outputs) is searched for the secret, plain and in base64.

use super::edges::*;
use super::util::*;
use base64::Engine;
use std::path::{Path, PathBuf};

const SECRET: &str = "Hunter2-s3cr3t-Q9";
const VERSION: &str = "milvus.proto.milvus.MilvusService/GetVersion";
const STATUS: &str = "openmldb.datasync.SyncTool/TaskStatus";

/// The forms the secret could be found in: itself, and base64 of it and of `user:secret` at
/// every alignment (the middle of an encoding does not depend on what came before).
fn needles() -> Vec<String> {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let mut out = vec![SECRET.to_string()];
    for text in [SECRET.to_string(), format!("bob:{SECRET}")] {
        for pad in ["", "a", "ab"] {
            let e = b64(&format!("{pad}{text}"));
            // Skip the characters touched by the padding and the last partial group.
            let skip = (pad.len() * 4).div_ceil(3);
            let end = e.trim_end_matches('=').len().saturating_sub(3);
            if end > skip + 8 {
                out.push(e[skip..end].to_string());
            }
        }
    }
    out
}

fn every_file(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => out.push(e.path()),
                _ => {}
            }
        }
    }
    out
}

/// No message and no file but `except` (the operator's own) holds the secret in any form.
fn nowhere(outputs: &[(String, std::process::Output)], dir: &Path, except: &[PathBuf]) {
    let needles = needles();
    for (what, o) in outputs {
        no_panic(o);
        for text in [stdout(o), stderr(o)] {
            for n in &needles {
                assert!(!text.contains(n.as_str()), "{what} printed the secret ({n}): {text}");
            }
        }
    }
    for f in every_file(dir).into_iter().filter(|p| !except.contains(p)) {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        for n in &needles {
            assert!(!text.contains(n.as_str()), "{} holds the secret ({n})", f.display());
        }
    }
}

/// A password pasted as a plain string into profiles.json was quoted back in the parse error
/// (serde's message includes the value). Now the error names the line, the profile and the
/// field, and says how a secret is referenced; the file is left as it was.
#[test]
fn a_password_in_profiles_json_is_never_quoted_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let profiles = d.join(".config/profiles.json");
    std::fs::create_dir_all(profiles.parent().unwrap()).unwrap();
    let text = format!(
        r#"[
  {{
    "name": "prod",
    "transport": "grpc",
    "endpoint": "127.0.0.1:19530",
    "auth": {{"kind": "user_password", "user": "bob", "password": "{SECRET}"}}
  }}
]
"#
    );
    std::fs::write(&profiles, &text).unwrap();
    let before = snapshot(d);
    let mut outputs = Vec::new();
    for args in [vec!["call", "prod", VERSION], vec!["tasks", "status", "--endpoint", "prod"]] {
        let o = walscope(d, &args);
        failed_cleanly(&o, d, &before, "line 6");
        let err = stderr(&o);
        assert!(err.contains("field auth") && err.contains("\"from\": \"env\""), "{err}");
        outputs.push((args.join(" "), o));
    }
    assert_eq!(std::fs::read_to_string(&profiles).unwrap(), text, "the operator's file changed");
    nowhere(&outputs, d, &[profiles]);
}

/// `-H 'authorization Bearer SECRET'` (no colon) was quoted back in "header ... must be
/// KEY:VALUE". Now the header is named by its place, never quoted, whichever command.
#[test]
fn a_header_without_its_colon_is_never_quoted_back() {
    let rt = runtime();
    let server = milvus(&rt, None, None);
    let addr = server.addr().to_string();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let before = snapshot(d);
    let bad = format!("authorization Bearer {SECRET}");
    let mut outputs = Vec::new();
    for args in [
        vec!["call", &addr, VERSION, "-H", &bad, "--history"],
        vec!["call", &addr, VERSION, "-H", "x-trace: 1", "-H", &bad],
        vec!["call", &addr, STATUS, "--transport", "http", "-H", &bad, "-d", "{}"],
    ] {
        let o = walscope(d, &args);
        failed_cleanly(&o, d, &before, "has no colon");
        outputs.push((args.join(" ").replace(SECRET, "(secret)"), o));
    }
    assert!(stderr(&outputs[1].1).contains("the 2nd of 2"), "{}", stderr(&outputs[1].1));
    let o = walscope(d, &["history", "list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    outputs.push(("history list".into(), o));
    nowhere(&outputs, d, &[]);
}

/// `bob:PASSWORD@host:port` was accepted, stored verbatim in history.jsonl and shown by
/// `history list`. Now an address with user info is refused with a pointer to --user and
/// --password-env, by every command that takes one, and nothing anywhere holds the password.
#[test]
fn an_address_with_a_password_is_refused_and_never_stored() {
    let rt = runtime();
    let server = milvus(&rt, None, None);
    let ds = datasync(&rt);
    let milvus = server.addr().to_string();
    let synctool = ds.synctool.addr().to_string();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let before = snapshot(d);
    let with = |addr: &str| format!("bob:{SECRET}@{addr}");
    let (m, m_url, s) = (with(&milvus), format!("grpc://{}", with(&milvus)), with(&synctool));
    // A password may hold what ends a URL's authority early.
    let slashed = format!("bob:{SECRET}/#?@{milvus}");
    let mut outputs = Vec::new();
    let commands: Vec<Vec<&str>> = vec![
        vec!["call", &m, VERSION, "--history"],
        vec!["call", &m_url, VERSION, "--history"],
        vec!["call", &slashed, VERSION, "--history"],
        vec!["call", &s, STATUS, "--transport", "brpc", "-d", "{}", "--history"],
        vec!["call", &s, STATUS, "--transport", "http", "-d", "{}", "--history"],
        vec!["tasks", "status", "--endpoint", &s],
        vec![
            "salvage",
            "--old-primary",
            &m,
            "--new-primary",
            &milvus,
            "--all-pchannels",
            "--out-dir",
            "salvaged",
        ],
    ];
    for args in commands {
        let o = walscope(d, &args);
        failed_cleanly(&o, d, &before, "--password-env");
        assert!(stderr(&o).contains("never takes credentials in an address"), "{}", stderr(&o));
        outputs.push((args.join(" ").replace(SECRET, "(secret)"), o));
    }
    // A call that is recorded, so the history exists and is searched too; a profile's name may
    // hold an "@" (it is no address).
    std::fs::create_dir_all(d.join(".config")).unwrap();
    let profiles = serde_json::json!([{"name": "root@local", "transport": "grpc", "endpoint": milvus}]);
    std::fs::write(d.join(".config/profiles.json"), profiles.to_string()).unwrap();
    for target in [milvus.as_str(), "root@local"] {
        let o = walscope(d, &["call", target, VERSION, "--history"]);
        assert!(o.status.success(), "{target}: {}", stderr(&o));
        outputs.push((format!("call {target} --history"), o));
    }
    let o = walscope(d, &["history", "list"]);
    assert!(stdout(&o).contains(&milvus), "{}", stdout(&o));
    outputs.push(("history list".into(), o));
    let o = walscope(d, &["history", "resend", "1", "--endpoint", &m]);
    failed_cleanly(&o, d, &before, "--password-env");
    outputs.push(("history resend --endpoint".into(), o));
    assert!(d.join(".config/history.jsonl").is_file());
    nowhere(&outputs, d, &[]);
}
