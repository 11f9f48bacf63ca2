//! The app's handlers for the sync-task dashboards' commands and reading profiles.json:
//! watching a SyncTool (a poller started once its profile connects) and the dashboards' calls
//! (create, delete, clear_all: a typed [`TaskChange`]), through the one SyncTool client. Each starts a job; what a job
//! finds goes back to the dashboard that asked through [`crate::panes::command`].
//!
//! Must never: run in a panel, or wait in a frame.

use crate::WalscopeApp;
use crate::datasync::TaskChange;
use crate::jobs::JobOwner;
use crate::net::profile::ConnectionProfile;
use crate::panes::PaneId;
use crate::panes::outcome::{JobError, JobOutput};
use crate::panes::tasks::{ActionFailed, TasksState};
use std::time::Duration;

impl WalscopeApp {
    pub(crate) fn load_profiles(&mut self) {
        self.connections.loading = true;
        let store = self.profile_store();
        self.jobs.spawn_blocking("reading connection profiles", JobOwner::Connections, move |_| {
            Ok(JobOutput::Profiles(store.load()?))
        });
    }

    /// The dashboard `id`, if open.
    pub fn dashboard_mut(&mut self, id: u64) -> Option<&mut TasksState> {
        if id == crate::panes::tasks::TASKS_DASHBOARD {
            return Some(&mut self.tasks);
        }
        self.panes.get_mut(&PaneId::Dashboard(id))
    }

    /// The dashboard's SyncTool profile (the one watched, else the one chosen); when there is
    /// none, the dashboard says so.
    fn dashboard_profile(&mut self, id: u64) -> Option<ConnectionProfile> {
        let name = self.dashboard_mut(id).map(|d| d.profile.clone()).unwrap_or_default();
        self.profile_named(id, &name)
    }

    /// The profile a dashboard's calls go to: the one it watches (what its board shows).
    fn watched_profile(&mut self, id: u64) -> Option<ConnectionProfile> {
        let name = self
            .dashboard_mut(id)
            .and_then(|d| d.watched.clone().or_else(|| Some(d.profile.clone())))
            .unwrap_or_default();
        self.profile_named(id, &name)
    }

    fn profile_named(&mut self, id: u64, name: &str) -> Option<ConnectionProfile> {
        let found = self.connections.profiles().into_iter().map(|(p, _)| p).find(|p| p.name == name);
        if found.is_none()
            && let Some(d) = self.dashboard_mut(id)
        {
            d.last_action = Some(Err(ActionFailed::NoProfile(name.to_string())));
        }
        found
    }

    /// Opens another sync-task dashboard.
    pub fn new_dashboard(&mut self) -> u64 {
        let id = self.panes.next_number();
        let mut d = TasksState { id, ..Default::default() };
        d.profile = self.tasks.profile.clone();
        self.panes.insert(PaneId::Dashboard(id), Box::new(d));
        self.layout.show_pane(crate::panes::PaneId::Dashboard(id));
        id
    }

    /// Starts polling the dashboard's SyncTool (a poller already running for it stops).
    pub(crate) fn watch_tasks(&mut self, id: u64) {
        let Some(profile) = self.dashboard_profile(id) else { return };
        let owner = JobOwner::Pane(id);
        // Only the poller and its connection stop; a create or delete already sent goes on.
        let watching = self.dashboard_mut(id).map(|d| std::mem::take(&mut d.watch_jobs)).unwrap_or_default();
        for job in watching {
            self.jobs.cancel(job);
        }
        if let Some(d) = self.dashboard_mut(id) {
            d.poller = None;
            d.watched = Some(profile.name.clone());
        }
        let Some(rt) = self.runtime() else { return };
        let every = Duration::from_secs(self.dashboard_mut(id).map_or(2, |d| d.interval_secs.max(1)));
        let names_file = Some(self.streams_dir().with_file_name("sync_tables.json"));
        let health = self.tasks_health;
        let label = format!("connecting to {}", profile.name);
        let job = self.jobs.spawn(label, owner, move |_| async move {
            let t = crate::net::connect(&profile).await?;
            let config = walscope_ops::jobs::task_poll::PollerConfig {
                every,
                names_file,
                health,
                ..Default::default()
            };
            let poller = walscope_ops::jobs::task_poll::TaskPoller::spawn_with(&rt, t, config);
            Ok(JobOutput::Watching(Box::new(poller)))
        });
        if let Some(d) = self.dashboard_mut(id) {
            d.watch_jobs.push(job);
        }
    }

    /// A poller is running for dashboard `id`: the status bar shows it, with a stop.
    pub(crate) fn watching(&mut self, id: u64) {
        let Some(d) = self.dashboard_mut(id) else { return };
        let Some(p) = &d.poller else { return };
        let (board, stop, name) = (p.subscribe(), p.canceller(), d.profile.clone());
        let (mut changes, secs) = (p.subscribe(), d.interval_secs.max(1));
        // The window is drawn again when the board shows something new, not at every poll: a
        // frame costs a software-rendered desktop a good part of a core, and a SyncTool with
        // nothing moving answers the same every poll. (A stop ends the watch: drawn once more.)
        if let Some(rt) = self.runtime() {
            let wake = self.jobs.wake();
            rt.spawn(async move {
                let mut shown = changes.borrow_and_update().clone();
                while changes.changed().await.is_ok() {
                    let now = changes.borrow_and_update().clone();
                    if !now.shows_the_same_as(&shown) {
                        shown = now;
                        wake();
                    }
                }
                wake();
            });
        }
        let every = crate::jobs::Pace::Waiting(
            std::time::Duration::from_secs(secs).max(crate::jobs::WAITING_REPAINT),
        );
        let probe = Box::new(move || {
            let text = format!("watching {name} every {secs} s");
            (crate::jobs::JobProgress { fraction: None, text }, board.has_changed().is_err())
        });
        let job = self.jobs.watch("sync-task poller", JobOwner::Pane(id), every, probe, Box::new(stop));
        if let Some(d) = self.dashboard_mut(id) {
            d.watch_jobs.push(job);
        }
    }

    /// Sends a dashboard's typed change through the SyncTool client; the change itself comes
    /// back to the dashboard when it went through.
    pub(crate) fn task_call(&mut self, id: u64, change: TaskChange) {
        let Some(profile) = self.watched_profile(id) else { return };
        if let TaskChange::Create { db, table, dest, .. } = &change
            && let Some(p) = self.dashboard_mut(id).and_then(|d| d.poller.as_ref())
        {
            p.remember_table(db, table, dest);
        }
        let method = change.method();
        self.jobs.spawn(method, JobOwner::Pane(id), move |_| async move {
            let t = crate::net::connect(&profile).await?;
            let client = crate::net::SyncToolClient::new(t, profile.call_options());
            client.change(&change).await.map_err(|error| JobError::SyncToolRefused { method, error })?;
            Ok(JobOutput::TaskChanged(change))
        });
    }
}
