//! The composer's answer: a unary reply with its status in words, timing, headers and trailers,
//! decoded in the detail view, an error in its body flagged, and what it means said when its
//! fields alone do not (a GetReplicateInfo reply with only `salvage_checkpoint`: core's
//! `ReplyHint`); a stream's count, rate, bytes and newest messages, with the dump it is written
//! to (open it, or save a copy); a failure sorted into what an operator can act on.
//!
//! Must never: keep a stream's messages beyond the job's ring (the dump holds them all).

use crate::panes::command::{AppCommand, CommandSender};
use crate::panes::composer::{ComposerState, Response, StreamView};
use crate::panes::file::detail::{DetailSource, MessageDetail};
use crate::panes::file::detail_view;
use eframe::egui;
use prost_reflect::DescriptorPool;

pub fn show(st: &mut ComposerState, pool: &DescriptorPool, ui: &mut egui::Ui, tx: &CommandSender) {
    let output = st.method_desc(pool).map(|m| m.output());
    let ended = match &st.response {
        Response::Unary(_) | Response::Failed(_) => true,
        Response::Stream(s) => s.summary.is_some(),
        _ => false,
    };
    if ended {
        super::transcript::save_row(st, ui, tx);
    }
    match &mut st.response {
        Response::None => {
            ui.weak("No call yet: Send (Ctrl+Enter) shows the answer here.");
        }
        Response::Waiting { since, .. } => {
            ui.horizontal(|ui| {
                crate::widgets::look::busy(ui);
                ui.label(format!("waiting for the answer ({:.1} s)", since.elapsed().as_secs_f64()));
            });
        }
        Response::Failed(f) => {
            ui.colored_label(ui.visuals().error_fg_color, format!("Failed: {}", f.kind.label()));
            ui.label(&f.error);
            ui.label(f.kind.words());
            if let Some(x) = &f.explanation {
                crate::widgets::look::badge(ui, crate::widgets::look::Tone::Warn, "Wrong pchannel?");
                ui.label(x);
            }
        }
        Response::Unary(v) => {
            let o = &v.outcome;
            ui.horizontal_wrapped(|ui| {
                ui.strong(format!("OK at the transport in {} ms", o.elapsed.as_millis()));
                ui.label(format!(
                    "{} request bytes sent{}",
                    o.request.len(),
                    if o.request_exact { " exactly" } else { " (as JSON)" }
                ));
                ui.label(format!("{} reply bytes", o.reply.len()));
            });
            if let Some(e) = &v.body_error {
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    format!(
                        "ERROR IN THE BODY: the server answered OK, but the reply says the call failed: {e}"
                    ),
                );
            }
            if let Some(h) = v.hint {
                crate::widgets::look::badge(ui, crate::widgets::look::Tone::Info, h.title());
                ui.label(h.words());
            }
            let b = crate::widgets::look::named_button(ui, "Compare with…", "Compare this reply with…").on_hover_text(
                "compare this reply with an earlier reply (here or in another composer) or a message file",
            );
            if b.clicked() {
                tx.send(AppCommand::CompareWith(crate::panes::diff::CompareFrom::Reply { composer: st.id }));
            }
            pairs(ui, "Headers", &o.headers, st.id);
            pairs(ui, "Trailers", &o.trailers, st.id);
            if o.reply.is_empty() {
                crate::widgets::look::empty_state(
                    ui,
                    "The reply is empty (0 bytes).",
                    "In protobuf that is a message whose every field has its default value (0, \"\", \
                     false, no entries): the server answered, with nothing set.",
                );
                return;
            }
            ui.push_id(("reply", st.id), |ui| {
                // The reply is shown, not edited.
                let _ = detail_view::show(
                    &mut v.detail,
                    ui,
                    (std::path::Path::new("reply"), "single"),
                    output.as_ref(),
                );
            });
        }
        Response::Stream(s) => stream(s, st.id, pool, output.as_ref(), ui, tx),
    }
}

fn pairs(ui: &mut egui::Ui, title: &str, pairs: &[(String, String)], id: u64) {
    egui::CollapsingHeader::new(format!("{title} ({})", pairs.len())).id_salt((title, id)).show(ui, |ui| {
        egui::Grid::new((title, id, "grid")).striped(true).show(ui, |ui| {
            for (k, v) in pairs {
                ui.monospace(k);
                ui.monospace(v);
                ui.end_row();
            }
        });
    });
}

/// A stream's state in a few words: how it ended once it did (the failure itself is said on
/// its own line), else where it is.
fn stream_state(
    summary: Option<&Result<crate::net::call::StreamSummary, super::StreamFailed>>,
    live: &walscope_ops::jobs::call_stream::CallStreamState,
) -> String {
    use crate::net::StreamEnd;
    use walscope_ops::jobs::call_stream::CallStreamState as Live;
    match (summary, live) {
        (Some(Err(e)), _) => format!("the dump could not be written: {e}"),
        (Some(Ok(sum)), _) => match &sum.end {
            StreamEnd::Completed => "complete: the server ended the stream".into(),
            StreamEnd::Cancelled => "stopped: the dump holds what came".into(),
            StreamEnd::Failed(_) => "failed (below)".into(),
            StreamEnd::Stopped(why) => format!("stopped writing: {why}"),
        },
        (None, Live::Opening) => "opening".into(),
        (None, Live::Streaming) => "receiving".into(),
        (None, Live::Done) => "complete".into(),
        (None, Live::Cancelled) => "stopping".into(),
        (None, Live::Failed(why)) => format!("failed: {why}"),
    }
}

