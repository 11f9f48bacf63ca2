//! `walscope call` and `walscope history resend`: one call over any transport, through the
//! library's call path ([`crate::net::connect()`], [`crate::net::call_unary`], the
//! server-streaming call, or the [`crate::jobs::call_stream`] job with `--save-dump`). Prints
//! one JSON document per response message, like grpcurl; `--history` records the call;
//! `--transcript FILE` writes its transcript ([`crate::net::transcript`]).
//!
//! Must never: print or record a secret (the history drops credential metadata), or print an
//! error in a reply's body as if all were well (it goes to stderr as a warning).

use super::SchemaArgs;
use super::net_cmd::{ConnArgs, DEFAULT_TIMEOUT, Target, TransportKind, runtime};
use crate::jobs::call_stream::{self, CallStreamSpec, CallStreamState};
use crate::net::history::{HistoryEntry, HistoryStore};
use crate::net::transcript::{self, Recorder, Target as Where, Transcript};
use crate::net::{
    CallOptions, CallRequest, StreamEnd, Transport, body_error, call_server_stream, call_unary,
};
use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use prost_reflect::{DynamicMessage, MethodDescriptor};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What to do with a call besides printing it.
#[derive(Args, Debug, Clone, Default)]
pub struct CallFlags {
    /// Server streams: write every message's exact bytes to FILE as a dump (varint-delimited,
    /// with FILE.manifest.json naming the endpoint, method and request), with a progress line
    /// on stderr.
    #[arg(long, value_name = "FILE")]
    pub save_dump: Option<PathBuf>,
    /// With --save-dump: do not print the messages.
    #[arg(long, requires = "save_dump")]
    pub quiet: bool,
    /// Record the call in the history (see `walscope history`).
    #[arg(long)]
    pub history: bool,
    /// With --save-dump: replace FILE although it holds a dump (it and its manifest are moved
    /// aside as .bak when the first message arrives). With --transcript: replace FILE (kept as
    /// FILE.bak).
    #[arg(long)]
    pub force: bool,
    /// Write the call's transcript to FILE: one JSON document with the target, method, request
    /// (JSON and exact bytes), metadata (secrets redacted), headers, every response message
    /// (JSON, exact bytes, arrival time), trailers, status and timings (docs/formats.md).
    #[arg(long, value_name = "FILE", conflicts_with = "save_dump")]
    pub transcript: Option<PathBuf>,
}

impl CallFlags {
    /// `--save-dump FILE` is an output like any other: an existing dump needs `--force`.
    fn check_output(&self) -> Result<()> {
        if let Some(path) = &self.save_dump
            && !self.force
        {
            crate::atomic::check_output(path, &[], false)?;
            crate::atomic::check_output(&crate::dump::manifest_path(path), &[], false)?;
        }
        if let Some(path) = &self.transcript {
            crate::atomic::check_output(path, &[], self.force)?;
        }
        Ok(())
    }
}

/// `call`: the request from JSON (`-d`, `@FILE`, `@-`).
#[allow(clippy::too_many_arguments)]
pub fn call(
    endpoint: &str,
    method: &str,
    data: &str,
    transport: TransportKind,
    reflect: bool,
    conn: &ConnArgs,
    schema: &SchemaArgs,
    flags: &CallFlags,
) -> Result<()> {
    let text = match data.strip_prefix('@') {
        Some(file) => String::from_utf8(super::read_input(file)?).context("request file is not UTF-8")?,
        None => data.to_string(),
    };
    let target = Target::resolve(endpoint, transport, conn)?;
    let opts = call_options(&target, conn, None)?;
    let request = Request::Json(text);
    send(&target, method, request, opts, reflect, conn, schema, flags)
}

/// The request of a call: JSON to parse as the method's input, or exact bytes.
pub(super) enum Request {
    Json(String),
    Bytes(Vec<u8>),
}

/// Per-call options: the profile's (database, headers, timeout), `--timeout` over them, and
/// `metadata` (a history entry's) in place of the profile's when given.
pub(super) fn call_options(
    target: &Target,
    conn: &ConnArgs,
    metadata: Option<Vec<(String, String)>>,
) -> Result<CallOptions> {
    let mut opts = target.profile.call_options();
    if let Some(mut recorded) = metadata {
        // Flags given now win over what was recorded, key by key.
        let mut now = conn.header_pairs()?;
        if let Some(db) = &conn.db {
            now.push(("dbname".to_string(), db.clone()));
        }
        for (k, v) in now {
            recorded.retain(|(rk, _)| !rk.eq_ignore_ascii_case(&k));
            recorded.push((k, v));
        }
        opts.metadata = recorded;
    }
    opts.timeout = Some(conn.timeout_flag()?.or(opts.timeout).unwrap_or(DEFAULT_TIMEOUT));
    Ok(opts)
}

