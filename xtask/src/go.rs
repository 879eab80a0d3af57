//! `cargo xtask go build`, and the Go stages of `cargo xtask test`.
//!
//! The Go module in `bindings/go` reaches the library through cgo only: it compiles
//! against `bindings/go/include/hurray.h` (a committed copy of `include/hurray.h`)
//! and links `bindings/go/lib/<GOOS>_<GOARCH>/libhurray_ffi.a`, the hurray-ffi
//! static library built here (never committed; the release archive carries it).
//!
//! `cargo xtask go build` builds the static library (`cargo build -p hurray-ffi
//! --release`), copies it into the module and refreshes the header copy. The test
//! stages do the same build, fail when the header copy drifts, then run `go vet`,
//! `go test -race`, and `go test -tags hurray_debug` (a collection before every handle
//! access) for the module; each skips itself with a note when `go` is absent.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clap::{Args, Subcommand};

use crate::test::{Outcome, Stage};
use crate::util::{cargo, exec, workspace_root, Result};

/// Arguments of `cargo xtask go`.
#[derive(Debug, Args)]
pub struct GoArgs {
    #[command(subcommand)]
    command: GoCommand,
}

#[derive(Debug, Subcommand)]
enum GoCommand {
    /// Build libhurray_ffi.a (release) into bindings/go/lib/<GOOS>_<GOARCH>/ and
    /// refresh bindings/go/include/hurray.h from include/hurray.h.
    Build,
}

/// Runs `cargo xtask go ...`.
pub fn run(args: &GoArgs) -> Result {
    match args.command {
        GoCommand::Build => {
            let lib = build_static_lib()?;
            println!("wrote {}", lib.display());
            if sync_header(false)? {
                println!("wrote {}", module_dir().join(HEADER_COPY).display());
            }
            Ok(())
        }
    }
}

/// The Go module's directory.
pub fn module_dir() -> PathBuf {
    workspace_root().join("bindings/go")
}

/// The header copy cgo compiles against, relative to the module.
const HEADER_COPY: &str = "include/hurray.h";

/// The command that fixes a stale header copy or a missing library.
const FIX_COMMAND: &str = "cargo xtask go build";

/// `GOOS_GOARCH` of the host, the name of the folder the library goes to.
pub fn host_platform() -> Result<String> {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "linux" => "linux",
        "windows" => "windows",
        other => return Err(format!("no Go platform name for OS `{other}`").into()),
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => return Err(format!("no Go platform name for architecture `{other}`").into()),
    };
    Ok(format!("{os}_{arch}"))
}

/// The cargo target directory (`$CARGO_TARGET_DIR`, else `target/`).
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace_root().join(dir),
        None => workspace_root().join("target"),
    }
}

/// Builds the hurray-ffi static library (release) and copies it into the module's
/// folder for the host platform; returns the copy's path.
pub fn build_static_lib() -> Result<PathBuf> {
    exec(&mut cargo(["build", "-p", "hurray-ffi", "--release"]))
        .map_err(|e| format!("`cargo build -p hurray-ffi --release` failed: {e}"))?;
    let name = if cfg!(windows) {
        "hurray_ffi.lib"
    } else {
        "libhurray_ffi.a"
    };
    let built = target_dir().join("release").join(name);
    let dir = module_dir().join("lib").join(host_platform()?);
    std::fs::create_dir_all(&dir)?;
    let dest = dir.join(if cfg!(windows) {
        "libhurray_ffi.a"
    } else {
        name
    });
    copy_if_changed(&built, &dest)?;
    Ok(dest)
}

/// Copies `from` to `to` unless they already hold the same bytes (keeps the
/// modification time, and so Go's build cache, when nothing changed).
fn copy_if_changed(from: &Path, to: &Path) -> Result {
    let new = std::fs::read(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    if std::fs::read(to).ok().as_deref() != Some(&new[..]) {
        std::fs::write(to, &new).map_err(|e| format!("cannot write {}: {e}", to.display()))?;
    }
    Ok(())
}

/// Brings the module's header copy up to date (`check`: fail instead when it
/// differs). Returns whether it wrote.
pub fn sync_header(check: bool) -> Result<bool> {
    let source = workspace_root().join("include/hurray.h");
    let fresh = std::fs::read_to_string(&source)
        .map_err(|e| format!("cannot read {}: {e}", source.display()))?;
    let copy = module_dir().join(HEADER_COPY);
    let old = std::fs::read_to_string(&copy).unwrap_or_default();
    if old.replace("\r\n", "\n") == fresh.replace("\r\n", "\n") {
        return Ok(false);
    }
    if check {
        return Err(format!(
            "bindings/go/{HEADER_COPY} differs from include/hurray.h; \
             refresh it with `{FIX_COMMAND}` and commit the result"
        )
        .into());
    }
    std::fs::write(&copy, fresh)?;
    Ok(true)
}

/// Whether `go version` runs.
fn has_go() -> bool {
    Command::new("go")
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A `go` command run in the module with cgo enabled.
fn go<const N: usize>(args: [&str; N]) -> Command {
    let mut cmd = Command::new("go");
    cmd.args(args)
        .current_dir(module_dir())
        .env("CGO_ENABLED", "1");
    cmd
}

/// The note of a Go stage that cannot run here.
fn skipped() -> Outcome {
    Outcome::Skipped("`go` not found; install Go 1.24 or newer to test bindings/go".into())
}

/// A Go stage: skipped with a note when `go` is absent.
fn go_stage(name: &str, run: impl Fn() -> Result + 'static) -> Stage {
    Stage {
        name: name.to_string(),
        run: Box::new(move || {
            if !has_go() {
                return Ok(skipped());
            }
            run().map(|()| Outcome::Passed)
        }),
    }
}

/// The Go stages of `cargo xtask test`, in order.
pub fn stages() -> Vec<Stage> {
    vec![
        go_stage(
            "go: bindings/go/include/hurray.h matches include/hurray.h; build libhurray_ffi.a",
            || {
                sync_header(true)?;
                build_static_lib().map(|_| ())
            },
        ),
        go_stage("go vet ./... (bindings/go)", || {
            exec(&mut go(["vet", "./..."]))
        }),
        go_stage("go test -race ./... (bindings/go)", || {
            exec(&mut go(["test", "-race", "-count=1", "./..."]))
        }),
        // Forces a collection before every handle access, so a missing
        // runtime.KeepAlive frees a handle mid-call and fails (see ffi.go).
        go_stage("go test -tags hurray_debug ./... (bindings/go)", || {
            exec(&mut go([
                "test",
                "-tags",
                "hurray_debug",
                "-count=1",
                "./...",
            ]))
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_platform_is_named() {
        let p = host_platform().expect("the CI hosts have Go names");
        assert!(p.contains('_'), "{p}");
    }

    /// The committed header copy matches include/hurray.h (plain `cargo test` catches
    /// drift too).
    #[test]
    fn header_copy_is_current() {
        sync_header(true).unwrap();
    }
}
