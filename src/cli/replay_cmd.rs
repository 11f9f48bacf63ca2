//! `walscope replay`: a salvage (a folder, or dump files) into the new primary. The default is
//! the plan (a dry run): what would be sent per collection, every skip with its reason, the
//! schema check and the conflicts. `--apply` shows the plan, asks for a typed `yes` (or takes
//! `--yes`), sends under the journal with a progress bar, and verifies; `--resume` continues
//! an interrupted apply; `--verify` checks an applied replay again. `--new-primary` takes an
//! address or a saved profile's name, with the connection flags of `call`.
//!
//! Must never: send anything without `--apply` or `--resume` and a confirmation, or print a
//! secret.

use super::net_cmd::{ConnArgs, DEFAULT_TIMEOUT, Target, TransportKind, runtime};
use crate::net::{ConnectOptions, ProfileMetadata};
use crate::replay::apply::{self, ApplyOptions, ApplyState, Planned, ReplaySpec, Verification};
use crate::replay::plan::{AutoIdChoice, Plan, PlanOptions, Policy};
use crate::replay::units::SkipReason;
use crate::time::format_timetick;
use anyhow::{Result, anyhow, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug, Clone)]
pub struct ReplayArgs {
    /// A salvage folder (with salvage.json), or dump files.
    #[arg(required = true, value_name = "FOLDER|DUMP")]
    pub inputs: Vec<PathBuf>,
    /// The new primary: an address or a saved profile's name.
    #[arg(long, value_name = "ENDPOINT|PROFILE")]
    pub new_primary: String,
    /// Only plan (the default): nothing is sent.
    #[arg(long, conflicts_with_all = ["apply", "resume", "verify"])]
    pub plan_only: bool,
    /// Send the plan (after a confirmation), then verify.
    #[arg(long)]
    pub apply: bool,
    /// Continue an interrupted apply from its journal.
    #[arg(long, conflicts_with = "apply")]
    pub resume: bool,
    /// Verify an applied replay again (row counts, sample keys).
    #[arg(long, conflicts_with_all = ["apply", "resume"])]
    pub verify: bool,
    /// Insert keys the new primary already has: skip (keep its rows), upsert (overwrite), stop.
    #[arg(long, value_enum, default_value_t = Policy::Skip)]
    pub policy: Policy,
    /// Auto-id collections: keep the old keys (needs allow_insert_auto_id) or new ones.
    #[arg(long, value_enum, default_value_t = AutoIdChoice::Keep)]
    pub auto_id: AutoIdChoice,
    /// Calls per second at most (0: no limit).
    #[arg(long, value_name = "N", default_value_t = 0.0)]
    pub rate: f64,
    /// Rows per Insert/Upsert call at most.
    #[arg(long, value_name = "ROWS", default_value_t = 1000)]
    pub batch: usize,
    /// Do not ask: the plan is confirmed.
    #[arg(long)]
    pub yes: bool,
    /// The schema a collection's data was written with, for the schema check: a
    /// `milvus.proto.schema.CollectionSchema` as JSON or binary (repeatable).
    #[arg(long = "schema", value_name = "COLLECTION=FILE")]
    pub schemas: Vec<String>,
    /// Print the plan (and the outcome) as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `replay`.
pub fn replay(args: &ReplayArgs, conn: &ConnArgs) -> Result<()> {
    let profile = Target::resolve(&args.new_primary, TransportKind::Grpc, conn)?.profile;
    let on_connection = ConnectOptions { metadata: ProfileMetadata::Connection, ..conn.connect_options() };
    let settings = crate::net::grpc_settings(&profile, &on_connection)?;
    let timeout =
        conn.timeout_flag()?.or(profile.timeout_secs.map(Duration::from_secs)).unwrap_or(DEFAULT_TIMEOUT);
    let spec = ReplaySpec {
        inputs: args.inputs.clone(),
        settings: settings.clone(),
        timeout,
        options: PlanOptions {
            policy: args.policy,
            auto_id: args.auto_id,
            schemas: given_schemas(&args.schemas)?,
            ..Default::default()
        },
    };
    runtime()?.block_on(async {
        let planned = apply::plan(&spec).await?;
        if args.verify && !planned.resumed {
            bail!(
                "nothing to verify: {} holds no journal of an applied replay (a plan made now would count the replay's own rows as there before it)",
                planned.salvage.dir.display()
            );
        }
        if args.verify {
            let v = apply::verify(&planned.plan, &settings, timeout).await?;
            print_verification(&v, args.json);
            return if v.ok() { Ok(()) } else { Err(anyhow!("verification failed")) };
        }
        if args.resume && !planned.resumed {
            bail!("nothing to resume: {} has no journal of an earlier apply", planned.salvage.dir.display());
        }
        if args.json && !(args.apply || args.resume) {
            say!("{}", serde_json::to_string_pretty(&*planned.plan)?);
        } else {
            print_plan(&planned);
        }
        if !(args.apply || args.resume) {
            note!("plan only: nothing was sent (--apply sends it)");
            return if planned.plan.can_apply() {
                Ok(())
            } else {
                Err(anyhow!("the plan cannot be applied as it is"))
            };
        }
        if !planned.plan.can_apply() {
            bail!("not applied: resolve the problems above first");
        }
        let left = planned.units_left();
        if left == 0 {
            note!("nothing to send: the journal records every unit as applied");
        } else if !args.yes && !confirm(&planned, left)? {
            bail!("not confirmed: nothing was sent");
        }
        let options = ApplyOptions { rate: args.rate, batch_rows: args.batch.max(1), ..Default::default() };
        let handle = apply::spawn_apply(&planned, settings.clone(), timeout, options);
        let bar = ProgressBar::new(handle.progress.borrow().units_total as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} units {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let mut progress = handle.progress.clone();
        let cancel = handle.cancel.clone();
        let watcher = tokio::spawn(async move {
            loop {
                let p = progress.borrow_and_update().clone();
                bar.set_position((p.units_done + p.units_already) as u64);
                bar.set_message(format!("{} calls, {} rows, {:.0} rows/s", p.calls, p.rows, p.rows_per_s()));
                if !matches!(p.state, ApplyState::Applying | ApplyState::Verifying)
                    || progress.changed().await.is_err()
                {
                    bar.finish();
                    break;
                }
            }
        });
        let ctrl_c = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        });
        let outcome = handle.wait().await;
        ctrl_c.abort();
        let _ = watcher.await;
        let outcome = match outcome {
            Err(crate::replay::ReplayError::Cancelled) => {
                bail!("interrupted: the journal records what was applied; continue with --resume")
            }
            other => other?,
        };
        note!(
            "applied {} unit(s) in {} call(s), {} row(s); {} unit(s) were already applied",
            outcome.units_sent, outcome.calls, outcome.rows, outcome.units_already
        );
        if args.json {
            say!("{}", serde_json::to_string_pretty(&outcome)?);
        }
        match &outcome.verification {
            Some(v) => {
                print_verification(v, false);
                if v.ok() { Ok(()) } else { Err(anyhow!("verification failed")) }
            }
            None => Ok(()),
        }
    })
}

