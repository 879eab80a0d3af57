//! The command line: subcommands and their arguments (clap derive).

use crate::detect::Format;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Inspect, validate, convert and dump Hurray tensor files.
#[derive(Debug, Parser)]
#[command(name = "hurray", version, about, long_about = None)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands of `hurray`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show what a Hurray file or stream holds: tensors, KV metadata, file facts.
    Inspect(InspectArgs),
    /// Check Hurray files and streams against every rule of the format.
    Validate(ValidateArgs),
    /// Convert between safetensors, .npy/.npz, HRRYFILE and Hurray streams.
    Convert(ConvertArgs),
    /// Print the first values of one tensor.
    Dump(DumpArgs),
    /// Check that files hold the same tensors (names, dtypes, shapes, bytes).
    Compare(CompareArgs),
    /// Serve every tensor of .hrry files over the network protocol (spec Part B)
    /// and take PUTs into a bounded in-memory store, until SIGTERM or Ctrl-C.
    Serve(ServeArgs),
    /// Get one tensor (or composite) from a server into a .hrry file.
    Get(GetArgs),
    /// Put one tensor (or composite) of a .hrry file to a server.
    Put(PutArgs),
}

/// Arguments of `hurray serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The .hrry files whose tensors are served by name (names must be unique
    /// across the files).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Address to listen on, e.g. 127.0.0.1:7070 (port 0 picks a free port; the
    /// address is printed on standard output).
    #[arg(long, default_value = "127.0.0.1:7070")]
    pub listen: std::net::SocketAddr,
    /// Bytes the PUT store may hold; a PUT that does not fit is refused.
    #[arg(long, default_value_t = 1 << 30)]
    pub store_cap: u64,
    /// Write what was put to this .hrry at shutdown.
    #[arg(long)]
    pub persist: Option<PathBuf>,
    /// Most simultaneous connections.
    #[arg(long, default_value_t = 1024)]
    pub max_connections: usize,
    /// Seconds a connection may stay idle (or a transfer stall) before it is closed.
    #[arg(long, default_value_t = 60)]
    pub idle_timeout: u64,
}

/// Arguments of `hurray get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// Server address, e.g. 127.0.0.1:7070.
    pub addr: String,
    /// The tensor's key (its name in the served file, or the key it was put under).
    pub key: String,
    /// Output .hrry (written aside and renamed into place when complete).
    #[arg(short = 'o', long)]
    pub output: PathBuf,
    /// Ask for the tensor as parallel shards (B.13; the server picks how many).
    #[arg(long)]
    pub parallel: bool,
    /// `--connect-timeout`, `--io-timeout`.
    #[command(flatten)]
    pub timeouts: NetTimeouts,
}

/// How long `get` and `put` wait on the server before giving up.
#[derive(Debug, Args)]
pub struct NetTimeouts {
    /// Seconds to connect and finish the handshake.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub connect_timeout: u64,
    /// Seconds any single read or write may stall (a server that stops sending).
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub io_timeout: u64,
}

/// Arguments of `hurray put`.
#[derive(Debug, Args)]
pub struct PutArgs {
    /// Server address.
    pub addr: String,
    /// Key to put the tensor under.
    pub key: String,
    /// The .hrry file holding the tensor.
    pub file: PathBuf,
    /// The tensor's name in FILE (default: KEY, or the file's only top-level item).
    pub name: Option<String>,
    /// `--connect-timeout`, `--io-timeout`.
    #[command(flatten)]
    pub timeouts: NetTimeouts,
}

/// Arguments of `hurray inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// An HRRYFILE (.hrry) or a Hurray stream (.hrrys).
    pub file: PathBuf,
    /// Print JSON (stable schema, see docs/cli.md) instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `hurray validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Hurray files or streams to check; the exit status is 1 if any is invalid.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Arguments of `hurray convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// Input: .safetensors, .npy, .npz, .hrry or .hrrys (detected from its bytes
    /// where possible).
    pub input: PathBuf,
    /// Output: .hrry, .hrrys or .safetensors (written to a temporary file and
    /// renamed into place only when complete).
    pub output: PathBuf,
    /// Output format, when the output's extension does not say.
    #[arg(long, value_enum)]
    pub to: Option<Format>,
    /// Do not fsync the output and its directory (for scratch files: faster, and
    /// still all or nothing if the command is killed, but not guaranteed to survive
    /// a power loss or an OS crash).
    #[arg(long)]
    pub no_sync: bool,
    /// Also print the time taken and the peak memory of the conversion.
    #[arg(long)]
    pub stats: bool,
    /// Record a CRC-32C of every tensor's data in the output's reserved KV entry
    /// hurray.data_crc32c, which `hurray validate` checks (HRRYFILE output only;
    /// off by default).
    #[arg(long)]
    pub data_crc32c: bool,
}

/// Arguments of `hurray dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// An HRRYFILE or a Hurray stream.
    pub file: PathBuf,
    /// The tensor's name (in a stream: tensor_0, tensor_1, ...).
    pub name: String,
    /// How many values to print (0 = all).
    #[arg(long, short = 'n', default_value_t = 16)]
    pub limit: u64,
}

/// Arguments of `hurray compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The reference file, then the files to compare with it (any format convert
    /// reads). The exit status is 1 if any differs.
    #[arg(required = true, num_args = 2..)]
    pub files: Vec<PathBuf>,
}
