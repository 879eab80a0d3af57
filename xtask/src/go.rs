//! `cargo xtask go build`, and the Go stages of `cargo xtask test`.
//!
//! The Go module in `bindings/go` reaches the library through cgo only: it compiles
//! against `bindings/go/include/hurray.h` (a committed copy of `include/hurray.h`)
//! and links `bindings/go/lib/<GOOS>_<GOARCH>/libhurray_ffi.a`, the hurray-ffi
//! static library built here (never committed; the release archive carries it).
//!
//! `cargo xtask go build` builds the static library (`cargo build -p hurray-ffi
//! --release`), copies it into the module and refreshes the header copy. The test
//! stages do the same build, fail when the header copy drifts, then run `gofmt`,
//! `go vet` (with and without the test tag, checking that a tag-less build has no
//! test support in it), `go test -race`, and `go test -tags hurray_debug` (a
//! collection before every handle access) for the module; each skips itself with a
//! note when `go` is absent.
//!
//! The C helpers some Go tests need live in the package (cgo is not allowed in
//! `_test.go` files) behind the [`TEST_TAG`] build tag, in files named
//! `testsupport*`: the test stages pass the tag, and the module archive of
//! `cargo xtask go dist` leaves those files out.

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
    /// Build libhurray_ffi.a (release) into `bindings/go/lib/<GOOS>_<GOARCH>/` and
    /// refresh bindings/go/include/hurray.h from include/hurray.h.
    Build,
    /// Build the module archive (with the prebuilt static library) as a file-based
    /// GOPROXY in target/dist/go-proxy.
    Dist {
        /// Then `go get` it into a fresh module outside the repository and run a
        /// program that opens a file and reads a tensor.
        #[arg(long)]
        check: bool,
    },
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
        GoCommand::Dist { check: true } => dist_check(),
        GoCommand::Dist { check: false } => {
            let proxy = dist()?;
            println!("dist: go module proxy {}", proxy.display());
            println!(
                "      use it with GOPROXY=file://{} GONOSUMDB={NOSUMDB} go get {MODULE_PATH}@{}",
                proxy.display(),
                module_version()
            );
            Ok(())
        }
    }
}

/// The build tag of the Go package's test support (C helpers for tests), passed by
/// every Go test stage.
pub const TEST_TAG: &str = "hurray_testsupport";

/// Files of the module whose name starts with this are test support (built only
/// with [`TEST_TAG`]) and stay out of the module archive.
const TEST_SUPPORT_PREFIX: &str = "testsupport";

/// The module path, as bindings/go/go.mod declares it.
pub const MODULE_PATH: &str = "github.com/hurray-dev/hurray/bindings/go";

/// The module version of this workspace: `v` + the workspace version.
pub fn module_version() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

/// Builds the static library, then writes the module archive of bindings/go
/// (sources, header copy, and the host's prebuilt library) as a file-based GOPROXY
/// (`<proxy>/<module>/@v/{list,<v>.info,<v>.mod,<v>.zip}`); returns the proxy folder.
pub fn dist() -> Result<PathBuf> {
    sync_header(true)?;
    build_static_lib()?;
    let module = module_dir();
    let go_mod = std::fs::read_to_string(module.join("go.mod"))?;
    if !go_mod.contains(&format!("module {MODULE_PATH}\n")) {
        return Err(format!("bindings/go/go.mod does not declare `module {MODULE_PATH}`").into());
    }
    let version = module_version();
    let proxy = target_dir().join("dist/go-proxy");
    let at_v = proxy.join(MODULE_PATH).join("@v");
    if at_v.exists() {
        std::fs::remove_dir_all(&at_v)?;
    }
    std::fs::create_dir_all(&at_v)?;

    let mut files = Vec::new();
    collect_module_files(&module, &module, &mut files)?;
    files.sort();
    let prefix = format!("{MODULE_PATH}@{version}/");
    // Deterministic archive: sorted entries, a fixed timestamp, rw-r--r-- files.
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o644);
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for rel in &files {
        let data = std::fs::read(module.join(rel))?;
        zip.start_file(format!("{prefix}{rel}"), options)?;
        std::io::Write::write_all(&mut zip, &data)?;
    }
    // The license texts (at the workspace root, not in the module folder) travel
    // at the module root of the archive, where Go tooling looks for them.
    for license in ["LICENSE-APACHE", "LICENSE-MIT"] {
        if files.iter().any(|f| f == license) {
            continue;
        }
        let data = std::fs::read(workspace_root().join(license))?;
        zip.start_file(format!("{prefix}{license}"), options)?;
        std::io::Write::write_all(&mut zip, &data)?;
    }
    let archive = zip.finish()?.into_inner();
    std::fs::write(at_v.join(format!("{version}.zip")), archive)?;
    std::fs::write(at_v.join(format!("{version}.mod")), go_mod)?;
    std::fs::write(
        at_v.join(format!("{version}.info")),
        format!("{{\"Version\":\"{version}\",\"Time\":\"2026-01-01T00:00:00Z\"}}\n"),
    )?;
    std::fs::write(at_v.join("list"), format!("{version}\n"))?;
    Ok(proxy)
}

