//! "Compare with…" and the diff pane's jobs: side A taken from where it was asked (a frame of
//! an open file as shown, an open file, a composer's reply, a history entry), the picker filled
//! with what fits it, the choice resolved into side B (a frame read from its open file: one
//! message), a diff pane opened and the diffing started as a job (`work/diff.rs`); a dump
//! pair's frames diffed on demand.
//!
//! Must never: diff, or read a file on disk, on the UI thread (jobs do).

use crate::WalscopeApp;
use crate::jobs::JobOwner;
use crate::panes::PaneId;
use crate::panes::composer::ComposerState;
use crate::panes::diff::dump_view::DumpHandle;
use crate::panes::diff::picker::{Candidate, ComparePicker, FrameChoice};
use crate::panes::diff::{Body, CompareAsk, CompareFrom, DiffFailed, DiffState, Pick, Side};
use crate::panes::outcome::JobOutput;
use std::path::Path;

impl WalscopeApp {
    /// Opens the picker for side A `from` (nothing when `from` is gone: a closed file).
    pub fn compare_with(&mut self, from: CompareFrom) {
        let Some(a) = self.side_of(&from) else { return };
        let mut p = ComparePicker::new(a.clone());
        match &from {
            CompareFrom::Frame { path, index } => self.frame_candidates(&mut p, path, *index),
            CompareFrom::File(path) => {
                for t in self.tabs.iter().filter(|t| t.path != *path) {
                    let side = Side::Dump { path: t.path.clone() };
                    p.candidates.push(Candidate {
                        group: "Open files",
                        label: t.title(),
                        pick: Pick::Side(side),
                    });
                }
            }
            CompareFrom::Reply { composer } => self.reply_candidates(&mut p, *composer, &a),
            CompareFrom::History { composer, entry } => self.history_candidates(&mut p, *composer, *entry),
        }
        self.compare_picker = Some(p);
    }

    /// Side A as "Compare with…" found it.
    fn side_of(&self, from: &CompareFrom) -> Option<Side> {
        match from {
            CompareFrom::Frame { path, index } => self.tab_frame(path, *index).ok(),
            CompareFrom::File(path) => Some(Side::Dump { path: path.clone() }),
            CompareFrom::Reply { composer } => {
                let c = self.panes.get::<ComposerState>(&PaneId::Composer(*composer))?;
                c.replies.last().map(|r| r.side())
            }
            CompareFrom::History { composer, entry } => {
                let c = self.panes.get::<ComposerState>(&PaneId::Composer(*composer))?;
                let pool = self.schemas.pool();
                c.history_entries().iter().find(|e| e.id == *entry).map(|e| history_side(pool, e))
            }
        }
    }

    /// Frame `index` of the open file `path`, as shown (with its unsaved edits).
    fn tab_frame(&self, path: &Path, index: usize) -> Result<Side, DiffFailed> {
        let tab = self
            .tabs
            .iter()
            .find(|t| t.path == path)
            .ok_or_else(|| DiffFailed::NotOpen { path: path.into() })?;
        let bytes = tab
            .session
            .message(&tab.dump, index)
            .filter(|_| tab.unreadable(index).is_none())
            .ok_or_else(|| DiffFailed::NoFrame { path: path.into(), index })?;
        let edited = if tab.session.is_edited(index) { " (unsaved edits)" } else { "" };
        Ok(Side::Message {
            label: format!("frame {index} of {}{edited}", tab.title()),
            type_name: tab.decoder.message_type().map(|t| t.full_name().to_string()),
            bytes,
        })
    }

    fn frame_candidates(&self, p: &mut ComparePicker, path: &Path, index: usize) {
        if let Some(tab) = self.tabs.iter().find(|t| t.path == path)
            && tab.session.is_edited(index)
            && let Some(loc) = tab.dump.frame(index)
        {
            let bytes = tab.dump.message_bytes(&loc).1.to_vec();
            let label = format!("frame {index} of {} as saved", tab.title());
            let type_name = tab.decoder.message_type().map(|t| t.full_name().to_string());
            let side = Side::Message { label: label.clone(), type_name, bytes };
            p.candidates.push(Candidate { group: "Before the edits", label, pick: Pick::Side(side) });
        }
        for t in &self.tabs {
            let selected = t.selected.filter(|s| !(t.path == path && *s == index));
            if let Some(s) = selected {
                let label = format!("frame {s} of {} (selected there)", t.title());
                let pick = Pick::TabFrame { path: t.path.clone(), index: s };
                p.candidates.push(Candidate { group: "Selected frames", label, pick });
            }
            p.frames.push(FrameChoice {
                path: t.path.clone(),
                name: t.title(),
                frames: t.dump.frame_count(),
                // The frame selected there, else another file's frame of the same number.
                text: selected
                    .or((t.path != path && index < t.dump.frame_count()).then_some(index))
                    .map_or_else(String::new, |s| s.to_string()),
            });
        }
    }

    fn reply_candidates(&self, p: &mut ComparePicker, composer: u64, a: &Side) {
        let type_of = |s: &Side| match s {
            Side::Message { type_name, .. } => type_name.clone(),
            _ => None,
        };
        let want = type_of(a);
        for c in self.panes.all::<ComposerState>() {
            let own = c.id == composer;
            // This composer's replies but the one shown (A), newest first.
            let skip = usize::from(own);
            for r in c.replies.iter().rev().skip(skip) {
                let side = r.side();
                if type_of(&side) == want {
                    let group = if own { "Earlier replies" } else { "Replies in other composers" };
                    p.candidates.push(Candidate { group, label: r.label.clone(), pick: Pick::Side(side) });
                }
            }
        }
    }

