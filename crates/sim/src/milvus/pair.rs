//! Two demo Milvus servers after a forced failover: the **old primary** (`by-dev-old`), which
//! never learnt of the failover (its replicate configuration still names itself as the source
//! of a topology to the new one) and whose WAL holds the tail to salvage; and the **new
//! primary** (`by-dev`), force-promoted and standalone, which holds a salvage checkpoint for
//! `by-dev-old` on every pchannel. Both serve the same synthetic WAL (same generator config), so
//! the checkpoints the new one hands out are positions in the old one's WAL. The pchannel names
//! are the WAL's own (`by-dev-rootcoord-dml_N`) on both, unless
//! [`MilvusPairConfig::distinct_pchannels`] names each cluster's after its id as upstream does.
//!
//! `walscope demo` and the app's demo start a pair with [`MilvusPair::start`]. Must never: listen
//! beyond the addresses given.

use super::config::{Faults, MilvusDemoConfig, StoreSeed};
use super::demo_wal::PCHANNELS;
use super::{DemoError, MilvusDemo, NEW_CLUSTER_ID, OLD_CLUSTER_ID};
use crate::WalGenConfig;
use std::net::SocketAddr;

#[derive(Debug, Clone)]
pub struct MilvusPairConfig {
    /// Where the old primary listens (port 0: any free port).
    pub old_addr: SocketAddr,
    /// Where the new primary listens.
    pub new_addr: SocketAddr,
    pub wal: WalGenConfig,
    /// Per pchannel, the checkpoint is the first plain message at or after this index.
    pub checkpoint_index: usize,
    /// How far the checkpoint's (last-confirmed) message id lags behind the last replicated
    /// message, in messages: a dump from it holds that many already-replicated messages.
    pub checkpoint_lag: usize,
    pub old_faults: Faults,
    pub new_faults: Faults,
    /// A whole force-failover rehearsal: both WALs in [`WalGenConfig::rehearsal`] mode, the new
    /// primary seeded with what it had at the promotion plus its own writes since
    /// ([`StoreSeed::NewPrimary`] with `own_writes`), so a salvage can be replayed into it.
    pub rehearsal: bool,
    /// Each cluster's pchannels named after its id, as upstream names them: the old primary's
    /// `by-dev-old-rootcoord-dml_N`, the new one's `by-dev-rootcoord-dml_N` (its checkpoints
    /// name the old primary's). Off: both use `by-dev-rootcoord-dml_N`.
    pub distinct_pchannels: bool,
}

impl Default for MilvusPairConfig {
    fn default() -> Self {
        let any = SocketAddr::from(([127, 0, 0, 1], 0));
        MilvusPairConfig {
            old_addr: any,
            new_addr: any,
            wal: WalGenConfig::default(),
            checkpoint_index: 5,
            checkpoint_lag: 3,
            old_faults: Faults::default(),
            new_faults: Faults::default(),
            rehearsal: false,
            distinct_pchannels: false,
        }
    }
}

/// A running pair; dropping it stops both.
pub struct MilvusPair {
    pub old: MilvusDemo,
    pub new: MilvusDemo,
}

impl MilvusPair {
    /// Starts the new primary, then the old one (whose configuration names the new one's
    /// address), on the current tokio runtime.
    pub async fn start(mut cfg: MilvusPairConfig) -> Result<MilvusPair, DemoError> {
        cfg.wal.rehearsal |= cfg.rehearsal;
        let store = if cfg.rehearsal { StoreSeed::NewPrimary { own_writes: true } } else { StoreSeed::Empty };
        let new = MilvusDemo::start(MilvusDemoConfig {
            addr: cfg.new_addr,
            wal: cfg.wal.clone(),
            store,
            cluster_id: NEW_CLUSTER_ID.into(),
            salvage_source: Some(OLD_CLUSTER_ID.into()),
            checkpoint_index: cfg.checkpoint_index,
            checkpoint_lag: cfg.checkpoint_lag,
            faults: cfg.new_faults.clone(),
            pchannels_named_by_cluster: cfg.distinct_pchannels,
            ..Default::default()
        })
        .await?;
        let old = MilvusDemo::start(MilvusDemoConfig {
            addr: cfg.old_addr,
            wal: cfg.wal.clone(),
            cluster_id: OLD_CLUSTER_ID.into(),
            salvage_source: None,
            replicate_targets: vec![(NEW_CLUSTER_ID.into(), format!("http://{}", new.addr()))],
            checkpoint_index: cfg.checkpoint_index,
            faults: cfg.old_faults.clone(),
            pchannels_named_by_cluster: cfg.distinct_pchannels,
            ..Default::default()
        })
        .await?;
        Ok(MilvusPair { old, new })
    }

    pub fn old_addr(&self) -> SocketAddr {
        self.old.addr()
    }

    pub fn new_addr(&self) -> SocketAddr {
        self.new.addr()
    }

    /// The pchannels both clusters have.
    pub fn pchannels() -> Vec<String> {
        PCHANNELS.iter().map(|(p, _)| p.to_string()).collect()
    }

    pub async fn shutdown(self) {
        self.old.shutdown().await;
        self.new.shutdown().await;
    }
}

impl MilvusDemo {
    /// [`MilvusPair::start`]: an old and a new primary after a forced failover.
    pub async fn start_pair(cfg: MilvusPairConfig) -> Result<MilvusPair, DemoError> {
        MilvusPair::start(cfg).await
    }
}
