//! One open dump: the file, its decoder and row loader, the filter, the selection and the
//! decoded detail of the selected message.

use super::detail::FrameDetail;
use crate::dump::background::{FilterScan, RowLoader, Wake};
use crate::dump::filter::FrameFilter;
use crate::dump::view::FrameDecoder;
use crate::dump::{DumpFile, OpenOptions};
use crate::schema::SchemaSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct FileTab {
    pub path: PathBuf,
    pub dump: Arc<DumpFile>,
    pub decoder: Arc<FrameDecoder>,
    pub rows: RowLoader,
    /// Why this type was chosen (manifest, file name, detection).
    pub why_type: String,
    pub filter_text: String,
    pub filter_error: Option<String>,
    pub scan: Option<FilterScan>,
    pub selected: Option<usize>,
    pub detail: Option<FrameDetail>,
    wake: Wake,
}

impl FileTab {
    /// Opens a dump. Reads at most the 1 MiB detection sample; meant for a worker thread.
    pub fn open(path: &Path, set: &SchemaSet, wake: Wake) -> Result<FileTab, String> {
        let head = read_head(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let (desc, framing, why_type) = crate::dump::auto::choose(path, &head, set);
        let opts = OpenOptions { framing, message_type: desc.clone(), ..OpenOptions::default() };
        let dump = Arc::new(DumpFile::open(path, opts).map_err(|e| e.to_string())?);
        let decoder = Arc::new(FrameDecoder::new(set.pool().clone(), desc, 8192));
        let rows = RowLoader::spawn(dump.clone(), decoder.clone(), wake.clone());
        Ok(FileTab {
            path: path.to_path_buf(),
            dump,
            decoder,
            rows,
            why_type,
            filter_text: String::new(),
            filter_error: None,
            scan: None,
            selected: None,
            detail: None,
            wake,
        })
    }

    pub fn title(&self) -> String {
        self.path
            .file_name()
            .map_or_else(|| self.path.display().to_string(), |n| n.to_string_lossy().into_owned())
    }

    /// Rows shown: every frame, or the filter's matches so far.
    pub fn row_count(&self) -> usize {
        match &self.scan {
            Some(s) => s.match_count(),
            None => self.dump.frame_count(),
        }
    }

    /// Frame numbers of shown rows `range`.
    pub fn frames(&self, range: std::ops::Range<usize>) -> Vec<usize> {
        match &self.scan {
            Some(s) => s.matches(range),
            None => {
                let end = range.end.min(self.dump.frame_count());
                (range.start.min(end)..end).collect()
            }
        }
    }

    /// Applies the filter text: empty clears it; otherwise a background scan starts.
    pub fn apply_filter(&mut self) {
        self.scan = None;
        self.filter_error = None;
        if self.filter_text.trim().is_empty() {
            return;
        }
        match FrameFilter::parse(&self.filter_text) {
            Ok(f) => {
                self.scan =
                    Some(FilterScan::spawn(self.dump.clone(), self.decoder.clone(), f, self.wake.clone()))
            }
            Err(e) => self.filter_error = Some(e),
        }
    }

    /// Selects frame `i` and decodes it (one message: allowed on the UI thread).
    pub fn select(&mut self, i: usize) {
        self.selected = Some(i);
        self.detail = FrameDetail::build(&self.dump, &self.decoder, i);
    }
}

fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut head = vec![0; 1 << 20];
    let n = f.read(&mut head)?;
    head.truncate(n);
    Ok(head)
}
