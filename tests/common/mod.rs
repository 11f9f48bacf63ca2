//! Helpers shared by the integration tests: a deterministic generator of random messages for
//! any descriptor, and small byte utilities.
#![allow(dead_code)]

#[cfg(feature = "gui")]
pub mod gui;
pub mod protoc;
pub mod rehearsal;
pub mod salvage;
pub mod timeline;
pub mod walgen;

use prost_reflect::{DynamicMessage, Kind, MapKey, MessageDescriptor, Value};

/// splitmix64: tiny, deterministic, good enough to spread test values.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.below(max as u64 + 1) as usize;
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn int_pick(rng: &mut Rng) -> u64 {
    match rng.below(6) {
        0 => 0,
        1 => 1,
        2 => u64::MAX,
        3 => rng.below(300),
        4 => 1u64 << rng.below(64),
        _ => rng.next(),
    }
}

fn string_pick(rng: &mut Rng) -> String {
    const PARTS: &[&str] = &["a", "by-dev", "_vc", "é", "日本", "\"q\"", "\\", "\n", " ", "0", "🦀", "\u{1}"];
    let n = rng.below(5);
    (0..n).map(|_| PARTS[rng.below(PARTS.len() as u64) as usize]).collect()
}

fn float_pick(rng: &mut Rng) -> f64 {
    match rng.below(5) {
        0 => 0.0,
        1 => -1.5,
        2 => 1e300,
        3 => f64::INFINITY,
        _ => (rng.next() as i64 as f64) / 1e6,
    }
}

pub fn scalar(kind: &Kind, rng: &mut Rng, depth: usize) -> Option<Value> {
    Some(match kind {
        Kind::Double => Value::F64(float_pick(rng)),
        Kind::Float => Value::F32(float_pick(rng) as f32),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Value::I32(int_pick(rng) as i32),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::I64(int_pick(rng) as i64),
        Kind::Uint32 | Kind::Fixed32 => Value::U32(int_pick(rng) as u32),
        Kind::Uint64 | Kind::Fixed64 => Value::U64(int_pick(rng)),
        Kind::Bool => Value::Bool(rng.chance(50)),
        Kind::String => Value::String(string_pick(rng)),
        Kind::Bytes => Value::Bytes(rng.bytes(12).into()),
        Kind::Enum(e) => {
            let values: Vec<i32> = e.values().map(|v| v.number()).collect();
            Value::EnumNumber(values[rng.below(values.len() as u64) as usize])
        }
        Kind::Message(m) => Value::Message(random_message(m, rng, depth + 1)?),
    })
}

/// A random instance of `desc`: about half the fields set, lists and maps of 0-3 elements,
/// nesting cut at depth 4. Well-known types other than FieldMask are left unset (their JSON
/// forms constrain values in ways unrelated to what we test).
pub fn random_message(desc: &MessageDescriptor, rng: &mut Rng, depth: usize) -> Option<DynamicMessage> {
    let name = desc.full_name();
    if name.starts_with("google.protobuf.") && name != "google.protobuf.FieldMask" {
        return None;
    }
    if depth > 4 {
        return None;
    }
    let mut msg = DynamicMessage::new(desc.clone());
    if name == "google.protobuf.FieldMask" {
        let paths: Vec<Value> = (0..rng.below(3))
            .map(|i| {
                Value::String(["collection_name", "schema.fields", "description"][i as usize % 3].into())
            })
            .collect();
        msg.set_field_by_name("paths", Value::List(paths));
        return Some(msg);
    }
    let mut oneofs_done: Vec<String> = Vec::new();
    for fd in desc.fields() {
        if !rng.chance(55) {
            continue;
        }
        if let Some(o) = fd.containing_oneof().filter(|o| !o.is_synthetic()) {
            if oneofs_done.contains(&o.name().to_string()) {
                continue;
            }
            oneofs_done.push(o.name().to_string());
        }
        let kind = fd.kind();
        let value = if fd.is_map() {
            let Kind::Message(entry) = &kind else { continue };
            let (kk, vk) = (entry.map_entry_key_field().kind(), entry.map_entry_value_field().kind());
            let mut map = std::collections::HashMap::new();
            for _ in 0..rng.below(4) {
                let Some(k) = scalar(&kk, rng, depth).and_then(|v| v.into_map_key()) else { continue };
                let Some(v) = scalar(&vk, rng, depth) else { continue };
                let _: &MapKey = &k;
                map.insert(k, v);
            }
            Value::Map(map)
        } else if fd.is_list() {
            let items: Vec<Value> = (0..rng.below(4)).filter_map(|_| scalar(&kind, rng, depth)).collect();
            Value::List(items)
        } else {
            match scalar(&kind, rng, depth) {
                Some(v) => v,
                None => continue,
            }
        };
        msg.set_field(&fd, value);
    }
    Some(msg)
}