/// Connects, finds the method, sends, prints, records.
#[allow(clippy::too_many_arguments)]
pub(super) fn send(
    target: &Target,
    method: &str,
    request: Request,
    opts: CallOptions,
    reflect: bool,
    conn: &ConnArgs,
    schema: &SchemaArgs,
    flags: &CallFlags,
) -> Result<()> {
    flags.check_output()?;
    let mut set = schema.load()?;
    runtime()?.block_on(async {
        let t = crate::net::connect_with(&target.profile, &conn.connect_options()).await?;
        if let Some(g) = t.as_grpc() {
            if g.is_insecure() {
                note!("warning: the server's certificate is NOT verified (--insecure)");
            }
            if reflect {
                crate::net::reflection::load(g, &mut set).await?;
            }
        } else if reflect {
            bail!("--reflect needs gRPC; brpc and HTTP/JSON servers offer no reflection");
        }
        let m = crate::net::find_method(set.pool(), method)?;
        if m.is_client_streaming() {
            bail!(
                "{} is client-streaming; only unary and server-streaming calls are supported",
                m.full_name()
            );
        }
        let request =
            match request {
                Request::Bytes(b) => CallRequest::Bytes(b.into()),
                Request::Json(text) => {
                    let mut de = serde_json::Deserializer::from_str(&text);
                    CallRequest::Message(DynamicMessage::deserialize(m.input(), &mut de).with_context(
                        || format!("request is not valid JSON for {}", m.input().full_name()),
                    )?)
                }
            };
        let entry = HistoryEntry::for_call(
            target.profile_name(),
            &target.profile.endpoint,
            target.profile.transport,
            m.full_name(),
            &request.to_bytes(),
            &opts,
        );
        let rec = flags.transcript.as_ref().map(|_| {
            let to = Where::new(target.profile_name(), &target.profile.endpoint, target.profile.transport);
            let sent = transcript::record::sent_metadata(t.as_ref(), &opts);
            Recorder::start(to, &m, &request.to_bytes(), &sent, opts.timeout)
        });
        let (entry, result, written) = if !m.is_server_streaming() {
            if flags.save_dump.is_some() {
                bail!("--save-dump is for server-streaming methods; {} is unary", m.full_name());
            }
            unary(t.as_ref(), &m, &request, &opts, entry, rec).await
        } else if let Some(path) = &flags.save_dump {
            let (entry, result) = to_dump(t, &m, request, opts, path.clone(), flags, entry).await;
            (entry, result, None)
        } else {
            stream(t.as_ref(), &m, &request, &opts, entry, rec).await
        };
        if let (Some(path), Some(doc)) = (&flags.transcript, written) {
            // Written whatever the call's outcome: a failure's transcript is what a report needs.
            crate::atomic::atomic_write(path, &doc.to_json(), flags.force)
                .with_context(|| format!("cannot write the transcript {}", path.display()))?;
            note!("wrote the call's transcript to {}", path.display());
        }
        if flags.history {
            match HistoryStore::user().append(entry) {
                Ok(e) => note!("recorded as history entry {}", e.id),
                Err(e) => note!("warning: not recorded in the history: {e}"),
            }
        }
        result
    })
}

fn warn_body(words: Option<String>) -> Option<String> {
    if let Some(w) = &words {
        note!("warning: the call succeeded at the transport, but the reply says: {w}");
    }
    words
}

async fn unary(
    t: &dyn Transport,
    m: &MethodDescriptor,
    request: &CallRequest,
    opts: &CallOptions,
    entry: HistoryEntry,
    rec: Option<Recorder>,
) -> (HistoryEntry, Result<()>, Option<Transcript>) {
    let started = Instant::now();
    let result = call_unary(t, m, request, opts).await;
    let entry = entry.with_unary(&result, started.elapsed());
    let doc = rec.map(|r| r.unary(&result));
    let printed = match result {
        Ok(outcome) => {
            warn_body(outcome.body_error());
            let mut out = std::io::stdout().lock();
            writeln!(out, "{}", crate::codec::to_json(&outcome.message, true)).map_err(anyhow::Error::from)
        }
        Err(e) => Err(explained(e)),
    };
    (entry, printed, doc)
}

