//! Calls that change a server: what a call will do, in words, before it is sent, and whether
//! the operator must type a word to confirm it (for the calls that cannot be taken back at
//! all: `TaskStatus{clear_all}` deletes every sync task, `UpdateReplicateConfiguration` with
//! `force_promote` makes a secondary a primary).
//!
//! Owns: the one question asked before a call, and the methods a profile marks. Which methods
//! of a protocol change what is the protocol's own knowledge: OpenMLDB's SyncTool and
//! DataCollector in [`crate::datasync::calls`], Milvus in [`crate::wal::calls`]. Must never:
//! call a reading method destructive (an operator who is asked to confirm every call stops
//! reading the question), or let a marked method through unasked.

use prost_reflect::{DynamicMessage, MethodDescriptor};

pub use crate::datasync::calls::CLEAR_ALL_WORD;
pub use crate::wal::calls::FORCE_PROMOTE_WORD;

/// What a call will change, and the word to type when a click is not enough.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    pub what: String,
    pub typed_word: Option<&'static str>,
}

/// What calling `method` with `request` on `endpoint` will change, if anything. `marked` are
/// the methods the profile asks a confirmation for (`Name` or `pkg.Service/Name`).
pub fn assess(
    method: &MethodDescriptor,
    request: &DynamicMessage,
    endpoint: &str,
    marked: &[String],
) -> Option<Guard> {
    if let Some(c) = crate::datasync::calls::change_of(method, request) {
        return Some(Guard { what: c.words(endpoint), typed_word: c.typed_word() });
    }
    if let Some(c) = crate::wal::calls::change_of(method, request) {
        return Some(Guard { what: c.words(endpoint), typed_word: c.typed_word() });
    }
    let name = method.name();
    let full = format!("{}/{name}", method.parent_service().full_name());
    marked.iter().any(|m| m == name || *m == full).then(|| Guard {
        what: format!("the connection profile asks a confirmation for {name} on {endpoint}"),
        typed_word: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaSet;

    fn method(set: &SchemaSet, svc: &str, m: &str) -> MethodDescriptor {
        set.pool().get_service_by_name(svc).unwrap().methods().find(|x| x.name() == m).unwrap()
    }

    #[test]
    fn writing_calls_are_named_and_reading_calls_are_not() {
        let set = SchemaSet::builtin();
        let req = |m: &MethodDescriptor, json: &str| crate::codec::from_json(&m.input(), json).unwrap();
        let st = "openmldb.datasync.SyncTool";
        let del = method(&set, st, "DeleteSyncTask");
        let g = assess(&del, &req(&del, r#"{"db": "d", "name": "t"}"#), "h:1", &[]).unwrap();
        assert!(g.what.contains("table d.t on h:1") && g.typed_word.is_none(), "{g:?}");
        let status = method(&set, st, "TaskStatus");
        assert_eq!(assess(&status, &req(&status, "{}"), "h:1", &[]), None);
        let g = assess(&status, &req(&status, r#"{"clear_all": true}"#), "h:1", &[]).unwrap();
        assert_eq!(g.typed_word, Some(CLEAR_ALL_WORD));
        let ms = "milvus.proto.milvus.MilvusService";
        let upd = method(&set, ms, "UpdateReplicateConfiguration");
        assert_eq!(
            assess(&upd, &req(&upd, r#"{"force_promote": true}"#), "m:1", &[]).unwrap().typed_word,
            Some(FORCE_PROMOTE_WORD)
        );
        assert_eq!(assess(&upd, &req(&upd, "{}"), "m:1", &[]).unwrap().typed_word, None);
        for reading in ["GetVersion", "GetReplicateInfo", "DumpMessages", "Connect", "CheckHealth"] {
            let m = method(&set, ms, reading);
            assert_eq!(assess(&m, &req(&m, "{}"), "m:1", &[]), None, "{reading}");
        }
        let v = method(&set, ms, "GetVersion");
        assert!(assess(&v, &req(&v, "{}"), "m:1", &["GetVersion".into()]).is_some(), "a profile's mark");
    }
}
