//! `walscope salvage`: one pchannel into a file (`--pchannel X --out FILE`), or several in
//! parallel into a folder (`--pchannel` repeated, or `--all-pchannels` from the old primary's
//! replicate configuration, with `--out-dir DIR`: one `<pchannel>.dump` each and the folder's
//! `salvage.json`), with one progress line per dump (indicatif) and a per-pchannel summary at
//! the end. `--resume` continues a file or a whole folder. Both forms skip what the new primary
//! already has unless `--keep-replicated`, and record the choice in the manifests.
//! `--new-primary`/`--old-primary` take an address or a saved profile's name, as `call` does.
//!
//! Must never: start over a folder that holds a salvage, print a secret, or leave a dump whose
//! manifest is ahead of its bytes (the salvage job guarantees that; Ctrl-C keeps everything up
//! to the last sync).

use super::net_cmd::{ConnArgs, DEFAULT_TIMEOUT, Target, TransportKind, runtime};
use crate::net::profile::ConnectionProfile;
use crate::net::{ConnectOptions, ProfileMetadata};
use crate::salvage::checkpoint::pchannels_from_configuration;
use crate::salvage::folder::FolderManifest;
use crate::salvage::job::{self as salvage, SalvageOptions, SalvageProgress, SalvageSpec, SalvageState};
use crate::salvage::report::{AnalyzeOptions, analyze_dump};
use crate::salvage::set::{self as salvage_set, RunOptions, SalvageSetSpec, SetJob};
use crate::time::format_timetick;
use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Args, Debug, Clone)]
pub struct SalvageArgs {
    /// The promoted cluster, which holds the salvage checkpoints: an address or a saved
    /// profile's name.
    #[arg(long, value_name = "ENDPOINT|PROFILE")]
    pub new_primary: Option<String>,
    /// The failed cluster, whose WAL is dumped: an address or a saved profile's name (with
    /// `--out-dir DIR --resume`, the folder's old primary by default).
    #[arg(long, value_name = "ENDPOINT|PROFILE")]
    pub old_primary: Option<String>,
    /// Cluster id of the old primary (its msgChannel.chanNamePrefix.cluster, e.g. by-dev-old).
    #[arg(long, value_name = "ID")]
    pub source_cluster_id: Option<String>,
    /// A pchannel to salvage, e.g. by-dev-rootcoord-dml_0 (repeatable with --out-dir).
    #[arg(long, value_name = "NAME")]
    pub pchannel: Vec<String>,
    /// Every pchannel the old primary's replicate configuration lists for the source cluster.
    #[arg(long, conflicts_with = "pchannel")]
    pub all_pchannels: bool,
    /// One pchannel into this file.
    #[arg(long, value_name = "FILE", conflicts_with = "out_dir")]
    pub out: Option<PathBuf>,
    /// Every pchannel into this folder: one `<pchannel>.dump` each, and `salvage.json`.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Stop after this timetick (default: run until Ctrl-C).
    #[arg(long, value_name = "T", default_value_t = 0)]
    pub end_timetick: u64,
    /// Continue FILE from its manifest, or every unfinished dump of DIR.
    #[arg(long)]
    pub resume: bool,
    /// Keep the messages the new primary already has (`_tt` at or below the checkpoint's).
    #[arg(long)]
    pub keep_replicated: bool,
    /// Reconnects after a dropped stream (each only from the last written message).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub retries: u32,
    /// With --out FILE: start over although FILE holds a dump (it and its manifest are moved
    /// aside as .bak when the first frame arrives).
    #[arg(long, conflicts_with = "resume")]
    pub force: bool,
}

fn resolve(what: &str, endpoint: Option<&str>, conn: &ConnArgs) -> Result<ConnectionProfile> {
    let e = endpoint.ok_or_else(|| anyhow!("--{what} is required"))?;
    Ok(Target::resolve(e, TransportKind::Grpc, conn)?.profile)
}

