//! The window's frame around the panes: the menu bar, the status bar, the "unsaved edits"
//! question on closing, the open dialog, what files dragged onto the window do, and the left
//! sidebar (connections, schemas, recent files, salvage folders).

pub mod confirm_close;
pub mod drop;
pub mod menu;
pub mod open_dialog;
pub mod sidebar;
pub mod status_bar;