/// A failed call, with the explanation of a GetReplicateInfo refused for its pchannel on a line
/// of its own when the error's words do not already carry it (a deadline seen on this side).
fn explained(e: crate::net::NetError) -> anyhow::Error {
    match e.pchannel_refusal() {
        Some(r) if !e.to_string().contains(crate::wal::replicate_info::ASK_THE_NEW_PRIMARY) => {
            anyhow!("{e}\n{}", r.words())
        }
        _ => e.into(),
    }
}

/// Prints one streamed message; the first error found in a body is kept for the history.
fn print_message(m: &MethodDescriptor, bytes: &[u8], first_error: &mut Option<String>) -> Result<()> {
    let message = crate::net::decode_reply(m, bytes)?;
    if first_error.is_none() {
        *first_error = warn_body(body_error(&message));
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", crate::codec::to_json(&message, true))?;
    Ok(())
}

async fn stream(
    t: &dyn Transport,
    m: &MethodDescriptor,
    request: &CallRequest,
    opts: &CallOptions,
    entry: HistoryEntry,
    mut rec: Option<Recorder>,
) -> (HistoryEntry, Result<()>, Option<Transcript>) {
    let mut first_error = None;
    let mut failure: Option<anyhow::Error> = None;
    let cancel = tokio_util::sync::CancellationToken::new();
    let summary = call_server_stream(t, m, request, opts, &cancel, |bytes| {
        if let Some(r) = rec.as_mut() {
            r.message(&bytes);
        }
        print_message(m, &bytes, &mut first_error).map_err(|e| {
            let words = format!("{e:#}");
            failure = Some(e);
            words
        })
    })
    .await;
    let entry = entry.with_stream(&summary, first_error);
    let doc = rec.map(|r| r.stream(&summary));
    let result = match (summary.end, failure) {
        (_, Some(e)) => Err(e),
        (StreamEnd::Failed(e), None) => Err(e.into()),
        (StreamEnd::Stopped(why), None) => Err(anyhow!(why)),
        _ => Ok(()),
    };
    (entry, result, doc)
}

/// `--save-dump`: the streaming job writes the file; this prints the messages (unless quiet)
/// and a progress line.
async fn to_dump(
    t: Arc<dyn Transport>,
    m: &MethodDescriptor,
    request: CallRequest,
    opts: CallOptions,
    path: PathBuf,
    flags: &CallFlags,
    entry: HistoryEntry,
) -> (HistoryEntry, Result<()>) {
    let (tap, mut messages) = tokio::sync::mpsc::channel::<bytes::Bytes>(64);
    let mut spec = CallStreamSpec::new(t, m.clone(), request, opts, path.clone());
    spec.tap = (!flags.quiet).then_some(tap);
    spec.replace_existing = flags.force;
    let handle = call_stream::spawn(spec);
    let mut progress = handle.progress.clone();
    let progress_line = tokio::spawn(async move {
        while progress.changed().await.is_ok() {
            let p = progress.borrow_and_update().clone();
            let state = match &p.state {
                CallStreamState::Failed(why) => format!("failed: {why}"),
                s => format!("{s:?}").to_lowercase(),
            };
            note_part!(
                "\r{} messages, {}, {:.0} msg/s, {:.1} s, {state}   ",
                p.count,
                crate::fmt::bytes(p.bytes),
                p.rate_per_s,
                p.elapsed.as_secs_f64()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let method = m.clone();
    let printer = tokio::spawn(async move {
        let mut first_error = None;
        let mut failed = None;
        while let Some(bytes) = messages.recv().await {
            if failed.is_none()
                && let Err(e) = print_message(&method, &bytes, &mut first_error)
            {
                failed = Some(e); // keep draining: the dump goes on
            }
        }
        (first_error, failed)
    });
    let result = handle.wait().await;
    let (first_error, print_failure) = printer.await.unwrap_or((None, None));
    progress_line.abort();
    note!();
    match result {
        Err(e) => (entry, Err(e.into())),
        Ok(outcome) => {
            let entry = entry.with_stream(&outcome.summary, first_error);
            let m = &outcome.manifest;
            note!(
                "wrote {} frames ({} bytes) to {}{}",
                m.frames,
                m.bytes,
                path.display(),
                if m.complete { "; complete" } else { "; incomplete" }
            );
            let result = match (outcome.summary.end, print_failure) {
                (StreamEnd::Failed(e), _) => Err(e.into()),
                (_, Some(e)) => Err(e),
                _ => Ok(()),
            };
            (entry, result)
        }
    }
}
