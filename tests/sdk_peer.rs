//! The official Milvus Rust SDK (`milvus-sdk-rust` 3.0.3, from crates.io) as a test peer against
//! the demo failover pair over 127.0.0.1: on every pchannel, the SDK's `dump_messages` from the
//! salvage checkpoint walscope read on the new primary receives, message by message (id,
//! properties, payload), what `walscope salvage` writes for the same window; and the same SDK's
//! `get_replicate_info` fails on the force-promoted new primary ("replicate info response has no
//! checkpoint": it requires `checkpoint`, which a primary leaves out), which walscope's docs and
//! composer warn about. A fixed SDK release makes that test fail on purpose.
//!
//! The peer is a small program (`tests/peers/milvus_sdk_rust/`), written into
//! `<temp>/walscope-sdk-peer-3.0.3/` and built there with its own target directory (the SDK's
//! build script compiles its protos with the `protoc-bin-vendored` it depends on): about three
//! minutes the first time, then reused. It needs crates.io for that first build. `#[ignore]`d
//! for that time: `.ci/run` runs it, and so does
//! `cargo test --test tests -- --ignored sdk_peer::`.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Instant;
use walscope::salvage::checkpoint::Checkpoint;
use walscope::salvage::folder::FolderManifest;
use walscope::schema::SchemaSet;
use walscope::sim::milvus::OLD_CLUSTER_ID;
use walscope::sim::milvus::pair::{MilvusPair, MilvusPairConfig};

/// The SDK release the peer pins (its Cargo.toml.in says `=3.0.3`).
const SDK_VERSION: &str = "3.0.3";
const CARGO_TOML: &str = include_str!("peers/milvus_sdk_rust/Cargo.toml.in");
const CARGO_LOCK: &str = include_str!("peers/milvus_sdk_rust/Cargo.lock.in");
const MAIN_RS: &str = include_str!("peers/milvus_sdk_rust/main.rs");
/// What the SDK says when a GetReplicateInfo reply has no `checkpoint`.
const NO_CHECKPOINT: &str = "replicate info response has no checkpoint";

/// Builds the peer off the runtime's workers (a panic, with its words, if it cannot be built).
async fn build_first() {
    if let Err(e) = tokio::task::spawn_blocking(peer).await {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// The peer's binary, built once per test run (cargo's lock on the target serialises runs).
fn peer() -> &'static Path {
    static PEER: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PEER.get_or_init(build_peer) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

/// Writes a file only when its content changed, so cargo's fingerprints stay fresh.
fn write_if_changed(path: &Path, content: &str) -> Result<(), String> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == content) {
        return Ok(());
    }
    std::fs::write(path, content).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn build_peer() -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("walscope-sdk-peer-{SDK_VERSION}"));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    write_if_changed(&dir.join("Cargo.toml"), CARGO_TOML)?;
    write_if_changed(&dir.join("Cargo.lock"), CARGO_LOCK)?;
    write_if_changed(&dir.join("main.rs"), MAIN_RS)?;
    let target = dir.join("target");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let started = Instant::now();
    let out = Command::new(cargo)
        .arg("build")
        .arg("--locked")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .map_err(|e| format!("cannot run cargo to build the Rust SDK peer: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let tail: Vec<&str> = stderr.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        let network = ["crates.io", "download", "registry", "resolve host", "network", "index"]
            .iter()
            .any(|w| stderr.to_lowercase().contains(w));
        let why = if network {
            format!(
                "the Rust SDK peer needs crates.io (milvus-sdk-rust ={SDK_VERSION} and its dependencies) \
                 the first time it is built, and cargo could not fetch them: is crates.io reachable?"
            )
        } else {
            "the Rust SDK peer did not build".to_string()
        };
        return Err(format!("{why}\nin {}: cargo {}\n{}", dir.display(), out.status, tail.join("\n")));
    }
    // The first build's time, for docs/testing.md; a reuse takes about a second.
    eprintln!("the Rust SDK peer built in {:.0} s ({})", started.elapsed().as_secs_f64(), dir.display());
    Ok(target.join("debug").join("walscope-sdk-peer"))
}

