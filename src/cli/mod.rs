//! Headless subcommands. Each is a thin shell over the library: parse arguments, load schemas,
//! call one core function, print. Errors carry context and go to stderr via `main`.
//!
//! Printing never panics: `println!` and `eprintln!` panic when the pipe they write to is
//! closed (`walscope inspect big.dump | head`), so they are denied here; a listing writes with
//! [`outln!`] and stops on the error (`main` ends a broken pipe quietly), a command whose work
//! matters more than its report writes with [`say!`], and notes go to standard error with
//! [`note!`], which a closed standard error does not stop.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// `writeln!` to standard output: an `io::Result`, for a listing that stops on a closed pipe.
macro_rules! outln {
    ($($t:tt)*) => {{
        use ::std::io::Write as _;
        ::std::writeln!(::std::io::stdout().lock(), $($t)*)
    }};
}

/// `write!` to standard output, without a newline: an `io::Result`.
macro_rules! out {
    ($($t:tt)*) => {{
        use ::std::io::Write as _;
        ::std::write!(::std::io::stdout().lock(), $($t)*)
    }};
}

/// A line on standard output that no one may be reading any more: a closed pipe is ignored
/// (the command's work goes on; its outcome decides the exit code).
macro_rules! say {
    ($($t:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stdout().lock(), $($t)*);
    }};
}

/// A line on standard error; a closed standard error is ignored (there is nowhere to say so).
macro_rules! note {
    ($($t:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr().lock(), $($t)*);
    }};
}

/// [`note!`] without the newline (a prompt, a progress line redrawn in place).
macro_rules! note_part {
    ($($t:tt)*) => {{
        use ::std::io::Write as _;
        let mut err = ::std::io::stderr().lock();
        let _ = ::std::write!(err, $($t)*);
        let _ = err.flush();
    }};
}

pub mod call_cmd;
mod decode;
pub mod diff_cmd;
mod edit;
pub mod history_cmd;
pub mod inspect;
pub mod net_cmd;
mod render;
pub mod replay_cmd;
mod rows;
pub mod salvage_cmd;
#[cfg(feature = "demo")]
pub mod sample;
mod schema_cmd;
mod shell;
pub mod suggest;
pub mod tasks;
pub mod timeline_cmd;
mod wal_view;

use crate::schema::SchemaSet;
use anyhow::{Result, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "walscope",
    version,
    about = "Inspect, decode, edit and re-send protobuf WAL traffic (Milvus WAL, OpenMLDB datasync).",
    long_about = "Inspect, decode, edit and re-send protobuf WAL traffic (Milvus WAL, OpenMLDB datasync).\n\nWith no subcommand, opens the desktop app."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Files to open in the window (with no subcommand).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// With the window: start the demo Milvus, SyncTool and DataCollector in-process, list them
    /// under Connections and watch the SyncTool in the Sync tasks dashboard. With no FILE, opens
    /// the app's own copy of a sample dump, written into a temporary folder (a save there is
    /// harmless).
    #[arg(long)]
    pub demo: bool,
}

/// Where types come from. The built-in schemas are always loaded unless --no-builtin.
#[derive(Args, Debug, Clone, Default)]
pub struct SchemaArgs {
    /// Directory searched for .proto files and their imports (repeatable).
    #[arg(long = "proto-path", value_name = "DIR")]
    pub proto_path: Vec<PathBuf>,
    /// A .proto file to compile and load (repeatable).
    #[arg(long = "proto", value_name = "FILE")]
    pub proto: Vec<PathBuf>,
    /// A FileDescriptorSet (.protoset/.pb/.desc) to load (repeatable).
    #[arg(long = "descriptor-set", value_name = "FILE")]
    pub descriptor_set: Vec<PathBuf>,
    /// Do not load the built-in Milvus/OpenMLDB/brpc schemas.
    #[arg(long = "no-builtin")]
    pub no_builtin: bool,
}

