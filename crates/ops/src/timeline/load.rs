//! Reading a salvage folder into lanes: which dumps (the folder manifest's pchannels, else
//! every `*.dump` in it), each read with the fast summary reader on every core the way
//! `inspect --stats` reads ([`crate::dump::scan::fold_views`]), its frames sorted by timetick
//! into columns, its damaged ranges from the index placed between the frames around them.
//!
//! Must never: keep a dump open after its lane is built, or hold more than one lane's
//! temporary records at a time.

use super::{Damage, Lane, NONE, Timeline, TimelineError, bins, derive, overlay};
use crate::dump::view::{FrameDecoder, FrameStatus, FrameView};
use crate::dump::{DumpFile, IndexCache, OpenOptions};
use crate::salvage::FolderManifest;
use crate::schema::SchemaSet;
use crate::wal::{Detail, TypeCategory};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const RESPONSE_TYPE: &str = crate::salvage::RESPONSE_TYPE;

/// How to read a folder.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Overrides the gap rule's floor ([`derive::GAP_MIN_MS`]), in milliseconds.
    pub gap_min_ms: Option<u64>,
}

/// One frame as read, before the lane is sorted.
#[derive(Clone, Copy)]
struct Rec {
    frame: u32,
    offset: u64,
    tt: u64,
    ty: i32,
    collection: i64,
    txn: i64,
    size: u32,
}

/// The dumps of `dir`: (pchannel, path), in the folder manifest's order.
fn dumps_of(dir: &Path) -> Result<Vec<(String, PathBuf)>, TimelineError> {
    let err = |reason: String| TimelineError::Folder { path: dir.display().to_string(), reason };
    if !dir.is_dir() {
        return Err(err(
            "not a folder: give a salvage folder (with salvage.json) or a folder of .dump files".into(),
        ));
    }
    if FolderManifest::path(dir).exists() {
        let m = FolderManifest::load(dir).map_err(|e| err(e.to_string()))?;
        let found: Vec<_> = m
            .pchannels
            .iter()
            .filter_map(|e| Some((e.pchannel.clone(), dir.join(e.file.as_ref()?))))
            .filter(|(_, p)| p.exists())
            .collect();
        if !found.is_empty() {
            return Ok(found);
        }
    }
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .map_err(|e| err(e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "dump"))
        .map(|p| (p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(), p))
        .collect();
    found.sort();
    if found.is_empty() {
        return Err(err("no dump in this folder (no salvage.json naming one, no *.dump file)".into()));
    }
    Ok(found)
}

/// Reads the salvage folder `dir` into a [`Timeline`]. `progress(done, total, pchannel)` is
/// called before each lane; it returns false to stop (the result is then `Cancelled`).
/// Blocking and parallel: call it off the UI thread.
pub fn load(
    dir: &Path,
    options: &LoadOptions,
    progress: &mut dyn FnMut(usize, usize, &str) -> bool,
) -> Result<Timeline, TimelineError> {
    let dumps = dumps_of(dir)?;
    let set = SchemaSet::shared_builtin();
    let desc = set
        .message(RESPONSE_TYPE)
        .map_err(|e| TimelineError::Folder { path: dir.display().to_string(), reason: e.to_string() })?;
    let mut names: HashMap<String, i32> = HashMap::new();
    if let Some(e) = set.pool().get_enum_by_name(crate::wal::types::MESSAGE_TYPE_ENUM) {
        for v in e.values() {
            names.insert(v.name().to_string(), v.number());
        }
    }
    let mut t = Timeline { dir: dir.to_path_buf(), ..Timeline::default() };
    for (k, (pchannel, path)) in dumps.iter().enumerate() {
        if !progress(k, dumps.len(), pchannel) {
            return Err(TimelineError::Cancelled);
        }
        let opts = OpenOptions {
            framing: Some(crate::dump::Framing::VarintDelimited),
            message_type: Some(desc.clone()),
            index_cache: IndexCache::Off,
            // Read once: every frame is read as the index finds it (as `inspect --stats` does).
            defer_index: true,
            ..OpenOptions::default()
        };
        let dump = DumpFile::open(path, opts)?;
        let decoder = FrameDecoder::new(set.pool().clone(), Some(desc.clone()), 1);
        let mut recs = read_records(&dump, &decoder, &names);
        let all = recs.len();
        recs.retain(|r| r.tt != UNTIMED);
        let untimed = (all - recs.len()) as u64;
        let (lane, damage) = build_lane(k, pchannel, path, recs, &dump, untimed);
        t.damage.extend(damage);
        t.lanes.push(lane);
    }
    for (name, n) in names {
        t.type_names.insert(n, name);
    }
    let mut collections = std::collections::BTreeSet::new();
    let mut types = std::collections::BTreeSet::new();
    for l in &t.lanes {
        collections.extend(l.collection.iter().copied().filter(|&c| c != NONE));
        types.extend(l.ty.iter().copied());
    }
    t.collection_ids = collections.into_iter().collect();
    t.types_seen = types.into_iter().collect();
    derive::derive(&mut t, options);
    overlay::read_plan(&mut t);
    Ok(t)
}

