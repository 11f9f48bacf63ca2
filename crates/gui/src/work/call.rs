//! The app's handlers for the composer and the Connections pane: testing, saving and deleting
//! profiles, opening composers (also from a dump frame: "Send..."), unary calls and streams,
//! and the call history. Each call is recorded in the history on disk with its exact request
//! bytes, whatever its outcome.
//!
//! Must never: wait in a frame, or record a secret (the history drops `authorization`).

use crate::WalscopeApp;
use crate::jobs::{FileFailed, JobOwner, Live, LiveStream};
use crate::net::history::{HistoryEntry, HistoryStore};
use crate::net::profile::ConnectionProfile;
use crate::net::transcript::record::sent_metadata;
use crate::net::transcript::{Recorder, Target};
use crate::panes::PaneId;
use crate::panes::command::CallSpec;
use crate::panes::composer::{ComposerState, Response, StreamView};
use crate::panes::outcome::{JobError, JobOutput};
use std::sync::Arc;
use std::time::Instant;

impl WalscopeApp {
    /// Tests a profile: a saved one (`of_form` false: its card shows the result) or the
    /// profile form's unsaved settings.
    pub(crate) fn test_profile(&mut self, profile: ConnectionProfile, of_form: bool) {
        let pool = self.schemas.pool().clone();
        let label = format!("testing {}", profile.name);
        self.jobs.spawn(label, JobOwner::Connections, move |_| async move {
            let report = Box::new(crate::net::probe::test_connection(&profile, &pool).await);
            Ok(if of_form { JobOutput::FormProbed(report) } else { JobOutput::Probed(report) })
        });
    }

    pub(crate) fn save_profile(&mut self, original: Option<String>, profile: ConnectionProfile) {
        let label = format!("saving profile {}", profile.name);
        let store = self.profile_store();
        self.jobs.spawn_blocking(label, JobOwner::Connections, move |_| {
            let what = format!("saved profile {} in {}", profile.name, store.path().display());
            store.replace(original.as_deref(), profile)?;
            Ok(JobOutput::ProfilesSaved { profiles: store.load()?, what })
        });
    }

    pub(crate) fn delete_profile(&mut self, name: String) {
        let store = self.profile_store();
        self.jobs.spawn_blocking(format!("deleting profile {name}"), JobOwner::Connections, move |_| {
            let what = if store.remove(&name)? {
                format!("deleted profile {name} from {}", store.path().display())
            } else {
                format!("{name} was not in {}", store.path().display())
            };
            Ok(JobOutput::ProfilesSaved { profiles: store.load()?, what })
        });
    }

    /// Opens a new composer pane, with a profile, a method and a request when given. Without a
    /// method, a request of a type some method takes preselects that method.
    pub fn new_composer(
        &mut self,
        profile: Option<String>,
        method: Option<String>,
        request: Vec<u8>,
        type_name: Option<String>,
    ) -> u64 {
        let id = self.panes.next_number();
        let mut c = ComposerState::new(id);
        let pool = self.schemas.pool().clone();
        c.profile = profile.unwrap_or_else(|| {
            self.connections.profiles().first().map(|(p, _)| p.name.clone()).unwrap_or_default()
        });
        let method =
            method.or_else(|| type_name.and_then(|t| crate::panes::composer::method_for_request(&pool, &t)));
        match method {
            Some(m) => c.load(&pool, &m, request),
            None => c.refresh(&pool),
        }
        self.panes.insert(PaneId::Composer(id), Box::new(c));
        self.focused_composer = Some(id);
        self.layout.show_pane(PaneId::Composer(id));
        id
    }

