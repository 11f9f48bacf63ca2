//! What a pane can ask for: [`AppCommand`], sent through a cloneable [`CommandSender`] (rerun's
//! idea). Panes and the shell send; the app drains the commands once per frame, after drawing
//! (`WalscopeApp::apply_commands`), and starts a job wherever work is needed.
//!
//! Must never: carry a closure or a handle that does work (a command says what is wanted; the
//! app decides how). The one exception left is `FileWork`: a file's size sort travels as the
//! closure `RowOrder::sort_by` made, and a filter scan as the library's handle to watch.

use super::file::ReadAs;
use super::outcome::Notice;
use crate::jobs::JobId;
use std::path::PathBuf;
/// What the demo's DataCollector and SyncTool can be made to do (`--demo` only), on the demo
/// table `demo_db.orders`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DemoFault {
    /// Partition 0 gets zero-row heartbeats only.
    StallWithHeartbeat,
    /// Partition 1 gets nothing at all.
    StallSilent,
    /// Partition 1's collector goes quiet and refuses the reassignment: FAILED.
    Fail,
    /// Everything back to normal (a FAILED sub-task stays FAILED, as in OpenMLDB).
    Heal,
    /// SyncTool restarts: counts go back to 0.
    RestartSyncTool,
}

impl DemoFault {
    /// What it does, as the Demo faults menu says it.
    pub fn words(self) -> &'static str {
        match self {
            DemoFault::StallWithHeartbeat => "Stall partition 0 (heartbeats only)",
            DemoFault::StallSilent => "Stall partition 1 silently",
            DemoFault::Fail => "Fail partition 1 (reassignment refused)",
            DemoFault::RestartSyncTool => "Restart the SyncTool (counts reset)",
            DemoFault::Heal => "Heal every partition",
        }
    }

    /// Every fault, in the menu's order.
    pub const ALL: [DemoFault; 5] = [
        DemoFault::StallWithHeartbeat,
        DemoFault::StallSilent,
        DemoFault::Fail,
        DemoFault::RestartSyncTool,
        DemoFault::Heal,
    ];
}

/// A composer's call as it will go out.
#[derive(Debug, Clone)]
pub struct CallSpec {
    pub composer: u64,
    pub profile: crate::net::profile::ConnectionProfile,
    /// The method's full name.
    pub method: String,
    /// The request exactly as it will be sent.
    pub request: Vec<u8>,
    pub metadata: Vec<(String, String)>,
    pub deadline: Option<std::time::Duration>,
    pub stream: bool,
}