impl SchemaArgs {
    pub fn load(&self) -> Result<SchemaSet> {
        let mut set = if self.no_builtin { SchemaSet::empty() } else { SchemaSet::builtin() };
        if !self.proto.is_empty() {
            set.add_proto_files(&self.proto_path, &self.proto)?;
        }
        for d in &self.descriptor_set {
            set.add_descriptor_set(d)?;
        }
        for notice in set.notices() {
            note!("note: {notice}");
        }
        Ok(set)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Typed tree with byte spans (schema-less when no --type).
    Tree,
    /// Proto3 JSON mapping.
    Json,
    /// Protobuf text format.
    Text,
    /// Schema-less wire view: field numbers, wire types, byte spans.
    Wire,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TextInput {
    Json,
    Text,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputEncoding {
    /// The file holds the protobuf bytes themselves.
    Raw,
    /// The file holds hex digits (whitespace ignored).
    Hex,
    /// The file holds base64 (standard alphabet).
    Base64,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Decode one protobuf message and print it.
    Decode {
        /// Message type, e.g. milvus.proto.milvus.DumpMessagesResponse (short names work when unique).
        #[arg(long = "type", value_name = "T")]
        type_name: Option<String>,
        #[arg(long, value_enum, default_value = "tree")]
        format: Format,
        /// How the input file is encoded.
        #[arg(long, value_enum, default_value = "raw")]
        input: InputEncoding,
        /// Decode even when no field of the bytes belongs to --type.
        #[arg(long)]
        lenient: bool,
        /// The file is a dump in this framing; decode one frame (see --frame).
        #[arg(long, value_name = "F")]
        framing: Option<String>,
        /// Which frame to decode in a framed file (from 0).
        #[arg(long, value_name = "N", default_value_t = 0)]
        frame: usize,
        /// File to read, or - for standard input.
        file: String,
        #[command(flatten)]
        schema: SchemaArgs,
    },
    /// Encode JSON or text format as protobuf bytes.
    Encode {
        #[arg(long = "type", value_name = "T")]
        type_name: String,
        #[arg(long, value_enum)]
        from: TextInput,
        /// Write the bytes here instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Replace OUT if it exists (its current contents are kept as OUT.bak).
        #[arg(long)]
        force: bool,
        /// File to read, or - for standard input.
        file: String,
        #[command(flatten)]
        schema: SchemaArgs,
    },
    /// Change fields of a message losslessly: untouched bytes stay byte-identical.
    Edit {
        /// The message file to edit (replaced atomically, with FILE.bak, unless --out).
        file: PathBuf,
        /// Message type (default for OpenMLDB .progress files: AddSyncTaskRequest).
        #[arg(long = "type", value_name = "T")]
        type_name: Option<String>,
        /// The file is a dump in this framing (varint, grpc, brpc, u32be, u32le); edit one frame.
        #[arg(long, value_name = "F")]
        framing: Option<String>,
        /// Which frame to edit in a framed file (from 0).
        #[arg(long, value_name = "N", default_value_t = 0)]
        frame: usize,
        /// PATH=VALUE, e.g. sync_point.offset=42, task[2].status=RUNNING, properties["_vc"]=ch1.
        #[arg(long, value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// PATH=VALUE: add an element at the end of a repeated field.
        #[arg(long, value_name = "PATH=VALUE")]
        append: Vec<String>,
        /// PATH: remove a field, a list element (task[1]) or a map entry (properties["k"]).
        #[arg(long, value_name = "PATH")]
        clear: Vec<String>,
        /// Write the result here (- for standard output) and leave FILE unchanged.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Replace --out's file if it exists (its current contents are kept as --out's file.bak).
        #[arg(long)]
        force: bool,
        /// Show what would change, write nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        schema: SchemaArgs,
    },
    /// List, filter and summarise the frames of a dump file of any size.
    Inspect {
        file: PathBuf,
        #[command(flatten)]
        dump: inspect::DumpArgs,
        /// One JSON object per frame (and per damaged range).
        #[arg(long)]
        jsonl: bool,
        /// Counts per type and vchannel, timetick range, bytes, bad frames (instead of rows).
        #[arg(long)]
        stats: bool,
        /// Show at most N frames.
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
    },
    /// Compare two dumps frame by frame, or two messages field by field (a file of one
    /// message, or frame N of a dump as FILE#N). Exit 0 identical, 1 different, 2 error.
    Diff {
        #[command(flatten)]
        args: diff_cmd::DiffArgs,
    },
    /// A salvage folder's history on one time axis: per pchannel its frames, transactions,
    /// DDL, gaps in time, damaged ranges, and the replay plan's verdicts when one is saved.
    Timeline {
        /// The salvage folder (with salvage.json), or a folder of .dump files.
        dir: PathBuf,
        #[command(flatten)]
        args: timeline_cmd::TimelineArgs,
    },
    /// Write selected frames to JSON Lines, a new dump, or one raw file per message.
    Export {
        file: PathBuf,
        #[arg(long, value_enum)]
        to: inspect::ExportFormat,
        /// Output file (jsonl, dump; - for standard output) or directory (raw).
        #[arg(long, value_name = "PATH")]
        out: PathBuf,
        /// Replace the output if it exists (its current contents are kept as the output.bak).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        dump: inspect::DumpArgs,
    },
    /// Write realistic sample data: a Milvus WAL dump or an OpenMLDB progress file.
    #[cfg(feature = "demo")]
    Sample {
        #[arg(long, value_enum)]
        kind: sample::SampleKind,
        /// WAL messages to write (milvus-dump).
        #[arg(long, default_value_t = 100)]
        messages: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Replace FILE if it exists (its current contents are kept as FILE.bak).
        #[arg(long)]
        force: bool,
        /// Damage the dump on purpose, to practise recovery.
        #[arg(long, value_enum)]
        corrupt: Option<sample::CorruptArg>,
        /// fsync (and update the manifest) every N frames (default 100000; also every 500 ms).
        #[arg(long, value_name = "N")]
        sync_every: Option<u64>,
        #[command(flatten)]
        wal: sample::WalOptions,
    },
    /// OpenMLDB sync tasks on a SyncTool: status, create, delete.
    Tasks {
        #[command(subcommand)]
        action: tasks::TasksAction,
    },
    /// Call a method (gRPC, brpc or HTTP/JSON) and print each response message as JSON (like grpcurl).
    Call {
        /// Server address host:port, or the name of a saved connection profile.
        endpoint: String,
        /// SERVICE/METHOD (or package.Service.Method), e.g. milvus.proto.milvus.MilvusService/GetVersion.
        method: String,
        /// Request as JSON, or @FILE (@- for standard input).
        #[arg(short = 'd', long = "data", value_name = "JSON|@FILE", default_value = "{}")]
        data: String,
        #[arg(long, value_enum, default_value = "grpc")]
        transport: net_cmd::TransportKind,
        /// Load the server's schemas by gRPC reflection (added to the built-in ones).
        #[arg(long)]
        reflect: bool,
        #[command(flatten)]
        flags: call_cmd::CallFlags,
        #[command(flatten)]
        conn: net_cmd::ConnArgs,
        #[command(flatten)]
        schema: SchemaArgs,
    },
    /// The calls recorded with `call --history`: list, show one, send one again.
    History {
        #[command(subcommand)]
        action: history_cmd::HistoryAction,
    },
    /// Dump the WAL tail of one or more pchannels from the old primary, from the new primary's
    /// salvage checkpoints (--out FILE for one, --out-dir DIR for several in parallel).
    Salvage {
        #[command(flatten)]
        args: salvage_cmd::SalvageArgs,
        #[command(flatten)]
        conn: net_cmd::ConnArgs,
    },
    /// Replay a salvage into the new primary: plan (the default, a dry run), --apply, --resume,
    /// --verify.
    Replay {
        #[command(flatten)]
        args: replay_cmd::ReplayArgs,
        #[command(flatten)]
        conn: net_cmd::ConnArgs,
    },
    /// Run the demo servers on 127.0.0.1 until Ctrl-C: a Milvus failover pair (gRPC), OpenMLDB SyncTool and DataCollector (brpc).
    #[cfg(feature = "demo")]
    Demo {
        /// Port for the Milvus gRPC server, the new primary (0: any free port).
        #[arg(long, value_name = "P", default_value_t = 19530)]
        milvus_port: u16,
        /// Port for the old primary (cluster by-dev-old) of the failover pair (default: the
        /// next port after --milvus-port when free, else any free port).
        #[arg(long, value_name = "P")]
        old_milvus_port: Option<u16>,
        /// Port for the SyncTool (brpc and HTTP/JSON).
        #[arg(long, value_name = "P", default_value_t = 8848)]
        synctool_port: u16,
        /// Port for the DataCollector (brpc).
        #[arg(long, value_name = "P", default_value_t = 8888)]
        collector_port: u16,
        /// Write payloads longer than N bytes to the WALs as chunks (`_ci`/`_ct`), the way
        /// upstream Milvus splits a payload its WAL backend cannot take. Off by default.
        #[arg(long, value_name = "N")]
        chunk_bytes: Option<usize>,
    },
    /// List or show the loaded types.
    Schema {
        #[command(subcommand)]
        action: SchemaAction,
    },
    /// Print a shell completion script (e.g. `walscope completions bash > /etc/bash_completion.d/walscope`).
    Completions {
        #[arg(value_enum)]
        shell: shell::Shell,
    },
    /// Print the man page (`walscope man > walscope.1`), or write one page per subcommand into DIR.
    Man {
        /// Write walscope.1 and walscope-SUBCOMMAND.1 here instead of printing walscope.1.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
        /// Replace pages already in DIR (each kept as .bak).
        #[arg(long, requires = "out_dir")]
        force: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum SchemaAction {
    /// Every message, enum and service, with the file and source it came from; then each
    /// built-in file and whether it is in use, re-linked or set aside (and by what).
    List {
        /// Only names containing this text (case-insensitive).
        #[arg(long)]
        filter: Option<String>,
        #[command(flatten)]
        schema: SchemaArgs,
    },
    /// One message, enum or service as a .proto-like definition.
    Show {
        name: String,
        #[command(flatten)]
        schema: SchemaArgs,
    },
    /// Write every loaded file as one FileDescriptorSet.
    Export {
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Replace FILE if it exists (its current contents are kept as FILE.bak).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        schema: SchemaArgs,
    },
}

pub fn run(command: Command) -> Result<()> {
    match command {
        Command::Decode { type_name, format, input, lenient, framing, frame, file, schema } => {
            let target = edit::Target { type_name, framing, frame };
            decode::decode(&schema, &target, format, input, lenient, &file)
        }
        Command::Encode { type_name, from, out, force, file, schema } => {
            decode::encode(&schema, &type_name, from, out.as_deref(), force, &file)
        }
        Command::Edit {
            file,
            type_name,
            framing,
            frame,
            set,
            append,
            clear,
            out,
            force,
            dry_run,
            schema,
        } => {
            let edits = edit::EditArgs { set, append, clear };
            let target = edit::Target { type_name, framing, frame };
            edit::edit(&schema, &file, &target, &edits, out.as_deref(), dry_run, force)
        }
        Command::Schema { action } => schema_cmd::run(action),
        Command::Completions { shell } => shell::completions(shell),
        Command::Man { out_dir, force } => shell::man(out_dir.as_deref(), force),
        Command::Tasks { action } => tasks::run(action),
        Command::Call { endpoint, method, data, transport, reflect, flags, conn, schema } => {
            call_cmd::call(&endpoint, &method, &data, transport, reflect, &conn, &schema, &flags)
        }
        Command::History { action } => history_cmd::run(action),
        Command::Salvage { args, conn } => salvage_cmd::salvage(&args, &conn),
        Command::Replay { args, conn } => replay_cmd::replay(&args, &conn),
        #[cfg(feature = "demo")]
        Command::Demo { milvus_port, old_milvus_port, synctool_port, collector_port, chunk_bytes } => {
            net_cmd::demo(milvus_port, old_milvus_port, synctool_port, collector_port, chunk_bytes)
        }
        Command::Inspect { file, dump, jsonl, stats, limit } => {
            inspect::inspect(&file, &dump, jsonl, stats, limit)
        }
        Command::Diff { args } => diff_cmd::diff(&args),
        Command::Timeline { dir, args } => timeline_cmd::timeline(&dir, &args),
        Command::Export { file, to, out, force, dump } => inspect::export(&file, &dump, to, &out, force),
        #[cfg(feature = "demo")]
        Command::Sample { kind, messages, seed, out, force, corrupt, sync_every, wal } => {
            let args = sample::SampleArgs { kind, messages, seed, corrupt, sync_every, wal };
            sample::sample(args, &out, force)
        }
    }
}

/// Reads FILE, or standard input for `-` (a FIFO or device once, bounded: see [`crate::input`]).
pub fn read_input(file: &str) -> Result<Vec<u8>> {
    Ok(crate::input::read_all(std::path::Path::new(file))?)
}

/// Writes binary output to standard output (`--out -`), refusing a terminal.
pub fn write_binary_stdout(bytes: &[u8]) -> Result<()> {
    use std::io::{IsTerminal, Write};
    let mut stdout = std::io::stdout().lock();
    if stdout.is_terminal() {
        bail!("refusing to write binary to a terminal: use --out FILE or a pipe (| xxd)");
    }
    stdout.write_all(bytes)?;
    stdout.flush()?;
    Ok(())
}
