//! Progress files: SyncTool's `<tid>/<pid>.progress` (one varint-delimited
//! `AddSyncTaskRequest`, Java `writeDelimitedTo`) and DataCollector's `<tid>-<pid>/task.progress`
//! (one plain `AddSyncTaskRequest`). Recognised by name, confirmed by content.

use crate::wire::Framing;
use prost_reflect::{DynamicMessage, ReflectMessage, Value};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressFileKind {
    /// `<pid>.progress`, also archived as `<pid>.progress.finished.<ms>`: varint-delimited.
    SyncTool,
    /// `task.progress`: the message bytes alone.
    DataCollector,
}

impl ProgressFileKind {
    /// Which program wrote the file, judged by its name.
    pub fn from_path(path: &Path) -> Option<ProgressFileKind> {
        let name = path.file_name()?.to_str()?;
        if name == "task.progress" {
            Some(ProgressFileKind::DataCollector)
        } else if name.ends_with(".progress") || name.contains(".progress.finished.") {
            Some(ProgressFileKind::SyncTool)
        } else {
            None
        }
    }

    pub fn framing(self) -> Framing {
        match self {
            ProgressFileKind::SyncTool => Framing::VarintDelimited,
            ProgressFileKind::DataCollector => Framing::Single,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            ProgressFileKind::SyncTool => "SyncTool progress file (varint-delimited AddSyncTaskRequest)",
            ProgressFileKind::DataCollector => "DataCollector task.progress (plain AddSyncTaskRequest)",
        }
    }
}

fn field<'a>(m: &'a DynamicMessage, name: &str) -> Option<std::borrow::Cow<'a, Value>> {
    m.descriptor().get_field_by_name(name).filter(|f| m.has_field(f)).map(|f| m.get_field(&f))
}

fn enum_name(m: &DynamicMessage, name: &str) -> Option<String> {
    let fd = m.descriptor().get_field_by_name(name)?;
    let n = field(m, name)?.as_enum_number()?;
    match fd.kind() {
        prost_reflect::Kind::Enum(e) => {
            Some(e.get_value(n).map_or_else(|| n.to_string(), |v| v.name().to_string()))
        }
        _ => Some(n.to_string()),
    }
}

/// `binlog offset=42` or `snapshot pk="k" ts=17`; flags a sync point missing its required type.
pub fn sync_point_text(sp: &DynamicMessage) -> String {
    let ty = enum_name(sp, "type");
    let mut s = match ty.as_deref() {
        Some("kBINLOG") => {
            format!("binlog offset={}", field(sp, "offset").and_then(|v| v.as_u64()).unwrap_or(0))
        }
        Some("kSNAPSHOT") => {
            let mut t = "snapshot".to_string();
            if let Some(pk) = field(sp, "pk") {
                t.push_str(&format!(" pk={:?}", pk.as_str().unwrap_or("")));
            }
            if let Some(ts) = field(sp, "ts").and_then(|v| v.as_u64()) {
                t.push_str(&format!(" ts={ts}"));
            }
            if t == "snapshot" { "snapshot start".into() } else { t }
        }
        Some(other) => format!("type {other}"),
        None => "MISSING required type".into(),
    };
    if ty.is_some() && ty.as_deref() != Some("kBINLOG") && field(sp, "offset").is_some() {
        s.push_str(" (offset set but ignored)");
    }
    s
}

/// One line for an `AddSyncTaskRequest`: which partition, from where, to where.
pub fn summarize_add_sync_task(m: &DynamicMessage) -> String {
    let num = |n: &str| field(m, n).and_then(|v| v.as_u32()).map_or("?".into(), |v| v.to_string());
    let text = |n: &str| field(m, n).and_then(|v| v.as_str().map(str::to_string));
    let mut parts = vec![format!("tid={} pid={}", num("tid"), num("pid"))];
    if let Some(mode) = enum_name(m, "mode") {
        parts.push(format!("mode={mode}"));
    }
    match field(m, "sync_point").as_deref().and_then(Value::as_message) {
        Some(sp) => parts.push(format!("at {}", sync_point_text(sp))),
        None => parts.push("no sync point".into()),
    }
    if let Some(ts) = field(m, "start_ts").and_then(|v| v.as_u64()) {
        parts.push(format!("start_ts={ts}"));
    }
    if let Some(t) = text("tablet_endpoint") {
        parts.push(format!("tablet={t}"));
    }
    if let Some(d) = text("des_endpoint") {
        parts.push(format!("synctool={d}"));
    }
    if let Some(t) = text("token") {
        let short: String = t.chars().take(8).collect();
        parts.push(format!("token={short}…"));
    }
    if let Some(d) = text("dest") {
        parts.push(format!("dest={d}"));
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaSet;

    #[test]
    fn names_and_summaries() {
        assert_eq!(
            ProgressFileKind::from_path(Path::new("/t/7/0.progress")),
            Some(ProgressFileKind::SyncTool)
        );
        assert_eq!(
            ProgressFileKind::from_path(Path::new("/t/7/0.progress.finished.1764461521123")),
            Some(ProgressFileKind::SyncTool)
        );
        assert_eq!(
            ProgressFileKind::from_path(Path::new("/d/7-0/task.progress")),
            Some(ProgressFileKind::DataCollector)
        );
        assert_eq!(ProgressFileKind::from_path(Path::new("x.bin")), None);
        let set = SchemaSet::builtin();
        let desc = set.message(crate::datasync::ADD_SYNC_TASK_REQUEST).unwrap();
        let m = crate::codec::from_json(
            &desc,
            r#"{"tid": 7, "pid": 1, "mode": "kFullAndContinuous", "syncPoint": {"type": "kBINLOG", "offset": "42"}, "token": "0123456789abcdef", "dest": "hdfs:///t"}"#,
        )
        .unwrap();
        assert_eq!(
            summarize_add_sync_task(&m),
            "tid=7 pid=1 mode=kFullAndContinuous at binlog offset=42 token=01234567… dest=hdfs:///t"
        );
        let sp = set.message(crate::datasync::SYNC_POINT).unwrap();
        let bad = DynamicMessage::new(sp.clone());
        assert_eq!(sync_point_text(&bad), "MISSING required type");
        let snap = crate::codec::from_json(&sp, r#"{"type": "kSNAPSHOT"}"#).unwrap();
        assert_eq!(sync_point_text(&snap), "snapshot start");
    }
}