/// Something a panel asked for.
#[derive(Debug)]
pub enum AppCommand {
    /// Open a file in a new tab (or show it when it is open).
    Open(PathBuf),
    /// Open a file read a chosen way (framing, type).
    OpenAs(PathBuf, ReadAs),
    /// Open the app's own copy of the sample Milvus dump (written into its temp folder first).
    OpenDemoCopy,
    /// Show the window's own open dialog (Ctrl+O, File > Open…).
    ShowOpenDialog,
    /// List the folders and files the open dialog's `text` names (answered with `generation`:
    /// an answer for older text is dropped).
    CompletePath { text: String, cwd: PathBuf, generation: u64 },
    /// Open a file chosen in the open dialog (its result goes back to the dialog).
    OpenFromDialog(PathBuf),
    /// Show the desktop's file dialog (from the open dialog); the chosen file opens.
    PickFile,
    /// Close file tab N (asks first when it has unsaved edits).
    CloseTab(usize),
    /// Close a file, dropping its unsaved edits (the operator said so).
    DiscardFile(PathBuf),
    /// Read an open file another way: it is opened again, its pane waiting in place.
    Reopen(PathBuf, ReadAs),
    /// Run what a file asked for (a save, a size sort, a filter scan to watch) as a job.
    FileWork { path: PathBuf, work: super::file::TabWork },
    /// Undo the last edit of a file.
    Undo(PathBuf),
    /// Redo the last undone edit of a file.
    Redo(PathBuf),
    /// Show what saving a file would write, then save it if confirmed (`save_as`: to another
    /// file).
    AskSave { path: PathBuf, save_as: bool },
    /// Stop a job.
    CancelJob(JobId),
    /// Stops every job of the pane numbered so (a salvage's "Cancel all").
    CancelPane(u64),
    /// Stops one pchannel's dump of a salvage pane's running jobs (the others go on).
    CancelDump { pane: u64, pchannel: String },
    /// Load a .proto file (with include paths) or a descriptor set into the pool.
    LoadSchemas { proto: Option<(PathBuf, Vec<PathBuf>)>, descriptor_set: Option<PathBuf> },
    /// Fetch a server's schemas by reflection (host:port or a profile name).
    Reflect(String),
    /// Check whether the recent files are still there.
    RefreshRecent,
    /// Read profiles.json.
    LoadProfiles,
    /// Make one harmless call with a profile and say what answered.
    CheckProfile(crate::net::profile::ConnectionProfile),
    /// Tests the profile form's unsaved settings (the result shows in the form, never on a saved
    /// profile's card).
    CheckForm(crate::net::profile::ConnectionProfile),
    /// Save a profile in profiles.json (`original`: the name it had, when renamed).
    SaveProfile { original: Option<String>, profile: crate::net::profile::ConnectionProfile },
    /// Remove a profile from profiles.json.
    DeleteProfile(String),
    /// Open a composer pane (with a profile, a method and request bytes when given).
    NewComposer { profile: Option<String>, method: Option<String>, request: Vec<u8> },
    /// Open a composer on a message read elsewhere ("Send..."): a method that takes its type
    /// is preselected, and its bytes are kept exactly.
    SendMessage { type_name: String, bytes: Vec<u8> },
    /// Make a composer the focused one (it takes Ctrl+Enter and Esc).
    FocusComposer(u64),
    /// Open a pane of a kind registered in `panes::openable` (or show it when open).
    OpenPane(super::PaneId),
    /// A pane's tab was closed: stop its jobs and drop its state.
    ClosePane(super::PaneId),
    /// Send a composer's request.
    Call(Box<CallSpec>),
    /// Open a salvage pane.
    NewSalvage,
    /// Offer the old primary's pchannels (from its replicate configuration) in a salvage pane.
    OfferPchannels(u64),
    /// Fetch every pchannel's salvage checkpoint from the new primary.
    FetchCheckpoints(u64),
    /// Look for unfinished dumps in the salvage pane's folder.
    LookInFolder(u64),
    /// Start one dump per pchannel with a checkpoint, in parallel, into the folder.
    StartSalvage(u64),
    /// Continue an unfinished dump of the folder (None: all of them).
    ResumeSalvage { pane: u64, pchannel: Option<String> },
    /// Open a replay pane (on a salvage folder and a new primary profile when given).
    NewReplay { folder: Option<PathBuf>, new_primary: Option<String> },
    /// Choose a replay pane's salvage folder with the desktop's dialog.
    PickReplayFolder(u64),
    /// Plan a replay pane's replay (reads the folder and the new primary; sends nothing).
    PlanReplay(u64),
    /// Apply a replay pane's plan: only after the operator confirmed it.
    ApplyReplay(u64),
    /// Stop a replay pane's apply after the unit it is sending.
    CancelReplay(u64),
    /// Verify a replay pane's plan against the new primary again.
    VerifyReplay(u64),
    /// Open a timeline pane (on a salvage folder when given: it is read at once).
    NewTimeline { folder: Option<PathBuf> },
    /// Read a timeline pane's folder (a job: progress and cancel in the status bar).
    LoadTimeline(u64),
    /// Open a dump and select one of its frames (a mark clicked on the timeline).
    OpenFrame { path: PathBuf, frame: usize },
    /// Read the call history for a composer (optionally only entries containing some text).
    LoadHistory { composer: u64, search: String },
    /// Copy a composer's stream dump (and its manifest) to a chosen file.
    /// `replace`: the operator ticked "Replace an existing file".
    SaveStream { composer: u64, from: PathBuf, to: PathBuf, replace: bool },
    /// Write a composer's last call's transcript to a chosen file (`replace`: the operator
    /// ticked "Replace an existing file"; the old one is then kept as .bak).
    SaveTranscript { composer: u64, doc: Box<crate::net::transcript::Transcript>, to: PathBuf, replace: bool },
    /// Read a transcript into a composer (None: a new one), ready to re-send.
    OpenTranscript { composer: Option<u64>, path: PathBuf },
    /// Poll a dashboard's SyncTool from now on.
    WatchTasks(u64),
    /// A change to a dashboard's SyncTool (create, delete, clear_all), typed to the call.
    TaskCall { dashboard: u64, change: crate::datasync::TaskChange },
    /// Open another sync-task dashboard.
    NewDashboard,
    /// With `--demo`: make the demo SyncTool's data misbehave, to see the dashboard's warnings.
    DemoFault(DemoFault),
    /// Say something in the status bar.
    Notify(Notice),
    /// "Compare with…": open the picker for the other side of a comparison with this.
    CompareWith(super::diff::CompareFrom),
    /// Compare two things in a new diff pane (a job diffs them).
    Compare(Box<super::diff::CompareAsk>),
    /// Choose the other side of a comparison with `Side` in the open dialog.
    ChooseCompareFile(super::diff::Side),
    /// Diff the two frames of pair `pair` of diff pane `pane` (a job).
    DiffPair { pane: u64, pair: usize },
}

/// Where panes, the shell and the app send [`AppCommand`]s; clones send into the same queue,
/// which the app drains once per frame ([`CommandSender::drain`]).
#[derive(Clone)]
pub struct CommandSender {
    tx: std::sync::mpsc::Sender<AppCommand>,
    rx: std::sync::Arc<std::sync::Mutex<std::sync::mpsc::Receiver<AppCommand>>>,
}

impl Default for CommandSender {
    fn default() -> Self {
        let (tx, rx) = std::sync::mpsc::channel();
        CommandSender { tx, rx: std::sync::Arc::new(std::sync::Mutex::new(rx)) }
    }
}

impl std::fmt::Debug for CommandSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CommandSender")
    }
}

impl CommandSender {
    /// Queues `cmd`; it is applied after the frame is drawn.
    pub fn send(&self, cmd: AppCommand) {
        // The receiver lives as long as every sender (it is held beside them).
        let _ = self.tx.send(cmd);
    }

    /// Every command queued so far, in the order sent. Never waits.
    pub fn drain(&self) -> Vec<AppCommand> {
        match self.rx.lock() {
            Ok(rx) => rx.try_iter().collect(),
            Err(_) => Vec::new(),
        }
    }
}