fn timeout_of(conn: &ConnArgs, p: &ConnectionProfile) -> Result<Duration> {
    Ok(conn.timeout_flag()?.or(p.timeout_secs.map(Duration::from_secs)).unwrap_or(DEFAULT_TIMEOUT))
}

/// `salvage`: a file or a folder, started or resumed.
pub fn salvage(args: &SalvageArgs, conn: &ConnArgs) -> Result<()> {
    match (&args.out, &args.out_dir) {
        (Some(out), None) => single(args, conn, out),
        (None, Some(dir)) if args.resume => resume_folder(args, conn, dir),
        (None, Some(dir)) => start_folder(args, conn, dir),
        _ => bail!("give --out FILE (one pchannel) or --out-dir DIR (one dump per pchannel)"),
    }
}

fn single(args: &SalvageArgs, conn: &ConnArgs, out: &Path) -> Result<()> {
    let [pchannel] = args.pchannel.as_slice() else {
        bail!("--out FILE takes exactly one --pchannel; use --out-dir DIR for several");
    };
    let new = resolve("new-primary", args.new_primary.as_deref(), conn)?;
    let old = resolve("old-primary", args.old_primary.as_deref(), conn)?;
    let cluster = args.source_cluster_id.clone().ok_or_else(|| anyhow!("--source-cluster-id is required"))?;
    let connect = conn.connect_options();
    let on_connection = ConnectOptions { metadata: ProfileMetadata::Connection, ..connect };
    let spec = SalvageSpec {
        new_primary: crate::net::grpc_settings(&new, &on_connection)?,
        old_primary: crate::net::grpc_settings(&old, &on_connection)?,
        source_cluster_id: cluster,
        pchannel: pchannel.clone(),
        out: out.to_path_buf(),
        end_timetick: args.end_timetick,
        resume: args.resume,
        max_retries: args.retries,
        timeout: timeout_of(conn, &new)?,
        sync: crate::dump::SyncPolicy::default(),
    };
    if !args.resume && !args.force && crate::dump::lazy::holds_dump(out) {
        bail!(
            "{}: {}",
            out.display(),
            crate::dump::lazy::exists_words(out, "Continue it with --resume, or ")
        );
    }
    let options = SalvageOptions {
        skip_replicated: !args.keep_replicated,
        replace_existing: args.force,
        ..Default::default()
    };
    runtime()?.block_on(async {
        let handle = salvage::spawn_with(spec, options);
        let job = SetJob { pchannel: pchannel.clone(), file: out.to_path_buf(), handle };
        let mut ends = watch(vec![job]).await;
        let (_, result) = ends.pop().ok_or_else(|| anyhow!("the salvage task vanished"))?;
        let outcome = result?;
        if outcome.manifest.frames == 0 && !out.exists() {
            note!("no frame arrived: nothing was written to {}", out.display());
            if outcome.cancelled {
                bail!("interrupted before the first frame: {} was not created", out.display());
            }
            return Ok(());
        }
        note!(
            "wrote {} frames ({} in this run) to {}{}",
            outcome.manifest.frames,
            outcome.written,
            out.display(),
            if outcome.manifest.complete { "; complete" } else { "; resumable with --resume" }
        );
        if outcome.cancelled {
            bail!("interrupted: {} is not complete; continue it with --resume", out.display());
        }
        Ok(())
    })
}