/// The consumer program of [`dist_check`]: it only knows the module by its path.
const CONSUMER_MAIN: &str = r#"package main

import (
	"fmt"
	"os"
	"path/filepath"

	hurray "github.com/hurray-dev/hurray/bindings/go"
)

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func main() {
	dir, err := os.MkdirTemp("", "hurray-consumer")
	check(err)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "x.hrry")
	data := hurray.Make[float32](4)
	copy(data, []float32{1, 2, 3, 4})
	t, err := hurray.NewDense(data, []uint64{2, 2})
	check(err)
	w, err := hurray.CreateFile(path, &hurray.WriteOptions{NoSync: true})
	check(err)
	check(w.WriteTensor("w", t))
	check(w.Close())
	check(t.Close())

	f, err := hurray.OpenFile(path)
	check(err)
	x, err := f.Tensor("w")
	check(err)
	v, err := x.Float32s()
	check(err)
	fmt.Println("consumer: read", x, v)
	if fmt.Sprint(v) != "[1 2 3 4]" {
		check(fmt.Errorf("read %v, wrote [1 2 3 4]", v))
	}
	check(x.Close())
	check(f.Close())

	// IN (a file another language wrote): read `weights`; OUT: write it back.
	g, err := hurray.OpenFile(os.Args[1])
	check(err)
	y, err := g.Tensor("weights")
	check(err)
	wv, err := y.Float32s()
	check(err)
	fmt.Println("consumer: IN", g.Names(), y, wv)
	if fmt.Sprint(y.Shape()) != "[2 2]" {
		check(fmt.Errorf("weights shape %v, want [2 2]", y.Shape()))
	}
	out := hurray.Make[float32](len(wv))
	for i, v := range wv {
		out[i] = v + float32(i+1)
	}
	z, err := hurray.NewDense(out, y.Shape())
	check(err)
	w2, err := hurray.CreateFile(os.Args[2], &hurray.WriteOptions{NoSync: true})
	check(err)
	check(w2.WriteTensor("weights", z))
	check(w2.Close())
	check(z.Close())
	check(y.Close())
	check(g.Close())
	if n := hurray.LiveObjects(); n != 0 {
		check(fmt.Errorf("%d live objects at exit", n))
	}
	fmt.Println("consumer: ok")
}
"#;

/// The module path's prefix for `GONOSUMDB`/`GOPRIVATE`: a private module is not in
/// the public checksum database, so go must not ask it (instead of `GOSUMDB=off`,
/// which would turn checking off for every other module too).
pub const NOSUMDB: &str = "github.com/hurray-dev/hurray";

