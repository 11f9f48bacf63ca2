//! A sync-task dashboard (several may be open): a SyncTool profile (brpc or HTTP/JSON) polled at
//! an interval chosen from 1 s to 1 min, or paused; whether it is up to date, or the last good poll and the poll error in
//! words (the last good data stays, greyed); trouble summarised at the top and highlighted at
//! its row with what it means and what to do; sub-tasks grouped by table (the table row sums its
//! partitions); a plot of rows over time; creating a table's task (validated), deleting one after
//! a confirmation, `clear_all` only after the word is typed; the progress file opened when it is
//! on this machine.
//!
//! Owns: [`TasksState`]. Must never: call the SyncTool itself (it sends commands; jobs do).

mod actions;
mod plot;
mod table;

/// The dashboard of View > Sync tasks (more may be open, with their own ids).
pub const TASKS_DASHBOARD: u64 = 0;

use super::outcome::JobResult;
use super::{AppView, Pane, Placement};
use crate::datasync::health::SubTaskHealth;
use crate::datasync::{SyncMode, TaskChange};
use crate::jobs::JobId;
use crate::net::profile::{ConnectionProfile, TransportKind};
use crate::panes::command::{AppCommand, CommandSender};
use crate::panes::outcome::{JobError, JobOutput};
use eframe::egui;
use walscope_ops::jobs::task_poll::{TaskBoard, TaskPoller};

/// The words `clear_all` needs typed.
pub const CLEAR_ALL_WORD: &str = crate::net::guard::CLEAR_ALL_WORD;

pub struct TasksState {
    /// 0 for the dashboard of View > Sync tasks; others have their own pane.
    pub id: u64,
    /// The SyncTool profile chosen in the picker.
    pub profile: String,
    /// The profile being watched now: the board shows it, and the dashboard's calls go to it.
    pub watched: Option<String>,
    /// A create waiting for its confirmation, with what it will do.
    pub confirm_create: Option<(String, TaskChange)>,
    pub poller: Option<TaskPoller>,
    /// The jobs that connect to the watched SyncTool and poll it (stopped when another is watched).
    pub watch_jobs: Vec<JobId>,
    pub interval_secs: u64,
    pub db: String,
    pub table: String,
    pub mode: u8,
    /// Mode 1: skip rows older than this UTC date-time (or epoch ms).
    pub start_time: String,
    pub dest: String,
    /// Why the create form was refused before sending.
    pub form_error: Option<FormRefused>,
    /// The table (tid, `db.table`) whose delete waits for its confirmation.
    pub confirm_delete: Option<(u32, String)>,
    pub show_clear_all: bool,
    /// What the open confirmation (delete, clear_all) has had typed so far.
    pub clear_all_typed: String,
    /// The outcome of the last create, delete or clear.
    pub last_action: Option<Result<TaskChange, ActionFailed>>,
    /// The table whose partitions the plot shows (None: every table).
    pub plot_table: Option<u32>,
}

impl Default for TasksState {
    fn default() -> Self {
        TasksState {
            id: 0,
            profile: String::new(),
            watched: None,
            confirm_create: None,
            poller: None,
            watch_jobs: Vec::new(),
            interval_secs: 2,
            db: String::new(),
            table: String::new(),
            mode: 2,
            start_time: String::new(),
            dest: String::new(),
            form_error: None,
            confirm_delete: None,
            show_clear_all: false,
            clear_all_typed: String::new(),
            last_action: None,
            plot_table: None,
        }
    }
}

/// Why the create form was not sent (said under the form as "Not sent: ...").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormRefused {
    #[error("name the database and the table")]
    NoTable,
    #[error("name the destination (where SyncTool writes the rows)")]
    NoDestination,
    #[error("mode {0} is not a sync mode (0 full, 1 incremental from a time, 2 full + continuous)")]
    UnknownMode(u8),
    #[error("mode 1 needs a start time: rows older than it are skipped")]
    NoStartTime,
    /// The start time could not be read (the library's words).
    #[error("the start time: {0}")]
    StartTime(String),
}

