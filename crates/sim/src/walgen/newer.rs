//! The WAL types of upstream master newer than the 2.6/3.0 lines
//! ([`super::WalGenConfig::newer_types`]): row-level security (AlterRLSMetadata 47,
//! DropRLSMetadata 48), snapshots (CreateSnapshot 40, DropSnapshot 41, RestoreSnapshot 39,
//! DropSnapshotsByCollection 44), BatchUpdateManifest 42 and RefreshExternalCollection 43, each
//! with every header field the built-in `messages.proto` knows set, so a reader that lacks one
//! shows it as an unknown field.
//!
//! Must never: emit a field the built-ins do not define (the test that a generated dump has no
//! unknown header field would then mean nothing).

use super::{GeneratedMessage, WalGenerator};
use serde_json::json;

/// The newer types, in the order they are taken.
pub const NEWER_TYPES: [&str; 8] = [
    "AlterRLSMetadata",
    "CreateSnapshot",
    "BatchUpdateManifest",
    "RestoreSnapshot",
    "RefreshExternalCollection",
    "DropSnapshot",
    "DropRLSMetadata",
    "DropSnapshotsByCollection",
];

impl WalGenerator {
    /// The next of [`NEWER_TYPES`], about collection `c`, on its first vchannel.
    pub(super) fn newer_type(&mut self, c: usize) -> GeneratedMessage {
        let name = NEWER_TYPES[(self.newer as usize) % NEWER_TYPES.len()];
        self.newer += 1;
        let col = &self.collections[c];
        let (cid, cname, db) = (col.id.to_string(), col.name, col.db);
        let (p, vchannel) = col.vchannels[0].clone();
        let tt = self.tick();
        let snapshot = format!("{cname}-snap-{}", self.newer);
        let expirations = json!({"cache_expirations": [{"legacy_proxy_collection_meta_cache":
            {"db_name": db, "collection_name": cname}}]});
        let (header, body) = match name {
            "AlterRLSMetadata" => (
                json!({"db_id": "1", "collection_id": cid, "cache_expirations": expirations}),
                json!({"policy": {"policy_id": self.newer.to_string(), "policy_name": "own_rows", "policy_type": 1,
                    "actions": [0, 1], "using_expr": "owner == $current_user", "check_expr": "owner == $current_user",
                    "description": "each user reads and writes their own rows"}}),
            ),
            "DropRLSMetadata" => (
                json!({"db_id": "1", "collection_id": cid, "cache_expirations": expirations}),
                json!({"policy_name": "own_rows"}),
            ),
            "CreateSnapshot" => (
                json!({"collection_id": cid, "name": snapshot, "description": "before the failover drill",
                    "compaction_protection_seconds": "3600"}),
                json!({}),
            ),
            "DropSnapshot" => (json!({"name": snapshot, "collection_id": cid}), json!({})),
            "RestoreSnapshot" => (
                json!({"snapshot_name": snapshot, "collection_id": cid, "job_id": "9001", "source_collection_id": cid,
                    "pin_id": "77", "external": true, "snapshot_s3_location": format!("s3://backups/{cname}/{snapshot}"),
                    "external_spec": "{\"format\":\"milvus\"}", "snapshot_fingerprint": "9f86d081884c7d65"}),
                json!({}),
            ),
            "DropSnapshotsByCollection" => (json!({"collection_id": cid}), json!({})),
            "BatchUpdateManifest" => (
                json!({"collection_id": cid}),
                json!({"items": [{"segment_id": format!("{cid}007"), "manifest_version": "3"},
                    {"segment_id": format!("{cid}008"), "v2_column_groups": {}}]}),
            ),
            _ => (
                json!({"collection_id": cid, "collection_name": cname, "job_id": "9002",
                    "external_source": format!("s3://lake/{cname}/"), "external_spec": "{\"format\":\"parquet\"}"}),
                json!({}),
            ),
        };
        let header = self.header(&format!("{name}MessageHeader"), header);
        let payload = self.body(&format!("milvus.proto.messages.{name}MessageBody"), body);
        self.emit(p, &vchannel, name, 2, &header, payload, &[], tt)
    }
}
