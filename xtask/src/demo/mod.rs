//! `cargo xtask demo`: the end-to-end demonstration, arriving with the CLI (issue 5).

use crate::util::Result;

/// Fails until the demo exists, so nobody mistakes a no-op for a passing demo.
pub fn run() -> Result {
    Err("demo: not implemented yet (issue 5)".into())
}
