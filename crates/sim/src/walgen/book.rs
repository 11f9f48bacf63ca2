//! The messages a real WAL holds that DumpMessages never sends, made only with
//! [`super::WalGenConfig::bookkeeping`]: TimeTick, CreateSegment and Flush (the server's own
//! bookkeeping) and transactions that end in RollbackTxn. They let tests prove the demo's
//! DumpMessages filters them as the server does (reference `milvus-replay.md` §3).

use super::{GeneratedMessage, WalGenerator};
use serde_json::json;

impl WalGenerator {
    pub(super) fn time_tick(&mut self, c: usize) -> GeneratedMessage {
        let (p, vchannel) = self.collections[c].vchannels[0].clone();
        let tt = self.tick();
        let header = self.header("TimeTickMessageHeader", json!({}));
        let body = self.body(
            "milvus.proto.msg.TimeTickMsg",
            json!({"base": {"msg_type": "TimeTick", "msgID": tt.to_string(), "timestamp": tt.to_string(), "sourceID": "3"}}),
        );
        self.emit(p, &vchannel, "TimeTick", 1, &header, body, &[], tt)
    }

    pub(super) fn segment_message(&mut self, c: usize, type_name: &'static str) -> GeneratedMessage {
        let col = &self.collections[c];
        let (cid, partition) = (col.id, col.partition);
        let (p, vchannel) = col.vchannels[0].clone();
        let tt = self.tick();
        let ids = json!({"collection_id": cid.to_string(), "partition_id": partition.to_string(), "segment_id": (cid * 1000 + 7).to_string()});
        let header = self.header(&format!("{type_name}MessageHeader"), ids);
        let body = self.body(&format!("milvus.proto.messages.{type_name}MessageBody"), json!({}));
        self.emit(p, &vchannel, type_name, 2, &header, body, &[], tt)
    }

    /// BeginTxn, one Insert carrying `_tx`, RollbackTxn: nothing of it is ever dumped.
    pub(super) fn rolled_back_transaction(&mut self, c: usize) -> Vec<GeneratedMessage> {
        let (id, mut out) = self.begin_txn(c);
        let lc = out[0].message_id.clone();
        let m = self.on_txn_vchannel(c, |g| g.insert(c, Some((id, &lc)), false));
        out.push(m);
        let ctx = self.txn_context(id);
        let (p, vchannel) = self.collections[c].vchannels[0].clone();
        let tt = self.tick();
        let header = self.header("RollbackTxnMessageHeader", json!({}));
        let body = self.body("milvus.proto.messages.RollbackTxnMessageBody", json!({}));
        out.push(self.emit(p, &vchannel, "RollbackTxn", 2, &header, body, &[("_tx", ctx)], tt));
        out
    }
}
