//! The salvage job's dealings with the wire: the checkpoint request (a missing checkpoint
//! explained), placing each received frame (its id, last-confirmed id, timetick, transaction),
//! the request to restart from a resume point, which failures may be retried, and the words
//! for those that may not (UNIMPLEMENTED with the old primary's version, PERMISSION_DENIED with
//! the privilege, DEADLINE_EXCEEDED with the timeout, where the stream stopped).
//!
//! Must never: call a failure retriable when the server answered about the request itself.

use super::checkpoint::{Checkpoint, CheckpointProblem, Milvus, diagnose, pchannel_to_ask};
use super::job::{SalvageError, SalvageSpec};
use crate::dump::ResumePoint;
use crate::net::grpc::GrpcTransport;
use crate::net::{NetError, Transport};
use crate::time::format_timetick;
use crate::wal::{WalBackend, parse_base36_u64};
use crate::wire::scan::{self, Rules, TypeId};
use prost_reflect::{DynamicMessage, MessageDescriptor, Value};
use serde_json::json;

/// The checkpoint from the new primary; a missing one explained with both clusters' views.
pub(super) async fn fetch_checkpoint(spec: &SalvageSpec) -> Result<Checkpoint, SalvageError> {
    let new = Milvus::connect(&spec.new_primary, spec.timeout).await?;
    // The new primary answers only for its own name of the pchannel.
    let new_own = new.own_pchannels().await;
    let mut old_list = Vec::new();
    if !new_own.is_empty()
        && !new_own.contains(&spec.pchannel)
        && let Ok(old) = Milvus::connect(&spec.old_primary, spec.timeout).await
    {
        old_list = old.pchannels_of(&spec.source_cluster_id).await;
    }
    let asked = pchannel_to_ask(&spec.pchannel, &new_own, &old_list);
    match new.checkpoint(&spec.source_cluster_id, &asked).await {
        Err(CheckpointProblem::Missing { endpoint, cluster, pchannel, .. }) => {
            let old = Milvus::connect(&spec.old_primary, spec.timeout).await.ok();
            let why = diagnose(&new, old.as_ref(), &cluster, &pchannel).await;
            Err(CheckpointProblem::Missing { endpoint, cluster, pchannel, why }.into())
        }
        other => Ok(other?),
    }
}

/// A DumpMessages failure that will not be retried, in words: what the code means for a
/// salvage, and where the stream stopped relative to the end timetick.
pub(super) async fn explain_dump(spec: &SalvageSpec, failure: NetError, at: u64, end: u64) -> SalvageError {
    let endpoint = spec.old_primary.endpoint.clone();
    let code = match &failure {
        NetError::Status { code, .. } => code.clone(),
        NetError::Timeout { .. } => "DEADLINE_EXCEEDED".into(),
        NetError::Connect { .. } | NetError::Protocol { .. } => String::new(),
        _ => return failure.into(),
    };
    let mut words = match code.as_str() {
        "UNIMPLEMENTED" => {
            let version = match Milvus::connect(&spec.old_primary, spec.timeout).await {
                Ok(m) => m.version().await,
                Err(_) => None,
            };
            format!(
                "UNIMPLEMENTED: the old primary ({}) predates DumpMessages, which came with Milvus {}; \
                 its WAL cannot be dumped through the API: upgrade it (2.6.20+ also dumps transactions whole)",
                version.unwrap_or_else(|| "version unknown".into()),
                crate::wal::versions::SALVAGE_API_SINCE
            )
        }
        "PERMISSION_DENIED" => {
            format!(
                "PERMISSION_DENIED: {}: since Milvus PR #52608 DumpMessages needs the Global privilege \
                 UpdateReplicateConfiguration (PrivilegeUpdateReplicateConfiguration, as \
                 CreateReplicateStream); use an old-primary profile whose user has it (root, or a role \
                 granted it)",
                match &failure {
                    NetError::Status { message, .. } => message.as_str(),
                    _ => "",
                }
            )
        }
        "DEADLINE_EXCEEDED" => format!(
            "DEADLINE_EXCEEDED: no message within {:?}: the old primary may be overloaded, or it has nothing \
             newer yet; raise the timeout",
            spec.timeout
        ),
        _ => failure.to_string(),
    };
    if end != 0 && at < end {
        let from = if at == 0 {
            "before its first message".to_string()
        } else {
            format!("at {} UTC", format_timetick(at))
        };
        words.push_str(&format!(
            "; the stream ended {from}, before the end time {} UTC: resume to continue from the last written message",
            format_timetick(end)
        ));
    }
    SalvageError::Dump { endpoint, words, source: Box::new(failure) }
}

