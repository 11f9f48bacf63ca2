//! The catalogue of issue #36: every ordinary mistake of a tired operator mid-incident, each a
//! case run over real files and real loopback servers, checking what docs/safety.md ("What
//! walscope does to your files") promises: the checksum of every input, output and backup
//! before and after, the exit code, no temp file left, the words of the message, and no panic.
//!
//! One module per part of the catalogue; `util` holds the shared checks.

use crate::common;

mod absurd;
mod edges;
mod exits;
mod files;
mod inputs;
mod manifests;
mod mapped;
mod salvage;
mod secrets;
mod security;
mod util;
