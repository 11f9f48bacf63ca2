//! Calls that change a server: what a call will do, in words, before it is sent, and whether
//! the operator must type a word to confirm it (for the calls that cannot be taken back at
//! all: `TaskStatus{clear_all}` deletes every sync task, `UpdateReplicateConfiguration` with
//! `force_promote` makes a secondary a primary).
//!
//! Owns: the list of such methods (OpenMLDB SyncTool and DataCollector, Milvus's writing
//! methods, and whatever a profile marks). Must never: call a reading method destructive (an
//! operator who is asked to confirm every call stops reading the question), or let a marked
//! method through unasked.

use prost_reflect::{DynamicMessage, MethodDescriptor, Value};

/// What a call will change, and the word to type when a click is not enough.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    pub what: String,
    pub typed_word: Option<&'static str>,
}

/// The words to type for the two calls that cannot be undone.
pub const CLEAR_ALL_WORD: &str = "clear all";
pub const FORCE_PROMOTE_WORD: &str = "force promote";

/// Milvus methods that only read (everything else on MilvusService writes something).
const MILVUS_READING: &[&str] = &[
    "Get",
    "Describe",
    "Show",
    "List",
    "Has",
    "Query",
    "Search",
    "HybridSearch",
    "Check",
    "Dump",
    "Connect",
    "Select",
    "Calc",
    "Run",
    "AllocTimestamp",
];

/// What calling `method` with `request` on `endpoint` will change, if anything. `marked` are
/// the methods the profile asks a confirmation for (`Name` or `pkg.Service/Name`).
pub fn assess(
    method: &MethodDescriptor,
    request: &DynamicMessage,
    endpoint: &str,
    marked: &[String],
) -> Option<Guard> {
    let name = method.name();
    let service = method.parent_service().full_name();
    let text = |f: &str| {
        request.get_field_by_name(f).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
    };
    let flag = |f: &str| request.get_field_by_name(f).is_some_and(|v| matches!(*v, Value::Bool(true)));
    let table = || format!("{}.{}", text("db"), text("name"));
    let guard = |what: String, typed_word| Some(Guard { what, typed_word });
    if service.starts_with("openmldb.datasync.") {
        match name {
            "DeleteSyncTask" | "DelelteSyncTask" => {
                return guard(
                    format!(
                        "deletes the sync task of table {} on {endpoint}: its partitions stop syncing",
                        table()
                    ),
                    None,
                );
            }
            "TaskStatus" if flag("clear_all") => {
                return guard(
                    format!("deletes EVERY sync task on {endpoint} (clear_all); nothing keeps syncing"),
                    Some(CLEAR_ALL_WORD),
                );
            }
            "CreateSyncTask" => {
                return guard(
                    format!(
                        "creates a sync task for table {} on {endpoint}, writing to {}",
                        table(),
                        text("dest")
                    ),
                    None,
                );
            }
            "SendData" => {
                return guard(
                    format!(
                        "sends rows to the sync task on {endpoint}: they are written to its destination and its sync point moves"
                    ),
                    None,
                );
            }
            "AddSyncTask" => {
                return guard(format!("assigns a sync task to the DataCollector at {endpoint}"), None);
            }
            _ => {}
        }
    }
    if service == "milvus.proto.milvus.MilvusService" {
        if name == "UpdateReplicateConfiguration" {
            return if flag("force_promote") {
                guard(
                    format!(
                        "FORCE-PROMOTES the cluster at {endpoint} to a primary and replaces its replicate configuration; the old primary's unreplicated writes are left behind"
                    ),
                    Some(FORCE_PROMOTE_WORD),
                )
            } else {
                guard(format!("replaces the replicate configuration of the cluster at {endpoint}"), None)
            };
        }
        if !MILVUS_READING.iter().any(|p| name.starts_with(p)) {
            return guard(format!("{name} changes the cluster at {endpoint}"), None);
        }
    }
    let full = format!("{service}/{name}");
    if marked.iter().any(|m| m == name || *m == full) {
        return guard(format!("the connection profile asks a confirmation for {name} on {endpoint}"), None);
    }
    None
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
