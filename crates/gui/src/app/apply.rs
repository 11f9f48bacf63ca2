//! The one way in: what panes, the shell and the app asked for ([`AppCommand`], through the
//! [`crate::panes::command::CommandSender`]) is drained and applied once per frame, after
//! drawing ([`WalscopeApp::apply_commands`]): plain state changes here, and a job of the
//! [`crate::jobs::JobRegistry`] wherever work is needed (the bodies are in [`crate::work`] and
//! below). Also the app's own view for panes ([`WalscopeApp::view`], [`WalscopeApp::pane`]).
//!
//! Must never: wait. Applying a command starts a job or changes plain state, nothing more.

use crate::WalscopeApp;
use crate::jobs::{JobCtx, JobOwner};
use crate::panes::Pane;
use crate::panes::command::AppCommand;
use crate::panes::file::{FileTab, ReadAs, TabWork};
use crate::panes::outcome::{JobError, JobOutput};
use std::path::PathBuf;

impl WalscopeApp {
    /// Queues a command (it is applied after the frame is drawn).
    pub fn send(&mut self, cmd: AppCommand) {
        self.commands.send(cmd);
    }

    /// A sender for what panes and the shell ask (cloneable; drained once per frame).
    pub fn sender(&self) -> crate::panes::command::CommandSender {
        self.commands.clone()
    }