/// A dropped connection or a restarting server; never an answer about the request itself.
pub(super) fn retriable(e: &NetError) -> bool {
    match e {
        NetError::Status { code, message, .. } => {
            code == "UNAVAILABLE"
                || (code == "UNKNOWN" && message.contains("transport"))
                || code == "CANCELLED"
        }
        NetError::Connect { .. } | NetError::Timeout { .. } | NetError::Protocol { .. } => true,
        _ => false,
    }
}

pub(super) fn json_u64(v: &serde_json::Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

/// The stored request restarted at a resume point: its last-confirmed id, inclusively.
pub(super) fn restart_request(base: &serde_json::Value, r: &ResumePoint) -> serde_json::Value {
    let mut req = base.clone();
    req["start_message_id"] = json!({"id": r.last_confirmed_id, "WAL_name": wal_enum_name(&r.wal)});
    req["include_start_message"] = json!(true);
    req
}

pub(super) fn wal_enum_name(backend_name: &str) -> &'static str {
    match backend_name {
        "RocksMQ" => "RocksMQ",
        "Pulsar" => "Pulsar",
        "Kafka" => "Kafka",
        "Woodpecker" => "WoodPecker",
        _ => "Unknown",
    }
}

/// Places received frames. Every frame the schema check accepts is read straight from its
/// wire bytes (the stream is mostly Insert payloads, which need not be decoded to be placed);
/// the rest take the full decode, whose errors say what is wrong.
pub(super) struct FramePlacer {
    response: MessageDescriptor,
    fast: Option<Fast>,
}

/// The compiled check and the field numbers the wire reading needs.
struct Fast {
    rules: Rules,
    /// DumpMessagesResponse and ImmutableMessage within `rules`.
    frame: TypeId,
    message: TypeId,
    numbers: Numbers,
}

/// Field numbers: DumpMessagesResponse.status/.message, ImmutableMessage.id/.properties,
/// MessageID.id/.WAL_name.
#[derive(Clone, Copy)]
struct Numbers {
    status: u32,
    message: u32,
    id: u32,
    properties: u32,
    id_text: u32,
    id_wal: u32,
}

impl FramePlacer {
    pub(super) fn new(response: &MessageDescriptor) -> FramePlacer {
        let fast = || {
            let n = |d: &MessageDescriptor, name: &str| d.get_field_by_name(name).map(|f| f.number());
            let sub = |d: &MessageDescriptor, name: &str| match d.get_field_by_name(name)?.kind() {
                prost_reflect::Kind::Message(m) => Some(m),
                _ => None,
            };
            let imm = sub(response, "message")?;
            let id = sub(&imm, "id")?;
            let numbers = Numbers {
                status: n(response, "status")?,
                message: n(response, "message")?,
                id: n(&imm, "id")?,
                properties: n(&imm, "properties")?,
                id_text: n(&id, "id")?,
                id_wal: n(&id, "WAL_name")?,
            };
            let mut rules = Rules::default();
            let frame = rules.add(response);
            let message = rules.add(&imm);
            Some(Fast { rules, frame, message, numbers })
        };
        FramePlacer { response: response.clone(), fast: fast() }
    }

    /// Fills `point` with the resume point of one received frame and says whether it belongs
    /// to a transaction (`_tx`); None for a success `status` frame (skipped, `point` then
    /// holds nothing to use). The caller keeps one point for the whole stream, so placing a
    /// frame allocates nothing once its strings have grown to size.
    pub(super) fn place(
        &self,
        bytes: &[u8],
        from: &GrpcTransport,
        point: &mut ResumePoint,
    ) -> Result<Option<bool>, SalvageError> {
        if let Some(fast) = &self.fast
            && let Some(in_txn) = place_from_wire(bytes, fast, point)
        {
            return Ok(Some(in_txn));
        }
        Ok(place(&self.response, bytes, from.endpoint())?.map(|(placed, in_txn)| {
            *point = placed;
            in_txn
        }))
    }
}

