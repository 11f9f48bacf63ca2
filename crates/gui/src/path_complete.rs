//! Completion of a typed path for the window's own open dialog (issue #38, item 1: opening a
//! file must work where no desktop file dialog is): the folder the text names, and its entries
//! that start with the text's last part, folders first, then files, each by name.
//!
//! Owns: reading one folder, bounded. Must never: run on the UI thread (a folder on a hung
//! network mount blocks; the window runs it as a job), list more than [`MAX_ENTRIES`], or show
//! hidden entries unless the typed part starts with a dot.

use std::path::{Path, PathBuf};

/// The most entries one completion lists (a folder of a million files lists its first ones).
pub const MAX_ENTRIES: usize = 200;

/// One entry that completes the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub path: PathBuf,
    pub name: String,
    pub is_dir: bool,
}

/// What the typed text completes to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completions {
    /// The folder that was read.
    pub folder: PathBuf,
    pub candidates: Vec<Candidate>,
    /// More entries matched than [`MAX_ENTRIES`].
    pub more: bool,
    /// Why the folder could not be read, in words.
    pub error: Option<String>,
}

/// Completes `typed` (`~/` is the home folder; a relative path is relative to `cwd`).
pub fn complete(typed: &str, cwd: &Path) -> Completions {
    let expanded = expand_home(typed);
    // Split on the last separator as typed (`Path` would read a lone `.` as "this folder").
    let (folder, part) = match expanded.rsplit_once(std::path::MAIN_SEPARATOR) {
        Some(("", part)) => (PathBuf::from(std::path::MAIN_SEPARATOR_STR), part.to_string()),
        Some((parent, part)) => (cwd.join(parent), part.to_string()),
        None => (cwd.to_path_buf(), expanded.clone()),
    };
    let mut out = Completions { folder: folder.clone(), ..Default::default() };
    let entries = match std::fs::read_dir(&folder) {
        Ok(e) => e,
        Err(e) => {
            out.error = Some(format!("cannot read the folder {}: {e}", folder.display()));
            return out;
        }
    };
    let wants_hidden = part.starts_with('.');
    let mut found = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with(&part) || (name.starts_with('.') && !wants_hidden) {
            continue;
        }
        if found.len() == MAX_ENTRIES {
            out.more = true;
            break;
        }
        // A symlink to a folder completes as a folder.
        let is_dir = std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir());
        found.push(Candidate { path: e.path(), name, is_dir });
    }
    found.sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
    out.candidates = found;
    out
}

/// The path `typed` names (`~/` is the home folder; a relative path is relative to `cwd`).
pub fn resolve(typed: &str, cwd: &Path) -> PathBuf {
    cwd.join(expand_home(typed.trim()))
}

