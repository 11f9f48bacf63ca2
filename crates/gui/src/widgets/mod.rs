//! Reusable widgets.

pub mod hex;
pub mod sparkline;