/// [`place`] for a frame the strict check accepts: the same answer, or None when the full
/// decode must give it (a frame the check refuses, a status, a missing id or timetick, a field
/// given twice). The check is made in the same walk that reads the fields: each field of the
/// response and of its message is checked as [`Rules::accepts`] would check it (at the depth
/// it would), so the frame's bytes are walked once.
/// `point` is written only when the frame is placed.
fn place_from_wire(bytes: &[u8], fast: &Fast, point: &mut ResumePoint) -> Option<bool> {
    let (rules, n) = (&fast.rules, &fast.numbers);
    let mut message = None;
    for item in scan::fields(bytes) {
        match item.ok()? {
            (x, _) if x == n.status => return None,
            (x, scan::Value::Len(b)) if x == n.message => scan::set_once(&mut message, b)?,
            (x, value) if rules.accepts_field(fast.frame, x, value, 0) => {}
            _ => return None,
        }
    }
    let (mut id, mut props) = (None, scan::StringMap::default());
    for item in scan::fields(message?) {
        let (number, value) = item.ok()?;
        if !rules.accepts_field(fast.message, number, value, 1) {
            return None;
        }
        match (number, value) {
            (x, scan::Value::Len(b)) if x == n.id => scan::set_once(&mut id, b)?,
            (x, scan::Value::Len(entry)) if x == n.properties => props.insert_entry(entry)?,
            _ => {}
        }
    }
    let (id_text, wal) = crate::wal::fast::message_id(id?, n.id_text, n.id_wal)?;
    // The entries were checked as UTF-8 by the walk above; ASCII (every id and timetick) is
    // not checked a second time.
    let text = scan::as_text;
    let prop = |k: &str| props.get(k);
    if id_text.is_empty() {
        return None;
    }
    let timetick = parse_base36_u64(text(prop("_tt")?)?).ok()?;
    let lc = match prop("_lc") {
        Some(lc) => Some(text(lc)?),
        None => None,
    };
    fill_resume_point(point, id_text, wal, lc, prop("_lcs").is_some(), timetick);
    Some(prop("_tx").is_some())
}

/// The resume point of one received frame by the full decode (see [`FramePlacer::place`]).
fn place(
    response: &MessageDescriptor,
    bytes: &[u8],
    endpoint: &str,
) -> Result<Option<(ResumePoint, bool)>, SalvageError> {
    let bad = |reason: String| SalvageError::Protocol { endpoint: endpoint.to_string(), reason };
    let msg = DynamicMessage::decode(response.clone(), bytes)
        .map_err(|e| bad(format!("not a DumpMessagesResponse: {e}")))?;
    if msg.has_field_by_name("status") {
        let status = msg.get_field_by_name("status").and_then(|v| v.as_message().cloned());
        let code =
            status.as_ref().and_then(|s| s.get_field_by_name("code")).and_then(|v| v.as_i32()).unwrap_or(0);
        if code == 0 {
            return Ok(None);
        }
        let reason = status
            .as_ref()
            .and_then(|s| s.get_field_by_name("reason"))
            .and_then(|v| v.as_str().map(str::to_string));
        return Err(bad(format!("error status {code}: {}", reason.unwrap_or_default())));
    }
    let m = msg
        .get_field_by_name("message")
        .and_then(|v| v.as_message().cloned())
        .ok_or_else(|| bad("frame without message".into()))?;
    let id = m
        .get_field_by_name("id")
        .and_then(|v| v.as_message().cloned())
        .ok_or_else(|| bad("message without id".into()))?;
    let id_text = id.get_field_by_name("id").and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let wal = id.get_field_by_name("WAL_name").and_then(|v| v.as_enum_number()).unwrap_or(0);
    let props = m.get_field_by_name("properties");
    let prop = |k: &str| -> Option<String> {
        match props.as_deref() {
            Some(Value::Map(map)) => {
                map.get(&prost_reflect::MapKey::String(k.into())).and_then(|v| v.as_str().map(str::to_string))
            }
            _ => None,
        }
    };
    if id_text.is_empty() {
        return Err(bad("message without id".into()));
    }
    let tt_text = prop("_tt").ok_or_else(|| bad(format!("message {id_text} has no _tt")))?;
    let timetick = parse_base36_u64(&tt_text).map_err(|e| bad(format!("message {id_text}: _tt: {e}")))?;
    let point = resume_point(&id_text, wal, prop("_lc").as_deref(), prop("_lcs").is_some(), timetick);
    Ok(Some((point, prop("_tx").is_some())))
}

