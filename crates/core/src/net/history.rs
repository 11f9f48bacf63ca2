//! The call history on disk: `<config dir>/walscope/history.jsonl` (`WALSCOPE_CONFIG_DIR`
//! overrides the directory, as for profiles), one JSON object per line, appended, never edited
//! in place. Each entry keeps what is needed to send the same call again: where it went, the
//! method, the exact request bytes (base64), the metadata, the deadline, and what came of it.
//!
//! Owns: [`HistoryStore`] and [`HistoryEntry`]. Several walscope processes may append at once:
//! appends and rotations hold an advisory lock on `history.jsonl.lock`. Ids are one more than
//! the last entry's, so they grow and never repeat within a file. A line torn by a killed
//! process is skipped when reading (and the next append starts on a fresh line); it is never
//! fatal. Bounded: every few appends the store counts its entries and, when over the limit
//! (10,000 by default), rewrites the file atomically with the newest ones.
//!
//! Must never: store a secret (`authorization` and other credential-like metadata keys are
//! dropped by [`HistoryStore::append`] whatever the caller passes, and so is the user info of
//! an address, `user:password@host`, wherever the entry repeats it), or lose an entry to a
//! rotation racing an append.

use super::call::{CallOutcome, StreamEnd, StreamSummary};
use super::profile::TransportKind;
use super::{CallOptions, NetError};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Entries kept by default.
pub const DEFAULT_KEEP: usize = 10_000;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "result")]
pub enum HistoryOutcome {
    Ok,
    /// No answer, or an error status: the failure kind and the error's words.
    TransportError {
        kind: String,
        words: String,
    },
    /// Answered OK at the transport with an error in the body (see [`super::body_error`]).
    BodyError {
        words: String,
    },
    /// A stream that ended early: cancelled, or its reader stopped.
    Incomplete {
        words: String,
    },
}