    pub(crate) fn call(&mut self, spec: CallSpec) {
        let i = PaneId::Composer(spec.composer);
        if !self.panes.contains(&i) {
            return;
        }
        let set = self.schemas.clone();
        let owner = JobOwner::Pane(spec.composer);
        let label = format!("{} via {}", spec.method, spec.profile.name);
        if spec.stream {
            self.start_stream(i, spec, set);
            return;
        }
        let composer = spec.composer;
        let history = self.history_store();
        let job = self.jobs.spawn(label, owner, move |_| async move {
            let m = method(&set, &spec.method)?;
            let (entry, opts) = history_entry(&spec);
            let started = Instant::now();
            let p = &spec.profile;
            let target = Target::new(Some(&p.name), &p.endpoint, p.transport);
            let (result, doc) = match crate::net::connect(&spec.profile).await {
                Ok(t) => {
                    let sent = sent_metadata(t.as_ref(), &opts);
                    let rec = Recorder::start(target, &m, &spec.request, &sent, opts.timeout);
                    let req = crate::net::CallRequest::Bytes(spec.request.clone().into());
                    let result = crate::net::call_unary(t.as_ref(), &m, &req, &opts).await;
                    let doc = rec.unary(&result);
                    (result, doc)
                }
                Err(e) => {
                    let rec = Recorder::start(target, &m, &spec.request, &opts.metadata, opts.timeout);
                    let result = Err(e);
                    let doc = rec.unary(&result);
                    (result, doc)
                }
            };
            let entry = entry.with_unary(&result, started.elapsed());
            record(history, entry).await;
            let transcript = Some(Box::new(doc));
            Ok(JobOutput::Called { composer, result: result.map(Box::new), transcript })
        });
        if let Some(c) = self.panes.get_mut::<ComposerState>(&i) {
            c.response = Response::Waiting { job, since: Instant::now() };
        }
    }

    /// A server stream: written to a dump in the streams folder as it arrives, its newest
    /// messages shown live; Stop ends it cleanly (the dump stays whole).
    fn start_stream(&mut self, i: PaneId, spec: CallSpec, set: Arc<crate::schema::SchemaSet>) {
        let m = match method(&set, &spec.method) {
            Ok(m) => m,
            Err(e) => {
                if let Some(c) = self.panes.get_mut::<ComposerState>(&i) {
                    c.refused = Some(e.to_string());
                }
                return;
            }
        };
        let history = self.history_store();
        let path = self.streams_dir().join(format!("{}-{}.dump", walscope_core::time::now_ms(), m.name()));
        let out = path.clone();
        let composer = spec.composer;
        let label = format!("{} via {}", spec.method, spec.profile.name);
        let job = self.jobs.spawn_graceful(label, JobOwner::Pane(composer), move |ctx| async move {
            let (entry, opts) = history_entry(&spec);
            if let Some(dir) = out.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| JobError::File { path: dir.to_path_buf(), reason: e.into() })?;
            }
            let p = &spec.profile;
            let target = Target::new(Some(&p.name), &p.endpoint, p.transport);
            let t = match crate::net::connect(&spec.profile).await {
                Ok(t) => t,
                Err(e) => {
                    let rec = Recorder::start(target, &m, &spec.request, &opts.metadata, opts.timeout);
                    let transcript = Some(Box::new(rec.unary(&Err(e.clone()))));
                    record(history, entry.with_unary(&Err(e.clone()), std::time::Duration::ZERO)).await;
                    return Ok(JobOutput::Called { composer, result: Err(e), transcript });
                }
            };
            let sent = sent_metadata(t.as_ref(), &opts);
            let rec = Recorder::start(target, &m, &spec.request, &sent, opts.timeout)
                .keeping_at_most(TRANSCRIPT_STREAM_BYTES);
            let request = crate::net::CallRequest::Bytes(spec.request.clone().into());
            let mut stream_spec =
                walscope_ops::jobs::call_stream::CallStreamSpec::new(t, m, request, opts, out);
            // Every message also comes here, after the dump has it, for the transcript.
            let mut tapped = tap_into(&mut stream_spec.tap);
            let recorder = tokio::spawn(async move {
                let mut rec = rec;
                while let Some(message) = tapped.recv().await {
                    rec.message(message.as_ref());
                }
                rec
            });
            let handle = walscope_ops::jobs::call_stream::spawn(stream_spec);
            let tail = LiveStream { progress: handle.progress.clone(), ring: handle.ring.clone() };
            ctx.share(Live::Stream(tail.clone()));
            let stop = handle.cancel.clone();
            let cancel = ctx.cancel.clone();
            let watcher = tokio::spawn(async move {
                cancel.cancelled().await;
                stop.cancel();
            });
            let result = handle.wait().await;
            watcher.abort();
            // The job dropped its end of the tap: the recorder has every message.
            let rec = recorder.await.ok();
            let mut transcript = None;
            let summary = match result {
                Ok(o) => {
                    transcript = rec.map(|r| Box::new(r.stream(&o.summary)));
                    record(history, entry.with_stream(&o.summary, None)).await;
                    Ok(o.summary)
                }
                Err(e) => {
                    let failed = crate::net::NetError::Unsupported(format!("the stream's dump: {e}"));
                    record(history, entry.with_unary(&Err(failed), std::time::Duration::ZERO)).await;
                    Err(e)
                }
            };
            Ok(JobOutput::Streamed { composer, summary, tail: Some(tail), transcript })
        });
        let Some(c) = self.panes.get_mut::<ComposerState>(&i) else { return };
        c.response = Response::Stream(Box::new(StreamView {
            job,
            live: None,
            path: path.clone(),
            selected: None,
            summary: None,
            save_as: path.with_extension("copy.dump").display().to_string(),
            save_replace: false,
            save_note: None,
        }));
    }

    pub(crate) fn load_history(&mut self, composer: u64, search: String) {
        let store = self.history_store();
        self.jobs.spawn_blocking("reading the call history", JobOwner::Pane(composer), move |_| {
            let search = Some(search.as_str()).filter(|s| !s.trim().is_empty());
            let entries = store.list(search)?;
            Ok(JobOutput::History { composer, entries })
        });
    }

    pub(crate) fn copy_stream(
        &mut self,
        composer: u64,
        from: std::path::PathBuf,
        to: std::path::PathBuf,
        replace: bool,
    ) {
        self.jobs.spawn_blocking(format!("saving {}", to.display()), JobOwner::Pane(composer), move |_| {
            copy_dump(&from, &to, replace).map_err(|reason| JobError::File { path: to.clone(), reason })?;
            Ok(JobOutput::StreamSaved { composer, path: to })
        });
    }
}

