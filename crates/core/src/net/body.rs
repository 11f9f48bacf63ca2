//! "OK at the transport, error in the body": the answers that arrive as a success (gRPC OK,
//! brpc error code 0, HTTP 200) but whose message says the call failed. Milvus puts a
//! `milvus.proto.common.Status` in (or as) every reply; OpenMLDB puts a `GeneralResponse`
//! (`code`, `msg`) in (or as) its replies.
//!
//! Owns: recognising those two shapes and saying what they mean. This is the one place that
//! reads them; `datasync::general_result` asks here. Must never: call a reply an error
//! because of a field it does not recognise, or fail on a reply of any other shape (that is
//! simply not an error in the body).

use prost_reflect::{DynamicMessage, Kind, ReflectMessage, Value};

/// Milvus's status message.
pub const MILVUS_STATUS: &str = "milvus.proto.common.Status";

/// Words for an error carried in the body of a successful answer, or None when the body says
/// nothing went wrong (or has neither shape).
pub fn body_error(msg: &DynamicMessage) -> Option<String> {
    if let Some(s) = milvus_status(msg) {
        return milvus_status_error(&s);
    }
    if let Some(g) = general_response(msg) {
        return general_error(g);
    }
    let inner = field_message(msg, "response")?;
    general_error(general_response(&inner)?)
}

/// The Milvus status of a reply: the reply itself, or its `status` field (present or not: an
/// absent status is the default, success).
fn milvus_status(msg: &DynamicMessage) -> Option<DynamicMessage> {
    if msg.descriptor().full_name() == MILVUS_STATUS {
        return Some(msg.clone());
    }
    let fd = msg.descriptor().get_field_by_name("status")?;
    match fd.kind() {
        Kind::Message(m) if m.full_name() == MILVUS_STATUS && !fd.is_list() => {
            msg.get_field(&fd).as_message().cloned()
        }
        _ => None,
    }
}

fn milvus_status_error(s: &DynamicMessage) -> Option<String> {
    let code = number(s, "code").unwrap_or(0);
    let (error_code, error_name) = match s.descriptor().get_field_by_name("error_code") {
        Some(fd) => {
            let n = s.get_field(&fd).as_enum_number().unwrap_or(0);
            let name = match fd.kind() {
                Kind::Enum(e) => e.get_value(n).map_or_else(|| n.to_string(), |v| v.name().to_string()),
                _ => n.to_string(),
            };
            (n, name)
        }
        None => (0, "Success".to_string()),
    };
    if code == 0 && error_code == 0 {
        return None;
    }
    let reason = text(s, "reason").filter(|r| !r.is_empty());
    let detail = text(s, "detail").filter(|d| !d.is_empty() && Some(d) != reason.as_ref());
    let mut words = format!("Milvus answered with an error status: code {code}, error_code {error_name}");
    match reason {
        Some(r) => words.push_str(&format!(": {r}")),
        None => words.push_str(" (no reason given)"),
    }
    if let Some(d) = detail {
        words.push_str(&format!(" (detail: {d})"));
    }
    Some(words)
}

/// `code` and `msg` of an OpenMLDB `GeneralResponse`, or of any message of that shape (an
/// integer `code` and a string `msg` field). None for other shapes.
pub fn general_response(msg: &DynamicMessage) -> Option<(i32, String)> {
    let d = msg.descriptor();
    let code_fd = d.get_field_by_name("code")?;
    let is_general = d.name() == "GeneralResponse"
        || d.get_field_by_name("msg").is_some_and(|f| f.kind() == Kind::String && !f.is_list());
    let integer = matches!(code_fd.kind(), Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 | Kind::Int64);
    if !is_general || !integer || code_fd.is_list() {
        return None;
    }
    let code = i32::try_from(number(msg, "code").unwrap_or(0)).unwrap_or(i32::MIN);
    Some((code, text(msg, "msg").unwrap_or_default()))
}

fn general_error((code, msg): (i32, String)) -> Option<String> {
    (code != 0).then(|| {
        let msg = if msg.is_empty() { "(no message)".to_string() } else { msg };
        format!("the server refused: code {code}: {msg}")
    })
}

fn field_message(msg: &DynamicMessage, name: &str) -> Option<DynamicMessage> {
    let fd = msg.descriptor().get_field_by_name(name)?;
    if fd.is_list() || !msg.has_field(&fd) {
        return None;
    }
    msg.get_field(&fd).as_message().cloned()
}

fn number(msg: &DynamicMessage, name: &str) -> Option<i64> {
    let v = msg.get_field_by_name(name)?;
    match v.as_ref() {
        Value::I32(n) => Some(i64::from(*n)),
        Value::I64(n) => Some(*n),
        Value::U32(n) => Some(i64::from(*n)),
        Value::U64(n) => i64::try_from(*n).ok(),
        Value::EnumNumber(n) => Some(i64::from(*n)),
        // Some schemas carry the code as text.
        Value::String(s) if s.is_empty() => Some(0),
        Value::String(s) => Some(s.trim().parse().unwrap_or(-1)),
        _ => None,
    }
}

fn text(msg: &DynamicMessage, name: &str) -> Option<String> {
    msg.get_field_by_name(name).and_then(|v| v.as_str().map(str::to_string))
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
        let legacy = msg(MILVUS_STATUS, r#"{"error_code": "PermissionDenied"}"#);
        assert_eq!(
            body_error(&legacy).unwrap(),
            "Milvus answered with an error status: code 0, error_code PermissionDenied (no reason given)"
        );
        let code_only = msg(MILVUS_STATUS, r#"{"code": 65535, "reason": "r", "detail": "d"}"#);
        assert_eq!(
            body_error(&code_only).unwrap(),
            "Milvus answered with an error status: code 65535, error_code Success: r (detail: d)"
        );
        assert_eq!(body_error(&msg(MILVUS_STATUS, "{}")), None);
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