/// Rows of the newest messages shown at most.
const TAIL_ROWS: usize = 1_000;

fn stream(
    s: &mut StreamView,
    id: u64,
    pool: &DescriptorPool,
    output: Option<&prost_reflect::MessageDescriptor>,
    ui: &mut egui::Ui,
    tx: &CommandSender,
) {
    let Some(live) = &s.live else {
        match &s.summary {
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("The stream did not start: {e}"));
            }
            _ => {
                ui.horizontal(|ui| {
                    crate::widgets::look::busy(ui);
                    ui.label("opening the stream...");
                });
            }
        }
        return;
    };
    let p = live.progress.borrow().clone();
    ui.horizontal_wrapped(|ui| {
        ui.strong(walscope_core::fmt::counted(p.count, "message"));
        ui.label(format!("{:.0} msg/s", p.rate_per_s));
        ui.label(walscope_core::fmt::bytes(p.bytes));
        ui.label(format!("{:.1} s", p.elapsed.as_secs_f64()));
        ui.label(format!("state: {}", stream_state(s.summary.as_ref(), &p.state)));
    });
    if let Some(Ok(sum)) = &s.summary
        && let crate::net::StreamEnd::Failed(e) = &sum.end
    {
        let kind = e.kind();
        ui.colored_label(
            ui.visuals().error_fg_color,
            format!("Failed ({}): {}", kind.label(), e.words_without_hint()),
        );
        ui.label(kind.words());
    }
    ui.horizontal(|ui| {
        ui.label("Written as it arrives to:");
        ui.monospace(s.path.display().to_string());
        if ui.button("Open in the browser").clicked() {
            tx.send(AppCommand::Open(s.path.clone()));
        }
    });
    ui.horizontal(|ui| {
        let l = ui.label("Save as dump:");
        ui.add(egui::TextEdit::singleline(&mut s.save_as).desired_width(320.0)).labelled_by(l.id);
        let done = s.summary.is_some();
        let b = ui.add_enabled(done && !s.save_as.trim().is_empty(), egui::Button::new("Save copy"));
        if b.on_disabled_hover_text("once the stream has ended (Stop ends it)").clicked() {
            tx.send(AppCommand::SaveStream {
                composer: id,
                from: s.path.clone(),
                to: s.save_as.trim().into(),
                replace: s.save_replace,
            });
        }
        ui.checkbox(&mut s.save_replace, "Replace an existing file")
            .on_hover_text("the file there now is kept as .bak");
        match &s.save_note {
            Some(Ok(path)) => {
                ui.label(format!("saved {}", path.display()));
            }
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, e.to_string());
            }
            None => {}
        }
    });
    let tail = live.ring.latest(TAIL_ROWS);
    ui.label(format!("Newest {} of {} (all of them are in the dump):", tail.len(), p.count));
    let row_h = ui.text_style_height(&egui::TextStyle::Monospace) + 4.0;
    let mut clicked = None;
    egui::ScrollArea::vertical().id_salt(("tail", id)).max_height(220.0).stick_to_bottom(true).show_rows(
        ui,
        row_h,
        tail.len(),
        |ui, rows| {
            for (n, bytes) in &tail[rows] {
                let selected = s.selected.as_ref().is_some_and(|(k, _)| k == n);
                let text = format!("#{n}  {} bytes  {}", bytes.len(), summary(pool, output, bytes));
                if ui.selectable_label(selected, egui::RichText::new(text).monospace()).clicked() {
                    clicked = Some((*n, bytes.clone()));
                }
            }
        },
    );
    if let Some((n, bytes)) = clicked {
        let source = DetailSource::Message { label: format!("stream message #{n}") };
        s.selected = Some((n, MessageDetail::of(pool, output, bytes.to_vec(), &[], source)));
    }
    if let Some((_, d)) = s.selected.as_mut() {
        ui.push_id(("stream_detail", id), |ui| {
            let _ = detail_view::show(d, ui, (std::path::Path::new("stream"), "single"), output);
        });
    }
}

/// One line for a streamed message: the WAL summary of a DumpMessagesResponse, else its size.
fn summary(pool: &DescriptorPool, output: Option<&prost_reflect::MessageDescriptor>, bytes: &[u8]) -> String {
    let Some(o) = output else { return String::new() };
    if o.full_name() != "milvus.proto.milvus.DumpMessagesResponse" {
        return String::new();
    }
    let Ok(d) = crate::codec::decode(o, bytes) else { return "not a valid message".into() };
    match d.message.get_field_by_name("message").and_then(|v| v.as_message().cloned()) {
        Some(imm) => crate::wal::analyze_row(pool, &imm).summary(),
        None => crate::net::body_error(&d.message).map_or_else(String::new, |e| format!("status: {e}")),
    }
}
