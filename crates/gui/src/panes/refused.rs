//! Why a command was refused before any job started (a pane's own input is missing or wrong),
//! typed; the pane that shows it puts it in words.
//!
//! Must never: hold a library error as text (it is kept as it is).

/// A profile a pane named, not to be found.
#[derive(Debug, thiserror::Error)]
pub enum ProfileRefused {
    #[error("choose a profile")]
    NoneChosen,
    #[error("no profile named {0}")]
    NoSuchProfile(String),
}

/// Why a replay pane's plan, apply or verification cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ReplayRefused {
    #[error("no such pane")]
    NoSuchPane,
    #[error("choose the salvage folder first")]
    NoFolder,
    #[error("new primary: {0}")]
    NewPrimary(ProfileRefused),
    #[error("new primary {profile}: {error}")]
    Settings { profile: String, error: Box<crate::net::NetError> },
}
