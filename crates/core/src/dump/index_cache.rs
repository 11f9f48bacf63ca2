//! The persisted frame index: once a large dump is indexed, its frame offsets and damaged
//! ranges are written to the cache directory, and the next open of the same, unchanged file
//! reads them instead of scanning (a million rows at once).
//!
//! Owns: the cache file format and the check that it still describes the file: size,
//! modification time, framing, message type, and FNV-1a checksums of the file's first and last
//! 64 KiB. Must never: write beside the user's files, serve an index for a file that changed
//! (a dump still being written changes size, so it is always scanned afresh), write or read a
//! cache file larger than [`MAX_CACHE_BYTES`], or fail an open because the cache is missing,
//! stale, unreadable, unwritable or too large: it is only a cache.

use super::framing::Framing;
use super::index::Problem;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Where and when indexes are kept.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum IndexCache {
    /// Dumps of [`AUTO_MIN_BYTES`] or more, in `WALSCOPE_CACHE_DIR` (else the platform cache
    /// directory)`/index`; none when `WALSCOPE_INDEX_CACHE=off`.
    #[default]
    Auto,
    Off,
    /// Dumps of `min_bytes` or more, in `dir`.
    At {
        dir: PathBuf,
        min_bytes: u64,
    },
}

/// Below this, scanning is as fast as reading a cache file.
pub const AUTO_MIN_BYTES: u64 = 64 << 20;
/// The largest index file written to (or read from) the cache: 256 MiB, about 33 million
/// frames. A larger index is scanned afresh on each open rather than filling the cache directory.
pub const MAX_CACHE_BYTES: u64 = 256 << 20;
const MAGIC: &[u8; 8] = b"WSIDX\x00\x01\n";
const EDGE: usize = 64 << 10;

/// What identifies one state of one file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileKey {
    cache_file: PathBuf,
    header: Vec<u8>,
}

impl IndexCache {
    fn place(&self) -> Option<(PathBuf, u64)> {
        match self {
            IndexCache::Off => None,
            IndexCache::At { dir, min_bytes } => Some((dir.clone(), *min_bytes)),
            IndexCache::Auto => {
                if std::env::var_os("WALSCOPE_INDEX_CACHE").is_some_and(|v| v == "off") {
                    return None;
                }
                let base = std::env::var_os("WALSCOPE_CACHE_DIR")
                    .map(PathBuf::from)
                    .or_else(|| dirs::cache_dir().map(|d| d.join("walscope")))?;
                Some((base.join("index"), AUTO_MIN_BYTES))
            }
        }
    }

    /// The key of `path` as it is now with these `bytes` (the mapped file), or None when this
    /// file is not cached (too small, unknown place, no metadata).
    pub fn key(&self, path: &Path, bytes: &[u8], framing: Framing, type_name: &str) -> Option<FileKey> {
        let (dir, min_bytes) = self.place()?;
        if (bytes.len() as u64) < min_bytes {
            return None;
        }
        let meta = std::fs::metadata(path).ok()?;
        let mtime = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_nanos() as u64;
        let absolute = std::fs::canonicalize(path).ok()?;
        let head = &bytes[..bytes.len().min(EDGE)];
        let tail = &bytes[bytes.len().saturating_sub(EDGE)..];
        let mut header = MAGIC.to_vec();
        for v in [meta.len(), bytes.len() as u64, mtime, fnv1a(head), fnv1a(tail)] {
            header.extend_from_slice(&v.to_le_bytes());
        }
        let text = format!("{framing}\n{type_name}\n{}\n", absolute.display());
        header.extend_from_slice(&(text.len() as u64).to_le_bytes());
        header.extend_from_slice(text.as_bytes());
        let name = format!("{:016x}.idx", fnv1a(absolute.to_string_lossy().as_bytes()));
        Some(FileKey { cache_file: dir.join(name), header })
    }
}

