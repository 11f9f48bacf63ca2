//! The request composer, headless with egui_kittest, against the demo servers over loopback:
//! a method picked by search, a request built in the form, sent; the reply in the detail view;
//! an error in an OK body flagged; a reply with only a salvage checkpoint explained (the Rust
//! SDK's trap); a 100,000-message stream counted live, stopped, saved as a
//! dump `walscope inspect` reads; the history re-sending the exact request bytes; "Send..." from
//! a dump frame; the guard on calls that change a server.

use crate::common::gui::{compose, harness, settle, step_until};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use std::path::Path;
use walscope::ui::WalscopeApp;
use walscope::ui::panes::composer::{ComposerState, Response};

/// The window size these tests draw at.
const SIZE: [f32; 2] = [1600.0, 1400.0];

/// An app with the demo servers, keeping its profiles and history in `dir`.
fn demo_app(dir: &Path) -> WalscopeApp {
    let mut app = WalscopeApp::new();
    app.config_dir = Some(dir.to_path_buf());
    app.start_demo();
    app.show_tasks = false;
    app
}

/// Opens a composer on `profile` and picks `method` by typing part of its name.
fn composer<'a>(h: &'a Harness<'static, WalscopeApp>) -> &'a walscope::ui::panes::composer::ComposerState {
    h.state().panes.first::<ComposerState>().unwrap()
}

fn set_json(h: &mut Harness<'static, WalscopeApp>, json: &str) {
    let pool = h.state().schemas.pool().clone();
    let c = h.state_mut().panes.first_mut::<ComposerState>().unwrap();
    c.json = json.to_string();
    c.json_changed(&pool);
    assert!(c.json_error.is_none(), "{:?}", c.json_error);
    h.step();
}

fn wait_reply(h: &mut Harness<'static, WalscopeApp>) {
    step_until(h, "the reply", |h| {
        !matches!(composer(h).response, Response::Waiting { .. } | Response::None)
    });
    settle(h);
}

#[test]
fn get_version_and_a_form_built_get_replicate_info() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(SIZE, demo_app(dir.path()));
    compose(&mut h, "demo-milvus", "GetVersion", "MilvusService/GetVersion");
    h.get_by_label("Send Ctrl+Enter").click();
    wait_reply(&mut h);
    assert!(matches!(composer(&h).response, Response::Unary(_)));
    h.get_by_label_contains("OK at the transport in ");
    h.get_by_label_contains("v2.6.20-walscope-demo");
    assert!(h.query_by_label_contains("normal on a primary").is_none(), "no hint on another reply");

    // GetReplicateInfo, its request built field by field in the form.
    h.state_mut().panes.clear::<ComposerState>();
    settle(&mut h);
    compose(&mut h, "demo-milvus", "GetReplicateInfo", "MilvusService/GetReplicateInfo");
    for (field, value) in [("source_cluster_id", "by-dev-old"), ("target_pchannel", "by-dev-rootcoord-dml_0")]
    {
        h.get_by_label("Add a field / edit the whole message").click();
        settle(&mut h);
        {
            // The drop-down and the value box, as the operator would fill them.
            let ed = &mut h
                .state_mut()
                .panes
                .first_mut::<ComposerState>()
                .unwrap()
                .request_detail
                .as_mut()
                .unwrap()
                .editor;
            ed.add_field = field.into();
            ed.add_value = value.into();
        }
        h.step();
        h.get_by_label("Add").click();
        settle(&mut h);
    }
    let json = composer(&h).json.clone();
    assert!(
        json.contains("\"sourceClusterId\": \"by-dev-old\"") && json.contains("by-dev-rootcoord-dml_0"),
        "the JSON follows the form: {json}"
    );
    h.get_by_label("Send Ctrl+Enter").click();
    wait_reply(&mut h);
    let Response::Unary(v) = &composer(&h).response else { panic!("no reply") };
    assert!(v.body_error.is_none(), "{:?}", v.body_error);
    // Asked with the new primary's pchannel, the checkpoint names the old primary's.
    assert!(
        v.detail.json.contains("salvageCheckpoint") && v.detail.json.contains("by-dev-old-rootcoord-dml_0"),
        "{}",
        v.detail.json
    );
}

