//! Files for the window that are not there: `walscope decod x` is a misspelled `decode`, not two
//! files to open, and it is refused in words with the subcommand it is close to, before any
//! window starts.
//!
//! Owns: the check and the suggestion. Must never: turn away a file that exists (a file may be
//! named like a subcommand), or start the window for a file that does not.

use clap::CommandFactory;
use std::path::PathBuf;

/// The subcommands, as clap knows them (names and visible aliases).
pub fn subcommand_names() -> Vec<String> {
    let cmd = super::Cli::command();
    let mut names = Vec::new();
    for s in cmd.get_subcommands() {
        names.push(s.get_name().to_string());
        names.extend(s.get_visible_aliases().map(str::to_string));
    }
    names
}

/// Why the window must not start for `files`, when one of them does not exist: the first
/// argument is named as a possible subcommand ("did you mean 'decode'?" when it is close to
/// one), a later one as a missing file.
pub fn missing_window_file(files: &[PathBuf], subcommands: &[String]) -> Option<String> {
    let (i, missing) = files.iter().enumerate().find(|(_, f)| !f.exists())?;
    let name = missing.display().to_string();
    if i > 0 {
        return Some(format!("no such file '{name}': nothing was opened"));
    }
    Some(match closest(&name, subcommands) {
        Some(s) => {
            format!("no such file or subcommand '{name}'; did you mean '{s}'? (see walscope {s} --help)")
        }
        None => format!(
            "no such file or subcommand '{name}' (subcommands: {}; see walscope --help)",
            subcommands.join(", ")
        ),
    })
}

/// The subcommand `word` is a likely misspelling of: at most two edits away (a swap of two
/// neighbours is one), and fewer than half its letters, or the start of one (three letters or
/// more).
fn closest<'a>(word: &str, subcommands: &'a [String]) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    if w.len() >= 3
        && let Some(s) = subcommands.iter().find(|s| s.starts_with(&w))
    {
        return Some(s);
    }
    subcommands
        .iter()
        .map(|s| (edits(&w, s), s))
        .filter(|(d, s)| *d <= 2 && *d * 2 < s.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, s)| s.as_str())
}

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
/// neighbours, each one edit.
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_name_the_subcommand_and_other_words_do_not() {
        let subs = subcommand_names();
        for (typo, meant) in [
            ("decod", "decode"),
            ("inspetc", "inspect"),
            ("exprot", "export"),
            ("salvge", "salvage"),
            ("Edit", "edit"),
            ("insp", "inspect"),
            ("histroy", "history"),
        ] {
            assert_eq!(closest(typo, &subs), Some(meant), "{typo}");
        }
        for far in ["x", "dump-0001.wal", "0.progress", "ab"] {
            assert_eq!(closest(far, &subs), None, "{far}");
        }
        let dir = tempfile::tempdir().unwrap();
        let there = dir.path().join("decod");
        std::fs::write(&there, b"").unwrap();
        assert_eq!(
            missing_window_file(std::slice::from_ref(&there), &subs),
            None,
            "a file that exists opens"
        );
        let said = missing_window_file(&["decod".into(), "x".into()], &subs).unwrap();
        assert_eq!(
            said,
            "no such file or subcommand 'decod'; did you mean 'decode'? (see walscope decode --help)"
        );
    }
}
