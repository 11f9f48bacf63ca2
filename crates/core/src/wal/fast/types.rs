//! The fast reader's message types by `_t` number.

use super::TypeEntry;
use std::collections::HashMap;

/// The message types by number: a table for the small numbers upstream uses, a map for others.
#[derive(Debug, Default)]
pub(super) struct Types {
    dense: Vec<Option<TypeEntry>>,
    sparse: HashMap<i32, TypeEntry>,
}

/// Numbers below this are looked up in a table (upstream's go up to 999).
const DENSE_TYPES: i32 = 4096;

impl Types {
    pub(super) fn get(&self, t: i32) -> Option<&TypeEntry> {
        match usize::try_from(t) {
            Ok(i) if t < DENSE_TYPES => self.dense.get(i).and_then(Option::as_ref),
            _ => self.sparse.get(&t),
        }
    }

    pub(super) fn insert(&mut self, t: i32, entry: TypeEntry) {
        match usize::try_from(t) {
            Ok(i) if t < DENSE_TYPES => {
                if self.dense.len() <= i {
                    self.dense.resize_with(i + 1, || None);
                }
                self.dense[i] = Some(entry);
            }
            _ => {
                self.sparse.insert(t, entry);
            }
        }
    }
}
