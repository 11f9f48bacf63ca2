//! The window's frame around the panes: the menu bar, the status bar, the "unsaved edits"
//! question on closing.

pub mod confirm_close;
pub mod menu;
pub mod status_bar;
