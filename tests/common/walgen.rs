//! The synthetic WAL the tests salvage and replay: one configuration of small messages, and
//! the two ways a test names the end of a window (after so many messages, after so much time).

use walscope::schema::SchemaSet;
use walscope::sim::{WalGenConfig, WalGenerator};

/// Small messages (one row each) without an end, so dumps are quick in a debug build; `seed`
/// tells the suites' WALs apart.
pub fn small_wal(seed: u64) -> WalGenConfig {
    WalGenConfig { seed, rows: (1, 1), total: None, ..Default::default() }
}

/// The timetick of message `n` (counted from 0) of the WAL `wal` generates.
pub fn timetick_of_message(wal: WalGenConfig, n: usize) -> u64 {
    let set = SchemaSet::builtin();
    WalGenerator::new(set.pool(), wal).nth(n).expect("the WAL has that many messages").timetick
}

/// The timetick `ms` milliseconds of synthetic WAL time after the generator's start.
pub fn timetick_after_ms(ms: u64) -> u64 {
    (walscope::sim::walgen::START_MS + ms) << 18
}
