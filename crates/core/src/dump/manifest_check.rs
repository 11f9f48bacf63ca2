//! Whether a dump's manifest (`FILE.manifest.json`) tells the truth. A manifest that cannot be
//! read, is of a format version this walscope does not know, names a type no loaded schema
//! defines, or disagrees with the file it describes (its frame count, its size, its complete
//! flag) is reported in words: `inspect` prints what [`check`] finds in its header, and the
//! window shows it in the file's header. One function for both.
//!
//! Owns: reading a manifest for a reader (a regular file of at most [`MAX_MANIFEST_BYTES`],
//! never a FIFO that would block), its format version, the comparison with the file, and the
//! words. Must never: hand a manifest it could not vouch for to the choice of a type or a
//! framing ([`read`] gives only a usable one), or pass over a disagreement in silence.

use super::framing::Framing;
use super::reader::DumpFile;
use super::writer::{MANIFEST_VERSION, Manifest, manifest_path};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A manifest is a page of JSON; a larger file is not read (it is not one).
pub const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// What is wrong with a manifest, or between it and its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The file beside the dump cannot be read (permissions, not a regular file, too large).
    Unreadable(String),
    /// Not JSON at all.
    NotJson(String),
    /// JSON, of this format version, but not the fields of a manifest.
    NotAManifest(String),
    /// A format version this walscope does not read (as written in the file).
    UnknownVersion(String),
    /// The message type it names is not among the loaded schemas.
    UnknownType(String),
    /// The framing it names is not one walscope knows.
    UnknownFraming(String),
    /// Its frame count is not the file's.
    Frames { says: u64, complete: bool, holds: u64 },
    /// Its byte count is not the file's size.
    Bytes { says: u64, complete: bool, holds: u64 },
}

impl Finding {
    /// Whether the manifest was set aside (the file is read without it).
    pub fn set_aside(&self) -> bool {
        matches!(
            self,
            Finding::Unreadable(_)
                | Finding::NotJson(_)
                | Finding::NotAManifest(_)
                | Finding::UnknownVersion(_)
        )
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const ASIDE: &str = "the file was read without it";
        match self {
            Finding::Unreadable(why) => write!(f, "the manifest cannot be read ({why}); {ASIDE}"),
            Finding::NotJson(why) => write!(f, "the manifest is not JSON ({why}); {ASIDE}"),
            Finding::NotAManifest(why) => {
                write!(f, "the manifest is not a walscope manifest ({why}); {ASIDE}")
            }
            Finding::UnknownVersion(v) => write!(
                f,
                "the manifest is of format version {v}, which this walscope does not read (it reads version {MANIFEST_VERSION}; was it written by a newer walscope?); {ASIDE}"
            ),
            Finding::UnknownType(t) => write!(
                f,
                "the manifest names the type {t}, which no loaded schema defines (load it with --proto or --descriptor-set)"
            ),
            Finding::UnknownFraming(x) => {
                write!(f, "the manifest names the framing \"{x}\", which walscope does not know")
            }
            Finding::Frames { says, complete: true, holds } => write!(
                f,
                "the manifest says {} frames, complete; the file holds {}",
                count(*says),
                count(*holds)
            ),
            Finding::Frames { says, complete: false, holds } => write!(
                f,
                "the manifest says {} frames were written (incomplete); the file holds only {}",
                count(*says),
                count(*holds)
            ),
            Finding::Bytes { says, complete: true, holds } => write!(
                f,
                "the manifest says {} bytes, complete; the file is {} bytes",
                count(*says),
                count(*holds)
            ),
            Finding::Bytes { says, complete: false, holds } => write!(
                f,
                "the manifest says {} bytes were written (incomplete); the file is only {} bytes",
                count(*says),
                count(*holds)
            ),
        }
    }
}

