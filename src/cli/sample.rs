//! `walscope sample`: realistic practice files.

use crate::dump::SyncPolicy;
use crate::schema::SchemaSet;
use crate::sim::WalGenConfig;
use crate::sim::sample::{Corruption, write_milvus_dump_with, write_progress};
use anyhow::{Context, Result};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SampleKind {
    /// Varint-delimited DumpMessagesResponse frames with a manifest.
    MilvusDump,
    /// A SyncTool `<pid>.progress` file (varint-delimited AddSyncTaskRequest).
    DatasyncProgress,
    /// A DataCollector `task.progress` file (plain AddSyncTaskRequest).
    DatacollectorProgress,
}

/// What the generated WAL holds beyond the default stream (milvus-dump).
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct WalOptions {
    /// Write payloads longer than N bytes as chunks (`_ci`/`_ct`), as upstream Milvus splits
    /// a payload its WAL backend cannot take.
    #[arg(long, value_name = "N")]
    pub chunk_bytes: Option<usize>,
    /// Also upstream master's newer message types: row-level security (AlterRLSMetadata,
    /// DropRLSMetadata), snapshots, BatchUpdateManifest, RefreshExternalCollection.
    #[arg(long)]
    pub newer_types: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CorruptArg {
    Truncate,
    Garbage,
    HugeLength,
}

/// What to generate, as the command line says it.
pub struct SampleArgs {
    pub kind: SampleKind,
    pub messages: u64,
    pub seed: u64,
    pub corrupt: Option<CorruptArg>,
    pub sync_every: Option<u64>,
    pub wal: WalOptions,
}

pub fn sample(args: SampleArgs, out: &Path, force: bool) -> Result<()> {
    let SampleArgs { kind, messages, seed, corrupt, sync_every, wal } = args;
    crate::atomic::check_output(out, &[], force)?;
    if kind == SampleKind::MilvusDump {
        crate::atomic::check_output(&crate::dump::manifest_path(out), &[], force)?;
    }
    let set = SchemaSet::builtin();
    match kind {
        SampleKind::MilvusDump => {
            let corrupt = corrupt.map(|c| match c {
                CorruptArg::Truncate => Corruption::Truncate,
                CorruptArg::Garbage => Corruption::Garbage,
                CorruptArg::HugeLength => Corruption::HugeLength,
            });
            let mut policy = SyncPolicy::default();
            if let Some(n) = sync_every {
                policy.every_frames = n.max(1);
            }
            let cfg = WalGenConfig {
                seed,
                chunk_bytes: wal.chunk_bytes,
                newer_types: wal.newer_types,
                ..WalGenConfig::default()
            };
            let damage = write_milvus_dump_with(set.pool(), out, messages, cfg, policy, corrupt)
                .with_context(|| format!("cannot write {}", out.display()))?;
            note!("wrote {messages} WAL messages to {} (manifest beside it)", out.display());
            if let Some(d) = damage {
                note!("damaged on purpose: {} at byte {} ({} bytes)", d.what, d.offset, d.len);
            }
        }
        SampleKind::DatasyncProgress | SampleKind::DatacollectorProgress => {
            if corrupt.is_some() {
                anyhow::bail!("--corrupt applies to milvus-dump samples");
            }
            write_progress(set.pool(), out, seed, kind == SampleKind::DatasyncProgress)
                .with_context(|| format!("cannot write {}", out.display()))?;
            note!("wrote one AddSyncTaskRequest to {}", out.display());
        }
    }
    Ok(())
}
