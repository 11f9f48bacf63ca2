//! `walscope sample`: realistic files to practise on. A Milvus dump is written through the real
//! dump writer (so it has a manifest), then optionally damaged in a stated way.

use super::rng::SimRng;
use super::walgen::{WalGenConfig, WalGenerator};
use crate::codec;
use crate::dump::framing::write_frame;
use crate::dump::{DumpWriter, Framing, Manifest, NewDump, ResumePoint, SyncPolicy};
use prost_reflect::DescriptorPool;
use serde_json::json;
use std::io;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corruption {
    /// Cut the last frame in half.
    Truncate,
    /// 64 random bytes between two frames in the middle.
    Garbage,
    /// A frame header claiming 2^62 bytes in the middle.
    HugeLength,
}

/// Where the damage went, for the operator (and the tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    pub offset: u64,
    pub len: u64,
    pub what: String,
}

/// Writes `messages` WAL messages as a varint-delimited DumpMessagesResponse dump. The dump is
/// written whole (and damaged, when asked) beside `path`, then put in place: a file already
/// there is kept as `FILE.bak` (the CLI asks before it lets one be replaced).
pub fn write_milvus_dump(
    pool: &DescriptorPool,
    path: &Path,
    messages: u64,
    seed: u64,
    policy: SyncPolicy,
    corrupt: Option<Corruption>,
) -> io::Result<Option<Damage>> {
    write_milvus_dump_with(
        pool,
        path,
        messages,
        WalGenConfig { seed, ..WalGenConfig::default() },
        policy,
        corrupt,
    )
}

/// [`write_milvus_dump`] of a WAL generated with `cfg` (its seed, chunks, newer types).
pub fn write_milvus_dump_with(
    pool: &DescriptorPool,
    path: &Path,
    messages: u64,
    cfg: WalGenConfig,
    policy: SyncPolicy,
    corrupt: Option<Corruption>,
) -> io::Result<Option<Damage>> {
    let seed = cfg.seed;
    let cfg = WalGenConfig { total: Some(messages), ..cfg };
    let generator = WalGenerator::new(pool, cfg);
    let manifest = Manifest::new(
        Framing::VarintDelimited,
        "milvus.proto.milvus.DumpMessagesResponse",
        Some("walscope sample".into()),
        json!({"kind": "milvus-dump", "messages": messages, "seed": seed}),
    );
    let new = NewDump::beside(path)?;
    let mut w = DumpWriter::create(new.path(), Framing::VarintDelimited, manifest, policy)?;
    for m in generator.take(messages as usize) {
        let resume = ResumePoint {
            message_id: m.message_id.clone(),
            wal: m.backend.name().to_string(),
            last_confirmed_id: m.last_confirmed_id.clone(),
            timetick: m.timetick,
        };
        w.append(&m.response, Some(resume))?;
    }
    w.finish(true)?;
    let damage = match corrupt {
        Some(c) => Some(damage(new.path(), c, seed)?),
        None => None,
    };
    new.commit(true)?;
    Ok(damage)
}

/// Damages a varint-delimited dump in place.
pub fn damage(path: &Path, how: Corruption, seed: u64) -> io::Result<Damage> {
    let mut bytes = std::fs::read(path)?;
    // Frame boundaries, to damage between frames.
    let mut starts = Vec::new();
    let mut pos = 0;
    while let Ok(h) = crate::dump::framing::read_header(&bytes, pos, Framing::VarintDelimited) {
        starts.push(pos);
        pos += h.total() as usize;
        if pos >= bytes.len() {
            break;
        }
    }
    if starts.is_empty() {
        return Err(io::Error::other("nothing to damage: the dump has no frames"));
    }
    let middle = starts[starts.len() / 2];
    let damage = match how {
        Corruption::Truncate => {
            let last = *starts.last().unwrap_or(&0);
            let cut = last + (bytes.len() - last) / 2;
            let d = Damage {
                offset: last as u64,
                len: (bytes.len() - last) as u64,
                what: "last frame cut in half".into(),
            };
            bytes.truncate(cut.max(last + 1));
            d
        }
        Corruption::Garbage => {
            let junk = SimRng::new(seed ^ 0xbad).bytes(64);
            bytes.splice(middle..middle, junk.iter().copied());
            Damage { offset: middle as u64, len: 64, what: "64 random bytes between two frames".into() }
        }
        Corruption::HugeLength => {
            let mut bad = Vec::new();
            crate::wire::varint::write_varint(1u64 << 62, &mut bad);
            bad.extend_from_slice(b"\x0a\x03abc");
            let len = bad.len() as u64;
            bytes.splice(middle..middle, bad);
            Damage { offset: middle as u64, len, what: "a frame header claiming 2^62 bytes".into() }
        }
    };
    crate::dump::save::atomic_write(path, &bytes, false)?;
    Ok(damage)
}

/// The OpenMLDB progress record a SyncTool or DataCollector would have on disk.
pub fn progress_record(pool: &DescriptorPool, seed: u64) -> Vec<u8> {
    let mut rng = SimRng::new(seed);
    let Some(desc) = pool.get_message_by_name(walscope_core::datasync::ADD_SYNC_TASK_REQUEST) else {
        panic!("built-in schema lacks AddSyncTaskRequest (build defect)");
    };
    let token: String = (0..32).map(|_| format!("{:x}", rng.range(0, 15))).collect();
    let token =
        format!("{}-{}-{}-{}-{}", &token[..8], &token[8..12], &token[12..16], &token[16..20], &token[20..]);
    let tid = rng.range(2, 40);
    let json = json!({
        "tid": tid, "pid": rng.range(0, 7), "mode": "kFullAndContinuous",
        "sync_point": {"type": "kBINLOG", "offset": rng.range(1000, 900_000).to_string()},
        "tablet_endpoint": "127.0.0.1:10921", "des_endpoint": "127.0.0.1:8848",
        "token": token, "dest": format!("hdfs://namenode:9000/openmldb/sync/{tid}")
    });
    match codec::from_json(&desc, &json.to_string()) {
        Ok(m) => codec::encode(&m),
        Err(e) => panic!("progress sample JSON is wrong: {e}"),
    }
}

/// SyncTool's `<pid>.progress` (varint-delimited) or DataCollector's `task.progress` (plain).
pub fn write_progress(pool: &DescriptorPool, path: &Path, seed: u64, delimited: bool) -> io::Result<()> {
    let record = progress_record(pool, seed);
    let mut out = Vec::new();
    write_frame(if delimited { Framing::VarintDelimited } else { Framing::Single }, &record, &mut out);
    crate::dump::save::atomic_write(path, &out, true).map(|_| ())
}
