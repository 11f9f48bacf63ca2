//! Salvage checkpoints (reference §1.4, §8): GetReplicateInfo on the **new** primary, once per
//! pchannel, with `source_cluster_id` = the old primary's cluster id; the answer's
//! `salvage_checkpoint` names the old primary's pchannel to dump, the message id to start at
//! (the last *confirmed* id of the last replicated message, decoded per WAL backend) and the
//! timetick of the last replicated message. Also the old primary's pchannels from
//! GetReplicateConfiguration, and the server's version from GetVersion.
//!
//! When there is no checkpoint, this module says why in words: a wrong cluster id (what the
//! clusters' replicate configurations call themselves), a pair that was not force-failed-over
//! (the new primary still a secondary), a pchannel the new primary does not have, a server too
//! old (GetVersion's answer; UNIMPLEMENTED means it predates the API), or the 2.6.9–2.6.18 hang.
//! Must never: hand out a checkpoint whose message id it could not validate (a bad id could
//! crash older servers, milvus#50341), or call anything but these read-only methods.

pub use super::pchannels::pchannel_to_ask;
use crate::net::grpc::{GrpcSettings, GrpcTransport};
use crate::net::profile::ConnectionProfile;
use crate::net::{CallOptions, ConnectOptions, NetError, ProfileMetadata, Transport};
use crate::schema::SchemaSet;
use crate::time::format_timetick;
use crate::wal::replicate_info::{ASK_THE_NEW_PRIMARY, PchannelRefusal};
use crate::wal::versions::{MilvusVersion, SALVAGE_API_SINCE};
use crate::wal::{WalBackend, render_message_id};
use prost_reflect::{DynamicMessage, MethodDescriptor, Value};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::time::Duration;

/// One salvage checkpoint, decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The source (old primary) cluster id.
    pub cluster_id: String,
    /// The pchannel asked for (GetReplicateInfo's `target_pchannel`).
    pub target_pchannel: String,
    /// The old primary's pchannel to dump (the checkpoint's `pchannel`, else the one asked).
    pub pchannel: String,
    /// `MessageID.id` as the server sent it.
    pub message_id: String,
    /// `MessageID.WAL_name` (the WALName number).
    pub wal: i32,
    /// Milvus's own rendering, e.g. `RocksMQ 1007`, `Pulsar 100/7/-1`.
    pub message_id_display: String,
    /// Timetick of the last replicated message; frames at or below it are already on the new
    /// primary.
    pub time_tick: u64,
    /// That timetick as UTC wall time.
    pub time_utc: String,
}

impl Checkpoint {
    pub fn backend(&self) -> WalBackend {
        WalBackend::from_number(self.wal)
    }

    /// The DumpMessagesRequest (as JSON) for the old primary: from the checkpoint's id,
    /// inclusively; with `skip_replicated`, only timeticks above the checkpoint's (CDC's rule,
    /// judged per transaction by its commit); without, everything from the id on.
    pub fn dump_request(&self, end_timetick: u64, skip_replicated: bool) -> serde_json::Value {
        let start = if skip_replicated { self.time_tick + 1 } else { 0 };
        json!({
            "pchannel": self.pchannel,
            "start_message_id": {"id": self.message_id, "WAL_name": self.wal},
            "start_timetick": start.to_string(),
            "end_timetick": end_timetick.to_string(),
            "include_start_message": true,
        })
    }
}

/// Why a pchannel has no usable checkpoint.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CheckpointProblem {
    #[error(
        "{endpoint} has no salvage checkpoint for source cluster \"{cluster}\" on pchannel {pchannel}: {why}"
    )]
    Missing { endpoint: String, cluster: String, pchannel: String, why: String },
    #[error(
        "{endpoint} ({version}) predates the salvage API: GetReplicateInfo answered UNIMPLEMENTED; \
         salvage checkpoints exist from Milvus {SALVAGE_API_SINCE} on: upgrade the new primary"
    )]
    TooOld { endpoint: String, version: String },
    #[error("GetReplicateInfo on {endpoint} gave no answer in time (DEADLINE_EXCEEDED){hint}")]
    Timeout { endpoint: String, hint: String },
    #[error(
        "the salvage checkpoint of pchannel {pchannel} has a message id walscope will not send: {reason}"
    )]
    BadId { pchannel: String, reason: String },
    #[error("GetReplicateInfo on {endpoint} for pchannel {pchannel}: {source}")]
    Net {
        endpoint: String,
        pchannel: String,
        #[source]
        source: NetError,
    },
}

