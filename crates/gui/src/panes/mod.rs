//! The panes: one folder per kind, holding that kind's state, its drawing, and what it asks for.

pub mod command;
pub mod composer;
pub mod connections;
pub mod file;
pub mod outcome;
pub mod replay;
pub mod salvage;
pub mod schemas;
pub mod start;
pub mod tasks;
