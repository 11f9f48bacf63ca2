//! The `walscope` binary: a subcommand runs headless; no subcommand opens the window (only on
//! files that exist: `walscope decod x` is a misspelled subcommand, refused in words). Never
//! panics on a closed pipe: no `println!`/`eprintln!` here or in `cli` (see `cli`).
#![deny(clippy::print_stdout, clippy::print_stderr)]

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;
use walscope::cli::{Cli, run};

fn main() -> ExitCode {
    ignore_file_size_signal();
    #[cfg(feature = "gui")]
    walscope::ui::startup::mark();
    let cli = Cli::parse();
    match cli.command {
        Some(command) => match run(command) {
            Ok(()) => ExitCode::SUCCESS,
            // `walscope inspect big.dump | head`: the reader had enough; that is not an error.
            Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
            // `diff`'s own codes (1 different, 2 error: already said on standard error).
            Err(ref e) if let Some(code) = e.downcast_ref::<walscope::cli::diff_cmd::ExitWith>() => {
                ExitCode::from(code.0)
            }
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "error: {e:#}");
                ExitCode::FAILURE
            }
        },
        None => {
            let subcommands = walscope::cli::suggest::subcommand_names();
            if let Some(why) = walscope::cli::suggest::missing_window_file(&cli.files, &subcommands) {
                let _ = writeln!(std::io::stderr(), "error: {why}");
                // What clap answers a usage error with.
                return ExitCode::from(2);
            }
            open_window(cli.files, cli.demo)
        }
    }
}

/// A write past the file-size limit (`ulimit -f`) kills a process by default (SIGXFSZ). Ignored,
/// the write fails with EFBIG instead, which the writers report like a full disk: the dump stays
/// resumable and the error says which file.
fn ignore_file_size_signal() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_IGN at startup, before any thread exists,
    // has no memory effects.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

#[cfg(feature = "gui")]
fn open_window(files: Vec<std::path::PathBuf>, demo: bool) -> ExitCode {
    match walscope::ui::run_native(files, demo) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: cannot open the window: {e}\n  (no display? every feature also works headless: walscope --help)"
            );
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(feature = "gui"))]
fn open_window(_files: Vec<std::path::PathBuf>, _demo: bool) -> ExitCode {
    use clap::CommandFactory;
    let _ = Cli::command().print_help();
    ExitCode::SUCCESS
}