impl HistoryOutcome {
    pub fn words(&self) -> String {
        match self {
            HistoryOutcome::Ok => "ok".into(),
            HistoryOutcome::TransportError { kind, words } => format!("{kind}: {words}"),
            HistoryOutcome::BodyError { words } => format!("error in the body: {words}"),
            HistoryOutcome::Incomplete { words } => format!("incomplete: {words}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// Given by [`HistoryStore::append`].
    pub id: u64,
    /// When the call started, UTC, ms since the epoch.
    pub time_ms: u64,
    /// The saved profile used, if any.
    pub profile: Option<String>,
    pub endpoint: String,
    pub transport: TransportKind,
    /// The method's full name, `package.Service.Method`.
    pub method: String,
    /// The request exactly as handed to the transport.
    #[serde(with = "base64_bytes", rename = "request_base64")]
    pub request: Vec<u8>,
    /// Per-call metadata, secrets removed.
    pub metadata: Vec<(String, String)>,
    pub deadline_ms: Option<u64>,
    pub outcome: HistoryOutcome,
    pub elapsed_ms: u64,
    /// Response messages received (1 for a unary answer) and their bytes.
    pub responses: u64,
    pub response_bytes: u64,
    /// Headers, trailers, a small unary reply and timings (absent in older entries).
    #[serde(flatten, default)]
    pub recorded: super::transcript::Recorded,
}

impl HistoryEntry {
    /// An entry for a call about to be made (outcome Ok and no responses until filled in).
    pub fn for_call(
        profile: Option<&str>,
        endpoint: &str,
        transport: TransportKind,
        method: &str,
        request: &[u8],
        opts: &CallOptions,
    ) -> HistoryEntry {
        HistoryEntry {
            id: 0,
            time_ms: crate::time::now_ms(),
            profile: profile.map(str::to_string),
            endpoint: endpoint.to_string(),
            transport,
            method: method.to_string(),
            request: request.to_vec(),
            metadata: opts.metadata.clone(),
            deadline_ms: opts.timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
            outcome: HistoryOutcome::Ok,
            elapsed_ms: 0,
            responses: 0,
            response_bytes: 0,
            recorded: Default::default(),
        }
    }

    /// Fills in what a unary call gave.
    pub fn with_unary(
        mut self,
        result: &Result<CallOutcome, NetError>,
        elapsed: std::time::Duration,
    ) -> Self {
        self.elapsed_ms = ms(elapsed);
        match result {
            Ok(o) => {
                self.request = o.request.to_vec();
                self.responses = 1;
                self.response_bytes = o.reply.len() as u64;
                self.recorded = super::transcript::Recorded::of_unary(o);
                if let Some(words) = o.body_error() {
                    self.outcome = HistoryOutcome::BodyError { words };
                }
            }
            Err(e) => self.outcome = transport_error(e),
        }
        self
    }

    /// Fills in what a server stream gave; `body_error` is the first error found in a message.
    pub fn with_stream(mut self, s: &StreamSummary, body_error: Option<String>) -> Self {
        self.request = s.request.to_vec();
        self.elapsed_ms = ms(s.elapsed);
        self.responses = s.count;
        self.response_bytes = s.bytes;
        self.recorded = super::transcript::Recorded::of_stream(s);
        self.outcome = match (&s.end, body_error) {
            (StreamEnd::Failed(e), _) => transport_error(e),
            (_, Some(words)) => HistoryOutcome::BodyError { words },
            (StreamEnd::Completed, None) => HistoryOutcome::Ok,
            (StreamEnd::Cancelled, None) => HistoryOutcome::Incomplete { words: "cancelled".into() },
            (StreamEnd::Stopped(why), None) => HistoryOutcome::Incomplete { words: why.clone() },
        };
        self
    }

    /// The text [`HistoryStore::list`] searches.
    fn haystack(&self) -> String {
        let mut s = format!(
            "{} {} {} {:?} {} {}",
            self.id,
            self.profile.as_deref().unwrap_or(""),
            self.endpoint,
            self.transport,
            self.method,
            self.outcome.words()
        );
        for (k, v) in &self.metadata {
            s.push_str(&format!(" {k}: {v}"));
        }
        s.to_lowercase()
    }
}

fn transport_error(e: &NetError) -> HistoryOutcome {
    HistoryOutcome::TransportError { kind: e.kind().label().to_string(), words: e.to_string() }
}

fn ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Metadata keys that carry credentials; never written to the history.
pub fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["authorization", "cookie", "token", "secret", "password", "passwd", "api-key", "apikey", "api_key"]
        .iter()
        .any(|s| k.contains(s))
}

/// Removes the user info of the entry's address (`bob:pw@host` becomes `host`), and that text
/// wherever else the entry holds it (an error's words, a header's value).
fn scrub_userinfo(entry: &mut HistoryEntry) {
    let Some(info) = super::edges::userinfo(&entry.endpoint).map(str::to_string) else { return };
    entry.endpoint = super::edges::without_userinfo(&entry.endpoint);
    if info.is_empty() {
        return;
    }
    let scrub = |text: &mut String| {
        if text.contains(&info) {
            *text = text.replace(&info, "(user info removed)");
        }
    };
    match &mut entry.outcome {
        HistoryOutcome::Ok => {}
        HistoryOutcome::TransportError { kind, words } => {
            scrub(kind);
            scrub(words);
        }
        HistoryOutcome::BodyError { words } | HistoryOutcome::Incomplete { words } => scrub(words),
    }
    for (_, v) in &mut entry.metadata {
        scrub(v);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("call history {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("call history {path}: an entry cannot be written: {reason}")]
    Encode { path: PathBuf, reason: String },
}

pub struct HistoryStore {
    path: PathBuf,
    keep: usize,
}

impl HistoryStore {
    /// The user's history (`WALSCOPE_CONFIG_DIR`, else the platform config directory).
    pub fn user() -> HistoryStore {
        HistoryStore::at(&super::profile::config_dir().join("history.jsonl"))
    }

    pub fn at(path: &Path) -> HistoryStore {
        HistoryStore { path: path.to_path_buf(), keep: DEFAULT_KEEP }
    }

    /// Keeps at most about `keep` entries (at least 1).
    pub fn with_keep(mut self, keep: usize) -> HistoryStore {
        self.keep = keep.max(1);
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self) -> impl Fn(std::io::Error) -> HistoryError + '_ {
        |source| HistoryError::Io { path: self.path.clone(), source }
    }

    /// Appends `entry` with the next id and without secret metadata; returns it as stored.
    pub fn append(&self, mut entry: HistoryEntry) -> Result<HistoryEntry, HistoryError> {
        let io = self.io();
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(&io)?;
        }
        let lock = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(lock_path(&self.path))
            .map_err(&io)?;
        lock.lock().map_err(&io)?;
        let mut file =
            OpenOptions::new().create(true).read(true).append(true).open(&self.path).map_err(&io)?;
        let (last, ends_with_newline) = last_id(&mut file).map_err(&io)?;
        entry.id = last + 1;
        entry.metadata.retain(|(k, _)| !is_secret_key(k));
        scrub_userinfo(&mut entry);
        let mut line = serde_json::to_vec(&entry)
            .map_err(|e| HistoryError::Encode { path: self.path.clone(), reason: e.to_string() })?;
        line.push(b'\n');
        if !ends_with_newline {
            line.insert(0, b'\n'); // after a torn line: start afresh
        }
        file.write_all(&line).map_err(&io)?;
        file.sync_data().map_err(&io)?;
        drop(file);
        let every = (self.keep / 16).clamp(1, 64) as u64;
        if entry.id.is_multiple_of(every) {
            self.rotate()?;
        }
        drop(lock); // unlocks
        Ok(entry)
    }

    /// Rewrites the file with the newest `keep` entries when it holds more (lock held).
    fn rotate(&self) -> Result<(), HistoryError> {
        let all = self.read_all()?;
        if all.len() <= self.keep {
            return Ok(());
        }
        let mut out = Vec::new();
        for e in &all[all.len() - self.keep..] {
            serde_json::to_writer(&mut out, e)
                .map_err(|e| HistoryError::Encode { path: self.path.clone(), reason: e.to_string() })?;
            out.push(b'\n');
        }
        crate::atomic::atomic_write(&self.path, &out, false).map(drop).map_err(self.io())
    }

    fn read_all(&self) -> Result<Vec<HistoryEntry>, HistoryError> {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.io()(e)),
        };
        Ok(bytes
            .split(|b| *b == b'\n')
            .filter_map(|l| serde_json::from_slice::<HistoryEntry>(l).ok())
            .collect())
    }

