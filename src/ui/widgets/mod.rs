//! Reusable widgets.

pub mod hex;