/// GetReplicateInfo on the demo's new primary (force-promoted, so its reply holds only
/// `salvage_checkpoint`): the reply view says that is normal on a primary, that the salvage
/// needs it, and that the official Rust SDK 3.0.3 fails on exactly this reply.
#[test]
fn a_reply_with_only_the_salvage_checkpoint_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(SIZE, demo_app(dir.path()));
    compose(&mut h, "demo-milvus", "GetReplicateInfo", "MilvusService/GetReplicateInfo");
    set_json(&mut h, r#"{"source_cluster_id": "by-dev-old", "target_pchannel": "by-dev-rootcoord-dml_2"}"#);
    h.get_by_label("Send Ctrl+Enter").click();
    wait_reply(&mut h);
    let Response::Unary(v) = &composer(&h).response else { panic!("no reply") };
    assert!(
        v.detail.json.contains("salvageCheckpoint") && !v.detail.json.contains("\"checkpoint\""),
        "{}",
        v.detail.json
    );
    h.get_by_label_contains("Only salvage_checkpoint: normal on a primary");
    let words = h.get_by_label_contains("salvage_checkpoint is what a salvage needs");
    let node = words.accesskit_node();
    let text = node.label().or(node.value()).unwrap_or_default();
    assert!(
        text.contains("Rust SDK 3.0.3") && text.contains("replicate info response has no checkpoint"),
        "{text}"
    );
}

#[test]
fn an_error_in_an_ok_body_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(SIZE, demo_app(dir.path()));
    compose(&mut h, "demo-milvus", "Connect", "MilvusService/Connect");
    // A database the demo does not have: gRPC OK, status code 800 in the body.
    h.state_mut().panes.first_mut::<ComposerState>().unwrap().metadata = "dbname: nope".into();
    h.step();
    h.get_by_label("Send Ctrl+Enter").click();
    wait_reply(&mut h);
    let Response::Unary(v) = &composer(&h).response else { panic!("no reply") };
    let e = v.body_error.clone().expect("flagged");
    assert!(e.contains("800") && e.contains("database not found"), "{e}");
    h.get_by_label_contains("ERROR IN THE BODY: the server answered OK");
}