/// `5000` as `5,000`.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A manifest's bytes as a manifest this walscope reads, or why not.
pub fn parse(bytes: &[u8]) -> Result<Manifest, Finding> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| Finding::NotJson(clip(&e.to_string(), 160)))?;
    match value.get("format_version") {
        Some(v) if v.as_u64() == Some(u64::from(MANIFEST_VERSION)) => {}
        Some(v) => return Err(Finding::UnknownVersion(clip(&v.to_string(), 40))),
        None if value.is_object() => return Err(Finding::NotAManifest("no format_version".into())),
        None => return Err(Finding::NotAManifest(format!("a JSON {}, not an object", kind(&value)))),
    }
    // serde quotes a wrong value whole: cut.
    serde_json::from_value(value).map_err(|e| Finding::NotAManifest(clip(&e.to_string(), 160)))
}

fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// A value quoted in a message, cut to `max` characters.
fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &s[..at]),
        None => s.to_string(),
    }
}

/// What reading the manifest beside a dump found.
#[derive(Debug, Clone)]
pub enum ManifestRead {
    /// There is none.
    Absent,
    /// Read, and of a known format version: it may choose the type and the framing.
    Usable(Box<Manifest>),
    /// There is one, but it was set aside.
    SetAside(Finding),
}

/// Reads the manifest beside `dump` (bounded; a regular file only).
pub fn read(dump: &Path) -> ManifestRead {
    let path = manifest_path(dump);
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return ManifestRead::Absent,
        Err(e) => return ManifestRead::SetAside(Finding::Unreadable(e.to_string())),
    };
    if !meta.is_file() {
        return ManifestRead::SetAside(Finding::Unreadable("not a regular file".into()));
    }
    if meta.len() > MAX_MANIFEST_BYTES {
        return ManifestRead::SetAside(Finding::Unreadable(format!(
            "{} bytes; a manifest is at most {} bytes",
            meta.len(),
            MAX_MANIFEST_BYTES
        )));
    }
    match std::fs::read(&path) {
        Ok(bytes) => match parse(&bytes) {
            Ok(m) => ManifestRead::Usable(Box::new(m)),
            Err(f) => ManifestRead::SetAside(f),
        },
        Err(e) => ManifestRead::SetAside(Finding::Unreadable(e.to_string())),
    }
}

/// What is known of the file a manifest describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFacts {
    /// Its size in bytes.
    pub len: u64,
    /// Its frames, when all are counted (the index is done and not cut at its bound).
    pub frames: Option<u64>,
    /// The framing it is read with.
    pub framing: Framing,
    /// Whether the manifest's type is among the loaded schemas.
    pub type_known: bool,
}

/// Where `m` disagrees with the file. A manifest being written lags its file (frames and bytes
/// are those fsynced), so an incomplete one may say less than the file holds, never more.
pub fn compare(m: &Manifest, file: &FileFacts) -> Vec<Finding> {
    let mut out = Vec::new();
    if !m.message_type.is_empty() && !file.type_known {
        out.push(Finding::UnknownType(clip(&m.message_type, 80)));
    }
    let framing = Framing::parse(&m.framing);
    if framing.is_none() {
        out.push(Finding::UnknownFraming(clip(&m.framing, 40)));
    }
    // Counted in another framing (chosen by hand), the frames say nothing about the manifest.
    if let Some(holds) = file.frames
        && framing == Some(file.framing)
        && (m.frames > holds || (m.complete && m.frames != holds))
    {
        out.push(Finding::Frames { says: m.frames, complete: m.complete, holds });
    }
    if m.bytes > file.len || (m.complete && m.bytes != file.len) {
        out.push(Finding::Bytes { says: m.bytes, complete: m.complete, holds: file.len });
    }
    out
}

/// A dump's manifest and what is wrong with it.
#[derive(Debug, Clone)]
pub struct ManifestCheck {
    pub path: PathBuf,
    /// The manifest, when it could be read.
    pub manifest: Option<Manifest>,
    /// Empty when it tells the truth.
    pub findings: Vec<Finding>,
}

impl ManifestCheck {
    /// Each finding as a line, after the manifest's name.
    pub fn lines(&self) -> Vec<String> {
        let name = self
            .path
            .file_name()
            .map_or_else(|| self.path.display().to_string(), |n| n.to_string_lossy().into());
        self.findings.iter().map(|f| format!("{name}: {f}")).collect()
    }
}

