//! `cargo xtask bench`: runs the workspace benchmarks.

use clap::Args;

use crate::util::{cargo, display, exec, Result};

/// Arguments of `cargo xtask bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Passed to `cargo bench --workspace` verbatim, e.g.
    /// `cargo xtask bench -- --bench codec -- --save-baseline main`.
    #[arg(last = true)]
    pub cargo_args: Vec<String>,
}

/// Runs `cargo bench --workspace [cargo_args...]`.
pub fn run(args: &BenchArgs) -> Result {
    let mut cmd = cargo(["bench", "--workspace"]);
    cmd.args(&args.cargo_args);
    let name = display(&cmd);
    println!("==> [xtask] {name}");
    exec(&mut cmd).map_err(|err| format!("error: [xtask] `{name}` failed: {err}").into())
}
