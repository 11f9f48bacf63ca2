//! What of an open dump is still the file that was opened: a mapped file cut short underneath
//! its readers (see [`super::mapping`]) keeps the frames that end by its new end; the frames past
//! it read as errors, never as the zeros the mapping then holds.
//!
//! Owns: the words for a dump that changed, and which frames they cover. Must never: call a
//! frame intact that does not end by the file's known end, or ask the system per frame (the
//! per-frame check is two atomic loads; the `fstat` is for the points that matter).

use super::mapping::Shrink;
use super::reader::{DumpError, DumpFile, FrameLoc};
use super::source::Source;

impl DumpFile {
    /// `Ok` when frame `loc` ends where the file still holds what was opened, as far as is known
    /// without a system call. A reader calls it after reading the frame too: a read that met
    /// zeros past the file's new end is known by then.
    pub fn intact(&self, loc: &FrameLoc) -> Result<(), Shrink> {
        if loc.end() <= self.source.intact_len() {
            return Ok(());
        }
        Err(self.known_shrink().unwrap_or(Shrink { was: self.len(), now: self.source.intact_len() }))
    }

    /// How the file shrank since it was opened, as far as is known without asking the system
    /// (a read past its new end, or an earlier [`DumpFile::check_unchanged`]).
    pub fn known_shrink(&self) -> Option<Shrink> {
        self.source.mapping()?.known_shrink()
    }

    /// Whether the path now names another file than the one opened (a dump renamed over, or
    /// deleted): the open dump still reads the file as it was opened.
    pub fn replaced_on_disk(&self) -> bool {
        self.source.mapping().is_some_and(|m| m.replaced(&self.path))
    }

    /// The first frame that does not end by byte `end` (the frame count when all do).
    pub fn first_frame_past(&self, end: u64) -> usize {
        let mut n = self.index().frames_before(end);
        while let Some(loc) = n.checked_sub(1).and_then(|i| self.frame(i)) {
            if loc.end() <= end {
                break;
            }
            n -= 1;
        }
        n
    }

    /// The error for a file that shrank as `s` says.
    pub(super) fn changed(&self, s: Shrink) -> DumpError {
        DumpError::Changed {
            path: self.path.clone(),
            was: s.was,
            now: s.now,
            frame: self.first_frame_past(s.now),
        }
    }

    /// Whether the dump's bytes are a mapped file (which may change underneath).
    pub fn is_mapped(&self) -> bool {
        matches!(*self.source, Source::Mapped(_))
    }
}

#[cfg(all(test, unix))]
mod tests {
    //! Real multi-MiB dumps cut short on disk while they are open. On the code before
    //! `super::super::mapping`, each of these dies of SIGBUS at its first read past the cut.

    use crate::dump::view::{FrameDecoder, FrameStatus, FrameView};
    use crate::dump::{DumpFile, Framing, IndexCache, OpenOptions};
    use crate::schema::SchemaSet;
    use std::path::{Path, PathBuf};

    const T: &str = "milvus.proto.milvus.DumpMessagesResponse";

    /// A 5 MB Milvus dump, and where each of its frames starts and ends.
    fn sample(dir: &Path) -> (PathBuf, Vec<(u64, u64)>) {
        let path = dir.join("big.dump");
        let set = SchemaSet::builtin();
        crate::sim::sample::write_milvus_dump(set.pool(), &path, 2500, 5, Default::default(), None)
            .expect("sample dump");
        let d = open(&path, false, IndexCache::Off);
        d.wait_indexed();
        assert!(d.problems().is_empty() && d.len() > 4 << 20, "{} bytes", d.len());
        let frames = (0..d.frame_count()).map(|i| d.frame(i).map(|l| (l.offset, l.end())).expect("frame"));
        (path, frames.collect())
    }

    fn open(path: &Path, defer_index: bool, index_cache: IndexCache) -> DumpFile {
        let set = SchemaSet::builtin();
        let opts = OpenOptions {
            framing: Some(Framing::VarintDelimited),
            message_type: Some(set.message(T).expect("type")),
            index_cache,
            defer_index,
            ..OpenOptions::default()
        };
        DumpFile::open(path, opts).expect("open")
    }

    fn decoder() -> FrameDecoder {
        let set = SchemaSet::builtin();
        FrameDecoder::new(set.pool().clone(), Some(set.message(T).expect("type")), 16)
    }

