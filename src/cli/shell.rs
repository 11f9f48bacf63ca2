//! `walscope completions SHELL` and `walscope man`: the conventions of a command-line tool, made
//! from the same clap definition the CLI parses with (clap_complete, clap_mangen), so they never
//! drift from the real flags.
//!
//! Must never: write a file it was not asked to (both print to standard output unless `man
//! --out-dir DIR` is given, whose pages are written like every output: see `crate::atomic`).

use super::Cli;
use anyhow::{Context, Result};
use clap::CommandFactory;
use std::io::Write;
use std::path::Path;

/// The shells completions are made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

/// Prints the completion script for `shell`.
pub fn completions(shell: Shell) -> Result<()> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    let generator = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
        Shell::Elvish => clap_complete::Shell::Elvish,
        Shell::Powershell => clap_complete::Shell::PowerShell,
    };
    clap_complete::generate(generator, &mut cmd, "walscope", &mut out);
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&out)?;
    stdout.flush()?;
    Ok(())
}

/// Prints the man page (roff) of `walscope`, or, with `out_dir`, writes it and one page per
/// subcommand (`walscope-inspect.1`, ...) there; an existing page needs `force`.
pub fn man(out_dir: Option<&Path>, force: bool) -> Result<()> {
    let cmd = Cli::command();
    let Some(dir) = out_dir else {
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut page)?;
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(&page)?;
        stdout.flush()?;
        return Ok(());
    };
    let mut pages = Vec::new();
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut page)?;
    pages.push(("walscope.1".to_string(), page));
    for sub in cmd.get_subcommands() {
        let name = format!("walscope-{}", sub.get_name());
        let mut page = Vec::new();
        clap_mangen::Man::new(
            sub.clone().display_name(name.clone()).bin_name(name.clone()).version(env!("CARGO_PKG_VERSION")),
        )
        .render(&mut page)?;
        pages.push((format!("{name}.1"), page));
    }
    // Every page is checked before any is written: a refusal leaves the folder as it was.
    for (name, _) in &pages {
        crate::atomic::check_output(&dir.join(name), &[], force)?;
    }
    for (name, page) in &pages {
        let path = dir.join(name);
        crate::atomic::atomic_write(&path, page, true)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    note!("wrote {} man pages to {}", pages.len(), dir.display());
    Ok(())
}