/// The timetick of a frame that has none (undecodable): dropped after numbering.
const UNTIMED: u64 = u64::MAX;

/// Every frame of `dump` in frame order, read on every core (while the index is built, when
/// the dump is clean). Frames are numbered by their order in the file, which is what the
/// index numbers them (a fold run while indexing does not know the numbers yet).
fn read_records(dump: &DumpFile, decoder: &FrameDecoder, names: &HashMap<String, i32>) -> Vec<Rec> {
    let rec_of = |v: &FrameView| -> Rec {
        let mut r = Rec {
            frame: 0,
            offset: v.offset,
            tt: UNTIMED,
            ty: -1,
            collection: NONE,
            txn: NONE,
            size: u32::try_from(v.size).unwrap_or(u32::MAX),
        };
        // An undecodable frame has no place on the axis; the index's damage says where it is.
        if let (Some(w), false) = (v.wal.as_ref(), matches!(v.status, FrameStatus::Undecodable { .. })) {
            r.tt = w.timetick.unwrap_or(UNTIMED);
            r.ty = names.get(&w.type_name).copied().or_else(|| w.type_name.parse().ok()).unwrap_or(-1);
            r.collection = w.collection.unwrap_or(NONE);
            r.txn = w.txn.unwrap_or(NONE);
        }
        r
    };
    let fold = |mut acc: Vec<Rec>, v: FrameView| {
        acc.push(rec_of(&v));
        acc
    };
    let merge = |mut a: Vec<Rec>, mut b: Vec<Rec>| {
        a.append(&mut b);
        a
    };
    let mut recs = crate::dump::scan::fold_all_views(dump, decoder, Detail::Counts, Vec::new, fold, merge);
    recs.sort_unstable_by_key(|r| r.offset);
    for (i, r) in recs.iter_mut().enumerate() {
        r.frame = u32::try_from(i).unwrap_or(u32::MAX);
    }
    recs
}

/// The lane's columns (sorted by timetick) and its damaged ranges.
fn build_lane(
    k: usize,
    pchannel: &str,
    path: &Path,
    mut recs: Vec<Rec>,
    dump: &DumpFile,
    untimed: u64,
) -> (Lane, Vec<Damage>) {
    // In frame order here: each problem lies between the last frame before it and the next.
    let damage = dump
        .problems()
        .into_iter()
        .map(|p| {
            let i = recs.partition_point(|r| r.offset < p.offset);
            Damage {
                lane: k,
                offset: p.offset,
                len: p.len,
                truncated: p.truncated,
                reason: p.reason,
                from_tt: i.checked_sub(1).map(|j| recs[j].tt),
                to_tt: recs.get(i).map(|r| r.tt),
            }
        })
        .collect();
    recs.sort_by_key(|r| r.tt);
    let n = recs.len();
    let mut lane = Lane {
        pchannel: pchannel.to_string(),
        path: path.to_path_buf(),
        tt: Vec::with_capacity(n),
        frame: Vec::with_capacity(n),
        ty: Vec::with_capacity(n),
        cat: Vec::with_capacity(n),
        collection: Vec::with_capacity(n),
        txn: Vec::with_capacity(n),
        size: Vec::with_capacity(n),
        untimed,
        ..Lane::default()
    };
    for r in recs {
        lane.tt.push(r.tt);
        lane.frame.push(r.frame);
        lane.ty.push(r.ty);
        lane.cat.push(TypeCategory::of(r.ty).index() as u8);
        lane.collection.push(r.collection);
        lane.txn.push(r.txn);
        lane.size.push(r.size);
    }
    lane.blocks = bins::blocks_of(&lane.cat);
    (lane, damage)
}