/// Why the dashboard's last create, delete or clear did not happen.
#[derive(Debug, thiserror::Error)]
pub enum ActionFailed {
    /// The dashboard's profile is not among the profiles (deleted or renamed since).
    #[error("no SyncTool profile named \"{0}\"")]
    NoProfile(String),
    /// The job did not make the change (a refusal, no answer, no connection).
    #[error(transparent)]
    Job(#[from] JobError),
}

/// What a change that went through did, in words.
pub fn done_words(change: &TaskChange) -> String {
    match change {
        TaskChange::Create { db, table, .. } => format!("CreateSyncTask: done ({db}.{table})"),
        TaskChange::Delete { db, table } => format!("DeleteSyncTask: done ({db}.{table})"),
        TaskChange::ClearAll => "clear_all: every task deleted".into(),
    }
}

impl TasksState {
    /// Takes a finished job of this dashboard's.
    pub fn take(&mut self, result: Result<JobOutput, JobError>) {
        match result {
            Ok(JobOutput::Watching(poller)) => self.poller = Some(*poller),
            Ok(JobOutput::TaskChanged(change)) => {
                self.last_action = Some(Ok(change));
                if let Some(p) = &self.poller {
                    p.poll_now();
                }
            }
            Ok(_) | Err(JobError::Cancelled) => {}
            Err(e) => self.last_action = Some(Err(ActionFailed::Job(e))),
        }
    }

    /// The create form as a typed change, or why it is not sent.
    pub fn create_request(&self) -> Result<TaskChange, FormRefused> {
        let (db, table, dest) = (self.db.trim(), self.table.trim(), self.dest.trim());
        if db.is_empty() || table.is_empty() {
            return Err(FormRefused::NoTable);
        }
        if dest.is_empty() {
            return Err(FormRefused::NoDestination);
        }
        let mode = SyncMode::from_number(self.mode).ok_or(FormRefused::UnknownMode(self.mode))?;
        let start_ts = if mode == SyncMode::IncrementalByTimestamp {
            let t = self.start_time.trim();
            Some(if let Ok(ms) = t.parse::<u64>() {
                ms
            } else {
                let tt = crate::dump::filter::parse_time(t, false)
                    .map_err(FormRefused::StartTime)?
                    .ok_or(FormRefused::NoStartTime)?;
                walscope_core::time::timetick_to_millis(tt)
            })
        } else {
            None
        };
        Ok(TaskChange::Create { db: db.into(), table: table.into(), mode, start_ts, dest: dest.into() })
    }
}

/// Where the dashboard's requests go.
pub struct DashboardView<'a> {
    pub profiles: &'a [(ConnectionProfile, bool)],
}

pub fn show(st: &mut TasksState, view: &DashboardView<'_>, ui: &mut egui::Ui, tx: &CommandSender) {
    let id = st.id;
    ui.heading("Sync tasks");
    ui.horizontal_wrapped(|ui| {
        let l = ui.label("SyncTool:");
        let shown = if st.profile.is_empty() { "(choose a profile)".to_string() } else { st.profile.clone() };
        egui::ComboBox::from_id_salt(("synctool", id))
            .selected_text(shown)
            .show_ui(ui, |ui| {
                for (p, _) in view.profiles.iter().filter(|(p, _)| p.transport != TransportKind::Grpc) {
                    let kind = crate::panes::connections::transport_name(p.transport);
                    ui.selectable_value(
                        &mut st.profile,
                        p.name.clone(),
                        format!("{} {kind} {}", p.name, p.endpoint),
                    );
                }
            })
            .response
            .labelled_by(l.id);
        if ui.add_enabled(!st.profile.is_empty(), egui::Button::new("Watch")).clicked() {
            tx.send(AppCommand::WatchTasks(id));
        }
        let l = ui.label("every");
        let r = ui.add(egui::Slider::new(&mut st.interval_secs, 1..=60).suffix(" s")).labelled_by(l.id);
        if r.changed()
            && let Some(p) = &st.poller
        {
            p.set_interval(std::time::Duration::from_secs(st.interval_secs));
        }
        if let Some(p) = &st.poller {
            let paused = p.subscribe().borrow().paused;
            if ui.button(if paused { "Resume polling" } else { "Pause polling" }).clicked() {
                p.set_paused(!paused);
            }
            if ui.button("Poll now").clicked() {
                p.poll_now();
            }
        }
    });
    let Some(poller) = &st.poller else {
        ui.label("Choose a SyncTool profile (brpc or HTTP/JSON) and press Watch.");
        return;
    };
    let board: TaskBoard = poller.board();
    if let Some(w) = st.watched.as_ref().filter(|w| **w != st.profile) {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!(
                "Showing {w}: its tasks are what the buttons below act on. Press Watch to switch to {}.",
                st.profile
            ),
        );
    }
    status_line(&board, ui);
    let stale = board.error.is_some();
    crate::panes::tasks::table::show(st, &board, stale, ui, tx);
    crate::panes::tasks::plot::show(st, &board, ui);
    ui.separator();
    crate::panes::tasks::actions::show(st, &board, ui, tx);
}