/// A server stream of `n` messages from a demo Milvus of small messages: the count and rate
/// move, Stop ends it, and "Save copy" gives a dump `walscope inspect` reads with every frame
/// that arrived.
fn stream_counted_stopped_and_saved(n: u64) {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let wal = walscope::sim::WalGenConfig { seed: 11, rows: (1, 1), total: None, ..Default::default() };
    let cfg = walscope::sim::milvus::MilvusDemoConfig { wal, ..Default::default() };
    let milvus = rt.block_on(walscope::sim::milvus::MilvusDemo::start(cfg)).unwrap();
    let endpoint = milvus.addr().to_string();
    let mut app = WalscopeApp::new();
    app.config_dir = Some(dir.path().to_path_buf());
    app.connections.demo.push(walscope::net::profile::ConnectionProfile::plain(
        "small-milvus",
        walscope::net::profile::TransportKind::Grpc,
        endpoint.clone(),
    ));
    let mut h = harness(SIZE, app);
    compose(&mut h, "small-milvus", "DumpMessages", "MilvusService/DumpMessages (server stream)");
    // From the salvage checkpoint, with no end: it streams until stopped.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args(["call", &endpoint, "milvus.proto.milvus.MilvusService/GetReplicateInfo", "-d"])
        .arg(r#"{"source_cluster_id": "by-dev-old", "target_pchannel": "by-dev-rootcoord-dml_0"}"#)
        .output()
        .unwrap();
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let id = &info["salvageCheckpoint"]["messageId"];
    set_json(&mut h, &format!(r#"{{"pchannel": "by-dev-rootcoord-dml_0", "start_message_id": {id}}}"#));
    h.get_by_label("Send Ctrl+Enter").click();
    let seen_rate = std::cell::Cell::new(0.0f64);
    let counts = std::cell::RefCell::new(Vec::new());
    let until = std::time::Instant::now() + std::time::Duration::from_secs(600);
    loop {
        h.step();
        let Response::Stream(s) = &composer(&h).response else { panic!("not a stream") };
        if let Some(Ok(sum)) = &s.summary {
            panic!("the stream ended early: {:?}", sum.end);
        }
        if let Some(live) = &s.live {
            let p = live.progress.borrow().clone();
            let mut c = counts.borrow_mut();
            if c.last() != Some(&p.count) {
                c.push(p.count);
            }
            seen_rate.set(f64::max(seen_rate.get(), p.rate_per_s));
            if p.count >= n {
                break;
            }
        }
        assert!(std::time::Instant::now() < until, "{n} messages did not come: {:?}", counts.borrow().last());
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let (counts, seen_rate) = (counts.into_inner(), seen_rate.get());
    assert!(counts.len() > 3, "the count moved as messages came: {counts:?}");
    assert!(seen_rate > 10.0, "a rate was shown: {seen_rate}");
    h.get_by_label_contains("msg/s");
    h.get_by_label("Stop Esc").click();
    step_until(
        &mut h,
        "the stream to end",
        |h| matches!(&composer(h).response, Response::Stream(s) if s.summary.is_some()),
    );
    let Response::Stream(s) = &composer(&h).response else { panic!() };
    let summary = s.summary.as_ref().unwrap().as_ref().unwrap().clone();
    assert!(matches!(summary.end, walscope::net::StreamEnd::Cancelled), "{:?}", summary.end);
    let count = summary.count;
    assert!(count >= n);
    // Save a copy, and read it as `walscope inspect` would.
    let copy = dir.path().join("saved.dump");
    if let Response::Stream(s) = &mut h.state_mut().panes.first_mut::<ComposerState>().unwrap().response {
        s.save_as = copy.display().to_string();
    }
    settle(&mut h);
    h.get_by_label("Save copy").click();
    step_until(
        &mut h,
        "the copy",
        |h| matches!(&composer(h).response, Response::Stream(s) if s.save_note.is_some()),
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args(["inspect", copy.to_str().unwrap(), "--stats"])
        .output()
        .unwrap();
    let stats = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stats.contains(&format!("frames:  {count},")), "{count} frames in\n{stats}");
}

#[test]
fn a_stream_counted_stopped_and_saved() {
    stream_counted_stopped_and_saved(3_000);
}

/// The full size of the issue: an optimised build makes the demo fast enough (`.ci/run` runs it).
#[test]
#[ignore = "100,000 messages: run with --release -- --ignored"]
fn a_hundred_thousand_message_stream_counted_stopped_and_saved() {
    stream_counted_stopped_and_saved(100_000);
}

#[test]
fn history_resends_the_exact_request_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(SIZE, demo_app(dir.path()));
    compose(&mut h, "demo-milvus", "GetReplicateInfo", "MilvusService/GetReplicateInfo");
    set_json(&mut h, r#"{"source_cluster_id": "by-dev-old", "target_pchannel": "by-dev-rootcoord-dml_2"}"#);
    let sent = composer(&h).request.clone();
    h.get_by_label("Send Ctrl+Enter").click();
    wait_reply(&mut h);
    // A new composer, the call opened from the history, re-sent.
    h.state_mut().panes.clear::<ComposerState>();
    settle(&mut h);
    compose(&mut h, "demo-milvus", "GetVersion", "MilvusService/GetVersion");
    h.get_by_label("History").click();
    step_until(&mut h, "the history", |h| matches!(&composer(h).history, Some(Ok(e)) if !e.is_empty()));
    settle(&mut h);
    let entries = match &composer(&h).history {
        Some(Ok(e)) => e.clone(),
        _ => unreachable!(),
    };
    let first = entries.iter().find(|e| e.method.ends_with("GetReplicateInfo")).expect("recorded");
    assert_eq!(first.request, sent);
    h.get_by_label(&format!("Open #{}", first.id)).click();
    settle(&mut h);
    assert_eq!(composer(&h).request, sent);
    h.get_by_label("Send Ctrl+Enter").click();
    wait_reply(&mut h);
    let all = h.state().history_store().list(None).unwrap();
    let again: Vec<_> = all.iter().filter(|e| e.method.ends_with("GetReplicateInfo")).collect();
    assert_eq!(again.len(), 2, "both calls recorded");
    // The open history list shows the re-sent call too.
    step_until(
        &mut h,
        "the re-sent call in the list",
        |h| matches!(&composer(h).history, Some(Ok(e)) if e.iter().filter(|e| e.method.ends_with("GetReplicateInfo")).count() == 2),
    );
    assert_eq!(again[0].request, again[1].request, "the same request bytes went out");
}

#[test]
fn send_from_a_dump_frame_preselects_the_method_and_keeps_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let set = walscope::schema::SchemaSet::builtin();
    let desc = set.message("milvus.proto.milvus.DumpMessagesRequest").unwrap();
    let msg =
        walscope::codec::from_json(&desc, r#"{"pchannel": "by-dev-rootcoord-dml_3", "end_timetick": "5"}"#)
            .unwrap();
    let bytes = walscope::codec::encode(&msg);
    let file = dir.path().join("request.bin");
    std::fs::write(&file, &bytes).unwrap();
    let mut app = demo_app(dir.path());
    app.open_as(
        file.clone(),
        walscope::ui::panes::file::ReadAs {
            framing: Some(walscope::dump::Framing::Single),
            type_name: Some("milvus.proto.milvus.DumpMessagesRequest".into()),
        },
    );
    let mut h = harness(SIZE, app);
    step_until(&mut h, "the file", |h| {
        h.state().tabs.len() == 1 && h.state().tabs[0].dump.frame_count() == 1
    });
    h.state_mut().tabs[0].select(0);
    settle(&mut h);
    h.get_by_label("Send...").click();
    step_until(&mut h, "a composer", |h| h.state().panes.first::<ComposerState>().is_some());
    settle(&mut h);
    let c = composer(&h);
    assert_eq!(c.method.as_deref(), Some("milvus.proto.milvus.MilvusService.DumpMessages"));
    assert_eq!(c.request, bytes);
}

#[test]
fn calls_that_change_a_server_wait_for_a_confirmation() {
    let dir = tempfile::tempdir().unwrap();
    let app = demo_app(dir.path());
    let synctool = app.connections.demo.iter().find(|p| p.name == "demo-synctool").unwrap().endpoint.clone();
    let mut h = harness(SIZE, app);
    // A task to delete, made through the library.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let client = || crate::common::synctool(&synctool);
    crate::common::create_task(&rt, &synctool, "orders");
    let tasks = || rt.block_on(client().task_status()).unwrap().0.len();
    assert_eq!(tasks(), 2);

    compose(&mut h, "demo-synctool", "DeleteSync", "SyncTool/DeleteSyncTask");
    set_json(&mut h, r#"{"db": "demo_db", "name": "orders"}"#);
    h.get_by_label("Send Ctrl+Enter").click();
    settle(&mut h);
    // A modal over the window, naming the server (never where "Send" was).
    h.get_by_label("Send this call?");
    h.get_by_label_contains("This call changes the server demo-synctool (");
    h.get_by_label_contains("deletes the sync task of table demo_db.orders");
    std::thread::sleep(std::time::Duration::from_millis(300));
    settle(&mut h);
    assert!(matches!(composer(&h).response, Response::None), "nothing sent");
    assert_eq!(tasks(), 2, "the server still has the task");
    // The request changed while the box was open: "Send it" asks again about the new call.
    set_json(&mut h, r#"{"db": "demo_db", "name": "users"}"#);
    h.get_by_label("⚠ Send it").click();
    settle(&mut h);
    h.get_by_label_contains("the call changed since you confirmed it");
    h.get_by_label_contains("deletes the sync task of table demo_db.users");
    assert!(matches!(composer(&h).response, Response::None), "nothing sent");
    assert_eq!(tasks(), 2);
    h.get_by_label("Cancel").click();
    settle(&mut h);
    assert!(composer(&h).confirm.is_none());
    assert_eq!(tasks(), 2);
    set_json(&mut h, r#"{"db": "demo_db", "name": "orders"}"#);
    h.get_by_label("Send Ctrl+Enter").click();
    settle(&mut h);
    h.get_by_label("⚠ Send it").click();
    wait_reply(&mut h);
    step_until(&mut h, "the task to go", |_| tasks() == 0);

    // clear_all needs the word typed.
    crate::common::create_task(&rt, &synctool, "orders");
    h.state_mut().panes.clear::<ComposerState>();
    settle(&mut h);
    compose(&mut h, "demo-synctool", "TaskStatus", "SyncTool/TaskStatus");
    set_json(&mut h, r#"{"clear_all": true}"#);
    h.get_by_label("Send Ctrl+Enter").click();
    settle(&mut h);
    h.get_by_label_contains("deletes EVERY sync task");
    h.get_by_label("⚠ Send it").click();
    settle(&mut h);
    assert!(
        matches!(composer(&h).response, Response::None),
        "the button does nothing until the word is typed"
    );
    assert_eq!(tasks(), 2);
    h.get_by_label("Type clear all to go on:").click();
    h.get_by_label("Type clear all to go on:").type_text("clear all");
    settle(&mut h);
    h.get_by_label("⚠ Send it").click();
    wait_reply(&mut h);
    step_until(&mut h, "every task to go", |_| tasks() == 0);
}

/// The Connections pane: create a profile, test it live and against a dead port (in words),
/// edit it, delete it; profiles.json follows, and never holds a secret.
#[test]
fn connections_create_test_edit_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_app(dir.path());
    app.show_connections = true;
    let milvus = app.connections.demo.iter().find(|p| p.name == "demo-milvus").unwrap().endpoint.clone();
    let mut h = harness(SIZE, app);
    settle(&mut h);
    h.get_by_label("New profile").click();
    settle(&mut h);
    let fill = |h: &mut Harness<'static, WalscopeApp>, label: &str, text: &str| {
        let field = h.get_by_label(label);
        field.click();
        field.type_text(text);
        h.step();
    };
    fill(&mut h, "Name:", "primary");
    fill(&mut h, "Endpoint (host:port):", &milvus);
    {
        let f = h.state_mut().connections.form.as_mut().unwrap();
        f.auth = walscope::ui::panes::connections::profile_form::AuthChoice::Token;
        f.secret_env = "WALSCOPE_TEST_TOKEN_UNSET".into();
        f.auth = walscope::ui::panes::connections::profile_form::AuthChoice::None;
    }
    settle(&mut h);
    h.get_by_label("Save profile").click();
    let store = dir.path().join("profiles.json");
    step_until(&mut h, "the save", |_| {
        std::fs::read_to_string(&store).is_ok_and(|t| t.contains("\"primary\""))
    });
    step_until(&mut h, "the list", |h| h.query_by_label("Test primary").is_some());
    settle(&mut h);
    h.get_by_label("Test primary").click();
    step_until(&mut h, "the test", |h| {
        matches!(
            h.state().connections.result("primary"),
            Some(walscope::ui::panes::connections::CheckResult::Done(_))
        )
    });
    settle(&mut h);
    h.get_by_label_contains("OK: Milvus v2.6.20-walscope-demo (GetVersion) in ");

    // Edit: a dead port, tested before saving, fails in words.
    let (_held, dead) = crate::common::refused_address();
    let dead_addr = dead.to_string();
    h.get_by_label("Edit primary").click();
    settle(&mut h);
    h.state_mut().connections.form.as_mut().unwrap().endpoint = dead_addr.clone();
    settle(&mut h);
    h.get_by_label("Test these settings").click();
    // The result shows in the form, under its button; the saved profile's card keeps the
    // result of the saved settings (these are not saved yet).
    step_until(&mut h, "the failure in the form", |h| h.query_by_label_contains("Failed: refused").is_some());
    settle(&mut h);
    use walscope::ui::panes::connections::CheckResult;
    let form = h.state().connections.form_check.clone();
    assert!(matches!(&form, Some(CheckResult::Done(r)) if !r.ok()), "the form's own result");
    assert!(form.unwrap().text().starts_with("Failed: refused"));
    assert!(
        matches!(h.state().connections.result("primary"), Some(CheckResult::Done(r)) if r.ok()),
        "the card still shows its saved settings' result"
    );
    h.get_by_label_contains("OK: Milvus v2.6.20-walscope-demo (GetVersion) in ");
    h.get_by_label("Save profile").click();
    step_until(&mut h, "the edit", |_| std::fs::read_to_string(&store).is_ok_and(|t| t.contains(&dead_addr)));
    // A name is refused where the form says so.
    settle(&mut h);
    h.get_by_label("New profile").click();
    settle(&mut h);
    h.get_by_label("Save profile").click();
    settle(&mut h);
    h.get_by_label_contains("Not saved: name: give the profile a name");
    h.get_by_label("Cancel").click();
    settle(&mut h);

    // Delete asks once more, in a modal (a double click on the button cannot delete).
    h.get_by_label("⚠ Delete primary").click();
    settle(&mut h);
    h.get_by_label("Delete this profile?");
    // The second click of a double click lands outside the modal: it closes it, deletes nothing.
    h.get_by_label("⚠ Delete primary").click();
    settle(&mut h);
    assert!(std::fs::read_to_string(&store).unwrap().contains("primary"), "not yet");
    h.get_by_label("⚠ Delete primary").click();
    settle(&mut h);
    h.get_by_label("⚠ Delete the profile").click();
    step_until(&mut h, "the delete", |_| {
        std::fs::read_to_string(&store).is_ok_and(|t| !t.contains("primary"))
    });
    assert!(
        !std::fs::read_to_string(&store).unwrap().contains("WALSCOPE_TEST_TOKEN"),
        "no secret, no reference left"
    );
}

/// A composer opened without a method shows the loaded services up front (as Postman and Kreya
/// do), one click from a method; a reply of 0 bytes says what it means instead of a blank tree.
#[test]
fn no_method_lists_the_services_and_an_empty_reply_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(SIZE, demo_app(dir.path()));
    h.state_mut().new_composer(Some("demo-milvus".into()), None, Vec::new(), None);
    settle(&mut h);
    h.get_by_label_contains("pick one, or type part of its name above");
    // Three services are loaded: each is open, its methods listed.
    h.get_by_label("MilvusService (17)");
    h.get_by_label("SyncTool (4)");
    h.get_by_label("DropCollection").click();
    settle(&mut h);
    assert_eq!(composer(&h).method.as_deref(), Some("milvus.proto.milvus.MilvusService.DropCollection"));
    assert!(h.query_by_label_contains("pick one, or type part of its name above").is_none(), "chosen");
    set_json(&mut h, r#"{"collection_name": "not_there"}"#);
    h.get_by_label("Send Ctrl+Enter").click();
    settle(&mut h);
    h.get_by_label("⚠ Send it").click();
    wait_reply(&mut h);
    let Response::Unary(v) = &composer(&h).response else { panic!("no reply") };
    assert!(v.outcome.reply.is_empty(), "the demo answers a drop with an empty status");
    h.get_by_label("The reply is empty (0 bytes).");
}

/// GetReplicateInfo with the old primary's pchannel name, on the new primary: no answer until
/// the deadline (upstream retries it), and the composer says why and what to ask instead, in the
/// words the CLI prints.
#[test]
fn a_pchannel_the_new_primary_does_not_have_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(SIZE, demo_app(dir.path()));
    compose(&mut h, "demo-milvus", "GetReplicateInfo", "MilvusService/GetReplicateInfo");
    set_json(
        &mut h,
        r#"{"source_cluster_id": "by-dev-old", "target_pchannel": "by-dev-old-rootcoord-dml_0"}"#,
    );
    h.state_mut().panes.first_mut::<ComposerState>().unwrap().deadline = "1".into();
    h.step();
    h.get_by_label("Send Ctrl+Enter").click();
    wait_reply(&mut h);
    assert!(matches!(composer(&h).response, Response::Failed(_)), "no answer for that pchannel");
    h.get_by_label_contains("Wrong pchannel?");
    h.get_by_label_contains("pymilvus's docstring says the opposite; it is wrong");
    h.get_by_label_contains("with one of ITS pchannels");
}