fn start_folder(args: &SalvageArgs, conn: &ConnArgs, dir: &Path) -> Result<()> {
    let new = resolve("new-primary", args.new_primary.as_deref(), conn)?;
    let old = resolve("old-primary", args.old_primary.as_deref(), conn)?;
    let cluster = args.source_cluster_id.clone().ok_or_else(|| anyhow!("--source-cluster-id is required"))?;
    let run = RunOptions {
        max_retries: args.retries,
        timeout: timeout_of(conn, &new)?,
        connect: conn.connect_options(),
        ..Default::default()
    };
    runtime()?.block_on(async {
        let pchannels = if args.all_pchannels {
            pchannels_from_configuration(&old, Some(&cluster), &run.connect, run.timeout)
                .await
                .context("--all-pchannels: GetReplicateConfiguration on the old primary")?
        } else if args.pchannel.is_empty() {
            bail!("name the pchannels with --pchannel (repeatable) or --all-pchannels");
        } else {
            args.pchannel.clone()
        };
        let mut spec = SalvageSetSpec::new(new, old, &cluster, pchannels, dir);
        spec.end_timetick = Some(args.end_timetick).filter(|t| *t != 0);
        spec.skip_replicated = !args.keep_replicated;
        spec.run = run;
        let set = salvage_set::start(spec).await?;
        if let Some(c) = &set.checkpoints {
            for r in &c.reports {
                match &r.result {
                    Ok(k) => note!(
                        "{}: checkpoint {} at {} (dump {})",
                        r.pchannel,
                        k.message_id_display,
                        k.time_utc,
                        k.pchannel
                    ),
                    Err(e) => note!("{}: {e}", r.pchannel),
                }
            }
        }
        let ends = watch(set.jobs).await;
        finish(dir, ends)
    })
}

fn resume_folder(args: &SalvageArgs, conn: &ConnArgs, dir: &Path) -> Result<()> {
    let folder = FolderManifest::load(dir)?;
    // The folder's old primary: its saved profile when there is one, else its address.
    let named = folder.old_primary.profile.clone().unwrap_or_else(|| folder.old_primary.endpoint.clone());
    let old = match args.old_primary.as_deref() {
        Some(e) => resolve("old-primary", Some(e), conn)?,
        None => {
            Target::resolve(&named, TransportKind::Grpc, conn)
                .or_else(|_| Target::resolve(&folder.old_primary.endpoint, TransportKind::Grpc, conn))?
                .profile
        }
    };
    let run = RunOptions {
        max_retries: args.retries,
        timeout: timeout_of(conn, &old)?,
        connect: conn.connect_options(),
        end_timetick: Some(args.end_timetick).filter(|t| *t != 0),
        ..Default::default()
    };
    runtime()?.block_on(async {
        let set = salvage_set::resume(dir, &old, &run).await?;
        if set.jobs.is_empty() {
            note!("{}: every dump is complete; nothing to resume", dir.display());
        }
        let ends = watch(set.jobs).await;
        finish(dir, ends)
    })
}

type Ends = Vec<(String, Result<salvage::SalvageOutcome, salvage::SalvageError>)>;

/// Why the progress loop woke.
enum Woke {
    Ended(usize, Box<Result<Result<salvage::SalvageOutcome, salvage::SalvageError>, tokio::task::JoinError>>),
    Redraw,
    Interrupted,
}

/// One progress line per job until every job ends.
async fn watch(jobs: Vec<SetJob>) -> Ends {
    let bars = MultiProgress::new();
    let width = jobs.iter().map(|j| j.pchannel.len()).max().unwrap_or(0);
    let mut running: Vec<(SetJob, ProgressBar)> = jobs
        .into_iter()
        .map(|j| {
            let bar = bars.add(ProgressBar::new(1000));
            bar.set_prefix(format!("{:width$}", j.pchannel));
            (j, bar)
        })
        .collect();
    let mut ends = Vec::new();
    // Ctrl-C cancels the jobs rather than killing the process: each syncs its dump and
    // manifest and ends cancelled, resumable with --resume.
    let interrupt = tokio::signal::ctrl_c();
    tokio::pin!(interrupt);
    let mut interrupted = false;
    while !running.is_empty() {
        for (job, bar) in &running {
            draw(bar, &job.handle.progress.borrow());
        }
        // Woken by the first job to end (not by the next redraw), so the command returns as
        // soon as the last dump is closed.
        let woke = {
            let ended = futures::future::select_all(running.iter_mut().map(|(j, _)| &mut j.handle.task));
            tokio::select! {
                (result, i, _) = ended => Woke::Ended(i, Box::new(result)),
                _ = tokio::time::sleep(Duration::from_millis(200)) => Woke::Redraw,
                _ = &mut interrupt, if !interrupted => Woke::Interrupted,
            }
        };
        match woke {
            Woke::Ended(i, result) => {
                let (job, bar) = running.remove(i);
                draw(&bar, &job.handle.progress.borrow().clone());
                bar.finish();
                ends.push((job.pchannel, salvage::outcome_of(*result)));
            }
            Woke::Redraw => {}
            Woke::Interrupted => {
                interrupted = true;
                let _ = bars.println(
                    "interrupted: stopping; what was received stays on disk, resumable with --resume",
                );
                for (job, _) in &running {
                    job.handle.cancel.cancel();
                }
            }
        }
    }
    ends
}