/// Ranges where two byte strings differ, after aligning on common prefix and suffix.
pub fn diff_window(a: &[u8], b: &[u8]) -> (usize, usize, usize) {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let max = a.len().min(b.len()) - prefix;
    let suffix = a.iter().rev().zip(b.iter().rev()).take(max).take_while(|(x, y)| x == y).count();
    (prefix, a.len() - prefix - suffix, b.len() - prefix - suffix)
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ")
}

/// The python of the venv with the pinned pymilvus: `WALSCOPE_PYTHON` when set, else the one
/// `scripts/python-env.sh` creates or reuses (the first run installs from PyPI). Panics with the
/// script's output when there is none: a test that needs the SDK never passes without it.
pub fn venv_python() -> std::path::PathBuf {
    static PYTHON: std::sync::OnceLock<Result<std::path::PathBuf, String>> = std::sync::OnceLock::new();
    PYTHON.get_or_init(find_venv_python).clone().unwrap_or_else(|e| panic!("{e}"))
}

fn find_venv_python() -> Result<std::path::PathBuf, String> {
    use std::path::{Path, PathBuf};
    if let Some(p) = std::env::var_os("WALSCOPE_PYTHON").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.exists() {
            Ok(p)
        } else {
            Err(format!("WALSCOPE_PYTHON={} does not exist", p.display()))
        };
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/python-env.sh");
    let hint = "it needs python3 with venv, and PyPI reachable the first time; or set WALSCOPE_PYTHON \
                to a python that has the pinned pymilvus";
    let out = std::process::Command::new("bash")
        .arg(&script)
        .output()
        .map_err(|e| format!("cannot run {}: {e} ({hint})", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}); {hint}. Its output:\n{}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let python = stdout.lines().rev().find(|l| !l.trim().is_empty()).map(|l| PathBuf::from(l.trim()));
    match python {
        Some(p) if p.exists() => Ok(p),
        _ => Err(format!("{} printed no python path: {stdout:?}", script.display())),
    }
}

/// Every frame of every Milvus sample, read as the browser and `inspect` read it: summary,
/// header and body as JSON.
pub fn decoded_wal_frames(set: &walscope::schema::SchemaSet, path: &std::path::Path) -> Vec<String> {
    let d = walscope::dump::DumpFile::open(
        path,
        walscope::dump::OpenOptions {
            message_type: Some(set.message("milvus.proto.milvus.DumpMessagesResponse").unwrap()),
            ..Default::default()
        },
    )
    .unwrap();
    d.wait_indexed();
    let resp = set.message("milvus.proto.milvus.DumpMessagesResponse").unwrap();
    let mut out = Vec::new();
    for i in 0..d.frame_count() {
        let bytes = d.message_bytes(&d.frame(i).unwrap()).1;
        let Ok(decoded) = walscope::codec::decode(&resp, bytes) else {
            out.push(format!("{i}: undecodable"));
            continue;
        };
        let Some(imm) = decoded.message.get_field_by_name("message").and_then(|v| v.as_message().cloned())
        else {
            out.push(format!("{i}: no message"));
            continue;
        };
        let w = walscope::wal::analyze(set.pool(), &imm);
        let json = |m: &Option<Result<prost_reflect::DynamicMessage, String>>| match m {
            Some(Ok(m)) => format!(
                "{} {}",
                prost_reflect::ReflectMessage::descriptor(m).full_name(),
                walscope::codec::to_json(m, false)
            ),
            Some(Err(e)) => format!("error {e}"),
            None => "none".into(),
        };
        out.push(format!(
            "{i}: {} | {} | {} | {:?}",
            w.summary(),
            json(&w.header),
            json(&w.body),
            w.problems
        ));
    }
    out
}

/// A TCP proxy on 127.0.0.1 to `to` that keeps every byte the client sent.
pub async fn recording_proxy(
    to: std::net::SocketAddr,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<u8>>>) {
    let (addr, sent, _) = recording_proxy_both(to).await;
    (addr, sent)
}

