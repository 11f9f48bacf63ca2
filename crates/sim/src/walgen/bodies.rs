//! The message kinds the WAL generator emits, each with the header and body the reference
//! names for its type and version.

use super::{DIM, GeneratedMessage, WalGenerator};
use prost_reflect::{DynamicMessage, Value};
use serde_json::json;

const TITLES: [&str; 6] = ["kettle", "lamp", "drill", "tent", "kayak", "anvil"];

impl WalGenerator {
    pub(super) fn insert(&mut self, c: usize, txn: Option<(i64, &str)>, encrypted: bool) -> GeneratedMessage {
        self.insert_rows(c, txn, encrypted, None)
    }

    /// An Insert of new keys, or (`given`) of these keys at this timetick.
    fn insert_rows(
        &mut self,
        c: usize,
        txn: Option<(i64, &str)>,
        encrypted: bool,
        given: Option<(&[i64], u64)>,
    ) -> GeneratedMessage {
        let rows = match given {
            Some((pks, _)) => pks.len() as u64,
            None => {
                let (lo, hi) = self.cfg.rows;
                self.rng.range(lo, hi)
            }
        };
        let vi = self.rng.range(0, 1) as usize;
        let (p, vchannel) = self.collections[c].vchannels[vi].clone();
        let (cid, cname, partition) =
            (self.collections[c].id, self.collections[c].name, self.collections[c].partition);
        let (pks, tt): (Vec<i64>, u64) = match given {
            Some((pks, tt)) => (pks.to_vec(), tt),
            None => {
                let first_pk = self.collections[c].next_pk;
                self.collections[c].next_pk += rows as i64;
                (((first_pk..first_pk + rows as i64).collect()), self.tick())
            }
        };
        let titles: Vec<String> =
            pks.iter().map(|pk| format!("{} #{pk}", TITLES[(*pk as usize) % TITLES.len()])).collect();
        let segment = cid * 1000 + 7;
        let mut body = super::build(
            &self.types.insert,
            json!({
                "base": {"msg_type": "Insert", "msgID": tt.to_string(), "timestamp": tt.to_string(), "sourceID": "3"},
                "shardName": vchannel, "db_name": self.collections[c].db, "collection_name": cname, "partition_name": "_default",
                "dbID": "1", "collectionID": cid.to_string(), "partitionID": partition.to_string(), "segmentID": segment.to_string(),
                "timestamps": vec![tt.to_string(); rows as usize],
                "rowIDs": pks.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
                "fields_data": [
                    {"type": "Int64", "field_name": "id", "field_id": "100", "scalars": {"long_data": {"data": pks.iter().map(|p| p.to_string()).collect::<Vec<_>>()}}},
                    {"type": "FloatVector", "field_name": "embedding", "field_id": "101", "vectors": {"dim": DIM.to_string()}},
                    {"type": "VarChar", "field_name": "title", "field_id": "102", "scalars": {"string_data": {"data": titles}}}
                ],
                "num_rows": rows.to_string(), "version": "ColumnBased"
            }),
        );
        self.fill_vectors(&mut body, rows as usize);
        let payload = crate::codec::encode(&body);
        let header = self.header(
            "InsertMessageHeader",
            json!({"collection_id": cid.to_string(), "partitions": [{"partition_id": partition.to_string(), "rows": rows.to_string(),
                "binary_size": payload.len().to_string(), "segment_assignment": {"segment_id": segment.to_string()}}]}),
        );
        let mut extra: Vec<(&str, String)> = Vec::new();
        if let Some((id, _)) = txn {
            extra.push(("_tx", self.txn_context(id)));
        }
        if let Some((_, lc)) = txn {
            extra.push(("_lc", lc.to_string()));
        }
        let payload = if encrypted {
            let safe_key = super::b64(&self.rng.bytes(32));
            let cipher = self.header(
                "CipherHeader",
                json!({"ez_id": "9", "collection_id": cid.to_string(), "safe_key": safe_key, "payload_bytes": payload.len().to_string()}),
            );
            extra.push(("_ch", super::b64(&crate::codec::encode(&cipher))));
            // Ciphertext: as long as the plaintext plus a tag, and as random.
            self.rng.bytes(payload.len() + 16)
        } else {
            payload
        };
        self.emit(p, &vchannel, "Insert", 1, &header, payload, &extra, tt)
    }

