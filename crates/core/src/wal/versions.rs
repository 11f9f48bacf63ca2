//! Which Milvus server versions can do what for a salvage (reference §1.1, §8): the
//! salvage API (GetReplicateInfo's `salvage_checkpoint` and DumpMessages, 2.6.14+), the inclusive
//! start (`include_start_message`, 2.6.20+ and 3.0.0), transactions dumped whole (2.6.20+:
//! before, a transaction came as one opaque `Txn` frame with an empty body), and the 2.6.9–2.6.18
//! GetReplicateInfo hang.
//!
//! Owns: parsing the `GetVersion` text (`v2.6.20`, `2.6.20-rc1`, `v3.0.0-beta-…`) and these
//! facts. Must never: claim a capability for a version it cannot parse (the caller says
//! "unknown version" instead).

/// A Milvus version as `GetVersion` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct MilvusVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// A pre-release (`-beta`, `-rc1`) of that number.
    pub pre: bool,
}

impl MilvusVersion {
    /// `v2.6.20`, `2.6.20`, `v2.6.20-walscope-demo`, `v3.0.0-beta`; None when the text does not
    /// start with three numbers.
    pub fn parse(text: &str) -> Option<MilvusVersion> {
        let t = text.trim();
        let t = t.strip_prefix(['v', 'V']).unwrap_or(t);
        let (core, rest) = match t.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
            Some(i) => (&t[..i], &t[i..]),
            None => (t, ""),
        };
        let mut parts = core.split('.').map(|p| p.parse::<u32>().ok());
        let (major, minor, patch) = (parts.next()??, parts.next()??, parts.next()??);
        let pre = ["-beta", "-rc", "-alpha"].iter().any(|p| rest.to_ascii_lowercase().starts_with(p));
        Some(MilvusVersion { major, minor, patch, pre })
    }

    fn at_least(&self, major: u32, minor: u32, patch: u32) -> bool {
        (self.major, self.minor, self.patch) >= (major, minor, patch)
    }

    /// GetReplicateInfo's `salvage_checkpoint` and DumpMessages exist (2.6.14+, 3.0.0).
    pub fn has_salvage_api(&self) -> bool {
        self.major > 2 || self.at_least(2, 6, 14)
    }

    /// DumpMessages takes `include_start_message` (2.6.20+, 3.0.0 but not its beta).
    pub fn has_inclusive_start(&self) -> bool {
        if self.major >= 3 {
            return !(self.at_least(3, 0, 0) && !self.at_least(3, 0, 1) && self.pre);
        }
        self.at_least(2, 6, 20)
    }

    /// DumpMessages expands a transaction into begin, bodies and commit (milvus#50574, 2.6.20
    /// via #51102); before, the transaction's data is lost in the dump.
    pub fn dumps_transactions(&self) -> bool {
        self.has_inclusive_start()
    }

    /// GetReplicateInfo may retry until the deadline instead of answering (milvus#50344).
    pub fn replicate_info_may_hang(&self) -> bool {
        self.major == 2 && self.minor == 6 && (9..=18).contains(&self.patch)
    }
}

impl std::fmt::Display for MilvusVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}.{}.{}{}",
            self.major,
            self.minor,
            self.patch,
            if self.pre { " (pre-release)" } else { "" }
        )
    }
}

/// The first versions with the salvage API, in words.
pub const SALVAGE_API_SINCE: &str = "2.6.14 (and 3.0.0)";
/// The first versions that dump transactions whole.
pub const TXN_DUMP_FIXED_IN: &str = "2.6.20 (and 3.0.0)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_what_they_can_do() {
        let v = |s| MilvusVersion::parse(s).unwrap();
        assert_eq!(v("v2.6.20-walscope-demo"), MilvusVersion { major: 2, minor: 6, patch: 20, pre: false });
        assert!(v("v3.0.0-beta").pre);
        assert!(MilvusVersion::parse("master").is_none());
        assert!(MilvusVersion::parse("v2.6").is_none());
        assert!(!v("v2.5.4").has_salvage_api());
        assert!(!v("2.6.13").has_salvage_api());
        assert!(v("2.6.14").has_salvage_api() && !v("2.6.14").has_inclusive_start());
        assert!(v("2.6.20").has_inclusive_start() && v("2.6.20").dumps_transactions());
        assert!(!v("2.6.19").dumps_transactions());
        assert!(v("v3.0.0").has_inclusive_start() && !v("v3.0.0-beta").has_inclusive_start());
        assert!(v("2.6.12").replicate_info_may_hang() && !v("2.6.19").replicate_info_may_hang());
    }
}