/// The check of `dump`'s manifest against the file; `None` when it has none. The frame count
/// is compared once the index is done (see [`FileFacts::frames`]).
pub fn check(dump: &DumpFile) -> Option<ManifestCheck> {
    let path = manifest_path(&dump.path);
    let (manifest, findings) = match read(&dump.path) {
        ManifestRead::Absent => return None,
        ManifestRead::SetAside(f) => (None, vec![f]),
        ManifestRead::Usable(m) => {
            let index = dump.index();
            let facts = FileFacts {
                len: dump.len(),
                frames: (index.is_done() && !index.is_capped() && !index.was_cancelled())
                    .then(|| dump.frame_count() as u64),
                framing: dump.framing,
                type_known: dump
                    .message_type
                    .as_ref()
                    .is_some_and(|t| t.parent_pool().get_message_by_name(&m.message_type).is_some()),
            };
            let findings = compare(&m, &facts);
            (Some(*m), findings)
        }
    };
    Some(ManifestCheck { path, manifest, findings })
}

/// The check of one open file, made once its index is done (the window draws it every frame).
#[derive(Default)]
pub struct ManifestWatch(OnceLock<Option<ManifestCheck>>);

impl ManifestWatch {
    /// The check, once `dump`'s index is done; `None` before, or when there is no manifest.
    pub fn get(&self, dump: &DumpFile) -> Option<&ManifestCheck> {
        if let Some(done) = self.0.get() {
            return done.as_ref();
        }
        if !dump.index().is_done() {
            return None;
        }
        self.0.get_or_init(|| check(dump)).as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(frames: u64, bytes: u64, complete: bool) -> Manifest {
        let mut m = Manifest::new(Framing::VarintDelimited, "t.T", None, serde_json::Value::Null);
        (m.frames, m.bytes, m.complete) = (frames, bytes, complete);
        m
    }

    fn facts(frames: u64, len: u64) -> FileFacts {
        FileFacts { len, frames: Some(frames), framing: Framing::VarintDelimited, type_known: true }
    }

    #[test]
    fn a_complete_manifest_must_match_and_an_incomplete_one_may_lag() {
        assert_eq!(compare(&manifest(200, 9000, true), &facts(200, 9000)), vec![]);
        let lie = compare(&manifest(5000, 9000, true), &facts(200, 9000));
        assert_eq!(
            lie.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
            vec!["the manifest says 5,000 frames, complete; the file holds 200"]
        );
        assert_eq!(
            compare(&manifest(150, 8000, false), &facts(200, 9000)),
            vec![],
            "a manifest being written lags"
        );
        assert_eq!(compare(&manifest(300, 9000, false), &facts(200, 9000)).len(), 1, "but never leads");
        assert_eq!(compare(&manifest(200, 9001, true), &facts(200, 9000)).len(), 1, "bytes too");
        let other_framing = FileFacts { framing: Framing::Grpc, ..facts(3, 9000) };
        assert_eq!(compare(&manifest(200, 9000, true), &other_framing), vec![], "frames of another framing");
        let unknown = FileFacts { type_known: false, ..facts(200, 9000) };
        assert!(matches!(compare(&manifest(200, 9000, true), &unknown)[..], [Finding::UnknownType(_)]));
    }

    #[test]
    fn what_cannot_be_used_is_named() {
        let ok = serde_json::to_vec(&manifest(1, 2, true)).unwrap();
        assert!(parse(&ok).is_ok());
        assert!(matches!(parse(b"{ not json"), Err(Finding::NotJson(_))));
        assert!(matches!(parse(b"[1, 2]"), Err(Finding::NotAManifest(_))));
        assert!(matches!(parse(b"{\"frames\": 3}"), Err(Finding::NotAManifest(_))));
        let mut future: serde_json::Value = serde_json::from_slice(&ok).unwrap();
        future["format_version"] = 7.into();
        let f = parse(future.to_string().as_bytes()).unwrap_err();
        assert_eq!(f, Finding::UnknownVersion("7".into()));
        assert!(f.to_string().contains("format version 7"), "{f}");
        assert_eq!(count(0), "0");
        assert_eq!(count(1_234_567), "1,234,567");
    }
}