    fn fill_vectors(&mut self, body: &mut DynamicMessage, rows: usize) {
        let floats: Vec<Value> = (0..rows * DIM).map(|_| Value::F32(self.rng.unit_f32())).collect();
        let mut fa = DynamicMessage::new(self.types.float_array.clone());
        fa.set_field_by_name("data", Value::List(floats));
        if let Some(Value::List(fields)) = body.get_field_by_name_mut("fields_data")
            && let Some(Value::Message(vec_field)) = fields.get_mut(1)
            && let Some(Value::Message(vectors)) = vec_field.get_field_by_name_mut("vectors")
        {
            vectors.set_field_by_name("float_vector", Value::Message(fa));
        }
    }

    pub(super) fn delete(&mut self, c: usize) -> GeneratedMessage {
        let vi = self.rng.range(0, 1) as usize;
        let (p, vchannel) = self.collections[c].vchannels[vi].clone();
        let max_pk = (self.collections[c].next_pk - 1).max(1);
        let n = self.rng.range(1, 3);
        let pks: Vec<String> = (0..n).map(|_| self.rng.range(1, max_pk as u64).to_string()).collect();
        let tt = self.tick();
        self.delete_keys(c, (p, &vchannel), pks, tt, &[])
    }

    /// A Delete of `pks` at `tt` on this vchannel.
    fn delete_keys(
        &mut self,
        c: usize,
        (p, vchannel): (usize, &str),
        pks: Vec<String>,
        tt: u64,
        extra: &[(&str, String)],
    ) -> GeneratedMessage {
        let n = pks.len() as u64;
        let (cid, cname, partition) =
            (self.collections[c].id, self.collections[c].name, self.collections[c].partition);
        let payload = self.body(
            "milvus.proto.msg.DeleteRequest",
            json!({"base": {"msg_type": "Delete", "msgID": tt.to_string(), "timestamp": tt.to_string(), "sourceID": "3"},
                "shardName": vchannel, "db_name": self.collections[c].db, "collection_name": cname, "partition_name": "_default",
                "dbID": "1", "collectionID": cid.to_string(), "partitionID": partition.to_string(),
                "timestamps": vec![tt.to_string(); n as usize], "num_rows": n.to_string(),
                "primary_keys": {"int_id": {"data": pks}}}),
        );
        let header = self
            .header("DeleteMessageHeader", json!({"collection_id": cid.to_string(), "rows": n.to_string()}));
        self.emit(p, vchannel, "Delete", 1, &header, payload, extra, tt)
    }

    pub(super) fn create_collection(&mut self, c: usize) -> GeneratedMessage {
        let col = &self.collections[c];
        let (cid, cname, partition) = (col.id, col.name, col.partition);
        let (p, vchannel) = col.vchannels[0].clone();
        let vchannels: Vec<String> = col.vchannels.iter().map(|(_, v)| v.clone()).collect();
        let pchannels: Vec<String> =
            vchannels.iter().map(|v| v.rsplit_once('_').map_or(v.clone(), |(a, _)| a.to_string())).collect();
        let tt = self.tick();
        let payload = self.body(
            "milvus.proto.msg.CreateCollectionRequest",
            json!({"base": {"msg_type": "CreateCollection", "msgID": tt.to_string(), "timestamp": tt.to_string()},
                "db_name": self.collections[c].db, "collectionName": cname, "dbID": "1", "collectionID": cid.to_string(),
                "virtualChannelNames": vchannels, "physicalChannelNames": pchannels,
                "partitionIDs": [partition.to_string()], "partitionNames": ["_default"],
                "collection_schema": {"name": cname, "fields": [
                    {"fieldID": "100", "name": "id", "is_primary_key": true, "data_type": "Int64"},
                    {"fieldID": "101", "name": "embedding", "data_type": "FloatVector", "type_params": [{"key": "dim", "value": DIM.to_string()}]},
                    {"fieldID": "102", "name": "title", "data_type": "VarChar", "type_params": [{"key": "max_length", "value": "256"}]}
                ]}}),
        );
        let header = self.header(
            "CreateCollectionMessageHeader",
            json!({"collection_id": cid.to_string(), "partition_ids": [partition.to_string()], "db_id": "1"}),
        );
        self.emit(p, &vchannel, "CreateCollection", 1, &header, payload, &[], tt)
    }

    pub(super) fn drop_collection(&mut self, c: usize) -> GeneratedMessage {
        let (cid, cname) = (self.collections[c].id, self.collections[c].name);
        let (p, vchannel) = self.collections[c].vchannels[0].clone();
        let tt = self.tick();
        let payload = self.body(
            "milvus.proto.msg.DropCollectionRequest",
            json!({"base": {"msg_type": "DropCollection", "msgID": tt.to_string(), "timestamp": tt.to_string()},
                "db_name": self.collections[c].db, "collectionName": cname, "dbID": "1", "collectionID": cid.to_string()}),
        );
        let header = self
            .header("DropCollectionMessageHeader", json!({"collection_id": cid.to_string(), "db_id": "1"}));
        self.emit(p, &vchannel, "DropCollection", 1, &header, payload, &[], tt)
    }

