//! The ways protobuf messages are framed one after another in a file or stream (varint-
//! delimited, single, gRPC 5-byte, brpc `PRPC`, 4-byte length prefixes): the names only.
//!
//! Owns: the [`Framing`] enum, its names and parsing. Reading and writing frames is
//! `dump::framing`'s job. This lives in `wire` so that semantic modules (`datasync` saying a
//! progress file is varint-delimited) can name a framing without depending on `dump`. Must
//! never: depend on `dump`, `datasync` or anything above `wire`.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Framing {
    /// Each frame: varint length, then the message (Java `writeDelimitedTo`).
    VarintDelimited,
    /// The whole file is one message.
    Single,
    /// gRPC: 1-byte compressed flag, 4-byte big-endian length.
    Grpc,
    /// brpc baidu_std: `PRPC`, body size and meta size (big-endian u32), meta, message, attachment.
    Brpc,
    /// 4-byte big-endian length prefix.
    U32Be,
    /// 4-byte little-endian length prefix.
    U32Le,
}

impl Framing {
    pub const ALL: [Framing; 6] = [
        Framing::VarintDelimited,
        Framing::Grpc,
        Framing::Brpc,
        Framing::U32Be,
        Framing::U32Le,
        Framing::Single,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Framing::VarintDelimited => "varint",
            Framing::Single => "single",
            Framing::Grpc => "grpc",
            Framing::Brpc => "brpc",
            Framing::U32Be => "u32be",
            Framing::U32Le => "u32le",
        }
    }

    pub fn parse(s: &str) -> Option<Framing> {
        Framing::ALL.into_iter().find(|f| f.name() == s)
    }
}

impl fmt::Display for Framing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
