//! A salvage folder for the timeline's tests, made from the sample generator's WAL (one
//! stream, split by pchannel as a salvage of every pchannel would write it) with what an
//! operator must see on the timeline put in on purpose: on lane 0 a gap (the messages of 2.5 s
//! of WAL time left out), on lane 1 garbage between two frames, on lane 2 a transaction left
//! open (the dump ends before its CommitTxn), on lane 3 a last frame cut short. `salvage.json`
//! names the four dumps.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use walscope::dump::Framing;
use walscope::dump::framing::write_frame;
use walscope::salvage::FolderManifest;
use walscope::salvage::folder::{ClusterRef, FolderEntry};
use walscope::schema::SchemaSet;
use walscope::sim::walgen::START_MS;
use walscope::sim::{GeneratedMessage, WalGenConfig, WalGenerator};

/// Lane 0 has no message from this many ms of WAL time after the start...
pub const GAP_FROM_MS: u64 = 1500;
/// ... to this many.
pub const GAP_TO_MS: u64 = 4000;
/// The garbage spliced into lane 1.
pub const GARBAGE: usize = 40;

/// What was written.
pub struct Made {
    pub dir: PathBuf,
    pub pchannels: Vec<String>,
    /// Each lane's messages as written (whole frames only).
    pub messages: Vec<Vec<GeneratedMessage>>,
    /// Where lane 1's garbage starts.
    pub garbage_at: u64,
    /// Where lane 3's cut frame starts.
    pub cut_at: u64,
}

/// The generator's WAL: one row per Insert, rolled-back transactions and bookkeeping too.
pub fn wal() -> WalGenConfig {
    WalGenConfig { seed: 3, rows: (1, 1), bookkeeping: true, ..Default::default() }
}

/// Writes the folder into `dir` from the first `total` messages of [`wal`].
pub fn make(dir: &Path, total: usize) -> Made {
    let set = SchemaSet::builtin();
    let mut by: BTreeMap<String, Vec<GeneratedMessage>> = BTreeMap::new();
    for m in WalGenerator::new(set.pool(), wal()).take(total) {
        by.entry(m.pchannel.clone()).or_default().push(m);
    }
    let (pchannels, mut messages): (Vec<String>, Vec<Vec<GeneratedMessage>>) = by.into_iter().unzip();
    assert_eq!(pchannels.len(), 4, "the generator writes four pchannels");
    let ms = |m: &GeneratedMessage| (m.timetick >> 18) - START_MS;
    messages[0].retain(|m| !(GAP_FROM_MS..GAP_TO_MS).contains(&ms(m)));
    let last_commit = messages[2].iter().rposition(|m| m.type_name == "CommitTxn").expect("a commit");
    messages[2].truncate(last_commit);
    let (mut garbage_at, mut cut_at) = (0, 0);
    let mut entries = Vec::new();
    for (k, (p, msgs)) in pchannels.iter().zip(&messages).enumerate() {
        let mut bytes = Vec::new();
        for (i, m) in msgs.iter().enumerate() {
            if k == 1 && i == msgs.len() / 2 {
                garbage_at = bytes.len() as u64;
                bytes.extend(std::iter::repeat_n(0xffu8, GARBAGE));
            }
            write_frame(Framing::VarintDelimited, &m.response, &mut bytes);
        }
        if k == 3 {
            cut_at = bytes.len() as u64;
            let mut extra = Vec::new();
            write_frame(Framing::VarintDelimited, &msgs[0].response, &mut extra);
            bytes.extend_from_slice(&extra[..extra.len() / 2]);
        }
        let file = format!("{p}.dump");
        std::fs::write(dir.join(&file), &bytes).expect("write a dump");
        entries.push(FolderEntry {
            pchannel: p.clone(),
            checkpoint: None,
            no_checkpoint: None,
            file: Some(file),
            complete: true,
            frames: msgs.len() as u64,
            bytes: bytes.len() as u64,
            last_error: None,
            ended_before_end: false,
        });
    }
    let cluster = |e: &str| ClusterRef { endpoint: e.into(), profile: None, version: None };
    let manifest = FolderManifest {
        format_version: 1,
        walscope_version: "test".into(),
        created_at: "2026-12-06T00:00:00.000Z".into(),
        updated_at: "2026-12-06T00:00:00.000Z".into(),
        new_primary: cluster("127.0.0.1:19530"),
        old_primary: cluster("127.0.0.1:19531"),
        source_cluster_id: "by-dev-old".into(),
        end_timetick: None,
        skip_replicated: true,
        pchannels: entries,
    };
    manifest.save(dir).expect("salvage.json");
    Made { dir: dir.to_path_buf(), pchannels, messages, garbage_at, cut_at }
}
