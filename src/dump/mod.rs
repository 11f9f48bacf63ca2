//! Dump files. For now: safe saving (atomic replace with a backup). The memory-mapped reader,
//! frame index and append-only writer arrive with the dump-file work.

pub mod save;
