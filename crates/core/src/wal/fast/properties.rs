//! The envelope's `properties` as the fast reader reads them: checked entry by entry as the
//! strict decoders would, and only the keys the summary uses kept, each in its own slot.
//!
//! Owns: prost's reading of a `map<string, string>` (a later entry for a key replaces an
//! earlier one; a missing key or value is empty). Must never: accept an entry the strict
//! check would refuse.

use crate::wire::scan::{self, Rules, TypeId, Value, as_text};

/// The properties the reader uses, each with its own slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Key {
    T,
    V,
    Tt,
    Btt,
    Wt,
    Vc,
    Lc,
    H,
    Tx,
    Bh,
    Rh,
    Tc,
    Ch,
    /// `_ci`/`_ct`: a chunk, which the fast reader leaves to the full analysis.
    Chunk,
}

const KEYS: usize = 14;

impl Key {
    fn of(name: &[u8]) -> Option<Key> {
        Some(match name {
            b"_t" => Key::T,
            b"_v" => Key::V,
            b"_tt" => Key::Tt,
            b"_btt" => Key::Btt,
            b"_wt" => Key::Wt,
            b"_vc" => Key::Vc,
            b"_lc" => Key::Lc,
            b"_h" => Key::H,
            b"_tx" => Key::Tx,
            b"_bh" => Key::Bh,
            b"_rh" => Key::Rh,
            b"_tc" => Key::Tc,
            b"_ch" => Key::Ch,
            b"_ci" | b"_ct" => Key::Chunk,
            _ => return None,
        })
    }
}

/// The `properties` map as prost reads it (a later entry for a key replaces an earlier one; a
/// missing key or value is empty), keeping only the keys the reader uses.
#[derive(Debug, Default)]
pub(super) struct Properties<'a> {
    values: [Option<&'a str>; KEYS],
}

impl<'a> Properties<'a> {
    /// Checks one encoded map entry, nested `depth` deep, as `Rules::accepts` checks it (the
    /// reader was built only for string keys and values), and keeps it.
    #[inline]
    pub(super) fn insert_entry(
        &mut self,
        rules: &Rules,
        entry_type: TypeId,
        entry: &'a [u8],
        depth: usize,
    ) -> Option<()> {
        let (mut k, mut v) = ("", "");
        for item in scan::fields(entry) {
            match item.ok()? {
                (1, Value::Len(b)) => k = as_text(b)?,
                // Every occurrence is checked: a later one replaces the value, but the strict
                // decoders refuse the message for a bad earlier one all the same.
                (2, Value::Len(b)) => v = as_text(b)?,
                (n, value) if n > 2 && rules.accepts_field(entry_type, n, value, depth) => {}
                _ => return None,
            }
        }
        if let Some(key) = Key::of(k.as_bytes()) {
            self.values[key as usize] = Some(v);
        }
        Some(())
    }

    pub(super) fn get(&self, key: Key) -> Option<&'a str> {
        self.values[key as usize]
    }
}
