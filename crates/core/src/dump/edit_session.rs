//! Edits to the messages of one open dump, before they are saved: the current bytes of every
//! edited frame, undo and redo, what changed, and the file as it will be written. Every edit goes
//! through the lossless codec, so untouched bytes stay byte-identical; only the edited frames'
//! length prefixes change in the file.

use super::framing::{Framing, replace_message};
use super::reader::DumpFile;
use super::source::TextEncoding;
use crate::codec::{self, CodecError, Edit};
use prost_reflect::MessageDescriptor;
use std::collections::BTreeMap;

#[derive(Default)]
pub struct EditSession {
    current: BTreeMap<usize, Vec<u8>>,
    /// (frame, bytes before the step; None = the original).
    undo: Vec<(usize, Option<Vec<u8>>)>,
    redo: Vec<(usize, Option<Vec<u8>>)>,
    /// Counts changes, so views can cache what they derive from the edits.
    version: u64,
}

impl EditSession {
    pub fn is_dirty(&self) -> bool {
        !self.current.is_empty()
    }

    /// Whether frame `i` has unsaved edits.
    pub fn is_edited(&self, i: usize) -> bool {
        self.current.contains_key(&i)
    }

    pub fn edited_frames(&self) -> Vec<usize> {
        self.current.keys().copied().collect()
    }

    /// The message bytes of frame `i` as they stand (edited or original).
    pub fn message(&self, dump: &DumpFile, i: usize) -> Option<Vec<u8>> {
        if let Some(b) = self.current.get(&i) {
            return Some(b.clone());
        }
        let loc = dump.frame(i)?;
        Some(dump.message_bytes(&loc).1.to_vec())
    }

    /// Applies one edit to frame `i`; on error nothing changes.
    pub fn apply(
        &mut self,
        dump: &DumpFile,
        desc: &MessageDescriptor,
        i: usize,
        edit: &Edit,
    ) -> Result<(), CodecError> {
        self.apply_all(dump, desc, i, std::slice::from_ref(edit))
    }

    /// Applies several edits to frame `i` as one step (one undo takes them all back); on error
    /// nothing changes.
    pub fn apply_all(
        &mut self,
        dump: &DumpFile,
        desc: &MessageDescriptor,
        i: usize,
        edits: &[Edit],
    ) -> Result<(), CodecError> {
        let before =
            self.message(dump, i).ok_or_else(|| CodecError::Edit(format!("there is no frame {i}")))?;
        let after = codec::apply_edits(desc, &before, edits)?;
        self.undo.push((i, self.current.get(&i).cloned()));
        self.redo.clear();
        self.set(dump, i, after);
        Ok(())
    }

    /// Changes with every edit, undo and redo.
    pub fn version(&self) -> u64 {
        self.version
    }

    fn set(&mut self, dump: &DumpFile, i: usize, bytes: Vec<u8>) {
        self.version += 1;
        let original = dump.frame(i).map(|l| dump.message_bytes(&l).1.to_vec());
        if original.as_deref() == Some(&bytes[..]) {
            self.current.remove(&i);
        } else {
            self.current.insert(i, bytes);
        }
    }

    fn step(&mut self, dump: &DumpFile, from_undo: bool) -> Option<usize> {
        let (i, prev) = if from_undo { self.undo.pop()? } else { self.redo.pop()? };
        self.version += 1;
        let now = self.current.get(&i).cloned();
        if from_undo {
            self.redo.push((i, now));
        } else {
            self.undo.push((i, now));
        }
        match prev {
            Some(b) => self.set(dump, i, b),
            None => {
                self.current.remove(&i);
            }
        }
        Some(i)
    }

    /// Takes back the last edit; returns the frame it touched.
    pub fn undo(&mut self, dump: &DumpFile) -> Option<usize> {
        self.step(dump, true)
    }

    pub fn redo(&mut self, dump: &DumpFile) -> Option<usize> {
        self.step(dump, false)
    }

    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }
    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// What saving would change, frame by frame: (frame, changed window of the message as
    /// (start, old length, new length)).
    pub fn diff(&self, dump: &DumpFile) -> Vec<(usize, (usize, usize, usize))> {
        self.current
            .iter()
            .filter_map(|(i, new)| {
                let loc = dump.frame(*i)?;
                let old = dump.message_bytes(&loc).1;
                codec::edit::changed_window(old, new).map(|w| (*i, w))
            })
            .collect()
    }

    /// The whole file with the edited frames replaced; every other byte as it was.
    pub fn render(&self, dump: &DumpFile) -> Result<Vec<u8>, String> {
        self.pending().render(dump)
    }

    /// The edited messages as they stand, to render the file elsewhere (a save's worker thread).
    pub fn pending(&self) -> PendingEdits {
        PendingEdits(self.current.clone())
    }
}

/// A snapshot of the edited messages of one dump.
#[derive(Debug, Clone, Default)]
pub struct PendingEdits(BTreeMap<usize, Vec<u8>>);

impl PendingEdits {
    /// The whole file with the edited frames replaced; every other byte as it was.
    pub fn render(&self, dump: &DumpFile) -> Result<Vec<u8>, String> {
        if dump.encoding != TextEncoding::Raw {
            return Err(format!(
                "this dump is {} text; saving edits back into text is not supported (export it to a binary dump first)",
                dump.encoding.name()
            ));
        }
        let bytes = dump.bytes();
        let mut out = Vec::with_capacity(bytes.len() + 64);
        let mut pos = 0usize;
        for (i, message) in &self.0 {
            let loc = dump.frame(*i).ok_or_else(|| format!("frame {i} is gone"))?;
            let (start, end) = (loc.offset as usize, loc.end() as usize);
            out.extend_from_slice(&bytes[pos..start]);
            let framing = if dump.framing == Framing::Single { Framing::Single } else { dump.framing };
            out.extend(replace_message(&bytes[start..end], framing, 0, message)?);
            pos = end;
        }
        out.extend_from_slice(&bytes[pos..]);
        // Checked after the copy: a file cut short meanwhile would be saved with zeros.
        dump.check_unchanged().map_err(|e| e.to_string())?;
        Ok(out)
    }
}