    pub(super) fn manual_flush(&mut self, c: usize) -> GeneratedMessage {
        let cid = self.collections[c].id;
        let (p, vchannel) = self.collections[c].vchannels[0].clone();
        let tt = self.tick();
        let header = self.header(
            "ManualFlushMessageHeader",
            json!({"collection_id": cid.to_string(), "flush_ts": tt.to_string(), "segment_ids": [(cid * 1000 + 7).to_string()]}),
        );
        let payload = self.body("milvus.proto.messages.ManualFlushMessageBody", json!({}));
        self.emit(p, &vchannel, "ManualFlush", 2, &header, payload, &[], tt)
    }

    pub(super) fn txn_context(&self, id: i64) -> String {
        let ctx =
            self.header("TxnContext", json!({"txn_id": id.to_string(), "keepalive_milliseconds": "10000"}));
        super::b64(&crate::codec::encode(&ctx))
    }

    /// BeginTxn, `n` Inserts carrying `_tx`, CommitTxn, on one vchannel; the bodies point their
    /// last-confirmed id at the BeginTxn, as DumpMessages re-stamps them.
    pub(super) fn transaction(&mut self, c: usize, n: usize) -> Vec<GeneratedMessage> {
        let (id, mut out) = self.begin_txn(c);
        for _ in 0..n {
            let lc = out[0].message_id.clone();
            let m = self.on_txn_vchannel(c, |g| g.insert(c, Some((id, &lc)), false));
            out.push(m);
        }
        self.commit_txn(c, id, out)
    }

    /// An upsert as the proxy writes it (reference §3): BeginTxn, an Insert of 1–3 existing
    /// keys, a Delete of the same keys at the Insert's timetick, CommitTxn.
    pub(super) fn upsert_transaction(&mut self, c: usize) -> Vec<GeneratedMessage> {
        let (id, mut out) = self.begin_txn(c);
        let max_pk = (self.collections[c].next_pk - 1).max(1) as u64;
        let n = self.rng.range(1, 3).min(max_pk);
        let mut pks: Vec<i64> = Vec::new();
        while (pks.len() as u64) < n {
            let pk = self.rng.range(1, max_pk) as i64;
            if !pks.contains(&pk) {
                pks.push(pk);
            }
        }
        let lc = out[0].message_id.clone();
        let tt = self.tick();
        let insert = self.on_txn_vchannel(c, |g| g.insert_rows(c, Some((id, &lc)), false, Some((&pks, tt))));
        let (p, vchannel) = self.collections[c].vchannels[0].clone();
        let extra = [("_tx", self.txn_context(id)), ("_lc", lc.clone())];
        let keys = pks.iter().map(|k| k.to_string()).collect();
        let delete = self.delete_keys(c, (p, &vchannel), keys, tt, &extra);
        out.push(insert);
        out.push(delete);
        self.commit_txn(c, id, out)
    }

    /// Runs `f` with the collection's vchannels pinned to the transaction's (its first).
    pub(super) fn on_txn_vchannel<T>(&mut self, c: usize, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.collections[c].vchannels.clone();
        self.collections[c].vchannels = vec![saved[0].clone(); 2];
        let out = f(self);
        self.collections[c].vchannels = saved;
        out
    }

    pub(super) fn begin_txn(&mut self, c: usize) -> (i64, Vec<GeneratedMessage>) {
        let id = self.next_txn;
        self.next_txn += 1;
        let ctx = self.txn_context(id);
        let (p, vchannel) = self.collections[c].vchannels[0].clone();
        let tt = self.tick();
        let header = self.header("BeginTxnMessageHeader", json!({"keepalive_milliseconds": "10000"}));
        let body = self.body("milvus.proto.messages.BeginTxnMessageBody", json!({}));
        (id, vec![self.emit(p, &vchannel, "BeginTxn", 2, &header, body, &[("_tx", ctx)], tt)])
    }

    fn commit_txn(&mut self, c: usize, id: i64, mut out: Vec<GeneratedMessage>) -> Vec<GeneratedMessage> {
        let ctx = self.txn_context(id);
        let (p, vchannel) = self.collections[c].vchannels[0].clone();
        let tt = self.tick();
        let header = self.header("CommitTxnMessageHeader", json!({}));
        let body = self.body("milvus.proto.messages.CommitTxnMessageBody", json!({}));
        out.push(self.emit(p, &vchannel, "CommitTxn", 2, &header, body, &[("_tx", ctx)], tt));
        out
    }
}