fn status_line(board: &TaskBoard, ui: &mut egui::Ui) {
    ui.horizontal_wrapped(|ui| {
        // Said without the poll count or time, which change at every poll: the window is drawn
        // again only when what it shows changes (a failed poll is such a change).
        let every = board.interval.as_secs();
        let how = match (board.updated_ms, &board.error, board.paused) {
            (_, _, true) => "polling paused".to_string(),
            (None, None, false) => format!("waiting for the first answer (every {every} s)"),
            (Some(_), None, false) => format!("up to date: polled every {every} s"),
            (Some(ms), Some(_), false) => {
                format!("last good poll {} UTC (every {every} s)", walscope_core::time::format_millis_utc(ms))
            }
            (None, Some(_), false) => format!("no good poll yet (every {every} s)"),
        };
        ui.label(how).on_hover_text(format!("{} so far", walscope_core::fmt::counted(board.polls, "poll")));
        ui.label(walscope_core::fmt::counted(board.rows.len() as u64, "sub-task"));
    });
    if let Some(e) = &board.error {
        ui.colored_label(
            ui.visuals().error_fg_color,
            format!("The SyncTool does not answer: {e}. The last good data is shown, greyed."),
        );
    }
    let s = &board.summary;
    // With no sub-task the table says so: the summary would say it twice.
    if !s.text.is_empty() && !board.rows.is_empty() {
        let troubled = s.stalled + s.failed + s.reassigned + s.reassigning + s.restarted > 0;
        let colour = if troubled { ui.visuals().warn_fg_color } else { ui.visuals().text_color() };
        ui.colored_label(colour, &s.text);
    }
}

/// The badge of a status: colour and word (nothing is told by colour alone).
pub fn badge(ui: &mut egui::Ui, status: &str) {
    // The status colours are the visual language's (ux.md), readable in both themes.
    ui.colored_label(crate::widgets::look::task_status_tone(status).color(ui), status);
}

/// A sub-task's rows over time, as the poller keeps them.
pub fn age(h: &SubTaskHealth) -> String {
    match h.last_update_age_ms {
        Some(ms) if ms < 120_000 => format!("{} s ago", ms / 1000),
        Some(ms) => format!("{} min ago", ms / 60_000),
        None => "-".into(),
    }
}

impl Pane for TasksState {
    fn title(&self, _view: &AppView<'_>) -> String {
        "Sync tasks".into()
    }

    fn placement(&self) -> Placement {
        Placement::Below
    }

    fn draw(&mut self, ui: &mut egui::Ui, view: &AppView<'_>, tx: &CommandSender) {
        let id = self.id;
        let dv = DashboardView { profiles: view.profiles };
        egui::ScrollArea::vertical()
            .id_salt(("tasks_panel", id))
            .show(ui, |ui| ui.push_id(("tasks", id), |ui| show(self, &dv, ui, tx)));
    }

    fn apply(&mut self, _job: JobId, _label: &str, result: JobResult, _view: &AppView<'_>) {
        self.take(result);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
