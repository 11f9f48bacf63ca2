//! The window's frame around the panes: the menu bar, the status bar, the "unsaved edits"
//! question on closing, and the left sidebar (connections, schemas, recent files, salvage
//! folders).

pub mod confirm_close;
pub mod menu;
pub mod sidebar;
pub mod status_bar;