/// Where a frame leaves the dump: its id, and the last-confirmed id a restart must start from
/// (`_lc`, or the id itself when `_lcs` says it confirms itself or `_lc` is empty).
fn resume_point(id: &str, wal: i32, lc: Option<&str>, lc_is_self: bool, timetick: u64) -> ResumePoint {
    let mut point = ResumePoint::default();
    fill_resume_point(&mut point, id, wal, lc, lc_is_self, timetick);
    point
}

/// [`resume_point`] into an existing point, reusing its strings' buffers.
fn fill_resume_point(
    point: &mut ResumePoint,
    id: &str,
    wal: i32,
    lc: Option<&str>,
    lc_is_self: bool,
    timetick: u64,
) {
    let last_confirmed_id = match lc {
        Some(lc) if !lc_is_self && !lc.is_empty() => lc,
        _ => id,
    };
    let set = |to: &mut String, from: &str| {
        to.clear();
        to.push_str(from);
    };
    set(&mut point.message_id, id);
    set(&mut point.wal, WalBackend::from_number(wal).name());
    set(&mut point.last_confirmed_id, last_confirmed_id);
    point.timetick = timetick;
}

/// The WALName number of a backend name as [`ResumePoint::wal`] stores it.
pub(super) fn wal_number(backend_name: &str) -> i32 {
    [WalBackend::RocksMq, WalBackend::Pulsar, WalBackend::Kafka, WalBackend::Woodpecker]
        .into_iter()
        .find(|b| b.name() == backend_name)
        .map_or(0, |b| b.number())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaSet;
    use crate::sim::rng::SimRng;
    use crate::sim::{WalGenConfig, WalGenerator};

    /// The wire reading places every generated frame (and every damaged one it accepts)
    /// exactly where the full decode does.
    #[test]
    fn wire_placing_equals_the_full_decode() {
        let set = SchemaSet::builtin();
        let response = set.message("milvus.proto.milvus.DumpMessagesResponse").unwrap();
        let placer = FramePlacer::new(&response);
        let Some(wire_path) = &placer.fast else { panic!("no fast path") };
        let cfg = WalGenConfig { seed: 3, total: Some(300), ..Default::default() };
        let mut rng = SimRng::new(9);
        let (mut fast, mut txn) = (0, 0);
        // One point for every frame, as the job keeps one: nothing of an earlier frame may
        // show through.
        let mut point = ResumePoint::default();
        for m in WalGenerator::new(set.pool(), cfg).take(300) {
            let mut variants = vec![m.response.clone()];
            for _ in 0..20 {
                let mut b = m.response.clone();
                let i = rng.range(0, b.len() as u64 - 1) as usize;
                b[i] ^= 1 << rng.range(0, 7);
                variants.push(b);
            }
            for (k, bytes) in variants.iter().enumerate() {
                let full = place(&response, bytes, "test").ok().flatten();
                let wire =
                    place_from_wire(bytes, wire_path, &mut point).map(|in_txn| (point.clone(), in_txn));
                let accepted = wire_path.rules.accepts(wire_path.frame, bytes);
                // The fused walk places only frames the whole-frame check accepts.
                assert!(
                    wire.is_none() || accepted,
                    "variant {k} of {}: placed but not accepted",
                    m.message_id
                );
                if k == 0 {
                    assert_eq!(wire.is_some(), full.is_some(), "sound frame {}", m.message_id);
                    txn += usize::from(wire.as_ref().is_some_and(|w| w.1));
                }
                if let Some(w) = wire {
                    assert_eq!(Some(&w), full.as_ref(), "variant {k} of {}", m.message_id);
                    fast += 1;
                }
            }
        }
        assert!(fast > 300 && txn > 0, "fast {fast}, in transactions {txn}");
    }
}
