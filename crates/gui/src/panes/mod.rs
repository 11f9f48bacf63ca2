//! The panes: one folder per kind (`start/`, `schemas/`, `file/`, `composer/`, `connections/`,
//! `tasks/`, `salvage/`, `replay/`, `jobs/`, `diff/`, `timeline/`), each holding that kind's state, its drawing, and
//! what it does with its jobs' results; [`command`] is the one way a pane asks for work and
//! [`outcome`] the one typed way results come back.
//!
//! Owns: [`PaneId`] (what the layout's tree holds: a kind and, for kinds opened many times, a
//! number), the [`Pane`] trait every pane kind opened by id implements, and [`Panes`], the map
//! that owns those panes' states by id. The layout asks the trait for a pane's title,
//! placement, closability and drawing, so no list of those kinds is written anywhere else.
//!
//! Must never: build a transport, make a call or spawn work (a pane sends an
//! [`command::AppCommand`]; the app starts a job), or reach another pane's state or the app's
//! (a pane gets `&mut` itself, a read-only [`AppView`] and a [`command::CommandSender`]).

pub mod command;
pub mod composer;
pub mod connections;
pub mod diff;
pub mod file;
pub mod jobs;
pub mod outcome;
pub mod refused;
pub mod replay;
pub mod salvage;
pub mod schemas;
pub mod start;
pub mod tasks;
pub mod timeline;

use crate::jobs::{Job, JobId};
use crate::net::profile::ConnectionProfile;
use crate::schema::SchemaSet;
use command::CommandSender;
use eframe::egui;
use outcome::{JobOutput, JobResult};
use serde::{Deserialize, Serialize};
use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;

/// Which pane a tile of the layout shows (kept in the remembered layout).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PaneId {
    /// What the window shows with no file open.
    Start,
    File(PathBuf),
    Schemas,
    Tasks,
    Connections,
    /// A request composer, by its number.
    Composer(u64),
    /// A salvage, by its number.
    Salvage(u64),
    /// A replay of a salvage into the new primary, by its number.
    Replay(u64),
    /// A sync-task dashboard besides the first (`Tasks`), by its number.
    Dashboard(u64),
    /// The list of the window's jobs, running and finished.
    Jobs,
    /// Two messages or two dumps compared, by its number.
    Diff(u64),
    /// A timeline of a salvage folder, by its number.
    Timeline(u64),
}

impl PaneId {
    /// The number of a pane kind opened many times (its jobs' owner, `JobOwner::Pane`).
    pub fn number(&self) -> Option<u64> {
        match self {
            PaneId::Composer(n)
            | PaneId::Salvage(n)
            | PaneId::Replay(n)
            | PaneId::Dashboard(n)
            | PaneId::Diff(n) => Some(*n),
            PaneId::Timeline(n) => Some(*n),
            PaneId::Tasks => Some(tasks::TASKS_DASHBOARD),
            _ => None,
        }
    }
}

/// Where a new pane goes in the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// As a tab beside the files (or the start page).
    Files,
    /// As a tab beside the other tools (composers, salvages, replays), else beside the files.
    Tools,
    /// In a column left of everything (30%).
    Left,
    /// In a row below everything (45%).
    Below,
}

/// What a pane may read of the app while it draws (never change).
pub struct AppView<'a> {
    pub schemas: &'a Arc<SchemaSet>,
    /// Where profiles are saved (profiles.json).
    pub profiles_file: PathBuf,
    /// Every profile (saved and the demo's), and whether it is the demo's.
    pub profiles: &'a [(ConnectionProfile, bool)],
    /// The composer last clicked: it takes Ctrl+Enter and Esc.
    pub focused_composer: Option<u64>,
    /// The jobs running now, oldest first.
    pub jobs: &'a [Job<JobOutput>],
    /// The jobs that ended, newest last (label, and its words).
    pub ended: &'a [EndedJob],
}

impl AppView<'_> {
    /// The typed live progress of the running jobs of the pane numbered `pane`, oldest first.
    pub fn live_of(&self, pane: u64) -> Vec<crate::jobs::Live> {
        crate::jobs::live_of(self.jobs, &crate::jobs::JobOwner::Pane(pane))
    }

    /// The typed live progress of one running job (None once it ended, or before it shared any).
    pub fn live(&self, job: JobId) -> Option<crate::jobs::Live> {
        self.jobs.iter().find(|j| j.id == job).and_then(Job::live)
    }
}

/// A job that ended, as the Jobs pane lists it.
#[derive(Debug, Clone)]
pub struct EndedJob {
    pub id: JobId,
    pub label: String,
    pub how: JobEnd,
}

/// How a job ended, as the Jobs pane lists it. The result itself went to its owner; a failure
/// is kept here as the error's words, made when it ended (a [`crate::jobs::JobError`] is not
/// shared).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobEnd {
    /// It did its work (with its last words, if it had any).
    Done(Option<String>),
    /// It was stopped.
    Stopped,
    /// It failed: the error's words.
    Failed(String),
}

