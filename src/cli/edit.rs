//! `walscope edit`: lossless field edits with an atomic save and a backup.

use super::SchemaArgs;
use crate::codec::{self, Edit};
use crate::dump::save::atomic_write;
use anyhow::{Context, Result, anyhow};
use std::path::Path;

pub struct EditArgs {
    pub set: Vec<String>,
    pub append: Vec<String>,
    pub clear: Vec<String>,
}

impl EditArgs {
    fn edits(&self) -> Result<Vec<Edit>> {
        let mut out = Vec::new();
        for s in &self.set {
            out.push(Edit::set(s).map_err(|e| anyhow!("--set {s}: {e}"))?);
        }
        for s in &self.append {
            out.push(Edit::append(s).map_err(|e| anyhow!("--append {s}: {e}"))?);
        }
        for s in &self.clear {
            out.push(Edit::clear(s).map_err(|e| anyhow!("--clear {s}: {e}"))?);
        }
        if out.is_empty() {
            return Err(anyhow!("nothing to do: give --set PATH=VALUE, --append PATH=VALUE or --clear PATH"));
        }
        Ok(out)
    }
}

/// The changed window between two byte strings: (start, old_len, new_len).
pub fn changed_window(old: &[u8], new: &[u8]) -> Option<(usize, usize, usize)> {
    if old == new {
        return None;
    }
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = old.iter().rev().zip(new.iter().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    Some((prefix, old.len() - prefix - suffix, new.len() - prefix - suffix))
}

pub fn edit(
    schema: &SchemaArgs,
    file: &Path,
    type_name: &str,
    args: &EditArgs,
    out: Option<&Path>,
    dry_run: bool,
) -> Result<()> {
    let edits = args.edits()?;
    let set = schema.load()?;
    let desc = set.message(type_name)?;
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let new = codec::apply_edits(&desc, &bytes, &edits).with_context(|| format!("{}", file.display()))?;
    match changed_window(&bytes, &new) {
        None => eprintln!("no change: the file already holds these values"),
        Some((at, old_len, new_len)) => eprintln!(
            "changed bytes {at}..{} ({old_len} bytes) -> {new_len} bytes; {} -> {} bytes in all; every other byte is unchanged",
            at + old_len,
            bytes.len(),
            new.len()
        ),
    }
    if dry_run {
        eprintln!("dry run: nothing written");
        return Ok(());
    }
    let target = out.unwrap_or(file);
    let backup = atomic_write(target, &new, out.is_none())
        .with_context(|| format!("cannot write {}", target.display()))?;
    match backup {
        Some(b) => eprintln!("saved {} (previous version in {})", target.display(), b.display()),
        None => eprintln!("saved {}", target.display()),
    }
    Ok(())
}