/// `--schema COLLECTION=FILE`: each file read as a CollectionSchema (JSON, else binary).
fn given_schemas(specs: &[String]) -> Result<std::collections::BTreeMap<String, Vec<u8>>> {
    let desc = crate::schema::SchemaSet::shared_builtin().message("milvus.proto.schema.CollectionSchema")?;
    let mut out = std::collections::BTreeMap::new();
    for spec in specs {
        let (name, file) =
            spec.split_once('=').ok_or_else(|| anyhow!("--schema {spec}: expected COLLECTION=FILE"))?;
        let bytes = std::fs::read(file).map_err(|e| anyhow!("--schema {name}={file}: {e}"))?;
        let message = match serde_json::from_slice::<serde_json::Value>(&bytes) {
            Ok(json) => prost_reflect::DynamicMessage::deserialize(desc.clone(), json)
                .map_err(|e| anyhow!("--schema {name}={file}: not a CollectionSchema as JSON: {e}"))?,
            Err(_) => prost_reflect::DynamicMessage::decode(desc.clone(), bytes.as_slice()).map_err(|e| {
                anyhow!("--schema {name}={file}: neither JSON nor a binary CollectionSchema: {e}")
            })?,
        };
        out.insert(name.to_string(), crate::codec::encode(&message));
    }
    Ok(out)
}

