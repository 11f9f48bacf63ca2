//! `walscope tasks status|create|delete`: OpenMLDB sync tasks on a SyncTool, over brpc
//! (baidu_std) or HTTP/JSON.

use crate::codec;
use crate::datasync::status::{SubTaskRow, rows};
use crate::net::brpc::BrpcTransport;
use crate::net::http_json::HttpJsonTransport;
use crate::net::{CallOptions, Transport};
use anyhow::{Context, Result, anyhow, bail};
use serde_json::json;
use std::io::{BufRead, Write};
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
    /// SyncTool host:port (default port 8848).
    #[arg(long, value_name = "HOST:PORT")]
    pub endpoint: String,
    #[arg(long, value_enum, default_value = "brpc")]
    pub transport: TaskTransport,
    /// Seconds to wait for an answer.
    #[arg(long, default_value_t = 10)]
    pub timeout: u64,
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

fn transport(t: &TaskTarget) -> Box<dyn Transport> {
    let endpoint = if t.endpoint.contains(':') { t.endpoint.clone() } else { format!("{}:8848", t.endpoint) };
    match t.transport {
        TaskTransport::Brpc => Box::new(BrpcTransport::new(endpoint)),
        TaskTransport::Http => Box::new(HttpJsonTransport::new(endpoint)),
    }
}

fn call(t: &TaskTarget, method: &str, request: serde_json::Value) -> Result<prost_reflect::DynamicMessage> {
    let m = crate::datasync::synctool_method(method).map_err(|e| anyhow!(e))?;
    let req = codec::from_json(&m.input(), &request.to_string())?;
    let tr = transport(t);
    let opts = CallOptions { timeout: Some(Duration::from_secs(t.timeout.max(1))), ..CallOptions::default() };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let reply = rt
        .block_on(tr.call_unary(&m, &req, &opts))
        .with_context(|| format!("{method} on {}", tr.endpoint()))?;
    Ok(reply.message)
}

/// GeneralResponse code and msg; a non-zero code is an error.
fn general_ok(m: &prost_reflect::DynamicMessage, what: &str) -> Result<()> {
    crate::datasync::general_result(m)
        .map_err(|(code, msg)| anyhow!("{what} refused by SyncTool (code {code}): {msg}"))
}

pub fn run(action: TasksAction) -> Result<()> {
    match action {
        TasksAction::Status { target, watch: Some(every), .. } => watch(&target, every),
        TasksAction::Status { target, json, watch: None } => {
            let r = call(&target, "TaskStatus", json!({}))?;
            if json {
                println!("{}", codec::to_json(&r, true));
            } else {
                print_table(&rows(&r), &mut std::io::stdout().lock())?;
            }
            Ok(())
        }
        TasksAction::Create { target, db, table, mode, start_ts, dest } => {
            let mut req = json!({"db": db, "name": table, "mode": mode, "dest": dest});
            if let Some(ts) = start_ts {
                req["start_ts"] = json!(ts.to_string());
            }
            general_ok(&call(&target, "CreateSyncTask", req)?, "CreateSyncTask")?;
            eprintln!(
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
            general_ok(
                &call(&target, "DeleteSyncTask", json!({"db": db, "name": table}))?,
                "DeleteSyncTask",
            )?;
            eprintln!("deleted the sync task of {db}.{table}");
            Ok(())
        }
    }
}

fn confirm(question: &str) -> Result<bool> {
    let stdin = std::io::stdin();
    eprint!("{question}");
    std::io::stderr().flush()?;
    let mut line = String::new();
    stdin.lock().read_line(&mut line)?;
    Ok(line.trim().eq_ignore_ascii_case("yes"))
}

/// `status --watch`: the poller's board, printed after every poll, with rates.
fn watch(t: &TaskTarget, every: u64) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    let transport: std::sync::Arc<dyn Transport> = transport(t).into();
    let poller = crate::jobs::task_poll::TaskPoller::spawn(
        rt.handle(),
        transport,
        Duration::from_secs(every.max(1)),
        30,
    );
    let mut rx = poller.subscribe();
    rt.block_on(async {
        while rx.changed().await.is_ok() {
            let board = rx.borrow().clone();
            let mut out = std::io::stdout().lock();
            writeln!(
                out,
                "--- poll {} ({})",
                board.polls,
                crate::wal::timetick::format_millis_utc(board.updated_ms.unwrap_or(0))
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
        let when = r.last_update_ms.map(crate::wal::timetick::format_millis_utc).unwrap_or_default();
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
