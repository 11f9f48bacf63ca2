//! The bytes of an opened dump: a read-only memory map of the file, or, for base64/hex text
//! dumps, the decoded bytes. Only the decoded form of a text file is ever held in memory. A
//! mapped file that is cut short while it is read is absorbed and reported: see
//! [`super::mapping`].

use super::mapping::{Mapping, Shrink};
use base64::Engine;
use std::fs::File;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextEncoding {
    Raw,
    Base64,
    Hex,
}

impl TextEncoding {
    pub fn name(self) -> &'static str {
        match self {
            TextEncoding::Raw => "raw",
            TextEncoding::Base64 => "base64",
            TextEncoding::Hex => "hex",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        [TextEncoding::Raw, TextEncoding::Base64, TextEncoding::Hex].into_iter().find(|e| e.name() == s)
    }
}

pub enum Source {
    Mapped(Mapping),
    Owned(Vec<u8>),
}

impl Source {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Source::Mapped(m) => m.bytes(),
            Source::Owned(v) => v,
        }
    }

    pub fn is_mapped(&self) -> bool {
        matches!(self, Source::Mapped(_))
    }

    /// The mapping, for what only a file can tell (its size now, whether it was replaced).
    pub fn mapping(&self) -> Option<&Mapping> {
        match self {
            Source::Mapped(m) => Some(m),
            Source::Owned(_) => None,
        }
    }

    /// The first bytes that still hold what was opened, as far as is known without a system
    /// call (all of them, but for a mapped file cut short: see [`Mapping::intact_len`]).
    pub fn intact_len(&self) -> u64 {
        match self {
            Source::Mapped(m) => m.intact_len(),
            Source::Owned(v) => v.len() as u64,
        }
    }

    /// How a mapped file shrank since it was opened (one `fstat`); bytes in memory never do.
    pub fn check(&self) -> Result<(), Shrink> {
        self.mapping().map_or(Ok(()), Mapping::check)
    }

    /// What the user named: a regular file mapped ([`Source::map`]); standard input (`-`), a
    /// FIFO, a process substitution or a device read once into memory, up to
    /// [`crate::input::STREAM_LIMIT`] bytes (see [`crate::input`]).
    pub fn open(path: &Path) -> Result<Source, crate::input::InputError> {
        match crate::input::kind(path)? {
            crate::input::InputKind::File => Source::map(path)
                .map_err(|source| crate::input::InputError::Io { path: path.to_path_buf(), source }),
            crate::input::InputKind::Stream(_) => crate::input::read_all(path).map(Source::Owned),
        }
    }

    /// The first MiB: what detection and the choice of a type look at.
    pub fn head(&self) -> &[u8] {
        let b = self.bytes();
        &b[..b.len().min(1 << 20)]
    }

    /// Maps `path` read-only. An empty file cannot be mapped and becomes an empty buffer.
    pub fn map(path: &Path) -> std::io::Result<Source> {
        let file = File::open(path)?;
        if file.metadata()?.len() == 0 {
            return Ok(Source::Owned(Vec::new()));
        }
        // A file cut short while mapped reads as zeros past its new end, and says so.
        let map = Mapping::map(file)?;
        map.advise_sequential();
        Ok(Source::Mapped(map))
    }
}

/// Guesses whether the first bytes are hex or base64 text rather than binary.
pub fn sniff_text(head: &[u8]) -> TextEncoding {
    let sample = &head[..head.len().min(4096)];
    let meaningful: Vec<u8> = sample.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
    if meaningful.len() < 8 {
        return TextEncoding::Raw;
    }
    if meaningful.iter().all(|b| b.is_ascii_hexdigit()) {
        return TextEncoding::Hex;
    }
    let b64 = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=');
    if meaningful.iter().all(b64) {
        return TextEncoding::Base64;
    }
    TextEncoding::Raw
}

/// Decodes hex or base64 text, line by line (so one encoded message per line also works).
/// Errors name the line.
pub fn decode_text(text: &[u8], encoding: TextEncoding) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    match encoding {
        TextEncoding::Raw => out.extend_from_slice(text),
        TextEncoding::Hex => {
            let s = String::from_utf8_lossy(text);
            out = crate::codec::value::decode_hex(&s).map_err(|e| format!("not hex text: {e}"))?;
        }
        TextEncoding::Base64 => {
            for (i, line) in text.split(|b| *b == b'\n').enumerate() {
                let line: Vec<u8> = line.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
                if line.is_empty() {
                    continue;
                }
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(&line)
                    .map_err(|e| format!("line {}: not base64: {e}", i + 1))?;
                out.extend_from_slice(&bytes);
            }
        }
    }
    Ok(out)
}
