//! `walscope tasks status|create|delete`: OpenMLDB sync tasks on a SyncTool, over brpc
//! (baidu_std) or HTTP/JSON, through [`SyncToolClient`]. `--endpoint` takes an address or the
//! name of a saved connection profile (its transport, address and timeout apply).
//! `status --watch` also prints the health of every sub-task (trouble in words, a summary).

use crate::codec;
use crate::datasync::SyncMode;
use crate::datasync::status::SubTaskRow;
use crate::net::SyncToolClient;
use crate::net::profile::{ConnectionProfile, ProfileError, ProfileStore, TransportKind};
use crate::net::{CallOptions, Transport};
use anyhow::{Context, Result, bail};
use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TaskTransport {
    /// baidu_std over TCP (what SyncTool and DataCollector speak).
    Brpc,
    /// HTTP/1.1 + JSON (SyncTool also serves it on the same port).
    Http,
}

#[derive(clap::Args, Debug, Clone)]
pub struct TaskTarget {
    /// SyncTool host:port (default port 8848), or the name of a saved connection profile.
    #[arg(long, value_name = "HOST:PORT|PROFILE")]
    pub endpoint: String,
    /// Ignored when --endpoint names a profile (its transport applies).
    #[arg(long, value_enum, default_value = "brpc")]
    pub transport: TaskTransport,
    /// Seconds to wait for an answer (default: the profile's timeout, else 10).
    #[arg(long)]
    pub timeout: Option<u64>,
}

#[derive(clap::Subcommand, Debug)]
pub enum TasksAction {
    /// Every sub-task: status, rows, sync point, collector, last update.
    Status {
        #[command(flatten)]
        target: TaskTarget,
        /// Print the raw TaskStatusResponse as JSON.
        #[arg(long)]
        json: bool,
        /// Poll every SECONDS and print the table with rows per second, until interrupted.
        #[arg(long, value_name = "SECONDS", conflicts_with = "json")]
        watch: Option<u64>,
    },
    /// Create a sync task for one table.
    Create {
        #[command(flatten)]
        target: TaskTarget,
        #[arg(long)]
        db: String,
        #[arg(long)]
        table: String,
        /// 0 = full (snapshot then binlog, then finish), 1 = incremental from --start-ts, 2 = full and continuous.
        #[arg(long, value_parser = clap::value_parser!(u8).range(0..=2))]
        mode: u8,
        /// Mode 1: skip rows older than this timestamp (ms).
        #[arg(long, value_name = "MS")]
        start_ts: Option<u64>,
        /// Offline destination path (HDFS or file).
        #[arg(long, value_name = "PATH")]
        dest: String,
    },
    /// Delete a table's sync task (only inside SyncTool; collectors stop on their next batch).
    Delete {
        #[command(flatten)]
        target: TaskTarget,
        #[arg(long)]
        db: String,
        #[arg(long)]
        table: String,
        /// Do not ask for confirmation.
        #[arg(long)]
        yes: bool,
    },
}