    fn cut(path: &Path, len: u64) {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(len))
            .expect("cut the file");
    }

    /// Every frame of an indexed dump read after the file was cut in the middle of a frame: no
    /// crash; the frames that end by the cut read exactly as before; the frames past the page
    /// of the cut read as an error naming both sizes (their pages fault); the check then says
    /// in words from what size to what and from which frame; and once it has, every frame past
    /// the cut (the one it went through too) reads as that error.
    #[test]
    fn every_frame_of_a_dump_cut_after_indexing() {
        let dir = tempfile::tempdir().expect("dir");
        let (path, frames) = sample(dir.path());
        let was = frames.last().expect("frames").1;
        let d = open(&path, false, IndexCache::Off);
        d.wait_indexed();
        let dec = decoder();
        let before: Vec<FrameView> =
            (0..frames.len()).map(|i| dec.view_uncached(&d, i).expect("view")).collect();
        let k = frames.len() / 2;
        let at = frames[k].1 + 777;
        cut(&path, at);
        let shrank = format!("shrank from {was} to {at} bytes");
        let past_page = at.div_ceil(4096) * 4096 + 4096;
        for (i, &(offset, end)) in frames.iter().enumerate() {
            let v = dec.view_uncached(&d, i).expect("view");
            if end <= at {
                assert_eq!(v, before[i], "frame {i}, before the cut");
            } else if offset >= past_page {
                assert!(
                    matches!(&v.status, FrameStatus::Undecodable { reason, .. } if reason.contains(&shrank)),
                    "frame {i} past the cut: {v:?}"
                );
            }
        }
        let err = d.check_unchanged().expect_err("the cut is seen").to_string();
        for words in [&shrank, &format!("frames from {} on", k + 1), "changed while it was read"] {
            assert!(err.contains(words), "{words:?} in: {err}");
        }
        for (i, &(_, end)) in frames.iter().enumerate() {
            let v = dec.view_uncached(&d, i).expect("view");
            match end <= at {
                true => assert_eq!(v, before[i], "frame {i}, before the cut"),
                false => assert!(v.summary.contains(&shrank), "frame {i}: {v:?}"),
            }
        }
    }

    /// A dump cut while its index is built (walked alone, with its prefetching helper, and in
    /// small regions on every core, as a large dump is): the frames that end by the cut are
    /// listed, as a whole index lists them; none past it; a problem says in words that the file
    /// shrank, from what size to what, and from which frame nothing is listed.
    #[test]
    fn a_dump_cut_while_it_is_indexed_lists_the_frames_before_the_cut() {
        let dir = tempfile::tempdir().expect("dir");
        let (path, frames) = sample(dir.path());
        let was = frames.last().expect("frames").1;
        let whole = std::fs::read(&path).expect("read");
        for (k, region) in [(frames.len() / 3, None), (frames.len() * 2 / 3, Some(64 << 10))] {
            std::fs::write(&path, &whole).expect("write");
            let mut d = open(&path, true, IndexCache::Off);
            if let Some(r) = region {
                d = d.with_index_region(r);
            }
            let at = frames[k].1 + 5;
            cut(&path, at);
            d.wait_indexed();
            let listed = d.index().offsets(0..usize::MAX);
            let want: Vec<u64> = frames[..=k].iter().map(|f| f.0).collect();
            assert_eq!(listed, want, "regions of {region:?}: the frames that end by the cut");
            let problems = d.problems();
            let words = format!(
                "the file shrank from {was} to {at} bytes while it was being read; frames from {} on are not listed",
                k + 1
            );
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert!(problems[0].reason.contains(&words), "{problems:?}");
            assert_eq!((problems[0].offset, problems[0].len), (frames[k].1, was - frames[k].1));
            let err = d.check_unchanged().expect_err("the cut is seen").to_string();
            assert!(err.contains(&format!("shrank from {was} to {at} bytes")), "{err}");
        }
    }

    /// An index taken from the cache for a file cut after it was opened is cut the same way.
    #[test]
    fn a_cached_index_of_a_dump_cut_short_is_cut_too() {
        let dir = tempfile::tempdir().expect("dir");
        let (path, frames) = sample(dir.path());
        let cache = IndexCache::At { dir: dir.path().join("cache"), min_bytes: 0 };
        let first = open(&path, false, cache.clone());
        first.wait_indexed();
        assert_eq!(first.index().cache_use(), crate::dump::index::CacheUse::Stored);
        let k = frames.len() / 2;
        let d = open(&path, true, cache);
        cut(&path, frames[k].1);
        d.wait_indexed();
        assert_eq!(d.index().cache_use(), crate::dump::index::CacheUse::Loaded);
        assert_eq!(d.frame_count(), k + 1);
        let problems = d.problems();
        assert!(
            problems.iter().any(|p| p.reason.contains(&format!("frames from {} on are not listed", k + 1)))
        );
    }
}
