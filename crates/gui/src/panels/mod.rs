//! One panel per file: each draws state and reports what the user asked for.

pub mod browser;
pub mod composer;
mod composer_history;
mod composer_response;
pub mod confirm_close;
pub mod confirm_save;
pub mod connections;
pub mod detail_view;
pub mod edit_bar;
pub mod field_editor;
pub mod file_view;
pub mod menu;
pub mod profile_editor;
pub mod replay;
mod replay_plan;
pub mod salvage;
mod salvage_rows;
pub mod schemas;
pub mod start;
pub mod status_bar;
pub mod tasks;
mod tasks_actions;
mod tasks_plot;
mod tasks_table;
