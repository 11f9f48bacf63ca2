//! The replay plan overlaid on the timeline: the plan an apply saved beside the journal
//! (`replay-plan.json`, or `replay-plan.<db>.json`), read with the replay module's own types,
//! each unit a "sent" mark at its (commit) timetick on its pchannel's lane, each skipped
//! message a "skipped" mark with its reason in words, and a unit whose Insert keys the new
//! primary already has a "conflict" mark instead.
//!
//! Must never: plan anything (nothing reaches a server here), or fail the timeline because a
//! plan cannot be read (the timeline is shown without it).

use super::Timeline;
use crate::replay::{Op, Pk, SavedPlan, SkipReason};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

/// What the plan does with one message (or one transaction, at its commit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanWhat {
    /// Sent as these calls (`Insert orders`, ...).
    Sent { unit: String, calls: Vec<String> },
    /// Not sent, and why.
    Skipped { reason: SkipReason, words: String },
    /// Sent, but some of its keys are already on the new primary (the policy decides).
    Conflict { unit: String, collection: String, keys: Vec<String> },
}

impl PlanWhat {
    pub fn kind(&self) -> &'static str {
        match self {
            PlanWhat::Sent { .. } => "sent",
            PlanWhat::Skipped { .. } => "skipped",
            PlanWhat::Conflict { .. } => "conflict",
        }
    }

    /// The verdict in words, as a hover or a JSON line says it.
    pub fn words(&self) -> String {
        match self {
            PlanWhat::Sent { calls, .. } => format!("sent: {}", calls.join(", ")),
            PlanWhat::Skipped { words, .. } => format!("skipped: {words}"),
            PlanWhat::Conflict { collection, keys, .. } => {
                format!(
                    "conflict: {} of {collection} already on the new primary: {}",
                    walscope_core::fmt::counted(keys.len() as u64, "key"),
                    keys.join(", ")
                )
            }
        }
    }
}

/// One verdict of the plan on a lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanMark {
    pub lane: usize,
    pub tt: u64,
    pub message_id: String,
    pub collection: Option<String>,
    pub what: PlanWhat,
}

/// The saved plans of the folder: the default database's first, then the others by name.
fn plan_files(t: &Timeline) -> Vec<(PathBuf, String)> {
    let mut found: Vec<(PathBuf, String)> = std::fs::read_dir(&t.dir)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            let db = name.strip_prefix("replay-plan")?.strip_suffix(".json")?;
            let db = if db.is_empty() { "default".to_string() } else { db.strip_prefix('.')?.to_string() };
            Some((t.dir.join(&name), db))
        })
        .collect();
    found.sort_by_key(|(_, db)| (db != "default", db.clone()));
    found
}

/// Reads the folder's saved plan (the first one: see [`plan_files`]) into `t.plan`.
pub(super) fn read_plan(t: &mut Timeline) {
    let Some((path, db)) = plan_files(t).into_iter().next() else { return };
    let Ok(Some(plan)) = SavedPlan::load(&t.dir, &db) else { return };
    let lane_of: HashMap<&str, usize> =
        t.lanes.iter().enumerate().map(|(k, l)| (l.pchannel.as_str(), k)).collect();
    let conflicts: HashMap<&str, HashSet<&Pk>> =
        plan.collections.iter().map(|(n, c)| (n.as_str(), c.conflicts.iter().collect())).collect();
    let mut marks = Vec::new();
    for u in &plan.units {
        let Some(&lane) = lane_of.get(u.pchannel.as_str()) else { continue };
        let clash = u.ops.iter().find_map(|op| match op {
            Op::Insert { collection, keys, .. } => {
                let known = conflicts.get(collection.as_str())?;
                let hit: Vec<String> = keys.iter().filter(|k| known.contains(k)).map(Pk::to_string).collect();
                (!hit.is_empty()).then(|| (collection.clone(), hit))
            }
            _ => None,
        });
        let what = match clash {
            Some((collection, keys)) => PlanWhat::Conflict { unit: u.key.clone(), collection, keys },
            None => PlanWhat::Sent {
                unit: u.key.clone(),
                calls: u.ops.iter().map(|op| format!("{} {}", op.name(), op.collection())).collect(),
            },
        };
        let collection = u.ops.first().map(|op| op.collection().to_string());
        marks.push(PlanMark { lane, tt: u.tt, message_id: u.message.clone(), collection, what });
    }
    for s in &plan.skipped {
        let Some(&lane) = lane_of.get(s.pchannel.as_str()) else { continue };
        let mut words = s.reason.describe().to_string();
        if let Some(d) = &s.detail {
            words = format!("{words} ({d})");
        }
        marks.push(PlanMark {
            lane,
            tt: s.tt,
            message_id: s.message_id.clone(),
            collection: s.collection.clone(),
            what: PlanWhat::Skipped { reason: s.reason, words },
        });
    }
    marks.sort_by_key(|m| (m.lane, m.tt));
    t.plan = marks;
    t.plan_file = Some(path);
}
