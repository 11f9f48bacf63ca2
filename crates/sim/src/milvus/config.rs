//! The demo Milvus's settings: where it listens, its WAL, version and cluster id, the salvage
//! checkpoints it holds, its replicate configuration, auth/TLS/reflection, and the fault
//! switches ([`Faults`]) tests and the app's demo turn on, and what its collections hold at start
//! ([`StoreSeed`]).
//!
//! Must never: hold a default that makes the demo reach beyond 127.0.0.1.

use super::demo_wal::PCHANNELS;
pub use super::seed::{OwnWrite, StoreSeed};
use super::{NEW_CLUSTER_ID, OLD_CLUSTER_ID};
use crate::WalGenConfig;
use crate::net::grpc::Auth;
use std::net::SocketAddr;
use std::time::Duration;
use tonic::Code;

/// Fault switches for tests and the app's demo.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// A server from before the salvage API: GetReplicateInfo and DumpMessages answer
    /// UNIMPLEMENTED (pair it with an old `version`, see [`Faults::old_server`]).
    pub no_salvage_api: bool,
    /// GetVersion answers this instead of the config's version.
    pub version: Option<String>,
    /// DumpMessages needs the Global `PrivilegeUpdateReplicateConfiguration`, which only this
    /// `authorization` has: every other user gets PERMISSION_DENIED and a caller without
    /// credentials UNAUTHENTICATED (as servers since upstream PR #52608 do).
    pub dump_privilege: Option<Auth>,
    /// As servers before 2.6.20: each transaction is one `Txn` (999) frame with an empty body.
    pub opaque_txn: bool,
    /// As servers before 2.6.20: `include_start_message` is unknown, every stream starts after
    /// the id.
    pub ignore_inclusive_start: bool,
    /// The first DumpMessages stream (only the first) fails with UNAVAILABLE after N messages.
    pub drop_after: Option<u64>,
    /// Every DumpMessages stream stops sending after N messages but stays open.
    pub stall_after: Option<u64>,
    /// Limits `stall_after` to the streams of this pchannel (the others run to their end), so a
    /// test can hold one dump mid-stream however fast the machine is.
    pub stall_only: Option<String>,
    /// Calls of this method (e.g. "GetReplicateInfo") fail with this status.
    pub fail: Option<(String, Code, String)>,
    /// GetReplicateInfo answers only after this long (the 2.6.9–2.6.18 hang).
    pub replicate_info_delay: Option<Duration>,
    /// Calls of this method (e.g. "GetVersion") answer with these bytes instead of the reply: a
    /// malformed answer (OK status, a body that is not the response type).
    pub garbage_reply: Option<(String, Vec<u8>)>,
}

impl Faults {
    /// A Milvus 2.5.4: no GetReplicateInfo salvage checkpoint, no DumpMessages.
    pub fn old_server() -> Faults {
        Faults { no_salvage_api: true, version: Some("v2.5.4".into()), ..Default::default() }
    }

    /// A Milvus 2.6.19: the salvage API, but transactions dumped as opaque `Txn` frames and no
    /// inclusive start.
    pub fn before_txn_fix() -> Faults {
        Faults {
            opaque_txn: true,
            ignore_inclusive_start: true,
            version: Some("v2.6.19".into()),
            ..Default::default()
        }
    }
}

