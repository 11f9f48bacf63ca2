//! Reading Rust sources for the house's checks without a parser: comments, strings and
//! character literals blanked (byte offsets kept), test-only items found and blanked, `mod`
//! items listed, the files of test-only modules found.
//!
//! Must never: take text in a comment or a string for code, or code in a test module for a
//! dependency of the crate.

use std::path::{Path, PathBuf};

/// The names of the `mod NAME;` and `mod NAME { ... }` items of a (blanked, test-stripped) file.
pub fn mod_declarations(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("pub(crate) ").or_else(|| l.strip_prefix("pub ")).unwrap_or(l);
            let name = l.strip_prefix("mod ")?;
            Some(name.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
        })
        .collect()
}

/// Files (and folders) of modules declared test-only: `#[cfg(test)] mod x;` beside a
/// `#[path = "..."]` or not.
pub fn test_only_files(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for file in files {
        let raw = std::fs::read_to_string(file).unwrap();
        let code = blank_comments_and_strings(&raw);
        let dir = file.parent().unwrap();
        let name = file.file_name().unwrap().to_string_lossy();
        let children = if ["mod.rs", "lib.rs", "main.rs"].contains(&name.as_ref()) {
            dir.to_path_buf()
        } else {
            dir.join(name.trim_end_matches(".rs"))
        };
        for (start, len) in test_items(&code) {
            let item = &code[start..start + len];
            let Some(m) =
                mod_declarations(item).into_iter().next().filter(|_| item.trim_end().ends_with(';'))
            else {
                continue;
            };
            // A `#[path]` names the file itself (relative to this file's folder).
            let path_attr = raw[start..start + len]
                .split("#[path = \"")
                .nth(1)
                .and_then(|p| p.split('"').next())
                .map(|p| dir.join(p));
            match path_attr {
                Some(p) => out.push(p),
                None => {
                    out.push(children.join(format!("{m}.rs")));
                    out.push(children.join(&m));
                }
            }
        }
    }
    out
}

/// The code without its test-only items (replaced by spaces, lines kept).
pub fn strip_test_items(code: &str) -> String {
    let mut out = code.to_string();
    for (start, len) in test_items(code) {
        let blank: String = code[start..start + len]
            .chars()
            .flat_map(|c| {
                std::iter::repeat_n(
                    if c == '\n' { '\n' } else { ' ' },
                    if c == '\n' { 1 } else { c.len_utf8() },
                )
            })
            .collect();
        out.replace_range(start..start + len, &blank);
    }
    out
}

/// (start, length) of each item under `#[cfg(test)]` or `#[cfg(all(test, ...))]`, its
/// attributes included: up to its `;` or its closing brace.
fn test_items(code: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("#[cfg(").map(|p| p + from) {
        let close = code[at..].find(")]").map_or(code.len(), |p| at + p + 2);
        let cond = &code[at + 6..close.saturating_sub(2)];
        let test_only = cond == "test"
            || (cond.starts_with("all(") && cond.split([',', '(', ')', ' ']).any(|w| w == "test"));
        if !test_only {
            from = close;
            continue;
        }
        let (mut i, mut depth) = (close, 0usize);
        let bytes = code.as_bytes();
        while i < bytes.len() {
            match bytes[i] {
                b'#' if depth == 0 && code[i..].starts_with("#[") => {
                    i += code[i..].find(']').unwrap_or(0);
                }
                b';' if depth == 0 => break,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        let end = (i + 1).min(code.len());
        out.push((at, end - at));
        from = end;
    }
    out
}

/// The source with comments, string and character literals replaced by spaces (newlines and
/// byte offsets kept), so what is left is code.
pub fn blank_comments_and_strings(src: &str) -> String {
    let c: Vec<(usize, char)> = src.char_indices().collect();
    let at = |j: usize| c.get(j).map(|x| x.1);
    let ident = |x: char| x.is_alphanumeric() || x == '_';
    let mut out = src.to_string();
    let mut blanks = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i].1;
        let after_ident = i > 0 && ident(c[i - 1].1);
        // Where a raw string's quote would be: after `r`, `br` or `cr`, and its `#`s.
        let raw = (!after_ident).then(|| {
            let mut j = i + usize::from(ch == 'b' || ch == 'c');
            (at(j) == Some('r')).then(|| {
                j += 1;
                let hashes = c[j..].iter().take_while(|x| x.1 == '#').count();
                (at(j + hashes) == Some('"')).then_some((j + hashes, hashes))
            })
        });
        let end = if ch == '/' && at(i + 1) == Some('/') {
            c[i..].iter().position(|x| x.1 == '\n').map_or(c.len(), |p| i + p)
        } else if ch == '/' && at(i + 1) == Some('*') {
            let (mut j, mut depth) = (i + 2, 1);
            while j < c.len() && depth > 0 {
                if at(j) == Some('/') && at(j + 1) == Some('*') {
                    depth += 1;
                    j += 1;
                } else if at(j) == Some('*') && at(j + 1) == Some('/') {
                    depth -= 1;
                    j += 1;
                }
                j += 1;
            }
            j
        } else if let Some(Some(Some((quote, hashes)))) = raw {
            let mut j = quote + 1;
            while j < c.len() && !(c[j].1 == '"' && (1..=hashes).all(|k| at(j + k) == Some('#'))) {
                j += 1;
            }
            (j + 1 + hashes).min(c.len())
        } else if ch == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j].1 != '"' {
                j += if c[j].1 == '\\' { 2 } else { 1 };
            }
            (j + 1).min(c.len())
        } else if ch == '\'' && (at(i + 1) == Some('\\') || at(i + 2) == Some('\'')) {
            // A character literal (a lifetime has no closing quote).
            let mut j = i + 1;
            while j < c.len() && c[j].1 != '\'' {
                j += if c[j].1 == '\\' { 2 } else { 1 };
            }
            (j + 1).min(c.len())
        } else {
            i += 1;
            continue;
        };
        blanks.push((c[i].0, c.get(end).map_or(src.len(), |x| x.0)));
        i = end;
    }
    for (from, to) in blanks {
        let spaces: String = src[from..to]
            .chars()
            .flat_map(|x| {
                let keep = x == '\n';
                std::iter::repeat_n(if keep { '\n' } else { ' ' }, if keep { 1 } else { x.len_utf8() })
            })
            .collect();
        out.replace_range(from..to, &spaces);
    }
    out
}

pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}
