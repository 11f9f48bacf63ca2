//! The desktop's own file dialog (rfd: the xdg file-chooser portal, else zenity, on Linux), as
//! one fallible call: a chosen file, nothing chosen, or why no dialog showed
//! ([`DesktopDialogError`]). rfd answers "no file" alike for a dialog the operator cancelled and
//! for one that never opened (no portal, no zenity: Xvfb, a container, a bare window manager),
//! so this module tells them apart as well as it can, and the open dialog says it in words.
//!
//! Owns: the check that a desktop dialog may be there and the blocking call. Must never: run on
//! the UI thread (the dialog blocks until closed; the window runs it as a job), or answer
//! silently.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why the desktop's file dialog did not give a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DesktopDialogError {
    /// The window is not on a desktop session the dialog could show on.
    #[error("no desktop file dialog here: the window has no display to show one on")]
    NoDisplay,
    /// Neither the file-chooser portal's bus nor zenity is there.
    #[error(
        "no desktop file dialog here: no session bus for the xdg file-chooser portal and no zenity on the PATH"
    )]
    NoChooser,
    /// The call came back at once with nothing: no dialog was shown.
    #[error(
        "the desktop's file dialog did not open (it came back at once without a file: no xdg file-chooser portal or zenity answered)"
    )]
    DidNotOpen,
}

/// What a desktop dialog gave: a file, or None when the operator closed it without one.
pub type Picked = Result<Option<PathBuf>, DesktopDialogError>;

/// The call that shows a desktop dialog and waits for it (tests put their own in its place).
pub type Picker = Arc<dyn Fn() -> Picked + Send + Sync>;

/// A dialog that came back sooner than this with no file never showed: no one closes a file
/// dialog that fast on purpose.
const AT_ONCE: Duration = Duration::from_millis(700);

/// The desktop's dialog through rfd, after checking that one may be there.
pub fn system_picker() -> Picker {
    Arc::new(|| {
        may_be_available()?;
        let started = Instant::now();
        match rfd::FileDialog::new().set_title("Open a dump or message file").pick_file() {
            Some(p) => Ok(Some(p)),
            None if started.elapsed() < AT_ONCE => Err(DesktopDialogError::DidNotOpen),
            None => Ok(None),
        }
    })
}

/// Whether the window is on a display a desktop dialog could show on (reads the environment
/// only: the UI thread may ask).
pub fn display_present() -> bool {
    let set = |v: &str| std::env::var_os(v).is_some_and(|s| !s.is_empty());
    cfg!(any(target_os = "macos", target_os = "windows")) || set("DISPLAY") || set("WAYLAND_DISPLAY")
}

/// Whether a desktop dialog may show: always on macOS and Windows; elsewhere a display and
/// either the session bus (the portal) or zenity. Reads the PATH's folders: a job's work.
pub fn may_be_available() -> Result<(), DesktopDialogError> {
    if cfg!(any(target_os = "macos", target_os = "windows")) {
        return Ok(());
    }
    if !display_present() {
        return Err(DesktopDialogError::NoDisplay);
    }
    let set = |v: &str| std::env::var_os(v).is_some_and(|s| !s.is_empty());
    let zenity = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("zenity").is_file()));
    // The bus's address, else its usual socket (what the portal's client tries next).
    let bus = set("DBUS_SESSION_BUS_ADDRESS")
        || std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| PathBuf::from(d).join("bus").exists());
    if bus || zenity { Ok(()) } else { Err(DesktopDialogError::NoChooser) }
}
