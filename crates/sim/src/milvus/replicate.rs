//! The demo's replication answers: GetReplicateConfiguration (this cluster, the clusters it
//! still replicates to, the topology) and GetReplicateInfo's salvage checkpoint, with upstream's
//! rule for a `target_pchannel` that is not one of this cluster's (no answer until the caller
//! gives up).
//!
//! Must never: answer GetReplicateInfo for a pchannel this cluster does not have, or keep a
//! caller waiting past this server's stop.

use super::State;
use super::demo_wal::{DemoWal, PCHANNELS};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tonic::Status;

impl State {
    /// This cluster, every cluster it still replicates to, and the topology edges to them.
    pub(super) fn replicate_configuration(&self) -> serde_json::Value {
        let me = &self.config.cluster_id;
        let mut clusters = vec![json!({"cluster_id": me,
            "connection_param": {"uri": format!("http://{}", self.addr)},
            "pchannels": self.config.own_pchannels()})];
        let mut topology = Vec::new();
        for (id, uri) in &self.config.replicate_targets {
            let pchannels: Vec<String> =
                PCHANNELS.iter().map(|(p, _)| self.config.pchannel_of(id, p)).collect();
            clusters
                .push(json!({"cluster_id": id, "connection_param": {"uri": uri}, "pchannels": pchannels}));
            topology.push(json!({"source_cluster_id": me, "target_cluster_id": id}));
        }
        json!({"status": {}, "configuration": {"clusters": clusters, "cross_cluster_topology": topology}})
    }

    /// GetReplicateInfo's answer: the salvage checkpoint for `cluster` on this cluster's
    /// `pchannel` (empty for a cluster this one was not promoted from).
    pub(super) async fn salvage_checkpoint(
        self: Arc<Self>,
        cluster: &str,
        pchannel: &str,
    ) -> Result<serde_json::Value, Status> {
        let Some((generated, backend)) =
            self.config.generated_pchannel(pchannel).and_then(|g| Some((g, DemoWal::backend(g)?)))
        else {
            return Err(self.retry_until_deadline().await);
        };
        if self.config.salvage_source.as_deref() != Some(cluster) {
            return Ok(json!({}));
        }
        let (wal, p, start) = (self.wal.clone(), generated.to_string(), self.config.checkpoint_index);
        let lag = self.config.checkpoint_lag;
        let found = tokio::task::spawn_blocking(move || {
            wal.salvage_checkpoint(&p, start, lag).map(|c| (c.message_id, c.time_tick))
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?;
        let Some((confirmed, timetick)) = found else { return Ok(json!({})) };
        Ok(json!({"salvage_checkpoint": {
            // The source cluster's own name of the pchannel: what DumpMessages on it takes.
            "cluster_id": cluster, "pchannel": self.config.pchannel_of(cluster, generated),
            "message_id": {"id": confirmed, "WAL_name": backend.number()},
            "time_tick": timetick.to_string()
        }}))
    }

    /// What upstream's proxy does with a GetReplicateInfo whose `target_pchannel` is not a
    /// read-write pchannel of this cluster (handler_client_impl.go: no assignment, or a
    /// read-only one, is retried with backoff until the caller's context ends; the words "salvage
    /// checkpoint can only be read for RW channel" stay in the server's log): no answer until the
    /// caller gives up (its deadline, or it hangs up), or this server stops.
    async fn retry_until_deadline(&self) -> Status {
        while !self.stopping.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Status::unavailable("demo: the server is going down")
    }
}
