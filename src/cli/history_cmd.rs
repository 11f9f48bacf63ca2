//! `walscope history list|show|resend`: the calls recorded with `--history`
//! ([`crate::net::history`]), one per line, one in full (the request decoded when its method
//! is in the loaded schemas, and its bytes in hex; with `--json`, its transcript), or sent
//! again byte for byte.

use super::SchemaArgs;
use super::call_cmd::{CallFlags, Request, call_options, send};
use super::net_cmd::{ConnArgs, Target, TransportKind};
use crate::net::history::{HistoryEntry, HistoryStore};
use crate::net::profile::{ConnectionProfile, ProfileStore};
use anyhow::{Context, Result};
use clap::Subcommand;
use std::io::Write;

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once per process
pub enum HistoryAction {
    /// The recorded calls, oldest first: id, time (UTC), target, method, outcome.
    List {
        /// Only entries whose target, method, outcome or metadata contain TEXT (ignoring case).
        #[arg(long, value_name = "TEXT")]
        search: Option<String>,
        /// Only the newest N.
        #[arg(long, value_name = "N", default_value_t = 50)]
        limit: usize,
    },
    /// One entry in full: the request as JSON (when its method is in the loaded schemas) and
    /// its exact bytes as hex.
    Show {
        id: u64,
        /// Print the call's transcript instead: the JSON document `call --transcript` writes,
        /// with what the history did not record said in its `not_recorded`.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        schema: SchemaArgs,
    },
    /// Sends an entry's exact request bytes again, to its profile (or endpoint) or elsewhere.
    Resend {
        id: u64,
        /// Send here instead (an address or a profile name).
        #[arg(long, value_name = "PROFILE|ENDPOINT")]
        endpoint: Option<String>,
        /// With --endpoint ADDRESS: the transport (default: the entry's).
        #[arg(long, value_enum)]
        transport: Option<TransportKind>,
        /// Load the server's schemas by gRPC reflection (added to the built-in ones).
        #[arg(long)]
        reflect: bool,
        #[command(flatten)]
        flags: CallFlags,
        #[command(flatten)]
        conn: ConnArgs,
        #[command(flatten)]
        schema: SchemaArgs,
    },
}

pub fn run(action: HistoryAction) -> Result<()> {
    let store = HistoryStore::user();
    match action {
        HistoryAction::List { search, limit } => {
            let all = store.list(search.as_deref())?;
            let mut out = std::io::stdout().lock();
            if all.is_empty() {
                writeln!(
                    out,
                    "no calls recorded in {} (record one with `walscope call ... --history`)",
                    store.path().display()
                )?;
            }
            for e in &all[all.len().saturating_sub(limit)..] {
                writeln!(out, "{}", line(e))?;
            }
            Ok(())
        }
        HistoryAction::Show { id, json: false, schema } => show(&get(&store, id)?, &schema),
        HistoryAction::Show { id, json: true, schema } => {
            let set = schema.load()?;
            let doc = crate::net::transcript::record::from_history(&get(&store, id)?, set.pool());
            std::io::stdout().lock().write_all(&doc.to_json())?;
            Ok(())
        }
        HistoryAction::Resend { id, endpoint, transport, reflect, flags, conn, schema } => {
            let e = get(&store, id)?;
            let target = match &endpoint {
                Some(ep) => {
                    let kind = transport.unwrap_or_else(|| TransportKind::from_profile_kind(e.transport));
                    Target::resolve(ep, kind, &conn)?
                }
                None => entry_target(&e, &conn)?,
            };
            let opts = call_options(&target, &conn, Some(e.metadata.clone()))?;
            send(&target, &e.method, Request::Bytes(e.request.clone()), opts, reflect, &conn, &schema, &flags)
        }
    }
}

fn get(store: &HistoryStore, id: u64) -> Result<HistoryEntry> {
    store.get(id)?.with_context(|| {
        format!("no history entry {id} in {} (see `walscope history list`)", store.path().display())
    })
}

/// Where the entry went: its saved profile when it still exists, else its endpoint and transport.
fn entry_target(e: &HistoryEntry, conn: &ConnArgs) -> Result<Target> {
    if let Some(name) = &e.profile
        && let Ok(p) = ProfileStore::user().find(name)
    {
        return Ok(Target { profile: conn.overlay(p)?, saved: true });
    }
    let p = ConnectionProfile::plain(&e.endpoint, e.transport, e.endpoint.clone());
    Ok(Target { profile: conn.overlay(p)?, saved: false })
}

fn when(e: &HistoryEntry) -> String {
    crate::time::format_millis_utc(e.time_ms)
}

fn target(e: &HistoryEntry) -> String {
    match &e.profile {
        Some(p) => format!("{p} ({})", e.endpoint),
        None => e.endpoint.clone(),
    }
}

fn line(e: &HistoryEntry) -> String {
    let mut outcome = e.outcome.words();
    if outcome.chars().count() > 80 {
        outcome = outcome.chars().take(79).collect::<String>() + "…";
    }
    format!(
        "{:>6}  {}  {:<28} {:<52} {} ms, {} response(s)  {outcome}",
        e.id,
        when(e),
        target(e),
        e.method,
        e.elapsed_ms,
        e.responses
    )
}

fn show(e: &HistoryEntry, schema: &SchemaArgs) -> Result<()> {
    let set = schema.load()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "id:         {}", e.id)?;
    writeln!(out, "time:       {} UTC", when(e))?;
    writeln!(out, "target:     {} over {:?}", target(e), e.transport)?;
    writeln!(out, "method:     {}", e.method)?;
    for (k, v) in &e.metadata {
        writeln!(out, "metadata:   {k}: {v}")?;
    }
    match e.deadline_ms {
        Some(ms) => writeln!(out, "deadline:   {ms} ms")?,
        None => writeln!(out, "deadline:   none")?,
    }
    writeln!(out, "outcome:    {}", e.outcome.words())?;
    writeln!(
        out,
        "elapsed:    {} ms; {} response(s), {} bytes",
        e.elapsed_ms, e.responses, e.response_bytes
    )?;
    match crate::net::find_method(set.pool(), &e.method) {
        Ok(m) => match crate::codec::decode(&m.input(), &e.request) {
            Ok(d) => writeln!(
                out,
                "request ({}):\n{}",
                m.input().full_name(),
                crate::codec::to_json(&d.message, true)
            )?,
            Err(err) => writeln!(out, "request: not a valid {}: {err}", m.input().full_name())?,
        },
        Err(err) => writeln!(out, "request: not decoded ({err})")?,
    }
    writeln!(out, "request bytes ({}): {}", e.request.len(), crate::codec::value::encode_hex(&e.request))?;
    Ok(())
}