fn draw(bar: &ProgressBar, p: &SalvageProgress) {
    let state = match &p.state {
        SalvageState::Reconnecting { attempt, reason } => format!("reconnecting ({attempt}): {reason}"),
        SalvageState::Failed(e) => format!("failed: {e}"),
        s => format!("{s:?}").to_lowercase(),
    };
    let tt = if p.last_timetick == 0 { "-".to_string() } else { format_timetick(p.last_timetick) };
    let eta = match p.eta() {
        Some(d) if d < Duration::from_secs(1) => ", <1 s left".to_string(),
        Some(d) => format!(", {} s left", d.as_secs()),
        None => String::new(),
    };
    let msg = format!(
        "{} frames, {}, {:.0} msg/s, tt {tt}{eta}, {state}",
        p.frames,
        crate::fmt::bytes(p.bytes),
        p.rate_per_s
    );
    let style = match p.fraction() {
        Some(f) => {
            bar.set_position((f * 1000.0) as u64);
            ProgressStyle::with_template("{prefix} [{bar:24}] {percent:>3}% {msg}")
        }
        None => ProgressStyle::with_template("{prefix} {spinner} {msg}"),
    };
    if let Ok(s) = style {
        bar.set_style(s.progress_chars("=> "));
    }
    bar.set_message(msg);
    bar.tick();
}

/// The per-pchannel summary on stdout; an error when any dump failed.
fn finish(dir: &Path, ends: Ends) -> Result<()> {
    let mut folder = FolderManifest::load(dir)?;
    folder.refresh(dir);
    let mut failed = 0;
    say!("salvage of {} into {}", folder.source_cluster_id, dir.display());
    for e in &folder.pchannels {
        let Some(file) = &e.file else {
            say!("{}: no dump: {}", e.pchannel, e.no_checkpoint.as_deref().unwrap_or("no checkpoint"));
            failed += 1;
            continue;
        };
        let this_run = ends.iter().find(|(p, _)| *p == e.pchannel).map(|(_, r)| r);
        let state = match this_run {
            Some(Err(err)) => {
                failed += 1;
                format!("FAILED, resumable with --resume: {err}")
            }
            Some(Ok(o)) if o.cancelled => "cancelled, resumable with --resume".to_string(),
            _ if e.complete => "complete".to_string(),
            _ => "not complete, resumable with --resume".to_string(),
        };
        say!("{}: {file}: {state}", e.pchannel);
        if let Ok(r) = analyze_dump(&dir.join(file), AnalyzeOptions::default()) {
            for n in &r.notes {
                say!("    {n}");
            }
            if !r.types.is_empty() {
                let types: Vec<String> = r.types.iter().map(|(t, n)| format!("{t} {n}")).collect();
                say!("    types: {}", types.join(", "));
            }
        }
    }
    let complete = folder.pchannels.iter().filter(|e| e.complete).count();
    say!("{complete} of {} dumps complete", folder.pchannels.len());
    if failed > 0 {
        bail!("{failed} of {} pchannels not salvaged (see above)", folder.pchannels.len());
    }
    Ok(())
}