/// Builds the archive with [`dist`], then, in a fresh module outside the
/// repository (a folder in the system temp directory, with its own module cache
/// and GOPATH, removed afterwards), `go get`s the module from the file GOPROXY alone
/// (with `GONOSUMDB` for its path, as docs/go.md tells users) and:
/// 1. runs a program that writes and opens a file, then reads the `weights` of the
///    install-check input (written by another language, [`crate::smoke`]) and writes
///    them back changed as that module says, which Rust then checks;
/// 2. builds the same program fully static (`-extldflags -static`), checks the
///    binary has no ELF interpreter, and runs it the same way;
/// 3. builds it with `CGO_ENABLED=0` and checks that this fails naming cgo.
pub fn dist_check() -> Result {
    let proxy = dist()?;
    let input = crate::smoke::input()?;
    let work = crate::smoke::fresh_dir("go-dist-check")?;
    let app = work.join("consumer");
    std::fs::create_dir_all(&app)?;
    std::fs::write(
        app.join("go.mod"),
        "module example.com/consumer\n\ngo 1.24\n",
    )?;
    std::fs::write(app.join("main.go"), CONSUMER_MAIN)?;
    let env = [
        ("GOPROXY", format!("file://{}", proxy.display())),
        ("GONOSUMDB", NOSUMDB.into()),
        ("GOFLAGS", "-modcacherw".into()),
        ("GOMODCACHE", work.join("modcache").display().to_string()),
        ("GOPATH", work.join("gopath").display().to_string()),
        ("GOTOOLCHAIN", "local".into()),
        ("GOWORK", "off".into()),
        ("CGO_ENABLED", "1".into()),
        // No module index: go caches (in GOCACHE) each module-cache folder's file
        // list by path, trusting that <module>@<version> never changes, but every
        // check unpacks a rebuilt archive of the same version at the same path; a
        // stale index would make go build files the archive no longer has.
        ("GODEBUG", "goindex=0".into()),
    ];
    let go_in_app = |args: &[&str]| {
        let mut cmd = Command::new("go");
        cmd.args(args)
            .current_dir(&app)
            .envs(env.iter().map(|(k, v)| (k, v)));
        cmd
    };
    let module = format!("{MODULE_PATH}@{}", module_version());
    exec(&mut go_in_app(&["get", &module])).map_err(|e| format!("go get {module}: {e}"))?;
    let fetched = work.join("modcache").join(&module);
    for license in ["LICENSE-APACHE", "LICENSE-MIT"] {
        if !fetched.join(license).is_file() {
            return Err(format!("go get {module}: no {license} in {}", fetched.display()).into());
        }
    }
    let run_consumer = |mut cmd: Command, what: &str, out: &Path| -> Result {
        let output = cmd
            .arg(&input)
            .arg(out)
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("{what}: {e}"))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        print!("{stdout}");
        if !output.status.success() || !stdout.contains("consumer: ok") {
            return Err(format!(
                "{what}: the consumer failed: {} (kept in {})",
                output.status,
                work.display()
            )
            .into());
        }
        crate::smoke::verify(what, &input, out)
    };
    run_consumer(go_in_app(&["run", "."]), "go", &work.join("from-go.hrry"))?;

    // A fully static binary: no forced -lgcc_s, the unwinder comes from libgcc_eh.
    let static_bin = work.join("consumer-static");
    exec(go_in_app(&["build", "-ldflags", "-extldflags \"-static\"", "-o"]).arg(&static_bin))
        .map_err(|e| format!("go build -ldflags '-extldflags \"-static\"': {e}"))?;
    let headers = Command::new("readelf")
        .arg("-lW")
        .arg(&static_bin)
        .output()
        .map_err(|e| format!("readelf: {e}"))?;
    if String::from_utf8_lossy(&headers.stdout).contains("INTERP") {
        return Err(format!(
            "{} has an ELF interpreter: not static",
            static_bin.display()
        )
        .into());
    }
    println!(
        "go: static binary {} ({} bytes, no ELF interpreter)",
        static_bin.display(),
        std::fs::metadata(&static_bin)?.len()
    );
    run_consumer(
        Command::new(&static_bin),
        "go (static)",
        &work.join("from-go-static.hrry"),
    )?;

    // CGO_ENABLED=0: a build error that names the reason (nocgo.go).
    let nocgo = go_in_app(&["build", "-o", "/dev/null", "."])
        .env("CGO_ENABLED", "0")
        .output()
        .map_err(|e| format!("go build (CGO_ENABLED=0): {e}"))?;
    let err = String::from_utf8_lossy(&nocgo.stderr);
    let first = err
        .lines()
        .find(|l| l.contains("undefined"))
        .unwrap_or_default();
    if nocgo.status.success() || !first.contains("hurray_requires_cgo_set_CGO_ENABLED_1") {
        return Err(format!(
            "CGO_ENABLED=0: want a build error naming hurray_requires_cgo_set_CGO_ENABLED_1 first, got {}: {err}",
            nocgo.status
        )
        .into());
    }
    println!("go: CGO_ENABLED=0 fails as intended: {}", first.trim());
    // Best effort: a leftover folder in the temp directory is harmless.
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// The files of the module archive, relative to the module root with `/`
/// separators: everything but hidden folders, test support (`testsupport*`, built
/// only with [`TEST_TAG`]) and test or profile leftovers.
fn collect_module_files(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if !name.starts_with('.') {
                collect_module_files(root, &path, out)?;
            }
        } else if kind.is_file()
            && !name.starts_with(TEST_SUPPORT_PREFIX)
            && !name.ends_with(".test")
            && !name.ends_with(".out")
        {
            let rel = path.strip_prefix(root).expect("below the root");
            let rel: Vec<_> = rel
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect();
            out.push(rel.join("/"));
        }
    }
    Ok(())
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

