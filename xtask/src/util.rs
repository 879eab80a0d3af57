//! Helpers shared by the subcommands: the workspace root and running commands.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Error type of every task: a message meant for the person at the terminal.
pub type Error = Box<dyn std::error::Error>;

/// Result type of every task.
pub type Result<T = ()> = std::result::Result<T, Error>;

/// The workspace root: the parent of this crate's manifest directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// The cargo that launched xtask (`$CARGO`), else `cargo` from `PATH`.
fn cargo_program() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// A `cargo` command, run from the workspace root.
pub fn cargo<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(cargo_program());
    cmd.args(args).current_dir(workspace_root());
    cmd
}

/// Runs `cmd` with inherited stdio and fails unless it exits successfully.
///
/// The error says only what went wrong (`exit status: 101`); callers name the command.
pub fn exec(cmd: &mut Command) -> Result {
    let status = cmd
        .status()
        .map_err(|err| format!("could not start: {err}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(status.to_string().into())
    }
}

/// The release `hurray` CLI, built once per xtask process (`cargo build --release -p
/// hurray-cli`): the server the bindings' network tests start (`HURRAY_BIN`).
///
/// Errors: the build failed.
pub fn hurray_cli() -> Result<PathBuf> {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    if let Some(p) = BUILT.get() {
        return Ok(p.clone());
    }
    exec(&mut cargo([
        "build",
        "--quiet",
        "--release",
        "-p",
        "hurray-cli",
    ]))
    .map_err(|e| format!("`cargo build --release -p hurray-cli`: {e}"))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace_root().join("target"), PathBuf::from);
    Ok(BUILT
        .get_or_init(|| target.join("release").join("hurray"))
        .clone())
}

/// Whether `cargo <subcommand> --version` works, i.e. the tool is installed.
pub fn has_cargo_tool(subcommand: &str) -> bool {
    cargo([subcommand, "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// A command as one would type it: environment, program, arguments, with `cargo`
/// standing for `$CARGO`.
pub fn display(cmd: &Command) -> String {
    let program = cmd.get_program();
    let program = if program == cargo_program() {
        "cargo".into()
    } else {
        program.to_string_lossy()
    };
    let envs = cmd
        .get_envs()
        .filter_map(|(key, value)| Some(format!("{}={:?}", key.to_string_lossy(), value?)));
    let words = std::iter::once(program.into_owned())
        .chain(cmd.get_args().map(|arg| arg.to_string_lossy().into_owned()));
    envs.chain(words).collect::<Vec<_>>().join(" ")
}

/// Whether this runs under CI (`$CI` set, and not empty, `0` or `false`), where a
/// stage that cannot run fails instead of skipping (ARCHITECTURE.md, decision 8).
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
}