/// The answer for one pchannel.
#[derive(Debug, Clone)]
pub struct CheckpointReport {
    pub pchannel: String,
    pub result: Result<Checkpoint, CheckpointProblem>,
}

/// Every pchannel's answer, and the new primary's version when it told it.
#[derive(Debug, Clone)]
pub struct Checkpoints {
    pub new_primary_version: Option<String>,
    pub reports: Vec<CheckpointReport>,
}

/// One cluster of a replicate configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterInfo {
    pub cluster_id: String,
    pub uri: String,
    pub pchannels: Vec<String>,
}

/// GetReplicateConfiguration's answer: clusters and (source, target) topology edges.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicateConfig {
    pub clusters: Vec<ClusterInfo>,
    pub topology: Vec<(String, String)>,
}

impl ReplicateConfig {
    pub fn cluster(&self, id: &str) -> Option<&ClusterInfo> {
        self.clusters.iter().find(|c| c.cluster_id == id)
    }

    /// The cluster that answered: the one whose URI names `endpoint`'s host:port, else the
    /// only source of the topology, else the only cluster.
    pub fn own_cluster(&self, endpoint: &str) -> Option<&ClusterInfo> {
        let hp = endpoint.split_once("://").map_or(endpoint, |(_, r)| r).trim_end_matches('/');
        if let Some(c) = self.clusters.iter().find(|c| !hp.is_empty() && c.uri.contains(hp)) {
            return Some(c);
        }
        let mut sources: Vec<&str> = self.topology.iter().map(|(s, _)| s.as_str()).collect();
        sources.dedup();
        match (sources.as_slice(), self.clusters.as_slice()) {
            ([one], _) => self.cluster(one),
            (_, [only]) => Some(only),
            _ => None,
        }
    }
}

/// The gRPC settings of a profile for a salvage's Milvus calls, which are made without the
/// profile at hand: its database and extra headers go on the connection.
pub(super) fn settings(
    profile: &ConnectionProfile,
    connect: &ConnectOptions,
) -> Result<GrpcSettings, NetError> {
    crate::net::grpc_settings(profile, &ConnectOptions { metadata: ProfileMetadata::Connection, ..*connect })
}

/// The read-only Milvus calls a salvage makes, on one connection.
pub(crate) struct Milvus {
    pub(crate) transport: GrpcTransport,
    timeout: Duration,
    info: MethodDescriptor,
    version: MethodDescriptor,
    config: MethodDescriptor,
}

fn method(name: &str) -> Result<MethodDescriptor, NetError> {
    let set = SchemaSet::shared_builtin();
    set.pool()
        .get_service_by_name("milvus.proto.milvus.MilvusService")
        .and_then(|s| s.methods().find(|m| m.name() == name))
        .ok_or_else(|| NetError::Unsupported(format!("the built-in schemas lack MilvusService/{name}")))
}