/// Runs the peer off the runtime's workers (the demo serves on them); its JSON lines.
async fn run_peer(args: Vec<String>) -> Vec<Value> {
    let bin = peer().to_path_buf();
    let what = args.join(" ");
    let out = tokio::task::spawn_blocking(move || Command::new(bin).args(&args).output())
        .await
        .unwrap()
        .expect("the peer runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "walscope-sdk-peer {what}: {}\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect()
}

async fn walscope(args: Vec<String>, config: &Path) -> Output {
    let config = config.to_path_buf();
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_walscope")).args(args).env("WALSCOPE_CONFIG_DIR", config).output()
    })
    .await
    .unwrap()
    .expect("walscope runs")
}

/// The demo pair over a WAL of small messages (transactions, encrypted payloads and DDL among
/// them), and the end of the window: two seconds of it, some 300 messages a pchannel.
async fn pair() -> (MilvusPair, u64) {
    let wal = crate::common::walgen::small_wal(39);
    let pair =
        MilvusPair::start(MilvusPairConfig { wal, ..Default::default() }).await.expect("the pair starts");
    (pair, crate::common::walgen::timetick_after_ms(2_000))
}

/// A `common.WALName` number's name, as the proto (and the peer) spell it.
fn wal_name(pool: &prost_reflect::DescriptorPool, n: i32) -> String {
    let e = pool.get_enum_by_name("milvus.proto.common.WALName").expect("WALName");
    e.get_value(n).map_or_else(|| n.to_string(), |v| v.name().to_string())
}

/// The messages of a `walscope salvage` dump, in the peer's shape.
fn dump_messages(pool: &prost_reflect::DescriptorPool, file: &Path) -> Vec<Value> {
    use base64::Engine as _;
    use prost_reflect::{DynamicMessage, Value as V};
    let response = pool.get_message_by_name(walscope::salvage::job::RESPONSE_TYPE).unwrap();
    let bytes = std::fs::read(file).unwrap();
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let h = walscope::dump::framing::read_header(&bytes, pos, walscope::dump::Framing::VarintDelimited)
            .expect("a whole frame");
        let start = pos + h.header_len as usize;
        let frame = DynamicMessage::decode(response.clone(), &bytes[start..start + h.body_len as usize])
            .expect("a DumpMessagesResponse");
        pos += h.total() as usize;
        let m = frame.get_field_by_name("message").and_then(|v| v.as_message().cloned()).expect("a message");
        let id = m.get_field_by_name("id").and_then(|v| v.as_message().cloned()).expect("an id");
        let text =
            |m: &DynamicMessage, f: &str| m.get_field_by_name(f).and_then(|v| v.as_str().map(String::from));
        let wal = id.get_field_by_name("WAL_name").and_then(|v| v.as_enum_number()).unwrap_or(0);
        let mut properties = serde_json::Map::new();
        if let Some(V::Map(map)) = m.get_field_by_name("properties").as_deref() {
            let mut pairs: Vec<(String, String)> = map
                .iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_string(), v.as_str()?.to_string())))
                .collect();
            pairs.sort();
            properties.extend(pairs.into_iter().map(|(k, v)| (k, json!(v))));
        }
        let payload = m.get_field_by_name("payload").and_then(|v| v.as_bytes().cloned()).unwrap_or_default();
        out.push(json!({
            "id": text(&id, "id").unwrap_or_default(),
            "payload": base64::engine::general_purpose::STANDARD.encode(&payload),
            "properties": properties,
            "wal_name": wal_name(pool, wal),
        }));
    }
    out
}

/// Where two messages first differ, in words.
fn difference(ours: &Value, theirs: &Value) -> String {
    ["id", "wal_name", "properties", "payload"]
        .iter()
        .find(|k| ours[**k] != theirs[**k])
        .map_or_else(|| "nothing".into(), |k| format!("{k}: walscope {} vs the SDK {}", ours[*k], theirs[*k]))
}