/// Bytes a proxy saw go one way.
pub type Seen = std::sync::Arc<std::sync::Mutex<Vec<u8>>>;

/// [`recording_proxy`] that also keeps every byte the server sent back.
pub async fn recording_proxy_both(to: std::net::SocketAddr) -> (String, Seen, Seen) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen: Seen = Default::default();
    let back: Seen = Default::default();
    let (keep, keep_back) = (seen.clone(), back.clone());
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let server = tokio::net::TcpStream::connect(to).await.unwrap();
            let (mut cr, mut cw) = client.into_split();
            let (mut sr, mut sw) = server.into_split();
            let (keep, keep_back) = (keep.clone(), keep_back.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n) = cr.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    // Recorded before it is forwarded: once the reply is back, the request has
                    // been seen (recording after the write raced the client's next assertion).
                    keep.lock().unwrap().extend_from_slice(&buf[..n]);
                    if sw.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
                let _ = sw.shutdown().await;
            });
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n) = sr.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    keep_back.lock().unwrap().extend_from_slice(&buf[..n]);
                    if cw.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
                let _ = cw.shutdown().await;
            });
        }
    });
    (addr, seen, back)
}

/// An address on 127.0.0.1 where nothing listens for as long as the socket lives: bound, so no
/// other test or process can take the port (a listener bound and dropped can be reused at once),
/// but not listening, so every connection is refused.
pub fn refused_address() -> (tokio::net::TcpSocket, std::net::SocketAddr) {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.bind("127.0.0.1:0".parse().expect("address")).expect("bind");
    let addr = socket.local_addr().expect("bound address");
    (socket, addr)
}

/// The environment variable that tells a test it was started by [`run_alone`].
const ALONE: &str = "WALSCOPE_RUN_ALONE";

/// Runs the ignored test `path` (`module::name`) in a process of its own: this test binary
/// again, with only that test selected. A test that measures the whole process (its memory,
/// or a child's peak resident memory, which Linux counts from the spawning process's pages
/// too) must not share the process with the rest of the suite.
pub fn run_alone(path: &str) {
    let exe = std::env::current_exe().expect("the test binary");
    let out = std::process::Command::new(exe)
        .args([path, "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(ALONE, "1")
        .output()
        .expect("run the test alone");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{path} did not run: {text}");
}

/// True in the process [`run_alone`] started; an ignored test run by hand without it does
/// nothing.
pub fn alone() -> bool {
    std::env::var_os(ALONE).is_some()
}

/// A client of the SyncTool at `endpoint` over brpc (a demo SyncTool on loopback).
pub fn synctool(endpoint: &str) -> walscope::net::SyncToolClient {
    let t: std::sync::Arc<dyn walscope::net::Transport> =
        std::sync::Arc::new(walscope::net::brpc::BrpcTransport::new(endpoint.to_string()));
    walscope::net::SyncToolClient::new(t, Default::default())
}

/// Creates `demo_db.TABLE`'s sync task (full, then continuous, into `/tmp/walscope-test/TABLE`)
/// on the SyncTool at `endpoint`, as another tool would.
pub fn create_task(rt: &tokio::runtime::Runtime, endpoint: &str, table: &str) {
    let mode = walscope::datasync::SyncMode::FullAndContinuous;
    let dest = format!("/tmp/walscope-test/{table}");
    rt.block_on(synctool(endpoint).create_sync_task("demo_db", table, mode, None, &dest)).expect("the task");
}

/// `walscope ARGS` with its own config folder (history, profiles) and `envs`, run off the async
/// runtime's threads so a demo server on the same runtime keeps answering.
pub async fn walscope_in(
    cfg: &std::path::Path,
    args: &[&str],
    envs: &[(&str, &str)],
) -> std::process::Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let envs: Vec<(String, String)> = envs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let cfg = cfg.to_path_buf();
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_walscope"))
            .args(args)
            .env("WALSCOPE_CONFIG_DIR", cfg)
            .envs(envs)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

/// A run that succeeded: its stdout and stderr (a failure shows both).
pub fn succeeded(o: &std::process::Output) -> (String, String) {
    let (out, err) =
        (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned());
    assert!(o.status.success(), "stdout:\n{out}\nstderr:\n{err}");
    (out, err)
}
