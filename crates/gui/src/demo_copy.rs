//! The demo's own files: `--demo` with no file (and the start page's sample button) open a copy
//! of the sample Milvus dump written into a fresh private temp folder that lives as long as the
//! window, so an edit saved there costs nothing, and no file in the repository (or anywhere
//! else) is ever opened for editing by the demo.
//!
//! Must never: write outside its own folder, use a folder it did not create, or overwrite a
//! copy already there (the operator may have edited and saved it).

use prost_reflect::DescriptorPool;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The sample's name in the folder, and what it holds (as `assets/samples/milvus-100.dump`:
/// `walscope sample --kind milvus-dump --messages 100 --seed 1`).
pub const SAMPLE_NAME: &str = "milvus-100.dump";
#[cfg(feature = "demo")]
const SAMPLE_MESSAGES: u64 = 100;
#[cfg(feature = "demo")]
const SAMPLE_SEED: u64 = 1;

/// A private temp folder (0700), removed with everything in it when dropped.
#[derive(Debug)]
pub struct DemoFolder {
    path: PathBuf,
}

impl DemoFolder {
    /// Creates a new folder under the system's temp directory (never one that exists).
    pub fn create() -> io::Result<DemoFolder> {
        static MADE: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        for _ in 0..64 {
            let n = MADE.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("walscope-demo-{}-{stamp:x}-{n}", std::process::id()));
            let mut b = std::fs::DirBuilder::new();
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
            match b.create(&path) {
                Ok(()) => return Ok(DemoFolder { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot create a demo folder in {}: {e}", base.display()),
                    ));
                }
            }
        }
        Err(io::Error::new(io::ErrorKind::AlreadyExists, "no free demo folder name in the temp directory"))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `p` is in this folder.
    pub fn holds(&self, p: &Path) -> bool {
        p.starts_with(&self.path)
    }

    /// The sample dump (with its manifest) in this folder, written on first use; a copy that
    /// is there already, edited or not, is kept and returned.
    #[cfg(feature = "demo")]
    pub fn sample(&self, pool: &DescriptorPool) -> io::Result<PathBuf> {
        let path = self.path.join(SAMPLE_NAME);
        if std::fs::symlink_metadata(&path).is_err() {
            crate::sim::sample::write_milvus_dump(
                pool,
                &path,
                SAMPLE_MESSAGES,
                SAMPLE_SEED,
                crate::dump::SyncPolicy::default(),
                None,
            )?;
        }
        Ok(path)
    }

    /// Without the sample generator (the `demo` feature), there is no sample to write.
    #[cfg(not(feature = "demo"))]
    pub fn sample(&self, _pool: &DescriptorPool) -> io::Result<PathBuf> {
        Err(io::Error::other("this walscope was built without sample data (cargo feature `demo`)"))
    }
}

impl Drop for DemoFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