/// The installed Go's version as (major, minor), from `go env GOVERSION`
/// (`go1.26.8`); None when `go` does not run.
fn go_version() -> Option<(u32, u32)> {
    let out = Command::new("go")
        .args(["env", "GOVERSION"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.trim().trim_start_matches("go").split('.');
    let major = parts.next()?.parse().ok()?;
    let minor: String = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((major, minor.parse().ok()?))
}

/// The oldest Go the module supports (runtime.AddCleanup).
const MIN_GO: (u32, u32) = (1, 24);

/// A `go` command run in the module with cgo enabled.
fn go<const N: usize>(args: [&str; N]) -> Command {
    let mut cmd = Command::new("go");
    cmd.args(args)
        .current_dir(module_dir())
        .env("CGO_ENABLED", "1");
    cmd
}

/// A Go stage: skipped with a note when `go` is absent or older than [`MIN_GO`].
fn go_stage(name: &str, run: impl Fn() -> Result + 'static) -> Stage {
    Stage {
        name: name.to_string(),
        run: Box::new(move || match go_version() {
            None => Ok(Outcome::Skipped(
                "`go` not found; install Go 1.24 or newer to test bindings/go".into(),
            )),
            Some(v) if v < MIN_GO => Ok(Outcome::Skipped(format!(
                "go{}.{} is too old; bindings/go needs Go {}.{} or newer",
                v.0, v.1, MIN_GO.0, MIN_GO.1
            ))),
            Some(_) => run().map(|()| Outcome::Passed),
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
        go_stage(
            "dist: Go module proxy archive, go get (GONOSUMDB, own GOMODCACHE and GOPATH) into a fresh module; its program reads and writes, dynamic and fully static; CGO_ENABLED=0 fails naming cgo",
            dist_check,
        ),
        go_stage("gofmt -l ., go vet ./... with and without -tags hurray_testsupport (bindings/go)", || {
            let unformatted = Command::new("gofmt")
                .args(["-l", "."])
                .current_dir(module_dir())
                .output()
                .map_err(|e| format!("could not run gofmt: {e}"))?;
            let list = String::from_utf8_lossy(&unformatted.stdout);
            if !unformatted.status.success() || !list.trim().is_empty() {
                return Err(format!(
                    "gofmt: these files need formatting (run `gofmt -w .` in bindings/go):\n{list}"
                )
                .into());
            }
            exec(&mut go(["vet", "./..."]))?;
            exec(&mut go(["vet", "-tags", TEST_TAG, "./..."]))?;
            check_test_support_tagged()
        }),
        go_stage("go test -race -tags hurray_testsupport ./... (bindings/go)", || {
            let cli = crate::util::hurray_cli()?;
            exec(go(["test", "-race", "-tags", TEST_TAG, "-count=1", "./..."]).env("HURRAY_BIN", cli))
        }),
        // Forces a collection before every handle access, so a missing
        // runtime.KeepAlive frees a handle mid-call and fails (see ffi.go).
        go_stage("go test -tags hurray_debug,hurray_testsupport ./... (bindings/go)", || {
            let tags = format!("hurray_debug,{TEST_TAG}");
            let cli = crate::util::hurray_cli()?;
            exec(go(["test", "-tags", &tags, "-count=1", "./..."]).env("HURRAY_BIN", cli))
        }),
    ]
}

/// Fails unless the package built without [`TEST_TAG`] leaves out the test support
/// (`testsupport.go`, `testsupport.c` and the tests that use them) and the build
/// with the tag takes it in.
fn check_test_support_tagged() -> Result {
    let files = |tags: &str| -> Result<Vec<String>> {
        let format = "{{range .GoFiles}}{{.}} {{end}}{{range .CgoFiles}}{{.}} {{end}}\
                      {{range .CFiles}}{{.}} {{end}}{{range .TestGoFiles}}{{.}} {{end}}";
        let out = go(["list", "-tags", tags, "-f", format, "."])
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("go list: {e}"))?;
        if !out.status.success() {
            return Err(format!("go list -tags '{tags}' failed: {}", out.status).into());
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_owned)
            .collect())
    };
    let support = ["testsupport.go", "testsupport.c", "testsupport_test.go"];
    let without = files("")?;
    if let Some(f) = without.iter().find(|f| support.contains(&f.as_str())) {
        return Err(format!(
            "bindings/go: a build without -tags {TEST_TAG} includes {f}; it needs `//go:build {TEST_TAG}`"
        )
        .into());
    }
    let with = files(TEST_TAG)?;
    if let Some(f) = support.iter().find(|f| !with.iter().any(|w| w == *f)) {
        return Err(format!("bindings/go: -tags {TEST_TAG} does not build {f}").into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_platform_is_named() {
        let p = host_platform().expect("the CI hosts have Go names");
        assert!(p.contains('_'), "{p}");
    }

    /// The module archive leaves out the test support and keeps the package's sources.
    #[test]
    fn module_files_leave_out_test_support() {
        let root = module_dir();
        let mut files = Vec::new();
        collect_module_files(&root, &root, &mut files).unwrap();
        assert!(
            files.iter().all(|f| !f.contains(TEST_SUPPORT_PREFIX)),
            "{files:?}"
        );
        for want in ["go.mod", "tensor.go", "hurray_go.c", "include/hurray.h"] {
            assert!(files.iter().any(|f| f == want), "{want} missing: {files:?}");
        }
    }

    /// The committed header copy matches include/hurray.h (plain `cargo test` catches
    /// drift too).
    #[test]
    fn header_copy_is_current() {
        sync_header(true).unwrap();
    }
}
