//! `walscope edit`: lossless field edits with an atomic save and a backup.

use super::SchemaArgs;
use crate::atomic::{Saved, atomic_write, check_output, is_stdio};
use crate::codec::{self, Edit};
use crate::datasync::ProgressFileKind;
use crate::dump::Framing;
use crate::dump::framing::{locate, replace_message};
use crate::schema::SchemaSet;
use anyhow::{Context, Result, anyhow, bail};
use prost_reflect::MessageDescriptor;
use std::path::Path;

/// Errors inside a frame name offsets within the message; say where that is in the file.
pub fn shift_offset(text: &str, base: usize) -> String {
    match text.find("at byte ").map(|i| i + 8) {
        Some(i) => {
            let digits: String = text[i..].chars().take_while(|c| c.is_ascii_digit()).collect();
            match digits.parse::<usize>() {
                Ok(n) => format!("{}{} (file byte){}", &text[..i], n + base, &text[i + digits.len()..]),
                Err(_) => text.to_string(),
            }
        }
        None => text.to_string(),
    }
}

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

/// Which message of a file to work on: its type, and for framed files the framing and frame.
pub struct Target {
    pub type_name: Option<String>,
    pub framing: Option<String>,
    pub frame: usize,
}

impl Target {
    /// The type and framing, filling in what an OpenMLDB progress file's name implies.
    pub fn resolve(&self, set: &SchemaSet, file: &str) -> Result<(MessageDescriptor, Option<Framing>)> {
        let by_name = ProgressFileKind::from_path(Path::new(file));
        let framing =
            match &self.framing {
                Some(f) => Some(Framing::parse(f).ok_or_else(|| {
                    anyhow!("--framing {f}: use varint, grpc, brpc, u32be, u32le or single")
                })?),
                None => by_name.map(|k| k.framing()),
            };
        let desc = match (&self.type_name, by_name) {
            (Some(t), _) => set.message(t)?,
            (None, Some(_)) => set.message(crate::datasync::ADD_SYNC_TASK_REQUEST)?,
            (None, None) => bail!("say which type the file holds: --type T (see `walscope schema list`)"),
        };
        Ok((desc, framing.filter(|f| *f != Framing::Single)))
    }
}

pub fn edit(
    schema: &SchemaArgs,
    file: &Path,
    target: &Target,
    args: &EditArgs,
    out: Option<&Path>,
    dry_run: bool,
    force: bool,
) -> Result<()> {
    let edits = args.edits()?;
    match out {
        Some(o) if !is_stdio(o) => check_output(o, &[file], force)?,
        Some(_) => {}
        None if is_stdio(file) => {
            bail!("editing standard input in place is not possible: give --out FILE or --out -")
        }
        None => refuse_in_place(file)?,
    }
    let set = schema.load()?;
    let (desc, framing) = target.resolve(&set, &file.to_string_lossy())?;
    let bytes = super::read_input(&file.to_string_lossy())?;
    let new = match framing {
        None => codec::apply_edits(&desc, &bytes, &edits).with_context(|| format!("{}", file.display()))?,
        Some(f) => {
            let (_, _, range) =
                locate(&bytes, f, target.frame).map_err(|e| anyhow!("{}: {e}", file.display()))?;
            let message = codec::apply_edits(&desc, &bytes[range.clone()], &edits).map_err(|e| {
                anyhow!(
                    "{}: frame {}: {}",
                    file.display(),
                    target.frame,
                    shift_offset(&e.to_string(), range.start)
                )
            })?;
            replace_message(&bytes, f, target.frame, &message)
                .map_err(|e| anyhow!("{}: {e}", file.display()))?
        }
    };
    match crate::codec::edit::changed_window(&bytes, &new) {
        None => note!("no change: the file already holds these values"),
        Some((at, old_len, new_len)) => note!(
            "changed bytes {at}..{} ({old_len} bytes) -> {new_len} bytes; {} -> {} bytes in all; every other byte is unchanged",
            at + old_len,
            bytes.len(),
            new.len()
        ),
    }
    if dry_run {
        note!("dry run: nothing written");
        return Ok(());
    }
    if let Some(out) = out.filter(|o| is_stdio(o)) {
        let _ = out;
        return super::write_binary_stdout(&new);
    }
    let target = out.unwrap_or(file);
    // In place, the file is replaced by purpose (its backup kept); another output by permission.
    let saved = atomic_write(target, &new, out.is_none() || force)
        .with_context(|| format!("cannot write {}", target.display()))?;
    match saved {
        Saved::Unchanged => note!("{} already holds these bytes: nothing written", target.display()),
        Saved::Written { backup: Some(b) } => {
            note!("saved {} (previous version in {})", target.display(), b.display())
        }
        Saved::Written { backup: None } => note!("saved {}", target.display()),
    }
    Ok(())
}

/// An in-place edit replaces a regular file; anything else (a FIFO, a device, a folder) is
/// refused before it is read, with the way out.
fn refuse_in_place(file: &Path) -> Result<()> {
    let m = std::fs::metadata(file).with_context(|| format!("cannot read {}", file.display()))?;
    if !m.is_file() {
        bail!(
            "{} is {}: an in-place edit replaces a regular file; read it with --out FILE (or --out -) instead",
            file.display(),
            crate::atomic::output::describe(&m)
        );
    }
    Ok(())
}
