//! The integration tests: one binary (ripgrep's `tests/tests.rs` pattern), one module per
//! subject, the shared helpers in `common` and the fixtures in `tests/fixtures/` and
//! `assets/samples/`. They run the real `walscope` binary, real files and real servers on
//! 127.0.0.1 across the crates; the window's suites (`gui_*`, headless with egui_kittest) need
//! the `gui` feature. Each crate's own unit tests sit beside its code (`cargo test -p
//! walscope-core`, ...).

mod common;

mod call_stream_job;
mod chunks;
mod claims;
mod cli;
mod cli_demo;
mod cli_dump;
mod cli_grpc;
mod cli_history;
mod cli_salvage;
mod cli_tasks;
mod datasync_demo;
mod datasync_health;
mod demo_collections;
mod diff;
mod dump_files;
mod dump_writer;
mod edit_session;
mod fast_summaries;
mod fuzz_regressions;
mod grpc_demo;
mod grpc_reflection;
mod grpc_security;
#[cfg(feature = "gui")]
mod gui_browser;
#[cfg(feature = "gui")]
mod gui_chunks;
#[cfg(feature = "gui")]
mod gui_composer;
#[cfg(feature = "gui")]
mod gui_composer_transcript;
#[cfg(feature = "gui")]
mod gui_detail;
#[cfg(feature = "gui")]
mod gui_diff;
#[cfg(feature = "gui")]
mod gui_editor;
#[cfg(feature = "gui")]
mod gui_field_editor;
#[cfg(feature = "gui")]
mod gui_idle;
#[cfg(feature = "gui")]
mod gui_layout;
#[cfg(feature = "gui")]
mod gui_open;
#[cfg(feature = "gui")]
mod gui_replay;
#[cfg(feature = "gui")]
mod gui_salvage;
#[cfg(feature = "gui")]
mod gui_save;
#[cfg(feature = "gui")]
mod gui_schemas;
#[cfg(feature = "gui")]
mod gui_shell;
#[cfg(feature = "gui")]
mod gui_snapshots;
#[cfg(feature = "gui")]
mod gui_tasks;
#[cfg(feature = "gui")]
mod gui_timeline;
#[cfg(feature = "gui")]
mod gui_window;
mod house;
mod index_memory;
mod lossless_edit;
mod mistakes;
mod net_call;
mod net_failures;
mod net_probe;
mod newer_types;
mod pymilvus_demo;
mod readme_examples;
mod real_schemas;
mod replay_demo;
mod replay_history;
mod roundtrip;
mod salvage_demo;
mod salvage_faults;
mod salvage_pchannel_names;
mod salvage_set;
mod salvage_window;
mod samples;
mod schema_editions;
mod schema_loading;
mod sdk_peer;
mod sdk_protos;
mod timeline;
mod transcript;
mod wire_robustness;
