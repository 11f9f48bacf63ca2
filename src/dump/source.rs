//! The bytes of an opened dump: a read-only memory map of the file, or, for base64/hex text
//! dumps, the decoded bytes. Only the decoded form of a text file is ever held in memory.

use base64::Engine;
use memmap2::Mmap;
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
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Source {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Source::Mapped(m) => m,
            Source::Owned(v) => v,
        }
    }

    pub fn is_mapped(&self) -> bool {
        matches!(self, Source::Mapped(_))
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
        // SAFETY: the map is read-only; a file truncated by another process while mapped could
        // fault on access, which is the documented risk of every mmap reader. Dumps being
        // written are only ever appended to.
        let map = unsafe { Mmap::map(&file)? };
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
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
