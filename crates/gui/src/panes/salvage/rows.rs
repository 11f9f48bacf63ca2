//! The salvage pane's dumps: one row per pchannel while it runs (cancel, frames, bytes, rate,
//! how far toward the end time, ETA, its state), then how it ended (resume when it can), the
//! dump's summary (frames, bytes, first and last timetick as UTC, counts per type) and findings
//! (transactions lost in opaque `_t=999` frames, encrypted frames, gaps), and "open".
//!
//! Must never: hold a dump's messages (the report is read by a job from the file).

use crate::jobs::LiveDump;
use crate::panes::command::{AppCommand, CommandSender};
use crate::panes::salvage::SalvageState;
use eframe::egui;
use walscope_ops::salvage::job::SalvageState as JobState;

/// `live`: the dumps the pane's jobs are writing now.
pub fn show(st: &mut SalvageState, live: &[LiveDump], ui: &mut egui::Ui, tx: &CommandSender) {
    if live.is_empty() && st.ends.is_empty() {
        return;
    }
    ui.separator();
    for d in live {
        let p = d.progress.borrow().clone();
        ui.horizontal_wrapped(|ui| {
            ui.monospace(&d.pchannel);
            // Before the figures, whose width changes with every report: after them, the
            // button moved under the pointer (a click aimed at it could land beside it).
            if ui
                .add_enabled(!d.cancel.is_cancelled(), egui::Button::new(format!("Cancel {}", d.pchannel)))
                .clicked()
            {
                tx.send(AppCommand::CancelDump { pane: st.id, pchannel: d.pchannel.clone() });
            }
            let text = format!(
                "{} frames, {:.1} MiB, {:.0}/s{}",
                p.frames,
                p.bytes as f64 / (1 << 20) as f64,
                p.rate_per_s,
                if p.skipped > 0 {
                    format!(", {} already replicated skipped", p.skipped)
                } else {
                    String::new()
                }
            );
            match p.fraction() {
                Some(f) => {
                    let eta = p.eta().map_or(String::new(), |e| format!(", {} s left", e.as_secs()));
                    ui.add(
                        egui::ProgressBar::new(f as f32)
                            .desired_width(220.0)
                            .text(format!("{:.0}%{eta}", f * 100.0)),
                    );
                }
                None => {
                    crate::widgets::look::busy(ui);
                }
            }
            ui.label(text);
            if p.last_timetick > 0 {
                ui.weak(format!("at {} UTC", walscope_core::time::format_timetick(p.last_timetick)));
            }
            let state = match &p.state {
                JobState::Checkpoint => "reading the checkpoint".to_string(),
                JobState::Dumping => "dumping".into(),
                JobState::Reconnecting { attempt, reason } => format!("reconnecting ({attempt}): {reason}"),
                JobState::Done => "done".into(),
                JobState::Cancelled => "cancelled".into(),
                JobState::Failed(e) => format!("failed: {e}"),
            };
            ui.label(state);
        });
    }
    let running: Vec<String> = live.iter().map(|d| d.pchannel.clone()).collect();
    let mut open_all = Vec::new();
    for e in &st.ends {
        egui::Frame::group(ui.style()).show(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                ui.strong(&e.pchannel);
                // With a report, its line below says the frames and bytes: said once.
                let read_back = matches!(e.report, Some(Ok(_)));
                match &e.outcome {
                    Ok(how) if read_back => ui.label(how.headline()),
                    Ok(how) => ui.label(how.to_string()),
                    Err(e) => ui.colored_label(ui.visuals().error_fg_color, e.to_string()),
                };
                if e.resumable
                    && !running.contains(&e.pchannel)
                    && ui.button(format!("Resume {}", e.pchannel)).clicked()
                {
                    tx.send(AppCommand::ResumeSalvage { pane: st.id, pchannel: Some(e.pchannel.clone()) });
                }
                // The job read the file back (a report): it is there. No disk check in a frame.
                if e.report.as_ref().is_some_and(|r| r.is_ok()) {
                    open_all.push(e.file.clone());
                    if ui.button(format!("Open {}", e.pchannel)).clicked() {
                        tx.send(AppCommand::Open(e.file.clone()));
                    }
                }
            });
            match &e.report {
                None => {}
                Some(Err(why)) => {
                    ui.colored_label(ui.visuals().error_fg_color, format!("not read back: {why}"));
                }
                Some(Ok(r)) => {
                    ui.label(format!(
                        "{}, {}, {} .. {}",
                        walscope_core::fmt::counted(r.frames, "frame"),
                        walscope_core::fmt::bytes_exact(r.bytes),
                        r.first_utc().unwrap_or_else(|| "-".into()),
                        r.last_utc().unwrap_or_else(|| "-".into())
                    ));
                    let types: Vec<String> = r.types.iter().map(|(t, n)| format!("{t} {n}")).collect();
                    ui.weak(types.join(", "));
                    // The findings that change what can be replayed, in colour and words.
                    if !r.opaque_txn_frames.is_empty() {
                        ui.colored_label(
                            ui.visuals().error_fg_color,
                            format!(
                                "{} arrived as opaque Txn (_t=999) frames with an empty body: their data is NOT in this dump; dump again from a server on Milvus 2.6.20 or later",
                                walscope_core::fmt::counted(r.opaque_txn_frames.len() as u64, "transaction")
                            ),
                        );
                    }
                    if r.encrypted_frames > 0 {
                        ui.colored_label(
                            ui.visuals().warn_fg_color,
                            format!("{} (_ch): ciphertext, kept as sent", walscope_core::fmt::counted(r.encrypted_frames, "encrypted frame")),
                        );
                    }
                    if !r.gaps.is_empty() {
                        ui.colored_label(ui.visuals().warn_fg_color, format!("{} in the timeticks", walscope_core::fmt::counted(r.gaps.len() as u64, "gap")));
                    }
                    egui::CollapsingHeader::new("details").id_salt(("notes", &e.pchannel)).show(ui, |ui| {
                        for n in &r.notes {
                            ui.label(n);
                        }
                    });
                }
            }
        });
    }
    if open_all.len() > 1 && ui.button("Open every dump").clicked() {
        for p in open_all {
            tx.send(AppCommand::Open(p));
        }
    }
}