/// Offsets and damaged ranges from the cache, if it holds this exact file state.
pub fn load(key: &FileKey) -> Option<(Vec<u64>, Vec<Problem>)> {
    load_bounded(key, MAX_CACHE_BYTES)
}

fn load_bounded(key: &FileKey, max_bytes: u64) -> Option<(Vec<u64>, Vec<Problem>)> {
    // Only a regular file, and not one larger than an index may be: neither is read whole.
    let meta = std::fs::metadata(&key.cache_file).ok()?;
    if !meta.is_file() || meta.len() > max_bytes {
        return None;
    }
    let data = std::fs::read(&key.cache_file).ok()?;
    let rest = data.strip_prefix(key.header.as_slice())?;
    let mut r = Reader(rest);
    let problems = (0..r.u64()?)
        .map(|_| {
            let (offset, len, truncated) = (r.u64()?, r.u64()?, r.u64()? != 0);
            let n = usize::try_from(r.u64()?).ok()?;
            let reason = String::from_utf8(r.take(n)?.to_vec()).ok()?;
            Some(Problem { offset, len, truncated, reason })
        })
        .collect::<Option<Vec<_>>>()?;
    let count = usize::try_from(r.u64()?).ok()?;
    let raw = r.take(count.checked_mul(8)?)?;
    let offsets: Vec<u64> =
        raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect();
    // A cache file cut short or padded is not this index.
    (r.0.is_empty() && offsets.windows(2).all(|w| w[0] < w[1])).then_some((offsets, problems))
}

/// Writes the index for `key` (atomically; errors are ignored: it is only a cache), unless it
/// would be larger than [`MAX_CACHE_BYTES`]. Whether it was written (or tried).
pub fn store(key: &FileKey, offsets: &[u64], problems: &[Problem]) -> bool {
    store_bounded(key, offsets, problems, MAX_CACHE_BYTES)
}

fn store_bounded(key: &FileKey, offsets: &[u64], problems: &[Problem], max_bytes: u64) -> bool {
    let size = key.header.len() as u64
        + 16
        + offsets.len() as u64 * 8
        + problems.iter().map(|p| 32 + p.reason.len() as u64).sum::<u64>();
    if size > max_bytes {
        return false;
    }
    let mut out = Vec::with_capacity(size as usize);
    out.extend_from_slice(&key.header);
    out.extend_from_slice(&(problems.len() as u64).to_le_bytes());
    for p in problems {
        for v in [p.offset, p.len, u64::from(p.truncated), p.reason.len() as u64] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(p.reason.as_bytes());
    }
    out.extend_from_slice(&(offsets.len() as u64).to_le_bytes());
    for o in offsets {
        out.extend_from_slice(&o.to_le_bytes());
    }
    if let Some(dir) = key.cache_file.parent()
        && std::fs::create_dir_all(dir).is_ok()
    {
        let _ = crate::atomic::atomic_write(&key.cache_file, &out, false);
    }
    true
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index larger than the bound is neither written nor, when one is there, read.
    #[test]
    fn an_index_over_the_bound_is_not_written_or_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("d.dump");
        let bytes = vec![1u8; 1000];
        std::fs::write(&file, &bytes).unwrap();
        let cache = IndexCache::At { dir: dir.path().join("cache"), min_bytes: 0 };
        let key = cache.key(&file, &bytes, Framing::VarintDelimited, "t").unwrap();
        let offsets: Vec<u64> = (0..1000).collect();
        let bound = key.header.len() as u64 + 16 + 8 * 1000;
        assert!(!store_bounded(&key, &offsets, &[], bound - 1), "one byte over the bound");
        assert!(!key.cache_file.exists(), "nothing is written over the bound");
        assert!(store_bounded(&key, &offsets, &[], bound));
        assert_eq!(std::fs::metadata(&key.cache_file).unwrap().len(), bound, "the size is counted exactly");
        assert_eq!(load_bounded(&key, bound).map(|(o, _)| o.len()), Some(1000));
        assert_eq!(load_bounded(&key, bound - 1), None, "a cache file over the bound is not read");
    }
}
