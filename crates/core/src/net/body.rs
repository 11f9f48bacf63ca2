//! "OK at the transport, error in the body": the answers that arrive as a success (gRPC OK,
//! brpc error code 0, HTTP 200) but whose message says the call failed. Milvus puts a
//! `milvus.proto.common.Status` in (or as) every reply; OpenMLDB puts a `GeneralResponse`
//! (`code`, `msg`) in (or as) its replies.
//!
//! Owns: the questions the call path asks of every reply (an error in it; a hint at what it
//! means, [`reply_hint`]), answered by the protocols' own modules (the status shape and the
//! hints are [`crate::wal::calls`]'s, the refusal [`crate::datasync::calls`]').
//! Must never: call a reply an error because of a field it does not recognise, or fail on a
//! reply of any other shape (that is simply not an error in the body).

use prost_reflect::DynamicMessage;

pub use crate::wal::calls::ReplyHint;

/// What a reply means that its fields alone do not say (a GetReplicateInfo answer with only
/// `salvage_checkpoint`), or None; asked of every reply beside [`body_error`].
pub fn reply_hint(msg: &DynamicMessage) -> Option<ReplyHint> {
    crate::wal::calls::reply_hint(msg)
}

/// Words for an error carried in the body of a successful answer, or None when the body says
/// nothing went wrong (or has neither shape).
pub fn body_error(msg: &DynamicMessage) -> Option<String> {
    if let Some(status) = crate::wal::calls::reply_status(msg) {
        return status.err();
    }
    let (code, msg) = crate::datasync::calls::refusal(msg)?;
    let msg = if msg.is_empty() { "(no message)".to_string() } else { msg };
    Some(format!("the server refused: code {code}: {msg}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaSet;

    fn msg(name: &str, json: &str) -> DynamicMessage {
        let set = SchemaSet::shared_builtin();
        crate::codec::from_json(&set.message(name).unwrap(), json).unwrap()
    }

    #[test]
    fn milvus_status_in_a_reply_and_alone() {
        let ok = msg("milvus.proto.milvus.GetVersionResponse", r#"{"status": {}, "version": "v2.6"}"#);
        assert_eq!(body_error(&ok), None);
        let absent = msg("milvus.proto.milvus.GetVersionResponse", r#"{"version": "v2.6"}"#);
        assert_eq!(body_error(&absent), None);
        let bad = msg(
            "milvus.proto.milvus.ConnectResponse",
            r#"{"status": {"error_code": "UnexpectedError", "code": 800, "reason": "database not found[database=x]"}}"#,
        );
        assert_eq!(
            body_error(&bad).unwrap(),
            "Milvus answered with an error status: code 800, error_code UnexpectedError: database not found[database=x]"
        );
        // Only the legacy error_code set, and a bare Status.
        let legacy = msg(crate::wal::calls::MILVUS_STATUS, r#"{"error_code": "PermissionDenied"}"#);
        assert_eq!(
            body_error(&legacy).unwrap(),
            "Milvus answered with an error status: code 0, error_code PermissionDenied (no reason given)"
        );
        let code_only =
            msg(crate::wal::calls::MILVUS_STATUS, r#"{"code": 65535, "reason": "r", "detail": "d"}"#);
        assert_eq!(
            body_error(&code_only).unwrap(),
            "Milvus answered with an error status: code 65535, error_code Success: r (detail: d)"
        );
        assert_eq!(body_error(&msg(crate::wal::calls::MILVUS_STATUS, "{}")), None);
    }

    #[test]
    fn openmldb_general_response_alone_and_inside() {
        let ok = msg("openmldb.datasync.GeneralResponse", r#"{"code": 0}"#);
        assert_eq!(body_error(&ok), None);
        assert_eq!(body_error(&msg("openmldb.datasync.GeneralResponse", "{}")), None);
        let refused =
            msg("openmldb.datasync.GeneralResponse", r#"{"code": -1, "msg": "sync task already exists"}"#);
        assert_eq!(body_error(&refused).unwrap(), "the server refused: code -1: sync task already exists");
        let inner = msg("openmldb.datasync.TaskStatusResponse", r#"{"response": {"code": -1}, "task": []}"#);
        assert_eq!(body_error(&inner).unwrap(), "the server refused: code -1: (no message)");
        let fine = msg("openmldb.datasync.TaskStatusResponse", r#"{"task": []}"#);
        assert_eq!(body_error(&fine), None);
        let send = msg(
            "openmldb.datasync.SendDataResponse",
            r#"{"response": {"code": -1, "msg": "token mismatch"}}"#,
        );
        assert!(body_error(&send).unwrap().contains("token mismatch"));
    }

    #[test]
    fn other_shapes_are_not_errors() {
        let sp = msg("openmldb.datasync.SyncPoint", r#"{"type": "kBINLOG", "offset": "7"}"#);
        assert_eq!(body_error(&sp), None);
        let dump = msg("milvus.proto.milvus.DumpMessagesResponse", "{}");
        assert_eq!(body_error(&dump), None);
    }
}