fn method(set: &crate::schema::SchemaSet, full: &str) -> Result<prost_reflect::MethodDescriptor, JobError> {
    Ok(crate::net::find_method(set.pool(), full)?)
}

/// A channel whose sender goes in `slot` (a stream job's tap); its receiver.
fn tap_into<T>(slot: &mut Option<tokio::sync::mpsc::Sender<T>>) -> tokio::sync::mpsc::Receiver<T> {
    let (tx, rx) = tokio::sync::mpsc::channel(256);
    *slot = Some(tx);
    rx
}

/// The bytes of a stream's messages a composer's transcript keeps, decoded in memory (JSON
/// takes many times the bytes); the dump keeps them all.
const TRANSCRIPT_STREAM_BYTES: u64 = 4 << 20;

/// The history entry and call options of a call.
fn history_entry(spec: &CallSpec) -> (HistoryEntry, crate::net::CallOptions) {
    let mut opts = spec.profile.call_options();
    opts.metadata.extend(spec.metadata.iter().cloned());
    if let Some(d) = spec.deadline {
        opts.timeout = Some(d);
    }
    let entry = HistoryEntry::for_call(
        Some(&spec.profile.name),
        &spec.profile.endpoint,
        spec.profile.transport,
        &spec.method,
        &spec.request,
        &opts,
    );
    (entry, opts)
}

/// Appends to the history off the runtime's workers; a history that cannot be written never
/// fails the call (the reply is what matters).
async fn record(store: HistoryStore, entry: HistoryEntry) {
    let _ = tokio::task::spawn_blocking(move || store.append(entry)).await;
}

/// Copies a dump and its manifest (atomically each). An existing target is refused unless
/// `replace` (then kept as .bak); the dump itself is never its own copy.
fn copy_dump(from: &std::path::Path, to: &std::path::Path, replace: bool) -> Result<(), FileFailed> {
    let (m_from, m_to) = (crate::dump::manifest_path(from), crate::dump::manifest_path(to));
    for target in [to, m_to.as_path()] {
        crate::atomic::check_output(target, &[from, &m_from], replace).map_err(|e| match e {
            crate::atomic::OutputError::Exists { path } => FileFailed::ExistsUnticked(path),
            e => FileFailed::Refused(e),
        })?;
    }
    let read = |path: &std::path::Path| {
        std::fs::read(path).map_err(|source| FileFailed::Read { path: path.to_path_buf(), source })
    };
    crate::atomic::atomic_write(to, &read(from)?, true)?;
    if m_from.exists() {
        crate::atomic::atomic_write(&m_to, &read(&m_from)?, true)?;
    }
    Ok(())
}