/// `walscope salvage --all-pchannels` of the pair into `dir` (`--keep-replicated` with `keep`);
/// its folder manifest.
async fn salvage(pair: &MilvusPair, root: &Path, dir: &Path, end: u64, keep: bool) -> FolderManifest {
    let (new, old, end) = (pair.new_addr().to_string(), pair.old_addr().to_string(), end.to_string());
    let mut args = vec!["salvage", "--new-primary", &new, "--old-primary", &old];
    args.extend(["--source-cluster-id", OLD_CLUSTER_ID, "--all-pchannels", "--retries", "0"]);
    args.extend(["--out-dir", dir.to_str().unwrap(), "--end-timetick", &end]);
    if keep {
        args.push("--keep-replicated");
    }
    let config = root.join("config");
    std::fs::create_dir_all(&config).unwrap();
    let out = walscope(args.iter().map(|s| s.to_string()).collect(), &config).await;
    assert!(out.status.success(), "walscope salvage: {}", String::from_utf8_lossy(&out.stderr));
    let folder = FolderManifest::load(dir).expect("the folder's salvage.json");
    assert_eq!(folder.pchannels.len(), MilvusPair::pchannels().len(), "every pchannel of the pair");
    folder
}

/// The SDK's `dump_messages` on the old primary from checkpoint `c`'s id, with its defaults
/// (`include_start_message` false) and this lower timetick; every message it received.
async fn sdk_dump(pair: &MilvusPair, c: &Checkpoint, wal: &str, start: u64, end: u64) -> Vec<Value> {
    let lines = run_peer(vec![
        "dump".into(),
        format!("http://{}", pair.old_addr()),
        c.pchannel.clone(),
        c.message_id.clone(),
        wal.into(),
        start.to_string(),
        end.to_string(),
    ])
    .await;
    let (last, theirs) = lines.split_last().expect("the peer's summary line");
    assert_eq!(last["end"], json!(theirs.len()), "{}: the SDK's stream ended in error: {last}", c.pchannel);
    theirs.to_vec()
}

/// The same messages in the same order, or where they first differ.
fn assert_same(pchannel: &str, what: &str, ours: &[Value], theirs: &[Value]) {
    if let Some(i) = (0..ours.len().min(theirs.len())).find(|&i| ours[i] != theirs[i]) {
        panic!("{pchannel}: {what}: message {i} differs: {}", difference(&ours[i], &theirs[i]));
    }
    assert_eq!(
        theirs.len(),
        ours.len(),
        "{pchannel}: {what}: the number of messages, the SDK's vs walscope's"
    );
}

/// A message's `_tt` (base 36).
fn timetick(m: &Value) -> u64 {
    m["properties"]["_tt"]
        .as_str()
        .and_then(|t| walscope::wal::parse_base36_u64(t).ok())
        .expect("a _tt property")
}

