//! The transcript round trip in the window, headless with egui_kittest, against the demo
//! servers behind a proxy that keeps every byte the client sent: a call's "Save transcript"
//! (and an existing file kept), the transcript opened by the app's Open path and by the
//! composer's "Open transcript" (also one `walscope call --transcript` wrote), re-sent: the
//! request bytes on the wire are the transcript's; a damaged transcript is refused in words.

use crate::common::gui::{compose, harness, settle, step_until};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::path::Path;
use walscope::net::transcript::Transcript;
use walscope::ui::WalscopeApp;
use walscope::ui::panes::composer::{ComposerState, Response};

const SIZE: [f32; 2] = [1600.0, 1400.0];
const REQUEST: &str = r#"{"source_cluster_id": "by-dev-old", "target_pchannel": "by-dev-rootcoord-dml_1"}"#;

fn composer<'a>(h: &'a Harness<'static, WalscopeApp>) -> &'a ComposerState {
    h.state().panes.first::<ComposerState>().unwrap()
}

fn holds(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// GetReplicateInfo calls recorded in the history so far.
fn calls(h: &Harness<'static, WalscopeApp>) -> Vec<walscope::net::history::HistoryEntry> {
    let all = h.state().history_store().list(None).unwrap();
    all.into_iter().filter(|e| e.method.ends_with("GetReplicateInfo")).collect()
}

/// Sends the composer's request again and waits for the call's answer; returns the request
/// bytes the call layer handed to the transport.
fn resend(h: &mut Harness<'static, WalscopeApp>) -> Vec<u8> {
    let before = calls(h).len();
    h.get_by_label("Send Ctrl+Enter").click();
    step_until(h, "the call recorded", |h| calls(h).len() == before + 1);
    step_until(h, "the answer", |h| {
        matches!(&composer(h).response, Response::Unary(_))
            && composer(h).transcript.last.as_ref().is_some_and(|t| t.history_id.is_none())
    });
    settle(h);
    let Response::Unary(v) = &composer(h).response else { unreachable!() };
    assert_eq!(calls(h).last().unwrap().request, v.outcome.request.to_vec());
    v.outcome.request.to_vec()
}

#[test]
fn a_transcript_saved_opened_and_resent_sends_the_same_request_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = WalscopeApp::new();
    app.config_dir = Some(dir.path().to_path_buf());
    app.start_demo();
    app.show_tasks = false;
    let mut proxied = app.connections.demo.iter().find(|p| p.name == "demo-milvus").unwrap().clone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (via, sent, _) = rt.block_on(crate::common::recording_proxy_both(proxied.endpoint.parse().unwrap()));
    proxied.name = "proxied".into();
    proxied.endpoint = via.clone();
    app.connections.demo.push(proxied);
    let mut h = harness(SIZE, app);

    // A call, and its transcript saved from the window.
    compose(&mut h, "proxied", "GetReplicateInfo", "MilvusService/GetReplicateInfo");
    {
        let pool = h.state().schemas.pool().clone();
        let c = h.state_mut().panes.first_mut::<ComposerState>().unwrap();
        c.json = REQUEST.into();
        c.json_changed(&pool);
    }
    settle(&mut h);
    let request = composer(&h).request.clone();
    assert_eq!(resend(&mut h), request);
    let saved = dir.path().join("window.transcript.json");
    h.state_mut().panes.first_mut::<ComposerState>().unwrap().transcript.save_as =
        saved.display().to_string();
    h.step();
    h.get_by_label("Save transcript").click();
    step_until(&mut h, "the transcript saved", |h| matches!(composer(h).transcript.save_note, Some(Ok(_))));
    let bytes = std::fs::read(&saved).unwrap();
    let doc = Transcript::from_json(&bytes).unwrap();
    assert_eq!(
        (doc.request.base64.as_slice(), doc.target.profile.as_deref()),
        (request.as_slice(), Some("proxied"))
    );
    assert_eq!(doc.messages.len(), 1);
    // Saved again without "Replace an existing file": refused, not a byte changed.
    h.get_by_label("Save transcript").click();
    step_until(&mut h, "the refusal", |h| matches!(composer(h).transcript.save_note, Some(Err(_))));
    h.get_by_label_contains("already exists: nothing was written");
    assert_eq!(std::fs::read(&saved).unwrap(), bytes);

    // Opened by the app's Open path: a composer filled in, the recorded reply shown; re-sent.
    h.state_mut().panes.clear::<ComposerState>();
    settle(&mut h);
    h.state_mut().open(saved.clone());
    step_until(&mut h, "the transcript opened", |h| {
        h.state().panes.first::<ComposerState>().is_some_and(|c| c.transcript.open_note.is_some())
    });
    settle(&mut h);
    assert!(h.state().tabs.is_empty(), "a transcript opens in a composer, not as a dump");
    let c = composer(&h);
    assert!(
        matches!(&c.transcript.open_note, Some(Ok(_))),
        "{:?}",
        c.transcript.open_note.as_ref().map(|r| r.as_ref().err().map(|e| e.to_string()))
    );
    assert_eq!((c.profile.as_str(), c.method.as_deref()), ("proxied", Some(doc.method.full_name.as_str())));
    assert_eq!(c.request, request);
    let Response::Unary(v) = &c.response else { panic!("the recorded reply is shown") };
    assert_eq!(v.outcome.reply.to_vec(), doc.messages[0].base64);
    h.get_by_label_contains("The reply below is the recorded one");
    sent.lock().unwrap().clear();
    assert_eq!(resend(&mut h), request);
    assert!(holds(&sent.lock().unwrap(), &request), "the same request bytes crossed the socket");

    // One `walscope call --transcript` wrote, opened with "Open transcript" (its target is the
    // proxy's address, which the "proxied" profile names), re-sent.
    let cli = dir.path().join("cli.transcript.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args(["call", &via, "MilvusService/GetReplicateInfo", "-d", REQUEST, "--transcript"])
        .arg(&cli)
        .env("WALSCOPE_CONFIG_DIR", dir.path().join("cli-config"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cli_doc = Transcript::from_json(&std::fs::read(&cli).unwrap()).unwrap();
    assert_eq!(cli_doc.request.base64, request, "the CLI encodes the JSON the way the window does");
    h.get_by_label("Transcript file:").click();
    h.get_by_label("Transcript file:").type_text(&cli.display().to_string());
    h.step();
    h.get_by_label("Open transcript").click();
    step_until(&mut h, "the CLI's transcript opened", |h| {
        composer(h)
            .transcript
            .open_note
            .as_ref()
            .is_some_and(|n| n.as_ref().is_ok_and(|w| w.contains("cli.transcript.json")))
    });
    assert_eq!(composer(&h).profile, "proxied");
    sent.lock().unwrap().clear();
    assert_eq!(resend(&mut h), cli_doc.request.base64);
    assert!(holds(&sent.lock().unwrap(), &cli_doc.request.base64));

    // A damaged transcript: the composer says what is wrong.
    let bad = dir.path().join("bad.json");
    let mut text = String::from_utf8(bytes).unwrap();
    text.truncate(text.len() / 2);
    std::fs::write(&bad, text).unwrap();
    open_in_composer(&mut h, &bad);
    h.get_by_label_contains("not a JSON document");
}

fn open_in_composer(h: &mut Harness<'static, WalscopeApp>, path: &Path) {
    h.state_mut().panes.first_mut::<ComposerState>().unwrap().transcript.open_path =
        path.display().to_string();
    h.step();
    h.get_by_label("Open transcript").click();
    step_until(h, "the transcript read", |h| {
        composer(h).transcript.open_note.as_ref().is_some_and(|n| n.as_ref().is_err())
    });
    settle(h);
}

/// A stream's transcript in the window: every message the dump got, with its exact bytes.
#[test]
fn a_stream_transcript_is_saved_from_the_window() {
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
    let ask = r#"{"source_cluster_id": "by-dev-old", "target_pchannel": "by-dev-rootcoord-dml_0"}"#;
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args(["call", &endpoint, "MilvusService/GetReplicateInfo", "-d", ask])
        .env("WALSCOPE_CONFIG_DIR", dir.path().join("cli-config"))
        .output()
        .unwrap();
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ckpt = &info["salvageCheckpoint"];
    let end = ckpt["timeTick"].as_str().unwrap().parse::<u64>().unwrap() + (100 << 18);
    let window = serde_json::json!({"pchannel": "by-dev-rootcoord-dml_0", "start_message_id": ckpt["messageId"],
        "end_timetick": end.to_string()});
    compose(&mut h, "small-milvus", "DumpMessages", "MilvusService/DumpMessages (server stream)");
    {
        let pool = h.state().schemas.pool().clone();
        let c = h.state_mut().panes.first_mut::<ComposerState>().unwrap();
        c.json = window.to_string();
        c.json_changed(&pool);
        assert!(c.json_error.is_none(), "{:?}", c.json_error);
    }
    settle(&mut h);
    h.get_by_label("Send Ctrl+Enter").click();
    step_until(
        &mut h,
        "the stream's end",
        |h| matches!(&composer(h).response, Response::Stream(s) if s.summary.is_some()),
    );
    step_until(&mut h, "the stream's transcript", |h| composer(h).transcript.last.is_some());
    settle(&mut h);
    let (count, dump) = match &composer(&h).response {
        Response::Stream(s) => match &s.summary {
            Some(Ok(sum)) => (sum.count, s.path.clone()),
            other => {
                panic!("{:?}", other.as_ref().map(|r| r.as_ref().map(|s| s.count).map_err(|e| e.to_string())))
            }
        },
        _ => unreachable!(),
    };
    assert!(count > 0);
    let saved = dir.path().join("stream.transcript.json");
    h.state_mut().panes.first_mut::<ComposerState>().unwrap().transcript.save_as =
        saved.display().to_string();
    h.step();
    h.get_by_label("Save transcript").click();
    step_until(&mut h, "the transcript saved", |h| matches!(composer(h).transcript.save_note, Some(Ok(_))));
    let doc = Transcript::from_json(&std::fs::read(&saved).unwrap()).unwrap();
    assert_eq!(doc.method.kind, walscope::net::transcript::MethodKind::ServerStream);
    assert_eq!(doc.messages.len() as u64, count);
    assert_eq!(doc.status.stream_end.as_deref(), Some("completed"));
    // The messages are the dump's frames, byte for byte.
    let frames = walscope::dump::DumpFile::open(&dump, walscope::dump::OpenOptions::default()).unwrap();
    frames.wait_indexed();
    assert_eq!(frames.frame_count() as u64, count);
    for (i, m) in doc.messages.iter().enumerate() {
        let loc = frames.frame(i).unwrap();
        // The frame is the varint length, then the message exactly.
        let frame = frames.frame_bytes(&loc);
        assert!(frame.ends_with(&m.base64) && frame.len() - m.base64.len() <= 10, "message {i}");
    }
}
