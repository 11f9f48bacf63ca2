//! Reusable widgets.

pub mod hex;
pub mod look;
pub mod sparkline;
pub mod split;