    /// Every entry, oldest first; with `search`, those whose id, profile, endpoint, transport,
    /// method, outcome or metadata contain it (ignoring case). Unreadable lines are skipped.
    pub fn list(&self, search: Option<&str>) -> Result<Vec<HistoryEntry>, HistoryError> {
        let mut all = self.read_all()?;
        if let Some(s) = search.map(str::to_lowercase).filter(|s| !s.is_empty()) {
            all.retain(|e| e.haystack().contains(&s));
        }
        Ok(all)
    }

    pub fn get(&self, id: u64) -> Result<Option<HistoryEntry>, HistoryError> {
        Ok(self.read_all()?.into_iter().rev().find(|e| e.id == id))
    }
}

fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".lock");
    path.with_file_name(name)
}

/// The id of the last readable entry (0 when none), and whether the file ends with a newline
/// (an empty file does). Reads backwards from the end in chunks.
fn last_id(file: &mut File) -> std::io::Result<(u64, bool)> {
    const CHUNK: u64 = 64 * 1024;
    let len = file.metadata()?.len();
    let mut end = len;
    let mut tail: Vec<u8> = Vec::new();
    let mut ends_with_newline = true;
    loop {
        let start = end.saturating_sub(CHUNK);
        let mut chunk = vec![0u8; usize::try_from(end - start).unwrap_or(0)];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut chunk)?;
        if end == len {
            ends_with_newline = chunk.last().is_none_or(|b| *b == b'\n');
        }
        chunk.extend_from_slice(&tail);
        tail = chunk;
        end = start;
        let mut lines: Vec<&[u8]> = tail.split(|b| *b == b'\n').collect();
        if start > 0 {
            lines.remove(0); // may be the end of a line that starts further back
        }
        if let Some(e) = lines.iter().rev().find_map(|l| serde_json::from_slice::<HistoryEntry>(l).ok()) {
            return Ok((e.id, ends_with_newline));
        }
        if start == 0 {
            return Ok((0, ends_with_newline));
        }
    }
}