/// The longest start every candidate's name shares (what Tab can add to the typed text).
pub fn common_start(candidates: &[Candidate]) -> String {
    let mut names = candidates.iter().map(|c| c.name.as_str());
    let Some(first) = names.next() else { return String::new() };
    let mut end = first.len();
    for n in names {
        let shared = first
            .char_indices()
            .zip(n.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map_or(0, |((i, a), _)| i + a.len_utf8());
        end = end.min(shared);
    }
    first[..end].to_string()
}

/// The text with a leading `~` as the home folder.
/// Where the typed path starts again: the dialog shows a folder already, and an operator who
/// types a whole path after it (`/tmp/look/` + `/etc/x`, or `~/x`) means that path. As in
/// Emacs, `//` starts over at the root and `/~` at the home folder.
fn restarted(typed: &str) -> &str {
    let sep = std::path::MAIN_SEPARATOR;
    let root = typed.rfind(&format!("{sep}{sep}")).map(|i| i + 1);
    let home = typed.rfind(&format!("{sep}~")).filter(|i| {
        let after = &typed[i + 2..];
        after.is_empty() || after.starts_with(sep)
    });
    match (root, home) {
        (Some(r), Some(h)) if h + 1 > r => &typed[h + 1..],
        (Some(r), _) => &typed[r..],
        (None, Some(h)) => &typed[h + 1..],
        (None, None) => typed,
    }
}

fn expand_home(typed: &str) -> String {
    let typed = restarted(typed);
    let home = || dirs::home_dir().map(|h| h.to_string_lossy().into_owned());
    match typed.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => match home() {
            Some(h) => format!("{h}{rest}"),
            None => typed.to_string(),
        },
        _ => typed.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dialog opens on a folder; a whole path typed after it is that path.
    #[test]
    fn a_whole_path_typed_after_the_folder_starts_over() {
        assert_eq!(restarted("/tmp/look//tmp/look/g"), "/tmp/look/g");
        assert_eq!(restarted("/tmp/look/~/x"), "~/x");
        assert_eq!(restarted("/tmp/look/~"), "~");
        assert_eq!(restarted("/tmp/look/~x"), "/tmp/look/~x", "a name that starts with ~ is a name");
        assert_eq!(restarted("/a//b/~/c"), "~/c");
        assert_eq!(restarted("/a/~/b//c"), "/c");
        assert_eq!(restarted("/tmp/look/g"), "/tmp/look/g");
        let cwd = Path::new("/");
        assert_eq!(resolve("/tmp/look//etc/hosts", cwd), PathBuf::from("/etc/hosts"));
    }

    #[test]
    fn completes_folders_first_then_files_by_their_start() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("dumps")).unwrap();
        std::fs::create_dir(d.join("docs")).unwrap();
        for f in ["d1.dump", "d0.dump", "other.txt", ".hidden.dump"] {
            std::fs::write(d.join(f), b"x").unwrap();
        }
        let names = |c: &Completions| c.candidates.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        let all = complete("", d);
        assert_eq!(names(&all), ["docs", "dumps", "d0.dump", "d1.dump", "other.txt"]);
        assert!(all.candidates[0].is_dir && !all.candidates[2].is_dir);
        assert_eq!(names(&complete("d", d)), ["docs", "dumps", "d0.dump", "d1.dump"]);
        assert_eq!(names(&complete("du", d)), ["dumps"]);
        assert_eq!(names(&complete(".", d)), [".hidden.dump"]);
        let inside = complete(&format!("{}/", d.join("dumps").display()), Path::new("/"));
        assert!(inside.candidates.is_empty() && inside.error.is_none());
        let missing = complete("nowhere/x", d);
        assert!(
            missing.error.as_deref().is_some_and(|e| e.contains("cannot read the folder")),
            "{missing:?}"
        );
    }

    #[test]
    fn tab_adds_what_every_candidate_shares() {
        let c = |n: &str| Candidate { path: PathBuf::from(n), name: n.into(), is_dir: false };
        assert_eq!(common_start(&[c("dump-1.dump"), c("dump-2.dump"), c("dump-10.dump")]), "dump-");
        assert_eq!(common_start(&[c("é1"), c("é2")]), "é");
        assert_eq!(common_start(&[c("a"), c("b")]), "");
        assert_eq!(common_start(&[c("only.dump")]), "only.dump");
        assert_eq!(common_start(&[]), "");
        assert_eq!(resolve("x/y.dump", Path::new("/w")), PathBuf::from("/w/x/y.dump"));
        assert_eq!(resolve(" /abs ", Path::new("/w")), PathBuf::from("/abs"));
    }

    #[test]
    fn a_huge_folder_lists_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..MAX_ENTRIES + 5 {
            std::fs::write(dir.path().join(format!("f{i}")), b"").unwrap();
        }
        let c = complete("f", dir.path());
        assert_eq!(c.candidates.len(), MAX_ENTRIES);
        assert!(c.more);
    }

    #[test]
    fn a_tilde_is_the_home_folder() {
        if let Some(home) = dirs::home_dir() {
            assert_eq!(expand_home("~/x"), format!("{}/x", home.display()));
            assert_eq!(expand_home("~"), home.display().to_string());
        }
        assert_eq!(expand_home("~user/x"), "~user/x");
    }
}
