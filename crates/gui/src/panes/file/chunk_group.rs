//! The chunk group of a selected chunk frame (a payload split by upstream's `chunk.go`, see
//! `walscope_core::wal::chunk`): asked of a job, since finding it reads up to
//! [`SEARCH_FRAMES`] frames either side; shown in the detail as one logical message: its
//! chunks (frames), what is missing, and the joined message's WAL reading with its body.
//!
//! Must never: search on the UI thread, or show a joined body for a group that is not whole.

use crate::dump::DumpFile;
use crate::dump::chunks::{FoundGroup, SEARCH_FRAMES, find_group};
use crate::widgets::look::{self, Tone};
use eframe::egui;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};
use std::sync::Arc;

/// A group to find (a job runs it).
pub struct ChunkAsk {
    pub dump: Arc<DumpFile>,
    pub frame: usize,
    pub pool: DescriptorPool,
    /// The frames' type: the group is read only from DumpMessagesResponse / ImmutableMessage.
    pub frame_type: Option<MessageDescriptor>,
}

/// Why a chunk's group cannot be looked for.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GroupError {
    #[error("only dumps of DumpMessagesResponse or ImmutableMessage frames are read as WAL messages")]
    NotWal,
    #[error("frame {0} has no readable chunk markers")]
    NoMarkers(usize),
}

/// What the detail shows of the group of chunk `frame`.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkGroupView {
    pub frame: usize,
    /// None while it is looked for.
    pub found: Option<Result<FoundGroup, GroupError>>,
    /// The joined message's reading (type, header, body) as pretty JSON, when the group is whole.
    pub reading: Option<String>,
}

impl ChunkGroupView {
    pub fn pending(frame: usize) -> ChunkGroupView {
        ChunkGroupView { frame, found: None, reading: None }
    }
}

impl ChunkAsk {
    pub fn run(self) -> ChunkGroupView {
        let nested = match self.frame_type.as_ref().map(|d| d.full_name().to_string()).as_deref() {
            Some("milvus.proto.milvus.DumpMessagesResponse") => true,
            Some("milvus.proto.common.ImmutableMessage") => false,
            _ => {
                return ChunkGroupView {
                    frame: self.frame,
                    found: Some(Err(GroupError::NotWal)),
                    reading: None,
                };
            }
        };
        let Some(found) = find_group(&self.dump, self.frame, nested) else {
            return ChunkGroupView {
                frame: self.frame,
                found: Some(Err(GroupError::NoMarkers(self.frame))),
                reading: None,
            };
        };
        let reading = self.joined_reading(&found);
        ChunkGroupView { frame: self.frame, found: Some(Ok(found)), reading }
    }

    fn joined_reading(&self, found: &FoundGroup) -> Option<String> {
        let payload = found.payload.clone()?;
        let head = found.members.first().copied().flatten()?;
        let loc = self.dump.frame(head)?;
        let (_, bytes) = self.dump.message_bytes(&loc);
        let desc = self.frame_type.clone()?;
        let m = DynamicMessage::decode(desc, bytes).ok()?;
        let imm = crate::wal::reading::immutable_of(&m)?;
        let whole = crate::wal::chunk::assemble(&imm, payload);
        let w = crate::wal::analyze(&self.pool, &whole);
        serde_json::to_string_pretty(&crate::wal::reading_json(&w)).ok()
    }
}

/// Draws the group under the detail's WAL lines.
pub fn show(ui: &mut egui::Ui, view: &ChunkGroupView) {
    ui.add_space(4.0);
    match &view.found {
        None => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("Finding the other chunks (up to {SEARCH_FRAMES} frames either side)…"));
            });
        }
        Some(Err(e)) => {
            look::badge(ui, Tone::Warn, &format!("chunk group: {e}"));
        }
        Some(Ok(g)) => {
            let whole = g.payload.is_some();
            let tone = if whole { Tone::Info } else { Tone::Warn };
            let head = if whole {
                format!("One message in {} chunks at timetick {}", g.members.len(), g.mark.tt)
            } else {
                format!("Incomplete message: {} at timetick {}", g.mark.label(), g.mark.tt)
            };
            look::badge(ui, tone, &head);
            ui.label(g.describe());
            if let Some(r) = &view.reading {
                egui::CollapsingHeader::new("Joined message (reading, header and body)")
                    .id_salt(("chunk-joined", view.frame))
                    .default_open(true)
                    .show(ui, |ui| {
                        egui::ScrollArea::vertical().max_height(240.0).id_salt("chunk-joined-scroll").show(
                            ui,
                            |ui| {
                                ui.add(egui::Label::new(egui::RichText::new(r).monospace()).wrap());
                            },
                        );
                    });
            }
        }
    }
    ui.add_space(4.0);
}