    /// What a pane may read of the app while it draws; `profiles` is the profile list it shows.
    pub(crate) fn view<'a>(
        &'a self,
        profiles: &'a [(crate::net::profile::ConnectionProfile, bool)],
    ) -> crate::panes::AppView<'a> {
        crate::panes::AppView {
            schemas: &self.schemas,
            profiles_file: self.profile_store().path().to_path_buf(),
            profiles,
            focused_composer: self.focused_composer,
            jobs: self.jobs.running(),
            ended: &self.ended_jobs,
        }
    }

    /// Pane `id` (the app's own Schemas, Connections and first Sync tasks panes, or one of
    /// [`crate::panes::Panes`]); None for the start page and files, drawn by the layout.
    pub(crate) fn pane(&self, id: &crate::panes::PaneId) -> Option<&dyn Pane> {
        use crate::panes::PaneId;
        match id {
            PaneId::Start | PaneId::File(_) => None,
            PaneId::Schemas => Some(&self.schemas_state),
            PaneId::Connections => Some(&self.connections),
            PaneId::Tasks => Some(&self.tasks),
            other => self.panes.pane(other),
        }
    }

    /// Pane `id` to change, beside the read-only view it draws with (see [`Self::pane`]).
    pub(crate) fn view_and_pane<'a>(
        &'a mut self,
        id: &crate::panes::PaneId,
        profiles: &'a [(crate::net::profile::ConnectionProfile, bool)],
    ) -> (crate::panes::AppView<'a>, Option<&'a mut dyn Pane>, &'a crate::panes::command::CommandSender) {
        use crate::panes::PaneId;
        let profiles_file = self.profile_store().path().to_path_buf();
        let WalscopeApp {
            schemas,
            schemas_state,
            connections,
            tasks,
            panes,
            focused_composer,
            jobs,
            ended_jobs,
            commands,
            ..
        } = self;
        let view = crate::panes::AppView {
            schemas,
            profiles_file,
            profiles,
            focused_composer: *focused_composer,
            jobs: jobs.running(),
            ended: ended_jobs,
        };
        let pane: Option<&'a mut dyn Pane> = match id {
            PaneId::Start | PaneId::File(_) => None,
            PaneId::Schemas => Some(schemas_state),
            PaneId::Connections => Some(connections),
            PaneId::Tasks => Some(tasks),
            other => panes.pane_mut(other),
        };
        (view, pane, commands)
    }

    /// Applies what was asked for this frame (the files' work included), in the order asked.
    /// True when anything was asked (what it changed is drawn by the next frame).
    pub fn apply_commands(&mut self) -> bool {
        let cmds = self.commands.drain();
        let any = !cmds.is_empty();
        for cmd in cmds {
            self.apply(cmd);
        }
        any
    }

    fn apply(&mut self, cmd: AppCommand) {
        match cmd {
            AppCommand::Open(path) => self.open(path),
            AppCommand::OpenAs(path, read_as) => self.open_as(path, read_as),
            AppCommand::OpenDemoCopy => self.open_demo_copy(),
            AppCommand::PickFile => self.pick_file(),
            AppCommand::ShowOpenDialog => self.show_open_dialog(None),
            AppCommand::CompletePath { text, cwd, generation } => self.complete_path(text, cwd, generation),
            AppCommand::OpenFromDialog(path) => self.open_from_dialog(path),
            AppCommand::CloseTab(i) => self.close_tab(i),
            AppCommand::DiscardFile(path) => {
                if let Some(i) = self.tabs.iter().position(|t| t.path == path) {
                    self.discard_tab(i);
                }
            }
            AppCommand::Reopen(path, read_as) => {
                // Its pane waits in place while the file opens again.
                if let Some(i) = self.tabs.iter().position(|t| t.path == path) {
                    self.tabs.remove(i);
                    self.active = self.active.min(self.tabs.len().saturating_sub(1));
                    self.open_as(path, read_as);
                }
            }
            AppCommand::FileWork { path, work } => {
                if let Some(i) = self.tabs.iter().position(|t| t.path == path) {
                    self.start_tab_work(i, work);
                }
            }
            AppCommand::Undo(path) => self.with_tab(&path, FileTab::undo),
            AppCommand::Redo(path) => self.with_tab(&path, FileTab::redo),
            AppCommand::AskSave { path, save_as: false } => self.with_tab(&path, FileTab::ask_save),
            AppCommand::AskSave { path, save_as: true } => self.with_tab(&path, FileTab::ask_save_as),
            AppCommand::CancelJob(id) => self.jobs.cancel(id),
            AppCommand::CancelPane(pane) => self.jobs.cancel_owner(&JobOwner::Pane(pane)),
            AppCommand::CancelDump { pane, pchannel } => {
                for live in self.jobs.live_of(&JobOwner::Pane(pane)) {
                    live.dumps()
                        .into_iter()
                        .flatten()
                        .filter(|d| d.pchannel == pchannel)
                        .for_each(|d| d.cancel.cancel());
                }
            }
            AppCommand::LoadSchemas { proto, descriptor_set } => self.load_schemas(proto, descriptor_set),
            AppCommand::Reflect(target) => self.reflect(target),
            AppCommand::RefreshRecent => self.refresh_recent(),
            AppCommand::LoadProfiles => self.load_profiles(),
            AppCommand::CheckProfile(p) => self.test_profile(p, false),
            AppCommand::CheckForm(p) => self.test_profile(p, true),
            AppCommand::SaveProfile { original, profile } => self.save_profile(original, profile),
            AppCommand::DeleteProfile(name) => self.delete_profile(name),
            AppCommand::NewComposer { profile, method, request } => {
                self.new_composer(profile, method, request, None);
            }
            AppCommand::SendMessage { type_name, bytes } => {
                self.new_composer(None, None, bytes, Some(type_name));
            }
            AppCommand::FocusComposer(id) => self.focused_composer = Some(id),
            AppCommand::OpenPane(id) => self.open_pane(id),
            AppCommand::ClosePane(id) => self.close_pane(id),
            AppCommand::Call(spec) => self.call(*spec),
            AppCommand::NewSalvage => {
                self.new_salvage();
            }
            AppCommand::OfferPchannels(id) => self.offer_pchannels(id),
            AppCommand::FetchCheckpoints(id) => self.fetch_checkpoints(id),
            AppCommand::LookInFolder(id) => self.look_in_folder(id),
            AppCommand::StartSalvage(id) => self.start_salvage(id),
            AppCommand::ResumeSalvage { pane, pchannel } => self.resume_salvage(pane, pchannel),
            AppCommand::NewReplay { folder, new_primary } => {
                self.new_replay(folder, new_primary);
            }
            AppCommand::PickReplayFolder(id) => self.pick_replay_folder(id),
            AppCommand::NewTimeline { folder } => {
                self.new_timeline(folder);
            }
            AppCommand::LoadTimeline(id) => self.load_timeline(id),
            AppCommand::OpenFrame { path, frame } => self.open_frame(path, frame),
            AppCommand::PlanReplay(id) => self.plan_replay(id),
            AppCommand::ApplyReplay(id) => self.apply_replay(id),
            AppCommand::CancelReplay(id) => self.cancel_replay(id),
            AppCommand::VerifyReplay(id) => self.verify_replay(id),
            AppCommand::LoadHistory { composer, search } => self.load_history(composer, search),
            AppCommand::SaveStream { composer, from, to, replace } => {
                self.copy_stream(composer, from, to, replace)
            }
            AppCommand::SaveTranscript { composer, doc, to, replace } => {
                self.save_transcript(composer, doc, to, replace)
            }
            AppCommand::OpenTranscript { composer, path } => self.open_transcript(composer, path),
            AppCommand::WatchTasks(id) => self.watch_tasks(id),
            AppCommand::TaskCall { dashboard, change } => self.task_call(dashboard, change),
            AppCommand::DemoFault(f) => self.demo_fault(f),
            AppCommand::NewDashboard => {
                self.new_dashboard();
            }
            AppCommand::Notify(n) => self.notice = Some(n),
            AppCommand::CompareWith(from) => self.compare_with(from),
            AppCommand::Compare(ask) => {
                self.compare(*ask);
            }
            AppCommand::ChooseCompareFile(a) => self.choose_compare_file(a),
            AppCommand::DiffPair { pane, pair } => self.diff_pair(pane, pair),
        }
    }

    /// Opens a pane of a kind registered in [`crate::panes::openable`] (or shows it when open).
    fn open_pane(&mut self, id: crate::panes::PaneId) {
        if !self.panes.contains(&id)
            && let Some((_, _, new)) = crate::panes::openable().into_iter().find(|(_, p, _)| *p == id)
        {
            self.panes.insert(id.clone(), new());
        }
        self.layout.show_pane(id);
    }

    /// A pane's tab was closed: its jobs stop (a salvage's dumps stay resumable, a replay's
    /// journal keeps the rest) and its state goes.
    fn close_pane(&mut self, id: crate::panes::PaneId) {
        use crate::panes::PaneId;
        if let Some(n) = id.number() {
            self.jobs.cancel_owner(&JobOwner::Pane(n));
        }
        // The app's own panes stay (hidden), the first dashboard without its poller.
        match id {
            PaneId::Schemas => self.show_schemas = false,
            PaneId::Connections => self.show_connections = false,
            PaneId::Tasks => {
                self.show_tasks = false;
                self.tasks.poller = None;
            }
            id => {
                self.panes.remove(&id);
            }
        }
    }

    /// Does `what` to the open file `path`, if it is open.
    fn with_tab(&mut self, path: &std::path::Path, what: impl FnOnce(&mut FileTab)) {
        if let Some(t) = self.tabs.iter_mut().find(|t| t.path == path) {
            what(t);
        }
    }

    /// Opens `path` in a new tab, on the job runtime.
    pub fn open(&mut self, path: PathBuf) {
        self.open_as(path, ReadAs::default());
    }

    /// Opens `path` reading it as chosen (framing, type), on the job runtime.
    pub fn open_as(&mut self, path: PathBuf, read_as: ReadAs) {
        // Absolute, so recent and restored files still work from another directory.
        let path = std::path::absolute(&path).unwrap_or(path);
        // A file already open is shown, not opened twice.
        if let Some(i) = self.tabs.iter().position(|t| t.path == path) {
            self.active = i;
            return;
        }
        if self.opening.contains(&path) {
            return;
        }
        self.opening.push(path.clone());
        let (set, wake) = (self.schemas.clone(), self.wake());
        let label = format!("opening {}", path.display());
        self.jobs.spawn_blocking(label, JobOwner::File(path.clone()), move |_| {
            open_job(path, read_as, &set, wake)
        });
    }

    fn load_schemas(&mut self, proto: Option<(PathBuf, Vec<PathBuf>)>, descriptor_set: Option<PathBuf>) {
        let base = self.schemas.clone();
        let what = match (&proto, &descriptor_set) {
            (Some((f, _)), _) => f.display().to_string(),
            (None, Some(d)) => d.display().to_string(),
            (None, None) => return,
        };
        self.schemas_state.last_load = None;
        self.jobs.spawn_blocking(format!("loading {what}"), JobOwner::Schemas, move |_| {
            let mut next = (*base).clone();
            match (proto, descriptor_set) {
                (Some((file, includes)), _) => next.add_proto_files(&includes, &[file])?,
                (None, Some(path)) => next.add_descriptor_set(&path)?,
                (None, None) => 0,
            };
            Ok(JobOutput::Schemas { set: Box::new(next), summary: "loaded".into() })
        });
    }

    fn reflect(&mut self, target: String) {
        let profile = self.connections.profiles().into_iter().map(|(p, _)| p).find(|p| p.name == target);
        // An address (not a profile's name) with a password in it is never connected to, nor
        // shown in the job's label.
        if profile.is_none()
            && let Err(words) = crate::net::edges::check_endpoint(&target)
        {
            self.schemas_state.last_load = Some(Err(crate::panes::schemas::LoadFailed::Address(words)));
            return;
        }
        let settings = match profile {
            Some(p) => crate::net::grpc_settings(
                &p,
                &crate::net::ConnectOptions {
                    metadata: crate::net::ProfileMetadata::Connection,
                    ..Default::default()
                },
            ),
            None => Ok(crate::net::grpc::GrpcSettings::new(target.clone())),
        };
        let settings = match settings {
            Ok(s) => s,
            Err(e) => {
                self.schemas_state.last_load = Some(Err(crate::panes::schemas::LoadFailed::Settings(e)));
                return;
            }
        };
        self.schemas_state.last_load = None;
        let base = self.schemas.clone();
        self.jobs.spawn(format!("reflection from {target}"), JobOwner::Schemas, move |_| async move {
            let fetch = async {
                let t = crate::net::grpc::GrpcTransport::connect(&settings).await?;
                let mut next = (*base).clone();
                let services = crate::net::reflection::load(&t, &mut next).await?;
                let summary = format!("server reflection at {}: {}", settings.endpoint, services.join(", "));
                Ok::<_, JobError>(JobOutput::Schemas { set: Box::new(next), summary })
            };
            tokio::time::timeout(std::time::Duration::from_secs(20), fetch).await.unwrap_or_else(|_| {
                Err(JobError::NoAnswer { endpoint: settings.endpoint.to_string(), secs: 20 })
            })
        });
    }

    fn refresh_recent(&mut self) {
        if let Some(check) = self.recent.start_check() {
            self.jobs.spawn_blocking("checking recent files", JobOwner::App, move |_| {
                check();
                Ok(JobOutput::Done(String::new()))
            });
        }
    }

    /// Runs what a file tab queued (a save, a size sort) as a job.
    fn start_tab_work(&mut self, i: usize, work: TabWork) {
        let tab = &self.tabs[i];
        let path = tab.path.clone();
        match work {
            TabWork::Save(save) => {
                let label = format!("saving {}", save.target.display());
                let (set, wake) = (self.schemas.clone(), self.wake());
                self.jobs.spawn_blocking(label, JobOwner::File(path.clone()), move |_| {
                    let target = save.target.clone();
                    let outcome = crate::work::save::save(&save)
                        .map_err(|reason| JobError::File { path: target.clone(), reason })?;
                    // Read back from disk, so what is shown is what was written.
                    let reopened = save
                        .needs_reopen(&outcome)
                        .then(|| FileTab::open_as(&target, &set, wake, &save.read_as).map(Box::new));
                    Ok(JobOutput::Saved { tab: path, target, outcome, reopened })
                });
            }
            TabWork::WatchScan(scan) => {
                let (dump, stop) = (tab.dump.clone(), scan.clone());
                // Its end says nothing here: the filter bar shows the matches for as long as the
                // filter is applied, and a words left in the status bar would outlive a cleared
                // filter ("filtering: 0 matches" with no filter).
                let probe = Box::new(move || {
                    let total = dump.frame_count().max(1);
                    let done = scan.is_done();
                    let progress = crate::jobs::JobProgress {
                        fraction: Some(scan.scanned() as f32 / total as f32),
                        text: if done {
                            String::new()
                        } else {
                            format!("filtering: {} matches", scan.match_count())
                        },
                    };
                    (progress, done)
                });
                let every = crate::jobs::Pace::Working(std::time::Duration::from_millis(100));
                self.jobs.watch(
                    "filter scan",
                    JobOwner::File(path),
                    every,
                    probe,
                    Box::new(move || stop.cancel()),
                );
            }
            TabWork::ChunkGroup(ask) => {
                let label = format!("finding the chunks of frame {}", ask.frame);
                self.jobs.spawn_blocking(label, JobOwner::File(path.clone()), move |_: JobCtx| {
                    Ok(JobOutput::ChunkGroup { tab: path, view: ask.run() })
                });
            }
            TabWork::Sort(sort) => {
                let label = format!("sorting {} rows by size", sort.rows());
                self.jobs.spawn_blocking(label, JobOwner::File(path.clone()), move |_: JobCtx| {
                    Ok(JobOutput::SizeOrder { tab: path, order: Box::new(sort.run()) })
                });
            }
        }
    }
}

/// Opens a file tab (reads at most the detection sample; indexing goes on in the background).
pub(crate) fn open_job(
    path: PathBuf,
    read_as: ReadAs,
    set: &crate::schema::SchemaSet,
    wake: crate::dump::background::Wake,
) -> crate::panes::outcome::JobResult {
    if let Some(doc) = crate::work::transcript_in(&path)? {
        return Ok(JobOutput::TranscriptFile { path, doc });
    }
    // The reason names the file already.
    let tab = FileTab::open_as(&path, set, wake, &read_as)?;
    Ok(JobOutput::Opened { path, tab: Box::new(tab) })
}