/// The profile `--endpoint` names, or one made of the address and `--transport`.
fn profile(t: &TaskTarget) -> Result<ConnectionProfile> {
    if !t.endpoint.contains(':') {
        // A profiles file that cannot be read is said, not taken for "no such profile".
        match ProfileStore::user().find(&t.endpoint) {
            Ok(p) if p.transport == TransportKind::Grpc => {
                bail!("profile \"{}\" is a gRPC (Milvus) profile; SyncTool speaks brpc or HTTP/JSON", p.name);
            }
            Ok(p) => return Ok(p),
            Err(ProfileError::NotFound(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    // An address never holds credentials: refused before it is echoed ("cannot reach ...") or
    // connected to.
    crate::net::edges::check_endpoint(&t.endpoint).map_err(|words| anyhow::anyhow!(words))?;
    let endpoint = if t.endpoint.contains(':') { t.endpoint.clone() } else { format!("{}:8848", t.endpoint) };
    let kind = match t.transport {
        TaskTransport::Brpc => TransportKind::Brpc,
        TaskTransport::Http => TransportKind::Http,
    };
    Ok(ConnectionProfile::plain("(command line)", kind, endpoint))
}

fn call_options(t: &TaskTarget, p: &ConnectionProfile) -> CallOptions {
    let secs = t.timeout.or(p.timeout_secs).unwrap_or(10).max(1);
    CallOptions { timeout: Some(Duration::from_secs(secs)), ..p.call_options() }
}

async fn transport(p: &ConnectionProfile) -> Result<Arc<dyn Transport>> {
    crate::net::connect(p).await.with_context(|| format!("cannot reach {}", p.endpoint))
}

/// Runs one client call on a fresh runtime.
fn with_client<T>(
    t: &TaskTarget,
    f: impl AsyncFnOnce(&SyncToolClient) -> Result<T, crate::net::SyncToolError>,
) -> Result<T> {
    let p = profile(t)?;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        let client = SyncToolClient::new(transport(&p).await?, call_options(t, &p));
        Ok(f(&client).await?)
    })
}

pub fn run(action: TasksAction) -> Result<()> {
    match action {
        TasksAction::Status { target, watch: Some(every), .. } => watch(&target, every),
        TasksAction::Status { target, json, watch: None } => {
            let (rows, reply) = with_client(&target, async |c| c.task_status().await)?;
            if json {
                outln!("{}", codec::to_json(&reply, true))?;
            } else {
                print_table(&rows, &mut std::io::stdout().lock())?;
            }
            Ok(())
        }
        TasksAction::Create { target, db, table, mode, start_ts, dest } => {
            let mode = SyncMode::from_number(mode).context("--mode must be 0, 1 or 2")?;
            with_client(&target, async |c| c.create_sync_task(&db, &table, mode, start_ts, &dest).await)?;
            note!(
                "created the sync task for {db}.{table}; see `walscope tasks status --endpoint {}`",
                target.endpoint
            );
            Ok(())
        }
        TasksAction::Delete { target, db, table, yes } => {
            if !yes
                && !confirm(&format!(
                    "Delete the sync task of {db}.{table} on {}? Its progress cannot be resumed after this (type yes): ",
                    target.endpoint
                ))?
            {
                bail!("not confirmed; nothing was deleted");
            }
            with_client(&target, async |c| c.delete_sync_task(&db, &table).await)?;
            note!("deleted the sync task of {db}.{table}");
            Ok(())
        }
    }
}

fn confirm(question: &str) -> Result<bool> {
    let stdin = std::io::stdin();
    note_part!("{question}");
    std::io::stderr().flush()?;
    let mut line = String::new();
    stdin.lock().read_line(&mut line)?;
    Ok(line.trim().eq_ignore_ascii_case("yes"))
}

/// `status --watch`: the poller's board, printed after every poll, with rates.
fn watch(t: &TaskTarget, every: u64) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    let transport = rt.block_on(transport(&profile(t)?))?;
    let config = crate::jobs::task_poll::PollerConfig {
        every: Duration::from_secs(every.max(1)),
        // Names of tasks the app created (read here, never written).
        names: crate::datasync::TableNames::load(&crate::datasync::TableNames::path_in(
            &crate::net::profile::config_dir(),
        )),
        ..Default::default()
    };
    let poller = crate::jobs::task_poll::TaskPoller::spawn_with(rt.handle(), transport, config);
    let check = crate::datasync::HealthConfig::default().check_period;
    let mut rx = poller.subscribe();
    rt.block_on(async {
        while rx.changed().await.is_ok() {
            let board = rx.borrow().clone();
            let mut out = std::io::stdout().lock();
            writeln!(
                out,
                "--- poll {} ({})",
                board.polls,
                crate::time::format_millis_utc(board.updated_ms.unwrap_or(0))
            )?;
            if let Some(e) = &board.error {
                writeln!(out, "error: {e}")?;
            }
            print_table(&board.rows, &mut out)?;
            for (r, rate) in board.rows.iter().zip(&board.rates) {
                if let Some(rate) = rate {
                    writeln!(out, "  {}/{}: {rate:.1} rows/s", r.tid, r.pid)?;
                }
            }
            if !board.rows.is_empty() {
                writeln!(out, "health: {}", board.summary.text)?;
            }
            for h in &board.health {
                let name = h.table.as_deref().map_or(String::new(), |t| format!(" ({t})"));
                for t in &h.troubles {
                    writeln!(
                        out,
                        "  {}/{}{name}: {}: {}. {}",
                        h.tid,
                        h.pid,
                        t.label(),
                        t.meaning(check),
                        t.action()
                    )?;
                }
            }
            out.flush()?;
        }
        Ok(())
    })
}

pub fn print_table(rows: &[SubTaskRow], out: &mut impl Write) -> Result<()> {
    if rows.is_empty() {
        writeln!(out, "no sync tasks (a finished mode-0 task is removed, so this can also mean done)")?;
        return Ok(());
    }
    writeln!(
        out,
        "{:>5} {:>4} {:<12} {:>12}  {:<34} {:<22} last update (UTC)",
        "tid", "pid", "status", "rows", "sync point", "data collector"
    )?;
    for r in rows {
        let when = r.last_update_ms.map(crate::time::format_millis_utc).unwrap_or_default();
        writeln!(
            out,
            "{:>5} {:>4} {:<12} {:>12}  {:<34} {:<22} {when}",
            r.tid, r.pid, r.status, r.count, r.sync_point, r.data_collector
        )?;
    }
    let failed: Vec<String> =
        rows.iter().filter(|r| r.status == "FAILED").map(|r| format!("{}/{}", r.tid, r.pid)).collect();
    if !failed.is_empty() {
        writeln!(
            out,
            "FAILED sub-tasks are never retried: {} (delete and re-create the task, or restart SyncTool)",
            failed.join(", ")
        )?;
    }
    Ok(())
}
