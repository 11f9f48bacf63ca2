//! Chunked payloads in a salvage (see `walscope_core::wal::chunk`): where a frame is, a whole
//! group read as the one message it is, a group that cannot be joined read as far as it goes
//! and marked, and, when sending, a planned chunk 0's group found again in the frames after it.
//!
//! Must never: read a partial body as a message, or join chunks of different timeticks.

use super::{Salvage, SourceMessage};
use crate::dump::Framing;
use crate::dump::chunks::frame_chunk;
use crate::dump::framing::read_header;
use crate::replay::ReplayError;
use crate::wal::chunk::{Grouper, Incomplete, Pushed};

/// Every chunk's payload of a whole group, joined in index order (`members` are in it).
pub(super) fn joined_payload(buf: &[u8], members: &[Place]) -> Result<Vec<u8>, String> {
    let mut payload = Vec::new();
    for p in members {
        let c = frame_chunk(p.body(buf), true).ok_or("a chunk is not a DumpMessagesResponse")?;
        payload.extend_from_slice(c.payload);
    }
    Ok(payload)
}

/// Where a frame is in its dump.
#[derive(Debug, Clone, Copy)]
pub(super) struct Place {
    pub(super) frame: u64,
    pub(super) start: usize,
    pub(super) end: usize,
}

impl Place {
    pub(super) fn body<'b>(&self, buf: &'b [u8]) -> &'b [u8] {
        &buf[self.start..self.end]
    }

    pub(super) fn source(&self, dump: usize, m: SourceMessage) -> SourceMessage {
        SourceMessage {
            dump,
            frame: self.frame,
            offset: self.start as u64,
            len: (self.end - self.start) as u32,
            ..m
        }
    }
}

impl Salvage {
    /// The message of a whole chunk group: chunk 0 with every chunk's payload joined.
    pub(super) fn joined(
        &self,
        buf: &[u8],
        members: &[Place],
        pool: &prost_reflect::DescriptorPool,
    ) -> Result<SourceMessage, String> {
        let head = self.immutable(members[0].body(buf))?;
        let whole = crate::wal::chunk::assemble(&head, joined_payload(buf, members)?);
        let mut m = self.read_immutable(whole, pool)?;
        m.chunks = members.len() as u32;
        Ok(m)
    }

    /// A chunk that cannot be joined, read as far as it goes and marked with `why`.
    pub(super) fn unjoinable(
        &self,
        buf: &[u8],
        at: Place,
        d: usize,
        why: String,
        pool: &prost_reflect::DescriptorPool,
    ) -> Result<SourceMessage, ReplayError> {
        let dump = &self.dumps[d];
        let message = self.read(at.body(buf), pool).map_err(|reason| ReplayError::Frame {
            path: dump.path.display().to_string(),
            frame: at.frame,
            offset: at.start as u64,
            reason,
        })?;
        Ok(at.source(d, SourceMessage { chunk_problem: Some(why), ..message }))
    }

    pub(super) fn incomplete(
        &self,
        buf: &[u8],
        d: usize,
        group: &Incomplete<Place>,
        when: &str,
        f: &mut impl FnMut(SourceMessage),
        pool: &prost_reflect::DescriptorPool,
    ) -> Result<(), ReplayError> {
        let Some((_, first)) = group.present.first() else { return Ok(()) };
        let why = format!("{} ({when}; timetick {})", group.missing_words(), group.tt);
        f(self.unjoinable(buf, *first, d, why, pool)?);
        Ok(())
    }

    /// When the frame at `offset` is chunk 0 of a chunked message: every chunk of its group, in
    /// index order, found in the frames after it (as `for_each` joined them when planning). An
    /// error when the group is no longer whole there.
    pub(super) fn group_at(
        &self,
        d: usize,
        offset: u64,
        len: u32,
    ) -> Result<Option<Vec<Place>>, ReplayError> {
        let dump = self.dump(d)?;
        let buf = dump.bytes();
        let start = offset as usize;
        let head = Place { frame: 0, start, end: start + len as usize };
        let Some(Some(Ok(mark))) = frame_chunk(dump.frame(offset, len)?, true).map(|c| c.mark) else {
            return Ok(None);
        };
        let fail = |reason: String| ReplayError::Frame {
            path: dump.path.display().to_string(),
            frame: 0,
            offset,
            reason,
        };
        let mut grouper: Grouper<Place> = Grouper::default();
        let mut next = Some(head);
        while let Some(place) = next.take() {
            let c = frame_chunk(place.body(buf), true)
                .ok_or_else(|| fail("a frame after the chunk is not a DumpMessagesResponse".into()))?;
            let m = c.mark.clone().filter(|m| matches!(m, Ok(m) if m.tt == mark.tt));
            if let Pushed::Complete(g) = grouper.push(place, m, None, c.payload) {
                return Ok(Some(g.members));
            }
            let pos = place.end;
            if let Ok(h) = read_header(buf, pos, Framing::VarintDelimited) {
                let s = pos + h.header_len as usize;
                next = Some(Place { frame: 0, start: s, end: pos + h.total() as usize });
            }
        }
        Err(fail(format!(
            "{} of the chunked message at this frame are no longer in the dump after it: plan again",
            mark.label()
        )))
    }
}
