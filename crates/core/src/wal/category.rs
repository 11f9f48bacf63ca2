//! Milvus WAL message types (`_t`) sorted into the few categories an operator scans a history
//! for: data written (Insert), data removed (Delete), schema and catalogue changes (DDL),
//! transaction bounds, and the server's own bookkeeping. The timeline colours and shapes its
//! marks by these; a DDL's label is its type name.
//!
//! Owns: which type number falls in which category (reference §3.3, `messages.proto`'s
//! `MessageType`). Must never: guess a category for a number the table does not name (it is
//! [`TypeCategory::Other`]).

/// What kind of change a WAL message is, as a history view groups them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeCategory {
    /// Insert: rows written.
    Insert,
    /// Delete: rows removed.
    Delete,
    /// Schema, catalogue and cluster changes: collections, partitions, databases, aliases,
    /// indexes, imports, snapshots, RBAC, resource groups, load configs.
    Ddl,
    /// BeginTxn, CommitTxn, RollbackTxn and the opaque `Txn` (999).
    Txn,
    /// The server's own bookkeeping: TimeTick, Flush, ManualFlush, FlushAll, CreateSegment,
    /// AlterWAL, AlterReplicateConfig.
    Control,
    /// A number the schema does not name (or `Unknown`, 0).
    Other,
}

impl TypeCategory {
    /// Every category, in the order a legend lists them.
    pub const ALL: [TypeCategory; 6] = [
        TypeCategory::Insert,
        TypeCategory::Delete,
        TypeCategory::Ddl,
        TypeCategory::Txn,
        TypeCategory::Control,
        TypeCategory::Other,
    ];

    /// The category of type number `t`.
    pub const fn of(t: i32) -> TypeCategory {
        match t {
            2 => TypeCategory::Insert,
            3 => TypeCategory::Delete,
            1 | 4 | 9 | 10 | 37 | 700 | 800 => TypeCategory::Control,
            5..=8 | 11..=36 | 38..=48 => TypeCategory::Ddl,
            900 | 901 | 902 | 999 => TypeCategory::Txn,
            _ => TypeCategory::Other,
        }
    }

    /// Its name, as legends and JSON say it.
    pub const fn name(self) -> &'static str {
        match self {
            TypeCategory::Insert => "insert",
            TypeCategory::Delete => "delete",
            TypeCategory::Ddl => "ddl",
            TypeCategory::Txn => "txn",
            TypeCategory::Control => "control",
            TypeCategory::Other => "other",
        }
    }

    /// Its place in [`TypeCategory::ALL`] (an index into per-category counts).
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// BeginTxn.
pub const BEGIN_TXN: i32 = 900;
/// CommitTxn.
pub const COMMIT_TXN: i32 = 901;
/// RollbackTxn.
pub const ROLLBACK_TXN: i32 = 902;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaSet;
    use crate::wal::message_type_name;

    /// Every number the built-in schema names falls in a named category (none left as Other
    /// but Unknown), and the categories' indexes are their places in ALL.
    #[test]
    fn every_named_type_has_a_category() {
        let set = SchemaSet::builtin();
        let e = set.pool().get_enum_by_name(crate::wal::types::MESSAGE_TYPE_ENUM).expect("enum");
        for v in e.values() {
            let c = TypeCategory::of(v.number());
            assert_eq!(c == TypeCategory::Other, v.number() == 0, "{}", v.name());
        }
        assert_eq!(message_type_name(set.pool(), 34).as_deref(), Some("CreateIndex"));
        assert_eq!(TypeCategory::of(34), TypeCategory::Ddl);
        for (i, c) in TypeCategory::ALL.iter().enumerate() {
            assert_eq!(c.index(), i);
        }
    }
}
