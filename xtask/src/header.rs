//! `cargo xtask header [--check]`: generates `include/hurray.h` from hurray-ffi with
//! cbindgen (pinned in `Cargo.toml`, configured by `hurray-ffi/cbindgen.toml`), and the
//! C/C++ compile check of that header.
//!
//! Check mode regenerates in memory and fails, printing the fix command, when the
//! committed header differs (newlines normalised). `cargo xtask test` runs both the
//! drift check and the compile check; the `#[test]` below runs the drift check so
//! plain `cargo test` catches it too.

use std::path::PathBuf;
use std::process::Command;

use clap::Args;

use crate::test::Outcome;
use crate::util::{display, workspace_root, Result};

/// Arguments of `cargo xtask header`.
#[derive(Debug, Args)]
pub struct HeaderArgs {
    /// Do not write: fail when `include/hurray.h` is not what cbindgen generates.
    #[arg(long)]
    pub check: bool,
}

/// The command that regenerates the header, printed when the check fails.
pub const FIX_COMMAND: &str = "cargo xtask header";

/// Path of the committed header.
pub fn header_path() -> PathBuf {
    workspace_root().join("include/hurray.h")
}

/// Runs `cargo xtask header [--check]`.
pub fn run(args: &HeaderArgs) -> Result {
    if args.check {
        check()?;
        println!("include/hurray.h is up to date");
        return Ok(());
    }
    let fresh = generate()?;
    let path = header_path();
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    if normalize(&old) == normalize(&fresh) {
        println!("include/hurray.h is up to date");
    } else {
        std::fs::create_dir_all(path.parent().expect("include/ has a parent"))?;
        std::fs::write(&path, &fresh)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// Regenerates the header in memory and fails when the committed one differs.
pub fn check() -> Result {
    let fresh = generate()?;
    let path = header_path();
    let old = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}; run `{FIX_COMMAND}`", path.display()))?;
    ensure_same(&old, &fresh)
}

/// Compares a committed file with its generated text, ignoring `\r\n` vs `\n`.
fn ensure_same(committed: &str, generated: &str) -> Result {
    let (a, b) = (normalize(committed), normalize(generated));
    if a == b {
        return Ok(());
    }
    let line = a
        .lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or_else(|| a.lines().count().min(b.lines().count()))
        + 1;
    Err(format!(
        "include/hurray.h is out of date (first difference at line {line}); \
         regenerate it with `{FIX_COMMAND}` and commit the result"
    )
    .into())
}

fn normalize(s: &str) -> String {
    s.replace("\r\n", "\n")
}

/// Runs cbindgen over hurray-ffi and returns the header text.
pub fn generate() -> Result<String> {
    let crate_dir = workspace_root().join("hurray-ffi");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .map_err(|e| format!("hurray-ffi/cbindgen.toml: {e}"))?;
    let bindings = cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .map_err(|e| format!("cbindgen failed on hurray-ffi: {e}"))?;
    let mut out = Vec::new();
    bindings.write(&mut out);
    Ok(String::from_utf8(out)?)
}

/// Compiles a file that includes the header twice, as C11 and as C++11, with
/// warnings as errors (`-fsyntax-only`). Skipped with a note when no compiler exists.
pub fn compile_check() -> Result<Outcome> {
    let root = workspace_root();
    let dir = root.join("target/xtask/header-check");
    std::fs::create_dir_all(&dir)?;
    let source = dir.join("double_include.c");
    std::fs::write(&source, DOUBLE_INCLUDE)?;
    let include = root.join("include");
    let mut ran = Vec::new();
    let mut missing = Vec::new();
    for (var, default, lang, std) in [
        ("CC", "cc", "c", "-std=c11"),
        ("CXX", "c++", "c++", "-std=c++11"),
    ] {
        let compiler = std::env::var(var).unwrap_or_else(|_| default.to_string());
        if !has_program(&compiler) {
            missing.push(format!("{compiler} (${var})"));
            continue;
        }
        let mut cmd = Command::new(&compiler);
        cmd.args(["-x", lang, std, "-Wall", "-Wextra", "-Werror", "-pedantic"])
            .arg("-fsyntax-only")
            .arg("-I")
            .arg(&include)
            .arg(&source);
        let shown = display(&cmd);
        let out = cmd
            .output()
            .map_err(|e| format!("could not start `{shown}`: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "`{shown}` failed ({}):\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
        ran.push(compiler);
    }
    if ran.is_empty() {
        return Ok(Outcome::Skipped(format!(
            "no C or C++ compiler found (tried {}); install one (e.g. gcc/g++) to compile-check include/hurray.h",
            missing.join(", ")
        )));
    }
    if !missing.is_empty() {
        return Ok(Outcome::PassedPartly(format!(
            "{} not found, checked with {} only",
            missing.join(", "),
            ran.join(", ")
        )));
    }
    Ok(Outcome::Passed)
}

fn has_program(name: &str) -> bool {
    Command::new(name)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Included twice (the guard must hold), compiled as C and as C++; uses a few
/// declarations so a broken typedef or prototype is an error.
const DOUBLE_INCLUDE: &str = r#"/* Generated by `cargo xtask test` (header compile check). */
#include "hurray.h"
#include "hurray.h"

#if HURRAY_C_ABI_VERSION != 10
#error "HURRAY_C_ABI_VERSION is not 10"
#endif

static int hurray_header_check(void) {
    HurrayDescriptor *d = NULL;
    HurrayBufferSync sync;
    HurrayStatus s = hurray_descriptor_destroy(&d);
    (void)sync;
    return s == HURRAY_OK && hurray_c_abi_version() == HURRAY_C_ABI_VERSION;
}

int main(void) { return hurray_header_check() ? 0 : 1; }
"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// rust-analyzer style: `cargo test` fails when the committed header drifts.
    #[test]
    fn header_is_up_to_date() {
        if let Err(e) = check() {
            panic!("{e}");
        }
    }

    /// The header compiles as C11 and C++11, included twice (skipped without a compiler).
    #[test]
    fn header_compiles_as_c_and_cxx() {
        match compile_check() {
            Ok(Outcome::Passed) => {}
            Ok(Outcome::Skipped(why) | Outcome::PassedPartly(why)) => {
                eprintln!("note: skipped (in part): {why}")
            }
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn newline_styles_compare_equal() {
        assert!(ensure_same("a\r\nb\r\n", "a\nb\n").is_ok());
        let err = ensure_same("a\nb\n", "a\nc\n").unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains(FIX_COMMAND), "{err}");
    }
}
