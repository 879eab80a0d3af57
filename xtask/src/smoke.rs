//! The contract of the install checks of `cargo xtask test` (`dist: ...` stages):
//! each installs one artifact of `cargo xtask dist` into a fresh project outside the
//! repository and runs a small program there with two arguments, `IN OUT`.
//!
//! `IN` is `../shared/conformance/files/basic.hrry`, a file written by the
//! conformance generator (not by the language under test); the program reads its
//! tensor `weights` (float32 [2, 2]), checks the shape, and writes `OUT` holding a
//! tensor `weights` (float32 [2, 2]) whose element `i` is `IN`'s element `i` plus
//! `i + 1` (so a program that wrote zeros, or `IN`'s values untouched, fails). Then
//! Rust (hurray-ffi's safe face, here in xtask) opens `OUT` and checks those values,
//! so each language has read a file another wrote, and written one another reads.

use std::path::{Path, PathBuf};

use hurray_ffi::{HurrayFileReader, ReadOptions};

use crate::util::{workspace_root, Result};

/// The input of every install check: the conformance file `basic.hrry`.
///
/// Errors: the shared folder is missing (the checks cannot run without it).
pub fn input() -> Result<PathBuf> {
    let path = workspace_root().join("../shared/conformance/files/basic.hrry");
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "{} not found: the install checks read it (put the shared folder beside the repository)",
            path.display()
        )
        .into())
    }
}

/// The bytes of tensor `weights`'s single buffer in the file at `path`.
fn weights(path: &Path) -> Result<Vec<u8>> {
    let file = HurrayFileReader::open(path, &ReadOptions::default())
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let tensor = file
        .tensor("weights")
        .map_err(|e| format!("{}: tensor `weights`: {e}", path.display()))?;
    let mut buffers = tensor.buffer_list().buffers();
    let bytes = buffers
        .next()
        .and_then(|b| b.bytes())
        .ok_or_else(|| format!("{}: `weights` has no host buffer", path.display()))?;
    Ok(bytes.to_vec())
}

/// The values the install-check programs must write: `input`'s float32 `weights`
/// with `i + 1` added to element `i`.
fn expected(input: &[u8]) -> Vec<f32> {
    input
        .chunks_exact(4)
        .enumerate()
        .map(|(i, b)| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) + (i + 1) as f32)
        .collect()
}

/// Checks that `out`, written by `lang`'s installed artifact, holds a tensor
/// `weights` with [`expected`]'s values for `input`; prints one line saying so.
///
/// Errors: `out` is missing or unreadable, has no `weights`, or its values differ.
pub fn verify(lang: &str, input: &Path, out: &Path) -> Result {
    let want = expected(&weights(input)?);
    let got = weights(out).map_err(|e| format!("{lang}: {e}"))?;
    let got: Vec<f32> = got
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    if got != want {
        return Err(format!(
            "{lang}: {} `weights` is {got:?}, want {want:?} (basic.hrry's plus 1, 2, 3, 4)",
            out.display()
        )
        .into());
    }
    println!(
        "{lang}: wrote {} ({} bytes); Rust read `weights` {got:?} back, as expected",
        out.display(),
        std::fs::metadata(out)?.len(),
    );
    Ok(())
}

/// A fresh, empty folder `hurray-<what>-<pid>` in the system temp directory
/// (outside the repository), removed first if a previous run left it.
pub fn fresh_dir(what: &str) -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("hurray-{what}-{}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// `PATH` without the folders that hold `cargo` or `rustc`, so a check proves the
/// artifact needs no Rust toolchain.
pub fn path_without_rust() -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|dir| !dir.join("cargo").exists() && !dir.join("rustc").exists())
        .collect();
    std::env::join_paths(kept).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_adds_the_position_plus_one() {
        let input: Vec<u8> = [0.5f32, -1.0, 0.0, 2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(expected(&input), [1.5, 1.0, 3.0, 6.0]);
    }
}
