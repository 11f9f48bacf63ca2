//! What a replay does to a collection's rows, worked out without sending anything: per key, the
//! rows Milvus would hold after each call (Insert adds a row, it does not de-duplicate; Delete
//! removes every row of a key; Upsert leaves one), the rows under keys the new primary chooses
//! (new auto ids), and a replayed DropCollection emptying the collection on the way. The plan
//! uses it for its expectations, the apply for what should be there before a unit it resumes.
//!
//! Must never: ask the server (the caller brings what the new primary held at planning time).

use super::Pk;
use super::plan::{Plan, Policy};
use super::units::Op;
use std::collections::{HashMap, HashSet};

/// One step of what a replay does to key counts. `conflicts` and the policy say which rows are
/// actually sent.
pub fn simulate(counts: &mut HashMap<Pk, u64>, op: &Op, policy: Policy, conflicts: &HashSet<Pk>) {
    match op {
        Op::Insert { keys, .. } if policy == Policy::Upsert && keys.iter().any(|k| conflicts.contains(k)) => {
            // Sent as one Upsert: one row per key.
            for k in keys {
                counts.insert(k.clone(), 1);
            }
        }
        Op::Insert { keys, .. } => {
            for k in keys {
                let conflict = conflicts.contains(k);
                match (conflict, policy) {
                    (true, Policy::Skip) => {}
                    (true, Policy::Upsert) => {
                        counts.insert(k.clone(), 1);
                    }
                    _ => *counts.entry(k.clone()).or_insert(0) += 1,
                }
            }
        }
        Op::Delete { keys, .. } => {
            for k in keys {
                if !(policy == Policy::Skip && conflicts.contains(k)) {
                    counts.insert(k.clone(), 0);
                }
            }
        }
        Op::Upsert { keys, .. } => {
            for k in keys {
                counts.insert(k.clone(), 1);
            }
        }
        Op::DropCollection { .. } => counts.clear(),
        _ => {}
    }
}

/// Where a simulation stops: before op `op` of unit `unit` (`op` past the end: the whole unit).
#[derive(Debug, Clone, Copy)]
pub struct Until {
    pub unit: usize,
    pub op: usize,
}

impl Until {
    pub fn end(plan: &Plan) -> Until {
        Until { unit: plan.units.len(), op: 0 }
    }
}

/// A collection as the replay leaves it at some point.
#[derive(Debug, Default)]
pub struct Simulation {
    /// Rows per key the replay touches (starting from what the new primary held).
    pub counts: HashMap<Pk, u64>,
    /// Rows inserted under keys the new primary chooses.
    pub fresh: u64,
    /// A replayed DropCollection emptied the collection.
    pub dropped: bool,
}

impl Simulation {
    /// The collection's row count, given its count and the touched keys' rows at planning time.
    pub fn rows(&self, count_before: u64, present_before: &HashMap<Pk, u64>) -> u64 {
        let touched: u64 = self.counts.values().sum::<u64>() + self.fresh;
        if self.dropped {
            touched
        } else {
            (count_before + touched).saturating_sub(present_before.values().sum())
        }
    }
}

/// The conflicts of a collection apply to what the new primary held; once the replay drops the
/// collection, nothing it writes afterwards can conflict.
pub fn run(
    plan: &Plan,
    collection: &str,
    until: Until,
    present_before: &HashMap<Pk, u64>,
    conflicts: &HashSet<Pk>,
    new_ids: bool,
) -> Simulation {
    let mut s = Simulation { counts: present_before.clone(), ..Default::default() };
    let none = HashSet::new();
    let units = plan.units.iter().take(until.unit + 1).enumerate();
    for (i, unit) in units {
        let ops = if i == until.unit { &unit.ops[..until.op.min(unit.ops.len())] } else { &unit.ops[..] };
        for op in ops.iter().filter(|o| o.collection() == collection) {
            let conflicts = if s.dropped { &none } else { conflicts };
            match op {
                Op::Insert { rows, .. } if new_ids => s.fresh += rows,
                Op::DropCollection { .. } => {
                    s.counts.clear();
                    s.fresh = 0;
                    s.dropped = true;
                }
                _ => simulate(&mut s.counts, op, plan.options.policy, conflicts),
            }
        }
    }
    s
}

/// Index of the first unit that drops `collection`, if the replay drops it.
pub fn first_drop(plan: &Plan, collection: &str) -> Option<usize> {
    plan.units.iter().position(|u| {
        u.ops.iter().any(|o| matches!(o, Op::DropCollection { collection: c, .. } if c == collection))
    })
}