pub(crate) mod base64_bytes {
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(b))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD.decode(text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(method: &str, request: &[u8]) -> HistoryEntry {
        let opts = CallOptions {
            metadata: vec![
                ("dbname".into(), "default".into()),
                ("authorization".into(), "cm9vdDpNaWx2dXM=".into()),
                ("X-Api-Key".into(), "k".into()),
            ],
            timeout: Some(std::time::Duration::from_millis(1500)),
            ..Default::default()
        };
        HistoryEntry::for_call(Some("demo"), "127.0.0.1:19530", TransportKind::Grpc, method, request, &opts)
    }

    #[test]
    fn append_list_get_without_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let store = HistoryStore::at(&dir.path().join("h/history.jsonl"));
        assert!(store.list(None).unwrap().is_empty());
        let a = store.append(entry("milvus.proto.milvus.MilvusService.GetVersion", b"")).unwrap();
        let b = store.append(entry("openmldb.datasync.SyncTool.TaskStatus", &[0x08, 0x01])).unwrap();
        assert_eq!((a.id, b.id), (1, 2));
        assert_eq!(b.metadata, vec![("dbname".to_string(), "default".to_string())]);
        let text = std::fs::read_to_string(store.path()).unwrap();
        assert!(
            !text.contains("cm9vdDpNaWx2dXM=") && !text.to_lowercase().contains("authorization"),
            "{text}"
        );
        assert!(text.contains(r#""request_base64":"CAE=""#), "{text}");
        assert_eq!(store.get(2).unwrap().unwrap(), b);
        assert_eq!(store.get(9).unwrap(), None);
        assert_eq!(store.list(Some("taskstatus")).unwrap(), vec![b.clone()]);
        assert_eq!(store.list(Some("DBNAME: default")).unwrap().len(), 2);
        assert_eq!(b.deadline_ms, Some(1500));
    }

    #[test]
    fn an_address_with_user_info_is_stored_without_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = HistoryStore::at(&dir.path().join("history.jsonl"));
        let mut e = entry("a.S.M", b"");
        e.endpoint = "grpc://bob:hunter2@10.0.0.5:19530".into();
        e.outcome = HistoryOutcome::TransportError {
            kind: "refused".into(),
            words: "cannot connect to grpc://bob:hunter2@10.0.0.5:19530".into(),
        };
        let stored = store.append(e).unwrap();
        assert_eq!(stored.endpoint, "grpc://10.0.0.5:19530");
        let text = std::fs::read_to_string(store.path()).unwrap();
        assert!(!text.contains("hunter2") && text.contains("10.0.0.5:19530"), "{text}");
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_the_next_append_starts_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let store = HistoryStore::at(&dir.path().join("history.jsonl"));
        store.append(entry("a.S.M", b"1")).unwrap();
        let mut f = OpenOptions::new().append(true).open(store.path()).unwrap();
        f.write_all(br#"{"id": 2, "time_ms": 17, "prof"#).unwrap(); // killed mid-write
        drop(f);
        assert_eq!(store.list(None).unwrap().len(), 1);
        let next = store.append(entry("a.S.M", b"3")).unwrap();
        assert_eq!(next.id, 2);
        let all = store.list(None).unwrap();
        assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(all[1].request, b"3");
    }

    #[test]
    fn rotation_keeps_the_newest_and_ids_keep_growing() {
        let dir = tempfile::tempdir().unwrap();
        let store = HistoryStore::at(&dir.path().join("history.jsonl")).with_keep(5);
        for i in 0..12u8 {
            store.append(entry("a.S.M", &[i])).unwrap();
        }
        let all = store.list(None).unwrap();
        assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), vec![8, 9, 10, 11, 12]);
        assert_eq!(all[4].request, vec![11]);
        assert_eq!(store.append(entry("a.S.M", b"")).unwrap().id, 13);
    }

    #[test]
    fn concurrent_appends_get_distinct_ids() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let store = HistoryStore::at(&path).with_keep(1000);
                    (0..25).map(|_| store.append(entry("a.S.M", b"x")).unwrap().id).collect::<Vec<_>>()
                })
            })
            .collect();
        let mut ids: Vec<u64> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
        ids.sort_unstable();
        assert_eq!(ids, (1..=100).collect::<Vec<_>>());
        assert_eq!(HistoryStore::at(&path).list(None).unwrap().len(), 100);
    }
}