fn text(m: &DynamicMessage, f: &str) -> String {
    m.get_field_by_name(f).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

fn messages(m: &DynamicMessage, f: &str) -> Vec<DynamicMessage> {
    match m.get_field_by_name(f).as_deref() {
        Some(Value::List(l)) => l.iter().filter_map(|v| v.as_message().cloned()).collect(),
        _ => Vec::new(),
    }
}

impl Milvus {
    pub(crate) async fn connect(settings: &GrpcSettings, timeout: Duration) -> Result<Milvus, NetError> {
        Ok(Milvus {
            transport: GrpcTransport::connect(settings).await?,
            timeout,
            info: method("GetReplicateInfo")?,
            version: method("GetVersion")?,
            config: method("GetReplicateConfiguration")?,
        })
    }

    pub(crate) fn endpoint(&self) -> &str {
        self.transport.endpoint()
    }

    async fn unary(&self, m: &MethodDescriptor, req: serde_json::Value) -> Result<DynamicMessage, NetError> {
        let request = DynamicMessage::deserialize(m.input(), req).map_err(|e| NetError::Request {
            method: m.full_name().to_string(),
            type_name: m.input().full_name().to_string(),
            reason: e.to_string(),
        })?;
        let opts = CallOptions { timeout: Some(self.timeout), ..Default::default() };
        Ok(self.transport.call_unary(m, &request, &opts).await?.message)
    }

    /// GetVersion's text, or None when the server does not say.
    pub(crate) async fn version(&self) -> Option<String> {
        let reply = self.unary(&self.version, json!({})).await.ok()?;
        Some(text(&reply, "version")).filter(|v| !v.is_empty())
    }

    pub(crate) async fn replicate_configuration(&self) -> Result<ReplicateConfig, NetError> {
        let reply = self.unary(&self.config, json!({})).await?;
        if let Some(e) = crate::net::body::body_error(&reply) {
            return Err(NetError::Status {
                method: self.config.full_name().to_string(),
                code: "STATUS".into(),
                numeric: 0,
                message: e,
                hint: String::new(),
            });
        }
        let Some(conf) = reply.get_field_by_name("configuration").and_then(|v| v.as_message().cloned())
        else {
            return Ok(ReplicateConfig::default());
        };
        let clusters = messages(&conf, "clusters")
            .iter()
            .map(|c| ClusterInfo {
                cluster_id: text(c, "cluster_id"),
                uri: c
                    .get_field_by_name("connection_param")
                    .and_then(|p| p.as_message().map(|p| text(p, "uri")))
                    .unwrap_or_default(),
                pchannels: match c.get_field_by_name("pchannels").as_deref() {
                    Some(Value::List(l)) => l.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
                    _ => Vec::new(),
                },
            })
            .collect();
        let topology = messages(&conf, "cross_cluster_topology")
            .iter()
            .map(|t| (text(t, "source_cluster_id"), text(t, "target_cluster_id")))
            .collect();
        Ok(ReplicateConfig { clusters, topology })
    }

    /// The salvage checkpoint message, None when the answer has none (or it has no id).
    async fn replicate_info(
        &self,
        cluster: &str,
        pchannel: &str,
    ) -> Result<Option<DynamicMessage>, NetError> {
        let reply = self
            .unary(&self.info, json!({"source_cluster_id": cluster, "target_pchannel": pchannel}))
            .await?;
        Ok(reply
            .has_field_by_name("salvage_checkpoint")
            .then(|| reply.get_field_by_name("salvage_checkpoint").and_then(|v| v.as_message().cloned()))
            .flatten())
    }

    /// One pchannel's checkpoint; `Missing` carries no diagnosis yet (see [`diagnose`]).
    pub(crate) async fn checkpoint(
        &self,
        cluster: &str,
        pchannel: &str,
    ) -> Result<Checkpoint, CheckpointProblem> {
        let endpoint = self.endpoint().to_string();
        let missing = |why: &str| CheckpointProblem::Missing {
            endpoint: endpoint.clone(),
            cluster: cluster.into(),
            pchannel: pchannel.into(),
            why: why.into(),
        };
        let ckpt = match self.replicate_info(cluster, pchannel).await {
            Ok(Some(c)) => c,
            Ok(None) => return Err(missing("")),
            Err(e) => return Err(self.explain_failure(pchannel, e).await),
        };
        let id = ckpt.get_field_by_name("message_id").and_then(|v| v.as_message().cloned());
        let (raw, wal) = match &id {
            Some(m) => {
                (text(m, "id"), m.get_field_by_name("WAL_name").and_then(|v| v.as_enum_number()).unwrap_or(0))
            }
            None => (String::new(), 0),
        };
        if raw.is_empty() {
            return Err(missing(
                "the checkpoint has no message id yet (the server says it may be nil while initialising): try again shortly",
            ));
        }
        let display = match WalBackend::from_number(wal) {
            WalBackend::Unknown => format!("{raw} (WAL backend not named: the server's default)"),
            backend => {
                render_message_id(backend, &raw)
                    .map_err(|reason| CheckpointProblem::BadId { pchannel: pchannel.into(), reason })?
                    .display
            }
        };
        let tt = ckpt.get_field_by_name("time_tick").and_then(|v| v.as_u64()).unwrap_or(0);
        let source_pchannel = text(&ckpt, "pchannel");
        Ok(Checkpoint {
            cluster_id: Some(text(&ckpt, "cluster_id"))
                .filter(|c| !c.is_empty())
                .unwrap_or_else(|| cluster.into()),
            target_pchannel: pchannel.into(),
            pchannel: if source_pchannel.is_empty() { pchannel.into() } else { source_pchannel },
            message_id: raw,
            wal,
            message_id_display: display,
            time_tick: tt,
            time_utc: format!("{} UTC", format_timetick(tt)),
        })
    }

    async fn explain_failure(&self, pchannel: &str, e: NetError) -> CheckpointProblem {
        let endpoint = self.endpoint().to_string();
        let code = match &e {
            NetError::Status { code, .. } => code.as_str(),
            NetError::Timeout { .. } => "DEADLINE_EXCEEDED",
            _ => "",
        };
        match code {
            "UNIMPLEMENTED" => {
                let version = self.version().await.unwrap_or_else(|| "version unknown".into());
                CheckpointProblem::TooOld { endpoint, version }
            }
            "DEADLINE_EXCEEDED" => {
                let v = self.version().await;
                let affected =
                    v.as_deref().and_then(MilvusVersion::parse).is_some_and(|v| v.replicate_info_may_hang());
                // Upstream retries a pchannel that is not one of the asked cluster's until the
                // deadline: the cluster's own list says whether that is what happened.
                let own = self.replicate_configuration().await.ok().and_then(|c| {
                    c.own_cluster(self.endpoint()).map(|me| me.pchannels.clone()).filter(|p| !p.is_empty())
                });
                let hint = match (&v, affected, own) {
                    (Some(v), true, _) => format!(
                        ": {v} is one of 2.6.9–2.6.18, whose GetReplicateInfo retries until the deadline \
                         (milvus#50344, fixed in 2.6.19): upgrade the new primary"
                    ),
                    (_, _, Some(own)) if !own.iter().any(|p| p == pchannel) => format!(
                        ": {pchannel} is not one of the new primary's pchannels ({}), and a server retries such a \
                         pchannel until the deadline. {ASK_THE_NEW_PRIMARY}",
                        own.join(", ")
                    ),
                    (Some(v), false, _) => format!(
                        " ({v}): raise the timeout, or check the server's load. {}",
                        PchannelRefusal::NoAnswer.words()
                    ),
                    (None, _, _) => format!(
                        ": check the version, raise the timeout. {}",
                        PchannelRefusal::NoAnswer.words()
                    ),
                };
                CheckpointProblem::Timeout { endpoint, hint }
            }
            _ => CheckpointProblem::Net { endpoint, pchannel: pchannel.into(), source: e },
        }
    }
}

/// Why the new primary has no checkpoint for `cluster`, from what both clusters say about
/// themselves (the old primary may be unreachable: then only the new one's view).
pub(crate) async fn diagnose(new: &Milvus, old: Option<&Milvus>, cluster: &str, pchannel: &str) -> String {
    let new_conf = new.replicate_configuration().await.ok();
    let old_conf = match old {
        Some(o) => o.replicate_configuration().await.ok(),
        None => None,
    };
    let new_self = new_conf.as_ref().and_then(|c| c.own_cluster(new.endpoint()));
    let old_self = old.zip(old_conf.as_ref()).and_then(|(o, c)| c.own_cluster(o.endpoint()));
    if let Some(me) = new_self.filter(|c| c.cluster_id == cluster) {
        return format!(
            "\"{}\" is the new primary's own cluster id; give the old primary's (its msgChannel.chanNamePrefix.cluster)",
            me.cluster_id
        );
    }
    if let Some(o) = old_self.filter(|c| c.cluster_id != cluster) {
        return format!(
            "wrong cluster id: the old primary calls itself \"{}\" in its replicate configuration; use that",
            o.cluster_id
        );
    }
    if let Some(me) = new_self
        && !me.pchannels.is_empty()
        && !me.pchannels.iter().any(|p| p == pchannel)
    {
        return format!(
            "the new primary has no pchannel {pchannel} (it has {}). {ASK_THE_NEW_PRIMARY}",
            me.pchannels.join(", ")
        );
    }
    if let Some((s, t)) = new_conf.as_ref().and_then(|c| c.topology.iter().find(|(s, _)| s == cluster)) {
        return format!(
            "not a force-failed-over pair: the new primary still replicates {s} to {t} (it is a secondary); \
             a salvage checkpoint is captured only by UpdateReplicateConfiguration with force_promote"
        );
    }
    let version = new.version().await;
    match version.as_deref().and_then(MilvusVersion::parse) {
        Some(v) if !v.has_salvage_api() => {
            format!("the new primary runs {v}, older than the salvage API (Milvus {SALVAGE_API_SINCE})")
        }
        Some(v) if v.replicate_info_may_hang() => format!(
            "the new primary runs {v}: 2.6.9–2.6.18 cannot reach the salvage checkpoint (milvus#50344, fixed in 2.6.19)"
        ),
        _ => format!(
            "the new primary was not force-promoted from \"{cluster}\" (no checkpoint was captured), or the cluster id is \
             wrong{}",
            if old.is_none() { " (the old primary was not asked)" } else { "" }
        ),
    }
}

/// GetReplicateInfo for every pchannel at once on one connection, each asked by the new
/// primary's name of it ([`pchannel_to_ask`]); a missing checkpoint is explained (see
/// [`diagnose`]). Err only when the new primary cannot be reached at all.
pub async fn fetch_checkpoints(
    new_primary: &ConnectionProfile,
    old_primary: Option<&ConnectionProfile>,
    source_cluster_id: &str,
    pchannels: &[String],
    connect: &ConnectOptions,
    timeout: Duration,
) -> Result<Checkpoints, NetError> {
    let new = Milvus::connect(&settings(new_primary, connect)?, timeout).await?;
    let mut old = None;
    let connect_old = || async {
        match old_primary.map(|profile| settings(profile, connect)) {
            Some(Ok(s)) => Some(Milvus::connect(&s, timeout).await.ok()),
            _ => Some(None),
        }
    };
    let new_own = new.own_pchannels().await;
    let mut old_list = Vec::new();
    if !new_own.is_empty() && pchannels.iter().any(|p| !new_own.contains(p)) {
        old = connect_old().await;
        if let Some(Some(o)) = &old {
            old_list = o.pchannels_of(source_cluster_id).await;
        }
    }
    let asked: Vec<String> = pchannels.iter().map(|p| pchannel_to_ask(p, &new_own, &old_list)).collect();
    let answers = futures::future::join_all(asked.iter().map(|p| new.checkpoint(source_cluster_id, p))).await;
    let mut reports = Vec::new();
    for ((p, a), mut result) in pchannels.iter().zip(&asked).zip(answers) {
        if let Err(CheckpointProblem::Missing { why, .. }) = &mut result
            && why.is_empty()
        {
            if old.is_none() {
                old = connect_old().await;
            }
            *why = diagnose(&new, old.as_ref().and_then(|o| o.as_ref()), source_cluster_id, a).await;
        }
        reports.push(CheckpointReport { pchannel: p.clone(), result });
    }
    Ok(Checkpoints { new_primary_version: new.version().await, reports })
}

/// The old primary's replicate configuration (GetReplicateConfiguration).
pub async fn replicate_configuration(
    profile: &ConnectionProfile,
    connect: &ConnectOptions,
    timeout: Duration,
) -> Result<ReplicateConfig, NetError> {
    Milvus::connect(&settings(profile, connect)?, timeout).await?.replicate_configuration().await
}

/// The pchannels of `cluster_id` (the old primary's id) as the old primary's replicate
/// configuration lists them; with no id, those of the cluster that answered.
pub async fn pchannels_from_configuration(
    old_primary: &ConnectionProfile,
    cluster_id: Option<&str>,
    connect: &ConnectOptions,
    timeout: Duration,
) -> Result<Vec<String>, NetError> {
    let conf = replicate_configuration(old_primary, connect, timeout).await?;
    let found = match cluster_id {
        Some(id) => conf.cluster(id),
        None => conf.own_cluster(&old_primary.endpoint),
    };
    match found {
        Some(c) if !c.pchannels.is_empty() => Ok(c.pchannels.clone()),
        _ => Err(NetError::Unsupported(format!(
            "{}'s replicate configuration lists no pchannels for {} (clusters: {}); name the pchannels yourself",
            old_primary.endpoint,
            cluster_id.map_or("itself".to_string(), |c| format!("cluster \"{c}\"")),
            if conf.clusters.is_empty() {
                "none".to_string()
            } else {
                conf.clusters.iter().map(|c| c.cluster_id.as_str()).collect::<Vec<_>>().join(", ")
            }
        ))),
    }
}