fn confirm(planned: &Planned, left: usize) -> Result<bool> {
    let plan = &planned.plan;
    let mut err = std::io::stderr();
    writeln!(
        err,
        "This sends {left} unit(s) ({} call(s) before batching) to {} (database {}), policy {}: {}.",
        plan.calls(),
        plan.endpoint,
        plan.db,
        format!("{:?}", plan.options.policy).to_lowercase(),
        plan.collections
            .values()
            .map(|c| {
                let conflicts = match (c.conflicts.len(), plan.options.policy) {
                    (0, _) => String::new(),
                    (n, Policy::Upsert) => format!(" ({n} key(s) already there: overwritten)"),
                    (n, _) => format!(" ({n} key(s) already there: skipped)"),
                };
                format!(
                    "{}: +{} rows{conflicts}, {} deletes, {} upserts",
                    c.name, c.insert_rows, c.delete_keys, c.upsert_rows
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    )?;
    write!(err, "Type yes to apply: ")?;
    err.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(line.trim() == "yes")
}

/// The plan in words.
pub fn print_plan(planned: &Planned) {
    let plan: &Plan = &planned.plan;
    say!("replay plan for {} (database {}), made {}", plan.endpoint, plan.db, plan.created_at);
    say!("policy for existing keys: {:?}; auto id: {:?}", plan.options.policy, plan.options.auto_id);
    for (path, pchannel, tt, frames) in &plan.dumps {
        let ckpt = tt.map_or("no checkpoint".to_string(), |t| format!("checkpoint {}", format_timetick(t)));
        say!("  {pchannel}: {frames} frames, {ckpt} ({path})");
    }
    say!("{} unit(s), {} call(s) before batching:", plan.units.len(), plan.calls());
    for c in plan.collections.values() {
        say!(
            "  {}: {} insert(s) of {} row(s), {} delete(s) of {} key(s), {} upsert(s) of {} row(s){}{}",
            c.name,
            c.inserts,
            c.insert_rows,
            c.deletes,
            c.delete_keys,
            c.upserts,
            c.upsert_rows,
            if c.ddl.is_empty() { String::new() } else { format!(", DDL: {}", c.ddl.join(", ")) },
            if c.on_new_primary { "" } else { " (not on the new primary yet)" }
        );
        if !c.conflicts.is_empty() {
            let shown: Vec<String> = c.conflicts.iter().take(10).map(|k| k.to_string()).collect();
            say!(
                "    conflicts: {} key(s) already on the new primary: {}{}",
                c.conflicts.len(),
                shown.join(", "),
                if c.conflicts.len() > 10 { ", ..." } else { "" }
            );
        }
        if let Some(from) = &c.dump_schema {
            say!(
                "    schema checked against {from}{}",
                if c.differences.is_empty() { ": no difference" } else { ":" }
            );
        }
        for d in &c.differences {
            say!("    schema: {}{}", d.what, if d.blocking { " [stops the apply]" } else { "" });
        }
        for n in &c.notes {
            say!("    note: {n}");
        }
        if let (Some(b), Some(a)) = (c.count_before, c.expected_after) {
            say!("    rows: {b} now, {a} expected after the replay");
        }
    }
    let by_reason = plan.skipped_by_reason();
    if !by_reason.is_empty() {
        say!("skipped {} message(s):", plan.skipped.len());
        for (reason, n) in &by_reason {
            say!("  {n} {reason:?}: {}", reason.describe());
            for s in plan
                .skipped
                .iter()
                .filter(|s| s.reason == *reason)
                .take(if *reason == SkipReason::Replicated { 3 } else { 20 })
            {
                say!(
                    "    {} {} {} at {}{}{}",
                    s.pchannel,
                    s.message_id,
                    s.type_name,
                    format_timetick(s.tt),
                    s.collection.as_ref().map_or(String::new(), |c| format!(" ({c})")),
                    s.detail.as_ref().map_or(String::new(), |d| format!(": {d}"))
                );
            }
        }
    }
    for w in &plan.warnings {
        say!("warning: {w}");
    }
    for p in &plan.problems {
        say!("PROBLEM: {p}");
    }
    if planned.resumed {
        say!(
            "journal: {} of {} unit(s) applied{}",
            planned.journal.done.len(),
            plan.units.len(),
            if planned.journal.uncertain.is_empty() {
                String::new()
            } else {
                format!(
                    ", {} interrupted mid-unit (checked before it is sent again)",
                    planned.journal.uncertain.len()
                )
            }
        );
    }
}

fn print_verification(v: &Verification, json: bool) {
    if json {
        say!("{}", serde_json::to_string_pretty(v).unwrap_or_default());
        return;
    }
    say!("verification: {}", if v.ok() { "OK" } else { "FAILED" });
    for c in &v.collections {
        let count = match (c.expected, c.actual) {
            (Some(e), Some(a)) if e == a => format!("{a} rows as expected"),
            (e, a) => format!(
                "expected {} rows, found {}",
                e.map_or("?".into(), |v| v.to_string()),
                a.map_or("?".into(), |v| v.to_string())
            ),
        };
        say!(
            "  {}: {count}; {} sample key(s) read back{}{}",
            c.collection,
            c.sampled,
            if c.wrong.is_empty() {
                ", all as expected".to_string()
            } else {
                format!(", {} wrong", c.wrong.len())
            },
            c.error.as_ref().map_or(String::new(), |e| format!("; error: {e}"))
        );
        for (k, want, got) in c.wrong.iter().take(10) {
            say!("    key {k}: expected {want} row(s), found {got}");
        }
    }
}