/// `walscope salvage --all-pchannels --keep-replicated` from the new primary's checkpoints,
/// then, per pchannel, the SDK's `dump_messages` from the same checkpoint with the SDK's own
/// defaults (`include_start_message` false, no lower timetick): walscope's dump starts *at* the
/// checkpoint's id (its first message is the checkpoint's, already on the new primary), the
/// SDK's after it; from there they hold the same messages, in the same order, to the end.
/// Then walscope's default salvage (without what the new primary has: `_tt` above the
/// checkpoint's) against the SDK called as its docstrings and upstream's design show it, with
/// `start_time_tick` = the checkpoint's `time_tick`: the SDK's holds, first, the message(s) at
/// exactly that timetick (the last replicated one, already on the new primary: the lower bound
/// is inclusive), then walscope's; with `time_tick + 1` the two are the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "builds the Rust SDK peer (about three minutes the first time): .ci/run runs it"]
async fn sdk_dump_messages_equals_walscope_salvage_on_every_pchannel() {
    // Built before the pair starts, so the demo's streams do not wait on a three-minute build.
    build_first().await;
    let (pair, end) = pair().await;
    let root = tempfile::tempdir().unwrap();
    let set = SchemaSet::builtin();

    let dir = root.path().join("keep-replicated");
    for entry in &salvage(&pair, root.path(), &dir, end, true).await.pchannels {
        let c: &Checkpoint = entry.checkpoint.as_ref().expect("a checkpoint");
        assert!(entry.complete, "{}: the salvage is complete", entry.pchannel);
        let ours = dump_messages(set.pool(), &dir.join(entry.file.as_deref().unwrap()));
        let wal = wal_name(set.pool(), c.wal);
        let theirs = sdk_dump(&pair, c, &wal, 0, end).await;
        // walscope's window starts at the checkpoint's message; the SDK's right after it.
        let (first, ours) = ours.split_first().expect("walscope's dump holds the checkpoint's message");
        assert_eq!(first["id"], json!(c.message_id), "{}: walscope's first is the checkpoint's", c.pchannel);
        assert_eq!(first["wal_name"], json!(wal));
        assert!(ours.len() >= 100, "{}: a window of {} messages is too small", c.pchannel, ours.len());
        assert_same(&c.pchannel, "after the checkpoint's message", ours, &theirs);
    }

    let dir = root.path().join("default");
    for entry in &salvage(&pair, root.path(), &dir, end, false).await.pchannels {
        let c: &Checkpoint = entry.checkpoint.as_ref().expect("a checkpoint");
        let ours = dump_messages(set.pool(), &dir.join(entry.file.as_deref().unwrap()));
        assert!(
            ours.iter().all(|m| timetick(m) > c.time_tick),
            "{}: walscope skips the replicated",
            c.pchannel
        );
        let wal = wal_name(set.pool(), c.wal);
        let theirs = sdk_dump(&pair, c, &wal, c.time_tick, end).await;
        let replicated = theirs.iter().take_while(|m| timetick(m) <= c.time_tick).count();
        assert!(
            replicated >= 1,
            "{}: the SDK from the checkpoint's time_tick repeats its message",
            c.pchannel
        );
        assert!(theirs[..replicated].iter().all(|m| timetick(m) == c.time_tick), "{}", c.pchannel);
        assert_same(&c.pchannel, "start_time_tick = the checkpoint's", &ours, &theirs[replicated..]);
        let theirs = sdk_dump(&pair, c, &wal, c.time_tick + 1, end).await;
        assert_same(&c.pchannel, "start_time_tick = the checkpoint's + 1", &ours, &theirs);
    }
    pair.shutdown().await;
}

/// The SDK's `get_replicate_info` on the force-promoted new primary, for every pchannel whose
/// salvage checkpoint walscope reads there: the SDK fails, because the reply has only
/// `salvage_checkpoint` (upstream leaves `checkpoint` nil on a primary).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "builds the Rust SDK peer (about three minutes the first time): .ci/run runs it"]
async fn sdk_get_replicate_info_fails_on_the_force_promoted_primary() {
    use walscope::net::ConnectOptions;
    use walscope::net::profile::{ConnectionProfile, TransportKind};
    build_first().await;
    let (pair, _) = pair().await;
    let new = ConnectionProfile::plain("new", TransportKind::Grpc, pair.new_addr().to_string());
    let pchannels = MilvusPair::pchannels();
    let ours = walscope::salvage::checkpoint::fetch_checkpoints(
        &new,
        None,
        OLD_CLUSTER_ID,
        &pchannels,
        &ConnectOptions::default(),
        std::time::Duration::from_secs(10),
    )
    .await
    .expect("the new primary answers");
    for (p, report) in pchannels.iter().zip(&ours.reports) {
        report.result.as_ref().unwrap_or_else(|e| panic!("{p}: walscope reads no salvage checkpoint: {e}"));
        let lines = run_peer(vec![
            "replicate-info".into(),
            format!("http://{}", pair.new_addr()),
            OLD_CLUSTER_ID.into(),
            p.clone(),
        ])
        .await;
        let answer = &lines[0];
        assert!(
            answer.get("ok").is_none(),
            "{p}: the SDK now reads the salvage checkpoint: update docs/recovery.md (\"The official Rust \
             SDK {SDK_VERSION} cannot read a salvage checkpoint\"), the composer's hint \
             (walscope_core::wal::calls::reply_hint) and this test. It answered {answer}"
        );
        let error = answer["error"].as_str().unwrap_or_default();
        assert!(error.contains(NO_CHECKPOINT), "{p}: the SDK failed otherwise: {answer}");
    }
    pair.shutdown().await;
}