    fn history_candidates(&self, p: &mut ComparePicker, composer: u64, entry: u64) {
        let Some(c) = self.panes.get::<ComposerState>(&PaneId::Composer(composer)) else { return };
        let pool = self.schemas.pool();
        let method = c.history_entries().iter().find(|e| e.id == entry).map(|e| e.method.clone());
        if c.method == method && !c.request.is_empty() {
            let label = "the request in the composer now".to_string();
            let type_name = c.method_desc(pool).map(|m| m.input().full_name().to_string());
            let side = Side::Message { label: label.clone(), type_name, bytes: c.request.clone() };
            p.candidates.push(Candidate { group: "The composer", label, pick: Pick::Side(side) });
        }
        for e in
            c.history_entries().iter().rev().filter(|e| e.id != entry && Some(&e.method) == method.as_ref())
        {
            let side = history_side(pool, e);
            p.candidates.push(Candidate {
                group: "History entries",
                label: side.label(),
                pick: Pick::Side(side),
            });
        }
    }

    /// Shows the open dialog to choose side B of a comparison with `a`.
    pub fn choose_compare_file(&mut self, a: Side) {
        self.show_open_dialog(None);
        self.open_dialog.compare_with = Some(a);
    }

    /// Opens a diff pane comparing `ask.a` with `ask.b` and starts the job. Returns its number.
    pub fn compare(&mut self, ask: CompareAsk) -> u64 {
        let CompareAsk { a, b } = ask;
        let b = match b {
            Pick::Side(s) => Ok(s),
            Pick::TabFrame { path, index } => self.tab_frame(&path, index),
            Pick::Path(path) if a.is_dump() => Ok(Side::Dump { path }),
            Pick::Path(path) => Ok(Side::MessageFile { path }),
        };
        let id = self.panes.next_number();
        let b_label = b.as_ref().map_or_else(|_| "?".to_string(), Side::label);
        let mut pane = DiffState::new(id, a.label(), b_label);
        let owner = JobOwner::Pane(id);
        let label = format!("comparing {} with {}", pane.a_label, pane.b_label);
        match b {
            Err(e) => pane.body = Body::Failed(e),
            Ok(b) if a.is_dump() != b.is_dump() => pane.body = Body::Failed(DiffFailed::Mixed),
            Ok(Side::Dump { path: pb }) => {
                let Side::Dump { path: pa } = a else { return id };
                let (ha, hb) = (self.open_handle(&pa), self.open_handle(&pb));
                let set = self.schemas.clone();
                self.jobs.spawn_blocking(label, owner, move |ctx| {
                    let result = crate::work::diff::dumps(&ctx, &set, (ha, pa), (hb, pb));
                    Ok(JobOutput::DumpsDiffed { pane: id, result })
                });
            }
            Ok(b) => {
                let set = self.schemas.clone();
                self.jobs.spawn_blocking(label, owner, move |_| {
                    let result = crate::work::diff::messages(&set, a, b);
                    Ok(JobOutput::MessagesDiffed { pane: id, pair: None, result })
                });
            }
        }
        self.panes.insert(PaneId::Diff(id), Box::new(pane));
        self.layout.show_pane(PaneId::Diff(id));
        id
    }

    /// The open file `path`'s dump and decoder, when it is open.
    fn open_handle(&self, path: &Path) -> Option<DumpHandle> {
        self.tabs
            .iter()
            .find(|t| t.path == path)
            .map(|t| DumpHandle { dump: t.dump.clone(), decoder: t.decoder.clone() })
    }

    /// Diffs the frames of pair `pair` of diff pane `pane` (its dumps are the pane's).
    pub fn diff_pair(&mut self, pane: u64, pair: usize) {
        let Some(d) = self.panes.get::<DiffState>(&PaneId::Diff(pane)).and_then(DiffState::dumps) else {
            return;
        };
        let Some(r) = d.pairs.rows.get(pair) else { return };
        let (Some(ia), Some(ib)) = (r.a(), r.b()) else { return };
        let (a, b) = (d.a.clone(), d.b.clone());
        let label = format!("comparing frame {ia} of A with frame {ib} of B");
        self.jobs.spawn_blocking(label, JobOwner::Pane(pane), move |_| {
            let result = crate::work::diff::pair(&a, ia, &b, ib);
            Ok(JobOutput::MessagesDiffed { pane, pair: Some(pair), result })
        });
    }
}

/// A history entry's request as a side.
fn history_side(pool: &prost_reflect::DescriptorPool, e: &crate::net::history::HistoryEntry) -> Side {
    let method = e.method.rsplit('.').next().unwrap_or(&e.method);
    let type_name = method_input(pool, &e.method);
    Side::Message {
        label: format!("history #{} ({method} request)", e.id),
        type_name,
        bytes: e.request.clone(),
    }
}

/// The input type of method `full` (`pkg.Service.Method`), when the schemas know it.
fn method_input(pool: &prost_reflect::DescriptorPool, full: &str) -> Option<String> {
    let (svc, name) = full.rsplit_once('.')?;
    let m = pool.get_service_by_name(svc)?.methods().find(|m| m.name() == name)?;
    Some(m.input().full_name().to_string())
}