#[derive(Debug, Clone)]
pub struct MilvusDemoConfig {
    /// Where to listen; port 0 picks a free port.
    pub addr: SocketAddr,
    pub wal: WalGenConfig,
    pub version: String,
    /// This cluster's id (GetReplicateConfiguration names it).
    pub cluster_id: String,
    /// The cluster this one was force-promoted from: GetReplicateInfo has a salvage checkpoint
    /// for it on every pchannel. None: no salvage checkpoint for anyone (an old primary).
    pub salvage_source: Option<String>,
    /// Clusters this one still replicates to (`cluster_id`, `uri`): listed in its replicate
    /// configuration with a topology edge from this cluster (an old primary that never learnt
    /// of the failover).
    pub replicate_targets: Vec<(String, String)>,
    /// Per pchannel, the salvage checkpoint is the first plain message at or after this index.
    pub checkpoint_index: usize,
    /// The checkpoint's message id is that of the message this many entries before the last
    /// replicated one (a last-confirmed id that lags), so a dump from it also holds messages the
    /// new primary already has. 0: the last replicated message's own id.
    pub checkpoint_lag: usize,
    /// When set, unary calls need this `authorization` (as Milvus, streams are not checked).
    pub auth: Option<Auth>,
    /// PEM certificate chain and key: serve TLS.
    pub tls: Option<(Vec<u8>, Vec<u8>)>,
    /// With `tls`: a PEM CA that client certificates must chain to (mutual TLS); clients
    /// without one are refused in the handshake.
    pub client_ca: Option<Vec<u8>>,
    /// Serve gRPC reflection (v1 and v1alpha) with the built-in schemas.
    pub reflection: bool,
    /// With `reflection`: serve only v1alpha, as servers built before grpc.reflection.v1 do.
    pub reflection_v1alpha_only: bool,
    /// With `reflection`: serve this encoded FileDescriptorSet instead of the built-in schemas,
    /// as a real server serves the upstream milvus-proto files it was built from.
    pub reflection_schemas: Option<Vec<u8>>,
    /// For soak runs: each pchannel's WAL is its first N messages over and over (ids and
    /// timeticks repeat), so a stream of any length costs the demo N messages of memory.
    pub wal_cycle: Option<usize>,
    /// What the in-memory collections hold at start: nothing, or what the new primary had at
    /// its promotion (the WAL up to each pchannel's salvage checkpoint), optionally with its
    /// own writes since ([`StoreSeed`]).
    pub store: StoreSeed,
    pub faults: Faults,
    /// Name this cluster's pchannels after its cluster id (`<cluster_id>-rootcoord-dml_N`), as
    /// upstream does: the cluster id is `msgChannel.chanNamePrefix.cluster`, the prefix of every
    /// channel name, so the two clusters of a replicate pair never share pchannel names. Off:
    /// the WAL generator's `by-dev-rootcoord-dml_N` whatever the id (one demo playing both roles
    /// of a salvage needs that).
    pub pchannels_named_by_cluster: bool,
}

impl Default for MilvusDemoConfig {
    fn default() -> Self {
        MilvusDemoConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            wal: WalGenConfig::default(),
            version: "v2.6.20-walscope-demo".into(),
            cluster_id: NEW_CLUSTER_ID.into(),
            salvage_source: Some(OLD_CLUSTER_ID.into()),
            replicate_targets: Vec::new(),
            checkpoint_index: 5,
            checkpoint_lag: 0,
            auth: None,
            tls: None,
            client_ca: None,
            reflection: false,
            reflection_v1alpha_only: false,
            reflection_schemas: None,
            wal_cycle: None,
            store: StoreSeed::Empty,
            faults: Faults::default(),
            pchannels_named_by_cluster: false,
        }
    }
}

/// The prefix of the WAL generator's pchannel names.
const GENERATED_PREFIX: &str = "by-dev-";

impl MilvusDemoConfig {
    /// What `cluster` calls the generator's pchannel `generated`.
    pub fn pchannel_of(&self, cluster: &str, generated: &str) -> String {
        match generated.strip_prefix(GENERATED_PREFIX) {
            Some(rest) if self.pchannels_named_by_cluster => format!("{cluster}-{rest}"),
            _ => generated.to_string(),
        }
    }

    /// This cluster's pchannels, in the generator's order.
    pub fn own_pchannels(&self) -> Vec<String> {
        PCHANNELS.iter().map(|(p, _)| self.pchannel_of(&self.cluster_id, p)).collect()
    }

    /// The generator's name of this cluster's pchannel `own`; None for a pchannel it does not
    /// have.
    pub fn generated_pchannel(&self, own: &str) -> Option<&'static str> {
        PCHANNELS.iter().map(|(p, _)| *p).find(|p| self.pchannel_of(&self.cluster_id, p) == own)
    }
}