impl std::fmt::Display for JobEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JobEnd::Done(Some(words)) => f.write_str(words),
            JobEnd::Done(None) => f.write_str("done"),
            JobEnd::Stopped => f.write_str("stopped"),
            JobEnd::Failed(words) => f.write_str(words),
        }
    }
}

/// A pane kind the layout holds by [`PaneId`]: its state, how it draws, what its results do.
pub trait Pane: Any {
    /// The tab's title.
    fn title(&self, view: &AppView<'_>) -> String;

    /// Where a new pane of this kind goes.
    fn placement(&self) -> Placement {
        Placement::Tools
    }

    /// Whether its tab may be closed now (a replay's apply is stopped in the pane, on purpose).
    fn closable(&self) -> bool {
        true
    }

    /// Draws the pane; what the operator asks for goes out through `tx`.
    fn draw(&mut self, ui: &mut egui::Ui, view: &AppView<'_>, tx: &CommandSender);

    /// One of this pane's jobs ended: `label` is the job's, `job` its id.
    fn apply(&mut self, _job: JobId, _label: &str, _result: JobResult, _view: &AppView<'_>) {}

    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// A tab title: `kind`, and the last part of `folder` when one is typed (`Replay: salvage-0412`).
pub fn titled(kind: &str, folder: &str) -> String {
    let name = std::path::Path::new(folder.trim()).file_name().map(|n| n.to_string_lossy().into_owned());
    match name {
        Some(n) if !n.is_empty() => format!("{kind}: {n}"),
        _ => kind.to_string(),
    }
}

/// The pane kinds opened from the View menu without arguments: (menu words, id, a new one).
/// Registering such a kind is one line here.
#[allow(clippy::type_complexity)]
pub fn openable() -> Vec<(&'static str, PaneId, fn() -> Box<dyn Pane>)> {
    vec![("Jobs", PaneId::Jobs, || Box::new(jobs::JobsPane::default()))]
}

/// The panes opened by id, each owning its state, in the order they were opened.
#[derive(Default)]
pub struct Panes {
    open: Vec<(PaneId, Box<dyn Pane>)>,
    next: u64,
}

impl Panes {
    /// A fresh number for a pane kind opened many times (never 0: that is the first dashboard).
    pub fn next_number(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    pub fn insert(&mut self, id: PaneId, pane: Box<dyn Pane>) {
        self.remove(&id);
        self.open.push((id, pane));
    }

    pub fn remove(&mut self, id: &PaneId) -> Option<Box<dyn Pane>> {
        let i = self.open.iter().position(|(p, _)| p == id)?;
        Some(self.open.remove(i).1)
    }

    pub fn contains(&self, id: &PaneId) -> bool {
        self.open.iter().any(|(p, _)| p == id)
    }

    /// Every open pane's id, in the order opened.
    pub fn ids(&self) -> Vec<PaneId> {
        self.open.iter().map(|(p, _)| p.clone()).collect()
    }

    pub fn pane(&self, id: &PaneId) -> Option<&dyn Pane> {
        self.open.iter().find(|(p, _)| p == id).map(|(_, b)| b.as_ref())
    }

    pub fn pane_mut(&mut self, id: &PaneId) -> Option<&mut (dyn Pane + 'static)> {
        self.open.iter_mut().find(|(p, _)| p == id).map(|(_, b)| b.as_mut())
    }

    /// The pane with number `n` (its jobs' owner), whatever its kind.
    pub fn by_number_mut(&mut self, n: u64) -> Option<&mut (dyn Pane + 'static)> {
        self.open.iter_mut().find(|(p, _)| p.number() == Some(n)).map(|(_, b)| b.as_mut())
    }

    /// The state of pane `id`, when it is a `T`.
    pub fn get<T: Pane>(&self, id: &PaneId) -> Option<&T> {
        self.pane(id)?.as_any().downcast_ref()
    }

    pub fn get_mut<T: Pane>(&mut self, id: &PaneId) -> Option<&mut T> {
        self.pane_mut(id)?.as_any_mut().downcast_mut()
    }

    /// Every open pane of kind `T`, in the order opened.
    pub fn all<T: Pane>(&self) -> impl Iterator<Item = &T> {
        self.open.iter().filter_map(|(_, b)| b.as_any().downcast_ref())
    }

    pub fn all_mut<T: Pane>(&mut self) -> impl Iterator<Item = &mut T> {
        self.open.iter_mut().filter_map(|(_, b)| b.as_any_mut().downcast_mut())
    }

    /// The first open pane of kind `T`.
    pub fn first<T: Pane>(&self) -> Option<&T> {
        self.all().next()
    }

    pub fn first_mut<T: Pane>(&mut self) -> Option<&mut T> {
        self.all_mut().next()
    }

    /// Closes every pane of kind `T`.
    pub fn clear<T: Pane>(&mut self) {
        self.open.retain(|(_, b)| !b.as_any().is::<T>());
    }
}
