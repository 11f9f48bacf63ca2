//! Reading an editions `.proto` source through protox, which knows only proto2 and proto3: a
//! small scanner finds the `edition = "…";` statement (skipping comments), the file resolver
//! hands protox the same text with that statement replaced by `syntax="proto3";` of the same
//! length where it fits (so every file:line:column protox reports stays true), and remembers
//! which files were editions for the lowering pass and the wording of errors.
//!
//! Must never: change any byte of a file outside its edition statement, or open a file the
//! wrapped include resolver would not.

use super::Edition;
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver, IncludeFileResolver};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// The statement protox reads in place of the edition statement.
const STAND_IN: &str = "syntax=\"proto3\";";

/// What a source's first statement says.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Declared {
    /// `syntax = …` or nothing: protox reads it as it is.
    NotEditions,
    /// `edition = "…";` spanning `start..end` (bytes), naming an edition walscope reads.
    Edition { edition: Edition, start: usize, end: usize },
    /// `edition = "…";` naming an edition walscope does not read, at 1-based line:column.
    Unknown { label: String, line: usize, column: usize },
}

/// Finds the edition statement: the first statement after whitespace and comments.
pub(crate) fn declared(src: &str) -> Declared {
    let b = src.as_bytes();
    let mut i = if src.starts_with('\u{feff}') { 3 } else { 0 };
    i = skip_blank(b, i);
    let start = i;
    if !b[i..].starts_with(b"edition")
        || b.get(i + 7).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        return Declared::NotEditions;
    }
    i = skip_blank(b, i + 7);
    if b.get(i) != Some(&b'=') {
        return Declared::NotEditions;
    }
    i = skip_blank(b, i + 1);
    let literal_at = i;
    let Some(&quote) = b.get(i).filter(|q| **q == b'"' || **q == b'\'') else { return Declared::NotEditions };
    let Some(len) = b[i + 1..].iter().position(|c| *c == quote || *c == b'\n') else {
        return Declared::NotEditions;
    };
    let label = &src[i + 1..i + 1 + len];
    i = skip_blank(b, i + len + 2);
    if b.get(i) != Some(&b';') {
        return Declared::NotEditions;
    }
    match Edition::from_label(label) {
        Some(edition) => Declared::Edition { edition, start, end: i + 1 },
        None => {
            let line = src[..literal_at].matches('\n').count() + 1;
            let column = literal_at - src[..literal_at].rfind('\n').map_or(0, |n| n + 1) + 1;
            Declared::Unknown { label: label.to_string(), line, column }
        }
    }
}

/// Skips whitespace, `//` and `/* */` comments.
fn skip_blank(b: &[u8], mut i: usize) -> usize {
    loop {
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if b[i..].starts_with(b"//") {
            i += b[i..].iter().position(|c| *c == b'\n').unwrap_or(b.len() - i);
        } else if b[i..].starts_with(b"/*") {
            i = b[i + 2..].windows(2).position(|w| w == b"*/").map_or(b.len(), |p| i + 2 + p + 2);
        } else {
            return i;
        }
    }
}

/// `src` with the statement at `start..end` replaced by the proto3 stand-in: same length when
/// the statement is long enough (padded with spaces), its line breaks kept in every case.
pub(crate) fn stand_in(src: &str, start: usize, end: usize) -> String {
    let old = &src[start..end];
    let mut new = String::from(STAND_IN);
    for (n, c) in old.char_indices() {
        if c == '\n' || c == '\r' {
            new.push(c);
        } else if n >= STAND_IN.len() {
            new.push(' ');
        }
    }
    format!("{}{new}{}", &src[..start], &src[end..])
}

/// The files read so far: which were editions (and which), and an edition walscope refused.
#[derive(Default, Debug)]
pub(crate) struct Seen {
    pub editions: HashMap<String, Edition>,
    pub refused: Option<(String, String, usize, usize)>,
}

/// protox's include-path resolver with editions sources handed over as their stand-ins.
pub(crate) struct Resolver {
    includes: Vec<PathBuf>,
    chain: ChainFileResolver,
    seen: Arc<Mutex<Seen>>,
}

impl Resolver {
    pub fn new(includes: &[PathBuf], seen: Arc<Mutex<Seen>>) -> Self {
        let mut chain = ChainFileResolver::new();
        for i in includes {
            chain.add(IncludeFileResolver::new(i.clone()));
        }
        chain.add(GoogleFileResolver::new());
        Resolver { includes: includes.to_vec(), chain, seen }
    }
}

impl FileResolver for Resolver {
    fn resolve_path(&self, path: &Path) -> Option<String> {
        self.chain.resolve_path(path)
    }

    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        // The first include path holding the file is the one protox would read it from.
        let Some(path) = self.includes.iter().map(|i| i.join(name)).find(|p| p.is_file()) else {
            if let Some(src) = super::language::stand_in(name) {
                return File::from_source(name, src);
            }
            return self.chain.open_file(name);
        };
        let Ok(src) = std::fs::read_to_string(&path) else { return self.chain.open_file(name) };
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        match declared(&src) {
            Declared::NotEditions => {
                drop(seen);
                self.chain.open_file(name)
            }
            Declared::Edition { edition, start, end } => {
                seen.editions.insert(name.to_string(), edition);
                drop(seen);
                File::from_source(name, &stand_in(&src, start, end))
            }
            Declared::Unknown { label, line, column } => {
                seen.refused = Some((name.to_string(), label, line, column));
                Err(protox::Error::file_not_found(name))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_edition_after_comments_and_keeps_lines_and_length() {
        let src = "// header\n/* block\n */ edition = \"2023\"; // tail\npackage a;\n";
        let Declared::Edition { edition, start, end } = declared(src) else { panic!("{:?}", declared(src)) };
        assert_eq!(edition, Edition::E2023);
        assert_eq!(&src[start..end], "edition = \"2023\";");
        let out = stand_in(src, start, end);
        assert_eq!(out.len(), src.len());
        assert_eq!(out.lines().count(), src.lines().count());
        assert!(out.contains(" syntax=\"proto3\";  // tail\npackage a;"), "{out}");
    }

    #[test]
    fn a_short_or_split_statement_keeps_its_line_breaks() {
        let src = "edition='2024';\nmessage M {}\n";
        let Declared::Edition { edition, start, end } = declared(src) else { panic!() };
        assert_eq!(edition, Edition::E2024);
        assert_eq!(stand_in(src, start, end), "syntax=\"proto3\";\nmessage M {}\n");
        let src = "edition =\n  \"2023\"\n;\nmessage M {}";
        let Declared::Edition { start, end, .. } = declared(src) else { panic!() };
        let out = stand_in(src, start, end);
        assert_eq!(out.matches('\n').count(), src.matches('\n').count());
        assert!(out.ends_with("\nmessage M {}"), "{out}");
    }

    #[test]
    fn other_files_and_unknown_editions() {
        assert_eq!(declared("syntax = \"proto3\"; edition = \"2023\";"), Declared::NotEditions);
        assert_eq!(declared("// edition = \"2023\";\nsyntax = \"proto2\";"), Declared::NotEditions);
        assert_eq!(declared("editions = \"2023\";"), Declared::NotEditions);
        assert_eq!(declared(""), Declared::NotEditions);
        assert_eq!(
            declared("\n  edition = \"2025\";"),
            Declared::Unknown { label: "2025".into(), line: 2, column: 13 }
        );
        assert!(matches!(declared("edition = \"UNSTABLE\";"), Declared::Unknown { .. }));
    }
}
